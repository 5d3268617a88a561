"""COP (eq. 4), support polygon and the contact forces read from MuJoCo."""

import mujoco
import numpy as np
import pytest

from addon.dancer import build_body
from addon.dancer.sim import DancerSim
from addon.dancer.support import (
    center_of_pressure,
    clamp_into_hull,
    convex_hull,
    signed_distance_inside,
)


def test_cop_is_the_force_weighted_mean_of_contact_points():
    points = np.array([[0.0, 0.0, 0.0], [0.2, 0.0, 0.0], [0.2, 0.1, 0.0]])
    forces = np.array([100.0, 300.0, 0.0])
    np.testing.assert_allclose(center_of_pressure(points, forces), [0.15, 0.0, 0.0])
    # A pulling contact carries no weight.
    np.testing.assert_allclose(center_of_pressure(points, [100.0, 300.0, -50.0]), [0.15, 0.0, 0.0])
    with pytest.raises(ValueError, match="no contact force"):
        center_of_pressure(points, [0.0, 0.0, 0.0])


def test_hull_is_counter_clockwise_without_inner_or_collinear_points():
    square = [[0, 0], [1, 0], [1, 1], [0, 1], [0.5, 0.5], [0.5, 0.0], [1, 1]]
    hull = convex_hull(square)
    assert len(hull) == 4
    area = 0.5 * np.sum(hull[:, 0] * np.roll(hull[:, 1], -1) - np.roll(hull[:, 0], -1) * hull[:, 1])
    assert area == pytest.approx(1.0)
    assert signed_distance_inside([0.5, 0.4], hull) == pytest.approx(0.4)
    assert signed_distance_inside([2.0, 0.5], hull) == pytest.approx(-1.0)
    clamped = clamp_into_hull([3.0, 0.5], hull, 0.1)
    assert signed_distance_inside(clamped, hull) == pytest.approx(0.1)
    np.testing.assert_allclose(clamp_into_hull([0.3, 0.6], hull, 0.1), [0.3, 0.6])


def test_simulated_cop_matches_contact_forces_and_weight():
    body = build_body(1.65, 55.0)
    sim = DancerSim(body)
    sim.set_angles({})
    sim.place()
    sim.apply(sim.targets)
    for _ in range(30):
        sim.apply(sim.targets)
    meas = sim.measure()
    d = sim.data
    wrench = np.zeros(6)
    points, forces = [], []
    for i in range(d.ncon):
        mujoco.mj_contactForce(sim.model, d, i, wrench)
        points.append(d.contact[i].pos.copy())
        forces.append(wrench[0])
    expected = center_of_pressure(points, forces)
    np.testing.assert_allclose(meas.cop[:2], expected[:2], atol=1e-12)
    # Standing still, the floor carries the body's weight, under its centre of mass.
    assert meas.total_normal_force == pytest.approx(55.0 * 9.81, rel=0.02)
    assert np.linalg.norm(meas.cop[:2] - meas.com[:2]) < 0.01
    assert meas.in_contact.all()
    assert signed_distance_inside(meas.com, meas.hull) > 0.03
