"""Juggling Lab's pattern parameter strings: ``pattern=531;bps=4;dwell=1;hands=...;title=...``.

Juggling Lab (``MhnPattern.fromParameters``) reads a pattern as ``key=value`` pairs separated by
``;``; a string with no ``=`` is just the pattern. :func:`parse_config` reads one into a
:class:`PatternConfig`, :func:`format_config` writes it back in Juggling Lab's key order, and
:func:`plan_config` animates it. Units are Juggling Lab's: centimetres, cm/s^2, beats per second.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from dataclasses import replace as replaced

from ..errors import ProcAnimError
from .hand_siteswap import hand_siteswap
from .model import Siteswap
from .motion import Pattern, plan_pattern
from .notation import parse_siteswap
from .paths import DwellPath

__all__ = [
    "KEY_ORDER",
    "ConfigError",
    "PatternConfig",
    "format_config",
    "hands_to_dwell_paths",
    "is_config",
    "parse_body",
    "parse_colors",
    "parse_config",
    "plan_config",
]

#: Juggling Lab's order when it writes a configuration (``MhnPattern.toString``).
KEY_ORDER = (
    "pattern",
    "bps",
    "dwell",
    "hands",
    "body",
    "gravity",
    "propdiam",
    "bouncefrac",
    "squeezebeats",
    "prop",
    "colors",
    "hss",
    "hold",
    "dwellmax",
    "handspec",
    "title",
)
_NUMBERS = ("bps", "dwell", "gravity", "propdiam", "bouncefrac", "squeezebeats")
_FLAGS = ("hold", "dwellmax")
#: Juggling Lab's prop types and the ProcAnim prop each becomes (JL has no clubs; ProcAnim's own
#: ``club`` is accepted too).
PROP_TYPES = {"ball": "ball", "image": "ball", "square": "ball", "ring": "ring", "club": "club"}
#: Juggling Lab's ball diameter (cm) for ``propdiam`` = ProcAnim's prop size 1.
_BALL_DIAMETER_CM = 6.8
#: Juggling Lab's default prop diameter (cm): a ProcAnim prop of size 10 / 6.8.
PROPDIAM_DEFAULT = 10.0

# Juggling Lab's named colours (``Prop.kt``: the java.awt names), 0-1 RGB.
COLOR_NAMES = {
    "black": (0.0, 0.0, 0.0),
    "blue": (0.0, 0.0, 1.0),
    "cyan": (0.0, 1.0, 1.0),
    "gray": (0.5, 0.5, 0.5),
    "green": (0.0, 1.0, 0.0),
    "magenta": (1.0, 0.0, 1.0),
    "orange": (1.0, 200 / 255, 0.0),
    "pink": (1.0, 175 / 255, 175 / 255),
    "red": (1.0, 0.0, 0.0),
    "white": (1.0, 1.0, 1.0),
    "yellow": (1.0, 1.0, 0.0),
}


class ConfigError(ProcAnimError, ValueError):
    """A Juggling Lab parameter string that cannot be read; the message names the key."""


@dataclass(frozen=True)
class PatternConfig:
    """One Juggling Lab pattern configuration; None means "Juggling Lab's default"."""

    pattern: str
    bps: float | None = None
    dwell: float | None = None
    hands: str | None = None
    body: str | None = None
    gravity: float | None = None
    propdiam: float | None = None
    bouncefrac: float | None = None
    squeezebeats: float | None = None
    prop: str | None = None
    colors: str | None = None
    hss: str | None = None
    hold: bool | None = None
    dwellmax: bool | None = None
    handspec: str | None = None
    title: str | None = None
    #: Keys ProcAnim does not know, kept (in order) so that a configuration round-trips.
    extra: tuple[tuple[str, str], ...] = ()

    def siteswap(self) -> Siteswap:
        if self.hss is not None:
            return hand_siteswap(self.pattern, self.hss, self.handspec)
        return parse_siteswap(self.pattern)

    def plan(self, **options) -> Pattern:
        return plan_config(self, **options)


def is_config(text: str) -> bool:
    """True when ``text`` is a ``key=value`` string rather than a bare siteswap."""
    return "=" in text


def _format_number(value: float) -> str:
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def parse_config(text: str) -> PatternConfig:
    """Read a Juggling Lab configuration; a bare siteswap is ``pattern=`` alone.

    Raises :class:`ConfigError` for a missing pattern, a repeated key, a number that is not one or
    is out of Juggling Lab's range (``bps`` 0.05 to 200, ``dwell`` between 0 and 2).
    """
    if not isinstance(text, str):
        raise ConfigError(f"a pattern configuration must be text, not {type(text).__name__}")
    if not is_config(text):
        if not text.strip():
            raise ConfigError("the pattern configuration is empty")
        return PatternConfig(pattern=text.strip())
    values: dict[str, object] = {}
    extra: list[tuple[str, str]] = []
    for part in text.split(";"):
        if not part.strip():
            continue
        key, equals, value = part.partition("=")
        key = key.strip().lower()
        value = value.strip()
        if not equals or not key:
            raise ConfigError(f"{part.strip()!r} in {text!r} is not key=value")
        if key in values or any(key == k for k, _ in extra):
            raise ConfigError(f"{key}= appears twice in {text!r}")
        if key in _NUMBERS:
            values[key] = _number(key, value)
        elif key in _FLAGS:
            if value.lower() not in ("true", "false"):
                raise ConfigError(f"{key}={value}: must be true or false")
            values[key] = value.lower() == "true"
        elif key in KEY_ORDER:
            values[key] = value
        else:
            extra.append((key, value))
    if not values.get("pattern"):
        raise ConfigError(f"{text!r} has no pattern= (the siteswap)")
    config = PatternConfig(**values, extra=tuple(extra))  # type: ignore[arg-type]
    _check(config)
    return config


def _number(key: str, value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise ConfigError(f"{key}={value}: not a number") from None
    if not math.isfinite(number):
        raise ConfigError(f"{key}={value}: not a finite number")
    return number


def _check(config: PatternConfig) -> None:
    if config.bps is not None and not 0.05 <= config.bps <= 200:
        raise ConfigError(f"bps={_format_number(config.bps)}: beats per second must be from 0.05 to 200")
    if config.dwell is not None and not 0 < config.dwell < 2:
        raise ConfigError(f"dwell={_format_number(config.dwell)}: dwell must be between 0 and 2 beats")
    if config.gravity is not None and not config.gravity > 0:
        raise ConfigError(f"gravity={_format_number(config.gravity)}: gravity must be positive (cm/s^2)")
    if config.propdiam is not None and not config.propdiam > 0:
        raise ConfigError(f"propdiam={_format_number(config.propdiam)}: the diameter must be positive (cm)")
    if config.bouncefrac is not None and not 0 < config.bouncefrac <= 1:
        raise ConfigError(f"bouncefrac={_format_number(config.bouncefrac)}: must be above 0 and at most 1")
    if config.squeezebeats is not None and not 0 <= config.squeezebeats < 2:
        raise ConfigError(f"squeezebeats={_format_number(config.squeezebeats)}: must be from 0 to 2 beats")
    if config.prop is not None and config.prop.lower() not in PROP_TYPES:
        raise ConfigError(f"prop={config.prop}: must be one of {', '.join(PROP_TYPES)}")
    if config.hands is not None:
        hands_to_dwell_paths(config.hands)
    if config.body is not None:
        parse_body(config.body)


def format_config(config: PatternConfig) -> str:
    """The configuration as Juggling Lab writes it: known keys in its order, then the others."""
    parts = []
    for key in KEY_ORDER:
        value = getattr(config, key)
        if value is None:
            continue
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, float):
            text = _format_number(value)
        else:
            text = str(value)
        parts.append(f"{key}={text}")
    parts += [f"{key}={value}" for key, value in config.extra]
    return ";".join(parts)


# --------------------------------------------------------------------------------------------------
# hands= (Juggling Lab's MhnHands): per beat, the throw position first, then the empty hand's way to
# its catch (the last point, or the one after a "c"), then the loaded hand's way to the next throw.


@dataclass(frozen=True)
class _HandBeat:
    points: tuple[tuple[float, float, float] | None, ...]  # (outward, up, forward) cm, None = "-"
    catch_index: int


_COORD = re.compile(r"\(([^()]*)\)")


def _expand_repeats(text: str) -> str:
    """Juggling Lab's ``(part^n)`` repeats inside hands= / body= strings."""
    pattern = re.compile(r"\(([^()]*(?:\([^()]*\)[^()]*)*)\^(\d+)\)")
    while True:
        match = pattern.search(text)
        if match is None:
            return text
        text = text[: match.start()] + match.group(1) * int(match.group(2)) + text[match.end() :]


