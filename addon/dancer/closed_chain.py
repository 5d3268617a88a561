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
from ..geometry.small_systems import solve_spd_batch
from .sim import DancerSim

KNEE_HAIR = 0.03  # radians: the least knee bend the legs keep while both feet are down
LEG_JOINTS = ("thigh.{s}_x", "thigh.{s}_y", "thigh.{s}_z", "shin.{s}_y", "foot.{s}_y", "foot.{s}_x")
SIDES = ("L", "R")
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
        self.foot_ids = np.array([self.foot[s] for s in SIDES])
        self.jids = np.concatenate([self.jid[s] for s in SIDES])
        self.qadrs = np.concatenate([self.qadr[s] for s in SIDES])

    def pelvis_height(self, xy: NDArray[np.float64], rotation: NDArray[np.float64],
                      spots: dict[str, tuple[NDArray[np.float64], NDArray[np.float64]]]) -> float:
        """The highest pelvis at ``xy`` from which both legs reach their ankles' spots."""
        heights = []
        for s in SIDES:
            hip = rotation @ self.hip_offset[s]
            ankle = spots[s][0]
            across = float(np.hypot(*(xy + hip[:2] - ankle[:2])))
            across = min(across, 0.98 * self.reach[s])
            heights.append(ankle[2] + np.sqrt(self.reach[s] ** 2 - across ** 2) - hip[2])
        return float(min(heights))

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
        knee = 3
        target_pos = np.array([spots[s][0] for s in SIDES])
        target_frame = np.array([spots[s][1] for s in SIDES])
        jac = np.empty((2, 6, 6))
        error = np.empty((2, 6))
        for _ in range(iterations):
            mj.mj_kinematics(m, d)
            # Both legs at once: position and orientation error, hinge Jacobians from the axes.
            feet = d.xpos[self.foot_ids]
            current = d.xmat[self.foot_ids].reshape(2, 3, 3)
            error[:, :3] = target_pos - feet
            columns = current.transpose(0, 2, 1), target_frame.transpose(0, 2, 1)
            error[:, 3:] = 0.5 * _cross(*columns).sum(axis=1)
            axes = d.xaxis[self.jids].reshape(2, 6, 3)
            anchors = d.xanchor[self.jids].reshape(2, 6, 3)
            jac[:, :3, :] = _cross(axes, feet[:, None, :] - anchors).transpose(0, 2, 1)
            jac[:, 3:, :] = axes.transpose(0, 2, 1)
            normal = jac @ jac.transpose(0, 2, 1) + DAMPING
            step = np.einsum("lji,lj->li", jac, solve_spd_batch(normal, error))
            q = d.qpos[self.qadrs].reshape(2, 6) + step
            q[:, knee] = np.maximum(q[:, knee], KNEE_HAIR)
            d.qpos[self.qadrs] = q.ravel()
        out = targets.copy()
        for s in SIDES:
            self.warm[s] = d.qpos[self.qadr[s]].copy()
            out[self.index[s]] = self.warm[s]
        return out

    def foot_error(self, spots) -> float:
        """Largest ankle distance from its spot after the last :meth:`solve` (metres)."""
        sc = self.scratch
        sc.mj.mj_kinematics(sc.model, sc.data)
        return max(float(np.linalg.norm(spots[s][0] - sc.data.xpos[self.foot[s]])) for s in SIDES)


def _cross(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """``np.cross`` over the last axis (length 3), the same products without its axis shuffling: it
    took a tenth of a 20-step dance's CPU time in the closed chain's two calls a tick."""
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    out[..., 0] = a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1]
    out[..., 1] = a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2]
    out[..., 2] = a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    return out


def level_yaw(quat: NDArray[np.float64]) -> NDArray[np.float64]:
    """The rotation about z alone that keeps the heading of ``quat`` (the pelvis made level)."""
    forward = quaternions.to_matrix(quat)[:, 0]
    yaw = float(np.arctan2(forward[1], forward[0]))
    return np.array([np.cos(0.5 * yaw), 0.0, 0.0, np.sin(0.5 * yaw)])
