"""Meshes of ellipsoidal mirror caps and flat Fresnel reflectors, and mesh ray hits (BVH or brute force)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .. import limits
from .bvh import RingLayout, TriangleBVH, brute_force_hits
from .ellipsoid import as_point, ellipsoid_from_path_length, unit_directions
from .errors import OpticsError
from .mirrors import EllipsoidMirror

STEP_FACE = -1
#: How the steps between Fresnel zones run: along the rays from the first focus, or along the normal.
RISERS = ("rays", "vertical")
_SLIVER = 0.5


@dataclass(frozen=True)
class Mesh:
    """Triangles with exact optical normals.

    ``normals`` (F, 3) are the exact surface normals at each face centre, facing the side light comes
    from; ``vertex_normals`` (V, 3) the exact normals at the vertices (None where shading stays flat);
    ``face_zone`` (F,) the Fresnel zone of each face (``STEP_FACE`` for draft / step faces, 0 for a
    single mirror); ``zone_width`` the nominal zone width in metres (0 for a single mirror);
    ``corner_normals`` (F, 3, 3) exact normals per face corner where faces meeting at a vertex need
    different ones (a zone and its step face); ``layout`` the plane and foci of a flat Fresnel plate,
    whose zones follow their rings (it only speeds traces up, see :class:`.bvh.RingLayout`).
    """

    vertices: np.ndarray
    faces: np.ndarray
    normals: np.ndarray
    face_zone: np.ndarray
    vertex_normals: np.ndarray | None = None
    zone_width: float = 0.0
    zone_count: int = 1
    corner_normals: np.ndarray | None = None
    layout: RingLayout | None = None

    def shading_normals(self) -> np.ndarray | None:
        """Exact normals per face corner (F * 3, 3), for smooth shading that renders the true surface."""
        if self.corner_normals is not None:
            return self.corner_normals.reshape(-1, 3)
        if self.vertex_normals is not None:
            return self.vertex_normals[self.faces.ravel()]
        return None


def compact_mesh(vertices: np.ndarray, faces: np.ndarray, **fields) -> Mesh:
    """A :class:`Mesh` of only the vertices its faces use (faces renumbered); ``fields`` are the rest."""
    used = np.zeros(len(vertices), dtype=bool)
    used[faces.ravel()] = True
    remap = np.cumsum(used) - 1
    return Mesh(vertices=vertices[used], faces=remap[faces], **fields)


def facet_normals(vertices: np.ndarray, faces: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Geometric unit normals (by winding) and areas of triangles."""
    corners = vertices[faces]
    cross = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    doubled = np.linalg.norm(cross, axis=1)
    safe = np.where(doubled > 0.0, doubled, 1.0)
    return cross / safe[:, None], doubled / 2.0


