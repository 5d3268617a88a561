"""Fresnel reflectors on curved supports: confocal ellipsoid zones cut on a sphere, a cylinder or any
triangle mesh, still sending light from one focus to the other (the seed's Fresnel idea, no longer flat).

The support is sliced along the level curves of the focus-distance sum ``|p - f1| + |p - f2|`` (every
triangle cut exactly where a level crosses its edges), so each piece lies in one zone. Zone ``k`` is
the confocal ellipsoid of its outer level, reached from the support along the support's normal: it
meets the support at the zone's outer edge and dips away from it inside. Between zones the steps run
along the rays from ``f1`` (``risers="rays"``, edge-on to its light) or along the support normal
(``"vertical"``).
"""

from __future__ import annotations

import numpy as np

from .ellipsoid import as_point, ellipsoid_from_path_length
from .errors import OpticsError
from .mesh import RISERS, STEP_FACE, Mesh, _confocal_normals, _orient, compact_mesh, facet_normals


def vertex_normals(vertices: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """Area-weighted unit vertex normals of a triangle mesh."""
    geometric, areas = facet_normals(vertices, faces)
    normals = np.zeros_like(vertices)
    for corner in range(3):
        np.add.at(normals, faces[:, corner], geometric * areas[:, None])
    length = np.linalg.norm(normals, axis=1, keepdims=True)
    return normals / np.where(length > 0.0, length, 1.0)


def sphere_support(centre, radius: float, axis, aperture_deg: float = 40.0, resolution: int = 48):
    """A spherical cap (vertices, faces, normals): ``resolution`` rings around ``axis`` out to
    ``aperture_deg`` from it, normals pointing to the sphere's centre (the concave side)."""
    centre = as_point(centre, "sphere centre")
    axis = np.asarray(axis, dtype=np.float64) / np.linalg.norm(axis)
    if not (np.isfinite(radius) and radius > 0 and 0 < aperture_deg < 180 and resolution >= 2):
        raise OpticsError(
            "a sphere support needs a positive radius, an aperture in (0, 180) and resolution >= 2"
        )
    helper = np.array([1.0, 0.0, 0.0]) if abs(axis[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    across = np.cross(axis, helper)
    across /= np.linalg.norm(across)
    other = np.cross(axis, across)
    rings, segments = resolution, 4 * resolution
    polar = np.radians(aperture_deg) * np.arange(1, rings + 1) / rings
    azimuth = 2.0 * np.pi * np.arange(segments) / segments
    ring = (
        np.cos(polar)[:, None, None] * axis
        + (np.sin(polar)[:, None] * np.cos(azimuth))[..., None] * across
        + (np.sin(polar)[:, None] * np.sin(azimuth))[..., None] * other
    ).reshape(-1, 3)
    directions = np.concatenate([axis[None], ring])
    spokes = np.arange(segments)
    faces = [np.stack([np.zeros(segments, dtype=np.int64), 1 + spokes, 1 + (spokes + 1) % segments], -1)]
    for r in range(rings - 1):
        a = 1 + r * segments + spokes
        b = 1 + r * segments + (spokes + 1) % segments
        faces += [np.stack([a, a + segments, b + segments], -1), np.stack([a, b + segments, b], -1)]
    return centre + radius * directions, np.concatenate(faces), -directions


def cylinder_support(
    centre, axis, radius: float, length: float, facing, arc_deg: float = 90.0, resolution: int = 48
):
    """A cylinder patch (vertices, faces, normals) around ``axis`` through ``centre``: ``arc_deg`` of its
    circumference centred on ``facing`` (from the axis), ``length`` long, normals towards the axis."""
    centre = as_point(centre, "cylinder centre")
    axis = np.asarray(axis, dtype=np.float64) / np.linalg.norm(axis)
    facing = np.asarray(facing, dtype=np.float64)
    facing = facing - (facing @ axis) * axis
    if not (
        np.isfinite(radius)
        and radius > 0
        and length > 0
        and 0 < arc_deg <= 360
        and np.linalg.norm(facing) > 0
    ):
        raise OpticsError(
            "a cylinder support needs a positive radius and length, an arc in (0, 360] and a facing"
        )
    facing /= np.linalg.norm(facing)
    side = np.cross(axis, facing)
    columns = max(2, resolution) + 1
    rows = max(2, resolution) + 1
    angle = np.radians(arc_deg) * (np.arange(columns) / (columns - 1) - 0.5)
    height = length * (np.arange(rows) / (rows - 1) - 0.5)
    out = np.cos(angle)[None, :, None] * facing + np.sin(angle)[None, :, None] * side
    vertices = centre + radius * out + height[:, None, None] * axis
    r, c = np.meshgrid(np.arange(rows - 1), np.arange(columns - 1), indexing="ij")
    a, b = (r * columns + c).ravel(), (r * columns + c + 1).ravel()
    faces = np.concatenate([np.stack([a, b, b + columns], -1), np.stack([a, b + columns, a + columns], -1)])
    normals = -np.broadcast_to(out, vertices.shape).reshape(-1, 3)
    return vertices.reshape(-1, 3), faces, normals


def curved_fresnel_reflector(
    f1,
    f2,
    vertices,
    faces,
    normals=None,
    zones: int = 24,
    *,
    draft: bool = True,
    risers: str = "rays",
) -> Mesh:
    """Fresnel zones cut on the support mesh ``(vertices, faces)`` (world coordinates; ``normals`` per
    vertex, default area-weighted, turned towards ``f1``) so that every zone reflects ``f1`` onto
    ``f2``. Both foci must be on the same side of the support."""
    first, second = as_point(f1, "first focus"), as_point(f2, "second focus")
    points = np.asarray(vertices, dtype=np.float64).reshape(-1, 3)
    triangles = np.asarray(faces, dtype=np.int64).reshape(-1, 3)
    if risers not in RISERS:
        raise OpticsError(f"risers must be one of {', '.join(RISERS)}, got {risers!r}")
    if len(triangles) == 0 or not np.all(np.isfinite(points)):
        raise OpticsError("the support mesh has no faces or has vertices at NaN or infinity")
    if triangles.min() < 0 or triangles.max() >= len(points):
        raise OpticsError("the support mesh has a face index out of range")
    if int(zones) < 1:
        raise OpticsError(f"a Fresnel reflector needs at least one zone, got {zones}")
    if np.linalg.norm(second - first) <= 1e-12:
        raise OpticsError("the two foci coincide; move one of them")
    support_normals = vertex_normals(points, triangles) if normals is None else np.asarray(normals, float)
    support_normals = support_normals / np.maximum(
        np.linalg.norm(support_normals, axis=1, keepdims=True), 1e-300
    )
    towards = np.einsum("ij,ij->i", first - points, support_normals)
    if np.sum(towards) < 0.0:
        support_normals = -support_normals
    sums = np.linalg.norm(points - first, axis=1) + np.linalg.norm(points - second, axis=1)
    zone_count = int(zones)
    levels = np.linspace(sums.min(), sums.max(), zone_count + 1)
    levels[-1] += 1e-9 * max(1.0, float(levels[-1]))
    ellipsoids = [ellipsoid_from_path_length(first, second, float(level)) for level in levels[1:]]

    # ---- slice every triangle along the level curves
    cut_points: list[np.ndarray] = []
    cut_normals: list[np.ndarray] = []
    cut_index: dict[tuple[int, int, int], int] = {}
    cut_level: dict[int, int] = {}  # level of every cut point

    def level_point(a: int, b: int, level: int) -> int:
        key = (min(a, b), max(a, b), level)
        found = cut_index.get(key)
        if found is not None:
            return found
        pa, pb, target = points[key[0]], points[key[1]], levels[level]
        sa, sb = sums[key[0]], sums[key[1]]
        low, high = 0.0, 1.0
        fraction = (target - sa) / (sb - sa)
        for _ in range(40):  # bisection on the exact (not linear) sum along the edge
            probe = pa + fraction * (pb - pa)
            value = np.linalg.norm(probe - first) + np.linalg.norm(probe - second)
            if (value < target) == (sa < sb):
                low = fraction
            else:
                high = fraction
            fraction = 0.5 * (low + high)
        normal = support_normals[key[0]] + fraction * (support_normals[key[1]] - support_normals[key[0]])
        cut_points.append(pa + fraction * (pb - pa))
        cut_normals.append(normal / np.linalg.norm(normal))
        cut_index[key] = len(points) + len(cut_points) - 1
        cut_level[cut_index[key]] = level
        return cut_index[key]

    zone_of_vertex = np.clip(np.searchsorted(levels, sums, side="right") - 1, 0, zone_count - 1)
    pieces: list[tuple[int, list[int]]] = []  # (zone, polygon of point ids)
    boundary: list[tuple[int, int, int]] = []  # (level, point, point): a step between level - 1 and level
    for triangle in triangles.tolist():
        zones_here = zone_of_vertex[triangle]
        low_zone, high_zone = int(zones_here.min()), int(zones_here.max())
        if low_zone == high_zone:
            pieces.append((low_zone, triangle))
            continue
        for zone in range(low_zone, high_zone + 1):
            polygon: list[int] = []
            for corner in range(3):
                a, b = triangle[corner], triangle[(corner + 1) % 3]
                za, zb = int(zone_of_vertex[a]), int(zone_of_vertex[b])
                if za == zone:
                    polygon.append(a)
                # crossings of this zone's two levels along the edge, in order from a to b
                crossings = []
                for level in (zone, zone + 1):
                    if min(za, zb) < level <= max(za, zb):
                        crossings.append(level)
                if za > zb:
                    crossings.reverse()
                polygon.extend(level_point(a, b, level) for level in crossings)
            if len(polygon) >= 3:
                pieces.append((zone, polygon))
                for level in (zone, zone + 1):
                    on_level = [p for p in polygon if cut_level.get(p) == level]
                    if len(on_level) == 2 and level == zone and zone > 0:
                        boundary.append((level, on_level[0], on_level[1]))

    all_points = np.vstack([points, np.array(cut_points).reshape(-1, 3)])
    all_normals = np.vstack([support_normals, np.array(cut_normals).reshape(-1, 3)])
    point_level = np.full(len(all_points), -1)
    for (_, _, level), index in cut_index.items():
        point_level[index] = level

    # ---- lift every (point, zone) pair onto the zone's ellipsoid
    copies: dict[tuple[int, int], int] = {}
    for zone, polygon in pieces:
        for point in polygon:
            copies.setdefault((point, zone), len(copies))
    keys = np.array(list(copies.keys()), dtype=np.int64).reshape(-1, 2)
    lifted = np.empty((len(keys), 3))
    for zone in np.unique(keys[:, 1]):
        rows = np.flatnonzero(keys[:, 1] == zone)
        base, along = all_points[keys[rows, 0]], all_normals[keys[rows, 0]]
        near, far = ellipsoids[zone].line_roots(base, along)
        step = np.where(np.abs(near) <= np.abs(far), near, far)
        lifted[rows] = base + np.where(np.isfinite(step), step, 0.0)[:, None] * along
        if risers == "rays" and zone > 0:
            # a zone's inner edge (its lower level) starts where the ray from f1 over the edge meets it
            inner = point_level[keys[rows, 0]] == zone
            if np.any(inner):
                ray = base[inner] - first
                ray /= np.linalg.norm(ray, axis=1, keepdims=True)
                _, reach = ellipsoids[zone].line_roots(np.broadcast_to(first, ray.shape), ray)
                good = np.isfinite(reach)
                targets = rows[inner][good]
                lifted[targets] = first + reach[good, None] * ray[good]

    face_list, zone_list = [], []
    for zone, polygon in pieces:
        ids = [copies[(p, zone)] for p in polygon]
        for k in range(1, len(ids) - 1):
            face_list.append((ids[0], ids[k], ids[k + 1]))
            zone_list.append(zone)
    if draft:
        for level, p, q in boundary:
            outer_p, outer_q = copies.get((p, level - 1)), copies.get((q, level - 1))
            inner_p, inner_q = copies[(p, level)], copies[(q, level)]
            if outer_p is None or outer_q is None:
                continue
            face_list += [(outer_p, outer_q, inner_q), (outer_p, inner_q, inner_p)]
            zone_list += [STEP_FACE, STEP_FACE]
    mesh_faces = np.array(face_list, dtype=np.int64)
    face_zone = np.array(zone_list, dtype=np.int64)
    _, areas = facet_normals(lifted, mesh_faces)
    scale = float(np.abs(all_points).max())
    keep = areas > (1e-9 * scale) ** 2
    mesh_faces, face_zone = mesh_faces[keep], face_zone[keep]
    if len(mesh_faces) == 0:
        raise OpticsError("the curved Fresnel reflector has no faces: check the support and the foci")
    centroids = lifted[mesh_faces].mean(axis=1)
    mesh_normals = _confocal_normals(centroids, first, second)
    walls = face_zone == STEP_FACE
    geometric, _ = facet_normals(lifted, mesh_faces)
    if np.any(walls):
        wall_normals = geometric[walls]
        facing = np.einsum("ij,ij->i", wall_normals, first - centroids[walls]) < 0.0
        wall_normals[facing] *= -1.0
        mesh_normals[walls] = wall_normals
    mesh_faces = _orient(lifted, mesh_faces, mesh_normals)
    corners = _confocal_normals(lifted[mesh_faces].reshape(-1, 3), first, second).reshape(-1, 3, 3)
    corners[walls] = mesh_normals[walls][:, None, :]
    # the zone width along the support: the level step over the sum's slope along the surface
    gradient = (points - first) / np.linalg.norm(points - first, axis=1, keepdims=True)
    gradient += (points - second) / np.linalg.norm(points - second, axis=1, keepdims=True)
    tangential = gradient - np.einsum("ij,ij->i", gradient, support_normals)[:, None] * support_normals
    slope = float(np.median(np.linalg.norm(tangential, axis=1)))
    width = float(levels[1] - levels[0]) / max(slope, 1e-12)
    return compact_mesh(
        lifted,
        mesh_faces,
        normals=mesh_normals,
        face_zone=face_zone,
        zone_width=width,
        zone_count=zone_count,
        corner_normals=corners,
    )
