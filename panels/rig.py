"""Rig sub-panel: the active armature's bone map (which bone plays which role), editable per role."""

from __future__ import annotations

import bpy
from bpy.props import StringProperty

from ..addon.rig import CONVENTION_LABELS, ROLE_LABELS, ROLES
from ..operators.rig import bone_map_of, role_attribute
from .common import GeneratorPanel


def _role_property(role: str) -> StringProperty:
    return StringProperty(
        name=ROLE_LABELS[role],
        description=f"Bone that plays the {ROLE_LABELS[role].lower()} when ProcAnim drives this rig; "
        "empty: detected from the bone names",
        default="",
    )


class BoneMapSettings(bpy.types.PropertyGroup):
    """Which bone of this armature plays which body role for ProcAnim's generators"""

    __annotations__ = {
        "convention": StringProperty(
            name="Convention", description="Naming convention found by the last detection", default=""
        ),
        **{role_attribute(role): _role_property(role) for role in ROLES},
    }


_GROUPS = (
    ("Body", ("hips", "spine", "chest", "neck", "head")),
    ("Left Arm", ("shoulder.L", "upper_arm.L", "forearm.L", "hand.L")),
    ("Right Arm", ("shoulder.R", "upper_arm.R", "forearm.R", "hand.R")),
    ("Left Leg", ("thigh.L", "shin.L", "foot.L", "toe.L")),
    ("Right Leg", ("thigh.R", "shin.R", "foot.R", "toe.R")),
)


class PROCANIM_PT_rig(GeneratorPanel, bpy.types.Panel):
    """Your own character: the bone map ProcAnim uses to drive the active armature"""

    bl_label = "Your Rig"
    bl_idname = "PROCANIM_PT_rig"

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        obj = context.active_object
        if obj is None or obj.type != "ARMATURE":
            layout.label(text="Select your character's armature", icon="INFO")
            return
        settings = obj.procanim.bone_map
        try:
            detected = bone_map_of(obj)
        except Exception as error:  # a stored bone that was renamed or deleted
            layout.label(text=str(error), icon="ERROR")
            detected = None
        row = layout.row()
        label = CONVENTION_LABELS.get(detected.convention if detected else "", "Custom")
        row.label(
            text=f"{label}: {len(detected.bones) if detected else 0} of {len(ROLES)} roles",
            icon="ARMATURE_DATA",
        )
        row.operator("procanim.detect_bone_map", text="", icon="VIEWZOOM")
        for title, roles in _GROUPS:
            box = layout.box()
            box.label(text=title)
            column = box.column(align=True)
            for role in roles:
                found = detected.bones.get(role) if detected else None
                attribute = role_attribute(role)
                column.prop_search(
                    settings,
                    attribute,
                    obj.data,
                    "bones",
                    text=ROLE_LABELS[role].split(" ")[0] if title != "Body" else ROLE_LABELS[role],
                    icon="BONE_DATA" if found else "ERROR",
                )
                if found and not getattr(settings, attribute):
                    column.label(text=f"   detected: {found}")


SCENE_SETTINGS = None
OBJECT_SETTINGS = ("bone_map", BoneMapSettings)
classes = (BoneMapSettings, PROCANIM_PT_rig)
