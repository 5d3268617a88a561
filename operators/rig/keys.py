"""Write a rig's keys: pose-space rotations to bone-local keys, re-aiming, cyclic curves."""

from __future__ import annotations

import bpy
import numpy as np
from mathutils import Matrix

from ...addon.rig import (
    rotation_keys,
)
from .. import writers


def _np(matrix: Matrix) -> np.ndarray:
    return np.array(matrix, dtype=np.float64)


def write_rotation_keys(
    obj: bpy.types.Object, bone: str, frames: np.ndarray, bases: np.ndarray, interpolation: str
) -> list[bpy.types.FCurve]:
    """Key a pose bone's rotation basis ``(T, 3, 3)`` in the bone's own rotation mode."""
    pose_bone = obj.pose.bones[bone]
    mode = pose_bone.rotation_mode
    if mode == "QUATERNION":
        values, prop = rotation_keys(bases), "rotation_quaternion"
    elif mode == "AXIS_ANGLE":
        q = rotation_keys(bases)
        half = np.arccos(np.clip(q[:, 0], -1.0, 1.0))
        axis = q[:, 1:] / np.maximum(np.sin(half), 1e-12)[:, None]
        axis[np.sin(half) < 1e-9] = (0.0, 1.0, 0.0)
        values, prop = np.concatenate([2 * half[:, None], axis], axis=1), "rotation_axis_angle"
    else:
        eulers, previous = [], None
        for m in bases:
            e = Matrix(m.tolist()).to_euler(mode, previous) if previous else Matrix(m.tolist()).to_euler(mode)
            eulers.append(tuple(e))
            previous = e
        values, prop = np.array(eulers), "rotation_euler"
    return writers.write_channels(
        obj, writers.pose_bone_path(bone, prop), frames, values, bone, interpolation, keep_outside=True
    )


def _pose_to_local(obj: bpy.types.Object, bone: str, matrices: np.ndarray) -> np.ndarray:
    """Armature-space pose matrices ``(T, 4, 4)`` of ``bone`` -> its keyable basis matrices, through
    Blender's own conversion (it knows the bone's parent, local-location and inherit flags); the
    parents' current pose is used, constant while they are not animated."""
    pose_bone = obj.pose.bones[bone]
    return np.array(
        [
            _np(
                obj.convert_space(
                    pose_bone=pose_bone, matrix=Matrix(m.tolist()), from_space="POSE", to_space="LOCAL"
                )
            )
            for m in matrices
        ]
    )


def _pose_to_local_per_frame(obj: bpy.types.Object, bone: str, frames, rotations: np.ndarray) -> np.ndarray:
    """Like :func:`_pose_to_local` for a bone whose parents are animated: the scene is evaluated at
    every frame (only the rotation of ``rotations`` is used; the bone's location stays)."""
    scene = bpy.context.scene
    pose_bone = obj.pose.bones[bone]
    out = []
    for frame, wanted in zip(frames, rotations, strict=True):
        scene.frame_set(int(frame))
        m = _np(pose_bone.matrix)
        m[:3, :3] = wanted[:3, :3] * np.linalg.norm(m[:3, :3], axis=0)
        out.append(
            _np(
                obj.convert_space(
                    pose_bone=pose_bone, matrix=Matrix(m.tolist()), from_space="POSE", to_space="LOCAL"
                )
            )
        )
    return np.array(out)


def _reaim_per_frame(obj: bpy.types.Object, control: str, follower: str, frames, wanted: np.ndarray):
    """New rotation bases of ``control`` that turn it about its head so that ``follower``'s head
    (world) moves to ``wanted`` ``(T, 3)``; evaluated frame by frame."""
    from ...addon.rig.retarget import _minimal_rotation

    scene = bpy.context.scene
    pose_bone = obj.pose.bones[control]
    world = _np(obj.matrix_world)
    inverse = np.linalg.inv(world)
    out = []
    for frame, target in zip(frames, wanted, strict=True):
        scene.frame_set(int(frame))
        m = _np(pose_bone.matrix)
        pivot = world[:3, :3] @ m[:3, 3] + world[:3, 3]
        actual = np.array(obj.matrix_world @ obj.pose.bones[follower].head)
        turn = _minimal_rotation(actual - pivot, target - pivot)
        local_turn = inverse[:3, :3] @ turn @ world[:3, :3]
        local_turn /= np.linalg.norm(local_turn, axis=0)
        m[:3, :3] = local_turn @ m[:3, :3]
        basis = _np(
            obj.convert_space(
                pose_bone=pose_bone, matrix=Matrix(m.tolist()), from_space="POSE", to_space="LOCAL"
            )
        )
        out.append(basis[:3, :3] / np.linalg.norm(basis[:3, :3], axis=0))
    return np.array(out)


def _to_armature(obj: bpy.types.Object, points: np.ndarray) -> np.ndarray:
    inverse = np.linalg.inv(_np(obj.matrix_world))
    return points @ inverse[:3, :3].T + inverse[:3, 3]


def _object_rotation(obj: bpy.types.Object) -> np.ndarray:
    return _np(obj.matrix_world.to_3x3().normalized())


def _cycle(curves: list[bpy.types.FCurve]) -> None:
    for fcurve in curves:
        if not any(m.type == "CYCLES" for m in fcurve.modifiers):
            fcurve.modifiers.new("CYCLES")
