"""The PNG line plots: a valid file, data drawn where it belongs, text present, bad input refused.

The PNG is decoded here with an independent reader (all five filter types), so the tests check the
bytes a viewer would see, not the module's own idea of them.
"""

import struct
import zlib

import numpy as np
import pytest

from addon import plotting
from addon.errors import ProcAnimError
from addon.plotting import PlotError, line_plot_png, png_bytes, read_png_size, render_plot

BLUE = (0, 114, 178)
ORANGE = (213, 94, 0)
WHITE = (255, 255, 255)


def _chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "bad PNG signature"
    chunks, offset = [], 8
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind = data[offset + 4 : offset + 8]
        payload = data[offset + 8 : offset + 8 + length]
        (crc,) = struct.unpack(">I", data[offset + 8 + length : offset + 12 + length])
        assert crc == zlib.crc32(kind + payload) & 0xFFFFFFFF, f"bad CRC in {kind!r}"
        chunks.append((kind, payload))
        offset += 12 + length
    assert offset == len(data)
    return chunks


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def decode_png(data: bytes) -> np.ndarray:
    """(height, width, 3) uint8 pixels of an 8-bit RGB, non-interlaced PNG."""
    chunks = _chunks(data)
    assert chunks[0][0] == b"IHDR" and chunks[-1][0] == b"IEND"
    width, height, depth, color_type, compression, filter_method, interlace = struct.unpack(
        ">IIBBBBB", chunks[0][1]
    )
    assert (depth, color_type, compression, filter_method, interlace) == (8, 2, 0, 0, 0)
    raw = zlib.decompress(b"".join(payload for kind, payload in chunks if kind == b"IDAT"))
    stride = width * 3
    assert len(raw) == height * (stride + 1)
    rows = np.frombuffer(raw, dtype=np.uint8).reshape(height, stride + 1)
    filters = rows[:, 0]
    assert set(filters.tolist()) <= {0, 1, 2, 3, 4}, f"invalid filter bytes {set(filters.tolist())}"
    out = np.zeros((height, stride), dtype=np.int64)
    previous = np.zeros(stride, dtype=np.int64)
    for r in range(height):
        line = rows[r, 1:].astype(np.int64)
        kind = filters[r]
        if kind == 0:
            current = line
        elif kind == 2:
            current = (line + previous) % 256
        else:  # Sub, Average, Paeth depend on the pixel to the left: decode byte by byte
            current = np.zeros(stride, dtype=np.int64)
            for i in range(stride):
                left = current[i - 3] if i >= 3 else 0
                up_left = previous[i - 3] if i >= 3 else 0
                predictor = {1: left, 3: (left + previous[i]) // 2, 4: _paeth(left, previous[i], up_left)}[
                    int(kind)
                ]
                current[i] = (line[i] + predictor) % 256
        out[r] = current
        previous = current
    return out.reshape(height, width, 3).astype(np.uint8)


def _is_color(pixels: np.ndarray, color: tuple[int, int, int]) -> np.ndarray:
    return np.all(pixels == np.asarray(color, dtype=np.uint8), axis=-1)


def _dark(pixels: np.ndarray) -> np.ndarray:
    return pixels.max(axis=-1) < 100


def test_file_is_a_valid_png_of_the_requested_size(tmp_path):
    path = tmp_path / "plot.png"
    t = np.linspace(0.0, 5.0, 300)
    line_plot_png(
        path,
        [(t, np.sin(t), "sin", BLUE), (t, np.cos(t), "cos", ORANGE)],
        title="Waves",
        xlabel="time (s)",
        ylabel="value",
        size=(640, 360),
    )
    data = path.read_bytes()
    pixels = decode_png(data)
    assert pixels.shape == (360, 640, 3)
    assert read_png_size(path) == (640, 360)
    assert data == png_bytes(
        [(t, np.sin(t), "sin", BLUE), (t, np.cos(t), "cos", ORANGE)],
        title="Waves",
        xlabel="time (s)",
        ylabel="value",
        size=(640, 360),
    )
    # Both series really appear, in their own colours.
    assert _is_color(pixels, BLUE).sum() > 300
    assert _is_color(pixels, ORANGE).sum() > 300


def test_decoded_png_matches_rendered_pixels():
    series = [([0, 1, 2, 3], [1, 3, 2, 5], "a", BLUE)]
    image = render_plot(series, title="T", size=(300, 200))
    assert np.array_equal(decode_png(png_bytes(series, title="T", size=(300, 200))), image.pixels)


