"""Line plots written straight to PNG, with no plotting library.

Generators use this for their diagnostic charts (the dancer's centre of mass and centre of pressure
over time, the fly's training curve). Only numpy and the standard library are available inside
Blender's bundled Python, so this module carries its own 5x7 bitmap font and PNG encoder.

Entry points: :func:`line_plot_png` writes a file, :func:`png_bytes` returns the encoded image,
:func:`render_plot` returns the pixels with the data-to-pixel mapping (handy for tests), and
:func:`read_png_size` reads the size of any PNG back.
"""

from __future__ import annotations

import math
import numbers
import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import ProcAnimError

RGB = tuple[int, int, int]
Series = tuple[Sequence[float], Sequence[float], str, RGB]

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

# The classic 5x7 LCD font for ASCII 32..126: five column bytes per glyph, bit 0 is the top row.
_FONT_5X7 = bytes.fromhex(
    "0000000000" "00005f0000" "0007000700" "147f147f14" "242a7f2a12" "2313086462" "3649552250"
    "0005030000" "001c224100" "0041221c00" "082a1c2a08" "08083e0808" "0050300000" "0808080808"
    "0060600000" "2010080402" "3e5149453e" "00427f4000" "4261514946" "2141454b31" "1814127f10"
    "2745454539" "3c4a494930" "0171090503" "3649494936" "064949291e" "0036360000" "0056360000"
    "0814224100" "1414141414" "0041221408" "0201510906" "324979413e" "7e1111117e" "7f49494936"
    "3e41414122" "7f4141221c" "7f49494941" "7f09090101" "3e41415132" "7f0808087f" "00417f4100"
    "2040413f01" "7f08142241" "7f40404040" "7f0204027f" "7f0408107f" "3e4141413e" "7f09090906"
    "3e4151215e" "7f09192946" "4649494931" "01017f0101" "3f4040403f" "1f2040201f" "7f2018207f"
    "6314081463" "0304780403" "6151494543" "007f414100" "0204081020" "0041417f00" "0402010204"
    "4040404040" "0001020400" "2054545478" "7f48444438" "3844444420" "384444487f" "3854545418"
    "087e090102" "0c5252523e" "7f08040478" "00447d4000" "2040443d00" "007f102844" "00417f4000"
    "7c04180478" "7c08040478" "3844444438" "7c14141408" "081414187c" "7c08040408" "4854545420"
    "043f444020" "3c4040207c" "1c2040201c" "3c4030403c" "4428102844" "0c5050503c" "4464544c44"
    "0008364100" "00007f0000" "0041360800" "0201020402"
)
_GLYPH_COLUMNS = 5
_GLYPH_ROWS = 7
_FIRST_CHAR = 32
_LAST_CHAR = 126

WHITE: RGB = (255, 255, 255)
_AXIS_COLOR: RGB = (40, 40, 40)
_GRID_COLOR: RGB = (225, 225, 225)
_TEXT_COLOR: RGB = (20, 20, 20)

# Default series colours (colour-blind friendly, after Okabe and Ito), for callers that want a cycle.
PALETTE: tuple[RGB, ...] = (
    (0, 114, 178), (213, 94, 0), (0, 158, 115), (204, 121, 167),
    (230, 159, 0), (86, 180, 233), (0, 0, 0),
)

_MIN_SIZE = (120, 80)
_MAX_SIZE = (8192, 8192)


class PlotError(ProcAnimError, ValueError):
    """The data or options given to a plot cannot be drawn; the message says which and why."""


@dataclass(frozen=True)
class PlotImage:
    """A rendered plot: ``pixels`` is ``(height, width, 3)`` uint8; the box is in pixel coordinates.

    ``plot_box`` is ``(left, top, right, bottom)`` of the data area, inclusive, where
    ``x_range[0]`` maps to column ``left`` and ``y_range[1]`` to row ``top``.
    """

    pixels: np.ndarray
    plot_box: tuple[int, int, int, int]
    x_range: tuple[float, float]
    y_range: tuple[float, float]

    def data_to_pixel(self, x: float, y: float) -> tuple[float, float]:
        """Return the (column, row) of data point (x, y) as floats (pixel centres are integers)."""
        left, top, right, bottom = self.plot_box
        column = left + (x - self.x_range[0]) / (self.x_range[1] - self.x_range[0]) * (right - left)
        row = bottom - (y - self.y_range[0]) / (self.y_range[1] - self.y_range[0]) * (bottom - top)
        return column, row


