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

import math
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
from ..quaternions.scalar import qconj, qmul, qnormalize
from .chains import ChainSolver, chain_paths
from .colliders import BoxCollider, MeshCollider, SphereCollider
from .errors import SimulationDivergedError, SimulationError
from .rigid_contacts import _TINY, RigidContacts, _cross_rows, _friction_shrink
from .spatial_hash import close_pairs, close_pairs_between_groups, pairs_near

SOLVERS = ("gauss_seidel", "jacobi")
Trajectory = Callable[[float], ArrayLike]
# Warm-started Müller iterations per projection; the note measures 0.19 deg error after 3 at 5 deg/frame,
# and a substep turns far less than a frame.
_POLAR_ITERATIONS = 2
# A sleeping body is woken by a body this many times faster than the sleep speed coming near.
WAKE_FACTOR = 10.0
# Self-collision pairs are searched this many collision radii wider than the contact distance, and
# searched again once a particle has moved that far.
SELF_COLLISION_MARGIN = 0.5
# Self-collision pairs are searched again for the particles that moved only while they are at most this
# fraction of all; more, and all are searched (one search of all costs less than a partial one).
SELF_COLLISION_PARTIAL = 0.5
# Strain limiting with self collision (World._separate_self): a frame may end with pairs overlapping by
# up to this fraction of the radius (a triangle is crossed only past a whole radius: the spheres cover
# it); deeper ones are pushed apart to a hundredth of a radius, in at most this many passes and rounds
# (each round followed by the limiting). The 2,562-vertex drop with 4 rounds: the same crossings (none)
# and 2-29 substeps, but twice the frame-end work of 2 rounds.
SELF_SEPARATION_TOLERANCE = 0.2
SELF_SEPARATION_PASSES = 20
SELF_SEPARATION_ROUNDS = 2
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
# A strain-limited body counts as relaxed (its elastic energy about nil) while every inextensible edge
# is within this fraction of the strain limit of its rest length (World._hold_energy).
_RELAXED_STRAIN = 0.25
# Strain limiting's coarse level (World._coarse_strain_step): a jelly whose worst edge ends a frame
# stretched past _COARSE_TRIGGER times the limit is first pulled towards its rest shape until its worst
# edge is at _COARSE_STRETCH times the limit, and the passes do what is left. Measured on the
# 2,562-vertex jelly's impact frame at 10 substeps (34.6% stretch): the passes alone needed 1,121
# passes; after a pull to 2x the limit, 36; to 1x, none. Under 2x the passes take a few (6-8 measured
# at 14-16%), and the pull would cost a stiff jelly its bounce for nothing: the Stiff preset's
# 642-vertex drop rose to 0.45 m instead of 0.66 m with a trigger at 1x, as before at 1.5x and 2x.
_COARSE_TRIGGER = 2.0
_COARSE_STRETCH = 1.0
# A body whose lowest free particle is within this of the ground (m) stands on it (its contacts hold
# particles at the ground plus a particle radius; _return_squash_energy).
_GROUND_TOUCH = 1e-3
# Relative rounding allowed above a frame's energy budget before velocities are scaled down to it.
ENERGY_ROUNDING = 1e-9


def _scaled_pair(delta: NDArray[np.float64], coefficients: NDArray[np.float64]) -> NDArray[np.float64]:
    """``delta[None] * coefficients[:, :, None]`` for delta ``(m, 3)`` and coefficients ``(2, m)``,
    built from same-shape products (the broadcast form is about 4x slower in numpy)."""
    scaled = np.repeat(coefficients, 3, axis=1).reshape(2, -1, 3)
    scaled[0] *= delta
    scaled[1] *= delta
    return scaled


