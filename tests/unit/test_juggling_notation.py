"""Siteswap notation: object counts from public pattern lists, period semantics, exact validity for
multiplex / sync / passing, every modifier, error messages with positions, and the bundled presets."""

from __future__ import annotations

import random

import pytest

from addon.errors import ProcAnimError
from addon.juggling import LEFT, RIGHT, Bounce, SiteswapError, parse_siteswap, plan_pattern, summarize
from addon.presets import load_presets

# Object counts as published in the standard siteswap lists (Juggling Lab's pattern library,
# the Juggling Information Service / juggle.fandom siteswap pages, Passing Zone / Prechac tables).
KNOWN_PROPS = {
    # solo asynchronous
    "1": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8, "9": 9, "{12}": 12,
    "31": 2, "312": 2, "330": 2, "40": 2,
    "51": 3, "531": 3, "441": 3, "423": 3, "52512": 3, "55500": 3, "50505": 3, "612": 3, "630": 3,
    "42T3": 3,
    "53": 4, "71": 4, "534": 4, "552": 4, "633": 4, "5551": 4, "7531": 4, "55550": 4, "6451": 4,
    "91": 5, "744": 5, "645": 5, "753": 5, "97531": 5, "66661": 5,
    "b97531": 6, "db97531": 7,
    # multiplex
    "24[54]": 5, "[54]24": 5, "24[504]": 5, "[43]14": 4, "[33]33": 4, "4[43]1": 4, "[60]": 6,
    "[53] 22": 4,
    # synchronous (and mixed)
    "(4,4)": 4, "(4x,4x)": 4, "(4x,2x)": 3, "(4,2)": 3, "(6,6)": 6, "(6x,6x)": 6, "(6x,2x)": 4,
    "(8x,4x)": 6, "(6x,4)*": 5, "(6x,4)(4,6x)": 5, "(4,2x)(2x,4)": 3, "(4,2x)*": 3,
    "([20],[20])": 2, "(4,[44])": 6, "(4,3x)!(2,0)!(3x,0)!": 4,
    "55556x56x1x(6x,4)(4,6x)(6x,4)(5x,7)(6x,4)": 5,
    # passing
    "<3p|3p>": 6, "<3p 3|3p 3>": 6, "<3p 3 3|3p 3 3>": 6, "<3p 3 3 3|3p 3 3 3>": 6,
    "<4p 2 3|4p 2 3>": 6, "<4p 3|3 4p>": 7, "<3P|3P>": 6, "<3P333|3P333>": 6,
    "<3p|3p|3p>": 9, "<3p 3|3p 3|3p 3>": 9, "<3p2 3 3p3 3|3p1 3 3 3|3 3 3p1 3>": 9,
    "<3P2 3P3|3P1 3|3 3P1>": 9, "<3p|3p|3p|3p>": 12,
}  # fmt: skip

# Object counts of every bundled preset, by name, from the same lists.
PRESET_PROPS = {
    "Cascade": 3, "Four-Ball Fountain": 4, "Five-Ball Cascade": 5, "Six-Ball Fountain": 6,
    "Seven-Ball Cascade": 7, "Two in One Hand": 2, "Two-Ball Shower": 2, "Three-Ball Shower": 3,
    "Four-Ball Shower": 4, "Five-Ball Shower": 5, "Four-Ball Half Shower": 4, "531": 3, "441": 3,
    "423": 3, "Three-Ball Flash": 3, "52512": 3, "612": 3, "5551": 4, "534": 4, "633": 4, "7531": 4,
    "744": 5, "645": 5, "97531": 5, "b97531": 6,
    "Multiplex 24[54]": 5, "Multiplex 24[504] (placeholder)": 5, "Multiplex [43]14": 4,
    "Multiplex [33]33": 4, "Sync Multiplex (4,[44])": 6,
    "Sync Fountain": 4, "Sync Crossing Fountain": 4, "Three-Ball Sync Shower": 3, "Box": 3,
    "Box (mirror notation)": 3, "Five-Ball Sync (6x,4)*": 5, "Six-Ball Sync Fountain": 6,
    "Four-Ball Sync Shower": 4, "Short-Beat Sync (4,3x)!(2,0)!(3x,0)!": 4,
    "Mills Mess": 3, "Windmill": 3, "Reverse Cascade": 3, "Claw Cascade": 3,
    "Bounce Cascade": 3, "Forced Bounce Cascade": 3, "Five-Ball Bounce": 5, "Bounce 441": 3,
    "Three-Club Cascade": 3, "Three-Club Flats": 3, "Three-Club Doubles": 3, "Four-Club Fountain": 4,
    "Five-Club Cascade": 5, "Club 531": 3,
    "Three-Ring Cascade": 3, "Five-Ring Cascade": 5, "Seven-Ring Cascade": 7, "Ring 441": 3,
    "Ultimates (One-Count)": 6, "Two-Count": 6, "Three-Count": 6, "Four-Count (Every Others)": 6,
    "Why Not": 6, "Seven-Club Two-Count": 7, "Two-Count (gunswap notation)": 6,
    "Three-Juggler Feed": 9, "Three-Juggler Feed (Fast Feeder)": 9, "Triangle One-Count": 9,
    "Triangle Two-Count": 9, "Square One-Count": 12,
}  # fmt: skip


