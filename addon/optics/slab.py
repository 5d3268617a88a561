"""Refraction: Snell's law with total internal reflection, and the clear slab a Fresnel plate can be
embedded in (two parallel round faces of a transparent material)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .ellipsoid import as_point, reflect, unit_directions
from .errors import OpticsError

#: Refractive index of air, outside every clear part.
AIR = 1.0


def refract(
    directions: np.ndarray, normals: np.ndarray, index_from, index_to
) -> tuple[np.ndarray, np.ndarray]:
    """Unit ``directions`` crossing an interface with unit ``normals`` (either orientation) from a medium
    of ``index_from`` into ``index_to`` (scalars or per ray): ``(new directions, totally_reflected)``.

    Snell's law ``n1 sin(theta1) = n2 sin(theta2)`` in vector form; past the critical angle
    (``sin(theta1) > n2 / n1``) the ray is reflected instead (total internal reflection).
    """
    d = np.asarray(directions, dtype=np.float64)
    n = np.asarray(normals, dtype=np.float64)
    cos_in = -np.einsum("ij,ij->i", d, n)
    n = np.where((cos_in < 0.0)[:, None], -n, n)  # the normal against the ray
    cos_in = np.abs(cos_in)
    ratio = np.broadcast_to(np.asarray(index_from, dtype=np.float64) / np.asarray(index_to), cos_in.shape)
    k = 1.0 - ratio**2 * (1.0 - cos_in**2)
    total = k < 0.0
    refracted = ratio[:, None] * d + (ratio * cos_in - np.sqrt(np.maximum(k, 0.0)))[:, None] * n
    refracted /= np.linalg.norm(refracted, axis=1, keepdims=True)
    out = np.where(total[:, None], reflect(d, n), refracted)
    return out, total


@dataclass(frozen=True)
class ClearSlab:
    """A round slab of clear material: faces at ``centre +- thickness / 2 * normal``, ``radius`` wide,
    of refractive ``index``. Traced, it refracts (or totally reflects) rays at its two faces; its
    rim is not modelled (rays beyond the radius pass by)."""

    centre: np.ndarray
    normal: np.ndarray
    radius: float
    thickness: float
    index: float = 1.49

    def __post_init__(self) -> None:
        object.__setattr__(self, "centre", as_point(self.centre, "slab centre"))
        object.__setattr__(self, "normal", unit_directions(self.normal, "slab normal")[0])
        if not (
            np.isfinite(self.radius)
            and self.radius > 0
            and np.isfinite(self.thickness)
            and self.thickness > 0
        ):
            raise OpticsError(
                f"a clear slab needs a positive radius and thickness, got {self.radius}, {self.thickness}"
            )
        if not (np.isfinite(self.index) and self.index >= 1.0):
            raise OpticsError(f"index of refraction must be at least 1 (air), got {self.index}")

    @property
    def refractive_index(self) -> float:
        return float(self.index)

    def contains(self, points: np.ndarray) -> np.ndarray:
        """Whether ``points`` are inside the slab (between its faces, within its radius)."""
        offset = np.asarray(points, dtype=np.float64) - self.centre
        height = offset @ self.normal
        across = offset - height[:, None] * self.normal
        return (np.abs(height) < 0.5 * self.thickness) & (np.linalg.norm(across, axis=1) <= self.radius)

    def intersect(self, origins, directions):
        """Nearest face hit ``(t, points, normals)`` (outward normals; inf where none)."""
        origins = np.asarray(origins, dtype=np.float64)
        directions = np.asarray(directions, dtype=np.float64)
        height = (origins - self.centre) @ self.normal
        rate = directions @ self.normal
        best = np.full(len(origins), np.inf)
        normals = np.zeros_like(origins)
        scale = max(self.radius, self.thickness)
        for side in (1.0, -1.0):
            with np.errstate(divide="ignore", invalid="ignore"):
                t = (side * 0.5 * self.thickness - height) / rate
            points = origins + np.where(np.isfinite(t), t, 0.0)[:, None] * directions
            across = points - self.centre
            across -= (across @ self.normal)[:, None] * self.normal
            ok = np.isfinite(t) & (t > 1e-9 * scale) & (np.linalg.norm(across, axis=1) <= self.radius)
            closer = ok & (t < best)
            best = np.where(closer, t, best)
            normals[closer] = side * self.normal
        hit = np.isfinite(best)
        points = origins + np.where(hit, best, 0.0)[:, None] * directions
        return best, points, normals
