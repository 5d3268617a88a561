"""Physics invariants of the fly simulation."""

import numpy as np
import pytest

from addon.fly import FlyModel, simulate, simulate_controlled
from addon.fly.errors import FlyError
from addon.fly.model import (
    homogeneous,
    rotation_vectors,
    transform_points,
    wing_rotation,
)
from addon.fly.simulate import loads, wing_geometry
from addon.quaternions import from_matrix as quaternions_from_matrices


def _still(count):
    return lambda inputs: np.zeros((count, 3))


def test_free_fall_without_wing_motion_in_vacuum():
    flight = simulate_controlled(_still(2), 2, duration=0.5, model=FlyModel(air_density=1e-300))
    t = flight.times
    expected = -0.5 * 9.81 * t**2
    # semi-implicit Euler overshoots exact free fall by g dt t / 2
    np.testing.assert_allclose(flight.positions[0, :, 2], expected, atol=9.81 * 0.001 * 0.5 + 1e-12)
    np.testing.assert_array_equal(flight.positions[:, :, :2], 0.0)
    np.testing.assert_allclose(flight.rotations[:, :, 0], 1.0)


def test_air_drag_slows_the_fall_below_free_fall():
    flight = simulate_controlled(_still(1), 1, duration=1.0)
    assert -0.5 * 9.81 < flight.positions[0, -1, 2] < -0.1
    velocity = np.diff(flight.positions[0, :, 2]) / 0.001
    assert abs(velocity[-1] - velocity[-100]) < 0.05 * abs(velocity[-1])  # terminal speed reached


def test_still_symmetric_fly_feels_no_force_in_zero_gravity():
    model = FlyModel(gravity=0.0)
    angles = np.array([[[0.4, -0.3, 0.7]]])
    centres, normals = wing_geometry(model, angles)
    force, torque = loads(
        model, np.zeros((1, 3)), np.eye(3)[None], np.zeros((1, 3)), centres, normals, np.zeros_like(centres)
    )
    np.testing.assert_array_equal(force, 0.0)
    np.testing.assert_array_equal(torque, 0.0)
    flight = simulate_controlled(lambda inputs: np.zeros((1, 3)), 1, duration=0.2, model=model)
    np.testing.assert_array_equal(flight.positions, 0.0)


def test_moving_wings_push_the_body():
    model = FlyModel(gravity=0.0)
    angles = np.array([[[0.0, 0.0, 0.0]]])
    centres, normals = wing_geometry(model, angles)
    down = np.zeros_like(centres)
    down[..., 2] = -1.0  # wings sweep down through the air
    force, _ = loads(model, np.zeros((1, 3)), np.eye(3)[None], np.zeros((1, 3)), centres, normals, down)
    assert force[0, 2] > 0 and force[0, 0] == 0.0


