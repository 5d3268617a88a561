"""Siteswap notation: Juggling Lab's grammar, with gunswap's modifiers and ``P`` passes.

``parse_siteswap(text)`` turns a siteswap into a :class:`~.model.Siteswap` covering one full cycle of
throws, or raises :class:`SiteswapError` naming what is wrong and where.

Conventions (Juggling Lab's, which wins wherever the two tools disagree):

* Beats are counted from 0. An asynchronous throw takes one beat; the right hand throws on beat 0 and
  the hands alternate on every beat, so the hand that throws follows the beat's parity unless an
  ``L`` / ``R`` hand specifier says otherwise. A synchronous pair ``(left,right)`` takes two beats
  (both hands throw on the first), or one with a trailing ``!``.
* A throw of value ``n`` lands ``n`` beats later, in the same hand when ``n`` is even and in the other
  hand when it is odd; ``x`` swaps that. A pass (``p``, ``pN``, or gunswap's ``P`` / ``PN`` inside
  ``<...|...>``) lands in the partner's hand the same rule names. Jugglers are numbered from 1 in the
  text; targets above the juggler count wrap round as Juggling Lab does.
* ``*`` repeats the pattern with the hands exchanged; ``(...^n)`` repeats a part ``n`` times.
* Modifiers: ``H`` holds, ``T`` / ``A`` (or any other letter) throws a value that would be held,
  ``B`` bounces (``BB`` twice; ``L`` / ``F`` / ``HL`` / ``HF`` types; gunswap's ``B{...}``), ``F``
  alone is one forced bounce, ``S{spins[,x,y,z]}`` sets club spins and axis, ``D{dwell}`` the dwell
  in beats, ``C{C|P}`` / ``T{C|P}`` claw or penguin catch / throw.
* A 1 or 2 that lands back in the same hand is held unless a modifier says otherwise; a 2 is thrown
  when the same hand also throws on the next beat, as Juggling Lab resolves it.

``Throw.crossing`` is True when the prop lands in the other hand (of whichever juggler catches it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache

from ..errors import ProcAnimError
from .model import LEFT, RIGHT, Bounce, Siteswap, Throw

__all__ = ["SiteswapError", "parse_siteswap", "summarize", "siteswap_status", "MAX_BEATS"]

#: Expanded beats one cycle may have; guards ``(...^n)`` against runaway repeats.
MAX_BEATS = 20_000

#: Pass target of a ``p`` / ``P`` with no number.
NEXT_JUGGLER = -1
_WHITESPACE = " \t\r\n"
_VALUE_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_BOUNCE_KINDS = {"L": "lift", "F": "force", "HL": "hyperlift", "HF": "hyperforce"}
_STYLES = {"C": "claw", "P": "penguin"}


class SiteswapError(ProcAnimError, ValueError):
    """A siteswap that cannot be read or cannot be juggled; the message says what and where."""


# --------------------------------------------------------------------------------------------------
# Syntax tree


@dataclass
class _ThrowSpec:
    value: int
    column: int
    crossing: bool = False
    #: None: not a pass; NEXT_JUGGLER: the next juggler; N >= 1: juggler N as written (wrapped later).
    pass_target: int | None = None
    hold_modifier: str | None = None  # "H" hold, "T" throw (T, A or any other modifier letter)
    bounce: Bounce | None = None
    spins: float | None = None
    spin_axis: tuple[float, float, float] | None = None
    dwell: float | None = None
    catch_style: str = "normal"
    throw_style: str = "normal"
    has_modifier: bool = False


@dataclass
class _AsyncBeat:
    throws: list[_ThrowSpec]
    column: int


@dataclass
class _SyncBeat:
    left: list[_ThrowSpec]
    right: list[_ThrowSpec]
    short: bool  # "!": the pair takes one beat instead of two
    column: int


@dataclass
class _HandSpec:
    hand: int
    column: int


@dataclass
class _Repeat:
    items: list
    count: int
    column: int
    #: ``(...*^n)``: each repetition is the part and then its copy with the hands exchanged.
    mirror: bool = False


@dataclass
class _MirrorMark:
    """Marks a ``(part*^n)`` repetition: ``copy=False`` where the part starts (its hands are noted),
    ``copy=True`` where its mirror starts (each juggler starts with the other hand than the part did)."""

    key: int
    copy: bool


@dataclass
class _Passing:
    sequences: list[list]  # one list of _AsyncBeat / _SyncBeat / _HandSpec per juggler
    column: int


# --------------------------------------------------------------------------------------------------
# Parser


class _Parser:
    """Recursive descent over the raw text, so every error can name its character position."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        #: Jugglers in the passing group being read (whether a digit after gunswap's P is a target).
        self.group_jugglers = 1

    # -- helpers -----------------------------------------------------------------------------------
    def fail(self, message: str, position: int | None = None) -> SiteswapError:
        where = self.pos if position is None else position
        return SiteswapError(f'"{self.text}": {message} at position {where}')

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def skip_space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in _WHITESPACE:
            self.pos += 1

    def unexpected(self) -> SiteswapError:
        if self.pos >= len(self.text):
            return self.fail("unexpected end of text")
        return self.fail(f'unexpected "{self.text[self.pos]}"')

    def expect(self, char: str) -> None:
        self.skip_space()
        if self.peek() != char:
            found = f'"{self.peek()}"' if self.peek() else "the end of the text"
            raise self.fail(f'expected "{char}" but found {found}')
        self.pos += 1

    # -- grammar -----------------------------------------------------------------------------------
    def parse(self) -> tuple[list, bool]:
        items = self.sequence(top_level=True)
        self.skip_space()
        mirror = False
        if self.peek() == "*":
            mirror = True
            self.pos += 1
            self.skip_space()
        if self.pos < len(self.text):
            if self.peek() == "*":
                raise self.fail('"*" may appear only once, at the end')
            raise self.unexpected()
        return items, mirror

    def sequence(self, top_level: bool = False, in_passing: bool = False) -> list:
        """Beats, hand specifiers, repeats and passing groups until a closing token."""
        items: list = []
        while True:
            self.skip_space()
            char = self.peek()
            if char == "" or char in ")^|>*":
                return items
            if char == "<":
                if in_passing:
                    raise self.fail('"<" inside a passing group')
                items.append(self.passing())
            elif char == "(":
                items.append(self.parenthesised(in_passing))
            elif char in "LR":
                items.append(_HandSpec(LEFT if char == "L" else RIGHT, self.pos))
                self.pos += 1
            elif char == "[" or self.starts_value(char):
                column = self.pos
                items.append(_AsyncBeat(self.multiplex(in_passing), column))
            elif char == "?":
                raise self.fail('the wildcard "?" is not supported')
            elif char == "!":
                raise self.fail('"!" may follow only a synchronous pair')
            else:
                raise self.unexpected()

    @staticmethod
    def starts_value(char: str) -> bool:
        return len(char) == 1 and (char.isdigit() and char.isascii() or char in _VALUE_LETTERS or char == "{")

    def parenthesised(self, in_passing: bool):
        """``(a,b)`` synchronous pair or ``(pattern^n)`` repeat: decided by what follows the first part."""
        column = self.pos
        if self.is_repeat_group(column):
            self.pos += 1
            items = self.sequence(in_passing=in_passing)
            self.skip_space()
            mirror = self.peek() == "*"
            if mirror:
                # Juggling Lab: (pattern*^n) repeats the part followed by its hands-swapped copy.
                self.pos += 1
                self.skip_space()
            if self.peek() != "^":
                raise self.unexpected()
            self.pos += 1
            self.skip_space()
            count_column = self.pos
            digits = self.digits()
            if not digits:
                raise self.fail('expected a repeat count after "^"')
            count = int(digits)
            if not 1 <= count <= MAX_BEATS:
                raise self.fail(f"a repeat count must be from 1 to {MAX_BEATS}", count_column)
            self.expect(")")
            if not items:
                raise self.fail("empty repeat", column)
            return _Repeat(items, count, column, mirror)
        self.pos += 1
        left = self.multiplex(in_passing)
        self.expect(",")
        right = self.multiplex(in_passing)
        self.expect(")")
        after_pair = self.pos
        self.skip_space()
        short = self.peek() == "!"
        self.pos = after_pair
        if short:
            self.pos = self.text.index("!", after_pair) + 1
        return _SyncBeat(left, right, short, column)

    def is_repeat_group(self, start: int) -> bool:
        """True when the parenthesis at ``start`` closes a ``^n`` repeat rather than a pair."""
        depth = 0
        for index in range(start, len(self.text)):
            char = self.text[index]
            if char in "([{<":
                depth += 1
            elif char in ")]}>":
                depth -= 1
                if depth == 0:
                    return False
            elif depth == 1 and char == "^":
                return True
            elif depth == 1 and char == ",":
                return False
        return False

    def passing(self) -> _Passing:
        column = self.pos
        self.group_jugglers = self.count_group_jugglers(column)
        self.pos += 1
        sequences = []
        while True:
            self.skip_space()
            sequence = self.sequence(in_passing=True)
            # A group may only assign starting hands (<R|L> before the pattern), but not be empty.
            if not sequence:
                raise self.fail(f"juggler {len(sequences) + 1} has nothing in the passing group")
            sequences.append(sequence)
            self.skip_space()
            char = self.peek()
            if char == "|":
                self.pos += 1
                continue
            if char == ">":
                self.pos += 1
                return _Passing(sequences, column)
            if char == "":
                raise self.fail('expected ">" but found the end of the text')
            raise self.unexpected()

    def count_group_jugglers(self, start: int) -> int:
        bars = 0
        depth = 0
        for char in self.text[start + 1 :]:
            if char in "([{":
                depth += 1
            elif char in ")]}":
                depth -= 1
            elif char == "|" and depth == 0:
                bars += 1
            elif char == ">":
                break
        return bars + 1

    def multiplex(self, in_passing: bool) -> list[_ThrowSpec]:
        self.skip_space()
        if self.peek() != "[":
            if not self.starts_value(self.peek()):
                raise self.unexpected()
            return [self.single(in_passing)]
        column = self.pos
        self.pos += 1
        throws = []
        while True:
            self.skip_space()
            char = self.peek()
            if char == "]":
                self.pos += 1
                break
            if not self.starts_value(char):
                if char == "":
                    raise self.fail('expected "]" but found the end of the text')
                raise self.unexpected()
            throws.append(self.single(in_passing))
        if not throws:
            raise self.fail("empty multiplex []", column)
        return throws

    def digits(self) -> str:
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos].isascii() and self.text[self.pos].isdigit():
            self.pos += 1
        return self.text[start : self.pos]

    def value(self) -> int:
        char = self.peek()
        if char == "{":
            self.pos += 1
            self.skip_space()
            digits = self.digits()
            if not digits:
                raise self.fail("expected a whole number inside { }")
            self.expect("}")
            return int(digits)
        self.pos += 1
        if char.isdigit():
            return int(char)
        return 10 + _VALUE_LETTERS.index(char)

    def single(self, in_passing: bool) -> _ThrowSpec:
        """``value [x] [p[N]] [modifiers] [/]``; suffixes must touch the value (a spaced ``x`` is 33)."""
        column = self.pos
        spec = _ThrowSpec(value=self.value(), column=column)
        if self.peek() == "x":
            spec.crossing = True
            self.pos += 1
        if in_passing and self.peek() == "p":
            self.pos += 1
            target_column = self.pos
            digits = self.digits()
            spec.pass_target = self.pass_target(digits, target_column)
        self.modifiers(spec, in_passing)
        if self.peek() == "/":
            self.pos += 1
        if spec.value == 0:
            if spec.crossing:
                raise self.fail('a 0 cannot cross ("0x")', column)
            if spec.pass_target is not None:
                raise self.fail("a 0 cannot be passed", column)
            if spec.has_modifier:
                raise self.fail("a 0 cannot take a modifier", column)
        return spec

    def modifiers(self, spec: _ThrowSpec, in_passing: bool) -> None:
        """Juggling Lab's uppercase run (``L`` / ``R`` only after another letter) plus gunswap's braces."""
        bounce_count = 0
        bounce_kind: str | None = None
        hyper = False
        started = False
        while True:
            char = self.peek()
            if not (char.isascii() and char.isupper()) or (not started and char in "LR"):
                break
            letter_column = self.pos
            self.pos += 1
            started = True
            spec.has_modifier = True
            braced = self.peek() == "{"
            if char == "B":
                if braced:
                    count, kind = self.bounce_braces()
                    bounce_count += count
                    bounce_kind = kind or bounce_kind
                else:
                    bounce_count += 1
            elif char == "H" and bounce_count and self.peek() in ("L", "F"):
                hyper = True
            elif char in "LF" and (bounce_count or char == "F"):
                if char == "F" and not bounce_count:
                    bounce_count = 1  # Juggling Lab's legacy lone F: one forced bounce
                bounce_kind = _BOUNCE_KINDS[("H" if hyper else "") + char]
                hyper = False
            elif char == "H":
                self.set_hold(spec, "H", letter_column)
            elif char == "T" and braced:
                spec.throw_style = self.style_braces("T")
            elif char == "C" and braced:
                spec.catch_style = self.style_braces("C")
            elif char == "S" and braced:
                spec.spins, spec.spin_axis = self.spin_braces()
            elif char == "D" and braced:
                spec.dwell = self.dwell_braces()
            elif char == "P" and in_passing:
                if spec.pass_target is not None:
                    raise self.fail("a throw can be passed only once", letter_column)
                # gunswap's P takes one digit, and its 2014-19 versions none with two jugglers
                # ("<3P333|3P333>" is 3P 3 3 3): a digit is the target only if such a juggler exists.
                after = self.peek()
                is_target = after != "" and after in "123456789" and int(after) <= self.group_jugglers
                digit = after if is_target else ""
                spec.pass_target = self.pass_target(digit, self.pos)
                self.pos += len(digit)
            elif char in "LR":
                pass  # part of a Juggling Lab modifier with no meaning of its own
            else:
                # T, A and any other letter: Juggling Lab throws (does not hold) the value.
                if braced:
                    raise self.fail(f'"{char}" takes no {{...}}', letter_column)
                self.set_hold(spec, "T", letter_column)
        if bounce_count:
            spec.bounce = Bounce(count=bounce_count, kind=bounce_kind or "lift")
            if spec.hold_modifier == "H":
                raise self.fail("a held throw cannot bounce", spec.column)
            spec.hold_modifier = "T"

    def pass_target(self, digits: str, column: int) -> int:
        if not digits:
            return NEXT_JUGGLER
        if int(digits) == 0:
            raise self.fail("jugglers are numbered from 1", column)
        return int(digits)

    def set_hold(self, spec: _ThrowSpec, modifier: str, column: int) -> None:
        if spec.hold_modifier is not None and spec.hold_modifier != modifier:
            raise self.fail("a throw cannot be both held (H) and thrown", column)
        spec.hold_modifier = modifier

    def brace_content(self) -> tuple[str, int]:
        start = self.pos + 1
        end = self.text.find("}", start)
        if end < 0:
            raise self.fail('expected "}" but found the end of the text', len(self.text))
        self.pos = end + 1
        return self.text[start:end], start

    def number(self, token: str, column: int, what: str) -> float:
        token = token.strip()
        try:
            number = float(token)
        except ValueError:
            raise self.fail(f'{what} "{token}" is not a number', column) from None
        if not math.isfinite(number):
            raise self.fail(f"{what} must be a finite number", column)
        return number

    def bounce_braces(self) -> tuple[int, str | None]:
        """gunswap's ``B{[count][L|HL|F|HF][count]}``; digits after the count name surfaces (floor only)."""
        content, column = self.brace_content()
        body = content.replace(" ", "")
        count: int | None = None
        kind = None
        index = 0
        while index < len(body):
            char = body[index]
            if char.isdigit():
                if count is None:
                    count = int(char)
                index += 1
            elif body.startswith(("HL", "HF"), index) and kind is None:
                kind = _BOUNCE_KINDS[body[index : index + 2]]
                index += 2
            elif char in "LF" and kind is None:
                kind = _BOUNCE_KINDS[char]
                index += 1
            else:
                raise self.fail(f'unexpected "{char}" in bounce B{{{content}}}', column + content.find(char))
        if count == 0:
            raise self.fail("a bounce needs at least 1 bounce", column)
        return count or 1, kind

    def style_braces(self, letter: str) -> str:
        content, column = self.brace_content()
        style = _STYLES.get(content.strip())
        if style is None:
            what = "throw" if letter == "T" else "catch"
            allowed = f"{letter}{{C}} or {letter}{{P}}"
            raise self.fail(f"{what} style {letter}{{{content}}} must be {allowed}", column)
        return style

    def spin_braces(self) -> tuple[float, tuple[float, float, float] | None]:
        content, column = self.brace_content()
        parts = content.split(",")
        if len(parts) not in (1, 4):
            raise self.fail(f"S{{{content}}} takes spins or spins,x,y,z", column)
        spins = self.number(parts[0], column, "spins")
        if spins < 0.0:
            raise self.fail("spins must be 0 or more", column)
        if len(parts) == 1:
            return spins, None
        axis = tuple(self.number(part, column, "spin axis") for part in parts[1:])
        length = math.sqrt(sum(component * component for component in axis))
        if length == 0.0:
            raise self.fail("the spin axis cannot be zero", column)
        return spins, (axis[0] / length, axis[1] / length, axis[2] / length)

    def dwell_braces(self) -> float:
        content, column = self.brace_content()
        dwell = self.number(content, column, "dwell")
        if dwell <= 0.0:
            raise self.fail(f"dwell D{{{content}}} must be greater than 0", column)
        return dwell


