"""Juggling: what the bounded, jerk-limited hand planner costs against the Hermite hands it replaced.

Core only (no Blender): ``plan_pattern`` at the automatic beat with its defaults (the path the
operator takes) for a sample of bundled presets, against the same call with the previous session's
Hermite hand strokes (throw lift, scoop knots, no beat stretch), in the same run. Also the cost of
sampling the hands at 60 fps over a minute (the operator samples every frame), whose spline now has
one knot per grid cell instead of a few per cycle. Prints the peak hand acceleration of both.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from _common import best_time, record  # noqa: E402

from addon.juggling import motion, parse_siteswap, plan_pattern  # noqa: E402
from addon.juggling.paths import GRAVITY  # noqa: E402

SAMPLE = ["3", "5", "531", "(4,4)", "<3p|3p>", "<3p2 3|3p3 3|3p1 3>", "97531"]


def hermite_planner() -> tuple:
    """Switch the planner to the Hermite strokes; returns what to restore."""
    saved = (motion._Planner.__init__, motion._HAND_STRETCH)
    original = motion._Planner.__init__

    def without_bound(self, *args, **kwargs) -> None:
        original(self, *args, **kwargs)
        self.max_hand_acceleration = None

    motion._Planner.__init__ = without_bound
    motion._HAND_STRETCH = ()
    return saved


def main() -> None:
    times = np.arange(60 * 60) / 60.0
    total_new = total_old = 0.0
    for text in SAMPLE:
        siteswap = parse_siteswap(text)
        new = best_time(lambda s=siteswap: plan_pattern(s), repeat=3)
        pattern = plan_pattern(siteswap)
        sample_new = best_time(lambda p=pattern: p.hand_positions(times), repeat=3)
        peak_new = pattern.hand_acceleration_peaks()[..., 0].max() / GRAVITY
        saved = hermite_planner()
        try:
            old = best_time(lambda s=siteswap: plan_pattern(s), repeat=3)
            before = plan_pattern(siteswap)
            sample_old = best_time(lambda p=before: p.hand_positions(times), repeat=3)
            peak_old = before.hand_acceleration_peaks()[..., 0].max() / GRAVITY
        finally:
            motion._Planner.__init__, motion._HAND_STRETCH = saved
        total_new += new
        total_old += old
        record(
            f"juggling hands plan {text}",
            new / old,
            "x Hermite",
            note=f"{new * 1e3:.1f} ms vs {old * 1e3:.1f} ms; peak {peak_new:.1f} g vs {peak_old:.1f} g",
        )
        record(
            f"juggling hands sample 60 s at 60 fps {text}",
            sample_new / sample_old,
            "x Hermite",
            note=f"{sample_new * 1e3:.1f} ms vs {sample_old * 1e3:.1f} ms",
        )
    record("juggling hands plan, sample total", total_new / total_old, "x Hermite", note="operator defaults")


if __name__ == "__main__":
    main()
