"""Centre of pressure (eq. 4), centre of mass (eq. 3) and the support polygon: pure numpy."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

_EPS = 1e-9


def center_of_mass(masses: ArrayLike, positions: ArrayLike) -> NDArray[np.float64]:
    """Eq. 3: the mass-weighted mean of the segment centres of mass ``positions`` (N, 3)."""
    m = np.asarray(masses, dtype=np.float64)
    p = np.asarray(positions, dtype=np.float64)
    return (m[:, None] * p).sum(axis=0) / m.sum()


def center_of_pressure(points: ArrayLike, normal_forces: ArrayLike) -> NDArray[np.float64]:
    """Eq. 4: contact points (K, 3) weighted by the length of their normal forces (K,).

    Forces pulling away from the floor cannot exist on a contact and are clipped to zero.
    Raises ValueError when nothing pushes (the body is in the air).
    """
    p = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    f = np.clip(np.asarray(normal_forces, dtype=np.float64).reshape(-1), 0.0, None)
    total = f.sum()
    if len(p) == 0 or total <= _EPS:
        raise ValueError("no contact force: the centre of pressure is undefined")
    return (f[:, None] * p).sum(axis=0) / total


def convex_hull(points: ArrayLike) -> NDArray[np.float64]:
    """Counter-clockwise 2D convex hull (Andrew's monotone chain) of ``points`` (N, 2).

    Nearly collinear points are dropped; fewer than three distinct points give them back as is.
    Plain Python floats: for the dozen contact points of two feet this beats numpy's overhead.
    """
    arr = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    vertices = hull_vertices(arr.tolist())
    return np.unique(arr, axis=0) if vertices is None else np.array(vertices, dtype=np.float64)


def hull_vertices(points: list[list[float]]) -> list[tuple[float, float]] | None:
    """:func:`convex_hull`'s vertices as (x, y) tuples for points given as a list of [x, y], or None
    for fewer than three points (whose hull is the distinct points)."""
    # Duplicates need no removal: the chain pops any point with a zero turn.
    pts = sorted(map(tuple, points))
    if len(pts) < 3:
        return None

    def half(seq: list) -> list:
        chain: list = []
        for q in seq:
            qx, qy = q
            while len(chain) >= 2:
                (ox, oy), (ax, ay) = chain[-2], chain[-1]
                if (ax - ox) * (qy - oy) - (ay - oy) * (qx - ox) > 1e-12:
                    break
                chain.pop()
            chain.append(q)
        return chain

    lower, upper = half(pts), half(pts[::-1])
    return lower[:-1] + upper[:-1]


def polygon_area(hull: ArrayLike) -> float:
    """Area of a counter-clockwise polygon (shoelace); 0 for fewer than three points."""
    points = hull if isinstance(hull, list) else np.asarray(hull, dtype=np.float64).reshape(-1, 2).tolist()
    if len(points) < 3:
        return 0.0
    # Plain floats: a handful of vertices every control tick.
    twice = 0.0
    for (ax, ay), (bx, by) in zip(points, points[1:] + points[:1], strict=True):
        twice += ax * by - bx * ay
    return 0.5 * twice


def signed_distance_inside(point: ArrayLike, hull: ArrayLike) -> float:
    """Distance from ``point`` to the boundary of the counter-clockwise ``hull``; negative outside.

    A degenerate hull (a segment or a point) has no inside: the result is minus the distance to it.
    """
    q = np.asarray(point, dtype=np.float64)[:2]
    h = np.asarray(hull, dtype=np.float64)
    if len(h) == 0:
        return -np.inf
    if len(h) < 3:
        if len(h) == 1:
            return -float(np.linalg.norm(q - h[0]))
        a, b = h
        t = np.clip(np.dot(q - a, b - a) / max(np.dot(b - a, b - a), _EPS), 0.0, 1.0)
        return -float(np.linalg.norm(q - (a + t * (b - a))))
    a = h
    b = np.roll(h, -1, axis=0)
    edge = b - a
    length = np.linalg.norm(edge, axis=1)
    # Inward normal of a counter-clockwise polygon is the edge turned left.
    inward = np.stack([-edge[:, 1], edge[:, 0]], axis=1) / length[:, None]
    depth = ((q - a) * inward).sum(axis=1)
    if np.all(depth >= 0.0):
        return float(depth.min())
    t = np.clip(((q - a) * edge).sum(axis=1) / length**2, 0.0, 1.0)
    nearest = a + t[:, None] * edge
    return -float(np.linalg.norm(nearest - q, axis=1).min())


def clamp_into_hull(point: ArrayLike, hull: ArrayLike, margin: float) -> NDArray[np.float64]:
    """``point`` pulled towards the hull's centroid until it is ``margin`` inside (or at the centroid)."""
    qx, qy = np.asarray(point, dtype=np.float64)[:2].tolist()
    h = np.asarray(hull, dtype=np.float64)
    if len(h) < 3:
        return h.mean(axis=0) if len(h) else np.array([qx, qy])
    return np.array(clamp_xy_into_hull(qx, qy, h.tolist(), margin))


def clamp_xy_into_hull(qx: float, qy: float, verts: list, margin: float) -> tuple[float, float]:
    """:func:`clamp_into_hull` of the point (``qx``, ``qy``) for a hull of three or more vertices given
    as a list of (x, y): the balance calls it every control tick, where numpy's overhead on the
    conversions cost more than the arithmetic (plain floats throughout)."""
    n = len(verts)
    cx = sum([v[0] for v in verts]) / n
    cy = sum([v[1] for v in verts]) / n
    sx, sy = qx - cx, qy - cy
    scale = 1.0
    for (ax, ay), (bx, by) in zip(verts, verts[1:] + verts[:1], strict=True):
        ex, ey = bx - ax, by - ay
        length = (ex * ex + ey * ey) ** 0.5
        if length <= _EPS:
            continue
        nx, ny = -ey / length, ex / length
        rate = nx * sx + ny * sy
        if rate < 0.0:
            # Along centroid + s * step this edge allows s <= (depth of centroid - margin) / -rate.
            depth = (cx - ax) * nx + (cy - ay) * ny - margin
            scale = min(scale, depth / -rate)
    scale = max(scale, 0.0)
    return cx + scale * sx, cy + scale * sy
