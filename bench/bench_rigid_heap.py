"""A rigid heap: cubes poured from a spout, its slope against the angle of repose the friction implies.

Core, no Blender: ``HEAP_CUBES`` (default 50) cubes of 0.3 m waiting over a disc of 1.5 sizes at the
spout of Add Rigid Pile's Pour arrangement, released one every 4 frames (lowest first), friction 0.5
static and dynamic, particle radius 0.05 m (a sixth of a cube), 24 fps, at least 20 substeps, then
let settle. Figures: the heap's slope (``addon.simulation.heaps.heap_slope``: least-squares slope of the
highest box top per ring of one box around the axis) against ``arctan(0.5)`` = 26.6 degrees (the goal
is within 5 degrees), the kinetic energy in the last 2 s, the boxes still waiting (a heap that reached
the spout blocks it), and CPU seconds per simulated second.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))
from _common import record  # noqa: E402

from addon.simulation.heaps import heap_slope, repose_angle  # noqa: E402
from addon.simulation.scenes import Body, SimulationSettings, build_rigid_world, run_frames  # noqa: E402

SIZE = 0.3
FRICTION = 0.5
INTERVAL = 4
SETTLE_FRAMES = 144
FACES = np.array([(0, 1, 3), (0, 3, 2), (4, 6, 7), (4, 7, 5), (0, 4, 5), (0, 5, 1),
                  (2, 3, 7), (2, 7, 6), (0, 2, 6), (0, 6, 4), (1, 5, 7), (1, 7, 3)])  # fmt: skip


def poured_cubes(count: int, seed: int = 1) -> list[Body]:
    """As Add Rigid Pile (Pour): random turns, over a disc of 1.5 sizes, at the spout's height."""
    rng = np.random.default_rng(seed)
    corners = (np.array([[i, j, k] for i in (0, 1) for j in (0, 1) for k in (0, 1)], float) - 0.5) * SIZE
    spout = SIZE * (4.0 + 1.2 * count ** (1.0 / 3.0))
    cubes = []
    for index in range(count):
        turn, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        turn[:, 0] *= np.sign(np.linalg.det(turn))
        radius, angle = 1.5 * SIZE * np.sqrt(rng.uniform()), rng.uniform(0.0, 2.0 * np.pi)
        centre = [radius * np.cos(angle), radius * np.sin(angle), spout + 0.001 * SIZE * index]
        cubes.append(Body(f"cube {index}", corners @ turn.T + centre, triangles=FACES))
    return cubes


def main() -> None:
    count = int(os.environ.get("HEAP_CUBES", "50"))
    settings = SimulationSettings(
        # Each cube also waits until the one before has cleared the spout (up to 4 intervals apiece).
        frame_count=4 * INTERVAL * count + SETTLE_FRAMES,
        auto_substeps=True,
        min_substeps=20,
        particle_radius=SIZE / 6,
        friction=FRICTION,
        pour_interval=INTERVAL,
    )
    world, _, offsets = build_rigid_world(poured_cubes(count), [], settings)
    energy = []
    start = time.process_time()
    for _ in run_frames(world, settings, 1):
        energy.append(world.kinetic_energy())
    cpu = time.process_time() - start
    positions = world.positions
    landed = ~world.held
    boxes = [positions[offsets[k] : offsets[k + 1]] for k in range(count) if landed[k]]
    slope = heap_slope([b.mean(axis=0) for b in boxes], [b[:, 2].max() for b in boxes], SIZE)
    target = repose_angle(FRICTION)
    record("Rigid heap: slope (core)", slope, "deg", f"{target:.1f} +- 5", f"{count} cubes, mu 0.5")
    record("Rigid heap: |slope - arctan(mu)|", abs(slope - target), "deg", "<= 5")
    record("Rigid heap: max kinetic energy, last 2 s", max(energy[-48:]), "J (unit mass/particle)")
    record("Rigid heap: cubes still waiting at the spout", float((~landed).sum()), "cubes", "0")
    record("Rigid heap: CPU per simulated second", cpu / (len(energy) / settings.fps), "s/s")


if __name__ == "__main__":
    main()
