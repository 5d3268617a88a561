"""The least peak hand acceleration any hand path needs in a pattern (throws at the prop's exact
vertical speed, catches along the incoming prop, a closed loop): exact, independent of the beat, and
never beaten by the planner."""

from __future__ import annotations

import numpy as np
import pytest

from addon.juggling import parse_siteswap, plan_pattern
from addon.juggling.hand_planner import _envelope_mean, least_peak_acceleration
from addon.juggling.motion import MAX_HAND_ACCELERATION, Pattern
from addon.juggling.parameters import parse_config, plan_config
from addon.juggling.paths import GRAVITY
from addon.presets import load_presets


def plan(text: str, **kwargs) -> Pattern:
    return plan_pattern(parse_siteswap(text), **kwargs)


def cascade_by_hand(n: int, dwell: float) -> float:
    """A cascade hand throws at t = 0 with v = g (n - d) tau / 2 and catches (2 - d) tau later,
    d tau before its next throw, with the prop arriving at -v; its period is 2 tau.

    - Throw and closing alone: u >= v - A |t| around the throw and must average 0 over 2 tau, so
      the tent's mean v - A tau / 2 <= 0: A >= 2 v / tau = g (n - d).
    - The catch needs u <= 0 there: u fell from v within min(d, 2 - d) tau, so
      A >= v / (min(d, 2 - d) tau) = g (n - d) / (2 min(d, 2 - d)).
    - At the larger of the two, the catch's own tent (apex -v) lies under the throw's
      (v - A min(d, 2-d) tau >= -v holds for both values), so nothing else binds, and u = the throw's
      tent meets every condition: the bound is exactly the larger."""
    return GRAVITY * (n - dwell) * max(1.0, 1.0 / (2.0 * min(dwell, 2.0 - dwell)))


def envelopes(windows: list[tuple[float, float, float]], limit: float, period: float, t: np.ndarray):
    """The least and greatest ``limit``-Lipschitz periodic functions through the windows, at ``t``."""
    times = np.array([w[0] for w in windows])[:, None]
    gaps = np.abs((t[None] - times + 0.5 * period) % period - 0.5 * period)
    low = np.max(np.array([w[1] for w in windows])[:, None] - limit * gaps, axis=0)
    high = np.min(np.array([w[2] for w in windows])[:, None] + limit * gaps, axis=0)
    return low, high


@pytest.mark.parametrize(
    ("n", "dwell"), [(3, 1.3), (5, 1.3), (7, 1.3), (3, 1.8), (3, 0.4), (5, 0.5), (6, 1.0)]
)
def test_a_cascade_needs_what_the_hand_computation_says(n: int, dwell: float) -> None:
    expected = cascade_by_hand(n, dwell)
    for tau in (0.2, 0.3, 0.45):
        speed = 0.5 * GRAVITY * (n - dwell) * tau
        windows = [(0.1, speed, speed), (0.1 + (2.0 - dwell) * tau, -speed, 0.0)]
        assert least_peak_acceleration(windows, 2.0 * tau) == pytest.approx(expected, rel=1e-9)
        # ... and the same from the planned pattern's own flights, both hands.
        pattern = plan(str(n), beat_duration=tau, dwell_ratio=dwell)
        assert pattern.hand_acceleration_bound() == pytest.approx(expected, rel=1e-9)


def test_the_envelope_means_are_exact() -> None:
    rng = np.random.default_rng(7)
    for _ in range(50):
        count = int(rng.integers(1, 9))
        period = float(rng.uniform(0.3, 3.0))
        times, peaks, slope = (
            rng.uniform(0.0, period, count),
            rng.normal(size=count),
            float(rng.uniform(0.1, 20)),
        )
        t = np.linspace(0.0, period, 400001, endpoint=False)
        gaps = np.abs((t[None] - times[:, None] + 0.5 * period) % period - 0.5 * period)
        sampled = float(np.max(peaks[:, None] - slope * gaps, axis=0).mean())
        assert _envelope_mean(times, peaks, slope, period) == pytest.approx(sampled, abs=1e-6 * (1 + slope))


