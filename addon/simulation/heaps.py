"""Measuring a heap of poured bodies: its surface profile and slope, against the angle of repose its
friction implies.

The slope is the least-squares slope of the heap's surface profile: the top of the highest body in each
ring one body wide around the heap's axis (the median of the bodies' centres), from the axis out to the
heap's edge, the last ring before the first that holds no body (a body beyond a gap is a stray, not the
heap: one cube that tumbled 3.4 m away from a 50-cube heap took its fitted slope from 36.7 to 23.0 deg).
The angle of repose a friction coefficient implies is taken as ``arctan(mu_static)``: a block on a
slope starts to slide at ``tan(theta) = mu`` (Coulomb), the first estimate for a heap's flank (its
"apparent friction" is ``tan`` of its angle of repose; grains that interlock or roll less stand
steeper: at low friction a heap of cubes does, see tests/unit/test_simulation_heap_pour.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .errors import SimulationError
from .scenes import Body, SimulationSettings, build_rigid_world, substep_stepper
from .world import World

# What Add Rigid Pile (Pour) sets on the Rigid Pile settings for Bake Rigid Pile (operators/simulation/
# rigid.py; the heap test and bench/bench_rigid_heap.py pour with them): one cube every 4 frames (each has
# fallen about its own size before the next follows), from the spout (no Pour Drop), Sequential contacts
# with Rolling Resistance ``pour_rolling_resistance``. Body Fit's heap does not follow the friction, and
# Sequential without rolling resistance lets cubes roll off into a layer (5-8 deg at friction 0.5).
POUR_INTERVAL = 4
POUR_DROP = 0.0
POUR_CONTACTS = "sequential"
# The pour's Rolling Resistance at a few static frictions, linear between them and held beyond: measured
# with bench/bench_rigid_heap.py (50 cubes of 0.3 m; slope deg of seeds 1 / 2 / 3; arctan mu: 16.7, 26.6,
# 38.7 at 0.3, 0.5, 0.8). A heap's cubes tumble down its flank rather than slide, and what stops them
# tumbling sets much of its slope, but one heap's slope is chance within 10-30 deg:
#   mu 0.3 at 0.18: 24.5 / 16.8 / 20.1, median 20.1
#   mu 0.5 at 0.3: 22.4 / 22.5 / 23.6, median 22.5; at 0.375: 29.4 / 51.4 / 26.9, seed 2 a tower up to the
#     spout (six cubes left there), seed 3 a cube flung 5.0 m
#   mu 0.8 at 0.48: 26.6 / 22.2; at 0.96 (1.5 mu^2): 28.0 / 37.1 / 32.2, median 32.2 (6.5 short); at 1.5
#     (the sidebar setting's limit is 1): 34.5 / 19.8 / 3.9
# The values are exact as measured: a pour is chaotic, and 1.5 + 7e-16 instead of 1.5 turned mu 0.8 seed
# 1's heap from 34.5 to 33.1 deg. (Measured on OpenBLAS's SkylakeX kernels; the unit tests pin the Haswell
# ones, tests/unit/conftest.py, where each pour goes another way.)
# Refit needed: these were fitted when rolling resisted with the lever from a cube's centre (0.2-0.26 m),
# which also held cubes on their edges; a cube's edge now rolls on the particle radius (rigid_contacts.
# _rolling_levers), so the same coefficient resists about five times less there. On Haswell, seed 1, with
# the edge's radius: mu 0.5 stood at 16.4 deg at 0.3 and 26.5 at 1.0 (a cube 4.61 m out); mu 0.8 at 24.7
# at 0.96, 23.3 at 2.0, 31.9 at 5.0 (arctan 38.7; the sidebar's limit is 1). Per-seed figures at these
# values: tests/unit/test_simulation_heap_pour.py.
POUR_ROLLING_RESISTANCE = ((0.0, 0.0), (0.3, 0.18), (0.5, 0.3), (0.8, 1.5 * 0.8**2))


def pour_rolling_resistance(static_friction: float) -> float:
    """The Rolling Resistance a pour heaps with at ``static_friction`` (``POUR_ROLLING_RESISTANCE``)."""
    if not static_friction >= 0:
        raise SimulationError(f"friction must be >= 0, got {static_friction}")
    frictions, resistances = zip(*POUR_ROLLING_RESISTANCE, strict=True)
    return float(np.interp(static_friction, frictions, resistances))


def pour_settings(static_friction: float, size: float) -> SimulationSettings:
    """The settings a pour of cubes of edge ``size`` bakes with as Add Rigid Pile (Pour) sets it up (its
    contacts, interval, drop and rolling resistance), with automatic substeps from 20 and particles a
    sixth of the edge: what the heap test and the heap bench measure."""
    return SimulationSettings(
        auto_substeps=True,
        min_substeps=20,
        particle_radius=size / 6,
        friction=static_friction,
        pour_interval=POUR_INTERVAL,
        pour_drop=POUR_DROP,
        rigid_contacts=POUR_CONTACTS,
        rolling_resistance=pour_rolling_resistance(static_friction),
    )


# A unit cube's corners (i, j, k) in {0, 1}^3, x slowest, centred; its six outward quads; their triangles.
CUBE_CORNERS = np.array([[i, j, k] for i in (0, 1) for j in (0, 1) for k in (0, 1)], float) - 0.5
CUBE_FACES = ((0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3))
CUBE_TRIANGLES = np.array([tri for a, b, c, d in CUBE_FACES for tri in ((a, b, c), (a, c, d))])


def repose_angle(static_friction: float) -> float:
    """The angle of repose (degrees) a static friction coefficient implies: ``arctan(mu_s)``."""
    if not static_friction >= 0:
        raise SimulationError(f"friction must be >= 0, got {static_friction}")
    return math.degrees(math.atan(static_friction))


def heap_profile(
    centres: ArrayLike, tops: ArrayLike, ring_width: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(radii, heights)``: the middle radius of every ring of ``ring_width`` around the heap's axis
    out to the heap's edge (the first ring without a body ends it), and the top of the highest body in
    it. ``centres`` ``(N, 3)``: the bodies' centres; ``tops`` ``(N,)``: their highest points."""
    c = np.asarray(centres, dtype=np.float64).reshape(-1, 3)
    top = np.asarray(tops, dtype=np.float64).reshape(-1)
    if len(c) == 0 or top.shape != (len(c),) or not ring_width > 0:
        raise SimulationError("a heap profile needs bodies (centres and tops) and a ring width > 0")
    axis = np.median(c[:, :2], axis=0)
    ring = np.floor(np.linalg.norm(c[:, :2] - axis, axis=1) / ring_width).astype(np.int64)
    held = np.unique(ring)
    held = held[held == np.arange(len(held))]  # up to the first empty ring
    heights = np.array([top[ring == k].max() for k in held])
    return (held + 0.5) * ring_width, heights


