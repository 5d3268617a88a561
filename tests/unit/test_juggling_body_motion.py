"""The juggler's own motion: periodic, feet on the floor, knees dip with throw height, the head follows
props near their peak, passers turn toward their partners, and the arms still reach the hands."""

from __future__ import annotations

import math

import numpy as np
import pytest

from addon.juggling import parse_siteswap, plan_pattern
from addon.juggling.body_motion import leg_angles
from addon.quaternions import rotate


@pytest.mark.parametrize("text", ["3", "531", "(4,4)", "<3p|3p>", "<3p2 3|3p3 3|3p1 3>", "5B"])
def test_body_motion_repeats_with_the_loop(text: str) -> None:
    pattern = plan_pattern(parse_siteswap(text))
    t = np.linspace(0.0, pattern.loop_duration, 97)
    now, later = pattern.body_motion(t), pattern.body_motion(t + pattern.loop_duration)
    for name in ("hip_drop", "thigh", "shin"):
        np.testing.assert_allclose(getattr(now, name), getattr(later, name), atol=1e-9)
    for name in ("torso", "head"):
        a, b = getattr(now, name), getattr(later, name)
        np.testing.assert_allclose(np.abs(np.sum(a * b, axis=-1)), 1.0, atol=1e-9)  # same rotation
    later_shoulders = pattern.shoulder_positions(t + pattern.loop_duration)
    np.testing.assert_allclose(pattern.shoulder_positions(t), later_shoulders, atol=1e-9)
    # It really moves.
    assert np.ptp(now.hip_drop) > 0.003
    assert np.ptp(now.head[..., 0]) > 1e-4
    if not pattern.siteswap.sync:  # a symmetric sync pattern leaves the torso square
        assert np.ptp(now.torso[..., 0]) > 1e-5


def test_the_feet_stay_on_the_floor() -> None:
    pattern = plan_pattern(parse_siteswap("7"))
    body = pattern.body
    drop = pattern.body_motion(np.linspace(0, pattern.loop_duration, 50)).hip_drop[0]
    alpha, beta = leg_angles(body, drop)
    thigh, shin = body.hip_height - 0.08 - 0.52, 0.52 - 0.08
    ankle_height = body.hip_height - 0.08 - drop - thigh * np.cos(alpha) - shin * np.cos(beta)
    np.testing.assert_allclose(ankle_height, 0.08, atol=1e-9)
    np.testing.assert_allclose(thigh * np.sin(alpha), shin * np.sin(beta), atol=1e-9)  # ankle under hip


def test_knees_dip_deeper_for_higher_throws() -> None:
    low = plan_pattern(parse_siteswap("3"), beat_duration=0.3)
    high = plan_pattern(parse_siteswap("7"), beat_duration=0.3)
    dip = [p.body_motion(np.linspace(0, p.loop_duration, 400)).hip_drop.max() for p in (low, high)]
    assert 0 < dip[0] < dip[1] <= 0.03


def test_the_head_follows_a_prop_near_its_peak() -> None:
    pattern = plan_pattern(parse_siteswap("3"))
    neck = np.array([0.0, 0.0, pattern.body.neck_height])
    gains = []
    for flight in pattern.flights[:3]:
        apex = 0.5 * (flight.throw_time + flight.catch_time)
        motion = pattern.body_motion([apex])
        gaze = rotate(motion.torso[0, 0], rotate(motion.head[0, 0], [0.0, -1.0, 0.0]))
        to_prop = pattern.prop_positions([apex])[flight.prop, 0] - neck  # lone juggler: local = world
        straight = np.array([0.0, -1.0, 0.0])
        cosine = lambda a, b: a @ b / np.linalg.norm(a) / np.linalg.norm(b)  # noqa: E731
        gains.append(cosine(gaze, to_prop) - cosine(straight, to_prop))
    assert min(gains) > 0.05  # turned toward the prop, clearly closer than looking straight ahead


def test_passers_turn_toward_the_partner_they_throw_to() -> None:
    pattern = plan_pattern(parse_siteswap("<3p2 3|3p3 3|3p1 3>"))
    for flight in pattern.flights:
        if not flight.is_pass:
            continue
        j = flight.from_juggler
        q = pattern.body_motion([flight.throw_time]).torso[j, 0]
        forward = rotate(q, [0.0, -1.0, 0.0])
        yaw = pattern.juggler_yaws[j]
        c, s = math.cos(yaw), math.sin(yaw)
        towards = pattern.juggler_origins[flight.to_juggler] - pattern.juggler_origins[j]
        local = np.array([c * towards[0] + s * towards[1], -s * towards[0] + c * towards[1]])
        # The torso's forward swings to the partner's side.
        assert np.sign(forward[0]) == np.sign(local[0]) and abs(forward[0]) > math.sin(math.radians(3))


def test_a_still_juggler_and_arms_that_reach() -> None:
    pattern = plan_pattern(parse_siteswap("531"))
    t = np.linspace(0, pattern.loop_duration, 60)
    pattern.body_motion_gain = 0.0
    still = pattern.shoulder_positions(t)
    np.testing.assert_allclose(still, still[:, :, :1].repeat(60, axis=2))
    pattern.body_motion_gain = 1.0
    moving = pattern.shoulder_positions(t)
    assert np.abs(moving - still).max() > 0.005
    elbows = pattern.elbow_positions(t)
    # Upper arm length holds from the moving shoulders.
    np.testing.assert_allclose(np.linalg.norm(elbows - moving, axis=-1), pattern.body.upper_arm, atol=1e-6)