# --------------------------------------------------------------------------------------------------
# Expansion into beats


@dataclass(frozen=True)
class _Event:
    beat: int
    juggler: int
    hand: int
    spec: _ThrowSpec


def _count_beats(items: list, text: str) -> int:
    """Beats the items take, computed before expanding so that huge repeats fail fast."""
    beats = 0
    for item in items:
        if isinstance(item, _AsyncBeat):
            beats += 1
        elif isinstance(item, _SyncBeat):
            beats += 1 if item.short else 2
        elif isinstance(item, _Repeat):
            beats += item.count * (2 if item.mirror else 1) * _count_beats(item.items, text)
        elif isinstance(item, _Passing):
            beats += _count_beats(item.sequences[0], text)
        if beats > MAX_BEATS:
            raise SiteswapError(f'"{text}": the pattern is longer than {MAX_BEATS} beats')
    return beats


def _flatten(items: list) -> list:
    flat: list = []
    for item in items:
        if isinstance(item, _Repeat):
            inner = _flatten(item.items)
            for _ in range(item.count):
                if item.mirror:
                    key = len(flat)
                    flat += [_MirrorMark(key, False), *inner, _MirrorMark(key, True), *_mirrored(inner)]
                else:
                    flat.extend(inner)
        elif isinstance(item, _Passing):
            flat.append(_Passing([_flatten(seq) for seq in item.sequences], item.column))
        else:
            flat.append(item)
    return flat