def _edge_colouring(first: NDArray[np.int64], second: NDArray[np.int64]) -> list[NDArray[np.int64]]:
    """Greedy edge colouring: lists of constraint indices in which no particle appears twice."""
    starts, ends = first.tolist(), second.tolist()
    # Python lists, not a dict and numpy item writes: this loop is a fixed cost of every bake (3 sweeps).
    used = [0] * (max(max(starts, default=-1), max(ends, default=-1)) + 1)  # colour bits per particle
    found = [0] * len(starts)
    for k, (a, b) in enumerate(zip(starts, ends, strict=True)):
        mask = used[a] | used[b]
        bit = ~mask & (mask + 1)  # lowest free colour
        found[k] = bit.bit_length() - 1
        used[a] |= bit
        used[b] |= bit
    colours = np.array(found, dtype=np.int64)
    order = np.argsort(colours, kind="stable")
    bounds = np.searchsorted(colours[order], np.arange(colours.max() + 2 if len(colours) else 1))
    return [order[bounds[c] : bounds[c + 1]] for c in range(len(bounds) - 1) if bounds[c + 1] > bounds[c]]


def is_closed_surface(triangles: ArrayLike) -> bool:
    """Every edge shared by exactly two triangles, in opposite directions (closed, consistently wound):
    each directed edge appears once and its reverse once, so every vertex's fan of triangles closes."""
    tri = np.asarray(triangles, dtype=np.int64).reshape(-1, 3)
    if len(tri) < 4:
        return False
    # Sorted edge keys instead of a set of tuples: 30x faster at 20k triangles (34 ms of a 10k-vertex bake).
    directed = tri[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2)
    size = int(tri.max()) + 1
    forward = np.sort(directed[:, 0] * size + directed[:, 1])
    backward = np.sort(directed[:, 1] * size + directed[:, 0])
    return bool(np.all(forward[1:] != forward[:-1]) and np.array_equal(forward, backward))


