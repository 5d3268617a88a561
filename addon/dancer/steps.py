"""The step vocabulary: names, the dancer's state between steps, legality and each step's phases.

A sequence is a list of names such as ``"first_position"``, ``"tendu_front:right"``. The suffix
names the working leg (for ``weight_shift``, the leg that takes the weight); without it the
paper's choice holds: the left leg supports, the right one works. Every step is planned against
the state the previous steps leave (which foot carries the weight, whether the working leg is up,
whether the dancer is on demi-pointe), so a step that cannot be balanced from there is refused with
the reason before anything is simulated.

Poses are written for the left supporting leg; the right-supporting version is the mirror image.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from .anthropometry import DancerError

POSITIONS = ("first_position", "second_position", "third_position", "fourth_position", "fifth_position")
STEPS = (
    "weight_shift", "demi_plie", "grand_plie", "tendu_front", "tendu_side", "tendu_back", "retire",
    "releve", "developpe_front_45", "developpe_front_90", "developpe_side_45", "developpe_side_90",
    "arabesque_45", "pivot_quarter",
)
SIDES = {"left": "L", "right": "R"}
# Steps the COP controller balances today, from first position. The others are planned and
# simulated (``allow_unbalanced=True``) but the dancer still falls during them, so a sequence
# using them is refused with that reason instead of baking a fall.
BALANCED = frozenset({"weight_shift", "retire", "releve", "tendu_front", "tendu_side", "tendu_back",
                      "developpe_front_45", "developpe_front_90", "developpe_side_45", "developpe_side_90",
                      "arabesque_45", "demi_plie", "grand_plie", "pivot_quarter"})
# What is balanced from each starting position, per supporting foot (for the weight shift, the
# foot taking the weight). With both feet kept planted by the closed-chain weight shift, first,
# third and fifth position hold every step on either leg (in third and fifth the free foot works
# from under its own hip, not crossed, and the supporting leg straightens first: see
# ``_off_the_floor`` and ``_free_lift``). In second the weight shift leaves the pelvis low over a
# bent supporting knee; straightened, every one-foot step follows (the relevé on one foot and the
# pivot too, since the relevé there starts from the balance's lean taken into its pose: see
# ``ABSORB_ON_THE_TOE``). In fourth every one-foot step holds on either foot (the tendus that
# cross the supporting foot pass high over it: see ``TENDU_PASSING``); onto the front foot the
# weight goes by the closed chain, and some ways onto and off it are refused (see
# ``_check_front_foot_of_fourth``).
_BOTH_FEET = frozenset({"demi_plie", "grand_plie"})
# Position changes within a sequence (position, new position, moving foot) that are balanced: the
# weight goes over the supporting foot (the left one from both feet), the moving foot comes straight
# up, is carried by IK over a raised midpoint to just above its place in the new position, the
# closed chain sets it down there (within 1 cm: it aims past the place by the legs' give under the
# load; the back foot of fifth set down in SET_DOWN_BEHIND of the change) and the weight goes to the
# middle and settles. Between first, third and fifth, either foot moving (the left one between first
# and third, and behind into fifth from first and third: the dancer turns 0-2 degrees, also after a
# plie or a change into third; not yet out of fifth into first and third: it held from the position
# but fell after a grand plie, and after the left foot's change into fifth; re-tried after the lean reset,
# session 10: from the position into first it falls at 1.1 m (9.0 s), into third at 1.1 and 1.3 m (7.6,
# 8.5 s), after a grand plie into third at 1.1-2.0 m (13.6-16.8 s), into first at 1.1, 1.3, 2.0 m, and
# after the left foot's change into fifth at 1.1 m into first, 1.3 m into third), each completes with a
# weight shift onto the other foot and a retire after it; so do the front foot's closes from fourth
# (the weight on the back foot) into first, third and fifth, the back foot's too (the weight on the
# front foot, the supporting leg straightened first: OFF_THE_FRONT_OF_FOURTH), and the changes into
# second from first and third with either foot (from third also after a plie there), from fourth
# with the right (front) one and from fifth with either,
# the left one not after a plie there (in at least INTO_SECOND_SECONDS: the supporting knee bends so the
# other leg reaches the wide place, and the weight goes to the middle as the foot lands; the foot is
# aimed at its place, not past it, see perform.COMPLIANCE_OFF_IN, and lands within 2 cm, from fourth
# 1.0-1.3 cm, also after plies there; a weight shift and a retire hold after it; see _check_balanced
# for what is refused after it). Out of second into first and third with either foot, in at least
# the seconds of OUT_OF_WIDE: the free foot lifts as a one-foot step there starts, the supporting leg
# straightening under the pelvis (lifted with the knee still bent from the weight shift and carried in
# 1 s, the leg swinging in threw the dancer: into first the right ankle flew 41 cm forward and across
# past the left foot, the left heel came up and the dancer fell 5.3 s in); the foot lands within
# 0.1-0.7 cm of its place at 1.1-2.0 m, the supporting foot moves 0.1-0.5 cm, and a weight shift and
# a retire hold after it; so do the steps after it when the left (back) foot had come into second from
# third or fifth (seeded draw 34 from fifth: fifth, weight shift onto the right foot, second, first,
# grand plie, tendu to the side on the left foot fell 71 s in, into third instead of first 36 s, before
# the lean reset after a change, Phase.lean_from_zero; now at 1.1-2.0 m they hold, the COM 1.2-9.0 cm
# inside in every step's last second, the feet within 0.1-1.5 cm of their places). Into fifth
# with the right foot, also after a weight shift onto the left foot, a plie or a tendu there: the feet
# within 0.1-0.6 cm of fifth's places, the left foot 0-0.6 cm from where it stood (1.1-2.0 m). The steps
# after it fell in seeded draws before the lean reset at the end of every change (seed 1 from second:
# second, fifth, tendu to the side on the left foot, grand and demi plie, fifth, first fell 45 s in, in
# the change into first; the grand and demi plie then first, 32 s; seed 59 a tendu to the side): with it
# they hold at 1.1-2.0 m (COM 1.5-9.3 cm inside in every step's last second), and the draws of 0-59 that
# pick the change (1, 16, 21, 44, 53) complete; the change back into second after it (seed 30) fell at
# 1.1 and 1.3 m (22 s; it holds since the change into second allows for the supporting leg's sag,
# perform.SAG_ONLY). With the left foot (behind) too,
# set down in twice OUT_OF_WIDE's share as behind into fifth from elsewhere (SET_DOWN_BEHIND): in its
# share, at 1.3 m the foot came down on its toes 3.5 cm short of its place, its heel never met the floor
# before the weight went to the middle, and both feet slid 5 cm back (5.4 the right one); now within
# 0.3-0.6 cm at 1.1-2.0 m, the right foot within 0.3 cm of where it stood, and a weight shift onto either
# foot and a retire, the tendus to the side, the plies, fifth and first after it hold. Into fourth the
# left foot goes back from third and fifth (the weight on the right foot; the feet within 0.1-1.6 cm of
# fourth's places at 1.1-2.0 m, and a weight shift onto the left foot, a tendu back and a retire, or
# standing again, a weight shift onto either foot and a retire or
# a developpe hold after it, and the plies and the weight shift onto the front foot with a retire since
# session 11, AFTER_THE_LEFT_FOOTS_CHANGE_INTO_FOURTH_FALLS). From first since session 12, carried in two
# halves (CARRIED_IN_TWO_HALVES): at 1.1-2.0 m the feet 0.3-0.7 cm off fourth's places (in 11-14 s 0.3-1.0,
# but 2.9 at 2.0 m in 11 s), and the steps after it as from third and fifth. Before, from first
# it fell at 1.65 and 2.0 m (10.0-10.1 s, 5.5 s into the change): over the front foot, the COM 7 cm ahead
# of its ankle, the carried foot reached 8 cm short of its place behind and the closed chain dragged it
# back as it landed (the foot lifted, the front heel came up); with the COM held where the upright weight
# shift left it, the foot reached its place but the landing leg pushed like a strut and the dancer fell
# forward at all four heights (also set down with the weight kept over the front foot); taking 14 s it fell
# at 1.65 and 2.0 m, 18 s at 2.0 m (12.9 s, as the foot landed). Why from first and not from third and fifth
# (session 11): the carry phase names fourth, so the COM target over the supporting foot jumps from first's
# share of the way to the middle of the foot (perform.SUPPORT_SHARE, 0.5) to fourth's (1.0), 4 cm forward
# and 3 cm out, as the carry starts; the carry's leg angles are solved once then, and the pelvis followed
# the target 6 cm forward during it (third and fifth hold the same share on both sides: no jump). Kept at
# first's share over the carry, the foot came down 1-2 cm short but its heel came up as it landed and the
# dancer fell forward and out (1.65 m, 10.9 s). Brought over the middle of the foot first (1-4 s on both
# feet, then lifted and carried at fourth's share) the change completed at 1.1-2.0 m in 46 of 48 runs (those
# seconds, the change in 10 or 12 s; two fell, 13.8 and 16.2 s), but the feet ended 0.3-4.9 cm off fourth's
# places, not smooth in the timing, and a weight shift onto the left foot after it ended with the COM
# 1.9-9.6 cm outside at 1.1 and 1.3 m: the carry still ends 3-6 cm short (at 2.0 m 5.5 cm: the pelvis
# pitches 2.4 degrees and moves 1.8 cm forward while the leg follows its targets within 0.01 rad), the chain
# then takes the foot there as it lands and it bounced up to 9 cm past and slid 2-3 cm. Planned from the
# pelvis moved so the COM stays put, the carry ended closer (2.0 m: 3.7 cm short) but 6 of 24 such runs fell
# (at 1.65 and 2.0 m, 12.1-14.8 s). Ramping the target over the whole carry (0.9 of it, not 0.5 s) held
# at 1.1-1.65 m but still fell at 2.0 m (10.1 s). Into fourth the right foot goes forward
# from first, third and fifth (in at least 10 s, see INTO_WIDE_SECONDS: set down by the closed chain,
# SET_DOWN_BY_CHAIN, with the weight to the middle as it lands and the pelvis a little low,
# perform.CHAIN_LOWER; the feet within 0.4-1.0 cm of fourth's places at 1.1-2.0 m, and the weight
# shifts onto either foot after it by the chain, CHAIN_SHIFT_AFTER_THE_CHANGE; see
# AFTER_THE_CHANGE_INTO_FOURTH_FALLS for what is refused after it).
TRANSITIONS = frozenset(
    [(a, b, "R") for a in ("first_position", "third_position", "fifth_position")
     for b in ("first_position", "third_position", "fifth_position") if a != b]
    + [("first_position", "third_position", "L"), ("third_position", "first_position", "L")]
    + [("fourth_position", b, f) for b in ("first_position", "third_position", "fifth_position")
       for f in ("R", "L")]
    + [(a, "second_position", f) for a in ("first_position", "third_position") for f in ("R", "L")]
    + [(a, "second_position", "R") for a in ("fourth_position", "fifth_position")]
    + [(a, "fifth_position", "L") for a in ("first_position", "third_position")]
    + [("fifth_position", "second_position", "L")]
    + [("second_position", b, "R") for b in ("first_position", "third_position", "fifth_position")]
    + [("second_position", b, "L") for b in ("first_position", "third_position", "fifth_position")]
    + [(a, "fourth_position", "R") for a in ("first_position", "third_position", "fifth_position")]
    + [(a, "fourth_position", "L") for a in ("first_position", "third_position", "fifth_position")])
# Changes whose carry goes in two halves: the first with the COM target moving over to the new position's
# place over the supporting foot through that half, the second with the leg's targets solved again from
# where the pelvis stands then. From first into fourth the left foot's carry names fourth, whose target
# lies at the middle of the supporting foot, not half way there from the ankle as first's
# (perform.SUPPORT_SHARE): 4 cm forward and 3 cm out, reached 0.5 s into the carry while the leg's targets
# had been solved once as it started; the pelvis followed the target 6 cm forward, the foot came down
# 7.6 cm short of its place, the closed chain dragged it there and the dancer fell forward at 1.65 and
# 2.0 m (10.0-10.1 s; it held at 1.1 and 1.3 m, the feet 0.3 cm off). Carried in two halves it holds at
# 1.1-2.0 m (session 12): the feet 0.3-0.7 cm off fourth's places, the COM 3.8-5.5 cm inside in the
# change's last second; standing again, a weight shift onto either foot with a tendu, developpe or retire,
# and the plies after it hold too. Only there for now: the other changes stay as they were danced.
CARRIED_IN_TWO_HALVES = frozenset([("first_position", "fourth_position", "L")])
# Where a tendu straight from both feet is balanced, per position: (direction, working foot). The
# weight goes onto the supporting foot, the working foot's toes slide out along the floor and back
# (Phase.slide), it comes back over its spot by IK (its knee bent forwards: see perform.HOVER_KNEE),
# and the closed chain closes it there (aiming past the spot by the legs' give under the load) and
# brings the weight back to the middle. In first every
# tendu on either leg (both feet within 0.6 cm of where they stood after six; each tendu back slid
# both 3.3 cm while the hovering knee was solved bent backwards). In third and fifth the front (right)
# foot's tendus, the weight on the back foot (COM 5.3-6.1 cm inside over each one's last second, the
# feet within 1.5 cm of their places after six in a row). In third the back (left) foot's too, the
# weight on the front foot (2.8-3.1 cm inside; closed along the floor, see perform._aimed_give: aimed
# below it, the front foot's tendu after them fell), but not after a plie there (see
# BACK_FOOT_TENDU_AFTER_A_PLIE).
# In fifth the back foot's tendus too (see TENDU_BEHIND_FROM_BOTH_FEET): its tendu front, from under
# its own hip, fell while the tendu was a battement (12.5 s in); with the toes along the floor it holds
# (1.3-2.0 m, also twice, after plies and before the front foot's: the COM 0.9-8.7 cm inside in every
# step's last second, the supporting foot 0.1-0.5 cm).
# In second every tendu on either leg (see TENDU_WIDE_SECONDS; before perform.WIDE_LANDING the first one fell
# as the foot came back), one after another since perform.CLOSE_ON_THE_PLACE but not after a tendu and a plie
# there (TENDU_ONCE_FROM_BOTH_FEET).
# In fourth the front (right) foot's tendus front and side, the weight on the back foot (see TENDU_BY_CHAIN;
# the COM 3.2-6.9 cm inside over their last second at 1.1-2.0 m, the feet within 1.3 cm of their places),
# once per stay there (TENDU_ONCE_FROM_BOTH_FEET) and not after a plie (TENDU_AFTER_A_PLIE_FALLS). The back
# (left) foot's tendu back too, the weight on the front foot, with the supporting leg straightened first and
# the free foot held over its spot (TENDU_BEHIND_FROM_BOTH_FEET, HELD_OVER_ITS_SPOT): the COM 1.2-5.6 cm
# inside over its last second at 1.1-2.0 m, the feet within 1.0-1.3 cm of their places (at 1.1 m after
# standing again too since session 12: 1.2 cm inside, the weight shift after it 1.9; it was refused there,
# 13.6 cm outside). Before, by the chain's bent supporting knee (51 degrees,
# the pelvis 7 cm low), the foot coming back rolled the pelvis, the one-foot pelvis trim wound up to 39
# degrees and pitched it as far, and levelled again at once as the chain closed the foot the dancer fell
# (10.7 s in at 1.65 m). Same rules after it as after the front foot's (AFTER_THE_TENDU_BY_CHAIN_FALLS);
# standing again after it, straight or back from a weight shift onto the back foot, the legs stay on the
# closed chain that closed it (State.closed_behind; with the legs leaning alike the dancer tipped backwards
# 1 s in at 1.1-1.65 m, and 20-21 s in after the weight shift): the COM 0.4-4.8 cm inside over its last
# second at 1.1-2.0 m, 4.8-8.2 cm after the weight shift (the least, 0.4 at 2.0
# m, where one ball lets go of the floor for a tick as the chain starts again from the feet; the steps after
# it 1.9-7.3 cm). Its tendu to the side so too (before: fell 8.8 s in at 1.65 m, as the foot slid back in):
# straight from the position 1.2-4.9 cm inside, the feet within 1.1-1.2 cm at 1.1-2.0 m. At 1.1-1.25 m it
# was refused (the weight shift onto the front foot after it fell after standing again at 1.1 and 1.15 m,
# 19.7 and 18.7 s in, and ended 17.9 cm outside at 1.25 m after a weight shift onto the back foot and back);
# re-measured in session 12 (main at db13199) every 5 cm over 1.1-1.25 m straight, after standing, after a
# weight shift and back, after the changes from first, third and fifth, and standing or the weight shifts
# after it: the COM 1.2-6.2 cm inside over the last second of each step.
# The tendus that would pass through the other foot's place, the front foot's back and the back foot's front,
# are refused as no tendu from fourth (TENDU_CROSSING_FELL has what they did).
TENDU_CROSSING_FELL = {
    "front": "tried, it fell 6.4-6.5 s in at 1.1-2.0 m passing over the supporting foot (see TENDU_PASSING), "
             "also lifted straight up over its spot first by IK (4.7-4.9 s)",
    "back": "tried as the back foot's tendu back, it fell 8.2-8.5 s in at 1.1-2.0 m",
}
_EITHER_FOOT_TENDUS = frozenset((d, f) for d in ("front", "side", "back") for f in ("L", "R"))
TENDU_FROM_BOTH_FEET = {
    "first_position": _EITHER_FOOT_TENDUS,
    "second_position": _EITHER_FOOT_TENDUS,
    "third_position": _EITHER_FOOT_TENDUS,
    "fourth_position": frozenset({("front", "R"), ("side", "R"), ("side", "L"), ("back", "L")}),
    "fifth_position": _EITHER_FOOT_TENDUS,
}
# Where a tendu from both feet goes onto the supporting foot and closes back by the closed chain although
# standing there leans both legs alike (``uses_closed_chain``). In fourth, leaning alike, the front foot's
# tendus front and side fell 11.3 s in as the foot closed: the legs went back to the position's angles with
# the pelvis still over the back foot and the foot came down 8-14 cm short of its place. By the chain (and
# the pelvis rising slowly as it lands, perform.WIDE_LANDING, in TENDU_CLOSE_WIDE's seconds) they hold.
# The feet then stand where the chain closed them, as after a change: the weight shifts by the chain after
# it (CHAIN_SHIFT_AFTER_THE_CHANGE; leaning alike onto the back foot after the tendu to the side ended 5.8 cm
# outside the polygon at 2.0 m and fell at 1.65 m with a plie before it). No plie after it yet (see
# AFTER_THE_TENDU_BY_CHAIN_FALLS).
TENDU_BY_CHAIN = ("fourth_position",)
# What still fell after a tendu from both feet in TENDU_BY_CHAIN, and how (1.1 and 2.0 m; standing again,
# the weight shift onto either foot and the relevé on both feet after it hold).
AFTER_THE_TENDU_BY_CHAIN_FALLS = {
    "change": "the changes into first, third, fifth and second fell at 2.0 m 4.1-8.1 s in (into fifth at "
              "1.1 m too)",
    "plie": "by the legs' angles solved from the feet (as after a change) the grand plie after the tendu "
            "to the side fell at 1.65 and 2.0 m (19.8, 19.1 s) and seeded draw 49 from fifth fell in one "
            "99.6 s in; by the closed chain they held there, but draw 29 with eleven plies after it ended "
            "one 1.8 cm outside the polygon, and the weight shift after two ended 2.3 cm outside at 1.1 m",
}
# Where a tendu from both feet fell after a plie in the position, and how.
TENDU_AFTER_A_PLIE_FALLS = {
    "fourth_position": "after a demi plie the tendu to the side fell at 1.1 and 1.3 m (8.3, 10.4 s), after a "
                       "grand plie the tendu front at 1.1 m (10.3 s)",
}
# Where the back foot's tendus from both feet are done as the one-foot tendu after a weight shift: the
# closed-chain shift onto the front foot leaves its knee bent 20 degrees, and the supporting leg
# straightens under the pelvis before the free foot goes anywhere (see _off_the_floor; without it the
# back foot's lift swung it forwards past the front foot and the dancer fell, 9.0 s into the tendu
# back). It closes in TENDU_CLOSE_BEHIND seconds with the legs' pose blended over
# TENDU_CLOSE_BEHIND_BLEND: the chain bends the front knee back to 20 degrees as the weight goes to the
# middle, and in TENDU_CLOSE (pose over half a second) the feet chattered off the floor and both slid
# 4 cm back (in 6 s with the pose over half a second, 16 cm); now 0.5-0.9 cm, the COM 6.1-6.7 cm
# inside. In fourth the knee was bent 51 degrees (the pelvis 7 cm low) and the back foot is held over its
# spot as the leg straightens (HELD_OVER_ITS_SPOT); it closes in TENDU_CLOSE_WIDE's seconds there.
TENDU_BEHIND_FROM_BOTH_FEET = ("fourth_position", "fifth_position")
# In second a tendu from both feet leaves the supporting knee bent as the weight shift does (40-46 degrees:
# the other foot, far out, holds the pelvis down) and the working foot closes onto its wide place from
# there (see perform.WIDE_LANDING). It takes at least TENDU_WIDE_SECONDS: the toes slide out further from
# the lowered hip (40 cm back at 2.0 m), and coming back in the 1.75 s of a 5 s tendu the knee bent at its
# fastest to keep the heel off the floor, the leg swung in and the dancer fell (tendu back, 2.0 m, 9.1 s
# in). It closes in TENDU_CLOSE_WIDE (seconds, the legs' pose blended over): in TENDU_CLOSE's 2.5 s with
# the pose over half a second the landing foot came down 4 cm inside its place and the dancer fell.
TENDU_WIDE_SECONDS = {"second_position": 6.5}
# Where only one tendu from both feet is balanced per stay in the position, and why not more, nor after a
# change into it. In second the supporting foot slides 0.2 cm out as the weight comes onto it and 0.5 cm as
# the closing foot takes the weight back: two and three in a row hold (1.1-2.0 m, the feet within 0.9-1.9
# cm of their places after three at 1.1-1.65 m, 3.5 at 2.0 m), but in seeded 20-step draws with many the
# feet walked 5-10 cm apart and the dancer fell in the 16th-19th step (draws 16, 35, 41 of 0-59) or ended a
# tendu with the COM 1.6 cm outside the polygon (31); since perform.CLOSE_ON_THE_PLACE they stay on their
# places and one after another is legal there (seeded draws 16 of 0-59 and 136, 151, 161 of 60-179, the ones
# the lift changes, complete at 1.1, 1.65 and 2.0 m). After a change into second (re-tried after the lean
# reset, session 10): from fifth the left foot's tendu back still falls at 1.65 and 2.0 m (21.6, 22.4 s; at
# 1.1 m the change itself falls), the right foot's holds at 1.3-2.0 m, as from first. Since the change
# allows for the supporting leg's sag (perform.SAG_ONLY) every tendu on either foot after the right foot's
# change from first or fifth, and the left foot's from third, completes at 1.1-2.0 m with the COM 0.6-8.5 cm
# inside in its last second, but the feet end off second's places by up to 2.1 cm after the change from
# first (the right foot's tendu back at 1.1 m), 1.4-3.5 cm after the one from fifth (worst at 1.1-1.3 m;
# that change itself lands 2.6 cm off at 1.1 m), 0.3-1.5 after the one from third: still refused.
TENDU_ONCE_FROM_BOTH_FEET = {
    "second_position": {
        # Since perform.CLOSE_ON_THE_PLACE one after another holds, but not once a plie came between (in
        # seeded draw 16 at 2.0 m, four tendus, a demi plie and a tendu to the side: the closing foot's toes
        # came up and the COM was 0.3 cm outside the polygon in its last second; after one tendu and a plie
        # 5.5 cm inside).
        "again after a plie": "after a tendu and a plie there the closing foot's toes came up at 2.0 m, the "
                              "COM 0.3 cm outside the feet",
        "changed": "from fifth, after the change into second the back foot's tendu back fell 8 s in",
    },
    # After a change into fourth one holds (the front foot's tendu front, then a weight shift onto the back
    # foot and the one-foot tendu to the side, 1.1-2.0 m).
    "fourth_position": {
        "again": "the second one (the tendu to the side after the tendu front) ended with the COM on the "
                 "edge of the polygon at 1.1 m (0.02 cm outside in its last second)",
    },
}
# In fourth in TENDU_CLOSE's 2.5 s (the pose over 1.5 s) the tendu front ended 1 cm outside at 1.1 m.
TENDU_CLOSE_WIDE = {"second_position": (4.0, 1.5), "fourth_position": (4.0, 1.5)}
TENDU_CLOSE_BEHIND = 4.0
# Where the back foot's tendus from both feet close in these (seconds, the legs' pose blended over), not in
# TENDU_CLOSE's 2.5 s with the pose over half a second: in third at 2.0 m both feet chattered on the floor as
# the weight went back to the middle after the tendu back (off it for ticks, both 2.9 cm back) and the COM
# ended 6.2 cm outside the polygon in its last second; so it ends 7.6 cm inside, the feet within 0.4 cm.
BACK_FOOT_CLOSE = {"third_position": (4.0, 1.5)}
TENDU_CLOSE_BEHIND_BLEND = 2.0
# Positions where the back foot's tendus from both feet are refused after a plie, and why. Re-tried after
# the lean reset (session 10): the feet no longer walk apart (0.05-1.5 cm off their places after the
# sequences that walked them 2.3-3.7 cm), and third, demi plie, tendu back and third, grand plie, tendus on
# the left foot between plies hold at 1.1-2.0 m; but third, tendu back, two grand plies, tendu to the side
# (left foot) ended that tendu with the COM 0.1 cm outside at 1.65 m, and the tendu back on the left foot
# straight from third (legal) ended 6.2 cm outside at 2.0 m.
BACK_FOOT_TENDU_AFTER_A_PLIE = {
    "third_position": "after a plie there the back foot's closes walked the feet apart, 2.3 cm off their "
                      "places after one tendu and 3.7 after another past two grand plies, and the grand "
                      "plie after that fell",
}
# The change from third into second after a plie there, either foot moving, fell (fourth seed 28 after a
# change into third, and third, demi plie, second 14.3 s in, 15.1 with a weight shift onto the right foot
# between, 43.7 in seed 28: the foot landing in second came down 2.5 cm off its place, its toes came up as
# the chain pulled it in and the COM went 9 cm the other way, off the supporting foot) and was refused until
# session 10; after the lean reset it still fell at 1.1 and 1.3 m (13.8-17.0 s). Since the change allows
# for the supporting leg's sag (perform.SAG_ONLY) it holds at 1.1-2.0 m, the foot within 1.8-2.2 cm of its
# place after a demi plie, 2.6-2.9 after a grand plie.
# The left foot's changes between first and third (by the new position) that fell right after the change
# out of fourth into the position they leave (seeded sweep seed 63 from fourth: fourth, first, weight shift
# onto the right foot, third fell 14.4 s in, 16.1 with first standing between, and fourth, third, weight
# shift, first 16.3): the carried foot swung 15 cm up and on to 27 cm behind the supporting foot, and the
# dancer fell backwards. Into fifth from there it held, and so do these changes when first or third was not
# reached from fourth. Re-tried after the lean reset (session 10): fourth, first, weight shift, third still
# falls at 1.1-2.0 m (14.2-15.0 s), fourth, third, weight shift, first at 1.65 m (16.3 s). The same at
# 253600e (session 11). Into third the carry starts like the one straight from first (COM, pelvis and foot
# within 1 cm a second in) until the foot passes the supporting ankle: the COM then stops 2 cm ahead of that
# ankle with the COP ahead of it while the target has jumped to 7 cm (first's share to third's, see the
# change from first into fourth above), goes back, and the foot overshoots to 24-39 cm behind. First's pose
# names no hip flexion, so after the change from fourth the supporting hip's target kept the one the change
# left (0.18 rad, 0 in a fresh first) and blended to it during the carry, pitching the pelvis 9 degrees; set
# to 0 (tried, not kept), the pitch stays 1-2.5 degrees but the dancer still fell (14.3-14.8 s). Carried at
# first's share it still fell (and the change from fourth into first fell at 1.1 m, 7.8 s); brought over the
# middle of the foot first (2 s), it fell 2 s later at 1.1-1.65 m and held at 2.0. Session 12: carried in two
# halves as from first into fourth (CARRIED_IN_TWO_HALVES) both fell at 1.1-2.0 m (13.7-14.9 s), also with
# first's hip flexion set to 0; with the balance's lean absorbed into the lift's pose, earlier (12.5-13.9 s).
# Traced at 1.65 m: the change out of fourth sets the right (supporting) hip's flexion target to -0.22 rad at
# the carry's end, first's pose names none, so it stays through the closed chain's settle and the weight
# shift while the joint stands near 0 (the lean makes up 0.17-0.21 rad); the lift then leaves the target at
# +0.18 with the joint at -0.05 (straight from first: -0.01 and -0.04), and the carry pitches the pelvis.
# That was the balance's lean kept from the change out of fourth's closed chain: with the lean from none as
# that change settles (LEAN_FROM_NONE_OUT_OF, session 12) both hold at 1.1-2.0 m, the feet 0.3-0.8 cm off the
# new position's places and the COM 4.1-7.5 cm inside in the change's last second (refused until then as
# LEFT_AFTER_FOURTH_FALLS).
# The right (front) foot's change from third into second once the weight had shifted onto the left foot in
# a third reached by a change fell (seeded sweep from third, session 8, seed 2043 138.9 s in; first, third,
# weight shift onto the left foot, second 18.5 s in, from fifth 18.3) and was refused until session 10: still
# falling after the lean reset (1.3-2.0 m, 18.2-18.8 s), it holds since a change into second allows for the
# supporting leg's sag (perform.SAG_ONLY): at 1.1-2.0 m the foot within 0.2-1.6 cm of its place, the COM
# 4.7-8.3 cm inside in the change's last second.
# Where the weight cannot shift back yet onto a foot a one-foot step left hovering (elsewhere it is
# set down as a tendu from both feet closes, or carried to its place first, CARRIED_TO_ITS_PLACE, then
# the weight goes over), and why. In fourth (tried in
# session 10, a tendu to the side then the weight shift back and a retire on the other foot): onto the
# hovering front foot it holds at 1.65 and 2.0 m (and after the tendu front at 1.65), but at 1.1 and 1.3 m
# the front foot was set down with its heel up, the foot rocked as the weight came and the dancer fell at
# the end of the shift (20.9 and 21.6 s, the COM off the polygon in the shift's last second); onto the
# hovering back foot it fell at 1.1-2.0 m, 0.5-4 s into the shift (12.0-15.7 s; after the tendu back at
# 1.65 m, 16.3 s).
HOVER_SHIFT_FALLS = {
    "fourth_position": "set down onto the front foot, its heel stayed up and the dancer fell at 1.1 and "
                       "1.3 m; onto the back foot it fell at 1.1-2.0 m",
}
# Where a weight shift back onto a hovering foot carries it out to its place first, in the seconds given,
# shared by CARRY_BACK_SHARES (the carry, the set-down, the weight to the middle) as a change into the
# position carries its moving foot (by IK over a raised midpoint, the supporting knee giving where the
# place is beyond the leg's reach; set down by the closed chain with the weight to the middle as it
# lands, the balance's lean from none as it settles), then the weight goes over. In second the one-foot
# steps leave the foot under its own hip, 24 cm inside its wide place: brought back over the place by IK
# alone from the straightened supporting leg, the solution threw the leg 35 cm forward and 28 cm up and
# the dancer fell 0.4 s into the shift (1.1-2.0 m; 11.9 s into second, weight shift, tendu to the side,
# weight shift back at 1.65 m). Carried, it holds after the tendus, the developpe and the arabesque on
# either foot at 1.1-2.0 m, and the retire, a tendu, standing and the change into first after it: the
# feet end the shift 0.4-1.7 cm off second's places (after the arabesque 2.6 at 2.0 m), both walked
# 1.2-3.2 cm the same way. With the seconds and shares of a change out of second (OUT_OF_WIDE: 3 s of
# carry, the weight to the middle in 3.25) standing after it ended with the COM 2.1 cm outside the feet
# at 1.1 m and the shift after the arabesque fell at 2.0 m (24.7 s). Once per stay: a second one (second,
# weight shift, tendu to the side, back, the other foot's tendu, back) fell at 2.0 m, 35.5 s in; after a
# change into second (from third) it held at 1.65 and 2.0 m (at 1.3 m that change falls by itself, 9.3 s),
# refused with the second one since the feet stand as after a change.
CARRIED_TO_ITS_PLACE = {"second_position": 8.0}
CARRY_BACK_SHARES = (1.0, 0.75, 1.75)
BALANCED_FROM = {
    "first_position": {"L": BALANCED, "R": BALANCED},
    "second_position": {"L": BALANCED, "R": BALANCED},
    "third_position": {"L": BALANCED, "R": BALANCED},
    "fourth_position": {"L": BALANCED, "R": BALANCED},
    "fifth_position": {"L": BALANCED, "R": BALANCED},
}
# Where the relevé on one foot starts from the balance's lean taken into its pose (the lean then
# starts again from none). The lean is a world rotation turned into joint angles along each joint's
# axis as it points now; as the supporting foot rises onto its ball the ankle's axes turn with it,
# so a large lean carried into the rise changes the ankle's targets by itself. After the weight
# shift in second the balance leans the supporting leg 0.28 rad sideways (0.11 from first): carried
# into the rise, the dancer rolled off the toe towards the free side 3 s in and fell; taken into the
# pose, the relevé and the pivot after it hold (COM 2.7-2.9 cm inside the toe's polygon in their
# last second). From first the paper's relevé is left as tuned.
ABSORB_ON_THE_TOE = ("second_position",)
DEFAULT_TURNOUT = np.radians(40.0)
RELEVE_ANGLE = 0.75
# The relevé on both feet, in seconds: onto the balls, the heels' first lift (to RELEVE_START rad),
# the whole rise, the way down, the COM back to the middle, the legs back to the position. The
# hold on the balls takes the rest of the step's seconds.
RELEVE_PARTS = {"shift": 1.5, "lift": 0.5, "rise": 0.8, "down": 2.0, "back": 1.5, "rest": 0.7}
RELEVE_START = 0.2
# Where the relevé on both feet takes the weight forward over the balls, the feet still flat, by both
# legs leaning alike (the paper's lean). Elsewhere the legs are posed about the feet where they stand
# (``Phase.heels`` at 0), as on the balls: in second, leaning alike, the wide feet slid 0.4 cm apart
# before the heels left the floor (1.9 cm by the end of the step; 0.7 now, with
# perform.BALLS_AIM_IN); in fourth the back foot came off the floor and the dancer fell 1 s in.
SHIFT_BY_LEANING = ("first_position",)
# The relevé on both feet holds in every position (some ways into it are refused: _check_balanced). In
# second straight from the position, after plies, a weight shift and back, a change into it with either
# foot (the balls within 0.5-1.3 cm of their places, the COM 0.3-8 cm inside the feet in its last second,
# 1.1-2.0 m); in third too (see RELEVE_BACK); in fifth and fourth on poses that roll the pelvis
# (perform.BALLS_ACROSS; in fourth see REST_ON_THE_FEET).
# Seconds the weight takes back from the balls to the middle of the feet, where not RELEVE_PARTS'.
# In third, in 1.5 s the back heel came up as the weight went back (the COM went 3.5 cm sideways
# towards the back foot, which the balls' poses do not correct) and the step ended with the COM 1.8 cm
# off the feet; in 3 s it ends 3.7-6.7 cm inside with the balls within 0.2-1.2 cm of their places
# (straight from the position, after plies, the front foot's tendus, a weight shift, a change into third,
# 1.1 to 2.0 m). In 2.5 s it ended 0.5 cm outside at 1.65 and 2.0 m.
RELEVE_BACK = {"third_position": 3.0}
# Where the relevé on both feet ends with the legs on the angles that stand the feet where they are
# (``Phase.heels`` at 0, the COM where the dancer stood) instead of the position's. In fourth, the feet a
# foot length apart, the balls ended 1.1-1.8 cm further apart than they started, the legs going back to
# the position's straight angles could not reach both, and the dancer tipped back off the front heel
# (the back foot off the floor); on the feet's angles it holds, COM 3.6-7.5 cm inside, 1.1-2.0 m.
# The steps on both feet after it that lean the legs alike stay posed about the feet too (see
# _posed_about_the_feet); what still falls after it is in AFTER_THE_RELEVE_ON_THE_FEET_FALLS.
REST_ON_THE_FEET = ("fourth_position",)
# After the relevé on both feet in REST_ON_THE_FEET, what still fell (1.65 m), and how. The weight shift
# onto the back foot, standing again and the one-foot steps on the back foot hold (_posed_about_the_feet).
AFTER_THE_RELEVE_ON_THE_FEET_FALLS = {
    "front": "by the closed chain the COM ended 1.4 cm outside the feet in the shift's last second (0.04 cm "
             "inside with the feet held in place through the releve, and the retire after it fell 14.0 s "
             "in); posed about the feet instead both slid 16 cm and the retire after it fell",
    "change": "the changes into first and fifth fell 3.9 s in, also after a weight shift onto the back foot "
              "(2.2 s)",
    "releve": "with another releve among the plies after it the dancer fell in a grand plie (1.65 m)",
    "plied": "a plie after it leaves the front heel up; standing again the COM ended 0.2-0.4 cm outside the "
             "feet as the heel came down (1.65 m, seed 8 of the draw from fourth with the releve), and from "
             "the back foot after a grand plie the back foot slid 5.5 cm",
}
# The relevé on one foot after the weight shift onto the back foot and a retire fell at 1.1-1.3 m and
# 1.39-1.42 m (20.3-20.6 s in) and was refused until the ticks on one toe of a body below 1.5 m were
# integrated finer (perform.FINE_STEP_BELOW): since, it held every 2 cm over 1.1-2.3 m.
TOE_PRESS = 0.03  # rad: flat feet with the COM forward, the toes press the floor

# Seconds per step when the sequence does not say (a step list item's own duration wins), and
# the least each step takes: faster extensions throw the COM beyond what the COP can catch.
STEP_SECONDS = {
    "position": 1.5, "transition": 6.0, "weight_shift": 3.0, "demi_plie": 3.0, "grand_plie": 5.0,
    "tendu": 5.0, "retire": 3.5, "releve": 7.0, "developpe": 12.0, "arabesque": 10.0, "pivot": 4.0,
    "lower": 3.0,
}
MIN_SECONDS = {
    "position": 0.2, "transition": 3.0, "weight_shift": 1.0, "demi_plie": 1.5, "grand_plie": 3.0,
    "tendu": 5.0, "retire": 1.0, "releve": 2.5, "developpe": 12.0, "arabesque": 10.0, "pivot": 2.5,
    "lower": 2.0,
}


def step_kind(name: str) -> str:
    """The timing family of a step name: 'tendu_side' -> 'tendu', 'third_position' -> 'position'."""
    if name in POSITIONS:
        return "position"
    for kind in ("tendu", "developpe", "arabesque", "pivot"):
        if name.startswith(kind):
            return kind
    return name


# --------------------------------------------------------------------------------- poses


def other(side: str) -> str:
    return "R" if side == "L" else "L"


def mirror_pose(pose: dict[str, float]) -> dict[str, float]:
    """The pose seen in a mirror: left and right joints swap, roll (x) and twist (z) change sign."""
    out: dict[str, float] = {}
    for name, value in pose.items():
        body, axis = name.rsplit("_", 1)
        if body.endswith(".L"):
            body = body[:-2] + ".R"
        elif body.endswith(".R"):
            body = body[:-2] + ".L"
        out[f"{body}_{axis}"] = -value if axis in ("x", "z") else value
    return out


def arms(port: str) -> dict[str, float]:
    """Classical arm positions (port de bras), symmetric unless stated; the left arm is given."""
    left = {
        # Bras bas: rounded slightly forward and away from the body.
        "low": {"upper_arm.L_x": 0.25, "upper_arm.L_y": -0.15, "forearm.L_y": -0.35},
        # First: rounded in front of the stomach.
        "first": {"upper_arm.L_x": 0.3, "upper_arm.L_y": -0.85, "forearm.L_y": -0.7},
        # Second: open to the side, a little forward, elbows soft.
        "second": {"upper_arm.L_x": 1.25, "upper_arm.L_y": -0.3, "forearm.L_y": -0.25},
        # Demi-seconde: half way down from second (the paper's retire arms).
        "demi": {"upper_arm.L_x": 0.35, "upper_arm.L_y": -0.15, "forearm.L_y": -0.35},
        # Fifth en haut: rounded above the head.
        "high": {"upper_arm.L_x": 0.35, "upper_arm.L_y": -2.55, "forearm.L_y": -0.6},
    }
    if port == "arabesque":
        # First arabesque: the supporting side's arm reaches forward, the other opens to the side.
        pose = {"upper_arm.L_x": 0.1, "upper_arm.L_y": -1.45, "forearm.L_y": -0.1,
                "upper_arm.R_x": -1.2, "upper_arm.R_y": -0.2, "forearm.R_y": -0.15}
        return pose
    pose = dict(left[port])
    pose.update(mirror_pose(left[port]))
    return pose


def arms_low() -> dict[str, float]:
    """Bras bas (kept for callers of the paper's sequence)."""
    return arms("low")


def position_pose(name: str, turnout: float = DEFAULT_TURNOUT, height: float = 1.65) -> dict[str, float]:
    """Joint targets of a basic ballet position (feet placement by hip rotation and spread).

    Third and fourth are placed like fifth with the front (right) foot half way forward or a foot
    length in front; fifth crosses the feet fully, the right heel at the left toes.
    """
    if name not in POSITIONS:
        raise DancerError(f"unknown position {name!r}; choose one of {', '.join(POSITIONS)}")
    if not 0.0 <= turnout <= np.radians(80.0):
        raise DancerError(f"turnout must be between 0 and 80 degrees, got {np.degrees(turnout):.1f}")
    pose = arms("low")
    pose["thigh.L_z"] = turnout
    pose["thigh.R_z"] = -turnout
    leg = 0.491 * height
    hip = 0.050 * height
    heel = 0.035 * height
    if name == "first_position":
        # Heels touching: each ankle sits a heel's sideways offset from the midline.
        ankle_y, split = heel * np.sin(turnout) + 0.005 * height, 0.0
    elif name == "second_position":
        ankle_y, split = hip + 0.06 * height, 0.0
    elif name == "third_position":
        # Heel of the front foot at the middle of the back foot.
        ankle_y, split = 0.004 * height, 0.05
    elif name == "fourth_position":
        # Fifth opened a foot's length: the front foot ahead, the back one behind.
        ankle_y, split = -0.006 * height, 0.17
    else:
        # Fifth: the feet overlap, the right (front) heel at the left toes; the legs cross.
        ankle_y, split = -0.012 * height, 0.08
    spread = np.arctan2(ankle_y - hip, leg)
    pose["thigh.L_x"] = spread
    pose["thigh.R_x"] = -spread
    if split:
        # Symmetric split so both feet reach the floor with a level pelvis.
        pose["thigh.R_y"] = -split
        pose["thigh.L_y"] = split
    return pose


def _working(side: str, pose: dict[str, float]) -> dict[str, float]:
    """A right-working-leg pose (left supporting) for the working leg ``side``."""
    return pose if side == "R" else mirror_pose(pose)


def _on(base: dict[str, float], side: str, builder: Callable[[dict[str, float]], dict[str, float]]):
    """Apply ``builder`` (written for the right working leg) with ``side`` working."""
    if side == "R":
        return builder(base)
    return mirror_pose(builder(mirror_pose(base)))


def retire_pose(base: dict[str, float]) -> dict[str, float]:
    """Working (right) leg lifted, turned out, its toes at the supporting knee."""
    pose = dict(base)
    pose.update({
        "thigh.R_x": -0.55, "thigh.R_y": -0.95, "thigh.R_z": -0.6,
        "shin.R_y": 2.1, "foot.R_y": 0.6, "toe.R_y": 0.3,
        "upper_arm.L_x": 0.35, "upper_arm.R_x": -0.35,
    })
    return pose


# The working thigh's roll that puts its toes at the supporting knee across the body (the classical
# retire; leg_line.LegLine.thigh_roll_at_the_knee: -0.218 at 1.65 m). retire_pose's roll holds the toes
# 17 cm out to the side, and the leg's mass with them: the supporting leg must lean in further.
RETIRE_AT_THE_KNEE = -0.22


def classical_retire_pose(base: dict[str, float]) -> dict[str, float]:
    """The retire step's pose: :func:`retire_pose` drawn in until its toes touch the supporting knee."""
    return {**retire_pose(base), "thigh.R_x": RETIRE_AT_THE_KNEE, **_side_arm("second", "L")}


def retire_lift_pose(base: dict[str, float]) -> dict[str, float]:
    """Halfway to retiré: the working foot lifted flat, knee bent twice as far as the hip."""
    pose = dict(base)
    pose.update({"thigh.R_y": -0.35, "shin.R_y": 0.75, "foot.R_y": -0.42, "toe.R_y": 0.0})
    return pose


def _small_lift(base: dict[str, float]) -> dict[str, float]:
    """The working (right) foot a few centimetres off the floor, flat: hip and knee flexed."""
    pose = dict(base)
    # Turned out, the hip flexes towards the toes so the knee bend lifts the foot straight up.
    pose.update(turned_out_flexion(base, "R", 0.4))
    pose.update({"shin.R_y": 0.8, "foot.R_y": base.get("foot.R_y", 0.0) - 0.4})
    return pose


def releve_pose(base: dict[str, float], side: str = "L") -> dict[str, float]:
    """Supporting foot ``side`` on demi-pointe: ankle plantarflexed, toes flat on the floor."""
    pose = dict(base)
    # Rolling the foot over the ball carries the ankle forward; lean back by as much so the
    # COM stays over the ball instead of leaving the controller to catch it.
    ball, ankle_above_ball, com_above_ankle = 0.074, 0.0315, 0.52
    ankle_travel = ball * (1.0 - np.cos(RELEVE_ANGLE)) + ankle_above_ball * np.sin(RELEVE_ANGLE)
    pose[f"foot.{side}_y"] = base.get(f"foot.{side}_y", 0.0) + RELEVE_ANGLE + ankle_travel / com_above_ankle
    pose[f"toe.{side}_y"] = base.get(f"toe.{side}_y", 0.0) - RELEVE_ANGLE
    return pose


def _euler_xyz(matrix: np.ndarray) -> tuple[float, float, float]:
    """Angles (x, y, z) with matrix = Rx(x) Ry(y) Rz(z): the order of the hip's hinges."""
    y = float(np.arcsin(np.clip(matrix[0, 2], -1.0, 1.0)))
    x = float(np.arctan2(-matrix[1, 2], matrix[2, 2]))
    z = float(np.arctan2(-matrix[0, 1], matrix[0, 0]))
    return x, y, z


def _rotation(axis: np.ndarray, angle: float) -> np.ndarray:
    axis = np.asarray(axis, dtype=np.float64) / np.linalg.norm(axis)
    k = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]])
    return np.eye(3) + np.sin(angle) * k + (1.0 - np.cos(angle)) * (k @ k)


