"""Sidebar sub-panel of the ballet dancer: body, what to dance, gains, add and bake."""

from __future__ import annotations

import bpy

from ..addon.dancer import mujoco_unavailable
from ..operators.dancer import PLOT_IMAGE, DancerBakeProperties, DancerBodyProperties
from .common import GeneratorPanel, copy_settings, preset_menu


class DancerSettings(DancerBodyProperties, DancerBakeProperties, bpy.types.PropertyGroup):
    """Sidebar settings of the dancer: its body, the sequence or balance test, and the gains."""


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
        layout.menu(DancerPresetMenu.bl_idname, icon="PRESET")

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
            box.prop(settings, "position")
            column = box.column(align=True)
            column.active = settings.position == "FIRST_POSITION"
            column.prop(settings, "weight_shift")
            column.prop(settings, "retire")
            column.prop(settings, "releve")
            column = box.column(align=True)
            for name in ("position_time", "shift_time", "retire_time", "releve_time"):
                column.prop(settings, name)
        else:
            box.prop(settings, "strategy")
            box.prop(settings, "balance_duration")

        box = layout.box()
        box.label(text="Gains", icon="DRIVER")
        column = box.column(align=True)
        for name in ("cop_com_position", "cop_com_velocity", "cop_tracking"):
            column.prop(settings, name)
        column = box.column(align=True)
        for name in ("com_position", "com_velocity", "hip_com"):
            column.prop(settings, name)

        copy_settings(settings, layout.operator("procanim.bake_balance", icon="RENDER_ANIMATION"))
        image = bpy.data.images.get(PLOT_IMAGE)
        if image is not None and image.preview is not None:
            layout.template_icon(icon_value=image.preview.icon_id, scale=8.0)
        elif image is not None:
            layout.label(text=f"COM/COP plot: image '{PLOT_IMAGE}'", icon="IMAGE_DATA")


SCENE_SETTINGS = ("dancer", DancerSettings)
OBJECT_SETTINGS = None
classes = (DancerSettings, DancerPresetMenu, PROCANIM_PT_dancer)
