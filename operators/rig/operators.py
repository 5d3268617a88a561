"""The rig panel's operators: detect a bone map, use the active armature."""

from __future__ import annotations

import bpy
from bpy.props import StringProperty

from ...addon.rig import (
    REQUIRED_ARM_ROLES,
    ROLES,
    RigError,
    detect_bone_map,
)
from .._base import ProcAnimOperator
from .bone_map import role_attribute

# ------------------------------------------------------------------------------------ operators


def _active_armature(context: bpy.types.Context) -> bpy.types.Object | None:
    obj = context.active_object
    return obj if obj is not None and obj.type == "ARMATURE" else None


class _OnActiveArmature:
    """Greyed out, with the reason, until an armature is active."""

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        if _active_armature(context) is None:
            cls.poll_message_set("Select an armature")
            return False
        return True


class PROCANIM_OT_detect_bone_map(_OnActiveArmature, ProcAnimOperator, bpy.types.Operator):
    """Fill the active armature's bone map from its bone names (Rigify, metarig, Mixamo, Unreal or
    ProcAnim's own), replacing the roles set by hand"""

    bl_idname = "procanim.detect_bone_map"
    bl_label = "Detect Bone Map"
    bl_options = {"REGISTER", "UNDO"}

    def run(self, context: bpy.types.Context) -> set[str]:
        obj = _active_armature(context)
        detected = detect_bone_map([b.name for b in obj.data.bones])
        settings = obj.procanim.bone_map
        for role in ROLES:
            setattr(settings, role_attribute(role), detected.bones.get(role, ""))
        settings.convention = detected.convention
        missing = detected.missing(ROLES)
        level = {"WARNING"} if detected.missing(REQUIRED_ARM_ROLES) else {"INFO"}
        found = f"{obj.name}: {detected.convention.title()}, {len(detected.bones)} of {len(ROLES)} roles"
        self.report(level, found + (f"; missing {', '.join(missing)}" if missing else ""))
        return {"FINISHED"}


class PROCANIM_OT_use_active_rig(_OnActiveArmature, ProcAnimOperator, bpy.types.Operator):
    """Animate the active armature (the selected armatures, for passing patterns) instead of
    ProcAnim's own figure"""

    bl_idname = "procanim.use_active_rig"
    bl_label = "Use Active Armature"
    bl_options = {"REGISTER", "UNDO"}

    settings: StringProperty(
        name="Settings",
        description="Which generator's settings to set",
        default="juggling",
        options={"HIDDEN"},
    )

    def run(self, context: bpy.types.Context) -> set[str]:
        active = _active_armature(context)
        others = [o.name for o in context.selected_objects if o.type == "ARMATURE" and o != active]
        group = self.settings if self.settings.isidentifier() else ""
        settings = getattr(context.scene.procanim, group, None)
        if settings is None or not hasattr(settings, "target_rig"):
            raise RigError(f"no generator settings named {self.settings!r} take a target rig")
        settings.target_rig = ", ".join([active.name, *sorted(others)])
        return {"FINISHED"}


classes = (PROCANIM_OT_detect_bone_map, PROCANIM_OT_use_active_rig)