def _orient(vertices: np.ndarray, faces: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Faces rewound so their geometric normal agrees with ``wanted``."""
    geometric, _ = facet_normals(vertices, faces)
    flip = np.einsum("ij,ij->i", geometric, wanted) < 0.0
    oriented = faces.copy()
    oriented[flip, 1], oriented[flip, 2] = faces[flip, 2], faces[flip, 1]
    return oriented


def _grid_triangles(rows: int, columns: int, wrap: bool, offset: int = 0) -> np.ndarray:
    """Two triangles per cell of a rows x columns vertex grid (row-major), columns wrapping if asked."""
    row = np.arange(rows - 1)[:, None]
    column = np.arange(columns if wrap else columns - 1)[None, :]
    next_column = (column + 1) % columns
    a = row * columns + column
    b = row * columns + next_column
    c = (row + 1) * columns + next_column
    d = (row + 1) * columns + column
    first = np.stack([a, b, c], axis=-1).reshape(-1, 3)
    second = np.stack([a, c, d], axis=-1).reshape(-1, 3)
    return np.concatenate([first, second]) + offset


def cap_basis(axis: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    helper = np.array([0.0, 0.0, 1.0]) if abs(axis[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
    across = helper - (helper @ axis) * axis
    across /= np.linalg.norm(across)
    return across, np.cross(axis, across)


def ellipsoid_mirror_mesh(mirror: EllipsoidMirror, resolution: int = 16) -> Mesh:
    """The mirror's cap as a polar triangle mesh: ``resolution`` rings of ``4 * resolution`` segments.

    Vertices lie exactly on the ellipsoid; normals face the reflecting side (inside for concave).
    """
    if int(resolution) < 1:
        raise OpticsError(f"mesh resolution must be at least 1, got {resolution}")
    rings, segments = int(resolution), max(8, 4 * int(resolution))
    axis = mirror.cap_axis
    across, other = cap_basis(axis)
    polar = mirror.aperture * np.arange(1, rings + 1) / rings
    azimuth = 2.0 * np.pi * np.arange(segments) / segments
    ring_directions = (
        np.cos(polar)[:, None, None] * axis
        + (np.sin(polar)[:, None] * np.cos(azimuth)[None, :])[..., None] * across
        + (np.sin(polar)[:, None] * np.sin(azimuth)[None, :])[..., None] * other
    ).reshape(-1, 3)
    sphere_points = np.concatenate([axis[None, :], ring_directions])
    vertices = mirror.ellipsoid.from_sphere(sphere_points)
    spokes = np.arange(segments)
    fan = np.stack([np.zeros(segments, dtype=np.int64), 1 + spokes, 1 + (spokes + 1) % segments], axis=-1)
    faces = np.concatenate([fan, _grid_triangles(rings, segments, wrap=True, offset=1)])
    side = -1.0 if mirror.kind == "concave" else 1.0
    vertex_normals = side * mirror.ellipsoid.sphere_normals(sphere_points)
    face_centres = sphere_points[faces].mean(axis=1)
    face_centres /= np.linalg.norm(face_centres, axis=1, keepdims=True)
    normals = side * mirror.ellipsoid.sphere_normals(face_centres)
    faces = _orient(vertices, faces, normals)
    return Mesh(vertices, faces, normals, np.zeros(len(faces), dtype=np.int64), vertex_normals)


def _circle_exits(offset: np.ndarray, directions: np.ndarray, radius: float):
    """Entry and exit distances along in-plane unit ``directions`` from a point ``offset`` from a circle's
    centre (inf where the ray misses)."""
    along = directions @ offset
    disc = along * along - (offset @ offset - radius * radius)
    root = np.sqrt(np.maximum(disc, 0.0))
    return np.maximum(-along - root, 0.0), -along + root


def _sum_of_distances(points: np.ndarray, f1: np.ndarray, f2: np.ndarray) -> np.ndarray:
    return np.linalg.norm(points - f1, axis=-1) + np.linalg.norm(points - f2, axis=-1)


def _confocal_normals(points: np.ndarray, f1: np.ndarray, f2: np.ndarray) -> np.ndarray:
    """Unit normals of the confocal ellipsoids through ``points``, turned towards ``f1``."""
    to_first = points - f1
    to_second = points - f2
    gradient = to_first / np.linalg.norm(to_first, axis=1, keepdims=True)
    gradient += to_second / np.linalg.norm(to_second, axis=1, keepdims=True)
    gradient /= np.linalg.norm(gradient, axis=1, keepdims=True)
    towards = np.einsum("ij,ij->i", gradient, f1 - points) < 0.0
    gradient[towards] *= -1.0
    return gradient


def _lift(ellipsoid, centre, directions, normal, distances):
    """Heights above the plate points ``centre + distances * directions`` of the ellipsoid sheet that meets
    the plate at the last row; per column, so it stays one continuous sheet where the upper and lower
    halves are equally close. Clipped-away cells outside the ellipsoid get 0 (their faces are dropped)."""
    rows, columns = distances.shape
    points = (centre + distances[..., None] * directions[None, :, :]).reshape(-1, 3)
    near, far = ellipsoid.line_roots(points, np.broadcast_to(normal, points.shape))
    near, far = near.reshape(rows, columns), far.reshape(rows, columns)
    use_near = np.abs(near[-1]) <= np.abs(far[-1])
    lift = np.where(use_near[None, :], near, far)
    return np.where(np.isfinite(lift), lift, 0.0)


# Measured building plates on a 2-core machine (numpy roots + Blender mesh), with margin.
FRESNEL_VERTICES_PER_SECOND = 50_000.0
FRESNEL_BYTES_PER_VERTEX = 400.0


def _check_plate_size(zone_count: int, segments: int, zone_steps: int) -> None:
    # Every zone row is a strip of quads around the plate (step faces and louvre sides come on top);
    # each zone also solves its own ellipsoid over every column, worth about 50 vertices of work.
    vertices = float(zone_count) * (zone_steps + 1) * (segments + 1)
    hint = "use fewer zones, segments or zone rows (or a wider zone width)"
    plate = f"a Fresnel plate of {zone_count} zones x {segments} segments x {zone_steps} rows"
    limits.check_memory(plate, vertices, FRESNEL_BYTES_PER_VERTEX, hint)
    limits.check_time(plate, vertices + 50.0 * zone_count, FRESNEL_VERTICES_PER_SECOND, hint)


def _lift_points(ellipsoid, plate_points, normal):
    """Heights along the plate normal from ``plate_points`` (rows, columns, 3) to the ellipsoid sheet
    that meets the plate at the last row (per column, as :func:`_lift`); 0 where the line misses."""
    rows, columns, _ = plate_points.shape
    points = plate_points.reshape(-1, 3)
    near, far = ellipsoid.line_roots(points, np.broadcast_to(normal, points.shape))
    near, far = near.reshape(rows, columns), far.reshape(rows, columns)
    use_near = np.abs(near[-1]) <= np.abs(far[-1])
    lift = np.where(use_near[None, :], near, far)
    return np.where(np.isfinite(lift), lift, 0.0)


def _ray_riser_starts(ellipsoid, source, edge, inner_plate, outer_plate, centre, normal):
    """Plate points (columns, 3) under where the rays from ``source`` over the previous zone's outer
    ``edge`` meet this zone's ``ellipsoid``: a zone starting there has step faces along those rays.

    Where that point lies beyond (or within a sliver of) the zone's outer end, the zone gets (almost)
    no light from ``source`` in that column: it collapses onto the previous edge. Returns ``(plate
    starts, collapse points, collapsed mask)``."""
    along = edge - source
    along /= np.linalg.norm(along, axis=1, keepdims=True)
    _, far = ellipsoid.line_roots(np.broadcast_to(source, along.shape), along)
    meet = source + np.where(np.isfinite(far), far, 0.0)[:, None] * along
    below = meet - ((meet - centre) @ normal)[:, None] * normal
    span = outer_plate - inner_plate
    length_squared = np.einsum("ij,ij->i", span, span)
    # Position of the start along the column's radial line, in units of the zone's span (0 inner, 1 outer).
    position = np.einsum("ij,ij->i", below - inner_plate, span) / np.maximum(length_squared, 1e-300)
    usable = np.isfinite(far) & (length_squared > 0.0)
    # A sliver of zone left past the step (under half its span) is dropped with the rest:
    # its few, long facets would bend the light far more than the zone's width.
    collapsed = usable & (position >= 1.0 - _SLIVER)
    starts = np.where((usable & ~collapsed)[:, None], below, inner_plate)
    # A zone the rim cuts off in a column (entirely, or all but a sliver) collapses onto the previous
    # zone's edge there: no step, no facet, and nothing outside the rim.
    empty = length_squared <= 0.0
    return starts, edge, collapsed | empty


def fresnel_reflector(
    f1,
    f2,
    plane_point,
    plane_normal,
    radius: float,
    zones: int = 24,
    *,
    zone_width: float | None = None,
    segments: int = 96,
    zone_steps: int = 3,
    draft: bool = True,
    thickness: float | None = None,
    risers: str = "rays",
) -> Mesh:
    """A flat Fresnel reflector: a disk of ``radius`` in the plane, cut into zones that are slices of
    confocal ellipsoids with foci ``f1`` and ``f2``, so every zone reflects light from one focus to the
    other.

    Zone ``k`` covers the plate where the focus-distance sum lies between two levels. Foci on the same
    side make a mirror: each zone's surface is the confocal ellipsoid of the zone's outer level, lifted off
    the plate along its normal so it meets the plate at its outer edge, and ``draft`` adds the step faces
    between zones. Foci on opposite sides make the seed's lens look: each zone is the band of its
    ellipsoid inside a slab of ``thickness`` (default a tenth of the radius) centred on the plate, a
    louvre that reflects the light crossing it towards the other focus (light between louvres passes
    straight). ``zone_width`` (metres, along the plate's longest radius from its optical centre)
    overrides ``zones``. Each zone has ``zone_steps`` rows and ``segments`` columns of quads.

    ``risers`` shapes the steps between zones of a same-side plate: ``"rays"`` (default) starts each
    zone where the ray from ``f1`` over the previous zone's outer edge meets the zone's ellipsoid, so
    every step face contains the rays from ``f1`` (edge-on to the light: it catches none of it, and no
    light is lost); ``"vertical"`` starts it straight below that edge (along the plate normal), the
    simple-to-cut profile whose steps catch part of the light and send it elsewhere.
    """
    first, second = as_point(f1, "first focus"), as_point(f2, "second focus")
    origin = as_point(plane_point, "plate point")
    normal = unit_directions(plane_normal, "plate normal")[0]
    radius = float(radius)
    if not np.isfinite(radius) or radius <= 0.0:
        raise OpticsError(f"plate radius must be positive, got {radius}")
    separation = float(np.linalg.norm(second - first))
    scale = max(separation, radius, 1e-300)
    if separation <= 1e-12 * max(scale, 1.0):
        raise OpticsError("the two foci coincide; move one of them")
    height_first = float((first - origin) @ normal)
    height_second = float((second - origin) @ normal)
    for label, height in (("first", height_first), ("second", height_second)):
        if abs(height) <= 1e-9 * scale:
            raise OpticsError(f"the {label} focus lies in the plate plane; move it off the plate")
    if risers not in RISERS:
        raise OpticsError(f"risers must be one of {', '.join(RISERS)}, got {risers!r}")
    if int(segments) < 8 or int(zone_steps) < 1:
        raise OpticsError("a Fresnel plate needs at least 8 segments and 1 step per zone")
    segments, zone_steps = int(segments), int(zone_steps)
    # Sizes first, before any array of them is allocated; the zone count from a zone width comes later.
    _check_plate_size(1 if zone_width is not None else max(int(zones), 1), segments, zone_steps)

    # The optical centre minimises the focus-distance sum over the plane (Fermat): where the straight
    # path from f1 to f2 (or to f2's mirror image, same side) crosses the plate. The sum grows
    # monotonically along every ray from it, so zone edges are single roots along those rays.
    same_side = height_first * height_second > 0.0
    image = second - 2.0 * height_second * normal if same_side else second
    image_height = float((image - origin) @ normal)
    centre = first + (image - first) * (height_first / (height_first - image_height))
    across, other = cap_basis(normal)
    offset = np.array([(centre - origin) @ across, (centre - origin) @ other])

    rim_angles = np.linspace(0.0, 2.0 * np.pi, 4096, endpoint=False)
    rim = origin + radius * (np.cos(rim_angles)[:, None] * across + np.sin(rim_angles)[:, None] * other)
    rim_sums = _sum_of_distances(rim, first, second)
    centre_inside = float(np.linalg.norm(offset)) < radius
    sum_low = float(_sum_of_distances(centre, first, second)) if centre_inside else float(rim_sums.min())
    sum_high = float(rim_sums.max())

    if centre_inside:
        angles = 2.0 * np.pi * np.arange(segments) / segments
        wrap = True
    else:
        towards = np.arctan2(-offset[1], -offset[0])
        half_width = np.arcsin(min(1.0, radius / np.linalg.norm(offset))) * (1.0 - 1e-9)
        angles = towards + np.linspace(-half_width, half_width, segments + 1)
        wrap = False
    plane_directions = np.stack([np.cos(angles), np.sin(angles)], axis=-1)
    world_directions = plane_directions[:, :1] * across + plane_directions[:, 1:] * other
    inner, outer = _circle_exits(offset, plane_directions, radius)

    reference_point = rim[int(np.argmax(rim_sums))]
    reference = reference_point - centre
    reference_length = float(np.linalg.norm(reference))
    reference_unit = reference / reference_length
    reference_inner, _ = _circle_exits(
        offset, np.array([[reference_unit @ across, reference_unit @ other]]), radius
    )
    start = float(reference_inner[0])
    span = reference_length - start
    if zone_width is not None:
        if not np.isfinite(zone_width) or zone_width <= 0.0:
            raise OpticsError(f"zone width must be positive, got {zone_width}")
        zone_count = max(1, int(np.ceil(span / zone_width)))
    else:
        zone_count = int(zones)
        if zone_count < 1:
            raise OpticsError(f"a Fresnel plate needs at least one zone, got {zones}")
    _check_plate_size(zone_count, segments, zone_steps)
    radii = start + span * np.arange(zone_count + 1) / zone_count
    levels = _sum_of_distances(centre + radii[:, None] * reference_unit, first, second)
    levels[0] = sum_low
    levels[-1] = sum_high + 1e-9 * scale
    if np.any(np.diff(levels) <= 0.0):
        raise OpticsError("zones too narrow for this plate: use fewer zones or a wider zone width")

    boundaries = [inner]
    ellipsoids = []
    columns = len(angles)
    centres = np.repeat(centre[None, :], columns, axis=0)
    for level in levels[1:]:
        ellipsoid = ellipsoid_from_path_length(first, second, float(level))
        ellipsoids.append(ellipsoid)
        _, far = ellipsoid.line_roots(centres, world_directions)
        boundaries.append(np.clip(far, inner, outer))

    vertex_blocks, face_blocks, zone_blocks = [], [], []
    shadow_blocks = []  # vertices of zone columns no light from f1 reaches (collapsed onto a step)
    count = 0
    fraction = np.arange(zone_steps + 1)[:, None] / zone_steps
    if not same_side:
        slab = 0.1 * radius if thickness is None else float(thickness)
        if not np.isfinite(slab) or slab <= 0.0 or slab / 2.0 >= min(abs(height_first), abs(height_second)):
            raise OpticsError(
                f"plate thickness {slab:.4g} must be positive and keep both foci outside the slab"
            )
        return _louvres(first, second, origin, normal, radius, angles, wrap, ellipsoids, slab, fraction, span)
    previous_edge = None
    for zone, ellipsoid in enumerate(ellipsoids):
        inner_plate = centre + boundaries[zone][:, None] * world_directions
        outer_plate = centre + boundaries[zone + 1][:, None] * world_directions
        collapsed = None
        if risers == "rays" and previous_edge is not None:
            inner_plate, collapse_points, collapsed = _ray_riser_starts(
                ellipsoid, first, previous_edge, inner_plate, outer_plate, centre, normal
            )
        plate_points = inner_plate[None] + (outer_plate - inner_plate)[None] * fraction[..., None]
        lift = _lift_points(ellipsoid, plate_points, normal)
        zone_grid = plate_points + lift[..., None] * normal
        if collapsed is not None and np.any(collapsed):
            zone_grid[:, collapsed] = collapse_points[collapsed][None]
        zone_vertices = zone_grid.reshape(-1, 3)
        previous_edge = zone_vertices[-columns:]
        triangles = _grid_triangles(zone_steps + 1, columns, wrap)
        vertex_blocks.append(zone_vertices)
        shadowed = np.zeros((zone_steps + 1, columns), dtype=bool)
        if collapsed is not None:
            shadowed[:, collapsed] = True
        shadow_blocks.append(shadowed.reshape(-1))
        face_blocks.append(triangles + count)
        zone_blocks.append(np.full(len(triangles), zone))
        if draft and zone > 0:
            previous_outer = count - columns  # last row of the previous zone
            top = np.arange(columns)
            next_top = (top + 1) % columns if wrap else top + 1
            if not wrap:
                top, next_top = top[:-1], next_top[:-1]
            lower = previous_outer + top
            lower_next = previous_outer + next_top
            upper = count + top
            upper_next = count + next_top
            walls = np.concatenate(
                [np.stack([lower, lower_next, upper_next], -1), np.stack([lower, upper_next, upper], -1)]
            )
            face_blocks.append(walls)
            zone_blocks.append(np.full(len(walls), STEP_FACE))
        count += len(zone_vertices)

    vertices = np.concatenate(vertex_blocks)
    faces = np.concatenate(face_blocks).astype(np.int64)
    face_zone = np.concatenate(zone_blocks).astype(np.int64)
    _, areas = facet_normals(vertices, faces)
    keep = areas > (1e-12 * scale) ** 2 * 1e6
    # Zone faces touching a shadowed column would bridge off the ellipsoid; they get no light anyway.
    shadow = np.concatenate(shadow_blocks)
    keep &= ~((face_zone != STEP_FACE) & np.any(shadow[faces], axis=1))
    faces, face_zone = faces[keep], face_zone[keep]
    if len(faces) == 0:
        raise OpticsError("the Fresnel plate has no faces: check the radius and the foci")

    centroids = vertices[faces].mean(axis=1)
    normals = _confocal_normals(centroids, first, second)
    geometric, _ = facet_normals(vertices, faces)
    walls = face_zone == STEP_FACE
    if np.any(walls):
        facing = np.einsum("ij,ij->i", geometric[walls], first - centroids[walls]) < 0.0
        wall_normals = geometric[walls]
        wall_normals[facing] *= -1.0
        normals[walls] = wall_normals
    faces = _orient(vertices, faces, normals)
    corners = _confocal_normals(vertices[faces].reshape(-1, 3), first, second).reshape(-1, 3, 3)
    corners[walls] = normals[walls][:, None, :]

    return compact_mesh(
        vertices,
        faces,
        normals=normals,
        face_zone=face_zone,
        zone_width=span / zone_count,
        zone_count=zone_count,
        corner_normals=corners,
        layout=RingLayout(origin, normal, first, second),
    )


def _louvres(first, second, origin, normal, radius, angles, wrap, ellipsoids, slab, fraction, span) -> Mesh:
    """Foci on opposite sides: each zone is its ellipsoid's band inside the slab, row by row a level
    curve of a plane parallel to the plate, found along rays from that plane's optical centre."""
    across, other = cap_basis(normal)
    heights = (fraction[:, 0] - 0.5) * slab
    height_first = float((first - origin) @ normal)
    height_second = float((second - origin) @ normal)
    row_centres = first + np.outer((height_first - heights) / (height_first - height_second), second - first)
    directions = np.cos(angles)[:, None] * across + np.sin(angles)[:, None] * other
    rows, columns = len(heights), len(angles)
    starts = np.repeat(row_centres, columns, axis=0)
    ray_directions = np.tile(directions, (rows, 1))
    triangles = _grid_triangles(rows, columns, wrap)
    vertex_blocks, face_blocks, zone_blocks, valid_blocks = [], [], [], []
    for zone, ellipsoid in enumerate(ellipsoids):
        _, far = ellipsoid.line_roots(starts, ray_directions)
        points = starts + np.where(np.isfinite(far), far, 0.0)[:, None] * ray_directions
        from_axis = points - origin
        from_axis -= np.outer(from_axis @ normal, normal)
        valid = np.isfinite(far) & (np.linalg.norm(from_axis, axis=1) <= radius * (1.0 + 1e-12))
        face_blocks.append(triangles + zone * rows * columns)
        zone_blocks.append(np.full(len(triangles), zone))
        vertex_blocks.append(points)
        valid_blocks.append(valid)
    vertices = np.concatenate(vertex_blocks)
    valid = np.concatenate(valid_blocks)
    faces = np.concatenate(face_blocks).astype(np.int64)
    face_zone = np.concatenate(zone_blocks).astype(np.int64)
    _, areas = facet_normals(vertices, faces)
    keep = np.all(valid[faces], axis=1) & (areas > 0.0)
    faces, face_zone = faces[keep], face_zone[keep]
    if len(faces) == 0:
        raise OpticsError("the Fresnel plate has no faces: check the radius and the foci")
    normals = _confocal_normals(vertices[faces].mean(axis=1), first, second)
    faces = _orient(vertices, faces, normals)
    corners = _confocal_normals(vertices[faces].reshape(-1, 3), first, second).reshape(-1, 3, 3)
    return compact_mesh(
        vertices,
        faces,
        normals=normals,
        face_zone=face_zone,
        zone_width=span / len(ellipsoids),
        zone_count=len(ellipsoids),
        corner_normals=corners,
        layout=RingLayout(origin, normal, first, second),
    )


@dataclass(frozen=True)
class MeshSurface:
    """A mesh as a traceable two-sided mirror.

    Hits come from a bounding-volume hierarchy over the triangles (:mod:`.bvh`, built on first use):
    O(rays x log triangles), and ray for ray the same as ``brute_force=True``, which tests every ray
    against every triangle (kept as the reference).
    """

    mesh: Mesh
    brute_force: bool = False

    @cached_property
    def tree(self) -> TriangleBVH:
        return TriangleBVH(self.mesh.vertices, self.mesh.faces, layout=self.mesh.layout)

    @cached_property
    def facet_normals(self) -> np.ndarray:
        return facet_normals(self.mesh.vertices, self.mesh.faces)[0]

    def hits(self, origins, directions) -> tuple[np.ndarray, np.ndarray]:
        """Nearest ``(t, face)`` per ray (inf and -1 on a miss)."""
        origins = np.asarray(origins, dtype=np.float64)
        directions = np.asarray(directions, dtype=np.float64)
        if self.brute_force:
            return brute_force_hits(self.mesh.vertices, self.mesh.faces, origins, directions)
        return self.tree.intersect(origins, directions)

    def intersect(self, origins, directions):
        origins = np.asarray(origins, dtype=np.float64)
        directions = np.asarray(directions, dtype=np.float64)
        best_t, best_face = self.hits(origins, directions)
        hit = np.isfinite(best_t)
        points = origins + np.where(hit, best_t, 0.0)[:, None] * directions
        normals = np.where(hit[:, None], self.facet_normals[np.maximum(best_face, 0)], 0.0)
        return best_t, points, normals
