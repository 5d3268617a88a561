"""The ballet sequence of the paper's Fig. 2: position, weight shift, retiré, relevé on one toe.

Left is the supporting leg. Every phase blends the joint targets towards its key pose and the COM
target towards its support region; the COP strategy (eqs. 7-9) keeps the balance throughout, with
the lean on the supporting ankle(s) and hip(s) (equal angle changes, pelvis level), the spine
counter-rotating any pelvis tilt, a COM term at the supporting hip once the polygon is one foot,
and the toe joint taking over the sagittal control once the heel is up.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from .. import quaternions
from .anthropometry import DancerError
from .balance import Gains
from .closed_chain import KNEE_HAIR, ClosedChain, level_frame, level_yaw
from .closed_chain import SIDES as LEG_SIDES
from .leg_line import foot_rotation, upright_point
from .model import build_body
from .sim import CONTACT_BODIES, CONTROL_DT, DancerSim, bone_rotations
from .steps import DEFAULT_TURNOUT, FRONT_FOOT, TOE_PRESS, other, plan, position_pose, uses_closed_chain
from .support import clamp_xy_into_hull, convex_hull, polygon_area

DEFAULT_SEQUENCE = ("first_position", "weight_shift", "retire", "releve")
AIRBORNE_FALL = 0.1
# On the balls of both feet: the knees are straight to this share of the leg's length (a hair
# short, so the legs' IK never asks for more than they reach), and the COP follows its goal this
# much faster than on flat feet (at the flat-feet rate the feet chattered as the heels rose).
BALLS_KNEE_REACH = 0.9998
BALLS_TRACKING = 1.25
# Per position, how far (m) each foot is posed in towards the other from where it stands while both
# feet are posed about their balls with the weight over them (the relevé on both feet): in second the
# splayed legs push their balls outwards, and each slid 1.9 cm away from the other over the step (1.5
# at 1.1 m, 2.1 at 2.0 m); aimed 6 mm in, 0.6-0.9 cm from 1.1 to 2.0 m.
BALLS_AIM_IN = {"second_position": 0.006}
# Where the relevé on both feet steers the COM sideways too, on poses that roll the pelvis so both straight
# legs reach their feet (the pelvis upright, the farther leg's reach set its height and the nearer knee
# bent). In fifth, the legs crossed, the back foot came off the floor as the weight went back to the
# middle and slid 2.2-3.2 cm (the COM ended 0.4-7 cm off the feet); on the rolled poses both feet stay
# down, the balls within 0.7-1.0 cm of their places and the COM 1.2-7.1 cm inside the feet (1.1-2.0 m).
# In fourth, the feet a foot length apart, the upright poses fell 5.8-6 s into the relevé; the rolled ones
# hold it up and down (the pelvis rolls up to 11 degrees with the weight forward over the flat feet) and
# the legs end on them (steps.REST_ON_THE_FEET).
BALLS_ACROSS = ("fourth_position", "fifth_position")
# While the weight goes back from the balls to the middle of the feet (steps.RELEVE_BACK) the stance
# poses move the COM forward and back only: in third, after changes from first into fifth and on into
# third, the back heel stayed up and the COM drifted 4.8 cm sideways towards it (the dancer fell at 1.5 m).
# The heel on the side the COM drifts to is pressed down, by this much (rad) per metre of sideways error
# and per metre-second of its integral: the longer leg pushes the pelvis back over the feet. In fifth,
# the feet crossed one behind the other, it made the dancer fall (1.1-1.65 m): third only.
HEEL_PRESS = (4.0, 5.0)
HEEL_PRESS_AT = ("third_position",)
# In fourth, through the relevé on both feet, the legs pushed the feet apart: on flat feet and on the balls
# alike the floor pushed each foot in by 20-40 N (a tenth of its load), and MuJoCo's soft friction let the
# feet creep under it, 3 mm/s each along the line of the feet and, as the heels came down, across it too
# (after a weight shift and back the back ball slid 1.6 cm); when the back foot was nearly unloaded
# (25 N, after a grand plie at 2.0 m) it still carried 20 N and slid 1 cm forward in half a second (2.1 cm
# in all). Here each foot's pose is aimed past where it stands (the left one by ``squeeze``, the right one
# the other way) by the integral of the push on the left foot beyond its share, by load, of the floor's
# push on both (SQUEEZE_GAIN metres per second per body weight): the balls stay within 0.3-1.0 cm, the aim
# reaching 1.3-2.6 cm (the legs give that much under the push; at most SQUEEZE_LIMIT per axis). A fixed
# aim along the line of the feet could not do it (4 mm in: 3.9 cm, out: 2.9): the push changes with the
# load, and across the line too. The relevé ends with the aim in the legs' pose, and the steps after it
# start from that: faded out after it in 0.3 s, the feet were pushed apart again and the weight shift onto
# the back foot after it and a grand plie, then an arabesque or developpe on it, fell 1.8-3 s into the
# extension (1.65 m). In second, the same control let the dancer fall at 1.1 m (6.4 s in): fourth only.
SQUEEZE_AT = ("fourth_position",)
SQUEEZE_GAIN = 1.0
SQUEEZE_LIMIT = 0.04
PELVIS_LEVEL = 2.0
TRIM_FADE = 0.7
CHAIN_BLEND = 0.3  # seconds for the legs to go over from the lean to the closed chain
# On one foot, the COM target's share of the way from the ankle to the middle of the foot, per
# starting position. From first, half way holds every step with the closed chain and the
# supporting leg's tilt after the weight shift goes from 12.3 to 9.2 degrees (over the ankle: 6.6,
# but the tendus keep 6 mm of margin); from third and fifth the tendu back fell even at half way.
# From second, half way too: over the middle of the foot the supporting heel went light and lost
# its contacts for single ticks at the end of the weight shift (the COM 4-5 cm outside the
# polygon those ticks, in 4 of 11 seeded random sequences); half way, 11 of 11 keep it inside.
SUPPORT_SHARE = {"first_position": 0.5, "second_position": 0.5}
LANDING_HEIGHT = 0.03  # m: a foot joining the closed chain is brought over its spot this high first
CHAIN_FILTER = 0.25  # seconds: the lean's slow part, which moves the pelvis in the closed chain
# From a foot landing (a tendu closing, a change of position) to the end of that stance on both feet,
# the closed chain aims each foot past its spot by how much its leg gives under its load.
CHAIN_COMPLIANCE = True
COMPLIANCE_FILTER = 0.5  # seconds: how fast the closed chain follows each leg's give under its load
COMPLIANCE_LIMIT = 0.05  # m: the most a foot is aimed past its spot
# Not in second: with the feet that far apart both legs stand near their full reach, and aimed past
# its place the landing foot of a change into second came down with its toes light and the weight
# shift after it ended 5-7 cm outside the polygon (so did keeping the landing's aim fixed for the
# steps after it); aimed at its place it lands within 0.7-2 cm of it on all four contacts, and the
# weight shifts after it hold (4 cm inside).
COMPLIANCE_OFF_IN = ("second_position",)
# ... but the supporting leg's sag is allowed for: started from the pelvis its targets would stand on (the
# sag higher than it is), the landing leg reached for the floor that much early and came down 3-4 cm short
# of its place with its toes up; held there by friction while the chain still aimed it at the place, it
# pushed like a strut and the dancer fell off the supporting foot as the weight went to the middle (from
# first at 1.1 m 9.8 s in; at 1.3-1.65 m the supporting heel came up for a tick; the right foot's change
# from third after a change into it and a weight shift, 18.5 s, after a plie there at 1.1-1.3 m, back into
# second after a change out of it, seeded draw 17). From the pelvis where it is, the supporting foot aimed
# below its spot by its leg's sag (that part of the give only) and the landing foot at its place, it lands
# flat within 0.9-1.4 cm of its place from first at 1.1-2.0 m.
SAG_ONLY = np.array([0.0, 0.0, 1.0])
# Where the closed chain holds the pelvis this share of the height below the highest both legs reach
# (both knees a little bent). In fourth (the changes into it, and the weight shifts by the chain there),
# as the weight went to the middle after a change the pelvis rose until both legs stood straight a
# foot's length apart, where the chain is singular: the feet chattered (both toes up, then each foot
# off the floor in turn), slid 1.5-2 cm and the COM went up to 15 cm outside the polygon; 1 or 2 of
# the 12 changes from first, third and fifth at 1.1-2.0 m fell, which ones changing with every timing
# tried. 0.5 % of the height (8 mm at 1.65 m): 12 of 12 hold, the weight shifts onto either foot after
# them too (onto the front foot after a change from first, and straight from the position: 1.6-3.0 cm
# inside; it ended 12 cm outside at 2.0 m with the legs straight); 1 %: two shifts fell at 1.1 m.
CHAIN_LOWER = {"fourth_position": 0.005}
# After a foot lands, the closed chain rolls the pelvis (at most this far, radians, reached over
# ROLL_BLEND seconds) so that both legs stand straight on their spots.
ROLL_AFTER_LANDING = 0.06
ROLL_BLEND = 0.5
# Only in first: in third and fifth, rolled after each tendu from both feet, the feet slid 1.5-1.8 cm
# in six tendus (1.2 cm level) and the retire after a hovering foot set down and a weight shift fell.
ROLL_IN = ("first_position",)
# Where a foot closing back onto the spot it left (a tendu from both feet) lands far out from under the
# pelvis, over a supporting knee bent 40-46 degrees (second): the landing leg reaches nearly straight, and
# pushed like a strut the supporting foot rolled onto its outer edge and the dancer fell (the first tendu
# side 11.2 s in at 1.65 m, the COM 8 cm outside the supporting foot). There the closed chain
# - aims both feet past their spots by their legs' give (not in second's changes: COMPLIANCE_OFF_IN), the
#   supporting leg's sag under the whole weight included (along the floor only, the pelvis sank 0.7 cm as
#   the chain took over and the second tendu's weight shift fell),
# - raises the pelvis no faster than WIDE_LANDING_RISE (m/s) from where it stood as the foot came down,
# - takes the weight to the middle of the feet with the landing foot on its spot (from where it hovered,
#   2 cm out and 4 cm up, the middle was 1 cm towards it and the other foot's toes came up), and
# - starts the next step afresh from the feet where they stand (kept aimed past their spots, the unloading
#   foot slid 3 cm in as the next weight shift took the load off it).
# In fourth too, for the front foot's tendus from both feet (steps.TENDU_BY_CHAIN): with the pelvis
# following the chain at once the closing foot bounced off the floor twice and the back foot's toes came up.
WIDE_LANDING = ("second_position", "fourth_position")
WIDE_LANDING_RISE = 0.03
# Where the closed chain aims the feet past their spots by the legs' give (along the floor) from the start of
# a stance on it that ends with the weight on the back foot, not only after a foot landed. In fifth the split
# legs, sagging under the weight, spread like an A-frame: they pushed the front ankle forward and the back one
# back, each ankle behind the middle of its turned-out foot, so both feet turned clockwise on the floor (its
# contacts have no torsional friction) and the dancer with them: the pelvis 2.8-2.9 degrees by the end of a
# change from fifth into second at 1.1-2.0 m, the right foot landing 0.7-2.2 cm behind second's place (1.2-2.6
# cm off it). Aimed by the give the legs stop pushing: 0.1-0.8 degrees, 0.4-1.4 cm off. Not where the weight
# goes onto the front foot: there it turned the dancer 3.8 degrees the other way (from fifth into fourth 1.2
# cm off its place at 1.65 m, 0.1 cm without), nor in third (onto the front foot 9 degrees, 3.4 cm off
# fourth's place after the change into it). In fourth the dancer turns too (3.2-3.8 degrees by the back
# foot's change into fifth: 1.0-1.5 cm off fifth's places at 1.1-2.0 m, 0.4-0.7 cm in the front foot's
# frame), but aimed by the give the front heel came up at the end of the weight shift onto it (the COM
# 1.9-11.8 cm outside at 1.1-2.0 m; aimed along the floor only it fell at 2.0 m).
BACK_FOOT_COMPLIANCE = ("fifth_position",)
# Where the closed chain aims the feet past their spots by the legs' give across the feet only (the floor axis
# square to their mean heading), from the start of a stance on it that ends with the weight on the front foot
# (onto the back foot, standing again after the back foot's tendu side and a weight shift onto it, the back
# foot came off the floor, the COM 8.5 cm outside at 1.65 m). In fourth the dancer turned clockwise
# on the floor as in fifth (the pelvis 3.2-3.8 degrees from standing there to the back foot's change into
# fifth after the weight shift onto the front foot): fifth laid out from the turned front foot put the back
# foot 1.0-1.5 cm off its places at 1.1-2.0 m (0.4-0.7 in the front foot's frame). Aimed by the whole give,
# the front heel came up at the end of that weight shift (see BACK_FOOT_COMPLIANCE); by its part along the
# feet only the dancer turned as before (3.0-3.4 degrees); across them 0.1-0.7 degrees, the back foot
# 0.54-0.69 cm off fifth's places, into first and third 0.27-0.56, the COM 1.0-2.9 cm inside (1.0-2.9
# before).
ACROSS_COMPLIANCE = ("fourth_position",)
# Where a tendu from both feet closes the working foot onto the position's place beside the supporting foot
# as it stands, not onto the spot the foot left. In second, as the weight goes back to the middle after the
# foot closes, both legs stand splayed under load and push their feet outwards (the supporting foot slid
# 0.3-0.7 cm; standing there both creep 1.4 mm in 1.5 s): closed onto the spots they left, the feet walked
# apart tendu after tendu (after six in a row 2.2, 4.4, 6.6 cm off second's places at 1.1, 1.65, 2.0 m)
# and seeded draws with many fell once they were 5-10 cm apart. Closed onto the place, the feet stay
# 0.6-0.7, 1.1-1.3, 1.5-1.7 cm off it however many follow (the COM 2.5-8.1 cm inside in every step's last
# second); the supporting foot still slides, so the pair creeps along the floor (at 2.0 m 4-5 cm in six).
CLOSE_ON_THE_PLACE = ("second_position",)


def _across(give: NDArray[np.float64], axis: NDArray[np.float64] | None) -> NDArray[np.float64]:
    """``give``'s part along the unit ``axis`` (all of it without one)."""
    return give if axis is None else axis * float(axis @ give)


