"""How near vertical the supporting leg can stand: the least tilt the body's own geometry allows.

On one foot the projected COM must be over that foot. The hip joint is 5 % of the height off the
pelvis' midline (8.25 cm at 1.65 m) and a turned-out foot reaches forward and out from the ankle,
so with the hip joint straight above the ankle the COM of a level, upright body is several
centimetres beside the foot: the leg must lean in (hip joint towards the midline of the stance)
until the COM is over it, unless the trunk, the pelvis or the arms carry mass towards the
supporting side. This module measures that kinematically (MuJoCo kinematics, no control): for a
stance (the weight shift with the other foot still down, the retire on the flat foot, the relevé
in retire on the ball), a trunk side bend, a pelvis roll and an arm position, the least
hip-joint-to-ankle tilt for which the projected COM is at least ``margin`` inside the supporting
foot's contact polygon (the ball's on relevé).

:meth:`LegLine.least_tilt_in_form` searches everything a dancer may do within the classical form
(:class:`Form`): the trunk bent towards the supporting side and forward, the free hip hiked, the
retiré's working leg drawn in until its toes are at the supporting knee, every pair of classical
arm positions. With the leg vertical the supporting hip joint is straight above the ankle, so the
pelvis cannot shift over the foot without tilting the leg: what carries the COM over the foot is
only the mass above and beside it.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

from .closed_chain import ClosedChain, level_frame
from .model import build_body
from .sim import DancerSim
from .steps import DEFAULT_TURNOUT, RELEVE_ANGLE, arms, mirror_pose, position_pose, retire_pose
from .support import convex_hull, signed_distance_inside

STANCES = ("weight_shift", "retire", "releve")
# m: how far inside the supporting foot the COM stands at the end of a weight shift. At 1 and 1.5 cm
# (supporting leg 3.8 / 4.3 degrees from vertical) the foot lifting into the tendu after it rocked
# the supporting foot onto its heel and the dancer fell; at 2 cm (4.5 degrees) every step follows.
UPRIGHT_MARGIN = 0.02


@dataclass(frozen=True)
class Lean:
    """What the body above the supporting leg does, towards the supporting side (radians).

    ``trunk`` is the trunk's side bend, shared equally by the lumbar (``spine_x``) and thoracic
    (``chest_x``) joints; ``pelvis`` rolls the pelvis so the free hip rises; ``arms`` are the
    arm joints (left supporting), e.g. :func:`.steps.arms`.
    """

    trunk: float = 0.0
    pelvis: float = 0.0
    arms: tuple[tuple[str, float], ...] = ()


PORTS = ("low", "first", "second", "demi", "high")


@dataclass(frozen=True)
class Form:
    """How far the classical form lets the body above the supporting leg go (radians).

    ``side_bend`` of the trunk towards the supporting side and ``forward`` lean (each shared by the
    lumbar and thoracic joints, as :class:`Lean`'s trunk); ``hike`` rolls the pelvis, free hip up
    (a dancer keeps the hips level: a few degrees is what the eye forgives).
    """

    side_bend: float = float(np.radians(5.0))
    forward: float = float(np.radians(5.0))
    hike: float = float(np.radians(3.0))


def arm_pair(supporting: str, free: str) -> tuple[tuple[str, float], ...]:
    """The supporting (left) arm in one classical position, the free (right) arm in another."""
    left = {k: v for k, v in arms(supporting).items() if ".L_" in k}
    right = {k: v for k, v in arms(free).items() if ".R_" in k}
    return tuple({**left, **right}.items())


def _rotation_x(angle: float) -> NDArray[np.float64]:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def foot_rotation(yaw: float, pitch: float) -> NDArray[np.float64]:
    """Rz(yaw) @ Ry(pitch): a foot turned out by ``yaw`` with its heel up by ``pitch``."""
    cz, sz, cy, sy = np.cos(yaw), np.sin(yaw), np.cos(pitch), np.sin(pitch)
    return np.array([[cz, -sz, 0.0], [sz, cz, 0.0], [0.0, 0.0, 1.0]]) @ np.array(
        [[cy, 0.0, sy], [0.0, 1.0, 0.0], [-sy, 0.0, cy]])


class LegLine:
    """One body in first position, left foot supporting; evaluates COM margins for leg tilts."""

    def __init__(self, height: float = 1.65, mass: float = 55.0, sex: str = "female",
                 turnout: float = DEFAULT_TURNOUT, position: str = "first_position", mirrored: bool = False,
                 releve: float = RELEVE_ANGLE):
        self.releve = releve  # the foot's pitch on demi-pointe (radians; the steps' relevé by default)
        self.body = build_body(height, mass, sex)
        self.sim = DancerSim(self.body)
        self.chain = ClosedChain(DancerSim(self.body))
        sim = self.sim
        # Mirrored, the left foot stands where the right one does in the position (the left foot in
        # front in third to fifth): the left leg then supports as the right one does there.
        pose = position_pose(position, turnout, height)
        sim.set_angles(mirror_pose(pose) if mirrored else pose)
        sim.place()
        self.stand = sim.data.qpos.copy()
        d = sim.data
        self.spots = {s: (d.xpos[sim.body_ids[f"foot.{s}"]].copy(),
                          level_frame(d.xmat[sim.body_ids[f"foot.{s}"]].reshape(3, 3)))
                      for s in ("L", "R")}
        self.ball = d.xpos[sim.body_ids["toe.L"]].copy()
        self.hip_offset = self.chain.hip_offset["L"]
        self.reach = self.chain.reach["L"]
        self.mask = {b: np.isin(sim.model.geom_bodyid, [sim.body_ids[b]]) & (sim.contact_body >= 0)
                     for b in ("foot.L", "toe.L")}

    def _posed(self, stance: str, lean: Lean) -> NDArray[np.float64]:
        """Joint angles (``sim.qadr`` order) of the stance with the lean, legs not yet solved."""
        sim = self.sim
        angles = self.stand[sim.qadr].copy()
        pose = {}
        if stance != "weight_shift":
            pose.update(retire_pose({}))
        pose.update(dict(lean.arms))
        # Towards the supporting (left, +y) side is a negative roll.
        pose.update({"spine_x": -0.5 * lean.trunk, "chest_x": -0.5 * lean.trunk})
        for name, value in pose.items():
            angles[sim.index[name]] = value
        return angles

    def _ankle(self, stance: str) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Where the supporting ankle is and the foot's frame (on relevé: pitched about the ball)."""
        ankle, frame = self.spots["L"]
        if stance != "releve":
            return ankle, frame
        yaw = float(np.arctan2(frame[1, 0], frame[0, 0]))
        pitched = foot_rotation(yaw, self.releve)
        toe = self.sim.body_ids["toe.L"]
        return self.ball - pitched @ self.sim.model.body_pos[toe], pitched

    def com(self, stance: str, lean: Lean, hip_xy: NDArray[np.float64]) -> NDArray[np.float64]:
        """Projected COM with the supporting hip joint at ``hip_xy`` (x, y) from the ankle, the
        leg straight (as long as the closed chain keeps it) and the foot on its spot."""
        sim, chain = self.sim, self.chain
        mj, m, d = sim.mj, sim.model, sim.data
        ankle, frame = self._ankle(stance)
        rotation = _rotation_x(-lean.pelvis)
        hip = np.array([ankle[0] + hip_xy[0], ankle[1] + hip_xy[1],
                        ankle[2] + np.sqrt(max(self.reach ** 2 - float(hip_xy @ hip_xy), 0.0))])
        pelvis = hip - rotation @ self.hip_offset
        quat = np.array([np.cos(0.5 * lean.pelvis), -np.sin(0.5 * lean.pelvis), 0.0, 0.0])
        angles = self._posed(stance, lean)
        spots = {"L": (ankle, frame), "R": self.spots["R"]}
        if stance == "weight_shift":
            # With the other foot still down, the pelvis stands only as high as both legs reach.
            pelvis[2] = chain.pelvis_height(pelvis[:2], rotation, spots)
        hip = pelvis + rotation @ self.hip_offset
        self.tilt = float(np.degrees(np.arctan2(np.hypot(*(hip[:2] - ankle[:2])), hip[2] - ankle[2])))
        # Always from the standing legs, so a result never depends on the calls before it.
        chain.warm = {}
        solved = angles
        for _ in range(10):
            solved = chain.solve(solved, pelvis, quat, spots, iterations=4)
            if chain.foot_error(spots) < 1e-5 or stance != "weight_shift":
                if np.linalg.norm(spots["L"][0] - chain.scratch.data.xpos[chain.foot["L"]]) < 1e-5:
                    break
        if stance != "weight_shift":
            solved[chain.index["R"]] = angles[chain.index["R"]]
        if stance == "releve":
            solved[sim.index["toe.L_y"]] = -self.releve
        d.qpos[:] = self.stand
        d.qpos[0:3], d.qpos[3:7] = pelvis, quat
        d.qpos[sim.qadr] = solved
        mj.mj_kinematics(m, d)
        mj.mj_comPos(m, d)
        return d.subtree_com[sim.root, :2].copy()

    def polygon(self, stance: str) -> NDArray[np.float64]:
        """The supporting foot's contact polygon (the ball's on relevé), counter-clockwise."""
        self.com(stance, Lean(), np.zeros(2))
        bodies = ("toe.L",) if stance == "releve" else ("foot.L", "toe.L")
        d = self.sim.data
        return convex_hull(np.concatenate([d.geom_xpos[self.mask[b], :2] for b in bodies]))

    def margin(self, stance: str, lean: Lean, hip_xy: NDArray[np.float64]) -> float:
        """Metres the projected COM is inside the supporting polygon (negative: outside)."""
        return signed_distance_inside(self.com(stance, lean, hip_xy), self.polygon(stance))

    def least_tilt(self, stance: str, lean: Lean = Lean(), margin: float = 0.01) -> float:
        """Least tilt (degrees) of the supporting leg with the COM ``margin`` inside the polygon.

        The COM moves almost linearly with the hip joint, so each round linearises it (finite
        differences) and finds the hip position nearest above the ankle whose linearised COM is
        ``margin`` inside every edge; a few rounds converge to the exact one.
        """
        if stance not in STANCES:
            raise ValueError(f"stance must be one of {STANCES}, got {stance!r}")
        hull = self.polygon(stance)
        edges = np.roll(hull, -1, axis=0) - hull
        normals = np.stack([edges[:, 1], -edges[:, 0]], axis=1)  # outward for a ccw hull
        normals /= np.linalg.norm(normals, axis=1)[:, None]
        limits = np.einsum("ij,ij->i", normals, hull) - margin
        hip = np.zeros(2)
        step = 1e-3
        for _ in range(8):
            com = self.com(stance, lean, hip)
            jac = np.stack([(self.com(stance, lean, hip + step * e) - com) / step for e in np.eye(2)], axis=1)
            a = normals @ jac
            b = limits - normals @ com + a @ hip
            best = _least_norm_inside(a, b)
            if best is None:
                return float("inf")
            moved = float(np.linalg.norm(best - hip))
            hip = best
            if moved < 1e-5:
                break
        self.solution = hip
        self.com(stance, lean, hip)
        return self.tilt

    def thigh_roll_at_the_knee(self) -> float:
        """The working thigh's roll (``thigh.R_x``) in retiré that puts its toes level with the
        supporting knee across the body: the retiré drawn in to the midline (more would cross the
        toes through the supporting leg). The steps' retiré holds the knee further out."""
        sim, d = self.sim, self.sim.data
        lo, hi = retire_pose({})["thigh.R_x"], 0.0

        def across(roll: float) -> float:
            self.com("retire", Lean(arms=(("thigh.R_x", roll),)), np.zeros(2))
            return float(d.xpos[sim.body_ids["toe.R"], 1] - d.xpos[sim.body_ids["shin.L"], 1])

        for _ in range(30):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if across(mid) < 0.0 else (lo, mid)
        return 0.5 * (lo + hi)

    def least_tilt_in_form(self, stance: str, margin: float, form: Form = Form(),
                           forward_steps: int = 3) -> tuple[float, Lean]:
        """Least tilt (degrees) over the classical form, and the lean that reaches it.

        Side bend, hike and the retiré drawn in only ever help (they move mass towards the
        supporting side), so they are taken at ``form``'s limits; the forward lean (on the toe the
        COM must come forward over the ball, on the flat foot it need not) is searched over
        ``forward_steps`` values from upright to the limit, with every pair of arm positions."""
        drawn = () if stance == "weight_shift" else (("thigh.R_x", self.thigh_roll_at_the_knee()),)
        best = (float("inf"), Lean())
        for forward, (a, b) in itertools.product(np.linspace(0.0, form.forward, forward_steps),
                                                 itertools.product(PORTS, PORTS)):
            lean = Lean(form.side_bend, form.hike, arm_pair(a, b) + drawn +
                        (("spine_y", 0.5 * float(forward)), ("chest_y", 0.5 * float(forward))))
            tilt = self.least_tilt(stance, lean, margin)
            if tilt < best[0]:
                best = (tilt, lean)
        return best

    def free_foot_error(self) -> float:
        """After :meth:`com` of a weight shift: how far the free (right) ankle is from its spot."""
        sc = self.chain.scratch
        sc.mj.mj_kinematics(sc.model, sc.data)
        return float(np.linalg.norm(self.spots["R"][0] - sc.data.xpos[self.chain.foot["R"]]))


def _least_norm_inside(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64] | None:
    """The shortest 2-vector h with a @ h <= b (a few half-planes), or None if there is none."""
    candidates = [np.zeros(2)]
    for i in range(len(a)):
        candidates.append(a[i] * b[i] / float(a[i] @ a[i]))
        for j in range(i + 1, len(a)):
            pair = np.array([a[i], a[j]])
            if abs(np.linalg.det(pair)) > 1e-12:
                candidates.append(np.linalg.solve(pair, [b[i], b[j]]))
    inside = [h for h in candidates if np.all(a @ h <= b + 1e-12)]
    return min(inside, key=lambda h: float(h @ h)) if inside else None


@lru_cache(maxsize=32)
def upright_point(height: float, mass: float, sex: str, turnout: float, position: str, side: str = "L",
                  lean: Lean = Lean(), margin: float = UPRIGHT_MARGIN) -> NDArray[np.float64]:
    """After a weight shift onto the ``side`` foot in ``position``: where the projected COM stands
    when the supporting leg is as near vertical as the body allows with the COM ``margin`` inside
    that foot, as (forward, left) metres from the ankle in the foot's level frame."""
    line = LegLine(height, mass, sex, turnout, position, mirrored=side == "R")
    line.least_tilt("weight_shift", lean, margin)
    com = line.com("weight_shift", lean, line.solution)
    ankle, frame = line.spots["L"]
    point = frame[:2, :2].T @ (com - ankle[:2])
    if side == "R":
        point[1] = -point[1]  # back from the mirror image
    point.setflags(write=False)
    return point
