"""Juggling Lab's hand siteswaps (``hss=``): an object siteswap says when each prop is thrown again,
a hand siteswap says when each hand throws again; together they spread one beat stream over any
number of hands, and the hands over jugglers.

A hand that throws on beat ``b`` throws next on beat ``b + hss[b]``; a prop thrown on beat ``b`` is
thrown next on beat ``b + oss[b]`` by whichever hand throws then. Hands are numbered in the order of
their first throw and given to jugglers two at a time (right hand first), unless ``handspec`` says
otherwise: ``(1,2)(3,4)`` puts hands 1 and 2 on juggler 1 (right, left), 3 and 4 on juggler 2.
A prop whose next throw is by the same hand after exactly that hand's own next throw stays held.
"""

from __future__ import annotations

import math
import re

from .model import LEFT, RIGHT, Siteswap, Throw
from .notation import SiteswapError

_MAX_BEATS = 20_000
_VALUES = "0123456789abcdefghijklmnopqrstuvwxyz"


def _values(text: str, what: str) -> list[int]:
    values = []
    for char in text.replace(" ", "").lower():
        if char not in _VALUES:
            raise SiteswapError(
                f'{what}="{text}": only plain async throws (0-9, a-z) are allowed, not "{char}"'
            )
        values.append(_VALUES.index(char))
    if not values:
        raise SiteswapError(f"{what} is empty")
    if sum(values) % len(values):
        raise SiteswapError(f'{what}="{text}": the average is not a whole number')
    landings = {(i + v) % len(values) for i, v in enumerate(values)}
    if len(landings) != len(values):
        raise SiteswapError(f'{what}="{text}": not a valid siteswap (two throws land on one beat)')
    return values


def _handspec(text: str | None, hands: int) -> list[tuple[int, int]]:
    """(juggler, hand side) of each hand (0-based)."""
    if not text:
        return [(h // 2, RIGHT if h % 2 == 0 else LEFT) for h in range(hands)]
    groups = re.findall(r"\(([^()]*)\)", text)
    if not groups or re.sub(r"\([^()]*\)", "", text).strip():
        raise SiteswapError(f'handspec="{text}" must be groups like (1,2)(3,4)')
    out: dict[int, tuple[int, int]] = {}
    for juggler, group in enumerate(groups):
        members = [m.strip() for m in group.split(",") if m.strip()]
        if not 1 <= len(members) <= 2:
            raise SiteswapError(f'handspec="{text}": a juggler has one or two hands')
        for side, member in zip((RIGHT, LEFT), members, strict=False):
            if not member.isdigit() or not 1 <= int(member) <= hands or int(member) - 1 in out:
                raise SiteswapError(f'handspec="{text}": "{member}" is not a hand from 1 to {hands} once')
            out[int(member) - 1] = (juggler, side)
    if len(out) != hands:
        raise SiteswapError(f'handspec="{text}" must place all {hands} hands')
    return [out[h] for h in range(hands)]


def hand_siteswap(oss_text: str, hss_text: str, handspec: str | None = None) -> Siteswap:
    """The :class:`~.model.Siteswap` of an object siteswap spread over hands by a hand siteswap."""
    oss = _values(oss_text, "pattern")
    hss = _values(hss_text, "hss")
    if 0 in hss:
        raise SiteswapError(f'hss="{hss_text}": a hand siteswap has no 0 (every beat has a throwing hand)')
    hands = sum(hss) // len(hss)
    base = len(oss) * len(hss) // math.gcd(len(oss), len(hss))
    # Hand of each beat: walk forward, a hand that throws on b throws again on b + hss[b].
    most_periods = 2 * hands + 2
    span = base * (2 * most_periods + 1) + max(hss) + max(oss)
    if span > _MAX_BEATS:
        raise SiteswapError(f'"{oss_text}" with hss "{hss_text}" is longer than {_MAX_BEATS} beats')
    owner: dict[int, int] = {}
    count = 0
    for beat in range(span):
        if beat not in owner:
            owner[beat] = count
            count += 1
        owner.setdefault(beat + hss[beat % len(hss)], owner[beat])
    if count != hands:
        raise SiteswapError(f'hss="{hss_text}" gives {count} hands, its average says {hands}')
    # The hand assignment repeats after some whole number of base periods.
    cycle = None
    for periods in range(1, most_periods + 1):
        length = base * periods
        if all(owner[b] == owner[b + length] for b in range(length)):
            cycle = length
            break
    if cycle is None:
        raise SiteswapError(f'hss="{hss_text}": the hands never repeat')
    places = _handspec(handspec, hands)
    throws = []
    for beat in range(cycle):
        value = oss[beat % len(oss)]
        if value == 0:
            continue
        juggler, side = places[owner[beat]]
        to_juggler, to_side = places[owner[beat + value]]
        held = owner[beat + value] == owner[beat] and value == hss[beat % len(hss)]
        throws.append(
            Throw(
                beat=beat,
                juggler=juggler,
                hand=side,
                value=value,
                to_juggler=to_juggler,
                to_hand=to_side,
                is_pass=to_juggler != juggler,
                crossing=to_side != side,
                hold=held,
            )
        )
    return Siteswap(
        text=f"{oss_text} (hss {hss_text})",
        throws=tuple(throws),
        period=base,
        cycle_beats=cycle,
        num_props=sum(oss) // len(oss),
        num_jugglers=max(j for j, _ in places) + 1,
        sync=False,
    )