def _aimed_give(give: NDArray[np.float64], along_the_floor: bool) -> NDArray[np.float64]:
    """A leg's give under its load, by which the closed chain aims past a foot's spot.

    A foot coming back to the spot it left (closing a tendu, or set down before the weight shifts
    onto it) is aimed along the floor only: the loaded legs also sag 0.2-0.5 cm, and aimed that far
    below the floor the closing foot overshot (the back foot's tendus from both feet in third ended
    1.1-2.8 cm inside the polygon with the closed foot 1.3-2.4 mm up, and the front foot's tendu
    after them fell). A foot set down on its place in a new position keeps the sag in its aim
    (without it the left foot going behind into fifth landed 1.6 cm off its place, 0.6-0.8 with it)."""
    return np.array([give[0], give[1], 0.0]) if along_the_floor else give


@dataclass
class Performance:
    """Time series of a performed sequence (metres, seconds, z up).

    ``rotations[bone]`` (T, 4) are quaternions (w first) of each body relative to its parent in
    the rest frame (every body frame is world-aligned at rest); for ``hips`` it is the world
    rotation and ``root_positions`` (T, 3) is its joint position. ``rest_positions[bone]`` is the
    rest position of that joint. Bones not listed (head, hands) stay in their rest pose.
    ``phase_times`` has one ``(step, start, end)`` per step of the sequence; ``supports`` the
    stance of each tick ('both', 'L' or 'R'); ``joint_positions[body]`` (T, 3) world joint positions.
    ``key_times`` has the end of each step's defining pose (a tendu's point, an extension).
    """

    sequence: tuple[str, ...]
    times: NDArray[np.float64]
    com: NDArray[np.float64]
    cop: NDArray[np.float64]
    support_polygons: list[NDArray[np.float64]]
    in_contact: NDArray[np.bool_]
    phase_times: list[tuple[str, float, float]]
    fell: bool
    fall_time: float
    rotations: dict[str, NDArray[np.float64]]
    root_positions: NDArray[np.float64]
    rest_positions: dict[str, NDArray[np.float64]]
    com_targets: NDArray[np.float64]
    parents: dict[str, str | None] = field(default_factory=dict)
    contact_bodies: tuple[str, ...] = CONTACT_BODIES
    supports: list[str] = field(default_factory=list)
    joint_positions: dict[str, NDArray[np.float64]] = field(default_factory=dict)
    key_times: list[tuple[str, float]] = field(default_factory=list)
    # Per side, (T, 3): the point under the tip of the toes (see :func:`toe_tip`), per tick.
    toe_tips: dict[str, NDArray[np.float64]] = field(default_factory=dict)

    def leg_tilt(self, side: str) -> NDArray[np.float64]:
        """Degrees between the ``side`` leg (hip joint to ankle joint) and the vertical, per tick."""
        axis = self.joint_positions[f"thigh.{side}"] - self.joint_positions[f"foot.{side}"]
        cos = axis[:, 2] / np.linalg.norm(axis, axis=1)
        return np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))

    def step_window(self, index: int, seconds: float = 1.0) -> NDArray[np.bool_]:
        """Ticks of the last ``seconds`` of step ``index``."""
        _, start, end = self.phase_times[index]
        return (self.times >= max(start, end - seconds) - 1e-9) & (self.times <= end + 1e-9)


def _smooth(x: float) -> float:
    x = min(max(x, 0.0), 1.0)
    return x * x * x * (10.0 + x * (-15.0 + 6.0 * x))


def _contact_points(sim: DancerSim, bodies: tuple[str, ...]) -> NDArray[np.float64]:
    d = sim.data
    ids = [sim.body_ids[b] for b in bodies]
    mask = np.isin(sim.model.geom_bodyid, ids) & (sim.contact_body >= 0)
    return d.geom_xpos[mask, :2].copy()


def _place_foot(scratch: DancerSim, qpos: NDArray[np.float64], side: str, ankle: NDArray[np.float64],
                frame: NDArray[np.float64], iterations: int = 40,
                knee_forward: float | None = None) -> dict[str, float]:
    """Leg joint angles that put the ``side`` ankle at ``ankle`` with the foot's axes ``frame``
    (3x3, columns x y z), the rest of the body as in ``qpos`` (damped least squares on MuJoCo's
    Jacobians). With ``knee_forward`` the knee starts bent at least that far and never bends
    backwards."""
    mj, m, d = scratch.mj, scratch.model, scratch.data
    names = [f"thigh.{side}_x", f"thigh.{side}_y", f"thigh.{side}_z", f"shin.{side}_y",
             f"foot.{side}_y", f"foot.{side}_x"]
    index = [scratch.index[n] for n in names]
    dofs = scratch.dadr[index]
    qadr = scratch.qadr[index]
    body = scratch.body_ids[f"foot.{side}"]
    d.qpos[:] = qpos
    knee = qadr[3]
    if knee_forward is not None:
        d.qpos[knee] = max(d.qpos[knee], knee_forward)
    jacp = np.zeros((3, m.nv))
    jacr = np.zeros((3, m.nv))
    for _ in range(iterations):
        mj.mj_kinematics(m, d)
        mj.mj_comPos(m, d)
        current = d.xmat[body].reshape(3, 3)
        position_error = ankle - d.xpos[body]
        # Half the sum over the columns of current x target: np.cross's products and differences,
        # summed from 0 in the same order, in floats.
        (c0, c1, c2), (t0, t1, t2) = current.tolist(), np.asarray(frame).tolist()
        rx = ry = rz = 0
        for i in range(3):
            rx += c1[i] * t2[i] - c2[i] * t1[i]
            ry += c2[i] * t0[i] - c0[i] * t2[i]
            rz += c0[i] * t1[i] - c1[i] * t0[i]
        rotation_error = 0.5 * np.array([rx, ry, rz])
        mj.mj_jacBody(m, d, jacp, jacr, body)
        jac = np.vstack([jacp[:, dofs], jacr[:, dofs]])
        error = np.concatenate([position_error, rotation_error])
        step = jac.T @ np.linalg.solve(jac @ jac.T + 1e-4 * np.eye(6), error)
        d.qpos[qadr] += step
        if knee_forward is not None:
            d.qpos[knee] = max(d.qpos[knee], KNEE_HAIR)
        if np.abs(error).max() < 1e-5:
            break
    return {name: float(d.qpos[a]) for name, a in zip(names, qadr, strict=True)}


def _balls_middle(d, sim: DancerSim) -> NDArray[np.float64]:
    """Midpoint of the two toe joints (the balls of the feet), on the floor plane."""
    return 0.5 * (d.xpos[sim.body_ids["toe.L"], :2] + d.xpos[sim.body_ids["toe.R"], :2])


def _on_the_balls(scratch: DancerSim, qpos: NDArray[np.float64], heel: float,
                  com_offset: NDArray[np.float64], iterations: int = 5,
                  aim_in: float = 0.0, rolled: bool = False,
                  squeeze: tuple[float, float] = (0.0, 0.0)) -> NDArray[np.float64]:
    """Joint angles (``qpos`` order of :attr:`DancerSim.qadr`) that stand both feet ``heel`` radians
    up on their balls (0: flat), each ball where it is in ``qpos``, the toes flat, the knees
    straight, the pelvis upright and the COM ``com_offset`` (x, y) from the middle of the balls;
    the other joints as in ``qpos``. With ``aim_in`` each foot is posed that far (m) in towards the
    other, along the line between the balls (see BALLS_AIM_IN). ``rolled``: the pelvis rolls about
    the forward axis so that both knees are straight (see BALLS_ACROSS), the spine rolled back.
    ``squeeze``: the left foot posed that far (x, y, m) from where it stands, the right one the other way.

    Rising or coming down by these poses moves the ankle and the toe joint together about a ball
    that stays put: blending the ankle and toe targets on their own, the toes lifted their tips or
    the feet slid under a COM held over the balls.
    """
    mj, m, d = scratch.mj, scratch.model, scratch.data
    d.qpos[:] = qpos
    mj.mj_kinematics(m, d)
    spots = {}
    for side in ("L", "R"):
        foot, toe = scratch.body_ids[f"foot.{side}"], scratch.body_ids[f"toe.{side}"]
        forward = d.xmat[foot].reshape(3, 3)[:, 0]
        frame = foot_rotation(float(np.arctan2(forward[1], forward[0])), heel)
        spots[side] = (d.xpos[toe] - frame @ m.body_pos[toe], frame)
    if aim_in:
        across = d.xpos[scratch.body_ids["toe.R"]] - d.xpos[scratch.body_ids["toe.L"]]
        across[2] = 0.0
        across *= aim_in / max(float(np.linalg.norm(across)), 1e-9)
        spots = {"L": (spots["L"][0] + across, spots["L"][1]), "R": (spots["R"][0] - across, spots["R"][1])}
    if squeeze != (0.0, 0.0):
        moved = np.array([squeeze[0], squeeze[1], 0.0])
        spots = {"L": (spots["L"][0] + moved, spots["L"][1]), "R": (spots["R"][0] - moved, spots["R"][1])}
    com_xy = _balls_middle(d, scratch) + com_offset
    leg = float(np.linalg.norm(np.array(scratch.body.body("thigh.L").origin)
                               - np.array(scratch.body.body("foot.L").origin)))
    pose = qpos.copy()
    pose[3:7] = (1.0, 0.0, 0.0, 0.0)
    spine = scratch.qadr[scratch.index["spine_x"]]
    for side in spots:
        # From a bent knee the solution keeps the knee bending forwards, never overstretched.
        knee = scratch.qadr[scratch.index[f"shin.{side}_y"]]
        pose[knee] = max(pose[knee], 0.15)
    for _ in range(iterations):
        d.qpos[:] = pose
        mj.mj_kinematics(m, d)
        mj.mj_comPos(m, d)
        move = com_xy - d.subtree_com[scratch.root, :2]
        pose[0:2] += move
        # The pelvis as high as the farther ankle lets a leg reach (set first, so the legs are
        # never asked to reach beyond their length).
        heights = []
        for side, (ankle, _) in spots.items():
            hip = d.xpos[scratch.body_ids[f"thigh.{side}"], :2] + move
            reach = (BALLS_KNEE_REACH * leg) ** 2 - float(np.sum((hip - ankle[:2]) ** 2))
            heights.append(ankle[2] + np.sqrt(max(reach, 0.0)) - d.xpos[scratch.body_ids[f"thigh.{side}"], 2])
        if rolled:
            # Both legs straight: the pelvis rolls so that each hip stands as high as its leg reaches
            # (the spine rolled back the other way, as the balance keeps the upper body upright).
            hips = [d.xpos[scratch.body_ids[f"thigh.{side}"]] for side in spots]
            apart = float(np.hypot(*(hips[0] - hips[1])[1:]))
            roll = float(np.arcsin(np.clip((heights[0] - heights[1]) / apart, -0.5, 0.5)))
            pose[3:7] = quaternions.multiply(quaternions.from_axis_angle((1.0, 0.0, 0.0), roll), pose[3:7])
            pose[spine] -= roll
            pose[2] += 0.5 * (heights[0] + heights[1])
        else:
            pose[2] += min(heights)
        for side, (ankle, frame) in spots.items():
            for name, value in _place_foot(scratch, pose, side, ankle, frame).items():
                pose[scratch.qadr[scratch.index[name]]] = value
    for side in spots:
        pose[scratch.qadr[scratch.index[f"toe.{side}_y"]]] = -heel
    return pose[scratch.qadr].copy()


