"""Rigid piles that come to rest and stay there: sleeping bodies, waking on impact."""

import numpy as np
import pytest

from addon.simulation import SimulationError, World
from addon.simulation.scenes import Body, SimulationSettings, build_rigid_world, run_frames

_FACES = np.array([(0, 1, 3), (0, 3, 2), (4, 6, 7), (4, 7, 5), (0, 4, 5), (0, 5, 1),
                   (2, 3, 7), (2, 7, 6), (0, 2, 6), (0, 6, 4), (1, 5, 7), (1, 7, 3)])  # fmt: skip


def _cube(size, centre, angle=0.0):
    corners = (np.array([[i, j, k] for i in (0, 1) for j in (0, 1) for k in (0, 1)], float) - 0.5) * size
    c, s = np.cos(angle), np.sin(angle)
    turn = np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])  # about y: lands on an edge
    return Body(f"cube {centre}", corners @ turn.T + centre, triangles=_FACES)


def _settings(frames, **overrides):
    # bake_rigid_pile's defaults: automatic substeps with Substeps (20) as the floor.
    return SimulationSettings(frame_count=frames, auto_substeps=True, min_substeps=20, **overrides)


def test_a_settled_pile_falls_asleep_and_has_no_kinetic_energy_for_the_last_two_seconds():
    bodies = [_cube(0.3, [0.05 * (k % 2), 0.0, 0.3 + 0.5 * k], angle=0.4 * k) for k in range(5)]
    settings = _settings(168)
    world, _, offsets = build_rigid_world(bodies, [], settings)
    energy, asleep = [], []
    for _, positions in run_frames(world, settings, 1):  # noqa: B007 (the last frame is checked below)
        energy.append(world.kinetic_energy())
        asleep.append(world.sleeping.copy())
    assert max(energy[:24]) > 1.0  # they did fall
    # Settled for the last 2 s (1.0 = an rms speed of 5 cm/s over the ~700 unit-mass particles, against
    # thousands while falling), then frozen: no jitter, no creeping.
    assert max(energy[-48:]) < 1.0
    assert all(asleep[-1]) and max(energy[-12:]) == 0.0
    assert positions[:, 2].min() > 0.0  # on the ground, not in it


def test_a_sleeping_body_wakes_when_another_lands_on_it():
    resting = _cube(0.3, [0.0, 0.0, 0.15])  # standing on the ground
    falling = _cube(0.3, [0.12, 0.0, 6.0], angle=0.5)  # hits the resting cube's edge off-centre
    settings = _settings(48)
    world, _, offsets = build_rigid_world([resting, falling], [], settings)
    trace = []
    for frame, positions in run_frames(world, settings, 1):
        trace.append((frame, bool(world.sleeping[0]), positions[: offsets[1]].mean(axis=0)))
    asleep_frames = [f for f, sleeping, _ in trace if sleeping]
    assert asleep_frames and asleep_frames[0] < 24  # asleep before the other one arrives (~frame 26)
    woke = [f for f, sleeping, _ in trace if not sleeping and f > asleep_frames[0]]
    assert woke, "the impact did not wake the resting cube"
    moved = np.linalg.norm(trace[-1][2] - trace[asleep_frames[0] - trace[0][0]][2])
    assert moved > 0.01  # and it was pushed, not treated as a wall forever


def test_sleeping_needs_separate_rigid_bodies():
    world = World(np.eye(3))
    with pytest.raises(SimulationError, match="shape-matched"):
        world.enable_sleeping()
    world.add_shape_match([[0, 1], [1, 2]])
    with pytest.raises(SimulationError, match="disjoint"):
        world.enable_sleeping()


def test_a_box_standing_on_the_ground_stays_put_instead_of_jumping():
    """Its surface samples start on the ground, a collision radius (2.5 cm) too low: the overlap is
    pushed out before the first step instead of by a velocity-making correction (which threw it up at
    4 m/s)."""
    settings = _settings(12)
    world, _, _ = build_rigid_world([_cube(0.3, [0.0, 0.0, 0.15])], [], settings)
    start = world.positions.mean(axis=0)
    fastest = 0.0
    for _, positions in run_frames(world, settings, 1):  # noqa: B007 (the last frame is checked below)
        fastest = max(fastest, float(np.linalg.norm(world.velocities, axis=1).max()))
    assert fastest < 0.2
    assert np.linalg.norm(positions.mean(axis=0) - start) < 0.035


def test_a_restored_snapshot_also_restores_who_is_asleep():
    """A frame redone by the automatic substeps must not keep the sleep its failed attempt decided."""
    settings = _settings(1)
    world, _, _ = build_rigid_world([_cube(0.3, [0.0, 0.0, 0.15])], [], settings)
    state = world.snapshot()
    for _ in range(20):
        world.step(settings.dt, substeps=20)
    assert world.sleeping.all() and world.inverse_masses.max() == 0.0
    world.restore(state)
    assert not world.sleeping.any() and world.inverse_masses.min() > 0.0
