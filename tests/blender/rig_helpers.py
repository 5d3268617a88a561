"""Rigs to test against: Blender's Rigify (generated once per session, appended per test) and
plain skeletons named like the Rigify metarig, Mixamo or the Unreal mannequin, built in code."""

from __future__ import annotations

import math

import bpy
import numpy as np
from mathutils import Matrix, Vector

#: A 1.75 m adult in a T-pose facing -Y (its left is +X): joint name -> (head, tail), metres.
_LEFT_ARM = {
    "shoulder": ((0.02, 0.0, 1.44), (0.17, 0.0, 1.44)),
    "upper_arm": ((0.17, 0.0, 1.44), (0.45, 0.0, 1.44)),
    "forearm": ((0.45, 0.0, 1.44), (0.71, 0.0, 1.44)),
    "hand": ((0.71, 0.0, 1.44), (0.80, 0.0, 1.44)),
    "thigh": ((0.09, 0.0, 0.95), (0.09, 0.0, 0.52)),
    "shin": ((0.09, 0.0, 0.52), (0.09, 0.0, 0.09)),
    "foot": ((0.09, 0.0, 0.09), (0.09, -0.13, 0.02)),
    "toe": ((0.09, -0.13, 0.02), (0.09, -0.19, 0.0)),
}
_CENTRE = {
    "hips": ((0.0, 0.0, 0.95), (0.0, 0.0, 1.05)),
    "spine": ((0.0, 0.0, 1.05), (0.0, 0.0, 1.22)),
    "chest": ((0.0, 0.0, 1.22), (0.0, 0.0, 1.44)),
    "neck": ((0.0, 0.0, 1.44), (0.0, 0.0, 1.55)),
    "head": ((0.0, 0.0, 1.55), (0.0, 0.0, 1.75)),
}
_PARENTS = {
    "hips": None,
    "spine": "hips",
    "chest": "spine",
    "neck": "chest",
    "head": "neck",
    "shoulder": "chest",
    "upper_arm": "shoulder",
    "forearm": "upper_arm",
    "hand": "forearm",
    "thigh": "hips",
    "shin": "thigh",
    "foot": "shin",
    "toe": "foot",
}
NAMINGS = {
    "metarig": {
        "hips": "spine",
        "spine": "spine.001",
        "chest": "spine.003",
        "neck": "spine.004",
        "head": "spine.006",
        **{f"{p}.{s}": f"{p}.{s}" for p in _LEFT_ARM for s in "LR"},
    },
    "mixamo": {
        "hips": "mixamorig:Hips",
        "spine": "mixamorig:Spine",
        "chest": "mixamorig:Spine2",
        "neck": "mixamorig:Neck",
        "head": "mixamorig:Head",
        **{
            f"{p}.{s}": f"mixamorig:{'Left' if s == 'L' else 'Right'}{m}"
            for p, m in (
                ("shoulder", "Shoulder"),
                ("upper_arm", "Arm"),
                ("forearm", "ForeArm"),
                ("hand", "Hand"),
                ("thigh", "UpLeg"),
                ("shin", "Leg"),
                ("foot", "Foot"),
                ("toe", "ToeBase"),
            )
            for s in "LR"
        },
    },
    "unreal": {
        "hips": "pelvis",
        "spine": "spine_01",
        "chest": "spine_03",
        "neck": "neck_01",
        "head": "head",
        **{
            f"{p}.{s}": f"{m}_{s.lower()}"
            for p, m in (
                ("shoulder", "clavicle"),
                ("upper_arm", "upperarm"),
                ("forearm", "lowerarm"),
                ("hand", "hand"),
                ("thigh", "thigh"),
                ("shin", "calf"),
                ("foot", "foot"),
                ("toe", "ball"),
            )
            for s in "LR"
        },
    },
}


def build_skeleton(
    naming: str,
    name: str = "Character",
    units: float = 1.0,
    facing_y: bool = False,
    object_scale: float = 1.0,
    location=(0.0, 0.0, 0.0),
    roll: float = 0.4,
    arms: bool = True,
) -> bpy.types.Object:
    """A plain deform skeleton with ``naming``'s bone names: ``units`` per metre in the bones,
    turned to face +Y if asked, with uneven bone rolls so nothing can rely on them."""
    names = NAMINGS[naming]
    joints = dict(_CENTRE)
    for part, (head, tail) in _LEFT_ARM.items():
        joints[f"{part}.L"] = (head, tail)
        joints[f"{part}.R"] = ((-head[0], head[1], head[2]), (-tail[0], tail[1], tail[2]))
    data = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, data)
    bpy.context.scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    turn = Matrix.Rotation(math.pi if facing_y else 0.0, 3, "Z")
    for index, (role, (head, tail)) in enumerate(joints.items()):
        part = role.split(".")[0]
        if not arms and part in ("upper_arm", "forearm", "hand"):
            continue
        bone = data.edit_bones.new(names[role])
        bone.head = turn @ Vector(head) * units
        bone.tail = turn @ Vector(tail) * units
        bone.roll = roll * (index % 3 - 1)
    for role in joints:
        part = role.split(".")[0]
        parent_part = _PARENTS[part]
        if names[role] not in data.edit_bones or parent_part is None:
            continue
        parent_role = parent_part if parent_part in _CENTRE else f"{parent_part}.{role[-1]}"
        data.edit_bones[names[role]].parent = data.edit_bones[names[parent_role]]
    bpy.ops.object.mode_set(mode="OBJECT")
    obj.scale = (object_scale,) * 3
    obj.location = location
    bpy.context.view_layer.update()
    return obj


def generate_rigify(path) -> None:
    """Generate Rigify's human rig in an empty file and save it to ``path``."""
    import addon_utils

    bpy.ops.wm.read_homefile(use_empty=True)
    addon_utils.enable("rigify", default_set=True)
    bpy.ops.object.armature_human_metarig_add()
    bpy.ops.pose.rigify_generate()
    bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True)


def append_rigify(path, name: str = "rig", location=(0.0, 0.0, 0.0), yaw: float = 0.0) -> bpy.types.Object:
    """Append the generated control rig from ``path`` into the current scene."""
    with bpy.data.libraries.load(str(path), link=False) as (src, dst):
        dst.objects = ["rig"]
    obj = dst.objects[0]
    obj.name = name
    bpy.context.scene.collection.objects.link(obj)
    obj.location = location
    obj.rotation_euler = (0.0, 0.0, yaw)
    bpy.context.view_layer.update()
    return obj


def world_matrix(obj, bone: str) -> np.ndarray:
    return np.array(obj.matrix_world @ obj.pose.bones[bone].matrix)


def fcurve_snapshot(obj, fcurves_of) -> dict:
    """Every F-curve's keys of ``obj``: (data path, index) -> list of (frame, value)."""
    return {
        (fc.data_path, fc.array_index): [tuple(k.co) for k in fc.keyframe_points] for fc in fcurves_of(obj)
    }
