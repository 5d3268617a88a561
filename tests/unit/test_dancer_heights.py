"""Changes into second and the relevé on one foot at 1.1-2.0 m: danced, or refused where they fell."""

import functools

import numpy as np
import pytest

from addon.dancer import DEFAULT_SEQUENCE, DancerError, perform, plan
from tests.unit.test_dancer_perform import _com_inside_for_the_last_second_of_every_step, _feet_apart

HEIGHTS = (1.1, 1.3, 1.65, 2.0)
INTO_SECOND = {"first": ("first_position", "second_position", "weight_shift:left", "retire:right"),
               "third": ("third_position", "second_position", "weight_shift:right", "retire:left"),
               "fifth": ("fifth_position", "second_position", "weight_shift:right", "retire:left")}


def _apart(show, tick):
    return show.joint_positions["foot.R"][tick, :2] - show.joint_positions["foot.L"][tick, :2]


@functools.cache
def _into_second(start, height):
    return perform(INTO_SECOND[start], height=height)


@functools.cache
def _second(height):
    return perform(("second_position",), height=height, durations={"position": 0.5})


# Before perform.SAG_ONLY the change alone fell from first at 1.1 m (9.8 s in), from third at 1.3 m (9.3 s),
# from fifth at 1.1 m (9.1 s), and at other heights between 1.1 and 2.3 m.
@pytest.mark.parametrize("height", HEIGHTS)
@pytest.mark.parametrize("start", sorted(INTO_SECOND))
def test_a_change_into_second_and_a_retire_after_it_are_danced_at_every_height(start, height):
    show = _into_second(start, height)
    assert not show.fell, f"fell at {show.fall_time:.2f} s"
    _com_inside_for_the_last_second_of_every_step(show)


# Measured off second's places (the right ankle relative to the left): from first 0.4-1.4 cm at 1.1-2.0 m.
# From third and fifth the right foot landed 0.7-2.2 cm behind its place (off by 0.8-2.1 cm from third,
# 1.2-2.6 from fifth) because the dancer had turned 2.1-2.7 degrees clockwise on the floor standing in fifth
# and shifting the weight there (see perform.BACK_FOOT_COMPLIANCE); now from third 0.4-1.4 cm, from fifth
# 0.4-1.4 cm (0.42, 0.61, 1.00, 1.37 cm at 1.1, 1.3, 1.65, 2.0 m).
@pytest.mark.parametrize(("start", "height"),
                         [(start, height) for start in sorted(INTO_SECOND) for height in HEIGHTS])
def test_a_change_into_second_sets_the_foot_on_its_place(start, height):
    show = _into_second(start, height)
    tick = np.searchsorted(show.times, show.phase_times[1][2]) - 1
    # The right ankle relative to the left as in second, within 2.5 cm (as at 1.65 m in test_dancer_perform).
    assert np.linalg.norm(_apart(show, tick) - _apart(_second(height), -1)) < 0.025


# Standing in fifth and shifting the weight onto the back foot there, the dancer turned clockwise on the floor
# (the split legs' spread twisted both turned-out feet: see perform.BACK_FOOT_COMPLIANCE): the pelvis 2.8-2.9
# degrees by the end of the change into second at 1.1, 1.65 and 2.0 m, now 0.1-0.8.
@pytest.mark.parametrize("height", HEIGHTS)
def test_the_dancer_does_not_turn_on_the_floor_from_fifth_into_second(height):
    from addon import quaternions

    show = _into_second("fifth", height)
    tick = np.searchsorted(show.times, show.phase_times[1][2]) - 1
    pelvis = quaternions.to_matrix(show.rotations["hips"][tick])
    assert abs(np.degrees(np.arctan2(pelvis[1, 0], pelvis[0, 0]))) < 1.2