def leg_joints(joints: tuple[str, ...], sides: str = "LR") -> NDArray[np.bool_]:
    """Which of ``joints`` (``DancerBody.joints`` order) move the legs of ``sides`` (hips to toes)."""
    return np.array([name.startswith(("thigh", "shin", "foot", "toe")) and name.split("_")[0][-1] in sides
                     for name in joints])


def _stance_jacobian(scratch: DancerSim, qpos: NDArray[np.float64], heel: float,
                     com_offset: NDArray[np.float64], step: float = 0.004, aim_in: float = 0.0,
                     across: bool = False) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """:func:`_on_the_balls` and its change per metre of COM shift in x and y (joints x 2).

    Two feet on the floor and the pelvis make a closed chain: leaning both legs by the same world
    angle (the one-foot balance lean) makes the turned-out legs fight each other and the feet
    chatter on the floor. Shifting the COM through these solutions keeps both feet where they are.
    With ``across`` the solutions roll the pelvis (see BALLS_ACROSS) and the COM is steered sideways
    too; the changes are the legs' only (the balance rolls the spine back by itself).
    """
    angles = _on_the_balls(scratch, qpos, heel, com_offset, aim_in=aim_in, rolled=across)
    legs = leg_joints(scratch.body.joints)

    def change(shift: NDArray[np.float64]) -> NDArray[np.float64]:
        moved = _on_the_balls(scratch, qpos, heel, com_offset + shift, aim_in=aim_in, rolled=across)
        return np.where(legs, moved - angles, 0.0) / step

    forward = change(np.array([step, 0.0]))
    # With the pelvis upright the straight legs cannot shift the COM sideways smoothly (one knee
    # would have to bend the wrong way): the two feet, a hip width apart, hold it without correction.
    sideways = change(np.array([0.0, step])) if across else np.zeros_like(forward)
    return angles, np.stack([forward, sideways], axis=1)


def _squeeze_change(scratch: DancerSim, qpos: NDArray[np.float64], heel: float,
                    com_offset: NDArray[np.float64], angles: NDArray[np.float64], step: float = 0.002,
                    aim_in: float = 0.0, across: bool = False) -> NDArray[np.float64]:
    """The legs' change of :func:`_on_the_balls` per metre the left foot is aimed along the floor's x and
    y past where it stands and the right one the other way (joints x 2; see SQUEEZE_AT)."""
    legs = leg_joints(scratch.body.joints)
    columns = []
    for squeeze in ((step, 0.0), (0.0, step)):
        moved = _on_the_balls(scratch, qpos, heel, com_offset, aim_in=aim_in, rolled=across, squeeze=squeeze)
        columns.append(np.where(legs, moved - angles, 0.0) / step)
    return np.stack(columns, axis=1)


def _spread_force(sim: DancerSim) -> NDArray[np.float64]:
    """How hard the legs push the feet apart (N, x and y): the floor's push on the left foot less that
    foot's share (by its load) of the floor's push on both."""
    mj, m, d = sim.mj, sim.model, sim.data
    push = np.zeros((len(CONTACT_BODIES), 3))
    wrench = np.zeros(6)
    owners = sim.contact_owner_rows
    for i in range(d.ncon):
        contact = d.contact[i]
        g0, g1 = int(contact.geom[0]), int(contact.geom[1])
        owner = owners[g0][g1]
        if owner >= len(CONTACT_BODIES):
            continue
        mj.mj_contactForce(m, d, i, wrench)
        world = contact.frame.reshape(3, 3).T @ wrench[:3]
        push[owner] += world if g1 != sim.floor else -world
    left, right = push[0] + push[1], push[2] + push[3]
    share = left[2] / max(left[2] + right[2], 1e-9)
    return left[:2] - share * (left[:2] + right[:2])


def _sunk(scratch: DancerSim, qpos: NDArray[np.float64], drop: float) -> dict[str, float]:
    """Leg joint angles that lower the pelvis ``drop`` metres straight down with both feet flat
    where they are in ``qpos``. The ankle has no twist, so each knee bends in the plane of its
    turned-out foot, over the toes, whatever the position."""
    mj, m, d = scratch.mj, scratch.model, scratch.data
    d.qpos[:] = qpos
    mj.mj_kinematics(m, d)
    spots = {side: (d.xpos[scratch.body_ids[f"foot.{side}"]].copy(),
                    d.xmat[scratch.body_ids[f"foot.{side}"]].reshape(3, 3).copy()) for side in ("L", "R")}
    pose = qpos.copy()
    angles: dict[str, float] = {}
    for side, (ankle, frame) in spots.items():
        knee = scratch.qadr[scratch.index[f"shin.{side}_y"]]
        pose[knee] = max(pose[knee], 0.3)
        # Lowered in stages, each solved from the last, so the knee keeps bending forwards.
        for stage in (0.25, 0.5, 0.75, 1.0):
            pose[2] = qpos[2] - stage * drop
            for name, value in _place_foot(scratch, pose, side, ankle, frame).items():
                angles[name] = value
                pose[scratch.qadr[scratch.index[name]]] = value
    return angles


