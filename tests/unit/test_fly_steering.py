"""The shipped steering network, built on the hover genome (addon/fly/steering.py): mirror symmetry
of the construction and the sign of its bank and heading units, checked in flight."""

import numpy as np
import pytest

from addon.fly import load_genome, simulate
from addon.fly.recipes import GENOME_DIR
from addon.fly.steering import MIRROR_ODD_INPUTS


@pytest.fixture(scope="module")
def genome():
    return load_genome(GENOME_DIR / "stroke_steer.npz")


def mirrored(inputs):
    """Inputs (n, 22) of the fly's mirror image: x-odd body inputs negated, wings swapped."""
    image = inputs.copy()
    image[:, list(MIRROR_ODD_INPUTS)] *= -1.0
    image[:, 12:17], image[:, 17:22] = inputs[:, 17:22], inputs[:, 12:17]
    return image


def test_the_steering_network_is_mirror_symmetric(genome):
    network = genome.network()
    inputs = np.random.default_rng(3).uniform(-0.5, 0.5, (40, 22))
    outputs = network.activate(inputs.T).T
    image = network.activate(mirrored(inputs).T).T
    # the mirror image's right wing does what this fly's left wing does, and the other way round
    np.testing.assert_allclose(image[:, :5], outputs[:, 5:], atol=1e-12)
    np.testing.assert_allclose(image[:, 5:], outputs[:, :5], atol=1e-12)
    symmetric = inputs.copy()
    symmetric[:, list(MIRROR_ODD_INPUTS)] = 0.0
    symmetric[:, 17:22] = symmetric[:, 12:17]
    both = network.activate(symmetric.T).T
    np.testing.assert_array_equal(both[:, :5], both[:, 5:])  # no sideways state: both wings alike


def test_the_fly_banks_toward_a_sideways_target_and_keeps_its_heading(genome):
    # targets 2 cm to the right and to the left of the start, same height and distance ahead
    targets = np.array([[0.02, 0.0, 0.0], [-0.02, 0.0, 0.0]])
    target = np.array([0.0, 0.0, 1.0])
    flight = simulate(
        [genome] * 2,
        0.6,
        start=target - targets,
        target=target,
        record_every=25,
    )
    assert not flight.blown_up.any()
    moved = flight.positions[:, -1, 0] - flight.positions[:, 0, 0]
    assert moved[0] > 0.005 and moved[1] < -0.005  # more than a quarter of the way in 0.6 s
    # Mirror images, to the rounding 0.6 s of integration gathers (a relative 1.06e-6 seen on a CI run).
    np.testing.assert_allclose(moved[0], -moved[1], rtol=1e-5)
    quat = flight.rotations[:, -1]
    heading = 2.0 * np.arctan2(np.abs(quat[:, 3]), quat[:, 0])  # turn about z, small tilts
    assert np.all(heading < 0.1)
