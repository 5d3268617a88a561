"""Measuring a heap of poured bodies: its surface profile and slope, against the angle of repose its
friction implies.

The slope is the least-squares slope of the heap's surface profile: the top of the highest body in each
ring one body wide around the heap's axis (the median of the bodies' centres), from the axis out to the
outermost ring that holds a body. The angle of repose a friction coefficient implies is taken as
``arctan(mu_static)``: a block on a slope starts to slide at ``tan(theta) = mu`` (Coulomb), the first
estimate for a heap's flank (its "apparent friction" is ``tan`` of its angle of repose; grains that
interlock or roll less stand steeper).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .errors import SimulationError


def repose_angle(static_friction: float) -> float:
    """The angle of repose (degrees) a static friction coefficient implies: ``arctan(mu_s)``."""
    if not static_friction >= 0:
        raise SimulationError(f"friction must be >= 0, got {static_friction}")
    return math.degrees(math.atan(static_friction))


def heap_profile(
    centres: ArrayLike, tops: ArrayLike, ring_width: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(radii, heights)``: the middle radius of every ring of ``ring_width`` around the heap's axis
    that holds a body, and the top of the highest body in it. ``centres`` ``(N, 3)``: the bodies'
    centres; ``tops`` ``(N,)``: their highest points."""
    c = np.asarray(centres, dtype=np.float64).reshape(-1, 3)
    top = np.asarray(tops, dtype=np.float64).reshape(-1)
    if len(c) == 0 or top.shape != (len(c),) or not ring_width > 0:
        raise SimulationError("a heap profile needs bodies (centres and tops) and a ring width > 0")
    axis = np.median(c[:, :2], axis=0)
    ring = np.floor(np.linalg.norm(c[:, :2] - axis, axis=1) / ring_width).astype(np.int64)
    held = np.unique(ring)
    heights = np.array([top[ring == k].max() for k in held])
    return (held + 0.5) * ring_width, heights


def heap_slope(centres: ArrayLike, tops: ArrayLike, ring_width: float) -> float:
    """The heap's slope angle in degrees (see the module docstring); 0 for a single ring."""
    radii, heights = heap_profile(centres, tops, ring_width)
    if len(radii) < 2:
        return 0.0
    gradient = np.polyfit(radii, heights, 1)[0]
    return math.degrees(math.atan(max(-gradient, 0.0)))