def _straight_leg(scratch: DancerSim, chain: ClosedChain, targets: NDArray[np.float64],
                  pelvis: NDArray[np.float64], quat: NDArray[np.float64], side: str,
                  spot: tuple[NDArray[np.float64], NDArray[np.float64]],
                  held: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """``targets`` with the ``side`` leg's joints standing its foot on ``spot`` with the knee a hair
    bent, the pelvis level where it is in x and y and as high as that leg reaches; with ``held`` (a
    point the other, free foot's ankle is held at) no higher than the free leg reaches it with
    HOVER_REACH of its reach.

    From second position the closed chain leaves the supporting knee bent by 45 degrees (the other
    foot, far out, holds the pelvis down): free-leg poses written for a straight supporting leg
    then drove the working foot into the floor."""
    level = level_yaw(quat)
    rotation = quaternions.to_matrix(level)
    hip = rotation @ chain.hip_offset[side]
    ankle, frame = spot
    across = min(float(np.hypot(*(pelvis[:2] + hip[:2] - ankle[:2]))), 0.98 * chain.reach[side])
    height = ankle[2] + np.sqrt(chain.reach[side] ** 2 - across ** 2) - hip[2]
    if held is not None:
        free = other(side)
        free_hip = rotation @ chain.hip_offset[free]
        reach = HOVER_REACH * chain.reach[free]
        far = min(float(np.hypot(*(pelvis[:2] + free_hip[:2] - held[:2]))), reach)
        height = min(height, held[2] + np.sqrt(reach ** 2 - far ** 2) - free_hip[2])
    qpos = scratch.data.qpos.copy()
    qpos[0:3] = (pelvis[0], pelvis[1], height)
    qpos[3:7] = level
    qpos[scratch.qadr] = targets
    out = targets.copy()
    for name, value in _place_foot(scratch, qpos, side, ankle, frame).items():
        out[scratch.index[name]] = value
    return out


HOVER_KNEE = 0.3  # rad: the least knee bend a foot brought back over its spot is solved from
# Of the free leg's reach: the farthest from its hip a foot held over its spot is aimed, after the supporting
# leg straightened (steps.HELD_OVER_ITS_SPOT: the back foot of fourth, the weight 7 cm ahead of the front
# ankle). Straightened as high as the supporting leg reached, the back foot's spot was beyond the free leg's
# reach: the IK solving the leg back over it wound off (joints at 2500 degrees), the leg swung through the
# front foot and the dancer fell (11.0 s in at 1.65 m). The supporting leg straightens no higher than this
# lets the free leg reach its spot, and the foot is aimed no farther.
HOVER_REACH = 0.97
HOVER_STRAY = 1.5  # rad: the most a joint of that solution moves from where it was solved from
TRANSITION_CLEARANCE = 0.06  # m: how high the moving foot of a position change passes between its places
TRANSITION_REACH = 0.97  # of the leg's reach: the most the moving leg stretches to its new place


def _carry(scratch: DancerSim, qpos: NDArray[np.float64], support: str, side: str,
           place: tuple[NDArray[np.float64], NDArray[np.float64]], hover: float, reach: float,
           commanded: NDArray[np.float64], pose_vec: NDArray[np.float64],
           ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Targets (end, via) that carry the free ``side`` foot from where it is in ``qpos`` over a raised
    midpoint to ``hover`` above its new ``place``, on one foot (``support``).

    With the pelvis over the supporting foot, the new place of a wide position (second, from first)
    is beyond the free leg's reach: the supporting leg then bends (a fondu), lowering the pelvis
    straight down with its foot where it is, by as much as the free leg lacks. ``commanded`` are
    the targets now; the supporting leg's change is added to them (its actual angles sag under the
    load, and the sag stays).
    """
    mj, m, d = scratch.mj, scratch.model, scratch.data
    ankle, frame = place
    goal = ankle + np.array([0.0, 0.0, hover])
    d.qpos[:] = qpos
    mj.mj_kinematics(m, d)
    hip = d.xpos[scratch.body_ids[f"thigh.{side}"]].copy()
    start = d.xpos[scratch.body_ids[f"foot.{side}"]].copy()
    support_id = scratch.body_ids[f"foot.{support}"]
    support_spot = (d.xpos[support_id].copy(), d.xmat[support_id].reshape(3, 3).copy())
    across = min(float(np.hypot(*(goal[:2] - hip[:2]))), TRANSITION_REACH * reach - 1e-3)
    drop = max(hip[2] - goal[2] - np.sqrt((TRANSITION_REACH * reach) ** 2 - across ** 2), 0.0)
    planned = qpos.copy()
    end = pose_vec.copy()
    if drop > 0.0:
        planned[2] -= drop
        knee = scratch.qadr[scratch.index[f"shin.{support}_y"]]
        planned[knee] = max(planned[knee], 0.3)
        for name, value in _place_foot(scratch, planned, support, *support_spot).items():
            joint = scratch.index[name]
            end[joint] = commanded[joint] + value - qpos[scratch.qadr[joint]]
            planned[scratch.qadr[joint]] = value
    via = end.copy()
    middle = 0.5 * (start + goal)
    middle[2] = max(start[2], goal[2]) + TRANSITION_CLEARANCE
    for target, out in ((goal, end), (middle, via)):
        for name, value in _place_foot(scratch, planned, side, target, frame).items():
            out[scratch.index[name]] = value
        out[scratch.index[f"toe.{side}_y"]] = 0.0
    return end, via


# A battement tendu: the working toes slide out along the floor, the heel and then the ball rising
# as the foot points, to where the straight leg with the foot fully pointed just reaches the floor
# (:func:`tendu_distance`), and slide back. The leg's joints come from IK on the toe tip every
# tick, from the body as it stands, so the toes follow the floor however the balance moves the pelvis.
TENDU_SKIM = 0.004  # m: the toe tip's aim above the floor as it slides
TENDU_REACH = 0.97  # of the straight leg and pointed foot's length: how far out the toes go
TENDU_HEIGHT_FILTER = 0.2  # s: how fast the aim's height corrects the toes' measured height
TENDU_HEIGHT_LIMIT = 0.05  # m: the most the toes are aimed above TENDU_SKIM (never below it)
TENDU_DAMPING_LEAD = 0.06  # s: the muscles' damping over stiffness (model.py: kv = 0.06 kp)
TENDU_KNEE_SPEED = 1.0  # rad/s: the fastest the working knee straightens in a tendu
TENDU_HEEL_CLEAR = 0.005  # m: the least the heel stays above the toes' aim (the tip touches first)


def _tip_geoms(sim: DancerSim, side: str) -> tuple[int, NDArray[np.intp]]:
    """The ``side`` toe body and its two foremost contact geoms (the tip of the toes)."""
    key = ("tip geoms", side)
    if key not in sim.memo:
        m = sim.model
        toe = sim.body_ids[f"toe.{side}"]
        ids = np.nonzero(m.geom_bodyid == toe)[0]
        sim.memo[key] = toe, ids[np.argsort(m.geom_pos[ids, 0])[-2:]]
    return sim.memo[key]


def toe_tip(sim: DancerSim, side: str) -> tuple[int, NDArray[np.float64]]:
    """The ``side`` toe body and the point in its frame under the tip of the toes (where the sole
    of the pointed foot's tip touches the floor): between the two foremost contacts, a contact
    radius below them."""
    toe, tips = _tip_geoms(sim, side)
    return toe, sim.model.geom_pos[tips].mean(axis=0) - np.array([0.0, 0.0, sim.body.contact_radius])


def pointed_leg(sim: DancerSim, side: str) -> tuple[float, float]:
    """(leg, foot): the ``side`` hip joint to ankle joint with the knee straight, and the ankle to
    the toe tip's sole (:func:`toe_tip`) with the toes in line with the foot."""
    m = sim.model
    foot = sim.body_ids[f"foot.{side}"]
    toe, tip = toe_tip(sim, side)
    leg = float(np.linalg.norm(m.body_pos[sim.body_ids[f"shin.{side}"]]) + np.linalg.norm(m.body_pos[foot]))
    return leg, float(np.linalg.norm(m.body_pos[toe] + tip))


def tendu_distance(hip_height: float, leg: float, foot: float, reach: float = TENDU_REACH) -> float:
    """How far (horizontally, from under the hip joint) the toe tip of a straight leg ``leg`` long
    with a foot pointed ``foot`` long touches the floor from a hip ``hip_height`` up, the line from
    the hip to the tip ``reach`` of their sum: ``sqrt((reach (leg + foot))^2 - hip_height^2)``."""
    return float(np.sqrt(max((reach * (leg + foot)) ** 2 - hip_height ** 2, 0.0)))


def _slide_goal(start: NDArray[np.float64], direction: NDArray[np.float64], hip: NDArray[np.float64],
                distance: float) -> float:
    """How far along ``direction`` (unit, x y) from ``start`` the floor point ``distance`` from the
    hip's foot point lies (the nearest point of the line if none is)."""
    along = float(direction @ (hip[:2] - start))
    rest = float(np.sum((hip[:2] - start) ** 2)) - distance ** 2
    return along + float(np.sqrt(max(along ** 2 - rest, 0.0)))


def _heel(sim: DancerSim, side: str) -> tuple[int, NDArray[np.float64]]:
    """The ``side`` foot body and the point in its frame under the back of the heel."""
    key = ("heel", side)
    if key not in sim.memo:
        m = sim.model
        foot = sim.body_ids[f"foot.{side}"]
        local = m.geom_pos[m.geom_bodyid == foot]
        back = local[np.argsort(local[:, 0])[:2]]
        sim.memo[key] = foot, back.mean(axis=0) - np.array([0.0, 0.0, sim.body.contact_radius])
    return sim.memo[key]


DAMPING_OF = {rows: 1e-3 * np.eye(rows) for rows in (4, 5)}  # _aim_toe's, made once (never written)


def _aim_toe(scratch: DancerSim, qpos: NDArray[np.float64], side: str, goal: NDArray[np.float64],
             iterations: int = 12) -> dict[str, float]:
    """The ``side`` leg's angles that put the toe tip at ``goal`` with both its tip contacts level, the
    other joints as in ``qpos``: the hip's pitch and roll and the ankle's pointing and roll, the knee
    as in ``qpos``; where the heel would then come within TENDU_HEEL_CLEAR of the floor, the knee too,
    bent just enough to keep it there (damped least squares on MuJoCo's Jacobians)."""
    mj, m, d = scratch.mj, scratch.model, scratch.data
    key = ("aim toe", side)
    if key not in scratch.memo:
        names = [f"thigh.{side}_x", f"thigh.{side}_y", f"foot.{side}_y", f"foot.{side}_x", f"shin.{side}_y"]
        index = [scratch.index[n] for n in names]
        toe, tip_ids = _tip_geoms(scratch, side)
        scratch.memo[key] = (names, scratch.dadr[index], scratch.qadr[index], toe,
                             m.geom_pos[tip_ids] - np.array([0.0, 0.0, scratch.body.contact_radius]))
    names, dofs, qadr, toe, tips = scratch.memo[key]
    foot, heel = _heel(scratch, side)
    jacs = [np.zeros((3, m.nv)) for _ in range(3)]
    d.qpos[:] = qpos
    for rows in (4, 5):
        # Only the aimed joints' columns of the Jacobians are used: taken before the arithmetic
        # (elementwise, so the same numbers), the system and its error filled in place. Column-major
        # as the gathered columns were: BLAS sums the normal matrix in another order for the other.
        columns = dofs[:rows]
        jac = np.empty((rows, rows), order="F")
        error = np.empty(rows)
        damping = DAMPING_OF[rows]
        for _ in range(iterations):
            mj.mj_kinematics(m, d)
            mj.mj_comPos(m, d)
            rotation = d.xmat[toe].reshape(3, 3)
            points = [d.xpos[toe] + rotation @ tip for tip in tips]
            for each, point in zip(jacs[:2], points, strict=True):
                mj.mj_jac(m, d, each, None, point, toe)
            first, second = jacs[0].take(columns, axis=1), jacs[1].take(columns, axis=1)
            jac[:3] = 0.5 * (first + second)
            jac[3] = first[2] - second[2]
            error[:3] = goal - 0.5 * (points[0] + points[1])
            error[3] = points[1][2] - points[0][2]
            if rows == 5:
                under = d.xpos[foot] + d.xmat[foot].reshape(3, 3) @ heel
                mj.mj_jac(m, d, jacs[2], None, under, foot)
                jac[4] = jacs[2][2].take(columns)
                error[4] = goal[2] + TENDU_HEEL_CLEAR - under[2]
            # Every |error| below the tolerance (a NaN is not), as max(|error|) < tolerance was.
            if all(-1e-4 < value < 1e-4 for value in error.tolist()):
                break
            step = np.linalg.solve(jac.T @ jac + damping, jac.T @ error)
            d.qpos[qadr[:rows]] += np.minimum(np.maximum(step, -0.05), 0.05)
            d.qpos[qadr[4]] = max(d.qpos[qadr[4]], KNEE_HAIR)
        mj.mj_kinematics(m, d)
        under = d.xpos[foot] + d.xmat[foot].reshape(3, 3) @ heel
        if under[2] >= goal[2] + TENDU_HEEL_CLEAR - 1e-4:
            break
    return {name: float(d.qpos[a]) for name, a in zip(names, qadr, strict=True)}


def _toe_point(sim: DancerSim, side: str) -> NDArray[np.float64]:
    toe, tip = toe_tip(sim, side)
    return sim.data.xpos[toe] + sim.data.xmat[toe].reshape(3, 3) @ tip


def _held_against_gravity(scratch: DancerSim, qpos: NDArray[np.float64], mask: NDArray[np.bool_],
                          ) -> NDArray[np.float64]:
    """Per joint (``mask``ed, zero elsewhere), how far past its angle in ``qpos`` a muscle's target
    must be for the muscle to hold that angle against gravity (its spring's stretch under the load)."""
    mj, m, d = scratch.mj, scratch.model, scratch.data
    d.qpos[:] = qpos
    d.qvel[:] = 0.0
    mj.mj_kinematics(m, d)
    mj.mj_comPos(m, d)
    mj.mj_comVel(m, d)
    bias = np.zeros(m.nv)
    mj.mj_rne(m, d, 0, bias)
    out = np.zeros(len(scratch.jid))
    # One position actuator per joint, in the joints' order (model._mjcf).
    # take() over the mask's indices: the same numbers as boolean indexing, without its machinery.
    index = mask.nonzero()[0]
    out[index] = bias.take(scratch.dadr.take(index)) / m.actuator_gainprm.take(index, axis=0)[:, 0]
    return out


def _toe_lowest(sim: DancerSim, side: str) -> float:
    """Height above the floor of the lower of the ``side`` toes' two tip contacts (their undersides)."""
    _, tips = _tip_geoms(sim, side)
    return float(sim.data.geom_xpos.take(tips, axis=0)[:, 2].min()) - sim.body.contact_radius


def _swivel(sim: DancerSim, about: NDArray[np.float64], angle: float) -> None:
    """Turn the whole body by ``angle`` about the vertical through ``about`` (x, y), its velocity too."""
    d = sim.data
    c, s = np.cos(angle), np.sin(angle)
    turn = np.array([[c, -s], [s, c]])
    d.qpos[0:2] = about + turn @ (d.qpos[0:2] - about)
    d.qpos[3:7] = quaternions.multiply(quaternions.from_axis_angle((0.0, 0.0, 1.0), angle), d.qpos[3:7])
    # A free joint's linear velocity is in the world frame, its angular velocity in the body's.
    d.qvel[0:2] = turn @ d.qvel[0:2]


def _standing_com_height(scratch: DancerSim, targets: NDArray[np.float64]) -> float:
    """Height of the COM with the joints at ``targets`` and the feet flat on the floor."""
    scratch.data.qpos[scratch.qadr] = targets
    scratch.place()
    return scratch.rest_com_height


def _settler(body) -> Callable[[dict[str, float]], dict[str, float]]:
    """The pose a position really stands in: both feet flattened on the floor."""
    scratch = DancerSim(body)

    def settle(pose: dict[str, float]) -> dict[str, float]:
        scratch.set_angles(pose)
        scratch.place()
        flat = dict(pose)
        for side in ("L", "R"):
            for axis in ("x", "y"):
                name = f"foot.{side}_{axis}"
                flat[name] = float(scratch.targets[scratch.index[name]])
        return flat

    return settle


BALL_PAD = 0.01  # of the height: where the COM stands ahead of the balls on demi-pointe
TOE_INWARD = 0.01  # m: on one toe the COM target's way in from the middle of the ball (see _com_target)
# Below this height (m) every tick is integrated in sim.FINE_STEPS steps, as on the balls of both feet (until
# session 11's issue-18 B2 only the ticks on one toe: the relevé on one foot, the pivot).
# The contacts and the muscles are scaled with the body,
# so their periods shorten with it (as sqrt(height / g)) while the model's step does not: as the heel rose
# 2.5-2.7 s into the relevé a body of 1.1 m had its ball chatter on the floor (off the floor one tick in
# three, the toe joint bouncing 5-10 mm), each bounce slid the ball back (6 cm in 0.6 s) and the dancer
# tipped forward over it. At the model's step the relevé on one foot straight from a position fell at
# 1.1-1.27 m (the paper's sequence at 1.1, 1.2, 1.25, 1.26 m, 11.4-11.7 s in; from the other positions on
# either leg 13.3-13.8 s in, at some of 1.1-1.27 m) and held every 1 cm over 1.28-1.33 m and every 5 cm up
# to 2.3; after the relevé on both feet in fourth (steps.REST_ON_THE_FEET) it fell at 1.1-1.3 m and
# 1.39-1.42 m (20.3-20.6 s in) and held every 1-2 cm over 1.43-2.3 m. With the fine step the paper's
# sequence and the relevé after the one in fourth held every 2 cm over 1.1-1.5 m, and from every position on
# either leg at 1.1-1.3 m every 5 cm and at 1.27 and 1.35 m (from first, second and third at 25 and 150 kg
# too), the COM 1.2-1.9 cm inside in the last second of every step and the ball sliding 1 mm (2 mm at the
# model's step). Taller dancers are integrated as before (at 1.65-2.3 m the fine step held too, the COM
# within a millimetre or two of where it was).
# On both feet too (B2): at the model's step fifth, tendu_front:right, demi_plie:right fell at 1.1-1.2 m and
# ended 2.8 cm outside at 1.25 m, and fourth, weight_shift:right, retire:left fell at 1.14 m (7.27 s in);
# with the fine step they held (COM 2.6-5.5 cm inside; 1.14 m held).
FINE_STEP_BELOW = 1.5


def _over_the_balls(d, sim: DancerSim) -> NDArray[np.float64]:
    """A point just ahead of the middle of the two balls, along the feet's mean direction."""
    balls = _balls_middle(d, sim)
    forward = sum(d.xmat[sim.body_ids[f"foot.{s}"]].reshape(3, 3)[:2, 0] for s in ("L", "R"))
    return balls + BALL_PAD * sim.body.height * forward / max(np.linalg.norm(forward), 1e-9)


def _feet_frame(sim: DancerSim) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The middle of the ankles on the floor and the 2x2 rotation to the feet's mean heading."""
    d = sim.data
    ids = [sim.body_ids["foot.L"], sim.body_ids["foot.R"]]
    forward = d.xmat[ids[0]].reshape(3, 3)[:2, 0] + d.xmat[ids[1]].reshape(3, 3)[:2, 0]
    forward = forward / max(float(np.hypot(*forward)), 1e-9)
    return 0.5 * (d.xpos[ids[0], :2] + d.xpos[ids[1], :2]), np.array([[forward[0], -forward[1]],
                                                                      [forward[1], forward[0]]])


def _in_feet_frame(sim: DancerSim, point: NDArray[np.float64]) -> NDArray[np.float64]:
    """``point`` (x, y) relative to the feet as they stand (see :func:`_feet_frame`)."""
    origin, rotation = _feet_frame(sim)
    return rotation.T @ (point - origin)


def _from_feet_frame(sim: DancerSim, offset: NDArray[np.float64]) -> NDArray[np.float64]:
    """The floor point ``offset`` from the feet where they stand now (:func:`_in_feet_frame`'s inverse)."""
    origin, rotation = _feet_frame(sim)
    return origin + rotation @ offset


def _com_target(sim: DancerSim, kind: str, com: NDArray[np.float64], share: float = 1.0,
                upright: dict[str, NDArray[np.float64]] | None = None) -> NDArray[np.float64]:
    """Where a phase holds the projected COM, from the feet where they are now. ``upright`` holds,
    per supporting side, the COM point of :func:`.leg_line.upright_point` ('upright' targets)."""
    if kind == "hold":
        return com[:2].copy()
    if kind == "both":
        # Between the ankles, a little towards the toes: where the body stands quietly.
        ankles = 0.5 * (sim.data.xpos[sim.body_ids["foot.L"], :2] + sim.data.xpos[sim.body_ids["foot.R"], :2])
        middle = convex_hull(_contact_points(sim, CONTACT_BODIES)).mean(axis=0)
        return ankles + 0.25 * (middle - ankles)
    what, side = kind.split(":")
    if what == "upright" and upright is not None:
        # Where the COM stands when the supporting leg is as near vertical as the body allows
        # (see leg_line), given in that foot's level frame.
        foot = sim.body_ids[f"foot.{side}"]
        frame = level_frame(sim.data.xmat[foot].reshape(3, 3))
        return sim.data.xpos[foot, :2] + frame[:2, :2] @ upright[side]
    if what in ("toe", "ball"):
        toes = ("toe.L", "toe.R") if side == "both" else (f"toe.{side}",)
        if side == "both":
            # Turned out, the two toes' hull reaches far forward of the balls: stay over the toe
            # pads just ahead of the balls.
            return _over_the_balls(sim.data, sim)
        middle = convex_hull(_contact_points(sim, toes)).mean(axis=0)
        if what == "toe":
            return middle
        # 'ball': a little in from the middle of the ball towards the other hip, where the supporting
        # leg stands nearer vertical (1 cm: 8.4 -> 7.7 degrees in the paper's releve, the COM 2.4 cm
        # inside the ball's polygon, 2.7 before; 2 cm: 7.0 degrees, 1.8 cm inside). Not in the pivot,
        # which swivels the body about its COM target: off the middle of the ball, the toe slid 2 cm.
        hips = sim.data.xpos[[sim.body_ids[f"thigh.{side}"], sim.body_ids[f"thigh.{other(side)}"]], :2]
        inward = (hips[1] - hips[0]) / max(float(np.hypot(*(hips[1] - hips[0]))), 1e-9)
        return middle + TOE_INWARD * inward
    # ``share`` of the way from the supporting ankle to the middle of the foot: the nearer the
    # ankle, the straighter the supporting leg stands (it never stands vertical with an upright
    # trunk: the hip joint is 8 cm off the midline; see issue 18's notes).
    middle = convex_hull(_contact_points(sim, (f"foot.{side}", f"toe.{side}"))).mean(axis=0)
    ankle = sim.data.xpos[sim.body_ids[f"foot.{side}"], :2]
    return ankle + share * (middle - ankle)


def perform_steps(
    sequence=DEFAULT_SEQUENCE,
    gains: Gains | None = None,
    height: float = 1.65,
    mass: float = 55.0,
    sex: str = "female",
    turnout: float = DEFAULT_TURNOUT,
    durations: dict[str, float] | None = None,
    pose_overrides: dict[str, float] | None = None,
    allow_unbalanced: bool = False,
) -> Generator[tuple[float, str], None, Performance]:
    """:func:`perform` in chunks: yields ``(progress, phase text)``, returns the :class:`Performance`."""
    gains = gains or Gains()
    gains.validate()
    body = build_body(height, mass, sex)
    settle = _settler(body)
    labels, phases, _ = plan(sequence, turnout, height, durations, settle, allow_unbalanced)
    sim = DancerSim(body)
    start_pose = dict(phases[0].pose)
    for name, value in (pose_overrides or {}).items():
        if name not in sim.index:
            raise DancerError(f"unknown joint {name!r} in the pose; joints are {', '.join(body.joints)}")
        if not np.isfinite(value):
            raise DancerError(f"joint {name!r} angle must be finite, got {value}")
        start_pose[name] = float(value)
    sim.set_angles(start_pose)
    sim.place()
    base = sim.targets.copy()
    phases[0].pose = {name: float(base[i]) for i, name in enumerate(body.joints)}

    foot_area = {s: polygon_area(convex_hull(_contact_points(sim, (f"foot.{s}", f"toe.{s}"))))
                 for s in ("L", "R")}

    n_ticks = int(round(sum(p.duration for p in phases) / CONTROL_DT))
    nb = sim.model.nbody
    times = np.empty(n_ticks + 1)
    com = np.empty((n_ticks + 1, 3))
    cop = np.empty((n_ticks + 1, 3))
    targets_log = np.empty((n_ticks + 1, 2))
    contact_log = np.zeros((n_ticks + 1, len(CONTACT_BODIES)), dtype=bool)
    quats = np.empty((n_ticks + 1, nb, 4))
    xpos = np.empty((n_ticks + 1, nb, 3))
    polygons: list[NDArray[np.float64]] = []
    supports: list[str] = []
    step_times: list[tuple[str, float, float]] = []
    key_times: list[tuple[str, float]] = []

    lean = np.zeros(2)
    straight_lean = np.zeros(2)
    straightened: tuple[str, NDArray[np.float64]] | None = None
    lean_now = np.zeros(len(body.joints))
    hip_lean = np.zeros(2)
    pelvis_trim = {"L": 0.0, "R": 0.0}
    trim_terms = {side: sim.lean_terms({f"thigh.{side}_x": 1.0}) for side in ("L", "R")}
    meas = sim.measure()
    last_cop = tuple(meas.cop[:2].tolist())
    prev_pose_vec = base.copy()
    prev_target = meas.com[:2].copy()
    stand_target = prev_target
    stand_offset = _in_feet_frame(sim, prev_target)
    carried = np.zeros(len(body.joints))
    step_start_vec = base.copy()
    fell, fall_time = False, float("inf")
    airborne = 0
    spots: dict[str, tuple[NDArray[np.float64], NDArray[np.float64]]] = {}
    scratch = DancerSim(body)
    tick = 0
    phase_start = 0.0
    count = 0
    spine_terms = sim.lean_terms({"spine_x": -1.0, "spine_y": -1.0})
    chain = ClosedChain(DancerSim(body))
    chain_legs = np.concatenate([chain.index[s] for s in LEG_SIDES])
    last_applied = base.copy()
    chain_prev = False
    compliant = False  # the closed chain aims the feet past their spots by the legs' give (CHAIN_COMPLIANCE)
    along_the_floor = False  # ... and along the floor only (see _aimed_give)
    compliance: dict[str, NDArray[np.float64]] = {}
    unaimed: set[str] = set()  # feet the compliant chain sets down on their spots, not past them
    aim_axes = np.ones(3)  # the parts of the legs' give the compliant chain aims past the spots by
    aim_across: NDArray[np.float64] | None = None  # ... or only along this floor axis (ACROSS_COMPLIANCE)
    planted: dict[str, tuple[NDArray[np.float64], NDArray[np.float64]]] = {}
    pelvis_pos = sim.data.qpos[0:3].copy()
    pelvis_quat = sim.data.qpos[3:7].copy()
    # After a landing the closed chain rolls the pelvis from ``roll_from``; the next step on the chain
    # fades the last roll (``roll_now``) out from ``roll_fade``.
    roll_from: float | None = None
    roll_fade: float | None = None
    roll_now = 0.0
    landing_top: float | None = None

    def place_of(position: str, support: str):
        """Where the free foot stands in ``position`` beside the ``support`` foot as it stands now."""
        scratch.set_angles(settle(position_pose(position, turnout, height)))
        scratch.place()
        d = scratch.data
        s_id, o_id = scratch.body_ids[f"foot.{support}"], scratch.body_ids[f"foot.{other(support)}"]
        s_frame = level_frame(d.xmat[s_id].reshape(3, 3))
        rel_pos = s_frame.T @ (d.xpos[o_id] - d.xpos[s_id])
        rel_frame = s_frame.T @ level_frame(d.xmat[o_id].reshape(3, 3))
        foot = sim.body_ids[f"foot.{support}"]
        here = level_frame(sim.data.xmat[foot].reshape(3, 3))
        return sim.data.xpos[foot] + here @ rel_pos, here @ rel_frame

    def leg_weights(side: str) -> dict[str, float]:
        return {f"foot.{side}_x": -1.0, f"foot.{side}_y": -1.0,
                f"thigh.{side}_x": 1.0, f"thigh.{side}_y": 1.0}

    leg_masks = {side: leg_joints(body.joints, side) for side in LEG_SIDES}

    def leg_mask(side: str) -> NDArray[np.bool_]:
        return leg_masks[side]

    position_now = labels[0]
    # See SQUEEZE_AT: the left foot's aim past where it stands (x, y, m).
    squeeze = np.zeros(2)
    weight = float(sim.model.body_subtreemass[sim.root]) * 9.81
    for k, phase in enumerate(phases):
        if phase.place:
            position_now = phase.place
        stance = ("L", "R") if phase.stance == "both" else (phase.stance,)
        previous = ("L", "R") if k == 0 or phases[k - 1].stance == "both" else (phases[k - 1].stance,)
        closed = phase.closed_chain and phase.stance == "both"
        for side in previous:
            if side not in stance:
                if chain_prev:
                    # The leg leaving the floor starts its own motion from the angles the chain gave it.
                    dropped = np.where(leg_mask(side), last_applied - prev_pose_vec, 0.0)
                else:
                    # The leg leaving the floor keeps the lean it had, as the start of its own motion.
                    dropped = sim.lean_offsets(lean, leg_weights(side))
                prev_pose_vec = prev_pose_vec + dropped
                carried = np.where(leg_mask(side), dropped, carried)
                foot_id = sim.body_ids[f"foot.{side}"]
                spots[side] = (sim.data.xpos[foot_id].copy(), sim.data.xmat[foot_id].reshape(3, 3).copy())
        rebase = chain_prev and not closed
        if chain_prev and compliant and phase.starts_step and position_now in WIDE_LANDING:
            # The step after a wide landing (see WIDE_LANDING) starts afresh: the closed chain from the
            # feet where they stand, the balance's lean from none (the legs' angles carry it on).
            chain_prev = not closed
            lean[:] = 0.0
            hip_lean[:] = 0.0
            compliant = False
        if closed:
            for side in LEG_SIDES:
                foot_id = sim.body_ids[f"foot.{side}"]
                if chain_prev and side in planted:
                    continue
                if side in previous:
                    planted[side] = (sim.data.xpos[foot_id].copy(),
                                     level_frame(sim.data.xmat[foot_id].reshape(3, 3)))
                else:
                    # Coming down: on its place in a new position, or on the spot it left.
                    ankle, frame = place_of(phase.place, other(side)) if phase.place \
                        else spots[side]
                    planted[side] = (ankle.copy(), level_frame(frame))
            if not chain_prev:
                # The pelvis where the targets last applied put it, the standing feet where they are.
                scratch.data.qpos[:] = sim.data.qpos
                scratch.data.qpos[scratch.qadr] = last_applied
                scratch.mj.mj_kinematics(scratch.model, scratch.data)
                feet = [f"foot.{s}" for s in previous]
                offset = np.mean([sim.data.xpos[sim.body_ids[f]] - scratch.data.xpos[scratch.body_ids[f]]
                                  for f in feet], axis=0)
                pelvis_pos = sim.data.qpos[0:3] + offset
                pelvis_quat = sim.data.qpos[3:7].copy()
                chain.warm = {}
                along_the_floor = not phase.place
                wide = along_the_floor and position_now in WIDE_LANDING
                floor_only = {s: along_the_floor and not (wide and s in previous) for s in LEG_SIDES}
                sag_only = phase.place in COMPLIANCE_OFF_IN
                unaimed = {side for side in LEG_SIDES if side not in previous} if sag_only else set()
                aim_axes = SAG_ONLY if sag_only else np.ones(3)
                compliant = (CHAIN_COMPLIANCE and (position_now not in COMPLIANCE_OFF_IN or wide or sag_only)
                             and any(side not in previous for side in LEG_SIDES))
                if CHAIN_COMPLIANCE and not compliant and position_now in BACK_FOOT_COMPLIANCE:
                    # From the start of a stance on the chain that ends with the weight on the back foot
                    # (see BACK_FOOT_COMPLIANCE).
                    off_the_chain = next((later for later in phases[k:]
                                          if later.stance != "both" or not later.closed_chain), None)
                    compliant = off_the_chain is not None and off_the_chain.stance == other(FRONT_FOOT)
                aim_across = None
                if CHAIN_COMPLIANCE and not compliant and position_now in ACROSS_COMPLIANCE:
                    # Across the feet only, from the start of a stance on it that ends with the weight on the
                    # front foot (see ACROSS_COMPLIANCE).
                    off_the_chain = next((later for later in phases[k:]
                                          if later.stance != "both" or not later.closed_chain), None)
                    if off_the_chain is not None and off_the_chain.stance == FRONT_FOOT:
                        compliant = True
                        aim_across = np.array([*_feet_frame(sim)[1][:, 1], 0.0])
                if compliant:
                    # The legs aim their feet past their spots by how far each gives under its load
                    # (below), from the pelvis where it actually is.
                    pelvis_pos = sim.data.qpos[0:3].copy()
                    compliance = {s: _across(_aimed_give(scratch.data.xpos[scratch.body_ids[f"foot.{s}"]]
                                                         - sim.data.xpos[sim.body_ids[f"foot.{s}"]],
                                                         floor_only[s]) * (s not in unaimed) * aim_axes,
                                             aim_across) for s in LEG_SIDES}
            chain_start = pelvis_pos.copy()
            chain_quat = pelvis_quat.copy()
            chain_level = level_yaw(chain_quat)
            chain_turned = None  # the pelvis quaternion and matrix once it has turned level (constant)
            if not chain_prev:
                chain_filter = lean.copy()
            chain_lean = chain_filter.copy()
            if phase.lean_from_zero:
                # The chain moves the pelvis by the lean's change only (its slow part since the chain
                # began, the fast rest on top): all three taken back by the lean so far, nothing moves.
                chain_filter -= lean
                chain_lean -= lean
                straight_lean = straight_lean - lean
                lean[:] = 0.0
            chain_height = chain_start[2] - 0.5 * (planted["L"][0][2] + planted["R"][0][2])
            chain_applied = last_applied.copy()
            chain_joined = chain_prev
            # A foot coming down onto its spot arrives over it first (as high as it is now, at most
            # LANDING_HEIGHT), then lowers.
            landing_feet = {}
            for side in LEG_SIDES:
                if side not in previous:
                    above = sim.data.xpos[sim.body_ids[f"foot.{side}"], 2] - planted[side][0][2]
                    landing_feet[side] = float(np.clip(above, 0.0, LANDING_HEIGHT))
            if not chain_prev:
                landing_top = float(pelvis_pos[2]) if landing_feet and compliant and wide else None
            if landing_feet and position_now in ROLL_IN:
                # Rolled from once the landing foot is down, to the end of the step that landed it.
                roll_from, roll_fade = phase_start + phase.pose_blend, None
            elif not chain_prev:
                roll_from, roll_now = None, 0.0
            elif phase.starts_step and roll_from is not None:
                # The next step on the chain starts level again (kept rolled into a weight shift,
                # the retire after a change into fifth fell): the roll fades out as it came in.
                roll_from, roll_fade = None, phase_start
        for side in stance:
            if closed:
                if side not in previous:
                    # A foot set down by the closed chain stands on the chain's angles: what its leg
                    # carried while free (``keep_lean``) no longer applies. Kept, it came back as soon
                    # as that leg supported a one-foot step ending on ``keep_lean`` and bent its knee
                    # 15-18 degrees (a tendu after a closed tendu back, the extensions after a change).
                    carried = np.where(leg_mask(side), 0.0, carried)
                continue
            if side not in previous:
                # A leg joining the stance takes the lean from here on: no jump in its targets.
                mask = leg_mask(side)
                joining = sim.lean_offsets(lean, leg_weights(side))
                prev_pose_vec = np.where(mask, prev_pose_vec - joining, prev_pose_vec)
                carried = np.where(mask, 0.0, carried)
        # From poses about the balls (steps.REST_ON_THE_FEET) the lean meant a COM shift through them: the
        # next phase leaning the legs alike takes it into its pose too (read as a lean, it tipped the dancer).
        off_the_balls = k > 0 and phases[k - 1].heels is not None and phase.heels is None
        if phase.absorb_lean or off_the_balls:
            # The balance lean so far becomes part of the pose the phase starts from, and the
            # controller starts again from none: this phase's pose is planned for the body as it
            # stands, and adding the old lean to it would count the same lean twice.
            prev_pose_vec = prev_pose_vec + lean_now
            lean[:] = 0.0
        pose_vec = prev_pose_vec.copy()
        for name, value in phase.pose.items():
            pose_vec[sim.index[name]] = value
        via_vec = prev_pose_vec.copy()
        for name, value in phase.via.items():
            via_vec[sim.index[name]] = value
        if phase.absorb_lean and phase.stance != "both":
            # On one foot the pose names every joint: the lean it absorbs goes into it too.
            for vec, listed in ((pose_vec, phase.pose), (via_vec, phase.via)):
                for name in listed:
                    vec[sim.index[name]] += lean_now[sim.index[name]]
        if straightened is not None and phase.stance != straightened[0]:
            straightened = None
        if straightened is not None:
            # The supporting leg stays as straightened: the poses' angles for it are the position's,
            # written for the pelvis over the middle of the feet.
            for vec, listed in ((pose_vec, phase.pose), (via_vec, phase.via)):
                for name in listed:
                    vec[sim.index[name]] += straightened[1][sim.index[name]]
        if phase.keep_lean:
            # The lifted leg comes down parallel to the supporting one as it leans now, so the
            # foot lands on its own spot however far the pelvis has moved since it left.
            for side in ("L", "R"):
                if side not in stance:
                    landing = sim.lean_offsets(lean - straight_lean, leg_weights(side))
                    carried = np.where(leg_mask(side), landing, carried)
            pose_vec = pose_vec + carried
            via_vec = via_vec + carried
        if phase.restore:
            legs = leg_mask("L") | leg_mask("R")
            pose_vec = np.where(legs, step_start_vec, pose_vec)
            via_vec = np.where(legs, step_start_vec, via_vec)
        use_via = bool(phase.via)
        if phase.land is not None:
            # The free foot goes back onto the spot it left (or just above it), flat, wherever the
            # pelvis is now: the leg's targets come from the body as it stands this tick.
            for side in ("L", "R"):
                if side not in stance and phase.place:
                    spots[side] = place_of(phase.place, stance[0])
                    # A change of position carries the foot over a raised midpoint, with the
                    # supporting knee giving if the new place is beyond the leg's reach.
                    pose_vec, via_vec = _carry(scratch, sim.data.qpos.copy(), stance[0], side, spots[side],
                                               phase.land, chain.reach[side], prev_pose_vec, pose_vec)
                    use_via = True
                elif side not in stance and side in spots:
                    if position_now in CLOSE_ON_THE_PLACE and phases[k - 1].slide_back \
                            and k + 1 < len(phases) and phases[k + 1].stance == "both":
                        # A tendu from both feet closes onto the position's place beside the supporting
                        # foot as it stands now (see CLOSE_ON_THE_PLACE).
                        spots[side] = place_of(position_now, stance[0])
                    ankle, frame = spots[side]
                    # The knee bent forwards: from the tendu back the solution bent it 30 degrees
                    # backwards, and the closed chain setting the foot down bent it forwards again
                    # in a third of a second, which lifted the supporting heel.
                    # Solved from the leg as it stood on that spot when the step began (from the
                    # leg out in a tendu the solution wandered off).
                    start = sim.data.qpos.copy()
                    legs = leg_mask(side)
                    start[sim.qadr[legs]] = step_start_vec[legs]
                    aim = ankle + np.array([0.0, 0.0, phase.land])
                    if straightened is not None:
                        # Over a straightened supporting leg the spot may be beyond reach (see HOVER_REACH).
                        hip = sim.data.xpos[sim.body_ids[f"thigh.{side}"]]
                        far = float(np.linalg.norm(aim - hip))
                        reach = HOVER_REACH * chain.reach[side]
                        if far > reach:
                            aim = hip + (aim - hip) * (reach / far)
                    placed = _place_foot(scratch, start, side, aim, frame, knee_forward=HOVER_KNEE)
                    strayed = max(abs(v - start[sim.qadr[sim.index[n]]]) for n, v in placed.items())
                    if strayed > HOVER_STRAY:
                        # From there the solution wound off to another branch (the hip's twist
                        # 13 rad, in second after a grand plie): solved from the leg as it is now.
                        placed = _place_foot(scratch, sim.data.qpos.copy(), side, aim, frame,
                                             knee_forward=HOVER_KNEE)
                    for name, value in placed.items():
                        pose_vec[sim.index[name]] = value
                    pose_vec[sim.index[f"toe.{side}_y"]] = 0.0
        slider = None
        if phase.slide:
            # The tendu's toe tip slides from where it is now (out) or back to where it started.
            side = other(stance[0])
            if not phase.slide_back:
                forward = sim.data.xmat[sim.root].reshape(3, 3)[:2, 0]
                forward = forward / max(float(np.hypot(*forward)), 1e-9)
                outward = np.array([forward[1], -forward[0]]) * (1.0 if side == "R" else -1.0)
                way = {"front": forward, "side": outward, "back": -forward}[phase.slide]
                knee = sim.qadr[sim.index[f"shin.{side}_y"]]
                slide_from = (_toe_point(sim, side)[:2].copy(), way)
                slide_lift = 0.0
                slide_knee = float(sim.data.qpos[knee])
            slider = (side, [sim.index[f"{n}.{side}_{a}"] for n, a in (("thigh", "x"), ("thigh", "y"),
                                                                       ("foot", "y"), ("foot", "x"),
                                                                       ("shin", "y"))],
                      sim.index[f"shin.{side}_y"], pointed_leg(sim, side), leg_mask(side))
            slide_warm = sim.data.qpos[sim.qadr[slider[1]]].copy()
            slide_last = None
        if phase.sink:
            # The legs' angles for the pelvis lowered from where the previous pose stands it.
            planned = sim.data.qpos.copy()
            planned[sim.qadr] = prev_pose_vec
            if chain_prev:
                # After the closed chain the legs stand at the chain's angles, less the lean that
                # this phase adds on top again.
                both_legs = {**leg_weights("L"), **leg_weights("R")}
                planned[sim.qadr] = np.where(leg_mask("L") | leg_mask("R"),
                                             last_applied - sim.lean_offsets(lean, both_legs), prev_pose_vec)
            for name, value in _sunk(scratch, planned, phase.sink * body.height).items():
                pose_vec[sim.index[name]] = value
        if phase.target == "keep":
            phase_target = prev_target.copy()
        elif phase.target == "stand":
            # Where the dancer stood, as it stood relative to the feet: the feet slide a few
            # centimetres in some steps (a tendu back from both feet takes both 3 cm back), and the
            # point on the floor where the dancer first stood is then off the middle of the feet.
            # Not in fourth, where the legs lean alike on feet that rock (``uses_closed_chain``):
            # re-aimed there, plies with standing between them fell (fourth seed 5); the floor point held.
            phase_target = _from_feet_frame(sim, stand_offset) if uses_closed_chain(position_now) \
                else stand_target.copy()
        else:
            upright = None
            if phase.target.startswith("upright:"):
                side = phase.target.split(":")[1]
                upright = {side: upright_point(height, mass, sex, turnout, position_now, side)}
            phase_target = _com_target(sim, phase.target, meas.com, SUPPORT_SHARE.get(position_now, 1.0),
                                       upright)
            if phase.target == "both" and closed and landing_top is not None:
                # The middle of the feet with the landing foot on its spot, not where it hovers (the
                # ankles' middle and the middle of the feet move by half the landing foot's way there).
                phase_target = phase_target + 0.5 * sum(
                    planted[s][0][:2] - sim.data.xpos[sim.body_ids[f"foot.{s}"], :2] for s in LEG_SIDES)
        stance_jacobian = None
        squeeze_change = None
        heel_press = 0.0
        press_across = None
        if phase.heels == 0.0 and phase.target == "stand" and position_now in HEEL_PRESS_AT:
            # The pelvis' left, not the line between the balls: in third that line also runs
            # forward, and the COM's lag behind the target going back read as a sideways drift.
            across = sim.data.xmat[sim.root].reshape(3, 3)[:2, 1].copy()
            press_across = across / max(float(np.linalg.norm(across)), 1e-9)
        if phase.heels is not None:
            # Both feet about their balls: the legs' angles come from the body as planned (the
            # previous targets, the pelvis where it is), the COM as far from the balls as the
            # phase's target is now; the balance then shifts the COM through the same solutions.
            planned = sim.data.qpos.copy()
            planned[sim.qadr] = prev_pose_vec
            if chain_prev and not closed:
                # Straight after the closed chain the legs stand at the chain's angles: solved from the
                # position's and then moved by the rebase below as well, the relevé on both feet after
                # a change into second fell 2.8 s in.
                legs = leg_mask("L") | leg_mask("R")
                planned[sim.qadr[legs]] = last_applied[legs]
            offset = phase_target - _balls_middle(sim.data, sim)
            # Posed in while the weight is over the balls (the way back to the middle of the feet
            # ends standing on the position's angles: aimed in there too, the toes chattered as the
            # legs went back to them).
            aim_in = BALLS_AIM_IN.get(position_now, 0.0) if phase.target == "toe:both" else 0.0
            solved, stance_jacobian = _stance_jacobian(scratch, planned, phase.heels, offset,
                                                       aim_in=aim_in, across=position_now in BALLS_ACROSS)
            if phase.releve_on_both and position_now in SQUEEZE_AT:
                squeeze_change = _squeeze_change(scratch, planned, phase.heels, offset, solved, aim_in=aim_in,
                                                 across=position_now in BALLS_ACROSS)
            pose_vec = np.where(leg_mask("L") | leg_mask("R"), solved, pose_vec)
            if phase.heels == 0.0:
                for side in ("L", "R"):
                    pose_vec[sim.index[f"toe.{side}_y"]] = TOE_PRESS
        # A plie lowers the COM on purpose: a fall is sinking well below the lower of the poses
        # this phase goes between.
        com_floor = min(sim.rest_com_height, _standing_com_height(scratch, pose_vec),
                        _standing_com_height(scratch, prev_pose_vec))
        phase_ticks = int(round(phase.duration / CONTROL_DT))
        fine = stance_jacobian is not None or body.height < FINE_STEP_BELOW
        turned = 0.0
        lean_joints: dict[str, float] = {}
        for side in stance:
            lean_joints.update({f"foot.{side}_x": -1.0, f"foot.{side}_y": -1.0, f"toe.{side}_y": 0.0,
                                f"thigh.{side}_x": 1.0, f"thigh.{side}_y": 1.0})
        lean_index, lean_weights = sim.lean_weights(lean_joints)
        names = list(lean_joints)
        foot_y = [names.index(f"foot.{s}_y") for s in stance]
        toe_y = [names.index(f"toe.{s}_y") for s in stance]
        fixed_weights = None
        hip_terms = sim.lean_terms({f"thigh.{stance[0]}_x": -1.0, f"thigh.{stance[0]}_y": -1.0})
        foot_pivot, toe_pivot = sim.body_ids[f"foot.{stance[0]}"], sim.body_ids[f"toe.{stance[0]}"]
        small_polygon = 0.5 * foot_area[stance[0]]
        label = phase.label if k else labels[0]
        if phase.starts_step:
            step_times.append((label, phase_start, phase_start + phase.duration))
        else:
            step_times[-1] = (label, step_times[-1][1], phase_start + phase.duration)
        for local in range(phase_ticks + (1 if k == len(phases) - 1 else 0)):
            t_local = local * CONTROL_DT
            t = phase_start + t_local
            # Record the state this tick sees.
            times[tick], com[tick], cop[tick] = t, meas.com, meas.cop
            contact_log[tick] = meas.in_contact
            quats[tick] = sim.data.xquat
            xpos[tick] = sim.data.xpos
            polygons.append(meas.hull)
            supports.append(phase.stance)
            count = tick + 1
            airborne = airborne + 1 if meas.total_normal_force <= 0.0 else 0
            # A tick without contact is a bounce of the soft contacts; a tenth of a second is a fall.
            if sim.fallen(meas, com_floor) or airborne * CONTROL_DT >= AIRBORNE_FALL:
                fell, fall_time = True, t
                break
            if tick == n_ticks:
                break
            a = _smooth((t_local - phase.pose_delay) / phase.pose_blend)
            b = _smooth(t_local / phase.target_blend)
            # The balance's plane vectors (targets, COM, COP, their velocities) in plain floats: the
            # same products and sums, in the same order, as the 2-element arrays they were, without
            # numpy's overhead on each (a dozen operations a tick).
            (prev_x, prev_y), (aim_x, aim_y) = prev_target.tolist(), phase_target.tolist()
            target_x, target_y = (1 - b) * prev_x + b * aim_x, (1 - b) * prev_y + b * aim_y
            targets_log[tick] = target_x, target_y
            base_now = (1 - a) * prev_pose_vec + a * pose_vec
            if use_via:
                u = (t_local - phase.pose_delay) / phase.pose_blend
                first, second = _smooth(2.0 * u), _smooth(2.0 * u - 1.0)
                base_now = (1 - first) * prev_pose_vec + first * via_vec
                base_now = (1 - second) * base_now + second * pose_vec

            com_x, com_y, com_z = meas.com.tolist()
            vel_x, vel_y, _ = meas.com_velocity.tolist()
            cop_x, cop_y, _ = meas.cop.tolist()
            toe_share = 0.0
            if phase.toe_control:
                toe_share = 1.0 - a if phase.toe_release else a
            h = max(com_z - float(sim.data.xpos[toe_pivot if toe_share > 0.5 else foot_pivot, 2]), 0.2)
            desired_x = com_x + gains.cop_com_position * (com_x - target_x) + gains.cop_com_velocity * vel_x
            desired_y = com_y + gains.cop_com_position * (com_y - target_y) + gains.cop_com_velocity * vel_y
            hull = meas.hull_vertices
            if len(hull) >= 3:
                desired_x, desired_y = clamp_xy_into_hull(desired_x, desired_y, hull,
                                                          0.1 * body.contact_radius)
            last_x, last_y = last_cop
            cop_velocity_x, cop_velocity_y = (cop_x - last_x) / CONTROL_DT, (cop_y - last_y) / CONTROL_DT
            last_cop = cop_x, cop_y
            tracking = gains.cop_tracking if phase.stance == "both" else gains.one_foot_tracking
            if stance_jacobian is not None:
                tracking *= BALLS_TRACKING
            shift_x = tracking * (cop_x - desired_x) - gains.cop_damping * cop_velocity_x
            shift_y = tracking * (cop_y - desired_y) - gains.cop_damping * cop_velocity_y
            # lean_for_shift's rotation, for the shift the COP's error asks for
            lean[0] += CONTROL_DT * (-shift_y / h)
            lean[1] += CONTROL_DT * (shift_x / h)

            if phase.toe_control or fixed_weights is None:
                weights = lean_weights.copy()
                weights[foot_y] = -(1.0 - toe_share)
                weights[toe_y] = -toe_share
                # Without the toe's control the share stays 0: the same weights all phase.
                fixed_weights = None if phase.toe_control else weights
            else:
                weights = fixed_weights
            if stance_jacobian is not None:
                offsets = stance_jacobian @ (h * np.array([lean[1], -lean[0]]))
            else:
                offsets = sim.lean_offsets(lean, (lean_index, weights))
            if press_across is not None:
                drift = float((np.array([com_x, com_y]) - np.array([target_x, target_y])) @ press_across)
                heel_press += CONTROL_DT * HEEL_PRESS[1] * drift
                press = HEEL_PRESS[0] * drift + heel_press
                offsets[sim.index["foot.L_y"]] += max(press, 0.0)
                offsets[sim.index["foot.R_y"]] += max(-press, 0.0)
            lean_now = offsets.copy()
            # Not part of the lean a later phase absorbs into its pose: the aim is carried on by itself.
            if squeeze_change is not None:
                squeeze = np.clip(squeeze + CONTROL_DT * SQUEEZE_GAIN * _spread_force(sim) / weight,
                                  -SQUEEZE_LIMIT, SQUEEZE_LIMIT)
                offsets = offsets + squeeze_change @ squeeze
            if phase.stance != "both" and gains.hip_com > 0 and polygon_area(hull) < small_polygon:
                # Eq. 6 at the supporting hip once the polygon is small (on the toe): the body is
                # no stiff pendulum any more, so the upper body also leans over the support.
                shift_x = gains.hip_com * ((target_x - com_x) - 0.5 * vel_x)
                shift_y = gains.hip_com * ((target_y - com_y) - 0.5 * vel_y)
                hip_lean[0] += CONTROL_DT * (-shift_y / (0.4 * h))
                hip_lean[1] += CONTROL_DT * (shift_x / (0.4 * h))
            leans = []
            hip_x, hip_y = hip_lean.tolist()
            if hip_x or hip_y:
                leans.append((hip_x, hip_y, hip_terms))
            # Spine counter-rotation keeps the upper body vertical whatever the pelvis does. The
            # pelvis itself is stabilised by the hips turning with the ankles (the lean above):
            # an extra spring on its measured pitch did not reduce it and at 0.5 made it fall.
            up = sim.data.xmat[sim.root].tolist()
            leans.append((-up[5], up[2], spine_terms))
            if phase.stance != "both" and phase.level_pelvis:
                # On one leg the supporting hip's roll keeps the pelvis level (it drops to the
                # free side otherwise), so the free leg's pose means the same over the floor.
                # The trim stays on that hip afterwards: dropping it at once would tip the pelvis.
                pelvis_trim[phase.stance] += CONTROL_DT * PELVIS_LEVEL * (-up[5])
            elif phase.stance == "both":
                # Back on both feet the pelvis may roll with the legs again: the trim fades, which
                # also lowers a foot held above the floor onto its spot.
                for side in pelvis_trim:
                    pelvis_trim[side] *= 1.0 - CONTROL_DT / TRIM_FADE
            for side, trim in pelvis_trim.items():
                if trim:
                    leans.append((trim, 0.0, trim_terms[side]))
            sim.add_leans(offsets, leans)
            applied = base_now + offsets
            if slider is not None:
                side, aimed, knee, lengths, mask = slider
                raw = (t_local - phase.pose_delay) / phase.pose_blend
                extent = 1.0 - _smooth(raw) if phase.slide_back else _smooth(raw)
                start, way = slide_from
                hip = sim.data.xpos[sim.body_ids[f"thigh.{side}"]]
                along = _slide_goal(start, way, hip, tendu_distance(hip[2], *lengths))
                goal = np.array([*(start + extent * along * way), TENDU_SKIM])
                # The leg does not follow its targets exactly (the pelvis moves under it): the aim's
                # height corrects for how high the lower toe really is, so the toes ride just above the
                # floor. Never below the skim: pressed into the floor, the stiff leg was a strut, the
                # toes stuck and slipped, and the supporting foot slid (the dancer fell from first
                # with the toes aimed 2-3 mm up).
                slide_lift += (CONTROL_DT / TENDU_HEIGHT_FILTER) * (TENDU_SKIM - _toe_lowest(sim, side))
                slide_lift = min(max(slide_lift, 0.0), TENDU_HEIGHT_LIMIT)
                before = applied[mask].copy()
                start_q = sim.data.qpos.copy()
                start_q[sim.qadr[mask]] = applied[mask]
                start_q[sim.qadr[aimed]] = slide_warm
                aim = goal + np.array([0.0, 0.0, slide_lift])
                # The knee straightens (no faster than TENDU_KNEE_SPEED: the IK lets it go straight at
                # once where the heel stops needing it, and that snap threw the supporting foot).
                # On the way back it bends again as the toes near their spot, as it was bent there.
                knee_now = max(KNEE_HAIR, slide_warm[4] - TENDU_KNEE_SPEED * CONTROL_DT)
                if phase.slide_back:
                    knee_now = KNEE_HAIR + (1.0 - extent) * max(slide_knee - KNEE_HAIR, 0.0)
                start_q[sim.qadr[aimed[4]]] = knee_now
                solution = _aim_toe(scratch, start_q, side, aim)
                solved = np.array([solution[sim.joint_names[j]] for j in aimed])
                # ... and the heel's need never bends it faster than that either.
                solved[4] = min(solved[4], slide_warm[4] + TENDU_KNEE_SPEED * CONTROL_DT)
                slide_warm = solved
                if not phase.slide_back and raw <= 0.0:
                    slide_knee = slide_warm[4]  # as the foot stands on its spot before it slides
                applied[aimed] = slide_warm
                # The leg held where the IK puts it: each muscle's target past its angle by its load,
                # and ahead of it by the muscle's damping as it moves.
                start_q[sim.qadr[mask]] = applied[mask]
                solved = applied[mask].copy()
                if slide_last is not None:
                    applied[mask] += TENDU_DAMPING_LEAD * (solved - slide_last) / CONTROL_DT
                slide_last = solved
                applied = applied + _held_against_gravity(scratch, start_q, mask)
                if not phase.slide_back and t_local < phase.pose_delay:
                    # The leg goes over to the IK's angles as the foot lets go of the floor.
                    share = _smooth(t_local / phase.pose_delay)
                    applied[mask] = (1.0 - share) * before + share * applied[mask]
            if closed:
                turn = _smooth(t_local / CHAIN_BLEND)
                if chain_turned is None:
                    pelvis_quat = quaternions.slerp(chain_quat, chain_level, turn)
                    rotation = quaternions.to_matrix(pelvis_quat)
                    if turn == 1.0:
                        chain_turned = pelvis_quat, rotation
                else:
                    pelvis_quat, rotation = chain_turned
                # The slow part of the lean moves the pelvis; the fast rest leans both legs alike as
                # before (tiny angles, where that is a parallelogram): near a straight knee the leg's
                # length changes as the square root of the pelvis motion, and feeding it the
                # controller's tick-to-tick corrections set the knees chattering.
                chain_filter += (CONTROL_DT / CHAIN_FILTER) * (lean - chain_filter)
                moved = chain_height * np.array([chain_filter[1] - chain_lean[1],
                                                 chain_lean[0] - chain_filter[0]])
                xy = chain_start[:2] + moved
                feet = planted
                if landing_feet:
                    down = _smooth(t_local / phase.pose_blend)
                    feet = {side: (spot + np.array([0.0, 0.0, landing_feet.get(side, 0.0) * (1.0 - down)]),
                                   frame) for side, (spot, frame) in planted.items()}
                if compliant:
                    # Each loaded leg gives a couple of centimetres under the weight (the muscles are
                    # springs): measured as where the targets last applied would put the foot from the
                    # pelvis as it is, less where the foot is, low-passed; aiming past the spot by it
                    # sets a landing foot on its spot and keeps both feet from sliding as the load
                    # moves from one leg to the other.
                    scratch.data.qpos[:] = sim.data.qpos
                    scratch.data.qpos[scratch.qadr] = last_applied
                    scratch.mj.mj_kinematics(scratch.model, scratch.data)
                    for s in LEG_SIDES:
                        if s in unaimed:
                            continue
                        gives = _aimed_give(scratch.data.xpos[scratch.body_ids[f"foot.{s}"]]
                                            - sim.data.xpos[sim.body_ids[f"foot.{s}"]], floor_only[s])
                        if aim_across is not None:
                            gives = _across(gives, aim_across)
                        compliance[s] += (CONTROL_DT / COMPLIANCE_FILTER) * (gives * aim_axes - compliance[s])
                        size = float(np.sqrt(compliance[s] @ compliance[s]))  # norm, without its checks
                        if size > COMPLIANCE_LIMIT:
                            compliance[s] *= COMPLIANCE_LIMIT / size
                    feet = {s: (spot + compliance[s], frame) for s, (spot, frame) in feet.items()}
                solve_quat, solve_rotation = pelvis_quat, rotation
                if roll_from is not None and t > roll_from:
                    # After a landing the legs' spots are a little off the position's places: kept
                    # level at the height of the more stretched leg, the pelvis left the landed knee
                    # bent 9-11 degrees. Rolled (a little) so each hip stands where its leg reaches,
                    # both knees straighten.
                    roll_now = chain.level_roll(chain.leg_heights(xy, rotation, feet))
                    roll_now = float(np.clip(roll_now, -ROLL_AFTER_LANDING, ROLL_AFTER_LANDING))
                    roll_now *= _smooth((t - roll_from) / ROLL_BLEND)
                    roll = roll_now
                elif roll_fade is not None:
                    roll = roll_now * (1.0 - _smooth((t - roll_fade) / ROLL_BLEND))
                else:
                    roll = 0.0
                if roll:
                    about_x = quaternions.from_axis_angle((1.0, 0.0, 0.0), roll)
                    solve_quat = quaternions.multiply(pelvis_quat, about_x)
                    solve_rotation = quaternions.to_matrix(solve_quat)
                pelvis_pos = np.array([*xy, chain.pelvis_height(xy, solve_rotation, feet)])
                if landing_top is not None:
                    # See WIDE_LANDING: the pelvis rises slowly from where it stood as the foot came down.
                    pelvis_pos[2] = min(pelvis_pos[2], landing_top)
                    landing_top += CONTROL_DT * WIDE_LANDING_RISE
                if position_now in CHAIN_LOWER:
                    # Both knees a little bent (see CHAIN_LOWER).
                    pelvis_pos[2] -= CHAIN_LOWER[position_now] * body.height
                if phase.chain_drop is not None:
                    # A plie by the closed chain: the pelvis lowered (or raised back) by a share of
                    # the height, both feet held on their spots by the legs' IK throughout.
                    drop_from, drop_to = phase.chain_drop
                    pelvis_pos[2] -= body.height * ((1.0 - a) * drop_from + a * drop_to)
                solved = chain.solve(applied, pelvis_pos, solve_quat, feet)
                w = 1.0 if chain_joined else turn
                solved += sim.lean_offsets(lean - chain_filter, (lean_index, weights))
                applied[chain_legs] = (1.0 - w) * chain_applied[chain_legs] + w * solved[chain_legs]
            elif rebase and local == 0:
                # From the chain back to leaning: the standing legs start from the chain's angles
                # and keep the difference for the rest of the phase.
                fix = np.zeros_like(applied)
                for side in stance:
                    fix = np.where(leg_mask(side), last_applied - applied, fix)
                prev_pose_vec = prev_pose_vec + fix
                if not phase.sink and phase.heels is None:  # solved from the chain's angles already
                    pose_vec = pose_vec + fix
                via_vec = via_vec + fix
                applied = applied + fix
                if phase.straighten and len(stance) == 1:
                    # The supporting leg ends straight under the pelvis (which rises), the balance's
                    # corrections since this tick on top.
                    # ... no higher than the free leg reaches the spot it is held over (see HOVER_REACH).
                    free_at = None if phase.land is None else \
                        spots[other(stance[0])][0] + np.array([0.0, 0.0, phase.land])
                    straight = _straight_leg(scratch, chain, last_applied, pelvis_pos, pelvis_quat,
                                             stance[0], planted[stance[0]], held=free_at)
                    mask = leg_mask(stance[0])
                    held = np.where(mask, straight - offsets, pose_vec)
                    raw = pose_vec if phase.sink else pose_vec - fix
                    straightened = (stance[0], np.where(mask, held - raw, 0.0))
                    pose_vec = held
                    # The supporting leg's lean so far is in its straight angles: a free leg coming
                    # down parallel to it leans only by what the balance adds from here.
                    straight_lean = lean.copy()
            if local == 0 and phase.starts_step:
                # The legs' angles the step starts from (after any rebase from the closed chain).
                step_start_vec = prev_pose_vec.copy()
            if phase.turn:
                # The quarter turn: the body swivels about the vertical through the middle of the
                # supporting toe's contacts (where the COM is held). MuJoCo's contacts here have no
                # torsional friction, and the hip cannot turn the pelvis 90 degrees over a planted
                # foot, so the swivel is imposed on the whole body, smoothly; the balance goes on
                # throughout, and everything kept in world coordinates turns with the body.
                angle = phase.turn * _smooth((t_local + CONTROL_DT) / phase.duration) - turned
                turned += angle
                _swivel(sim, phase_target, angle)
                c, s_ = np.cos(angle), np.sin(angle)
                rotate = np.array([[c, -s_], [s_, c]])
                lean, hip_lean = rotate @ lean, rotate @ hip_lean
                last_cop = tuple((phase_target + rotate @ (np.array(last_cop) - phase_target)).tolist())
                prev_target = phase_target + rotate @ (prev_target - phase_target)
                stand_target = phase_target + rotate @ (stand_target - phase_target)
            sim.apply(applied, fine=fine)
            last_applied = applied
            meas = sim.measure()
            tick += 1
            if tick % 50 == 0:
                yield min(tick / n_ticks, 0.99), f"{step_times[-1][0]} at {t:.1f} s"
        if fell:
            break
        if slider is not None:
            # The next phase starts from the angles the toe's IK last gave the working leg.
            pose_vec = np.where(slider[4], last_applied, pose_vec)
        chain_prev = closed
        if squeeze_change is not None and not (k + 1 < len(phases) and phases[k + 1].releve_on_both):
            # The relevé ends with the aim in the legs' pose, which the steps after it start from.
            pose_vec = pose_vec + squeeze_change @ squeeze
            squeeze = np.zeros(2)
        prev_pose_vec = pose_vec
        if phase.key:
            key_times.append((phase.label, phase_start + phase.duration))
        prev_target = phase_target.copy()
        if k == 0 or (phase.place and phase.stance == "both"):
            # Where the dancer stands still in the position: the start, or the end of a change.
            stand_target = phase_target.copy()
            stand_offset = _in_feet_frame(sim, phase_target)
        phase_start += phase.duration

    if count > 1:
        targets_log[count - 1] = targets_log[count - 2]  # the last tick records but does not control
    rotations, rest = bone_rotations(sim, quats[:count])
    joint_positions = {spec.name: xpos[:count, sim.body_ids[spec.name]].copy() for spec in body.bodies}
    toe_tips = {}
    for side in ("L", "R"):
        toe, tip = toe_tip(sim, side)
        toe_tips[side] = xpos[:count, toe] + quaternions.rotate(quats[:count, toe], tip)
    result = Performance(
        tuple(labels), times[:count], com[:count], cop[:count], polygons[:count], contact_log[:count],
        step_times, fell, fall_time, rotations, xpos[:count, sim.root].copy(), rest, targets_log[:count],
        parents={spec.name: spec.parent for spec in body.bodies}, supports=supports[:count],
        joint_positions=joint_positions, key_times=key_times, toe_tips=toe_tips)
    yield 1.0, "done"
    return result


def perform(
    sequence=DEFAULT_SEQUENCE,
    gains: Gains | None = None,
    height: float = 1.65,
    mass: float = 55.0,
    sex: str = "female",
    turnout: float = DEFAULT_TURNOUT,
    durations: dict[str, float] | None = None,
    pose_overrides: dict[str, float] | None = None,
    allow_unbalanced: bool = False,
) -> Performance:
    """Perform ``sequence``: a position, then steps of :data:`STEPS` (see :mod:`.steps`).

    Items are step names with an optional ``:left``/``:right`` suffix, or ``(name, seconds)``.
    The default (the paper's Fig. 2) ends in quiet standing on the left toe. A step that cannot
    be balanced from where the previous ones leave the dancer raises :class:`DancerError` before
    anything is simulated; falling is a result (``fell=True``, ``fall_time``), not an exception.
    """
    steps = perform_steps(sequence, gains, height, mass, sex, turnout, durations, pose_overrides,
                          allow_unbalanced)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value