# The relevé on one foot straight from a position fell at 1.1-1.27 m (the paper's sequence at 1.1 m 11.45 s
# in, from second 13.5 s, from fifth 13.3 s: the ball chattered on the floor as the heel rose and slid back
# 6 cm) and was refused there until perform.FINE_STEP_BELOW.
RELEVE_ON_ONE_FOOT = {"paper": DEFAULT_SEQUENCE,
                      "second": ("second_position", "weight_shift:right", "retire:left", "releve:left"),
                      "fifth": ("fifth_position", "weight_shift:left", "retire:right", "releve:right")}


@pytest.mark.parametrize("height", [1.1, 1.2, 1.25])
@pytest.mark.parametrize("start", sorted(RELEVE_ON_ONE_FOOT))
def test_a_short_dancer_rises_onto_one_ball_and_holds_it(start, height):
    show = perform(RELEVE_ON_ONE_FOOT[start], height=height)
    assert not show.fell, f"fell at {show.fall_time:.2f} s"
    _com_inside_for_the_last_second_of_every_step(show)
    _, rise, end = show.phase_times[-1]
    side = show.supports[-1]
    during = (show.times >= rise) & (show.times <= end)
    # Up on the ball at the end: only the supporting toes on the floor, the ankle higher than standing.
    last = np.nonzero(during)[0][-1]
    on_the_ball = np.array([name == f"toe.{side}" for name in show.contact_bodies])
    assert (show.in_contact[last] == on_the_ball).all()
    ankle = show.joint_positions[f"foot.{side}"][:, 2]
    assert ankle[last] > ankle[np.nonzero(during)[0][0]] + 0.04 * height
    # The ball stays where it stood (1 mm at 1.1-1.25 m; before the fine step it slid back 6 cm and fell).
    ball = show.joint_positions[f"toe.{side}"][during, :2]
    assert np.linalg.norm(ball - ball[0], axis=1).max() < 0.01


@pytest.mark.parametrize("position", ["first_position", "second_position", "third_position",
                                      "fourth_position", "fifth_position"])
def test_the_releve_on_one_foot_is_legal_for_a_short_dancer(position):
    for height in (1.1, 1.15, 1.2, 1.25):
        plan((position, "weight_shift:left", "retire:right", "releve:right"), height=height)
        plan((position, "weight_shift:right", "retire:left", "releve:left"), height=height)


@pytest.mark.parametrize(("position", "height"), [("second_position", 1.3), ("second_position", 2.0),
                                                  ("first_position", 1.3), ("fifth_position", 1.3)])
def test_the_releve_on_one_foot_holds_at_other_heights(position, height):
    show = perform((position, "weight_shift:left", "retire:right", "releve:right"), height=height)
    assert not show.fell, f"fell at {show.fall_time:.2f} s"
    _com_inside_for_the_last_second_of_every_step(show)


def test_a_seeded_draw_for_a_short_dancer_is_legal_at_that_height_and_completes():
    from addon.dancer import POSITIONS, random_sequence

    # Draw 6 (from second) reaches the relevé on one foot in second and three quarter pivots on that ball. It
    # fell at 1.1 m (179.6 s in) and was refused there, so drawn for 1.1 m it was another sequence; now the
    # relevé holds, the draw is the same at 1.1 m and completes.
    sequence = random_sequence(np.random.default_rng(6), 20, start=POSITIONS[6 % 5], height=1.1)
    assert sequence == random_sequence(np.random.default_rng(6), 20, start=POSITIONS[6 % 5])
    assert "releve:left" in sequence
    run = perform(sequence, height=1.1)
    assert not run.fell, f"fell at {run.fall_time:.2f} s"
    assert [name for name, _, _ in run.phase_times] == sequence
    _com_inside_for_the_last_second_of_every_step(run)