def _landings_balance(siteswap) -> bool:
    """Independent re-check: in every (juggler, hand, beat) slot, props landing == props thrown."""
    balance: dict[tuple[int, int, int], int] = {}
    for throw in siteswap.throws:
        source = (throw.juggler, throw.hand, throw.beat % siteswap.cycle_beats)
        target = (throw.to_juggler, throw.to_hand, throw.catch_beat % siteswap.cycle_beats)
        balance[source] = balance.get(source, 0) - 1
        balance[target] = balance.get(target, 0) + 1
    return all(count == 0 for count in balance.values())


# --------------------------------------------------------------------------------------------------
# Object counts and the result's invariants


@pytest.mark.parametrize(("text", "props"), sorted(KNOWN_PROPS.items()))
def test_known_patterns_have_their_published_object_count(text, props):
    siteswap = parse_siteswap(text)
    assert siteswap.num_props == props
    assert _landings_balance(siteswap)
    # props = sum of the throws over one cycle / cycle length (the average theorem)
    assert sum(t.value for t in siteswap.throws) == props * siteswap.cycle_beats
    assert siteswap.cycle_beats % siteswap.period == 0
    assert all(0 <= t.beat < siteswap.cycle_beats for t in siteswap.throws)
    keys = [(t.beat, t.juggler, t.hand) for t in siteswap.throws]
    assert keys == sorted(keys)


def test_juggler_counts():
    assert parse_siteswap("531").num_jugglers == 1
    assert parse_siteswap("<3p|3p>").num_jugglers == 2
    assert parse_siteswap("<3p2 3 3p3 3|3p1 3 3 3|3 3 3p1 3>").num_jugglers == 3
    assert parse_siteswap("<3p|3p|3p|3p>").num_jugglers == 4


def test_sync_flag():
    assert not parse_siteswap("531").sync
    assert parse_siteswap("(4,4)").sync
    assert parse_siteswap("55556x56x1x(6x,4)(4,6x)(6x,4)(5x,7)(6x,4)").sync


# --------------------------------------------------------------------------------------------------
# Period and cycle semantics (issue 3)


@pytest.mark.parametrize(
    ("text", "period", "cycle"),
    [
        ("3", 1, 2),  # odd vanilla: the hands swap every time round
        ("531", 3, 6),
        ("441", 3, 6),
        ("51", 2, 2),
        ("4", 1, 2),
        ("(4,4)", 2, 2),  # a sync pair counts 2 beats
        ("(4,4)!", 1, 1),  # ... 1 with "!"
        ("(4,3x)!(2,0)!(3x,0)!", 3, 3),
        ("(4,2x)(2x,4)", 4, 4),
        ("(6x,4)*", 4, 4),  # "*" doubles the pattern as written
        ("(531^2)", 6, 6),  # "^n" expands
        ("(3^3)", 3, 6),
        ("<3p|3p>", 1, 2),  # a passing group counts one juggler's beats
        ("<3p 3|3p 3>", 2, 2),
        ("<3p 3 3|3p 3 3>", 3, 6),
        ("3x", 1, 1),  # not vanilla (x): no implicit doubling, as in Juggling Lab
        ("L3", 1, 2),  # a hand specifier on beat 0 keeps the pattern vanilla
    ],
)
def test_period_and_cycle(text, period, cycle):
    siteswap = parse_siteswap(text)
    assert (siteswap.period, siteswap.cycle_beats) == (period, cycle)