def test_horizontal_line_at_half_range_lands_on_the_middle_row():
    image = render_plot(
        [([0.0, 1.0], [0.5, 0.5], "", BLUE)],
        size=(400, 300),
        x_range=(0.0, 1.0),
        y_range=(0.0, 1.0),
        line_width=1.0,
        antialias=False,
    )
    pixels = decode_png(plotting.encode_png(image.pixels))
    left, top, right, bottom = image.plot_box
    # The frame drawn in the image is where plot_box says it is ...
    frame = np.asarray(plotting._AXIS_COLOR, dtype=np.uint8)
    assert np.all(pixels[top, left : right + 1] == frame)
    assert np.all(pixels[bottom, left : right + 1] == frame)
    assert np.all(pixels[top : bottom + 1, left] == frame)
    # ... and y = 0.5 of [0, 1] is the row halfway between its top and bottom edges.
    middle_row = (top + bottom) / 2
    blue_rows = np.flatnonzero(_is_color(pixels[:, left + 5 : right - 5], BLUE).any(axis=1))
    assert len(blue_rows) >= 1
    assert abs(blue_rows.mean() - middle_row) <= 0.5
    assert blue_rows.max() - blue_rows.min() <= 1
    # The line spans the whole data width.
    assert _is_color(pixels[blue_rows[0]], BLUE)[left + 1 : right].mean() > 0.95


def test_diagonal_line_passes_through_the_data_points():
    image = render_plot(
        [([0.0, 10.0], [-2.0, 8.0], "", ORANGE)], size=(500, 400), x_range=(0.0, 10.0), y_range=(-2.0, 8.0)
    )
    for x in (1.0, 2.5, 5.0, 7.5, 9.0):
        column, row = image.data_to_pixel(x, x - 2.0)
        painted = np.flatnonzero(_is_color(image.pixels[:, int(round(column))], ORANGE))
        assert len(painted) > 0
        assert abs(painted.mean() - row) <= 1.0, (x, painted, row)


def test_data_range_fits_all_series_with_margin():
    image = render_plot([([0, 1], [10, 20], "", BLUE), ([0, 1], [-5, 0], "", ORANGE)])
    low, high = image.y_range
    assert low < -5 and high > 20
    assert (high - low) < 25 * 1.2


def test_title_axis_labels_and_legend_are_drawn():
    series = [([0, 1, 2], [0, 1, 0], "peak", BLUE)]
    plain = render_plot([([0, 1, 2], [0, 1, 0], "", BLUE)], size=(500, 300))
    left, top, right, bottom = plain.plot_box
    labelled = render_plot(series, title="Title", xlabel="X axis", ylabel="Y axis", size=(500, 300))
    l_left, l_top, l_right, l_bottom = labelled.plot_box
    assert not _dark(plain.pixels[: top - 1]).any(), "no title was asked for"
    assert _dark(labelled.pixels[: l_top - 1]).sum() > 50, "title pixels missing"
    assert _dark(labelled.pixels[-14:, l_left:l_right]).sum() > 30, "x label pixels missing"
    assert _dark(labelled.pixels[l_top:l_bottom, :14]).sum() > 30, "y label pixels missing"
    # The legend is a framed box with the label text inside the data area.
    inside = labelled.pixels[l_top + 2 : l_bottom - 1, l_left + 2 : l_right - 1]
    assert _dark(inside).sum() > 40
    assert not _dark(plain.pixels[top + 2 : bottom - 1, left + 2 : right - 1]).any()


def test_tick_labels_are_drawn_next_to_the_axes():
    image = render_plot([([0, 100], [0, 1], "", BLUE)], size=(500, 300), x_range=(0, 100), y_range=(0, 1))
    left, top, right, bottom = image.plot_box
    assert _dark(image.pixels[bottom + 4 :, left - 5 : right + 5]).sum() > 40
    assert _dark(image.pixels[top:bottom, : left - 2]).sum() > 40


def test_legend_moves_away_from_the_data():
    # A line hugging the top edge: the legend must not cover it.
    x = np.linspace(0, 1, 50)
    image = render_plot(
        [(x, np.ones_like(x), "top", BLUE), (x, np.zeros_like(x) + 0.5, "middle", ORANGE)],
        size=(400, 300),
        x_range=(0.0, 1.0),
        y_range=(0.0, 1.05),
    )
    row = int(round(image.data_to_pixel(0.5, 1.0)[1]))
    left, _top, right, _bottom = image.plot_box
    assert _is_color(image.pixels[row - 1 : row + 2, left + 2 : right - 1], BLUE).any(axis=0).mean() > 0.95


def test_font_has_a_distinct_glyph_for_every_printable_character():
    glyphs = {chr(c): plotting.text_mask(chr(c)).tobytes() for c in range(33, 127)}
    assert len(set(glyphs.values())) == len(glyphs)
    assert not plotting.text_mask(" ").any()
    assert np.array_equal(plotting.text_mask("-")[3], np.ones(5, dtype=bool))
    assert np.array_equal(plotting.text_mask("\u00b5"), plotting.text_mask("?"))
    assert plotting.text_mask("AB", scale=3).shape == (21, 33) == (21, plotting.text_width("AB", 3))


@pytest.mark.parametrize(
    ("low", "high", "count", "expected"),
    [
        (0.0, 10.0, 6, [0, 2, 4, 6, 8, 10]),
        (-0.054, 0.054, 5, [-0.05, -0.025, 0.0, 0.025, 0.05]),
        (0.3, 0.95, 4, [0.4, 0.6, 0.8]),
        (-0.054, 0.054, 3, [-0.05, 0.0, 0.05]),
    ],
)
def test_nice_ticks(low, high, count, expected):
    assert np.allclose(plotting.nice_ticks(low, high, count), expected)