@pytest.mark.parametrize("tendu", ["tendu_front", "tendu_side", "tendu_back"])
def test_the_front_foot_tendu_from_both_feet_in_fifth_is_legal_for_short_dancers(tendu):
    # At the model's step at 1.1-1.25 m it ended with the COM 1-13 cm outside the feet and a plie after it
    # fell at 1.1-1.2 m, and it was refused there (steps.TENDU_FROM_BOTH_FEET_FAILS_AT); with
    # perform.FINE_STEP_BELOW it holds (below) and since the plies after a change into second go by the chain
    # the seeded draws picking it at 1.15-1.25 m complete. At 1.1 m seeded draw 14 (the tendu to the side
    # after two and a grand plie) ended 2.3 cm outside the feet and it stayed refused there until the foot
    # closed down flat before the weight went to the middle (steps.LAND_FLAT_TENDU): 4.0 cm inside.
    for height in (1.1, 1.15, 1.2, 1.25):
        plan(("fifth_position", f"{tendu}:right", "demi_plie"), height=height)
    plan(("fifth_position", f"{tendu}:left"), height=1.1)
    plan(("fifth_position", "weight_shift:left", f"{tendu}:right"), height=1.1)


@pytest.mark.parametrize("height", [1.1, 1.25])
def test_seeded_draw_14s_front_foot_tendus_in_fifth_hold_for_a_short_dancer(height):
    sequence = ("fifth_position", "tendu_side:right", "tendu_side:right", "grand_plie", "tendu_side:right")
    show = perform(sequence, height=height)
    assert not show.fell, f"fell at {show.fall_time:.2f} s"
    _com_inside_for_the_last_second_of_every_step(show)
    fresh = perform(("fifth_position",), height=height, durations={"position": 0.5})
    assert np.linalg.norm(_feet_apart(show, -1)[:2] - _feet_apart(fresh, -1)[:2]) < 0.015 * height / 1.65


# Every tick below perform.FINE_STEP_BELOW in the fine step: the COM ends 2.3-4.9 cm inside over the last
# second of each step at 1.1-1.25 m (the tendus front, side and back; every 5 cm); at the model's step the
# tendu front and the plie fell at 1.1-1.2 m and ended 2.8 cm outside at 1.25 m. Closed down flat below 1.5 m
# (steps.LAND_FLAT_TENDU) the tendus front and back and the plie at 1.1 m: 4.0 cm inside.
FIFTH_TENDUS = [("tendu_front", 1.1), ("tendu_front", 1.15), ("tendu_front", 1.25), ("tendu_side", 1.1),
                ("tendu_back", 1.1), ("tendu_front", 1.3), ("tendu_front", 2.0)]


@pytest.mark.parametrize(("tendu", "height"), FIFTH_TENDUS)
def test_the_front_foot_tendu_from_both_feet_in_fifth_and_a_plie_hold(tendu, height):
    show = perform(("fifth_position", f"{tendu}:right", "demi_plie"), height=height)
    assert not show.fell, f"fell at {show.fall_time:.2f} s"
    _com_inside_for_the_last_second_of_every_step(show)
    # The feet stay on fifth's places (the working foot back where it left).
    fresh = perform(("fifth_position",), height=height, durations={"position": 0.5})
    assert np.linalg.norm(_feet_apart(show, -1)[:2] - _feet_apart(fresh, -1)[:2]) < 0.015 * height / 1.65


def test_first_into_fifth_with_the_right_foot_is_legal_for_short_dancers():
    # Of all the changes straight from a position at 1.1 m only this one fell (8.95 s in; after a plie
    # 13.0-15.5 s); it held at 1.15-2.0 m. With the fine step it held alone (below) but seeded draw 44 for
    # 1.1 m still fell in it after a demi plie (47.3 s in) and it stayed refused there until the foot was set
    # down as slowly as the back foot into fifth (steps.LAND_FLAT_BELOW; below).
    for sequence in (("first_position", "fifth_position"), ("first_position", "demi_plie", "fifth_position")):
        plan(sequence, height=1.1)
        plan(sequence, height=1.15)
    plan(("first_position", "weight_shift:right", "fifth_position"), height=1.1)