def test_odd_vanilla_cycle_swaps_hands():
    siteswap = parse_siteswap("531")
    hands = [t.hand for t in siteswap.throws]
    assert hands == [RIGHT, LEFT, RIGHT, LEFT, RIGHT, LEFT]
    assert [t.value for t in siteswap.throws] == [5, 3, 1, 5, 3, 1]


def test_rotations_have_equal_props_and_period():
    for text in ("531", "b97531", "24[54]", "52512"):
        base = parse_siteswap(text)
        for shift in range(1, len(text)):
            rotated = text[shift:] + text[:shift]
            if rotated.startswith("]") or "[" in rotated and rotated.index("]") < rotated.index("["):
                continue
            other = parse_siteswap(rotated)
            assert (other.num_props, other.period) == (base.num_props, base.period)


# --------------------------------------------------------------------------------------------------
# Property checks against the classic permutation test


def _permutation_valid(values: list[int]) -> bool:
    period = len(values)
    return len({(i + v) % period for i, v in enumerate(values)}) == period


def _random_valid_vanilla(rng: random.Random, period: int) -> list[int]:
    landing = list(range(period))
    rng.shuffle(landing)
    return [(landing[i] - i) % period + period * rng.randint(0, 2) for i in range(period)]


def _text(values: list[int]) -> str:
    return "".join("0123456789abcdefghijklmnopqrstuvwxyz"[v] if v < 36 else f"{{{v}}}" for v in values)


def test_random_valid_vanilla_patterns_parse_with_the_average_as_props():
    rng = random.Random(1234)
    for _ in range(300):
        values = _random_valid_vanilla(rng, rng.randint(1, 9))
        if sum(values) == 0:
            continue
        siteswap = parse_siteswap(_text(values))
        assert siteswap.num_props == sum(values) // len(values)
        assert siteswap.period == len(values)


def test_parser_validity_equals_the_permutation_test():
    """Perturbing two throws (+1, -1) keeps the average; validity must follow the permutation test."""
    rng = random.Random(99)
    checked = {True: 0, False: 0}
    for _ in range(400):
        values = _random_valid_vanilla(rng, rng.randint(2, 8))
        i, j = rng.sample(range(len(values)), 2)
        if values[j] == 0:
            continue
        values[i] += 1
        values[j] -= 1
        if sum(values) == 0:
            continue
        expected = _permutation_valid(values)
        checked[expected] += 1
        text = _text(values)
        if expected:
            assert parse_siteswap(text).num_props == sum(values) // len(values)
        else:
            with pytest.raises(SiteswapError, match="land"):
                parse_siteswap(text)
    assert checked[True] > 20 and checked[False] > 20


def test_symmetric_passing_is_valid_exactly_when_the_solo_pattern_is():
    """Both jugglers throwing the same sequence, passing on the same beats: a pass replaces a self."""
    rng = random.Random(7)
    for _ in range(150):
        values = _random_valid_vanilla(rng, rng.randint(1, 6))
        if rng.random() < 0.5:
            i, j = rng.sample(range(len(values)), 2) if len(values) > 1 else (0, 0)
            if values[j] > 0 and i != j:
                values[i] += 1
                values[j] -= 1
        if sum(values) == 0:
            continue
        throws = [(_text([v]) + ("p" if v and rng.random() < 0.5 else "")) for v in values]
        sequence = " ".join(throws)
        text = f"<{sequence}|{sequence}>"
        if _permutation_valid(values):
            siteswap = parse_siteswap(text)
            assert siteswap.num_props == 2 * sum(values) // len(values)
            assert _landings_balance(siteswap)
        else:
            with pytest.raises(SiteswapError):
                parse_siteswap(text)


