"""Building simulation worlds from meshes, and turning results back into animation data.

Everything here is pure numpy so the Blender operators, the headless CLI and the tests share it:
soft bodies from vertices/edges/triangles, rigid piles of shape-matched clusters, ropes between two
anchors, and the rope's bone-chain rotations.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..geometry.rotation import kabsch_rotation_batch
from ..quaternions import from_matrix as matrix_to_quaternion
from ..quaternions import multiply as quaternion_multiply
from .colliders import MeshCollider
from .errors import SimulationError
from .substeps import AdaptiveStepper, SubstepLog, estimate_substeps, expected_speed
from .world import SOLVERS, World, is_closed_surface

# With Limit Stretch, edges are also kept longer than half their rest length: a cloth-like body
# crumpling at the few substeps its motion needs otherwise collapses edges to nothing (measured on
# the drop: 45-100% compression, degenerate triangles; the bound costs 0-15% more passes).
COMPRESSION_LIMIT = 0.5
# A body with volume or shape matching is held to a tighter bound: crushed 50% at few substeps, a jelly's
# shape matching pulls its top up while the ground holds its bottom, and it jumps (the 10,242-vertex
# drop: the frame after the squash ended with 2.7x the squash's energy, 0.5x without shape matching).
# Measured with the energy held (World._hold_energy), 642 / 2,562 / 10,242 vertices, 30 frames:
# substeps computed 230 / 243 / 557 at 0.5, 230 / 246 / 419 at 0.25, 293 / 469 / 505 at 0.08.
JELLY_COMPRESSION_LIMIT = 0.25
# How rigid piles solve their contacts (SimulationSettings.rigid_contacts).
RIGID_CONTACTS = ("fit", "sequential")


@dataclass(frozen=True)
class SimulationSettings:
    """Solver and material settings shared by every bake (units: metres, seconds, frames)."""

    frame_count: int = 72
    fps: float = 24.0
    substeps: int = 20
    iterations: int = 1
    solver: str = "gauss_seidel"
    stretch_compliance: float = 0.0
    use_volume: bool = True
    pressure: float = 1.0
    shape_stiffness: float = 0.0
    shape_regions: bool = False
    damping: float = 0.1
    friction: float = 0.5
    # Friction a resting contact must overcome to start sliding; None: the same as ``friction``, which
    # is then the sliding (dynamic) coefficient.
    static_friction: float | None = None
    particle_radius: float = 0.02
    use_ground: bool = True
    ground_height: float = 0.0
    # Substeps chosen per frame (see ``substeps``): ``substeps`` is then ignored.
    # Rigid bodies slower than this (m/s) for half a second fall asleep (frozen until something moving
    # comes near); 0 keeps every body awake.
    sleep_speed: float = 0.05
    # Rigid piles: frames between one body's release and the next (lowest first; 0 drops all at once).
    pour_interval: int = 0
    # Rigid piles, pouring: let each body go this far (m) above what lies beneath it, a funnel raised as
    # the heap grows (World.pour), instead of from where it waits; 0: from where it waits.
    pour_drop: float = 0.0
    # Rigid piles: how contacts are solved, "fit" (each body fitted to all its contacts at once) or
    # "sequential" (one contact after another: bodies roll, topple and keep their spin); see
    # World.enable_rigid_contacts.
    rigid_contacts: str = "fit"
    # Rigid piles, sequential contacts: rolling resistance coefficient (a torque c N R against rolling).
    rolling_resistance: float = 0.0
    # Vertices of one soft body collide with each other (a folded cloth does not pass through itself).
    self_collision: bool = False
    auto_substeps: bool = False
    max_stretch: float = 0.08
    # Soft bodies: end every frame with strain limiting at ``max_stretch`` (World.limit_strain), so
    # substeps follow the motion instead of the mesh's resolution (cloth-like bodies only, see
    # World.strain_limiting).
    limit_stretch: bool = False
    min_substeps: int = 2
    max_substeps: int = 500

    def __post_init__(self) -> None:
        problems = []
        if self.frame_count < 1:
            problems.append(f"frame count must be >= 1 (got {self.frame_count})")
        if not self.fps > 0:
            problems.append(f"frame rate must be positive (got {self.fps})")
        if self.substeps < 1 or self.iterations < 1:
            problems.append(f"substeps and iterations must be >= 1 (got {self.substeps}, {self.iterations})")
        if self.limit_stretch and not 0 < self.max_stretch:
            problems.append(f"limiting stretch needs max stretch > 0 (got {self.max_stretch})")
        if self.auto_substeps and not (0 < self.max_stretch and 1 <= self.min_substeps <= self.max_substeps):
            problems.append(
                f"automatic substeps need max stretch > 0 and 1 <= min substeps <= max substeps "
                f"(got {self.max_stretch}, {self.min_substeps}, {self.max_substeps})"
            )
        if self.solver not in SOLVERS:
            problems.append(f"solver must be one of {', '.join(SOLVERS)} (got {self.solver!r})")
        if self.stretch_compliance < 0:
            problems.append(f"stretch compliance must be >= 0 (got {self.stretch_compliance})")
        if not self.pressure > 0:
            problems.append(f"pressure must be positive (got {self.pressure})")
        if not 0 <= self.shape_stiffness <= 1:
            problems.append(f"shape stiffness must be in [0, 1] (got {self.shape_stiffness})")
        if not 0 <= self.damping < 1:
            problems.append(f"damping must be in [0, 1) (got {self.damping})")
        if self.static_friction is not None and not self.static_friction >= 0:
            problems.append(f"static friction must be >= 0 (got {self.static_friction})")
        if self.pour_interval < 0:
            problems.append(f"pour interval must be >= 0 frames (got {self.pour_interval})")
        if not 0 <= self.pour_drop < float("inf"):
            problems.append(f"pour drop must be >= 0 m (got {self.pour_drop})")
        if self.rigid_contacts not in RIGID_CONTACTS:
            problems.append(f"rigid contacts must be one of {RIGID_CONTACTS} (got {self.rigid_contacts!r})")
        if not self.rolling_resistance >= 0:
            problems.append(f"rolling resistance must be >= 0 (got {self.rolling_resistance})")
        elif self.rolling_resistance > 0 and self.rigid_contacts != "sequential":
            problems.append("rolling resistance needs sequential rigid contacts")
        if self.friction < 0 or not self.particle_radius > 0:
            problems.append(
                f"friction must be >= 0 and particle radius > 0 (got {self.friction}, {self.particle_radius})"
            )
        if problems:
            raise SimulationError("Invalid simulation settings: " + "; ".join(problems))

    @property
    def dt(self) -> float:
        return 1.0 / self.fps


@dataclass
class Body:
    """One mesh to simulate: world-space vertices, edges and triangles (indices into vertices)."""

    name: str
    vertices: NDArray[np.float64]
    edges: NDArray[np.int64] = field(default_factory=lambda: np.zeros((0, 2), np.int64))
    triangles: NDArray[np.int64] = field(default_factory=lambda: np.zeros((0, 3), np.int64))

    def __post_init__(self) -> None:
        self.vertices = np.asarray(self.vertices, dtype=np.float64).reshape(-1, 3)
        self.edges = np.asarray(self.edges, dtype=np.int64).reshape(-1, 2)
        self.triangles = np.asarray(self.triangles, dtype=np.int64).reshape(-1, 3)
        if len(self.vertices) == 0:
            raise SimulationError(f"{self.name!r} has no vertices to simulate")
        if not np.all(np.isfinite(self.vertices)):
            raise SimulationError(f"{self.name!r} has vertices at NaN or infinite positions")
        for what, array in (("edge", self.edges), ("triangle", self.triangles)):
            if array.size and (array.min() < 0 or array.max() >= len(self.vertices)):
                raise SimulationError(f"{self.name!r} has a {what} index out of range")


@dataclass(frozen=True)
class ColliderSurface:
    """A collider from a mesh: world-space vertices and triangles; ``path`` ``(F, V, 3)`` (vertices
    on frames ``first_frame``, ``first_frame + 1``, ...) when it moves during the bake."""

    name: str
    vertices: NDArray[np.float64]
    triangles: NDArray[np.int64]
    friction: float = 0.5
    path: NDArray[np.float64] | None = None
    first_frame: int = 0


# ----------------------------------------------------------------------------------- mesh helpers
def icosphere(subdivisions: int = 3, radius: float = 1.0) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Vertices and outward triangles of an icosphere (subdivisions 0 = icosahedron, 12 vertices)."""
    t = (1.0 + 5.0**0.5) / 2.0
    verts = [(-1, t, 0), (1, t, 0), (-1, -t, 0), (1, -t, 0), (0, -1, t), (0, 1, t),
             (0, -1, -t), (0, 1, -t), (t, 0, -1), (t, 0, 1), (-t, 0, -1), (-t, 0, 1)]  # fmt: skip
    faces = [(0, 11, 5), (0, 5, 1), (0, 1, 7), (0, 7, 10), (0, 10, 11), (1, 5, 9), (5, 11, 4), (11, 10, 2),
             (10, 7, 6), (7, 1, 8), (3, 9, 4), (3, 4, 2), (3, 2, 6), (3, 6, 8), (3, 8, 9), (4, 9, 5),
             (2, 4, 11), (6, 2, 10), (8, 6, 7), (9, 8, 1)]  # fmt: skip
    points = [np.array(v, dtype=np.float64) / np.linalg.norm(v) for v in verts]
    for _ in range(int(subdivisions)):
        middle_of: dict[tuple[int, int], int] = {}

        def middle(a: int, b: int, middle_of: dict[tuple[int, int], int] = middle_of) -> int:
            key = (min(a, b), max(a, b))
            if key not in middle_of:
                m = points[a] + points[b]
                points.append(m / np.linalg.norm(m))
                middle_of[key] = len(points) - 1
            return middle_of[key]

        refined = []
        for a, b, c in faces:
            ab, bc, ca = middle(a, b), middle(b, c), middle(c, a)
            refined += [(a, ab, ca), (b, bc, ab), (c, ca, bc), (ab, bc, ca)]
        faces = refined
    return np.array(points) * radius, np.array(faces, dtype=np.int64)


