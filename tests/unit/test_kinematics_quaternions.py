"""Quaternion helpers: edge cases, and the scalar inner-loop twins agree with the vectorised ones."""

import math

import numpy as np
import pytest

from addon import quaternions as qt
from addon.quaternions import scalar as sq

RNG = np.random.default_rng(7)


def random_unit_quaternions(count):
    return qt.normalize(RNG.normal(size=(count, 4)))


def test_between_turns_u_onto_v_for_random_parallel_and_opposite_vectors():
    u = RNG.normal(size=(200, 3))
    v = RNG.normal(size=(200, 3))
    cases = [(u, v), (u, 3.0 * u), (u, -2.0 * u), (np.array([[0, 0, 1.0]]), np.array([[0, 0, -1.0]]))]
    for a, b in cases:
        q = qt.between(a, b)
        assert np.allclose(np.linalg.norm(q, axis=-1), 1.0)
        turned = qt.rotate(q, a / np.linalg.norm(a, axis=-1, keepdims=True))
        assert np.allclose(turned, b / np.linalg.norm(b, axis=-1, keepdims=True), atol=1e-9)


def test_between_opposite_turns_half_a_revolution_about_a_perpendicular_axis():
    for u in ([1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0], [1.0, 2.0, -3.0]):
        q = qt.between(u, -np.asarray(u))
        axis, angle = qt.to_axis_angle(q)
        assert angle == pytest.approx(math.pi)
        assert abs(np.dot(axis, u)) < 1e-12
        scalar = sq.qbetween(tuple(u), tuple(-np.asarray(u)))
        assert np.allclose(sq.qrot(scalar, tuple(u)), -np.asarray(u), atol=1e-12)


def test_between_zero_vector_is_identity_not_nan():
    assert np.allclose(qt.between([0, 0, 0], [1, 0, 0]), [1, 0, 0, 0])
    assert sq.qbetween((0.0, 0.0, 0.0), (1.0, 0.0, 0.0)) == sq.IDENTITY


def test_axis_angle_round_trip_and_composition():
    axes = RNG.normal(size=(100, 3))
    angles = RNG.uniform(0.0, math.pi, size=100)
    q = qt.from_axis_angle(axes, angles)
    axis, angle = qt.to_axis_angle(q)
    assert np.allclose(angle, angles)
    assert np.allclose(axis, axes / np.linalg.norm(axes, axis=1, keepdims=True))
    # Two quarter turns about Z make a half turn: x -> -x.
    quarter = qt.from_axis_angle([0, 0, 1], math.pi / 2)
    assert np.allclose(qt.rotate(qt.multiply(quarter, quarter), [1, 0, 0]), [-1, 0, 0])
    # a * b applies b first.
    about_x = qt.from_axis_angle([1, 0, 0], math.pi / 2)
    assert np.allclose(qt.rotate(qt.multiply(quarter, about_x), [0, 1, 0]), qt.rotate(quarter, [0, 0, 1]))
    assert np.allclose(qt.from_axis_angle([0, 0, 0], 1.0), [1, 0, 0, 0])


def test_euler_round_trip_matches_matrix_order_and_survives_gimbal_lock():
    euler = RNG.uniform(-math.pi, math.pi, size=(300, 3))
    euler[:, 1] = RNG.uniform(-math.pi / 2, math.pi / 2, size=300)
    euler[:5, 1] = math.pi / 2  # gimbal lock
    euler[5:10, 1] = -math.pi / 2
    q = qt.from_euler_xyz(euler)
    rx = qt.from_axis_angle([1, 0, 0], euler[:, 0])
    ry = qt.from_axis_angle([0, 1, 0], euler[:, 1])
    rz = qt.from_axis_angle([0, 0, 1], euler[:, 2])
    assert np.allclose(np.abs(np.sum(q * qt.multiply(rz, qt.multiply(ry, rx)), axis=1)), 1.0)
    first, second = qt.to_euler_xyz_pair(q)
    for e in (first, second):
        assert np.allclose(np.abs(np.sum(qt.from_euler_xyz(e) * q, axis=1)), 1.0, atol=1e-9)