def test_every_input_either_parses_or_raises_siteswap_error():
    """Fuzz: random token soup never escapes as IndexError / MemoryError / a hang."""
    tokens = [
        "3", "4x", "5", "1", "2", "0", "(4,2x)", "(6x,4)", "[33]", "[54]", "<3p|3p>", "<3p 3|3p 3>",
        "<3P2|3P1|3P>", "(", "^2)", "*", "!", "B", "BHL", "B{HL2}", "S{1,0,0,1}", "D{0.5}", "C{C}",
        "T{P}", "H", "T", "A", "L", "R", " ", "x", "p", "|", ">", "<", ",", "/", "{12}", "F", "Q", "]",
    ]  # fmt: skip
    rng = random.Random(5)
    parsed = 0
    for _ in range(3000):
        text = "".join(rng.choice(tokens) for _ in range(rng.randint(1, 7)))
        try:
            siteswap = parse_siteswap(text)
        except SiteswapError as error:
            assert str(error)
            assert summarize(text) == str(error)
            continue
        parsed += 1
        assert _landings_balance(siteswap)
        # Juggling Lab animates zero-prop patterns (jugglers who only move their hands) too.
        assert siteswap.num_props >= 0
        assert siteswap.num_props == sum(t.value for t in siteswap.throws) // siteswap.cycle_beats
    assert parsed > 100


# --------------------------------------------------------------------------------------------------
# Multiplex, sync, passing: exact validity and resolved fields


def test_multiplex_throws_share_beat_and_hand():
    siteswap = parse_siteswap("24[54]")
    beat2 = [t for t in siteswap.throws if t.beat == 2]
    assert sorted(t.value for t in beat2) == [4, 5]
    assert {t.hand for t in beat2} == {RIGHT}
    assert {t.to_hand for t in beat2} == {LEFT, RIGHT}


def test_multiplex_placeholder_zero_is_no_throw():
    with_zero = parse_siteswap("24[504]")
    without = parse_siteswap("24[54]")
    assert [(t.beat, t.hand, t.value) for t in with_zero.throws] == [
        (t.beat, t.hand, t.value) for t in without.throws
    ]


def test_multiplex_landing_mismatch_is_reported():
    with pytest.raises(SiteswapError, match=r"2 props land in the .* hand on beat \d+ \(throws at beats"):
        parse_siteswap("[43]23x")  # average 4, but two props meet
    with pytest.raises(SiteswapError) as error:
        parse_siteswap("[33]1")  # 3 + 3 + 1 over 2 beats isn't whole; [32]2 lands a pair on one throw
    assert "average of throws 3.5" in str(error.value)


def test_sync_pair_is_left_hand_first_and_resolves_x():
    siteswap = parse_siteswap("(4,2x)(2x,4)")
    left, right = siteswap.throws[:2]
    assert (left.hand, left.value, left.to_hand, left.crossing) == (LEFT, 4, LEFT, False)
    assert (right.hand, right.value, right.to_hand) == (RIGHT, 2, LEFT)
    assert right.crossing and not right.hold


def test_odd_throw_in_pure_sync_lands_on_the_empty_beat():
    with pytest.raises(SiteswapError) as error:
        parse_siteswap("(3,3)")
    assert str(error.value) == (
        '"(3,3)": 1 prop lands in the left hand on beat 1 (throw at beat 0), '
        "but it throws nothing on that beat"
    )


def test_mirror_swaps_the_hands_of_the_second_half():
    siteswap = parse_siteswap("(6x,4)*")
    second = [(t.hand, t.value, t.to_hand) for t in siteswap.throws if t.beat == 2]
    assert second == [(LEFT, 4, LEFT), (RIGHT, 6, LEFT)]
    explicit = parse_siteswap("(6x,4)(4,6x)")
    assert [(t.beat, t.hand, t.value, t.to_hand) for t in siteswap.throws] == [
        (t.beat, t.hand, t.value, t.to_hand) for t in explicit.throws
    ]


