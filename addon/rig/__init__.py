"""Drive a user's humanoid rig: which bone is which (bone map), how the rig is built (rest-pose
measurements) and the arm poses that put its palms where a generator wants them. No bpy here.

Scripting API::

    from addon.rig import detect_bone_map, measure_rig, BoneRest, solve_arm
    bone_map = detect_bone_map(names)          # Rigify, metarig, Mixamo, Unreal or ProcAnim names
    rig = measure_rig({name: BoneRest.of(head, tail, rotation) ...}, bone_map)
    rig.body(), rig.plan_to_world(points), rig.units_per_metre
"""

from .arms import ArmPose, local_rotations, pole_positions, rotation_keys, solve_arm
from .bone_map import (
    ARM_ROLES,
    CONVENTION_LABELS,
    CONVENTIONS,
    LEG_ROLES,
    REQUIRED_ARM_ROLES,
    REQUIRED_LEG_ROLES,
    ROLE_LABELS,
    ROLES,
    BoneMap,
    detect_bone_map,
    rigify_controls,
)
from .errors import RigError
from .measure import BoneRest, RigMeasure, measure_rig, units_per_metre

__all__ = [
    "ARM_ROLES",
    "CONVENTIONS",
    "CONVENTION_LABELS",
    "LEG_ROLES",
    "REQUIRED_ARM_ROLES",
    "REQUIRED_LEG_ROLES",
    "ROLES",
    "ROLE_LABELS",
    "ArmPose",
    "BoneMap",
    "BoneRest",
    "RigError",
    "RigMeasure",
    "detect_bone_map",
    "local_rotations",
    "measure_rig",
    "pole_positions",
    "rigify_controls",
    "rotation_keys",
    "solve_arm",
    "units_per_metre",
]
