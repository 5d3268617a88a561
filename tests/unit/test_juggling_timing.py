"""Juggling Lab's timing as ProcAnim's default: automatic beat, squeeze catches, bounces, spacing."""

from __future__ import annotations

import math

import numpy as np
import pytest

from addon.juggling import parse_siteswap, plan_pattern
from addon.juggling.paths import GRAVITY, MotionError
from addon.juggling.timing import auto_beats_per_second, circle_radius

# Beats per second computed by hand from Juggling Lab's calcBps: the mean of
# throwspersec[min(n, 9)] = (2.00, 2.00, 2.00, 2.90, 3.40, 4.10, 4.25, 5.00, 5.00, 5.50)[n] over the
# throws above 2 (2.0 if none), at least (max throw - dwell) / 2.6.
CALC_BPS = [
    ("3", 2.90),
    ("531", (4.10 + 2.90) / 2),  # 3.50
    ("441", 3.40),
    ("(6x,4)*", (4.25 + 3.40) / 2),  # 3.825
    ("(4,4)", 3.40),
    ("24[54]", (3.40 + 4.10 + 3.40) / 3),  # the 2 does not count
    ("7", 5.00),
    ("91", 5.50),  # (9 - 1.3) / 2.6 = 2.96 is lower
    ("{49}1", (49 - 1.3) / 2.6),  # 18.35: the 2.6 s airtime cap wins over 5.50
    ("2", 2.00),  # no throw above 2
    ("<3p|3p>", 2.90),
    ("<4p 3|3 4p>", (3.40 + 2.90) / 2),
]


@pytest.mark.parametrize(("text", "bps"), CALC_BPS)
def test_auto_beat_is_juggling_labs_calc_bps(text: str, bps: float) -> None:
    siteswap = parse_siteswap(text)
    assert auto_beats_per_second(siteswap) == pytest.approx(bps)
    pattern = plan_pattern(siteswap)
    assert pattern.auto_beat
    assert pattern.beat_duration == pytest.approx(1.0 / bps)


def test_a_fixed_beat_stays_fixed() -> None:
    pattern = plan_pattern(parse_siteswap("531"), beat_duration=0.3)
    assert pattern.beat_duration == 0.3
    assert not pattern.auto_beat


def test_the_auto_beat_only_stretches_to_whole_frames() -> None:
    pattern = plan_pattern(parse_siteswap("3"), frame_rate=24.0)
    frames = pattern.loop_duration * 24.0
    assert frames == pytest.approx(round(frames))
    assert 1 / 2.90 <= pattern.beat_duration < 1 / 2.90 + 1 / (24.0 * pattern.loop_beats) + 1e-12


def test_a_bounce_that_cannot_make_its_catch_slows_the_auto_beat() -> None:
    siteswap = parse_siteswap("3BB")
    with pytest.raises(MotionError, match="bounce"):
        plan_pattern(siteswap, beat_duration=1 / 2.90)
    pattern = plan_pattern(siteswap)
    assert pattern.beat_duration > 1 / 2.90
    # Within Juggling Lab's 1% of the slowest beat that fails.
    with pytest.raises(MotionError, match="bounce"):
        plan_pattern(siteswap, beat_duration=pattern.beat_duration / 1.011)
    assert all(f.bounces == 2 for f in pattern.flights)


def test_multiplex_catches_are_squeezed_over_0_4_beats() -> None:
    # [33]33: both 3s of the multiplex land in the left hand on beat 3; Juggling Lab catches them
    # 0.4 beat apart, the first one dwell (1.3) beats before the next throw.
    pattern = plan_pattern(parse_siteswap("[33]33"))
    tau = pattern.beat_duration
    pair = sorted(
        (f for f in pattern.flights if f.multiplex and f.throw_time == pytest.approx(0.0)),
        key=lambda f: f.catch_time,
    )
    assert len(pair) == 2
    assert pair[0].to_hand == pair[1].to_hand
    assert pair[0].catch_time == pytest.approx((3 - 1.3) * tau)
    assert pair[1].catch_time - pair[0].catch_time == pytest.approx(0.4 * tau)
    for flight in pair:  # each prop is in the hand at its own catch, side by side (one slot apart)
        grip = pattern.grip_positions([flight.catch_time])[flight.prop, 0]
        hand = pattern.hand_positions([flight.catch_time])[0, flight.to_hand, 0]
        assert np.linalg.norm(grip - hand) < 0.04
    same = plan_pattern(parse_siteswap("[33]33"), squeeze_beats=0.0)
    times = {round(f.catch_time, 9) for f in same.flights if f.multiplex and f.throw_time == 0.0}
    assert len(times) == 1


