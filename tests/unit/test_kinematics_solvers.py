"""CCD-IK and FABRIK: reaching, hinges, limits, bone lengths, unreachable targets, tracking."""

import math

import numpy as np
import pytest

from addon.errors import ProcAnimError
from addon.kinematics import (
    Chain,
    KinematicsError,
    elbow_positions,
    forward_kinematics,
    quaternions,
    rotations_from_positions,
    solve_ccd,
    solve_fabrik,
    solve_two_bone,
    track,
    world_orientations,
)

SOLVERS = {"ccd": solve_ccd, "fabrik": solve_fabrik}


def random_rotations(rng, count, bones):
    return quaternions.normalize(rng.normal(size=(count, bones, 4)))


def reachable_targets(chain, count, seed):
    """Tips of random poses: reachable by construction."""
    rng = np.random.default_rng(seed)
    return forward_kinematics(chain, chain.constrain(random_rotations(rng, count, chain.count)))[:, -1]


def six_bone_chain():
    lengths = np.array([0.5, 0.45, 0.4, 0.35, 0.3, 0.25])
    return Chain(np.outer(lengths, [0.0, 0.0, 1.0]))


def hinged_chain():
    axes = np.array([[0, 0, 1.0], [1.0, 0, 0], [1.0, 0, 0], [0.6, 0.8, 0]])
    return Chain(np.tile([0.0, 0.0, 0.4], (4, 1)), axes=axes)


def limited_chain():
    limits = np.tile(np.array([[-0.6, 0.6], [-0.3, 0.3], [-0.9, 0.9]]), (5, 1, 1))
    limits[2] = [[-1.4, 0.0], [-0.2, 0.2], [-0.2, 0.2]]  # a knee-like joint bending one way only
    return Chain(np.tile([0.0, 0.0, 0.3], (5, 1)), limits=limits)


def assert_valid_pose(chain, result):
    assert np.all(np.isfinite(result.rotations)) and np.all(np.isfinite(result.positions))
    assert math.isfinite(result.error)
    assert np.allclose(np.linalg.norm(result.rotations, axis=1), 1.0)
    assert np.allclose(result.positions, forward_kinematics(chain, result.rotations), atol=1e-9)
    assert np.allclose(np.linalg.norm(np.diff(result.positions, axis=0), axis=1), chain.lengths, atol=1e-9)


@pytest.mark.parametrize("name", ["ccd", "fabrik"])
def test_six_bone_ball_chain_reaches_at_least_99_percent_of_1000_random_targets(name):
    chain = six_bone_chain()
    targets = reachable_targets(chain, 1000, seed=1)
    errors = np.array([SOLVERS[name](chain, t).error for t in targets])
    reached = np.mean(errors <= 1e-3 * chain.reach)
    assert reached >= 0.99, f"{name} reached only {reached:.1%}"


@pytest.mark.parametrize("name", ["ccd", "fabrik"])
def test_hinge_joints_only_ever_rotate_about_their_axis(name):
    chain = hinged_chain()
    axes = chain.axes
    rng = np.random.default_rng(2)
    for target in rng.uniform(-1.5, 1.5, size=(40, 3)):
        result = SOLVERS[name](chain, target, max_iterations=40)
        assert_valid_pose(chain, result)
        assert np.allclose(quaternions.rotate(result.rotations, axes), axes, atol=1e-9)


@pytest.mark.parametrize("name", ["ccd", "fabrik"])
def test_euler_limits_are_never_exceeded(name):
    chain = limited_chain()
    rng = np.random.default_rng(3)
    for target in rng.uniform(-1.5, 1.5, size=(40, 3)):
        result = SOLVERS[name](chain, target, max_iterations=40)
        assert_valid_pose(chain, result)
        assert np.all(quaternions.within_limits(result.rotations, chain.limits))


def test_limited_chain_still_reaches_targets_of_its_own_workspace():
    chain = limited_chain()
    targets = reachable_targets(chain, 50, seed=4)
    errors = np.array([solve_ccd(chain, t, max_iterations=60).error for t in targets])
    assert np.mean(errors <= 1e-3 * chain.reach) >= 0.9


