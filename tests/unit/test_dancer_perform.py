"""The Fig. 2 sequence: first position, weight shift, retire, releve, quiet on one toe."""

import numpy as np
import pytest

from addon.dancer import DEFAULT_SEQUENCE, POSITIONS, DancerError, perform
from addon.dancer.support import signed_distance_inside


@pytest.fixture(scope="module")
def show():
    return perform(DEFAULT_SEQUENCE)


def test_sequence_completes_without_falling(show):
    assert not show.fell
    names = [name for name, _, _ in show.phase_times]
    assert names == list(DEFAULT_SEQUENCE)
    assert show.times[-1] == pytest.approx(show.phase_times[-1][2])
    assert np.all(np.isfinite(show.com)) and np.all(np.isfinite(show.cop))


def test_ends_in_quiet_standing_on_the_left_toe(show):
    final = show.times >= show.times[-1] - 2.0
    toe_only = np.array([name == "toe.L" for name in show.contact_bodies])
    assert np.all(show.in_contact[final] == toe_only)
    for i in np.nonzero(final)[0]:
        assert signed_distance_inside(show.com[i], show.support_polygons[i]) > 0.0
    # Quiet: the COM hardly moves over those two seconds, and it is up on the toe.
    assert np.ptp(show.com[final, :2], axis=0).max() < 0.01
    assert show.com[-1, 2] > show.com[0, 2] + 0.04


def _left_foot_polygon(show):
    """The left foot's own contact polygon: the support polygon at the end of the retire, when the
    left foot alone is on the floor (the closed-chain weight shift keeps it where it stood)."""
    right_foot = [show.contact_bodies.index(n) for n in ("foot.R", "toe.R")]
    retire_end = next(e for name, s, e in show.phase_times if name == "retire")
    at = np.searchsorted(show.times, retire_end) - 1
    assert not show.in_contact[at, right_foot].any()
    assert show.in_contact[at, [show.contact_bodies.index(n) for n in ("foot.L", "toe.L")]].all()
    return show.support_polygons[at]


def test_weight_shift_moves_cop_onto_the_supporting_left_foot(show):
    start, end = next((s, e) for name, s, e in show.phase_times if name == "weight_shift")
    before = show.cop[np.searchsorted(show.times, start)]
    after = show.cop[np.searchsorted(show.times, end) - 1]
    # Onto the left foot, well inside its sole, though near its inner heel edge, where the
    # supporting leg stands straightest (the COM target is 2 cm inside that foot).
    assert after[1] > before[1] + 0.015
    assert signed_distance_inside(after, _left_foot_polygon(show)) > 0.01


def test_rotations_are_unit_quaternions_for_every_bone(show):
    assert set(show.rotations) >= {"hips", "spine", "chest", "thigh.L", "foot.L", "toe.L"}
    for q in show.rotations.values():
        assert q.shape == (len(show.times), 4)
        np.testing.assert_allclose(np.linalg.norm(q, axis=1), 1.0, atol=1e-9)
    # The working knee bends for the retire; the supporting knee stays straight.
    angle = 2 * np.arccos(np.clip(np.abs(show.rotations["shin.R"][:, 0]), 0, 1))
    straight = 2 * np.arccos(np.clip(np.abs(show.rotations["shin.L"][:, 0]), 0, 1))
    assert angle.max() > 1.5 and straight.max() < 0.2


def test_a_pose_that_cannot_balance_falls_without_raising():
    show = perform(("first_position", "weight_shift"), pose_overrides={"spine_y": 1.3})
    assert show.fell
    assert 0.0 <= show.fall_time < 4.5
    assert len(show.times) == len(show.com) == len(show.support_polygons)


@pytest.mark.parametrize(
    ("sequence", "word"),
    [
        ((), "empty"),
        (("weight_shift",), "position"),
        (("first_position", "retire"), "weight_shift"),
        (("first_position", "pirouette"), "pirouette"),
    ],
)
def test_bad_sequences_are_named(sequence, word):
    with pytest.raises(DancerError, match=word):
        perform(sequence)


def test_bad_durations_and_joints_are_named():
    with pytest.raises(DancerError, match="releve"):
        perform(durations={"releve": 0.1})
    with pytest.raises(DancerError, match="elbow"):
        perform(pose_overrides={"elbow": 0.3})


@pytest.mark.parametrize("position", ["second_position", "fifth_position"])
def test_other_positions_stand_quietly(position):
    show = perform((position,), durations={"position": 3.0})
    assert not show.fell
    assert show.in_contact[-1].all()
    assert np.ptp(show.com[-100:, :2], axis=0).max() < 0.005


def test_steps_from_other_positions_are_refused_with_a_reason():
    with pytest.raises(DancerError, match="after a plie in fourth_position is not balanced yet"):
        perform(("fourth_position", "demi_plie", "weight_shift:right"))


def test_hip_com_control_acts_only_once_the_polygon_is_small(show):
    from addon.dancer import Gains

    without = perform(DEFAULT_SEQUENCE, gains=Gains(hip_com=0.0))
    shift_end = next(e for name, s, e in show.phase_times if name == "weight_shift")
    before = show.times < shift_end
    np.testing.assert_array_equal(show.com[before], without.com[before])
    assert not np.array_equal(show.com[-200:], without.com[-200:])


def test_upper_body_stays_vertical_throughout(show):
    from addon.quaternions import multiply as _quat_mul

    chest = _quat_mul(_quat_mul(show.rotations["hips"], show.rotations["spine"]), show.rotations["chest"])
    up_z = 1.0 - 2.0 * (chest[:, 1] ** 2 + chest[:, 2] ** 2)
    assert np.degrees(np.arccos(np.clip(up_z, -1.0, 1.0))).max() < 3.0


def test_cop_first_moves_towards_the_working_leg_then_onto_the_supporting_one(show):
    # The paper's Fig. 5c (after Mouchnino et al.): only explainable by the COP strategy.
    start, end = next((s, e) for name, s, e in show.phase_times if name == "weight_shift")
    during = (show.times >= start) & (show.times < end)
    cop_y = show.cop[during, 1]
    assert cop_y.min() < cop_y[0] - 0.002
    assert np.argmin(cop_y) < np.argmax(cop_y)
    assert cop_y.max() > show.com[during, 1][0] + 0.05
    # It ends on the supporting foot, where the leg stands upright (not as far out as at its peak).
    assert signed_distance_inside(show.cop[during][-1], _left_foot_polygon(show)) > 0.01


def test_a_heavy_tall_dancer_performs_too():
    # Joint damping and armature scale with the body; with fixed values heavy dancers fell.
    show = perform(DEFAULT_SEQUENCE, height=1.9, mass=100.0, sex="male")
    assert not show.fell
    assert show.in_contact[-1].tolist() == [False, True, False, False]


def test_the_right_leg_sequence_is_the_mirror_image_of_the_left(show):
    right = perform(("first_position", "weight_shift:right", "retire:left", "releve:left"))
    assert not right.fell
    assert [name for name, _, _ in right.phase_times] == list(right.sequence)
    assert right.in_contact[-1].tolist() == [False, False, False, True]
    # Same body, mirrored targets: the COM path is the left one reflected in the sagittal plane.
    np.testing.assert_allclose(right.com[:, 0], show.com[:, 0], atol=2e-3)
    np.testing.assert_allclose(right.com[:, 1], -show.com[:, 1], atol=2e-3)


def test_no_suffix_keeps_the_papers_left_support():
    from addon.dancer import plan

    labels, phases, state = plan(("first_position", "weight_shift", "retire"))
    assert labels == ["first_position", "weight_shift", "retire"]
    assert state.support == "L" and state.raised
    assert phases[-1].stance == "L"
    _, _, right = plan(("first_position", "weight_shift:right", "retire:left"))
    assert right.support == "R"


@pytest.mark.parametrize(
    ("sequence", "words"),
    [
        (("first_position", "arabesque_45"), ("arabesque", "weight on one foot", "weight_shift")),
        (
            ("first_position", "weight_shift", "retire:left"),
            ("weight is on the left foot", "weight_shift:right"),
        ),
        (("first_position", "weight_shift", "weight_shift:left"), ("already on the left",)),
        (("first_position", "releve:right"), ("weight on one foot", "weight_shift:left")),
        (("first_position", "weight_shift", "releve"), ("retire",)),
        (("first_position", "weight_shift", "retire", "releve", "demi_plie"), ("both feet flat",)),
        (("first_position", "pivot_quarter"), ("demi-pointe", "releve")),
        (("first_position", "tendu_front:sideways"), (":left", ":right")),
        (("first_position:left",), ("position takes no side",)),
    ],
)
def test_illegal_steps_are_refused_before_simulating_with_the_reason(sequence, words):
    from addon.dancer import plan

    with pytest.raises(DancerError) as caught:
        plan(sequence, allow_unbalanced=True)
    for word in words:
        assert word in str(caught.value)


def test_steps_the_controller_cannot_hold_yet_are_refused_unless_asked_for():
    from addon.dancer import STEPS, plan

    with pytest.raises(DancerError, match="after a releve on both feet in fourth_position is not balanced"):
        perform(("fourth_position", "releve", "weight_shift:right"))
    labels = plan(("fourth_position", "releve", "weight_shift:right"), allow_unbalanced=True)[0]
    assert labels == ["fourth_position", "releve", "weight_shift:right"]
    labels, phases, _ = plan(("first_position", "demi_plie", "tendu_side:right"), allow_unbalanced=True)
    assert labels == ["first_position", "demi_plie", "tendu_side:right"]
    assert sum(p.starts_step for p in phases) == 3
    assert len(STEPS) == 14 and "pivot_quarter" in STEPS


def test_per_step_durations_from_pairs_and_text():
    from addon.dancer import parse_sequence_text, plan

    items = parse_sequence_text("first_position@1, weight_shift:left@2.5 ,retire")
    assert items == [("first_position", 1.0), ("weight_shift:left", 2.5), ("retire", None)]
    _, phases, _ = plan(items)
    # Per step (from first position the weight shift's seconds include bringing the leg upright).
    steps = []
    for phase in phases:
        if phase.starts_step:
            steps.append(0.0)
        steps[-1] += phase.duration
    assert steps == pytest.approx([1.0, 2.5, 3.5])
    with pytest.raises(DancerError, match="seconds"):
        parse_sequence_text("first_position@soon")
    with pytest.raises(DancerError, match="between"):
        plan([("first_position", None), ("weight_shift", 0.2)])


def _com_inside_for_the_last_second_of_every_step(show):
    for index, (name, _, _) in enumerate(show.phase_times):
        ticks = np.nonzero(show.step_window(index, 1.0))[0]
        assert len(ticks) > 50, name
        depth = [signed_distance_inside(show.com[t], show.support_polygons[t]) for t in ticks]
        assert min(depth) > 0.0, f"{name}: COM {-min(depth):.3f} m outside the support polygon"


BOTH_FEET = ("demi_plie", "grand_plie")


def _feet_apart(show, tick):
    """Where the right ankle is relative to the left one at ``tick`` (world frame)."""
    return show.joint_positions["foot.R"][tick] - show.joint_positions["foot.L"][tick]


@pytest.mark.parametrize("position", ["first_position", "second_position", "third_position",
                                      "fourth_position", "fifth_position"])
def test_plies_go_down_and_come_back_up_in_every_position_they_are_balanced_in(position):
    show = perform((position, "demi_plie", "grand_plie"))
    assert not show.fell, f"fell at {show.fall_time:.2f} s in {show.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(show)
    standing = show.com[0, 2]
    for index, drop in ((1, 0.03), (2, 0.15)):
        during = show.step_window(index, 1e9)
        # Down by the knee bend (demi: 43 degrees, grand: 89 degrees) and back up to standing.
        assert show.com[during, 2].min() < standing - drop
        assert show.com[during, 2][-1] == pytest.approx(standing, abs=0.005)
    # Back on both feet (after the grand plie in fifth the front heel stays a millimetre up).
    assert show.in_contact[-1, :2].any() and show.in_contact[-1, 2:].any()


def test_the_weight_goes_from_foot_to_foot_through_the_middle():
    # Straight across after a grand plie, the foot that had been unloaded took the weight with its
    # heel light, and the developpe after it fell (seeded random sequences 0 and 7).
    show = perform(("first_position", "grand_plie", "weight_shift:right", "weight_shift:left",
                    "developpe_side_90:right"))
    assert not show.fell, f"fell at {show.fall_time:.2f} s in {show.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(show)
    _, start, stop = show.phase_times[3]
    across = (show.times >= start) & (show.times < stop)
    middle = np.argmin(np.abs(show.com[across, 1]))
    assert abs(show.com[across, 1][middle]) < 0.01  # it passes the middle ...
    # ... onto the left foot: over the foot at the peak (past its ankle, 4.4 cm from the midline)
    # and at the end well inside it, where the supporting leg stands upright (the developpe after
    # it stands on the left foot alone: its polygon is that foot's).
    assert show.cop[across, 1].max() > 0.05
    alone = np.searchsorted(show.times, show.key_times[-1][1]) - 1
    assert signed_distance_inside(show.cop[np.searchsorted(show.times, stop) - 1],
                                  show.support_polygons[alone]) > 0.01


def test_the_weight_comes_back_to_both_feet_in_the_position():
    show = perform(("first_position", "weight_shift", "first_position", "weight_shift:right",
                    "first_position", "demi_plie"))
    assert not show.fell, f"fell at {show.fall_time:.2f} s in {show.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(show)
    for index in (2, 4):
        back = np.searchsorted(show.times, show.phase_times[index][2]) - 1
        # Where the dancer stood before the weight shift, both feet on the floor.
        np.testing.assert_allclose(show.com[back, :2], show.com[0, :2], atol=0.005)
        assert show.in_contact[back].all()


@pytest.mark.parametrize(
    ("sequence", "words"),
    [
        (("fifth_position", "weight_shift:right", "first_position"),
         ("from fifth_position to first_position", "not balanced yet")),
        (("first_position", "weight_shift", "tendu_side", "first_position"),
         ("working foot is off the floor",)),
        (("first_position", "weight_shift", "retire", "first_position"), ("working foot is off the floor",)),
    ],
)
def test_positions_within_a_sequence_are_refused_unless_the_weight_just_comes_back(sequence, words):
    with pytest.raises(DancerError) as caught:
        perform(sequence)
    for word in words:
        assert word in str(caught.value)


def test_the_releve_on_both_feet_rises_holds_and_comes_down_balanced():
    # Then the paper's releve on one foot: the legs are back in the position's pose after it.
    show = perform(("first_position", "releve@9", "weight_shift", "retire", "releve"))
    assert not show.fell, f"fell at {show.fall_time:.2f} s in {show.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(show)
    during = show.step_window(1, 1e9)
    toes_only = np.array([name.startswith("toe") for name in show.contact_bodies])
    on_the_balls = np.all(show.in_contact[during] == toes_only, axis=1)
    # Up on the balls of both feet for seconds (the heels off the floor), the COM 7 cm higher ...
    assert on_the_balls.sum() * (show.times[1] - show.times[0]) > 3.0
    standing = show.com[0, 2]
    assert show.com[during, 2].max() > standing + 0.06
    # ... and down again: both whole feet on the floor, the COM back at standing height, the balls
    # of the feet within 1 cm of where they started (0.5 cm; 2.0 cm while the feet hopped, below).
    end = np.nonzero(during)[0][-1]
    assert show.in_contact[end].all()
    assert show.com[end, 2] == pytest.approx(standing, abs=0.005)
    for side in ("L", "R"):
        ball = show.joint_positions[f"toe.{side}"][:, :2]
        assert np.linalg.norm(ball[end] - ball[0]) < 0.01
    # The feet never leave the floor (integrated at the model's step they hopped off it for 8 ticks as
    # the heels rose).
    assert show.in_contact[during].any(axis=1).all()