def test_seeded_draw_44s_change_from_first_into_fifth_after_a_plie_holds_for_a_short_dancer():
    sequence = ("fifth_position", "tendu_side:left", "grand_plie:left", "grand_plie:right", "first_position",
                "demi_plie:right", "fifth_position")
    show = perform(sequence, height=1.1)
    assert not show.fell, f"fell at {show.fall_time:.2f} s"
    _com_inside_for_the_last_second_of_every_step(show)
    fresh = perform(("fifth_position",), height=1.1, durations={"position": 0.5})
    assert np.linalg.norm(_feet_apart(show, -1)[:2] - _feet_apart(fresh, -1)[:2]) < 0.015 * 1.1 / 1.65


@pytest.mark.parametrize("height", [1.1, 1.15, 1.25])
def test_first_into_fifth_with_the_right_foot_holds_with_the_fine_step(height):
    # At 1.1 m it fell 8.95 s in at the model's step (refused there until session 12, see
    # steps.TRANSITION_FELL_AT); with every tick in the fine step (perform.FINE_STEP_BELOW) the COM ended
    # 4.0 cm inside (3.9 after a demi plie; 2.8 cm with a retire after it); set down slower below 1.5 m since.
    show = perform(("first_position", "fifth_position", "weight_shift:left", "retire:right"), height=height)
    assert not show.fell, f"fell at {show.fall_time:.2f} s"
    _com_inside_for_the_last_second_of_every_step(show)
    fresh = perform(("fifth_position",), height=height, durations={"position": 0.5})
    tick = np.searchsorted(show.times, show.phase_times[1][2]) - 1
    assert np.linalg.norm(_feet_apart(show, tick)[:2] - _feet_apart(fresh, -1)[:2]) < 0.015 * height / 1.65


@pytest.mark.parametrize("height", [1.1, 1.15, 1.25])
def test_fifth_into_fourth_with_the_right_foot_holds_with_the_fine_step(height):
    # At 1.15 m it fell 10.2 s in at the model's step (refused there until session 12, see
    # steps.TRANSITION_FELL_AT); with every tick in the fine step the COM ends 3.8 cm inside at 1.14-1.16 m.
    show = perform(("fifth_position", "fourth_position"), height=height)
    assert not show.fell, f"fell at {show.fall_time:.2f} s"
    _com_inside_for_the_last_second_of_every_step(show)
    fresh = perform(("fourth_position",), height=height, durations={"position": 0.5})
    assert np.linalg.norm(_feet_apart(show, -1)[:2] - _feet_apart(fresh, -1)[:2]) < 0.015 * height / 1.65


# Rising from a grand plie after a change into second (solved once for the pelvis going straight down, the
# legs back to the angles they started on) the pelvis rolled 9 degrees and the dancer fell from third at
# 1.1-1.2 m (18.9-19.1 s in; seeded draws 14 and 40 for 1.1 m, 127.4 and 111.1 s); by the chain
# (steps.PLIE_BY_CHAIN_AFTER_A_CHANGE) the plies hold and the feet stay where the change set them.
INTO_SECOND_FROM = ("first_position", "third_position", "fifth_position")


@pytest.mark.parametrize(("start", "height"), [(start, height) for start in INTO_SECOND_FROM
                                               for height in (1.1, 1.15, 1.25)] + [("third_position", 2.0)])
def test_plies_after_a_change_into_second_hold_by_the_chain(start, height):
    show = perform((start, "second_position", "demi_plie", "grand_plie"), height=height)
    assert not show.fell, f"fell at {show.fall_time:.2f} s in {show.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(show)
    landed = np.searchsorted(show.times, show.phase_times[1][2]) - 1
    for foot in ("foot.L", "foot.R"):
        moved = show.joint_positions[foot][-1, :2] - show.joint_positions[foot][landed, :2]
        assert np.linalg.norm(moved) < 0.01 * height / 1.65, foot


