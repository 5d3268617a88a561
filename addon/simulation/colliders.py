"""Static collision shapes: sphere, oriented box, triangle mesh. Each projects penetrating
particles back to its surface (plus the particle radius) and applies Coulomb-style friction to
the tangential motion made during the substep (Macklin et al. 2014, "Unified particle physics").
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .errors import SimulationError

_TINY = 1e-12


def apply_friction(
    positions: NDArray[np.float64],
    start: NDArray[np.float64],
    index: NDArray[np.int64],
    normals: NDArray[np.float64],
    depth: NDArray[np.float64],
    friction: float,
    carried: NDArray[np.float64] | None = None,
) -> None:
    """Cancel tangential slip of contacting particles, at most ``friction * depth`` of it.

    ``carried`` ``(K, 3)``: how far the touched surface itself moved this substep, so slip is
    measured relative to a moving collider (a platform carries what rests on it).
    """
    if friction <= 0 or len(index) == 0:
        return
    moved = positions[index] - start[index]
    if carried is not None:
        moved = moved - carried
    tangential = moved - normals * np.einsum("ij,ij->i", moved, normals)[:, None]
    slip = np.linalg.norm(tangential, axis=1)
    shrink = np.minimum(1.0, friction * depth / np.maximum(slip, _TINY))
    positions[index] -= tangential * shrink[:, None]


def _vector(value: ArrayLike, what: str) -> NDArray[np.float64]:
    v = np.asarray(value, dtype=np.float64).reshape(-1)
    if v.shape != (3,) or not np.all(np.isfinite(v)):
        raise SimulationError(f"{what} must be three finite numbers, got {value!r}")
    return v


@dataclass(frozen=True)
class SphereCollider:
    """A solid ball."""

    center: NDArray[np.float64]
    radius: float
    friction: float = 0.5

    @classmethod
    def create(cls, center: ArrayLike, radius: float, friction: float = 0.5) -> SphereCollider:
        if not radius > 0:
            raise SimulationError(f"sphere collider radius must be positive, got {radius}")
        return cls(_vector(center, "sphere collider center"), float(radius), float(friction))

    def project(self, positions, start, movable, particle_radius: float) -> None:
        offset = positions - self.center
        distance = np.linalg.norm(offset, axis=1)
        reach = self.radius + particle_radius
        hit = np.flatnonzero((distance < reach) & movable)
        if len(hit) == 0:
            return
        normals = offset[hit] / np.maximum(distance[hit], _TINY)[:, None]
        normals[distance[hit] <= _TINY] = (0.0, 0.0, 1.0)
        depth = reach - distance[hit]
        positions[hit] = self.center + normals * reach
        apply_friction(positions, start, hit, normals, depth, self.friction)


@dataclass(frozen=True)
class BoxCollider:
    """A solid oriented box: ``rotation`` columns are its local axes, ``half_extents`` its half sizes."""

    center: NDArray[np.float64]
    rotation: NDArray[np.float64]
    half_extents: NDArray[np.float64]
    friction: float = 0.5

    @classmethod
    def create(
        cls,
        center: ArrayLike,
        half_extents: ArrayLike,
        rotation: ArrayLike | None = None,
        friction: float = 0.5,
    ) -> BoxCollider:
        half = _vector(half_extents, "box collider half extents")
        if np.any(half <= 0):
            raise SimulationError(f"box collider half extents must be positive, got {half.tolist()}")
        rot = np.eye(3) if rotation is None else np.asarray(rotation, dtype=np.float64)
        if rot.shape != (3, 3) or not np.allclose(rot.T @ rot, np.eye(3), atol=1e-6):
            raise SimulationError("box collider rotation must be a 3x3 rotation matrix")
        return cls(_vector(center, "box collider center"), rot, half, float(friction))

    def project(self, positions, start, movable, particle_radius: float) -> None:
        local = (positions - self.center) @ self.rotation
        reach = self.half_extents + particle_radius
        inside = np.all(np.abs(local) < reach, axis=1) & movable
        hit = np.flatnonzero(inside)
        if len(hit) == 0:
            return
        lp = local[hit]
        gap = reach - np.abs(lp)  # distance to each face pair, along its axis
        axis = np.argmin(gap, axis=1)
        rows = np.arange(len(hit))
        sign = np.where(lp[rows, axis] >= 0, 1.0, -1.0)
        lp[rows, axis] = sign * reach[axis]
        local_normals = np.zeros((len(hit), 3))
        local_normals[rows, axis] = sign
        positions[hit] = lp @ self.rotation.T + self.center
        apply_friction(positions, start, hit, local_normals @ self.rotation.T, gap[rows, axis], self.friction)


@dataclass
class MeshCollider:
    """A triangle surface (e.g. a Blender mesh marked as collider), one-sided along face normals.

    A particle inside a face's slab ``-thickness < signed distance < radius`` whose projection
    lies within the triangle is pushed out along that face normal.

    An animated collider has a ``path`` ``(F, V, 3)``: its vertices on frames ``first_frame`` ..
    ``first_frame + F - 1``; within a frame the surface moves linearly from one sample to the next.
    """

    vertices: NDArray[np.float64]
    triangles: NDArray[np.int64]
    friction: float = 0.5
    thickness: float = 0.1
    path: NDArray[np.float64] | None = None
    first_frame: int = 0
    _normals: NDArray[np.float64] = field(init=False, repr=False)
    _shift: NDArray[np.float64] | None = field(default=None, init=False, repr=False)
    _fraction: float = field(default=0.0, init=False, repr=False)
    _motion: tuple[NDArray[np.float64], NDArray[np.float64]] | None = field(
        default=None, init=False, repr=False
    )
    _candidates: tuple[NDArray[np.int64], NDArray[np.int64]] | None = field(
        default=None, init=False, repr=False
    )

    @classmethod
    def create(
        cls,
        vertices: ArrayLike,
        triangles: ArrayLike,
        friction: float = 0.5,
        thickness: float = 0.1,
        path: ArrayLike | None = None,
        first_frame: int = 0,
    ) -> MeshCollider:
        v = np.asarray(vertices, dtype=np.float64)
        t = np.asarray(triangles, dtype=np.int64)
        if v.ndim != 2 or v.shape[1] != 3 or not np.all(np.isfinite(v)):
            raise SimulationError("mesh collider vertices must be a finite (V, 3) array")
        frames = None
        if path is not None:
            frames = np.asarray(path, dtype=np.float64)
            if frames.ndim != 3 or frames.shape[1:] != v.shape or not np.all(np.isfinite(frames)):
                raise SimulationError(
                    f"animated collider path must be finite (frames, {len(v)}, 3), got shape {frames.shape}"
                )
        if t.ndim != 2 or t.shape[1] != 3 or len(t) == 0:
            raise SimulationError("mesh collider needs at least one triangle as a (T, 3) index array")
        if t.min() < 0 or t.max() >= len(v):
            raise SimulationError("mesh collider triangle indices are out of range")
        if thickness <= 0:
            raise SimulationError(f"mesh collider thickness must be positive, got {thickness}")
        return cls(v, t, float(friction), float(thickness), frames, int(first_frame))

    def __post_init__(self) -> None:
        a, b, c = (self.vertices[self.triangles[:, k]] for k in range(3))
        length = np.linalg.norm(np.cross(b - a, c - a), axis=1)
        self.triangles = self.triangles[length > _TINY]
        self._update_normals()

    def _update_normals(self) -> None:
        a, b, c = (self.vertices[self.triangles[:, k]] for k in range(3))
        normals = np.cross(b - a, c - a)
        self._normals = normals / np.maximum(np.linalg.norm(normals, axis=1), _TINY)[:, None]

    @property
    def animated(self) -> bool:
        return self.path is not None

    def begin_frame(self, frame: int) -> None:
        """Move an animated collider to the start of the step that computes ``frame``."""
        if self.path is None:
            return
        last = len(self.path) - 1
        target = int(np.clip(frame - self.first_frame, 0, last))
        self._motion = (self.path[max(target - 1, 0)], self.path[target])
        self.vertices = self._motion[0].copy()
        self._fraction = 0.0
        self._shift = np.zeros((len(self.triangles), 3))
        self._update_normals()

    def move_to(self, fraction: float) -> None:
        """Place an animated collider ``fraction`` (0..1) of the way through the current frame."""
        if self._motion is None:
            return
        start, end = self._motion
        # Each triangle's own displacement over this substep (mean of its corners), for friction.
        self._shift = (end - start)[self.triangles].mean(axis=1) * (fraction - self._fraction)
        self._fraction = fraction
        self.vertices = start + fraction * (end - start)
        self._update_normals()

    def prepare(self, positions: NDArray[np.float64], margin: float) -> None:
        """Broad phase for the coming frame: particle/triangle pairs whose boxes overlap within margin."""
        tri = self.vertices[self.triangles]
        lo = tri.min(axis=1)
        hi = tri.max(axis=1)
        if self._motion is not None:  # cover everywhere the surface passes during the frame
            swept = self._motion[1][self.triangles]
            lo = np.minimum(lo, swept.min(axis=1))
            hi = np.maximum(hi, swept.max(axis=1))
        lo = lo - margin - self.thickness
        hi = hi + margin + self.thickness
        found_p, found_t = [], []
        chunk = max(1, 2_000_000 // max(len(tri), 1))
        for start in range(0, len(positions), chunk):
            p = positions[start : start + chunk, None, :]
            overlap = np.all((p >= lo) & (p <= hi), axis=2)
            pi, ti = np.nonzero(overlap)
            found_p.append(pi + start)
            found_t.append(ti)
        self._candidates = (np.concatenate(found_p), np.concatenate(found_t))

    def project(self, positions, start, movable, particle_radius: float) -> None:
        if self._candidates is None:
            self.prepare(positions, particle_radius)
        pi, ti = self._candidates
        if len(pi) == 0:
            return
        p = positions[pi]
        a = self.vertices[self.triangles[ti, 0]]
        b = self.vertices[self.triangles[ti, 1]]
        c = self.vertices[self.triangles[ti, 2]]
        n = self._normals[ti]
        signed = np.einsum("ij,ij->i", p - a, n)
        foot = p - n * signed[:, None]
        # The foot of the perpendicular is inside the triangle when it is left of all three edges.
        inside = (
            (np.einsum("ij,ij->i", np.cross(b - a, foot - a), n) >= 0)
            & (np.einsum("ij,ij->i", np.cross(c - b, foot - b), n) >= 0)
            & (np.einsum("ij,ij->i", np.cross(a - c, foot - c), n) >= 0)
        )
        contact = inside & (signed < particle_radius) & (signed > -self.thickness) & movable[pi]
        if not np.any(contact):
            return
        pi, ti, signed, n = pi[contact], ti[contact], signed[contact], n[contact]
        # One face per particle: the one it is closest to.
        order = np.lexsort((np.abs(signed), pi))
        pi, ti, signed, n = pi[order], ti[order], signed[order], n[order]
        first = np.r_[True, pi[1:] != pi[:-1]]
        pi, ti, signed, n = pi[first], ti[first], signed[first], n[first]
        depth = particle_radius - signed
        positions[pi] += n * depth[:, None]
        carried = None if self._shift is None else self._shift[ti]
        apply_friction(positions, start, pi, n, depth, self.friction, carried)