# ---------------------------------------------------------------------------------------------
# Text


def _glyph(char: str) -> np.ndarray:
    """The 7x5 boolean bitmap of one character; anything outside printable ASCII draws as '?'."""
    code = ord(char)
    if not _FIRST_CHAR <= code <= _LAST_CHAR:
        code = ord("?")
    start = (code - _FIRST_CHAR) * _GLYPH_COLUMNS
    columns = np.frombuffer(_FONT_5X7[start:start + _GLYPH_COLUMNS], dtype=np.uint8)
    return ((columns[None, :] >> np.arange(_GLYPH_ROWS)[:, None]) & 1).astype(bool)


def text_mask(text: str, scale: int = 1) -> np.ndarray:
    """Boolean mask of ``text`` in the built-in font, each font pixel drawn as ``scale`` x ``scale``."""
    advance = _GLYPH_COLUMNS + 1
    mask = np.zeros((_GLYPH_ROWS, max(advance * len(text) - 1, 0)), dtype=bool)
    for index, char in enumerate(text):
        mask[:, index * advance:index * advance + _GLYPH_COLUMNS] = _glyph(char)
    return np.kron(mask, np.ones((scale, scale), dtype=bool))


def text_width(text: str, scale: int = 1) -> int:
    """Width in pixels of ``text`` as :func:`text_mask` draws it."""
    return max((_GLYPH_COLUMNS + 1) * len(text) - 1, 0) * scale


def _paste_mask(canvas: np.ndarray, mask: np.ndarray, left: int, top: int, color: RGB) -> None:
    """Paint ``color`` where ``mask`` is set, with its top-left corner at (left, top); clips to canvas."""
    height, width = canvas.shape[:2]
    rows, cols = mask.shape
    r0, c0 = max(top, 0), max(left, 0)
    r1, c1 = min(top + rows, height), min(left + cols, width)
    if r0 >= r1 or c0 >= c1:
        return
    sub = mask[r0 - top:r1 - top, c0 - left:c1 - left]
    canvas[r0:r1, c0:c1][sub] = color


# ---------------------------------------------------------------------------------------------
# Axes


def nice_ticks(low: float, high: float, target_count: int = 6) -> np.ndarray:
    """Round tick values (1, 2, 2.5 or 5 times a power of ten) inside [low, high].

    Picks the step whose tick count is nearest ``target_count`` (at least two ticks; the larger step
    on a tie).
    """
    span = high - low
    magnitude = 10.0 ** math.floor(math.log10(span / max(target_count - 1, 1)))
    best: tuple[float, float] | None = None
    candidates = (f * m for m in (magnitude / 10, magnitude, magnitude * 10) for f in (1.0, 2.0, 2.5, 5.0))
    for step in sorted(candidates):
        first = math.ceil(low / step - 1e-9) * step
        count = int(math.floor((high - first) / step + 1e-9)) + 1
        if count < 2:
            continue
        score = abs(count - target_count)
        if best is None or score <= best[0]:
            best = (score, step)
    step = best[1] if best is not None else span
    first = math.ceil(low / step - 1e-9) * step
    count = int(math.floor((high - first) / step + 1e-9)) + 1
    ticks = first + step * np.arange(count)
    ticks[np.abs(ticks) < step * 1e-9] = 0.0  # no "-0" label
    return ticks


