"""Rope benchmark: cost per frame and worst link stretch of a 1 m rope released horizontally, at the
documented default settings (24 fps, 20 substeps, 1 iteration, Gauss-Seidel), with the exact chain
solve (now) against the coloured Gauss-Seidel sweep it replaced (before), measured in the same run.

Cost is CPU time per frame, the best of interleaved repeats (the machine is shared); stretch is the
worst over 10 s of swinging.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import record  # noqa: E402

from addon.simulation.scenes import SimulationSettings, build_rope_world  # noqa: E402

SETTINGS = SimulationSettings(use_ground=False)


def rope_world(links: int, chain_solve: bool):
    points = np.zeros((links + 1, 3))
    points[:, 0] = np.linspace(0.0, 1.0, links + 1)
    points[:, 2] = 2.0
    world = build_rope_world(points, [], SETTINGS, pin_end=False)
    if not chain_solve:
        world._chains = False  # the coloured sweep, as before the chain solve
    return world


def cost_per_frame(links: int) -> dict[bool, float]:
    worlds = {mode: rope_world(links, mode) for mode in (False, True)}
    best = {False: np.inf, True: np.inf}
    for _ in range(15):
        for mode, world in worlds.items():
            start = time.process_time()
            for _ in range(6):
                world.step(SETTINGS.dt, SETTINGS.substeps, SETTINGS.iterations)
            best[mode] = min(best[mode], (time.process_time() - start) / 6)
    return best


def worst_stretch(links: int, chain_solve: bool) -> float:
    world = rope_world(links, chain_solve)
    rest = 1.0 / links
    worst = 0.0
    for _ in range(int(10 * SETTINGS.fps)):
        world.step(SETTINGS.dt, SETTINGS.substeps, SETTINGS.iterations)
        lengths = np.linalg.norm(np.diff(world.positions, axis=0), axis=1)
        worst = max(worst, float(np.abs(lengths / rest - 1.0).max()))
    return worst


def main() -> None:
    for links in (20, 100, 200):
        cost = cost_per_frame(links)
        note = f"{links} links, defaults: 24 fps, 20 substeps, 1 iteration"
        record(
            f"rope {links} links: step cost before (coloured sweep)", cost[False] * 1e3, "ms/frame", "", note
        )
        record(f"rope {links} links: step cost now (chain solve)", cost[True] * 1e3, "ms/frame", "", note)
        target = "<= 1.2x" if links == 20 else ""
        record(f"rope {links} links: cost now / before", cost[True] / cost[False], "x", target, note)
        if links <= 100:
            for mode, label in ((False, "before"), (True, "now")):
                record(
                    f"rope {links} links: worst stretch over 10 s, {label}",
                    worst_stretch(links, mode) * 100.0,
                    "%",
                    "< 1%" if mode else "",
                    note,
                )


if __name__ == "__main__":
    main()
