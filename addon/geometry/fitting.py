"""Orthogonal-regression line and plane fits by power iteration (the seed's Line Fitting post).

Power iteration runs on the 3x3 scatter matrix rather than on the points, so its cost does not
grow with the point count; the matrix is squared a few times first so that even close leading
eigenvalues separate within a handful of steps.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .errors import GeometryError

_SQUARINGS = 6  # scatter^(2^6): a 1.01 eigenvalue ratio becomes ~1.9 before the vector steps
_MAX_STEPS = 500


def _checked_points(points: ArrayLike, minimum: int, what: str) -> NDArray[np.float64]:
    pts = np.asarray(points, dtype=np.float64)
    if pts.ndim != 2 or pts.shape[1] != 3:
        raise GeometryError(f"{what} needs points of shape (N, 3), got {pts.shape}")
    if len(pts) < minimum:
        raise GeometryError(f"{what} needs at least {minimum} points, got {len(pts)}")
    if not np.all(np.isfinite(pts)):
        raise GeometryError(f"{what} got points containing NaN or infinity")
    return pts


def _dominant_axis(
    scatter: NDArray[np.float64], exclude: NDArray[np.float64] | None = None
) -> NDArray[np.float64]:
    """Unit eigenvector of the largest eigenvalue of a symmetric PSD 3x3 matrix (optionally ⟂ exclude)."""
    if exclude is not None:
        projector = np.eye(3) - np.outer(exclude, exclude)
        scatter = projector @ scatter @ projector
    scale = np.trace(scatter)
    if not scale > 0:
        return np.zeros(3)
    power = scatter / scale
    for _ in range(_SQUARINGS):
        power = power @ power
        power /= max(np.trace(power), 1e-300)
    # The largest column of a high power of the matrix is never orthogonal to the answer,
    # which removes the seed's "singular starting guess" case.
    direction = power[:, np.argmax(np.linalg.norm(power, axis=0))].copy()
    norm = np.linalg.norm(direction)
    if norm == 0:
        return np.zeros(3)
    direction /= norm
    matrix = scatter / scale
    for _ in range(_MAX_STEPS):
        following = matrix @ direction
        if exclude is not None:
            following -= exclude * (exclude @ following)
        norm = np.linalg.norm(following)
        if norm == 0:
            break
        following /= norm
        if np.linalg.norm(following - direction) < 1e-15:
            direction = following
            break
        direction = following
    # A stable sign makes repeated fits of similar data agree.
    return direction if direction[np.argmax(np.abs(direction))] >= 0 else -direction


def fit_line(points: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Line minimising squared orthogonal distances: ``(centroid, unit direction)``."""
    pts = _checked_points(points, 2, "fit_line")
    centroid = pts.mean(axis=0)
    centred = pts - centroid
    scatter = centred.T @ centred
    direction = _dominant_axis(scatter)
    if not np.any(direction):
        raise GeometryError("fit_line: all points coincide, so there is no line direction")
    return centroid, direction


def fit_plane(points: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Plane minimising squared orthogonal distances: ``(centroid, unit normal)``.

    The primary and secondary axes come from power iteration (the secondary restricted to the
    plane orthogonal to the primary: sequential down-projection), the normal is their cross product.
    """
    pts = _checked_points(points, 3, "fit_plane")
    centroid = pts.mean(axis=0)
    centred = pts - centroid
    scatter = centred.T @ centred
    primary = _dominant_axis(scatter)
    if not np.any(primary):
        raise GeometryError("fit_plane: all points coincide, so there is no plane")
    secondary = _dominant_axis(scatter, exclude=primary)
    spread = np.trace(scatter)
    if not np.any(secondary) or secondary @ scatter @ secondary <= 1e-12 * spread:
        raise GeometryError("fit_plane: the points are collinear, so the plane is not defined")
    normal = np.cross(primary, secondary)
    normal /= np.linalg.norm(normal)
    return centroid, (normal if normal[np.argmax(np.abs(normal))] >= 0 else -normal)
