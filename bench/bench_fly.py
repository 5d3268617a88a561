"""Fly: one GA generation (100 flies, 3 s at 1 ms) vectorised vs the same flies one at a time."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import record  # noqa: E402

from addon.fly import Population, simulate  # noqa: E402

FLIES = 100
DURATION = 3.0
LOOP_SUBSET = 4  # flies timed one by one; the loop's total is scaled up to all 100


def main() -> None:
    genomes = Population(size=FLIES, seed=0).genomes
    start = time.perf_counter()
    vectorised = simulate(genomes, duration=DURATION)
    vector_seconds = time.perf_counter() - start

    start = time.perf_counter()
    singles = [simulate(genomes[i], duration=DURATION) for i in range(LOOP_SUBSET)]
    loop_seconds = (time.perf_counter() - start) * FLIES / LOOP_SUBSET
    for index, single in enumerate(singles):  # same physics either way
        np.testing.assert_allclose(single.positions[0], vectorised.positions[index], atol=1e-9)

    note = f"loop timed on {LOOP_SUBSET} flies and scaled to {FLIES}"
    record("fly: generation 100 flies x 3 s, vectorised", vector_seconds, "s")
    record("fly: same flies one at a time (scaled)", loop_seconds, "s", note=note)
    record("fly: vectorised speed-up over the loop", loop_seconds / vector_seconds, "x", ">= 20x")
    record("fly: fly-seconds simulated per wall second", FLIES * DURATION / vector_seconds, "fly-s/s")


if __name__ == "__main__":
    main()
