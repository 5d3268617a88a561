"""A rigid heap: cubes poured from a spout, its slope against the angle of repose the friction implies.

Core, no Blender, the path a user takes: ``HEAP_CUBES`` (default 50) cubes of 0.3 m waiting over a disc
of 1.5 sizes at the spout of Add Rigid Pile's Pour arrangement (``heaps.spout_cubes``, once per seed in
``HEAP_SEED``, default "1,2,3"), baked with the settings Add Rigid Pile (Pour) sets
(``heaps.POUR_INTERVAL``, ``POUR_DROP``, ``POUR_CONTACTS``, ``pour_rolling_resistance``: one every 4
frames from the spout, each once the one before has left its spot, Sequential contacts, Rolling
Resistance from the friction: 0.18, 0.3 and 0.96 at 0.3, 0.5 and 0.8) and Bake Rigid Pile's defaults
otherwise (automatic substeps, at least 20; sleeping; 24 fps), particle radius 0.05 m (a sixth of a
cube), then 15 s to settle; once per friction in ``HEAP_FRICTION`` (default "0.3,0.5,0.8", static and
dynamic).
Figures per friction and seed: the heap's slope (``heaps.heap_slope``: least-squares slope of the
highest box top per ring of one box around the axis) against ``arctan(mu)`` and ``|slope - arctan(mu)|``
(the goal: within 5 degrees), the kinetic energy in the last 2 s, how long after the last drop every
cube was asleep, and CPU seconds of the whole run. Per friction: the median slope over the seeds and
their spread (one 50-cube heap says little: at mu 0.5 and Rolling Resistance 0.375 seeds 1, 2 and 3 stood
at 29.4, 51.4 and 26.9 deg). Also per pour: the farthest cube from the heap's axis and the highest top.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))
# The BLAS kernels the unit tests pin (tests/unit/conftest.py), set before numpy loads: a pour is chaotic,
# and only on the same kernels are these figures the heap test's.
sys.path.insert(0, str(ROOT / "tests" / "unit"))
import conftest  # noqa: E402, F401
import numpy as np  # noqa: E402
from _common import record  # noqa: E402

from addon.simulation.heaps import pour_heap, pour_settings, repose_angle, spout_cubes  # noqa: E402

SIZE = 0.3
SETTLE_SECONDS = 15.0


def main() -> None:
    count = int(os.environ.get("HEAP_CUBES", "50"))
    seeds = [int(seed) for seed in os.environ.get("HEAP_SEED", "1,2,3").split(",")]
    for friction in (float(mu) for mu in os.environ.get("HEAP_FRICTION", "0.3,0.5,0.8").split(",")):
        slopes = [measure(count, friction, seed) for seed in seeds]
        target = repose_angle(friction)
        label = f"{count} cubes, seeds {', '.join(map(str, seeds))}"
        at = f"mu {friction:g}"
        median = statistics.median(slopes)
        record(f"Rigid heap, {at}: median slope over the seeds", median, "deg", f"{target:.1f} +- 5", label)
        record(f"Rigid heap, {at}: seeds' slopes, highest - lowest", max(slopes) - min(slopes), "deg")


def measure(count: int, friction: float, seed: int) -> float:
    """One pour's figures (recorded); returns its slope."""
    settings = pour_settings(friction, SIZE)
    start = time.process_time()
    pour = pour_heap(spout_cubes(count, SIZE, seed), settings, SETTLE_SECONDS)
    cpu = time.process_time() - start
    slope, target = pour.slope(SIZE), repose_angle(friction)
    settling = pour.all_asleep[pour.pour_frames :]
    awake_until = max((k + 1 for k, rest in enumerate(settling) if not rest), default=0)
    label = f"{count} cubes, seed {seed}, as Add Rigid Pile (Pour) sets"
    at = f"mu {friction:g}, seed {seed}"
    record(f"Rigid heap, {at}: slope (core)", slope, "deg", f"{target:.1f} +- 5", label)
    record(f"Rigid heap, {at}: |slope - arctan(mu)|", abs(slope - target), "deg", "<= 5")
    energy = max(pour.energy[-round(2 * settings.fps) :])
    record(f"Rigid heap, {at}: max kinetic energy, last 2 s", energy, "J (unit mass/particle)", "small")
    record(f"Rigid heap, {at}: cubes still waiting at the spout", float(pour.world.held.sum()), "cubes", "0")
    boxes = [pour.world.positions[pour.offsets[k] : pour.offsets[k + 1]] for k in range(count)]
    centres = np.array([b.mean(axis=0) for b in boxes])
    far = np.linalg.norm(centres[:, :2] - np.median(centres[:, :2], axis=0), axis=1).max()
    record(f"Rigid heap, {at}: farthest cube from the heap's axis", far, "m", f"< {10 * SIZE:g}")
    record(f"Rigid heap, {at}: highest cube top", max(b[:, 2].max() for b in boxes), "m", f"> {4 * SIZE:g}")
    record(f"Rigid heap, {at}: seconds after the last drop until all asleep", awake_until / settings.fps, "s")
    record(f"Rigid heap, {at}: frames until the last drop", float(pour.pour_frames), "frames")
    record(f"Rigid heap, {at}: CPU of the whole run (pour + 15 s)", cpu, "s")
    return slope


if __name__ == "__main__":
    main()
