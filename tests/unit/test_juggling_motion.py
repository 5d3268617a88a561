"""Physics and geometry invariants of the juggling planner (no Blender)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from addon.geometry.rotation import quaternion_multiply, quaternion_to_matrix
from addon.juggling import parse_siteswap, plan_pattern
from addon.juggling.body import Body, arm_pose_quaternions, rest_skeleton
from addon.juggling.motion import PROP_LENGTHS, Pattern
from addon.juggling.paths import GRAVITY, MotionError, parse_dwell_paths
from addon.quaternions import from_axis_angle as axis_angle_quaternions

MILLS_MESS = "(2.5,5)(-30,5).(-2.5,-10)(30,-10).(0,-10)(-30,-10)"


def plan(text: str, **kwargs) -> Pattern:
    return plan_pattern(parse_siteswap(text), **kwargs)


def in_flight(pattern: Pattern, times: np.ndarray, prop: int, margin: float = 1e-3) -> np.ndarray:
    """Mask of the times (taken modulo the loop) at which ``prop`` is in the air."""
    t = np.mod(times, pattern.loop_duration)
    mask = np.zeros(len(t), dtype=bool)
    for flight in pattern.flights:
        if flight.prop != prop:
            continue
        for shift in (-pattern.loop_duration, 0.0, pattern.loop_duration):
            mask |= (t > flight.throw_time + shift + margin) & (t < flight.catch_time + shift - margin)
    return mask


@pytest.mark.parametrize("text", ["3", "531", "(4,4)", "24[54]", "<3p|3p>", "5B"])
def test_props_in_flight_accelerate_at_gravity(text: str) -> None:
    pattern = plan(text)
    h = 1e-3
    t = np.linspace(0.0, pattern.loop_duration, 500, endpoint=False)
    before, now, after = (pattern.prop_positions(t + d) for d in (-h, 0.0, h))
    acceleration = (after - 2 * now + before) / h**2
    checked = 0
    for prop in range(pattern.num_props):
        # Keep the three samples on one arc (not across a bounce or a catch).
        mask = in_flight(pattern, t, prop, margin=2 * h)
        for flight in pattern.flights:
            for arc in flight.arcs[:-1]:
                mask &= np.abs(np.mod(t - arc.t1, pattern.loop_duration)) > 2 * h
                mask &= np.abs(np.mod(t - arc.t1, pattern.loop_duration) - pattern.loop_duration) > 2 * h
        np.testing.assert_allclose(acceleration[prop, mask], [[0.0, 0.0, -GRAVITY]] * mask.sum(), atol=1e-3)
        checked += mask.sum()
    assert checked > 100


def test_a_throw_of_n_flies_n_minus_dwell_beats_and_ones_leave_early() -> None:
    pattern = plan("3", beat_duration=0.25, dwell_ratio=1.2)
    for flight in pattern.flights:
        assert flight.catch_time - flight.throw_time == pytest.approx((3 - 1.2) * 0.25)
    pattern = plan("51", beat_duration=0.25, dwell_ratio=1.3)
    ones = [f for f in pattern.flights if f.value == 1]
    fives = [f for f in pattern.flights if f.value == 5]
    assert ones and fives
    for flight in ones:
        # Juggling Lab: a 1 leaves max(0, dwell + 0.3 - 1) = 0.6 beats early and flies 0.3 beats.
        assert flight.throw_time / 0.25 % 1 == pytest.approx(1 - 0.6)
        assert flight.catch_time - flight.throw_time == pytest.approx(0.3 * 0.25)
    for flight in fives:
        assert flight.catch_time - flight.throw_time == pytest.approx((5 - 1.3) * 0.25)


@pytest.mark.parametrize("prop_type", ["ball", "club", "ring"])
@pytest.mark.parametrize("text", ["3", "441", "<3p|3p>", "(4,2x)(2x,4)"])
def test_each_prop_sits_in_a_hand_throughout_its_dwell(text: str, prop_type: str) -> None:
    pattern = plan(text, prop_type=prop_type)
    t = np.linspace(0.0, pattern.loop_duration, 700, endpoint=False)
    grips = pattern.grip_positions(t)
    hands = pattern.hand_positions(t).reshape(-1, len(t), 3)
    held_samples = 0
    for prop in range(pattern.num_props):
        held = ~in_flight(pattern, t, prop, margin=-1e-9)
        gaps = np.linalg.norm(grips[prop][None, :, :] - hands, axis=-1).min(axis=0)
        np.testing.assert_allclose(gaps[held], 0.0, atol=1e-9)
        held_samples += held.sum()
        # ... and in the air it really is away from the hands at mid-flight.
    assert held_samples > 0
    for flight in pattern.flights:
        mid = 0.5 * (flight.throw_time + flight.catch_time)
        grip = pattern.grip_positions([mid])[flight.prop, 0]
        assert np.linalg.norm(hands[:, 0] - grip, axis=-1).min() > 0.02 or flight.value <= 2


def test_hand_moves_with_the_prop_at_the_throw_and_along_it_at_the_catch() -> None:
    for text in ("3", "531", "<3p|3p>", "(4,4)"):
        pattern = plan(text, prop_type="club")
        for flight in pattern.flights:
            if flight.multiplex:
                continue
            launch = flight.arcs[0].v0
            hand_v = pattern.hand_velocities([flight.throw_time])[flight.from_juggler, flight.from_hand, 0]
            np.testing.assert_allclose(hand_v, launch, atol=1e-9)
            # The prop itself leaves continuously: its velocity just before equals just after.
            v_before = pattern.prop_velocities([flight.throw_time - 1e-6])[flight.prop, 0]
            v_after = pattern.prop_velocities([flight.throw_time + 1e-6])[flight.prop, 0]
            np.testing.assert_allclose(v_before, v_after, atol=1e-3)
            arrive = flight.arcs[-1].at(flight.catch_time)[1]
            hand_c = pattern.hand_velocities([flight.catch_time])[flight.to_juggler, flight.to_hand, 0]
            cosine = hand_c @ arrive / (np.linalg.norm(hand_c) * np.linalg.norm(arrive))
            assert cosine == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize("wing", [0.0, 0.4])
def test_upper_arm_and_forearm_lengths_are_constant(wing: float) -> None:
    pattern = plan("531", chicken_wing=wing)
    t = np.linspace(0.0, pattern.loop_duration, 400)
    shoulders = pattern.shoulder_positions(t)
    elbows = pattern.elbow_positions(t)
    hands = pattern.hand_positions(t)
    assert pattern.reach_warning is None
    np.testing.assert_allclose(np.linalg.norm(elbows - shoulders, axis=-1), pattern.body.upper_arm, atol=1e-9)
    np.testing.assert_allclose(np.linalg.norm(hands - elbows, axis=-1), pattern.body.forearm, atol=1e-9)


def test_out_of_reach_hands_keep_bone_lengths_and_are_reported_once() -> None:
    short_arms = Body(upper_arm=0.2, forearm=0.2)
    pattern = plan("7531", beat_duration=0.3, body=short_arms)
    assert pattern.reach_warning is not None and "reach" in pattern.reach_warning
    assert plan("7531", beat_duration=0.3).reach_warning is None
    t = np.linspace(0.0, pattern.loop_duration, 300)
    elbows = pattern.elbow_positions(t)
    np.testing.assert_allclose(
        np.linalg.norm(elbows - pattern.shoulder_positions(t), axis=-1), pattern.body.upper_arm, atol=1e-9
    )
    assert np.all(np.isfinite(elbows))


def test_zero_chicken_wing_hangs_the_elbow_lowest() -> None:
    pattern = plan("3")
    lifted = plan("3", chicken_wing=0.3)
    lowered = plan("3", chicken_wing=-0.3)
    t = np.linspace(0.0, pattern.loop_duration, 50)
    z = pattern.elbow_positions(t)[..., 2]
    assert np.all(z <= lifted.elbow_positions(t)[..., 2] + 1e-12)
    assert np.all(z <= lowered.elbow_positions(t)[..., 2] + 1e-12)
    # Positive chicken wing swings both elbows outward, away from the body.
    x = lifted.elbow_positions(t)[..., 0]
    assert np.all(x[0, 0] > pattern.elbow_positions(t)[0, 0, :, 0])  # left elbow further +X
    assert np.all(x[0, 1] < pattern.elbow_positions(t)[0, 1, :, 0])


@pytest.mark.parametrize("text", ["3", "531", "24[54]", "<3p|3p>", "5B", "(4,2x)(2x,4)", "42"])
def test_state_repeats_after_one_loop(text: str) -> None:
    pattern = plan(text, prop_type="club")
    t = np.linspace(0.0, pattern.loop_duration, 97)
    later = t + pattern.loop_duration
    np.testing.assert_allclose(pattern.prop_positions(t), pattern.prop_positions(later), atol=1e-9)
    q_now, q_later = pattern.prop_orientations(t), pattern.prop_orientations(later)
    dots = np.abs(np.sum(q_now * q_later, axis=-1))
    np.testing.assert_allclose(dots, 1.0, atol=1e-9)
    np.testing.assert_allclose(pattern.hand_positions(t), pattern.hand_positions(later), atol=1e-9)
    np.testing.assert_allclose(pattern.elbow_positions(t), pattern.elbow_positions(later), atol=1e-9)


def test_loop_is_when_every_prop_is_back_at_its_own_start() -> None:
    pattern = plan("3", beat_duration=0.3)
    # 3 balls, hands alternate: every prop has made 3 throws after 6 beats, not before.
    assert pattern.loop_beats == 6
    t = np.array([0.05])
    start = pattern.prop_positions(t)
    two_beats = pattern.prop_positions(t + 2 * pattern.beat_duration)
    assert not np.allclose(start, two_beats)
    # ... but the set of positions repeats every 2 beats (props swapped).
    assert np.allclose(np.sort(start[:, 0, 0]), np.sort(two_beats[:, 0, 0]))


def test_frame_rate_snaps_the_loop_to_whole_frames() -> None:
    pattern = plan("531", beat_duration=0.27, frame_rate=24.0)
    frames = pattern.loop_duration * 24.0
    assert frames == pytest.approx(round(frames), abs=1e-9)
    assert pattern.beat_duration == pytest.approx(0.27, rel=0.05)


def test_passes_land_in_the_other_jugglers_hand() -> None:
    pattern = plan("<3p|3p>")
    passes = [f for f in pattern.flights if f.is_pass]
    assert len(passes) >= 2
    for flight in passes:
        assert flight.to_juggler != flight.from_juggler
        grip = pattern.grip_positions([flight.catch_time])[flight.prop, 0]
        hand = pattern.hand_positions([flight.catch_time])[flight.to_juggler, flight.to_hand, 0]
        np.testing.assert_allclose(grip, hand, atol=1e-9)
        start = pattern.hand_positions([flight.throw_time])[flight.from_juggler, flight.from_hand, 0]
        # It really crossed to the partner: Juggling Lab's jugglers stand 1.40 m apart and each
        # juggles about 30 cm in front of the body, so the hands are 80 to 90 cm apart.
        assert np.linalg.norm(hand - start) > 0.75


def test_jugglers_face_each_other_or_the_circle_centre() -> None:
    two = plan("<3p|3p>")
    # Juggling Lab's circle of radius max(70, 65 / sin(theta / 2)) cm: 1.40 m for two jugglers.
    assert np.linalg.norm(two.juggler_origins[0] - two.juggler_origins[1]) == pytest.approx(1.4)
    three = plan("<3p2 3|3p3 3|3p1 3>")
    centre = three.juggler_origins.mean(axis=0)
    for j in range(3):
        forward = np.array([math.sin(three.juggler_yaws[j]), -math.cos(three.juggler_yaws[j]), 0.0])
        towards = centre - three.juggler_origins[j]
        assert forward @ towards / np.linalg.norm(towards) == pytest.approx(1.0)
    sides = [np.linalg.norm(three.juggler_origins[j] - three.juggler_origins[(j + 1) % 3]) for j in range(3)]
    # Three: radius 0.65 / sin(60 deg) = 0.7506 m, so neighbours are 2 r sin(60 deg) = 1.30 m apart.
    np.testing.assert_allclose(sides, 1.3)
    wide = plan("<3p|3p>", juggler_spacing=2.4)
    assert np.linalg.norm(wide.juggler_origins[0] - wide.juggler_origins[1]) == pytest.approx(2.4)
    assert sum(f.is_pass for f in three.flights) > 0


@pytest.mark.parametrize("kind", ["lift", "force", "hyperlift", "hyperforce"])
def test_bounces_touch_the_floor_and_lose_speed(kind: str) -> None:
    letters = {"lift": "B", "force": "BF", "hyperlift": "BHL", "hyperforce": "BHF"}[kind]
    pattern = plan(f"5{letters}", beat_duration=0.28, restitution=0.85)
    radius = PROP_LENGTHS["ball"] / 2
    bounced = [f for f in pattern.flights if f.bounces]
    assert bounced
    for flight in bounced:
        assert flight.bounces == 1
        first, second = flight.arcs
        impact = first.at(first.t1)
        assert impact[0][2] == pytest.approx(radius, abs=1e-9)
        assert impact[1][2] < 0 < second.v0[2]
        assert second.v0[2] == pytest.approx(-0.85 * impact[1][2])
        t = np.append(np.linspace(flight.throw_time, flight.catch_time, 400), first.t1)
        z = pattern.prop_positions(t)[flight.prop, :, 2]
        assert z.min() >= radius - 1e-9
        assert z.min() == pytest.approx(radius, abs=1e-9)
        # The arc reaches the catch exactly.
        end = second.at(flight.catch_time)[0]
        hand = pattern.hand_positions([flight.catch_time])[flight.to_juggler, flight.to_hand, 0]
        np.testing.assert_allclose(end, hand, atol=1e-9)


def test_requested_bounce_kind_sets_throw_and_catch_direction() -> None:
    # A lift bounce must be thrown up enough to climb back to the hand: it needs a slower beat.
    lift = plan("5B{L}", beat_duration=0.4, restitution=0.9)
    force = plan("5B{F}", beat_duration=0.25, restitution=0.9)
    for flight in lift.flights:
        assert flight.arcs[0].v0[2] >= 0  # thrown up
        assert flight.arcs[-1].at(flight.catch_time)[1][2] > 0  # caught rising
    for flight in force.flights:
        assert flight.arcs[0].v0[2] < 0  # thrown down
        assert flight.arcs[-1].at(flight.catch_time)[1][2] < 0  # caught falling


def test_clubs_spin_floor_n_over_2_turns_unless_overridden() -> None:
    pattern = plan("53S{3}1", prop_type="club")
    for flight in pattern.flights:
        expected = {5: 2, 3: 3, 1: 0}[flight.value]
        assert flight.spin_turns == pytest.approx(expected + (0.2 if expected else 0.0))
        q0 = pattern.prop_orientations([flight.throw_time])[flight.prop, 0]
        q1 = pattern.prop_orientations([flight.catch_time - 1e-9])[flight.prop, 0]
        angle = 2 * math.acos(min(1.0, abs(float(q0 @ q1))))
        fractional = (flight.spin_turns % 1.0) * 2 * math.pi
        assert angle == pytest.approx(min(fractional, 2 * math.pi - fractional), abs=1e-6)
    balls = plan("5")
    assert all(f.spin_turns == 0 for f in balls.flights)


def test_club_orientation_blends_smoothly_through_the_dwell() -> None:
    pattern = plan("3", prop_type="club")
    flight = pattern.flights[0]
    nxt = min(
        (f for f in pattern.flights if f.prop == flight.prop and f.throw_time > flight.catch_time),
        key=lambda f: f.throw_time,
    )
    t = np.linspace(flight.catch_time, nxt.throw_time, 200)
    q = pattern.prop_orientations(t)[flight.prop]
    steps = 2 * np.arccos(np.clip(np.abs(np.sum(q[1:] * q[:-1], axis=-1)), 0, 1))
    assert steps.max() < 0.1  # no jump
    assert steps.sum() > 0.5  # it really turns back from the over-rotated catch


def test_mills_mess_dwell_paths_move_the_throw_across_the_body() -> None:
    paths = parse_dwell_paths(MILLS_MESS)
    assert len(paths) == 3
    assert paths[0].points[0] == pytest.approx((0.025, 0.0, 0.05))
    pattern = plan("3", dwell_paths=MILLS_MESS, dwell_ratio=0.8)
    # Three paths over a two-beat cycle: the hand motion repeats every six beats.
    assert pattern.loop_beats % 6 == 0
    crossed = 0
    for flight in pattern.flights:
        hand = pattern.hand_positions([flight.throw_time])[0, flight.from_hand, 0]
        side = 1.0 if flight.from_hand == 0 else -1.0
        crossed += hand[0] * side < -0.2  # thrown from the far side of the body (x = -30 cm)
    assert crossed > len(pattern.flights) / 2
    t = np.linspace(0, pattern.loop_duration, 90)
    np.testing.assert_allclose(
        pattern.prop_positions(t), pattern.prop_positions(t + pattern.loop_duration), atol=1e-9
    )


def test_multiplex_props_leave_one_hand_side_by_side() -> None:
    pattern = plan("24[54]")
    multiplex = [f for f in pattern.flights if f.multiplex]
    assert multiplex
    by_time: dict[float, list] = {}
    for f in multiplex:
        by_time.setdefault(round(f.throw_time % pattern.loop_duration, 9), []).append(f)
    for group in by_time.values():
        assert len(group) == 2
        a, b = (pattern.prop_positions([f.throw_time])[f.prop, 0] for f in group)
        assert np.linalg.norm(a - b) > PROP_LENGTHS["ball"]


def test_arm_pose_quaternions_reproduce_the_solved_joints() -> None:
    pattern = plan("531", chicken_wing=0.2)
    t = np.linspace(0.0, pattern.loop_duration, 60)
    shoulders, elbows, hands = pattern.local_arm_points(t, 0)
    bones = {b.name: b for b in rest_skeleton(pattern.body)}

    def rest_frame(name: str, roll: float) -> np.ndarray:
        b = bones[name]
        y = np.subtract(b.tail, b.head)
        y /= np.linalg.norm(y)
        x = np.cross(y, [0.0, 0.0, 1.0])
        x /= np.linalg.norm(x)
        frame = np.stack([x, y, np.cross(x, y)], axis=-1)
        twist = quaternion_to_matrix(axis_angle_quaternions(y, roll))
        return twist @ frame

    for hand, suffix in ((0, "L"), (1, "R")):
        upper_rest = rest_frame(f"upper_arm.{suffix}", 0.3)
        fore_rest = rest_frame(f"forearm.{suffix}", -0.7)
        q_up, q_fore = arm_pose_quaternions(shoulders[hand], elbows[hand], hands[hand], upper_rest, fore_rest)
        upper_pose = upper_rest @ quaternion_to_matrix(q_up)
        fore_pose = upper_pose @ upper_rest.T @ fore_rest @ quaternion_to_matrix(q_fore)
        elbow = shoulders[hand] + pattern.body.upper_arm * upper_pose[..., :, 1]
        wrist = elbow + pattern.body.forearm * fore_pose[..., :, 1]
        np.testing.assert_allclose(elbow, elbows[hand], atol=1e-9)
        np.testing.assert_allclose(wrist, hands[hand], atol=1e-9)
        # Keys need sign-continuous quaternions.
        assert np.all(np.sum(q_up[1:] * q_up[:-1], axis=-1) > 0)


def test_quaternion_helpers_agree_with_geometry() -> None:
    q = axis_angle_quaternions(np.array([0.0, 0.0, 1.0]), math.pi / 2)
    np.testing.assert_allclose(quaternion_to_matrix(q) @ [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(
        quaternion_multiply(q, q), axis_angle_quaternions([0, 0, 1.0], math.pi), atol=1e-12
    )


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"beat_duration": float("nan")}, "beat duration"),
        ({"beat_duration": 0.0}, "beat duration"),
        ({"dwell_ratio": 2.5}, "dwell ratio"),
        ({"prop_type": "knife"}, "prop type"),
        ({"restitution": 1.5}, "restitution"),
        ({"dwell_paths": "(30)(abc)"}, "not numeric"),
        ({"dwell_paths": "(30)"}, "catch and a throw"),
        ({"dwell_paths": "(30)(10) junk"}, "unexpected"),
        ({"frame_rate": -1.0}, "frame rate"),
    ],
)
def test_bad_settings_raise_a_named_error(kwargs: dict, words: str) -> None:
    with pytest.raises(MotionError, match=words):
        plan("3", **kwargs)


def test_long_dwell_is_clamped_so_every_prop_flies() -> None:
    # Juggling Lab's clamps: a catch waits until the hand's previous throw has left, and every prop
    # gets some airtime (a caught 1 at least 0.3 beat), so extreme dwells still animate.
    pattern = plan("(4,2x)(2x,4)", dwell_ratio=1.95, beat_duration=0.25)
    for flight in pattern.flights:
        assert flight.catch_time - flight.throw_time >= 0.1 * 0.25 - 1e-12
    multiplexed_one = plan("[31]", dwell_ratio=1.3, beat_duration=0.25)
    ones = [f for f in multiplexed_one.flights if f.value == 1]
    assert ones
    for flight in ones:
        assert flight.catch_time - flight.throw_time == pytest.approx(0.3 * 0.25)


def test_impossible_bounce_names_the_throw() -> None:
    with pytest.raises(MotionError, match="bounce"):
        plan("3B", beat_duration=0.1, restitution=0.3)


def test_nothing_returned_is_nan() -> None:
    for text in ("b97531", "7531", "[33]", "2", "<4p|3><2|3p>"):
        pattern = plan(text, prop_type="ring")
        t = np.linspace(0, pattern.loop_duration, 200)
        for array in (
            pattern.prop_positions(t),
            pattern.prop_orientations(t),
            pattern.hand_positions(t),
            pattern.elbow_positions(t),
            pattern.prop_velocities(t),
        ):
            assert np.all(np.isfinite(array))


def test_every_bundled_preset_animates() -> None:
    from addon.presets import load_presets

    presets = load_presets("juggling")
    assert len(presets) >= 40
    for preset in presets:
        settings = {k: v for k, v in preset.items() if k in ("beat_duration", "dwell_ratio", "prop_type")}
        if "dwell_path" in preset:
            settings["dwell_paths"] = preset["dwell_path"]
        pattern = plan(preset["siteswap"], frame_rate=24.0, **settings)
        t = np.linspace(0.0, pattern.loop_duration, 40)
        assert np.all(np.isfinite(pattern.prop_positions(t))), preset["name"]
        assert pattern.reach_warning is None, preset["name"]


@pytest.mark.parametrize("text", ["3", "531", "(4,4)", "24[54]", "<3p|3p>", "7"])
def test_hand_paths_are_smooth_and_loop(text: str) -> None:
    pattern = plan(text)
    for juggler in range(pattern.num_jugglers):
        for hand in (0, 1):
            knots = pattern.hand_knot_times(juggler, hand)
            # C1 where the spline pieces join, and across the loop seam.
            for when in (*knots, *(knots + pattern.loop_duration)):
                before, after = pattern.hand_velocities([when - 1e-9, when + 1e-9])[juggler, hand]
                np.testing.assert_allclose(before, after, atol=1e-5)
    t = np.linspace(0.0, pattern.loop_duration, 4001)
    step = t[1] - t[0]
    velocity = pattern.hand_velocities(t)
    np.testing.assert_allclose(velocity[:, :, 0], velocity[:, :, -1], atol=1e-9)
    # Positions and velocities agree (the sampler's derivative is its own), and accelerations stay
    # within what a throwing hand does (under 20 g).
    positions = pattern.hand_positions(t)
    midpoint = 0.5 * (velocity[:, :, 1:] + velocity[:, :, :-1]) * step
    np.testing.assert_allclose(np.diff(positions, axis=2), midpoint, atol=1e-4)
    assert np.linalg.norm(np.diff(velocity, axis=2), axis=-1).max() / step < 200.0


def test_dwell_path_notation_details() -> None:
    paths = parse_dwell_paths(" (30, 5.5)(10.25){1,0,0,0.5} . (-2.5)(0,0,12) ")
    assert [len(p.points) for p in paths] == [2, 2]
    assert paths[0].points[0] == pytest.approx((0.30, 0.0, 0.055))  # (out, forward, up) in metres
    assert paths[1].points[1] == pytest.approx((0.0, 0.12, 0.0))
    assert parse_dwell_paths("") == ()
