"""The paper's section 3: COP strategy balances faster and steadier than the COM strategy."""

import numpy as np
import pytest

from addon.dancer import DancerError, Gains, settle_time, simulate_balance


@pytest.fixture(scope="module")
def runs():
    return {s: simulate_balance(s, duration=8.0) for s in ("cop", "com")}


def test_cop_settles_under_three_seconds_com_takes_twice_as_long(runs):
    cop, com = runs["cop"], runs["com"]
    assert not cop.fell and not com.fell
    assert cop.settle_time < 3.0
    assert com.settle_time >= 2.0 * cop.settle_time
    assert np.isfinite(com.settle_time)


def test_cop_strategy_keeps_the_smaller_cop_oscillation(runs):
    assert runs["cop"].cop_amplitude < runs["com"].cop_amplitude


def test_run_starts_over_the_heel_and_ends_over_the_middle(runs):
    for run in runs.values():
        heel_edge = run.support_polygon[:, 0].min()
        length = run.support_polygon[:, 0].ptp()
        assert run.com[0, 0] < heel_edge + 0.25 * length
        assert abs(run.com[-1, 0] - run.target[0]) < 0.01
        assert np.all(np.isfinite(run.com)) and np.all(np.isfinite(run.cop))
        assert run.times.shape == (run.com.shape[0],) and run.cop.shape == run.com.shape


def test_settle_time_is_when_the_com_stays_within_a_centimetre():
    times = np.arange(5) * 0.5
    com = np.array([[0.1, 0, 0], [0.0, 0, 0], [0.02, 0, 0], [0.005, 0, 0], [0.0, 0, 0]])
    assert settle_time(times, com, np.zeros(3)) == 1.5
    assert settle_time(times, com[::-1], np.zeros(3)) == np.inf


def test_a_gain_that_cannot_balance_falls_without_raising():
    run = simulate_balance("com", duration=5.0, gains=Gains(com_position=8.0))
    assert run.fell
    assert 0.0 < run.fall_time < 5.0
    assert run.settle_time == np.inf
    assert np.all(np.isfinite(run.com))


@pytest.mark.parametrize(
    ("kwargs", "word"),
    [
        ({"strategy": "ankle"}, "strategy"),
        ({"start": "knee"}, "start"),
        ({"duration": -1.0}, "duration"),
        ({"gains": Gains(cop_tracking=float("nan"))}, "cop_tracking"),
        ({"gains": Gains(com_position=-1.0)}, "com_position"),
    ],
)
def test_bad_input_is_named(kwargs, word):
    with pytest.raises(DancerError, match=word):
        simulate_balance(**kwargs)