def _split_beats(text: str) -> list[str]:
    beats, depth, current = [], 0, []
    for char in text:
        depth += (char == "(") - (char == ")")
        if char == "." and depth == 0:
            beats.append("".join(current))
            current = []
        else:
            current.append(char)
    if "".join(current).strip():
        beats.append("".join(current))
    return beats


def _read_hands(text: str) -> list[list[_HandBeat]]:
    cleaned = "".join(c for c in _expand_repeats(text) if c not in "<>{}")
    jugglers = []
    for juggler_text in re.split(r"[|!]", cleaned):
        beats = []
        for number, beat in enumerate(_split_beats(juggler_text.strip()), start=1):
            points: list[tuple[float, float, float] | None] = []
            catch = -1
            position = 0
            while position < len(beat):
                char = beat[position]
                if char == " ":
                    position += 1
                elif char == "-":
                    points.append(None)
                    position += 1
                elif char in "Tt":
                    if points:
                        raise ConfigError(f"hands={text}: beat {number}: T must come first")
                    position += 1
                elif char in "Cc":
                    if not points or catch != -1:
                        raise ConfigError(f"hands={text}: beat {number}: C must follow the throw, once")
                    catch = len(points)
                    position += 1
                elif char == "(":
                    close = beat.find(")", position)
                    if close < 0:
                        raise ConfigError(f"hands={text}: beat {number}: missing ')'")
                    try:
                        numbers = [float(v) for v in beat[position + 1 : close].split(",")]
                    except ValueError:
                        raise ConfigError(
                            f"hands={text}: beat {number}: a coordinate is not a number"
                        ) from None
                    if not 1 <= len(numbers) <= 3 or not all(math.isfinite(v) for v in numbers):
                        raise ConfigError(f"hands={text}: beat {number}: coordinates take 1 to 3 numbers")
                    numbers += [0.0] * (3 - len(numbers))
                    points.append((numbers[0], numbers[1], numbers[2]))
                    position = close + 1
                else:
                    raise ConfigError(f"hands={text}: beat {number}: unexpected {char!r}")
            if len(points) < 2:
                raise ConfigError(f"hands={text}: beat {number} needs a throw and a catch position")
            catch = catch if catch != -1 else len(points) - 1
            if points[0] is None or points[catch] is None:
                raise ConfigError(f"hands={text}: beat {number}: the throw and catch need coordinates")
            beats.append(_HandBeat(tuple(points), catch))
        if not beats:
            raise ConfigError(f"hands={text}: a juggler has no beats")
        jugglers.append(beats)
    return jugglers


