"""Ellipsoidal mirror sections, focus-to-focus mirror chains and vectorised ray tracing."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np

from .ellipsoid import (
    SELF_HIT_FRACTION,
    Ellipsoid,
    as_point,
    as_points,
    ellipsoid_from_foci,
    quadratic_roots,
    reflect,
    unit_directions,
)
from .errors import OpticsError

MirrorKind = Literal["concave", "convex"]
KINDS: tuple[str, ...] = ("concave", "convex")


class Surface(Protocol):
    """Anything rays can hit: ``intersect`` returns ``(t, points, normals)`` with ``t = inf`` on a miss."""

    def intersect(self, origins: np.ndarray, directions: np.ndarray): ...


@dataclass(frozen=True)
class EllipsoidMirror:
    """A cap of an ellipsoid used as a mirror.

    The cap is the set of surface points whose sphere-space unit vector ``u`` has
    ``u . cap_axis >= cos(aperture)``; ``kind`` says which side reflects by design (concave: the inside,
    light passes from the first focus to the second; convex: the outside, light converging on the first
    focus leaves diverging from the second). Tracing treats the cap as a thin two-sided reflector.
    """

    ellipsoid: Ellipsoid
    cap_axis: np.ndarray
    aperture: float
    kind: MirrorKind = "concave"

    @property
    def foci(self) -> np.ndarray:
        return self.ellipsoid.foci

    @property
    def size(self) -> float:
        return self.ellipsoid.semi_major

    def intersect(self, origins, directions):
        """First hit of each ray with the cap (``t = inf`` and the origin as point on a miss)."""
        origins = as_points(origins, "origins")
        directions = as_points(directions, "directions")
        return self.hits(origins, directions)

    def hits(self, origins: np.ndarray, directions: np.ndarray):
        """:meth:`intersect` without input checks, for (n, 3) float arrays already validated.

        The cap test and the normal work on projections onto the cap axis and one 3x3 product each, so
        a ray costs a few dozen flops and two (n, 3) temporaries.
        """
        ellipsoid = self.ellipsoid
        to_sphere = ellipsoid.rotation / ellipsoid.semi_axes  # columns scaled: world -> sphere space
        sphere_origins = origins @ to_sphere - ellipsoid.center @ to_sphere
        sphere_directions = directions @ to_sphere
        a = np.einsum("ij,ij->i", sphere_directions, sphere_directions)
        half_b = np.einsum("ij,ij->i", sphere_origins, sphere_directions)
        c = np.einsum("ij,ij->i", sphere_origins, sphere_origins) - 1.0
        near, far = quadratic_roots(half_b, a, c)
        t_min = (
            SELF_HIT_FRACTION * ellipsoid.semi_major / np.sqrt(np.einsum("ij,ij->i", directions, directions))
        )
        cos_aperture = np.cos(self.aperture)
        origin_along = sphere_origins @ self.cap_axis
        direction_along = sphere_directions @ self.cap_axis
        # A missed ellipsoid gives infinite roots; they must not pass the cap test as hits at infinity.
        with np.errstate(invalid="ignore"):
            near_on_cap = origin_along + near * direction_along >= cos_aperture
            far_on_cap = origin_along + far * direction_along >= cos_aperture
        near_ok = (near > t_min) & (near < np.inf) & near_on_cap
        far_ok = (far > t_min) & (far < np.inf) & far_on_cap
        t = np.where(near_ok, near, np.where(far_ok, far, np.inf))
        hit = near_ok | far_ok
        t_used = np.where(hit, t, 0.0)
        points = origins + t_used[:, None] * directions
        sphere_points = sphere_origins + t_used[:, None] * sphere_directions
        gradient = sphere_points @ to_sphere.T  # R @ (u / semi_axes): the outward normal direction
        length = np.sqrt(np.einsum("ij,ij->i", gradient, gradient))
        normals = gradient / np.where(hit, length, 1.0)[:, None]
        normals[~hit] = 0.0
        if not np.isfinite(normals).all():
            raise OpticsError("tracing produced a non-finite normal: the rays or the mirror are degenerate")
        return t, points, normals

    def cap_points(self, sphere_directions: np.ndarray) -> np.ndarray:
        """World points of the surface at the given sphere-space unit vectors."""
        return self.ellipsoid.from_sphere(sphere_directions)


def cap_axis_towards(ellipsoid: Ellipsoid, side) -> np.ndarray:
    """Sphere-space unit vector of the surface point seen from the centre in world direction ``side``."""
    side_vector = as_point(side, "mirror side")
    if np.linalg.norm(side_vector) <= 1e-12:
        raise OpticsError("the mirror side direction must not be zero")
    local = (side_vector @ ellipsoid.rotation) / ellipsoid.semi_axes
    return local / np.linalg.norm(local)


def _aperture_degrees(value: float, what: str) -> float:
    """An aperture in (0, 180] degrees; 180 given through a float32 (Blender's pi) is 180.000005."""
    degrees = float(value)
    if not 0.0 < degrees <= 180.0 + 1e-4:
        raise OpticsError(f"{what} must be in (0, 180] degrees, got {degrees:g}")
    return min(degrees, 180.0)


def ellipsoid_mirror(
    f1,
    f2,
    minor_axis: float,
    side=(0.0, 0.0, -1.0),
    aperture_deg: float = 60.0,
    kind: MirrorKind = "concave",
) -> EllipsoidMirror:
    """A mirror cap of the spheroid with foci ``f1``, ``f2``, centred on the ``side`` of its axis."""
    if kind not in KINDS:
        raise OpticsError(f"mirror kind must be one of {KINDS}, got {kind!r}")
    aperture_deg = _aperture_degrees(aperture_deg, "mirror aperture")
    ellipsoid = ellipsoid_from_foci(f1, f2, minor_axis)
    axis = cap_axis_towards(ellipsoid, side)
    return EllipsoidMirror(ellipsoid, axis, float(np.radians(aperture_deg)), kind)


@dataclass(frozen=True)
class MirrorChain:
    """Mirrors that pass light focus to focus: mirror ``k`` has foci ``foci[k]`` and ``foci[k + 1]``."""

    foci: np.ndarray
    mirrors: tuple[EllipsoidMirror, ...]

    @property
    def path_length(self) -> float:
        """Optical path from the first focus to the last: concave mirrors add 2a, convex subtract it."""
        total = 0.0
        for mirror in self.mirrors:
            sign = 1.0 if mirror.kind == "concave" else -1.0
            total += sign * mirror.ellipsoid.path_length
        return total


def mirror_chain(
    foci,
    minor_axes: Sequence[float],
    kinds: Sequence[str] | None = None,
    first_direction=(0.0, 0.0, -1.0),
    apertures_deg: Sequence[float] | float = 30.0,
) -> MirrorChain:
    """A chain through ``foci`` (m + 1 points), one mirror per consecutive pair.

    Each mirror's cap is centred where the chief ray (leaving the first focus along ``first_direction``)
    meets it: concave mirrors are hit from inside, convex mirrors from outside, so a convex element must
    be followed by a concave one to bring the light back to a real focus.
    """
    points = as_points(foci, "chain foci")
    count = len(points) - 1
    if count < 1:
        raise OpticsError("a mirror chain needs at least two foci")
    kinds = list(kinds) if kinds is not None else ["concave"] * count
    minor = list(minor_axes)
    if len(kinds) != count or len(minor) != count:
        raise OpticsError(f"{len(points)} foci make {count} mirrors: give {count} kinds and minor axes")
    apertures = [float(apertures_deg)] * count if np.isscalar(apertures_deg) else list(apertures_deg)
    if len(apertures) != count:
        raise OpticsError(f"give {count} apertures, got {len(apertures)}")
    for index, kind in enumerate(kinds):
        if kind not in KINDS:
            raise OpticsError(f"mirror {index + 1}: kind must be one of {KINDS}, got {kind!r}")
    if kinds[-1] == "convex":
        raise OpticsError("the last mirror of a chain must be concave to form a real final focus")

    origin = points[0]
    direction = unit_directions(first_direction, "first direction")[0]
    mirrors: list[EllipsoidMirror] = []
    for index in range(count):
        ellipsoid = ellipsoid_from_foci(points[index], points[index + 1], minor[index])
        near, far = ellipsoid.line_roots(origin[None, :], direction[None, :])
        t_chief = float(far[0] if kinds[index] == "concave" else near[0])
        if not np.isfinite(t_chief) or t_chief <= ellipsoid.self_hit_distance(direction[None, :])[0]:
            raise OpticsError(
                f"mirror {index + 1} ({kinds[index]}) is not reached by light from focus {index + 1}: "
                "move the foci or change its minor axis"
            )
        hit_point = origin + t_chief * direction
        axis = ellipsoid.to_sphere(hit_point[None, :])[0]
        axis /= np.linalg.norm(axis)
        aperture = _aperture_degrees(apertures[index], f"mirror {index + 1}: aperture")
        mirror = EllipsoidMirror(ellipsoid, axis, float(np.radians(aperture)), kinds[index])
        mirrors.append(mirror)
        normal = ellipsoid.normals_at(hit_point[None, :])
        direction = reflect(direction[None, :], normal)[0]
        origin = hit_point
    return MirrorChain(points, tuple(mirrors))


@dataclass(frozen=True)
class BounceRecord:
    """Where every ray met one bounce: ``t`` (inf on a miss), ``points``, unit ``normals``, ``hit`` mask,
    ``surface`` index hit (-1 on a miss) and the ``directions`` leaving the bounce."""

    t: np.ndarray
    points: np.ndarray
    normals: np.ndarray
    hit: np.ndarray
    surface: np.ndarray
    directions: np.ndarray


@dataclass(frozen=True)
class TraceResult:
    """Ray ``paths`` (n, bounces + 2, 3) and one :class:`BounceRecord` per bounce."""

    paths: np.ndarray
    records: tuple[BounceRecord, ...]

    @property
    def final_directions(self) -> np.ndarray:
        return self.records[-1].directions if self.records else np.zeros((len(self.paths), 3))


def _bounce(origins, directions, alive, hits, indices=None):
    """One interaction per ray: reflection, or refraction where the surface hit has a refractive
    index (``indices`` per ray, NaN for mirrors; the side entered is read off the outward normal)."""
    t, points, normals, surface = hits
    hit = alive & np.isfinite(t)
    new_directions = directions.copy()
    clear = hit & np.isfinite(indices) if indices is not None else np.zeros_like(hit)
    mirror = hit & ~clear
    if np.any(mirror):
        new_directions[mirror] = reflect(directions[mirror], normals[mirror])
    if np.any(clear):
        from .slab import AIR, refract  # noqa: PLC0415

        entering = np.einsum("ij,ij->i", directions[clear], normals[clear]) < 0.0
        inside = indices[clear]
        new_directions[clear], _ = refract(
            directions[clear],
            normals[clear],
            np.where(entering, AIR, inside),
            np.where(entering, inside, AIR),
        )
    # A ray that misses keeps going straight: record a point one unit further along its line.
    new_points = np.where(hit[:, None], points, origins + directions)
    record = BounceRecord(
        t=np.where(hit, t, np.inf),
        points=new_points,
        normals=np.where(hit[:, None], normals, 0.0),
        hit=hit,
        surface=np.where(hit, surface, -1),
        directions=new_directions,
    )
    return new_points, new_directions, hit, record


def _finish(origins, records, final_origins, final_directions) -> TraceResult:
    paths = np.empty((len(origins), len(records) + 2, 3))
    paths[:, 0] = origins
    for index, record in enumerate(records):
        paths[:, index + 1] = record.points
    paths[:, -1] = final_origins + final_directions
    return TraceResult(paths, tuple(records))


def trace_records(surfaces: Sequence[Surface], origins, directions, bounces: int = 1) -> TraceResult:
    """Trace rays for ``bounces`` interactions, each time with the nearest of ``surfaces``: a mirror
    reflects; a clear surface (one with a ``refractive_index``, e.g. :class:`~.slab.ClearSlab`) refracts
    by Snell's law, or reflects past the critical angle."""
    if bounces < 0:
        raise OpticsError(f"bounces must be >= 0, got {bounces}")
    if len(surfaces) == 0:
        raise OpticsError("trace needs at least one surface")
    origins = as_points(origins, "origins")
    current_directions = unit_directions(directions)
    if len(current_directions) != len(origins):
        raise OpticsError(f"{len(origins)} origins but {len(current_directions)} directions")
    current = origins
    alive = np.ones(len(origins), dtype=bool)
    records = []
    # Refractive index per surface (NaN for mirrors); None when every surface is a mirror.
    media = np.array([float(getattr(s, "refractive_index", np.nan)) for s in surfaces])
    media = media if np.any(np.isfinite(media)) else None
    for _ in range(bounces):
        best_t = np.full(len(origins), np.inf)
        best_points = current.copy()
        best_normals = np.zeros_like(current)
        best_surface = np.full(len(origins), -1)
        for index, surface in enumerate(surfaces):
            t, points, normals = surface.intersect(current, current_directions)
            closer = t < best_t
            best_t = np.where(closer, t, best_t)
            best_points = np.where(closer[:, None], points, best_points)
            best_normals = np.where(closer[:, None], normals, best_normals)
            best_surface = np.where(closer, index, best_surface)
        current, current_directions, alive, record = _bounce(
            current,
            current_directions,
            alive,
            (best_t, best_points, best_normals, best_surface),
            None
            if media is None
            else np.where(best_surface >= 0, media[np.maximum(best_surface, 0)], np.nan),
        )
        records.append(record)
    return _finish(origins, records, current, current_directions)


def trace(surfaces: Sequence[Surface], origins, directions, bounces: int = 1) -> np.ndarray:
    """Ray paths (n, bounces + 2, 3): the origin, each hit point, then a point one unit along the final
    direction. Each bounce reflects off the nearest surface; a ray that misses keeps going straight."""
    return trace_records(surfaces, origins, directions, bounces).paths


def trace_chain(
    chain: MirrorChain | Sequence[Surface],
    origins,
    directions,
    chunk: int = 32768,
    keep_records: bool = True,
) -> TraceResult:
    """Trace rays through the mirrors in order (bounce k can only hit mirror k), as the chain is designed.

    A ray that misses one mirror is lost: it keeps going straight and hits nothing after. Rays go in
    chunks of ``chunk`` so the temporaries stay in the processor cache. Without ``keep_records`` only
    the paths and the last bounce's record (final points, directions, hits) are kept.
    """
    mirrors = chain.mirrors if isinstance(chain, MirrorChain) else tuple(chain)
    origins = as_points(origins, "origins")
    unit = unit_directions(directions)
    if len(unit) != len(origins):
        raise OpticsError(f"{len(origins)} origins but {len(unit)} directions")
    count, bounces = len(origins), len(mirrors)
    paths = np.empty((count, bounces + 2, 3))
    paths[:, 0] = origins
    kept = range(bounces) if keep_records else range(bounces - 1, bounces)
    t_all = {index: np.empty(count) for index in kept}
    normals_all = {index: np.empty((count, 3)) for index in kept}
    hit_all = {index: np.empty(count, dtype=bool) for index in kept}
    directions_all = {index: np.empty((count, 3)) for index in kept}
    final_directions = np.empty((count, 3))
    fast = [getattr(mirror, "hits", None) or mirror.intersect for mirror in mirrors]
    for start in range(0, count, chunk):
        rows = slice(start, start + chunk)
        current, current_directions = origins[rows], unit[rows]
        alive = np.ones(len(current), dtype=bool)
        for index, intersect in enumerate(fast):
            t, points, normals = intersect(current, current_directions)
            hit = alive & np.isfinite(t)
            along = np.einsum("ij,ij->i", current_directions, normals)
            reflected = current_directions - (2.0 * along)[:, None] * normals
            current_directions = np.where(hit[:, None], reflected, current_directions)
            # A ray that misses keeps going straight: record a point one unit further along its line.
            current = np.where(hit[:, None], points, current + current_directions)
            paths[rows, index + 1] = current
            if index in t_all:
                t_all[index][rows] = np.where(hit, t, np.inf)
                normals_all[index][rows] = np.where(hit[:, None], normals, 0.0)
                hit_all[index][rows] = hit
                directions_all[index][rows] = current_directions
            alive = hit
        final_directions[rows] = current_directions
    paths[:, -1] = paths[:, -2] + final_directions
    records = tuple(
        BounceRecord(
            t=t_all[index],
            points=paths[:, index + 1],
            normals=normals_all[index],
            hit=hit_all[index],
            surface=np.where(hit_all[index], index, -1),
            directions=directions_all[index],
        )
        for index in kept
    )
    return TraceResult(paths, records)


def cap_sample_directions(
    mirror: EllipsoidMirror, pattern: str, count: int, seed: int = 0, fill: float = 0.95
) -> np.ndarray:
    """Sphere-space unit vectors on the mirror's cap: a ``fan`` across it (in the plane of the major axis),
    a ``cone`` of rings around its centre, or a ``random`` uniform bundle. ``fill`` keeps them inside
    the rim."""
    if count < 1:
        raise OpticsError(f"ray count must be at least 1, got {count}")
    axis = mirror.cap_axis
    helper = np.array([0.0, 0.0, 1.0]) if abs(axis[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
    across = helper - (helper @ axis) * axis
    across /= np.linalg.norm(across)
    other = np.cross(axis, across)
    limit = mirror.aperture * fill
    if pattern == "fan":
        angles = np.linspace(-limit, limit, count) if count > 1 else np.zeros(1)
        polar, azimuth = np.abs(angles), np.where(angles < 0, np.pi, 0.0)
    elif pattern == "cone":
        rings = max(1, int(round(np.sqrt(count / 6.0))))
        per_ring = int(np.ceil(count / rings))
        ring = np.repeat(np.arange(1, rings + 1), per_ring)[:count]
        polar = limit * ring / rings
        azimuth = 2.0 * np.pi * (np.arange(count) % per_ring) / per_ring + ring * 0.5
    elif pattern == "random":
        rng = np.random.default_rng(seed)
        cos_polar = 1.0 - rng.random(count) * (1.0 - np.cos(limit))
        polar, azimuth = np.arccos(cos_polar), rng.random(count) * 2.0 * np.pi
    else:
        raise OpticsError(f"ray pattern must be fan, cone or random, got {pattern!r}")
    return (
        np.cos(polar)[:, None] * axis
        + (np.sin(polar) * np.cos(azimuth))[:, None] * across
        + (np.sin(polar) * np.sin(azimuth))[:, None] * other
    )


def rays_to_mirror(
    mirror: EllipsoidMirror, source, pattern: str = "fan", count: int = 16, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Rays from ``source`` aimed at points spread over the mirror cap: ``(origins, unit directions)``."""
    origin = as_point(source, "ray source")
    targets = mirror.cap_points(cap_sample_directions(mirror, pattern, count, seed))
    directions = targets - origin
    return np.repeat(origin[None, :], len(targets), axis=0), unit_directions(directions)
