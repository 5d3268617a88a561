"""Fly, stroke mode at fruit-fly scale: fly-seconds per wall second with 100 flies (0.2 ms step,
wing beats near 200 Hz), and one training generation scored in one process vs on a local Dask
cluster of 2 workers (same scores, checked), in one run."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import record  # noqa: E402

from addon.fly import Population, simulate  # noqa: E402
from addon.fly.training import TrainingConfig, evaluate_genomes  # noqa: E402

FLIES = 100
DURATION = 0.5  # s of flight: 2,500 steps of 0.2 ms
GENERATION = TrainingConfig(
    population=FLIES, fitness="hold_level", duration=DURATION, control="stroke", aero="quasi_steady"
)


def main() -> None:
    genomes = Population(size=FLIES, layers=GENERATION.layers, seed=0, sigma=0.3).genomes
    start = time.perf_counter()
    simulate(genomes, duration=DURATION)
    seconds = time.perf_counter() - start
    record(
        "fly stroke: fly-seconds simulated per wall second (100 flies)",
        FLIES * DURATION / seconds,
        "fly-s/s",
        note="core defaults: fruit fly, 0.2 ms step, quasi-steady + rotational lift, wing recoil",
    )
    try:
        from addon.fly import distributed
    except ImportError:  # pragma: no cover - the module itself never needs Dask to import
        return
    try:
        client = distributed.connect(workers=2)
    except Exception as error:  # Dask not installed: say so in the table, do not fail the bench
        record("fly stroke: Dask speed-up with 2 local workers", float("nan"), "x", note=str(error)[:80])
        return
    try:
        evaluate = distributed.dask_evaluator(client)
        evaluate(genomes[:4], GENERATION, None)  # warm the workers (imports) outside the timing
        start = time.perf_counter()
        single = evaluate_genomes(genomes, GENERATION)
        single_seconds = time.perf_counter() - start
        start = time.perf_counter()
        spread = evaluate(genomes, GENERATION, None)
        dask_seconds = time.perf_counter() - start
    finally:
        distributed.close(client)
    np.testing.assert_array_equal(spread, single)  # the same scores, bit for bit
    record("fly stroke: generation of 100 flies x 0.5 s, one process", single_seconds, "s")
    record("fly stroke: same generation on 2 local Dask workers", dask_seconds, "s")
    record(
        "fly stroke: Dask speed-up with 2 local workers",
        single_seconds / dask_seconds,
        "x",
        target="<= 2x on this 2-core machine",
        note="shared cores: other load lowers it",
    )


if __name__ == "__main__":
    main()
