"""The shipped stroke-mode genomes against issue 15's flight criteria, over 30 s, each flown from
its own file with no other argument (control mode, size and aerodynamics come from the file)."""

import numpy as np
import pytest

from addon.fly import load_genome, simulate
from addon.fly.fitness import hover_scores
from addon.fly.recipes import GENOME_DIR

HOVER = GENOME_DIR / "stroke_hover.npz"
STEER = GENOME_DIR / "stroke_steer.npz"
SIX_STARTS = np.array(
    [[0.0, 0.0, 1.0], [0.1, 0.0, 1.0], [0.0, 0.1, 1.0], [-0.1, 0.0, 1.2], [0.05, -0.05, 0.8], [0.2, 0.2, 1.5]]
)
# six targets around the start, none in the fly's vertical (y-z) plane: 3 to 5 cm away
SIX_TARGETS = np.array(
    [
        [0.03, 0.03, 0.02],
        [-0.03, 0.03, -0.02],
        [0.04, -0.02, 0.01],
        [-0.02, -0.04, 0.03],
        [0.03, 0.0, -0.03],
        [-0.04, 0.02, 0.02],
    ]
)


@pytest.fixture(scope="module")
def hover_flight():
    genome = load_genome(HOVER)
    assert (genome.control, genome.size, genome.aero) == ("stroke", "fruit_fly", "quasi_steady")
    return simulate([genome] * 6, duration=30.0, start=SIX_STARTS, record_every=5)


def test_hover_genome_holds_a_steady_attitude(hover_flight):
    scores = hover_scores(hover_flight)
    assert not hover_flight.blown_up.any()
    assert np.all(scores["tilt_spread"] < 0.1)  # std of the tilt after the first second
    assert np.all(scores["tilt_swing"] < 0.3)  # never leaves its mean by more than 0.3 rad


def test_hover_genome_holds_its_place(hover_flight):
    scores = hover_scores(hover_flight)
    assert np.all(scores["drift"] < 0.02)  # mean distance from the start under 2 cm
    assert np.all(scores["altitude"] < 0.05)  # always within 5 cm of the start altitude


def test_steering_genome_reaches_six_targets_in_3d():
    genome = load_genome(STEER)
    assert genome.asymmetric and genome.control == "stroke"
    assert genome.model().time_step == 0.0002  # the fruit fly at its own step, nothing else given
    # one target, six starts: the fly at (target - offset) sees the target at +offset, same heading
    target = np.array([0.0, 0.0, 1.0])
    flight = simulate([genome] * 6, duration=30.0, start=target - SIX_TARGETS, target=target, record_every=5)
    start_distance = np.linalg.norm(SIX_TARGETS, axis=1)
    end_distance = np.linalg.norm(flight.positions[:, -1] - target, axis=1)
    assert not flight.blown_up.any()
    assert np.all(end_distance < 0.1 * start_distance)
