"""Juggling Lab grammar forms ProcAnim used to reject, and JL's key=value parameter strings."""

from __future__ import annotations

import math

import numpy as np
import pytest

from addon.juggling import parse_siteswap, plan_pattern
from addon.juggling.notation import SiteswapError, summarize
from addon.juggling.parameters import (
    KEY_ORDER,
    ConfigError,
    PatternConfig,
    format_config,
    hands_to_dwell_paths,
    parse_body,
    parse_colors,
    parse_config,
    plan_config,
)


def _throws(text: str) -> list[tuple[int, int, int, int, int, int]]:
    return sorted(
        (t.beat, t.juggler, t.hand, t.value, t.to_juggler, t.to_hand) for t in parse_siteswap(text).throws
    )


# (text, props, jugglers, period): counts worked out by hand from Juggling Lab's rules.
GRAMMAR = [
    ("0", 0, 1, 1),
    ("00", 0, 1, 2),
    ("[00]", 0, 1, 1),
    ("(0,0)", 0, 1, 2),
    ("<[00]|0>", 0, 2, 1),
    ("<0|0>", 0, 2, 1),
    ("((4,2x)*^2)", 3, 1, 8),  # (4,2x)(2x,4) twice
    ("((6x,4)*^2)", 5, 1, 8),
    ("(3*^2)", 3, 1, 4),
    ("(5*^1)11", 3, 1, 4),
    ("<R|L><3|3>", 6, 2, 1),
    ("<L|R>3", 6, 2, 1),
    ("<R|R><3p|3p>", 6, 2, 1),
    ("<R|L>(4,4)", 8, 2, 2),
]


@pytest.mark.parametrize(("text", "props", "jugglers", "period"), GRAMMAR)
def test_juggling_lab_grammar_forms_parse(text: str, props: int, jugglers: int, period: int) -> None:
    siteswap = parse_siteswap(text)
    assert (siteswap.num_props, siteswap.num_jugglers, siteswap.period) == (props, jugglers, period)
    assert summarize(text).startswith(f"{props} prop")


def test_star_in_a_repeat_group_is_the_part_then_its_mirror() -> None:
    assert _throws("((4,2x)*^2)") == _throws("(4,2x)(2x,4)(4,2x)(2x,4)")
    assert _throws("((4,2x)*^1)") == _throws("(4,2x)*")
    # Async: the mirror starts with the other hand than the part did.
    hands = [t.hand for t in sorted(parse_siteswap("(3*^2)").throws, key=lambda t: t.beat)]
    assert hands == [1, 0, 1, 0]


def test_a_group_of_hand_specifiers_sets_each_jugglers_starting_hand() -> None:
    first = {t.juggler: t.hand for t in parse_siteswap("<R|L><3|3>").throws if t.beat == 0}
    assert first == {0: 1, 1: 0}
    first = {t.juggler: t.hand for t in parse_siteswap("<L|R>3").throws if t.beat == 0}
    assert first == {0: 0, 1: 1}


def test_zero_prop_patterns_animate_jugglers_with_resting_hands() -> None:
    pattern = plan_pattern(parse_siteswap("<[00]|0>"))
    assert (pattern.num_props, pattern.num_jugglers) == (0, 2)
    t = np.linspace(0, pattern.loop_duration, 9)
    hands = pattern.hand_positions(t)
    assert hands.shape == (2, 2, 9, 3)
    np.testing.assert_allclose(hands, hands[:, :, :1].repeat(9, axis=2))
    assert pattern.prop_positions(t).shape == (0, 9, 3)


# --------------------------------------------------------------------------------------------------
# key=value


FULL = (
    "pattern=(3*^2);bps=3.2;dwell=1.1;hands=(-25)(2.5).(25)(-2.5).(-25)(0).;body=(10).(0,5,0).(-10);"
    "gravity=500;propdiam=8;bouncefrac=0.8;squeezebeats=0.3;prop=ring;colors=red,{0,0,255};"
    "hss=3;hold=true;dwellmax=false;handspec=(1,2);title=Every key"
)


def test_every_key_reads_into_its_field() -> None:
    config = parse_config(FULL)
    assert config == PatternConfig(
        pattern="(3*^2)",
        bps=3.2,
        dwell=1.1,
        hands="(-25)(2.5).(25)(-2.5).(-25)(0).",
        body="(10).(0,5,0).(-10)",
        gravity=500.0,
        propdiam=8.0,
        bouncefrac=0.8,
        squeezebeats=0.3,
        prop="ring",
        colors="red,{0,0,255}",
        hss="3",
        hold=True,
        dwellmax=False,
        handspec="(1,2)",
        title="Every key",
    )


