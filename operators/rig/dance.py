"""Retarget the dancer onto a user's rig: legs and hips (and arms when mapped), plain or Rigify."""

from __future__ import annotations

import bpy
import numpy as np

from ...addon.rig import (
    BoneMap,
    RigError,
    local_rotations,
    pole_positions,
)
from ...addon.rig.bone_map import SIDES
from .. import writers
from .bone_map import Rig, bone_map_of, read_rig, world_rest
from .juggle import _rigify_limb_in_ik
from .keys import (
    _np,
    _object_rotation,
    _pose_to_local,
    _pose_to_local_per_frame,
    _reaim_per_frame,
    _to_armature,
    write_rotation_keys,
)

# ------------------------------------------------------------------------------------ dancer

#: Rigify's leg controls per side: IK foot, knee pole, the limb's property bone and the IK bones.
RIGIFY_LEG_CONTROLS = (
    "foot_ik.{side}",
    "thigh_ik_target.{side}",
    "thigh_parent.{side}",
    "thigh_ik.{side}",
    "MCH-shin_ik.{side}",
)


def read_dancer_rig(obj: bpy.types.Object, scene: bpy.types.Scene) -> Rig:
    """Map and measure ``obj`` for the dancer: it needs hips and both legs (arms are optional)."""
    from ...addon.rig import REQUIRED_LEG_ROLES

    bone_map = bone_map_of(obj)
    bone_map.require(("hips", *REQUIRED_LEG_ROLES), "hips and legs", repr(obj.name))
    return read_rig(obj, scene)


def dancer_body(rig: Rig) -> dict:
    """The simulated dancer's body for ``rig``: its height, a mass of BMI 21, the female table."""
    height = rig.measure.height / rig.measure.units_per_metre
    if not 1.1 <= height <= 2.3:
        raise RigError(f"{rig.obj.name!r} is {height:.2f} m tall; the dancer simulates 1.1 to 2.3 m bodies")
    return {"height": height, "mass": 21.0 * height**2, "sex": "female"}


def _nearest_mapped_parent(obj: bpy.types.Object, bone_map: BoneMap, bone: str) -> str | None:
    by_bone = {b: r for r, b in bone_map.bones.items()}
    parent = obj.data.bones[bone].parent
    while parent is not None:
        if parent.name in by_bone:
            return parent.name
        parent = parent.parent
    return None


def _controls(names, templates, side) -> dict[str, str] | None:
    keys = ("ik", "pole", "parent", "upper_ik", "lower_ik")
    found = {k: t.format(side=side) for k, t in zip(keys, templates, strict=True)}
    return found if all(v in names for v in found.values()) else None


