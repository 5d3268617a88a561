"""Fifty boxes poured on the floor make a heap at the angle of repose their friction implies, and rest.

One full pour (core, as Add Rigid Pile (Pour) sets up Bake Rigid Pile, ``heaps.POUR_*``: Sequential
contacts with Rolling Resistance 0.6 mu, automatic substeps with 20 as the floor, sleeping on): cubes of
0.3 m wait at its spout and drop one every 4 frames, each once the one before has left its spot; the run
ends 15 s after the last drop. Measured: the heap's slope (``heaps.heap_slope``: the fitted slope of the
highest box top per ring one box wide around the heap's axis) and the kinetic energy of every frame.
"""

import numpy as np
import pytest

from addon.simulation.heaps import pour_heap, pour_settings, repose_angle, spout_cubes

SIZE = 0.3
COUNT = 50


@pytest.mark.parametrize(
    "friction, seed",
    [
        # One 50-cube heap's slope depends on the seed by up to 11.5 deg (bench/bench_rigid_heap.py gives
        # every seed's and the median), so one seed passing is not the requirement met.
        # Since friction between bodies stopped creeping (test_simulation_rigid_contacts.py,
        # ..._cube_on_a_box_stays_put_...) the heaps stand flatter at Rolling Resistance 0.6 mu (refit due):
        (0.5, 1),  # measured 22.4 deg (arctan 0.5: 26.6), Rolling Resistance 0.3; before the fix 25.9
        (0.5, 2),  # 22.5 deg (before: 18.7); seed 3: 23.6 with a cube 3.57 m out
        pytest.param(0.8, 1, marks=pytest.mark.xfail(strict=True, reason="slope 26.6 deg, arctan 0.8: 38.7")),
        pytest.param(0.8, 2, marks=pytest.mark.xfail(strict=True, reason="slope 22.2 deg, arctan 0.8: 38.7")),
        # Measured: 24.5 deg against arctan(0.3) = 16.7 and the highest cube top at 1.18 m (Rolling
        # Resistance 0.18); seed 2: 16.8 deg, top 1.15 m, a cube 3.76 m out. At 16.7 deg 50 cubes make
        # about two layers, under the 4 sizes asked below.
        pytest.param(0.3, 1, marks=pytest.mark.xfail(strict=True, reason="slope 24.5 deg, arctan 0.3: 16.7")),
    ],
)
def test_fifty_poured_boxes_heap_at_the_angle_of_repose_and_come_to_rest(friction, seed):
    settings = pour_settings(friction, SIZE)
    pour = pour_heap(spout_cubes(COUNT, SIZE, seed), settings, settle_seconds=15.0)
    world, offsets = pour.world, pour.offsets
    assert not world.held.any(), "the heap blocked the spout"
    # A heap, not a layer: it stands several boxes high, and nothing was flung far away.
    boxes = [world.positions[offsets[k] : offsets[k + 1]] for k in range(COUNT)]
    assert max(b[:, 2].max() for b in boxes) > 4 * SIZE
    centres = np.array([b.mean(axis=0) for b in boxes])
    assert np.linalg.norm(centres[:, :2] - np.median(centres[:, :2], axis=0), axis=1).max() < 10 * SIZE
    # Its flank stands at the angle of repose the friction implies: arctan(mu) (26.6 deg at 0.5).
    assert pour.slope(SIZE) == pytest.approx(repose_angle(friction), abs=5.0)
    # At rest for the last 2 s: no jitter, no creeping (an rms speed under 1 cm/s over all particles,
    # against ~1-3 m/s while the boxes fall).
    energy = np.array(pour.energy)
    bound = 0.5 * world.particle_count * 0.01**2  # unit mass per particle
    assert energy[: pour.pour_frames].max() > 1000 * bound
    assert energy[-round(2 * settings.fps) :].max() < bound
