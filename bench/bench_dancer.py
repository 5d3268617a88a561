"""Dancer: simulated seconds per wall second of the full ballet sequence with the controller running.

Compared in the same run with MuJoCo stepping the same body for the same simulated time with fixed
targets and no controller (the bare physics cost), so the ratio shows what the controllers,
contact forces, COP and support polygons add on top.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import best_time, record  # noqa: E402

from addon.dancer import DEFAULT_SEQUENCE, build_body, perform  # noqa: E402
from addon.dancer.sim import DancerSim  # noqa: E402


def main() -> None:
    perform(DEFAULT_SEQUENCE)  # compiles (and caches) the model, warms numpy
    simulated = perform(DEFAULT_SEQUENCE).times[-1]
    wall = best_time(lambda: perform(DEFAULT_SEQUENCE), repeat=3)

    sim = DancerSim(build_body())
    steps = int(round(simulated / sim.model.opt.timestep))

    def bare_physics() -> None:
        sim.set_angles({})
        sim.place()
        sim.data.ctrl[:] = sim.targets
        sim.mj.mj_step(sim.model, sim.data, nstep=steps)

    bare = best_time(bare_physics, repeat=3)
    start = time.process_time()
    perform(DEFAULT_SEQUENCE)
    cpu = time.process_time() - start

    record("dancer: full sequence, simulated seconds", simulated, "s")
    record("dancer: simulated s per wall s, controller running", simulated / wall, "x real time", ">= 20x")
    record("dancer: simulated s per CPU s (load-independent)", simulated / cpu, "x real time")
    record("dancer: bare MuJoCo stepping, same body and time", simulated / bare, "x real time",
           note="fixed targets, no controller, no recording")
    record("dancer: controller + sensing overhead over bare physics", wall / bare, "x",
           note="perform wall time / bare stepping wall time")


if __name__ == "__main__":
    main()