@pytest.mark.parametrize("text", ["531", "(6x,4)*", "24[54]", "<3p 3|3p 3>", "5B", "b97531"])
def test_the_bound_is_attained_and_nothing_gentler_exists(text: str) -> None:
    pattern = plan(text)
    period = pattern.loop_duration
    for windows in pattern.hand_velocity_windows(laid_out=True):
        if not windows:
            continue
        bound = least_peak_acceleration(windows, period)
        # A witness at the bound: a convex mix of the two envelopes with mean 0 passes through every
        # window and changes no faster than the bound.
        limit = bound * (1 + 1e-9)
        t = np.linspace(0.0, period, 200000, endpoint=False)
        low, high = envelopes(windows, limit, period, t)
        mix = low.mean() / (low.mean() - high.mean())
        witness = (1 - mix) * low + mix * high
        assert witness.mean() == pytest.approx(0.0, abs=1e-9)
        assert np.abs(np.diff(witness)).max() <= limit * (t[1] - t[0]) * (1 + 1e-6)
        at_low, at_high = envelopes(windows, limit, period, np.array([w[0] for w in windows]))
        at_windows = (1 - mix) * at_low + mix * at_high
        for (_, lo, hi), value in zip(windows, at_windows, strict=True):
            assert lo - 1e-9 * bound <= value <= hi + 1e-9 * bound
        # 0.1% under the bound no path exists: the least path through the windows already misses
        # one, or every path through them drifts up or down.
        low, high = envelopes(windows, bound * 0.999, period, t)
        at_low, _ = envelopes(windows, bound * 0.999, period, np.array([w[0] for w in windows]))
        misses = any(value > w[2] + 1e-9 for w, value in zip(windows, at_low, strict=True))
        assert misses or low.mean() > 0 or high.mean() < 0


@pytest.mark.parametrize("text", ["3", "531", "(6x,4)*", "24[54]", "<3p 3|3p 3>", "<4p 2 3|4p 2 3>", "97531"])
def test_the_bound_is_the_same_at_every_beat(text: str) -> None:
    # Times scale with the beat tau and speeds +-g T / 2 with it too; if u(t) meets the windows at
    # tau, c u(t / c) meets them at c tau with the same |u'|: the least bound cannot depend on tau.
    bounds = [plan(text, beat_duration=tau).hand_acceleration_bound() for tau in (0.18, 0.27, 0.41, 0.6)]
    bounds.append(plan(text).hand_acceleration_bound())
    assert max(bounds) == pytest.approx(min(bounds), rel=1e-9)
    assert min(bounds) > 0


def test_hand_siteswaps_holds_and_multiplexes_give_the_right_windows() -> None:
    config = plan_config(parse_config("pattern=531;hss=2"))
    assert config.hand_acceleration_bound() == pytest.approx(plan("531").hand_acceleration_bound(), rel=1e-12)
    # 423: each hand throws a 4 and a 3 and holds its 2 over a 6-beat loop: two throws, two catches.
    assert [len(w) for w in plan("423").hand_velocity_windows()] == [4, 4]
    # 24[54]: the multiplex leaves with one speed between its two props' (+-g T / 2 each).
    pattern = plan("24[54]")
    tau, dwell = pattern.beat_duration, pattern.dwell_ratio
    widths = {round(hi - lo, 9) for hand in pattern.hand_velocity_windows() for _, lo, hi in hand if lo > 0}
    assert widths == {0.0, round(0.5 * GRAVITY * tau, 9)}
    assert dwell == pytest.approx(1.3)


def test_no_plan_of_any_bundled_preset_beats_the_bound() -> None:
    impossible = set()
    for preset in load_presets("juggling"):
        settings = {k: v for k, v in preset.items() if k in ("beat_duration", "dwell_ratio", "prop_type")}
        if "dwell_path" in preset:
            settings["dwell_paths"] = preset["dwell_path"]
        pattern = plan(preset["siteswap"], frame_rate=24.0, **settings)
        peak = pattern.hand_acceleration_peaks()[..., 0].max()
        own = pattern.hand_acceleration_bound(laid_out=True)
        assert own <= peak, (preset["name"], own / GRAVITY, peak / GRAVITY)
        level = pattern.hand_acceleration_bound()
        if level > MAX_HAND_ACCELERATION:
            impossible.add(preset["siteswap"])
            assert "no hand that throws each prop at its speed" in pattern.acceleration_warning
            assert f"{level / GRAVITY:.1f} g" in pattern.acceleration_warning or (
                f"{level / GRAVITY:.2f} g" in pattern.acceleration_warning
            )
    # Cascades and fountains need g (n - 1.3): over 4 g from six props on, not below.
    assert {"6", "7", "(6,6)"} <= impossible
    assert not {"3", "4", "5", "(4,4)", "<3p|3p>"} & impossible


def test_the_report_says_whether_the_pattern_or_the_plan_needs_more() -> None:
    seven = plan("7", beat_duration=0.2)
    assert "at least 5.7 g at any beat (dwell 1.3)" in seven.acceleration_warning
    # Four balls: the speeds alone need about g (4 - 1.3) (a little less: the planner throws a few
    # centimetres above the catch), the plan more, to stay in reach.
    four = plan("4", beat_duration=0.3)
    own = four.hand_acceleration_bound(laid_out=True) / GRAVITY
    assert 2.4 < own <= 2.7 + 1e-9
    assert f"speeds alone need {own:.1f} g" in four.acceleration_warning
    assert "no hand" not in four.acceleration_warning