def _flapper(count, period=4):
    state = {"tick": 0}

    def control(inputs):
        state["tick"] += 1
        down = (state["tick"] // (period // 2)) % 2 == 0
        return np.tile([-1.0 if down else 1.0, 0.3, 0.0 if down else 1.0], (count, 1))

    return control


def test_symmetric_flapping_gives_no_lateral_momentum_or_roll_yaw():
    flight = simulate_controlled(_flapper(1), 1, duration=1.0)
    np.testing.assert_array_equal(flight.positions[0, :, 0], 0.0)  # exactly: mirror forces cancel
    # only pitch (about x) may appear: quaternion y and z stay zero
    np.testing.assert_array_equal(flight.rotations[0, :, 2:], 0.0)
    np.testing.assert_array_equal(flight.wing_angles[:, :, 0], flight.wing_angles[:, :, 1])
    assert np.ptp(flight.wing_angles[0, :, 0, 0]) > 1.5  # the wings did beat


def _clamped_mean_force(feather: float) -> np.ndarray:
    """Mean force over one steady wing beat of a fly held still (zero gravity, body fixed)."""
    model = FlyModel(gravity=0.0)
    speed = model.max_speed[0] * 0.001
    stroke = np.arange(model.max_angle[0], -model.max_angle[0], -speed)
    flaps = np.concatenate([stroke, -stroke])
    pitches = np.concatenate([np.zeros_like(stroke), np.full_like(stroke, feather)])
    angles = np.stack([flaps, np.zeros_like(flaps), pitches], axis=1)
    angles = np.concatenate([angles, angles])  # second beat: the first sets up the history
    previous, _ = wing_geometry(model, angles[:1, None])
    forces = []
    for pose in angles:
        centres, normals = wing_geometry(model, pose[None, None])
        force, _ = loads(
            model,
            np.zeros((1, 3)),
            np.eye(3)[None],
            np.zeros((1, 3)),
            centres,
            normals,
            (centres - previous) / 0.001,
        )
        previous = centres
        forces.append(force[0])
    return np.mean(forces[len(flaps) :], axis=0)


def test_pure_drag_needs_stroke_asymmetry_for_lift():
    weight = FlyModel().total_mass * 9.81
    symmetric = _clamped_mean_force(feather=0.0)
    feathered = _clamped_mean_force(feather=1.5)
    assert abs(symmetric[2]) < 1e-3 * weight  # down- and upstroke cancel
    assert feathered[2] > 1.5 * weight  # feathered upstroke: net lift beats weight
    assert symmetric[0] == feathered[0] == 0.0


def test_wing_rotation_respects_angle_and_speed_limits():
    model = FlyModel()
    flight = simulate_controlled(
        lambda x: np.random.default_rng(0).choice([-5.0, 5.0], size=(1, 3)), 1, duration=0.3, model=model
    )
    angles = flight.wing_angles[0, :, 0]
    assert np.all(np.abs(angles) <= np.array(model.max_angle) + 1e-12)
    assert np.all(np.abs(np.diff(angles, axis=0)) <= np.array(model.max_speed) * 0.001 + 1e-12)


def test_homogeneous_transform_is_translation_after_rotation():
    rotation = wing_rotation(np.array([0.3, -0.2, 0.5]))
    matrix = homogeneous(rotation, np.array([1.0, 2.0, 3.0]))
    points = np.array([[0.1, 0.0, 0.0], [0.0, 0.2, 0.3]])
    np.testing.assert_allclose(transform_points(matrix, points), points @ rotation.T + [1.0, 2.0, 3.0])
    np.testing.assert_allclose(rotation @ rotation.T, np.eye(3), atol=1e-12)
    # flap raises the tip of the right wing
    assert (rotation_flap := wing_rotation(np.array([0.5, 0.0, 0.0])))[2, 0] > 0 and rotation_flap[1, 0] == 0


def test_quaternions_and_rotation_vectors_match():
    vector = np.array([0.3, -1.1, 2.0])
    angle = np.linalg.norm(vector)
    axis = vector / angle
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    matrix = np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * k @ k
    np.testing.assert_allclose(rotation_vectors(matrix), vector, atol=1e-12)
    quat = quaternions_from_matrices(matrix[None])[0]
    np.testing.assert_allclose(quat, [np.cos(angle / 2), *(np.sin(angle / 2) * axis)], atol=1e-12)


def test_blow_up_is_caught_per_fly_and_never_nan():
    # an absurdly light fly with huge wings diverges at dt = 1 ms; its neighbour stays sane
    heavy, light = FlyModel(), FlyModel(body_mass=1e-12, wing_mass=1e-13)
    flight_light = simulate_controlled(_flapper(2), 2, duration=0.2, model=light)
    assert flight_light.blown_up.all()
    assert np.all(np.isfinite(flight_light.positions)) and np.all(np.isfinite(flight_light.rotations))
    genomes = np.random.default_rng(0).normal(size=(3, 803))
    flight = simulate(genomes, duration=0.2, model=heavy)
    assert not flight.blown_up.any()


def test_bad_settings_raise():
    with pytest.raises(FlyError, match="multiple"):
        simulate(np.zeros(803), duration=0.1, control_dt=0.0015)
    with pytest.raises(FlyError, match="duration"):
        simulate(np.zeros(803), duration=float("nan"))
    with pytest.raises(FlyError, match="layers"):
        simulate(np.zeros(803), duration=0.1, model=FlyModel(asymmetric=True))
    with pytest.raises(FlyError, match="air_density"):
        FlyModel(air_density=-1.0)


def test_turning_a_flight_about_z_keeps_it_a_rigid_motion():
    from addon.fly.model import rotate_about_z, yaw_quaternion
    from addon.quaternions import multiply as quaternion_products

    centre = np.array([1.0, 2.0, 0.5])
    turned = rotate_about_z(np.array([[1.0, 3.0, 0.7]]), centre, np.pi / 2)
    np.testing.assert_allclose(turned, [[0.0, 2.0, 0.7]], atol=1e-12)
    rotation = quaternion_products(yaw_quaternion(np.pi / 2), np.array([[1.0, 0.0, 0.0, 0.0]]))
    matrix = quaternions_from_matrices(wing_rotation(np.array([0.0, np.pi / 2, 0.0])))
    np.testing.assert_allclose(rotation[0], matrix, atol=1e-12)  # sweep is a turn about z


def _sweeping_mean_force(aero: str) -> np.ndarray:
    """Mean force of a held fly sweeping its wings back and forth, angle of attack flipped each half."""
    model = FlyModel(gravity=0.0, aero=aero)
    stroke = np.arange(model.max_angle[1], -model.max_angle[1], -model.max_speed[1] * 0.001)
    sweeps = np.concatenate([stroke, -stroke])
    pitches = np.concatenate([np.full_like(stroke, -0.6), np.full_like(stroke, 0.6)])
    angles = np.stack([np.zeros_like(sweeps), sweeps, pitches], axis=1)
    angles = np.concatenate([angles, angles])
    previous, _ = wing_geometry(model, angles[:1, None])
    forces = []
    for pose in angles:
        centres, normals = wing_geometry(model, pose[None, None])
        force, _ = loads(
            model,
            np.zeros((1, 3)),
            np.eye(3)[None],
            np.zeros((1, 3)),
            centres,
            normals,
            (centres - previous) / 0.001,
        )
        previous = centres
        forces.append(force[0])
    return np.mean(forces[len(sweeps) :], axis=0)


def test_quasi_steady_lift_carries_a_horizontal_stroke_that_pure_drag_cannot():
    weight = FlyModel().total_mass * 9.81
    assert _sweeping_mean_force("quasi_steady")[2] > 2.0 * weight
    assert abs(_sweeping_mean_force("drag")[2]) < 0.25 * weight


def test_dickinson_coefficients_match_the_published_table():
    from addon.fly.simulate import dickinson_coefficients

    lift, drag = dickinson_coefficients(np.array([0.0, 45.0, 90.0]))
    np.testing.assert_allclose(lift, [0.03, 1.80, 0.10], atol=0.01)
    np.testing.assert_allclose(drag, [0.39, 1.70, 3.46], atol=0.01)