@pytest.mark.parametrize(
    ("sequence", "height", "words"),
    [
        (("fourth_position", "releve", "weight_shift:right"), 1.65,
         ("weight_shift:right onto the front foot after a releve on both feet in fourth_position", "slid",
          "weight_shift:left onto the back foot is")),
        (("fourth_position", "releve", "fifth_position"), 1.65,
         ("changing to fifth_position after a releve on both feet in fourth_position", "fell 3.9 s in")),
        (("fourth_position", "releve", "tendu_side:right"), 1.65,
         ("tendu_side straight from both feet after a releve on both feet", "weight_shift:left first")),
        (("fourth_position", "releve", "grand_plie", "releve"), 1.65,
         ("releve after a releve on both feet in fourth_position", "grand plie")),
        (("first_position", "weight_shift:right", "third_position", "releve"), 1.65,
         ("in third_position after the left foot's change",)),
        (("third_position", "releve@8"), 1.65, ("from third_position takes at least 8.5 s",)),
        (("first_position", "second_position", "demi_plie", "releve"), 1.65,
         ("after a change into second_position and a plie", "before the plie")),
        (("first_position", "weight_shift:right", "third_position", "first_position", "releve"), 1.65,
         ("after the left foot's change",)),
        (("first_position", "releve@5"), 1.65, ("at least 7 s",)),
        (("first_position", "fifth_position", "third_position", "demi_plie", "releve"), 1.8,
         ("after changes from first_position into fifth", "with steps in third between",
          "straight after the change")),
        (("first_position", "fifth_position", "third_position", "tendu_side:left", "releve"), 1.65,
         ("after changes from first_position", "weight_shift and retire")),
    ],
)
def test_a_releve_on_both_feet_that_would_fall_is_refused_with_the_reason(sequence, height, words):
    with pytest.raises(DancerError) as caught:
        perform(sequence, height=height)
    for word in words:
        assert word in str(caught.value)


@pytest.mark.parametrize(("sequence", "height"), [
    # In second: straight, after a plie, after a weight shift and back, and after changes into it with
    # either foot (the left one moving is refused before a releve in first, not here), 1.1 to 2.0 m.
    # Leaning both legs alike onto the balls and with the feet posed where they stand, each ball slid
    # 1.5-2.1 cm away from the other; posed 6 mm in (perform.BALLS_AIM_IN), 0.5-1.3 cm.
    (("second_position", "releve"), 1.1),
    (("second_position", "releve"), 2.0),
    (("second_position", "grand_plie", "releve"), 1.65),
    (("second_position", "weight_shift:right", "second_position", "releve"), 1.65),
    (("first_position", "second_position", "releve"), 2.0),
    (("fifth_position", "weight_shift:right", "second_position", "releve"), 1.65),
    # In third the weight goes back from the balls in 3 s (in 1.5 the back heel came up and the COM ended
    # 1.8 cm off the feet): straight, after a plie, the front foot's tendus and the back foot's, a weight
    # shift and back and a change into third, the balls within 0.2-1.2 cm of their places.
    (("third_position", "releve"), 1.1),
    (("third_position", "releve"), 2.0),
    (("third_position", "grand_plie", "releve"), 1.65),
    (("third_position", "tendu_front:right", "tendu_side:right", "releve"), 2.0),
    (("third_position", "tendu_side:left", "releve"), 1.65),
    (("third_position", "weight_shift", "third_position", "releve"), 1.65),
    (("fifth_position", "third_position", "releve"), 1.65),
    # ... and after changes into fifth from third and back; from first into fifth and on into third the
    # back heel stayed up as the weight went back and the COM drifted 4.8 cm sideways (fell at 1.5 m):
    # with the heel on that side pressed down (perform.HEEL_PRESS) the balls stay within 1.3 cm, also
    # after plies before the changes (at 1.1 m the change into fifth falls before the releve).
    (("third_position", "fifth_position", "third_position", "releve"), 1.1),
    (("first_position", "third_position", "fifth_position", "third_position", "releve"), 1.5),
    (("first_position", "fifth_position", "third_position", "releve"), 1.3),
    (("first_position", "fifth_position", "third_position", "releve"), 1.5),
    (("first_position", "fifth_position", "third_position", "releve"), 2.0),
    (("first_position", "demi_plie:right", "fifth_position", "grand_plie:left", "weight_shift:left",
      "fifth_position", "third_position", "releve"), 1.65),
    # In fifth, on poses that roll the pelvis so both crossed legs stand straight, the COM steered across
    # the feet too (perform.BALLS_ACROSS; upright, the back foot came off the floor as the weight went
    # back and slid 2.2-3.2 cm): straight, after plies, the tendus, a weight shift and back and changes
    # into fifth, the balls within 0.5-1.1 cm of their places, 1.1 to 2.0 m.
    (("fifth_position", "releve"), 1.1),
    (("fifth_position", "releve"), 1.3),
    (("fifth_position", "releve"), 2.0),
    (("fifth_position", "grand_plie", "releve"), 1.1),
    (("fifth_position", "demi_plie", "releve"), 1.65),
    (("fifth_position", "tendu_front:right", "releve"), 1.65),
    (("fifth_position", "tendu_back:left", "releve"), 1.65),
    (("fifth_position", "weight_shift:right", "fifth_position", "releve"), 1.65),
    (("first_position", "fifth_position", "releve"), 2.0),
    (("third_position", "fifth_position", "releve"), 1.65),
    # In fourth the legs also end the releve on those poses (steps.REST_ON_THE_FEET), each foot aimed past
    # where it stands by the legs' push on the feet (perform.SQUEEZE_AT): the balls within 0.4-1.1 cm, the
    # COM 1.9-7.2 cm inside the feet, every 5 cm from 1.1 to 2.0 m, straight, after plies and after a weight
    # shift and back. Unaimed, the legs pushed the feet apart and the balls crept 0.9-1.3 cm straight from
    # the position, and 1.5-2.1 cm after a grand plie at 1.75 m and taller (the back foot nearly unloaded as
    # the weight went forward, still pushed, slid forward), after a demi plie at 1.75 m and taller and after
    # a weight shift and back at 1.55 m and taller.
    (("fourth_position", "releve"), 1.1),
    (("fourth_position", "releve"), 1.3),
    (("fourth_position", "releve"), 2.0),
    (("fourth_position", "demi_plie", "releve"), 1.65),
    (("fourth_position", "grand_plie", "releve"), 1.3),
    (("fourth_position", "grand_plie", "releve"), 2.0),
    (("fourth_position", "demi_plie", "releve"), 2.0),
    (("fourth_position", "weight_shift", "fourth_position", "releve"), 1.65),
    (("fourth_position", "weight_shift", "fourth_position", "releve"), 2.0),
])
def test_a_releve_on_both_feet_holds_with_the_balls_in_place(sequence, height):
    show = perform(sequence, height=height)
    assert not show.fell, f"fell at {show.fall_time:.2f} s in {show.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(show)
    during = show.step_window(len(sequence) - 1, 1e9)
    ticks = np.nonzero(during)[0]
    toes_only = np.array([name.startswith("toe") for name in show.contact_bodies])
    on_the_balls = np.all(show.in_contact[during] == toes_only, axis=1)
    assert on_the_balls.sum() * (show.times[1] - show.times[0]) > 2.0
    assert show.com[during, 2].max() > show.com[ticks[0], 2] + 0.04
    # Never off the floor, back down on both heels (after a change the toes of the foot that moved may
    # stand a millimetre light), the balls within 1.5 cm of where the step found them.
    assert show.in_contact[during].any(axis=1).all()
    heels = np.array([name.startswith("foot") for name in show.contact_bodies])
    assert show.in_contact[ticks[-1]][heels].all()
    for side in ("L", "R"):
        ball = show.joint_positions[f"toe.{side}"][ticks, :2]
        assert np.linalg.norm(ball - ball[0], axis=1).max() < 0.015, side


def _yaw(quaternions):
    w, x, y, z = quaternions.T
    return np.degrees(np.arctan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z)))


@pytest.mark.parametrize("working", ["right", "left"])
def test_a_quarter_pivot_turns_the_dancer_ninety_degrees_on_the_toe_balanced(working):
    support = "left" if working == "right" else "right"
    side = support[0].upper()
    show = perform(("first_position", f"weight_shift:{support}", f"retire:{working}", f"releve:{working}",
                    f"pivot_quarter:{working}", f"pivot_quarter:{working}"))
    assert not show.fell, f"fell at {show.fall_time:.2f} s in {show.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(show)
    # Turning towards the supporting side, a quarter turn per pivot, for the pelvis and for the
    # supporting toe, which carries the dancer alone throughout.
    sign = 1.0 if support == "left" else -1.0
    toe = show.contact_bodies.index(f"toe.{side}")
    before = np.searchsorted(show.times, show.phase_times[4][1])
    for pivots, index in ((1, show.step_window(4)), (2, show.step_window(5))):
        end = np.nonzero(index)[0][-1]
        turned = _yaw(show.rotations["hips"][end]) - _yaw(show.rotations["hips"][before])
        assert (turned - sign * 90.0 * pivots + 180.0) % 360.0 - 180.0 == pytest.approx(0.0, abs=3.0)
    pivoting = np.nonzero(show.times >= show.phase_times[4][1])[0]
    alone = np.arange(4) == toe
    assert np.all(show.in_contact[pivoting] == alone)
    # The toe turns about the middle of its contact with the floor, which stays put (within 1 cm):
    # the support polygon follows the facing.
    centres = np.array([show.support_polygons[i].mean(axis=0) for i in pivoting])
    assert np.linalg.norm(centres - centres[0], axis=1).max() < 0.01
    quarter = np.nonzero(show.step_window(4))[0][-1]
    hull_before = show.support_polygons[before] - show.support_polygons[before].mean(axis=0)
    hull_after = show.support_polygons[quarter] - show.support_polygons[quarter].mean(axis=0)
    long_before = np.arctan2(*np.linalg.svd(hull_before)[2][0][::-1])
    long_after = np.arctan2(*np.linalg.svd(hull_after)[2][0][::-1])
    assert abs(np.sin(long_after - long_before)) > 0.95  # the toe's long axis turned ~90 degrees


# Every balanced change of position: the right foot moving (the weight on the left from both feet),
# the left foot moving (the weight put on the right first), the front foot out of fourth; each ends
# with a weight shift and a retire, which start from the settled position.
CHANGES = {
    "right": ("first_position", "third_position", "fifth_position", "third_position", "first_position",
              "fifth_position", "first_position", "weight_shift:left", "retire:right"),
    "left": ("first_position", "weight_shift:right", "third_position", "weight_shift:right", "first_position",
             "weight_shift:left", "retire:right"),
    # Into second from first and third, either foot moving, and from fourth and fifth (at least 10 s:
    # the supporting knee bends so the other leg reaches its place, the weight goes to the middle as the foot
    # lands).
    "into second": ("first_position", "second_position", "weight_shift:left", "retire:right"),
    "left into second": ("first_position", "weight_shift:right", "second_position", "weight_shift:left",
                         "retire:right"),
    "third into second": ("third_position", "second_position", "weight_shift:right", "retire:left"),
    "left third into second": ("third_position", "weight_shift:right", "second_position",
                               "weight_shift:left", "retire:right"),
    "fifth into second": ("fifth_position", "second_position", "weight_shift:right", "retire:left"),
    "fourth into second": ("fourth_position", "second_position", "weight_shift:right", "retire:left"),
    "left fifth into second": ("fifth_position", "weight_shift:right", "second_position", "weight_shift:left",
                               "retire:right"),
    # The left foot going behind into fifth, from first and from third (its set-down in SET_DOWN_SHARE).
    "left into fifth": ("first_position", "weight_shift:right", "fifth_position", "weight_shift:left",
                        "retire:right"),
    "left third into fifth": ("third_position", "weight_shift:right", "fifth_position", "weight_shift:left",
                              "retire:right"),
    # The front foot closing from fourth (the weight on the back foot).
    **{f"fourth to {name}": ("fourth_position", f"{name}_position", "weight_shift:left", "retire:right")
       for name in ("first", "third", "fifth")},
    # The back foot out of fourth, the weight on the front foot (the supporting leg straightened as the
    # foot lifts, see steps.OFF_THE_FRONT_OF_FOURTH).
    **{f"back of fourth to {name}": ("fourth_position", "weight_shift:right", f"{name}_position",
                                     "weight_shift:left", "retire:right")
       for name in ("first", "third", "fifth")},
    # Out of second (the supporting leg straightened before the free foot is carried in): either foot into
    # first and third, the right one into fifth, and into second and straight back.
    **{f"second to {name}": ("second_position", f"{name}_position", "weight_shift:left", "retire:right")
       for name in ("first", "third", "fifth")},
    **{f"left second to {name}": ("second_position", "weight_shift:right", f"{name}_position",
                                  "weight_shift:left", "retire:right")
       for name in ("first", "third", "fifth")},
    "second and back": ("first_position", "second_position", "first_position", "weight_shift:left",
                        "retire:right"),
    # The right foot going forward into fourth (at least 10 s, set down by the closed chain with the weight
    # to the middle as it lands).
    **{f"{name} into fourth": (f"{name}_position", "fourth_position", "weight_shift:left", "retire:right")
       for name in ("first", "third", "fifth")},
    # The left foot going back into fourth from first, third and fifth (the weight on the right foot; from
    # first carried in two halves, steps.CARRIED_IN_TWO_HALVES).
    **{f"left {name} into fourth": (f"{name}_position", "weight_shift:right", "fourth_position",
                                    "weight_shift:left", "retire:right")
       for name in ("first", "third", "fifth")},
}


@pytest.fixture(scope="module", params=sorted(CHANGES))
def changes(request):
    return request.param, perform(CHANGES[request.param])


def test_every_balanced_change_of_position_is_danced_in_the_sequences():
    from addon.dancer import plan
    from addon.dancer.steps import TRANSITIONS

    danced = set()
    for sequence in CHANGES.values():
        _, _, state = plan(sequence[:1])
        for index in range(1, len(sequence)):
            before = state
            _, _, state = plan(sequence[:index + 1])
            if state.position != before.position:
                moving = "R" if before.support in ("both", "L") else "L"
                danced.add((before.position, state.position, moving))
    assert danced == set(TRANSITIONS)
    # At least the changes a dancer does between first, third and fifth, both ways.
    for a, b in (("first", "third"), ("first", "fifth"), ("third", "fifth")):
        for start, end in ((a, b), (b, a)):
            assert any(t[:2] == (f"{start}_position", f"{end}_position") for t in TRANSITIONS)


