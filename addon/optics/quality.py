"""How well a mirror images one focus onto the other: spot size and path-length spread."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .ellipsoid import as_point, reflect, unit_directions
from .errors import OpticsError
from .mesh import STEP_FACE, Mesh, facet_normals
from .mirrors import EllipsoidMirror, MirrorChain, rays_to_mirror, trace_chain

# Barycentric sample points per triangle: the centroid and three points towards the corners.
_BARYCENTRIC = np.array(
    [[1 / 3, 1 / 3, 1 / 3], [2 / 3, 1 / 6, 1 / 6], [1 / 6, 2 / 3, 1 / 6], [1 / 6, 1 / 6, 2 / 3]]
)


@dataclass(frozen=True)
class SpotSize:
    """Distances of the outgoing rays from the target focus (``rms``, ``max``, metres), the spread of
    optical path lengths to it (``path_spread``) and the mean path (``path_mean``) over ``rays`` rays."""

    rms: float
    max: float
    path_spread: float
    path_mean: float
    rays: int


def spot_of_rays(points, directions, target, path_before) -> SpotSize:
    """Spot of rays leaving ``points`` along unit ``directions`` around ``target``.

    The path to the target is measured to each ray's closest approach (signed, so a virtual focus behind
    the last surface counts negative) and added to ``path_before``.
    """
    focus = as_point(target, "target focus")
    if len(points) == 0:
        raise OpticsError("no ray reached the mirror, so there is no spot to measure")
    to_target = focus - points
    along = np.einsum("ij,ij->i", to_target, directions)
    miss = np.linalg.norm(to_target - along[:, None] * directions, axis=1)
    paths = path_before + along
    return SpotSize(
        rms=float(np.sqrt(np.mean(miss * miss))),
        max=float(np.max(miss)),
        path_spread=float(np.ptp(paths)),
        path_mean=float(np.mean(paths)),
        rays=len(points),
    )


def mirror_spot(mirror: EllipsoidMirror, count: int = 2000, seed: int = 0) -> SpotSize:
    """Spot of the analytic mirror: random rays from its first focus over the cap, around the second."""
    origins, directions = rays_to_mirror(mirror, mirror.foci[0], "random", count, seed)
    t, points, normals = mirror.intersect(origins, directions)
    hit = np.isfinite(t)
    outgoing = reflect(directions[hit], normals[hit])
    return spot_of_rays(points[hit], outgoing, mirror.foci[1], t[hit])


def chain_spot(chain: MirrorChain, count: int = 2000, seed: int = 0) -> SpotSize:
    """Spot at the chain's last focus of random rays from its first focus over the first mirror."""
    origins, directions = rays_to_mirror(chain.mirrors[0], chain.foci[0], "random", count, seed)
    result = trace_chain(chain, origins, directions)
    arrived = result.records[-1].hit
    path = np.zeros(len(origins))
    previous = origins
    for record in result.records:
        path += np.linalg.norm(record.points - previous, axis=1)
        previous = record.points
    return spot_of_rays(
        result.records[-1].points[arrived], result.final_directions[arrived], chain.foci[-1], path[arrived]
    )


def mesh_spot(mesh: Mesh, source, target) -> SpotSize:
    """Spot of a mesh: rays from ``source`` to sample points on every reflecting face, reflected off the
    flat facet (its geometric normal), measured around ``target``.

    Assumes each sample point is seen unobstructed from the source (true for mirror caps and for the
    reflecting faces of a Fresnel plate lit from its focus); step faces are not sampled.
    """
    origin = as_point(source, "source focus")
    faces = mesh.faces[mesh.face_zone != STEP_FACE]
    if len(faces) == 0:
        raise OpticsError("the mesh has no reflecting faces")
    geometric, _ = facet_normals(mesh.vertices, faces)
    corners = mesh.vertices[faces]
    points = np.einsum("sk,fkd->fsd", _BARYCENTRIC, corners).reshape(-1, 3)
    normals = np.repeat(geometric, len(_BARYCENTRIC), axis=0)
    incoming = unit_directions(points - origin, "rays to the mesh")
    outgoing = reflect(incoming, normals)
    return spot_of_rays(points, outgoing, target, np.linalg.norm(points - origin, axis=1))


@dataclass(frozen=True)
class LightBudget:
    """Where the light from a source focus that lands on a mesh goes (fractions of that light, each ray
    weighted by solid angle): ``through_target`` reflected to pass within ``radius`` of the target,
    ``unobstructed`` of those also not blocked by the mesh on the way, ``on_steps`` landing on step
    faces; ``rays`` the number of rays that landed. Traced: each ray lands on the first face it meets.
    ``face_weighted`` is the simpler measure of the issue: every face weighted by its solid angle from
    the source (no shadowing), reflecting faces counted as sending their light through the target."""

    through_target: float
    unobstructed: float
    on_steps: float
    rays: int
    face_weighted: float


