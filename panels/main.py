"""The ProcAnim tab's parent panel and the render export sub-panel."""

from __future__ import annotations

import bpy
from bpy.props import EnumProperty, IntProperty, StringProperty

from ..operators.render import ENGINE_ITEMS, FORMAT_ITEMS
from .common import GeneratorPanel, ProcAnimPanel, copy_settings


class RenderSettings(bpy.types.PropertyGroup):
    """Sidebar settings of the render export."""

    engine: EnumProperty(
        name="Engine", description="Render engine to use", items=ENGINE_ITEMS, default="EEVEE"
    )
    file_format: EnumProperty(
        name="Format",
        description="Write a video file or a folder of images",
        items=FORMAT_ITEMS,
        default="MP4",
    )
    filepath: StringProperty(
        name="Output",
        description="Video file (MP4) or folder (PNG frames); // means next to the .blend",
        default="//procanim_render.mp4",
        subtype="FILE_PATH",
    )
    resolution_x: IntProperty(
        name="Width", description="Image width in pixels", default=1280, min=16, max=8192
    )
    resolution_y: IntProperty(
        name="Height", description="Image height in pixels", default=720, min=16, max=8192
    )
    samples: IntProperty(
        name="Samples", description="Samples per pixel for Cycles and EEVEE", default=32, min=1, max=4096
    )


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
