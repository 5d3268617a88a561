"""Closest points between two 3D line segments (the seed's Segment-Segment Distance post).

The post projects both segments onto the plane normal to cd, solves the point-to-segment problem
there, then alternates two clamped projections. That final alternation is exact for skew segments
but can stop one projection short when the clamped answer lies at an endpoint of ab; the closed form
below (Ericson, "Real-Time Collision Detection" 5.1.9) clamps each parameter correctly in one pass.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .errors import GeometryError

_EPS = 1e-300


def closest_points_on_segments(
    a: ArrayLike, b: ArrayLike, c: ArrayLike, d: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Closest points ``(p, q)``: ``p`` on segment ab, ``q`` on segment cd.

    Inputs are points ``(3,)`` or stacks ``(..., 3)`` that broadcast together. Parallel segments
    (infinitely many answers) get one valid pair; a zero-length segment is treated as a point.
    """
    a, b, c, d = (np.asarray(v, dtype=np.float64) for v in (a, b, c, d))
    if any(v.shape[-1:] != (3,) for v in (a, b, c, d)):
        raise GeometryError("closest_points_on_segments needs 3D points (last axis of length 3)")
    if not all(np.all(np.isfinite(v)) for v in (a, b, c, d)):
        raise GeometryError("closest_points_on_segments got points containing NaN or infinity")
    a, b, c, d = np.broadcast_arrays(a, b, c, d)
    d1 = b - a
    d2 = d - c
    r = a - c
    aa = np.einsum("...i,...i->...", d1, d1)
    ee = np.einsum("...i,...i->...", d2, d2)
    f = np.einsum("...i,...i->...", d2, r)
    cc = np.einsum("...i,...i->...", d1, r)
    bb = np.einsum("...i,...i->...", d1, d2)
    denom = aa * ee - bb * bb
    scale = np.maximum(aa * ee, _EPS)
    ab_point = aa <= _EPS
    cd_point = ee <= _EPS
    with np.errstate(divide="ignore", invalid="ignore"):
        # Non-parallel: s on the infinite lines, clamped. Parallel (denom ~ 0): any s, take 0.
        s = np.where(
            denom > 1e-14 * scale, np.clip((bb * f - cc * ee) / np.where(denom == 0, 1, denom), 0, 1), 0.0
        )
        s = np.where(ab_point, 0.0, s)
        t = np.where(cd_point, 0.0, (bb * s + f) / np.where(cd_point, 1, ee))
        # t outside [0, 1]: clamp t and recompute s for that end of cd.
        t_clamped = np.clip(t, 0.0, 1.0)
        s_again = np.where(
            ab_point, 0.0, np.clip((t_clamped * bb - cc) / np.where(ab_point, 1, aa), 0.0, 1.0)
        )
    redo = (t < 0) | (t > 1)
    s = np.where(redo, s_again, s)
    t = t_clamped
    p = a + d1 * s[..., None]
    q = c + d2 * t[..., None]
    return p, q
