"""Prolate spheroids built from two foci, intersected analytically in their unit-sphere space.

A point of the surface is ``center + rotation @ (semi_axes * u)`` for a unit vector ``u``; the local
z axis runs from the first focus to the second, as in the seed post, so ``semi_axes = (b, b, a)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import OpticsError

# Hits closer than this fraction of the semi-major axis are the surface the ray starts on.
SELF_HIT_FRACTION = 1e-9


def as_points(values, name: str) -> np.ndarray:
    """``values`` as a finite float (n, 3) array (a single point becomes one row)."""
    array = np.asarray(values, dtype=np.float64)
    if array.ndim == 1:
        array = array[None, :]
    if array.ndim != 2 or array.shape[1] != 3:
        raise OpticsError(f"{name} must be 3D points or vectors, got shape {np.shape(values)}")
    if not np.all(np.isfinite(array)):
        raise OpticsError(f"{name} contains NaN or infinite values")
    return array


#: Farther than this from the origin (metres) a point's squared distances overflow or lose all precision.
MAX_COORDINATE = 1e9


def as_point(value, name: str) -> np.ndarray:
    """``value`` as one finite 3-vector within ``MAX_COORDINATE`` of the origin."""
    array = np.asarray(value, dtype=np.float64)
    if array.shape != (3,):
        raise OpticsError(f"{name} must be a 3D point, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise OpticsError(f"{name} contains NaN or infinite values")
    if np.max(np.abs(array)) > MAX_COORDINATE:
        raise OpticsError(f"{name} {tuple(array)} is farther than {MAX_COORDINATE:g} m from the origin")
    return array


def unit_directions(directions, name: str = "directions") -> np.ndarray:
    """Normalised copies of ``directions``; a zero-length direction is an error."""
    array = as_points(directions, name)
    lengths = np.linalg.norm(array, axis=1)
    if np.any(lengths <= 1e-300):
        raise OpticsError(f"{name} contains a zero-length direction (row {int(np.argmin(lengths))})")
    return array / lengths[:, None]


def frame_from_axis(axis: np.ndarray) -> np.ndarray:
    """A right-handed rotation whose third column is the unit vector ``axis``."""
    helper = np.array([1.0, 0.0, 0.0]) if abs(axis[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x_axis = np.cross(helper, axis)
    x_axis /= np.linalg.norm(x_axis)
    y_axis = np.cross(axis, x_axis)
    return np.column_stack([x_axis, y_axis, axis])


def reflect(directions: np.ndarray, normals: np.ndarray) -> np.ndarray:
    """Mirror reflection of ``directions`` about surfaces with unit ``normals`` (either orientation)."""
    along = np.einsum("ij,ij->i", directions, normals)
    return directions - 2.0 * along[:, None] * normals


def quadratic_roots(half_b: np.ndarray, a: np.ndarray, c: np.ndarray):
    """Both real roots (small, large) of ``a t^2 + 2 half_b t + c = 0``; NaN-free, inf where none exist.

    Uses the cancellation-free form so a root near zero (a ray starting on the surface) stays accurate.
    """
    disc = half_b * half_b - a * c
    real = disc >= 0.0
    root = np.sqrt(np.where(real, disc, 0.0))
    q = -(half_b + np.copysign(root, half_b))
    with np.errstate(divide="ignore", invalid="ignore"):
        t_a = np.where(real, q / a, np.inf)
        t_b = np.where(real & (q != 0.0), c / np.where(q != 0.0, q, 1.0), t_a)
    return np.minimum(t_a, t_b), np.maximum(t_a, t_b)


@dataclass(frozen=True)
class Ellipsoid:
    """A prolate spheroid: ``center`` (3,), ``rotation`` (3, 3), ``semi_axes`` (3,) and its two ``foci``."""

    center: np.ndarray
    rotation: np.ndarray
    semi_axes: np.ndarray
    foci: np.ndarray

    @property
    def semi_major(self) -> float:
        return float(self.semi_axes[2])

    @property
    def path_length(self) -> float:
        """Focus-to-surface-to-focus distance, the same for every surface point (2a)."""
        return 2.0 * self.semi_major

    def to_sphere(self, points: np.ndarray) -> np.ndarray:
        """World points to the unit-sphere space of this ellipsoid."""
        return ((points - self.center) @ self.rotation) / self.semi_axes

    def from_sphere(self, sphere_points: np.ndarray) -> np.ndarray:
        """Unit-sphere-space points back to world space."""
        return (sphere_points * self.semi_axes) @ self.rotation.T + self.center

    def normals_at(self, points: np.ndarray) -> np.ndarray:
        """Outward unit normals of the confocal surface through ``points`` (exact on the surface)."""
        gradient = (self.to_sphere(points) / self.semi_axes) @ self.rotation.T
        return gradient / np.linalg.norm(gradient, axis=1, keepdims=True)

    def sphere_normals(self, sphere_points: np.ndarray) -> np.ndarray:
        """Outward unit world normals at the surface points given in sphere space."""
        gradient = (sphere_points / self.semi_axes) @ self.rotation.T
        return gradient / np.linalg.norm(gradient, axis=1, keepdims=True)

    def line_roots(self, origins: np.ndarray, directions: np.ndarray):
        """Both line parameters (small, large) where ``origins + t directions`` meets the surface.

        The ray is transformed into sphere space, where the surface is ``|p| = 1``; ``inf`` where the line
        misses. ``t`` is measured in units of the given directions.
        """
        sphere_origins = self.to_sphere(origins)
        sphere_directions = (directions @ self.rotation) / self.semi_axes
        a = np.einsum("ij,ij->i", sphere_directions, sphere_directions)
        half_b = np.einsum("ij,ij->i", sphere_origins, sphere_directions)
        c = np.einsum("ij,ij->i", sphere_origins, sphere_origins) - 1.0
        return quadratic_roots(half_b, a, c)

    def self_hit_distance(self, directions: np.ndarray) -> np.ndarray:
        return SELF_HIT_FRACTION * self.semi_major / np.linalg.norm(directions, axis=1)

    def intersect(self, origins, directions):
        """First hit of each ray with the whole surface, from outside or inside.

        Returns ``(t, points, normals)``: ``t`` (n,) is ``inf`` where the ray misses (its point is then the
        origin), normals are outward unit normals. A ray starting on the surface does not hit its own
        starting point.
        """
        origins = as_points(origins, "origins")
        directions = as_points(directions, "directions")
        near, far = self.line_roots(origins, directions)
        t_min = self.self_hit_distance(directions)
        t = np.where(near > t_min, near, np.where(far > t_min, far, np.inf))
        hit = np.isfinite(t)
        points = origins + np.where(hit, t, 0.0)[:, None] * directions
        normals = np.zeros_like(points)
        if np.any(hit):
            normals[hit] = self.normals_at(points[hit])
        return t, points, normals


#: Wider than this, relative to the focal distance, the spheroid is a sphere to float precision.
MAX_MINOR_TO_SEPARATION = 1e6


def ellipsoid_from_foci(f1, f2, minor_axis: float) -> Ellipsoid:
    """The prolate spheroid with foci ``f1``, ``f2`` and full minor-axis length ``minor_axis``.

    The semi-major axis is ``sqrt((|f2 - f1| / 2)^2 + (minor_axis / 2)^2)``, as in the seed post.
    """
    first = as_point(f1, "first focus")
    second = as_point(f2, "second focus")
    minor = float(minor_axis)
    if not np.isfinite(minor) or minor <= 0.0:
        raise OpticsError(f"minor axis must be a positive length, got {minor_axis}")
    axis = second - first
    separation = float(np.linalg.norm(axis))
    scale = max(float(np.max(np.abs(first))), float(np.max(np.abs(second))), 1.0)
    if separation <= 1e-12 * scale:
        raise OpticsError(f"the two foci coincide at {tuple(np.round(first, 6))}; move one of them")
    if minor > MAX_MINOR_TO_SEPARATION * separation:
        raise OpticsError(
            f"minor axis {minor:g} is too wide for foci {separation:g} apart (at most "
            f"{MAX_MINOR_TO_SEPARATION:g} times their distance): the ellipsoid would be a sphere"
        )
    half_separation = separation / 2.0
    semi_minor = minor / 2.0
    semi_major = float(np.hypot(half_separation, semi_minor))
    return Ellipsoid(
        center=(first + second) / 2.0,
        rotation=frame_from_axis(axis / separation),
        semi_axes=np.array([semi_minor, semi_minor, semi_major]),
        foci=np.stack([first, second]),
    )


def ellipsoid_from_path_length(f1, f2, path_length: float) -> Ellipsoid:
    """The confocal spheroid whose focus-surface-focus distance is ``path_length`` (2a)."""
    first = as_point(f1, "first focus")
    second = as_point(f2, "second focus")
    separation = float(np.linalg.norm(second - first))
    if path_length <= separation:
        raise OpticsError(
            f"path length {path_length:.6g} must exceed the focus separation {separation:.6g}"
        )
    semi_minor = float(np.sqrt((path_length / 2.0) ** 2 - (separation / 2.0) ** 2))
    return ellipsoid_from_foci(first, second, 2.0 * semi_minor)