def _key_ik_limb(
    obj,
    controls,
    end_bone: str,
    frames,
    ends,
    end_rotations,
    roots,
    middles,
    pole_distance,
    object_rotation,
    interpolation,
    middle_bone: str | None = None,
) -> list:
    """Key a Rigify limb's IK control so ``end_bone`` (DEF-hand / DEF-foot) gets the world
    ``ends`` / ``end_rotations``, and its pole so the middle joint bends towards ``middles``.

    With ``middle_bone`` (the deform shin / forearm) the pole is calibrated: the rig's pole angle
    may swing the bend plane off the pole, so the plane is measured where the limb bends most and
    every pole turned about its limb by the difference."""
    bones = obj.data.bones
    count = len(frames)
    written = _rigify_limb_in_ik(obj, controls, "lower_ik", frames)
    offset = np.linalg.inv(_np(bones[end_bone].matrix_local)) @ _np(bones[controls["ik"]].matrix_local)
    desired = np.zeros((count, 4, 4))
    desired[:, :3, :3] = object_rotation.T @ end_rotations
    desired[:, :3, 3] = _to_armature(obj, ends)
    desired[:, 3, 3] = 1.0
    basis = _pose_to_local(obj, controls["ik"], desired @ offset)
    written += writers.write_channels(
        obj,
        writers.pose_bone_path(controls["ik"], "location"),
        frames,
        basis[:, :3, 3],
        controls["ik"],
        interpolation,
        keep_outside=True,
    )
    rotation = basis[:, :3, :3] / np.linalg.norm(basis[:, :3, :3], axis=1, keepdims=True)
    written += write_rotation_keys(obj, controls["ik"], frames, rotation, interpolation)
    poles = pole_positions(roots, middles, ends, pole_distance)
    pole_matrices = np.broadcast_to(_np(obj.pose.bones[controls["pole"]].matrix), (count, 4, 4)).copy()
    pole_path = writers.pose_bone_path(controls["pole"], "location")

    def write_poles(points: np.ndarray) -> list:
        pole_matrices[:, :3, 3] = _to_armature(obj, points)
        local = _pose_to_local(obj, controls["pole"], pole_matrices)[:, :3, 3]
        return writers.write_channels(
            obj, pole_path, frames, local, controls["pole"], interpolation, keep_outside=True
        )

    written += write_poles(poles)
    if middle_bone is not None:
        axis = ends - roots
        axis /= np.linalg.norm(axis, axis=1, keepdims=True)
        offsets = middles - roots
        bends = np.linalg.norm(offsets - np.sum(offsets * axis, axis=1, keepdims=True) * axis, axis=1)
        index = int(np.argmax(bends))
        if bends[index] > 0.05 * pole_distance:
            for _ in range(2):
                bpy.context.scene.frame_set(int(frames[index]))
                actual = np.array(obj.matrix_world @ obj.pose.bones[middle_bone].head)
                angle = _angle_about(axis[index], actual - roots[index], middles[index] - roots[index])
                if abs(angle) < 1e-3:
                    break
                poles = roots + _rotate_about(axis, angle, poles - roots)
                write_poles(poles)
    return written


