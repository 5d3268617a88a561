"""Sidebar sub-panel of the ballet dancer: body, what to dance, gains, add and bake."""

from __future__ import annotations

import bpy
from bpy.props import CollectionProperty, EnumProperty, FloatProperty, IntProperty

from ..addon.dancer import mujoco_unavailable
from ..operators.dancer import (
    PLOT_IMAGE,
    SIDE_ITEMS,
    STEP_ITEMS,
    DancerBakeProperties,
    DancerBodyProperties,
    step_list_text,
)
from .common import GeneratorPanel, copy_settings, draw_presets, preset_menu


class DancerStep(bpy.types.PropertyGroup):
    """One step of the dancer's step list."""

    step: EnumProperty(name="Step", description="The ballet step (a position first, then steps)",
                       items=STEP_ITEMS, default="WEIGHT_SHIFT")
    side: EnumProperty(name="Working Leg", description="Which leg works (for Weight Shift: which takes "
                       "the weight); Default is the paper's: the left leg supports", items=SIDE_ITEMS,
                       default="DEFAULT")
    duration: FloatProperty(name="Duration", description="Seconds of this step; 0 uses the step's default",
                            default=0.0, min=0.0, max=30.0, unit="TIME_ABSOLUTE")


class DancerSettings(DancerBodyProperties, DancerBakeProperties, bpy.types.PropertyGroup):
    """Sidebar settings of the dancer: its body, the sequence or balance test, and the gains."""

    steps: CollectionProperty(type=DancerStep, name="Steps",
                              description="The step list the dancer performs; empty: the position and "
                              "the ticked steps")
    step_index: IntProperty(name="Selected Step", description="The selected step of the list", default=0,
                            min=0)


class PROCANIM_UL_dancer_steps(bpy.types.UIList):
    """The dancer's steps in order, each with its working leg and duration"""

    def draw_item(self, context, layout, data, item, icon, active_data, active_property, index=0, flt_flag=0):
        row = layout.row(align=True)
        row.label(text=f"{index + 1}.")
        row.prop(item, "step", text="")
        row.prop(item, "side", text="")
        row.prop(item, "duration", text="")


DancerPresetMenu = preset_menu("dancer", "Dancer Presets")


class PROCANIM_PT_dancer(GeneratorPanel, bpy.types.Panel):
    """A physically simulated ballet dancer balancing by centre-of-pressure control"""

    bl_label = "Ballet Dancer"

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        reason = mujoco_unavailable()
        if reason is not None:
            column = layout.box().column(align=True)
            column.alert = True
            column.label(text="The dancer is unavailable here", icon="ERROR")
            column.label(text="MuJoCo has no wheel for this platform or Python,")
            column.label(text="or it failed to load. Other generators work.")
            return
        settings = context.scene.procanim.dancer
        layout.use_property_split = True
        draw_presets(layout, DancerPresetMenu, "Dancer Presets")

        box = layout.box()
        box.label(text="Body", icon="ARMATURE_DATA")
        column = box.column(align=True)
        for name in ("height", "mass", "sex"):
            column.prop(settings, name)
        copy_settings(settings, box.operator("procanim.add_dancer", icon="ADD"))

        box = layout.box()
        box.label(text="Dance", icon="POSE_HLT")
        box.prop(settings, "experiment")
        if settings.experiment == "SEQUENCE":
            row = box.row()
            row.template_list("PROCANIM_UL_dancer_steps", "", settings, "steps", settings, "step_index",
                              rows=4)
            buttons = row.column(align=True)
            buttons.operator_menu_enum("procanim.dancer_step_add", "step", text="", icon="ADD")
            buttons.operator("procanim.dancer_step_remove", text="", icon="REMOVE")
            buttons.separator()
            buttons.operator("procanim.dancer_step_move", text="", icon="TRIA_UP").direction = "UP"
            buttons.operator("procanim.dancer_step_move", text="", icon="TRIA_DOWN").direction = "DOWN"
            box.prop(settings, "allow_unbalanced")
        if settings.experiment == "SEQUENCE" and len(settings.steps) == 0:
            box.prop(settings, "sequence")
            box.prop(settings, "position")
            column = box.column(align=True)
            column.active = settings.position == "FIRST_POSITION"
            column.prop(settings, "weight_shift")
            column.prop(settings, "retire")
            column.prop(settings, "releve")
            column = box.column(align=True)
            for name in ("position_time", "shift_time", "retire_time", "releve_time"):
                column.prop(settings, name)
        elif settings.experiment == "BALANCE":
            box.prop(settings, "strategy")
            box.prop(settings, "balance_duration")

        box = layout.box()
        box.label(text="Gains", icon="DRIVER")
        column = box.column(align=True)
        for name in ("cop_com_position", "cop_com_velocity", "cop_tracking"):
            column.prop(settings, name)
        column = box.column(align=True)
        for name in ("com_position", "com_velocity", "hip_com", "one_foot_tracking"):
            column.prop(settings, name)

        row = layout.row(align=True)
        row.prop(settings, "target_rig", icon="ARMATURE_DATA")
        row.operator("procanim.use_active_rig", text="", icon="EYEDROPPER").settings = "dancer"
        bake = layout.operator("procanim.bake_balance", icon="RENDER_ANIMATION")
        copy_settings(settings, bake)
        if bake is not None and len(settings.steps):
            bake.sequence = step_list_text(settings.steps)
        image = bpy.data.images.get(PLOT_IMAGE)
        if image is not None and image.preview is not None:
            layout.template_icon(icon_value=image.preview.icon_id, scale=8.0)
        elif image is not None:
            layout.label(text=f"COM/COP plot: image '{PLOT_IMAGE}'", icon="IMAGE_DATA")


SCENE_SETTINGS = ("dancer", DancerSettings)
OBJECT_SETTINGS = None
classes = (DancerStep, DancerSettings, PROCANIM_UL_dancer_steps, DancerPresetMenu, PROCANIM_PT_dancer)
