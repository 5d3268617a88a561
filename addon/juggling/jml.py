"""Juggling Lab's JML files in and out.

``load(path_or_text) -> list[JmlEntry]``: a ``.jml`` file (version 3, and the 1.x / 2.x files Juggling
Lab still reads) with one ``<pattern>`` or a ``<patternlist>``. Siteswap lines go through the
notation (their text is a Juggling Lab parameter string); full JML patterns (props, setup,
symmetries, events with throws, catches and holds, juggler positions) are laid out here by an event
front end on ProcAnim's flight, bounce and spline back end. ``entry.plan(**options)`` gives a
:class:`~.motion.Pattern`.

``dump(pattern) -> str``: one loop of a planned pattern as a JML pattern Juggling Lab can open.

The XML is read with the standard library's expat with the care of defusedxml: the DOCTYPE's
external DTD is never fetched, and entity declarations (the "billion laughs" family) are refused.
Every error names the line and the element.

Frames: JML events are centimetres in the juggler's own frame (x to the juggler's right, y forward,
z up) with ``y = 0`` Juggling Lab's juggling plane, ``PATTERN_Y`` (30 cm) in front of the juggler's
position; a ``<position>`` is the juggler's place (cm, ``z`` = the hands' base height, 100 by
default) and ``angle`` (degrees) turns the juggler's x axis from the world's. Blender's world is
Juggling Lab's turned half a turn about z (x and y negated, so that a juggler at angle 0 faces the
front camera, as in Juggling Lab's view); a position angle ``a`` is ProcAnim yaw ``a``.
"""

from __future__ import annotations

import math
import os
import xml.parsers.expat
from dataclasses import dataclass, field, replace
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

import numpy as np

from ..errors import ProcAnimError
from .body import Body, juggler_placement
from .hand_planner import HandEvent, plan_hand_path
from .model import LEFT, RIGHT, Siteswap
from .motion import (
    _MAX_DIP,
    _REACH_MARGIN,
    _REACH_TOLERANCE,
    MAX_HAND_ACCELERATION,
    PROP_LENGTHS,
    Flight,
    Pattern,
    _acceleration_warning,
    _make_track,
    _reach_warning,
    between_events,
)
from .parameters import PatternConfig, parse_config, plan_config
from .paths import GRAVITY, Ballistic, MotionError, PeriodicSpline, parabola, solve_bounce
from .timing import BOUNCE_FRAC_DEFAULT, neighbour_spacing

__all__ = ["JmlEntry", "JmlError", "JmlPattern", "dump", "load", "PATTERN_Y"]

#: Juggling Lab's juggling plane, in front of the juggler's position (``Juggler.PATTERN_Y``, cm).
PATTERN_Y = 30.0
#: The hands' base height above the floor when a file gives no ``<position>`` z (cm).
POSITION_Z = 100.0
_VERSIONS = ("1", "1.0", "1.1", "1.2", "1.3", "2", "2.0", "3", "3.0")
_MAX_BYTES = 20_000_000
_MAX_EVENTS = 200_000
#: Catches give way along the incoming prop at half its speed, at most this fast (as the planner).
_CATCH_FOLLOW = 0.5
_MAX_CATCH_SPEED = 1.5
_SAME_TIME = 1e-7


class JmlError(ProcAnimError, ValueError):
    """A JML file that cannot be read or laid out; the message names the line and the element."""


# --------------------------------------------------------------------------------------------------
# Safe XML


@dataclass
class _Node:
    tag: str
    attrib: dict[str, str]
    line: int
    children: list[_Node] = field(default_factory=list)
    text: str = ""

    def where(self) -> str:
        return f"line {self.line}, <{self.tag}>"

    def fail(self, message: str) -> JmlError:
        return JmlError(f"{self.where()}: {message}")

    def find(self, tag: str) -> _Node | None:
        return next((c for c in self.children if c.tag == tag), None)

    def all(self, tag: str) -> list[_Node]:
        return [c for c in self.children if c.tag == tag]

    def _required(self, name: str, default: object) -> str | None:
        """The attribute's text; None when it is missing and has a default; an error otherwise."""
        raw = self.attrib.get(name)
        if raw is None and default is None:
            raise self.fail(f'missing attribute "{name}"')
        return raw

    def number(self, name: str, default: float | None = None) -> float:
        raw = self._required(name, default)
        if raw is None:
            return default
        try:
            value = float(raw)
        except ValueError:
            raise self.fail(f'{name}="{raw}" is not a number') from None
        if not math.isfinite(value):
            raise self.fail(f'{name}="{raw}" is not a finite number')
        return value

    def integer(self, name: str, default: int | None = None) -> int:
        raw = self._required(name, default)
        if raw is None:
            return default
        try:
            return int(raw.strip())
        except ValueError:
            raise self.fail(f'{name}="{raw}" is not a whole number') from None

    def xml(self, indent: str = "") -> str:
        attributes = "".join(f" {k}={quoteattr(v)}" for k, v in self.attrib.items())
        if not self.children and not self.text.strip():
            return f"{indent}<{self.tag}{attributes}/>"
        if not self.children:
            return f"{indent}<{self.tag}{attributes}>{escape(self.text.strip())}</{self.tag}>"
        inner = "\n".join(child.xml(indent + "  ") for child in self.children)
        return f"{indent}<{self.tag}{attributes}>\n{inner}\n{indent}</{self.tag}>"


