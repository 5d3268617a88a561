"""The ProcAnim tab's parent panel and the render export sub-panel."""

from __future__ import annotations

import bpy

from ..operators.render import RenderOptions
from .common import GeneratorPanel, ProcAnimPanel, copy_settings


class RenderSettings(RenderOptions, bpy.types.PropertyGroup):
    """Sidebar settings of the render export."""


class PROCANIM_PT_main(ProcAnimPanel, bpy.types.Panel):
    """Procedural animation generators"""

    bl_label = "ProcAnim"

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        layout.label(text="Generators below; each builds its own collection.", icon="INFO")


class PROCANIM_PT_render(GeneratorPanel, bpy.types.Panel):
    """Render the scene's animation"""

    bl_label = "Export Render"
    bl_order = 100

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        settings = context.scene.procanim.render
        layout.use_property_split = True
        layout.prop(settings, "engine")
        layout.prop(settings, "file_format")
        layout.prop(settings, "filepath")
        column = layout.column(align=True)
        column.prop(settings, "resolution_x", text="Resolution X")
        column.prop(settings, "resolution_y", text="Y")
        if settings.engine != "WORKBENCH":
            layout.prop(settings, "samples")
        copy_settings(settings, layout.operator("procanim.export_render", icon="RENDER_ANIMATION"))


SCENE_SETTINGS = ("render", RenderSettings)
OBJECT_SETTINGS = None
classes = (RenderSettings, PROCANIM_PT_main, PROCANIM_PT_render)
