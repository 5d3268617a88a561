"""Fifty boxes poured on the floor make a heap at the angle of repose their friction implies, and rest.

A full pour (core, as Add Rigid Pile (Pour) sets up Bake Rigid Pile, ``heaps.pour_settings``: Sequential
contacts with Rolling Resistance ``heaps.pour_rolling_resistance``, automatic substeps with 20 as the floor,
sleeping on): cubes of 0.3 m wait at its spout and drop one every 4 frames, each once the one before has
left its spot; the run ends 15 s after the last drop. Measured: the heap's slope (``heaps.heap_slope``: the
fitted slope of the highest box top per ring one box wide around the heap's axis) and the kinetic energy
of every frame.

One 50-cube heap's slope is chance within 10 degrees and more (the cubes' turns and places at the spout
decide how they land; at friction 0.8 and Rolling Resistance 1.5 seeds 1-3 stood at 34.5, 19.8 and 3.9),
so the angle is asked of the median over three pours (seeds 1, 2, 3) per friction; every pour must heap,
not spread, and come to rest. The heap's flank is cubes that tumbled down it and stopped: where rolling
resistance held them on edges leaning on each other, the heap stood 26-28 deg whatever the friction.
Cost: three pours per friction, nine in all (~1.5-2 CPU minutes each); one test per friction so a runner
can split them.
"""

import statistics

import numpy as np
import pytest

from addon.simulation.heaps import pour_heap, pour_settings, repose_angle, spout_cubes

SIZE = 0.3
COUNT = 50
SEEDS = (1, 2, 3)


def _pour(friction, seed):
    """One pour's figures: slope, highest box top, farthest box centre from the heap's axis, whether
    cubes were left at the spout, the kinetic energy's peak while pouring and over the last 2 s, and
    the bound that is "at rest" for this many particles."""
    settings = pour_settings(friction, SIZE)
    pour = pour_heap(spout_cubes(COUNT, SIZE, seed), settings, settle_seconds=15.0)
    world, offsets = pour.world, pour.offsets
    boxes = [world.positions[offsets[k] : offsets[k + 1]] for k in range(COUNT)]
    centres = np.array([b.mean(axis=0) for b in boxes])
    energy = np.array(pour.energy)
    return {
        "slope": pour.slope(SIZE),
        "top": max(b[:, 2].max() for b in boxes),
        "far": np.linalg.norm(centres[:, :2] - np.median(centres[:, :2], axis=0), axis=1).max(),
        "blocked": bool(world.held.any()),
        "pouring": energy[: pour.pour_frames].max(),
        "last": energy[-round(2 * settings.fps) :].max(),
        # An rms speed of 1 cm/s over all particles (unit mass each), against ~1-3 m/s while falling.
        "bound": 0.5 * world.particle_count * 0.01**2,
    }


@pytest.mark.parametrize(
    "friction",
    [
        # Measured on the pinned kernels (conftest.py) with the test's settings and measures, a cube's
        # edge rolling on the particle radius (rigid_contacts._rolling_levers), Rolling Resistance
        # heaps.pour_rolling_resistance (fitted for the old lever from the cube's centre; refit needed),
        # seeds 1 / 2 / 3 (deg). With the old lever: 26.7 / 26.7 / 26.2 at 0.3, 28.0 / 34.3 / 28.3 at 0.8,
        # and at 0.5 seed 1 left a box 5.38 m out.
        pytest.param(0.3, marks=pytest.mark.xfail(strict=True, reason=(
            "seeds 1-3 at 14.8 / 9.4 / 16.7 deg (median 14.8, arctan 0.3: 16.7) but seed 2 spreads into a "
            "layer: highest box top 0.75 m"))),
        pytest.param(0.5, marks=pytest.mark.xfail(strict=True, reason=(
            "seeds 1-3 at 16.4 / 18.4 / 15.5 deg, median 16.4, arctan 0.5: 26.6"))),
        pytest.param(0.8, marks=pytest.mark.xfail(strict=True, reason=(
            "seeds 1-3 at 24.7 / 25.7 / 20.9 deg, median 24.7, arctan 0.8: 38.7; seed 2 leaves a box "
            "4.70 m out"))),
    ],
)  # fmt: skip
def test_fifty_poured_boxes_heap_at_the_angle_of_repose_and_come_to_rest(friction):
    pours = {seed: _pour(friction, seed) for seed in SEEDS}
    for seed, pour in pours.items():
        assert not pour["blocked"], f"seed {seed}: the heap blocked the spout"
        # A heap, not a layer: it stands at least three boxes high (a cone of the cubes' volume at
        # arctan 0.3 would stand about two: measured tops 1.15-1.18 m there, 1.2-1.8 at 0.5 and 0.8).
        assert pour["top"] > 3 * SIZE, f"seed {seed}: highest box top {pour['top']:.2f} m"
        # Nothing flung far: a cube once flew 9.4 m, and with too much rolling resistance at mu 0.5
        # (0.375) one went 5.0 m; cubes that tumble off the heap's toe stopped 1.9-3.8 m from its axis
        # in these nine pours (one heap's reach is chance too: 1.5 + 7e-16 and 1.5 at mu 0.8, seed 1,
        # left cubes 2.52 and 3.60 m out).
        assert pour["far"] < 15 * SIZE, f"seed {seed}: a box {pour['far']:.2f} m from the heap's axis"
        # At rest for the last 2 s: no jitter, no creeping.
        assert pour["pouring"] > 1000 * pour["bound"]
        assert pour["last"] < pour["bound"], f"seed {seed}: kinetic energy {pour['last']:.3g} in the last 2 s"
    # Its flank stands at the angle of repose the friction implies, arctan(mu) (26.6 deg at 0.5), in the
    # median over the seeds.
    slopes = [pour["slope"] for pour in pours.values()]
    assert statistics.median(slopes) == pytest.approx(repose_angle(friction), abs=5.0), slopes