def hands_to_dwell_paths(text: str) -> tuple[DwellPath, ...]:
    """ProcAnim dwell paths (one per beat) for Juggling Lab's ``hands=`` of the first juggler.

    Juggling Lab places the catch before the throw on beat ``k`` at the catch position of beat
    ``k - 2`` (the same hand's previous entry); the loaded hand then follows the points written
    after that catch, and throws from beat ``k``'s first position. Empty-hand points (between a
    throw and its catch) are not kept: ProcAnim's hand runs a smooth path there.
    """
    beats = _read_hands(text)[0]
    count = len(beats)
    paths = []
    for k in range(count):
        before = beats[(k - 2) % count]
        carried = [p for p in before.points[before.catch_index :] if p is not None]
        throw = beats[k].points[0]
        assert throw is not None
        chain = [*carried, throw]
        # cm (outward, up, forward) -> metres (outward, forward, up).
        paths.append(DwellPath(tuple((x / 100, z / 100, y / 100) for x, y, z in chain)))
    return tuple(paths)


# --------------------------------------------------------------------------------------------------
# body= (Juggling Lab's MhnBody): per beat, "(angle, x, y, z)" in degrees and cm, z defaults to 100.


def parse_body(text: str) -> list[list[list[tuple[float, float, float, float] | None]]]:
    """Per juggler, per beat, the listed positions ``(angle, x, y, z)``; None is a rest/placeholder."""
    cleaned = "".join(c for c in _expand_repeats(text) if c not in "<>{}")
    jugglers = []
    for juggler_text in re.split(r"[|!]", cleaned):
        beats = []
        for number, beat in enumerate(_split_beats(juggler_text.strip()), start=1):
            leftover = _COORD.sub("", beat).replace("-", "").strip()
            if leftover:
                raise ConfigError(f"body={text}: beat {number}: unexpected {leftover!r}")
            positions: list[tuple[float, float, float, float] | None] = []
            for token in re.finditer(r"\(([^()]*)\)|-", beat):
                if token.group(0) == "-":
                    positions.append(None)
                    continue
                try:
                    numbers = [float(v) for v in token.group(1).split(",")]
                except ValueError:
                    raise ConfigError(f"body={text}: beat {number}: a coordinate is not a number") from None
                if not 1 <= len(numbers) <= 4 or not all(math.isfinite(v) for v in numbers):
                    raise ConfigError(f"body={text}: beat {number}: positions take 1 to 4 numbers")
                full = [0.0, 0.0, 0.0, 100.0]
                full[: len(numbers)] = numbers
                positions.append((full[0], full[1], full[2], full[3]))
            beats.append(positions or [None])
        jugglers.append(beats)
    return jugglers