def test_a_change_of_position_sets_the_moving_foot_on_its_new_place_and_settles(changes):
    from addon.dancer import plan

    moving, show = changes
    assert not show.fell, f"fell at {show.fall_time:.2f} s in {show.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(show)

    def apart(run, tick):
        return run.joint_positions["foot.R"][tick, :2] - run.joint_positions["foot.L"][tick, :2]

    fresh = {name: perform((name,), durations={"position": 0.5}) for name in set(CHANGES[moving])
             if name.endswith("_position")}
    for index, (name, _, end) in enumerate(show.phase_times[1:], start=1):
        if not name.endswith("_position"):
            continue
        tick = np.searchsorted(show.times, end) - 1
        # The feet stand as in the new position (right ankle relative to the left, in the world's
        # frame, so a stance that slid round would fail too: the left foot going behind into fifth,
        # set down in half the share it has now, turned the dancer 8 degrees, 1.7 cm here) within 1.2 cm
        # (measured 0.2-0.8 cm; 2-2.4 cm before the closed chain aimed past the place by the legs'
        # give), flat on the floor (each foot down, its ankle as high as standing, within 3 mm; in
        # fifth the front toe may be a hair up), the COM still in the middle.
        # Into second (the supporting knee bent to reach, the feet far apart, the foot aimed at its
        # place, not past it): within 2.5 cm (1.1-2.2 measured).
        # The back foot out of fourth into fifth (the weight going 12 cm back to the middle of the crossed
        # feet as it lands): within 1.6 cm (1.4 measured).
        off = 0.025 if name == "second_position" else 0.016 if moving == "back of fourth to fifth" else 0.012
        assert np.linalg.norm(apart(show, tick) - apart(fresh[name], -1)) < off, (index, name)
        assert show.in_contact[tick, :2].any() and show.in_contact[tick, 2:].any(), (index, name)
        for foot in ("foot.L", "foot.R"):
            assert show.joint_positions[foot][tick, 2] == pytest.approx(
                fresh[name].joint_positions[foot][-1, 2], abs=0.003), (index, name, foot)
        assert np.ptp(show.com[tick - 50:tick, :2], axis=0).max() < 0.01, (index, name)
        # The planner tracks the new position.
        assert plan(CHANGES[moving][:index + 1])[2].position == name


@pytest.mark.parametrize(
    ("sequence", "words"),
    [
        (("first_position", "second_position@6"), ("into second_position takes at least 10 s",)),
        (("second_position", "first_position@8"), ("out of second_position takes at least 11.25 s",)),
        (("second_position", "weight_shift:left", "first_position@8"),
         ("out of second_position takes at least 8.25 s",)),
        (("fifth_position", "grand_plie", "weight_shift:right", "second_position"),
         ("from fifth_position to second_position", "left (back) foot moving after a plie")),
        (("first_position", "second_position", "demi_plie", "weight_shift:left"),
         ("a weight shift after a change into second_position and a plie there",)),
        (("third_position", "second_position", "weight_shift:left", "weight_shift:right"),
         ("straight from one foot to the other after a change into second_position", "add second_position")),
        (("first_position", "weight_shift", "retire", "third_position"), ("off the floor",)),
        # A second weight shift back onto a foot hovering in second (fell at 2.0 m, 35.5 s), and one after a
        # change into second (the feet 1-3 cm off their places after either).
        (("second_position", "weight_shift:left", "tendu_side:right", "weight_shift:right", "tendu_side:left",
          "weight_shift:left"), ("back onto a hovering foot in second_position", "35.5 s")),
        (("third_position", "second_position", "weight_shift:left", "tendu_side:right", "weight_shift:right"),
         ("back onto a hovering foot in second_position after a change into it",)),
        (("fifth_position", "weight_shift:right", "third_position"),
         ("to third_position", "left foot moving")),
        (("fifth_position", "demi_plie", "weight_shift:right", "first_position"), ("left foot moving",)),
        (("third_position", "demi_plie", "tendu_back:left"),
         ("left (back) foot straight from both feet after a plie in third_position", "3.7")),
        (("third_position", "tendu_front:left", "grand_plie", "tendu_side:left"), ("after a plie",)),
        (("fourth_position", "tendu_front:left"),
         ("straight from both feet in fourth_position", "pass through the other foot's place", "8.2-8.5 s")),
        (("fourth_position", "tendu_back"),
         ("straight from both feet in fourth_position", "pass through the other foot's place", "6.4-6.5 s")),
        # Standing again after the back foot's tendu holds (see the test below), but not off the front foot.
        (("fourth_position", "tendu_back:left", "weight_shift:right", "fourth_position"),
         ("from the right (front) foot in fourth_position", "coming back off the front foot")),
        (("fourth_position", "tendu_back:left", "tendu_side:right"), ("after another one there",)),
        (("fourth_position", "tendu_front", "tendu_side"), ("after another one there", "0.02 cm outside")),
        (("fourth_position", "demi_plie", "tendu_side"), ("after a plie in fourth_position", "8.3, 10.4 s")),
        (("fourth_position", "tendu_side", "first_position"),
         ("changing to first_position after a tendu from both feet in fourth_position", "4.1-8.1 s")),
        (("fourth_position", "tendu_front", "grand_plie"),
         ("grand_plie after a tendu from both feet in fourth_position", "19.8, 19.1 s")),
        (("second_position", "tendu_side:right", "demi_plie", "tendu_side:left"),
         ("after another one there and a plie", "0.3 cm outside")),
        (("first_position", "second_position", "tendu_back"), ("after a change into it",)),
    ],
)
def test_changes_and_tendus_from_both_feet_that_fall_are_refused_with_the_reason(sequence, words):
    from addon.dancer import plan

    with pytest.raises(DancerError) as caught:
        plan(sequence)
    for word in words:
        assert word in str(caught.value)
    # Balanced there: every step after a change on either foot, the plies too (see LIFTED).
    plan(("first_position", "third_position", "demi_plie", "weight_shift:right", "retire:left",
          "releve:left"))
    plan(("first_position", "fifth_position", "weight_shift:left", "retire:right", "releve:right"))
    plan(("first_position", "third_position", "first_position", "tendu_front", "weight_shift:right",
          "developpe_side_45:left"))
    # Before the plie, or straight from the position, or on one foot after the change, they are legal.
    plan(("third_position", "second_position", "demi_plie"))
    plan(("third_position", "demi_plie", "second_position"))
    plan(("third_position", "demi_plie", "weight_shift:right", "second_position"))
    plan(("first_position", "tendu_back:right"))
    plan(("fifth_position", "first_position", "weight_shift:right", "tendu_back:left"))
    plan(("fourth_position", "first_position", "weight_shift:right", "fifth_position"))
    plan(("third_position", "weight_shift:left", "second_position"))
    plan(("first_position", "third_position", "weight_shift:left", "third_position", "second_position"))
    plan(("first_position", "weight_shift:right", "second_position", "first_position"))
    plan(("fifth_position", "second_position", "third_position"))
    plan(("fifth_position", "weight_shift:right", "second_position", "first_position"))
    plan(("third_position", "weight_shift:right", "second_position", "third_position"))
    plan(("second_position", "first_position", "third_position", "second_position"))
    plan(("second_position", "first_position", "demi_plie", "second_position"))
    plan(("first_position", "third_position", "weight_shift:left", "second_position"))


# Changes into second that fell, or were refused because they fell, until the change allowed for the
# supporting leg's sag (perform.SAG_ONLY): the landing foot came down 3-4 cm short of its place with its toes
# up and pushed like a strut. From first at 1.1 m (9.8 s in); the right foot's from a third reached by a
# change after a weight shift onto the left foot (18.2-18.8 s at 1.3-2.0 m); back into second after a change
# out of it (seeded draw 17 121.7 s, these 46.7 s at 1.65 m; from fifth 22 s at 1.1 and 1.3 m). Measured with
# it: the foot within 0.2-2.9 cm of second's place, the COM 4.7-8.4 cm inside in every step's last second.
INTO_SECOND = {
    "from first": ("first_position", "second_position"),
    "after a change and a shift": ("first_position", "third_position", "weight_shift:left",
                                   "second_position"),
    "from fifth after a change and a shift": ("fifth_position", "third_position", "weight_shift:left",
                                              "second_position"),
    "back after a plie": ("third_position", "first_position", "second_position", "first_position",
                          "demi_plie", "second_position"),
    "back from fifth": ("second_position", "fifth_position", "second_position"),
    # Refused after a plie in third until then (seeded draws fell 14.3-43.7 s in; at 1.1-1.3 m still after
    # the lean reset).
    "after a demi plie": ("third_position", "demi_plie", "second_position"),
    "after a grand plie": ("third_position", "grand_plie", "second_position"),
}


@pytest.mark.parametrize("height", [1.1, 1.3, 1.65, 2.0])
@pytest.mark.parametrize("name", sorted(INTO_SECOND))
def test_a_change_into_second_lands_flat_on_its_place(name, height):
    sequence = INTO_SECOND[name]
    show = perform(sequence, height=height)
    assert not show.fell, f"fell at {show.fall_time:.2f} s in {show.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(show)
    fresh = perform(("second_position",), height=height, durations={"position": 0.5})

    def apart(run, tick):
        return run.joint_positions["foot.R"][tick, :2] - run.joint_positions["foot.L"][tick, :2]

    # Within 3 cm of second's place (2.9 cm measured after the grand plie) ...
    assert np.linalg.norm(apart(show, -1) - apart(fresh, -1)) < 0.03
    # ... and flat: every contact of both feet down through the change's last second (before, the landing
    # foot's toes were still up as the weight went to the middle).
    assert show.in_contact[show.step_window(len(sequence) - 1, 1.0)].all()


# Out of second at other heights than the changes' 1.65 m (measured at 1.1-2.0 m: the foot lands within
# 0.1-0.7 cm of its place, the supporting foot moves 0.1-0.5 cm, the COM 1.0-9.3 cm inside in every step's
# last second).
OUT_OF_SECOND = {name: CHANGES[name] for name in ("second to first", "second to third",
                                                  "left second to third", "second to fifth",
                                                  "left second to fifth")}


@pytest.mark.parametrize("height", [1.1, 1.3, 2.0])
@pytest.mark.parametrize("name", sorted(OUT_OF_SECOND))
def test_a_change_out_of_second_holds_at_other_heights(name, height):
    sequence = OUT_OF_SECOND[name]
    show = perform(sequence, height=height)
    assert not show.fell, f"fell at {show.fall_time:.2f} s in {show.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(show)
    index = next(i for i, step in enumerate(sequence) if i and step.endswith("_position"))
    new = sequence[index]
    fresh = perform((new,), height=height, durations={"position": 0.5})
    tick = np.searchsorted(show.times, show.phase_times[index][2]) - 1
    apart = show.joint_positions["foot.R"][tick, :2] - show.joint_positions["foot.L"][tick, :2]
    placed = fresh.joint_positions["foot.R"][-1, :2] - fresh.joint_positions["foot.L"][-1, :2]
    assert np.linalg.norm(apart - placed) < 0.012
    # The supporting foot stays where it stood (the left one unless the weight went onto the right first).
    support = "foot.R" if "weight_shift:right" in sequence[:index] else "foot.L"
    moved = show.joint_positions[support][tick, :2] - show.joint_positions[support][0, :2]
    assert np.linalg.norm(moved) < 0.01


# The back (left) foot out of fourth at other heights than the changes' 1.65 m. Before the supporting leg
# straightened as the foot lifted, every one of these fell 1.9-5.7 s into the change (the dancer rocked
# onto the front toes as the back leg swung in). Then the feet landed within 0.5-1.0 cm of the new position's
# places (1.1-2.0 m; in fifth 1.0-1.5: 1.006 cm at 1.1 m, over the scaled limit), as the dancer had turned
# 3.2-3.8 degrees on the floor (see perform.ACROSS_COMPLIANCE); now within 0.27-0.56 cm (in fifth 0.54-0.69),
# the front foot within 0.4-0.6 cm of where it stood, the COM 1.0-2.9 cm inside in every step's last second.
BACK_OF_FOURTH = {name: CHANGES[f"back of fourth to {name}"] for name in ("first", "third", "fifth")}


@pytest.mark.parametrize(("name", "height"), [(name, height) for name in sorted(BACK_OF_FOURTH)
                                              for height in (1.1, 1.3, 2.0)])
def test_the_back_foot_changes_out_of_fourth_at_other_heights(name, height):
    sequence = BACK_OF_FOURTH[name]
    show = perform(sequence, height=height)
    assert not show.fell, f"fell at {show.fall_time:.2f} s in {show.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(show)
    index = sequence.index(f"{name}_position")
    fresh = perform((sequence[index],), height=height, durations={"position": 0.5})
    tick = np.searchsorted(show.times, show.phase_times[index][2]) - 1
    assert np.linalg.norm(_feet_apart(show, tick)[:2] - _feet_apart(fresh, -1)[:2]) < 0.015 * height / 1.65
    assert show.in_contact[tick, :2].any() and show.in_contact[tick, 2:].any()
    # The supporting (front) foot stays where it stood in fourth.
    moved = show.joint_positions["foot.R"][tick, :2] - show.joint_positions["foot.R"][0, :2]
    assert np.linalg.norm(moved) < 0.01


# Out of second after the left (back) foot came into it from third or fifth, and a tendu to the side on that
# foot after it: refused until the lean reset after a change (seeded draw 34 from fifth fell 71 s in, in
# the tendu; into third instead of first 36 s); now the COM 1.2-9.0 cm inside in every step's last second
# and the feet within 0.1-1.5 cm of their places at 1.1-2.0 m.
AFTER_THE_BACK_FOOT_INTO_SECOND = {
    "fifth, first, plie": ("fifth_position", "weight_shift:right", "second_position", "first_position",
                           "grand_plie", "tendu_side:left"),
    "fifth, third": ("fifth_position", "weight_shift:right", "second_position", "third_position",
                     "tendu_side:left"),
    "third, first": ("third_position", "weight_shift:right", "second_position", "first_position",
                     "tendu_side:left"),
}


@pytest.mark.parametrize("height", [1.1, 1.3, 1.65, 2.0])
@pytest.mark.parametrize("name", sorted(AFTER_THE_BACK_FOOT_INTO_SECOND))
def test_out_of_second_after_the_back_foot_came_into_it_holds(name, height):
    sequence = AFTER_THE_BACK_FOOT_INTO_SECOND[name]
    show = perform(sequence, height=height)
    assert not show.fell, f"fell at {show.fall_time:.2f} s in {show.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(show)
    fresh = {step: perform((step,), height=height, durations={"position": 0.5})
             for step in sequence if step.endswith("_position")}

    def apart(run, tick):
        return run.joint_positions["foot.R"][tick, :2] - run.joint_positions["foot.L"][tick, :2]

    for index, (step, _, end) in enumerate(show.phase_times):
        if step.endswith("_position"):
            tick = np.searchsorted(show.times, end) - 1
            # Into second within 2.5 cm, as every change into it (1.5 cm here at 1.3 m).
            off = 0.025 if step == "second_position" else 0.015
            assert np.linalg.norm(apart(show, tick) - apart(fresh[step], -1)) < off, (index, step)
    # The tendu closes the foot back onto its place in the position the change out of second reached.
    assert np.linalg.norm(apart(show, -1) - apart(fresh[sequence[3]], -1)) < 0.015


# The changes out of second into fifth and the steps seeded draws fell in after the right foot's before the
# lean reset at the end of every change (244d453): seed 1 of 0-59 (a tendu to the side on the left foot,
# the plies, fifth again and the change into first, 45 s in; the plies and first, 32 s) and seed 59 (a
# tendu to the side); a weight shift onto the right foot and a retire.
AFTER_SECOND_TO_FIFTH = {
    "draw 1": ("second_position", "fifth_position", "tendu_side:left", "grand_plie", "demi_plie",
               "fifth_position", "first_position"),
    "plies and first": ("second_position", "fifth_position", "grand_plie", "demi_plie", "first_position"),
    "draw 59": ("second_position", "fifth_position", "tendu_side:right"),
    "shift and retire": ("second_position", "fifth_position", "weight_shift:right", "retire:left"),
    # The left (back) foot's change, set down in twice the share (at 1.3 m in its share both feet slid 5 cm).
    "left, draw 1": ("second_position", "weight_shift:right", "fifth_position", "tendu_side:left",
                     "grand_plie", "demi_plie", "fifth_position", "first_position"),
    "left, tendu": ("second_position", "weight_shift:right", "fifth_position", "tendu_side:right"),
}