def light_budget(mesh: Mesh, source, target, radius: float | None = None, rays: int = 20000, seed: int = 0):
    """Trace ``rays`` rays from ``source`` spread evenly over the solid angle the mesh covers, reflect
    them off the facets they hit first, and measure how much of that light passes within ``radius``
    (default: one zone width) of ``target`` (:class:`LightBudget`)."""
    from .mesh import MeshSurface  # noqa: PLC0415

    origin = as_point(source, "source focus")
    goal = as_point(target, "target focus")
    reach = float(mesh.zone_width if radius is None else radius)
    if not reach > 0.0:
        raise OpticsError("light_budget needs a positive radius (the mesh has no zone width)")
    offsets = mesh.vertices - origin
    axis = unit_directions(offsets.mean(axis=0), "mesh direction")[0]
    cosines = unit_directions(offsets, "mesh vertices") @ axis
    lowest = float(np.clip(cosines.min(), -1.0, 1.0))
    rng = np.random.default_rng(seed)
    cos_theta = rng.uniform(lowest, 1.0, rays)  # even in solid angle over the cap holding the mesh
    phi = rng.uniform(0.0, 2.0 * np.pi, rays)
    sin_theta = np.sqrt(1.0 - cos_theta**2)
    helper = np.array([1.0, 0.0, 0.0]) if abs(axis[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    across = np.cross(axis, helper)
    across /= np.linalg.norm(across)
    other = np.cross(axis, across)
    directions = (
        cos_theta[:, None] * axis
        + (sin_theta * np.cos(phi))[:, None] * across
        + (sin_theta * np.sin(phi))[:, None] * other
    )
    surface = MeshSurface(mesh)
    t, face = surface.hits(np.broadcast_to(origin, directions.shape), directions)
    landed = np.isfinite(t)
    if not np.any(landed):
        raise OpticsError("no ray from the source focus lands on the mesh")
    points = origin + t[landed, None] * directions[landed]
    outgoing = reflect(directions[landed], shading_normals_at(mesh, face[landed], points))
    to_goal = goal - points
    ahead = np.einsum("ij,ij->i", to_goal, outgoing)
    miss = np.linalg.norm(to_goal - ahead[:, None] * outgoing, axis=1)
    through = (ahead > 0.0) & (miss <= reach)
    blocked_t, _ = surface.hits(points, outgoing)
    clear = through & ~(blocked_t < ahead)
    count = int(landed.sum())
    return LightBudget(
        through_target=float(through.sum()) / count,
        unobstructed=float(clear.sum()) / count,
        on_steps=float(np.sum(mesh.face_zone[face[landed]] == STEP_FACE)) / count,
        rays=count,
        face_weighted=face_weighted_efficiency(mesh, origin),
    )


def shading_normals_at(mesh: Mesh, faces: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Unit normals at ``points`` on ``faces`` as the smooth-shaded render sees them: the exact corner
    normals interpolated barycentrically (the face's exact normal where the mesh has none)."""
    if mesh.corner_normals is None:
        return mesh.normals[faces]
    corners = mesh.vertices[mesh.faces[faces]]
    e1, e2 = corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0]
    rel = points - corners[:, 0]
    d11, d12, d22 = (np.einsum("ij,ij->i", a, b) for a, b in ((e1, e1), (e1, e2), (e2, e2)))
    r1, r2 = np.einsum("ij,ij->i", rel, e1), np.einsum("ij,ij->i", rel, e2)
    det = np.where(np.abs(d11 * d22 - d12 * d12) > 0.0, d11 * d22 - d12 * d12, 1.0)
    u = (d22 * r1 - d12 * r2) / det
    v = (d11 * r2 - d12 * r1) / det
    weights = np.stack([1.0 - u - v, u, v], axis=1)
    normals = np.einsum("fk,fkd->fd", weights, mesh.corner_normals[faces])
    return normals / np.maximum(np.linalg.norm(normals, axis=1, keepdims=True), 1e-300)


def face_solid_angles(mesh: Mesh, source) -> np.ndarray:
    """Solid angle (steradians) of every face seen from ``source`` (Van Oosterom & Strackee)."""
    corners = mesh.vertices[mesh.faces] - as_point(source, "source")
    a, b, c = corners[:, 0], corners[:, 1], corners[:, 2]
    la, lb, lc = (np.linalg.norm(x, axis=1) for x in (a, b, c))
    triple = np.einsum("ij,ij->i", a, np.cross(b, c))
    dots = (
        np.einsum("ij,ij->i", a, b) * lc + np.einsum("ij,ij->i", a, c) * lb + np.einsum("ij,ij->i", b, c) * la
    )
    return np.abs(2.0 * np.arctan2(triple, la * lb * lc + dots))


def face_weighted_efficiency(mesh: Mesh, source) -> float:
    """Share of the solid angle of all faces (from ``source``) that belongs to reflecting faces."""
    solid = face_solid_angles(mesh, source)
    return float(solid[mesh.face_zone != STEP_FACE].sum() / solid.sum())