def turned_out_flexion(pose: dict[str, float], side: str, angle: float) -> dict[str, float]:
    """Hip flexion by ``angle`` towards where the turned-out foot points (knee over the toes)."""
    x, y, z = (pose.get(f"thigh.{side}_{a}", 0.0) for a in ("x", "y", "z"))
    current = _rotation([1, 0, 0], x) @ _rotation([0, 1, 0], y) @ _rotation([0, 0, 1], z)
    toes = current @ np.array([1.0, 0.0, 0.0])
    toes[2] = 0.0
    toes /= max(np.linalg.norm(toes), 1e-9)
    # Turning about the horizontal axis across the toes' direction swings the knee over them.
    axis = np.array([-toes[1], toes[0], 0.0])
    x, y, z = _euler_xyz(_rotation(axis, -angle) @ current)
    return {f"thigh.{side}_x": x, f"thigh.{side}_y": y, f"thigh.{side}_z": z}


def _leg(thigh_x: float, thigh_y: float, knee: float = 0.0, point: float = 0.9,
         turn: float = -0.6) -> dict[str, float]:
    return {"thigh.R_x": thigh_x, "thigh.R_y": thigh_y, "thigh.R_z": turn,
            "shin.R_y": knee, "foot.R_y": point, "toe.R_y": 0.35}