@pytest.mark.parametrize("height", [1.1, 1.3, 1.65, 2.0])
@pytest.mark.parametrize("name", sorted(AFTER_SECOND_TO_FIFTH))
def test_the_steps_after_the_change_out_of_second_into_fifth_hold(name, height):
    sequence = AFTER_SECOND_TO_FIFTH[name]
    show = perform(sequence, height=height)
    assert not show.fell, f"fell at {show.fall_time:.2f} s in {show.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(show)
    # The feet as fifth has them after the change (0.1-0.6 cm measured), the supporting foot where it stood
    # (0-0.6 cm).
    fresh = perform(("fifth_position",), height=height, durations={"position": 0.5})
    index = sequence.index("fifth_position")
    tick = np.searchsorted(show.times, show.phase_times[index][2]) - 1
    assert np.linalg.norm(_feet_apart(show, tick)[:2] - _feet_apart(fresh, -1)[:2]) < 0.012
    support = "foot.R" if "weight_shift:right" in sequence[:index] else "foot.L"
    moved = show.joint_positions[support][tick, :2] - show.joint_positions[support][0, :2]
    assert np.linalg.norm(moved) < 0.01


def test_the_steps_after_a_change_out_of_second_hold_as_after_one_from_first():
    # Going over the foot in second leaned the balance 0.27 rad and the lean stayed after the change: four
    # grand plies and a change into first after it fell 45.2 s in (from first they held; seeded draw 53 of
    # 0-59 fell so, and 46 in a change into second 92 s in). The settling after the change starts the lean
    # from none.
    sequence = ("second_position", "third_position", "grand_plie", "grand_plie", "grand_plie", "grand_plie",
                "first_position")
    show = perform(sequence)
    assert not show.fell, f"fell at {show.fall_time:.2f} s in {show.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(show)


# Refused until session 5 and balanced now, each as it fell in seeded random sequences or in the
# refusal's own example: a foot that set down by the closed chain (closing a tendu back from both
# feet, or moving in a change of position) kept what its leg had carried while it was free, and as
# soon as it supported a one-foot step that ends with the free foot held over its spot, its knee bent
# 15-18 degrees (first seed 5: the COM ended on the edge of the polygon, an arabesque fell; after a
# change, the tendu back of the other foot fell).
LIFTED = {
    # First position seed 5's combinations: a tendu, developpe and arabesque on the foot that closed a
    # tendu back, and the arabesque of the other foot after a tendu back and a plie.
    "closed back": ("first_position", "tendu_back:right", "weight_shift:right", "tendu_side:left",
                    "developpe_side_90:left", "arabesque_45:left"),
    "closed back, plie": ("first_position", "tendu_back:left", "demi_plie", "weight_shift:left",
                          "arabesque_45:right"),
    # Plies after a change into fifth; extensions after a change, on the front foot in fifth.
    "after a change": ("first_position", "third_position", "fifth_position", "demi_plie", "grand_plie",
                       "weight_shift:right", "tendu_front:left", "tendu_back:left", "developpe_front_90:left",
                       "arabesque_45:left", "retire:left", "releve:left"),
    # Fifth position seeds 5 and 1: a plie after a plie and a weight shift there and back, and after a
    # plie and standing again; each plie by the angles walked the crossed feet and the next one fell.
    "fifth plies": ("fifth_position", "demi_plie", "weight_shift:right", "fifth_position", "demi_plie",
                    "fifth_position", "grand_plie", "fifth_position"),
    # Tendus back from both feet slid both feet 3 cm back each (until session 6); the weight comes back
    # to where the dancer stood relative to the feet, not to the spot on the floor where it first stood.
    "slid back": ("first_position", "tendu_back:right", "tendu_back:left", "weight_shift:left",
                  "first_position", "weight_shift:right", "weight_shift:left", "first_position"),
}
# The exact combinations refused until session 5 (each fell or ended outside the polygon).
ONCE_REFUSED = (
    ("first_position", "tendu_back:right", "weight_shift:right", "tendu_side:left"),
    ("first_position", "tendu_back:left", "demi_plie", "weight_shift:left", "arabesque_45:right"),
    ("fifth_position", "demi_plie", "weight_shift:right", "fifth_position", "demi_plie"),
    ("fifth_position", "demi_plie", "fifth_position", "grand_plie"),
    ("first_position", "fifth_position", "demi_plie"),
    ("first_position", "third_position", "weight_shift:right", "tendu_back:left"),
    ("first_position", "fifth_position", "weight_shift:right", "retire:left"),
)


@pytest.fixture(scope="module")
def lifted():
    return {name: perform(sequence) for name, sequence in LIFTED.items()}


def test_steps_after_a_foot_set_down_by_the_closed_chain_complete_on_a_straight_supporting_knee(lifted):
    for name, show in lifted.items():
        assert not show.fell, f"{name}: fell at {show.fall_time:.2f} s in {show.phase_times[-1][0]}"
        _com_inside_for_the_last_second_of_every_step(show)
        for index, (step, _, end) in enumerate(show.phase_times):
            tick = np.searchsorted(show.times, end) - 1
            if show.supports[tick] == "both":
                continue
            # The supporting knee stays straight (measured 1.4-2.1 degrees; 15-18 with the stale carry).
            knee = show.rotations[f"shin.{show.supports[tick]}"][tick]
            assert np.degrees(2.0 * np.arccos(min(1.0, abs(knee[0])))) < 6.0, (name, index, step)


def test_combinations_that_fell_in_seeded_random_sequences_are_legal_and_danced(lifted):
    from addon.dancer import plan

    for sequence in ONCE_REFUSED:
        plan(sequence)
        # Each is danced, step for step, by one of the LIFTED sequences (or with a step between).
        assert any(all(step in LIFTED[name] for step in sequence) for name in LIFTED), sequence


def test_the_weight_comes_back_to_where_the_dancer_stood_relative_to_the_feet(lifted):
    show = lifted["slid back"]

    def com_from_feet(tick):
        middle = 0.5 * (show.joint_positions["foot.L"][tick, :2] + show.joint_positions["foot.R"][tick, :2])
        return show.com[tick, :2] - middle

    start = com_from_feet(np.searchsorted(show.times, show.phase_times[0][2]) - 1)
    ends = [np.searchsorted(show.times, end) - 1 for name, _, end in show.phase_times]
    # The two tendus back leave the feet where they stood (0.1-0.2 cm measured; they slid them 6 cm back
    # while the hovering knee was solved bent backwards and the closed chain bent it forwards as it closed).
    for side in ("L", "R"):
        feet = show.joint_positions[f"foot.{side}"][ends[2], :2] - show.joint_positions[f"foot.{side}"][0, :2]
        assert np.linalg.norm(feet) < 0.01, side
    for index, (name, _, _) in enumerate(show.phase_times[1:], start=1):
        if name == "first_position":
            # Measured 0.1-0.2 cm off; aimed at the floor point where the dancer first stood: 6 cm.
            assert np.linalg.norm(com_from_feet(ends[index]) - start) < 0.01, index


@pytest.mark.parametrize(("sequence", "height"), [
    # After a foot set down by the closed chain: tendus front and side from both feet (one, or three
    # with a plie between), a change into first, with a plie after it and after a weight shift, and a
    # one-foot extension set down by a weight shift. Refused until the landed knee straightened and the
    # feet stopped hopping on the balls: they slid 23-33 cm and the dancer fell after a plie following
    # a change from fifth and after a tendu back.
    (("first_position", "tendu_front:right", "releve"), 1.65),
    (("first_position", "tendu_side:left", "demi_plie", "tendu_front:left", "tendu_side:right", "releve"),
     1.65),
    (("fifth_position", "first_position", "demi_plie", "releve"), 1.65),
    (("third_position", "first_position", "releve"), 1.65),
    (("first_position", "weight_shift:right", "developpe_side_45:left", "weight_shift:left", "first_position",
      "releve"), 1.65),
    # Smaller dancers than 1.5 m were refused (the feet hopped and the dancer fell at 1.1, 1.3, 1.45 m).
    (("first_position", "releve"), 1.1),
    # After a tendu back (refused while the tendu was a brush: the COM ended 2.2-2.7 cm off the feet at
    # 1.7-1.8 m and the dancer fell at 2.0 m; with the sliding tendu the COM ends 1.8-5.9 cm inside at
    # 1.1-2.0 m, the balls within 0.8 cm), from both feet and on one foot, before a change and a plie.
    (("first_position", "tendu_back:right", "releve"), 2.0),
    (("first_position", "tendu_back:left", "releve"), 1.8),
    (("first_position", "weight_shift", "tendu_back:right", "weight_shift:right", "first_position", "releve"),
     1.65),
    (("third_position", "tendu_back:left", "first_position", "releve"), 1.65),
    (("first_position", "tendu_back:right", "demi_plie", "releve"), 1.5),
    # After a change into first, a grand plie and a tendu side: with the brushed tendu the COM ended 1.3 cm
    # off the feet, and after a tendu back in fifth before the change the dancer fell on the balls as the
    # COM drifted sideways (54.2 s); the sliding tendu closes the foot on its place and both hold (2.1 cm).
    (("fifth_position", "first_position", "grand_plie", "tendu_side:left", "releve"), 1.65),
    (("third_position", "fifth_position", "tendu_back:right", "fifth_position", "demi_plie", "first_position",
      "grand_plie", "tendu_side:left", "releve"), 1.65),
])
def test_a_releve_on_both_feet_after_a_foot_is_set_down_holds_on_balls_that_stay_put(sequence, height):
    from addon.dancer import plan

    plan(sequence, height=height)
    show = perform(sequence, height=height)
    assert not show.fell, f"fell at {show.fall_time:.2f} s in {show.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(show)
    during = show.step_window(len(sequence) - 1, 1e9)
    start = np.nonzero(during)[0][0]
    toes_only = np.array([name.startswith("toe") for name in show.contact_bodies])
    assert np.all(show.in_contact[during] == toes_only, axis=1).any()
    # Never off the floor, and the balls within 2 cm of where the step found them (0.3-1.5 cm measured).
    assert show.in_contact[during].any(axis=1).all()
    for side in ("L", "R"):
        ball = show.joint_positions[f"toe.{side}"][during, :2]
        assert np.linalg.norm(ball - ball[0], axis=1).max() < 0.02, side
    assert start > 0


@pytest.mark.parametrize(("sequence", "height"), [
    (("fifth_position", "releve", "weight_shift", "retire"), 1.65),
    (("fifth_position", "releve", "weight_shift:right", "tendu_side:left"), 1.1),
    (("fifth_position", "releve", "demi_plie", "tendu_front:right"), 2.0),
    # In fourth plies, standing again, the weight shift onto the back foot and the one-foot steps on it
    # (steps.AFTER_THE_RELEVE_ON_THE_FEET_FALLS says what not).
    (("fourth_position", "releve", "demi_plie"), 1.65),
    (("fourth_position", "releve", "grand_plie", "demi_plie:left"), 1.1),
    (("fourth_position", "releve", "grand_plie"), 2.0),
    (("fourth_position", "releve", "weight_shift:left", "retire:right"), 1.1),
    (("fourth_position", "releve", "fourth_position", "weight_shift", "tendu_side:right"), 1.3),
    (("fourth_position", "releve", "weight_shift:left", "tendu_back:right"), 2.0),
    (("fourth_position", "releve", "grand_plie", "weight_shift:left", "developpe_front_45:right"), 1.65),
    # With the feet aimed in through the relevé (perform.SQUEEZE_AT) and that aim faded out after it, the
    # extensions after a plie and the weight shift fell (1.8-3 s in): the relevé ends with it in the pose.
    (("fourth_position", "releve", "grand_plie:left", "weight_shift:left", "arabesque_45:right"), 1.65),
    (("fourth_position", "releve", "grand_plie:left", "grand_plie:right", "weight_shift:left",
      "developpe_front_90:right"), 1.65),
    # The relevé on one foot on the back foot fell at 1.1-1.3 and 1.39-1.42 m (20.3-20.6 s in) at the
    # model's step (perform.FINE_STEP_BELOW).
    (("fourth_position", "releve", "weight_shift", "retire", "releve"), 1.1),
    (("fourth_position", "releve", "weight_shift", "retire", "releve"), 1.3),
    (("fourth_position", "releve", "weight_shift", "retire", "releve"), 1.4),
])
def test_the_steps_after_a_releve_on_both_feet_in_fourth_or_fifth_hold_with_the_feet_kept(sequence, height):
    show = perform(sequence, height=height)
    assert not show.fell, f"fell at {show.fall_time:.2f} s in {show.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(show)
    # The feet where the position put them when the releve is over (the tendus' and retire's working foot
    # moves after it; the supporting one and both before it stay within 1.5 cm).
    _, _, end = show.phase_times[1]
    after = np.searchsorted(show.times, end)
    for side in ("L", "R"):
        ankle = show.joint_positions[f"foot.{side}"][:, :2]
        assert np.linalg.norm(ankle[after] - ankle[0]) < 0.015, side


# Before, every step after the relevé on both feet in fourth but a plie fell 0.9 s in (the legs went back
# from the feet's angles to the position's, the back foot off the floor). Posed about the feet (measured,
# 1.1/1.3/1.65/2.0 m: the COM inside over the last second of the shift 1.9/2.3/2.9/3.5 cm, standing again
# 4.8/5.8/7.4/9.1, the retire 2.0/2.4/3.0/3.6; the feet 0.5-1.3 cm off where they started).
@pytest.mark.parametrize("height", [1.1, 1.3, 1.65, 2.0])
def test_after_the_releve_on_both_feet_in_fourth_the_weight_shifts_onto_the_back_foot_and_back(height):
    sequence = ("fourth_position", "releve", "weight_shift:left", "fourth_position", "weight_shift:left",
                "retire:right")
    show = perform(sequence, height=height)
    assert not show.fell, f"fell at {show.fall_time:.2f} s in {show.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(show)
    # Standing again, both feet within 1.5 cm of where the relevé left them, flat on the floor.
    _, _, releve_end = show.phase_times[1]
    _, _, standing_end = show.phase_times[3]
    after, again = np.searchsorted(show.times, releve_end), np.searchsorted(show.times, standing_end) - 1
    heels = [show.contact_bodies.index(f"foot.{side}") for side in ("L", "R")]
    assert show.in_contact[again, heels].all()
    for side in ("L", "R"):
        ankle = show.joint_positions[f"foot.{side}"]
        assert np.linalg.norm(ankle[again, :2] - ankle[after, :2]) < 0.015, side
        assert ankle[again, 2] == pytest.approx(ankle[0, 2], abs=0.003), side
    # On the back foot alone at the end of the retire, the front foot up at the supporting knee.
    assert show.in_contact[-1].tolist() == [name.endswith(".L") for name in show.contact_bodies]
    assert show.joint_positions["foot.R"][-1, 2] > show.joint_positions["foot.L"][-1, 2] + 0.2 * height