def test_tick_labels_share_decimals():
    assert plotting._tick_labels(np.array([-0.05, -0.025, 0.0])) == ["-0.050", "-0.025", "0.000"]
    assert plotting._tick_labels(np.array([0.0, 50.0, 100.0])) == ["0", "50", "100"]


def test_tick_labels_switch_to_scientific_and_stay_distinct():
    assert plotting._tick_labels(np.array([0.0, 2.5e7, 5e7])) == ["0", "2.5e7", "5e7"]
    assert plotting._tick_labels(np.array([1e-9, 2e-9, 3e-9])) == ["1e-9", "2e-9", "3e-9"]
    offset = plotting._tick_labels(1e9 + np.array([0.0, 0.2, 0.4]))
    assert len(set(offset)) == 3, offset
    ticks = plotting.nice_ticks(1e6, 1e6 + 1.0, 6)
    assert len(set(plotting._tick_labels(ticks))) == len(ticks)


def test_numpy_colours_and_data_are_accepted():
    color = np.array([0, 114, 178], dtype=np.int64)
    image = render_plot([(np.arange(5, dtype=np.float32), np.arange(5, dtype=np.int32), "np", color)])
    assert _is_color(image.pixels, BLUE).sum() > 100


def test_constant_series_gets_a_non_empty_range():
    image = render_plot([([0, 1, 2], [3.0, 3.0, 3.0], "flat", BLUE)])
    low, high = image.y_range
    assert low < 3.0 < high
    assert _is_color(image.pixels, BLUE).sum() > 100


def test_dense_series_draws_the_same_picture_as_the_full_polyline():
    rng = np.random.default_rng(3)
    columns = np.linspace(10, 190, 5000)
    rows = 100 + 40 * np.sin(columns / 7) + rng.normal(0, 3, columns.shape)
    full = plotting._polyline_coverage((200, 200), columns, rows, 2.0, True)
    few_columns, few_rows = plotting._decimate_columns(columns, rows)
    assert len(few_columns) < len(columns) / 5
    reduced = plotting._polyline_coverage((200, 200), few_columns, few_rows, 2.0, True)
    # Anti-aliased edges shift a little inside a column; the inked pixels stay the same.
    assert np.abs(full - reduced).mean() < 0.01
    assert np.count_nonzero((full > 0.5) != (reduced > 0.5)) < 0.02 * np.count_nonzero(full > 0.5)


@pytest.mark.parametrize(
    ("series", "message"),
    [
        ([], "at least one series"),
        ([([], [], "empty", BLUE)], "no data points"),
        ([([0, 1, 2], [0, 1], "short", BLUE)], "x has 3 values but y has 2"),
        ([([0, 1, 2], [0, float("nan"), 1], "gap", BLUE)], "y has 1 non-finite value"),
        ([([0, float("inf")], [0, 1], "", BLUE)], "x has 1 non-finite"),
        ([(np.zeros((2, 2)), np.zeros((2, 2)), "", BLUE)], "one-dimensional"),
        ([([0, 1], [0, 1], "bad colour", (300, 0, 0))], "colour must be three integers"),
        ([([0, 1], [0, 1], "bad colour", "red")], "colour must be three integers"),
        ([([0, 1], [0, 1], "unit floats", (0.2, 0.4, 0.8))], "colour must be three integers"),
        ([([0, 1], [0, 1], "no colour")], "expected a tuple"),
        ([([0, 1], ["a", "b"], "text", BLUE)], "sequences of numbers"),
    ],
)
def test_bad_series_raise_a_clear_error(series, message):
    with pytest.raises(PlotError, match=message) as caught:
        png_bytes(series)
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, ProcAnimError)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"size": (50, 50)}, "outside"),
        ({"size": "big"}, "size must be"),
        ({"y_range": (1.0, 0.0)}, "low < high"),
        ({"x_range": (0.0, float("nan"))}, "finite"),
        ({"line_width": 0}, "line_width"),
        ({"title": 3}, "title must be a string"),
    ],
)
def test_bad_options_raise_a_clear_error(options, message):
    with pytest.raises(PlotError, match=message):
        png_bytes([([0, 1], [0, 1], "", BLUE)], **options)


def test_data_too_wide_to_plot_is_refused():
    with pytest.raises(PlotError, match="too wide"):
        png_bytes([([0, 1], [-1.7e308, 1.7e308], "", BLUE)])


def test_bad_data_leaves_no_file_behind(tmp_path):
    path = tmp_path / "never.png"
    with pytest.raises(PlotError):
        line_plot_png(path, [([0, 1], [0, float("nan")], "", BLUE)])
    assert not path.exists()


def test_read_png_size_rejects_other_files(tmp_path):
    path = tmp_path / "not.png"
    path.write_bytes(b"GIF89a" + bytes(40))
    with pytest.raises(PlotError, match="not a PNG"):
        read_png_size(path)
