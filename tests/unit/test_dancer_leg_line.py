"""The least supporting-leg tilt the dancer's own geometry allows (MuJoCo kinematics, no control).

Issue 18 asks for the supporting leg (hip joint to ankle joint) within 2 degrees of vertical at the
end of every weight shift and relevé. These tests are the proof of how far that is reachable at
1.65 m / 55 kg with a 40 degree turnout: the hip joint is 8.25 cm off the pelvis' midline and the
turned-out foot reaches forward and out from the ankle, so the COM stands over the foot only with
the leg leaning in, unless the trunk, the pelvis or the arms carry mass towards the supporting side.
With the leg vertical the hip joint is straight above the ankle, so the pelvis cannot shift over
the foot: only mass above and beside the hip can move. Searched within the classical form (the
trunk bent 5 degrees towards the supporting side and up to 5 forward, the free hip 3 degrees up,
the retire drawn in until its toes are at the supporting knee, every pair of arm positions), the
2 degree leg exists after the weight shift with the COM 1 cm inside the foot (free hip up), and on
the toe only with the COM on the very edge of the ball's polygon on a demi-pointe higher than the
steps' (none on theirs).
"""

import itertools

import numpy as np
import pytest

from addon.dancer.leg_line import PORTS, Form, Lean, LegLine, arm_pair, upright_point
from addon.dancer.steps import RELEVE_ANGLE, classical_retire_pose, retire_pose


@pytest.fixture(scope="module")
def line():
    return LegLine()


def _least(line, stance, trunk_degrees, pelvis_degrees, margin):
    """Least tilt over every pair of classical arm positions (25 pairs)."""
    return min(line.least_tilt(stance, Lean(np.radians(trunk_degrees), np.radians(pelvis_degrees),
                                            arm_pair(a, b)), margin)
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
    assert line.least_tilt("weight_shift", Lean(np.radians(8.0), 0.0, arm_pair("second", "high")), 0.01) < 2.0


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


def test_the_retire_drawn_in_to_the_midline_puts_the_working_toes_at_the_supporting_knee(line):
    roll = line.thigh_roll_at_the_knee()
    # retire_pose holds the knee further out (its toes 17 cm beside the supporting knee); the retire
    # step draws it in to here.
    assert retire_pose({})["thigh.R_x"] < roll < 0.0
    assert classical_retire_pose({})["thigh.R_x"] == pytest.approx(roll, abs=0.005)
    sim, d = line.sim, line.sim.data
    for thigh, across in ((roll, 0.0), (retire_pose({})["thigh.R_x"], -0.17)):
        line.com("retire", Lean(arms=(("thigh.R_x", thigh),)), np.zeros(2))
        toe = d.xpos[sim.body_ids["toe.R"]] - d.xpos[sim.body_ids["shin.L"]]
        assert toe[1] == pytest.approx(across, abs=0.005)
        # Below and just behind the supporting knee, where the toes touch it in retire.
        assert -0.13 < toe[2] < -0.07 and -0.08 < toe[0] < -0.06


def test_bending_hiking_and_drawing_the_retire_in_only_help_on_the_toe(line):
    # Why the form's search takes them at its limits: from the best lean within the form, easing
    # any one of them back tilts the leg more.
    form = Form()
    best, lean = line.least_tilt_in_form("releve", 0.01, form, forward_steps=2)
    drawn = dict(lean.arms)
    undrawn = tuple({**drawn, "thigh.R_x": retire_pose({})["thigh.R_x"]}.items())
    for eased in (Lean(0.0, lean.pelvis, lean.arms), Lean(lean.trunk, 0.0, lean.arms),
                  Lean(lean.trunk, lean.pelvis, undrawn)):
        assert line.least_tilt("releve", eased, 0.01) > best + 0.3


def test_on_the_steps_releve_no_pose_within_the_classical_form_brings_the_leg_within_two_degrees(line):
    # Everything a dancer may do within the form (trunk 5 degrees towards the supporting side and up
    # to 5 forward, the free hip 3 degrees up, the retire drawn in to the knee, every pair of arm
    # positions: the best is the supporting arm in second, the free one en haut): the least tilt is
    # 4.7 degrees with the COM on the very edge of the ball's polygon, 5.8 with it 1 cm inside
    # (upright with the steps' arms and retire: 8.1 and 9.3).
    assert RELEVE_ANGLE == 0.75
    on_the_edge, lean = line.least_tilt_in_form("releve", 0.0)
    assert on_the_edge == pytest.approx(4.7, abs=0.15)
    assert dict(lean.arms)["upper_arm.L_x"] == 1.25 and dict(lean.arms)["upper_arm.R_y"] == -2.55
    assert line.least_tilt_in_form("releve", 0.01)[0] > 5.5


@pytest.mark.parametrize("pitch", [1.1, 1.2, 1.3, 1.4])
def test_on_higher_demi_pointe_two_degrees_needs_the_com_on_the_edge_of_the_ball(pitch):
    # Higher on the ball (up to 80 degrees) the ball comes nearer under the ankle, and within the
    # form the least tilt with the COM on the edge of the ball's polygon falls to 1.3 degrees at
    # 1.2-1.3 rad (1.9 at 1.1); but with the COM 1 cm inside, what a balance needs to hold it,
    # it is 3.1, 2.5, 2.2 and 2.3 degrees at 1.1, 1.2, 1.3 and 1.4 rad: the pose within 2 degrees
    # exists only on the very edge of the support, where nothing balances.
    line = LegLine(releve=pitch)
    assert line.least_tilt_in_form("releve", 0.01, forward_steps=2)[0] > 2.1
    if pitch in (1.2, 1.3):
        assert line.least_tilt_in_form("releve", 0.0, forward_steps=2)[0] < 1.5


def test_after_the_weight_shift_the_form_reaches_two_degrees_only_with_the_free_hip_up(line):
    # Both feet down, the COM 1 cm inside the supporting foot: within the form the least tilt is
    # 1.5 degrees, with the free hip hiked 3 degrees; with the pelvis level, as the closed chain
    # holds it, 2.2 (and 3.1 with the COM the steps' 2 cm inside).
    assert line.least_tilt_in_form("weight_shift", 0.01)[0] < 1.7
    level = Form(hike=0.0)
    assert line.least_tilt_in_form("weight_shift", 0.01, level)[0] > 2.0
    assert line.least_tilt_in_form("weight_shift", 0.02, level)[0] == pytest.approx(3.1, abs=0.1)