@pytest.mark.parametrize("sequence", [
    # A plie rising back to the position's angles before a releve on both feet (rising back to the
    # angles the closed chain had left, the releve after it fell: 10.0 s), and plies with standing
    # between them in fourth, where 'stand' stays the floor point (re-aimed from the rocking feet
    # there, the last plie fell: fourth seed 5).
    ("first_position", "demi_plie", "grand_plie", "releve"),
    ("fourth_position", "demi_plie:left", "grand_plie:left", "fourth_position", "grand_plie:left",
     "fourth_position", "demi_plie:left", "fourth_position"),
])
def test_plies_then_a_releve_or_standing_again_stay_balanced(sequence):
    show = perform(sequence)
    assert not show.fell, f"fell at {show.fall_time:.2f} s in {show.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(show)


def test_plies_in_fifth_keep_the_crossed_feet_on_their_places(lifted):
    show = lifted["fifth plies"]

    def apart(tick):
        return show.joint_positions["foot.R"][tick, :2] - show.joint_positions["foot.L"][tick, :2]

    for name, start, end in show.phase_times:
        if not name.endswith("plie"):
            continue
        before, after = (np.searchsorted(show.times, t) - 1 for t in (start, end))
        # By the closed chain the right ankle moves 0.4-0.5 cm relative to the left a plie (by the
        # position's angles 0.5-1.4 cm, and the next plie fell); the COM deep inside the polygon.
        assert np.linalg.norm(apart(after) - apart(before)) < 0.008, name
        depths = [signed_distance_inside(show.com[t], show.support_polygons[t]) for t in range(before, after)]
        assert min(depths) > 0.03, name


TENDUS = ("first_position", "tendu_front:right", "tendu_side:right", "tendu_back:right", "tendu_front:left",
          "tendu_side:left", "tendu_back:left", "demi_plie", "weight_shift", "retire")
# In third and fifth the front foot's tendus front, side and back, each twice, then plies (in fifth by
# the closed chain), the paper's weight shift, retire and releve.
FRONT_FOOT_TENDUS = ("tendu_front:right", "tendu_side:right", "tendu_back:right") * 2
# In third the back foot's too, then the front foot's after them (which fell while the closing foot
# was aimed below the floor by the legs' sag); in fifth its tendus side and back (the supporting front
# leg straightened first, the foot closed slowly).
BACK_FOOT_TENDUS = ("tendu_front:left", "tendu_side:left", "tendu_back:left")


# With how far each foot may end from where it stood after the tendus (measured: first 0.9 cm, third
# 0.8, third's back foot and then the front one 1.5, fifth 1.5: 1.3 before the closing foot was aimed
# along the floor only; fifth's back foot and then the front one 1.4).
@pytest.mark.parametrize(("sequence", "within"), [
    (TENDUS, 0.015),
    (("third_position", *FRONT_FOOT_TENDUS, "demi_plie", "weight_shift", "retire", "releve"), 0.015),
    (("third_position", *BACK_FOOT_TENDUS, *FRONT_FOOT_TENDUS[:3], "demi_plie", "weight_shift:right",
      "retire:left"), 0.02),
    (("fifth_position", *FRONT_FOOT_TENDUS, "demi_plie", "grand_plie", "weight_shift", "retire", "releve"),
     0.02),
    (("fifth_position", *BACK_FOOT_TENDUS[1:], *FRONT_FOOT_TENDUS[:3], "demi_plie", "weight_shift",
      "retire"), 0.02),
], ids=["first", "third", "third back foot", "fifth", "fifth back foot"])
def test_tendus_straight_from_both_feet_close_back_into_the_position(sequence, within):
    # The weight goes onto the supporting foot, the working foot brushes out and back over its spot,
    # and the closed chain closes it there and brings the weight back to the middle; then the next
    # tendu, a plie (in place) and the paper's weight shift and retire.
    show = perform(sequence)
    assert not show.fell, f"fell at {show.fall_time:.2f} s in {show.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(show)

    def apart(tick):
        return _feet_apart(show, tick)[:2]

    keys = dict(show.key_times)
    for name, _, end in show.phase_times:
        if not name.startswith("tendu"):
            continue
        working = name.split(":")[1][0].upper()
        # Out: the working foot pointed, its heel and ball off the floor and the tip of its toes on the
        # floor (within a centimetre) as far out as the straight leg reaches (measured 27-29 degrees from
        # the vertical from the hip to the toes; the battement it replaced had them 13-16 cm up).
        key = np.searchsorted(show.times, keys[name]) - 1
        assert not show.in_contact[key, show.contact_bodies.index(f"foot.{working}")], name
        assert 0.0 < show.toe_tips[working][key, 2] + 0.002 < 0.012, name
        reach = show.toe_tips[working][key] - show.joint_positions[f"thigh.{working}"][key]
        assert np.degrees(np.arctan2(np.hypot(*reach[:2]), -reach[2])) > 25.0, name
        # Closed: both feet down where they stood (measured: within 0.1-1.5 cm of the position after
        # six tendus; 3 cm off per tendu before the foot was aimed past its spot by the legs' give),
        # the ankles at standing height, the weight back in the middle.
        tick = np.searchsorted(show.times, end) - 1
        assert np.linalg.norm(apart(tick) - apart(0)) < within, name
        for side in ("L", "R"):
            # Neither foot slid on the floor either (each within 1.2 cm of where it stood after six
            # tendus; each tendu back slid both 3.3 cm while its knee hovered bent backwards).
            ankle = show.joint_positions[f"foot.{side}"]
            assert np.linalg.norm(ankle[tick, :2] - ankle[0, :2]) < within, (name, side)
            assert show.joint_positions[f"foot.{side}"][tick, 2] == pytest.approx(
                show.joint_positions[f"foot.{side}"][0, 2], abs=0.003), (name, side)
        # The weight back in the middle of the feet, where the close aims it (in first where the dancer
        # stood; in third and fifth that middle is 0.8 cm aside of it, measured 1.1 cm at the end).
        assert np.linalg.norm(show.com[tick, :2] - show.com_targets[tick]) < 0.01, name
        if sequence[0] == "first_position":
            assert abs(show.com[tick, 1] - show.com[0, 1]) < 0.01, name


# Refused while the tendu was a battement, each as it fell (at 1.65 m): the tendu back from both feet
# after a change into first (the left foot's from fifth 14.7 s, after a grand plie there 21.2, the right
# foot's from third 18.2: the leg swung up behind, the supporting foot set down by the change slid 0.9-1.7
# cm and the dancer fell backwards), the back foot's tendu front in fifth (12.5 s), and every tendu
# from both feet right after the change from fourth into first (front, side and back, either foot: fell
# 14.7-17.1 s, the feet 14-80 cm apart). With the toes along the floor each holds, 1.3 to 2.0 m: the
# COM 1.4-8.7 cm inside in every step's last second, the supporting foot 0.1-0.6 cm.
@pytest.mark.parametrize(("sequence", "height"), [
    (("fourth_position", "first_position", "tendu_front:right", "tendu_side:left"), 1.65),
    (("fourth_position", "demi_plie", "first_position", "tendu_back:left"), 2.0),
    (("fourth_position", "first_position", "grand_plie", "tendu_side:right"), 1.3),
    (("fifth_position", "first_position", "tendu_back:left"), 1.65),
    (("fifth_position", "grand_plie", "first_position", "demi_plie", "tendu_back:right"), 2.0),
    (("third_position", "first_position", "tendu_back:right"), 1.3),
    (("fifth_position", "tendu_front:left", "tendu_side:left", "tendu_back:left", "tendu_front:right"), 1.65),
    (("fifth_position", "demi_plie", "tendu_front:left", "grand_plie", "tendu_front:right"), 1.3),
])
def test_tendus_from_both_feet_that_fell_as_battements_hold(sequence, height):
    from addon.dancer import plan

    plan(sequence, height=height)
    show = perform(sequence, height=height)
    assert not show.fell, f"fell at {show.fall_time:.2f} s in {show.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(show)
    for name, begin, end in show.phase_times:
        if name.startswith("tendu"):
            during = (show.times >= begin) & (show.times <= end)
            supporting = "L" if name.endswith(":right") else "R"
            ankle = show.joint_positions[f"foot.{supporting}"][during, :2]
            assert np.hypot(*(ankle - ankle[0]).T).max() < 0.01, name


# A tendu straight from both feet in second: the weight shift leaves the supporting knee bent 40-46
# degrees, the toes slide out and back, and the foot closes onto its wide place by the closed chain
# (perform.WIDE_LANDING).
# Before, the tendu side ended with the COM 29 cm off the feet and the tendu front fell 11.2 s in (1.65 m).
# Measured (COM inside over each step's last second / the feet off their places after the tendu): 1.1 m side
# 2.5 / 0.3 cm, 2.0 m front 8.1 / 1.7, 1.65 m back after a demi plie 3.3 / 0.8, 1.3 m back after a grand
# plie 3.2 / 0.7; the steps after them 2.6-8.0 cm inside.
@pytest.mark.parametrize(("sequence", "height"), [
    (("second_position", "tendu_side:right", "weight_shift:left", "retire:right"), 1.1),
    (("second_position", "tendu_front:left", "demi_plie", "weight_shift:right", "retire:left"), 2.0),
    (("second_position", "demi_plie", "tendu_back:right", "grand_plie"), 1.65),
    (("second_position", "grand_plie", "tendu_back:left", "weight_shift:left", "tendu_side:right"), 1.3),
])
def test_a_tendu_from_both_feet_in_second_closes_onto_its_wide_place(sequence, height):
    show = perform(sequence, height=height)
    assert not show.fell, f"fell at {show.fall_time:.2f} s in {show.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(show)
    keys = dict(show.key_times)
    index = next(i for i, name in enumerate(sequence) if name.startswith("tendu"))
    name, _, end = show.phase_times[index]
    working = name.split(":")[1][0].upper()
    # Out: the tip of the pointed foot's toes on the floor (within a centimetre), the rest of the foot up.
    key = np.searchsorted(show.times, keys[name]) - 1
    assert not show.in_contact[key, show.contact_bodies.index(f"foot.{working}")]
    assert 0.0 < show.toe_tips[working][key, 2] + 0.002 < 0.012
    # Closed: both feet flat where they stood, a hip-width and more apart, within 2 cm.
    tick = np.searchsorted(show.times, end) - 1
    for side in ("L", "R"):
        ankle = show.joint_positions[f"foot.{side}"]
        assert np.linalg.norm(ankle[tick, :2] - ankle[0, :2]) < 0.02, side
        assert ankle[tick, 2] == pytest.approx(ankle[0, 2], abs=0.003), side
        # Both feet on the floor (the toes of the foot that supported are light at 1.1 m).
        down = [show.contact_bodies.index(f"{body}.{side}") for body in ("foot", "toe")]
        assert show.in_contact[tick, down].any(), side


# Before, the front foot's tendus from both feet in fourth fell 11.3 s in as the foot closed (the legs
# leaning alike went back to the position's angles with the pelvis over the back foot). By the closed chain,
# the pelvis rising slowly as the foot lands, measured: the COM 3.2-6.9 cm inside over the tendu's last
# second at 1.1-2.0 m, the feet within 0.7-1.3 cm of where they stood.
@pytest.mark.parametrize("height", [1.1, 1.3, 1.65, 2.0])
@pytest.mark.parametrize("direction", ["front", "side"])
def test_the_front_foots_tendu_from_both_feet_in_fourth_closes_onto_its_place(direction, height):
    name = f"tendu_{direction}:right"
    show = perform(("fourth_position", name, "weight_shift:left", "retire:right"), height=height)
    assert not show.fell, f"fell at {show.fall_time:.2f} s in {show.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(show)
    # Out: the tip of the pointed foot's toes on the floor (within a centimetre), the rest of the foot up.
    key = np.searchsorted(show.times, dict(show.key_times)[name]) - 1
    assert not show.in_contact[key, show.contact_bodies.index("foot.R")]
    assert 0.0 < show.toe_tips["R"][key, 2] + 0.002 < 0.012
    # Closed: both feet flat where they stood, within 1.5 cm.
    _, _, end = show.phase_times[1]
    tick = np.searchsorted(show.times, end) - 1
    for side in ("L", "R"):
        ankle = show.joint_positions[f"foot.{side}"]
        assert np.linalg.norm(ankle[tick, :2] - ankle[0, :2]) < 0.015, side
        assert ankle[tick, 2] == pytest.approx(ankle[0, 2], abs=0.003), side
        assert show.in_contact[tick, show.contact_bodies.index(f"foot.{side}")], side


# The back (left) foot's tendu back from both feet in fourth, the weight on the front foot. Before, by the
# chain's supporting knee bent 51 degrees, the pelvis wound up pitched 39 degrees by the one-foot trim and the
# dancer fell as the chain levelled it, closing the foot (10.7 s in at 1.65 m). With the supporting leg
# straightened first, no higher than the free foot still reaches its spot, and that foot held over it
# (steps.HELD_OVER_ITS_SPOT, perform.HOVER_REACH), measured: the COM 1.2-5.6 cm inside over the tendu's last
# second, the feet within 1.0-1.3 cm of where they stood (at 1.1 m after a change into fourth).
# Its tendu to the side so too (before: fell 8.8 s in at 1.65 m): 1.6-4.9 cm inside, the feet within 1.1-1.5
# cm at 1.3-2.0 m; at 1.1-1.25 m too since session 12 (refused there before, see test_dancer_heights).
@pytest.mark.parametrize(("direction", "height"), [
    ("back", 1.1), ("back", 1.3), ("back", 1.65), ("back", 2.0),
    ("side", 1.1), ("side", 1.25), ("side", 1.3), ("side", 1.65), ("side", 2.0)])
def test_the_back_foots_tendu_from_both_feet_in_fourth_closes_onto_its_place(direction, height):
    name = f"tendu_{direction}:left"
    start = ("first_position", "fourth_position") if height < 1.2 else ("fourth_position",)
    show = perform((*start, name, "weight_shift:right"), height=height)
    assert not show.fell, f"fell at {show.fall_time:.2f} s in {show.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(show)
    index = len(start)
    _, begin, end = show.phase_times[index]
    first = np.searchsorted(show.times, begin)
    # Out: the tip of the pointed foot's toes just above the floor (0.9-1.1 cm at its point, 0.4 on the way
    # out: the leg reaches it from the straightened supporting leg's height), the rest of the foot up.
    key = np.searchsorted(show.times, dict(show.key_times)[name]) - 1
    assert not show.in_contact[key, show.contact_bodies.index("foot.L")]
    assert 0.0 < show.toe_tips["L"][key, 2] + 0.002 < 0.015
    # ... away from where the foot stood.
    assert np.linalg.norm(show.toe_tips["L"][key, :2] - show.toe_tips["L"][first, :2]) > 0.05
    # Closed: both feet flat where they stood, within 1.5 cm.
    tick = np.searchsorted(show.times, end) - 1
    for side in ("L", "R"):
        ankle = show.joint_positions[f"foot.{side}"]
        assert np.linalg.norm(ankle[tick, :2] - ankle[first, :2]) < 0.015, side
        assert ankle[tick, 2] == pytest.approx(ankle[first, 2], abs=0.003), side
        assert show.in_contact[tick, show.contact_bodies.index(f"foot.{side}")], side


