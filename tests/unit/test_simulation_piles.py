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


# ------------------------------------------------------------------- friction: static and dynamic
def _box_on_a_slope(degrees, friction, static_friction=None, speed=0.0, seconds=1.0):
    """How far a 0.3 m box standing on the ground slides in ``seconds`` with gravity tilted by
    ``degrees`` (the same as standing on a slope that steep), started at ``speed`` down the slope."""
    settings = _settings(
        round(24 * seconds), friction=friction, static_friction=static_friction, sleep_speed=0.0,
        particle_radius=0.05,
    )  # fmt: skip
    world, _, _ = build_rigid_world([_cube(0.3, [0.0, 0.0, 0.15])], [], settings)
    tilt = np.radians(degrees)
    world.gravity = 9.81 * np.array([np.sin(tilt), 0.0, -np.cos(tilt)])
    world.set_velocities([speed, 0.0, 0.0])
    start = world.positions.mean(axis=0)
    for _ in run_frames(world, settings, 1):
        pass
    return float(world.positions.mean(axis=0)[0] - start[0])


def _slide(degrees, friction, speed, seconds=1.0):
    """Coulomb's law: the distance a block sliding at ``speed`` covers on that slope in ``seconds``."""
    tilt = np.radians(degrees)
    acceleration = 9.81 * (np.sin(tilt) - friction * np.cos(tilt))
    if acceleration >= 0:
        return speed * seconds + 0.5 * acceleration * seconds**2
    stop = min(seconds, speed / -acceleration)
    return speed * stop + 0.5 * acceleration * stop**2


def test_static_friction_holds_a_box_on_a_slope_steeper_than_its_dynamic_friction_allows():
    # tan(25 deg) = 0.47: above the dynamic 0.3, below the static 0.6.
    assert abs(_box_on_a_slope(25.0, friction=0.3, static_friction=0.6)) < 0.002
    # With one coefficient of 0.3 it slides, at Coulomb's acceleration g (sin - 0.3 cos).
    assert _box_on_a_slope(25.0, friction=0.3) == pytest.approx(_slide(25.0, 0.3, 0.0), rel=0.1)


def test_once_sliding_a_box_obeys_the_dynamic_coefficient():
    # Started at 1 m/s down the same slope, static friction 0.6 does not stop it: it speeds up.
    assert _box_on_a_slope(25.0, 0.3, 0.6, speed=1.0) == pytest.approx(_slide(25.0, 0.3, 1.0), rel=0.1)
    # On flat ground it stops after v^2 / (2 mu g): 17 cm at mu 0.3.
    assert _box_on_a_slope(0.0, 0.3, speed=1.0) == pytest.approx(_slide(0.0, 0.3, 1.0), rel=0.1)


def test_stacked_boxes_stand_still_without_sinking_into_each_other():
    """Rigid contacts push along the faces' normals with the bodies' masses and inertia, so a stack of
    three (each shifted 5 cm) holds level by level: no sinking, no jitter, no creeping."""
    bodies = [_cube(0.3, [0.05 * k, 0.0, 0.15 + 0.4 * k]) for k in range(3)]
    settings = _settings(48, sleep_speed=0.0, particle_radius=0.05)
    world, _, offsets = build_rigid_world(bodies, [], settings)
    start = world.positions
    for _ in run_frames(world, settings, 1):
        pass
    end = world.positions
    for k in range(3):
        # Each rests a particle diameter (0.1 m) above the one below (and the first a radius up).
        centre = end[offsets[k] : offsets[k + 1]].mean(axis=0)
        assert centre[2] == pytest.approx(0.2 + 0.4 * k, abs=0.01)
        assert np.abs(end[offsets[k] : offsets[k + 1]] - start[offsets[k] : offsets[k + 1]]).max() < 0.01