def test_annealing_restarts_escape_where_plain_ccd_stalls():
    chain = limited_chain()
    targets = reachable_targets(chain, 80, seed=5)
    plain = [solve_ccd(chain, t, max_iterations=30, restarts=0) for t in targets]
    annealed = [solve_ccd(chain, t, max_iterations=30, restarts=8) for t in targets]
    plain_ok = sum(r.converged for r in plain)
    annealed_ok = sum(r.converged for r in annealed)
    assert annealed_ok > plain_ok
    assert all(a.error <= p.error + 1e-12 for a, p in zip(annealed, plain, strict=True))
    again = solve_ccd(chain, targets[0], max_iterations=30, restarts=8)
    assert np.array_equal(again.rotations, annealed[0].rotations)  # seeded: reproducible


@pytest.mark.parametrize("name", ["ccd", "fabrik"])
def test_unreachable_target_stretches_the_chain_flagged_and_finite(name):
    chain = six_bone_chain()
    target = np.array([1.0, 2.0, 2.0]) * 2.0  # 6 m away, reach 2.25 m
    result = SOLVERS[name](chain, target)
    assert_valid_pose(chain, result)
    assert not result.reachable and not result.converged
    assert result.error == pytest.approx(np.linalg.norm(target) - chain.reach, abs=1e-3)
    tip_direction = result.positions[-1] / np.linalg.norm(result.positions[-1])
    assert np.allclose(tip_direction, target / np.linalg.norm(target), atol=1e-3)


@pytest.mark.parametrize("name", ["ccd", "fabrik"])
def test_target_at_the_root_and_straight_behind_give_no_nan(name):
    chain = Chain([[0, 0, 1.0], [0, 0, 1.0]])
    for target in ([0.0, 0.0, 0.0], [0.0, 0.0, -2.0], [0.0, 0.0, 2.0]):
        result = SOLVERS[name](chain, target)
        assert_valid_pose(chain, result)
    # Straight behind, CCD folds the tip onto the root where no joint can move it: restarts do.
    assert SOLVERS[name](chain, [0.0, 0.0, -1.9]).converged


@pytest.mark.parametrize("name", ["ccd", "fabrik"])
def test_direction_goal_points_the_last_bone_along_it(name):
    chain = six_bone_chain()
    rng = np.random.default_rng(6)
    poses = random_rotations(rng, 30, 6)
    positions = forward_kinematics(chain, poses)
    solved = 0
    for pose_positions in positions:
        target = pose_positions[-1]
        direction = pose_positions[-1] - pose_positions[-2]
        result = SOLVERS[name](chain, target, direction=direction, max_iterations=200)
        assert_valid_pose(chain, result)
        tip = result.positions[-1] - result.positions[-2]
        measured = math.acos(
            np.clip(np.dot(tip, direction) / (np.linalg.norm(tip) * np.linalg.norm(direction)), -1, 1)
        )
        assert measured == pytest.approx(result.direction_error, abs=1e-6)
        solved += result.converged
    assert solved >= 27


def test_fabrik_cone_limits_hold_relative_to_the_parent_bone():
    chain = six_bone_chain()
    cone = math.radians(25)
    for target in reachable_targets(chain, 40, seed=8):
        result = solve_fabrik(chain, target, cone_angles=cone)
        bones = np.diff(result.positions, axis=0)
        cosines = (
            np.sum(bones[1:] * bones[:-1], axis=1)
            / np.outer(chain.lengths[1:], chain.lengths[:-1]).diagonal()
        )
        assert np.all(np.arccos(np.clip(cosines, -1, 1)) <= cone + 1e-9)
        first = bones[0] / chain.lengths[0]
        assert math.acos(np.clip(first[2], -1, 1)) <= cone + 1e-9