# --------------------------------------------------------------------------------------------------
# colors=


def parse_colors(text: str, num_props: int) -> list[tuple[float, float, float]] | None:
    """Prop colours for ``colors=``: names or ``{r,g,b}`` (0-255), repeated over the props;
    ``mixed`` / ``orbits`` (Juggling Lab's automatic schemes) give None: ProcAnim's own colours."""
    spec = text.strip()
    if spec.lower() in ("mixed", "orbits", ""):
        return None
    colors = []
    for token in re.findall(r"\{[^{}]*\}|[^,{}\s]+", spec):
        if token.startswith("{"):
            try:
                rgb = [float(v) / 255.0 for v in token[1:-1].split(",")]
            except ValueError:
                raise ConfigError(f"colors={text}: {token} is not {{r,g,b}}") from None
            if len(rgb) != 3 or not all(0.0 <= v <= 1.0 for v in rgb):
                raise ConfigError(f"colors={text}: {token} needs three values from 0 to 255")
            colors.append((rgb[0], rgb[1], rgb[2]))
        else:
            name = token.lower()
            if name not in COLOR_NAMES:
                raise ConfigError(f"colors={text}: unknown colour {token!r}; use {', '.join(COLOR_NAMES)}")
            colors.append(COLOR_NAMES[name])
    if not colors:
        return None
    return [colors[i % len(colors)] for i in range(num_props)]


# --------------------------------------------------------------------------------------------------


def planning_options(config: PatternConfig) -> dict:
    """``plan_pattern`` keywords that the configuration sets (the rest keep ProcAnim's defaults)."""
    options: dict = {}
    if config.bps is not None:
        options["beat_duration"] = 1.0 / config.bps
    if config.dwell is not None:
        options["dwell_ratio"] = config.dwell
    if config.gravity is not None:
        options["gravity"] = config.gravity / 100.0
    if config.bouncefrac is not None:
        options["bounce_frac"] = config.bouncefrac
    if config.squeezebeats is not None:
        options["squeeze_beats"] = config.squeezebeats
    if config.prop is not None:
        options["prop_type"] = PROP_TYPES[config.prop.lower()]
    if config.propdiam is not None and options.get("prop_type", "ball") == "ball":
        options["prop_size"] = min(10.0, max(0.1, config.propdiam / _BALL_DIAMETER_CM))
    if config.hands is not None:
        options["dwell_paths"] = hands_to_dwell_paths(config.hands)
    return options


