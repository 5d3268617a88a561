"""Juggling Lab's timing defaults: the automatic beat, the squeeze of multiplex catches, the bounce
model and where jugglers stand.

Juggling Lab (``notation/MhnPattern.kt``) picks the beat per pattern instead of a fixed tempo: the
beats per second are the mean, over every throw higher than 2, of a table of comfortable throw
rates indexed by throw height, and never so slow that the highest throw stays in the air over
2.6 s. ProcAnim uses the same rule so that its patterns fly as high as Juggling Lab's.
"""

from __future__ import annotations

import math

from .model import Siteswap

#: Juggling Lab's ``throwspersec``: comfortable beats per second for a pattern of throws of height
#: ``n`` (index = throw value, capped at 9).
THROWS_PER_SECOND = (2.00, 2.00, 2.00, 2.90, 3.40, 4.10, 4.25, 5.00, 5.00, 5.50)
#: Beats per second when no throw is higher than 2.
DEFAULT_BPS = 2.0
#: Longest time the highest throw may spend in the air at the automatic beat (seconds).
SECONDS_AIRTIME_MAX = 2.6
#: Juggling Lab's defaults: dwell beats, share of a bounce's energy kept, stagger of squeeze catches.
DWELL_DEFAULT = 1.3
BOUNCE_FRAC_DEFAULT = 0.9
SQUEEZE_BEATS_DEFAULT = 0.4
#: The floor is this far below the hands' base height (Juggling Lab: 100 cm).
FLOOR_DROP_DEFAULT = 1.0
#: Juggling Lab stands jugglers on a circle of radius max(70, 65 / sin(theta / 2)) cm.
_CIRCLE_MIN_RADIUS = 0.70
_CIRCLE_NEIGHBOUR_HALF = 0.65
#: Juggling Lab's accepted range of beats per second.
BPS_RANGE = (0.05, 200.0)


def auto_beats_per_second(siteswap: Siteswap, dwell_ratio: float = DWELL_DEFAULT) -> float:
    """Juggling Lab's ``calcBps`` for ``siteswap``: mean of ``THROWS_PER_SECOND[min(n, 9)]`` over the
    throws of one cycle with ``n > 2`` (2.0 when there are none), raised to at least
    ``(max throw - dwell) / 2.6`` so the highest throw flies at most 2.6 s."""
    rates = [THROWS_PER_SECOND[min(t.value, 9)] for t in siteswap.throws if t.value > 2]
    bps = sum(rates) / len(rates) if rates else DEFAULT_BPS
    highest = max((t.value for t in siteswap.throws), default=0)
    return max(bps, (highest - dwell_ratio) / SECONDS_AIRTIME_MAX)


def auto_beat_duration(siteswap: Siteswap, dwell_ratio: float = DWELL_DEFAULT) -> float:
    """Seconds per beat at Juggling Lab's automatic tempo."""
    return 1.0 / auto_beats_per_second(siteswap, dwell_ratio)


def rebound_speed_ratio(bounce_frac: float) -> float:
    """Juggling Lab's ``bouncefrac`` is the share of the energy a bounce keeps: speed x sqrt(frac)."""
    return math.sqrt(bounce_frac)


def circle_radius(num_jugglers: int) -> float:
    """Radius (m) of Juggling Lab's juggler circle; two jugglers stand 1.40 m apart."""
    if num_jugglers <= 1:
        return 0.0
    return max(_CIRCLE_MIN_RADIUS, _CIRCLE_NEIGHBOUR_HALF / math.sin(math.pi / num_jugglers))


def neighbour_spacing(num_jugglers: int) -> float:
    """Distance between neighbouring jugglers on Juggling Lab's circle (m)."""
    if num_jugglers <= 1:
        return 2 * _CIRCLE_MIN_RADIUS
    return 2 * circle_radius(num_jugglers) * math.sin(math.pi / num_jugglers)
