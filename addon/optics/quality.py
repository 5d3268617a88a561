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