# From a sweep of every change straight from its position every 5 cm over 1.1-2.3 m (the left foot's after a
# weight shift onto the right): where the changes that still fall are refused, and that they hold just beside.
@pytest.mark.parametrize(("sequence", "fell_at", "held_at"), [
    (("third_position", "weight_shift:right", "fourth_position"), 1.75, (1.65, 1.85)),
    (("first_position", "weight_shift:right", "fourth_position"), 2.1, (2.0,)),
])
def test_other_changes_are_refused_where_they_fell_and_hold_beside(sequence, fell_at, held_at):
    with pytest.raises(DancerError, match=rf"{sequence[0]} to fourth_position with the .* fell at"):
        plan(sequence, height=fell_at)
    for height in held_at:
        show = perform(sequence, height=height)
        assert not show.fell, f"{height} m: fell at {show.fall_time:.2f} s"
        _com_inside_for_the_last_second_of_every_step(show)


# The back foot's tendus from both feet in fourth at 1.1-1.25 m, refused there until session 12: at 1.1 m
# after standing again the weight shift onto the front foot after the tendu back ended 13.6 cm outside the
# polygon; after the tendu to the side it fell after standing again (1.1, 1.15 m), ended 17.9 cm outside at
# 1.25 m after a weight shift and back, 9.4 cm after the change from first at 1.1 m. Re-measured: the COM
# 1.2-6.2 cm inside over the last second of each step (every 5 cm, straight, after standing, a weight shift
# and back, the changes from first, third and fifth, standing or the weight shifts after it).
@pytest.mark.parametrize(("sequence", "height"), [
    (("fourth_position", "fourth_position", "tendu_back:left", "weight_shift:right"), 1.1),
    (("fourth_position", "fourth_position", "tendu_side:left", "weight_shift:right"), 1.15),
    (("fourth_position", "weight_shift:left", "fourth_position", "tendu_side:left", "weight_shift:right"),
     1.25),
    (("first_position", "fourth_position", "tendu_side:left", "weight_shift:right"), 1.1),
    (("fourth_position", "tendu_side:left", "fourth_position", "weight_shift:right"), 1.2),
])
def test_the_back_foots_tendus_from_both_feet_in_fourth_hold_for_short_dancers(sequence, height):
    plan(sequence, height=height)
    show = perform(sequence, height=height)
    assert not show.fell, f"fell at {show.fall_time:.2f} s in {show.phase_times[-1][0]}"
    _com_inside_for_the_last_second_of_every_step(show)


# Seeded draw 59's first six steps: the right foot, hovering after the developpes, is set down by the weight
# shift onto it. Lowered in half a second with the weight going to the middle as it landed, at 1.1 m the
# landing toes struck first, the left toes came up, the contacts chattered and the dancer fell 46.75 s in
# (1.15, 1.2 m held 2.3 cm inside); below steps.LAND_FLAT_BELOW the foot is lowered in 2 s with the weight
# kept over the left foot, then goes to the middle: 2.1-2.4 cm inside at 1.1-1.25 m.
HOVER_SHIFT = ("fifth_position", "weight_shift:left", "tendu_front:right", "developpe_front_90:right",
               "developpe_side_45:right", "weight_shift:right")


@pytest.mark.parametrize("height", [1.1, 1.15, 1.25])
def test_a_short_dancer_sets_the_hovering_foot_down_flat_before_the_weight_goes_over(height):
    show = perform(HOVER_SHIFT, height=height)
    assert not show.fell, f"fell at {show.fall_time:.2f} s"
    _com_inside_for_the_last_second_of_every_step(show)
    fresh = perform(("fifth_position",), height=height, durations={"position": 0.5})
    assert np.linalg.norm(_feet_apart(show, -1)[:2] - _feet_apart(fresh, -1)[:2]) < 0.015 * height / 1.65


def test_seeded_draw_59_for_a_short_dancer_completes():
    from addon.dancer import POSITIONS, random_sequence

    sequence = random_sequence(np.random.default_rng(59), 20, start=POSITIONS[59 % 5], height=1.1)
    assert tuple(sequence[:len(HOVER_SHIFT)]) == HOVER_SHIFT
    run = perform(sequence, height=1.1)
    assert not run.fell, f"fell at {run.fall_time:.2f} s"
    _com_inside_for_the_last_second_of_every_step(run)