def _tick_labels(ticks: np.ndarray) -> list[str]:
    """Fixed notation with the decimals the step needs; scientific when that is much shorter.

    Either way, neighbouring ticks get different labels (a 1e6 offset does not hide a 0.2 step).
    """
    if len(ticks) > 1:
        step = float(np.min(np.diff(ticks)))
    else:
        step = abs(float(ticks[0])) or 1.0
    decimals = 0
    while decimals < 15 and abs(round(step, decimals) - step) > step * 1e-6:
        decimals += 1
    fixed = [f"{value:.{decimals}f}" for value in ticks]
    largest = float(np.max(np.abs(ticks)))
    significant = math.floor(math.log10(largest)) - math.floor(math.log10(step)) + 2
    labels = []
    for value in ticks:
        if value == 0:
            labels.append("0")
            continue
        mantissa, exponent = f"{value:.{max(significant - 1, 0)}e}".split("e")
        if "." in mantissa:
            mantissa = mantissa.rstrip("0").rstrip(".")
        labels.append(f"{mantissa}e{int(exponent)}")
    fixed_width = max(len(label) for label in fixed)
    # Plain numbers read best; scientific only when they get long or it saves three characters.
    return labels if fixed_width > 9 or fixed_width - max(len(label) for label in labels) >= 3 else fixed


def _padded_range(low: float, high: float) -> tuple[float, float]:
    """Data range with a 4% margin, widened around a constant so that it is never empty."""
    if high - low <= 1e-12 * max(abs(low), abs(high), 1.0):
        half = max(abs(low) * 0.1, 0.5)
        return low - half, high + half
    margin = (high - low) * 0.04
    return low - margin, high + margin


# ---------------------------------------------------------------------------------------------
# Lines


