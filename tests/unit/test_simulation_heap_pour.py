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
        (0.5, 1),  # measured 25.9 deg (arctan 0.5: 26.6), Rolling Resistance 0.3
        pytest.param(0.5, 2, marks=pytest.mark.xfail(strict=True, reason="slope 18.7 deg, arctan 0.5: 26.6")),
        (0.8, 1),  # measured 34.1 deg (arctan 0.8: 38.7), Rolling Resistance 0.48; 26.8 at 0.3
        pytest.param(0.8, 2, marks=pytest.mark.xfail(strict=True, reason="slope 27.5 deg, arctan 0.8: 38.7")),
        # Measured: 23.7 deg against arctan(0.3) = 16.7 and the highest cube top at 1.14 m (Rolling
        # Resistance 0.18; at 0.3: 28.7 deg, a cube 3.05 m out); seeds 2 and 3: 22.3 and 33.8 (seed 3's
        # heap blocks the spout: cubes stacked flat face on face up to 2.2 m). Not sleeping: without it
        # 24.0. Rolling resistance holds cubes up on their edges (test_simulation_rigid_contacts.py,
        # ..._tipped_past_balance_...): 11-12 of the 50 end tilted over 20 deg. And at 16.7 deg 50 cubes
        # make about two layers, under the 4 sizes asked above.
        pytest.param(0.3, 1, marks=pytest.mark.xfail(strict=True, reason="slope 23.7 deg, arctan 0.3: 16.7")),
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