@pytest.mark.parametrize(
    "text",
    [
        FULL,
        "pattern=531",
        "pattern=<3p|3p>;bps=3",
        "pattern=5B;bouncefrac=0.75;title=Bounce 5",
        "pattern=3;hands=(32)(10).;colors=mixed",
        "pattern=(4,4);body=<(90).|(270,0,-140).>",
        "pattern=3;gravity=162.5;propdiam=12.5",
        "pattern=3;squeezebeats=0;unknown=kept",
    ],
)
def test_key_value_strings_round_trip(text: str) -> None:
    config = parse_config(text)
    written = format_config(config)
    assert written == text  # these are already in Juggling Lab's key order
    assert parse_config(written) == config


def test_writing_puts_keys_in_juggling_labs_order() -> None:
    config = parse_config("title=T; dwell=1.0 ;pattern=3;BPS=3.50")
    assert format_config(config) == "pattern=3;bps=3.5;dwell=1;title=T"
    order = [part.split("=")[0] for part in format_config(parse_config(FULL)).split(";")]
    assert order == list(KEY_ORDER)


def test_a_bare_siteswap_is_a_pattern_alone() -> None:
    assert parse_config(" 531 ") == PatternConfig(pattern="531")


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("bps=3", "no pattern="),
        ("pattern=3;bps=fast", "bps=fast: not a number"),
        ("pattern=3;bps=0.01", "0.05 to 200"),
        ("pattern=3;dwell=2", "between 0 and 2"),
        ("pattern=3;pattern=4", "twice"),
        ("pattern=3;hold=maybe", "true or false"),
        ("pattern=3;prop=club2", "prop=club2"),
        ("pattern=3;hands=(30)", "needs a throw and a catch"),
        ("pattern=3;hands=(30)(x)", "not a number"),
        ("pattern=3;body=(0,0)(1)z", "unexpected"),
        ("pattern=3;bouncefrac=1.5", "at most 1"),
        ("pattern=3;justtext", "not key=value"),
    ],
)
def test_bad_parameters_name_the_key(text: str, words: str) -> None:
    with pytest.raises(ConfigError, match=words.replace("(", r"\(").replace(")", r"\)")):
        parse_config(text)


def test_parameters_drive_the_plan() -> None:
    pattern = plan_config(
        "pattern=5B;bps=2.5;dwell=1.0;gravity=490;bouncefrac=0.64;propdiam=13.6;colors=red,green"
    )
    assert pattern.beat_duration == pytest.approx(0.4)
    assert pattern.dwell_ratio == 1.0
    assert pattern.gravity == pytest.approx(4.9)
    assert pattern.prop_size == pytest.approx(2.0)
    assert pattern.prop_colors == [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0)] * 2 + [(1.0, 0.0, 0.0)]
    flight = next(f for f in pattern.flights if f.bounces)
    first, second = flight.arcs
    assert second.v0[2] == pytest.approx(-0.8 * first.at(first.t1)[1][2])  # sqrt(0.64)
    # The flight is a parabola under 4.9 m/s^2: the vertical speed drops by g t.
    assert first.at(first.t0 + 0.1)[1][2] == pytest.approx(first.v0[2] - 0.49)
    # A fixed bps is a fixed beat: flights last (n - dwell) beats.
    plain = plan_config("pattern=3;bps=2.5;dwell=1")
    assert {round(f.catch_time - f.throw_time, 9) for f in plain.flights} == {round(2 * 0.4, 9)}
    assert plan_config("pattern=3").beat_duration == pytest.approx(1 / 2.9)


def test_hands_become_dwell_paths_with_juggling_labs_catch_rule() -> None:
    # Beat k throws from its first point; the catch before it is beat k - 2's catch point.
    paths = hands_to_dwell_paths("(-25)(2.5).(25)(-2.5).(-25)(0).")
    assert [p.points for p in paths] == [
        ((-0.025, 0.0, 0.0), (-0.25, 0.0, 0.0)),
        ((0.0, 0.0, 0.0), (0.25, 0.0, 0.0)),
        ((0.025, 0.0, 0.0), (-0.25, 0.0, 0.0)),
    ]
    # (x, up, forward) cm; points after a "c" catch are where the loaded hand goes next.
    paths = hands_to_dwell_paths("t(10)(20)c(30,5,2)(15,-3).")
    assert paths[0].points == ((0.30, 0.02, 0.05), (0.15, 0.0, -0.03), (0.10, 0.0, 0.0))
    mills = plan_config("pattern=3;hands=(-25)(2.5).(25)(-2.5).(-25)(0).")
    assert mills.reach_warning is None
    assert mills.loop_beats % 3 == 0