def _decimate_columns(columns: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Keep first, last, min and max point of every pixel column (in order): same picture, fewer segments.

    Only valid for x-sorted data, which is what the caller checks before using it.
    """
    bins = np.floor(columns).astype(np.int64)
    starts = np.flatnonzero(np.r_[True, bins[1:] != bins[:-1]])
    ends = np.r_[starts[1:], len(bins)]
    keep = np.zeros(len(bins), dtype=bool)
    keep[starts] = True
    keep[ends - 1] = True
    for start, end in zip(starts, ends, strict=True):
        block = rows[start:end]
        keep[start + int(np.argmin(block))] = True
        keep[start + int(np.argmax(block))] = True
    return columns[keep], rows[keep]


def _polyline_coverage(
    shape: tuple[int, int], columns: np.ndarray, rows: np.ndarray, width: float, antialias: bool,
) -> np.ndarray:
    """Per-pixel coverage in [0, 1] of a polyline of the given stroke width."""
    coverage = np.zeros(shape, dtype=np.float32)
    half = width / 2.0
    reach = half + 1.0
    height, image_width = shape
    starts = np.stack([columns[:-1], rows[:-1]], axis=1) if len(columns) > 1 else np.stack(
        [columns, rows], axis=1)
    ends = np.stack([columns[1:], rows[1:]], axis=1) if len(columns) > 1 else starts
    for (x0, y0), (x1, y1) in zip(starts, ends, strict=True):
        c0 = max(int(math.floor(min(x0, x1) - reach)), 0)
        c1 = min(int(math.ceil(max(x0, x1) + reach)), image_width - 1)
        r0 = max(int(math.floor(min(y0, y1) - reach)), 0)
        r1 = min(int(math.ceil(max(y0, y1) + reach)), height - 1)
        if c0 > c1 or r0 > r1:
            continue
        px = np.arange(c0, c1 + 1, dtype=np.float64)[None, :]
        py = np.arange(r0, r1 + 1, dtype=np.float64)[:, None]
        dx, dy = x1 - x0, y1 - y0
        length_sq = dx * dx + dy * dy
        if length_sq > 0.0:
            t = np.clip(((px - x0) * dx + (py - y0) * dy) / length_sq, 0.0, 1.0)
        else:
            t = np.zeros((1, 1))
        distance = np.hypot(px - (x0 + t * dx), py - (y0 + t * dy))
        if antialias:
            local = np.clip(half + 0.5 - distance, 0.0, 1.0)
        else:
            local = (distance <= half).astype(np.float64)
        window = coverage[r0:r1 + 1, c0:c1 + 1]
        np.maximum(window, local, out=window)
    return coverage


def _blend(canvas: np.ndarray, coverage: np.ndarray, color: RGB) -> None:
    alpha = coverage[..., None]
    mixed = canvas * (1.0 - alpha) + np.asarray(color, dtype=np.float32) * alpha
    canvas[...] = np.round(mixed).astype(np.uint8)


# ---------------------------------------------------------------------------------------------
# Validation


def _check_color(color: object, where: str) -> RGB:
    message = f"{where}: colour must be three integers 0-255, got {color!r}"
    try:
        components = list(color)  # type: ignore[call-overload]
    except TypeError:
        raise PlotError(message) from None
    # Floats such as (0.2, 0.4, 0.8) would silently become black: only whole numbers are accepted.
    if len(components) != 3 or not all(
            isinstance(c, numbers.Integral) or (isinstance(c, numbers.Real) and float(c).is_integer())
            for c in components):
        raise PlotError(message)
    values = tuple(int(c) for c in components)
    if any(not 0 <= c <= 255 for c in values):
        raise PlotError(message)
    return values  # type: ignore[return-value]


def _check_series(series: Sequence[Series]) -> list[tuple[np.ndarray, np.ndarray, str, RGB]]:
    if not isinstance(series, Sequence) or len(series) == 0:
        raise PlotError("Plot needs at least one series (x, y, label, rgb); got none")
    checked = []
    for index, entry in enumerate(series):
        where = f"Series {index}"
        if not isinstance(entry, Sequence) or len(entry) != 4:
            raise PlotError(f"{where}: expected a tuple (x, y, label, rgb), got {type(entry).__name__}")
        x_values, y_values, label, color = entry
        where = f"Series {index} ({label!r})" if label else where
        try:
            x = np.asarray(x_values, dtype=np.float64)
            y = np.asarray(y_values, dtype=np.float64)
        except (TypeError, ValueError):
            raise PlotError(f"{where}: x and y must be sequences of numbers") from None
        if x.ndim != 1 or y.ndim != 1:
            raise PlotError(f"{where}: x and y must be one-dimensional, got shapes {x.shape} and {y.shape}")
        if len(x) == 0:
            raise PlotError(f"{where}: no data points")
        if len(x) != len(y):
            raise PlotError(f"{where}: x has {len(x)} values but y has {len(y)}")
        for name, values in (("x", x), ("y", y)):
            bad = np.flatnonzero(~np.isfinite(values))
            if len(bad):
                raise PlotError(
                    f"{where}: {name} has {len(bad)} non-finite value(s) (NaN or inf),"
                    f" first at index {bad[0]}")
        if not isinstance(label, str):
            raise PlotError(f"{where}: label must be a string, got {type(label).__name__}")
        checked.append((x, y, label, _check_color(color, where)))
    return checked


def _check_range(value: tuple[float, float] | None, name: str) -> tuple[float, float] | None:
    if value is None:
        return None
    try:
        low, high = (float(v) for v in value)
    except (TypeError, ValueError):
        raise PlotError(f"{name} must be a pair (low, high) of numbers, got {value!r}") from None
    if not (math.isfinite(low) and math.isfinite(high)) or not low < high:
        raise PlotError(f"{name} must be finite with low < high, got {value!r}")
    return low, high


# ---------------------------------------------------------------------------------------------
# Rendering


def render_plot(
    series: Sequence[Series],
    title: str = "",
    xlabel: str = "",
    ylabel: str = "",
    size: tuple[int, int] = (800, 450),
    *,
    x_range: tuple[float, float] | None = None,
    y_range: tuple[float, float] | None = None,
    line_width: float = 2.0,
    antialias: bool = True,
    grid: bool = True,
) -> PlotImage:
    """Draw the series as lines on titled, labelled axes with ticks, grid and legend.

    ``series`` is a list of ``(x, y, label, rgb)``; series with an empty label are left out of the
    legend. ``x_range`` / ``y_range`` fix the axes (data outside is clipped); by default they fit
    the data with a small margin. Raises :class:`PlotError` (a ``ValueError``) on empty,
    mismatched or non-finite data and on bad options.
    """
    checked = _check_series(series)
    try:
        width, height = (int(v) for v in size)
    except (TypeError, ValueError):
        raise PlotError(f"size must be (width, height) in pixels, got {size!r}") from None
    if not (_MIN_SIZE[0] <= width <= _MAX_SIZE[0] and _MIN_SIZE[1] <= height <= _MAX_SIZE[1]):
        raise PlotError(f"size {width}x{height} is outside {_MIN_SIZE[0]}x{_MIN_SIZE[1]}"
                        f" .. {_MAX_SIZE[0]}x{_MAX_SIZE[1]} pixels")
    if not (isinstance(line_width, (int, float)) and 0.5 <= line_width <= 50):
        raise PlotError(f"line_width must be between 0.5 and 50 pixels, got {line_width!r}")
    for name, text in (("title", title), ("xlabel", xlabel), ("ylabel", ylabel)):
        if not isinstance(text, str):
            raise PlotError(f"{name} must be a string, got {type(text).__name__}")
    fixed_x = _check_range(x_range, "x_range")
    fixed_y = _check_range(y_range, "y_range")

    all_x = np.concatenate([entry[0] for entry in checked])
    all_y = np.concatenate([entry[1] for entry in checked])
    x_low, x_high = fixed_x or _padded_range(float(all_x.min()), float(all_x.max()))
    y_low, y_high = fixed_y or _padded_range(float(all_y.min()), float(all_y.max()))
    for name, low, high in (("x", x_low, x_high), ("y", y_low, y_high)):
        if not math.isfinite(high - low):
            raise PlotError(f"{name} data spans {low:g} .. {high:g}, too wide to plot")

    scale = max(1, round(min(width, height) / 225))
    title_scale = scale + 1
    line_height = _GLYPH_ROWS * scale
    gap = 4 * scale
    tick_length = 3 * scale

    y_ticks = nice_ticks(y_low, y_high, target_count=max(3, min(8, height // (6 * line_height))))
    y_labels = _tick_labels(y_ticks)
    label_column_width = max(text_width(label, scale) for label in y_labels)

    left = gap + (line_height + gap if ylabel else 0) + label_column_width + gap + tick_length
    top = gap * 2 + (_GLYPH_ROWS * title_scale + gap if title else 0)
    right = width - 1 - gap * 3
    bottom = height - 1 - (tick_length + gap + line_height + gap + (line_height + gap if xlabel else 0)) - gap
    if right - left < 20 or bottom - top < 20:
        raise PlotError(f"size {width}x{height} leaves no room for the data area; make the plot larger")

    x_ticks = nice_ticks(x_low, x_high, target_count=max(3, min(10, (right - left) // 90)))
    x_labels = _tick_labels(x_ticks)
    # Wide labels (long decimals) would overlap: thin the ticks until they fit.
    while len(x_ticks) > 2 and max(text_width(lab, scale) for lab in x_labels) + 3 * gap > (
            (right - left) * (x_ticks[1] - x_ticks[0]) / (x_high - x_low)):
        x_ticks = nice_ticks(x_low, x_high, target_count=len(x_ticks) - 1)
        x_labels = _tick_labels(x_ticks)

    image = PlotImage(np.empty(0), (left, top, right, bottom), (x_low, x_high), (y_low, y_high))
    canvas = np.empty((height, width, 3), dtype=np.uint8)
    canvas[...] = WHITE

    # Grid and ticks; ticks that fall outside a user-fixed range are not drawn.
    for tick, label in zip(x_ticks, x_labels, strict=True):
        column = int(round(image.data_to_pixel(tick, y_low)[0]))
        if not left <= column <= right:
            continue
        if grid:
            canvas[top:bottom + 1, column] = _GRID_COLOR
        canvas[bottom + 1:bottom + 1 + tick_length, column] = _AXIS_COLOR
        label_left = column - text_width(label, scale) // 2
        label_left = min(max(label_left, 0), width - text_width(label, scale))
        _paste_mask(canvas, text_mask(label, scale), label_left, bottom + tick_length + gap, _TEXT_COLOR)
    for tick, label in zip(y_ticks, y_labels, strict=True):
        row = int(round(image.data_to_pixel(x_low, tick)[1]))
        if not top <= row <= bottom:
            continue
        if grid:
            canvas[row, left:right + 1] = _GRID_COLOR
        canvas[row, left - tick_length:left] = _AXIS_COLOR
        label_left = left - tick_length - gap - text_width(label, scale)
        _paste_mask(canvas, text_mask(label, scale), label_left, row - line_height // 2, _TEXT_COLOR)

    # Series, clipped to the data area.
    inner = (slice(top, bottom + 1), slice(left, right + 1))
    ink = np.zeros((height, width), dtype=np.float32)
    for x, y, _label, color in checked:
        columns = left + (x - x_low) / (x_high - x_low) * (right - left)
        rows = bottom - (y - y_low) / (y_high - y_low) * (bottom - top)
        if len(columns) > 4 * (right - left) and np.all(np.diff(columns) >= 0):
            columns, rows = _decimate_columns(columns, rows)
        coverage = _polyline_coverage((height, width), columns, rows, float(line_width), antialias)
        clipped = np.zeros_like(coverage)
        clipped[inner] = coverage[inner]
        _blend(canvas, clipped, color)
        np.maximum(ink, clipped, out=ink)

    # Axis frame on top of the data so that lines along the border stay readable.
    canvas[bottom, left:right + 1] = _AXIS_COLOR
    canvas[top, left:right + 1] = _AXIS_COLOR
    canvas[top:bottom + 1, left] = _AXIS_COLOR
    canvas[top:bottom + 1, right] = _AXIS_COLOR

    if title:
        mask = text_mask(title, title_scale)
        _paste_mask(canvas, mask, (left + right) // 2 - mask.shape[1] // 2, gap * 2, _TEXT_COLOR)
    if xlabel:
        mask = text_mask(xlabel, scale)
        _paste_mask(canvas, mask, (left + right) // 2 - mask.shape[1] // 2,
                    height - 1 - gap - line_height, _TEXT_COLOR)
    if ylabel:
        mask = np.rot90(text_mask(ylabel, scale))
        _paste_mask(canvas, mask, gap, (top + bottom) // 2 - mask.shape[0] // 2, _TEXT_COLOR)

    _draw_legend(canvas, [(label, color) for _x, _y, label, color in checked if label],
                 (left, top, right, bottom), scale, float(line_width), ink)
    return PlotImage(canvas, (left, top, right, bottom), (x_low, x_high), (y_low, y_high))


def _draw_legend(canvas: np.ndarray, entries: list[tuple[str, RGB]], box: tuple[int, int, int, int],
                 scale: int, line_width: float, ink: np.ndarray) -> None:
    """Framed legend (line sample + label per series) where it hides the least of the data
    (``ink`` is the drawn lines' coverage): a corner or the middle of an edge of the data area."""
    if not entries:
        return
    left, top, right, bottom = box
    line_height = _GLYPH_ROWS * scale
    pad = 3 * scale
    sample = 8 * scale
    row_height = line_height + pad
    legend_width = min(pad * 3 + sample + max(text_width(label, scale) for label, _ in entries),
                       right - left - 2 * pad)
    legend_height = min(pad + row_height * len(entries), bottom - top - 2 * pad)
    columns = (right - pad - legend_width, left + pad, (left + right - legend_width) // 2)
    rows = (top + pad, bottom - pad - legend_height, (top + bottom - legend_height) // 2)
    # Corners first (top-right wins ties), then edge middles: the spot that hides the least data.
    order = ((0, 0), (0, 1), (1, 0), (1, 1), (0, 2), (1, 2), (2, 0), (2, 1))
    spots = [(columns[c], rows[r]) for r, c in order]
    hidden = [float(ink[y:y + legend_height + 1, x:x + legend_width + 1].sum()) for x, y in spots]
    x0, y0 = spots[int(np.argmin(hidden))]
    x1, y1 = x0 + legend_width, y0 + legend_height
    canvas[y0:y1 + 1, x0:x1 + 1] = WHITE
    canvas[y0, x0:x1 + 1] = _AXIS_COLOR
    canvas[y1, x0:x1 + 1] = _AXIS_COLOR
    canvas[y0:y1 + 1, x0] = _AXIS_COLOR
    canvas[y0:y1 + 1, x1] = _AXIS_COLOR
    thickness = max(1, int(round(line_width)))
    for index, (label, color) in enumerate(entries):
        row_top = y0 + pad + index * row_height
        if row_top + line_height > y1:
            break  # more series than fit: the legend lists as many as it can
        middle = row_top + line_height // 2
        first_row = middle - thickness // 2
        canvas[first_row:first_row + thickness, x0 + pad:x0 + pad + sample] = color
        mask = text_mask(label, scale)[:, :max(x1 - pad - (x0 + 2 * pad + sample), 0)]
        _paste_mask(canvas, mask, x0 + 2 * pad + sample, row_top, _TEXT_COLOR)


# ---------------------------------------------------------------------------------------------
# PNG


def _chunk(kind: bytes, payload: bytes) -> bytes:
    return (struct.pack(">I", len(payload)) + kind + payload
            + struct.pack(">I", zlib.crc32(kind + payload) & 0xFFFFFFFF))


def encode_png(pixels: np.ndarray) -> bytes:
    """Encode ``(height, width, 3)`` uint8 pixels as an 8-bit RGB PNG.

    Every row uses the "Up" filter: plots repeat rows a lot, which this turns into zeros.
    """
    if pixels.dtype != np.uint8 or pixels.ndim != 3 or pixels.shape[2] != 3:
        raise PlotError(
            f"PNG pixels must be a (height, width, 3) uint8 array, got {pixels.dtype} {pixels.shape}")
    height, width = pixels.shape[:2]
    rows = pixels.reshape(height, width * 3)
    filtered = np.empty((height, width * 3 + 1), dtype=np.uint8)
    filtered[:, 0] = 2
    filtered[0, 1:] = rows[0]
    filtered[1:, 1:] = rows[1:] - rows[:-1]  # uint8 wraps modulo 256, as the filter requires
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (PNG_SIGNATURE + _chunk(b"IHDR", header)
            + _chunk(b"IDAT", zlib.compress(filtered.tobytes(), 6)) + _chunk(b"IEND", b""))


def png_bytes(
    series: Sequence[Series],
    title: str = "",
    xlabel: str = "",
    ylabel: str = "",
    size: tuple[int, int] = (800, 450),
    **options: object,
) -> bytes:
    """The plot of :func:`render_plot` encoded as PNG bytes (same arguments)."""
    return encode_png(render_plot(series, title, xlabel, ylabel, size, **options).pixels)  # type: ignore[arg-type]


def line_plot_png(
    path: str | Path,
    series: Sequence[Series],
    title: str = "",
    xlabel: str = "",
    ylabel: str = "",
    size: tuple[int, int] = (800, 450),
    **options: object,
) -> None:
    """Write the plot of :func:`render_plot` to ``path`` as a PNG file.

    Everything is validated and rendered before the file is opened, so bad data never leaves a
    truncated file behind.
    """
    data = png_bytes(series, title, xlabel, ylabel, size, **options)
    Path(path).write_bytes(data)


def read_png_size(path: str | Path) -> tuple[int, int]:
    """(width, height) from a PNG file's IHDR chunk; :class:`PlotError` if it is not a PNG."""
    with open(path, "rb") as handle:
        head = handle.read(33)
    if len(head) < 33 or head[:8] != PNG_SIGNATURE or head[12:16] != b"IHDR":
        raise PlotError(f"{path} is not a PNG file (bad signature or missing IHDR)")
    width, height = struct.unpack(">II", head[16:24])
    return width, height