# ----------------------------------------------------------------------------------------- pouring
def test_a_pour_releases_one_body_after_another_lowest_first_and_only_when_its_spot_is_clear():
    # Three cubes waiting at one spout, overlapping: released every 2 frames if the spot is clear.
    bodies = [_cube(0.3, [0.0, 0.0, 1.5 + 0.001 * k]) for k in (2, 0, 1)]
    settings = _settings(48, pour_interval=2, particle_radius=0.05)
    world, _, offsets = build_rigid_world(bodies, [], settings)
    start = world.positions
    released = {}
    for frame, positions in run_frames(world, settings, 1):
        for k in range(3):
            moved = np.abs(positions[offsets[k] : offsets[k + 1]] - start[offsets[k] : offsets[k + 1]]).max()
            if k not in released and moved > 0:
                released[k] = frame
            if k not in released:
                assert not world.held[k] or moved == 0.0  # a waiting body stays exactly where it is
    assert sorted(released, key=released.get) == [1, 2, 0]  # lowest first
    # Each waits at least the interval, and longer while the previous one is still in its way.
    assert released[2] - released[1] >= 2 and released[0] - released[2] >= 2
    tops = [positions[offsets[k] : offsets[k + 1], 2].max() for k in range(3)]
    assert sorted(tops) == pytest.approx([0.35, 0.75, 1.15], abs=0.03)  # a stack, nothing flung away


@pytest.mark.parametrize("drop, interval", [(0.1, 4), (0.2, 2)])
def test_a_pour_with_a_drop_lets_each_body_go_that_far_above_the_heap_not_from_the_spout(drop, interval):
    """A funnel raised as the heap grows: each cube leaves ``pour_drop`` above what lies beneath it (the
    ground, then the cube before), so it lands at the speed of that short fall, not of the spout's 3 m.
    Also when the next one is due before the one before has landed (a 0.2 m fall takes 4.8 frames):
    it waits above the landed heap, not a drop over the falling cube (a funnel raised with each)."""
    bodies = [_cube(0.3, [0.0, 0.0, 3.0 + 0.001 * k]) for k in range(3)]
    settings = _settings(48, pour_interval=interval, particle_radius=0.05, pour_drop=drop)
    world, _, offsets = build_rigid_world(bodies, [], settings)
    bottoms, fastest = {}, 0.0
    previous = world.positions
    for _, positions in run_frames(world, settings, 1):
        for k in range(3):
            cube = slice(offsets[k], offsets[k + 1])
            if k in bottoms:  # falling or landed since a frame before (not the jump down to its drop)
                fastest = max(fastest, np.abs(positions[cube] - previous[cube]).max() * settings.fps)
            elif not world.held[k]:  # let go this frame: its surface's bottom now
                bottoms[k] = positions[cube, 2].min() - 0.05  # a radius out
        previous = positions
    # Let go a drop above the ground, then above the top of the cube below (their surfaces a particle
    # radius outside the samples: a stack rises 0.4 m a cube); a frame's fall since then: 8.5 mm.
    fallen = 0.5 * 9.81 / settings.fps**2
    expected = [drop - fallen, 0.4 + drop - fallen, 0.8 + drop - fallen]
    assert [bottoms[k] for k in range(3)] == pytest.approx(expected, abs=0.01)
    assert fastest < 1.5 * np.sqrt(2 * 9.81 * drop)  # never near the 7.7 m/s of a 3 m fall
    tops = [positions[offsets[k] : offsets[k + 1], 2].max() for k in range(3)]
    assert sorted(tops) == pytest.approx([0.35, 0.75, 1.15], abs=0.03)
    with pytest.raises(SimulationError, match="pour drop"):
        SimulationSettings(pour_drop=-0.1)
    with pytest.raises(SimulationError, match="drop height"):
        world.pour(np.zeros(3), drop=float("nan"))


def test_sleeping_bodies_are_left_out_of_shape_matching_and_the_contact_search():
    bodies = [_cube(0.3, [0.5 * k, 0.0, 0.15]) for k in range(4)]
    settings = _settings(24, particle_radius=0.05)
    world, _, _ = build_rigid_world(bodies, [], settings)
    for _ in run_frames(world, settings, 1):
        pass
    assert world.sleeping.all()
    clusters, awake, held = world._awake()
    assert clusters is None and not awake.any() and not held.any()  # no shape matching at all
    # Touching sleepers are not searched against each other: no candidate pairs while all sleep.
    touching = [_cube(0.3, [0.0, 0.0, 0.15]), _cube(0.3, [0.0, 0.0, 0.55])]
    world, _, _ = build_rigid_world(touching, [], settings)
    assert len(world._particle_pairs(world.positions, 0.01)) > 0
    for _ in run_frames(world, settings, 1):
        pass
    assert world.sleeping.all() and len(world._particle_pairs(world.positions, 0.01)) == 0