# Right working leg, left supporting: (thigh roll, thigh pitch) of each extension. Negative roll
# opens the right leg to the side, negative pitch lifts it forward. A tendu's point is where its toes
# reach the floor (perform.tendu_distance): these angles are only for the tendus of fourth that pass
# over the supporting foot (TENDU_PASSING).
TENDU = {"front": (0.0, -0.65), "side": (-0.65, 0.0), "back": (0.0, 0.65)}
TENDU_CLOSE = 2.5
PLIE_SPINE = -0.05  # a slight forward tilt of the spine per radian of knee bend
WEIGHT_SHIFT_SET_DOWN = 2.0
# Below this height (m; perform.FINE_STEP_BELOW, so taller dancers move exactly as before) a weight shift
# onto a hovering foot first lowers it over 2 s (TENDU_CLOSE's pose blend) with the COM target held over
# the supporting foot, then takes the weight to the middle: the step lasts TENDU_CLOSE longer. Lowered in
# half a second with the weight going to the middle as it landed (heel first, toes up), at 1.1 m the
# supporting foot's toes came up, the COP rocked back to the heels (2.6-3.6 cm behind), the contacts
# chattered and the dancer fell (seeded draw 59's prefix: fifth, weight shift left, tendu front,
# developpe front 90 and side 45 right, weight shift right, 46.75 s in; 1.15, 1.2 m held 2.3 cm inside).
# The weight held but the foot lowered as fast, the landing toes still struck first, the COP jumped 7 cm
# and it fell (46.81 s). Lowered slowly the foot lands flat without a chatter and the prefix holds at
# 1.1, 1.15 and 1.25 m (the COM 2.1, 2.2, 2.4 cm inside in the shift's last second; draw 59 whole at 1.1
# m 1.4 cm inside every step's last second).
LAND_FLAT_BELOW = 1.5
# Positions where the front foot's tendu from both feet, below LAND_FLAT_BELOW, closes the same way: its
# foot lowered over TENDU_CLOSE's 2 s with the COM target held over the other foot, then the weight to the
# middle (the tendu TENDU_CLOSE longer). In fifth at 1.1 m seeded draw 14's last tendu to the side (after two
# and a grand plie) ended 2.3 cm outside the feet as the foot came down heel first; so, 4.0 cm inside.
LAND_FLAT_TENDU = ("fifth_position",)
# Seconds of a weight shift from one foot straight to the other when the sequence does not say. Across
# second's wide feet (the COM travels 0.4 m) in 3 s the COM was still 12 cm short of the foot taking the
# weight as the step's last second began, and the unloaded foot, light, left the floor for a tick with
# the COM 1.7 cm outside the other foot alone (seed 61 of the draw from second); in 4 s it is 6 cm
# nearer then and 2.9 cm from its target half a second before the end (7.0 cm in 3 s).
ACROSS_SECONDS = {"second_position": 4.0}
PLIE_SETTLE = 1.5
# Where a plie is done by the closed chain (the pelvis lowered and raised with both feet held on
# their spots by the legs' IK) instead of by the position's knee angles: in fifth each plie by the
# angles walked the crossed feet 0.5-2.4 cm (the right ankle 3.4-4.4 cm off its place after three
# grand plies) and the next plie fell (seeded random sequences 1 and 5 from fifth); by the chain
# they move 0.1-0.4 cm a plie after the first, and the same plies hold 6-7 cm inside the polygon.
# (Solved once for the pelvis going straight down, as after a change, fifth's grand plie fell.) In
# third the same: between the front foot's tendus from both feet its plies walked the feet 1.3-1.5 cm
# apart each (9.5 cm after five; third seed 14 of a sweep fell in its fourth grand plie); by the chain
# they stay within 0.9 cm.
PLIE_BY_CHAIN = ("third_position", "fifth_position")
# After a change into second the feet stand where the change's chain set them, the knees a little bent:
# there the plies were solved once for the pelvis going straight down and came up to the angles they
# started on, and rising from a grand plie the pelvis rolled (the hips 9 degrees about the line of the
# feet by 17.5 s), one foot's toes came off the floor and the COM swung 6 cm onto that foot: from third
# at 1.1, 1.15 and 1.2 m the dancer fell 18.9-19.1 s in (1.25, 1.3 m: 3.5, 3.6 cm inside; seeded draws 14
# and 40 for 1.1 m with fifth's refusals lifted, 127.4 and 111.1 s). By the chain, from first, third and
# fifth the demi and grand plies hold at 1.1-2.0 m, the COM 4.4-8.3 cm inside in their last second.
PLIE_BY_CHAIN_AFTER_A_CHANGE = ("second_position",)
TRANSITION_HOVER = 0.03  # m: the moving foot of a position change travels this high over its place
TRANSITION_SETTLE = 1.5  # s: the weight settles in the middle of the new position
# Share of a change's seconds (against 0.5 up, 1 carried, 1.75 the weight to the middle, and 2 onto the
# supporting foot from both feet) in which the closed chain sets the moving foot down.
SET_DOWN = 0.75
# The same for the back (left) foot of fifth, going behind into it or out of it (into second: at
# SET_DOWN the dancer fell there as the foot landed, 6 s in). Into fifth in SET_DOWN it took the load
# so fast that both feet chattered (toe only, heel only, no contact at all for single ticks, the heels
# 5-7 mm up) and on every light tick they walked back together, 6 cm and 8-11 degrees of turn in a
# change: no friction holds a foot without load (torsional friction, MuJoCo's condim 4, did not help:
# 3-8 degrees, and other changes fell). In twice the share the feet stay flat and the dancer turns 0-2
# degrees (at 1.0 still 8.5-10). Every change set down so slowly, seeded random sequences fell
# elsewhere (fourth seed 7 at 1.5, fourth seed 1 at 1.25, both in the front foot's changes out of a
# plie or into second).
SET_DOWN_BEHIND = 1.5
# Out of second: seconds of (the free foot's lift with the supporting leg straightening, the carry,
# the set-down, the weight to the middle), after OUT_OF_WIDE_SHIFT seconds of the weight going onto
# the supporting foot from both feet (in 2 s, as other changes, second, fifth, first and second,
# third, first fell in the second change, 4.6 s in: the COM went off the supporting foot as the
# carried foot left; in 3 s both hold).
# The settling in the new place starts the balance's lean from none (Phase.lean_from_zero): going over
# the foot in second by the closed chain leans it 0.27 rad (0.07 from first), and the lean stayed in the
# balance after the change (-0.21 rad in third, -0.06 after a change from first); on one foot later,
# turned into joint angles along the joints' axes as they point now, it moved the legs by itself as
# they moved (second, third, four grand plies, first fell 45 s in, 5 s into the change into first;
# from first it holds; with the lean from none both hold).
OUT_OF_WIDE = {"second_position": (2.0, 3.0, 1.5, 1.75)}
# Out of fourth too (session 12): set down by the closed chain into first or third, the balance kept 0.17-0.21
# rad of lean on the supporting hip through the settle and the weight shift after it (0.02 straight from
# first), the lift of the left foot's change after it re-based the hip's target on it (+0.18 rad against the
# joint's -0.05) and the carry pitched the pelvis: the change between first and third fell at 1.1-2.0 m
# (refused as LEFT_AFTER_FOURTH_FALLS until session 12). With the lean from none there it holds at 1.1-2.0 m,
# the feet 0.3-0.8 cm off their places and the COM 4.1-7.5 cm inside in the change's last second.
LEAN_FROM_NONE_OUT_OF = ("fourth_position",)
OUT_OF_WIDE_SHIFT = 3.0
# Out of fourth with the back (left) foot moving, the weight on the front foot: seconds of (the free
# foot's lift with the supporting leg straightening, the carry, the set-down, the weight to the middle).
# The closed chain takes the weight onto the front foot with that leg 12-13 degrees off vertical and the
# back one 27 (both knees bent): the back foot lifted straight up from there and carried in 1.5 s rocked
# the dancer forward onto the front toes, the carried foot flew 40-60 cm forward and the dancer fell 1.9-5.7
# s into the change (into first, third and fifth at 1.1-2.0 m). As out of second, the supporting leg
# straightens under the pelvis as the foot lifts, then the foot is carried: the feet within 0.4-1.0 cm of
# the new position's places in first and third, 0.8-1.5 in fifth, the front foot 0.4-0.9 cm from where it
# stood (1.1-2.0 m). Into fifth the weight goes 12 cm back to the middle: with a set-down of 1 or 1.5 both
# feet chattered and slid 4-5 cm back together at some heights (1.1, 1.3 m), and one fell with the middle
# in 3.5; with 3 for the lift the change into fifth fell at 1.1 m.
OFF_THE_FRONT_OF_FOURTH = (2.0, 3.0, 2.0, 1.75)
# A change back into second from the position a change out of it reached fell in seeded draws 1 (second,
# plies there, first, second, 48 s in) and 17 (from third: first, second, first, a demi plie, second, 122
# s in) and was refused until session 10. After the lean reset it held at 1.3-2.0 m but draw 17 still fell
# (121.7 s), as did third, first, second, first, demi plie, second (46.7 s): the change into second was
# itself marginal (the landing foot 3-4 cm short with its toes up, the supporting heel up for a tick). Since
# it allows for the supporting leg's sag (perform.SAG_ONLY) those hold at 1.1-2.0 m, the foot within 0.7-2.7
# cm of second's place.
INTO_SECOND_SECONDS = 10.0  # the least a change into second takes (the supporting leg's fondu)
# The relevé on one foot fell at 1.1-1.27 m from every position (the paper's sequence at 1.1 m 11.45 s in, the
# ball sliding back as the heel rose) and was refused near those heights until the ticks on one toe of a body
# that short were integrated in finer steps (perform.FINE_STEP_BELOW): since, it holds there from every
# position on either leg. The changes into second fell at 1.1-1.6 m and 1.7, 2.15-2.3 m too (the foot landing
# 3 cm short and pushing like a strut) until perform.SAG_ONLY: since, none of them fell.
FELL_NEAR = 0.025  # m: half the spacing of the heights measured