@pytest.mark.parametrize("text", ["3(4,4)5*", "(2x,4)15*", "1(6x,2x)*", "(4,2x)!4*", "(6x,4)*", "3*"])
def test_mirror_is_the_whole_pattern_again_with_hands_exchanged(text):
    """Juggling Lab mirrors async throws too (gunswap only mirrored the sync pairs)."""
    siteswap = parse_siteswap(text)
    half = siteswap.period // 2

    def shape(throws, offset, swap):
        return sorted(
            (t.beat - offset, t.value, t.hand ^ swap, t.to_hand ^ swap, t.crossing, t.hold) for t in throws
        )

    first = [t for t in siteswap.throws if t.beat < half]
    second = [t for t in siteswap.throws if t.beat >= half]
    assert shape(second, half, 1) == shape(first, 0, 0)
    assert _landings_balance(siteswap)


def test_mixed_mirror_swaps_the_async_hands():
    siteswap = parse_siteswap("3(4,4)5*")
    assert siteswap.num_props == 4 and siteswap.period == 8
    assert [(t.beat, t.hand) for t in siteswap.throws if t.value in (3, 5)] == [
        (0, RIGHT),
        (3, LEFT),
        (4, LEFT),
        (7, RIGHT),
    ]


def test_juggling_lab_letters_go_past_gunswaps_o():
    assert parse_siteswap("r1").num_props == 14  # r = 27
    assert parse_siteswap("p1").num_props == 13  # outside <...> p is the throw 25
    assert parse_siteswap("z1").throws[0].value == 35


def test_repeat_expands_like_writing_it_out():
    repeated = parse_siteswap("(531^2)")
    written = parse_siteswap("531531")
    assert [(t.beat, t.hand, t.value) for t in repeated.throws] == [
        (t.beat, t.hand, t.value) for t in written.throws
    ]
    nested = parse_siteswap("((3^2)3(3^2)^2)")
    assert nested.period == 10 and nested.num_props == 3
    assert parse_siteswap("(<3p|3p>^2)").period == 2


def test_pass_resolves_partner_and_hand():
    siteswap = parse_siteswap("<3p|3p>")
    first = siteswap.throws[0]
    assert (first.juggler, first.hand, first.to_juggler, first.to_hand) == (0, RIGHT, 1, LEFT)
    assert first.is_pass and first.crossing
    straight = parse_siteswap("<4p 3|3 4p>").throws[0]
    assert (straight.value, straight.to_juggler, straight.to_hand, straight.crossing) == (4, 1, RIGHT, False)


def test_pass_targets_number_jugglers_from_one_and_wrap_like_juggling_lab():
    feed = parse_siteswap("<3p2 3 3p3 3|3p1 3 3 3|3 3 3p1 3>")
    feeder = [t for t in feed.throws if t.juggler == 0 and t.is_pass]
    assert [t.to_juggler for t in feeder[:2]] == [1, 2]
    wrapped = parse_siteswap("<3p3|3p4>")  # 3 and 4 wrap to jugglers 1 and 2 of 2: two selves
    selves = [(t.juggler, t.to_juggler, t.is_pass) for t in wrapped.throws[:2]]
    assert selves == [(0, 0, False), (1, 1, False)]
    with pytest.raises(SiteswapError, match="numbered from 1"):
        parse_siteswap("<3p0|3p>")


def test_gunswap_capital_p_is_a_pass_whose_digit_names_an_existing_juggler():
    assert parse_siteswap("<3P|3P>").throws[0].to_juggler == 1
    assert [t.to_juggler for t in parse_siteswap("<3P2|3P1>").throws[:2]] == [1, 0]
    two = parse_siteswap("<3P333|3P333>")  # gunswap's old shorthand: 3P 3 3 3 (no juggler 3)
    assert two.period == 4 and two.num_props == 6
    three = parse_siteswap("<3P3|3P1|3P2>")
    assert [t.to_juggler for t in three.throws if t.beat == 0] == [2, 0, 1]
    assert not parse_siteswap("3P").throws[0].is_pass  # outside <...> it is a plain modifier


def test_solo_throws_in_a_passing_pattern_are_made_by_every_juggler():
    siteswap = parse_siteswap("<3p|3p>3")
    assert siteswap.num_jugglers == 2 and siteswap.period == 2
    assert {t.juggler for t in siteswap.throws if t.beat == 1} == {0, 1}