def _angle_about(axis: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """Signed angle (radians) from ``a`` to ``b`` about unit ``axis``, both projected off it."""
    a = a - np.dot(a, axis) * axis
    b = b - np.dot(b, axis) * axis
    return float(np.arctan2(np.dot(np.cross(a, b), axis), np.dot(a, b)))


def _rotate_about(axes: np.ndarray, angle: float, vectors: np.ndarray) -> np.ndarray:
    """Rodrigues: ``vectors`` ``(T, 3)`` turned by ``angle`` about unit ``axes`` ``(T, 3)``."""
    c, s = np.cos(angle), np.sin(angle)
    dot = np.sum(axes * vectors, axis=1, keepdims=True)
    return vectors * c + np.cross(axes, vectors) * s + axes * dot * (1 - c)


def dancer_masses(model) -> dict:
    """Body -> (mass, centre of mass relative to its joint) of a dancer model."""
    return {b.name: (b.mass, np.subtract(b.com, b.origin)) for b in model.bodies}


def retarget_dancer(
    rig: Rig,
    performance,
    model,
    frames: np.ndarray,
    samples: np.ndarray,
    interpolation: str = "LINEAR",
):
    """Key ``rig`` so it dances ``performance`` (sampled at ``samples`` for ``frames``); returns the
    :class:`Retargeted` world poses that were keyed."""
    from dataclasses import replace

    from ...addon.dancer.rig import skeleton
    from ...addon.rig.retarget import dancer_rest, retarget

    obj = rig.obj
    bpy.context.view_layer.update()
    sampled = replace(
        performance,
        rotations={k: v[samples] for k, v in performance.rotations.items()},
        root_positions=performance.root_positions[samples],
        joint_positions={k: v[samples] for k, v in performance.joint_positions.items()},
        in_contact=performance.in_contact[samples],
    )
    bones = world_rest(obj, set(rig.bone_map.bones.values()))
    pose = retarget(
        sampled,
        dancer_rest(performance, skeleton(model)),
        bones,
        rig.bone_map,
        rig.measure,
        dancer_masses(model),
    )
    object_rotation = _object_rotation(obj)
    names = {b.name for b in obj.data.bones}
    if rig.bone_map.is_rigify and "torso" in names:
        _key_rigify_dancer(rig, pose, frames, object_rotation, names, interpolation)
    else:
        _key_plain_dancer(rig, pose, frames, object_rotation, interpolation)
    return pose


def _key_plain_dancer(rig: Rig, pose, frames, object_rotation, interpolation) -> None:
    obj = rig.obj
    bones = obj.data.bones
    count = len(frames)
    by_role = rig.bone_map.bones
    armature_pose = {by_role[r]: object_rotation.T @ w for r, w in pose.rotations.items()}

    def rest(name: str) -> np.ndarray:
        return np.broadcast_to(_np(bones[name].matrix_local.to_3x3()), (count, 3, 3))

    for name in by_role.values():
        if name not in armature_pose:
            continue
        parent = _nearest_mapped_parent(obj, rig.bone_map, name)
        if parent is None or parent not in armature_pose:
            rest_parent = pose_parent = np.broadcast_to(np.eye(3), (count, 3, 3))
        else:
            rest_parent, pose_parent = rest(parent), armature_pose[parent]
        basis = local_rotations(rest_parent, pose_parent, rest(name), armature_pose[name])
        write_rotation_keys(obj, name, frames, basis, interpolation)
    hips = by_role["hips"]
    desired = np.zeros((count, 4, 4))
    desired[:, :3, :3] = armature_pose[hips]
    desired[:, :3, 3] = _to_armature(obj, pose.heads["hips"])
    desired[:, 3, 3] = 1.0
    basis = np.linalg.inv(_np(bones[hips].matrix_local)) @ desired
    writers.write_pose_locations(obj, hips, frames, basis[:, :3, 3], interpolation, keep_outside=True)


def _key_rigify_dancer(rig: Rig, pose, frames, object_rotation, names, interpolation) -> None:
    obj = rig.obj
    bones = obj.data.bones
    count = len(frames)
    by_role = rig.bone_map.bones
    # The torso control carries the hips: where they are and how they turn.
    hips = by_role["hips"]
    turn = pose.rotations["hips"] @ np.array(rig_rest_rotation(obj, hips)).T
    torso_rest = _np(obj.matrix_world @ bones["torso"].matrix_local)
    desired_world = np.zeros((count, 4, 4))
    desired_world[:, :3, :3] = turn @ (torso_rest[:3, :3] / np.linalg.norm(torso_rest[:3, :3], axis=0))
    hips_rest_head = np.array(obj.matrix_world @ bones[hips].head_local)
    torso_offset = torso_rest[:3, 3] - hips_rest_head
    desired_world[:, :3, 3] = pose.heads["hips"] + np.einsum("tij,j->ti", turn, torso_offset)
    desired = np.zeros_like(desired_world)
    desired[:, :3, :3] = object_rotation.T @ desired_world[:, :3, :3]
    desired[:, :3, 3] = _to_armature(obj, desired_world[:, :3, 3])
    desired[:, 3, 3] = 1.0
    basis = _pose_to_local(obj, "torso", desired)
    writers.write_channels(
        obj,
        writers.pose_bone_path("torso", "location"),
        frames,
        basis[:, :3, 3],
        "torso",
        interpolation,
        keep_outside=True,
    )
    rotation = basis[:, :3, :3] / np.linalg.norm(basis[:, :3, :3], axis=1, keepdims=True)
    write_rotation_keys(obj, "torso", frames, rotation, interpolation)
    torso_pose = desired[:, :3, :3]

    def rest3(name: str) -> np.ndarray:
        return np.broadcast_to(_np(bones[name].matrix_local.to_3x3()), (count, 3, 3))

    def control_pose(role: str, control: str) -> np.ndarray:
        """Armature-space rotation of ``control`` that gives the role's deform bone its turn."""
        deform = by_role[role]
        offset = _np(bones[deform].matrix_local.to_3x3()).T @ _np(bones[control].matrix_local.to_3x3())
        return object_rotation.T @ pose.rotations[role] @ offset

    # The chest control turns the upper body about its pivot: aim it so the neck goes where the
    # dancer's does (that is where the upper body's weight goes), twisted as the dancer's chest.
    if (
        "chest" in names
        and "chest" in pose.rotations
        and bones["chest"].parent is not None
        and bones["chest"].parent.name == "torso"
    ):
        from ...addon.rig.retarget import _minimal_rotations

        chest_rest = rig_rest_rotation(obj, by_role["chest"])
        chest_turn = pose.rotations["chest"] @ chest_rest.T
        world = _np(obj.matrix_world)
        pivot_rest = world[:3, :3] @ np.array(bones["chest"].head_local) + world[:3, 3]
        pivot = desired_world[:, :3, 3] + np.einsum("tij,j->ti", turn, pivot_rest - torso_rest[:3, 3])
        neck_role = "neck" if "neck" in pose.heads else None
        if neck_role is not None:
            neck_rest = np.array(obj.matrix_world @ bones[by_role["neck"]].head_local)
            aim = _minimal_rotations(
                np.einsum("tij,j->ti", chest_turn, neck_rest - pivot_rest), pose.heads["neck"] - pivot
            )
            chest_turn = aim @ chest_turn
        offset = _np(bones[by_role["chest"]].matrix_local.to_3x3()).T @ _np(
            bones["chest"].matrix_local.to_3x3()
        )
        wanted = object_rotation.T @ chest_turn @ chest_rest @ offset
        basis = local_rotations(rest3("torso"), torso_pose, rest3("chest"), wanted)
        write_rotation_keys(obj, "chest", frames, basis, interpolation)
        if neck_role is not None:
            # Rigify spreads the chest's turn over the spine: check the neck where the rig really
            # puts it and re-aim, twice (each pass takes it about ten times closer).
            for _ in range(2):
                basis = _reaim_per_frame(obj, "chest", by_role["neck"], frames, pose.heads["neck"])
                write_rotation_keys(obj, "chest", frames, basis, interpolation)
    for side in SIDES:
        legs = _controls(names, RIGIFY_LEG_CONTROLS, side)
        if legs is not None:
            thigh, shin, foot = (f"{p}.{side}" for p in ("thigh", "shin", "foot"))
            length = float(np.linalg.norm(pose.heads[shin][0] - pose.heads[thigh][0]))
            _key_ik_limb(
                obj,
                legs,
                by_role[foot],
                frames,
                pose.heads[foot],
                pose.rotations[foot],
                pose.heads[thigh],
                pose.heads[shin],
                length,
                object_rotation,
                interpolation,
                by_role[shin],
            )
            toe_ik = f"toe_ik.{side}"
            if toe_ik in names and f"toe.{side}" in pose.rotations:
                # The toe control hangs under the IK foot through the roll bones, which move every
                # frame: convert frame by frame. The deform toe copies the control's whole transform.
                wanted = np.zeros((count, 4, 4))
                wanted[:, :3, :3] = object_rotation.T @ pose.rotations[f"toe.{side}"]
                wanted[:, 3, 3] = 1.0
                basis = _pose_to_local_per_frame(obj, toe_ik, frames, wanted)
                rotation = basis[:, :3, :3] / np.linalg.norm(basis[:, :3, :3], axis=1, keepdims=True)
                write_rotation_keys(obj, toe_ik, frames, rotation, interpolation)
        arms = _controls(names, RIGIFY_ARM_CONTROLS_DANCE, side)
        upper, fore, hand = (f"{p}.{side}" for p in ("upper_arm", "forearm", "hand"))
        if arms is not None and all(r in pose.heads for r in (upper, fore, hand)):
            length = float(np.linalg.norm(pose.heads[fore][0] - pose.heads[upper][0]))
            _key_ik_limb(
                obj,
                arms,
                by_role[hand],
                frames,
                pose.heads[hand],
                pose.rotations[hand],
                pose.heads[upper],
                pose.heads[fore],
                length,
                object_rotation,
                interpolation,
                by_role[fore],
            )


RIGIFY_ARM_CONTROLS_DANCE = (
    "hand_ik.{side}",
    "upper_arm_ik_target.{side}",
    "upper_arm_parent.{side}",
    "upper_arm_ik.{side}",
    "MCH-forearm_ik.{side}",
)


def rig_rest_rotation(obj: bpy.types.Object, bone: str) -> np.ndarray:
    """A bone's rest rotation in world space (unit columns)."""
    m = _np((obj.matrix_world @ obj.data.bones[bone].matrix_local).to_3x3())
    return m / np.linalg.norm(m, axis=0)
