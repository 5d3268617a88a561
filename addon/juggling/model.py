"""The parsed form of a siteswap: the contract between the notation parser and the motion planner.

Beats are integers. An asynchronous pattern throws once per beat, alternating hands; a synchronous
pair occupies two beats (both hands throw on the first, nothing on the second) unless followed by
``!``. A throw of value ``n`` made on beat ``b`` is next thrown on beat ``b + n``.
"""

from __future__ import annotations

from dataclasses import dataclass

LEFT = 0
RIGHT = 1
HAND_NAMES = ("left", "right")


@dataclass(frozen=True)
class Bounce:
    """A throw that bounces off the floor before it is caught."""

    count: int = 1
    #: "lift" (thrown up, falls and bounces), "force" (thrown down), "hyperlift", "hyperforce".
    kind: str = "lift"


@dataclass(frozen=True)
class Throw:
    """One prop leaving one hand; multiplex throws are several Throws on the same beat and hand."""

    beat: int
    juggler: int
    hand: int
    value: int
    to_juggler: int
    to_hand: int
    is_pass: bool = False
    crossing: bool = False
    #: A 2 (or 1) that stays in the hand instead of being thrown (Juggling Lab's default for 2, ``H``).
    hold: bool = False
    bounce: Bounce | None = None
    #: Full turns of a club or ring in flight; None means the default floor(value / 2).
    spins: float | None = None
    spin_axis: tuple[float, float, float] | None = None
    #: Dwell of the catch before this throw, in beats; None means the pattern's dwell ratio.
    dwell: float | None = None
    catch_style: str = "normal"  # "normal", "claw", "penguin"
    throw_style: str = "normal"  # "normal", "claw", "penguin"
    #: Character offset of this throw in the source text, for error messages.
    column: int = 0

    @property
    def catch_beat(self) -> int:
        return self.beat + self.value


@dataclass(frozen=True)
class Siteswap:
    """A valid siteswap, expanded to one full cycle of throws."""

    text: str
    #: Every non-zero throw of one cycle, ordered by beat, juggler, hand.
    throws: tuple[Throw, ...]
    #: Beats in one repetition as written (after expanding ``*`` and ``^n``).
    period: int
    #: Beats after which both the throws and the hands that make them repeat (>= period).
    cycle_beats: int
    num_props: int
    num_jugglers: int
    sync: bool