def test_hand_specifiers():
    assert parse_siteswap("L3").throws[0].hand == LEFT
    assert parse_siteswap("R3").throws[0].hand == RIGHT
    assert [t.hand for t in parse_siteswap("4L4").throws] == [RIGHT, LEFT]
    left_first = parse_siteswap("<L3p|L3p>")
    assert [(t.juggler, t.hand, t.to_hand) for t in left_first.throws if t.beat == 0] == [
        (0, LEFT, RIGHT),
        (1, LEFT, RIGHT),
    ]


# --------------------------------------------------------------------------------------------------
# Modifiers


@pytest.mark.parametrize(
    ("text", "bounce"),
    [
        ("3B", Bounce(1, "lift")),
        ("5BB", Bounce(2, "lift")),
        ("5BBF", Bounce(2, "force")),
        ("3BL", Bounce(1, "lift")),
        ("3BF", Bounce(1, "force")),
        ("3BHL", Bounce(1, "hyperlift")),
        ("3BHF", Bounce(1, "hyperforce")),
        ("3F", Bounce(1, "force")),  # Juggling Lab's legacy lone F
        ("5B{2}", Bounce(2, "lift")),
        ("5B{234}", Bounce(2, "lift")),  # gunswap: 2 bounces off surfaces 3 and 4
        ("5B{HL2}", Bounce(2, "hyperlift")),
        ("5B{F}", Bounce(1, "force")),
        ("5B{HF}", Bounce(1, "hyperforce")),
        ("5B{}", Bounce(1, "lift")),
    ],
)
def test_bounce_modifiers(text, bounce):
    assert parse_siteswap(text).throws[0].bounce == bounce


def test_spin_dwell_and_style_modifiers():
    throw = parse_siteswap("4S{2}").throws[0]
    assert (throw.spins, throw.spin_axis) == (2.0, None)
    throw = parse_siteswap("4S{1.5,0,3,4}").throws[0]
    assert throw.spins == 1.5
    assert throw.spin_axis == pytest.approx((0.0, 0.6, 0.8))
    assert parse_siteswap("3S{0}").throws[0].spins == 0.0
    assert parse_siteswap("3D{0.45}").throws[0].dwell == pytest.approx(0.45)
    throw = parse_siteswap("3C{C}T{P}").throws[0]
    assert (throw.catch_style, throw.throw_style) == ("claw", "penguin")
    throw = parse_siteswap("3C{P}T{C}").throws[0]
    assert (throw.catch_style, throw.throw_style) == ("penguin", "claw")
    plain = parse_siteswap("3").throws[0]
    assert (plain.spins, plain.dwell, plain.bounce, plain.catch_style) == (None, None, None, "normal")


def test_gunswap_modifiers_combine_in_one_throw():
    throw = parse_siteswap("<5xPS{2}D{0.6}C{C}|5xPS{2}D{0.6}C{C}>").throws[0]
    assert throw.is_pass and throw.spins == 2.0 and throw.dwell == pytest.approx(0.6)
    assert throw.catch_style == "claw"


@pytest.mark.parametrize(
    ("text", "holds"),
    [
        ("423", [False, True, False] * 2),  # a bare 2 is held
        ("42T3", [False] * 6),  # T throws it (Juggling Lab)
        ("42A3", [False] * 6),  # gunswap's A: an active 2
        ("2", [True, True]),
        ("(4,2)", [False, True]),
        ("(2x,4)(4,2x)", [False] * 4),  # a crossing 2 is thrown
        ("4H", [True, True]),  # H holds any same-hand throw
        ("1x", [True]),
        ("(4,2)!(2,4)!", [False, False, False, False]),  # the 2's hand throws on the next beat
    ],
)
def test_hold_resolution(text, holds):
    assert [t.hold for t in parse_siteswap(text).throws] == holds


def test_modifier_letters_must_not_swallow_hand_specifiers():
    siteswap = parse_siteswap("3BL3")  # L after B is the lift type, not a hand specifier
    assert siteswap.period == 2 and siteswap.throws[0].bounce == Bounce(1, "lift")


