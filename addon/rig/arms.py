"""Put a rig's palms on a path: hand orientation, wrist, elbow and the arm bones' rotations.

World space, rig units. A palm target is where a held prop sits (the planner's hand point); the
hand is turned palm-up with its fingers pointing away from the shoulder, the wrist follows from the
palm's offset in the hand, and the shared two-bone solver places the elbow. Bone rotations are the
rest rotations turned by the change of each segment's frame (its direction and the elbow's hinge),
so they respect whatever rest pose and bone rolls the rig has.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..geometry.rotation import matrix_to_quaternion
from ..juggling.body import arm_hinges, continuous_quaternions
from ..kinematics import elbow_positions
from .measure import UP, ArmRest

Array = NDArray[np.float64]


@dataclass(frozen=True)
class ArmPose:
    """Per sample ``(T, ...)``: joints and the world rotations of the three arm bones."""

    wrists: Array
    elbows: Array
    upper_rotations: Array
    forearm_rotations: Array
    hand_rotations: Array
    reachable: NDArray[np.bool_]


def frames(y_axis: ArrayLike, x_hint: ArrayLike) -> Array:
    """Right-handed rotations ``(..., 3, 3)`` whose Y column is ``y_axis`` and whose X column is
    ``x_hint`` made perpendicular to it."""
    y = np.asarray(y_axis, dtype=np.float64)
    y = y / np.linalg.norm(y, axis=-1, keepdims=True)
    x = np.asarray(x_hint, dtype=np.float64)
    x = x - np.sum(x * y, axis=-1, keepdims=True) * y
    x = x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)
    z = np.cross(x, y)
    return np.stack([x, y, z], axis=-1)


def hand_frames(arm: ArmRest, palms: ArrayLike, forward: ArrayLike) -> Array:
    """Hand-turn rotations ``(T, 3, 3)`` (rest hand -> posed hand): palm up, fingers horizontal and
    pointing from the shoulder towards the palm target (forward where the target is right above or
    below the shoulder)."""
    p = np.asarray(palms, dtype=np.float64)
    finger = p - arm.shoulder
    finger[..., 2] = 0.0
    weak = np.linalg.norm(finger, axis=-1) < 1e-6 * max(arm.upper_length, 1e-12)
    finger = np.where(weak[..., None], np.asarray(forward, dtype=np.float64), finger)
    posed = frames(finger, np.broadcast_to(UP, finger.shape))  # X: palm normal, Y: fingers
    rest = frames(arm.finger, arm.palm_normal)
    return posed @ rest.T


def solve_arm(
    arm: ArmRest,
    palms: ArrayLike,
    forward: ArrayLike,
    outward: ArrayLike,
    chicken_wing: float = 0.0,
) -> ArmPose:
    """Pose one arm so that its palm point is on ``palms`` ``(T, 3)`` (palm up), elbow hanging
    (swung by ``chicken_wing`` radians towards ``outward``)."""
    p = np.asarray(palms, dtype=np.float64)
    turn = hand_frames(arm, p, forward)
    wrists = p - turn @ (arm.palm_point - arm.wrist)
    shoulders = np.broadcast_to(arm.shoulder, wrists.shape)
    elbows, reachable = elbow_positions(
        shoulders,
        wrists,
        arm.upper_length,
        arm.forearm_length,
        chicken_wing,
        down=-UP,
        outward=np.broadcast_to(np.asarray(outward, dtype=np.float64), wrists.shape),
    )
    # Out of reach the solver points the arm at the wrist; the wrist is where the arm ends.
    direction = wrists - elbows
    direction /= np.linalg.norm(direction, axis=-1, keepdims=True)
    wrists = np.where(reachable[..., None], wrists, elbows + arm.forearm_length * direction)
    hinge = arm_hinges(shoulders, elbows, wrists)
    upper_rest = frames(arm.elbow - arm.shoulder, arm.hinge)
    fore_rest = frames(arm.wrist - arm.elbow, arm.hinge)
    upper_turn = frames(elbows - shoulders, hinge) @ upper_rest.T
    fore_turn = frames(wrists - elbows, hinge) @ fore_rest.T
    return ArmPose(
        wrists=wrists,
        elbows=elbows,
        upper_rotations=upper_turn @ arm.upper_rotation,
        forearm_rotations=fore_turn @ arm.forearm_rotation,
        hand_rotations=turn @ arm.hand_rotation,
        reachable=reachable,
    )


def pole_positions(shoulders: ArrayLike, elbows: ArrayLike, wrists: ArrayLike, distance: float) -> Array:
    """Pole-target points ``distance`` away from each elbow, in the arm's bend plane, on the side
    the elbow points to (what an IK constraint's pole needs)."""
    s = np.asarray(shoulders, dtype=np.float64)
    e = np.asarray(elbows, dtype=np.float64)
    w = np.asarray(wrists, dtype=np.float64)
    axis = w - s
    axis /= np.maximum(np.linalg.norm(axis, axis=-1, keepdims=True), 1e-12)
    out = (e - s) - np.sum((e - s) * axis, axis=-1, keepdims=True) * axis
    weak = np.linalg.norm(out, axis=-1) < 1e-6 * max(distance, 1e-12)
    # A straight arm has no elbow direction: point the pole down, where a relaxed elbow goes.
    out = np.where(weak[..., None], -UP - np.sum(-UP * axis, axis=-1, keepdims=True) * axis, out)
    out /= np.maximum(np.linalg.norm(out, axis=-1, keepdims=True), 1e-12)
    return e + distance * out


def local_rotations(
    rest_parent: ArrayLike, pose_parent: ArrayLike, rest_child: ArrayLike, pose_child: ArrayLike
) -> Array:
    """A pose bone's rotation basis (``(T, 3, 3)``) that gives it ``pose_child`` under a parent posed
    ``pose_parent``; all rotations in armature space, rests are ``bone.matrix_local``.

    Blender composes ``pose(child) = pose(parent) rest(parent)^-1 rest(child) basis(child)``; bones
    between parent and child (twist bones) are taken as unposed.
    """
    rp = np.asarray(rest_parent, dtype=np.float64)
    pp = np.asarray(pose_parent, dtype=np.float64)
    rc = np.asarray(rest_child, dtype=np.float64)
    pc = np.asarray(pose_child, dtype=np.float64)
    return np.swapaxes(rc, -1, -2) @ rp @ np.swapaxes(pp, -1, -2) @ pc


def rotation_keys(bases: ArrayLike) -> Array:
    """Sign-continuous quaternions ``(T, 4)`` (w first) of rotation bases ``(T, 3, 3)``."""
    return continuous_quaternions(matrix_to_quaternion(bases), axis=0)