def test_body_and_colors_read_juggling_labs_forms() -> None:
    body = parse_body("<(90).(0,10,0,95).-|(270,0,-140).>")
    assert body[0][0] == [(90.0, 0.0, 0.0, 100.0)]
    assert body[0][1] == [(0.0, 10.0, 0.0, 95.0)]
    assert body[0][2] == [None]  # "-": a placeholder Juggling Lab interpolates
    assert body[1][0] == [(270.0, 0.0, -140.0, 100.0)]
    assert parse_colors("mixed", 3) is None
    assert parse_colors("{255,0,0},blue", 3) == [(1.0, 0.0, 0.0), (0.0, 0.0, 1.0), (1.0, 0.0, 0.0)]
    with pytest.raises(ConfigError, match="unknown colour"):
        parse_colors("chartreuse", 3)


def test_hand_siteswaps_spread_the_throws_over_hands_and_jugglers() -> None:
    # hss=2 is two hands alternating: the ordinary pattern.
    plain = parse_siteswap("531")
    spread = parse_config("pattern=531;hss=2").siteswap()
    key = lambda t: (t.beat, t.juggler, t.hand, t.value, t.to_juggler, t.to_hand)  # noqa: E731
    assert sorted(map(key, spread.throws)) == sorted(map(key, plain.throws))
    assert spread.cycle_beats == plain.cycle_beats == 6
    # hss=4: four hands, each throwing every 4 beats; two jugglers (hands 1, 2 and 3, 4).
    four = parse_config("pattern=3;hss=4").siteswap()
    assert (four.num_props, four.num_jugglers, four.cycle_beats) == (3, 2, 4)
    owners = {(t.juggler, t.hand): t.beat for t in four.throws}
    assert sorted(owners.values()) == [0, 1, 2, 3]
    assert any(t.is_pass for t in four.throws)
    pattern = plan_config("pattern=3;hss=4")
    assert pattern.num_jugglers == 2 and len(pattern.flights) > 0
    # handspec puts hands on jugglers: (1,3)(2,4) makes every throw of 5 with hss 4 a pass.
    crossed = parse_config("pattern=5;hss=4;handspec=(1,3)(2,4)").siteswap()
    assert all(t.is_pass for t in crossed.throws)
    # oss 3 with hss 3: each of three hands holds its own prop.
    assert all(t.hold for t in parse_config("pattern=3;hss=3").siteswap().throws)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("pattern=3;hss=40", "no 0"),
        ("pattern=3;hss=321", "not a valid siteswap"),
        ("pattern=(4,4);hss=2", "plain async"),
        ("pattern=3;hss=4;handspec=(1,2)(2,3)", "handspec"),
    ],
)
def test_bad_hand_siteswaps_are_refused(text: str, words: str) -> None:
    with pytest.raises(SiteswapError, match=words):
        parse_config(text).siteswap()


def test_summary_reads_parameter_strings() -> None:
    assert summarize("pattern=531;bps=4") == "3 props, period 3, 1 juggler"
    assert "no pattern=" in summarize("bps=4")
    assert math.isclose(plan_config("pattern=531;bps=4").beat_duration, 0.25)


def test_body_moves_the_juggler_beat_by_beat() -> None:
    plain = plan_config("pattern=3")
    walked = plan_config("pattern=3;body=(0,0,0).(20,10,0).(0,0,0).(-20,-10,0).")
    assert walked.root_motion is not None and plain.root_motion is None
    # The walk takes 4 beats, the cascade loops in 2: the walking loop is two cascade loops.
    assert walked.loop_duration == pytest.approx(2 * plain.loop_duration, abs=1e-6)
    assert len(walked.flights) == 2 * len(plain.flights)
    tau = walked.beat_duration
    origins, yaws = walked.juggler_frames([tau, 3 * tau, walked.loop_duration + tau])
    # Beat 1: angle 20 deg, x = 10 cm (Blender's world is Juggling Lab's turned half a turn).
    np.testing.assert_allclose(origins[0, 0], [-0.10, 0.0, 0.0], atol=1e-9)
    assert math.degrees(yaws[0, 0]) == pytest.approx(20.0)
    np.testing.assert_allclose(origins[0, 1], [0.10, 0.0, 0.0], atol=1e-9)
    np.testing.assert_allclose(origins[0, 2], origins[0, 0], atol=1e-9)  # periodic
    # Every throw still leaves from the hand, whose place moved with the juggler.
    for flight in walked.flights:
        hand = walked.hand_positions([flight.throw_time])[0, flight.from_hand, 0]
        np.testing.assert_allclose(flight.arcs[0].p0, hand, atol=1e-6)