def _fell_near(height: float, heights: tuple[float, ...]) -> bool:
    """Whether a dancer ``height`` m tall is within FELL_NEAR of a height where the move fell."""
    return any(abs(height - h) < FELL_NEAR for h in heights)

# The heights (m) at which a change of position straight from the position fell, per (from, to, moving foot),
# refused within FELL_NEAR of them. Every one of TRANSITIONS was danced straight from its position (the left
# foot's after a weight shift onto the right) every 5 cm over 1.1-2.3 m (session 10); three fell: first into
# fifth with the right foot at 1.1 m (8.95 s in; after a demi plie 13.0 s, a grand plie 15.5 s, seeded draw 44
# drawn for 1.1 m 45.5 s; it held at 1.15-2.0 m, straight and after either plie), fifth into fourth with the
# right foot at 1.15 m (10.2 s in) and third into fourth with the left foot at 1.7, 1.75 and 1.8 m
# (10.1-11.9 s in; every 2.5 cm: 1.7-1.8 fell, 1.675 and 1.825 held). The tests dance the changes at 1.1,
# 1.3, 1.65 and 2.0 m, where all of them held: between those heights a change's landing is not smooth in the
# height. Since every tick of a dancer below 1.5 m is integrated in sim.FINE_STEPS steps
# (perform.FINE_STEP_BELOW, session 11) first into fifth at 1.1 m ends with the COM 4.0 cm inside (3.9 after a
# demi plie, 2.8 with a weight shift and a retire after it) and fifth into fourth at 1.14-1.16 m 3.8 cm inside
# (1.5 with a retire after it). Lifted together with the fifth tendus below (session 11), 2 of the 11 seeded
# draws for 1.1 m that then changed fell (14 at 125.6 s, 40 at 108.0 s), in a grand plie after a change into
# second, which fell from third at 1.1-1.2 m on its own; those plies hold since they go by the chain
# (PLIE_BY_CHAIN_AFTER_A_CHANGE, session 12). Fifth into fourth is lifted since. First into fifth stayed
# refused at 1.1 m: with the fine step seeded draw 44 drawn for 1.1 m (fifth, the left foot's tendu to the
# side, two grand plies, first, a demi plie) still fell in it, 47.3 s in, the carried foot landing toes
# first and the contacts chattering; below LAND_FLAT_BELOW it is set down in SET_DOWN_BEHIND's share of the
# change, as the back foot into fifth: the same steps end 5.1 cm inside, and it is lifted (session 12).
# The left foot's change from first into fourth (legal since session 12, CARRIED_IN_TWO_HALVES) holds every
# 5 cm over 1.1-2.0 m and at 2.01 m, the COM 3.8-6.6 cm inside in its last second, but fell from 2.02 m up
# (2.02, 2.03, 2.05 m and every 5 cm to 2.3 m, 7.2-11.6 s in; without the two halves at 2.1 m too, 8.4 s).
# Where it holds the feet end 0.3-0.9 cm off fourth's places but for 1.5-1.7 m (1.5-2.2 cm) and 1.95 m (3.0).
TRANSITION_FELL_AT = {("third_position", "fourth_position", "L"): (1.7, 1.75, 1.8),
                      ("first_position", "fourth_position", "L"): (2.03, 2.05, 2.1, 2.15, 2.2, 2.25, 2.3)}
# The heights (m) near which (FELL_NEAR) a tendu from both feet does not hold, per (position, working foot):
# in fifth the front (right) foot's tendus front, side and back at 1.1-1.25 m end with the COM outside the
# polygon over their last second (1-13 cm; at 1.1 and 1.2 m the feet leave the floor for ticks) and a plie
# after them fell at 1.1, 1.15 and 1.2 m (12.4-13.7 s in; seeded draw 44 from fifth at 1.1 m, 40.0 s; the
# same at e75f254). From 1.3 m they end 2.7-4.8 cm inside (the back foot's tendus 4.7-6.0 at 1.1-1.35 m).
# Straight from the position only: after the change into fifth from second the tendu to the side holds at
# 1.1 m (test_dancer_perform's AFTER_SECOND_TO_FIFTH). Likely the short body's contacts chattering at the
# model's step, as on one toe. Since every tick below 1.5 m is integrated in sim.FINE_STEPS steps
# (perform.FINE_STEP_BELOW, session 11) the front foot's tendus front, side and back in fifth and a demi plie
# after them hold at 1.1-1.25 m, the COM 2.3-4.9 cm inside over the last second of each step (at the model's
# step the tendu front and the plie fell at 1.1-1.2 m, and at 1.25 m ended 2.8 cm outside); lifted at
# 1.15-1.25 m in session 12 (see TRANSITION_FELL_AT: seeded draws 14 and 40 for 1.1 m had fallen later, in a
# plie after a change into second). At 1.1 m seeded draw 14 (fifth, the tendu to the side twice, a grand
# plie, the tendu to the side again) ended its last tendu 2.3 cm outside the feet as the right foot came down
# from its hover (the left toes came up and the COP rocked back onto the heels for half a second; at
# 1.15-1.25 m the same steps ended 4.2-4.6 cm inside); closed down flat before the weight goes to the middle
# (LAND_FLAT_TENDU) it ends 4.0 cm inside, and the refusal at 1.1 m is lifted too (session 12). The back
# foot's tendus back and side in fourth were refused at 1.1 and 1.1-1.25 m; they hold there now (see
# TENDU_FROM_BOTH_FEET).
# An entry keyed by the direction too, (position, foot, direction), applies after a change as well.
TENDU_FROM_BOTH_FEET_FAILS_AT: dict[tuple, tuple[float, ...]] = {}
# The least seconds a change into a wide position takes. Into fourth the moving foot lands a foot's
# length from the other one, the weight going to the middle as it lands (WEIGHT_WHILE_LANDING): in 6 s
# 7 of the 12 changes from first, third and fifth at 1.1-2.0 m fell as the foot came down (its heel
# first, the supporting toes coming up); in 10 s none.
INTO_WIDE_SECONDS = {"second_position": INTO_SECOND_SECONDS, "fourth_position": 10.0}
# Changes whose set-down takes the weight to the middle as the foot lands (see _step).
WEIGHT_WHILE_LANDING = ("second_position", "fourth_position")
TENDU_HOVER = 0.02  # m: a tendu from both feet leaves and comes back over its spot this high
TENDU_RELEASE_SHARE = 0.15  # of a tendu's way out: the working foot lets go of the floor where it stands
# Pelvis drop of a plie posed by the legs' IK, a share of the height: about the COM drop the knee
# angles above give in first position (demi 4 cm, grand 16 cm at 1.65 m).
PLIE_SINK = {"demi_plie": 0.035, "grand_plie": 0.12}
# In fourth the feet are crossed: with the weight on one foot the other leg's hip stands over the
# supporting foot, so the front foot's tendu back and the back foot's tendu front pass right over
# it. Brushing past at the height of the lift, the working toes caught the supporting ankle (the
# foot was kicked 4 cm and the dancer fell: after a developpe or an arabesque the front foot's
# tendu back fell every time; the back foot's tendu front after a developpe swept 2 cm above the
# floor over the supporting foot, kicked it away and the dancer fell). The leg passes higher
# instead, half way to an attitude (the ankle 25-35 cm up as it goes by), and comes down onto the
# tendu's point from beyond it. (Through a bent knee with the thigh under the hip, the straightening
# leg then pressed its toes into the floor and the supporting heel came up.)
TENDU_PASSING = {
    "back": {"thigh.R_x": 0.0, "thigh.R_y": 0.4, "shin.R_y": 0.9, "foot.R_y": -0.3, "toe.R_y": 0.0},
    "front": {"thigh.R_x": 0.0, "thigh.R_y": -0.8, "shin.R_y": 0.9, "foot.R_y": -0.3, "toe.R_y": 0.0},
}
DEVELOPPE = {("front", 45): (0.0, -0.8), ("front", 90): (0.0, -1.55),
             ("side", 45): (-0.8, -0.15), ("side", 90): (-1.45, -0.3)}


# --------------------------------------------------------------------------------- phases


