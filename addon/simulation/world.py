"""A position-based particle world: Verlet-style integration, XPBD constraints, shape matching.

Each ``step`` advances one frame in ``substeps`` small steps ("small steps", Macklin et al. 2019):
predict positions from velocity and gravity, project the constraints ``iterations`` times, then
derive velocities from the displacement (position Verlet). Distance and volume constraints use
XPBD compliance (Macklin et al. 2016), so their stiffness does not depend on the substep count.

Two projection orders, as in the seed's Constraints post:

* ``"gauss_seidel"``: constraints are applied one after another, each seeing the previous
  corrections. It converges faster (stiffer ropes) but the result depends on the order. It is
  vectorised by a greedy edge colouring: within one colour no two constraints share a particle, so
  a colour is one numpy batch and the whole sweep equals a sequential sweep in colour order.
  When the distance constraints form chains only (ropes), each projection instead solves every chain
  exactly with one tridiagonal solve (:mod:`.chains`), which keeps ropes inextensible.
* ``"jacobi"``: every constraint is evaluated from the same positions and each particle moves by
  the average of its corrections. The result does not depend on constraint order, and it is
  "squishier" (slower convergence per iteration).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..geometry.rotation import (
    kabsch_rotation_batch,
    matrix_to_quaternion,
    polar_rotation_batch,
    polar_rotation_one,
    quaternion_to_matrix,
)
from ..geometry.small_systems import solve_spd_batch
from .chains import ChainSolver, chain_paths
from .colliders import BoxCollider, MeshCollider, SphereCollider
from .errors import SimulationDivergedError, SimulationError
from .spatial_hash import close_pairs, close_pairs_between_groups

SOLVERS = ("gauss_seidel", "jacobi")
Trajectory = Callable[[float], ArrayLike]
_TINY = 1e-12
# Warm-started Müller iterations per projection; the note measures 0.19 deg error after 3 at 5 deg/frame,
# and a substep turns far less than a frame.
_POLAR_ITERATIONS = 2
# A surface sample whose mean normal is this long lies inside one face (a cube's edge: 0.71).
_FACE = 0.95
# A contact whose normal is within 45 degrees of the vertical supports the body above it.
_SUPPORT = 0.7
# A sleeping body is woken by a body this many times faster than the sleep speed coming near.
WAKE_FACTOR = 10.0
# Contacts are gathered this many particle radii before they touch (see World._solve_rigid_contacts).
_CONTACT_MARGIN = 0.5
# Per projection: Gauss-Seidel sweeps over the contacts' normal corrections (with 2 a box sliding on the
# ground carried only 89% of its weight, so its friction fell short), then static friction per contact
# patch; then once more (one sweep, and friction up to what is left of mu_s times the load) after the
# friction's own push has tilted the bodies. Measured on a 0.3 m box with mu_s 0.6 (arctan: 31 deg):
# it holds at 25 deg, creeps 3-9 mm/s at 29-34 deg, slides at 37 and up.
_NORMAL_SWEEPS = (3, 1)
# Contact patches with more contacts than this are reduced to the ones that span them (_patch_corners).
_PATCH_CONTACTS = 16
# Bodies meeting faster than this (m/s) collide: both take their share, the lower one is pushed too.
_IMPACT_SPEED = 1.0
# Self-collision pairs are searched this many collision radii wider than the contact distance, and
# searched again once a particle has moved that far.
SELF_COLLISION_MARGIN = 0.5
# Up to this many rows the (N, 3) products of whole-body shape matching go to BLAS (5x faster than
# einsum at 2,562); above it OpenBLAS starts threads, which cost 6-9x einsum here (10k-40k, 2 busy cores),
# and a (40k, 3) x (3, 3) matmul 20 ms instead of 1.
_BLAS_ROWS = 4096
# A colour's work buffers (see World._colour_plan).
_WORK = ("delta", "square", "length", "coef", "moves")
# Strain limiting (World.strain_limit) pulls an edge past the limit back to this fraction of it: an edge
# pulled exactly to the limit is pushed over it again by its neighbours' corrections (measured on the
# 642-vertex drop: ~300 passes per frame at the limit itself, ~5 at 0.9 of it).
_STRAIN_TARGET = 0.9
# Over-relaxation of the strain-limiting passes; each edge's correction is divided by the number of
# corrected edges at the busier of its two ends, which keeps every pass stable and momentum exact.
_STRAIN_RELAXATION = 1.9
# A strain-limiting pass costs about as much fixed numpy overhead as projecting this many edges
# (measured at 642 vertices: ~100 us a pass, ~110 us a substep of 1,920 edges).
_PASS_EDGES = 1500


def _scaled_pair(delta: NDArray[np.float64], coefficients: NDArray[np.float64]) -> NDArray[np.float64]:
    """``delta[None] * coefficients[:, :, None]`` for delta ``(m, 3)`` and coefficients ``(2, m)``,
    built from same-shape products (the broadcast form is about 4x slower in numpy)."""
    scaled = np.repeat(coefficients, 3, axis=1).reshape(2, -1, 3)
    scaled[0] *= delta
    scaled[1] *= delta
    return scaled


def _friction_shrink(
    slip: NDArray[np.float64], depth: NDArray[np.float64], dynamic: float, static: float
) -> NDArray[np.float64]:
    """The fraction of each contact's tangential slip ``slip`` (lengths) that friction cancels this
    substep: all of it while it is under ``static * depth`` (the contact sticks), otherwise
    ``dynamic * depth`` of it (it slides, Macklin et al. 2014, section 6.1)."""
    sliding = np.minimum(1.0, dynamic * depth / np.maximum(slip, _TINY))
    return np.where(slip <= static * depth, 1.0, sliding)


def _edge_colouring(first: NDArray[np.int64], second: NDArray[np.int64]) -> list[NDArray[np.int64]]:
    """Greedy edge colouring: lists of constraint indices in which no particle appears twice."""
    used: dict[int, int] = {}
    colours = np.empty(len(first), dtype=np.int64)
    for k, (a, b) in enumerate(zip(first.tolist(), second.tolist(), strict=True)):
        mask = used.get(a, 0) | used.get(b, 0)
        colour = (~mask & (mask + 1)).bit_length() - 1  # lowest free colour
        colours[k] = colour
        used[a] = used.get(a, 0) | (1 << colour)
        used[b] = used.get(b, 0) | (1 << colour)
    order = np.argsort(colours, kind="stable")
    bounds = np.searchsorted(colours[order], np.arange(colours.max() + 2 if len(colours) else 1))
    return [order[bounds[c] : bounds[c + 1]] for c in range(len(bounds) - 1) if bounds[c + 1] > bounds[c]]


def _body_batches(
    first: NDArray[np.int64], second: NDArray[np.int64], nobody: int
) -> list[NDArray[np.int64]]:
    """Split contacts (in priority order) between bodies ``first`` and ``second`` into batches in which
    no body appears twice (``nobody``: an immovable side, which may). Each round takes every contact
    that comes first among the remaining ones of both its bodies, so each body's contacts are solved
    in their order."""
    remaining = np.arange(len(first))
    batches = []
    slots = np.empty(nobody + 1, np.int64)
    while len(remaining):
        a, b = first[remaining], second[remaining]
        slots.fill(len(first))
        rank = np.arange(len(remaining))
        np.minimum.at(slots, b, rank)
        np.minimum.at(slots, a, rank)
        slots[nobody] = -1
        chosen = ((slots[a] == rank) | (a == nobody)) & ((slots[b] == rank) | (b == nobody))
        batches.append(remaining[chosen])
        remaining = remaining[~chosen]
    return batches


def _patch_corners(patch: NDArray, points: NDArray, normal: NDArray, depth: NDArray) -> NDArray[np.int64]:
    """Indices of the contacts that span each contact patch (contacts with the same ``patch`` label):
    its deepest one and the outermost ones in eight directions across the patch's mean normal (a
    square patch: its corners and edge ends), at most nine per patch. A rigid body held at those is
    held at every point between them."""
    labels, group = np.unique(patch, return_inverse=True)
    mean = np.stack([np.bincount(group, normal[:, k], minlength=len(labels)) for k in range(3)], axis=1)
    mean /= np.maximum(np.linalg.norm(mean, axis=1), _TINY)[:, None]
    # Two directions across each patch's normal.
    helper = np.where(np.abs(mean[:, :1]) < 0.9, [[1.0, 0.0, 0.0]], [[0.0, 1.0, 0.0]])
    across = np.cross(mean, helper)
    across /= np.maximum(np.linalg.norm(across, axis=1), _TINY)[:, None]
    other = np.cross(mean, across)
    u = np.einsum("ij,ij->i", points, across[group])
    v = np.einsum("ij,ij->i", points, other[group])
    # Patches of a cube's face or less are kept whole.
    chosen = [np.flatnonzero(np.bincount(group)[group] <= _PATCH_CONTACTS)]
    for score in (depth, u, -u, v, -v, u + v, -u - v, u - v, v - u):
        order = np.lexsort((score, group))
        last = np.ones(len(order), bool)
        last[:-1] = group[order][1:] != group[order][:-1]
        chosen.append(order[last])
    return np.unique(np.concatenate(chosen))


def _cross_rows(
    a: NDArray[np.float64],
    b: NDArray[np.float64],
    out: NDArray[np.float64] | None = None,
    scratch: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """Row-wise ``a x b`` for ``(m, 3)`` arrays (np.cross spends more on axis bookkeeping than on
    the arithmetic at the sizes a solver step sees); ``out`` ``(m, 3)`` and ``scratch`` ``(m,)``
    reuse buffers."""
    out = np.empty_like(a) if out is None else out
    scratch = np.empty(len(a)) if scratch is None else scratch
    ax, ay, az = a[:, 0], a[:, 1], a[:, 2]
    bx, by, bz = b[:, 0], b[:, 1], b[:, 2]
    for column, (first, second, third, fourth) in enumerate(
        ((ay, bz, az, by), (az, bx, ax, bz), (ax, by, ay, bx))
    ):
        np.multiply(first, second, out=out[:, column])
        np.multiply(third, fourth, out=scratch)
        out[:, column] -= scratch
    return out


def _is_closed(triangles: NDArray[np.int64]) -> bool:
    """Whether every directed edge of the triangles appears once and its reverse once (a closed,
    consistently oriented surface: every vertex's fan of triangles closes)."""
    directed = triangles[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2)
    size = int(triangles.max()) + 1
    forward = np.sort(directed[:, 0] * size + directed[:, 1])
    backward = np.sort(directed[:, 1] * size + directed[:, 0])
    return bool(np.all(forward[1:] != forward[:-1]) and np.array_equal(forward, backward))


class World:
    """Particles with constraints. Positions in metres, z up, time in seconds.

    ``inverse_masses`` ``(N,)`` (default all 1); 0 makes a particle immovable. ``damping`` is the
    fraction of velocity lost per second (0 = none). ``max_speed`` (m/s) is where a run is declared
    diverged. ``frame`` is the frame number of the current positions; ``step`` computes ``frame + 1``.
    """

    def __init__(
        self,
        positions: ArrayLike,
        inverse_masses: ArrayLike | None = None,
        gravity: ArrayLike = (0.0, 0.0, -9.81),
        damping: float = 0.0,
        solver: str = "gauss_seidel",
        max_speed: float = 1000.0,
        frame: int = 0,
        jacobi_relaxation: float = 1.0,
    ) -> None:
        x = np.array(positions, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != 3 or len(x) == 0:
            raise SimulationError(f"positions must be an (N, 3) array with N >= 1, got shape {x.shape}")
        if not np.all(np.isfinite(x)):
            raise SimulationError("positions contain NaN or infinity")
        n = len(x)
        if inverse_masses is None:
            w = np.ones(n)
        else:
            w = np.array(inverse_masses, dtype=np.float64).reshape(-1)
            if w.shape != (n,) or not np.all(np.isfinite(w)) or np.any(w < 0):
                raise SimulationError(f"inverse_masses must be {n} finite numbers >= 0")
        g = np.asarray(gravity, dtype=np.float64).reshape(-1)
        if g.shape != (3,) or not np.all(np.isfinite(g)):
            raise SimulationError(f"gravity must be three finite numbers, got {gravity!r}")
        if not 0.0 <= damping < 1.0:
            raise SimulationError(f"damping must be in [0, 1), got {damping}")
        if not 0.0 < jacobi_relaxation < 2.0:
            raise SimulationError(f"jacobi_relaxation must be in (0, 2), got {jacobi_relaxation}")
        self._check_solver(solver)
        self._x = x
        self._v = np.zeros_like(x)
        self._w = w
        self.gravity = g
        self.damping = float(damping)
        self.solver = solver
        self.max_speed = float(max_speed)
        self.frame = int(frame)
        self.time = 0.0
        self.jacobi_relaxation = float(jacobi_relaxation)
        self.particle_radius = 0.0
        self.particle_friction = 0.0
        # Friction needed to start sliding (static), at most the sliding (dynamic) one's equal or more.
        self.particle_static_friction = 0.0
        self._dist = {
            "i": np.zeros(0, np.int64),
            "j": np.zeros(0, np.int64),
            "rest": np.zeros(0),
            "compliance": np.zeros(0),
        }
        self._colours: list[NDArray[np.int64]] | None = None
        # (i, j, rest) of the inextensible edges whose stretch max_stretch reports; None: to be found.
        self._stiff: tuple | None = None
        # The chain solver when the distance constraints are chains only, False when not, None: not known.
        self._chains: ChainSolver | bool | None = None
        # (colours, inverse masses, {h: plan}) of the Gauss-Seidel steps: rebuilt when colours or masses
        # change; one plan per substep length, so adaptive substeps switch between them for free.
        self._colour_plan_cache: tuple | None = None
        self._pins: list[tuple[NDArray[np.int64], Trajectory | None]] = []
        self._ground: tuple[float, float, float] | None = None
        self._colliders: list[SphereCollider | BoxCollider | MeshCollider] = []
        self._collision_groups: NDArray[np.int64] | None = None
        self._collide_particles = False
        self._self_collision: dict | None = None
        self._sleep: dict | None = None
        # (awake clusters, awake particles, held particles) while some bodies sleep or wait to be
        # poured; None: to be rebuilt (the set of awake bodies changed).
        self._active_clusters: tuple | None = None
        self._rigid: dict | None = None
        self._clusters: dict[str, NDArray] | None = None
        self._volumes: list[dict] = []
        # Strain limiting (0: off; see strain_limiting and _limit_strain): at the end of every frame,
        # inextensible edges stretched more than strain_limit (or compressed more than
        # compression_limit, fractions of the rest length) are brought back inside it, on those
        # edges and their neighbours only, in at most strain_passes passes.
        self.strain_limit = 0.0
        self.compression_limit = 0.0
        self.strain_passes = 100
        # The last frame's strain limiting: passes, whether every edge ended inside the limits, and
        # its cost in edge projections (see _limit_strain).
        self.last_strain_limiting: tuple[int, bool, int] = (0, True, 0)
        self._strain_plan: dict | None = None

    # ----------------------------------------------------------------------------------------- state
    @property
    def positions(self) -> NDArray[np.float64]:
        """Current particle positions ``(N, 3)`` (a copy)."""
        return self._x.copy()

    @property
    def velocities(self) -> NDArray[np.float64]:
        """Current particle velocities ``(N, 3)`` in m/s (a copy)."""
        return self._v.copy()

    @property
    def inverse_masses(self) -> NDArray[np.float64]:
        return self._w.copy()

    @property
    def particle_count(self) -> int:
        return len(self._x)

    def set_velocities(self, velocities: ArrayLike) -> None:
        v = np.array(np.broadcast_to(np.asarray(velocities, dtype=np.float64), self._x.shape))
        if not np.all(np.isfinite(v)):
            raise SimulationError("velocities contain NaN or infinity")
        self._v = v

    def max_stretch(self) -> float:
        """The largest relative stretch ``length / rest - 1`` over the inextensible (zero-compliance)
        distance constraints with a positive rest length; 0 without any."""
        return self._stretch_of(self._x)

    def _stiff_edges(self) -> tuple:
        """``(i, j, rest)`` of the inextensible (zero-compliance) edges with a positive rest length."""
        if self._stiff is None:
            d = self._dist
            stiff = (d["compliance"] == 0) & (d["rest"] > _TINY)
            self._stiff = (d["i"][stiff], d["j"][stiff], d["rest"][stiff])
        return self._stiff

    @property
    def stiff_edge_count(self) -> int:
        """How many inextensible edges ``max_stretch`` measures (a substep projects each once)."""
        return len(self._stiff_edges()[0])

    def _stretch_of(self, x: NDArray[np.float64]) -> float:
        i, j, rest = self._stiff_edges()
        if not len(i):
            return 0.0
        delta = x.take(i, axis=0)
        delta -= x.take(j, axis=0)
        length = np.sqrt(np.einsum("ij,ij->i", delta, delta))
        return float(np.max(length / rest) - 1.0)

    def snapshot(self) -> tuple:
        """The state a frame changes (positions, velocities, clock, cluster rotations, who is asleep),
        for ``restore``."""
        clusters = self._clusters
        rotations = None if clusters is None else (clusters["quaternions"].copy(), clusters["warm"].copy())
        sleep = None
        if self._sleep is not None:
            sleep = tuple(self._sleep[k].copy() for k in ("calm", "asleep", "held"))
        return self._x.copy(), self._v.copy(), self.time, self.frame, rotations, self._w.copy(), sleep

    def restore(self, state: tuple) -> None:
        """Go back to a ``snapshot`` (e.g. to redo a frame with more substeps)."""
        x, v, time, frame, rotations, weights, sleep = state
        self._x, self._v, self.time, self.frame = x.copy(), v.copy(), time, frame
        self._w = weights.copy()
        if rotations is not None and self._clusters is not None:
            self._clusters["quaternions"] = rotations[0].copy()
            self._clusters["warm"] = rotations[1].copy()
        if sleep is not None and self._sleep is not None:
            for key, value in zip(("calm", "asleep", "held"), sleep, strict=True):
                self._sleep[key] = value.copy()
        self._active_clusters = None

    def kinetic_energy(self) -> float:
        mass = np.where(self._w > 0, 1.0 / np.maximum(self._w, _TINY), 0.0)
        return float(0.5 * np.sum(mass * np.einsum("ij,ij->i", self._v, self._v)))

    def _indices(self, values: ArrayLike, what: str) -> NDArray[np.int64]:
        idx = np.asarray(values)
        if idx.dtype.kind not in "iu":
            raise SimulationError(f"{what} must be integer particle indices")
        idx = idx.astype(np.int64).reshape(-1)
        if len(idx) and (idx.min() < 0 or idx.max() >= len(self._x)):
            raise SimulationError(f"{what} index out of range 0..{len(self._x) - 1}")
        return idx

    @staticmethod
    def _check_solver(solver: str) -> None:
        if solver not in SOLVERS:
            raise SimulationError(f"solver must be one of {', '.join(SOLVERS)}, got {solver!r}")

    # ----------------------------------------------------------------------------------- constraints
    def add_distance(
        self, i: ArrayLike, j: ArrayLike, rest: ArrayLike | None = None, compliance: ArrayLike = 0.0
    ) -> None:
        """Distance constraints between particles ``i[k]`` and ``j[k]`` (scalars or arrays).

        ``rest`` defaults to the current distance. ``compliance`` (m/N, inverse stiffness; 0 = rigid)
        is the XPBD compliance.
        """
        first = self._indices(i, "add_distance i")
        second = self._indices(j, "add_distance j")
        if first.shape != second.shape:
            raise SimulationError(f"add_distance got {len(first)} i and {len(second)} j indices")
        if np.any(first == second):
            raise SimulationError("add_distance: a particle cannot be constrained to itself")
        current = np.linalg.norm(self._x[first] - self._x[second], axis=1)
        lengths = (
            current if rest is None else np.broadcast_to(np.asarray(rest, dtype=np.float64), first.shape)
        )
        soft = np.broadcast_to(np.asarray(compliance, dtype=np.float64), first.shape)
        if not np.all(np.isfinite(lengths)) or np.any(lengths < 0):
            raise SimulationError("add_distance rest lengths must be finite and >= 0")
        if not np.all(np.isfinite(soft)) or np.any(soft < 0):
            raise SimulationError("add_distance compliance must be finite and >= 0")
        d = self._dist
        d["i"] = np.concatenate((d["i"], first))
        d["j"] = np.concatenate((d["j"], second))
        d["rest"] = np.concatenate((d["rest"], lengths))
        d["compliance"] = np.concatenate((d["compliance"], soft))
        self._colours = None
        self._stiff = None
        self._strain_plan = None
        self._chains = None

    @property
    def distance_constraints(self) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]:
        """``(i, j, rest)`` of every distance constraint."""
        return self._dist["i"].copy(), self._dist["j"].copy(), self._dist["rest"].copy()

    def add_pin(self, i: ArrayLike, trajectory: Trajectory | None = None) -> None:
        """Pin particles: fixed where they are, or following ``trajectory(time) -> (k, 3)`` (an
        animated attachment, e.g. a rope end held by a moving object)."""
        idx = self._indices(i, "add_pin")
        if trajectory is not None:
            sample = np.asarray(trajectory(self.time), dtype=np.float64)
            if sample.shape != (len(idx), 3) or not np.all(np.isfinite(sample)):
                raise SimulationError(
                    f"pin trajectory must return finite ({len(idx)}, 3) positions, got shape {sample.shape}"
                )
            self._x[idx] = sample
        self._w[idx] = 0.0
        self._pins.append((idx, trajectory))
        if self._self_collision is not None:
            self._self_collision.pop("near", None)  # its pairs skip the pinned-to-pinned ones

    def add_ground(
        self, height: float = 0.0, friction: float = 0.5, static_friction: float | None = None
    ) -> None:
        """A horizontal ground plane at ``height`` (z) with Coulomb friction: ``friction`` while sliding
        (dynamic), ``static_friction`` (default: the same) to start sliding."""
        static = friction if static_friction is None else static_friction
        if not np.all(np.isfinite([height, friction, static])) or min(friction, static) < 0:
            raise SimulationError(
                f"ground needs a finite height and friction >= 0, got {height}, {friction}, {static}"
            )
        self._ground = (float(height), float(friction), float(static))

    def add_collider(self, collider: SphereCollider | BoxCollider | MeshCollider) -> None:
        """A static sphere, box or triangle-mesh collider (see ``colliders``)."""
        if not isinstance(collider, SphereCollider | BoxCollider | MeshCollider):
            raise SimulationError(f"unknown collider type {type(collider).__name__}")
        self._colliders.append(collider)

    def add_sphere(self, center: ArrayLike, radius: float, friction: float = 0.5) -> None:
        self.add_collider(SphereCollider.create(center, radius, friction))

    def add_box(
        self,
        center: ArrayLike,
        half_extents: ArrayLike,
        rotation: ArrayLike | None = None,
        friction: float = 0.5,
    ) -> None:
        self.add_collider(BoxCollider.create(center, half_extents, rotation, friction))

    def add_mesh_collider(
        self,
        vertices: ArrayLike,
        triangles: ArrayLike,
        friction: float = 0.5,
        thickness: float = 0.1,
        path: ArrayLike | None = None,
        first_frame: int = 0,
    ) -> None:
        """A triangle-mesh collider; ``path`` ``(F, V, 3)`` animates it from ``first_frame`` on."""
        self.add_collider(MeshCollider.create(vertices, triangles, friction, thickness, path, first_frame))

    def add_particle_collisions(
        self,
        radius: float,
        groups: ArrayLike | None = None,
        friction: float = 0.5,
        static_friction: float | None = None,
    ) -> None:
        """Particles of radius ``radius`` push each other apart (broad phase: a spatial hash).

        ``groups`` ``(N,)`` integer labels: particles with the same label do not collide (e.g. the
        vertices of one soft body, whose own constraints keep them apart). ``friction`` is the
        Coulomb coefficient between particles sliding on each other, ``static_friction`` (default:
        the same) the one a resting contact must exceed to start sliding. Also sets the radius used
        against the ground and colliders.
        """
        static = friction if static_friction is None else static_friction
        if not radius > 0:
            raise SimulationError(f"particle radius must be positive, got {radius}")
        if not (np.isfinite(friction) and friction >= 0 and np.isfinite(static) and static >= 0):
            raise SimulationError(f"particle friction must be >= 0, got {friction}, {static}")
        self.particle_radius = float(radius)
        self.particle_friction = float(friction)
        self.particle_static_friction = float(static)
        self._collide_particles = True
        if groups is not None:
            labels = np.asarray(groups).reshape(-1)
            if labels.shape != (len(self._x),) or labels.dtype.kind not in "iu":
                raise SimulationError(f"collision groups must be {len(self._x)} integer labels")
            self._collision_groups = labels.astype(np.int64)

    def separate(self, iterations: int = 10) -> None:
        """Push apart what starts overlapping (particles inside the ground, a collider or another body)
        by moving positions only: a box placed on the floor starts a particle radius up instead of
        being launched by a velocity-making correction in its first substep."""
        x = self._x.copy()
        free = self._w > 0
        self._prepare_colliders(x, np.zeros_like(x), 1e-3)
        clusters = self._awake()[0]
        if self._rigid is not None and self._rigid["sequential"] and self._ground is not None:
            # A rigid body in the ground rises straight out of it (contact by contact it would also turn).
            members, starts = self._clusters["members"], self._clusters["starts"]
            floor = self._ground[0] + self.particle_radius
            lift = np.maximum(floor - np.minimum.reduceat(x[members, 2], starts), 0.0)
            moving = free[members]
            x[members[moving], 2] += lift[self._clusters["cluster"]][moving]
        with np.errstate(all="ignore"):
            for _ in range(iterations):
                # Searched again each pass: a body pushed out of one overlap may be pushed into another.
                pairs = None
                if self._collide_particles:
                    pairs = self._particle_pairs(x, 0.25 * self.particle_radius)
                start = x.copy()
                if self._rigid is None:
                    self._solve_particle_pairs(x, pairs, start)
                else:
                    self._solve_rigid_contacts(x, pairs, start, free)
                self._solve_contacts(x, start, free, ground=self._rigid is None)
                self._solve_shapes(x, iterations, clusters)
        self._store_rotations(clusters)
        if not np.all(np.isfinite(x)):
            raise SimulationError("separating the starting overlaps produced NaN; check the input meshes")
        self._x = x

    def _body_state(self) -> dict:
        """Per shape-matched body: asleep, held (not released yet), calm frames; created on first use."""
        if self._sleep is None:
            clusters = self._clusters
            if clusters is None:
                raise SimulationError("sleeping and pouring need shape-matched bodies (add_shape_match)")
            if np.any(clusters["share"] > 1):
                raise SimulationError("sleeping and pouring need disjoint clusters (no shared particle)")
            count = len(clusters["total"])
            self._sleep = {
                "speed": 0.0,  # 0: no body falls asleep
                "wake": 0.0,
                "frames": 1,
                "calm": np.zeros(count, np.int64),
                "asleep": np.zeros(count, bool),
                "held": np.zeros(count, bool),
                "release": np.full(count, -np.inf),  # when each held body is let go (``time``)
                "weights": self._w.copy(),
            }
        return self._sleep

    def enable_sleeping(self, speed: float = 0.05, frames: int = 12) -> None:
        """Shape-matched bodies (disjoint clusters) that stay slower than ``speed`` (m/s) for ``frames``
        frames fall asleep: frozen exactly where they are (no jitter, no creeping) and immovable. A
        sleeping body costs nothing per substep (no shape matching; its particles are searched for
        contacts only inside the reach of an awake body). A body moving faster than ``WAKE_FACTOR`` times
        ``speed`` (an impact, not a neighbour creeping or sliding slowly) within reach of a sleeping one
        wakes it."""
        if not (speed > 0 and frames >= 1):
            raise SimulationError(f"sleeping needs speed > 0 and frames >= 1, got {speed}, {frames}")
        state = self._body_state()
        state["speed"], state["frames"] = float(speed), int(frames)
        state["wake"] = WAKE_FACTOR * float(speed)

    def pour(self, delays: ArrayLike) -> None:
        """Hold each shape-matched body where it is for its delay in ``delays`` (seconds from now, one
        per body, in cluster order), then let it fall from rest, once nothing else is where it waits.
        A held body touches nothing and costs nothing, so bodies may wait overlapping at one spout and
        drop one after another."""
        state = self._body_state()
        seconds = np.asarray(delays, dtype=np.float64)
        if seconds.shape != state["held"].shape or not np.all(np.isfinite(seconds)):
            raise SimulationError(f"pour needs one finite delay per body ({len(state['held'])})")
        state["release"] = self.time + seconds
        state["held"] = seconds > 0
        members, cluster = self._clusters["members"], self._clusters["cluster"]
        held = members[state["held"][cluster]]
        self._w[held] = 0.0
        self._v[held] = 0.0
        self._active_clusters = None

    @property
    def sleeping(self) -> NDArray[np.bool_]:
        """Which shape-matched bodies are asleep (all False without ``enable_sleeping``)."""
        if self._sleep is None:
            return np.zeros(0 if self._clusters is None else len(self._clusters["total"]), bool)
        return self._sleep["asleep"].copy()

    @property
    def held(self) -> NDArray[np.bool_]:
        """Which shape-matched bodies still wait to be poured (all False without ``pour``)."""
        if self._sleep is None:
            return np.zeros(0 if self._clusters is None else len(self._clusters["total"]), bool)
        return self._sleep["held"].copy()

    def _release_poured(self) -> None:
        """Let go of the held bodies whose release frame has come (they fall during this step)."""
        state = self._sleep
        if state is None or not np.any(state["held"]):
            return
        due = np.flatnonzero(state["held"] & (state["release"] <= self.time + 1e-9))
        if len(due) == 0:
            return
        clusters = self._clusters
        members, cluster, starts = clusters["members"], clusters["cluster"], clusters["starts"]
        # Through a spout, one after another: a due body waits while a free body is still where it
        # would start (the overlap would be resolved by a violent push), and so do the due ones after it.
        points = self._x[members]
        low = np.minimum.reduceat(points, starts) - 2.0 * self.particle_radius
        high = np.maximum.reduceat(points, starts) + 2.0 * self.particle_radius
        present = ~state["held"]
        letting_go = np.zeros_like(present)
        for body in due[np.argsort(state["release"][due], kind="stable")]:
            if np.any(np.all((low[body] <= high[present]) & (low[present] <= high[body]), axis=1)):
                break
            present[body] = letting_go[body] = True
        due = letting_go
        if np.any(due):
            released = members[due[cluster]]
            self._w[released] = state["weights"][released]
            self._v[released] = 0.0
            state["held"] &= ~due
            state["calm"][due] = 0
            self._active_clusters = None

    def _update_sleep(self, dt: float, before: NDArray[np.float64]) -> None:
        state, clusters = self._sleep, self._clusters
        if state["speed"] <= 0:
            return
        members, starts, cluster = clusters["members"], clusters["starts"], clusters["cluster"]
        # How far each particle got this frame, as a speed: a body held still by contacts whose last
        # substep's velocity is not quite zero (a stack settles level by level) is still at rest.
        moved = self._x[members] - before[members]
        speed = np.sqrt(np.einsum("ij,ij->i", moved, moved)) / dt
        fastest = np.maximum.reduceat(speed, starts)
        asleep, calm, held = state["asleep"], state["calm"], state["held"]
        moving = ~asleep & ~held & (fastest >= state["speed"])
        calm[moving] = 0
        calm[~asleep & ~held & ~moving] += 1
        falling_asleep = ~asleep & ~held & (calm >= state["frames"])
        if np.any(falling_asleep):
            frozen = members[falling_asleep[cluster]]
            self._w[frozen] = 0.0
            self._v[frozen] = 0.0
            asleep |= falling_asleep
            self._active_clusters = None
        # Only something faster than the wake speed (a falling or tumbling body) wakes a sleeper: a body
        # creeping or sliding slowly against one finds it as solid as the ground.
        moving &= fastest >= state["wake"]
        if not (np.any(asleep) and np.any(moving)):
            return
        # Wake sleepers whose box comes within reach of a moving body's box this coming frame.
        points = self._x[members]
        low = np.minimum.reduceat(points, starts)
        high = np.maximum.reduceat(points, starts)
        reach = 2.0 * self.collision_radius + (fastest[moving].max() + np.linalg.norm(self.gravity) * dt) * dt
        sleeper_low, sleeper_high = low[asleep][:, None], high[asleep][:, None]
        mover_low, mover_high = low[moving][None], high[moving][None]
        overlap = (sleeper_low - reach <= mover_high) & (mover_low - reach <= sleeper_high)
        near = np.all(overlap, axis=2).any(axis=1)
        if np.any(near):
            waking = np.flatnonzero(asleep)[near]
            woken = np.isin(cluster, waking)
            self._w[members[woken]] = state["weights"][members[woken]]
            asleep[waking] = False
            calm[waking] = 0
            self._active_clusters = None

    # The current substep's length (s), for telling impacts from resting contacts; 0 outside a step.
    _substep_length = 0.0
    # Rigid bodies' rolling resistance coefficient (set_rolling_resistance).
    _rolling_resistance = 0.0
    # (inverse masses, world inverse inertias) of the bodies a contact solve works on, compact-indexed.
    _body_frame: tuple = ()

    def enable_rigid_contacts(self, normals: ArrayLike | None = None, sequential: bool | None = None) -> None:
        """Resolve contacts of shape-matched bodies (disjoint clusters of stiffness 1) as rigid-body
        contacts: a contact's correction is sized by the body's mass and inertia at the contact point
        (Müller et al. 2020, "Detailed rigid body simulation with extended position based dynamics")
        and averaged over the body's contacts, so the shape match that follows moves the contact point
        out by exactly its depth. Without this, a body's particle-level corrections are diluted by the
        shape match over all its particles: stacks sink into each other, settle slowly, and the overlap
        left behind turns into a violent push a few substeps later.

        ``normals`` ``(N, 3)``: the outward surface normal at each particle in the rest pose (particles
        sampled on the bodies' surfaces). Two touching bodies then push along their surfaces' normals,
        not along the line between two particles, so flat faces slide over each other instead of
        interlocking like egg crates.

        ``sequential`` (default off; None keeps the current choice): solve the contacts one after
        another instead (Müller et al. 2020; ``_sweep_rigid_contacts``), with static friction per contact
        patch, dynamic friction and no bounce in a velocity pass, rolling resistance
        (``set_rolling_resistance``) and exact rigid rotations in the shape match: bodies then roll,
        topple and keep their spin, which the body-by-body fit does not let them (a drum stops within a
        frame). Not the default yet: a 1 cm plank landing on another at 10 m/s bounces 6 cm and slides
        off (the auto-substep plank test), see notes/issue-19b.md, session 4."""
        clusters = self._clusters
        if clusters is None or np.any(clusters["share"] > 1) or np.any(clusters["stiffness"] < 1.0):
            raise SimulationError("rigid contacts need rigid shape-matched bodies (disjoint, stiffness 1)")
        members, starts, mass = clusters["members"], clusters["starts"], clusters["mass"]
        rest = clusters["rest"]
        second = np.add.reduceat(mass[:, None, None] * rest[:, :, None] * rest[:, None, :], starts)
        inertia = np.einsum("kii->k", second)[:, None, None] * np.eye(3) - second
        body = np.full(len(self._x), -1, np.int64)
        body[members] = clusters["cluster"]
        keep_sequential = self._rigid is not None and self._rigid["sequential"]
        if normals is None:
            normals = self._rigid["normals"] if self._rigid is not None else np.zeros_like(self._x)
        normals = np.array(normals, dtype=np.float64)
        if normals.shape != self._x.shape or not np.all(np.isfinite(normals)):
            raise SimulationError(f"rigid contacts need {len(self._x)} finite surface normals")
        self._rigid = {
            "normals": normals,
            "body": body,
            "mass3": np.repeat(mass, 3).reshape(-1, 3),
            "inverse_total": 1.0 / clusters["total"],
            "inertia": inertia,
            "inverse_inertia": np.linalg.pinv(inertia),  # pinv: a flat or 2-particle body has an I of rank 2
            "sequential": bool(sequential) if sequential is not None else keep_sequential,
        }

    def _effective_inverse_masses(self, p, particles, directions, centroids, inverse_inertia) -> NDArray:
        """How far each particle's contact point moves along its direction per unit correction: its
        own inverse mass, or for a particle of an awake rigid body ``1/M + (r x e) . I^-1 (r x e)``."""
        w = self._w[particles]
        body = self._rigid["body"][particles]
        rigid = np.flatnonzero((body >= 0) & (w > 0))
        result = w.copy()
        if len(rigid):
            owner = body[rigid]
            arm = _cross_rows(p[particles[rigid]] - centroids[owner], directions[rigid])
            turn = np.einsum("kij,kj->ki", inverse_inertia[owner], arm)
            result[rigid] = self._rigid["inverse_total"][owner] + np.einsum("ij,ij->i", arm, turn)
        return result

    def _contact_normals(self, i, j, delta, length, reach, turn) -> tuple[NDArray, NDArray]:
        """Normals (pushing ``i`` away from ``j``) and depths of touching particle pairs: along the
        bodies' surface normals where the two surfaces face each other, else between the centres.
        ``turn`` ``(bodies, 3, 3)``: the bodies' rotations."""
        rigid = self._rigid
        body_i, body_j = rigid["body"][i], rigid["body"][j]
        surface_i = np.einsum("kij,kj->ki", turn[np.maximum(body_i, 0)], rigid["normals"][i])
        surface_j = np.einsum("kij,kj->ki", turn[np.maximum(body_j, 0)], rigid["normals"][j])
        surface_i *= (body_i >= 0)[:, None]
        surface_j *= (body_j >= 0)[:, None]
        flat_i = np.sqrt(np.einsum("ij,ij->i", surface_i, surface_i))
        flat_j = np.sqrt(np.einsum("ij,ij->i", surface_j, surface_j))
        # Where one side is a face (not an edge or a corner), its normal decides: a corner or an edge
        # on a face is pushed along the face's normal, face on face along their mean. Edges and
        # corners meeting each other have no surface normal to trust: they touch as spheres.
        unit_i = surface_i / np.maximum(flat_i, _TINY)[:, None]
        unit_j = surface_j / np.maximum(flat_j, _TINY)[:, None]
        face_i, face_j = flat_i > _FACE, flat_j > _FACE
        facing = unit_j * face_j[:, None] - unit_i * face_i[:, None]
        size = np.sqrt(np.einsum("ij,ij->i", facing, facing))
        facing /= np.maximum(size, _TINY)[:, None]
        apart = np.einsum("ij,ij->i", delta, facing)
        # A usable normal, with i on the outer side of it.
        use = (face_i | face_j) & (size > 0.5) & (apart > 0)
        normal = np.where(use[:, None], facing, delta / np.maximum(length, _TINY)[:, None])
        depth = reach - np.where(use, apart, length)
        return normal, depth

    def _solve_rigid_contacts(self, p, pairs, start, free) -> None:
        """The ground and the particle pairs as rigid-body contacts (``enable_rigid_contacts``): solved
        one after another with ``sequential`` (see ``_sweep_rigid_contacts``), else fitted body by body
        (``_fit_rigid_contacts``)."""
        if not self._rigid["sequential"]:
            self._fit_rigid_contacts(p, pairs, start, free)
            return
        turn = quaternion_to_matrix(self._clusters["quaternions"])
        contacts = self._gather_rigid_contacts(p, pairs, start, free, turn)
        if contacts is not None:
            self._sweep_rigid_contacts(p, start, contacts, turn)

    def _fit_rigid_contacts(self, p, pairs, start, free) -> None:
        """The ground first, then the pairs (seeing the ground's corrections): a body resting on one
        that rests on the ground is held in the same substep, not one substep later."""
        turn = quaternion_to_matrix(self._clusters["quaternions"])
        # einsum, not matmul: stacked 3 x 3 matmuls go through OpenBLAS, whose threads cost more.
        inverse_inertia = np.einsum("kij,kjl,kml->kim", turn, self._rigid["inverse_inertia"], turn)
        frames = (turn, inverse_inertia)  # the rotations change only in shape matching: shared by both
        self._project_rigid_contacts(p, None, start, free, frames)
        self._project_rigid_contacts(p, pairs, start, None, frames)

    def _project_rigid_contacts(self, p, pairs, start, free, frames) -> None:
        """Particle pairs and the ground as rigid-body contacts (``enable_rigid_contacts``), Jacobi over
        each body's contacts, with static and dynamic friction on the slip during this substep.

        An overlap that was already there when the substep began (left by a crowded stack or an
        impact the solver could not undo at once) is pushed out without becoming velocity: the body's
        share of it moves its start position too, so no contact launches a body (no restitution)."""
        firsts, seconds, corrections, existing, normals, impacts = [], [], [], [], [], []
        if pairs is not None and len(pairs):
            i, j = pairs[:, 0], pairs[:, 1]
            delta = p[i] - p[j]
            length = np.sqrt(np.einsum("ij,ij->i", delta, delta))
            reach = 2.0 * self.particle_radius
            hit = length < self._pair_reach()
            if np.any(hit):
                i, j, delta, length = i[hit], j[hit], delta[hit], length[hit]
                normal, depth = self._contact_normals(i, j, delta, length, reach, frames[0])
                touching = depth > 0
                i, j, normal, depth = i[touching], j[touching], normal[touching], depth[touching]
                slip = (p[i] - start[i]) - (p[j] - start[j])
                closing = -np.einsum("ij,ij->i", slip, normal)
                slip -= normal * (-closing)[:, None]
                amount = np.sqrt(np.einsum("ij,ij->i", slip, slip))
                static = self.particle_static_friction
                shrink = _friction_shrink(amount, depth, self.particle_friction, static)
                impacts.append(closing > _IMPACT_SPEED * self._substep_length)
                firsts.append(i)
                seconds.append(j)
                corrections.append(normal * depth[:, None] - slip * shrink[:, None])
                before = reach - np.einsum("ij,ij->i", start[i] - start[j], normal)
                existing.append(normal * np.clip(before, 0.0, depth)[:, None])
                normals.append(normal)
        if self._ground is not None and free is not None:
            height, friction, static = self._ground
            floor = height + self.particle_radius
            below = np.flatnonzero((p[:, 2] < floor) & free)
            if len(below):
                depth = floor - p[below, 2]
                correction = np.zeros((len(below), 3))
                correction[:, 2] = depth
                slip = p[below, :2] - start[below, :2]
                amount = np.sqrt(np.einsum("ij,ij->i", slip, slip))
                correction[:, :2] = -slip * _friction_shrink(amount, depth, friction, static)[:, None]
                firsts.append(below)
                seconds.append(np.full(len(below), -1, np.int64))
                corrections.append(correction)
                overlap = np.zeros((len(below), 3))
                overlap[:, 2] = np.clip(floor - start[below, 2], 0.0, depth)
                existing.append(overlap)
                normals.append(np.tile([0.0, 0.0, 1.0], (len(below), 1)))
                impacts.append(np.zeros(len(below), bool))
        if not firsts:
            return
        a, b, correction = np.concatenate(firsts), np.concatenate(seconds), np.concatenate(corrections)
        existing = np.concatenate(existing)
        magnitude = np.sqrt(np.einsum("ij,ij->i", correction, correction))
        direction = correction / np.maximum(magnitude, _TINY)[:, None]
        clusters, rigid = self._clusters, self._rigid
        members, starts = clusters["members"], clusters["starts"]
        centroids = np.add.reduceat(p[members] * rigid["mass3"], starts) / clusters["total"][:, None]
        turn, inverse_inertia = frames
        # Each side's share of a contact's correction, by how easily it moves there (a sleeping or
        # pinned side: none).
        weight_a = self._effective_inverse_masses(p, a, direction, centroids, inverse_inertia)
        paired = np.flatnonzero(b >= 0)
        weight_b = np.zeros(len(a))
        weight_b[paired] = self._effective_inverse_masses(
            p, b[paired], direction[paired], centroids, inverse_inertia
        )
        # Shock propagation: where one body rests on another (a contact normal near the vertical, not
        # an impact), the lower one takes none of the correction, as if it were immovable. A stack
        # then holds in one pass from the ground up instead of sinking into itself and springing back
        # every substep (the lower body still carries the upper one's friction and sideways pushes).
        gravity = self.gravity / max(float(np.linalg.norm(self.gravity)), _TINY)
        lift = np.where(np.concatenate(impacts), 0.0, np.concatenate(normals) @ -gravity)
        weight_a[lift < -_SUPPORT] = 0.0
        weight_b[lift > _SUPPORT] = 0.0
        total = weight_a + weight_b
        share = np.where(total > 0, 1.0 / np.where(total > 0, total, 1.0), 0.0)
        particles = np.concatenate((a, b[paired]))
        sides = np.concatenate((weight_a * share, -(weight_b * share)[paired]))
        rows = np.concatenate((np.arange(len(a)), paired))
        targets = correction[rows] * sides[:, None]
        overlaps = existing[rows] * sides[:, None]
        moving = sides != 0
        particles, targets, overlaps = particles[moving], targets[moving], overlaps[moving]
        if len(particles) == 0:
            return
        # Every body moves rigidly to best meet all its contact points' targets at once (least squares
        # over its contacts; with one contact, the mass-weighted smallest motion that meets it: the
        # rigid-body response). Contacts sharing a face then push it out by their full depth, where
        # averaging single-contact responses would leave most of it in (their turns cancel out).
        # Only the bodies touched here are solved for and moved (a compact index over them).
        touched = np.flatnonzero(np.bincount(rigid["body"][particles], minlength=len(clusters["total"])))
        compact = np.zeros(len(clusters["total"]), np.int64)
        compact[touched] = np.arange(len(touched))
        body = compact[rigid["body"][particles]]
        centroids = centroids[touched]
        arm = p[particles] - centroids[body]
        count = len(touched)
        skew = np.zeros((len(arm), 3, 3))
        skew[:, 0, 1], skew[:, 0, 2], skew[:, 1, 2] = -arm[:, 2], arm[:, 1], -arm[:, 0]
        skew[:, 1, 0], skew[:, 2, 0], skew[:, 2, 1] = arm[:, 2], -arm[:, 1], arm[:, 0]
        # Rows of one contact point: displacement = t + theta x r = [I, -[r]x] (t, theta).
        rows_of = np.concatenate((np.broadcast_to(np.eye(3), skew.shape), -skew), axis=2)  # (K, 3, 6)
        normal = np.einsum("kia,kib->kab", rows_of, rows_of).reshape(-1, 36)
        # Per-body sums as one bincount over (body, entry) slots, not one per entry.
        matrix = np.bincount(
            (body[:, None] * 36 + np.arange(36)).reshape(-1), weights=normal.reshape(-1), minlength=count * 36
        ).reshape(count, 6, 6)
        regular = np.zeros((count, 6, 6))
        regular[:, :3, :3] = np.eye(3) * clusters["total"][touched, None, None]
        turned = turn[touched]
        regular[:, 3:, 3:] = np.einsum("kij,kjl,kml->kim", turned, rigid["inertia"][touched], turned)
        # A tiny mass-weighted regulariser picks the least-effort motion where contacts leave freedom.
        matrix += 1e-6 * regular + 1e-12 * np.eye(6)
        # Right-hand sides: the contact targets and, second column, the overlaps already there.
        right = np.einsum("kia,kic->kac", rows_of, np.stack((targets, overlaps), axis=2))  # (K, 6, 2)
        stacked = np.bincount(
            (body[:, None] * 12 + np.arange(12)).reshape(-1), weights=right.reshape(-1), minlength=count * 12
        ).reshape(count, 6, 2)
        motion = solve_spd_batch(matrix, stacked)
        moved = members[np.isin(clusters["cluster"], touched)]
        owner = compact[rigid["body"][moved]]
        relative = p[moved] - centroids[owner]
        for column, target in ((0, p), (1, start)):
            translation, rotation = motion[:, :3, column], motion[:, 3:, column]
            target[moved] += translation[owner] + _cross_rows(rotation[owner], relative)

    def _gather_rigid_contacts(self, p, pairs, start, free, turn) -> dict | None:
        """The touching contacts at ``p``: particle ``first`` pushed along ``normal`` away from particle
        ``second`` (-1: the ground) by ``depth``; ``slip`` the contact points' relative motion this
        substep, ``before`` the overlap at the substep's start, per contact friction coefficients."""
        parts: list[tuple] = []
        # Contacts this close are solved too: the corrections before them may push them in.
        margin = _CONTACT_MARGIN * self.particle_radius
        if pairs is not None and len(pairs):
            i, j = pairs[:, 0], pairs[:, 1]
            delta = p[i] - p[j]
            length = np.sqrt(np.einsum("ij,ij->i", delta, delta))
            hit = length < self._pair_reach()
            if np.any(hit):
                i, j, delta, length = i[hit], j[hit], delta[hit], length[hit]
                reach = 2.0 * self.particle_radius
                normal, depth = self._contact_normals(i, j, delta, length, reach, turn)
                touching = np.flatnonzero(depth > -margin)
                # A face sample over another face's lattice touches up to four of its samples with the
                # same depth along the same normal: one contact per sample and other body is enough
                # (the deepest), and fewer contacts per body mean fewer batches.
                other = self._rigid["body"][j[touching]]
                order = touching[np.lexsort((-depth[touching], other, i[touching]))]
                key = i[order] * (len(self._clusters["total"]) + 1) + self._rigid["body"][j[order]]
                first = np.ones(len(order), bool)
                first[1:] = key[1:] != key[:-1]
                touching = order[first]
                i, j, normal, depth = i[touching], j[touching], normal[touching], depth[touching]
                slip = (p[i] - start[i]) - (p[j] - start[j])
                closing = -np.einsum("ij,ij->i", slip, normal)
                before = reach - np.einsum("ij,ij->i", start[i] - start[j], normal)
                impact = closing > _IMPACT_SPEED * self._substep_length
                count = len(i)
                static = np.full(count, self.particle_static_friction)
                dynamic = np.full(count, self.particle_friction)
                parts.append((i, j, normal, depth, slip, before, impact, static, dynamic))
        if self._ground is not None and free is not None:
            height, dynamic, static = self._ground
            floor = height + self.particle_radius
            below = np.flatnonzero((p[:, 2] < floor + margin) & free)
            if len(below):
                count = len(below)
                normal = np.zeros((count, 3))
                normal[:, 2] = 1.0
                parts.append(
                    (
                        below,
                        np.full(count, -1, np.int64),
                        normal,
                        floor - p[below, 2],
                        p[below] - start[below],
                        floor - start[below, 2],
                        np.zeros(count, bool),
                        np.full(count, static),
                        np.full(count, dynamic),
                    )
                )
        if not parts:
            return None
        names = ("first", "second", "normal", "depth", "slip", "before", "impact", "static", "dynamic")
        # Ground contacts first (pairs on a body resting on the ground then see it held), deepest first.
        parts.reverse()
        return {name: np.concatenate([part[k] for part in parts]) for k, name in enumerate(names)}

    def _sweep_rigid_contacts(self, p, start, contacts, turn) -> None:
        """Solve ``contacts`` (``_gather_rigid_contacts``) one after another in batches of distinct bodies,
        then move every touched body rigidly by what it received (and its start by the part that pushed
        out an overlap already there)."""
        clusters, rigid = self._clusters, self._rigid
        first, second, normal = contacts["first"], contacts["second"], contacts["normal"]
        body = rigid["body"]
        w = self._w
        paired = second >= 0
        other = np.where(paired, second, 0)
        body_a = np.where((w[first] > 0) & (body[first] >= 0), body[first], -1)
        body_b = np.where(paired & (w[other] > 0) & (body[other] >= 0), body[other], -1)
        # Shock propagation: where one body rests on another (a contact normal near the vertical, not
        # an impact), the lower one takes none of the correction, as if it were immovable. A stack
        # then holds in one pass from the ground up instead of sinking into itself and springing back
        # every substep.
        gravity = self.gravity / max(float(np.linalg.norm(self.gravity)), _TINY)
        lift = np.where(contacts["impact"], 0.0, normal @ -gravity)
        body_a[lift < -_SUPPORT] = -1
        body_b[lift > _SUPPORT] = -1
        keep = (body_a >= 0) | (body_b >= 0)
        if not np.any(keep):
            return
        # A few contacts per touching pair of bodies span its patch: a face lying on the ground would
        # otherwise be solved sample by sample, one batch each (a 40 cm plank: 300 batches).
        patch = (body[first] + 1) * (len(clusters["total"]) + 2) + np.where(paired, body[other], -1) + 1
        spanning = np.zeros(len(keep), bool)
        spanning[_patch_corners(patch, p[first], normal, contacts["depth"])] = True
        keep &= spanning
        if not np.all(keep):
            contacts = {name: values[keep] for name, values in contacts.items()}
            first, second, normal = contacts["first"], contacts["second"], contacts["normal"]
            body_a, body_b = body_a[keep], body_b[keep]
        total = len(clusters["total"])
        touched = np.flatnonzero(np.bincount(np.concatenate((body_a, body_b)) + 1, minlength=total + 1)[1:])
        count = len(touched)
        # Compact body indices; row ``count`` is "nobody" (immovable: zero inverse mass and inertia).
        compact = np.full(total + 1, count, np.int64)
        compact[touched] = np.arange(count)
        side_a, side_b = compact[body_a], compact[body_b]
        members, starts = clusters["members"], clusters["starts"]
        centroids = np.zeros((count + 1, 3))
        centroids[:count] = (
            np.add.reduceat(p[members] * rigid["mass3"], starts)[touched] / clusters["total"][touched, None]
        )
        inverse_mass = np.zeros(count + 1)
        inverse_mass[:count] = rigid["inverse_total"][touched]
        turned = turn[touched]
        inverse_inertia = np.zeros((count + 1, 3, 3))
        # einsum, not matmul: stacked 3 x 3 matmuls go through OpenBLAS, whose threads cost more.
        inverse_inertia[:count] = np.einsum(
            "kij,kjl,kml->kim", turned, rigid["inverse_inertia"][touched], turned
        )
        # Arms to where the surfaces touch, a particle radius from each centre (a rolling wheel's
        # samples' centres move there; the touching point does not).
        arm_a = p[first] - self.particle_radius * normal - centroids[side_a]
        arm_b = p[np.where(second >= 0, second, first)] + self.particle_radius * normal - centroids[side_b]
        # Order: ground contacts first, then deepest first; then batches of distinct bodies.
        order = np.lexsort((-contacts["depth"], second >= 0))
        batches = _body_batches(side_a[order], side_b[order], count)
        order = order[np.concatenate(batches)]
        bounds = np.cumsum([0] + [len(b) for b in batches])
        side_a, side_b, normal = side_a[order], side_b[order], normal[order]
        arm_a, arm_b = arm_a[order], arm_b[order]
        depth, slip, before = contacts["depth"][order], contacts["slip"][order], contacts["before"][order]
        static, dynamic = contacts["static"][order], contacts["dynamic"][order]
        # Per contact and side, as 6-vectors over a body's (translation, small turn): how a body's motion
        # moves the contact point along the normal (n, r x n), and how a unit normal impulse moves the
        # body (n / M, I^-1 (r x n)); the generalized inverse mass is the sum of their products.
        lever_a, lever_b = _cross_rows(arm_a, normal), _cross_rows(arm_b, normal)
        turn_a = np.einsum("kij,kj->ki", inverse_inertia[side_a], lever_a)
        turn_b = np.einsum("kij,kj->ki", inverse_inertia[side_b], lever_b)
        reach_a, reach_b = np.hstack((normal, lever_a)), np.hstack((normal, lever_b))
        push_a = np.hstack((inverse_mass[side_a, None] * normal, turn_a))
        push_b = np.hstack((inverse_mass[side_b, None] * normal, turn_b))
        weight = np.einsum("ij,ij->i", reach_a, push_a) + np.einsum("ij,ij->i", reach_b, push_b)
        ease = 1.0 / np.maximum(weight, _TINY)
        # Each body's translation and small turn so far (views: move, spin), and its start's.
        motion = np.zeros((count + 1, 6))
        move, spin = motion[:, :3], motion[:, 3:]
        start_motion = np.zeros((count + 1, 6))
        pushed = np.zeros(len(depth))
        self._body_frame = (inverse_mass, inverse_inertia)
        for round_, sweeps in enumerate(_NORMAL_SWEEPS):
            for sweep in range(sweeps):
                for k in range(len(batches)):
                    s = slice(bounds[k], bounds[k + 1])
                    a, b = side_a[s], side_b[s]
                    closer = np.einsum("ij,ij->i", motion[a], reach_a[s])
                    closer -= np.einsum("ij,ij->i", motion[b], reach_b[s])
                    now = depth[s] - closer
                    # Projected Gauss-Seidel: a contact may take back what it pushed, never pull.
                    lam = np.maximum(now * ease[s], -pushed[s])
                    pushed[s] += lam
                    motion[a] += lam[:, None] * push_a[s]
                    motion[b] -= lam[:, None] * push_b[s]
                    if sweep or round_:
                        continue
                    # The part of the push that undoes an overlap already there at the start moves the
                    # start too.
                    existing = np.maximum(lam, 0.0) * np.clip(before[s], 0.0, np.maximum(now, 0.0))
                    existing /= np.maximum(now, _TINY)
                    start_motion[a] += existing[:, None] * push_a[s]
                    start_motion[b] -= existing[:, None] * push_b[s]
            if round_ == 0:
                patches = self._contact_patches(
                    pushed, side_a, side_b, arm_a, arm_b, normal, slip, (static, dynamic), count
                )
                held = np.zeros(len(patches["load"]))
            else:  # the same patches, carrying what the sweeps since have pushed
                active, group = patches["members"]
                patches["load"] = np.bincount(group, pushed[active], minlength=len(held))
            # Static friction on the patches' slip this substep, all rounds together at most mu_s times
            # the normal load (sliding ones: dynamic friction, in the velocity pass).
            limit = patches["static"] * patches["load"] - held
            held += self._patch_friction(patches, move, spin, patches["slip"], limit, True)
        moved_particles = members[np.isin(clusters["cluster"], touched)]
        owner = compact[body[moved_particles]]
        relative = p[moved_particles] - centroids[owner]
        p[moved_particles] += move[owner] + _cross_rows(spin[owner], relative)
        start[moved_particles] += start_motion[owner, :3] + _cross_rows(start_motion[owner, 3:], relative)
        # For the velocity pass after this substep (the last projection's contacts count).
        rigid["solved"] = {
            "touched": touched,
            "bounds": bounds,
            "sides": (side_a, side_b),
            "reach": (reach_a, reach_b),
            "push": (push_a, push_b),
            "ease": ease,
            "pushed": pushed,
            "patches": patches,
            "inverse_mass": inverse_mass,
            "inverse_inertia": inverse_inertia,
        }

    def _tangent_response(self, a, b, ra, rb, tangent) -> tuple[NDArray, NDArray, NDArray]:
        """For unit impulses along ``tangent`` at arms ``ra`` / ``rb`` of compact bodies ``a`` / ``b``:
        each side's turn and how far the two points move apart along it (the generalized inverse mass)."""
        inverse_mass, inverse_inertia = self._body_frame
        twist_a = np.einsum("kij,kj->ki", inverse_inertia[a], _cross_rows(ra, tangent))
        twist_b = np.einsum("kij,kj->ki", inverse_inertia[b], _cross_rows(rb, tangent))
        resistance = (
            inverse_mass[a]
            + inverse_mass[b]
            + np.einsum("ij,ij->i", _cross_rows(ra, tangent), twist_a)
            + np.einsum("ij,ij->i", _cross_rows(rb, tangent), twist_b)
        )
        return twist_a, twist_b, np.maximum(resistance, _TINY)

    def _contact_patches(self, pushed, side_a, side_b, arm_a, arm_b, normal, slip, friction, count) -> dict:
        """The contact patches of the pushed contacts: one per touching pair of bodies (or body and
        ground), at its contacts' mean point and normal weighted by how hard each pushed (``load``:
        the sum), with the mean ``slip`` and the (static, dynamic) ``friction`` coefficients."""
        active = np.flatnonzero(pushed > 0)
        key = side_a[active] * (count + 1) + side_b[active]
        keys, patch = np.unique(key, return_inverse=True)
        lam = pushed[active]
        load = np.bincount(patch, weights=lam, minlength=len(keys))

        def mean(values):
            weights = lam[:, None] * values[active]
            sums = [np.bincount(patch, weights=weights[:, k], minlength=len(keys)) for k in range(3)]
            return np.stack(sums, axis=1) / np.maximum(load, _TINY)[:, None]

        n = mean(normal)
        n /= np.maximum(np.sqrt(np.einsum("ij,ij->i", n, n)), _TINY)[:, None]
        a, b = keys // (count + 1), keys % (count + 1)
        static, dynamic = np.zeros(len(keys)), np.zeros(len(keys))
        static[patch], dynamic[patch] = friction[0][active], friction[1][active]
        return {
            "sides": (a, b),
            "arms": (mean(arm_a), mean(arm_b)),
            "normal": n,
            "slip": mean(slip),
            "load": load,
            "static": static,
            "dynamic": dynamic,
            "batches": _body_batches(a, b, count),
            "members": (active, patch),
        }

    def _patch_friction(self, patches, linear, angular, drift, limit, sticking) -> NDArray[np.float64]:
        """Friction per contact patch (``_contact_patches``), batch by batch: each patch's relative
        motion (``drift`` plus what the bodies' ``linear`` and ``angular`` moves or velocities give at
        its point) along the patch is cancelled by an impulse, if that needs at most ``limit`` when
        ``sticking`` (static friction: all or nothing), else by at most ``limit`` (dynamic). Returns
        the friction impulse each patch took.

        Per patch, not per contact: a single contact's own push turns its body and slides that point
        sideways (a cube's corner by half as far as it lifts it), which the patch's other contacts undo."""
        inverse_mass = self._body_frame[0]
        a, b = patches["sides"]
        ra, rb = patches["arms"]
        n = patches["normal"]
        applied = np.zeros(len(a))
        for batch in patches["batches"]:
            pa, pb, qa, qb, pn = a[batch], b[batch], ra[batch], rb[batch], n[batch]
            apart = drift[batch] + linear[pa] + _cross_rows(angular[pa], qa)
            apart -= linear[pb] + _cross_rows(angular[pb], qb)
            apart -= pn * np.einsum("ij,ij->i", apart, pn)[:, None]
            length = np.sqrt(np.einsum("ij,ij->i", apart, apart))
            tangent = apart / np.maximum(length, _TINY)[:, None]
            twist_a, twist_b, resistance = self._tangent_response(pa, pb, qa, qb, tangent)
            stop = length / resistance
            if sticking:
                grip = np.where(stop <= limit[batch], stop, 0.0)
            else:
                grip = np.minimum(stop, limit[batch])
            linear[pa] -= (inverse_mass[pa] * grip)[:, None] * tangent
            linear[pb] += (inverse_mass[pb] * grip)[:, None] * tangent
            angular[pa] -= grip[:, None] * twist_a
            angular[pb] += grip[:, None] * twist_b
            applied[batch] = grip
        return applied

    def set_rolling_resistance(self, coefficient: float) -> None:
        """Rigid bodies resist rolling on what they touch with a torque ``coefficient * N * R`` (``N``
        the normal force of a contact patch, ``R`` the body's lever from its centre of mass to the
        patch), as a wheel's or a ball's rolling resistance: a ring rolling on flat ground slows at
        ``coefficient * g / 2``, a solid ball at ``coefficient * g / 1.4``. It only slows the rolling
        (never turns a body back), and leaves spinning about the contact normal to friction."""
        if self._rigid is None or not self._rigid["sequential"]:
            raise SimulationError(
                "rolling resistance needs sequential rigid contacts (enable_rigid_contacts(sequential=True))"
            )
        if not (np.isfinite(coefficient) and coefficient >= 0):
            raise SimulationError(f"rolling resistance must be a number >= 0, got {coefficient}")
        self._rolling_resistance = float(coefficient)

    def _resist_rolling(self, patches, angular, h) -> None:
        """Per contact patch, an angular impulse against the bodies' relative rolling (their relative
        turning rate across the patch normal) of at most ``c N R h``, at most what stops it."""
        inverse_inertia = self._body_frame[1]
        a, b = patches["sides"]
        ra, rb = patches["arms"]
        n = patches["normal"]
        lever = np.maximum(np.abs(np.einsum("ij,ij->i", ra, n)), np.abs(np.einsum("ij,ij->i", rb, n)))
        # N h = load / h: the patch's normal impulse over the substep; times c R: the angular impulse.
        limit = self._rolling_resistance * patches["load"] / h * lever
        for batch in patches["batches"]:
            pa, pb, pn = a[batch], b[batch], n[batch]
            rolling = angular[pa] - angular[pb]
            rolling -= pn * np.einsum("ij,ij->i", rolling, pn)[:, None]
            rate = np.sqrt(np.einsum("ij,ij->i", rolling, rolling))
            axis = rolling / np.maximum(rate, _TINY)[:, None]
            turn_a = np.einsum("kij,kj->ki", inverse_inertia[pa], axis)
            turn_b = np.einsum("kij,kj->ki", inverse_inertia[pb], axis)
            ease = np.einsum("ij,ij->i", turn_a + turn_b, axis)
            impulse = np.minimum(limit[batch], rate / np.maximum(ease, _TINY))
            angular[pa] -= impulse[:, None] * turn_a
            angular[pb] += impulse[:, None] * turn_b

    def _rigid_velocity_pass(self, p, v, h) -> None:
        """After a substep's velocities are derived (Müller et al. 2020, section 3.6), per contact the
        last projection pushed: the bodies' relative normal speed there is removed (no restitution: a
        contact pushed out neither bounces nor rocks the body), and the tangential one slowed by
        dynamic friction, ``mu_d`` times the normal force over the substep, never past stopping."""
        solved = self._rigid.pop("solved", None)
        if solved is None:
            return
        clusters, rigid = self._clusters, self._rigid
        touched = solved["touched"]
        count = len(touched)
        members, cluster = clusters["members"], clusters["cluster"]
        moved_particles = members[np.isin(cluster, touched)]
        compact = np.full(len(clusters["total"]), count, np.int64)
        compact[touched] = np.arange(count)
        owner = compact[rigid["body"][moved_particles]]
        mass = clusters["mass"][np.isin(cluster, touched)]
        weights = np.repeat(mass, 3).reshape(-1, 3)
        total = clusters["total"][touched]
        position, velocity = p[moved_particles], v[moved_particles]
        centroid = np.zeros((count + 1, 3))
        velocities = np.zeros((count + 1, 6))  # each body's (linear, angular) velocity (views below)
        linear, angular = velocities[:, :3], velocities[:, 3:]
        for axis in range(3):
            centroid[:count, axis] = np.bincount(owner, mass * position[:, axis], minlength=count) / total
            linear[:count, axis] = np.bincount(owner, mass * velocity[:, axis], minlength=count) / total
        relative = position - centroid[owner]
        momentum = _cross_rows(relative, velocity * weights)
        spin = np.zeros((count, 3))
        for axis in range(3):
            spin[:, axis] = np.bincount(owner, weights=momentum[:, axis], minlength=count)
        inverse_mass, inverse_inertia = solved["inverse_mass"], solved["inverse_inertia"]
        self._body_frame = (inverse_mass, inverse_inertia)
        angular[:count] = np.einsum("kij,kj->ki", inverse_inertia[:count], spin)
        before = velocities.copy()
        side_a, side_b = solved["sides"]
        reach_a, reach_b = solved["reach"]
        push_a, push_b = solved["push"]
        ease, pushed = solved["ease"], solved["pushed"]
        bounds = solved["bounds"]
        # Twice: a body pushed into the ground by an impact above it is stopped there again.
        for _ in range(2):
            for k in range(len(bounds) - 1):
                s = slice(bounds[k], bounds[k + 1])
                active = pushed[s] > 0
                if not np.any(active):
                    continue
                a, b = side_a[s], side_b[s]
                # The contact points' relative speed along the normal: n . (v + w x r) = (n, r x n) . (v, w).
                speed = np.einsum("ij,ij->i", velocities[a], reach_a[s])
                speed -= np.einsum("ij,ij->i", velocities[b], reach_b[s])
                impulse = np.where(active, -speed * ease[s], 0.0)
                velocities[a] += impulse[:, None] * push_a[s]
                velocities[b] -= impulse[:, None] * push_b[s]
        patches = solved["patches"]
        drift = np.zeros((len(patches["load"]), 3))
        # mu_d times the normal impulse of the position pass (load / h).
        limit = patches["dynamic"] * patches["load"] / h
        self._patch_friction(patches, linear, angular, drift, limit, False)
        if self._rolling_resistance > 0:
            self._resist_rolling(patches, angular, h)
        change = velocities - before
        v[moved_particles] += change[owner, :3] + _cross_rows(change[owner, 3:], relative)

    def add_self_collision(
        self, particles: ArrayLike, radius: float, bodies: ArrayLike | None = None, friction: float = 0.5
    ) -> None:
        """Particles of one body (a cloth, a soft shell) collide with each other as spheres of
        ``radius``, so a folded or crumpled mesh does not pass through itself.

        Pairs already closer than ``2 * radius`` now (in the rest shape: mesh neighbours) are left
        to the body's own constraints. ``bodies`` labels the particles' bodies (pairs of different
        bodies are ``add_particle_collisions``'s job); ``friction`` is the Coulomb coefficient.
        """
        idx = self._indices(particles, "add_self_collision")
        if not radius > 0 or not (np.isfinite(friction) and friction >= 0):
            raise SimulationError(
                f"self collision needs radius > 0 and friction >= 0, got {radius}, {friction}"
            )
        labels = np.zeros(len(idx), np.int64) if bodies is None else np.asarray(bodies).reshape(-1)
        if labels.shape != idx.shape or labels.dtype.kind not in "iu":
            raise SimulationError(f"self collision bodies must be {len(idx)} integer labels")
        self._self_collision = {
            "members": idx,
            "bodies": labels.astype(np.int64),
            "rest": self._x[idx].copy(),
            "radius": float(radius),
            "friction": float(friction),
        }

    @property
    def collision_radius(self) -> float:
        """The smallest collision radius in use (particle contacts or self collision): how far a
        particle may move in one substep without skipping a contact."""
        radii = [self.particle_radius] if self.particle_radius > 0 else []
        if self._self_collision is not None:
            radii.append(self._self_collision["radius"])
        return min(radii) if radii else 0.0

    def add_shape_match(
        self,
        indices: ArrayLike | Sequence[ArrayLike],
        stiffness: float = 1.0,
    ) -> None:
        """Shape-matching clusters (Müller et al. 2005) pulling particles towards their rest shape,
        rigidly rotated and translated to fit (stiffness 1 = rigid, 0 = no effect).

        ``indices``: one cluster (a 1-D index array), or several possibly overlapping clusters (a
        sequence of index arrays, or a 2-D array with one cluster per row). Overlapping clusters
        (e.g. one per vertex over its 1-ring) give soft, locally rigid bodies; a particle in
        several clusters moves by the average of their goals.
        """
        if not 0.0 <= stiffness <= 1.0:
            raise SimulationError(f"shape matching stiffness must be in [0, 1], got {stiffness}")
        if isinstance(indices, np.ndarray) and indices.ndim == 2:
            groups = list(indices)
        elif isinstance(indices, np.ndarray) or (len(indices) and np.isscalar(indices[0])):  # type: ignore[index]
            groups = [indices]
        else:
            groups = list(indices)  # type: ignore[arg-type]
        members = [self._indices(g, "add_shape_match") for g in groups]
        if not members or any(len(m) < 2 for m in members):
            raise SimulationError("every shape-matching cluster needs at least 2 particles")
        cluster = np.repeat(np.arange(len(members)), [len(m) for m in members])
        flat = np.concatenate(members)
        # Pinned particles weigh "a lot": they drag the cluster frame without being moved by it.
        mass = 1.0 / np.maximum(self._w[flat], 1e-6)
        counts = np.array([len(m) for m in members])
        starts = np.cumsum(counts) - counts
        total = np.add.reduceat(mass, starts)
        centroid = np.add.reduceat(self._x[flat] * mass[:, None], starts) / total[:, None]
        new = {
            "members": flat,
            "cluster": cluster,
            "starts": starts,
            "mass": mass,
            "total": total,
            "rest": self._x[flat] - centroid[cluster],
            "stiffness": np.full(len(members), float(stiffness)),
            "quaternions": np.tile([1.0, 0.0, 0.0, 0.0], (len(members), 1)),
            "warm": np.zeros(len(members), dtype=bool),
        }
        if self._clusters is None:
            self._clusters = new
        else:
            old = self._clusters
            offset = len(old["total"])
            self._clusters = {
                "members": np.concatenate((old["members"], new["members"])),
                "cluster": np.concatenate((old["cluster"], new["cluster"] + offset)),
                "starts": np.concatenate((old["starts"], new["starts"] + len(old["members"]))),
                **{
                    k: np.concatenate((old[k], new[k]))
                    for k in ("mass", "total", "rest", "stiffness", "quaternions", "warm")
                },
            }
        for cached in ("mass3", "rest9", "slots", "whole", "work", "mass_rest", "rest_rows", "goal_rows"):
            self._clusters.pop(cached, None)
        self._active_clusters = None
        if self._rigid is not None:
            self.enable_rigid_contacts()
        self._clusters["share"] = np.bincount(self._clusters["members"], minlength=len(self._x)).astype(
            np.float64
        )

    @property
    def cluster_rotations(self) -> NDArray[np.float64]:
        """Quaternions ``(C, 4)`` (w first) of the last best-fit rotation of each cluster."""
        if self._clusters is None:
            return np.zeros((0, 4))
        return self._clusters["quaternions"].copy()

    def add_volume(self, triangles: ArrayLike, pressure: float = 1.0, compliance: float = 0.0) -> None:
        """Keep the volume of a closed triangle mesh at ``pressure`` times its current volume.

        Triangles ``(T, 3)`` must be consistently oriented (normals outward or all inward).
        """
        tri = self._indices(triangles, "add_volume triangles").reshape(-1, 3)
        if len(tri) < 4:
            raise SimulationError("add_volume needs a closed mesh of at least 4 triangles")
        if not pressure > 0 or compliance < 0:
            raise SimulationError(
                f"volume pressure must be > 0 and compliance >= 0, got {pressure}, {compliance}"
            )
        rest = self._volume(self._x, tri)
        if abs(rest) < _TINY:
            raise SimulationError("add_volume: the mesh encloses no volume (is it closed and not flat?)")
        volume = {"triangles": tri, "target": pressure * rest, "compliance": float(compliance)}
        if _is_closed(tri):
            corners = tri.T.reshape(-1)  # all first corners, then all second, then all third
            volume["corners"] = corners
            volume["slots"] = (corners[:, None] * 3 + np.arange(3)).reshape(-1)
        self._volumes.append(volume)

    @staticmethod
    def _volume(positions: NDArray[np.float64], triangles: NDArray[np.int64]) -> float:
        a, b, c = (positions[triangles[:, k]] for k in range(3))
        return float(np.einsum("ij,ij->", np.cross(a, b), c) / 6.0)

    def volume(self, triangles: ArrayLike) -> float:
        """Signed volume enclosed by ``triangles`` at the current positions."""
        return self._volume(self._x, np.asarray(triangles, dtype=np.int64).reshape(-1, 3))

    # ------------------------------------------------------------------------------------- stepping
    def step(self, dt: float, substeps: int = 10, iterations: int = 1, solver: str | None = None) -> None:
        """Advance one frame of ``dt`` seconds. Raises SimulationDivergedError (state unchanged)."""
        if not (np.isfinite(dt) and dt > 0):
            raise SimulationError(f"time step must be positive, got {dt}")
        if int(substeps) < 1 or int(iterations) < 1:
            raise SimulationError(f"substeps and iterations must be >= 1, got {substeps}, {iterations}")
        method = self.solver if solver is None else solver
        self._check_solver(method)
        substeps, iterations = int(substeps), int(iterations)
        self._release_poured()
        h = dt / substeps
        self._substep_length = h
        target = self.frame + 1
        x = self._x.copy()
        v = self._v.copy()
        spare = np.empty_like(x)  # substeps alternate between two position arrays instead of allocating
        free = self._w > 0
        gravity_step = np.where(free[:, None], self.gravity * h * h, 0.0)
        # Same-shape operands only in the per-substep arithmetic: numpy's (N, 3) * (N, 1)
        # broadcasting runs N inner loops of length 3 and is several times slower.
        velocity_scale = np.repeat(np.where(free, h, 0.0), 3).reshape(-1, 3)
        keep = (1.0 - self.damping) ** h
        moving = [c for c in self._colliders if isinstance(c, MeshCollider) and c.animated]
        for collider in moving:
            collider.begin_frame(target)
        self._prepare_colliders(x, v, dt)
        refresh = self._pair_refresh(v, dt, substeps)
        pair_margin = 1.5 * self._travel(v, dt) * refresh / substeps + 0.25 * self.collision_radius
        pairs = self_pairs = None
        clusters = self._awake()[0]  # asleep and held bodies: no shape matching
        chains = self._chain_solver() if method == "gauss_seidel" else None
        if self._dist["i"].size and method == "gauss_seidel" and self._colours is None and chains is None:
            # Greedy colouring in a spatial sweep order packs meshes into few, even colours (8 instead
            # of 10 on an icosphere), and every colour costs a fixed numpy overhead per projection.
            middle = 0.5 * (x[self._dist["i"]] + x[self._dist["j"]])
            best = None
            for axis in range(3):  # keep the sweep direction that needs the fewest colours
                sweep = np.argsort(middle[:, axis], kind="stable")
                colours = [
                    np.sort(sweep[c]) for c in _edge_colouring(self._dist["i"][sweep], self._dist["j"][sweep])
                ]
                if best is None or len(colours) < len(best):
                    best = colours
            self._colours = best
        if chains is not None:
            plan = {"chains": chains.prepare(h, self._w)}
        else:
            plan = self._distance_plan(h, method)
        lambdas = np.zeros(len(self._dist["rest"]))
        compliant = bool(np.any(self._dist["compliance"] > 0))
        volume_lambdas = np.zeros(len(self._volumes))
        everyone_free = bool(np.all(free))
        with np.errstate(all="ignore"):
            for sub in range(substeps):
                for collider in moving:
                    collider.move_to((sub + 1) / substeps)
                if self._collide_particles and sub % refresh == 0:
                    pairs = self._particle_pairs(x, pair_margin)
                if self._self_collision is not None:
                    self_pairs = self._self_pairs_near(x)
                t = self.time + (sub + 1) * h
                start, p = x, spare
                np.multiply(v, velocity_scale, out=p)
                np.add(x, p, out=p)
                p += gravity_step
                for idx, trajectory in self._pins:
                    if trajectory is not None:
                        p[idx] = np.asarray(trajectory(t), dtype=np.float64)
                if compliant:  # XPBD multipliers start at zero every substep (rigid edges use none)
                    lambdas.fill(0.0)
                volume_lambdas.fill(0.0)
                for _ in range(iterations):
                    self._solve_distances(p, lambdas, plan)
                    self._solve_volumes(p, volume_lambdas, h)
                    if self._rigid is None:
                        self._solve_particle_pairs(p, pairs, start)
                    else:
                        self._solve_rigid_contacts(p, pairs, start, free)
                    if self_pairs is not None:
                        sc = self._self_collision
                        self._solve_particle_pairs(p, self_pairs, start, sc["radius"], sc["friction"])
                    self._solve_contacts(p, start, free, self._rigid is None, everyone_free)
                    # Shape matching last: a rigid cluster then ends every projection exactly rigid,
                    # and the contacts it may slightly undo are restored next projection.
                    self._solve_shapes(p, substeps * iterations, clusters)
                np.subtract(p, start, out=v)
                v *= keep / h
                if self._rigid is not None and self._rigid["sequential"]:
                    self._rigid_velocity_pass(p, v, h)
                x, spare = p, start
            if self.strain_limiting:
                self._limit_strain(x, v, dt, spare, free)
        try:
            self._check(x, v, target)
        except SimulationDivergedError:
            self._active_clusters = None  # its rotations moved with the failed step
            raise
        self._store_rotations(clusters)
        before = self._x
        self._x, self._v = x, v
        self.time += dt
        self.frame = target
        if self._sleep is not None:
            self._update_sleep(dt, before)

    # ------------------------------------------------------------------------------ strain limiting
    def _strain_edges(self) -> dict:
        """The inextensible edges (as ``max_stretch``), their limits and each particle's edges."""
        if self._strain_plan is None:
            i, j, rest = self._stiff_edges()
            n = len(self._x)
            ends = np.concatenate((i, j))
            offsets = np.zeros(n + 1, np.int64)
            np.cumsum(np.bincount(ends, minlength=n), out=offsets[1:])
            order = np.argsort(ends, kind="stable")
            edge = order % max(len(i), 1)
            self._strain_plan = {
                "i": i,
                "j": j,
                "rest": rest,
                # The edges at particle k are incident[offsets[k]:offsets[k + 1]], their other ends
                # other[...]; first[...]: whether k is the edge's first end (i).
                "incident": edge,
                "other": np.concatenate((j, i))[order],
                "first": order < len(i),
                "offsets": offsets,
                "marked": np.zeros(n, bool),
            }
        plan = self._strain_plan
        limits = (self.strain_limit, self.compression_limit)
        if plan.get("limits") != limits:
            rest = plan["rest"]
            high = rest * (1.0 + self.strain_limit) if self.strain_limit > 0 else np.full(len(rest), np.inf)
            low = rest * (1.0 - self.compression_limit) if self.compression_limit > 0 else np.zeros(len(rest))
            plan.update(
                limits=limits,
                high=high,
                low=low,
                high_goal=rest + _STRAIN_TARGET * (high - rest),
                low_goal=rest - _STRAIN_TARGET * (rest - low),
            )
        return plan

    @staticmethod
    def _edges_at(plan: dict, particles: NDArray[np.int64]) -> NDArray[np.int64]:
        """Every edge with an end among ``particles`` (unique), without sorting: an edge with both
        ends there is taken from its first end only."""
        offsets = plan["offsets"]
        start = offsets[particles]
        counts = offsets[particles + 1] - start
        total = int(counts.sum())
        if not total:
            return np.zeros(0, np.int64)
        # Concatenated ranges start[k]:start[k] + counts[k], without a Python loop.
        slots = np.arange(total) + np.repeat(start - np.cumsum(counts) + counts, counts)
        marked = plan["marked"]
        marked[particles] = True
        keep = ~marked[plan["other"][slots]]
        keep |= plan["first"][slots]
        marked[particles] = False
        return plan["incident"][slots[keep]]

    def limit_strain(self, stretch: float, compression: float = 0.0, passes: int = 100) -> None:
        """End every frame with strain limiting (see ``strain_limiting``): inextensible edges longer
        than ``1 + stretch`` or shorter than ``1 - compression`` times their rest length (0: no
        bound) are brought back inside, in at most ``passes`` passes a frame (a frame the limiting
        could not hold is Auto Substeps' to redo with more substeps). 100: the icosphere drops need
        at most 39-278 passes in a frame and cost the same with 100 or 400 (1.7 / 4.3 / 19.6 / 70 ms a
        frame at 642-40,962 vertices); a sheet hanging from two corners, where the whole sheet is at
        the limit, 6.0 ms a frame with 100 and 10.5 with 400 (5.1 without strain limiting)."""
        if not (np.isfinite(stretch) and stretch >= 0 and np.isfinite(compression) and 0 <= compression < 1):
            raise SimulationError(
                f"strain limits must be stretch >= 0 and 0 <= compression < 1, got {stretch}, {compression}"
            )
        if int(passes) < 1:
            raise SimulationError(f"strain limiting needs at least one pass, got {passes}")
        self.strain_limit, self.compression_limit = float(stretch), float(compression)
        self.strain_passes = int(passes)

    @property
    def strain_limiting(self) -> bool:
        """Whether frames end with strain limiting: a limit is set and the world's particles are held
        by distance constraints and the ground and colliders only. Volume, shape-matching, rigid and
        particle-particle contacts undo it on the next frame's substeps, so those worlds keep their
        stretch by substeps. Measured on drops: with volume and shape matching a 10,242-vertex jelly
        bounced from 1.3 m to 1.6 m; with self collision a 2,562-vertex ball ended with 12 crossing
        triangle pairs; two 642-vertex balls dropped on each other came 1 cm apart (contact: 4 cm)."""
        return (self.strain_limit > 0 or self.compression_limit > 0) and not self.strain_limiting_blockers()

    def strain_limiting_blockers(self) -> list[str]:
        """What keeps this world from limiting strain at a frame's end (see ``strain_limiting``)."""
        return [
            name
            for name, present in (
                ("volume", bool(self._volumes)),
                ("shape matching", self._clusters is not None and self._rigid is None),
                ("self collision", self._self_collision is not None),
                ("rigid bodies", self._rigid is not None),
                ("several bodies colliding", self._bodies_collide()),
            )
            if present
        ]

    def _bodies_collide(self) -> bool:
        """Whether particles of different bodies (collision groups) push each other apart."""
        groups = self._collision_groups
        if not self._collide_particles:
            return False
        return groups is None or (len(groups) > 0 and groups.min() != groups.max())

    def _limit_strain(self, x, v, dt, start, free) -> None:
        """Strain limiting (Provot 1995; Bridson et al. 2002) at the end of a frame: inextensible
        edges stretched past ``strain_limit`` (or compressed past ``compression_limit``) are moved
        back inside it, and velocities change by the same displacement over the frame.

        Only the edges out of bounds are corrected, in Jacobi passes over that active set, recomputed
        every pass from the edges at the particles the pass moved (the others cannot have changed), so
        a pass costs what the stretched region costs, not the mesh. Without it, holding stretch low
        needs substeps in proportion to the mesh's resolution (the impact travels one edge per
        projection); with it, the substeps follow the motion and the few passes here hold the limit.
        Each correction is shared between the edge's ends by inverse mass (a pinned end does not move)
        and scaled by the busier end's count of corrected edges, so each pass conserves momentum."""
        plan = self._strain_edges()
        i, j = plan["i"], plan["j"]
        if not len(i):
            return
        delta = x.take(i, axis=0)
        delta -= x.take(j, axis=0)
        length = np.sqrt(np.einsum("ij,ij->i", delta, delta))
        w = self._w
        # Edges between two immovable particles (pinned, asleep) cannot be corrected.
        movable = (w.take(i) + w.take(j)) > 0
        candidates = np.flatnonzero(((length > plan["high"]) | (length < plan["low"])) & movable)
        passes, settled, checked = 0, True, 0
        if len(candidates):
            before = x.copy()
            settled = False
            floor = None if self._ground is None else self._ground[0] + self.particle_radius
            candidate_length = length[candidates]
            while passes < self.strain_passes:
                if candidate_length is None:
                    a, b = i[candidates], j[candidates]
                    delta = x.take(a, axis=0)
                    delta -= x.take(b, axis=0)
                    candidate_length = np.sqrt(np.einsum("ij,ij->i", delta, delta))
                checked += len(candidates)
                high, low = plan["high"][candidates], plan["low"][candidates]
                out = ((candidate_length > high) | (candidate_length < low)) & movable[candidates]
                if not out.any():
                    settled = True
                    break
                passes += 1
                edges = candidates[out]
                length = candidate_length[out]
                goal = np.where(length > high[out], plan["high_goal"][edges], plan["low_goal"][edges])
                a, b = i[edges], j[edges]
                delta = x.take(a, axis=0)
                delta -= x.take(b, axis=0)
                moved, ends = np.unique(np.concatenate((a, b)), return_inverse=True)
                m = len(edges)
                count = np.bincount(ends, minlength=len(moved))
                busier = np.maximum(count[ends[:m]], count[ends[m:]])
                wa, wb = w[a], w[b]
                total = wa + wb
                # (1 - goal / length) of the edge vector closes the gap; shared by inverse mass.
                share = (1.0 - goal / np.maximum(length, _TINY)) * _STRAIN_RELAXATION / busier
                share /= np.where(total > 0, total, 1.0)
                # Both ends' moves summed per particle in one bincount over (particle, axis) slots.
                moves = np.concatenate((delta * (-wa * share)[:, None], delta * (wb * share)[:, None]))
                slots = (ends[:, None] * 3 + np.arange(3)).reshape(-1)
                shift = np.bincount(slots, weights=moves.reshape(-1), minlength=3 * len(moved))
                position = x[moved] + shift.reshape(-1, 3)
                if floor is not None:  # the ground holds inside the passes, so they see it
                    lifted = (position[:, 2] < floor) & (w[moved] > 0)
                    position[lifted, 2] = floor
                x[moved] = position
                candidates = self._edges_at(plan, moved)
                candidate_length = None
            for collider in self._colliders:  # the ground held inside the passes
                collider.project(x, start, free, self.particle_radius)
            # The displacement over the frame becomes velocity (Bridson et al. 2002), so the limited
            # edges stop separating instead of stretching again next frame.
            v += (x - before) * (1.0 / dt)
        # Its cost in edge projections, a pass's fixed numpy overhead counted as _PASS_EDGES edges:
        # Auto Substeps weighs it against a substep's (every edge once).
        self.last_strain_limiting = (passes, settled, checked + _PASS_EDGES * passes)

    def _check(self, x: NDArray[np.float64], v: NDArray[np.float64], frame: int) -> None:
        if not (np.all(np.isfinite(x)) and np.all(np.isfinite(v))):
            raise SimulationDivergedError(frame, "positions became NaN or infinite")
        speed = float(np.sqrt(np.max(np.einsum("ij,ij->i", v, v))))
        if speed > self.max_speed:
            raise SimulationDivergedError(
                frame, f"a particle reached {speed:.3g} m/s (limit {self.max_speed:g})"
            )

    def _travel(self, v, dt) -> float:
        """An upper bound of how far any particle moves in ``dt`` (from speed and gravity)."""
        fastest = float(np.sqrt(np.max(np.einsum("ij,ij->i", v, v)))) if len(v) else 0.0
        return fastest * dt + float(np.linalg.norm(self.gravity)) * dt * dt

    def _prepare_colliders(self, x, v, dt) -> None:
        margin = 1.5 * self._travel(v, dt) + self.particle_radius
        for collider in self._colliders:
            if isinstance(collider, MeshCollider):
                collider.prepare(x, margin)

    def _pair_refresh(self, v, dt, substeps) -> int:
        """Substeps between particle-pair searches: a search stays valid while nothing moves more
        than about one particle radius, and a small search radius keeps the candidate count low."""
        if not self._collide_particles and self._self_collision is None:
            return substeps
        travel = self._travel(v, dt)
        if travel <= 0:
            return substeps
        return int(np.clip(np.floor(substeps * self.collision_radius / travel), 1, substeps))

    def _self_pairs_near(self, x) -> NDArray[np.int64]:
        """The self-collision candidate pairs, searched again only once some particle has moved more
        than the search margin since the last search (a Verlet list: a resting or slow body is not
        searched every frame, a fast one as often as it needs)."""
        sc = self._self_collision
        margin = SELF_COLLISION_MARGIN * sc["radius"]
        found = sc.get("near")
        if found is not None:
            pairs, reference = found
            moved = x[sc["members"]] - reference
            if float(np.max(np.einsum("ij,ij->i", moved, moved), initial=0.0)) < margin * margin:
                return pairs
        pairs = self._self_pairs(x, margin)
        sc["near"] = (pairs, x[sc["members"]])
        return pairs

    def _self_pairs(self, x, margin) -> NDArray[np.int64]:
        sc = self._self_collision
        members, radius = sc["members"], sc["radius"]
        local = close_pairs(x[members], 2.0 * radius + 2.0 * margin)
        a, b = local[:, 0], local[:, 1]
        rest = sc["rest"]
        apart = np.einsum("ij,ij->i", rest[a] - rest[b], rest[a] - rest[b]) >= (2.0 * radius) ** 2
        keep = apart & (sc["bodies"][a] == sc["bodies"][b])
        pairs = members[local[keep]]
        return pairs[self._w[pairs[:, 0]] + self._w[pairs[:, 1]] > 0]

    def _pair_reach(self) -> float:
        """How far apart two particles may be and still touch: a diameter, or between the surface
        lattices of rigid bodies (2 radii apart, ``enable_rigid_contacts``) up to sqrt(6) radii, where
        a sample sits over the middle of a square of the other surface's samples."""
        return (2.45 if self._rigid is not None else 2.0) * self.particle_radius

    def _awake(self) -> tuple:
        """``(clusters, awake particles, held particles)``: the shape-matching clusters of the bodies
        that are neither asleep nor waiting to be poured (None if there are none), and per-particle
        masks (None when every body is awake)."""
        clusters, state = self._clusters, self._sleep
        if state is None or not (np.any(state["asleep"]) or np.any(state["held"])):
            return clusters, None, None
        if self._active_clusters is None:
            awake = ~(state["asleep"] | state["held"])
            members, cluster = clusters["members"], clusters["cluster"]
            awake_particles = np.ones(len(self._x), bool)
            awake_particles[members] = awake[cluster]
            held_particles = np.zeros(len(self._x), bool)
            held_particles[members] = state["held"][cluster]
            ids = np.flatnonzero(awake)
            subset = None
            if len(ids):
                keep = awake[cluster]
                counts = np.bincount(cluster, minlength=len(awake))[ids]
                subset = {
                    "ids": ids,
                    "members": members[keep],
                    "cluster": np.repeat(np.arange(len(ids)), counts),
                    "starts": np.cumsum(counts) - counts,
                    "mass": clusters["mass"][keep],
                    "rest": clusters["rest"][keep],
                    "share": clusters["share"],
                    **{k: clusters[k][ids] for k in ("total", "stiffness", "quaternions", "warm")},
                }
            self._active_clusters = (subset, awake_particles, held_particles)
        return self._active_clusters

    def _particle_pairs(self, x, margin) -> NDArray[np.int64]:
        groups = self._collision_groups
        if groups is not None and len(groups) and groups.min() == groups.max():
            return np.zeros((0, 2), np.int64)  # one body (one group): nothing to collide with
        reach = self._pair_reach() + 2.0 * margin
        if self._collision_groups is None:
            pairs = close_pairs(x, reach)
        else:
            _, awake, held = self._awake()
            if awake is None:
                pairs = close_pairs_between_groups(x, reach, self._collision_groups)
            else:
                # Held bodies touch nothing; sleeping ones are only searched near awake ones.
                present = np.flatnonzero(~held)
                found = close_pairs_between_groups(
                    x[present], reach, self._collision_groups[present], awake[present]
                )
                pairs = present[found]
        weights = self._w[pairs[:, 0]] + self._w[pairs[:, 1]] if len(pairs) else np.zeros(0)
        return pairs[weights > 0]

    def _distance_plan(self, h: float, method: str) -> dict | None:
        """Per-step constants of the distance solve (gathered once, reused every projection)."""
        d = self._dist
        if d["i"].size == 0:
            return None
        w = self._w
        cached = self._colour_plan_cache
        # Rigid edges' plans do not depend on the substep length: one plan serves every substep count
        # the automatic substeps try (building one costs several substeps).
        key = h if np.any(d["compliance"] > 0) else 0.0
        if method == "gauss_seidel" and cached:
            if cached[0] is self._colours and np.array_equal(cached[1], w):
                if key in cached[2]:
                    return cached[2][key]
            else:
                cached = None
        alpha = d["compliance"] / (h * h)
        denominator = w[d["i"]] + w[d["j"]] + alpha
        inverse = np.where(denominator > 0, 1.0 / np.where(denominator > 0, denominator, 1.0), 0.0)
        compliant = bool(np.any(alpha > 0))
        n = len(self._x)
        if method == "gauss_seidel":
            plan = self._colour_plan(inverse, alpha, compliant)
            if cached is None or len(cached[2]) > 8:
                cached = (self._colours, w.copy(), {})
            cached[2][key] = plan
            self._colour_plan_cache = cached
            return plan
        both = np.concatenate((d["i"], d["j"]))
        count = np.bincount(both, weights=(w[both] > 0).astype(np.float64), minlength=n)
        return {
            "both": both,
            "rest": d["rest"],
            "scaled_rest": d["rest"] * inverse,
            "weights": np.stack((w[d["i"]], -w[d["j"]])),
            "inverse": inverse,
            "alpha": alpha,
            "compliant": compliant,
            # One bincount over flattened (particle, axis) slots scatters all three axes at once.
            "slots": (both[:, None] * 3 + np.arange(3)).reshape(-1),
            "scale": (self.jacobi_relaxation / np.maximum(count, 1.0))[:, None],
        }

    def _colour_plan(self, inverse, alpha, compliant) -> dict:
        """The Gauss-Seidel sweep's constants, index maps and work buffers (see ``_sweep_colours``).

        A colour of a mesh touches nearly every particle once, so the sweep keeps the state in each
        colour's own layout: the flat slots of its edges' ends first, axis-major ``(3, 2, m)`` so every
        per-edge factor broadcasts over a contiguous row, then the slots it does not touch. The colour
        works on a view of that state, and one ``take`` of the 3N state moves it into the next
        colour's layout (half what a gather beside the state costs). A colour much shorter than the
        longest (greedy colouring leaves a short last one) gathers its few slots from the current
        layout and puts them back instead of paying for a layout of its own.
        """
        d, w = self._dist, self._w
        size = 3 * len(self._x)
        colours = self._colours or []
        longest = max((len(c) for c in colours), default=0)
        buffers = (np.empty(size), np.empty(size))
        batches: list[dict] = []
        layout_inverse = enter = None  # layout_inverse[natural slot] = where it sits in the layout
        current = 0
        for k, colour in enumerate(colours):
            i, j = d["i"][colour], d["j"][colour]
            m = len(colour)
            slots = (np.concatenate((i, j)) * 3 + np.arange(3)[:, None]).reshape(-1)
            batch: dict = {"m": m, "colour": colour, "gather": None, "move": None}
            if k > 0 and 4 * m <= longest:
                batch["gather"] = layout_inverse[slots]
                batch["small"] = np.empty(6 * m)
                batch["pair"] = batch["small"].reshape(3, 2, m)
            else:
                untouched = np.ones(size, bool)
                untouched[slots] = False
                layout = np.concatenate((slots, np.flatnonzero(untouched)))
                if layout_inverse is None:
                    enter = layout
                else:
                    current = 1 - current
                    batches[-1]["move"] = layout_inverse[layout]
                    batches[-1]["target"] = buffers[current]
                layout_inverse = np.empty(size, np.int64)
                layout_inverse[layout] = np.arange(size)
                batch["pair"] = buffers[current][: 6 * m].reshape(3, 2, m)
            batch["state"] = buffers[current]
            rest, inv = d["rest"][colour], inverse[colour]
            # Signed weights (2, m): particle i moves by +w_i, particle j by -w_j along the edge.
            weights = np.stack((w[i], -w[j]))
            # Equal movable weights at both ends of every edge (an unpinned soft body): each end moves
            # half the correction, (rest / length - 1) / 2 along the edge, in opposite directions.
            even = not compliant and bool(np.all(w[i] == w[j]) and np.all(w[i] > 0))
            square = np.empty((4, m))
            square[3] = _TINY * _TINY  # summed with x^2 + y^2 + z^2: length >= _TINY without a maximum
            batch.update(
                rest=rest,
                pull=weights * (rest * inv),
                push=weights * inv,
                weights=weights,
                inverse=inv,
                alpha=alpha[colour],
                delta=np.empty((3, m)),
                square=square,
                length=np.empty(m),
                coef=np.empty((2, m)),
                moves=np.empty((3, 2, m)),
                half_rest=0.5 * rest if even else None,
            )
            batches.append(batch)
        plan = {
            "batches": batches,
            "enter": enter,
            "leave": layout_inverse,
            "last": buffers[current],
            "compliant": compliant,
        }
        if batches and all(batch["half_rest"] is not None for batch in batches):
            plan["even"] = [
                (
                    batch["pair"],
                    batch["pair"][:, ::-1],
                    batch["moves"],
                    batch["moves"][:, 0],
                    batch["square"][:3],
                    batch["square"],
                    batch["length"],
                    batch["half_rest"],
                    batch["state"],
                    batch["gather"],
                    batch.get("small"),
                    batch["move"],
                    batch.get("target"),
                )
                for batch in batches
            ]
        return plan

    def _sweep_colours(self, p, lambdas, plan) -> None:
        """One Gauss-Seidel sweep, colour after colour, on the state in each colour's layout (see
        ``_colour_plan``).

        The hot loop: every numpy call here runs (colours x substeps x iterations) times per frame, so
        each writes into preallocated buffers.
        """
        batches = plan["batches"]
        if not batches:
            return
        flat = p.reshape(-1)
        flat.take(plan["enter"], out=batches[0]["state"], mode="clip")  # valid indices: no bounds copy
        if "even" in plan:
            self._sweep_even_colours(plan["even"])
        else:
            self._sweep_general_colours(batches, lambdas, plan["compliant"])
        if np.shares_memory(flat, p):
            plan["last"].take(plan["leave"], out=flat, mode="clip")
        else:
            p[...] = plan["last"].take(plan["leave"]).reshape(p.shape)

    @staticmethod
    def _sweep_general_colours(batches, lambdas, compliant) -> None:
        for batch in batches:
            gather, state, pair = batch["gather"], batch["state"], batch["pair"]
            delta, square, length, coef, moves = (batch[k] for k in _WORK)
            if gather is not None:
                state.take(gather, out=batch["small"], mode="clip")
            np.subtract(pair[:, 0], pair[:, 1], out=delta)
            np.multiply(delta, delta, out=square[:3])
            np.add.reduce(square, axis=0, out=length)
            np.sqrt(length, out=length)
            if compliant:
                colour = batch["colour"]
                step = (batch["rest"] - length - batch["alpha"] * lambdas[colour]) * batch["inverse"]
                lambdas[colour] += step
                step /= length
                np.multiply(batch["weights"], step, out=coef)
            else:
                # weights * (rest - length) * inverse / length as weights * rest * inverse / length
                # - weights * inverse (exact for unit weights).
                np.divide(batch["pull"], length, out=coef)
                np.subtract(coef, batch["push"], out=coef)
            np.multiply(delta[:, None, :], coef, out=moves)
            pair += moves
            if gather is not None:
                state.put(gather, batch["small"], mode="clip")
            if batch["move"] is not None:
                state.take(batch["move"], out=batch["target"], mode="clip")

    @staticmethod
    def _sweep_even_colours(colours) -> None:
        """``_sweep_general_colours`` where both ends of every edge weigh the same (an unpinned soft
        body): each end moves half the correction, (rest / length - 1) / 2 along the edge, in opposite
        directions, computed once per edge; one subtract gives the edge vector for both ends (the
        second end's is the exact negation), so one multiply and one add move both."""
        for colour in colours:
            pair, swapped, moves, first, squares, square, length, half_rest = colour[:8]
            state, gather, small, move, target = colour[8:]
            if gather is not None:
                state.take(gather, out=small, mode="clip")
            np.subtract(pair, swapped, out=moves)
            np.multiply(first, first, out=squares)
            np.add.reduce(square, axis=0, out=length)
            np.sqrt(length, out=length)
            np.divide(half_rest, length, out=length)
            np.subtract(length, 0.5, out=length)
            np.multiply(moves, length, out=moves)
            pair += moves
            if gather is not None:
                state.put(gather, small, mode="clip")
            if move is not None:
                state.take(move, out=target, mode="clip")

    def _chain_solver(self) -> ChainSolver | None:
        """The exact chain solver if every distance constraint belongs to a simple chain."""
        if self._chains is None:
            d = self._dist
            paths = chain_paths(d["i"], d["j"]) if d["i"].size else None
            self._chains = ChainSolver(paths, d["rest"], d["compliance"]) if paths else False
        return self._chains or None

    def _solve_distances(self, p, lambdas, plan) -> None:
        if plan is None:
            return
        if "chains" in plan:
            self._chains.solve(p, lambdas, plan["chains"])
            return
        if "batches" in plan:
            self._sweep_colours(p, lambdas, plan)
            return
        edges = len(plan["rest"])
        pair = p.take(plan["both"], axis=0).reshape(2, edges, 3)
        delta = pair[0] - pair[1]
        length = np.sqrt(np.einsum("ij,ij->i", delta, delta))
        np.maximum(length, _TINY, out=length)
        if plan["compliant"]:
            step = (plan["rest"] - length - plan["alpha"] * lambdas) * plan["inverse"]
            lambdas += step
            step /= length
        else:
            step = plan["scaled_rest"] / length - plan["inverse"]
        moves = _scaled_pair(delta, plan["weights"] * step)
        total = np.bincount(plan["slots"], weights=moves.reshape(-1), minlength=3 * len(p))
        p += total.reshape(-1, 3) * plan["scale"]

    def _solve_volumes(self, p, lambdas, h) -> None:
        n = len(p)
        for k, volume in enumerate(self._volumes):
            if "corners" in volume:
                self._solve_closed_volume(p, lambdas, k, volume, h)
                continue
            tri = volume["triangles"]
            a, b, c = (p[tri[:, m]] for m in range(3))
            current = np.einsum("ij,ij->", np.cross(a, b), c) / 6.0
            corners = tri.T.reshape(-1)
            grads = np.concatenate((np.cross(b, c), np.cross(c, a), np.cross(a, b))) / 6.0
            gradient = np.stack(
                [np.bincount(corners, weights=grads[:, m], minlength=n) for m in range(3)], axis=1
            )
            alpha = volume["compliance"] / (h * h)
            denominator = float(np.sum(self._w * np.einsum("ij,ij->i", gradient, gradient))) + alpha
            if denominator <= 0:
                continue
            step = (-(current - volume["target"]) - alpha * lambdas[k]) / denominator
            lambdas[k] += step
            p += (self._w * step)[:, None] * gradient

    def _store_rotations(self, clusters) -> None:
        """Copy the rotations an awake subset of the clusters found back into all clusters."""
        if clusters is not None and "ids" in clusters:
            self._clusters["quaternions"][clusters["ids"]] = clusters["quaternions"]
            self._clusters["warm"][clusters["ids"]] = clusters["warm"]

    def _solve_closed_volume(self, p, lambdas, k, volume, h) -> None:
        """The volume constraint of a closed mesh with one cross product per triangle.

        With ``N = (b - a) x (c - a)`` per triangle, the volume is ``sum(a . N) / 6`` and, since every
        vertex's fan of triangles closes, its gradient at a vertex is the sum of ``N / 6`` over the
        triangles around it (the ``b x c`` terms of the open form differ by ``a x sum(b - c) = 0``).
        """
        count = len(volume["triangles"])
        work = volume.get("work")
        if work is None:  # buffers: at 10k+ vertices fresh temporaries cost more than the arithmetic
            work = volume["work"] = {
                "corners": np.empty((3 * count, 3)),
                "edges": np.empty((2, count, 3)),
                "normals": np.empty((count, 3)),
                "scratch": np.empty(count),
                "spread": np.empty((3, 3 * count)),
                "weights": np.empty(p.size),
            }
        corners = p.take(volume["corners"], axis=0, out=work["corners"], mode="clip")
        first = corners[:count]
        along_b, along_c = work["edges"]
        np.subtract(corners[count : 2 * count], first, out=along_b)
        np.subtract(corners[2 * count :], first, out=along_c)
        normals = _cross_rows(along_b, along_c, work["normals"], work["scratch"])
        current = np.einsum("ij,ij->", first, normals) / 6.0
        spread = work["spread"]
        spread[:] = normals.reshape(-1)  # the same normal for each of the triangle's three corners
        gradient = np.bincount(volume["slots"], weights=spread.reshape(-1), minlength=p.size)
        gradient *= 1.0 / 6.0
        weights = work["weights"]
        weights.reshape(-1, 3)[:] = self._w[:, None]
        weights *= gradient
        alpha = volume["compliance"] / (h * h)
        denominator = float(np.einsum("i,i->", weights, gradient)) + alpha  # np.dot: see _BLAS_ROWS
        if denominator <= 0:
            return
        step = (-(current - volume["target"]) - alpha * lambdas[k]) / denominator
        lambdas[k] += step
        weights *= step
        p += weights.reshape(p.shape)

    def _solve_shapes(self, p, projections_per_frame, clusters) -> None:
        if clusters is None:
            return
        members, cluster, starts = clusters["members"], clusters["cluster"], clusters["starts"]
        if "mass3" not in clusters:
            # Same-shape operands in the arithmetic below; (M, 3) * (M, 1) broadcasting is slow in numpy.
            clusters["mass3"] = np.repeat(clusters["mass"], 3).reshape(-1, 3)
            clusters["rest9"] = clusters["rest"][:, [0, 1, 2, 0, 1, 2, 0, 1, 2]]
            clusters["slots"] = (members[:, None] * 3 + np.arange(3)).reshape(-1)
            clusters["whole"] = len(starts) == 1 and bool(np.array_equal(members, np.arange(len(p))))
        if clusters["whole"]:
            self._solve_whole_shape(p, projections_per_frame, clusters)
            return
        mass3 = clusters["mass3"]
        current = p.take(members, axis=0)
        centroid = np.add.reduceat(current * mass3, starts) / clusters["total"][:, None]
        relative = (current - centroid[cluster]) * mass3
        covariance = np.add.reduceat(
            relative[:, [0, 0, 0, 1, 1, 1, 2, 2, 2]] * clusters["rest9"], starts
        ).reshape(-1, 3, 3)
        warm = clusters["warm"]
        quaternions = clusters["quaternions"]
        inverted = np.linalg.det(covariance) <= 0
        cold = ~warm | inverted
        if self._rigid is not None and self._rigid["sequential"]:
            # Rigid bodies: the exact rotation (SVD). Müller's iteration warm-started from the last
            # rotation recovers 8/9 of each substep's turn in 2 steps, and the missing ninth compounds:
            # a cube spinning in the air kept none of its spin after a second, a drum stopped rolling,
            # a toppling box froze mid-fall. (For 50 bodies the SVD also costs less than 4 steps.)
            cold = np.ones(len(warm), bool)
        elif np.any(~cold):
            quaternions[~cold] = polar_rotation_batch(
                covariance[~cold], quaternions[~cold], _POLAR_ITERATIONS
            )
        if np.any(cold):
            # Cold starts and inverted clusters: Müller's iteration can settle on a wrong stationary
            # rotation there (physics note 4.2), the SVD with the determinant fix cannot.
            quaternions[cold] = matrix_to_quaternion(kabsch_rotation_batch(covariance[cold]))
            warm[cold] = True
        rotations = quaternion_to_matrix(quaternions)
        goals = np.einsum("kij,kj->ki", rotations[cluster], clusters["rest"]) + centroid[cluster]
        stiffness = clusters["stiffness"]
        # Stiffness per projection so that N projections per frame give the same total pull.
        per_projection = np.where(
            stiffness >= 1.0, 1.0, 1.0 - (1.0 - stiffness) ** (1.0 / projections_per_frame)
        )
        moves = (goals - current) * np.repeat(per_projection[cluster], 3).reshape(-1, 3)
        total = np.bincount(clusters["slots"], weights=moves.reshape(-1), minlength=3 * len(p)).reshape(-1, 3)
        scale = np.where(self._w > 0, 1.0 / np.maximum(clusters["share"], 1.0), 0.0)
        p += total * np.repeat(scale, 3).reshape(-1, 3)

    def _solve_whole_shape(self, p, projections_per_frame, clusters) -> None:
        """``_solve_shapes`` for one cluster of every particle in order (a soft body's default): the
        centroid, covariance and goals are matrix products, the rotation a few float operations,
        and no particle is shared, so no gather or scatter."""
        if "work" not in clusters:
            clusters["work"] = np.empty_like(p)
            # The rest shape is centred on its mass centroid, so sum(m (p - c) rest^T) = p^T (m rest).
            clusters["mass_rest"] = clusters["rest"] * clusters["mass3"]
        goals = clusters["work"]
        if len(p) < _BLAS_ROWS:
            centroid = (clusters["mass"] @ p) / clusters["total"][0]
            covariance = p.T @ clusters["mass_rest"]
        else:
            centroid = np.einsum("i,ij->j", clusters["mass"], p) / clusters["total"][0]
            covariance = np.einsum("ij,ik->jk", p, clusters["mass_rest"])
        quaternions, warm = clusters["quaternions"], clusters["warm"]
        (a, b, c), (d, e, f), (g, h, i) = covariance.tolist()
        # Rigid bodies with sequential contacts take the exact rotation (see _solve_shapes).
        turning = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g) > 0
        if not (self._rigid is not None and self._rigid["sequential"]) and warm[0] and turning:
            quaternions[0] = polar_rotation_one(covariance, quaternions[0], _POLAR_ITERATIONS)
        else:
            quaternions[0] = matrix_to_quaternion(kabsch_rotation_batch(covariance[None]))[0]
            warm[0] = True
        rotation = quaternion_to_matrix(quaternions[0])
        if len(p) < _BLAS_ROWS:
            np.matmul(clusters["rest"], rotation.T, out=goals)
        else:  # goals[:, k] = rest . rotation[k], on contiguous rows
            if "rest_rows" not in clusters:
                clusters["rest_rows"] = np.ascontiguousarray(clusters["rest"].T)
                clusters["goal_rows"] = np.empty((4, len(p)))
            rows, work = clusters["rest_rows"], clusters["goal_rows"]
            for k in range(3):
                np.multiply(rows[0], rotation[k, 0], out=work[k])
                for j in (1, 2):
                    np.multiply(rows[j], rotation[k, j], out=work[3])
                    work[k] += work[3]
            np.copyto(goals, work[:3].T)
        goals += centroid
        goals -= p
        stiffness = float(clusters["stiffness"][0])
        goals *= 1.0 if stiffness >= 1.0 else 1.0 - (1.0 - stiffness) ** (1.0 / projections_per_frame)
        if not np.all(self._w > 0):
            goals[self._w <= 0] = 0.0
        p += goals

    def _solve_particle_pairs(self, p, pairs, start, radius=None, friction=None) -> None:
        if pairs is None or len(pairs) == 0:
            return
        radius = self.particle_radius if radius is None else radius
        static = self.particle_static_friction if friction is None else friction
        friction = self.particle_friction if friction is None else friction
        i, j = pairs[:, 0], pairs[:, 1]
        delta = p[i] - p[j]
        length = np.sqrt(np.einsum("ij,ij->i", delta, delta))
        reach = 2.0 * radius
        hit = length < reach
        if not np.any(hit):
            return
        i, j, delta, length = i[hit], j[hit], delta[hit], length[hit]
        w = self._w
        normal = delta / np.maximum(length, _TINY)[:, None]
        depth = reach - length
        correction = normal * depth[:, None]
        if friction > 0 or static > 0:
            # Coulomb friction on the relative slip during this substep (static, then dynamic).
            slip = (p[i] - start[i]) - (p[j] - start[j])
            slip -= normal * np.einsum("ij,ij->i", slip, normal)[:, None]
            amount = np.sqrt(np.einsum("ij,ij->i", slip, slip))
            correction -= slip * _friction_shrink(amount, depth, friction, static)[:, None]
        share = 1.0 / (w[i] + w[j])
        both = np.concatenate((i, j))
        moves = np.concatenate(((w[i] * share)[:, None] * correction, -(w[j] * share)[:, None] * correction))
        n = len(p)
        count = np.maximum(np.bincount(both, minlength=n), 1)
        for axis in range(3):
            p[:, axis] += np.bincount(both, weights=moves[:, axis], minlength=n) / count

    def _solve_contacts(self, p, start, free, ground: bool = True, everyone_free: bool = False) -> None:
        if ground and self._ground is not None:
            height, friction, static = self._ground
            floor = height + self.particle_radius
            if friction == static and friction > 0:
                self._solve_ground(p, start, None if everyone_free else free, floor, friction)
                below = ()
            else:
                below = np.flatnonzero((p[:, 2] < floor) & free)
            if len(below):
                depth = floor - p[below, 2]
                p[below, 2] = floor
                if friction > 0 or static > 0:
                    # Friction with the normal +z: the tangential slip is the (x, y) motion.
                    slip = p[below, :2] - start[below, :2]
                    amount = np.sqrt(np.einsum("ij,ij->i", slip, slip))
                    slip *= _friction_shrink(amount, depth, friction, static)[:, None]
                    p[below, :2] -= slip
        for collider in self._colliders:
            collider.project(p, start, free, self.particle_radius)

    def _solve_ground(self, p, start, free, floor, friction) -> None:
        """The ground contact with one friction coefficient (static = dynamic, the soft-body default),
        on the particles below the floor (``free``: which may move; None: all): each is lifted to the
        floor and its slip this substep shrunk by ``friction x depth`` (all of it while that is more:
        it sticks). The general path's projection in half the numpy calls, at every substep."""
        below = (p[:, 2] < floor).nonzero()[0] if free is None else ((p[:, 2] < floor) & free).nonzero()[0]
        if not len(below):
            return
        touching = p.take(below, axis=0)
        depth = floor - touching[:, 2]
        touching[:, 2] = floor
        slip = touching[:, :2] - start.take(below, axis=0)[:, :2]
        # No slip at all: friction * depth / 0 = inf, and the minimum keeps the whole (zero) slip.
        keep = np.minimum(1.0, friction * depth / np.hypot(slip[:, 0], slip[:, 1]))
        touching[:, 0] -= slip[:, 0] * keep
        touching[:, 1] -= slip[:, 1] * keep
        p[below] = touching