def test_rest_orientations_put_axes_and_limits_in_each_bones_own_frame():
    # Bones along Y of their own frame (Blender's convention), laid along world +Z by the rests.
    rest = quaternions.from_axis_angle([1, 0, 0], math.pi / 2)  # own Y -> base Z
    rests = np.tile(rest, (3, 1))
    chain = Chain(np.tile([0, 0, 0.5], (3, 1)), axes=np.tile([1.0, 0, 0], (3, 1)), rest_orientations=rests)
    assert np.allclose(chain.local_offsets, [[0, 0.5, 0]] * 3)
    assert np.allclose(forward_kinematics(chain, quaternions.identity((3,)))[-1], [0, 0, 1.5])
    result = solve_ccd(chain, [0.0, 0.8, 0.9])
    assert result.converged
    assert np.allclose(quaternions.rotate(result.rotations, [1, 0, 0]), [1, 0, 0], atol=1e-9)
    orientations = world_orientations(chain, result.rotations)
    assert np.allclose(quaternions.rotate(orientations, [1, 0, 0]), [1, 0, 0], atol=1e-9)  # planar arm


def test_tracking_follows_a_moving_target_with_continuous_keys():
    chain = six_bone_chain()
    t = np.linspace(0, 2 * math.pi, 120)
    targets = np.stack([0.8 * np.cos(t), 0.8 * np.sin(t), 1.0 + 0.3 * np.sin(2 * t)], axis=1)
    for solver in ("CCD", "FABRIK"):
        result = track(chain, targets, solver=solver)
        assert result.worst_error <= 1e-3 * chain.reach
        assert np.all(np.sum(result.rotations[1:] * result.rotations[:-1], axis=2) > 0.0)
        assert np.allclose(forward_kinematics(chain, result.rotations), result.positions, atol=1e-9)
        step = np.linalg.norm(np.diff(result.positions, axis=0), axis=2).max()
        assert step < 0.3  # no pose flips between neighbouring frames


def test_one_iteration_per_frame_animates_convergence():
    chain = six_bone_chain()
    targets = np.tile([1.2, 0.5, 0.8], (30, 1))
    result = track(chain, targets, solver="CCD", iterations_per_frame=1, annealing=False)
    assert np.all(result.iterations <= 1)
    assert result.errors[0] > 0.05  # one sweep is not enough ...
    assert np.all(np.diff(result.errors) <= 1e-12)  # ... but every frame gets closer
    assert result.errors[-1] < 1e-4 * chain.reach
    assert result.iterations[-1] == 0  # and once there it stays put


def test_two_bone_analytic_arm_uses_the_shared_elbow():
    chain = Chain([[0, 0, -0.3], [0, 0, -0.28]])
    hand = np.array([0.2, 0.3, -0.25])
    result = solve_two_bone(chain, hand, chicken_wing=0.4, down=(0, 0, -1), outward=(1, 0, 0))
    elbow, reachable = elbow_positions(np.zeros(3), hand, 0.3, 0.28, 0.4, (0, 0, -1), (1, 0, 0))
    assert reachable and result.converged
    assert np.allclose(result.positions[1], elbow, atol=1e-9)
    assert np.allclose(result.positions[2], hand, atol=1e-9)
    far = solve_two_bone(chain, [0, 0, -2.0])
    assert not far.reachable and far.error == pytest.approx(2.0 - 0.58)


def test_rotations_from_positions_recovers_a_pose():
    chain = six_bone_chain()
    rng = np.random.default_rng(9)
    positions = forward_kinematics(chain, random_rotations(rng, 1, 6)[0])
    recovered = rotations_from_positions(chain, positions)
    assert np.allclose(forward_kinematics(chain, recovered), positions, atol=1e-9)


@pytest.mark.parametrize(
    "make",
    [
        lambda: Chain([[0, 0, 0.0]]),
        lambda: Chain([[0, 0, 1.0]], limits=[[[0.5, -0.5], [0, 0], [0, 0]]]),
        lambda: Chain([[0, 0, float("nan")]]),
        lambda: Chain([[0, 0, 1.0]], axes=[[1, 0]]),
        lambda: solve_ccd(Chain([[0, 0, 1.0]]), [0, float("nan"), 0]),
        lambda: solve_fabrik(Chain([[0, 0, 1.0]]), [0, 0, 1], direction=[0, 0, 0]),
        lambda: solve_ccd(Chain([[0, 0, 1.0]]), [0, 0, 1], tolerance=-1.0),
        lambda: solve_fabrik(Chain([[0, 0, 1.0]]), [0, 0, 1], cone_angles=-0.1),
        lambda: track(Chain([[0, 0, 1.0]]), [[0, 0, 1]], solver="JACOBIAN"),
        lambda: elbow_positions([0, 0, 0], [0, 0, 1], -1.0, 1.0),
    ],
)
def test_bad_input_raises_a_domain_error_naming_the_problem(make):
    with pytest.raises(KinematicsError) as info:
        make()
    assert isinstance(info.value, ProcAnimError) and str(info.value)