@dataclass
class Phase:
    """One simulated stretch: blend the targets to ``pose``, the COM target to ``target``.

    ``stance`` is 'both', 'L' or 'R' (the feet the balance leans on); ``target`` is 'hold' (where
    the COM is), 'keep' (the previous phase's target), 'stand' (where the dancer stood still
    in the sequence's first position), 'both' (middle of the feet), 'foot', 'toe' or 'ball' (of the
    stance side).
    """

    label: str
    duration: float
    pose: dict[str, float]
    stance: str
    target: str
    pose_blend: float
    target_blend: float
    pose_delay: float = 0.0
    toe_control: bool = False
    via: dict[str, float] = field(default_factory=dict)
    keep_lean: bool = False
    turn: float = 0.0
    toe_release: bool = False
    starts_step: bool = False
    key: bool = False         # ends on the step's defining pose (the extension, the tendu's point)
    level_pelvis: bool = True  # the supporting hip keeps the pelvis level (one foot only)
    land: float | None = None  # put the free foot back on its spot, this high above it (m)
    absorb_lean: bool = False  # start from the pose plus the balance lean so far, the lean reset
    heels: float | None = None  # both feet this far up on their balls (rad), posed about the balls
    sink: float = 0.0  # lower the pelvis straight down by this share of the height, feet where they are
    # Both feet down: the pelvis goes where the balance wants it and both legs follow by IK with
    # the feet kept on their spots (see closed_chain), instead of both legs leaning alike.
    closed_chain: bool = False
    # The position whose place the free foot goes to (beside the supporting foot), instead of the
    # spot it left: a change of position.
    place: str | None = None
    # Leaving the closed chain onto one foot: the supporting leg straightens (knee a hair bent)
    # under the pelvis where the chain left it, instead of keeping the chain's knee bend.
    straighten: bool = False
    # The legs go back to the angles they stood on when the step began (after a plie), not to the
    # position's: the closed chain leaves them where the feet really are.
    restore: bool = False
    # (from, to) pelvis drop as a share of the height, blended with the pose: a plie by the closed
    # chain (``closed_chain`` on both feet), the feet held on their spots throughout.
    chain_drop: tuple[float, float] | None = None
    # A tendu's slide ('front', 'side' or 'back'): the free foot's toe tip goes out along the floor
    # to where the straight leg with the foot pointed reaches it (see perform.tendu_distance), by IK
    # every tick, as the pose blends; with ``slide_back`` it comes back to where it started.
    slide: str | None = None
    slide_back: bool = False
    # On the closed chain: the balance's lean starts again from none, the pelvis unmoved (see OUT_OF_WIDE).
    lean_from_zero: bool = False
    # A phase of the relevé on both feet (see perform.SQUEEZE_AT).
    releve_on_both: bool = False


@dataclass(frozen=True)
class State:
    """What the dancer stands like between steps."""

    position: str
    pose: dict[str, float]
    support: str = "both"     # 'both', 'L' or 'R'
    raised: bool = False      # working leg in retire
    releve: bool = False      # supporting foot (or both feet) on demi-pointe
    hover: bool = False       # working foot held just above its place on the floor
    changed: bool = False     # the position was reached by a change within the sequence
    closed: bool = False      # a foot was closed back into the position (a tendu from both feet)
    plied: bool = False       # a plie was done in this position (see _check_front_foot_of_fourth)
    changed_from: str = ""    # the position a change into this one came from
    left_moved: bool = False  # the left foot made a change of position earlier in the sequence
    earlier_from: str = ""    # the position the change before the last one came from
    since_change: int = 0     # steps done since the change into this position (or the start)
    changed_by: str = ""      # the foot ('L' or 'R') that made the change into this position
    on_the_feet: bool = False  # the legs stand the feet where a releve left them (REST_ON_THE_FEET)
    closed_behind: bool = False  # the back foot closed a tendu from both feet here (HELD_OVER_ITS_SPOT)


def parse_step(item: str) -> tuple[str, str | None]:
    """``"tendu_front:right"`` -> ``("tendu_front", "R")``; the side is None without a suffix."""
    text = item.strip()
    name, _, suffix = text.partition(":")
    name = name.strip()
    if name not in POSITIONS and name not in STEPS:
        raise DancerError(f"unknown step {name!r}; steps are {', '.join(POSITIONS + STEPS)}")
    if not suffix:
        return name, None
    side = SIDES.get(suffix.strip().lower())
    if side is None:
        raise DancerError(f"step {text!r}: the suffix must be ':left' or ':right', got {suffix!r}")
    if name in POSITIONS:
        raise DancerError(f"step {text!r}: a position takes no side")
    return name, side


def _seconds(name: str, duration: float | None, kinds: dict[str, float]) -> float:
    kind = step_kind(name)
    if duration is None:
        return kinds[kind]
    minimum = MIN_SECONDS[kind]
    if not np.isfinite(duration) or not minimum <= duration <= 30.0:
        raise DancerError(f"step {name!r} must last between {minimum} and 30 s, got {duration}")
    return float(duration)


def parse_sequence_text(text: str) -> list[tuple[str, float | None]]:
    """Sequence text to items: ``"first_position, tendu_front:right@2.5"`` ->
    ``[("first_position", None), ("tendu_front:right", 2.5)]``."""
    items: list[tuple[str, float | None]] = []
    for chunk in text.split(","):
        chunk = chunk.strip()
        if not chunk:
            continue
        name, at, seconds = chunk.partition("@")
        value: float | None = None
        if at:
            try:
                value = float(seconds)
            except ValueError:
                raise DancerError(f"step {chunk!r}: the duration after '@' must be seconds, "
                                  f"got {seconds!r}") from None
        parse_step(name)
        items.append((name.strip(), value))
    return items


def plan(sequence, turnout: float = DEFAULT_TURNOUT, height: float = 1.65,
         durations: dict[str, float] | None = None,
         settle: Callable[[dict[str, float]], dict[str, float]] | None = None,
         allow_unbalanced: bool = False,
         ) -> tuple[list[str], list[Phase], State]:
    """Check ``sequence`` step by step and build its phases.

    Items are names (with an optional side suffix and ``@seconds``) or ``(name, seconds)`` pairs;
    ``durations`` overrides the default seconds per step family ('tendu', 'position', ...). Returns the step
    labels, the phases and the final state. ``settle`` turns a position's pose into the one the
    body really stands in (feet flattened on the floor). Steps the controller cannot balance yet
    are refused unless ``allow_unbalanced`` (for working on the controller). Raises
    :class:`DancerError` naming the first step that cannot follow the state the previous steps
    leave, and why.
    """
    kinds = dict(STEP_SECONDS)
    for key, value in (durations or {}).items():
        if key not in kinds:
            raise DancerError(f"unknown phase {key!r} in durations; phases are {', '.join(kinds)}")
        minimum = MIN_SECONDS[key]
        if not np.isfinite(value) or not minimum <= value <= 30.0:
            raise DancerError(f"phase {key!r} must last between {minimum} and 30 s, got {value}")
        kinds[key] = float(value)
    items = []
    for raw in sequence:
        if isinstance(raw, str):
            items.extend(parse_sequence_text(raw) if "@" in raw else [(raw, None)])
        else:
            text, seconds = raw
            items.append((str(text), None if seconds is None else float(seconds)))
    if not items:
        raise DancerError("the sequence is empty; start it with a position such as 'first_position'")
    first, first_side = parse_step(items[0][0])
    if first not in POSITIONS:
        raise DancerError(f"the sequence must start with a position ({', '.join(POSITIONS)}), got {first!r}")
    settle = settle or (lambda pose: pose)
    start_pose = settle(position_pose(first, turnout, height))
    state = State(first, start_pose)
    labels = [items[0][0].strip()]
    phases = [Phase(labels[0], _seconds(first, items[0][1], kinds), start_pose, "both", "hold", 0.3, 0.3,
                    starts_step=True, closed_chain=uses_closed_chain(first))]
    for index, (text, seconds) in enumerate(items[1:], start=2):
        name, side = parse_step(text)
        label = text.strip()
        try:
            if not allow_unbalanced:
                _check_balanced(state, name, side, height)
            # A change starts a fresh State, which counts from 0 again.
            state = replace(state, since_change=state.since_change + 1)
            on_the_feet = state.on_the_feet
            new_phases, state = _step(state, name, side, label, seconds, kinds, turnout, height, settle)
            if on_the_feet and name not in _BOTH_FEET:
                _posed_about_the_feet(new_phases)
            if name in _BOTH_FEET:
                state = replace(state, plied=True)
        except DancerError as exc:
            raise DancerError(f"step {index} ({label}): {exc}") from None
        labels.append(label)
        new_phases[0].starts_step = True
        phases.extend(new_phases)
    return labels, phases, state


def _posed_about_the_feet(phases: list[Phase]) -> None:
    """After the relevé on both feet in REST_ON_THE_FEET, the phases on both feet that lean the legs
    alike pose them about the feet where they stand (``Phase.heels`` at 0, as the relevé ended), not
    on the position's angles: the legs went back to those and the dancer fell 0.9 s into any step after
    the relevé but a plie (standing again in fourth and the weight shift onto the back foot, the back
    foot off the floor). So posed both hold at 1.1-2.0 m (the COM 4.8-9.1 and 1.9-3.5 cm inside in
    their last second, the feet 0.5-1.3 cm off where they started), and so do the one-foot steps on the
    back foot after the shift (the retire, tendus front, side and back, developpés, arabesque). Plies are
    solved from the feet already (``Phase.sink``)."""
    for phase in phases:
        if phase.stance == "both" and not phase.closed_chain and phase.heels is None:
            phase.heels = 0.0


def _check_balanced(state: State, name: str, side: str | None = None, height: float = 1.65) -> None:
    _check_after_the_change_into_fourth(state, name, side)
    _check_after_the_tendu_by_chain(state, name)
    if state.on_the_feet:
        _check_after_the_releve_on_the_feet(state, name, side)
    if name in POSITIONS:
        if name != state.position:
            moving = other(state.support) if state.support in ("L", "R") else "R"
            if (state.position, name, moving) not in TRANSITIONS:
                foot = f"the {_word(moving)} foot moving"
                ways = sorted(f"{_word(f)} foot into {b}" for a, b, f in TRANSITIONS if a == state.position)
                raise DancerError(f"changing from {state.position} to {name} with {foot} is not balanced "
                                  f"yet (the dancer falls or the foot lands off its place); from "
                                  f"{state.position}: {', '.join(ways) or 'none yet'}; the moving foot is "
                                  "the one without the weight (the right one from both feet)")
            if state.raised or state.hover or state.releve:
                raise DancerError(f"changing to {name}: the working foot is off the floor; close it first")
            change_fell_at = TRANSITION_FELL_AT.get((state.position, name, moving), ())
            if _fell_near(height, change_fell_at):
                heights = ", ".join(f"{h:g}" for h in change_fell_at)
                raise DancerError(f"changing from {state.position} to {name} with the {_word(moving)} foot "
                                  f"moving is not balanced yet for a dancer {height:g} m tall (it fell at "
                                  f"{heights} m, 3-12 s into the change)")
            if state.position == "fifth_position" and moving != FRONT_FOOT and state.plied:
                raise DancerError(f"changing from fifth_position to {name} with the left (back) foot moving "
                                  "after a plie there is not balanced yet (after the grand plie the feet "
                                  "landed 2.5 cm off second's places and the dancer turned 4 degrees); "
                                  "change before the plie, or with the right foot")
            return
        if state.raised or state.hover or state.releve:
            raise DancerError(f"back to {name}: the working foot is off the floor; closing it into the "
                              "position is not balanced yet (only the weight coming back to both feet is)")
        _check_front_foot_of_fourth(state, name, None)
        return
    if name == "weight_shift" and state.hover and state.changed and state.position in CARRIED_TO_ITS_PLACE:
        raise DancerError(f"the weight shift back onto a hovering foot in {state.position} after a change "
                          "into it or after another such shift is not balanced yet (the feet stand 1-3 cm "
                          "off their places after either, and a second shift back onto a hovering foot fell "
                          f"at 2.0 m, 35.5 s in); once per stay in {state.position} started there it is")
    if (name == "weight_shift" and state.changed and state.position == "second_position"
            and state.support == other(side or "L")):
        raise DancerError("a weight shift straight from one foot to the other after a change into "
                          "second_position is not balanced yet (the feet stand a centimetre or two off "
                          "second's places, and the third shift across in seeded random sequences ended "
                          "6-30 cm outside the polygon); bring the weight back to the middle first: "
                          "add second_position")
    if name == "weight_shift" and state.plied and state.changed and state.position == "second_position":
        raise DancerError("a weight shift after a change into second_position and a plie there is not "
                          "balanced yet (the plie leaves the wide feet a little further apart, and the "
                          "weight coming back to the middle after the shift fell off the polygon in seeded "
                          "random sequences); shift the weight before the plie, or start the sequence in "
                          "second_position for it")
    if name not in BALANCED:
        raise DancerError(f"{name} is in the vocabulary but the balance controller cannot hold it yet "
                          f"(the dancer falls); balanced today: {', '.join(sorted(BALANCED))}")
    if name == "releve" and state.support == "both" and side is None:
        if state.position == "second_position" and state.changed and state.plied:
            raise DancerError("releve on both feet after a change into second_position and a plie there is "
                              "not balanced yet (the plie leaves the wide feet a little further apart: "
                              "after changes from first, third and fifth the dancer fell in 5 of 8 at "
                              "1.3-2.0 m and the balls slid 3.5-10 cm in the others); do the releve before "
                              "the plie, or start the sequence in second_position for it")
        if (state.position == "third_position" and state.changed_from == "fifth_position"
                and state.earlier_from == "first_position" and state.since_change):
            # From fifth reached any other way (the start, from third) it holds at 1.1-2.0 m, the balls
            # within 0.5 cm, the COM 4-7.4 cm inside the feet in its last second. Straight after the change
            # from fifth (from first) it holds at 1.2-2.0 m since the heel press (perform.HEEL_PRESS): the
            # balls within 1.3 cm, the COM 1.6-7.4 cm inside; at 1.1 m the change into fifth falls before it.
            raise DancerError("releve on both feet in third_position after changes from first_position into "
                              "fifth and from there into third, with steps in third between, is not balanced "
                              "yet (after a plie, a tendu to the side or a weight shift there the COM ended "
                              "0.2-2.9 cm off the feet at 1.65-2.0 m); do the releve straight after the "
                              "change into third, or on one foot: add weight_shift and retire")
        if state.left_moved and state.position in ("first_position", "third_position"):
            raise DancerError(f"releve on both feet in {state.position} after the left foot's change of "
                              "position is not balanced yet (back in first after it the left knee bent 10 "
                              "degrees as the heels rose and the dancer fell, also after a plie there; in "
                              "third the dancer fell from 1.65 m up); the releve on one foot is: add "
                              "weight_shift and retire")
    if name.startswith("tendu_") and state.support == "both":
        direction, working = name.split("_", 1)[1], side or "R"
        if _crosses_the_supporting_foot(state.position, direction, working):
            which = "front" if working == FRONT_FOOT else "back"
            raise DancerError(f"{name} on the {_word(working)} ({which}) foot straight from both feet in "
                              f"{state.position} is refused: it would pass through the other foot's place, "
                              "which a tendu from fourth does not (the front foot's go front and to the "
                              f"side, the back foot's back and to the side; {TENDU_CROSSING_FELL[which]}); "
                              "add a weight_shift first for the one-foot tendu")
        if (direction, working) not in TENDU_FROM_BOTH_FEET.get(state.position, ()):
            where = f"in {', '.join(TENDU_FROM_BOTH_FEET)} on either foot"
            raise DancerError(f"{name} on the {_word(working)} foot straight from both feet in "
                              f"{state.position} is not balanced yet (the dancer falls in it or in a tendu "
                              f"after it); it is {where}: add a weight_shift first for the one-foot tendu")
        fails_at = () if state.changed else TENDU_FROM_BOTH_FEET_FAILS_AT.get((state.position, working), ())
        fails_at = TENDU_FROM_BOTH_FEET_FAILS_AT.get((state.position, working, direction), fails_at)
        if _fell_near(height, fails_at):
            raise DancerError(f"{name} on the {_word(working)} foot straight from both feet in "
                              f"{state.position} is not balanced yet for a dancer {height:g} m tall (at "
                              f"{', '.join(f'{h:g}' for h in fails_at)} m the COM ended outside the feet in "
                              "it or in a step after it); add a weight_shift first for the one-foot tendu")
        once = TENDU_ONCE_FROM_BOTH_FEET.get(state.position)
        # Why a tendu after another one there is refused (in second only once a plie came between as well).
        again = None if not once else once.get("again") or (state.plied and once.get("again after a plie"))
        if once and ((state.closed and again) or (state.changed and "changed" in once)):
            after, why = ("another one there" + (" and a plie" if "again" not in once else ""), again) \
                if state.closed and again else ("a change into it", once["changed"])
            raise DancerError(f"{name} straight from both feet in {state.position} after {after} is not "
                              f"balanced yet ({why}); start the sequence in {state.position} for one, or "
                              "add a weight_shift first for the one-foot tendu")
        if state.plied and state.position in TENDU_AFTER_A_PLIE_FALLS:
            raise DancerError(f"{name} straight from both feet after a plie in {state.position} is not "
                              f"balanced yet ({TENDU_AFTER_A_PLIE_FALLS[state.position]}); before the plie "
                              "it is, or add a weight_shift first for the one-foot tendu")
        if working != FRONT_FOOT and state.plied and state.position in BACK_FOOT_TENDU_AFTER_A_PLIE:
            raise DancerError(f"{name} on the {_word(working)} (back) foot straight from both feet after a "
                              f"plie in {state.position} is not balanced yet "
                              f"({BACK_FOOT_TENDU_AFTER_A_PLIE[state.position]}); before the plie it is, or "
                              "add a weight_shift first for the one-foot tendu")
    if name == "weight_shift" and state.hover and state.position in HOVER_SHIFT_FALLS:
        raise DancerError(f"the working foot is still held off the floor after the last step; shifting the "
                          f"weight back onto it in {state.position} is not balanced yet "
                          f"({HOVER_SHIFT_FALLS[state.position]}); it is in first, second, third and fifth "
                          "position")

    if name == "weight_shift":
        support = side or "L"
    elif state.support in ("L", "R"):
        support = state.support
    else:
        support = _support_for(name, side, state)[0]
    _check_front_foot_of_fourth(state, name, support)
    balanced_here = BALANCED_FROM[state.position][support]
    if name not in balanced_here:
        here = f"only {', '.join(sorted(balanced_here))}" if balanced_here else "no step yet"
        foot = "" if name in _BOTH_FEET else f" on the {_word(support)} foot"
        raise DancerError(f"{name} from {state.position} is not balanced yet{foot} (the dancer falls; from "
                          f"there{foot} {here}); start the sequence from 'first_position' or "
                          "'third_position' for it")