# What follows the back foot's tendus from both feet in fourth, and what may come before them (measured:
# the COM 1.1-7.3 cm inside over each step's last second).
@pytest.mark.parametrize(("sequence", "height"), [
    (("fourth_position", "tendu_back:left", "weight_shift:left", "retire:right"), 2.0),
    (("fourth_position", "tendu_back:left", "releve"), 1.3),
    (("fourth_position", "weight_shift:left", "fourth_position", "tendu_back:left", "weight_shift:left"),
     1.65),
    (("fifth_position", "fourth_position", "tendu_back:left", "weight_shift:left"), 1.1),
    (("fourth_position", "fourth_position", "tendu_side:left", "releve"), 2.0),
    (("fourth_position", "weight_shift:left", "fourth_position", "tendu_side:left", "weight_shift:right"),
     1.3),
    # What follows the front foot's (1.1 and 2.0 m measured: the COM 0.1-7.7 cm inside over each step's last
    # second).
    (("fourth_position", "tendu_front:right", "fourth_position", "weight_shift:left", "retire:right"), 1.1),
    (("fourth_position", "tendu_side:right", "weight_shift:left", "tendu_front:right"), 1.3),
    (("fourth_position", "tendu_front:right", "weight_shift:right", "retire:left"), 2.0),
    (("fourth_position", "tendu_front:right", "fourth_position", "weight_shift:left", "retire:right"), 1.65),
    (("fourth_position", "tendu_front:right", "releve"), 1.1),
    (("first_position", "fourth_position", "tendu_front:right", "weight_shift:left", "tendu_side:right"),
     2.0),
])
def test_the_steps_around_a_tendu_from_both_feet_in_fourth_hold(sequence, height):
    show = perform(sequence, height=height)
    assert not show.fell, f"fell at {show.fall_time:.2f} s in {show.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(show)


# Standing again after the back foot's tendus from both feet in fourth, straight or back from the back foot,
# on the closed chain that closed the tendu (before, the legs leaning alike: tipped backwards 1 s in at
# 1.1-1.65 m, 20-21 s in after a weight shift; at 1.1 m the tendu comes after a change into fourth, after
# which standing again is refused, steps.AFTER_THE_CHANGE_INTO_FOURTH_FALLS). Measured: the COM 0.4-4.8 cm
# inside over its last second (0.4 at 2.0 m), 4.8-8.2 after the weight shift, the steps after it 1.9-7.3;
# the balls within 0.4 cm.
@pytest.mark.parametrize(("sequence", "height"), [
    (("fourth_position", "tendu_back:left", "fourth_position", "weight_shift:right"), 1.3),
    (("fourth_position", "tendu_side:left", "fourth_position", "releve"), 1.3),
    (("fourth_position", "tendu_back:left", "fourth_position"), 1.65),
    (("fourth_position", "tendu_side:left", "weight_shift:left", "fourth_position"), 1.65),
    (("fourth_position", "tendu_back:left", "fourth_position", "weight_shift:left"), 2.0),
    (("fourth_position", "tendu_back:left", "weight_shift:left", "fourth_position"), 2.0),
])
def test_standing_again_after_the_back_foots_tendu_in_fourth_holds(sequence, height):
    show = perform(sequence, height=height)
    assert not show.fell, f"fell at {show.fall_time:.2f} s in {show.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(show)
    index = len(sequence) - 1 - sequence[::-1].index("fourth_position")
    _, begin, end = show.phase_times[index]
    ticks = np.nonzero((show.times >= begin) & (show.times < end))[0]
    for side in ("L", "R"):
        ball = show.joint_positions[f"toe.{side}"][ticks, :2]
        assert np.linalg.norm(ball - ball[0], axis=1).max() < 0.01, side


# At 2.0 m it ended with the COM 6.2 cm outside the polygon in its last second (both feet chattering as the
# weight went back to the middle); closed in steps.BACK_FOOT_CLOSE's seconds, 5.2-7.6 cm inside at 1.1-2.0 m.
@pytest.mark.parametrize("height", [1.1, 1.65, 2.0])
def test_the_back_foots_tendu_back_from_both_feet_in_third_ends_over_the_feet(height):
    show = perform(("third_position", "tendu_back:left"), height=height)
    assert not show.fell, f"fell at {show.fall_time:.2f} s in {show.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(show)


# Tendus from both feet in second one after another. Closed onto the spots they left, each walked the feet
# apart (the supporting foot slid 0.3-0.7 cm outwards as the weight went back to the middle): after six in a
# row they stood 2.2, 4.4, 6.6 cm off second's places at 1.1, 1.65, 2.0 m, and seeded draws with many fell
# once they were 5-10 cm apart, so a second one in a row was refused (steps.TENDU_ONCE_FROM_BOTH_FEET). Closed
# onto second's place beside the supporting foot (perform.CLOSE_ON_THE_PLACE): 0.6-0.7, 1.1-1.3, 1.5-1.7 cm
# after every one, the COM 2.5-5.5 cm inside in every step's last second.
TENDUS_IN_SECOND = ("second_position", "tendu_side:right", "tendu_front:left", "tendu_back:right",
                    "tendu_side:left", "tendu_front:right", "tendu_back:left")


@pytest.mark.parametrize("height", [1.1, 1.65, 2.0])
def test_tendus_from_both_feet_in_second_in_a_row_keep_the_feet_on_their_places(height):
    show = perform(TENDUS_IN_SECOND, height=height)
    assert not show.fell, f"fell at {show.fall_time:.2f} s in {show.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(show)
    fresh = perform(("second_position",), height=height, durations={"position": 0.5})
    for index in range(1, len(TENDUS_IN_SECOND)):
        tick = np.searchsorted(show.times, show.phase_times[index][2]) - 1
        off = np.linalg.norm(_feet_apart(show, tick)[:2] - _feet_apart(fresh, -1)[:2])
        assert off < 0.01 * height / 1.1, (index, off)


@pytest.mark.parametrize("height", [1.65, 1.9])
@pytest.mark.parametrize("start", [(), ("weight_shift:left",)], ids=["both feet", "one foot"])
@pytest.mark.parametrize("direction", ["front", "side", "back"])
def test_a_tendu_slides_the_toes_along_the_floor_to_where_the_straight_leg_reaches(direction, start, height):
    # A battement tendu: the working foot slides out along the floor until only the tip of its toes
    # touches it, the leg straight and the foot pointed, and slides back. (Until session 8 it was a
    # battement at 37 degrees: the toes 13-16 cm up and 45-55 cm out, past their end and back.)
    from addon.dancer.model import build_body
    from addon.dancer.perform import pointed_leg, tendu_distance
    from addon.dancer.sim import DancerSim

    sequence = ("first_position", *start, f"tendu_{direction}:right")
    show = perform(sequence, height=height)
    assert not show.fell, f"fell at {show.fall_time:.2f} s in {show.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(show)
    _, begin, end = show.phase_times[-1]
    during = (show.times >= begin) & (show.times <= end)
    tips = show.toe_tips["R"]
    # Wherever the toes are out of their place (3 cm or more) they are on the floor, or skim it by a
    # few millimetres: measured 0.0-8.6 mm above it (the toes' contact spheres' undersides), at most
    # 0.7 mm into it.
    out = during & (np.hypot(*(tips[:, :2] - tips[np.argmax(during), :2]).T) > 0.03)
    assert out.sum() > 150
    assert -0.002 < tips[out, 2].min() and tips[out, 2].max() < 0.010
    # At the tendu's point, as far from under the hip as the straight leg with the foot pointed reaches
    # the floor (measured within 0.5 cm of it), with the heel and the ball up.
    key = np.searchsorted(show.times, dict(show.key_times)[sequence[-1]]) - 1
    hip = show.joint_positions["thigh.R"][key]
    reach = tendu_distance(hip[2], *pointed_leg(DancerSim(build_body(height)), "R"))
    assert np.hypot(*(tips[key, :2] - hip[:2])) == pytest.approx(reach, abs=0.015)
    assert not show.in_contact[key, show.contact_bodies.index("foot.R")]
    # The supporting foot stays where it stood (measured 0.1-0.3 cm).
    ankle = show.joint_positions["foot.L"][during]
    assert np.hypot(*(ankle[:, :2] - ankle[0, :2]).T).max() < 0.005


def test_the_tendu_reaches_as_far_as_the_legs_lengths_say():
    # sqrt((0.97 (leg + pointed foot))^2 - hip height^2): for the 1.65 m body the leg (hip to ankle)
    # is 81.0 cm and the pointed foot (ankle to the toes' tip) 19.8, so from a hip 86 cm up the toes
    # touch 46.5 cm out, the leg 28 degrees from the vertical; every length scales with the height.
    from addon.dancer.model import build_body
    from addon.dancer.perform import TENDU_REACH, pointed_leg, tendu_distance
    from addon.dancer.sim import DancerSim

    leg, foot = pointed_leg(DancerSim(build_body(1.65)), "L")
    assert leg == pytest.approx(0.491 * 1.65, abs=0.002) and foot == pytest.approx(0.198, abs=0.001)
    assert leg + foot == pytest.approx(np.hypot(0.86 - 0.0, tendu_distance(0.86, leg, foot)) / TENDU_REACH)
    assert tendu_distance(0.86, leg, foot) == pytest.approx(0.465, abs=0.002)
    tall = pointed_leg(DancerSim(build_body(1.9)), "R")
    assert tall == pytest.approx((leg * 1.9 / 1.65, foot * 1.9 / 1.65), rel=1e-6)
    assert tendu_distance(2.0, leg, foot) == 0.0  # out of reach: no point on the floor


@pytest.mark.parametrize(("sequence", "words"), [
    (("fourth_position", "demi_plie", "weight_shift:right"), ("after a plie in fourth_position", "toes")),
    (("fourth_position", "weight_shift:left", "weight_shift:right"),
     ("from the left (back) foot", "back to both feet first")),
    (("fourth_position", "weight_shift:right", "fourth_position"),
     ("fourth_position from the right (front)",)),
    (("fourth_position", "weight_shift:right", "weight_shift:left"),
     ("weight_shift:left from the right (front)",)),
])
def test_the_ways_onto_and_off_the_front_foot_of_fourth_that_fell_are_refused(sequence, words):
    # Onto the front foot straight from standing in fourth (or after the weight came back to both
    # feet from the back foot) is balanced; after a plie there, from the back foot, and back off it
    # the dancer fell.
    from addon.dancer import plan

    with pytest.raises(DancerError) as caught:
        plan(sequence)
    for word in ("not balanced yet",) + words:
        assert word in str(caught.value)
    plan(sequence, allow_unbalanced=True)
    plan(("fourth_position", "weight_shift:left", "fourth_position", "weight_shift:right", "retire:left"))


# After the right foot's change into fourth (from first, third and fifth): the steps after it, at 1.1,
# 1.65 and 2.0 m. Set down by the closed chain with the pelvis held 0.5 % of the height low (both knees a
# little bent): with the legs straight a foot's length apart the feet chattered and slid and 1-2 of these
# 12 changes fell, which ones changing with the timing.
INTO_FOURTH = {
    "first": ("first_position", "fourth_position", "weight_shift:right", "tendu_back:left", "retire:left"),
    "third": ("third_position", "fourth_position", "grand_plie", "demi_plie", "weight_shift:left",
              "tendu_back:right", "retire:right"),
    "fifth": ("fifth_position", "fourth_position", "fourth_position", "demi_plie", "weight_shift:left",
              "tendu_front:right", "developpe_side_45:right"),
}


@pytest.mark.parametrize("height", [1.1, 1.65, 2.0])
@pytest.mark.parametrize("start", sorted(INTO_FOURTH))
def test_the_right_foot_changes_into_fourth_and_the_steps_after_it_hold(start, height):
    sequence = INTO_FOURTH[start]
    show = perform(sequence, height=height)
    assert not show.fell, f"fell at {show.fall_time:.2f} s in {show.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(show)
    fresh = perform(("fourth_position",), height=height, durations={"position": 0.5})
    tick = np.searchsorted(show.times, show.phase_times[1][2]) - 1
    # The feet as fourth places them (the right ankle relative to the left one, measured 0.4-1.0 cm off at
    # 1.1-2.0 m), both on the floor (the front toes may be a hair up), the COM 3.7-6.4 cm inside their polygon
    # in the change's last second.
    assert np.linalg.norm(_feet_apart(show, tick)[:2] - _feet_apart(fresh, -1)[:2]) < 0.015 * height / 1.65
    assert show.in_contact[tick, :2].any() and show.in_contact[tick, 2:].any()
    # The supporting (back or front) foot stays where the change set it down through the steps after it
    # (within 2 cm; the one-foot steps' free foot comes back over its spot, not onto it).
    support = "L" if "weight_shift:left" in sequence else "R"
    ankle = show.joint_positions[f"foot.{support}"]
    assert np.linalg.norm(ankle[-1, :2] - ankle[tick, :2]) < 0.02


# The left foot's change back into fourth from first, third and fifth (the weight on the right foot) and the
# steps after it, at 1.1-2.0 m: the feet within 0.1-1.6 cm of fourth's places, the COM 1.0-9.0 cm inside in
# every step's last second. The weight shift onto the front (right) foot and, from fifth, the plies straight
# after it were refused in session 10 (a grand plie fell at 1.1 and 1.3 m, the shift at 1.65 m) and hold since
# (steps.AFTER_THE_LEFT_FOOTS_CHANGE_INTO_FOURTH_FALLS; from third the plies fell at 1.4 and 1.6 m).
LEFT_INTO_FOURTH = {
    f"{start}, {then}": (f"{start}_position", "weight_shift:right", "fourth_position") + steps
    for start in ("first", "third", "fifth")
    for then, steps in (("back foot", ("weight_shift:left", "tendu_back:right", "retire:right")),
                        ("again", ("fourth_position", "weight_shift:left", "developpe_side_45:right")),
                        ("front foot", ("weight_shift:right", "retire:left")))
} | {f"{start}, plies": (f"{start}_position", "weight_shift:right", "fourth_position", "demi_plie",
                         "grand_plie", "weight_shift:left", "developpe_side_45:right")
     for start in ("first", "fifth")}


@pytest.mark.parametrize("height", [1.1, 1.3, 1.65, 2.0])
@pytest.mark.parametrize("name", sorted(LEFT_INTO_FOURTH))
def test_the_left_foot_changes_into_fourth_and_the_steps_after_it_hold(name, height):
    sequence = LEFT_INTO_FOURTH[name]
    show = perform(sequence, height=height)
    assert not show.fell, f"fell at {show.fall_time:.2f} s in {show.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(show)
    fresh = perform(("fourth_position",), height=height, durations={"position": 0.5})
    tick = np.searchsorted(show.times, show.phase_times[2][2]) - 1
    assert np.linalg.norm(_feet_apart(show, tick)[:2] - _feet_apart(fresh, -1)[:2]) < 0.015 * height / 1.65
    assert show.in_contact[tick, :2].any() and show.in_contact[tick, 2:].any()
    # The right foot, which carried the weight through the change, stays where it stood.
    moved = show.joint_positions["foot.R"][tick, :2] - show.joint_positions["foot.R"][0, :2]
    assert np.linalg.norm(moved) < 0.015