def triangle_edges(triangles: ArrayLike) -> NDArray[np.int64]:
    """Unique undirected edges ``(E, 2)`` of a triangle list."""
    tri = np.asarray(triangles, dtype=np.int64).reshape(-1, 3)
    pairs = np.concatenate((tri[:, [0, 1]], tri[:, [1, 2]], tri[:, [2, 0]]))
    return np.unique(np.sort(pairs, axis=1), axis=0)


def solid_inertia(
    vertices: ArrayLike, triangles: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64]] | None:
    """``(centroid, inertia per unit mass (3, 3) about it)`` of the uniform solid a closed triangle
    surface encloses (signed tetrahedra from a point inside the mesh's bounds to every triangle, so
    either winding works); None for an open or flat surface, which encloses no solid."""
    v = np.asarray(vertices, dtype=np.float64).reshape(-1, 3)
    tri = np.asarray(triangles, dtype=np.int64).reshape(-1, 3)
    if not is_closed_surface(tri):
        return None
    origin = v.mean(axis=0)  # tetrahedra from near the body: less cancellation than from the world's origin
    a, b, c = (v[tri[:, k]] - origin for k in range(3))
    volumes = np.einsum("ij,ij->i", np.cross(a, b), c) / 6.0
    volume = volumes.sum()
    if not abs(volume) > 1e-9 * float(np.ptp(v, axis=0).max()) ** 3:
        return None
    corners = a + b + c
    centroid = (volumes @ corners) / (4.0 * volume)
    # A tetrahedron (0, a, b, c) of volume V has the second moment V / 20 (a a' + b b' + c c' + s s'),
    # s = a + b + c; summed, then moved to the centroid.
    outer = sum(np.einsum("k,ki,kj->ij", volumes, x, x) for x in (a, b, c, corners)) / 20.0
    second = outer / volume - np.outer(centroid, centroid)
    return centroid + origin, np.trace(second) * np.eye(3) - second


