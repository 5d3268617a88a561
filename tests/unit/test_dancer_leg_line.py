"""The least supporting-leg tilt the dancer's own geometry allows (MuJoCo kinematics, no control).

Issue 18 asks for the supporting leg (hip joint to ankle joint) within 2 degrees of vertical at the
end of every weight shift and relevé. These tests are the proof of how far that is reachable at
1.65 m / 55 kg with a 40 degree turnout: the hip joint is 8.25 cm off the pelvis' midline and the
turned-out foot reaches forward and out from the ankle, so the COM stands over the foot only with
the leg leaning in, unless the trunk, the pelvis or the arms carry mass towards the supporting side.
"""

import itertools

import numpy as np
import pytest

from addon.dancer.leg_line import Lean, LegLine, upright_point
from addon.dancer.steps import arms

PORTS = ("low", "first", "second", "demi", "high")


@pytest.fixture(scope="module")
def line():
    return LegLine()


def _arms(supporting: str, free: str) -> tuple[tuple[str, float], ...]:
    """The supporting (left) arm in one classical position, the free (right) arm in another."""
    left = {k: v for k, v in arms(supporting).items() if ".L_" in k}
    right = {k: v for k, v in arms(free).items() if ".R_" in k}
    return tuple({**left, **right}.items())


def _least(line, stance, trunk_degrees, pelvis_degrees, margin):
    """Least tilt over every pair of classical arm positions (25 pairs)."""
    return min(line.least_tilt(stance, Lean(np.radians(trunk_degrees), np.radians(pelvis_degrees),
                                            _arms(a, b)), margin)
               for a, b in itertools.product(PORTS, PORTS))


def test_the_least_tilt_puts_the_com_exactly_the_margin_inside_and_no_less_tilt_does(line):
    for stance in ("weight_shift", "retire", "releve"):
        tilt = line.least_tilt(stance, margin=0.01)
        hip = line.solution.copy()
        assert line.margin(stance, Lean(), hip) == pytest.approx(0.01, abs=2e-4), stance
        # Any hip position nearer above the ankle leaves the COM less than the margin inside.
        angles = np.linspace(0.0, 2.0 * np.pi, 24, endpoint=False)
        nearer = 0.9 * np.linalg.norm(hip)
        for a in angles:
            assert line.margin(stance, Lean(), nearer * np.array([np.cos(a), np.sin(a)])) < 0.01, stance
        # Upright trunk, the steps' own arms: the figures in issue 18's notes.
        assert tilt == pytest.approx({"weight_shift": 3.8, "retire": 5.5, "releve": 9.3}[stance], abs=0.1)


def test_on_the_toe_no_classical_arms_and_no_acceptable_lean_bring_the_leg_within_two_degrees(line):
    # Even with the COM allowed onto the very edge of the ball's polygon (no margin), a 10 degree
    # side bend of the trunk and a 5 degree hip hike, the least tilt over every pair of classical arm
    # positions is 4.8 degrees (supporting arm in second, free arm en haut): the 2 degree line is out
    # of reach on relevé for this body. Upright, it is 6.9 degrees.
    assert _least(line, "releve", 10.0, 5.0, margin=0.0) > 4.5
    assert _least(line, "releve", 0.0, 0.0, margin=0.0) > 6.5


def test_on_the_toe_at_any_height_of_releve_an_upper_body_within_three_degrees_leaves_the_leg_tilted():
    # Not an artefact of the steps' low relevé (the foot pitched 0.75 rad): on higher demi-pointe the
    # ball is nearer under the ankle, but with the upper body within 3 degrees of vertical (as the
    # paper's sequence keeps it), the COM on the very edge of the ball's polygon and the best of all
    # classical arm positions, the least tilt is 2.6 degrees at 1.35 rad (77 degrees) and more on
    # either side of it (1.2 rad: 3.0; 1.45 rad: 2.7; with the COM 1 cm inside: 3.6 or more).
    for pitch in (1.2, 1.35, 1.45):
        assert _least(LegLine(releve=pitch), "releve", 3.0, 0.0, margin=0.0) > 2.4, pitch


def test_after_the_weight_shift_two_degrees_needs_more_than_a_five_degree_side_bend(line):
    # Both feet down, the COM 1 cm inside the supporting foot, the pelvis level (hiking the free
    # hip lets the free leg reach its spot only with the supporting knee bent 17 degrees): with a
    # side bend of at most 5 degrees the least tilt over all classical arms is 2.2 degrees.
    assert _least(line, "weight_shift", 5.0, 0.0, margin=0.01) > 2.0
    # A bend the eye reads as a lean (8 degrees) with the arms in Vaganova's third reaches it.
    assert line.least_tilt("weight_shift", Lean(np.radians(8.0), 0.0, _arms("second", "high")), 0.01) < 2.0


def test_the_upright_point_is_inside_the_supporting_foot_by_its_margin(line):
    point = upright_point(1.65, 55.0, "female", np.radians(40.0), "first_position")
    ankle, frame = line.spots["L"]
    com = ankle[:2] + frame[:2, :2] @ point
    line.least_tilt("weight_shift", margin=0.02)
    np.testing.assert_allclose(com, line.com("weight_shift", Lean(), line.solution), atol=1e-6)
    assert line.margin("weight_shift", Lean(), line.solution) == pytest.approx(0.02, abs=2e-4)
    # The right foot's point, found on the mirrored stance, is the mirror image in first position.
    right = upright_point(1.65, 55.0, "female", np.radians(40.0), "first_position", "R")
    np.testing.assert_allclose(right, point * np.array([1.0, -1.0]), atol=1e-5)
    # Towards the midline of the stance (over 2 cm in from the ankle) and no further forward than
    # the ankle: near the foot's inner heel edge.
    assert com[1] < ankle[1] - 0.02 and com[0] < ankle[0]