# The left foot's change between first and third right after the change out of fourth into the one it leaves
# (seed 63 of a 50-79 sweep from fourth): refused until session 12, it fell at 1.1-2.0 m (13.7-16.3 s; the
# balance's lean kept from the change out of fourth's closed chain); with the lean from none as that change
# settles (steps.LEAN_FROM_NONE_OUT_OF) it holds, the feet 0.3-0.8 cm off their places.
@pytest.mark.parametrize("height", [1.1, 1.3, 1.65, 2.0])
@pytest.mark.parametrize(("leave", "into"), [("first", "third"), ("third", "first")])
def test_the_left_foots_change_between_first_and_third_after_leaving_fourth_holds(leave, into, height):
    sequence = ("fourth_position", f"{leave}_position", "weight_shift:right", f"{into}_position")
    show = perform(sequence, height=height)
    assert not show.fell, f"fell at {show.fall_time:.2f} s in {show.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(show)
    fresh = perform((f"{into}_position",), height=height, durations={"position": 0.5})
    tick = np.searchsorted(show.times, show.phase_times[3][2]) - 1
    assert np.linalg.norm(_feet_apart(show, tick)[:2] - _feet_apart(fresh, -1)[:2]) < 0.015 * height / 1.65
    assert show.in_contact[tick, :2].any() and show.in_contact[tick, 2:].any()


@pytest.mark.parametrize(("sequence", "words"), [
    (("first_position", "fourth_position", "weight_shift:left", "third_position"),
     ("to third_position after a change into fourth_position", "1.1 m")),
    (("fifth_position", "weight_shift:right", "fourth_position", "fourth_position", "demi_plie"),
     ("demi_plie after standing again after the left (back) foot's change", "6.8 cm")),
    (("fifth_position", "weight_shift:right", "fourth_position", "fourth_position", "grand_plie"),
     ("grand_plie after standing again after the left (back) foot's change",)),
    (("third_position", "weight_shift:right", "fourth_position", "grand_plie"),
     ("grand_plie after the left (back) foot's change from third_position", "1.4 and 1.6 m")),
    (("first_position", "weight_shift:right", "fourth_position", "fourth_position", "demi_plie"),
     ("demi_plie after standing again after the left (back) foot's change",)),
    (("fifth_position", "fourth_position", "second_position"), ("to second_position after a change",)),
    (("first_position", "fourth_position", "weight_shift:left", "fourth_position"),
     ("from one foot", "18.2")),
    (("third_position", "fourth_position", "demi_plie", "fourth_position"), ("after a plie",)),
    (("first_position", "fourth_position", "fourth_position", "fourth_position"),
     ("after another step", "seed 50")),
    (("third_position", "fourth_position", "weight_shift:right"),
     ("after the right foot's change from third_position",)),
    (("fifth_position", "fourth_position", "weight_shift:right"),
     ("after the right foot's change from fifth_position",)),
])
def test_what_fell_after_the_change_into_fourth_is_refused(sequence, words):
    from addon.dancer import plan

    with pytest.raises(DancerError) as caught:
        plan(sequence)
    for word in ("not balanced yet",) + words:
        assert word in str(caught.value)
    # Straight from fourth these are legal, and so is standing again right after the change.
    plan(("fourth_position",) + sequence[2:])
    plan(("first_position", "fourth_position", "fourth_position", "demi_plie", "weight_shift:left"))
    plan(("first_position", "fourth_position", "weight_shift:right", "retire:left"))
    with pytest.raises(DancerError, match="takes at least 10 s"):
        plan(("first_position", "fourth_position@6"))


def _chain(working: str, position: str = "first_position") -> list[str]:
    """Every balanced step once with ``working`` as the working leg, in one legal order."""
    support = "left" if working == "right" else "right"
    extensions = ["tendu_front", "tendu_side", "tendu_back", "developpe_front_45", "developpe_front_90",
                  "developpe_side_45", "developpe_side_90", "arabesque_45", "retire", "releve",
                  "pivot_quarter"]
    return [position, f"weight_shift:{support}"] + [f"{name}:{working}" for name in extensions]


@pytest.mark.parametrize("position", ["first_position", "second_position", "third_position",
                                      "fifth_position"])
@pytest.mark.parametrize("side", ["left", "right"])
def test_the_weight_shifts_onto_either_foot_with_both_feet_kept_planted(position, side):
    # The closed-chain weight shift: the pelvis goes over the supporting foot and both legs follow
    # by IK with their feet on their spots. Leaning both legs alike (a parallelogram only for
    # parallel legs) lifted the supporting foot in second and fifth and the dancer fell.
    show = perform((position, f"weight_shift:{side}"))
    assert not show.fell, f"fell at {show.fall_time:.2f} s in {show.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(show)
    s = side[0].upper()
    supporting = [show.contact_bodies.index(name) for name in (f"foot.{s}", f"toe.{s}")]
    assert show.in_contact[show.step_window(1, 1.0)][:, supporting].all()
    # The weight is over the supporting foot: COM and COP where the shift aims, the middle of
    # that foot's sole (4-10 cm from where they started: least in fifth, the feet overlapping); from
    # first position the point where the supporting leg stands upright, 2 cm inside the foot's
    # inner heel edge (2.8 cm from where the COM started).
    target = show.com_targets[-2]
    assert np.linalg.norm(target - show.com[0, :2]) > (0.025 if position == "first_position" else 0.035)
    assert np.linalg.norm(show.com[-1, :2] - target) < 0.015
    assert np.linalg.norm(show.cop[-1, :2] - target) < 0.03
    # Neither foot has moved on the floor (measured: up to 5 mm; in the wide second the unloaded
    # foot slides 1.1 cm in).
    for foot in ("foot.L", "foot.R"):
        moved = np.linalg.norm(show.joint_positions[foot][-1][:2] - show.joint_positions[foot][0][:2])
        assert moved < (0.015 if position == "second_position" else 0.008), foot


@pytest.mark.parametrize(("position", "working"), [
    (position, working) for position in ("second_position", "third_position", "fifth_position")
    for working in ("right", "left")] + [("fourth_position", "right"), ("fourth_position", "left")])
def test_every_one_foot_step_balanced_from_the_other_positions(position, working):
    from addon.dancer import BALANCED
    from addon.dancer.steps import BALANCED_FROM

    support = "L" if working == "right" else "R"
    balanced = BALANCED_FROM[position][support] - set(BOTH_FEET)
    # Every step on either leg (in second the relevé on one foot and the pivot too; in fourth on the
    # front foot too, and the tendus that cross the supporting foot pass high over it).
    assert balanced == set(BALANCED) - set(BOTH_FEET)
    sequence = [step for step in _chain(working, position) if step.split(":")[0] in balanced | set(POSITIONS)]
    run = perform(sequence)
    assert not run.fell, f"fell at {run.fall_time:.2f} s in {run.phase_times[-1][0]}"
    assert {name.split(":")[0] for name in run.sequence[1:]} == balanced
    _com_inside_for_the_last_second_of_every_step(run)
    side = run.sequence[1].split(":")[1][0].upper()
    # On the supporting toe after the pivot.
    assert run.in_contact[-1].tolist() == [name == f"toe.{side}" for name in run.contact_bodies]


@pytest.mark.parametrize("steps", [
    ("weight_shift:left", "developpe_side_90:right", "tendu_back:right"),
    ("weight_shift:right", "developpe_front_90:left", "developpe_front_45:left", "tendu_front:left"),
])
def test_in_fourth_a_tendu_across_the_supporting_foot_passes_over_it(steps):
    # The feet are crossed: the front foot going back, or the back foot going front, passes right
    # over the supporting one. After extensions, brushing past at the lift's height, its toes caught
    # the supporting foot (kicked 4-17 cm, the dancer fell); it now passes high and comes down
    # onto the tendu's point from beyond it.
    run = perform(("fourth_position",) + steps)
    assert not run.fell, f"fell at {run.fall_time:.2f} s in {run.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(run)
    support = steps[0].split(":")[1][0].upper()
    during = run.step_window(len(steps), 1e9)
    ankle = run.joint_positions[f"foot.{support}"][during]
    assert np.linalg.norm(ankle - ankle[0], axis=1).max() < 0.003
    feet = [run.contact_bodies.index(name) for name in (f"foot.{support}", f"toe.{support}")]
    assert run.in_contact[during][:, feet].all()


@pytest.fixture(scope="module", params=["right", "left"])
def chain(request):
    return perform(_chain(request.param))


def test_every_balanced_step_on_each_leg_completes_with_the_com_inside_the_polygon(chain):
    from addon.dancer import BALANCED

    assert not chain.fell, f"fell at {chain.fall_time:.2f} s in {chain.phase_times[-1][0]}"
    assert {name.split(":")[0] for name in chain.sequence[1:]} == set(BALANCED) - set(BOTH_FEET)
    _com_inside_for_the_last_second_of_every_step(chain)
    # Ends on the supporting toe, the working leg in retire.
    side = chain.sequence[1].split(":")[1][0].upper()
    toe = [name == f"toe.{side}" for name in chain.contact_bodies]
    assert chain.in_contact[-1].tolist() == toe


def test_the_weight_shift_ends_with_the_supporting_leg_near_the_least_tilt_the_body_allows(chain):
    # From first position the shift ends with the COM where the supporting leg stands straightest
    # with the COM 2 cm inside that foot, the supporting side's arm in second and the trunk bent
    # 1.5 degrees to it: 4.0 degrees from vertical by the body's geometry (test_dancer_leg_line; 4.8
    # with the arms low and the trunk upright); the simulation ends within a degree of it (measured
    # 4.5; 5.4 with the arms low, 9.2 with the COM over the middle of the foot).
    from addon.dancer.leg_line import UPRIGHT_MARGIN, Lean, LegLine, arm_pair
    from addon.dancer.steps import UPRIGHT_ARMS, UPRIGHT_TRUNK

    least = LegLine().least_tilt("weight_shift", Lean(UPRIGHT_TRUNK, 0.0, arm_pair(*UPRIGHT_ARMS)),
                                 margin=UPRIGHT_MARGIN)
    assert least == pytest.approx(4.0, abs=0.1)
    support = chain.sequence[1].split(":")[1][0].upper()
    end = np.searchsorted(chain.times, chain.phase_times[1][2]) - 1
    assert least - 0.5 < chain.leg_tilt(support)[end] < least + 1.0


def _tilt_at_the_ends(run, steps=("weight_shift", "retire", "releve")):
    """Degrees of the supporting leg (the first weight shift's) off vertical at the end of ``steps``."""
    support = run.sequence[1].split(":")[1][0].upper() if ":" in run.sequence[1] else "L"
    tilt = run.leg_tilt(support)
    return {name.split(":")[0]: float(tilt[np.searchsorted(run.times, end) - 1])
            for name, _, end in run.phase_times if name.split(":")[0] in steps}


def test_the_classical_upper_body_and_retire_bring_the_supporting_leg_nearer_vertical(show, chain):
    # The upright weight shift with the supporting side's arm in second and the trunk bent towards
    # it, the retire drawn in until the working toes touch the supporting knee (that arm still in
    # second), the working side's arm en haut on the toe and the COM 1 cm in from the middle of the
    # ball. Measured in the paper's sequence 4.5, 7.9 and 7.7 degrees at the ends of the weight shift,
    # the retire and the releve (5.4, 9.5 and 10.6 with the arms low, the retire's knee out and the COM
    # over the middle of the ball), after every extension on either leg 4.5, 8.0 and 8.1.
    for run in (show, chain):
        ends = _tilt_at_the_ends(run)
        assert ends["weight_shift"] < 5.0 and ends["retire"] < 8.5 and ends["releve"] < 8.5, ends
    # The working toes at the supporting knee: level with it (a few centimetres below) and just
    # behind, the retire's thigh drawn in from 17 cm out to the side.
    _, _, end = show.phase_times[2]
    tick = np.searchsorted(show.times, end) - 1
    toes = show.joint_positions["toe.R"][tick] - show.joint_positions["shin.L"][tick]
    assert abs(toes[1]) < 0.08 and -0.12 < toes[2] < -0.05 and -0.12 < toes[0] < 0.0
    # On the toe the working side's elbow is above the shoulders (fifth en haut), the other one below.
    tick = len(show.times) - 1
    neck = show.joint_positions["neck"][tick, 2]
    assert show.joint_positions["forearm.R"][tick, 2] > neck + 0.15
    assert show.joint_positions["forearm.L"][tick, 2] < neck


@pytest.mark.xfail(strict=True, reason=(
    "not met and out of reach for this body on the toe: within the classical form (trunk 5 degrees "
    "towards the supporting side and up to 5 forward, free hip 3 degrees up, the retire drawn in to "
    "the knee, every pair of arm positions) the least tilt on the steps' demi-pointe is 4.7 degrees "
    "with the COM on the edge of the ball's polygon, and on any demi-pointe up to 80 degrees 2.2 "
    "with it 1 cm inside (test_dancer_leg_line); measured 7.7-8.1 on the toe and 4.5 after the weight "
    "shift (supporting arm in second, trunk 1.5 degrees to it; within the form, level pelvis: least "
    "3.1 with the COM 2 cm inside, 2.2 at 1 cm)"))
def test_the_supporting_leg_ends_within_two_degrees_of_vertical_after_each_weight_shift_and_releve(chain):
    support = chain.sequence[1].split(":")[1][0].upper()
    tilt = chain.leg_tilt(support)
    ends = {name.split(":")[0]: np.searchsorted(chain.times, end) - 1 for name, _, end in chain.phase_times}
    assert {name: round(float(tilt[ends[name]]), 1) for name in ("weight_shift", "releve")} == \
        pytest.approx({"weight_shift": 0.0, "releve": 0.0}, abs=2.0)


def test_the_working_leg_reaches_its_extension(chain):
    # Elevation of the working leg (hip joint to ankle) when each step reaches its defining pose.
    working = chain.sequence[-1].split(":")[1][0].upper()
    leg = chain.joint_positions[f"foot.{working}"] - chain.joint_positions[f"thigh.{working}"]
    elevation = np.degrees(np.arccos(np.clip(-leg[:, 2] / np.linalg.norm(leg, axis=1), -1, 1)))
    reached = {name.split(":")[0]: elevation[np.searchsorted(chain.times, t) - 1]
               for name, t in chain.key_times}
    # A tendu's is to the tip of the toes, on the floor as far out as the straight leg reaches (28-29
    # degrees; the ankle 21).
    tip = chain.toe_tips[working] - chain.joint_positions[f"thigh.{working}"]
    to_the_toes = np.degrees(np.arctan2(np.hypot(tip[:, 0], tip[:, 1]), -tip[:, 2]))
    reached.update({name.split(":")[0]: to_the_toes[np.searchsorted(chain.times, t) - 1]
                    for name, t in chain.key_times if name.startswith("tendu")})
    expected = {"tendu_front": 28, "tendu_side": 28, "tendu_back": 28, "arabesque_45": 45,
                "developpe_front_45": 45, "developpe_side_45": 45, "developpe_front_90": 90,
                "developpe_side_90": 90}
    assert set(reached) == set(expected)
    for name, degrees in expected.items():
        assert reached[name] == pytest.approx(degrees, abs=3 if name.startswith("tendu") else 10), name
    # A tendu points along the floor; a developpe at 90 degrees holds the foot at hip height.
    ankle = chain.joint_positions[f"foot.{working}"][:, 2]
    for name, t in chain.key_times:
        tick = np.searchsorted(chain.times, t) - 1
        if name.startswith("tendu"):
            assert chain.toe_tips[working][tick, 2] < 0.01, name
        if name.startswith("developpe") and "90" in name:
            assert ankle[tick] > 0.65, name


def test_the_pelvis_stays_level_on_one_leg(chain):
    w, x, y, z = chain.rotations["hips"].T
    roll = np.degrees(np.abs(np.arcsin(np.clip(2 * (y * z - w * x), -1, 1))))
    # While the working leg moves (the paper's retire and releve are left as tuned).
    moving = np.zeros(len(chain.times), dtype=bool)
    for name, start, end in chain.phase_times:
        if name.startswith(("tendu", "developpe", "arabesque")):
            moving |= (chain.times >= start) & (chain.times < end)
    assert roll[moving].mean() < 2.0 and roll[moving].max() < 6.0


