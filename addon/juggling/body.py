"""The juggler's body: proportions, placement of several jugglers, the rest skeleton and the arm
bone rotations that put the hands where the planner wants them.

Juggler-local frame, as Blender rigs are built: +X is the juggler's left, -Y is forward, +Z is up.
Hand frame (dwell paths, throw tables): x outward from the body centre, y forward, z up from the
pattern's base height.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..quaternions import continuous as continuous_quaternions
from ..quaternions import from_matrix as matrix_to_quaternion
from .model import LEFT

Array = NDArray[np.float64]


@dataclass(frozen=True)
class Body:
    """Proportions in metres (an adult of about 1.75 m; arm lengths after gunswap / Juggling Lab)."""

    hip_height: float = 0.98
    hip_half_width: float = 0.10
    chest_height: float = 1.36
    neck_height: float = 1.50
    head_top: float = 1.74
    shoulder_height: float = 1.42
    shoulder_half_width: float = 0.19
    upper_arm: float = 0.33
    #: Elbow to the palm, where a held prop sits.
    forearm: float = 0.35
    hand_length: float = 0.08
    #: Height of the hands' throw and catch points: a ball's centre is 1.00 m above its contact point
    #: on the floor (Juggling Lab's floor, 100 cm below the hands), 40 cm below the shoulders.
    pattern_height: float = 1.034
    #: How far in front of the shoulders the hands juggle.
    pattern_forward: float = 0.20

    def hand_side(self, hand: int) -> float:
        """Sign of local X for a hand: the left hand is on +X."""
        return 1.0 if hand == LEFT else -1.0

    def shoulder_local(self, hand: int) -> Array:
        return np.array([self.hand_side(hand) * self.shoulder_half_width, 0.0, self.shoulder_height])

    def hand_frame_to_local(self, hand: int, points: ArrayLike) -> Array:
        """Hand-frame points ``(..., 3)`` (outward, forward, up) to juggler-local coordinates."""
        p = np.asarray(points, dtype=np.float64)
        out = np.empty_like(p)
        out[..., 0] = self.hand_side(hand) * p[..., 0]
        out[..., 1] = -(self.pattern_forward + p[..., 1])
        out[..., 2] = self.pattern_height + p[..., 2]
        return out


def juggler_placement(num_jugglers: int, spacing: float) -> tuple[Array, Array]:
    """Origins ``(J, 3)`` and yaw angles ``(J,)``: one juggler faces -Y (the front camera), two face
    each other along X, more stand on a circle facing its centre, ``spacing`` apart from their
    neighbours."""
    if num_jugglers == 1:
        return np.zeros((1, 3)), np.zeros(1)
    if num_jugglers == 2:
        origins = np.array([[-spacing / 2, 0.0, 0.0], [spacing / 2, 0.0, 0.0]])
        return origins, np.array([math.pi / 2, -math.pi / 2])
    radius = spacing / (2 * math.sin(math.pi / num_jugglers))
    angles = math.pi / 2 + 2 * math.pi * np.arange(num_jugglers) / num_jugglers
    origins = np.stack([radius * np.cos(angles), radius * np.sin(angles), np.zeros(num_jugglers)], axis=-1)
    return origins, angles - math.pi / 2


def yaw_matrix(yaw: float) -> Array:
    c, s = math.cos(yaw), math.sin(yaw)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


# --------------------------------------------------------------------------------------------------
# Skeleton


@dataclass(frozen=True)
class RestBone:
    name: str
    head: tuple[float, float, float]
    tail: tuple[float, float, float]
    parent: str | None
    connected: bool
    #: Radius of the simple body part drawn around the bone.
    radius: float


def arm_bone_names(hand: int) -> tuple[str, str, str, str]:
    suffix = "L" if hand == LEFT else "R"
    return (f"shoulder.{suffix}", f"upper_arm.{suffix}", f"forearm.{suffix}", f"hand.{suffix}")


def rest_skeleton(body: Body) -> list[RestBone]:
    """Bones in juggler-local coordinates; arms bent at the elbow with the forearm forward."""
    bones = [
        RestBone("hips", (0.0, 0.0, body.hip_height - 0.08), (0.0, 0.0, body.hip_height), None, False, 0.15),
        RestBone("spine", (0.0, 0.0, body.hip_height), (0.0, 0.0, body.chest_height), "hips", True, 0.14),
        RestBone("neck", (0.0, 0.0, body.chest_height), (0.0, 0.0, body.neck_height), "spine", True, 0.05),
        RestBone("head", (0.0, 0.0, body.neck_height), (0.0, 0.0, body.head_top), "neck", True, 0.10),
    ]
    for hand in (LEFT, 1 - LEFT):
        side = body.hand_side(hand)
        shoulder_name, upper_name, fore_name, hand_name = arm_bone_names(hand)
        shoulder = body.shoulder_local(hand)
        elbow = shoulder + body.upper_arm * np.array([0.0, -0.25, -1.0]) / math.hypot(0.25, 1.0)
        wrist = elbow + np.array([0.0, -body.forearm, 0.0])
        fingers = wrist + np.array([0.0, -body.hand_length, 0.0])
        suffix = "L" if hand == LEFT else "R"
        hip = (side * body.hip_half_width, 0.0, body.hip_height - 0.08)
        knee = (side * body.hip_half_width, 0.0, 0.52)
        ankle = (side * body.hip_half_width, 0.0, 0.08)
        bones += [
            RestBone(shoulder_name, (0.0, 0.0, body.chest_height), tuple(shoulder), "spine", False, 0.045),
            RestBone(upper_name, tuple(shoulder), tuple(elbow), shoulder_name, True, 0.045),
            RestBone(fore_name, tuple(elbow), tuple(wrist), upper_name, True, 0.037),
            RestBone(hand_name, tuple(wrist), tuple(fingers), fore_name, True, 0.035),
            RestBone(f"thigh.{suffix}", hip, knee, "hips", False, 0.065),
            RestBone(f"shin.{suffix}", knee, ankle, f"thigh.{suffix}", True, 0.05),
        ]
    return bones


def _bone_frames(directions: Array, hinge: Array) -> Array:
    """Rotation matrices ``(..., 3, 3)`` whose Y column is ``directions`` and X column the hinge."""
    y = directions / np.linalg.norm(directions, axis=-1, keepdims=True)
    x = hinge - np.sum(hinge * y, axis=-1, keepdims=True) * y
    x /= np.linalg.norm(x, axis=-1, keepdims=True)
    z = np.cross(x, y)
    return np.stack([x, y, z], axis=-1)


def arm_hinges(shoulders: Array, elbows: Array, hands: Array) -> Array:
    """Elbow hinge axes ``(..., 3)``, continuous through a straightened arm."""
    raw = np.cross(elbows - shoulders, hands - elbows)
    # A straight arm has no bend plane; fall back to the one a hanging elbow would bend in, whose
    # sign matches ``raw`` for the usual bent arm.
    fallback = np.cross(np.array([0.0, 0.0, -1.0]), hands - shoulders)
    fallback_bad = np.linalg.norm(fallback, axis=-1) < 1e-9
    fallback = np.where(fallback_bad[..., None], np.array([1.0, 0.0, 0.0]), fallback)
    scale = np.linalg.norm(elbows - shoulders, axis=-1) * np.linalg.norm(hands - elbows, axis=-1)
    weak = np.linalg.norm(raw, axis=-1) < 1e-4 * np.maximum(scale, 1e-12)
    return np.where(weak[..., None], fallback, raw)


def arm_pose_quaternions(
    shoulders: ArrayLike,
    elbows: ArrayLike,
    hands: ArrayLike,
    upper_rest: ArrayLike,
    forearm_rest: ArrayLike,
) -> tuple[Array, Array]:
    """Pose-bone quaternions (``(T, 4)``, w first) of the upper arm and forearm.

    Points are ``(T, 3)`` in armature space; ``*_rest`` are the bones' 3x3 rest rotations in armature
    space (Blender's ``bone.matrix_local``); the shoulder bone stays unposed. Blender composes
    ``pose(child) = pose(parent) rest(parent)^-1 rest(child) basis(child)``; solving for each basis
    gives rotations that keep the bone lengths fixed by construction.
    """
    s = np.asarray(shoulders, dtype=np.float64)
    e = np.asarray(elbows, dtype=np.float64)
    h = np.asarray(hands, dtype=np.float64)
    upper_r = np.asarray(upper_rest, dtype=np.float64)
    fore_r = np.asarray(forearm_rest, dtype=np.float64)
    hinge = arm_hinges(s, e, h)
    upper_world = _bone_frames(e - s, hinge)
    fore_world = _bone_frames(h - e, hinge)
    # Upper arm: its parent (the shoulder) is unposed, so pose(upper) = rest(upper) basis.
    upper_basis = upper_r.T @ upper_world
    fore_basis = fore_r.T @ upper_r @ np.swapaxes(upper_world, -1, -2) @ fore_world
    q_upper = continuous_quaternions(matrix_to_quaternion(upper_basis), axis=0)
    q_fore = continuous_quaternions(matrix_to_quaternion(fore_basis), axis=0)
    return q_upper, q_fore
