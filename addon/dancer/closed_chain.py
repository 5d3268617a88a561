"""Both feet planted: the pelvis goes where the balance wants it, both legs follow by inverse kinematics.

Leaning both legs by the same world angle (the paper's weight shift) moves the pelvis like a
parallelogram only when the legs are parallel. From second, third, fourth or fifth position the
legs are not, so one hip rises and the other drops, and the supporting foot comes off the floor.
Here the balance's lean sets the pelvis *position* instead (the same horizontal shift the lean
would give), the pelvis stays level, and each leg's six joints (hip roll, pitch and twist, knee,
ankle pitch and roll) come from damped least squares with its foot kept on its spot: the weight
shift is hip ab/adduction and ankle roll together, whatever the position. The pelvis stands as
high as the more stretched leg allows with its knee a hair bent (a straight knee is singular for
the leg's length), so that leg stays straight and the other one gives.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from .. import quaternions
from ..geometry.small_systems import solve_spd_small
from .sim import DancerSim

KNEE_HAIR = 0.03  # radians: the least knee bend the legs keep while both feet are down
LEG_JOINTS = ("thigh.{s}_x", "thigh.{s}_y", "thigh.{s}_z", "shin.{s}_y", "foot.{s}_y", "foot.{s}_x")
SIDES = ("L", "R")
KNEE = LEG_JOINTS.index("shin.{s}_y")
DAMPING = 1e-4 * np.eye(6)


def level_frame(frame: NDArray[np.float64]) -> NDArray[np.float64]:
    """The foot frame turned flat on the floor, keeping the direction its toes point in."""
    forward = np.array([frame[0, 0], frame[1, 0], 0.0])
    forward /= max(float(np.linalg.norm(forward)), 1e-9)
    return np.column_stack([forward, [-forward[1], forward[0], 0.0], [0.0, 0.0, 1.0]])


class ClosedChain:
    """Leg joint angles for a pelvis pose with both feet on given spots (one scratch model)."""

    def __init__(self, scratch: DancerSim):
        self.scratch = scratch
        m = scratch.model
        self.names = {s: [j.format(s=s) for j in LEG_JOINTS] for s in SIDES}
        self.index = {s: np.array([scratch.index[n] for n in self.names[s]]) for s in SIDES}
        self.jid = {s: scratch.jid[self.index[s]] for s in SIDES}
        self.qadr = {s: scratch.qadr[self.index[s]] for s in SIDES}
        self.foot = {s: scratch.body_ids[f"foot.{s}"] for s in SIDES}
        self.thigh = {s: scratch.body_ids[f"thigh.{s}"] for s in SIDES}
        # Hip joints in the pelvis frame, and each leg's hip-to-ankle reach with the knee a hair bent.
        d = scratch.data
        d.qpos[:] = 0.0
        d.qpos[3] = 1.0
        d.qpos[scratch.qadr[[scratch.index[f"shin.{s}_y"] for s in SIDES]]] = KNEE_HAIR
        scratch.mj.mj_kinematics(m, d)
        self.hip_offset = {s: d.xpos[self.thigh[s]] - d.xpos[scratch.root] for s in SIDES}
        self.reach = {s: float(np.linalg.norm(d.xpos[self.thigh[s]] - d.xpos[self.foot[s]])) for s in SIDES}
        self.warm: dict[str, NDArray[np.float64]] = {}
        self._hips_for: NDArray[np.float64] | None = None
        self._hips: dict[str, NDArray[np.float64]] = {}
        self.foot_ids = np.array([self.foot[s] for s in SIDES])
        self.jids = np.concatenate([self.jid[s] for s in SIDES])
        self.qadrs = np.concatenate([self.qadr[s] for s in SIDES])

    def leg_heights(self, xy: NDArray[np.float64], rotation: NDArray[np.float64],
                    spots: dict[str, tuple[NDArray[np.float64], NDArray[np.float64]]]) -> dict[str, float]:
        """Per leg, the highest pelvis at ``xy`` (turned by ``rotation``) from which it reaches its
        ankle's spot with the knee a hair bent."""
        heights = {}
        if rotation is not self._hips_for:
            # The pelvis keeps one rotation for most of a phase (level): turn the hips once for it.
            self._hips_for = rotation
            self._hips = {s: rotation @ self.hip_offset[s] for s in SIDES}
        for s in SIDES:
            hip = self._hips[s]
            ankle = spots[s][0]
            across = float(np.hypot(*(xy + hip[:2] - ankle[:2])))
            across = min(across, 0.98 * self.reach[s])
            heights[s] = float(ankle[2] + np.sqrt(self.reach[s] ** 2 - across ** 2) - hip[2])
        return heights

    def pelvis_height(self, xy: NDArray[np.float64], rotation: NDArray[np.float64],
                      spots: dict[str, tuple[NDArray[np.float64], NDArray[np.float64]]]) -> float:
        """The highest pelvis at ``xy`` from which both legs reach their ankles' spots."""
        return min(self.leg_heights(xy, rotation, spots).values())

    def level_roll(self, heights: dict[str, float]) -> float:
        """The roll (radians, about the pelvis's forward axis) that puts each hip at the height its
        leg reaches in ``heights`` (:meth:`leg_heights` for the level pelvis): both legs straight."""
        across = float(self.hip_offset["L"][1] - self.hip_offset["R"][1])
        return float(np.arcsin(np.clip((heights["L"] - heights["R"]) / across, -1.0, 1.0)))

    def solve(self, targets: NDArray[np.float64], pelvis: NDArray[np.float64], quat: NDArray[np.float64],
              spots: dict[str, tuple[NDArray[np.float64], NDArray[np.float64]]],
              iterations: int = 2) -> NDArray[np.float64]:
        """``targets`` with both legs' joints set so each ankle is on its spot (position, frame)."""
        sc = self.scratch
        mj, m, d = sc.mj, sc.model, sc.data
        d.qpos[0:3] = pelvis
        d.qpos[3:7] = quat
        d.qpos[sc.qadr] = targets
        for s in SIDES:
            if s in self.warm:
                d.qpos[self.qadr[s]] = self.warm[s]
        # Twelve joints and two feet: plain Python floats beat numpy's per-call overhead on every
        # step but the 6 x 6 normal matrices (BLAS), in the same operations and order as the array
        # form this replaced (cross products, sums over the frame's columns, Jacobian-transpose
        # products), so the same bits.
        goals = [(spots[s][0].tolist(), spots[s][1].tolist()) for s in SIDES]
        for _ in range(iterations):
            mj.mj_kinematics(m, d)
            # take(): the same rows as fancy indexing at a fraction of its cost.
            feet = d.xpos.take(self.foot_ids, axis=0).tolist()
            frames = d.xmat.take(self.foot_ids, axis=0).tolist()
            axes = d.xaxis.take(self.jids, axis=0).tolist()
            anchors = d.xanchor.take(self.jids, axis=0).tolist()
            jac, errors = [], []
            for leg, ((px, py, pz), target) in enumerate(goals):
                fx, fy, fz = feet[leg]
                c = frames[leg]
                t0, t1, t2 = target
                # Orientation error: half the sum over the frames' columns of current x target.
                rx = ry = rz = None
                for col in range(3):
                    a0, a1, a2 = c[col], c[3 + col], c[6 + col]
                    b0, b1, b2 = t0[col], t1[col], t2[col]
                    x, y, z = a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0
                    if rx is None:
                        rx, ry, rz = x, y, z
                    else:
                        rx, ry, rz = rx + x, ry + y, rz + z
                errors.append([px - fx, py - fy, pz - fz, 0.5 * rx, 0.5 * ry, 0.5 * rz])
                # Hinge Jacobian columns: axis x (foot - anchor) over the axis.
                rows: list[list[float]] = [[], [], [], [], [], []]
                for joint in range(6 * leg, 6 * leg + 6):
                    a0, a1, a2 = axes[joint]
                    ax_, ay_, az_ = anchors[joint]
                    b0, b1, b2 = fx - ax_, fy - ay_, fz - az_
                    rows[0].append(a1 * b2 - a2 * b1)
                    rows[1].append(a2 * b0 - a0 * b2)
                    rows[2].append(a0 * b1 - a1 * b0)
                    rows[3].append(a0)
                    rows[4].append(a1)
                    rows[5].append(a2)
                jac.append(rows)
            array = np.array(jac)
            normal = (array @ array.transpose(0, 2, 1) + DAMPING).tolist()
            q = d.qpos.take(self.qadrs).tolist()
            for leg in range(2):
                weights = solve_spd_small(normal[leg], errors[leg])
                rows = jac[leg]
                for i in range(6):
                    total = 0.0
                    for j in range(6):
                        total += rows[j][i] * weights[j]
                    q[6 * leg + i] += total
                q[6 * leg + KNEE] = max(q[6 * leg + KNEE], KNEE_HAIR)
            d.qpos[self.qadrs] = q
        out = targets.copy()
        for s in SIDES:
            self.warm[s] = d.qpos.take(self.qadr[s])
            out[self.index[s]] = self.warm[s]
        return out

    def foot_error(self, spots) -> float:
        """Largest ankle distance from its spot after the last :meth:`solve` (metres)."""
        sc = self.scratch
        sc.mj.mj_kinematics(sc.model, sc.data)
        return max(float(np.linalg.norm(spots[s][0] - sc.data.xpos[self.foot[s]])) for s in SIDES)


_NEXT = np.array([1, 2, 0])
_AFTER = np.array([2, 0, 1])


def _cross(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """``np.cross`` over the last axis (length 3): the same products and differences, in four gathers
    and three operations (``np.cross`` shuffles axes and took a tenth of a 20-step dance's CPU time in
    the closed chain's two calls a tick; three per-component slices cost twice these)."""
    return a[..., _NEXT] * b[..., _AFTER] - a[..., _AFTER] * b[..., _NEXT]


def level_yaw(quat: NDArray[np.float64]) -> NDArray[np.float64]:
    """The rotation about z alone that keeps the heading of ``quat`` (the pelvis made level)."""
    forward = quaternions.to_matrix(quat)[:, 0]
    yaw = float(np.arctan2(forward[1], forward[0]))
    return np.array([np.cos(0.5 * yaw), 0.0, 0.0, np.sin(0.5 * yaw)])