def test_columns_point_at_the_throw_in_the_text():
    assert [t.column for t in parse_siteswap("531").throws[:3]] == [0, 1, 2]
    siteswap = parse_siteswap("<3p 3|3p 3>")
    assert [t.column for t in siteswap.throws if t.juggler == 1][:2] == [6, 9]
    assert [t.column for t in parse_siteswap("24[54]").throws[:4]] == [0, 1, 3, 4]


# --------------------------------------------------------------------------------------------------
# Whitespace


def test_whitespace_is_tolerated_between_throws():
    def shape(siteswap):
        return [(t.beat, t.juggler, t.hand, t.value, t.to_juggler, t.to_hand) for t in siteswap.throws]

    assert shape(parse_siteswap(" 5 3 1 ")) == shape(parse_siteswap("531"))
    assert shape(parse_siteswap("( 4x , 2x ) ")) == shape(parse_siteswap("(4x,2x)"))
    assert shape(parse_siteswap("(4,4) !")) == shape(parse_siteswap("(4,4)!"))
    assert shape(parse_siteswap("[ 5 4 ] 2 4")) == shape(parse_siteswap("[54]24"))
    assert shape(parse_siteswap("{ 12 }")) == shape(parse_siteswap("{12}"))
    assert shape(parse_siteswap("\t<3p 3 |\n3p 3>")) == shape(parse_siteswap("<3p 3|3p 3>"))


def test_whitespace_separates_where_juggling_lab_needs_it():
    assert parse_siteswap("[53] 22").num_props == 4  # Juggling Lab issue 170 read this as 8
    assert parse_siteswap("3 x").num_props == 18  # a spaced x is the throw 33, not a crossing
    assert parse_siteswap("<3p 3|3p 3>").period == 2  # the space ends the pass target


# --------------------------------------------------------------------------------------------------
# Errors: what and where


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("543", '"543": 3 props land in the left hand on beat 5 (throws at beats 0, 1 and 2)'),
        ("54", '"54": average of throws 4.5 is not a whole number of props'),
        ("3421", '"3421": average of throws 2.5 is not a whole number of props'),
        ("5,3", '"5,3": unexpected "," at position 1'),
        ("53)", '"53)": unexpected ")" at position 2'),
        ("(3,3", '"(3,3": expected ")" but found the end of the text at position 4'),
        ("(4 4)", '"(4 4)": expected "," but found "4" at position 3'),
        ("[54", '"[54": expected "]" but found the end of the text at position 3'),
        ("[]3", '"[]3": empty multiplex [] at position 0'),
        ("3!", '"3!": "!" may follow only a synchronous pair at position 1'),
        ("3*3", '"3*3": unexpected "3" at position 2'),
        ("3**", '"3**": "*" may appear only once, at the end at position 2'),
        ("?3", '"?3": the wildcard "?" is not supported at position 0'),
        ("30x", '"30x": a 0 cannot cross ("0x") at position 1'),
        ("3B0B", '"3B0B": a 0 cannot take a modifier at position 2'),
        ("<30p|3>", '"<30p|3>": a 0 cannot be passed at position 2'),
        ("3H", '"3H": the 3 at position 0 is held (H) but lands in another hand'),
        ("3HB", '"3HB": a held throw cannot bounce at position 0'),
        ("3S{x}", '"3S{x}": spins "x" is not a number at position 3'),
        ("3S{1,0,0}", '"3S{1,0,0}": S{1,0,0} takes spins or spins,x,y,z at position 3'),
        ("3S{1,0,0,0}", '"3S{1,0,0,0}": the spin axis cannot be zero at position 3'),
        ("3S{nan}", '"3S{nan}": spins must be a finite number at position 3'),
        ("3D{0}", '"3D{0}": dwell D{0} must be greater than 0 at position 3'),
        ("3C{Q}", '"3C{Q}": catch style C{Q} must be C{C} or C{P} at position 3'),
        ("3B{Z}", '"3B{Z}": unexpected "Z" in bounce B{Z} at position 3'),
        ("3S{1", '"3S{1": expected "}" but found the end of the text at position 4'),
        ("(3^0)", '"(3^0)": a repeat count must be from 1 to 20000 at position 3'),
        ("<3p0|3p>", '"<3p0|3p>": jugglers are numbered from 1 at position 3'),
        (
            "<3p 3|3p>",
            '"<3p 3|3p>": in the passing group at position 0, juggler 2 has 1 beat but juggler 1 has 2',
        ),
        (
            "<3p|3p><3|3|3>",
            '"<3p|3p><3|3|3>": the passing group at position 7 has 3 jugglers, '
            "but the one at position 0 has 2",
        ),
        (
            "<3|3p|3>",
            '"<3|3p|3>": 2 props land in juggler 3\'s left hand on beat 1 '
            "(throws by juggler 2 at beat 0 and by juggler 3 at beat 0)",
        ),
        ("R", '"R": the pattern has no throws'),
        ("", "the siteswap is empty"),
        ("   ", "the siteswap is empty"),
    ],
)
def test_error_messages(text, message):
    with pytest.raises(SiteswapError) as error:
        parse_siteswap(text)
    assert str(error.value) == message