def _mirrored(items: list) -> list:
    """The items with left and right exchanged (async hands are set by the _MirrorMark before them)."""
    out: list = []
    for item in items:
        if isinstance(item, _SyncBeat):
            out.append(_SyncBeat(item.right, item.left, item.short, item.column))
        elif isinstance(item, _HandSpec):
            out.append(_HandSpec(1 - item.hand, item.column))
        elif isinstance(item, _Passing):
            out.append(_Passing([_mirrored(seq) for seq in item.sequences], item.column))
        else:
            out.append(item)
    return out


def _juggler_count(items: list, text: str) -> int:
    count = None
    first_column = 0
    for item in items:
        if isinstance(item, _Passing):
            if count is None:
                count, first_column = len(item.sequences), item.column
            elif len(item.sequences) != count:
                raise SiteswapError(
                    f'"{text}": the passing group at position {item.column} has {len(item.sequences)} '
                    f"jugglers, but the one at position {first_column} has {count}"
                )
    return count or 1


class _Expander:
    """Walks the flat items once, giving every throw its beat, juggler and hand.

    The hand that throws an asynchronous beat alternates on every beat (a synchronous pair takes two
    beats, one with ``!``), so it follows the beat's parity; a hand specifier resets it. Juggling Lab
    computes hands once, from beat 0, and repeats the result with the period.
    """

    def __init__(self, items: list, jugglers: int, text: str) -> None:
        self.items = items
        self.jugglers = jugglers
        self.text = text
        #: Juggling Lab's "vanilla async": no sync pair, no ``x``, no hand specifier after beat 0.
        self.vanilla = True
        #: Hands each juggler started a ``(part*^n)`` with, by (mark key, juggler).
        self.mirror_hands: dict[tuple[int, int], int] = {}

    def run(self) -> tuple[list[_Event], int]:
        hands = [RIGHT] * self.jugglers
        events: list[_Event] = []
        beat = 0
        for item in self.items:
            if isinstance(item, _Passing):
                beat = self.passing(item, hands, events, beat)
            else:
                beat = self.step(item, range(self.jugglers), hands, events, beat)
        return events, beat

    def step(self, item, jugglers, hands: list[int], events: list[_Event], beat: int) -> int:
        if isinstance(item, _HandSpec):
            if beat > 0:
                self.vanilla = False
            for juggler in jugglers:
                hands[juggler] = item.hand
            return beat
        if isinstance(item, _MirrorMark):
            self.vanilla = False
            for juggler in jugglers:
                if item.copy:
                    hands[juggler] = 1 - self.mirror_hands[(item.key, juggler)]
                else:
                    self.mirror_hands[(item.key, juggler)] = hands[juggler]
            return beat
        if isinstance(item, _AsyncBeat):
            if any(spec.crossing for spec in item.throws):
                self.vanilla = False
            for juggler in jugglers:
                events.extend(_Event(beat, juggler, hands[juggler], spec) for spec in item.throws)
                hands[juggler] = 1 - hands[juggler]
            return beat + 1
        self.vanilla = False
        for juggler in jugglers:
            events.extend(_Event(beat, juggler, LEFT, spec) for spec in item.left)
            events.extend(_Event(beat, juggler, RIGHT, spec) for spec in item.right)
        length = 1 if item.short else 2
        if length % 2:
            for juggler in jugglers:
                hands[juggler] = 1 - hands[juggler]
        return beat + length

    def passing(self, group: _Passing, hands: list[int], events: list[_Event], beat: int) -> int:
        lengths = []
        for juggler, sequence in enumerate(group.sequences):
            cursor = beat
            for item in sequence:
                cursor = self.step(item, (juggler,), hands, events, cursor)
            lengths.append(cursor - beat)
        for juggler, length in enumerate(lengths):
            if length != lengths[0]:
                raise SiteswapError(
                    f'"{self.text}": in the passing group at position {group.column}, juggler {juggler + 1} '
                    f"has {length} beat{'s' if length != 1 else ''} but juggler 1 has {lengths[0]}"
                )
        return beat + lengths[0]


