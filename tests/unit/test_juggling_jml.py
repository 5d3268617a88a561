"""JML in and out: hand-written files (from Juggling Lab's jml.dtd) checked event by event, export then
import, and malformed files refused with their line and element."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from addon.juggling import jml, parse_siteswap, plan_pattern
from addon.juggling.jml import JmlError

DATA = Path(__file__).resolve().parents[1] / "data" / "jml"
MM = 1e-3


def default_world(x: float, y: float, z: float) -> np.ndarray:
    """A lone juggler (the default placement: at the origin, facing -Y): Juggling Lab's juggler frame
    (cm; x right, y forward from the juggling plane 30 cm in front, z up from 100 cm) in metres."""
    return np.array([-x / 100, -(y + 30) / 100, 1.0 + z / 100])


def placed_world(px: float, py: float, pz: float, angle: float, x: float, y: float, z: float) -> np.ndarray:
    """Juggling Lab's convertLocalToGlobal for a juggler at (px, py, pz) cm turned by angle degrees, in
    Blender metres: Juggling Lab's world turned half a turn about z (a juggler at angle 0 faces the
    front camera)."""
    a = math.radians(angle)
    forward = y + 30
    jl_x = px + x * math.cos(a) - forward * math.sin(a)
    jl_y = py + x * math.sin(a) + forward * math.cos(a)
    return np.array([-jl_x / 100, -jl_y / 100, (pz + z) / 100])


def _same_time(a: float, b: float, period: float) -> bool:
    return abs((a - b + period / 2) % period - period / 2) < 1e-9


def assert_events(pattern, expected) -> None:
    """Each (t, kind, path, juggler, hand, point): one flight of that path leaves (throw) or lands
    (catch) then, there, within 1 mm; the hand and the prop are there too."""
    period = pattern.loop_duration
    for t, kind, path, juggler, hand, point in expected:
        matches = [
            f
            for f in pattern.flights
            if f.prop == path - 1 and _same_time(f.throw_time if kind == "throw" else f.catch_time, t, period)
        ]
        assert len(matches) == 1, (t, kind, path)
        flight = matches[0]
        if kind == "throw":
            where = flight.arcs[0].p0
            assert (flight.from_juggler, flight.from_hand) == (juggler, hand)
        else:
            where = flight.arcs[-1].at(flight.catch_time)[0]
            assert (flight.to_juggler, flight.to_hand) == (juggler, hand)
        assert np.linalg.norm(where - point) < MM, (t, kind, path, where, point)
        assert np.linalg.norm(pattern.hand_positions([t])[juggler, hand, 0] - point) < MM
        assert np.linalg.norm(pattern.prop_positions([t])[path - 1, 0] - point) < MM
    assert len(pattern.flights) * 2 == len(expected)


R, L = 1, 0


def test_switchdelay_and_delay_symmetries_make_the_whole_cascade() -> None:
    [entry] = jml.load(DATA / "cascade_switchdelay.jml")
    assert entry.title == "3 cascade" and entry.kind == "jml"
    pattern = entry.plan()
    # The loop (0.8 s) times the order of the delay's path permutation (1,3,2): 2.4 s.
    assert pattern.loop_duration == pytest.approx(2.4)
    throw_r, throw_l = default_world(7, 0, 0), default_world(-7, 0, 0)
    catch_r, catch_l = default_world(30, 0, 0), default_world(-30, 0, 0)
    expected = [
        # right hand, as written, then one and two loops later (paths 1 -> 3 -> 2)
        (0.0, "throw", 1, 0, R, throw_r),
        (0.8, "throw", 3, 0, R, throw_r),
        (1.6, "throw", 2, 0, R, throw_r),
        (0.32, "catch", 3, 0, R, catch_r),
        (1.12, "catch", 2, 0, R, catch_r),
        (1.92, "catch", 1, 0, R, catch_r),
        # left hand: switchdelay, half a loop later, x mirrored, paths (1,2,3)
        (0.4, "throw", 2, 0, L, throw_l),
        (1.2, "throw", 1, 0, L, throw_l),
        (2.0, "throw", 3, 0, L, throw_l),
        (0.72, "catch", 1, 0, L, catch_l),
        (1.52, "catch", 3, 0, L, catch_l),
        (2.32, "catch", 2, 0, L, catch_l),
    ]
    assert_events(pattern, expected)


def test_switch_symmetry_mirrors_at_the_same_moment() -> None:
    pattern = jml.load(DATA / "sync_switch.jml")[0].plan()
    assert pattern.loop_duration == pytest.approx(1.6)
    assert pattern.prop_size == pytest.approx(8.5 / 6.8)
    expected = [
        (0.0, "throw", 1, 0, R, default_world(12, 5, 2)),
        (0.8, "throw", 3, 0, R, default_world(12, 5, 2)),
        (0.0, "throw", 2, 0, L, default_world(-12, 5, 2)),
        (0.8, "throw", 4, 0, L, default_world(-12, 5, 2)),
        (0.32, "catch", 3, 0, R, default_world(35, 5, 0)),
        (1.12, "catch", 1, 0, R, default_world(35, 5, 0)),
        (0.32, "catch", 4, 0, L, default_world(-35, 5, 0)),
        (1.12, "catch", 2, 0, L, default_world(-35, 5, 0)),
    ]
    assert_events(pattern, expected)


def test_holds_keep_props_in_the_hand() -> None:
    pattern = jml.load(DATA / "holds.jml")[0].plan()
    assert_events(
        pattern,
        [(0.0, "throw", 1, 0, R, default_world(10, 0, 0)), (0.7, "catch", 1, 0, R, default_world(25, 0, 0))],
    )
    # Path 2 is only held: it is where the left hand's position keys put it.
    for t, point in ((0.0, default_world(-25, 0, 0)), (0.5, default_world(-20, 10, 5))):
        assert np.linalg.norm(pattern.prop_positions([t])[1, 0] - point) < MM
        assert np.linalg.norm(pattern.hand_positions([t])[0, L, 0] - point) < MM
    # Path 3's type="hold" throw is no flight: it stays in the right hand, through its key at 0.3 s.
    t = np.linspace(0.0, 1.0, 101)
    np.testing.assert_allclose(pattern.prop_positions(t)[2], pattern.hand_positions(t)[0, R], atol=1e-12)
    assert np.linalg.norm(pattern.prop_positions([0.3])[2, 0] - default_world(15, 0, -5)) < MM


def test_bounce_throws_bounce_on_the_floor_with_their_bouncefrac() -> None:
    pattern = jml.load(DATA / "bounce.jml")[0].plan()
    assert_events(
        pattern,
        [
            (0.0, "throw", 1, 0, R, default_world(20, 0, 0)),
            (1.8, "catch", 1, 0, L, default_world(-25, 0, 0)),
            (2.1, "throw", 1, 0, L, default_world(-20, 0, 10)),
            (2.45, "catch", 1, 0, R, default_world(25, 0, 0)),
        ],
    )
    bounce = next(f for f in pattern.flights if f.bounces)
    assert bounce.bounces == 2
    assert bounce.arcs[0].v0[2] < 0  # forced: thrown down
    radius = 0.034
    for before, after in zip(bounce.arcs, bounce.arcs[1:], strict=False):
        impact = before.at(before.t1)
        assert impact[0][2] == pytest.approx(radius, abs=1e-9)  # the floor, 100 cm below the hands
        assert after.v0[2] == pytest.approx(-0.9 * impact[1][2])  # sqrt(0.81)


def test_positions_place_and_turn_the_jugglers() -> None:
    pattern = jml.load(DATA / "passing_positions.jml")[0].plan()
    assert pattern.prop_type == "ring"
    np.testing.assert_allclose(pattern.juggler_origins, [[0.7, 0.0, 0.0], [-0.7, 0.0, 0.1]], atol=1e-12)
    # A juggler faces Juggling Lab's (-sin a, cos a), which is (sin a, -cos a) in Blender's turned world.
    for j, angle in ((0, 270.0), (1, 90.0)):
        forward = np.array([math.sin(pattern.juggler_yaws[j]), -math.cos(pattern.juggler_yaws[j])])
        np.testing.assert_allclose(
            forward, [math.sin(math.radians(angle)), -math.cos(math.radians(angle))], atol=1e-12
        )
        # ... and toward the other juggler.
        other = pattern.juggler_origins[1 - j, :2] - pattern.juggler_origins[j, :2]
        assert forward @ other / np.linalg.norm(other) == pytest.approx(1.0)
    expected = [
        (0.0, "throw", 1, 0, R, placed_world(-70, 0, 100, 270, 10, 0, 0)),
        (0.8, "catch", 1, 1, L, placed_world(70, 0, 110, 90, -30, 5, 10)),
        (1.0, "throw", 1, 1, L, placed_world(70, 0, 110, 90, -10, 0, 0)),
        (1.8, "catch", 1, 0, R, placed_world(-70, 0, 100, 270, 30, 0, 0)),
    ]
    assert_events(pattern, expected)
    assert all(f.is_pass for f in pattern.flights)


def test_version_1_files_with_softcatch_and_bare_hands() -> None:
    [entry] = jml.load(DATA / "version1.jml")
    pattern = entry.plan()
    assert_events(
        pattern,
        [
            (0.0, "throw", 1, 0, R, default_world(10, 0, 0)),
            (0.5, "catch", 1, 0, L, default_world(-30, 0, 0)),
            (0.6, "throw", 1, 0, L, default_world(-10, 0, 0)),
            (0.9, "catch", 1, 0, R, default_world(30, 0, 0)),
        ],
    )


def test_pattern_lists_give_their_playable_lines_under_their_headers() -> None:
    entries = jml.load(DATA / "patternlist.jml")
    assert [(e.title, e.kind, e.section) for e in entries] == [
        ("Cascade", "siteswap", "Basics"),
        ("531 slow", "siteswap", "Basics"),
        ("Passing", "siteswap", "Basics"),
        ("Left-hand column", "jml", "Full patterns"),
    ]
    assert entries[1].config.bps == 3.5
    slow = entries[1].plan()
    assert slow.beat_duration == pytest.approx(1 / 3.5)
    assert slow.dwell_ratio == 1.0
    passing = entries[2].plan()
    assert (passing.num_jugglers, passing.prop_colors[:2]) == (2, [(1.0, 0.0, 0.0), (0.0, 0.0, 1.0)])
    column = entries[3].plan()
    assert_events(
        column,
        [
            (0.0, "throw", 1, 0, L, default_world(-10, 0, 0)),
            (0.6, "catch", 1, 0, L, default_world(-12, 0, 0)),
        ],
    )
    # The stored source of one entry loads back to the same entry.
    again = jml.load(entries[3].source)[0].pattern

    def events(pattern):
        return [
            (e.x, e.y, e.z, e.t, e.juggler, e.hand, [(r.kind, r.path, r.type) for r in e.transitions])
            for e in pattern.events
        ]

    assert events(again) == events(entries[3].pattern)


def test_load_reads_text_as_well_as_paths() -> None:
    text = (DATA / "holds.jml").read_text()
    assert jml.load(text)[0].pattern == jml.load(DATA / "holds.jml")[0].pattern
    assert jml.load(str(DATA / "holds.jml"))[0].pattern == jml.load(text)[0].pattern


@pytest.mark.parametrize("text", ["3", "531", "<3p|3p>", "5B", "24[54]", "(4,2x)*", "[33]33", "7531"])
@pytest.mark.parametrize("prop_type", ["ball", "club"])
def test_export_then_import_gives_the_same_events(text: str, prop_type: str) -> None:
    original = plan_pattern(parse_siteswap(text), prop_type=prop_type)
    written = jml.dump(original)
    if prop_type == "club":
        assert "clubs, written as balls" in written
    pattern = jml.load(written)[0].plan()
    loop = original.loop_duration
    assert pattern.loop_duration == pytest.approx(loop, abs=1e-6)
    mine = original.flights
    assert all(0 <= f.throw_time < loop for f in mine)  # one loop, each throw once
    assert len(pattern.flights) == len(mine)
    for f in mine:
        [g] = [g for g in pattern.flights if g.prop == f.prop and abs(g.throw_time - f.throw_time) < 1e-6]
        assert g.catch_time == pytest.approx(f.catch_time, abs=1e-6)
        assert (g.from_juggler, g.from_hand, g.to_juggler, g.to_hand) == (
            f.from_juggler,
            f.from_hand,
            f.to_juggler,
            f.to_hand,
        )
        assert g.bounces == f.bounces
        # JML events are hand positions: the hands match, and so do the balls (multiplex balls side by
        # side in both). Juggling Lab has no clubs: its ball sits in the hand, a club's origin does not.
        for t, juggler, hand in (
            (f.throw_time, f.from_juggler, f.from_hand),
            (f.catch_time, f.to_juggler, f.to_hand),
        ):
            assert (
                np.linalg.norm(
                    pattern.hand_positions([t])[juggler, hand, 0]
                    - original.hand_positions([t])[juggler, hand, 0]
                )
                < MM
            )
        if prop_type == "ball":
            assert np.linalg.norm(g.arcs[0].p0 - f.arcs[0].p0) < MM
            assert np.linalg.norm(g.arcs[-1].at(g.catch_time)[0] - f.arcs[-1].at(f.catch_time)[0]) < MM
    np.testing.assert_allclose(pattern.juggler_origins, original.juggler_origins, atol=1e-6)


def _lines(*rows: str) -> str:
    return "\n".join(rows)


PATTERN_HEAD = ('<?xml version="1.0"?>', '<jml version="3">', "<pattern>", '<setup jugglers="1" paths="1"/>')


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (_lines(*PATTERN_HEAD, '<symmetry type="delay" pperm="(1)" delay="1"/>'), "line 5: not well-formed"),
        (
            _lines(
                *PATTERN_HEAD,
                '<symmetry type="delay" pperm="(1)" delay="1"/>',
                '<event x="0" hand="1:left"/>',
                "</pattern>",
                "</jml>",
            ),
            'line 6, <event>: missing attribute "t"',
        ),
        (
            _lines(
                *PATTERN_HEAD,
                '<symmetry type="delay" pperm="(1)" delay="1"/>',
                '<event x="ten" t="0" hand="1:left"/>',
                "</pattern>",
                "</jml>",
            ),
            'line 6, <event>: x="ten" is not a number',
        ),
        (
            _lines(
                *PATTERN_HEAD,
                '<symmetry type="delay" pperm="(1)" delay="1"/>',
                '<event x="0" t="0" hand="1:left">',
                '<throw path="2"/>',
                "</event>",
                "</pattern>",
                "</jml>",
            ),
            "line 7, <throw>: path=2 but <setup> has 1 paths",
        ),
        (
            _lines(*PATTERN_HEAD, '<event x="0" t="0" hand="1:left"/>', "</pattern>", "</jml>"),
            "line 3, <pattern>: needs exactly one delay symmetry",
        ),
        (
            _lines(
                *PATTERN_HEAD,
                '<symmetry type="delay" pperm="(1)" delay="1"/>',
                '<event x="0" t="0" hand="1:middle"/>',
                "</pattern>",
                "</jml>",
            ),
            'line 6, <event>: hand="1:middle"',
        ),
        (
            _lines(*PATTERN_HEAD, '<symmetry type="delay" pperm="(1,2)" delay="1"/>', "</pattern>", "</jml>"),
            'line 5, <symmetry>: pperm="(1,2)": 2 is not from 1 to 1',
        ),
        (
            _lines('<?xml version="1.0"?>', '<jml version="9">', "<pattern/>", "</jml>"),
            'line 2, <jml>: version="9"',
        ),
        (_lines('<?xml version="1.0"?>', "<juggling/>"), "line 2, <juggling>: the top element must be <jml>"),
        (
            _lines(
                *PATTERN_HEAD,
                '<symmetry type="delay" pperm="(1)" delay="1"/>',
                "<wobble/>",
                "</pattern>",
                "</jml>",
            ),
            "line 6, <wobble>: not an element of a JML <pattern>",
        ),
        (
            _lines(
                '<?xml version="1.0"?>',
                '<!DOCTYPE jml [<!ENTITY a "aaaaaaaaaa">',
                '<!ENTITY b "&a;&a;&a;&a;">]>',
                '<jml version="3"><pattern/></jml>',
            ),
            "declares an entity",
        ),
        (
            _lines(
                '<?xml version="1.0"?>',
                '<jml version="3">',
                "<patternlist>",
                '<line display="x" notation="siteswap">pattern=3;bps=slow</line>',
                "</patternlist>",
                "</jml>",
            ),
            "line 4, <line>: bps=slow: not a number",
        ),
    ],
)
def test_malformed_files_name_the_line_and_element(text: str, words: str) -> None:
    with pytest.raises(JmlError) as error:
        jml.load(text)
    assert words in str(error.value)


def test_layout_errors_name_the_line() -> None:
    text = _lines(
        *PATTERN_HEAD,
        '<symmetry type="delay" pperm="(1)" delay="1"/>',
        '<event x="0" t="0" hand="1:left"><throw path="1"/></event>',
        '<event x="0" t="0.5" hand="1:right"><throw path="1"/></event>',
        "</pattern>",
        "</jml>",
    )
    [entry] = jml.load(text)
    with pytest.raises(JmlError, match=r"line 7, <event>: path 1 is thrown at t=0 s and again at t=0.5 s"):
        entry.plan()


def test_external_entities_and_the_dtd_are_never_fetched(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET")
    text = _lines(
        '<?xml version="1.0"?>',
        f'<!DOCTYPE jml SYSTEM "file://{tmp_path}/missing.dtd">',
        '<jml version="3"><patternlist><title>t</title></patternlist></jml>',
    )
    assert jml.load(text) == []  # the DTD is not looked for
    with pytest.raises(JmlError, match="entity"):
        jml.load(
            _lines(
                '<?xml version="1.0"?>',
                f'<!DOCTYPE jml [<!ENTITY s SYSTEM "file://{secret}">]>',
                '<jml version="3"><patternlist><title>&s;</title></patternlist></jml>',
            )
        )


def test_a_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(JmlError, match="cannot read"):
        jml.load(tmp_path / "nope.jml")


def test_moving_positions_walk_and_turn_the_juggler() -> None:
    pattern = jml.load(DATA / "walking.jml")[0].plan()
    assert pattern.root_motion is not None
    # Events land in the juggler's frame of their own moment (JL's convertLocalToGlobal).
    first, second = sorted(pattern.flights, key=lambda f: f.throw_time)
    assert np.linalg.norm(first.arcs[0].p0 - placed_world(0, 0, 100, 0, 10, 0, 0)) < MM
    assert (
        np.linalg.norm(first.arcs[-1].at(first.catch_time)[0] - placed_world(40, 0, 105, 30, -25, 0, 0)) < MM
    )
    origins, yaws = pattern.juggler_frames([0.0, 0.5, 1.0])
    np.testing.assert_allclose(origins[0, 1], [-0.4, 0.0, 0.05], atol=1e-9)
    assert math.degrees(yaws[0, 1] - yaws[0, 0]) == pytest.approx(30.0)
    np.testing.assert_allclose(origins[0, 0], origins[0, 2], atol=1e-9)  # periodic
    # Shoulders travel with the juggler; export then import keeps the walk.
    shoulders = pattern.shoulder_positions([0.0, 0.5])
    assert shoulders[0, 0, 0, 0] - shoulders[0, 0, 1, 0] > 0.3  # 40 cm along -X (JL +x)
    again = jml.load(jml.dump(pattern))[0].plan()
    for f in pattern.flights:
        [g] = [g for g in again.flights if abs(g.throw_time - f.throw_time) < 1e-6]
        assert np.linalg.norm(g.arcs[0].p0 - f.arcs[0].p0) < MM
        assert np.linalg.norm(g.arcs[-1].at(g.catch_time)[0] - f.arcs[-1].at(f.catch_time)[0]) < MM


def _continuous(spline) -> bool:
    _, _, first, last = spline.end_accelerations()
    return bool(np.allclose(np.roll(first, -1, axis=0), last, atol=1e-6 * np.abs(first).max()))


@pytest.mark.parametrize("name", sorted(p.stem for p in DATA.glob("*.jml") if p.stem != "patternlist"))
def test_jml_hands_use_the_bounded_planner_where_it_stays_in_reach(name: str) -> None:
    [entry, *_] = jml.load(DATA / f"{name}.jml")
    pattern = entry.plan()
    hermite = entry.plan(max_hand_acceleration=None)
    # The file's events are unchanged: same flights, hands on them (assert_events checks positions).
    assert len(pattern.flights) == len(hermite.flights)
    for flight, old in zip(pattern.flights, hermite.flights, strict=True):
        assert flight.throw_time == old.throw_time and flight.catch_time == old.catch_time
        np.testing.assert_allclose(flight.arcs[0].p0, old.arcs[0].p0, atol=1e-12)
        if flight.multiplex:
            continue
        j, h = flight.from_juggler, flight.from_hand
        np.testing.assert_allclose(
            pattern.hand_positions([flight.throw_time])[j, h, 0], flight.arcs[0].p0, atol=MM
        )
        np.testing.assert_allclose(
            pattern.hand_velocities([flight.throw_time])[j, h, 0], flight.arcs[0].v0, atol=1e-6
        )
        arrival, incoming = flight.arcs[-1].at(flight.catch_time)
        j, h = flight.to_juggler, flight.to_hand
        np.testing.assert_allclose(pattern.hand_positions([flight.catch_time])[j, h, 0], arrival, atol=MM)
        velocity = pattern.hand_velocities([flight.catch_time])[j, h, 0]
        along = velocity @ incoming / np.linalg.norm(incoming)
        assert -1e-6 <= along <= np.linalg.norm(incoming) + 1e-6
        np.testing.assert_allclose(velocity, along * incoming / np.linalg.norm(incoming), atol=1e-6)
    # Never further out of reach than the Hermite strokes; the warning names what the hands need.
    assert pattern.reach_warning is None or hermite.reach_warning is not None
    peak = pattern.hand_acceleration_peaks()[..., 0].max()
    assert (pattern.acceleration_warning is not None) == (peak > 4 * 9.80665)
    assert peak >= pattern.hand_acceleration_bound(laid_out=True)


@pytest.mark.parametrize("name", ["cascade_switchdelay", "sync_switch"])
def test_jml_hands_are_jerk_limited_and_gentler_than_the_hermite_strokes(name: str) -> None:
    # A file has no beat (sync_switch's "beat" is 0.8 s, two throws each): the planner's grid follows the
    # throws, so it meets events a fraction of a second apart.
    [entry] = jml.load(DATA / f"{name}.jml")
    pattern, hermite = entry.plan(), entry.plan(max_hand_acceleration=None)
    assert all(_continuous(spline) for spline in pattern._hands)
    assert not any(_continuous(spline) for spline in hermite._hands)
    assert (
        pattern.hand_acceleration_peaks()[..., 0].max()
        < 0.9 * hermite.hand_acceleration_peaks()[..., 0].max()
    )