def test_siteswap_error_is_a_procanim_error_and_a_value_error():
    with pytest.raises(ProcAnimError):
        parse_siteswap("54")
    with pytest.raises(ValueError):
        parse_siteswap("54")


def test_huge_repeats_fail_fast_instead_of_expanding():
    with pytest.raises(SiteswapError, match="longer than 20000 beats"):
        parse_siteswap("((3^20000)^20000)")


def test_non_text_input():
    with pytest.raises(SiteswapError, match="must be text"):
        parse_siteswap(531)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------------
# Panel feedback


def test_summarize():
    assert summarize("531") == "3 props, period 3, 1 juggler"
    assert summarize("1") == "1 prop, period 1, 1 juggler"
    assert summarize("<3p 3|3p 3>") == "6 props, period 2, 2 jugglers"
    assert summarize("54") == '"54": average of throws 4.5 is not a whole number of props'
    assert summarize("") == "the siteswap is empty"
    assert summarize(None) == "a siteswap must be text, not NoneType"  # type: ignore[arg-type]
    assert summarize(["3"]) == "a siteswap must be text, not list"  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------------
# Presets


def test_presets_all_parse_with_their_published_object_counts():
    presets = load_presets("juggling")
    assert len(presets) >= 45
    assert {p["name"] for p in presets} == set(PRESET_PROPS)
    allowed = {"name", "description", "siteswap", "prop_type", "beat_duration", "dwell_ratio", "dwell_path"}
    for preset in presets:
        assert set(preset) <= allowed, preset["name"]
        assert preset["description"].strip(), preset["name"]
        siteswap = parse_siteswap(preset["siteswap"])
        assert siteswap.num_props == PRESET_PROPS[preset["name"]], preset["name"]
        assert preset.get("prop_type", "ball") in ("ball", "club", "ring")
        assert 0.05 <= preset.get("beat_duration", 0.25) <= 1.0
        assert 0.0 < preset.get("dwell_ratio", 0.5) < 2.0


def test_presets_cover_the_required_families():
    presets = load_presets("juggling")
    texts = {p["siteswap"] for p in presets}
    assert {"3", "4", "5", "51", "71", "531", "441", "423", "b97531", "24[54]", "(4,4)", "(4x,4x)"} <= texts
    assert {"(6x,4)*", "(4,2x)(2x,4)", "<3p|3p>", "<3p 3|3p 3>"} <= texts
    parsed = [parse_siteswap(t) for t in texts]
    assert any(t.bounce for s in parsed for t in s.throws)
    assert any(s.num_jugglers == 3 for s in parsed)
    assert {p.get("prop_type", "ball") for p in presets} == {"ball", "club", "ring"}
    assert "(" in next(p for p in presets if p["name"] == "Mills Mess")["dwell_path"]


def test_every_preset_plans_with_its_own_settings():
    """The presets are data for the planner too: timing, prop and dwell path must all be accepted."""
    for preset in load_presets("juggling"):
        options = {key: preset[key] for key in ("beat_duration", "dwell_ratio", "prop_type") if key in preset}
        pattern = plan_pattern(
            parse_siteswap(preset["siteswap"]), dwell_paths=preset.get("dwell_path", ""), **options
        )
        assert pattern.loop_duration > 0, preset["name"]