class World(RigidContacts):
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
        # Kinetic plus gravitational energy the world may end a frame with when strain limiting holds
        # volume or shape matching (see _hold_energy); None until the first such frame.
        self._energy_budget: float | None = None
        # Kinetic plus gravitational energy at the start of the frame being stepped (strain limiting
        # only), and the squash the frame's coarse strain step undid on the ground (see
        # _return_squash_energy).
        self._frame_start_energy: float | None = None
        self._undone_squash: tuple | None = None

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
        rotations = None
        if clusters is not None:
            rotations = (clusters["quaternions"].copy(), clusters["warm"].copy(), clusters.get("turn"))
        sleep = None
        if self._sleep is not None:
            sleep = tuple(self._sleep[k].copy() for k in ("calm", "asleep", "held"))
        state = self._x.copy(), self._v.copy(), self.time, self.frame, rotations, self._w.copy(), sleep
        return (*state, self._energy_budget)

    def restore(self, state: tuple) -> None:
        """Go back to a ``snapshot`` (e.g. to redo a frame with more substeps)."""
        x, v, time, frame, rotations, weights, sleep, self._energy_budget = state
        self._x, self._v, self.time, self.frame = x.copy(), v.copy(), time, frame
        self._w = weights.copy()
        if rotations is not None and self._clusters is not None:
            self._clusters["quaternions"] = rotations[0].copy()
            self._clusters["warm"] = rotations[1].copy()
            self._clusters["turn"] = rotations[2]
        if sleep is not None and self._sleep is not None:
            for key, value in zip(("calm", "asleep", "held"), sleep, strict=True):
                self._sleep[key] = value.copy()
        self._active_clusters = None

    def kinetic_energy(self) -> float:
        mass = np.where(self._w > 0, 1.0 / np.maximum(self._w, _TINY), 0.0)
        return float(0.5 * np.sum(mass * np.einsum("ij,ij->i", self._v, self._v)))

    def mechanical_energy(self) -> float:
        """Kinetic plus gravitational potential energy of the movable particles (unit masses scaled by the
        inverse masses): the quantity no passive body can gain after an impact."""
        kinetic, potential = self._energies(self._x, self._v)
        return kinetic + potential

    def _energies(self, x: NDArray[np.float64], v: NDArray[np.float64]) -> tuple[float, float]:
        """Kinetic and gravitational potential energy of the movable particles at ``x`` moving at ``v``."""
        mass = np.where(self._w > 0, 1.0 / np.maximum(self._w, _TINY), 0.0)
        kinetic = 0.5 * float(np.dot(mass, np.einsum("ij,ij->i", v, v)))
        return kinetic, -float(np.dot(mass, np.einsum("ij,j->i", x, self.gravity)))

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
                "let_go": np.full(count, -np.inf),  # when each poured body was let go (``time``)
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

    def pour(self, delays: ArrayLike, drop: float = 0.0) -> None:
        """Hold each shape-matched body where it is for its delay in ``delays`` (seconds from now, one
        per body, in cluster order), then let it fall from rest, once nothing else is where it waits.
        A held body touches nothing and costs nothing, so bodies may wait overlapping at one spout and
        drop one after another.

        ``drop`` > 0 (m): each body is let go this far above what lies beneath it (the highest poured
        body whose box overlaps its own across, or the ground) instead of from where it waits: a funnel
        raised as the heap grows (it never blocks), the way an angle of repose is measured
        (poured slowly from just above the heap's top, so the slope is the one friction holds, not
        what the impacts of a long fall spread)."""
        state = self._body_state()
        seconds = np.asarray(delays, dtype=np.float64)
        if seconds.shape != state["held"].shape or not np.all(np.isfinite(seconds)):
            raise SimulationError(f"pour needs one finite delay per body ({len(state['held'])})")
        if not (np.isfinite(drop) and drop >= 0):
            raise SimulationError(f"a pour's drop height must be a number >= 0 (m), got {drop}")
        state["release"] = self.time + seconds
        state["drop"] = float(drop)
        # With a drop, even a body due now waits for its first step's release, which lowers it.
        state["held"] = (seconds > 0) | (drop > 0)
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
        # With a drop, a body still falling since it was let go (nothing has slowed it below half the
        # speed of a free fall that long) is not part of the heap yet: counting it raised the funnel
        # over every body still in the air, 27 m in a 50-cube pour of 0.3 m cubes with a 0.15 m drop
        # every 4 frames (that fall takes 4.2), and the cubes landed from there.
        drop = state["drop"]
        if drop > 0:
            sizes = np.diff(np.append(starts, len(members)))
            sinking = np.add.reduceat(self._v[members, 2], starts) / sizes
            poured = np.isfinite(state["let_go"])
            since = self.time - np.where(poured, state["let_go"], self.time)
            landed = present & ~(poured & (sinking < -0.5 * np.linalg.norm(self.gravity) * since))
        letting_go = np.zeros_like(present)
        for body in due[np.argsort(state["release"][due], kind="stable")]:
            if drop > 0:
                self._lower_to_heap(body, landed, low, high, drop)
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
            state["let_go"][due] = self.time
            self._active_clusters = None

    def _lower_to_heap(self, body: int, present, low, high, drop: float) -> None:
        """Move held ``body`` straight down (or up, over a heap grown past where it waits) until its
        bottom is ``drop`` above the top of what lies beneath it (``present`` bodies whose boxes
        ``low``/``high``, widened by a contact's reach, overlap its own across; or the ground); its box
        moves with it."""
        members, cluster = self._clusters["members"], self._clusters["cluster"]
        radius = self.particle_radius
        across = np.all((low[:, :2] <= high[body, :2]) & (low[body, :2] <= high[:, :2]), axis=1)
        under = np.flatnonzero(present & across)
        # The boxes are the particles' centres widened by two radii; surfaces lie one radius out.
        tops = high[under, 2] - radius
        top = max(tops.max(initial=-np.inf), self._ground[0] if self._ground is not None else -np.inf)
        if not np.isfinite(top):
            return
        shift = (top + drop) - (low[body, 2] + radius)
        self._x[members[cluster == body], 2] += shift
        low[body, 2] += shift
        high[body, 2] += shift

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
        for cached in (
            "mass3", "rest9", "slots", "whole", "work", "mass_rest", "rest_rows", "goal_rows", "turn"
        ):  # fmt: skip
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
        volume = {
            "triangles": tri,
            "target": pressure * rest,
            "compliance": float(compliance),
            "pressure": float(pressure),
            # The shape it was added in: the rest shape strain limiting's coarse level fits.
            "rest_positions": self._x.copy(),
        }
        if is_closed_surface(tri):
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
        self._frame_start_energy = sum(self._energies(x, v)) if self.strain_limiting else None
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
                if self._ground is not None and self._clusters is not None:
                    self._end_on_the_ground(x, v, free)  # before the limiting, whose passes keep it
                self._limit_strain(x, v, dt, spare, free)
                if self._self_collision is not None:
                    self._separate_self(x, v, dt, spare, free)
                if self._holds_energy():
                    if self._energy_budget is None:  # the first frame: the energy it started with
                        self._energy_budget = self.mechanical_energy()
                    self._hold_energy(x, v)
                    self._lower_energy_budget(x, v)
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
        by distance, volume and shape-matching constraints, self collision, the ground and colliders.
        Rigid contacts and contacts between bodies undo it on the next frame's substeps, so those
        worlds keep their stretch by substeps: two 642-vertex balls dropped on each other came 1 cm
        apart (contact: 4 cm). Self collision's pairs are pushed apart after the limiting
        (``_separate_self``); volume and shape matching limit too, with their energy held
        (``_hold_energy``)."""
        return (self.strain_limit > 0 or self.compression_limit > 0) and not self.strain_limiting_blockers()

    def strain_limiting_blockers(self) -> list[str]:
        """What keeps this world from limiting strain at a frame's end (see ``strain_limiting``)."""
        return [
            name
            for name, present in (
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

    def _end_on_the_ground(self, x: NDArray[np.float64], v: NDArray[np.float64], free) -> None:
        """A strain-limited frame with shape matching ends with no particle through the ground (lifted to
        it, its downward velocity stopped): shape matching comes after the contacts in each projection,
        and at the few substeps the limiting allows its last pull left a stiff jelly (the Stiff and
        Rubber presets, 642 vertices) 2.5 cm through the ground plane."""
        floor = self._ground[0] + self.particle_radius
        # Only the particles through the ground plane itself: lifting every one that overlaps the floor
        # by part of its radius (as the substeps' contacts do) changed the default jelly's bake, and
        # its cost, for nothing one can see (642 vertices: 10 substeps a frame instead of 8).
        below = np.flatnonzero((x[:, 2] < self._ground[0]) & free)
        if len(below):  # (projecting the volume back after the lift re-stretched the edges: 2x substeps)
            x[below, 2] = floor
            v[below, 2] = np.maximum(v[below, 2], 0.0)

    def _holds_energy(self) -> bool:
        """Whether strain-limited frames hold their energy (``_hold_energy``): with volume or shape
        matching, in a world where nothing does work on the particles (no pin following a path, no
        moving collider, no volume inflating to a pressure other than 1), and whose edges and volumes
        are all rigid: a compliant one stores elastic energy that edge strains do not show, so the body
        would never look relaxed (and with no rigid edge it always would, holding every rebound)."""
        if not (self._volumes or self._clusters is not None):
            return False
        if not self.stiff_edge_count or np.any(self._dist["compliance"] > 0):
            return False
        if any(volume["compliance"] > 0 for volume in self._volumes):
            return False
        if any(trajectory is not None for _, trajectory in self._pins):
            return False
        if any(isinstance(c, MeshCollider) and c.animated for c in self._colliders):
            return False
        return all(volume["pressure"] == 1.0 for volume in self._volumes)

    def _hold_energy(self, x: NDArray[np.float64], v: NDArray[np.float64]) -> None:
        """A strain-limited frame with volume or shape matching ends with no more kinetic plus
        gravitational energy than the body had when it was last relaxed (every inextensible edge
        within a quarter of the limits of its rest length): nothing does work on it, and its elastic
        energy is about nil when relaxed, so their sum can only fall from there. Past that budget the
        velocities are scaled down to it.

        Why it is needed: a jelly squashed on impact at the few substeps strain limiting allows
        stores its squash in constraints that are rigid (volume, edges) or a frame-rate spring (shape
        matching) the ground can only push one way; released, it can jump higher than it fell
        (measured on drops from 1.3 m: a 642-vertex jelly rose to 1.24 m with +2.6% of its starting
        energy; a 2,562-vertex one, 40 frames, +2% to +79% depending on details as small as the order of
        the frame-end ground lift). Frames that stay under the budget are not touched."""
        kinetic, potential = self._energies(x, v)
        budget = self._energy_budget
        if kinetic + potential > budget + ENERGY_ROUNDING * abs(budget):
            allowed = max(0.0, budget - potential)
            v *= math.sqrt(allowed / kinetic) if kinetic > 0 else 0.0

    def _lower_energy_budget(self, x: NDArray[np.float64], v: NDArray[np.float64]) -> None:
        """The energy budget (``_hold_energy``) falls to the frame's energy when the body ends it
        relaxed. Kept apart from the hold: the coarse strain step's rebound (``_return_squash_energy``)
        reads the budget whether or not the frame was held."""
        kinetic, potential = self._energies(x, v)
        budget = self._energy_budget
        if kinetic + potential >= budget:
            return
        i, j, rest = self._stiff_edges()
        if len(i):
            delta = x.take(i, axis=0)
            delta -= x.take(j, axis=0)
            strain = np.sqrt(np.einsum("ij,ij->i", delta, delta)) / rest - 1.0
            limit = self.strain_limit if self.strain_limit > 0 else self.compression_limit
            if float(np.max(np.abs(strain))) > _RELAXED_STRAIN * limit:
                return
        self._energy_budget = min(budget, kinetic + potential)

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
            strain = length[candidates] / plan["rest"][candidates] - 1.0
            coarse = self._coarse_strain_step(x, v, strain, floor)
            if coarse is not None:  # a pass over the whole body
                passes += 1
                checked += len(i)
                delta = x.take(i, axis=0)
                delta -= x.take(j, axis=0)
                length = np.sqrt(np.einsum("ij,ij->i", delta, delta))
                candidates = np.flatnonzero(((length > plan["high"]) | (length < plan["low"])) & movable)
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
            if coarse is not None:  # its velocity change is made in _coarse_strain_step
                before += coarse
            v += (x - before) * (1.0 / dt)
            if coarse is not None:
                self._return_squash_energy(x, v)
        # Its cost in edge projections, a pass's fixed numpy overhead counted as _PASS_EDGES edges:
        # Auto Substeps weighs it against a substep's (every edge once).
        self.last_strain_limiting = (passes, settled, checked + _PASS_EDGES * passes)

    def _separate_self(self, x, v, dt, spare, free) -> None:
        """Strain limiting with self collision, after the limiting's first run: its moves may push
        self-colliding particles into each other's spheres, and left there the next frame's substeps
        may push them through the mesh. While some pair overlaps deeper than
        ``SELF_SEPARATION_TOLERANCE`` radii, the overlapping pairs are pushed apart (Jacobi passes of
        the substeps' projection, no friction) and the limiting runs again on the edges that stretched.
        The moves become velocity, as the limiting's do.

        Why: with the limiting off, self collision held its stretch by substeps alone: the 2,562-vertex
        cloth-like ball dropped from 1.3 m (it collapses onto itself) took 2-161 substeps a frame (mean
        63, 7 frames redone), 28x the bake without self collision. With it, 2-35 (mean 16); no triangle
        pair crosses on any frame."""
        sc = self._self_collision
        radius = sc["radius"]
        passes, settled, cost = self.last_strain_limiting
        deep = (2.0 - SELF_SEPARATION_TOLERANCE) * radius
        touching = (2.0 - 0.01) * radius
        for _ in range(SELF_SEPARATION_ROUNDS):
            pairs = self._self_pairs_near(x)
            first, second = pairs[:, 0], pairs[:, 1]
            delta = x.take(first, axis=0)
            delta -= x.take(second, axis=0)
            if not np.any(np.einsum("ij,ij->i", delta, delta) < deep * deep):
                break
            before = x.copy()
            for _ in range(SELF_SEPARATION_PASSES):
                delta = x.take(first, axis=0)
                delta -= x.take(second, axis=0)
                close = np.einsum("ij,ij->i", delta, delta) < touching * touching
                if not close.any():
                    break
                self._solve_particle_pairs(x, pairs[close], before, radius, 0.0)
            self._solve_contacts(x, before, free)
            v += (x - before) * (1.0 / dt)
            self._limit_strain(x, v, dt, spare, free)
            more, settled, extra = self.last_strain_limiting
            passes += more
            cost += extra
        self.last_strain_limiting = (passes, settled, cost)

    def _coarse_strain_step(self, x, v, strain, floor) -> NDArray[np.float64] | None:
        """Strain limiting's coarse level, for a jelly with a rest shape to fit (``_coarse_rest_shape``)
        that holds its energy (``_holds_energy``) whose worst edge ``strain`` is past
        ``_COARSE_TRIGGER`` times the limit. Every free particle moves the same fraction of the way to
        the rest shape's best fit (rotation and translation at the mass centroid, raised to stand on
        the ground ``floor``), the fraction that brings the worst edge to ``_COARSE_STRETCH`` times
        the limit; the velocity along the deformation (positions minus that fit), if the deformation
        was growing, is reversed. Returns the move (None: nothing done), which the caller keeps out
        of the frame's velocity.

        Why: the passes carry a correction one edge per pass, and a jelly's impact (its volume kept
        while the ground flattens it) stretches the whole surface at once: hundreds of passes, so
        Auto Substeps redid the impact at 3-5x the substeps (2,562 vertices: 10, 26, then 54). One
        pull towards the rest shape carries it across the body. Made a velocity (as the passes' moves
        are), the pull stopped the squash dead: Blender's 2,562-vertex icosphere dropped from 1.3 m
        bounced to a centre height of 0.54 m (0.52 at rest; 0.97 before the coarse level). Reversed,
        the deformation bounces off its limit with its kinetic energy kept: 0.81 m; with the elastic
        energy of the squash the pull undid given back on the ground (``_return_squash_energy``),
        1.10 m (1.12 m without the coarse level, at 1.7x the substeps and two frames redone). The move
        conserves momentum (but for the lift onto the ground, which the contacts would make anyway),
        and so does the reversal; the energy hold still caps the frame. A jelly with shape regions or
        with volume alone kept its bounce (2,562 vertices: 1.08 and 1.02 m before, 1.01 after) and
        cost 42 and 5 ms a frame of CPU instead of 282 and 28 (1,207 and 1,349 substeps before, 191)."""
        if (
            self.strain_limit <= 0
            or not len(strain)
            or float(strain.max()) <= _COARSE_TRIGGER * self.strain_limit
        ):
            return None
        shape = self._coarse_rest_shape()
        if shape is None or not self._holds_energy():
            return None
        worst = float(strain.max())
        allowed = _COARSE_STRETCH * self.strain_limit
        rest, mass = shape
        free = self._w > 0
        centroid = (mass @ x) / float(mass.sum())
        rotation = kabsch_rotation_batch((x.T @ (rest * mass[:, None]))[None])[0]
        fit = rest @ rotation.T
        fit += centroid
        if floor is not None and free.any():
            fit[:, 2] += max(0.0, floor - float(fit[free, 2].min()))
        deformation = x - fit
        deformation[~free] = 0.0
        weighted = deformation * mass[:, None]
        size = float(np.einsum("ij,ij->", deformation, weighted))
        growth = float(np.einsum("ij,ij->", v, weighted)) / size if size > 0 else 0.0
        if growth > 0:
            v -= (2.0 * growth) * deformation
        move = (fit - x) * (1.0 - allowed / worst)
        move[~free] = 0.0
        on_ground = floor is not None and float(x[free, 2].min()) <= floor + _GROUND_TOUCH
        self._undone_squash = (
            (deformation, weighted, size, (allowed / worst) ** 2) if on_ground and size > 0 else None
        )
        x += move
        return move

    def _return_squash_energy(self, x, v) -> None:
        """After a coarse strain step on the ground (``_coarse_strain_step``), the elastic energy of
        the squash it undid, as velocity along the squash towards the rest shape: a rebound.

        The frame's shortfall below the energy budget (the energy when last relaxed, ``_hold_energy``)
        is what the squash holds in its constraints, which kinetic and gravitational energy do not
        show; the pull keeps ``kept`` (the squared ratio of the deformation left, the energy of a
        spring) and undoes the rest, which without this was lost: Blender's 2,562-vertex icosphere
        dropped from 1.3 m bounced to a centre height of 0.80 m instead of 1.12 m without the coarse
        step. At most what brings the frame back to the energy it started with: the frame never ends
        with more (Auto Substeps would take it for pumping and redo the impact). Only on the ground:
        in the air the shortfall also holds the impact's losses, and fed to the wobble it shakes the
        jelly (2,562 vertices: twice the substeps)."""
        squash, self._undone_squash = self._undone_squash, None
        if squash is None or self._frame_start_energy is None:
            return
        deformation, weighted, size, kept = squash
        kinetic, potential = self._energies(x, v)
        budget = self._energy_budget if self._energy_budget is not None else self._frame_start_energy
        released = min(
            (budget - kinetic - potential) * (1.0 - kept), self._frame_start_energy - kinetic - potential
        )
        if released <= 0:
            return
        along = float(np.einsum("ij,ij->", v, weighted)) / size
        # The velocity along the squash (``along`` times it) becomes one towards the rest shape,
        # ``released`` faster in kinetic energy.
        rebound = -math.sqrt(along * along + 2.0 * released / size)
        v += (rebound - along) * deformation

    def _coarse_rest_shape(self) -> tuple[NDArray[np.float64], NDArray[np.float64]] | None:
        """The rest shape (centred on its mass centroid) and masses of the one body the coarse level
        fits: a whole-body shape-matching cluster's, or else the shape every particle had when one
        closed volume over all of them was added (a jelly with shape regions, or volume alone). None
        when no such body covers the world (several bodies, a cloth): one fit would tie them."""
        clusters = self._clusters
        n = len(self._x)
        if (
            clusters is not None
            and len(clusters["starts"]) == 1
            and len(clusters["members"]) == n
            and np.array_equal(clusters["members"], np.arange(n))
        ):
            return clusters["rest"], clusters["mass"]
        if len(self._volumes) != 1 or "corners" not in self._volumes[0]:
            return None
        volume = self._volumes[0]
        if "coarse" not in volume:
            covered = np.zeros(n, bool)
            covered[volume["triangles"].reshape(-1)] = True
            mass = 1.0 / np.maximum(self._w, 1e-6)
            rest = volume["rest_positions"]
            centred = rest - (mass @ rest) / mass.sum()
            volume["coarse"] = (centred, mass) if covered.all() else None
        return volume["coarse"]

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
        """The self-collision candidate pairs (a Verlet list). Once some particle has moved a search
        margin since it was last searched, those that moved half a margin are searched again against
        all and the pairs of the others kept (all are searched when that is over half of them). Moves
        are measured in a frame that follows the median particle: a falling body is not searched
        again at all, and a collapsing one only where it moves against what rests.

        Why it holds: a pair not found was at least 2 radii and 2.5 margins apart when one of its
        particles was last searched; since then that one moved less than a margin and the other less
        than one and a half (under half a margin from its own last search then, under one after), so
        they are still apart. A search of all uses 2 margins: none had moved. Measured on the
        2,562-vertex cloth-like drop with self collision: 22 searches of all and 154 of 578 particles
        on average, instead of 150 searches of all; the searches cost 17 instead of 60-75 ms a frame
        (CPU, loaded machine)."""
        sc = self._self_collision
        members = sc["members"]
        radius = sc["radius"]
        margin = SELF_COLLISION_MARGIN * radius
        now = x[members]
        found = sc.get("near")
        if found is not None:
            pairs, reference, frame, last = found
            # Any motion common to all may be taken out; a sample's median costs a tenth of all's.
            frame += np.median(now[::8] - last[::8], axis=0)
            last[:] = now
            local = now - frame
            moved = local - reference
            distance = np.einsum("ij,ij->i", moved, moved)
            if not np.any(distance >= margin * margin):
                return pairs
            fast = distance >= (0.5 * margin) ** 2
            if np.count_nonzero(fast) <= SELF_COLLISION_PARTIAL * len(members):
                queries = np.flatnonzero(fast)
                around = pairs_near(now, queries, 2.0 * radius + 2.5 * margin)
                other_fast = fast[around[:, 1]]
                around = around[~other_fast | (around[:, 0] < around[:, 1])]  # each pair once
                fresh = members[self._filter_self_pairs(around)]
                is_fast = np.zeros(len(self._x), bool)
                is_fast[members[queries]] = True
                kept = pairs[~(is_fast[pairs[:, 0]] | is_fast[pairs[:, 1]])]
                pairs = np.concatenate((kept, fresh))
                reference[queries] = local[queries]
                sc["near"] = (pairs, reference, frame, last)
                return pairs
        local = close_pairs(now, 2.0 * radius + 2.0 * margin)
        pairs = members[self._filter_self_pairs(local)]
        sc["near"] = (pairs, now.copy(), np.zeros(3), now.copy())
        return pairs

    def _filter_self_pairs(self, local) -> NDArray[np.int64]:
        """Of candidate pairs (indices into the self-colliding members), those apart in the rest shape
        (closer ones are left to the body's own constraints), of one body, and not both immovable."""
        sc = self._self_collision
        a, b = local[:, 0], local[:, 1]
        gap = sc["rest"].take(a, axis=0)
        gap -= sc["rest"].take(b, axis=0)
        keep = np.einsum("ij,ij->i", gap, gap) >= (2.0 * sc["radius"]) ** 2
        bodies = sc["bodies"]
        keep &= bodies.take(a) == bodies.take(b)
        w = self._w[sc["members"]]
        keep &= (w.take(a) + w.take(b)) > 0
        return local[keep]

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
        last = tuple(quaternions[0].tolist())
        if not (self._rigid is not None and self._rigid["sequential"]) and warm[0] and turning:
            # Müller's iteration recovers 8/9 of each projection's turn from the last rotation, and the
            # missing ninth compounds: a soft ball spinning at one turn a second kept 48% of its spin
            # after a second at 10 substeps (the exact rotation: 86%). Started from the last rotation
            # turned on by the last projection's turn, it keeps 86% too, at no extra cost.
            turn = clusters.get("turn") or (1.0, 0.0, 0.0, 0.0)
            start = np.array(qnormalize(qmul(turn, last)))
            quaternions[0] = polar_rotation_one(covariance, start, _POLAR_ITERATIONS)
            clusters["turn"] = qnormalize(qmul(tuple(quaternions[0].tolist()), qconj(last)))
        else:
            quaternions[0] = matrix_to_quaternion(kabsch_rotation_batch(covariance[None]))[0]
            warm[0] = True
            clusters["turn"] = None  # after a cold start or an inverted fit: no turn to go on
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
        # Gathers by take, one bincount over (particle, axis) slots and same-shape products: self
        # collision solves ~10k candidate pairs every substep, and the fancy indexing, per-axis
        # bincounts and (m, 3) * (m, 1) broadcasts cost about twice the arithmetic.
        i, j = pairs[:, 0], pairs[:, 1]
        delta = p.take(i, axis=0)
        delta -= p.take(j, axis=0)
        square = np.einsum("ij,ij->i", delta, delta)
        reach = 2.0 * radius
        hit = np.flatnonzero(square < reach * reach)
        if not len(hit):
            return
        i, j, delta = i.take(hit), j.take(hit), delta.take(hit, axis=0)
        length = np.sqrt(square.take(hit))
        w = self._w
        depth = reach - length
        correction = delta * np.repeat(depth / np.maximum(length, _TINY), 3).reshape(-1, 3)
        if friction > 0 or static > 0:
            # Coulomb friction on the relative slip during this substep (static, then dynamic).
            normal = delta * np.repeat(1.0 / np.maximum(length, _TINY), 3).reshape(-1, 3)
            slip = p.take(i, axis=0)
            slip -= start.take(i, axis=0)
            slip -= p.take(j, axis=0)
            slip += start.take(j, axis=0)
            slip -= normal * np.repeat(np.einsum("ij,ij->i", slip, normal), 3).reshape(-1, 3)
            amount = np.sqrt(np.einsum("ij,ij->i", slip, slip))
            slip *= np.repeat(_friction_shrink(amount, depth, friction, static), 3).reshape(-1, 3)
            correction -= slip
        wi, wj = w.take(i), w.take(j)
        share = 1.0 / (wi + wj)
        both = np.concatenate((i, j))
        moves = np.concatenate((correction, correction))
        moves *= np.repeat(np.concatenate((wi * share, -(wj * share))), 3).reshape(-1, 3)
        n = len(p)
        count = np.maximum(np.bincount(both, minlength=n), 1)
        slots = (both[:, None] * 3 + np.arange(3)).reshape(-1)
        total = np.bincount(slots, weights=moves.reshape(-1), minlength=3 * n)
        total /= np.repeat(count, 3)
        p += total.reshape(-1, 3)

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