def test_a_seeded_random_twenty_step_legal_sequence_completes():
    from addon.dancer import random_sequence

    sequence = random_sequence(np.random.default_rng(2026), 20)
    assert len(sequence) == 20 and len(set(sequence)) > 3
    run = perform(sequence)
    assert not run.fell, f"fell at {run.fall_time:.2f} s in {run.phase_times[-1][0]}"
    assert [name for name, _, _ in run.phase_times] == sequence
    _com_inside_for_the_last_second_of_every_step(run)


def test_a_seeded_random_sequence_with_the_releve_on_both_feet_completes():
    # The relevé on both feet is drawn only when asked for (the seeds of the draws above keep their
    # sequences): the first seed from 2026 whose draw from first has one. Of the first ten such draws,
    # one fell in a grand plie after a relevé in third reached from first through fifth (now refused)
    # and one in its last step, a change into second that falls without the relevé too.
    # A 'releve' without a side on one foot is the relevé on that foot (seed 2027's draw has one since the
    # changes into fourth): it does not count.
    from addon.dancer import plan, random_sequence

    def on_both_feet(sequence):
        return [index for index, item in enumerate(sequence)
                if item == "releve" and plan(sequence[:index])[2].support == "both"]

    for seed in range(2026, 2046):
        sequence = random_sequence(np.random.default_rng(seed), 20, releve_on_both_feet=True)
        if on_both_feet(sequence):
            break
    assert on_both_feet(sequence)
    assert sequence != random_sequence(np.random.default_rng(seed), 20)
    run = perform(sequence)
    assert not run.fell, f"fell at {run.fall_time:.2f} s in {run.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(run)
    releve = on_both_feet(sequence)[0]
    toes_only = np.array([name.startswith("toe") for name in run.contact_bodies])
    assert np.all(run.in_contact[run.step_window(releve, 1e9)] == toes_only, axis=1).sum() > 200


def test_an_extension_after_the_upright_weight_shift_lifts_its_foot_with_the_weight_over_the_other():
    # The upright weight shift from first ends with the COM 2.4 cm inside the supporting ankle and the
    # other foot still loaded; the developpe brings the weight over the supporting foot before the other
    # lifts (it lifted 0.6 s in with the COM 4.0-4.4 cm off its target; 0.7-0.8 measured now).
    sequence = ["first_position", "weight_shift:right", "tendu_side:left", "developpe_side_90:left",
                "weight_shift:left", "developpe_side_90:right"]
    run = perform(sequence)
    assert not run.fell, f"fell at {run.fall_time:.2f} s in {run.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(run)
    _, start, end = run.phase_times[-1]
    right = [j for j, body in enumerate(run.contact_bodies) if body.endswith(".R")]
    off = np.nonzero((run.times >= start) & (run.times <= end) & ~run.in_contact[:, right].any(axis=1))[0][0]
    assert np.linalg.norm(run.com[off, :2] - run.com_targets[off]) < 0.02


def test_the_developpe_after_a_weight_shift_onto_a_hovering_foot_late_in_a_long_draw_completes():
    # Seed 5 of the random draw from first (to its 18th step): held before the landing's pelvis roll and
    # the upright shift's port de bras were both in, then fell at 124.1 s as the right foot lifted (the
    # left toes came up and the foot slid). No shorter sequence found that falls.
    sequence = ["first_position", "demi_plie:left", "tendu_back:right", "grand_plie:left",
                "tendu_front:left", "grand_plie:left", "tendu_front:right", "demi_plie:left",
                "demi_plie:left", "tendu_back:right", "tendu_side:left", "demi_plie:right",
                "weight_shift:right", "tendu_side:left", "tendu_side:left", "developpe_side_90:left",
                "weight_shift:left", "developpe_side_90:right"]
    run = perform(sequence)
    assert not run.fell, f"fell at {run.fall_time:.2f} s in {run.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(run)


# Seeded random draws (random_sequence(np.random.default_rng(seed), 20, start=POSITIONS[seed % 5]) as
# drawn in session 8) that fell in a tendu front while it was a battement: seed 21 at 159.3 s (second,
# the right leg's many tendus and extensions), seed 43 at 40.4 s (from fourth through third into fifth,
# after a grand plie there). With the toes sliding along the floor both hold (worst COM margin in a
# step's last second 3.7 and 2.5 cm).
TENDU_DRAWS = {
    21: ("second_position", "grand_plie:left", "weight_shift:left", "tendu_side:right",
         "developpe_front_90:right", "tendu_back:right", "arabesque_45:right", "developpe_front_45:right",
         "tendu_front:right", "tendu_front:right", "arabesque_45:right", "arabesque_45:right",
         "tendu_back:right", "developpe_front_90:right", "tendu_back:right", "developpe_side_90:right",
         "tendu_side:right", "tendu_back:right", "tendu_front:right", "arabesque_45:right"),
    43: ("fourth_position", "third_position", "demi_plie:right", "demi_plie:right", "third_position",
         "fifth_position", "grand_plie:right", "tendu_front:right", "weight_shift:right",
         "developpe_side_45:left", "retire:left", "arabesque_45:left", "developpe_side_90:left",
         "developpe_side_45:left", "developpe_side_45:left", "developpe_front_45:left",
         "developpe_side_90:left", "releve:left", "pivot_quarter:left", "pivot_quarter:left"),
}


@pytest.mark.parametrize("seed", sorted(TENDU_DRAWS))
def test_seeded_draws_that_fell_in_the_battement_complete_with_the_real_tendu(seed):
    run = perform(TENDU_DRAWS[seed])
    assert not run.fell, f"fell at {run.fall_time:.2f} s in {run.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(run)


@pytest.mark.parametrize("sequence", [
    ("first_position", "demi_plie:left", "demi_plie:left", "tendu_front:right", "tendu_front:left",
     "tendu_front:left", "first_position", "fifth_position", "fifth_position", "demi_plie:left",
     "grand_plie:right", "tendu_side:left", "tendu_back:left", "demi_plie:left", "fifth_position",
     "tendu_back:left", "tendu_front:right", "fifth_position", "second_position"),
    ("third_position", "demi_plie:right", "tendu_back:right", "fifth_position", "grand_plie:left",
     "demi_plie:right", "fifth_position", "first_position", "second_position"),
], ids=["first seed 20", "third seed 1"])
def test_seeded_draws_that_fell_in_their_change_into_second_complete(sequence):
    # Session 7's sweep (seeds 0-49, 20 steps): seed 20 from first fell at 131.6 s in its change from fifth
    # into second, and seed 1 from third at 52.5 s in its change from first into second, both as the foot
    # landed: the supporting leg's fondu sags the pelvis 4-5 cm out over it, the landing leg solved for the
    # targets' pelvis set its foot down 1.3-3.6 cm short of its place and, straight, pushed the COM off the
    # supporting foot. Since the real tendu (2b17e4c) the feet stand a little differently before the change
    # and both complete, the landing itself unchanged and still marginal (planting the foot where it touches
    # down held these but made the fourth-start draw below fall: see issue 18's notes, session 8).
    run = perform(sequence)
    assert not run.fell, f"fell at {run.fall_time:.2f} s in {run.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(run)


@pytest.mark.parametrize("start", ["second_position", "third_position", "fourth_position", "fifth_position"])
def test_a_seeded_random_twenty_step_sequence_from_another_position_completes(start):
    # The weight shift and the one-foot steps from second to fifth (closed-chain weight shift but
    # onto the back foot of fourth, the supporting leg straightened before the free leg moves).
    from addon.dancer import random_sequence

    # The draw changes whenever a step becomes legal: the first seed from 2026 whose draw has a one-foot
    # step (from third and fifth 2027 since their front foot's tendu back from both feet became legal).
    for seed in range(2026, 2036):
        sequence = random_sequence(np.random.default_rng(seed), 20, start=start)
        if {"weight_shift", "retire"} & {step.split(":")[0] for step in sequence}:
            break
    assert {"weight_shift", "retire"} & {step.split(":")[0] for step in sequence}
    run = perform(sequence)
    assert not run.fell, f"fell at {run.fall_time:.2f} s in {run.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(run)


@pytest.mark.parametrize("sequence", [
    ("first_position", "weight_shift", "tendu_side", "weight_shift:right", "tendu_front:left",
     "weight_shift:left", "retire:right", "releve:right"),
    ("third_position", "weight_shift", "tendu_back", "weight_shift:right", "arabesque_45:left",
     "weight_shift:left", "retire:right", "releve:right"),
    ("fifth_position", "weight_shift:right", "tendu_side:left", "weight_shift:left", "tendu_back:right",
     "weight_shift:right", "retire:left", "releve:left"),
], ids=["first", "third", "fifth"])
def test_the_weight_shifts_back_onto_a_hovering_foot_set_down_on_its_place(sequence):
    # A one-foot tendu (or extension) leaves its foot just above the floor; the weight shift back onto
    # it brings the foot over its spot, the closed chain sets it down with the weight to the middle,
    # and the weight goes over; on either leg, then the other leg's retire and releve.
    run = perform(sequence)
    assert not run.fell, f"fell at {run.fall_time:.2f} s in {run.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(run)

    def apart(tick):
        return _feet_apart(run, tick)

    for index in (3, 5):
        side = sequence[index].split(":")[1][0].upper() if ":" in sequence[index] else "L"
        end = np.searchsorted(run.times, run.phase_times[index][2]) - 1
        # Both feet flat on the floor where the position has them, as after a change of position
        # (measured up to 2.0 cm, in fifth after the second shift; there both feet also slide about
        # 3 cm back together), at standing height ...
        assert np.linalg.norm(apart(end)[:2] - apart(0)[:2]) < 0.025, sequence[index]
        for foot in ("L", "R"):
            assert run.joint_positions[f"foot.{foot}"][end, 2] == pytest.approx(
                run.joint_positions[f"foot.{foot}"][0, 2], abs=0.003), (sequence[index], foot)
        # ... and the weight over the foot that took it.
        polygon = [run.contact_bodies.index(name) for name in (f"foot.{side}", f"toe.{side}")]
        assert run.in_contact[end, polygon].all(), sequence[index]
        assert np.linalg.norm(run.com[end, :2] - run.com_targets[end]) < 0.015, sequence[index]


# In second the one-foot steps leave the free foot under its own hip, 24 cm inside its wide place; the
# weight shift back onto it carries it out there first, as a change into second carries its moving foot
# (steps.CARRIED_TO_ITS_PLACE). Brought over the place by IK alone it was thrown 35 cm forward and 28 cm up
# and the dancer fell at 1.1-2.0 m (11.9 s in at 1.65 m). Seeded draw 6 of 0-59 picks it after an arabesque.
HOVER_IN_SECOND = {
    "tendu side": ("second_position", "weight_shift:left", "tendu_side:right", "weight_shift:right",
                   "retire:left"),
    "left tendu side": ("second_position", "weight_shift:right", "tendu_side:left", "weight_shift:left",
                        "retire:right"),
    "developpe": ("second_position", "weight_shift:left", "developpe_side_90:right", "weight_shift:right",
                  "retire:left"),
    "tendu front, standing, first": ("second_position", "weight_shift:left", "tendu_front:right",
                                     "weight_shift:right", "second_position", "first_position"),
    "arabesque": ("second_position", "weight_shift:left", "arabesque_45:right", "weight_shift:right",
                  "tendu_front:left"),
}


@pytest.mark.parametrize("height", [1.1, 1.3, 1.65, 2.0])
@pytest.mark.parametrize("name", sorted(HOVER_IN_SECOND))
def test_the_weight_shifts_back_onto_a_foot_hovering_in_second_carried_to_its_wide_place(name, height):
    sequence = HOVER_IN_SECOND[name]
    show = perform(sequence, height=height)
    assert not show.fell, f"fell at {show.fall_time:.2f} s in {show.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(show)
    # After the shift the feet stand as second has them, within 2.5 cm as after a change into second
    # (0.4-1.7 cm measured; after the arabesque 1.5 at 1.65 m, 2.6 at 2.0 m), both flat on the floor.
    fresh = perform(("second_position",), height=height, durations={"position": 0.5})
    end = np.searchsorted(show.times, show.phase_times[3][2]) - 1
    off = 0.03 if name == "arabesque" else 0.025
    assert np.linalg.norm(_feet_apart(show, end)[:2] - _feet_apart(fresh, -1)[:2]) < off
    for foot in ("foot.L", "foot.R"):
        standing = fresh.joint_positions[foot][-1, 2]
        assert show.joint_positions[foot][end, 2] == pytest.approx(standing, abs=0.003), foot
    # The weight over the foot that took it.
    side = sequence[3].split(":")[1][0].upper()
    polygon = [show.contact_bodies.index(body) for body in (f"foot.{side}", f"toe.{side}")]
    assert show.in_contact[end, polygon].all()


def test_the_weight_shift_from_one_foot_to_the_other_in_second_is_over_the_foot_for_its_last_second():
    # Seed 61 of the draw from second, to its fifth step: straight across second's wide feet in 3 s the
    # COM was still 12 cm short of the right foot as the step's last second began, and the unloaded left
    # foot, light, left the floor for a tick with the COM 1.7 cm outside the right foot alone. In 4 s
    # (ACROSS_SECONDS) it is 2.9 cm from its target half a second before the end (7.0 cm in 3 s).
    sequence = ("second_position", "second_position", "second_position", "weight_shift:left",
                "weight_shift:right")
    run = perform(sequence)
    assert not run.fell, f"fell at {run.fall_time:.2f} s in {run.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(run)
    _, start, end = run.phase_times[-1]
    assert end - start == pytest.approx(4.0)
    last = np.nonzero(run.step_window(len(sequence) - 1, 0.5))[0]
    assert np.linalg.norm(run.com[last, :2] - run.com_targets[last], axis=1).max() < 0.04


def test_the_weight_shift_onto_a_hovering_foot_is_refused_where_it_falls():
    # Refused in second until the foot was carried out to its wide place first (HOVER_IN_SECOND above).
    # In fourth onto either foot (tried in session 10: onto the front foot it falls at 1.1 and 1.3 m,
    # onto the back foot at 1.1-2.0 m).
    for sequence in (("fourth_position", "weight_shift", "tendu_side", "weight_shift:right"),
                     ("fourth_position", "weight_shift:right", "tendu_side:left", "weight_shift:left")):
        with pytest.raises(DancerError, match="shifting the weight back onto it in fourth_position .*1.1"):
            perform(sequence)


def test_the_knee_of_a_foot_set_down_in_first_ends_straight():
    # Each tendu from both feet closes its foot by the closed chain, and the change back into first
    # sets the right foot down there: the pelvis rolls a little so both legs stand straight (level at
    # the more stretched leg's height, the landed knee stayed bent 11.2-12.5 degrees after the tendus
    # and 5.8 after the change; rolled, 1.5-1.6).
    show = perform(("first_position", "tendu_front:right", "tendu_side:left", "tendu_back:right",
                    "third_position", "first_position"))
    assert not show.fell, f"fell at {show.fall_time:.2f} s in {show.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(show)
    for step in (1, 2, 3, 5):
        tick = np.searchsorted(show.times, show.phase_times[step][2]) - 1
        for side in ("L", "R"):
            knee = show.rotations[f"shin.{side}"][tick]
            assert np.degrees(2.0 * np.arccos(min(1.0, abs(knee[0])))) < 3.0, (step, side)
