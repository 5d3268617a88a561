"""IK chains on a mapped rig: a limb's chain and switching a Rigify limb to FK."""

from __future__ import annotations

import bpy
import numpy as np

from ...addon.rig import (
    RigError,
)
from .. import writers
from .bone_map import bone_map_of

LIMB_ITEMS = (
    ("NONE", "Tip Bone", "The chain ends at the tip bone and is as long as Chain Length says"),
    ("ARM_L", "Left Arm", "Upper arm and forearm of the bone map's left arm; the wrist reaches"),
    ("ARM_R", "Right Arm", "Upper arm and forearm of the bone map's right arm; the wrist reaches"),
    ("LEG_L", "Left Leg", "Thigh and shin of the bone map's left leg; the ankle reaches"),
    ("LEG_R", "Right Leg", "Thigh and shin of the bone map's right leg; the ankle reaches"),
)


def limb_chain(obj: bpy.types.Object, limb: str) -> tuple[str, int]:
    """``(tip bone, chain length)`` of a limb picked by role. On a Rigify control rig the FK
    controls (``upper_arm_fk.L``, ``forearm_fk.L``, ...): its deform bones follow constraints."""
    side = limb[-1]
    upper_part, lower_part = ("upper_arm", "forearm") if limb.startswith("ARM") else ("thigh", "shin")
    bone_map = bone_map_of(obj)
    names = obj.data.bones
    rigify = (f"{upper_part}_fk.{side}", f"{lower_part}_fk.{side}")
    if bone_map.is_rigify and all(n in names for n in rigify):
        upper, tip = rigify
    else:
        roles = (f"{upper_part}.{side}", f"{lower_part}.{side}")
        what = "left" if side == "L" else "right"
        bone_map.require(roles, f"{what} {'arm' if limb.startswith('ARM') else 'leg'}", repr(obj.name))
        upper, tip = (bone_map.bones[r] for r in roles)
    length, bone = 1, names[tip]
    while bone.name != upper:
        bone = bone.parent
        if bone is None:
            raise RigError(f"{tip!r} does not hang under {upper!r} in {obj.name!r}: fix the bone map")
        length += 1
    return tip, length


def use_fk_for_limb(obj: bpy.types.Object, limb: str, frames: np.ndarray) -> list:
    """On a Rigify rig, switch the limb baked by :func:`limb_chain` to FK (``IK_FK`` = 1, keyed over
    ``frames``) so its FK controls' keys show; other rigs are left alone."""
    side = limb[-1]
    holder = f"{'upper_arm' if limb.startswith('ARM') else 'thigh'}_parent.{side}"
    if not bone_map_of(obj).is_rigify or holder not in obj.pose.bones:
        return []
    pose_bone = obj.pose.bones[holder]
    if "IK_FK" not in pose_bone.keys():
        return []
    pose_bone["IK_FK"] = 1.0
    path = f'pose.bones["{bpy.utils.escape_identifier(holder)}"]["IK_FK"]'
    span = np.asarray(frames, dtype=np.float64)[[0, -1]]
    return writers.write_channels(obj, path, span, np.ones(2), holder, "CONSTANT", keep_outside=True)