def test_clamp_euler_respects_limits_and_keeps_rotations_already_inside():
    limits = np.array([[-0.3, 0.8], [-1.0, 0.2], [0.0, 1.5]])
    q = random_unit_quaternions(500)
    clamped = qt.clamp_euler(q, limits)
    assert np.all(qt.within_limits(clamped, limits))
    inside = qt.within_limits(q, limits)
    assert np.allclose(clamped[inside], qt.normalize(q[inside]))
    for row, expected in zip(q[:100], clamped[:100], strict=True):
        scalar = sq.clamp_euler(tuple(row), tuple(map(tuple, limits)))
        assert abs(np.dot(scalar, expected)) == pytest.approx(1.0, abs=1e-9)


def test_twist_keeps_only_the_rotation_about_the_axis():
    q = random_unit_quaternions(200)
    axis = np.array([0.6, 0.0, 0.8])
    t = qt.twist(q, axis)
    assert np.allclose(qt.rotate(t, axis), axis, atol=1e-12)
    # The swing left over moves the axis exactly as q does.
    swing = qt.multiply(q, qt.conjugate(t))
    assert np.allclose(qt.rotate(swing, axis), qt.rotate(q, axis))
    half_turn_swing = qt.from_axis_angle([0, 1, 0], math.pi)
    assert np.allclose(qt.twist(half_turn_swing, [1.0, 0, 0]), [1, 0, 0, 0])


def test_scalar_twins_agree_with_vectorised_helpers():
    a, b = random_unit_quaternions(50), random_unit_quaternions(50)
    v, w = RNG.normal(size=(50, 3)), RNG.normal(size=(50, 3))
    axis = np.array([0.0, 0.0, 1.0])
    for i in range(50):
        ta, tb, tv, tw = tuple(a[i]), tuple(b[i]), tuple(v[i]), tuple(w[i])
        assert np.allclose(sq.qmul(ta, tb), qt.multiply(a[i], b[i]))
        assert np.allclose(sq.qrot(ta, tv), qt.rotate(a[i], v[i]))
        assert np.allclose(sq.qbetween(tv, tw), qt.between(v[i], w[i]))
        assert np.allclose(sq.twist(ta, tuple(axis)), qt.twist(a[i], axis))
        first, second = sq.euler_xyz_pair(ta)
        vfirst, vsecond = qt.to_euler_xyz_pair(a[i])
        assert np.allclose(first, vfirst) and np.allclose(second, vsecond)
        assert np.allclose(sq.from_euler_xyz(first), qt.from_euler_xyz(vfirst))


def test_align_hemisphere_picks_the_sign_nearest_the_reference():
    q = np.array([[-0.9, 0.1, 0.3, 0.3]])
    assert np.allclose(qt.align_hemisphere(q, [1, 0, 0, 0]), -q)
    assert qt.angle_between(q, -q)[0] == pytest.approx(0.0, abs=1e-7)


def test_matrix_round_trip_is_exact_near_half_turns_and_to_matrix_normalises():
    rng = np.random.default_rng(11)
    q = qt.normalize(rng.normal(size=(500, 4)))
    # near half turns (w ~ 0) are where the trace formula loses digits
    q[:100, 0] = rng.normal(scale=1e-9, size=100)
    q = qt.normalize(q)
    back = qt.from_matrix(qt.to_matrix(q))
    np.testing.assert_allclose(qt.align_hemisphere(back, q), q, atol=1e-12)
    assert np.all(back[..., 0] >= 0.0)
    np.testing.assert_allclose(qt.to_matrix(3.0 * q), qt.to_matrix(q), atol=1e-14)
    np.testing.assert_array_equal(qt.to_matrix(np.zeros(4)), np.eye(3))


def test_continuous_flips_signs_only():
    rng = np.random.default_rng(2)
    q = qt.normalize(rng.normal(size=(50, 3, 4))) * rng.choice([-1.0, 1.0], size=(50, 3, 1))
    fixed = qt.continuous(q, axis=0)
    assert np.all(np.sum(fixed[1:] * fixed[:-1], axis=-1) >= 0.0)
    np.testing.assert_allclose(np.abs(fixed), np.abs(q))
