"""IK sidebar: the new-arm settings, the active armature's stored bake settings, and the edge
measuring tool."""

from __future__ import annotations

import bpy
from bpy.props import IntProperty, PointerProperty, StringProperty

from ..operators.ik import add_arm_properties, solver_properties
from .common import GeneratorPanel, copy_settings, draw_presets, preset_menu


class IKSettings(bpy.types.PropertyGroup):
    """Sidebar settings for a new IK arm and the way it is baked."""

    __annotations__ = {**add_arm_properties(), **solver_properties()}


class IKObjectSettings(bpy.types.PropertyGroup):
    """The IK chain stored on an armature, so Bake IK needs no further settings."""

    tip_bone: StringProperty(
        name="Tip Bone", description="Last bone of the chain; its tail reaches the target"
    )
    chain_length: IntProperty(
        name="Chain Length",
        description="Number of bones from the tip bone up through its parents (0: up to the root)",
        default=0,
        min=0,
        max=255,
    )
    target: PointerProperty(
        type=bpy.types.Object, name="Target", description="Object the chain's tip reaches for"
    )
    direction_target: PointerProperty(
        type=bpy.types.Object,
        name="Direction",
        description="Optional object whose Z axis the last bone points along (5-DoF)",
    )
    __annotations__.update(solver_properties())


IKPresetMenu = preset_menu("ik", "IK Presets")


class PROCANIM_PT_ik(GeneratorPanel, bpy.types.Panel):
    """Rig an arm and bake CCD / FABRIK IK onto it"""

    bl_label = "IK Arms"

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        settings = context.scene.procanim.ik
        draw_presets(layout, IKPresetMenu)
        layout.use_property_split = True
        column = layout.column(align=True)
        column.prop(settings, "bone_count")
        column.prop(settings, "bone_length")
        column.prop(settings, "length_falloff")
        layout.prop(settings, "joint_type")
        layout.prop(settings, "limit_angle")
        layout.prop(settings, "use_direction")
        row = layout.row(align=True)
        row.prop(settings, "animate_target")
        row.prop(settings, "frame_count")
        layout.prop(settings, "solver")
        copy_settings(settings, layout.operator("procanim.add_ik_arm", icon="BONE_DATA"))


class PROCANIM_PT_ik_bake(GeneratorPanel, bpy.types.Panel):
    """The active armature's IK chain and the bake"""

    bl_label = "Bake"
    bl_parent_id = "PROCANIM_PT_ik"
    bl_options = set()

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        armature = context.active_object
        if armature is None or armature.type != "ARMATURE":
            layout.label(text="Select an armature to bake its IK", icon="INFO")
            return
        settings = armature.procanim.ik
        layout.use_property_split = True
        layout.prop_search(settings, "tip_bone", armature.data, "bones")
        layout.prop(settings, "chain_length")
        layout.prop(settings, "target")
        layout.prop(settings, "direction_target")
        layout.prop(settings, "solver")
        layout.prop(settings, "tolerance")
        layout.prop(settings, "iterations_per_frame")
        row = layout.row()
        row.active = settings.solver == "CCD"
        row.prop(settings, "annealing")
        layout.operator("procanim.bake_ik", icon="ACTION")


class PROCANIM_PT_ik_measure(GeneratorPanel, bpy.types.Panel):
    """Geometry tool sharing the IK core's maths"""

    bl_label = "Measure Edges"
    bl_parent_id = "PROCANIM_PT_ik"

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        layout.label(text="Select two edges of a mesh")
        layout.operator("procanim.closest_edge_points", icon="DRIVER_DISTANCE")


SCENE_SETTINGS = ("ik", IKSettings)
OBJECT_SETTINGS = ("ik", IKObjectSettings)
classes = (
    IKSettings,
    IKObjectSettings,
    IKPresetMenu,
    PROCANIM_PT_ik,
    PROCANIM_PT_ik_bake,
    PROCANIM_PT_ik_measure,
)