def _switched_repeat(events: list[_Event], offset: int) -> list[_Event]:
    """The same throws ``offset`` beats later with the hands exchanged (Juggling Lab's switchrepeat)."""
    return [_Event(e.beat + offset, e.juggler, 1 - e.hand, e.spec) for e in events]


# --------------------------------------------------------------------------------------------------
# Validity and resolution


def _hand_phrase(juggler: int, hand: int, jugglers: int) -> str:
    name = "left" if hand == LEFT else "right"
    return f"the {name} hand" if jugglers == 1 else f"juggler {juggler + 1}'s {name} hand"


def _join(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _format_number(number: float) -> str:
    return f"{number:.2f}".rstrip("0").rstrip(".")


def _landing_error(text: str, throws: list[Throw], cycle: int, jugglers: int) -> SiteswapError | None:
    """The slot test: for every (juggler, hand, beat) the props landing equal the props thrown."""
    thrown: dict[tuple[int, int, int], int] = {}
    landing: dict[tuple[int, int, int], list[Throw]] = {}
    for throw in throws:
        source = (throw.juggler, throw.hand, throw.beat)
        thrown[source] = thrown.get(source, 0) + 1
        slot = (throw.to_juggler, throw.to_hand, (throw.beat + throw.value) % cycle)
        landing.setdefault(slot, []).append(throw)
    excess = [slot for slot, arrivals in landing.items() if len(arrivals) > thrown.get(slot, 0)]
    if not excess:
        return None
    # Report the collision the reader meets first: the one whose earliest throw comes first.
    slot = min(excess, key=lambda s: (min(t.beat for t in landing[s]), s[2], s[0], s[1]))
    arrivals = sorted(landing[slot], key=lambda t: (t.beat, t.juggler, t.hand))
    count = len(arrivals)
    juggler, hand, beat = slot
    if jugglers == 1 or all(t.juggler == arrivals[0].juggler for t in arrivals):
        beats = _join([str(t.beat) for t in arrivals])
        prefix = "" if jugglers == 1 else f"by juggler {arrivals[0].juggler + 1} "
        source = f"throw {prefix}at beat {beats}" if count == 1 else f"throws {prefix}at beats {beats}"
    else:
        source = "throws " + _join([f"by juggler {t.juggler + 1} at beat {t.beat}" for t in arrivals])
    message = (
        f'"{text}": {count} prop{"s" if count != 1 else ""} land{"s" if count == 1 else ""} in '
        f"{_hand_phrase(juggler, hand, jugglers)} on beat {beat} ({source})"
    )
    made = thrown.get(slot, 0)
    if made == 0:
        message += ", but it throws nothing on that beat"
    elif made != 1:
        message += f", but it throws {made} on that beat"
    return SiteswapError(message)


def parse_siteswap(text: str) -> Siteswap:
    """Parse and validate ``text``; the result covers ``cycle_beats`` beats of non-zero throws.

    Raises :class:`SiteswapError` for a syntax error (with the character position), for an average
    that is not a whole number, or for a beat where more props land in a hand than it throws.
    """
    if not isinstance(text, str):
        raise SiteswapError(f"a siteswap must be text, not {type(text).__name__}")
    if not text.strip():
        raise SiteswapError("the siteswap is empty")
    parser = _Parser(text)
    items, mirror = parser.parse()
    period_as_written = _count_beats(items, text)
    if mirror and period_as_written * 2 > MAX_BEATS:
        raise SiteswapError(f'"{text}": the pattern is longer than {MAX_BEATS} beats')
    items = _flatten(items)
    jugglers = _juggler_count(items, text)
    expander = _Expander(items, jugglers, text)

    events, period = expander.run()
    if period == 0:
        raise SiteswapError(f'"{text}": the pattern has no throws')
    if mirror:
        events += _switched_repeat(events, period)
        period *= 2
    cycle = period
    if not mirror and expander.vanilla and period % 2:
        # An odd vanilla pattern swaps hands every time round: one cycle is two repetitions.
        events += _switched_repeat(events, period)
        cycle = 2 * period

    total = sum(event.spec.value for event in events) * period // cycle
    if total % period:
        raise SiteswapError(
            f'"{text}": average of throws {_format_number(total / period)} is not a whole number of props'
        )

    throws = [_make_throw(event, jugglers) for event in events if event.spec.value > 0]
    throws.sort(key=lambda t: (t.beat, t.juggler, t.hand))
    error = _landing_error(text, throws, cycle, jugglers)
    if error is not None:
        raise error
    forced = {event.spec.column for event in events if event.spec.hold_modifier == "T"}
    throws = _apply_holds(text, throws, cycle, forced)
    return Siteswap(
        text=text,
        throws=tuple(throws),
        period=period,
        cycle_beats=cycle,
        num_props=total // period,
        num_jugglers=jugglers,
        sync=any(isinstance(item, _SyncBeat) for item in _all_items(items)),
    )


def _all_items(items: list):
    for item in items:
        if isinstance(item, _Passing):
            for sequence in item.sequences:
                yield from sequence
        else:
            yield item


def _make_throw(event: _Event, jugglers: int) -> Throw:
    spec = event.spec
    if spec.pass_target is None:
        to_juggler = event.juggler
    elif spec.pass_target == NEXT_JUGGLER:
        to_juggler = (event.juggler + 1) % jugglers
    else:
        to_juggler = (spec.pass_target - 1) % jugglers  # Juggling Lab wraps targets past the count
    lands_same_side = (spec.value % 2 == 0) != spec.crossing
    to_hand = event.hand if lands_same_side else 1 - event.hand
    return Throw(
        beat=event.beat,
        juggler=event.juggler,
        hand=event.hand,
        value=spec.value,
        to_juggler=to_juggler,
        to_hand=to_hand,
        is_pass=to_juggler != event.juggler,
        crossing=to_hand != event.hand,
        hold=spec.hold_modifier == "H",
        bounce=spec.bounce,
        spins=spec.spins,
        spin_axis=spec.spin_axis,
        dwell=spec.dwell,
        catch_style=spec.catch_style,
        throw_style=spec.throw_style,
        column=spec.column,
    )


def _apply_holds(text: str, throws: list[Throw], cycle: int, forced_columns: set[int]) -> list[Throw]:
    """Juggling Lab's rule: a 1 or 2 back into the same hand is held, unless that hand throws next beat.

    ``forced_columns`` are the throws a modifier (``T``, ``A``, ``B``, ...) says to throw.
    """
    busy = {(t.juggler, t.hand, t.beat) for t in throws}
    resolved = []
    for throw in throws:
        same_hand = throw.to_juggler == throw.juggler and throw.to_hand == throw.hand
        if throw.hold:
            if not same_hand:
                raise SiteswapError(
                    f'"{text}": the {throw.value} at position {throw.column} is held (H) but lands in '
                    "another hand"
                )
            resolved.append(throw)
            continue
        hold = False
        if same_hand and throw.value <= 2 and throw.column not in forced_columns:
            hold = throw.value == 1 or (throw.juggler, throw.hand, (throw.beat + 1) % cycle) not in busy
        resolved.append(replace(throw, hold=True) if hold else throw)
    return resolved


def summarize(text: str) -> str:
    """One line for the panel: ``"3 props, period 3, 1 juggler"`` or the error message; never raises."""
    return siteswap_status(text)[1]


def siteswap_status(text: str) -> tuple[bool, str]:
    """``(valid, summary or error message)``; never raises.

    Answers are cached, because the panel asks again on every redraw.
    """
    if not isinstance(text, str):
        return False, f"a siteswap must be text, not {type(text).__name__}"
    return _status_of_text(text)


@lru_cache(maxsize=256)
def _status_of_text(text: str) -> tuple[bool, str]:
    if "=" in text:  # Juggling Lab's key=value parameters: pattern=531;bps=4
        from .parameters import config_status

        return config_status(text)
    try:
        siteswap = parse_siteswap(text)
    except SiteswapError as error:
        return False, str(error)
    except Exception as error:  # noqa: BLE001 - the panel's live feedback must never break drawing
        return False, f"cannot read the siteswap: {error}"
    props = f"{siteswap.num_props} prop{'s' if siteswap.num_props != 1 else ''}"
    jugglers = f"{siteswap.num_jugglers} juggler{'s' if siteswap.num_jugglers != 1 else ''}"
    return True, f"{props}, period {siteswap.period}, {jugglers}"