def plan_config(config: PatternConfig | str, *, defaults: dict | None = None, **overrides) -> Pattern:
    """Animate a Juggling Lab configuration. ``defaults`` are ``plan_pattern`` keywords the
    configuration's own keys win over (the sidebar's settings); ``overrides`` win over both (e.g. a
    frame rate)."""
    if isinstance(config, str):
        config = parse_config(config)
    options = dict(defaults or {})
    options.update(planning_options(config))
    options.update(overrides)
    pattern = plan_pattern(config.siteswap(), **options)
    if config.colors is not None:
        pattern.prop_colors = parse_colors(config.colors, pattern.num_props)
    pattern.title = config.title or config.pattern
    if config.body is not None:
        pattern.body_positions = parse_body(config.body)
        pattern = _walk(pattern, pattern.body_positions)
        if config.colors is not None:
            pattern.prop_colors = parse_colors(config.colors, pattern.num_props)
        pattern.title = config.title or config.pattern
    return pattern


def _walk(pattern: Pattern, body: list) -> Pattern:
    """The pattern with its jugglers moved by Juggling Lab's ``body=``: every throw and catch keeps
    its place in the juggler's own frame, the juggler stands and turns where ``body=`` says (beat by
    beat, several positions in a beat spread over it), and the flights are solved again between the
    moved hands. Clubs become balls (the layout is Juggling Lab's, which has no clubs)."""
    from . import jml

    # The walk repeats after its own number of beats: lay out whole loops until both line up.
    walk_beats = 1
    for beats in body:
        walk_beats = walk_beats * len(beats) // math.gcd(walk_beats, len(beats))
    loops = walk_beats // math.gcd(walk_beats, pattern.loop_beats)
    spec = jml.load(jml.dump(pattern, loops=loops))[0].pattern
    assert spec is not None
    positions = []
    tau = pattern.beat_duration
    for j in range(pattern.num_jugglers):
        beats = body[j % len(body)]
        for beat in range(pattern.loop_beats * loops):
            entry = beats[beat % len(beats)]
            for index, place in enumerate(entry):
                if place is None:
                    continue
                angle, x, y, z = place
                t = (beat + index / len(entry)) * tau
                positions.append(jml.JmlPosition(x=x, y=y, z=z, t=t, angle=angle, juggler=j + 1, line=0))
    if not positions:
        return pattern
    walked = jml.layout(replaced(spec, positions=tuple(positions)), body=pattern.body)
    # Still the same pattern and beat, over as many of its loops as the walk needs.
    walked.siteswap = pattern.siteswap
    walked.beat_duration = pattern.beat_duration
    walked.loop_beats = pattern.loop_beats * loops
    walked.dwell_ratio = pattern.dwell_ratio
    walked.auto_beat = pattern.auto_beat
    walked.acceleration_warning = pattern.acceleration_warning
    return walked


def config_status(text: str) -> tuple[bool, str]:
    """``(valid, summary or error)`` of a configuration string for the sidebar; never raises."""
    try:
        config = parse_config(text)
        siteswap = config.siteswap()
    except ProcAnimError as error:
        return False, str(error)
    except Exception as error:  # noqa: BLE001 - the panel's live feedback must never break drawing
        return False, f"cannot read the pattern: {error}"
    props = f"{siteswap.num_props} prop{'s' if siteswap.num_props != 1 else ''}"
    jugglers = f"{siteswap.num_jugglers} juggler{'s' if siteswap.num_jugglers != 1 else ''}"
    return True, f"{props}, period {siteswap.period}, {jugglers}"