FRONT_FOOT = "R"  # the foot in front in third, fourth and fifth (see position_pose)


def _check_after_the_releve_on_the_feet(state: State, name: str, side: str | None) -> None:
    """Refuse what fell after the relevé on both feet in REST_ON_THE_FEET (see
    AFTER_THE_RELEVE_ON_THE_FEET_FALLS)."""
    falls = AFTER_THE_RELEVE_ON_THE_FEET_FALLS
    after = f"after a releve on both feet in {state.position} is not balanced yet"
    if name in POSITIONS and name != state.position:
        raise DancerError(f"changing to {name} {after} (the legs end the releve standing the feet where it "
                          f"left them, and {falls['change']}); plies, standing and the weight shift onto "
                          f"the back foot follow it")
    if name == state.position and state.plied:
        raise DancerError(f"{name} again after a releve on both feet and a plie in {state.position} is not "
                          f"balanced yet ({falls['plied']}); stand again before the plie, or go on with "
                          f"plies or weight_shift:{_word(other(FRONT_FOOT))}")
    if name == "weight_shift" and (side or "L") == FRONT_FOOT:
        raise DancerError(f"weight_shift:{_word(FRONT_FOOT)} onto the front foot {after} ({falls['front']}); "
                          f"weight_shift:{_word(other(FRONT_FOOT))} onto the back foot is")
    if name == "releve" and side is None and state.support == "both":
        raise DancerError(f"releve {after} ({falls['releve']}); only one releve on both feet per stay there")
    if name.startswith("tendu_") and state.support == "both":
        raise DancerError(f"{name} straight from both feet {after}; add weight_shift:"
                          f"{_word(other(FRONT_FOOT))} first for the one-foot tendu")


def _check_front_foot_of_fourth(state: State, name: str, support: str | None) -> None:
    """Refuse the ways onto and off the front foot of fourth that fell.

    Onto it the weight goes by the closed chain, with the supporting leg straightened after it, and
    every one-foot step holds there; but the front foot must be flat as the weight comes: after a
    plie in fourth it stands 1-2 mm up with its toes unloaded, and coming from the back foot (the
    leaning legs lift the unloaded front toes the same way) the toes stayed up through the shift:
    the foot rocked between heel and toes as the other foot left the floor and the dancer fell.
    Coming back off it, to both feet or to the back foot, fell too."""
    if state.position != "fourth_position":
        return
    front, back = _word(FRONT_FOOT), _word(other(FRONT_FOOT))
    if state.support == FRONT_FOOT and name in (state.position, "weight_shift"):
        step = name if name == state.position else f"weight_shift:{back}"
        raise DancerError(f"{step} from the {front} (front) foot in fourth_position is not balanced yet "
                          "(coming back off the front foot the dancer fell); the one-foot steps on it are")
    if name != "weight_shift" or support != FRONT_FOOT:
        return
    if state.support == other(FRONT_FOOT):
        raise DancerError(f"weight_shift:{front} from the {back} (back) foot in fourth_position is not "
                          "balanced yet (the front toes stayed up and the dancer fell); bring the weight "
                          f"back to both feet first (fourth_position), then weight_shift:{front}")
    if state.plied:
        raise DancerError(f"weight_shift:{front} after a plie in fourth_position is not balanced yet (the "
                          "plie leaves the front foot's toes a millimetre off the floor and the foot rocked "
                          "as the weight came); start the sequence in fourth_position for it")


# Positions a change sets its moving foot down in (the weight to the middle, settling) by the closed
# chain although standing there leans both legs alike (``uses_closed_chain``): into fourth, set down
# without the chain, the dancer fell (see perform.CHAIN_LOWER for the pelvis there).
SET_DOWN_BY_CHAIN = ("fourth_position",)
# Positions where, after a change into them, the weight shifts onto either foot by the closed chain.
# After the change into fourth, leaning both legs alike onto the back foot slid the unloaded front foot
# 4.4 cm back and 1 cm up, and the tendu back after it fell at 1.1-2.0 m (30.2 s); by the chain
# every one-foot step holds on either foot (1.65 and 2.0 m, and at 1.1 m up to the relevé on one foot,
# which falls there straight from fourth too), plies before it too.
CHAIN_SHIFT_AFTER_THE_CHANGE = ("fourth_position",)
# After a change into fourth, what still fell, and how (sweeps at 1.1, 1.65 and 2.0 m).
AFTER_THE_CHANGE_INTO_FOURTH_FALLS = {
    "out": "the front foot's closes into first and third fell at 1.1 m (19.1 and 20.9 s), the change into "
           "second at 1.1-2.0 m (21-25 s)",
    "back": "the weight coming back to both feet from the back foot fell at 1.1-2.0 m (18.2-18.5 s), "
            "standing again after a plie there at 1.1-2.0 m (18.4-19.2 s), and standing a second time after "
            "the change (seed 50 of the draw from first) lost the feet's contacts and left them 21-36 cm off "
            "their places",
    "front": "after the changes from third and fifth the back foot came off the floor and the dancer fell "
             "at 1.1 and 1.65 m (18.6-19.8 s) and the COM ended off the feet at 2.0 m (from third too); from "
             "first it holds",
}
# After the left (back) foot's change into fourth from third and fifth (session 10) a demi plie then a grand
# plie fell at 1.1 m from fifth, at 1.3 m from third (26.1 s, in the grand plie), and the weight shift onto
# the front foot fell at 1.65 m from fifth (22.7 s); both were refused. Re-measured (session 11, at
# 253600e): the plies (demi then grand, grand then demi, or a grand plie) and the weight shift onto the
# front foot with a retire after it hold at 1.1, 1.3, 1.65 and 2.0 m from both, the COM 1.0-9.0 cm inside in
# every step's last second and the feet 0.1-1.6 cm off fourth's places after the change. With standing again
# between, the grand plie held and the demi plie did but from fifth at 2.0 m: the front heel came up, the
# foot slid 1.2 cm and the COM ended 6.8 cm outside the feet in the plie's last second; plies after standing
# again stay refused. Danced every 10 cm over 1.1-2.3 m, the weight shift onto the front foot and a retire
# held from both at every height the change holds at (see TRANSITION_FELL_AT), and a demi then a grand plie
# from fifth; from third they fell at 1.4 and 1.6 m, so the plies after the change from third stay refused.
AFTER_THE_LEFT_FOOTS_CHANGE_INTO_FOURTH_FALLS = {
    "plie": "a demi plie after standing again, from fifth at 2.0 m: the front heel came up, the foot slid "
            "1.2 cm and the COM ended 6.8 cm outside the feet",
    "third": "from third a demi plie then a grand plie fell at 1.4 and 1.6 m (26.3, 26.8 s, in the grand "
             "plie; every 10 cm over 1.1-2.3 m, from fifth none fell)",
}


def _check_after_the_tendu_by_chain(state: State, name: str) -> None:
    """Refuse what fell after a tendu from both feet in TENDU_BY_CHAIN (AFTER_THE_TENDU_BY_CHAIN_FALLS)."""
    if not (state.closed and state.position in TENDU_BY_CHAIN):
        return
    falls = AFTER_THE_TENDU_BY_CHAIN_FALLS
    after = f"after a tendu from both feet in {state.position} is not balanced yet"
    if name in POSITIONS and name != state.position:
        raise DancerError(f"changing to {name} {after} ({falls['change']}); change before the tendu")
    if name in _BOTH_FEET:
        raise DancerError(f"{name} {after} ({falls['plie']}); plie before the tendu")


def _check_after_the_change_into_fourth(state: State, name: str, side: str | None) -> None:
    """Refuse what fell right after a change into fourth (see AFTER_THE_CHANGE_INTO_FOURTH_FALLS)."""
    if state.position != "fourth_position" or not state.changed:
        return
    falls = AFTER_THE_CHANGE_INTO_FOURTH_FALLS
    if name in POSITIONS and name != state.position:
        raise DancerError(f"changing from fourth_position to {name} after a change into fourth_position is "
                          f"not balanced yet ({falls['out']}); start the sequence in fourth_position for it")
    if name == state.position and (state.support != "both" or state.plied or state.since_change):
        raise DancerError("fourth_position again after the change into it, from one foot, after a plie or "
                          f"after another step, is not balanced yet ({falls['back']}); only straight after "
                          "the change it is")
    if (name == "weight_shift" and (side or "L") == FRONT_FOOT and state.changed_by == FRONT_FOOT
            and state.changed_from in ("third_position", "fifth_position")):
        raise DancerError(f"weight_shift:{_word(FRONT_FOOT)} onto the front foot after the right foot's "
                          f"change from {state.changed_from} into fourth_position is not balanced yet "
                          f"({falls['front']})")
    standing_again = state.since_change and not state.plied
    left_change = name in _BOTH_FEET and state.changed_by == other(FRONT_FOOT)
    if left_change and state.changed_from == "third_position":
        raise DancerError(f"{name} after the {_word(other(FRONT_FOOT))} (back) foot's change from "
                          "third_position into fourth_position is not balanced yet "
                          f"({AFTER_THE_LEFT_FOOTS_CHANGE_INTO_FOURTH_FALLS['third']}); change from fifth "
                          "for it")
    if left_change and standing_again:
        raise DancerError(f"{name} after standing again after the {_word(other(FRONT_FOOT))} (back) foot's "
                          "change into fourth_position is not balanced yet "
                          f"({AFTER_THE_LEFT_FOOTS_CHANGE_INTO_FOURTH_FALLS['plie']}); plie straight after "
                          "the change instead")


def _sets_down_by_chain(position: str) -> bool:
    """Whether a change into ``position`` sets the moving foot down (and settles) by the closed chain."""
    return uses_closed_chain(position) or position in SET_DOWN_BY_CHAIN


def uses_closed_chain(position: str) -> bool:
    """Whether the closed-chain weight shift holds the feet in ``position``. Not in fourth yet:
    standing there with it the COM drifts 8 cm towards a heel and the plie after it falls, so the
    legs still lean alike there (where the plies are balanced and nothing else is)."""
    return position != "fourth_position"


# From first position a weight shift ends with the supporting leg as near vertical as the body
# allows (see leg_line): once the weight is over the foot, the pelvis comes over the supporting
# leg in the last UPRIGHT_SHARE of the step's seconds, the COM going to the point of the foot where
# that leg stands straightest.
# Tried from second, third and fifth (the point computed for each foot of each position): the
# tilt went from 12-14 to 4.5-9.5 degrees but the COM left the loaded part of the feet (in fifth
# the target is 8 cm from the middle of the back foot) and in second the dancer fell.
UPRIGHT_FROM = frozenset({"first_position"})
UPRIGHT_SHARE = 0.45


OVER_THE_FOOT = 1.0  # seconds an extension takes to bring the weight over the foot after an upright shift


def _from_upright(state: State, support: str) -> bool:
    """Whether ``state`` ends an upright weight shift (UPRIGHT_FROM) onto ``support``, both feet down."""
    return (state.position in UPRIGHT_FROM and state.support == support
            and not (state.hover or state.raised or state.releve))


def _upright_split(duration: float, state: State) -> tuple[float, float]:
    """Seconds of a weight shift from ``state``: (onto the foot, the supporting leg upright). Also
    after a change into first position (the feet within 2.5 cm of their places; from third and
    fifth: 5.4 degrees, as from the start, the retire and relevé after it balanced)."""
    if state.position not in UPRIGHT_FROM:
        return duration, 0.0
    return (1.0 - UPRIGHT_SHARE) * duration, UPRIGHT_SHARE * duration


# As the supporting leg comes upright the body above it carries mass towards the supporting side:
# the trunk bends UPRIGHT_TRUNK towards it and the supporting side's arm opens to UPRIGHT_ARMS[0]
# (the free one stays in UPRIGHT_ARMS[1]), so the COM stands over the foot with the leg nearer
# vertical (leg_line: least tilt with the COM 2 cm inside 4.8 degrees with the arms low and the trunk
# upright, 4.0 so; the free arm in second instead tilts it more, 5.5).
UPRIGHT_TRUNK = float(np.radians(1.5))
UPRIGHT_ARMS = ("second", "low")


def _side_arm(port: str, side: str) -> dict[str, float]:
    """The ``side`` arm's joints in ``port`` (see :func:`arms`)."""
    return {name: value for name, value in arms(port).items() if f".{side}_" in name}


def upright_pose(pose: dict[str, float], support: str) -> dict[str, float]:
    """``pose`` with the upper body of the upright weight shift onto ``support`` (see UPRIGHT_TRUNK)."""
    out = centred_pose(pose)
    out.update(_side_arm(UPRIGHT_ARMS[0], support))
    out.update(_side_arm(UPRIGHT_ARMS[1], other(support)))
    # Towards the left (+y) side is a negative roll of the spine (mirror_pose flips it).
    bend = -0.5 * UPRIGHT_TRUNK if support == "L" else 0.5 * UPRIGHT_TRUNK
    out.update({"spine_x": bend, "chest_x": bend})
    return out


def centred_pose(pose: dict[str, float]) -> dict[str, float]:
    """``pose`` with the trunk upright and the arms low, as the positions stand (back on both feet)."""
    return {**pose, **arms("low"), "spine_x": 0.0, "chest_x": 0.0}


def _upright(label: str, seconds: float, pose: dict[str, float], position: str, support: str) -> list[Phase]:
    """The end of a weight shift onto ``support``: the supporting leg brought upright."""
    if not seconds:
        return []
    return [Phase(label, seconds, upright_pose(pose, support), "both", "upright:" + support, 0.6 * seconds,
                  0.6 * seconds, closed_chain=uses_closed_chain(position))]


def _support_for(name: str, side: str | None, state: State) -> tuple[str, str]:
    """(supporting, working) legs of a step: the suffix names the working leg."""
    if side is None:
        working = other(state.support) if state.support in ("L", "R") else "R"
    else:
        working = side
    return other(working), working


def _split(total: float, *shares: float) -> list[float]:
    return [total * s / sum(shares) for s in shares]


