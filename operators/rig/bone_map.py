"""Read a user's rig: its stored bone map, detection, and its rest pose measured in world space."""

from __future__ import annotations

from dataclasses import dataclass

import bpy
import numpy as np

from ...addon.rig import (
    REQUIRED_ARM_ROLES,
    ROLES,
    BoneMap,
    BoneRest,
    RigError,
    RigMeasure,
    detect_bone_map,
    measure_rig,
)


def role_attribute(role: str) -> str:
    """The settings attribute of a role: ``upper_arm.L`` -> ``upper_arm_l``."""
    return role.replace(".", "_").lower()


@dataclass
class Rig:
    """A user's armature, its bone map and its rest-pose measurements (world space)."""

    obj: bpy.types.Object
    bone_map: BoneMap
    measure: RigMeasure


def stored_overrides(obj: bpy.types.Object) -> dict[str, str]:
    settings = getattr(getattr(obj, "procanim", None), "bone_map", None)
    if settings is None:
        return {}
    return {role: getattr(settings, role_attribute(role)) for role in ROLES}


def armature_by_name(name: str) -> bpy.types.Object:
    obj = bpy.data.objects.get(name)
    if obj is None:
        raise RigError(f"no object named {name!r} to animate")
    if obj.type != "ARMATURE":
        raise RigError(f"{name!r} is a {obj.type.lower()}, not an armature")
    return obj


def rig_names(text: str) -> list[str]:
    """``"A, B"`` -> ``["A", "B"]`` (a comma-separated list of rigs, one per juggler)."""
    return [part.strip() for part in text.split(",") if part.strip()]


def bone_map_of(obj: bpy.types.Object) -> BoneMap:
    return detect_bone_map([b.name for b in obj.data.bones], stored_overrides(obj))


def world_rest(obj: bpy.types.Object, names) -> dict[str, BoneRest]:
    world = obj.matrix_world
    out = {}
    for name in names:
        bone = obj.data.bones[name]
        m = world @ bone.matrix_local
        out[name] = BoneRest.of(world @ bone.head_local, world @ bone.tail_local, np.array(m.to_3x3()))
    return out


def read_rig(obj: bpy.types.Object, scene: bpy.types.Scene, required=REQUIRED_ARM_ROLES, what="arms") -> Rig:
    """Map and measure ``obj``; raises :class:`RigError` naming the missing roles."""
    bone_map = bone_map_of(obj)
    bone_map.require(required, what, repr(obj.name))
    scale = np.array(obj.matrix_world.to_scale())
    if np.ptp(scale) > 1e-4 * np.max(np.abs(scale)):
        shown = tuple(round(float(s), 4) for s in scale)
        raise RigError(f"{obj.name!r} is scaled unevenly {shown}: apply its scale first")
    measure = measure_rig(
        world_rest(obj, set(bone_map.bones.values())),
        bone_map,
        scale_length=scene.unit_settings.scale_length,
        origin_z=float(obj.matrix_world.translation.z),
        name=repr(obj.name),
    )
    return Rig(obj, bone_map, measure)


# ------------------------------------------------------------------------------------- writing