def one_ring_clusters(vertex_count: int, edges: ArrayLike) -> list[NDArray[np.int64]]:
    """For every vertex, itself plus its edge neighbours (Müller's overlapping region clusters)."""
    e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    both = np.concatenate((e, e[:, ::-1]))
    both = both[np.lexsort((both[:, 1], both[:, 0]))]
    starts = np.searchsorted(both[:, 0], np.arange(vertex_count + 1))
    return [np.concatenate(([v], both[starts[v] : starts[v + 1], 1])) for v in range(vertex_count)]


def surface_samples(vertices: ArrayLike, triangles: ArrayLike, spacing: float) -> NDArray[np.float64]:
    """Points covering a triangle surface about ``spacing`` apart (vertices included), for collisions."""
    return surface_samples_with_normals(vertices, triangles, spacing)[0]


def surface_samples_with_normals(
    vertices: ArrayLike, triangles: ArrayLike, spacing: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``surface_samples`` and each point's mean surface normal: the mean of the unit normals of the
    faces it lies on, pointing out of a closed mesh whatever its winding. Its length says how flat the
    surface is there: 1 inside a face, less on edges and corners (0.71 and 0.58 on a cube's), 0 for a
    point on no face."""
    v = np.asarray(vertices, dtype=np.float64).reshape(-1, 3)
    tri = np.asarray(triangles, dtype=np.int64).reshape(-1, 3)
    face_normals = np.cross(v[tri[:, 1]] - v[tri[:, 0]], v[tri[:, 2]] - v[tri[:, 0]])
    if len(tri) and np.einsum("ij,ij->", np.cross(v[tri[:, 0]], v[tri[:, 1]]), v[tri[:, 2]]) < 0:
        face_normals = -face_normals  # wound inwards: normals out of the enclosed volume
    face_normals /= np.maximum(np.linalg.norm(face_normals, axis=1), 1e-300)[:, None]
    # Corner normals weighted by each face's angle at the corner: a cube's corner then gets the plain
    # mean of its three faces whichever way they were split into triangles.
    vertex_normals = np.zeros_like(v)
    vertex_weights = np.zeros(len(v))
    for k in range(3):
        one, two = v[tri[:, (k + 1) % 3]] - v[tri[:, k]], v[tri[:, (k + 2) % 3]] - v[tri[:, k]]
        cosine = np.einsum("ij,ij->i", one, two) / np.maximum(
            np.linalg.norm(one, axis=1) * np.linalg.norm(two, axis=1), 1e-300
        )
        angle = np.arccos(np.clip(cosine, -1.0, 1.0))
        np.add.at(vertex_normals, tri[:, k], face_normals * angle[:, None])
        np.add.at(vertex_weights, tri[:, k], angle)
    vertex_normals /= np.maximum(vertex_weights, 1e-300)[:, None]
    samples = [v]
    normals = [vertex_normals]
    for face, corners in enumerate(v[tri] if len(tri) else ()):
        # Grid from the corner opposite the longest edge, along its two (shorter) edges, each at its own
        # step count: a long thin face (a plank's side) gets a row of points, not a square grid.
        lengths = np.linalg.norm(corners[[1, 2, 0]] - corners[[2, 0, 1]], axis=1)  # opposite each corner
        origin = int(np.argmax(lengths))
        a, b, c = corners[origin], corners[(origin + 1) % 3], corners[(origin + 2) % 3]
        steps_b = max(1, int(np.ceil(np.linalg.norm(b - a) / spacing)))
        steps_c = max(1, int(np.ceil(np.linalg.norm(c - a) / spacing)))
        if max(steps_b, steps_c) < 2:
            continue
        i, j = np.meshgrid(np.arange(steps_b + 1), np.arange(steps_c + 1), indexing="ij")
        u, w = i / steps_b, j / steps_c
        keep = (
            (u + w <= 1.0 + 1e-9)
            & ~((i == 0) & (j == 0))
            & ~((i == steps_b) & (j == 0))
            & ~((i == 0) & (j == steps_c))
        )
        samples.append(a + u[keep][:, None] * (b - a) + w[keep][:, None] * (c - a))
        normals.append(np.tile(face_normals[face], (int(keep.sum()), 1)))
    points = np.concatenate(samples)
    # Shared edges are sampled by both neighbours: merge points closer than a tenth of the spacing.
    keys = np.round(points / (0.1 * spacing)).astype(np.int64)
    _, first, merged = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    # A merged point's normal: the mean over the faces that sampled it (a vertex already has its own).
    summed = np.zeros((len(first), 3))
    np.add.at(summed, merged.reshape(-1), np.concatenate(normals))
    count = np.bincount(merged.reshape(-1), minlength=len(first))[:, None]
    summed /= np.maximum(count, 1)
    if len(first) > 20000:
        raise SimulationError(
            f"{len(first)} collision samples: raise the particle radius (spacing {spacing:g} m is too fine)"
        )
    order = np.argsort(first)
    return points[first[order]], summed[order]


# ------------------------------------------------------------------------------------ simulation
def substep_stepper(
    world: World, settings: SimulationSettings, log: SubstepLog | None = None
) -> AdaptiveStepper:
    """The automatic-substep controller for ``world``, with its mesh-size estimate: the shortest
    inextensible edges (5th percentile) hit at the speed of a fall from the highest particle.

    The substep ceiling is ``settings.max_substeps`` or twice that estimate, whichever is higher: a
    40,962-vertex ball needs about 1,000 substeps on its impact frames to stay under 10% stretch, and
    a fixed ceiling of 500 let it stretch 13%."""
    _, _, rest = world.distance_constraints
    rest = rest[rest > 0]
    edge = float(np.percentile(rest, 5)) if len(rest) else 0.0
    positions = world.positions
    floor = settings.ground_height if settings.use_ground else float(positions[:, 2].min())
    estimate = estimate_substeps(edge, expected_speed(positions, floor), settings.fps, maximum=1_000_000)
    maximum = max(settings.max_substeps, 2 * estimate)
    return AdaptiveStepper(
        world,
        settings.dt,
        iterations=settings.iterations,
        max_stretch=settings.max_stretch,
        minimum=settings.min_substeps,
        maximum=maximum,
        estimate=estimate if edge > 0 else 0,
        log=log,
    )


def run_frames(
    world: World, settings: SimulationSettings, first_frame: int, log: SubstepLog | None = None
) -> Generator[tuple[int, NDArray[np.float64]], None, None]:
    """Step ``world`` through ``settings.frame_count`` frames after ``first_frame``, yielding
    ``(frame, positions)``. Divergence raises SimulationDivergedError naming the scene frame.

    With ``settings.auto_substeps`` the substeps are chosen per frame (``substeps.AdaptiveStepper``)
    and recorded in ``log``."""
    world.frame = int(first_frame)
    if settings.auto_substeps:
        stepper = substep_stepper(world, settings, log)
        for k in range(settings.frame_count):
            stepper.step(look_ahead=k + 1 < settings.frame_count)
            yield world.frame, world.positions
        return
    for _ in range(settings.frame_count):
        world.step(settings.dt, substeps=settings.substeps, iterations=settings.iterations)
        if log is not None:
            log.per_frame.append(settings.substeps)
        yield world.frame, world.positions


def _add_environment(
    world: World, colliders: Sequence[ColliderSurface], settings: SimulationSettings
) -> None:
    if settings.use_ground:
        world.add_ground(settings.ground_height, settings.friction, settings.static_friction)
    for surface in colliders:
        world.add_collider(
            MeshCollider.create(
                surface.vertices,
                surface.triangles,
                surface.friction,
                thickness=max(4 * settings.particle_radius, 0.05),
                path=surface.path,
                first_frame=surface.first_frame,
            )
        )


def build_softbody_world(
    bodies: Sequence[Body], colliders: Sequence[ColliderSurface], settings: SimulationSettings
) -> tuple[World, NDArray[np.int64], list[str]]:
    """A World with every body's vertices as particles. Returns ``(world, offsets, notes)``:
    body ``k`` owns particles ``offsets[k]:offsets[k+1]``; ``notes`` explain skipped features."""
    if not bodies:
        raise SimulationError("nothing to simulate: no bodies given")
    sizes = [len(b.vertices) for b in bodies]
    offsets = np.concatenate(([0], np.cumsum(sizes)))
    world = World(
        np.concatenate([b.vertices for b in bodies]), damping=settings.damping, solver=settings.solver
    )
    notes: list[str] = []
    jelly = False  # some body keeps its volume or shape (its strain limiting bounds compression tighter)
    for k, body in enumerate(bodies):
        base = offsets[k]
        edges = body.edges if len(body.edges) else triangle_edges(body.triangles)
        if len(edges):
            world.add_distance(edges[:, 0] + base, edges[:, 1] + base, compliance=settings.stretch_compliance)
        if settings.use_volume:
            if is_closed_surface(body.triangles):
                world.add_volume(body.triangles + base, pressure=settings.pressure)
                jelly = True
            else:
                notes.append(f"{body.name}: not a closed surface, so no volume constraint")
        if settings.shape_stiffness > 0 and len(body.vertices) >= 2:
            jelly = True
            if settings.shape_regions and len(edges):
                clusters = [c + base for c in one_ring_clusters(len(body.vertices), edges) if len(c) >= 2]
                world.add_shape_match(clusters, settings.shape_stiffness)
            else:
                world.add_shape_match(np.arange(base, offsets[k + 1]), settings.shape_stiffness)
    groups = np.repeat(np.arange(len(bodies)), sizes)
    world.add_particle_collisions(settings.particle_radius, groups=groups, friction=settings.friction)
    if settings.self_collision:
        radius = self_collision_radius(bodies)
        if radius > 0:
            world.add_self_collision(np.arange(len(groups)), radius, groups, settings.friction)
        else:
            notes.append("no edges, so no self collision")
    _add_environment(world, colliders, settings)
    if settings.limit_stretch:
        world.limit_strain(settings.max_stretch, JELLY_COMPRESSION_LIMIT if jelly else COMPRESSION_LIMIT)
        if not world.strain_limiting:
            blockers = " and ".join(world.strain_limiting_blockers())
            notes.append(f"Limit Stretch is off with {blockers}: the substeps keep the stretch")
    return world, offsets, notes


def self_collision_radius(bodies: Sequence[Body]) -> float:
    """0.6 of the finest body's median edge: spheres that wide at every vertex cover each triangle, so
    no triangle can pass through another without two vertices coming closer than the diameter, while
    only direct mesh neighbours (one edge apart) start closer than that and are left out."""
    medians = []
    for body in bodies:
        edges = body.edges if len(body.edges) else triangle_edges(body.triangles)
        if len(edges):
            lengths = np.linalg.norm(body.vertices[edges[:, 0]] - body.vertices[edges[:, 1]], axis=1)
            medians.append(float(np.median(lengths)))
    return 0.6 * min(medians) if medians else 0.0


def grid_sheet(
    columns: int, rows: int, width: float, height: float
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Vertices and triangles of a flat ``width`` x ``height`` sheet in the x-y plane, centred on 0."""
    if columns < 2 or rows < 2:
        raise SimulationError(f"a sheet needs at least 2 x 2 vertices, got {columns} x {rows}")
    x, y = np.meshgrid(np.linspace(-0.5, 0.5, columns) * width, np.linspace(-0.5, 0.5, rows) * height)
    vertices = np.stack((x.ravel(), y.ravel(), np.zeros(x.size)), axis=1)
    index = np.arange(columns * rows).reshape(rows, columns)
    a, b, c, d = index[:-1, :-1], index[:-1, 1:], index[1:, 1:], index[1:, :-1]
    upper, lower = np.stack((a, b, c), -1).reshape(-1, 3), np.stack((a, c, d), -1).reshape(-1, 3)
    triangles = np.concatenate((upper, lower))
    return vertices, triangles


def _thickness(vertices: NDArray[np.float64]) -> float:
    """A body's extent along its thinnest principal axis (0 for a flat or single-point body)."""
    centred = vertices - vertices.mean(axis=0)
    if len(vertices) < 4:
        return 0.0
    _, _, axes = np.linalg.svd(centred, full_matrices=False)
    return float(np.ptp(centred @ axes[-1]))


def _solid_inertia_about(body: Body, point: NDArray[np.float64]) -> NDArray[np.float64]:
    """Per unit mass, the inertia of the solid ``body`` encloses about ``point`` (its samples' centroid,
    which a sampled surface puts off the solid's a little); NaN for a body that encloses none."""
    solid = solid_inertia(body.vertices, body.triangles)
    if solid is None:
        return np.full((3, 3), np.nan)
    centroid, inertia = solid
    offset = point - centroid
    return inertia + offset @ offset * np.eye(3) - np.outer(offset, offset)


def build_rigid_world(
    bodies: Sequence[Body], colliders: Sequence[ColliderSurface], settings: SimulationSettings
) -> tuple[World, list[NDArray[np.float64]], NDArray[np.int64]]:
    """Each body becomes one rigid shape-matched cluster of surface samples (so faces collide, not
    just corners). Returns ``(world, rest_samples per body, offsets)``."""
    if not bodies:
        raise SimulationError("nothing to simulate: no bodies given")
    # Collision samples need not be finer than a twelfth of the smallest body: more only costs time.
    # But no coarser than half the thinnest body's thickness, or a plank would float (and collide) a
    # radius above the floor and a thin board pass between samples of another.
    smallest = min(float(np.ptp(b.vertices, axis=0).max()) for b in bodies)
    thinnest = min(_thickness(b.vertices) for b in bodies)
    radius = max(settings.particle_radius, smallest / 12.0)
    if thinnest > 0:
        radius = min(radius, thinnest / 2.0)
    settings = replace(settings, particle_radius=radius)
    spacing = 2.0 * settings.particle_radius
    sampled = [surface_samples_with_normals(b.vertices, b.triangles, spacing) for b in bodies]
    samples = [points for points, _ in sampled]
    sizes = [len(s) for s in samples]
    offsets = np.concatenate(([0], np.cumsum(sizes)))
    world = World(np.concatenate(samples), damping=settings.damping, solver=settings.solver)
    for k in range(len(bodies)):
        if sizes[k] < 2:
            raise SimulationError(f"{bodies[k].name!r} needs at least 2 vertices to be a rigid body")
        world.add_shape_match(np.arange(offsets[k], offsets[k + 1]), stiffness=1.0)
    world.add_particle_collisions(
        settings.particle_radius,
        groups=np.repeat(np.arange(len(bodies)), sizes),
        friction=settings.friction,
        static_friction=settings.static_friction,
    )
    surface_normals = np.concatenate([normals for _, normals in sampled])
    world.enable_rigid_contacts(
        surface_normals,
        sequential=settings.rigid_contacts == "sequential",
        solid_inertia=[
            _solid_inertia_about(body, points.mean(axis=0))
            for body, points in zip(bodies, samples, strict=True)
        ],
    )
    if settings.rolling_resistance > 0:
        world.set_rolling_resistance(settings.rolling_resistance)
    if settings.sleep_speed > 0:
        world.enable_sleeping(settings.sleep_speed, frames=max(1, round(0.5 * settings.fps)))
    _add_environment(world, colliders, settings)
    if settings.pour_interval > 0:
        # Lowest first, one every pour_interval frames, each waiting until its spot is clear.
        order = np.argsort([float(b.vertices[:, 2].min()) for b in bodies], kind="stable")
        delays = np.empty(len(bodies))
        delays[order] = np.arange(len(bodies)) * settings.pour_interval * settings.dt
        world.pour(delays, drop=settings.pour_drop)
    world.separate()  # bodies resting on the ground or on each other start there, not with a jump
    return world, samples, offsets


def rigid_transforms(
    rest: NDArray[np.float64], frames: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Best rigid motions from ``rest`` ``(N, 3)`` to each of ``frames`` ``(T, N, 3)``.

    Returns ``(R (T, 3, 3), t (T, 3))`` with ``frames[k] ~ rest @ R[k].T + t[k]``.
    """
    rest_centre = rest.mean(axis=0)
    centres = frames.mean(axis=1)
    covariance = np.einsum("tni,nj->tij", frames - centres[:, None], rest - rest_centre)
    rotations = kabsch_rotation_batch(covariance)
    return rotations, centres - rotations @ rest_centre


def rope_rest_positions(
    start: ArrayLike, end: ArrayLike, links: int, slack: float
) -> tuple[NDArray[np.float64], float]:
    """Particles of a rope of length ``slack * |end - start|`` hanging sideways between its anchors.

    The rope starts as a horizontal parabola bulging sideways with the right arc length, so it
    swings down from there when released. Returns ``(positions (links+1, 3), link length)``.
    """
    a = np.asarray(start, dtype=np.float64).reshape(3)
    b = np.asarray(end, dtype=np.float64).reshape(3)
    if links < 2:
        raise SimulationError(f"a rope needs at least 2 links, got {links}")
    span = np.linalg.norm(b - a)
    if not span > 1e-6:
        raise SimulationError("the rope's two ends are at the same place; move one anchor away")
    if slack < 1.0:
        raise SimulationError(f"rope slack must be >= 1 (length / distance between ends), got {slack}")
    axis = (b - a) / span
    side = np.cross(axis, [0.0, 0.0, 1.0])
    if np.linalg.norm(side) < 1e-6:  # a vertical rope bulges along x
        side = np.cross(axis, [0.0, 1.0, 0.0])
    side /= np.linalg.norm(side)
    s = np.linspace(0.0, 1.0, 2001)
    target = slack * span

    def shape(bulge: float, samples: NDArray[np.float64]) -> NDArray[np.float64]:
        return a + np.outer(samples, b - a) + np.outer(4.0 * bulge * samples * (1.0 - samples), side)

    low, high = 0.0, target
    for _ in range(60):  # bisection on the bulge for the wanted arc length
        mid = 0.5 * (low + high)
        length = np.sum(np.linalg.norm(np.diff(shape(mid, s), axis=0), axis=1))
        low, high = (mid, high) if length < target else (low, mid)
    dense = shape(0.5 * (low + high), s)
    arc = np.concatenate(([0.0], np.cumsum(np.linalg.norm(np.diff(dense, axis=0), axis=1))))
    wanted = np.linspace(0.0, arc[-1], links + 1)
    points = np.stack([np.interp(wanted, arc, dense[:, k]) for k in range(3)], axis=1)
    return points, target / links


def build_rope_world(
    points: NDArray[np.float64],
    colliders: Sequence[ColliderSurface],
    settings: SimulationSettings,
    start_trajectory: Callable[[float], ArrayLike] | None = None,
    end_trajectory: Callable[[float], ArrayLike] | None = None,
    pin_end: bool = True,
) -> World:
    """A rope world: a chain of distance constraints pinned at its first (and optionally last) particle.

    Trajectories ``time -> (1, 3)`` make the pins follow animated anchors. Rest lengths are the
    start shape's own chords, so bones built on that shape keep their lengths exactly.
    """
    world = World(points, damping=settings.damping, solver=settings.solver)
    count = len(points)
    world.add_distance(np.arange(count - 1), np.arange(1, count), compliance=settings.stretch_compliance)
    world.add_pin([0], start_trajectory)
    if pin_end:
        world.add_pin([count - 1], end_trajectory)
    # Links closer than twice the radius are never tested against each other: one group per 4 links
    # would still skip real contacts, so the rope only collides with the environment.
    world.particle_radius = settings.particle_radius
    _add_environment(world, colliders, settings)
    return world


def chain_pose(
    rest_points: NDArray[np.float64],
    frames: NDArray[np.float64],
    rest_rolls: NDArray[np.float64] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Pose-bone rotations for a connected bone chain following simulated points.

    Bone ``k`` runs from point ``k`` to ``k+1``. Its armature-space rotation is the shortest arc
    turning its rest direction onto its current one, ``W_k``; the local pose quaternion is then
    ``B_k = R_k^-1 W_(k-1)^-1 W_k R_k`` (``R_k`` its rest matrix, ``rest_rolls`` ``(B, 3, 3)``; the
    root uses ``W_-1 = I``). Returns ``(quaternions (T, B, 4) w first, root translation (T, 3))``
    where the root translation is in the root bone's rest frame.
    """
    rest_dirs = np.diff(rest_points, axis=0)
    rest_dirs /= np.linalg.norm(rest_dirs, axis=1, keepdims=True)
    dirs = np.diff(frames, axis=1)
    dirs /= np.maximum(np.linalg.norm(dirs, axis=2, keepdims=True), 1e-12)
    bones = len(rest_dirs)
    # Shortest arc quaternion from a to b: (1 + a.b, a x b), normalised; antiparallel picks any axis.
    dot = np.einsum("bi,tbi->tb", rest_dirs, dirs)
    cross = np.cross(np.broadcast_to(rest_dirs, dirs.shape), dirs)
    world_q = np.concatenate(((1.0 + dot)[..., None], cross), axis=-1)
    flipped = (1.0 + dot) < 1e-9
    if np.any(flipped):
        helper = np.where(np.abs(rest_dirs[:, :1]) < 0.9, [[1.0, 0.0, 0.0]], [[0.0, 1.0, 0.0]])
        perpendicular = np.cross(rest_dirs, helper)
        perpendicular /= np.linalg.norm(perpendicular, axis=1, keepdims=True)
        world_q[flipped] = np.concatenate((np.zeros((bones, 1)), perpendicular), axis=1)[
            np.nonzero(flipped)[1]
        ]
    world_q /= np.linalg.norm(world_q, axis=-1, keepdims=True)
    if rest_rolls is None:
        rest_rolls = np.broadcast_to(np.eye(3), (bones, 3, 3))
    rest_q = matrix_to_quaternion(rest_rolls)
    rest_inverse = rest_q * [1.0, -1.0, -1.0, -1.0]
    parent = np.concatenate((np.tile([1.0, 0.0, 0.0, 0.0], (len(frames), 1, 1)), world_q[:, :-1]), axis=1)
    parent_inverse = parent * [1.0, -1.0, -1.0, -1.0]
    relative = quaternion_multiply(parent_inverse, world_q)
    local = quaternion_multiply(rest_inverse, quaternion_multiply(relative, rest_q))
    root_offset = np.einsum("ji,tj->ti", rest_rolls[0], frames[:, 0] - rest_points[0])
    return local, root_offset
