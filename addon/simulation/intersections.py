"""Which triangles of a mesh pass through each other: the check that self collision works.

Candidate pairs come from the spatial hash on triangle centroids; two triangles intersect when an edge
of one crosses the other (Moeller-Trumbore, vectorised). Triangles sharing a vertex are skipped: they
meet at that vertex by construction.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .spatial_hash import close_pairs

_EPS = 1e-12


def _segments_cross(
    start: NDArray[np.float64], end: NDArray[np.float64], corners: NDArray[np.float64]
) -> NDArray[np.bool_]:
    """Whether each segment ``start -> end`` (K, 3) passes through triangle ``corners`` (K, 3, 3)."""
    direction = end - start
    edge1 = corners[:, 1] - corners[:, 0]
    edge2 = corners[:, 2] - corners[:, 0]
    h = np.cross(direction, edge2)
    det = np.einsum("ij,ij->i", edge1, h)
    ok = np.abs(det) > _EPS
    inverse = np.where(ok, 1.0 / np.where(ok, det, 1.0), 0.0)
    s = start - corners[:, 0]
    u = inverse * np.einsum("ij,ij->i", s, h)
    q = np.cross(s, edge1)
    v = inverse * np.einsum("ij,ij->i", direction, q)
    t = inverse * np.einsum("ij,ij->i", edge2, q)
    return ok & (u >= 0) & (v >= 0) & (u + v <= 1) & (t >= 0) & (t <= 1)


def intersecting_triangle_pairs(vertices: ArrayLike, triangles: ArrayLike) -> NDArray[np.int64]:
    """Index pairs ``(K, 2)`` of triangles (sharing no vertex) that pass through each other."""
    v = np.asarray(vertices, dtype=np.float64).reshape(-1, 3)
    tri = np.asarray(triangles, dtype=np.int64).reshape(-1, 3)
    if len(tri) < 2:
        return np.zeros((0, 2), dtype=np.int64)
    corners = v[tri]
    centroid = corners.mean(axis=1)
    # Two triangles can only touch if their centroids are closer than the sum of their "radii".
    reach = 2.0 * float(np.max(np.linalg.norm(corners - centroid[:, None], axis=2))) + 1e-9
    pairs = close_pairs(centroid, reach)
    if len(pairs) == 0:
        return pairs
    a, b = tri[pairs[:, 0]], tri[pairs[:, 1]]
    shared = (a[:, :, None] == b[:, None, :]).any(axis=(1, 2))
    pairs = pairs[~shared]
    hit = np.zeros(len(pairs), dtype=bool)
    for first, second in ((0, 1), (1, 0)):
        owner, other = corners[pairs[:, first]], corners[pairs[:, second]]
        for k in range(3):
            hit |= _segments_cross(owner[:, k], owner[:, (k + 1) % 3], other)
    return pairs[hit]