@pytest.mark.parametrize("bounce_frac", [0.9, 0.6])
def test_a_bounce_keeps_bouncefrac_of_its_energy(bounce_frac: float) -> None:
    pattern = plan_pattern(parse_siteswap("5B"), bounce_frac=bounce_frac)
    bounced = [f for f in pattern.flights if f.bounces]
    assert bounced
    for flight in bounced:
        first, second = flight.arcs
        impact = first.at(first.t1)[1]
        assert second.v0[2] == pytest.approx(-math.sqrt(bounce_frac) * impact[2])
        # Energy: rebound kinetic energy (vertical) is bounce_frac of the impact's.
        assert second.v0[2] ** 2 == pytest.approx(bounce_frac * impact[2] ** 2)


def test_restitution_keeps_the_speed_model_as_an_option() -> None:
    pattern = plan_pattern(parse_siteswap("5B"), beat_duration=0.28, restitution=0.85)
    flight = next(f for f in pattern.flights if f.bounces)
    first, second = flight.arcs
    assert second.v0[2] == pytest.approx(-0.85 * first.at(first.t1)[1][2])


def test_the_floor_is_one_metre_below_the_hands() -> None:
    pattern = plan_pattern(parse_siteswap("3B"))
    hands = pattern.body.pattern_height
    flight = next(f for f in pattern.flights if f.bounces)
    contact = flight.arcs[0].at(flight.arcs[0].t1)[0][2]
    assert hands - contact == pytest.approx(1.00)
    # The ball's surface touches the floor plane, which is where the scene's floor stands.
    assert contact - 0.034 == pytest.approx(pattern.floor_height)
    assert pattern.floor_height == pytest.approx(0.0, abs=1e-9)
    lower = plan_pattern(parse_siteswap("3B"), floor_drop=1.5)
    flight = next(f for f in lower.flights if f.bounces)
    assert hands - flight.arcs[0].at(flight.arcs[0].t1)[0][2] == pytest.approx(1.5)
    assert flight.arcs[0].v0[2] < GRAVITY  # still a sensible throw


@pytest.mark.parametrize(("jugglers", "radius"), [(2, 0.70), (3, 0.65 / math.sin(math.pi / 3)), (6, 1.30)])
def test_jugglers_stand_on_juggling_labs_circle(jugglers: int, radius: float) -> None:
    assert circle_radius(jugglers) == pytest.approx(radius)
    text = "<" + "|".join(["3p"] * jugglers) + ">"
    pattern = plan_pattern(parse_siteswap(text))
    centre = pattern.juggler_origins.mean(axis=0)
    np.testing.assert_allclose(np.linalg.norm(pattern.juggler_origins - centre, axis=1), radius)


# --------------------------------------------------------------------------------------------------
# Hand acceleration


@pytest.mark.parametrize("text", ["3", "531", "(4,4)", "<3p|3p>", "5B"])
def test_hand_acceleration_peaks_are_the_true_peaks(text: str) -> None:
    pattern = plan_pattern(parse_siteswap(text))
    t = np.linspace(0.0, pattern.loop_duration, 40001)
    step = t[1] - t[0]
    velocity = pattern.hand_velocities(t)
    numeric = np.linalg.norm(np.diff(velocity, axis=2), axis=-1) / step  # (J, 2, T-1)
    peaks = pattern.hand_acceleration_peaks()
    for juggler in range(pattern.num_jugglers):
        for hand in (0, 1):
            assert peaks[juggler, hand, 0] == pytest.approx(numeric[juggler, hand].max(), rel=0.01)
            # ... reached at the reported moment (it may recur each cycle, too).
            loop = pattern.loop_duration
            near = np.abs((t[:-1] - peaks[juggler, hand, 1] + 0.5 * loop) % loop - 0.5 * loop) < 2e-3
            assert numeric[juggler, hand, near].max() == pytest.approx(peaks[juggler, hand, 0], rel=0.01)


def test_a_beat_too_fast_reports_the_throw_and_the_acceleration_it_needs() -> None:
    pattern = plan_pattern(parse_siteswap("5"), beat_duration=0.15)
    worst = pattern.hand_acceleration_peaks()[..., 0].max()
    assert worst > 4 * GRAVITY
    report = pattern.acceleration_report(4 * GRAVITY)
    assert report[0][0] == pytest.approx(worst)
    assert report[0][4] in ("throw 5", "catch 5")
    assert f"{worst / GRAVITY:.1f} g" in pattern.acceleration_warning
    assert report[0][4] in pattern.acceleration_warning
    # The bound is a setting: a generous one reports nothing.
    relaxed = plan_pattern(parse_siteswap("5"), beat_duration=0.15, max_hand_acceleration=worst * 1.01)
    assert relaxed.acceleration_warning is None and not relaxed.acceleration_report(worst * 1.01)
    with pytest.raises(MotionError, match="acceleration bound"):
        plan_pattern(parse_siteswap("3"), max_hand_acceleration=0.0)