def heap_slope(centres: ArrayLike, tops: ArrayLike, ring_width: float) -> float:
    """The heap's slope angle in degrees (see the module docstring); 0 for a single ring."""
    radii, heights = heap_profile(centres, tops, ring_width)
    if len(radii) < 2:
        return 0.0
    gradient = np.polyfit(radii, heights, 1)[0]
    return math.degrees(math.atan(max(-gradient, 0.0)))


def spout_poses(count: int, size: float, seed: int = 1, spread: float = 1.5) -> list[tuple[NDArray, NDArray]]:
    """``(rotation 3x3, centre)`` of ``count`` cubes of edge ``size`` waiting to be poured, as Add Rigid
    Pile (Pour) places them: turned at random, spread over a disc of ``spread`` sizes (radius) at a
    spout high enough for the heap they make (about as high as a cone of their volume at 30 degrees),
    lowest first by a thousandth of a size each."""
    if count < 1 or not size > 0:
        raise SimulationError(f"a pour needs at least one cube of positive size, got {count}, {size}")
    rng = np.random.default_rng(seed)
    spout = size * (4.0 + 1.2 * count ** (1.0 / 3.0))
    poses = []
    for index in range(count):
        turn, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        turn[:, 0] *= np.sign(np.linalg.det(turn))  # a rotation, not a reflection
        radius, angle = spread * size * math.sqrt(rng.uniform()), rng.uniform(0.0, 2.0 * math.pi)
        centre = np.array([radius * math.cos(angle), radius * math.sin(angle), spout + 0.001 * size * index])
        poses.append((turn, centre))
    return poses


def spout_cubes(count: int, size: float, seed: int = 1, spread: float = 1.5) -> list[Body]:
    """The cubes of ``spout_poses`` as bodies."""
    corners = CUBE_CORNERS * size
    return [
        Body(f"cube {index}", corners @ turn.T + centre, triangles=CUBE_TRIANGLES)
        for index, (turn, centre) in enumerate(spout_poses(count, size, seed, spread))
    ]


@dataclass
class Pour:
    """What ``pour_heap`` measured: the world at the end, body ``k``'s particles
    ``offsets[k]:offsets[k + 1]``, the kinetic energy and whether every body slept, per frame, and the
    frames it took until the last body had left the spout."""

    world: World
    offsets: NDArray[np.int64]
    energy: list[float] = field(default_factory=list)
    all_asleep: list[bool] = field(default_factory=list)
    pour_frames: int = 0

    def slope(self, ring_width: float) -> float:
        """The heap's slope (``heap_slope``) over the bodies that left the spout."""
        positions = self.world.positions
        landed = np.flatnonzero(~self.world.held)
        boxes = [positions[self.offsets[k] : self.offsets[k + 1]] for k in landed]
        return heap_slope([b.mean(axis=0) for b in boxes], [b[:, 2].max() for b in boxes], ring_width)


def pour_heap(bodies: list[Body], settings: SimulationSettings, settle_seconds: float) -> Pour:
    """Pour ``bodies`` (``settings.pour_interval`` > 0) until every one has left the spout (each within
    four intervals of the one before, or the pour is given up as blocked), then ``settle_seconds``
    more, with automatic substeps."""
    world, _, offsets = build_rigid_world(bodies, [], settings)
    stepper = substep_stepper(world, settings)
    result = Pour(world, offsets)
    for _ in range(4 * max(settings.pour_interval, 1) * len(bodies)):
        stepper.step()
        result.energy.append(world.kinetic_energy())
        result.all_asleep.append(bool(world.sleeping.all()))
        if not world.held.any():
            break
    result.pour_frames = len(result.energy)
    for _ in range(round(settle_seconds * settings.fps)):
        stepper.step()
        result.energy.append(world.kinetic_energy())
        result.all_asleep.append(bool(world.sleeping.all()))
    return result
