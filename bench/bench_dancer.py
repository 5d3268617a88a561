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

import numpy as np  # noqa: E402
from _common import best_time, record  # noqa: E402

from addon.dancer import DEFAULT_SEQUENCE, build_body, perform, random_sequence  # noqa: E402
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

    # A 20-step sequence (the seeded random legal one the tests perform), controller running.
    twenty = random_sequence(np.random.default_rng(2026), 20)
    long_simulated = perform(twenty).times[-1]
    long_wall = best_time(lambda: perform(twenty), repeat=2)
    record("dancer: 20-step sequence, simulated seconds", long_simulated, "s", note=",".join(twenty))
    record("dancer: 20-step sequence, simulated s per wall s", long_simulated / long_wall, "x real time",
           ">= 20x", note="core perform() at default gains, as the bake operator runs it")
    start = time.process_time()
    perform(twenty)
    record("dancer: 20-step sequence, simulated s per CPU s", long_simulated / (time.process_time() - start),
           "x real time", note="load-independent")


if __name__ == "__main__":
    main()
