"""The ProcAnim tab's parent panel and the render export sub-panel."""

from __future__ import annotations

import bpy
from bpy.props import EnumProperty, IntProperty

from ..operators.preferences import preferences
from ..operators.render import ENGINE_ITEMS, RenderOptions
from .common import GeneratorPanel, ProcAnimPanel, copy_settings

# What the sidebar shows until the user changes it, when the preferences cannot be read.
_FALLBACK = {"render_engine": "EEVEE", "resolution_x": 1280, "resolution_y": 720}


def _preferred(name: str):
    prefs = preferences()
    return getattr(prefs, name) if prefs is not None else _FALLBACK[name]


def _engine_get(self) -> int:
    if "engine" in self:
        return self["engine"]
    return [item[0] for item in ENGINE_ITEMS].index(_preferred("render_engine"))


def _engine_set(self, value: int) -> None:
    self["engine"] = value


def _size_property(axis: str, name: str, description: str) -> bpy.props.IntProperty:
    key = f"resolution_{axis}"

    def get(self) -> int:
        return self[key] if key in self else _preferred(key)

    def set(self, value: int) -> None:
        self[key] = value

    return IntProperty(name=name, description=description, min=16, max=8192, get=get, set=set)


class RenderSettings(RenderOptions, bpy.types.PropertyGroup):
    """Sidebar settings of the render export; engine and size follow the preferences until changed."""

    engine: EnumProperty(
        name="Engine",
        description="Render engine to use (the preferences' default until changed here)",
        items=ENGINE_ITEMS,
        get=_engine_get,
        set=_engine_set,
    )
    resolution_x: _size_property("x", "Width", "Image width in pixels (the preferences' until changed)")
    resolution_y: _size_property("y", "Height", "Image height in pixels (the preferences' until changed)")


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