def _step(state: State, name: str, side: str | None, label: str, seconds: float | None,
          kinds: dict[str, float], turnout: float, height: float,
          settle: Callable[[dict[str, float]], dict[str, float]]) -> tuple[list[Phase], State]:
    duration = _seconds(name, seconds, kinds) if name not in POSITIONS else None
    pose = state.pose
    phases: list[Phase] = []
    chained = uses_closed_chain(state.position)

    if name in POSITIONS:
        target_pose = settle(position_pose(name, turnout, height))
        total = _seconds(name, seconds, {**kinds, "position": kinds["transition"]})
        least = INTO_WIDE_SECONDS.get(name) if name != state.position else None
        if least is not None:
            # Into second the supporting knee bends (a fondu) so the other leg reaches its wide place:
            # in 6 s it bent in half a second, the supporting toes came up and the dancer fell. Into
            # fourth see INTO_WIDE_SECONDS.
            if seconds is not None and seconds < least:
                raise DancerError(f"a change into {name} takes at least {least:g} s, got {seconds:g}")
            total = max(total, least)
        if state.releve and state.support in ("L", "R"):
            raise DancerError(f"{name} from releve on one foot: come down first (no step lowers from "
                              "one toe yet); end the sequence on the toe instead")
        if state.releve:
            raise DancerError(f"{name} from releve: the releve on both feet comes down by itself")
        if state.support == "both" and name == state.position:
            # In fourth the COM stays where the dancer stood: aimed between the ankles, the legs
            # leaning alike to get it there, the dancer fell (also before a plie).
            target = "stand" if state.position == "fourth_position" else "both"
            # After the back foot's tendu closed by the chain the legs stay on it (see TENDU_FROM_BOTH_FEET).
            phases.append(Phase(label, _seconds(name, seconds, kinds), pose, "both", target, 0.5,
                                1.0, closed_chain=chained or state.closed_behind))
            return phases, state
        if name == state.position and not (state.raised or state.hover):
            # Both feet are where the position put them and the weight is on one: it comes back
            # to the middle, the reverse of the weight shift.
            centred = centred_pose(pose)
            phases.append(Phase(label, _seconds(name, seconds, {**kinds, "position": kinds["weight_shift"]}),
                                centred, "both", "stand", 0.5, 2.0,
                                closed_chain=chained or state.closed_behind))
            return phases, replace(state, support="both", pose=centred)
        support = state.support if state.support in ("L", "R") else "L"
        working = other(support)
        # Shares of the step's seconds: the weight onto the supporting foot (from both feet), the
        # foot up, carried, set down (the weight still over the supporting foot), the weight to the
        # middle of the new position. Then it settles there for TRANSITION_SETTLE seconds.
        back_of_fifth = working != FRONT_FOOT and "fifth_position" in (name, state.position)
        # From first into fifth a short dancer's front foot is set down as slowly (see TRANSITION_FELL_AT).
        set_down = SET_DOWN_BEHIND if back_of_fifth or (height < LAND_FLAT_BELOW and (
            state.position, name) == ("first_position", "fifth_position")) else SET_DOWN
        shares = (2.0 if state.support == "both" else 0.0, 0.5, 1.0, set_down, 1.75)
        out_of_wide = state.position in OUT_OF_WIDE
        if out_of_wide:
            lift_share, carry_share, down_share, middle_share = OUT_OF_WIDE[state.position]
            if back_of_fifth:
                # As into fifth from elsewhere (SET_DOWN_BEHIND), set down in twice the share (see
                # TRANSITIONS).
                down_share *= SET_DOWN_BEHIND / SET_DOWN
            shares = (OUT_OF_WIDE_SHIFT if shares[0] else 0.0, lift_share, carry_share, down_share,
                      middle_share)
            least = sum(shares)
            if seconds is not None and seconds < least:
                raise DancerError(f"a change out of {state.position} takes at least {least:g} s, "
                                  f"got {seconds:g}")
            total = max(total, least)
        off_the_front = state.position == "fourth_position" and support == FRONT_FOOT
        if off_the_front:
            shares = (0.0, *OFF_THE_FRONT_OF_FOURTH)
            least = sum(shares)
            if seconds is not None and seconds < least:
                raise DancerError(f"a change out of fourth_position with the back foot takes at least "
                                  f"{least:g} s, got {seconds:g}")
            total = max(total, least)
        shift, lift, carry, down, middle = _split(total, *shares)
        if shift:
            phases.append(Phase(label, shift, pose, "both", "foot:" + support, 0.5, 2.0,
                                closed_chain=chained))
        moved = centred_pose(pose)
        if (out_of_wide or off_the_front) and not (state.raised or state.hover):
            # Out of second (and off the front foot of fourth: OFF_THE_FRONT_OF_FOURTH) the free foot
            # lifts flat as a one-foot step there starts, and the supporting leg straightens under the
            # pelvis first (see _off_the_floor).
            phases.append(Phase(label, lift, _free_lift(state, working, turnout, height), support,
                                "foot:" + support, 0.9 * lift, 0.3, straighten=True))
        elif not (state.raised or state.hover):
            # Straight up off its spot (by IK): the position's own lift pose, written for a centred
            # pelvis, swung the foot of a wide position 24 cm across under a pelvis over the other foot.
            phases.append(Phase(label, lift, moved, support, "foot:" + support, 0.9 * lift, 0.5,
                                land=TRANSITION_HOVER))
        # Over a raised midpoint to just above its place in the new position (relative to the
        # supporting foot as it stands), by IK; the closed chain then sets it down there ...
        if (state.position, name, working) in CARRIED_IN_TWO_HALVES:
            # ... the first half with the COM target going over to the new position's over the half,
            # the second solved again from where the pelvis then stands (see CARRIED_IN_TWO_HALVES).
            carry = 0.5 * carry
            phases.append(Phase(label, carry, moved, support, "foot:" + support, 0.9 * carry, 0.9 * carry,
                                land=TRANSITION_HOVER, place=name))
        phases.append(Phase(label, carry, moved, support, "foot:" + support, 0.9 * carry, 0.5,
                            land=TRANSITION_HOVER, place=name))
        if name in WEIGHT_WHILE_LANDING:
            # Into second the weight goes to the middle while the foot lands: held over the
            # supporting foot, the leg reaching far out landed like a strut, pushed the COM off the
            # outer edge of the supporting foot and the dancer fell (unless the change started from
            # both feet straight out of the position, and then barely).
            phases.append(Phase(label, down + middle, target_pose, "both", "both", 0.8 * down,
                                down + 0.9 * middle, closed_chain=_sets_down_by_chain(name), place=name))
            middle = 0.0
        else:
            phases.append(Phase(label, down, target_pose, "both", "keep", 0.8 * down, 0.5,
                                closed_chain=_sets_down_by_chain(name), place=name))
        # ... and the weight goes to the middle of the new position (aimed now that both feet are
        # down) and settles there: the next step starts from it as from a sequence's first position.
        if middle:
            phases.append(Phase(label, middle, target_pose, "both", "both", 0.5, 0.9 * middle,
                            closed_chain=_sets_down_by_chain(name), place=name))
        phases.append(Phase(label, TRANSITION_SETTLE, target_pose, "both", "keep", 0.5, 0.5,
                            closed_chain=_sets_down_by_chain(name), place=name,
                            lean_from_zero=out_of_wide or state.position in LEAN_FROM_NONE_OUT_OF))
        return phases, State(name, target_pose, changed=True, changed_from=state.position,
                             left_moved=state.left_moved or working == "L", earlier_from=state.changed_from,
                             changed_by=working)

    support, working = _support_for(name, side, state)

    if name == "weight_shift":
        if side is None:
            support, working = "L", "R"
        else:
            support, working = side, other(side)
        if state.raised or state.releve:
            raise DancerError("the weight can only shift with both feet flat on the floor")
        if state.support == support:
            raise DancerError(f"the weight is already on the {_word(support)} foot")
        # In fourth the weight goes onto the front foot by the closed chain too (the legs leaning
        # alike tipped the dancer backwards off it within a second); onto the back foot the legs
        # still lean alike (by the chain the unloaded front foot chattered on the floor and the COM
        # ended 4 cm outside the polygon). Standing and the plies there lean alike (``uses_closed_chain``).
        chained = chained or (state.position == "fourth_position" and support == FRONT_FOOT)
        chained = chained or (state.position in CHAIN_SHIFT_AFTER_THE_CHANGE and state.changed)
        chained = chained or (state.position in TENDU_BY_CHAIN and state.closed)
        # The upper body starts from the position's and ends as the upright shift poses it.
        pose = centred_pose(pose)
        after = upright_pose(pose, support) if state.position in UPRIGHT_FROM else pose
        if state.hover and state.position in CARRIED_TO_ITS_PLACE:
            # Carried out to its place and set down as a change into the position sets its moving foot
            # (see CARRIED_TO_ITS_PLACE), the weight going to the middle as it lands; then the weight goes
            # over as from both feet. The feet stand as after a change into the position (1-3 cm off their
            # places), so what is refused after one is refused after this.
            position = state.position
            placed = settle(position_pose(position, turnout, height))
            carry, down, middle = _split(CARRIED_TO_ITS_PLACE[position], *CARRY_BACK_SHARES)
            by_chain = _sets_down_by_chain(position)
            phases.append(Phase(label, carry, pose, state.support, "foot:" + state.support, 0.9 * carry, 0.5,
                                land=TRANSITION_HOVER, place=position))
            phases.append(Phase(label, down + middle, placed, "both", "both", 0.8 * down, down + 0.9 * middle,
                                closed_chain=by_chain, place=position))
            phases.append(Phase(label, TRANSITION_SETTLE, placed, "both", "keep", 0.5, 0.5,
                                closed_chain=by_chain, place=position, lean_from_zero=True))
            placed = centred_pose(placed)
            phases.append(Phase(label, duration, placed, "both", "foot:" + support, 0.5,
                                min(2.0, 0.8 * duration), closed_chain=chained))
            return phases, replace(state, support=support, hover=False, closed=True, changed=True,
                                   since_change=0, pose=placed)
        if state.hover:
            # The hovering foot comes back over its spot just above the floor (by IK), the closed chain
            # sets it down and brings the weight to the middle, as a tendu from both feet closes; then
            # the weight goes over as from both feet. Set down straight onto the floor while the weight
            # stayed on the other foot, the landed foot was still partly on its ball and the next step
            # fell (first: the other foot, lifting, swung 10 cm across behind it); in fifth the foot,
            # hovering under its own hip, was dragged through the other one to its crossed place.
            phases.append(Phase(label, WEIGHT_SHIFT_SET_DOWN, pose, state.support, "foot:" + state.support,
                                0.8 * WEIGHT_SHIFT_SET_DOWN, 0.5, land=TENDU_HOVER))
            if height < LAND_FLAT_BELOW:
                # The landing foot down slowly and flat before the weight leaves the supporting one
                # (see LAND_FLAT_BELOW), then to the middle as a tendu from both feet closes.
                phases.append(Phase(label, TENDU_CLOSE, pose, "both", "keep", 0.8 * TENDU_CLOSE, 0.5,
                                    closed_chain=chained))
            phases.append(Phase(label, TENDU_CLOSE, pose, "both", "both", 0.5, 0.8 * TENDU_CLOSE,
                                closed_chain=chained))
            shift, upright = _upright_split(duration, state)
            phases.append(Phase(label, shift, pose, "both", "foot:" + support, 0.5, min(2.0, 0.8 * shift),
                                closed_chain=chained))
            phases.extend(_upright(label, upright, pose, state.position, support))
            return phases, replace(state, support=support, hover=False, closed=True, pose=after)
        if state.support == other(support):
            # From one foot to the other through the middle: straight across, the foot that had
            # been unloaded took the weight with its heel still light, and the next step fell.
            if seconds is None and state.position in ACROSS_SECONDS:
                duration = ACROSS_SECONDS[state.position]
            shift, upright = _upright_split(duration, state)
            to_middle, across = _split(shift, 2.0, 3.0)
            phases.append(Phase(label, to_middle, pose, "both", "stand", 0.5,
                                0.8 * to_middle, closed_chain=chained))
            phases.append(Phase(label, across, pose, "both", "foot:" + support, 0.5,
                                0.7 * across, closed_chain=chained))
            phases.extend(_upright(label, upright, pose, state.position, support))
            return phases, replace(state, support=support, hover=False, pose=after)
        shift, upright = _upright_split(duration, state)
        phases.append(Phase(label, shift, pose, "both", "foot:" + support, 0.5, min(2.0, 0.8 * shift),
                            closed_chain=chained))
        phases.extend(_upright(label, upright, pose, state.position, support))
        return phases, replace(state, support=support, hover=False, pose=after)

    if name in ("demi_plie", "grand_plie"):
        if state.support != "both" or state.releve:
            raise DancerError(f"{name} is done on both feet flat: close into a position first")
        deep = name == "grand_plie"
        bent = dict(pose)
        knee = 1.55 if deep else 0.75
        for s in ("L", "R"):
            # Turned out, the knees bend over the toes: hip flexion in the plane of the turned-out
            # foot, the knee twice as far, the ankle back by the hip's share so the foot stays flat.
            bent.update(turned_out_flexion(pose, s, 0.5 * knee))
            bent[f"shin.{s}_y"] = knee
            bent[f"foot.{s}_y"] = pose.get(f"foot.{s}_y", 0.0) - 0.5 * knee
        bent.update(arms("second" if deep else "first"))
        bent["spine_y"] = PLIE_SPINE * knee
        down, up = _split(duration, 1.0, 1.0)
        # Every joint the plie bent goes back (a joint the position leaves at rest back to zero).
        straight = {name: pose.get(name, 0.0) for name in bent}
        # In fourth, one foot ahead of the other, bending each leg in its own turned-out plane by
        # the angles above sent the pelvis back over the rear heel (the dancer fell): there the
        # legs are solved for the pelvis going straight down instead.
        # After a change of position or a tendu from both feet the feet stand where the closed chain
        # set them (within a couple of centimetres of the position's places, a knee still bent):
        # bending the position's angles from there walked them and the dancer fell, so the legs are
        # solved for the pelvis going straight down there too.
        # Up, the legs go back to the angles they started the step on (``Phase.restore``): back to the
        # position's angles, they lost what the closed chain had them stand on (the feet off their
        # nominal places by a few millimetres after any chain step) and the feet walked.
        by_chain = state.changed and state.position in PLIE_BY_CHAIN_AFTER_A_CHANGE
        if state.position in PLIE_BY_CHAIN or by_chain:
            drop = PLIE_SINK[name]
            phases.append(Phase(label, down, bent, "both", "hold", 0.9 * down, 0.9 * down, closed_chain=True,
                                chain_drop=(0.0, drop)))
            phases.append(Phase(label, up, straight, "both", "keep", 0.9 * up, 0.9 * up, closed_chain=True,
                                chain_drop=(drop, 0.0)))
            phases.append(Phase(label, PLIE_SETTLE, straight, "both", "keep", 0.5, 1.0, closed_chain=True))
            return phases, state
        solved = state.position == "fourth_position" or state.changed or state.closed
        sink = PLIE_SINK[name] if solved else 0.0
        phases.append(Phase(label, down, bent, "both", "hold", 0.9 * down, 0.9 * down, sink=sink))
        # The COM stays where it stood before the plie, and settles there before the next step: a
        # weight shift straight out of a grand plie started from a body still moving (and from 3
        # mm further forward, over the middle of the feet) and the extension after it fell.
        phases.append(Phase(label, up, straight, "both", "keep", 0.9 * up, 0.9 * up, restore=solved))
        phases.append(Phase(label, PLIE_SETTLE, straight, "both", "keep", 0.5, 1.0, restore=solved))
        return phases, state

    if name == "releve" and state.support == "both" and side is None:
        if seconds is None:
            # The family's seconds stretch to the least this position's relevé takes (see RELEVE_BACK).
            duration = max(duration, releve_on_both_feet_seconds(state.position))
        on_the_feet = state.on_the_feet or state.position in REST_ON_THE_FEET
        phases = _releve_on_both_feet(pose, label, duration, state.position)
        return phases, replace(state, on_the_feet=on_the_feet)

    if state.releve and name != "pivot_quarter":
        raise DancerError(f"{name} is not done on demi-pointe: only pivot_quarter follows a releve on "
                          "one foot")

    if name.startswith("tendu_"):
        if state.raised:
            raise DancerError("tendu starts from a closed position: the working leg is up")
        if state.support == working:
            raise DancerError(f"the weight is on the {_word(working)} foot, which cannot work: "
                              f"add weight_shift:{_word(support)} first")
        direction = name.split("_", 1)[1]
        if state.support == "both" and state.position in TENDU_WIDE_SECONDS:
            least = TENDU_WIDE_SECONDS[state.position]
            if seconds is not None and seconds < least:
                raise DancerError(f"a tendu straight from both feet in {state.position} takes at least "
                                  f"{least:g} s, got {seconds:g}")
            duration = max(duration, least)
        state = replace(state, pose=centred_pose(state.pose))
        pose = state.pose
        port = arms("first" if direction == "back" else "second")
        chained = chained or (state.support == "both" and state.position in TENDU_BY_CHAIN)
        phases_out = []
        if state.support == "both":
            # From both feet the weight goes onto the supporting foot first, as a weight shift
            # does, and comes back after; the step's own seconds are the leg's way out and in.
            phases_out.append(Phase(label, kinds["weight_shift"], pose, "both", "foot:" + support, 0.5,
                                    2.0, closed_chain=chained))
        elif _from_upright(state, support):
            # After the upright weight shift the other foot is still loaded (see the extensions below):
            # the weight goes over the supporting foot first, both feet still down.
            phases_out.append(Phase(label, OVER_THE_FOOT, pose, "both", "foot:" + support, 0.5,
                                    0.8 * OVER_THE_FOOT, closed_chain=uses_closed_chain(state.position)))
        out_time = back_time = 0.5 * duration
        # The foot first comes off the floor flat (the pelvis sits lower over the leaning
        # supporting leg than in the pose, so a brushing foot would dig in), then goes out.
        lifted = _free_lift(state, working, turnout, height)
        phases_out.extend(_off_the_floor(state, working, support, label, lifted))
        # From both feet it comes back over its spot by IK, where the closed chain sets it down: the
        # lift pose, written for a centred pelvis, held it 8 cm across, under the pelvis over the
        # other foot, and the foot closed 3 cm off its place.
        closing = TENDU_HOVER if state.support == "both" else None
        near = pose if closing else lifted
        if _crosses_the_supporting_foot(state.position, direction, working):
            # Over the supporting foot (see TENDU_PASSING) the leg passes high, half way to an
            # attitude, to its point (TENDU, the foot pointed), and back the same way.
            roll, pitch = TENDU[direction]
            out = {**pose, **_working(working, {**_leg(roll, pitch, 0.0, 1.2), "toe.R_y": 0.0}), **port}
            brush = {**pose, **_working(working, {**_leg(roll, pitch), **TENDU_PASSING[direction]}), **port}
            phases_out.append(Phase(label, 0.3 * out_time, lifted, support, "foot:" + support,
                                    0.27 * out_time, 0.3))
            phases_out.append(Phase(label, 0.7 * out_time, out, support, "foot:" + support, 0.63 * out_time,
                                    0.3, via=brush, key=True))
            phases_out.append(Phase(label, 0.7 * back_time, near, support, "foot:" + support,
                                    0.63 * back_time, 0.3, via=brush, land=closing))
        else:
            # The toes slide out along the floor and back (see Phase.slide), the foot first letting go
            # of the floor where it stands (loaded, its sole held by friction as the toes went out,
            # and the supporting foot slid instead); the arms open meanwhile.
            sliding = {**pose, **port}
            phases_out.append(Phase(label, out_time, sliding, support, "foot:" + support, 0.8 * out_time, 0.3,
                                    pose_delay=TENDU_RELEASE_SHARE * out_time, slide=direction, key=True))
            phases_out.append(Phase(label, 0.7 * back_time, sliding, support, "foot:" + support,
                                    0.63 * back_time, 0.3, slide=direction, slide_back=True))
        # Back over its spot, just above the floor: touching down unweighted would need the
        # foot placed to the millimetre; the next step on both feet sets it down.
        phases_out.append(Phase(label, 0.3 * back_time, near, support, "foot:" + support,
                                0.27 * back_time, 0.3, keep_lean=not closing, land=closing))
        if state.support == "both":
            # Closing back onto both feet: the weight returns to the middle.
            close, blend = TENDU_CLOSE, 0.5
            if _behind_from_both_feet(state, working):
                close, blend = TENDU_CLOSE_BEHIND, TENDU_CLOSE_BEHIND_BLEND
            if working != FRONT_FOOT and state.position in BACK_FOOT_CLOSE:
                close, blend = BACK_FOOT_CLOSE[state.position]
            if state.position in TENDU_CLOSE_WIDE:
                close, blend = TENDU_CLOSE_WIDE[state.position]
            if height < LAND_FLAT_BELOW and state.position in LAND_FLAT_TENDU and working == FRONT_FOOT:
                # Down slowly and flat before the weight goes to the middle (see LAND_FLAT_TENDU).
                phases_out.append(Phase(label, close, pose, "both", "keep", 0.8 * close, 0.5,
                                        closed_chain=chained))
            phases_out.append(Phase(label, close, pose, "both", "both", blend, 0.8 * close,
                                    closed_chain=chained))
            behind = state.closed_behind or (_behind_from_both_feet(state, working)
                                             and state.position in HELD_OVER_ITS_SPOT)
            return phases_out, replace(state, closed=True, closed_behind=behind)
        return phases_out, replace(state, hover=True)

    if name == "pivot_quarter" and not state.releve:
        raise DancerError("pivot_quarter turns on demi-pointe on one foot: add weight_shift, retire and "
                          "releve first")
    if state.support == working:
        raise DancerError(f"the weight is on the {_word(working)} foot, the leg that should work: add "
                          f"weight_shift:{_word(support)} first")
    if state.support != support:
        need = "one foot" if state.support == "both" else f"the {_word(support)} foot"
        raise DancerError(f"{name.split('_')[0]} needs the weight on {need}: add weight_shift:"
                          f"{_word(support)} first")

    if name == "retire":
        if state.raised:
            raise DancerError("the working leg is already in retire")
        up = _on(pose, working, classical_retire_pose)
        via = _on(up, working, retire_lift_pose)
        phases.extend(_off_the_floor(state, working, support, label,
                                     _free_lift(state, working, turnout, height)))
        # The paper's retire and releve as tuned: levelling the pelvis while the foot leaves the
        # floor upset small (fast) bodies.
        phases.append(Phase(label, duration, up, support, "foot:" + support, 2.5 / 3.5 * duration, 0.5,
                            via=via, level_pelvis=False))
        return phases, replace(state, raised=True, pose=up)

    if name == "releve":
        if not state.raised:
            raise DancerError("releve on one foot is done in retire: add retire first")
        # The working side's arm rises to fifth en haut: over the shoulder, its mass nearer the
        # supporting side than held low and out (leg_line: 0.7 degrees less tilt on the ball).
        up = {**releve_pose(pose, support), **_side_arm("high", working)}
        phases.append(Phase(label, duration, up, support, "ball:" + support, 2.2, 1.2, pose_delay=1.5,
                            toe_control=True, level_pelvis=False,
                            absorb_lean=state.position in ABSORB_ON_THE_TOE))
        return phases, replace(state, releve=True, pose=up)

    if name == "pivot_quarter":
        if not state.releve:
            raise DancerError("pivot_quarter turns on demi-pointe: add retire and releve first")
        # On the toe as the releve left the dancer (the toe joint carrying the balance from the
        # first tick, the pelvis as it is), the body swivels a quarter turn about the ball.
        phases.append(Phase(label, duration, {}, support, "toe:" + support, 1.0, 0.5, pose_delay=-1.0,
                            toe_control=True, level_pelvis=False,
                            turn=np.pi / 2 * (1.0 if support == "L" else -1.0)))
        return phases, state

    # Extensions: developpe and arabesque pass the working leg through retire and close it again.
    if name.startswith("developpe_"):
        _, direction, degrees = name.split("_")
        roll, pitch = DEVELOPPE[(direction, int(degrees))]
        extended = _leg(roll, pitch, 0.0, 1.0)
        port = "second"
    else:
        extended = _leg(0.0, 0.75, 0.0, 1.0, turn=-0.7)
        extended["spine_y"] = -0.12
        port = "arabesque"
    retired = _on(pose, working, retire_pose)
    out = dict(retired)
    out.update(_working(working, extended))
    out.update(arms(port) if support == "L" else mirror_pose(arms(port)))
    phases_out = []
    # Through an attitude: the thigh goes to its final angle with the knee still bent as in the
    # retire, then the knee unfolds; straight from the retire the foot sweeps close to the floor.
    attitude = dict(out)
    # In front the bent knee would carry the foot across the supporting leg: unfold it earlier.
    bend = {"shin.R_y": 2.1, "foot.R_y": 0.6}
    if "front" in name:
        # ... and the thigh higher, so the unfolding leg does not brush the floor.
        bend = {"shin.R_y": 1.0, "foot.R_y": 0.6, "thigh.R_y": extended["thigh.R_y"] - 0.35}
    attitude.update(_working(working, bend))
    share = (0.0, 0.55, 0.45)
    if _from_upright(state, support):
        # The upright weight shift leaves the COM where the supporting leg stands straightest, 2.4 cm
        # inside the supporting ankle and 1.3 behind it, with the other foot still loaded; the lift
        # below aims 5-7 cm away at once as that foot leaves the floor. With the weight a little
        # off after many steps (first, seed 5 of the random draw) the COP reached the supporting
        # foot's inner edge, its toes lifted and it slid. The weight goes over the foot first,
        # both feet still down.
        phases_out.append(Phase(label, OVER_THE_FOOT, pose, "both", "foot:" + support, 0.5,
                                0.8 * OVER_THE_FOOT, closed_chain=uses_closed_chain(state.position)))
    if not state.raised:
        phases_out.extend(_off_the_floor(state, working, support, label,
                                         _free_lift(state, working, turnout, height)))
        # Into the retire as the retire step does it (faster, the foot leaving the floor upsets
        # the balance); the extension's own seconds start after it.
        phases_out.append(Phase(label, kinds["retire"], retired, support, "foot:" + support,
                                2.5 / 3.5 * kinds["retire"], 0.5,
                                via=_on(retired, working, retire_lift_pose)))
    phases_out.append(Phase(label, share[1] * duration, out, support, "foot:" + support,
                            0.8 * share[1] * duration, 0.3, via=attitude, key=True))
    phases_out.append(Phase(label, 0.5 * share[2] * duration, retired, support, "foot:" + support,
                            0.45 * share[2] * duration, 0.3, via=attitude))
    if not state.raised:
        # Down to just above its spot on the floor, as a tendu ends.
        phases_out.append(Phase(label, 0.5 * share[2] * duration, _free_lift(state, working, turnout, height),
                                support, "foot:" + support, 0.45 * share[2] * duration, 0.3,
                                via=_on(retired, working, retire_lift_pose), keep_lean=True))
        return phases_out, replace(state, hover=True)
    phases_out[-1].duration = share[2] * duration
    return phases_out, state