def _parse_xml(text: str) -> _Node:
    parser = xml.parsers.expat.ParserCreate()
    stack: list[_Node] = []
    root: list[_Node] = []

    def refuse_entities(name, *args) -> None:
        raise JmlError(
            f"line {parser.CurrentLineNumber}: the file declares an entity ({name}); JML needs none"
        )

    def start(tag: str, attrib: dict[str, str]) -> None:
        node = _Node(tag, dict(attrib), parser.CurrentLineNumber)
        if stack:
            stack[-1].children.append(node)
        elif root:
            raise JmlError(f"line {node.line}: a second top-level element <{tag}>")
        else:
            root.append(node)
        stack.append(node)

    def end(tag: str) -> None:
        stack.pop()

    def characters(data: str) -> None:
        if stack:
            stack[-1].text += data

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = characters
    parser.EntityDeclHandler = refuse_entities
    parser.UnparsedEntityDeclHandler = refuse_entities
    # Never fetch the DOCTYPE's external DTD (file://jml.dtd) or any external entity.
    parser.SetParamEntityParsing(xml.parsers.expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.ExternalEntityRefHandler = lambda *args: 1
    try:
        parser.Parse(text, True)
    except xml.parsers.expat.ExpatError as error:
        raise JmlError(
            f"line {error.lineno}: not well-formed XML ({xml.parsers.expat.errors.messages[error.code]})"
        ) from None
    if not root:
        raise JmlError("line 1: the file has no elements")
    return root[0]


# --------------------------------------------------------------------------------------------------
# The JML model


@dataclass(frozen=True)
class JmlTransition:
    kind: str  # "throw", "catch", "holding"
    path: int  # 1-based
    type: str  # throw: toss | bounce | hold; catch: natural | soft | grab
    mod: str
    line: int


@dataclass(frozen=True)
class JmlEvent:
    x: float
    y: float
    z: float
    t: float
    juggler: int  # 1-based
    hand: int  # LEFT / RIGHT
    transitions: tuple[JmlTransition, ...]
    line: int


@dataclass(frozen=True)
class JmlPosition:
    x: float
    y: float
    z: float
    t: float
    angle: float
    juggler: int
    line: int


@dataclass(frozen=True)
class JmlSymmetry:
    type: str  # delay | switch | switchdelay
    #: juggler (1-based) -> (juggler, hands switched)
    jperm: dict[int, tuple[int, bool]]
    #: path (1-based) -> path
    pperm: dict[int, int]
    delay: float
    line: int


@dataclass(frozen=True)
class JmlPattern:
    """One full JML pattern as written in the file."""

    title: str
    props: tuple[tuple[str, str], ...]  # (type, mod)
    jugglers: int
    paths: int
    prop_of_path: tuple[int, ...]  # 1-based prop index per path
    symmetries: tuple[JmlSymmetry, ...]
    events: tuple[JmlEvent, ...]
    positions: tuple[JmlPosition, ...]
    basepattern: str | None
    line: int

    def plan(self, **options) -> Pattern:
        return layout(self, **options)


@dataclass(frozen=True)
class JmlEntry:
    """One playable line of a file: a siteswap configuration or a full pattern."""

    title: str
    config: PatternConfig | None = None
    pattern: JmlPattern | None = None
    #: The pattern list header this line sits under, if any.
    section: str | None = None
    line: int = 0
    #: The line's own XML (a <jml> document of just this pattern), for storing in a scene.
    source: str = ""

    @property
    def kind(self) -> str:
        return "siteswap" if self.config is not None else "jml"

    def plan(self, *, defaults: dict | None = None, **options) -> Pattern:
        """The entry's pattern. ``defaults`` (``plan_pattern`` keywords) fill in what a siteswap line
        leaves out; a full JML pattern takes only ``frame_rate``, ``body`` and the hand acceleration
        bound (``max_hand_acceleration``, also from ``defaults``)."""
        if self.config is not None:
            return plan_config(self.config, defaults=defaults, **options)
        assert self.pattern is not None
        if defaults and "max_hand_acceleration" in defaults:
            options.setdefault("max_hand_acceleration", defaults["max_hand_acceleration"])
        return self.pattern.plan(**options)


def _read_path_or_text(path_or_text: str | os.PathLike) -> str:
    if isinstance(path_or_text, os.PathLike) or (
        isinstance(path_or_text, str) and not path_or_text.lstrip("\ufeff \t\r\n").startswith("<")
    ):
        path = Path(path_or_text)
        try:
            if path.stat().st_size > _MAX_BYTES:
                raise JmlError(f"{path}: larger than {_MAX_BYTES // 1_000_000} MB, not a JML file")
            data = path.read_bytes()
        except OSError as error:
            raise JmlError(f"cannot read {path}: {error.strerror or error}") from None
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError:
            return data.decode("latin-1")
    if not isinstance(path_or_text, str):
        raise JmlError(f"expected a path or JML text, got {type(path_or_text).__name__}")
    return path_or_text


def load(path_or_text: str | os.PathLike) -> list[JmlEntry]:
    """Every playable entry of a JML file (a path) or JML text; raises :class:`JmlError` with the
    line and element of the first problem, before anything is laid out."""
    root = _parse_xml(_read_path_or_text(path_or_text))
    if root.tag != "jml":
        raise root.fail("the top element must be <jml>")
    version = root.attrib.get("version", "1").strip()
    if version not in _VERSIONS:
        raise root.fail(f'version="{version}" is not a JML version Juggling Lab writes (1, 2 or 3)')
    body = [c for c in root.children]
    if len(body) != 1 or body[0].tag not in ("pattern", "patternlist"):
        raise root.fail("must hold exactly one <pattern> or <patternlist>")
    if body[0].tag == "pattern":
        pattern = _read_pattern(body[0])
        return [JmlEntry(pattern.title, pattern=pattern, line=body[0].line, source=_source(body[0]))]
    return _read_list(body[0])


def _source(node: _Node, title: str = "") -> str:
    """A JML document of just this pattern (keeping a pattern list line's name as its title)."""
    if title and node.find("title") is None:
        node = _Node(
            node.tag, node.attrib, node.line, [_Node("title", {}, node.line, [], title), *node.children]
        )
    return f'<?xml version="1.0"?>\n<jml version="3">\n{node.xml("")}\n</jml>\n'


def _read_list(node: _Node) -> list[JmlEntry]:
    entries = []
    section = None
    for child in node.children:
        if child.tag in ("title", "info"):
            continue
        if child.tag != "line":
            raise child.fail("a <patternlist> holds <title>, <info> and <line> only")
        display = child.attrib.get("display")
        if display is None:
            raise child.fail('missing attribute "display"')
        display = display.strip()
        inner = child.find("pattern")
        notation = child.attrib.get("notation")
        if inner is not None:
            pattern = _read_pattern(inner, default_title=display)
            entries.append(
                JmlEntry(
                    display or pattern.title,
                    pattern=pattern,
                    section=section,
                    line=child.line,
                    source=_source(inner, display),
                )
            )
        elif notation is not None:
            if notation.strip().lower() != "siteswap":
                raise child.fail(f'notation="{notation}" is not one ProcAnim reads (siteswap)')
            text = child.text.strip()
            if not text:
                raise child.fail("a siteswap line with no pattern text")
            try:
                config = parse_config(text)
            except ProcAnimError as error:
                raise child.fail(str(error)) from None
            entries.append(
                JmlEntry(
                    display or config.pattern, config=config, section=section, line=child.line, source=text
                )
            )
        else:
            section = display or None  # a header line
    return entries


def _read_pattern(node: _Node, default_title: str = "") -> JmlPattern:
    order = [c.tag for c in node.children]
    known = {"title", "info", "basepattern", "prop", "setup", "symmetry", "event", "position"}
    for child in node.children:
        if child.tag not in known:
            raise child.fail("not an element of a JML <pattern>")
    title_node = node.find("title")
    title = (title_node.text.strip() if title_node is not None else "") or default_title or "JML pattern"
    base = node.find("basepattern")
    setup = node.find("setup")
    if setup is None:
        raise node.fail("missing <setup> (jugglers, paths)")
    jugglers = setup.integer("jugglers", 1)
    paths = setup.integer("paths")
    if not 1 <= jugglers <= 100:
        raise setup.fail(f"jugglers={jugglers}: must be from 1 to 100")
    if not 0 <= paths <= 1000:
        raise setup.fail(f"paths={paths}: must be from 0 to 1000")
    props = tuple(
        (p.attrib.get("type", "ball").strip().lower(), p.attrib.get("mod", "")) for p in node.all("prop")
    )
    for prop_node, (kind, _) in zip(node.all("prop"), props, strict=True):
        if kind not in ("ball", "image", "ring", "square"):
            raise prop_node.fail(f'type="{kind}": JML props are ball, image, ring or square')
    if not props:
        props = (("ball", ""),)
    raw = setup.attrib.get("props")
    if raw is None:
        prop_of_path = tuple([1] * paths)
    else:
        try:
            prop_of_path = tuple(int(v) for v in raw.split(",")) if raw.strip() else ()
        except ValueError:
            raise setup.fail(f'props="{raw}" must be prop numbers separated by commas') from None
        if len(prop_of_path) != paths or not all(1 <= p <= len(props) for p in prop_of_path):
            raise setup.fail(
                f'props="{raw}" must name one of the {len(props)} prop(s) for each of {paths} paths'
            )
    symmetries = tuple(_read_symmetry(s, jugglers, paths) for s in node.all("symmetry"))
    delays = [s for s in symmetries if s.type == "delay"]
    if len(delays) != 1:
        raise node.fail(f"needs exactly one delay symmetry (the loop), found {len(delays)}")
    events = tuple(_read_event(e, jugglers, paths) for e in node.all("event"))
    if len(events) > _MAX_EVENTS:
        raise node.fail(f"more than {_MAX_EVENTS} events")
    positions = tuple(_read_position(p, jugglers) for p in node.all("position"))
    if "setup" in order and "symmetry" in order and order.index("symmetry") < order.index("setup"):
        raise node.all("symmetry")[0].fail("<symmetry> must come after <setup>")
    return JmlPattern(
        title=title,
        props=props,
        jugglers=jugglers,
        paths=paths,
        prop_of_path=prop_of_path,
        symmetries=symmetries,
        events=events,
        positions=positions,
        basepattern=base.text.strip() if base is not None else None,
        line=node.line,
    )


def _cycles(node: _Node, name: str, text: str, size: int, signed: bool) -> dict[int, tuple[int, bool]]:
    mapping: dict[int, tuple[int, bool]] = {}
    stripped = text.replace(" ", "")
    if not stripped:
        return {i: (i, False) for i in range(1, size + 1)}
    if not (stripped.startswith("(") and stripped.endswith(")")):
        raise node.fail(f'{name}="{text}" must be cycles like (1,2)(3)')
    for cycle_text in stripped[1:-1].split(")("):
        items = []
        for token in cycle_text.split(","):
            star = token.endswith("*")
            token = token.rstrip("*")
            if star and not signed:
                raise node.fail(f'{name}="{text}": "*" only switches hands in jperm')
            try:
                number = int(token)
            except ValueError:
                raise node.fail(f'{name}="{text}": "{token}" is not a number') from None
            if not 1 <= number <= size:
                raise node.fail(f'{name}="{text}": {number} is not from 1 to {size}')
            items.append((number, star))
        # (a, b*, c): a -> b with hands switched relative to a, b -> c, c -> a.
        for k, (number, star) in enumerate(items):
            target, target_star = items[(k + 1) % len(items)]
            switched = target_star != star if len(items) > 1 else star
            if number in mapping and mapping[number] != (target, switched):
                raise node.fail(f'{name}="{text}": {number} appears twice')
            mapping[number] = (target, switched)
    for number in range(1, size + 1):
        mapping.setdefault(number, (number, False))
    if sorted(t for t, _ in mapping.values()) != list(range(1, size + 1)):
        raise node.fail(f'{name}="{text}" is not a permutation of 1..{size}')
    return mapping


def _read_symmetry(node: _Node, jugglers: int, paths: int) -> JmlSymmetry:
    kind = node.attrib.get("type", "").strip().lower()
    if kind not in ("delay", "switch", "switchdelay"):
        raise node.fail(f'type="{kind}" must be delay, switch or switchdelay')
    if "pperm" not in node.attrib:
        raise node.fail('missing attribute "pperm"')
    pperm = {k: v for k, (v, _) in _cycles(node, "pperm", node.attrib["pperm"], paths, False).items()}
    jperm = _cycles(node, "jperm", node.attrib.get("jperm", ""), jugglers, True)
    delay = 0.0
    if kind == "delay":
        delay = node.number("delay")
        if not delay > 0:
            raise node.fail(f"delay={delay:g} must be positive (seconds)")
    elif kind == "switchdelay" and all(not switched for _, switched in jperm.values()):
        raise node.fail("a switchdelay symmetry needs a jperm that switches hands, e.g. (1,1*)")
    return JmlSymmetry(kind, jperm, pperm, delay, node.line)


def _read_hand(node: _Node, jugglers: int) -> tuple[int, int]:
    raw = node.attrib.get("hand")
    if raw is None:
        raise node.fail('missing attribute "hand"')
    juggler_text, colon, side = raw.strip().lower().partition(":")
    if not colon:
        juggler_text, side = "1", juggler_text
    try:
        juggler = int(juggler_text)
    except ValueError:
        raise node.fail(f'hand="{raw}": the juggler must be a number, as in 1:right') from None
    if not 1 <= juggler <= jugglers:
        raise node.fail(f'hand="{raw}": juggler {juggler} but <setup> has {jugglers}')
    if side not in ("left", "right"):
        raise node.fail(f'hand="{raw}" must be left or right, as in 1:right')
    return juggler, LEFT if side == "left" else RIGHT


def _read_event(node: _Node, jugglers: int, paths: int) -> JmlEvent:
    juggler, hand = _read_hand(node, jugglers)
    transitions = []
    for child in node.children:
        kind = {"throw": "throw", "catch": "catch", "softcatch": "catch", "holding": "holding"}.get(child.tag)
        if kind is None:
            raise child.fail("an <event> holds <throw>, <catch>, <softcatch> and <holding> only")
        path = child.integer("path")
        if not 1 <= path <= paths:
            raise child.fail(f"path={path} but <setup> has {paths} paths")
        default = {"throw": "toss", "catch": "natural", "holding": ""}[kind]
        kind_type = child.attrib.get("type", "soft" if child.tag == "softcatch" else default).strip().lower()
        if kind == "throw" and kind_type not in ("toss", "bounce", "hold"):
            raise child.fail(f'type="{kind_type}": a throw is a toss, bounce or hold')
        transitions.append(JmlTransition(kind, path, kind_type, child.attrib.get("mod", ""), child.line))
    return JmlEvent(
        x=node.number("x"),
        y=node.number("y", 0.0),
        z=node.number("z", 0.0),
        t=node.number("t"),
        juggler=juggler,
        hand=hand,
        transitions=tuple(transitions),
        line=node.line,
    )


def _read_position(node: _Node, jugglers: int) -> JmlPosition:
    juggler = node.integer("juggler", 1)
    if not 1 <= juggler <= jugglers:
        raise node.fail(f"juggler={juggler} but <setup> has {jugglers}")
    return JmlPosition(
        x=node.number("x"),
        y=node.number("y"),
        z=node.number("z", POSITION_Z),
        t=node.number("t"),
        angle=node.number("angle", 0.0),
        juggler=juggler,
        line=node.line,
    )


# --------------------------------------------------------------------------------------------------
# Layout: events and symmetries -> a Pattern


@dataclass
class _Image:
    t: float
    juggler: int  # 0-based
    hand: int
    x: float
    y: float
    z: float
    transitions: list[tuple[JmlTransition, int]]  # (transition, 0-based path of this image)
    line: int


def _compose(first: dict[int, int], then: dict[int, int]) -> dict[int, int]:
    return {k: then[v] for k, v in first.items()}


def _power(perm: dict[int, int], n: int) -> dict[int, int]:
    out = {k: k for k in perm}
    for _ in range(n):
        out = _compose(out, perm)
    return out


def _order(perm: dict[int, int]) -> int:
    order, seen = 1, set()
    for start in perm:
        if start in seen:
            continue
        length, k = 0, start
        while k not in seen:
            seen.add(k)
            k = perm[k]
            length += 1
        order = order * length // math.gcd(order, length)
    return order


def _jperm_order(jperm: dict[int, tuple[int, bool]]) -> int:
    n = 1
    state = {j: (j, False) for j in jperm}
    while True:
        state = {j: (jperm[t][0], s != jperm[t][1]) for j, (t, s) in state.items()}
        if all(state[j] == (j, False) for j in state):
            return n
        n += 1
        if n > 10_000:
            return n


def _images(spec: JmlPattern) -> tuple[list[_Image], float, float]:
    """Every event image over the full period (the loop times the loop permutation's order), as
    Juggling Lab's EventImages: switch / switchdelay images within a loop, delays between loops."""
    delay = next(s for s in spec.symmetries if s.type == "delay")
    others = [s for s in spec.symmetries if s.type != "delay"]
    loop = delay.delay
    identity = {p: p for p in range(1, spec.paths + 1)}
    inverse_delay = {v: k for k, v in delay.pperm.items()}
    entries = 1
    for sym in others:
        if sym.type == "switchdelay":
            order = _jperm_order(sym.jperm)
            entries = entries * order // math.gcd(entries, order)
    steps = [0 if s.type == "switch" else entries // _jperm_order(s.jperm) for s in others]
    loops = _order(delay.pperm) if spec.paths else 1
    period = loops * loop
    images: list[_Image] = []
    for event in spec.events:
        table: dict[tuple[int, int, int], dict[int, int]] = {(event.juggler - 1, event.hand, 0): identity}
        changed = True
        while changed:
            changed = False
            for sym, step in zip(others, steps, strict=True):
                for (j, h, entry), perm in list(table.items()):
                    target, switched = sym.jperm[j + 1]
                    new_key = (target - 1, 1 - h if switched else h, entry + step)
                    new_perm = _compose(perm, sym.pperm)
                    if new_key[2] >= entries:
                        new_key = (new_key[0], new_key[1], new_key[2] - entries)
                        new_perm = _compose(new_perm, inverse_delay)
                    if new_key in table:
                        if table[new_key] != new_perm:
                            raise JmlError(
                                f"line {sym.line}, <symmetry>: the symmetries disagree for the event "
                                f"on line {event.line}"
                            )
                    else:
                        table[new_key] = new_perm
                        changed = True
        for (j, h, entry), perm in table.items():
            for n in range(loops):
                full = _compose(perm, _power(delay.pperm, n))
                images.append(
                    _Image(
                        t=event.t + n * loop + entry * loop / entries,
                        juggler=j,
                        hand=h,
                        x=event.x if h == event.hand else -event.x,
                        y=event.y,
                        z=event.z,
                        transitions=[(tr, full[tr.path] - 1) for tr in event.transitions],
                        line=event.line,
                    )
                )
    return images, loop, period


def _placements(spec: JmlPattern, loop: float) -> tuple[np.ndarray, np.ndarray, list]:
    """Juggler origins (m, feet on the floor), ProcAnim yaws, and per juggler None or periodic
    splines of where it stands and faces when its ``<position>``s move it (over one loop)."""
    origins, yaws = juggler_placement(spec.jugglers, neighbour_spacing(spec.jugglers))
    moving: list = [None] * spec.jugglers
    for j in range(1, spec.jugglers + 1):
        mine = sorted((p for p in spec.positions if p.juggler == j), key=lambda p: p.t % loop)
        if not mine:
            continue
        first = mine[0]
        # A juggler whose hands are higher than Juggling Lab's 100 cm stands that much higher.
        origins[j - 1] = (-first.x / 100, -first.y / 100, (first.z - POSITION_Z) / 100)
        yaws[j - 1] = math.radians(first.angle)
        keys = {}
        for p in mine:
            keys.setdefault(round(p.t % loop, 9), p)
        if len(keys) < 2 or all(
            (p.x, p.y, p.z, p.angle % 360) == (first.x, first.y, first.z, first.angle % 360) for p in mine
        ):
            continue
        times = np.array(sorted(keys))
        rows = [keys[t] for t in sorted(keys)]
        places = np.array([(-p.x / 100, -p.y / 100, (p.z - POSITION_Z) / 100) for p in rows])
        turns = [math.radians(rows[0].angle)]
        for p in rows[1:]:
            step = (math.radians(p.angle) - turns[-1] + math.pi) % (2 * math.pi) - math.pi
            turns.append(turns[-1] + step)
        angles = np.zeros((len(rows), 3))
        angles[:, 0] = turns
        moving[j - 1] = (_periodic(times, places, loop), _periodic(times, angles, loop))
    return origins, yaws, moving


def _periodic(times: np.ndarray, values: np.ndarray, period: float) -> PeriodicSpline:
    """A smooth closed curve through ``values`` at ``times`` (slopes from the neighbours)."""
    before = np.roll(values, 1, axis=0)
    after = np.roll(values, -1, axis=0)
    t_before = np.roll(times, 1) - np.where(np.arange(len(times)) == 0, period, 0.0)
    t_after = np.roll(times, -1) + np.where(np.arange(len(times)) == len(times) - 1, period, 0.0)
    slopes = (after - before) / (t_after - t_before)[:, None]
    return PeriodicSpline(times, values, slopes, period)


def _world(origin: np.ndarray, yaw: float, height: float, x: float, y: float, z: float) -> np.ndarray:
    """A JML juggler-frame point (cm) in Blender metres."""
    angle = yaw - math.pi
    forward = y + PATTERN_Y
    return np.array(
        [
            origin[0] + (x * math.cos(angle) - forward * math.sin(angle)) / 100,
            origin[1] + (x * math.sin(angle) + forward * math.cos(angle)) / 100,
            height + z / 100,
        ]
    )


def _local(origin: np.ndarray, yaw: float, height: float, point: np.ndarray) -> tuple[float, float, float]:
    """The inverse of :func:`_world`: Blender metres to a JML juggler-frame point (cm)."""
    angle = yaw - math.pi
    dx, dy = (point[0] - origin[0]) * 100, (point[1] - origin[1]) * 100
    x = dx * math.cos(angle) + dy * math.sin(angle)
    y = -dx * math.sin(angle) + dy * math.cos(angle) - PATTERN_Y
    return x, y, (point[2] - height) * 100


def _mods(text: str) -> dict[str, str]:
    out = {}
    for part in text.split(";"):
        key, _, value = part.partition("=")
        if key.strip():
            out[key.strip().lower()] = value.strip()
    return out


def _mod_number(tr: JmlTransition, mods: dict[str, str], key: str, default: float) -> float:
    if key not in mods:
        return default
    try:
        value = float(mods[key])
    except ValueError:
        raise JmlError(f"line {tr.line}, <throw>: mod {key}={mods[key]} is not a number") from None
    if not (math.isfinite(value) and value > 0):
        raise JmlError(f"line {tr.line}, <throw>: mod {key}={mods[key]} must be positive")
    return value


def layout(
    spec: JmlPattern,
    *,
    frame_rate: float | None = None,
    body: Body | None = None,
    max_hand_acceleration: float | None = MAX_HAND_ACCELERATION,
    **_ignored,
) -> Pattern:
    """Lay a JML pattern out: every throw leaves and every catch lands where and when the file says.

    ``frame_rate``, if given, scales time slightly so one loop is a whole number of frames. Hands
    follow the bounded planner (:mod:`.hand_planner`) aiming under ``max_hand_acceleration`` (m/s^2;
    None: the C1 Hermite strokes of earlier versions); ``pattern.acceleration_warning`` says where
    they need more.
    """
    if max_hand_acceleration is not None and not (
        math.isfinite(max_hand_acceleration) and max_hand_acceleration > 0
    ):
        raise MotionError(f"the hand acceleration bound must be positive, got {max_hand_acceleration}")
    body = body or Body()
    images, loop, period = _images(spec)
    scale = 1.0
    if frame_rate is not None:
        if not (math.isfinite(frame_rate) and frame_rate > 0):
            raise MotionError(f"frame rate must be positive, got {frame_rate}")
        scale = max(1, round(period * frame_rate)) / (period * frame_rate)
    period *= scale
    origins, yaws, moving = _placements(spec, loop)
    if scale != 1.0:
        moving = [
            None
            if m is None
            else tuple(
                PeriodicSpline(c.times * scale, c.positions, c.velocities / scale, c.period * scale)
                for c in m
            )
            for m in moving
        ]

    def frame(j: int, t: float) -> tuple[np.ndarray, float, float]:
        """Where juggler ``j`` stands (origin), faces (yaw) and holds its hands (height) at ``t``."""
        if moving[j] is None:
            return origins[j], float(yaws[j]), float(origins[j][2]) + POSITION_Z / 100
        place = moving[j][0].sample(np.array([t]))[0][0]
        turn = float(moving[j][1].sample(np.array([t]))[0][0, 0])
        return place, turn, float(place[2]) + POSITION_Z / 100

    hands_count = spec.jugglers * 2

    kind, mod = spec.props[0]
    prop_type = "ring" if kind == "ring" else "ball"
    diam = _mods(mod).get("diam")
    try:
        prop_size = float(diam) / (PROP_LENGTHS["ball"] * 100) if diam else 1.0
    except ValueError:
        raise JmlError(f"line {spec.line}, <prop>: mod diam={diam} is not a number") from None
    prop_size = min(10.0, max(0.1, prop_size))
    radius = PROP_LENGTHS["ball"] * prop_size / 2 if prop_type == "ball" else 0.03 * prop_size

    # Events per hand, within one period.
    per_hand: dict[int, list[_Image]] = {h: [] for h in range(hands_count)}
    for image in images:
        image.t = (image.t * scale) % period
        per_hand[image.juggler * 2 + image.hand].append(image)
    positions: dict[int, np.ndarray] = {}
    for items in per_hand.values():
        items.sort(key=lambda im: im.t)
        for a, b in zip(items, items[1:], strict=False):
            if b.t - a.t < _SAME_TIME:
                raise JmlError(f"line {b.line}, <event>: two events of one hand at t={b.t / scale:g} s")
        for image in items:
            j = image.juggler
            origin, yaw, height = frame(j, image.t)
            positions[id(image)] = _world(origin, yaw, height, image.x, image.y, image.z)

    spacing = max(2 * radius, 0.05 * prop_size) * 1.1

    def slot(image: _Image, path: int) -> np.ndarray:
        thrown = [p for tr, p in image.transitions if tr.kind == "throw" and tr.type != "hold"]
        if len(thrown) < 2 or path not in thrown:
            return np.zeros(3)
        rank = thrown.index(path) - (len(thrown) - 1) / 2
        yaw = float(yaws[image.juggler])
        return rank * spacing * np.array([math.cos(yaw), math.sin(yaw), 0.0])

    # Each path's transitions in time order.
    by_path: dict[int, list[tuple[float, str, _Image, JmlTransition]]] = {p: [] for p in range(spec.paths)}
    for image in images:
        for tr, path in image.transitions:
            by_path[path].append((image.t, tr.kind, image, tr))
    flights: list[Flight] = []
    throw_velocity: dict[int, list[np.ndarray]] = {}
    catch_velocity: dict[int, list[np.ndarray]] = {}
    tracks = []
    for path in range(spec.paths):
        items = sorted(by_path[path], key=lambda item: (item[0], item[1] != "catch"))
        moves = _moves(items)
        if not items:
            raise JmlError(f"line {spec.line}, <pattern>: path {path + 1} is never thrown, caught or held")
        if not moves:
            hold_hand = items[0][2].juggler * 2 + items[0][2].hand
            rows = [
                dict(
                    start=0.0,
                    flight=False,
                    hand=hold_hand,
                    slot=np.zeros(3),
                    q_start=_IDENTITY,
                    q_end=_IDENTITY,
                    end=period,
                )
            ]
            tracks.append(_make_track(rows, period))
            continue
        for a, b in zip(moves, moves[1:] + moves[:1], strict=True):
            if a[1] == b[1]:
                what = "thrown" if a[1] == "throw" else "caught"
                raise JmlError(
                    f"line {b[2].line}, <event>: path {path + 1} is {what} at t={a[0] / scale:g} s and "
                    f"again at t={b[0] / scale:g} s with no {'catch' if a[1] == 'throw' else 'throw'} between"
                )
        # Start the track at a throw.
        first = next(k for k, item in enumerate(moves) if item[1] == "throw")
        moves = moves[first:] + [(t + period, k, im, tr) for t, k, im, tr in moves[:first]]
        rows = []
        for k in range(0, len(moves), 2):
            t0, _, thrower, throw = moves[k]
            t1, _, catcher, _ = moves[k + 1]
            if t1 - t0 <= 0:
                raise JmlError(f"line {catcher.line}, <event>: path {path + 1} is caught when it is thrown")
            next_thrower = moves[(k + 2) % len(moves)][2]
            # Several props thrown together sit side by side, as ProcAnim's planner places them,
            # from the catch on in the slot of their next throw.
            p0 = positions[id(thrower)] + slot(thrower, path)
            p1 = positions[id(catcher)] + slot(next_thrower, path)
            mods = _mods(throw.mod)
            g = _mod_number(throw, mods, "g", GRAVITY * 100) / 100
            if throw.type == "bounce":
                count = int(_mod_number(throw, mods, "bounces", 1))
                forced = mods.get("forced", "false").lower() == "true"
                hyper = mods.get("hyper", "false").lower() == "true"
                kind_name = ("hyper" if hyper else "") + ("force" if forced else "lift")
                frac = _mod_number(throw, mods, "bouncefrac", BOUNCE_FRAC_DEFAULT)
                plane = radius  # Juggling Lab's floor: world z = 0
                try:
                    arcs = solve_bounce(
                        t0,
                        t1,
                        p0,
                        p1,
                        count,
                        kind_name,
                        math.sqrt(min(frac, 1.0)),
                        plane,
                        f"line {throw.line}, <throw> of path {path + 1}",
                        g,
                    )
                except MotionError as error:
                    raise JmlError(str(error)) from None
            else:
                arcs = [parabola(t0, t1, p0, p1, g)]
            for arc in arcs:
                rows.append(
                    dict(
                        start=arc.t0,
                        flight=True,
                        p0=arc.p0,
                        v0=arc.v0,
                        q0=_IDENTITY,
                        axis=np.array([1.0, 0.0, 0.0]),
                        rate=0.0,
                        spin_t0=t0,
                        gravity=arc.gravity,
                    )
                )
            end = moves[k + 2][0] if k + 2 < len(moves) else moves[0][0] + period
            hand_index = catcher.juggler * 2 + catcher.hand
            rows.append(
                dict(
                    start=t1,
                    flight=False,
                    hand=hand_index,
                    slot=slot(next_thrower, path),
                    q_start=_IDENTITY,
                    q_end=_IDENTITY,
                    end=end,
                )
            )
            throw_velocity.setdefault(id(thrower), []).append(arcs[0].v0)
            catch_velocity.setdefault(id(catcher), []).append(arcs[-1].at(t1)[1])
            flights.append(
                Flight(
                    prop=path,
                    throw_time=t0,
                    catch_time=t1,
                    from_juggler=thrower.juggler,
                    from_hand=thrower.hand,
                    to_juggler=catcher.juggler,
                    to_hand=catcher.hand,
                    value=0,
                    is_pass=thrower.juggler != catcher.juggler,
                    multiplex=sum(1 for tr, _ in thrower.transitions if tr.kind == "throw") > 1,
                    bounces=len(arcs) - 1,
                    arcs=tuple(arcs),
                    spin_turns=0.0,
                )
            )
        tracks.append(_make_track(rows, period))

    # Hands: the bounded planner's paths through their events (throws leave at the prop's velocity,
    # catches move along the incoming prop, other events are waypoints); a hand that never throws,
    # or one whose bounded path would leave arm's reach further than the C1 Hermite strokes through
    # the same events, keeps those strokes (other events get the slope of their neighbours there).
    splines: list[PeriodicSpline] = []
    bounded: dict[int, list[HandEvent]] = {}
    for h in range(hands_count):
        items = per_hand[h]
        juggler, side = divmod(h, 2)
        if not items:
            rest = _world(*frame(juggler, 0.0), 25.0 if side == RIGHT else -25.0, 0.0, 0.0)
            splines.append(PeriodicSpline(np.zeros(1), rest[None], np.zeros((1, 3)), period))
            continue
        times = np.array([im.t for im in items])
        points = np.array([positions[id(im)] for im in items])
        velocities = np.zeros_like(points)
        kinds = []
        n = len(items)
        for k, image in enumerate(items):
            if id(image) in throw_velocity:
                velocities[k] = np.mean(throw_velocity[id(image)], axis=0)
                kinds.append("throw")
            elif id(image) in catch_velocity:
                arriving = np.mean(catch_velocity[id(image)], axis=0)
                speed = float(np.linalg.norm(arriving))
                velocities[k] = arriving * (
                    min(_CATCH_FOLLOW, _MAX_CATCH_SPEED / speed) if speed > 0 else 0.0
                )
                kinds.append("catch")
            else:
                kinds.append("key")
                if n > 1:
                    before = (times[k - 1] - (period if k == 0 else 0.0), points[k - 1])
                    after = (times[(k + 1) % n] + (period if k == n - 1 else 0.0), points[(k + 1) % n])
                    velocities[k] = (after[1] - before[1]) / (after[0] - before[0])
        splines.append(PeriodicSpline(*_hand_knots(times, points, velocities, kinds, period), period))
        if max_hand_acceleration is not None and "throw" in kinds:
            catches = {id(im): catch_velocity[id(im)] for im in items if id(im) in catch_velocity}
            conditions = [
                HandEvent(float(t), kind, point, velocity)
                if kind == "throw"
                else HandEvent(float(t), kind, point, np.mean(catches[id(image)], axis=0))
                if kind == "catch"
                else HandEvent(float(t), "point", point)
                for t, kind, point, velocity, image in zip(
                    times, kinds, points, velocities, items, strict=True
                )
            ]
            bounded[h] = conditions

    flights.sort(key=lambda f: (f.throw_time, f.prop))
    loop_beats = max(1, round(period / (loop * scale)))
    siteswap = Siteswap(
        text=spec.title or "JML pattern",
        throws=(),
        period=loop_beats,
        cycle_beats=loop_beats,
        num_props=spec.paths,
        num_jugglers=spec.jugglers,
        sync=False,
    )
    pattern = Pattern(
        siteswap=siteswap,
        beat_duration=period / loop_beats,
        dwell_ratio=0.0,
        loop_beats=loop_beats,
        num_props=spec.paths,
        num_jugglers=spec.jugglers,
        prop_type=prop_type,
        prop_size=prop_size,
        chicken_wing=0.0,
        body=body,
        juggler_origins=origins,
        juggler_yaws=yaws,
        flights=tuple(flights),
        hold_offset=np.zeros(3),
        _hands=splines,
        _tracks=tracks,
        floor_height=0.0,
        title=spec.title or None,
        root_motion=moving if any(m is not None for m in moving) else None,
    )
    pattern.reach_warning = _reach_warning(pattern)
    if bounded and max_hand_acceleration is not None:
        _plan_bounded_hands(pattern, bounded, max_hand_acceleration)
    if max_hand_acceleration is not None:
        pattern.acceleration_warning = _acceleration_warning(pattern, max_hand_acceleration)
    return pattern


_IDENTITY = np.array([1.0, 0.0, 0.0, 0.0])


def _plan_bounded_hands(pattern: Pattern, bounded: dict[int, list[HandEvent]], limit: float) -> None:
    """Replace the Hermite strokes of the hands in ``bounded`` (hand index -> the file's events as
    planner conditions) by the bounded planner's paths, each kept above a reach floor (see below). A
    hand whose bounded path would leave arm's reach further than its Hermite strokes do, or come
    out non-finite, keeps the Hermite strokes."""
    arm = pattern.body.upper_arm + pattern.body.forearm
    # A file has no beat: the planner's grid and jerk window follow the throws (one per beat overall,
    # as in a siteswap), not the loop, which can be one long "beat".
    throws = sum(1 for conditions in bounded.values() for c in conditions if c.kind == "throw")
    beat = pattern.loop_duration / max(1, throws)
    samples = np.linspace(0.0, pattern.loop_duration, max(64, 24 * pattern.loop_beats), endpoint=False)
    shoulders = pattern.shoulder_positions(samples)

    def excess(hand: int) -> float:
        hands = pattern.hand_positions(samples)[hand // 2, hand % 2]
        return float(np.max(np.linalg.norm(hands - shoulders[hand // 2, hand % 2], axis=-1)) - arm)

    for hand, conditions in bounded.items():
        times = np.array([c.time for c in conditions])
        points = np.array([c.position for c in conditions])
        at_events = pattern.shoulder_positions(times)[hand // 2, hand % 2]
        across = np.linalg.norm((points - at_events)[:, :2], axis=-1)
        reach = arm - _REACH_MARGIN
        # A file's events can sit far apart (a hand reaching across, up, out): the floor is the
        # lowest the arm reaches under the most central of them, and never above any event.
        lowest = np.min(at_events[:, 2] - np.sqrt(np.maximum(reach * reach - across * across, 0.0)))
        floor = min(
            max(float(points[:, 2].min()) - _MAX_DIP, float(lowest)), float(points[:, 2].min()) - 0.02
        )
        hermite, before = pattern._hands[hand], excess(hand)
        pattern._hands[hand] = plan_hand_path(conditions, pattern.loop_duration, beat, limit, floor)
        after = excess(hand)
        if not after <= max(before, _REACH_TOLERANCE):  # also a path that came out NaN
            pattern._hands[hand] = hermite
    pattern.reach_warning = _reach_warning(pattern)


def _hand_knots(
    times: np.ndarray, points: np.ndarray, velocities: np.ndarray, kinds: list[str], period: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The file's events plus the knots ProcAnim's planner adds between them: a scoop bottom when a
    hand carries a prop from a catch to a fast throw, and a rest in the middle of a long empty wait,
    so that a hand never loops far outside its events."""
    out_t, out_p, out_v = [], [], []
    n = len(times)
    for k in range(n):
        t_a, p_a, v_a = times[k], points[k], velocities[k]
        t_b = times[(k + 1) % n] + (period if k == n - 1 else 0.0)
        p_b, v_b = points[(k + 1) % n], velocities[(k + 1) % n]
        out_t.append(t_a)
        out_p.append(p_a)
        out_v.append(v_a)
        if n == 1:
            break
        for knot in between_events(kinds[k], kinds[(k + 1) % n], t_a, p_a, v_a, t_b, p_b, v_b):
            out_t.append(knot[0])
            out_p.append(knot[1])
            out_v.append(knot[2])
    order = np.argsort(np.mod(np.array(out_t) - out_t[0], period), kind="stable")
    t = np.array(out_t)[order]
    return t, np.array(out_p)[order], np.array(out_v)[order]


def _moves(items: list) -> list:
    """Throws and catches of one path; a throw of type "hold" and the catch that ends it are not a
    flight (the prop stays in the hand)."""
    moves = []
    skip_catch = False
    for item in items:
        if item[1] == "throw" and item[3].type == "hold":
            skip_catch = True
        elif item[1] == "catch" and skip_catch:
            skip_catch = False
        elif item[1] in ("throw", "catch"):
            moves.append(item)
    return moves


# --------------------------------------------------------------------------------------------------
# Export


def _shifted_flight(flight: Flight, seconds: float) -> Flight:
    if seconds == 0.0:
        return flight
    arcs = tuple(Ballistic(a.t0 + seconds, a.t1 + seconds, a.p0, a.v0, a.gravity) for a in flight.arcs)
    return replace(
        flight, throw_time=flight.throw_time + seconds, catch_time=flight.catch_time + seconds, arcs=arcs
    )


def _number(value: float, digits: int = 4) -> str:
    text = f"{value:.{digits}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def dump(pattern: Pattern, title: str | None = None, loops: int = 1) -> str:
    """``loops`` loops of ``pattern`` as a JML (version 3) pattern: an event for every throw and catch
    (with the props each hand holds), one delay symmetry over them, the jugglers' positions and the
    prop type. Juggling Lab has no clubs: clubs are written as balls and their spins in a comment."""
    one_loop = pattern.loop_duration
    loop = one_loop * loops
    name = title or pattern.title or pattern.siteswap.text
    events: dict[tuple[int, int, int], dict] = {}

    def event_for(time: float, juggler: int, hand: int, point: np.ndarray) -> dict:
        t = time % loop
        if loop - t < 1e-9:
            t = 0.0
        key = (juggler, hand, round(t * 1e7))
        if key not in events:
            origins, yaws = pattern.juggler_frames([t])
            origin = origins[juggler, 0]
            x, y, z = _local(origin, float(yaws[juggler, 0]), float(origin[2]) + POSITION_Z / 100, point)
            events[key] = dict(t=t, juggler=juggler, hand=hand, x=x, y=y, z=z, throws=[], catches=[])
        return events[key]

    def hand_at(time: float, juggler: int, hand: int) -> np.ndarray:
        return pattern.hand_positions([time])[juggler, hand, 0]

    def across(f: Flight) -> float:
        """Where a prop sits across its hand (multiplex props side by side), for the throw order."""
        yaw = float(pattern.juggler_yaws[f.from_juggler])
        offset = f.arcs[0].p0 - hand_at(f.throw_time, f.from_juggler, f.from_hand)
        return float(offset[0] * math.cos(yaw) + offset[1] * math.sin(yaw))

    flights = sorted(
        (
            _shifted_flight(f, r * one_loop)
            for r in range(loops)
            for f in pattern.flights
            if 0.0 <= f.throw_time < one_loop - 1e-9
        ),
        key=across,
    )
    for f in flights:
        start = f.arcs[0]
        throw = event_for(
            f.throw_time, f.from_juggler, f.from_hand, hand_at(f.throw_time, f.from_juggler, f.from_hand)
        )
        mod = []
        kind = "toss"
        if f.bounces:
            kind = "bounce"
            if f.bounces > 1:
                mod.append(f"bounces={f.bounces}")
            if start.v0[2] < 0:
                mod.append("forced=true")
            impact = f.arcs[0].at(f.arcs[0].t1)[1][2]
            frac = (f.arcs[1].v0[2] / impact) ** 2 if impact else BOUNCE_FRAC_DEFAULT
            if abs(frac - BOUNCE_FRAC_DEFAULT) > 1e-6:
                mod.append(f"bouncefrac={_number(frac, 6)}")
        if abs(start.gravity - GRAVITY) > 1e-9:
            mod.append(f"g={_number(start.gravity * 100, 6)}")
        throw["throws"].append((f.prop + 1, kind, ";".join(mod)))
        catch = event_for(
            f.catch_time, f.to_juggler, f.to_hand, hand_at(f.catch_time, f.to_juggler, f.to_hand)
        )
        catch["catches"].append(f.prop + 1)

    # Props each hand holds at each event (caught earlier, not thrown yet).
    held: list[tuple[int, int, float, float]] = []  # (prop, hand index, from, to) within [0, 2 loop)
    for prop in range(pattern.num_props):
        mine = sorted((f for f in flights if f.prop == prop), key=lambda f: f.throw_time)
        for f, nxt in zip(mine, mine[1:] + [None], strict=True):
            next_throw = nxt.throw_time if nxt is not None else (mine[0].throw_time + loop if mine else 0.0)
            held.append((prop, f.to_juggler * 2 + f.to_hand, f.catch_time, next_throw))
    lines = [
        '<?xml version="1.0"?>',
        '<!DOCTYPE jml SYSTEM "file://jml.dtd">',
        '<jml version="3">',
        "<pattern>",
        f"<title>{escape(name)}</title>",
    ]
    if pattern.prop_type == "club":
        turns = sorted({round(f.spin_turns, 3) for f in flights})
        lines.append(
            "<!-- ProcAnim: clubs, written as balls (Juggling Lab has no clubs); spins per throw: "
            f"{', '.join(_number(t, 3) for t in turns)} -->"
        )
    diam = PROP_LENGTHS["ball"] * pattern.prop_size * 100
    jl_type = "ring" if pattern.prop_type == "ring" else "ball"
    lines.append(f'<prop type="{jl_type}" mod="diam={_number(diam, 3)}"/>')
    props = ",".join(["1"] * pattern.num_props)
    lines.append(f'<setup jugglers="{pattern.num_jugglers}" paths="{pattern.num_props}" props="{props}"/>')
    identity = "".join(f"({p})" for p in range(1, pattern.num_props + 1))
    lines.append(f'<symmetry type="delay" pperm="{identity}" delay="{_number(loop, 7)}"/>')
    for j in range(pattern.num_jugglers):
        moving = pattern.root_motion[j] if pattern.root_motion else None
        stamps = moving[0].times if moving is not None else np.zeros(1)
        origins, yaws = pattern.juggler_frames(stamps)
        for k, stamp in enumerate(stamps):
            origin = origins[j, k]
            angle = math.degrees(float(yaws[j, k])) % 360.0
            lines.append(
                f'<position x="{_number(-origin[0] * 100)}" y="{_number(-origin[1] * 100)}" '
                f'z="{_number(POSITION_Z + origin[2] * 100)}" t="{_number(float(stamp), 7)}" '
                f'angle="{_number(angle)}" juggler="{j + 1}"/>'
            )
    for event in sorted(events.values(), key=lambda e: (e["t"], e["juggler"], e["hand"])):
        side = "left" if event["hand"] == LEFT else "right"
        lines.append(
            f'<event x="{_number(event["x"])}" y="{_number(event["y"])}" z="{_number(event["z"])}" '
            f't="{_number(event["t"], 7)}" hand="{event["juggler"] + 1}:{side}">'
        )
        for path, kind, mod in event["throws"]:
            extra = f' mod="{mod}"' if mod else ""
            lines.append(f'  <throw path="{path}" type="{kind}"{extra}/>')
        for path in event["catches"]:
            lines.append(f'  <catch path="{path}"/>')
        moving = {p for p, _, _ in event["throws"]} | set(event["catches"])
        hand_index = event["juggler"] * 2 + event["hand"]
        for prop, hand, start, end in held:
            if prop + 1 in moving or hand != hand_index:
                continue
            for t in (event["t"], event["t"] + loop):
                if start + 1e-9 < t < end - 1e-9:
                    lines.append(f'  <holding path="{prop + 1}"/>')
                    break
        lines.append("</event>")
    lines += ["</pattern>", "</jml>", ""]
    return "\n".join(lines)
