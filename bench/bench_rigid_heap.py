"""A rigid heap: cubes poured from a spout, its slope against the angle of repose the friction implies.

Core, no Blender: ``HEAP_CUBES`` (default 50) cubes of 0.3 m waiting over a disc of 1.5 sizes at the
spout of Add Rigid Pile's Pour arrangement (``heaps.spout_cubes``, seed ``HEAP_SEED``, default 1),
released one every 4 frames (lowest first, each once the one before has left its spot), friction
``HEAP_FRICTION`` (default 0.5) static and dynamic, particle radius 0.05 m (a sixth of a cube), 24 fps,
Bake Rigid Pile's defaults otherwise (automatic substeps, at least 20; sleeping), then 15 s to settle.
Figures: the heap's slope (``heaps.heap_slope``: least-squares slope of the highest box top per ring of
one box around the axis) against ``arctan(mu)`` (the goal is within 5 degrees), the kinetic energy in
the last 2 s, how long after the last drop every cube was asleep, and CPU seconds of the whole run.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))
from _common import record  # noqa: E402

from addon.simulation.heaps import pour_heap, repose_angle, spout_cubes  # noqa: E402
from addon.simulation.scenes import SimulationSettings  # noqa: E402

SIZE = 0.3
INTERVAL = 4
SETTLE_SECONDS = 15.0


def main() -> None:
    count = int(os.environ.get("HEAP_CUBES", "50"))
    friction = float(os.environ.get("HEAP_FRICTION", "0.5"))
    seed = int(os.environ.get("HEAP_SEED", "1"))
    settings = SimulationSettings(
        auto_substeps=True,
        min_substeps=20,
        particle_radius=SIZE / 6,
        friction=friction,
        pour_interval=INTERVAL,
    )
    start = time.process_time()
    pour = pour_heap(spout_cubes(count, SIZE, seed), settings, SETTLE_SECONDS)
    cpu = time.process_time() - start
    slope, target = pour.slope(SIZE), repose_angle(friction)
    settling = pour.all_asleep[pour.pour_frames :]
    awake_until = max((k + 1 for k, rest in enumerate(settling) if not rest), default=0)
    label = f"{count} cubes, mu {friction:g}, seed {seed}"
    record("Rigid heap: slope (core)", slope, "deg", f"{target:.1f} +- 5", label)
    record("Rigid heap: |slope - arctan(mu)|", abs(slope - target), "deg", "<= 5")
    record(
        "Rigid heap: max kinetic energy, last 2 s", max(pour.energy[-48:]), "J (unit mass/particle)", "small"
    )
    record("Rigid heap: cubes still waiting at the spout", float(pour.world.held.sum()), "cubes", "0")
    record("Rigid heap: seconds after the last drop until all asleep", awake_until / settings.fps, "s")
    record("Rigid heap: frames until the last drop", float(pour.pour_frames), "frames")
    record("Rigid heap: CPU of the whole run (pour + 15 s)", cpu, "s")


if __name__ == "__main__":
    main()