def _releve_parts(position: str) -> dict[str, float]:
    """RELEVE_PARTS with the way back from the balls as long as it takes from ``position``."""
    return {**RELEVE_PARTS, "back": RELEVE_BACK.get(position, RELEVE_PARTS["back"])}


def releve_on_both_feet_seconds(position: str) -> float:
    """The least seconds the relevé on both feet takes from ``position``."""
    return sum(_releve_parts(position).values())


def _releve_on_both_feet(pose: dict[str, float], label: str, duration: float,
                         position: str = "first_position") -> list[Phase]:
    """Rise onto the balls of both feet, hold, come down and stand again (``duration`` seconds).

    The legs are posed about the balls, which stay where they are (``Phase.heels``): ankle and toe
    joints move together with the COM kept just ahead of the balls until the heels are down, then
    the COM goes back over the middle of the feet. Outside first position the weight goes forward
    onto the balls so too, the feet flat (see SHIFT_BY_LEANING).
    """
    parts = _releve_parts(position)
    least = sum(parts.values())
    hold = duration - least
    if hold < -1e-9:
        raise DancerError(f"releve on both feet from {position} takes at least {least:g} s, got {duration:g}")
    shift, lift, rise, down, back, rest = parts.values()
    raised = {**pose, **arms("first")}
    # Flat, the toes press the floor a little: with the COM over the front of the feet the toes and
    # the front of the foot shared the load through the stiff toe joint and the feet chattered.
    pressed = {**pose, "toe.L_y": TOE_PRESS, "toe.R_y": TOE_PRESS}
    # Every leg joint the poses on the balls move goes back to the position's angle at the end.
    standing = {**pose, **{f"{body}.{s}_{axis}": pose.get(f"{body}.{s}_{axis}", 0.0) for s in ("L", "R")
                           for body, axes in (("thigh", "xyz"), ("shin", "y"), ("foot", "xy"), ("toe", "y"))
                           for axis in axes}}
    phases = [
        # The weight forward onto the balls, the heels still down ...
        Phase(label, shift, pressed, "both", "toe:both", 0.5, 0.6 * shift,
              heels=None if position in SHIFT_BY_LEANING else 0.0),
        # ... the heels off the floor briskly (lifting them slowly, the feet chattered) ...
        Phase(label, lift, raised, "both", "toe:both", lift, 0.5, toe_control=True, heels=RELEVE_START,
              absorb_lean=True),
        # ... up onto the balls, which stay where they are, and held there ...
        Phase(label, rise + hold, raised, "both", "toe:both", 0.85 * rise, 0.5, toe_control=True,
              heels=RELEVE_ANGLE, absorb_lean=True),
        # ... down the same way until the heels are on the floor ...
        Phase(label, down, raised, "both", "toe:both", 0.9 * down, 0.9 * down, toe_control=True, heels=0.0,
              absorb_lean=True),
        # ... the COM back over the middle of the feet, and the legs and toes as the position has them.
        Phase(label, back, pressed, "both", "stand", 0.6 * back, 0.8 * back, heels=0.0, absorb_lean=True),
        Phase(label, rest, standing, "both", "stand", 0.8 * rest, 0.5, absorb_lean=True,
              heels=0.0 if position in REST_ON_THE_FEET else None),
    ]
    for phase in phases:
        phase.releve_on_both = True
    return phases


BACK_FOOT_LIFT = 1.0  # seconds the back foot of third or fifth takes to come off the floor flat


def _lift_first(state: State, working: str, support: str, label: str,
                lifted: dict[str, float]) -> list[Phase]:
    """In third and fifth the back (left) foot, crossed behind the supporting one, goes into the
    retire straight from the floor along a path that swings the leg out and the dancer fell; from
    the tendu's flat lift (a few centimetres off its spot) it goes there cleanly, so it lifts so
    first."""
    if state.hover or working != "L" or state.position not in ("third_position", "fifth_position"):
        return []
    return [Phase(label, BACK_FOOT_LIFT, lifted, support, "foot:" + support, 0.9 * BACK_FOOT_LIFT, 0.3)]


STRAIGHTEN_SECONDS = 2.0  # the free foot's lift and the supporting leg's straightening after a weight shift
# Where the closed-chain weight shift leaves the supporting knee bent (the other foot, far out or
# crossed, holds the pelvis down): second 46 degrees, third and fifth onto the front foot 17-21.
STRAIGHTEN_IN = ("second_position", "third_position", "fourth_position", "fifth_position")
# Where the back foot's tendus from both feet (TENDU_BEHIND_FROM_BOTH_FEET) keep the free foot held this
# high (m) over its spot by IK while the supporting leg straightens, instead of the lift pose: in fourth, with
# the weight over the front foot, that pose (written for a centred pelvis) carried the back foot 19 cm
# forward onto the front foot and the dancer fell as it closed (11-13 s in at 1.65 m). The supporting
# leg straightens no higher than the free leg still reaches the spot (perform.HOVER_REACH).
HELD_OVER_ITS_SPOT = {"fourth_position": 0.01}


def _off_the_floor(state: State, working: str, support: str, label: str,
                   lifted: dict[str, float]) -> list[Phase]:
    """How the free foot first leaves the floor after a weight shift.

    In second, third and fifth the weight shift can leave the pelvis low over a bent supporting
    knee. The free foot lifts a few centimetres, flat, and the supporting leg straightens under
    the pelvis, which rises, before the free leg goes anywhere: its poses are written for a
    straight supporting leg (from a bent one, in second the working foot was driven into the
    floor; in third and fifth the pelvis tipped 14 degrees and the back tendu stepped onto the
    floor). Elsewhere the back foot of a crossed position lifts flat first (``_lift_first``)."""
    onto_it = state.support == support or _behind_from_both_feet(state, working)
    if state.position in STRAIGHTEN_IN and not (state.hover or state.raised) and onto_it:
        held = HELD_OVER_ITS_SPOT.get(state.position) if _behind_from_both_feet(state, working) else None
        return [Phase(label, STRAIGHTEN_SECONDS, lifted, support, "foot:" + support,
                      0.9 * STRAIGHTEN_SECONDS, 0.3, straighten=True, land=held)]
    return _lift_first(state, working, support, label, lifted)


def _behind_from_both_feet(state: State, working: str) -> bool:
    """Whether a tendu from both feet is the back foot's in a position of TENDU_BEHIND_FROM_BOTH_FEET."""
    return (state.support == "both" and working != FRONT_FOOT
            and state.position in TENDU_BEHIND_FROM_BOTH_FEET)


def _crosses_the_supporting_foot(position: str, direction: str, working: str) -> bool:
    """Whether a tendu of the ``working`` leg in ``direction`` passes over the supporting foot (the
    front foot's tendu back in fourth)."""
    if position != "fourth_position":
        return False
    return (direction == "back") == (working == FRONT_FOOT) and direction != "side"


def _free_lift(state: State, working: str, turnout: float, height: float) -> dict[str, float]:
    """The working foot a few centimetres off the floor, flat (where one-foot steps start and end).

    In third and fifth it is under its own hip as in first position, not crossed: from the crossed
    place a tendu back of the front foot swept through the supporting foot (it slid 10 cm) and the
    dancer fell. (In fourth, from under the hip, tendus to the side fell in seeded random sequences.)"""
    pose = state.pose
    if state.position in ("third_position", "fifth_position"):
        first = position_pose("first_position", turnout, height)
        pose = {**pose, **{f"thigh.{working}_{a}": first.get(f"thigh.{working}_{a}", 0.0) for a in "xy"}}
    return _on(pose, working, _small_lift)


def _name(body: str, side: str, axis: str) -> str:
    return f"{body}.{side}_{axis}"


def _word(side: str) -> str:
    return "left" if side == "L" else "right"


def random_sequence(rng: np.random.Generator, length: int, start: str = "first_position",
                    allow_unbalanced: bool = False, releve_on_both_feet: bool = False,
                    height: float = 1.65) -> list[str]:
    """A legal sequence of ``length`` items (the position included) drawn with ``rng``.

    Depth-first with the candidates shuffled at every step, so the draw never ends in a state
    no step can follow (on one toe, say) before it is long enough. With ``releve_on_both_feet``
    the relevé on both feet (``releve`` without a side) is drawn too where it is legal; off by
    default so that a seed keeps drawing the sequence it always drew. Legal for a dancer of
    ``height`` (some moves are refused for short dancers only).
    """
    names = [f"{name}:{side}" for name in STEPS for side in ("left", "right")] + list(POSITIONS)
    if releve_on_both_feet:
        names.append("releve")

    def legal(sequence: list[str]) -> bool:
        try:
            plan(sequence, height=height, allow_unbalanced=allow_unbalanced)
        except DancerError:
            return False
        return True

    def extend(sequence: list[str]) -> list[str] | None:
        if len(sequence) == length:
            return sequence
        for index in rng.permutation(len(names)):
            candidate = sequence + [names[int(index)]]
            if legal(candidate):
                done = extend(candidate)
                if done is not None:
                    return done
        return None

    found = extend([start])
    if found is None:
        raise DancerError(f"no legal sequence of {length} steps starts from {start}")
    return found