def shoulder_elbow_wrist_chain():
    """Blender-like arm: bones along their own Y, laid up +Z; a ball shoulder, then X hinges."""
    rests = np.tile(quaternions.between([0, 1, 0], [0, 0, 1]), (3, 1))
    axes = np.array([[0, 0, 0], [1.0, 0, 0], [1.0, 0, 0]])
    limits = np.tile([-2.0, 2.0], (3, 3, 1))
    return Chain(np.outer([0.5, 0.42, 0.36], [0, 0, 1]), axes=axes, limits=limits, rest_orientations=rests)


def figure_of_eight(reach, count):
    phase = np.linspace(0, 2 * math.pi, count)
    return np.stack(
        [
            0.35 * reach * np.sin(phase),
            0.4 * reach + 0.15 * reach * np.sin(2 * phase),
            0.5 * reach + 0.2 * reach * np.cos(phase),
        ],
        axis=1,
    )


@pytest.mark.parametrize("solver", ["CCD", "FABRIK"])
def test_hinged_arm_tracks_off_its_rest_plane(solver):
    # FABRIK must twist the ball shoulder to turn the elbow's hinge plane towards the target.
    chain = shoulder_elbow_wrist_chain()
    result = track(chain, figure_of_eight(chain.reach, 90), solver=solver, tolerance=1e-3)
    assert result.worst_error <= 1e-3
    axis = np.array([1.0, 0, 0])
    assert np.allclose(quaternions.rotate(result.rotations[:, 1:], axis), axis, atol=1e-9)


@pytest.mark.parametrize("solver", ["CCD", "FABRIK"])
def test_tracking_in_chunks_equals_one_call(solver):
    chain = six_bone_chain()
    targets = figure_of_eight(chain.reach, 60)
    whole = track(chain, targets, solver=solver)
    first = track(chain, targets[:25], solver=solver)
    rest = track(
        chain,
        targets[25:],
        solver=solver,
        rotations=first.rotations[-1],
        seed=25,
    )
    assert np.allclose(np.concatenate([first.rotations, rest.rotations]), whole.rotations, atol=1e-12)


def test_ccd_aims_a_hinged_arm_five_dof_by_twisting_the_shoulder():
    # Goals that are feasible by construction: the hand of a smooth joint-space motion.
    chain = shoulder_elbow_wrist_chain()
    phase = np.linspace(0.0, 2.0 * math.pi, 60)
    shoulder = quaternions.from_axis_angle(np.stack([np.cos(phase), np.sin(phase), 0.3 + 0 * phase], 1), 0.8)
    elbow = quaternions.from_axis_angle([1.0, 0, 0], 0.6 + 0.4 * np.sin(phase))
    wrist = quaternions.from_axis_angle([1.0, 0, 0], 0.5 - 0.3 * np.cos(2 * phase))
    joints = forward_kinematics(chain, np.stack([shoulder, elbow, wrist], axis=1))
    targets, directions = joints[:, -1], joints[:, -1] - joints[:, -2]
    # Position and aim pull against each other, so CCD creeps: give it a bigger budget.
    result = track(
        chain, targets, solver="CCD", directions=directions, tolerance=1e-3, iterations_per_frame=300
    )
    assert result.worst_error <= 1e-3
    assert result.direction_errors.max() <= 1e-3
    assert np.allclose(quaternions.rotate(result.rotations[:, 1:], [1.0, 0, 0]), [1.0, 0, 0], atol=1e-9)


def test_fabrik_tracks_a_five_dof_ball_arm():
    chain = six_bone_chain()
    targets = figure_of_eight(chain.reach, 60)
    directions = np.tile([0.0, 0.6, 0.8], (60, 1))
    result = track(chain, targets, solver="FABRIK", directions=directions, tolerance=1e-3)
    assert result.worst_error <= 1e-3 and result.direction_errors.max() <= 1e-3
