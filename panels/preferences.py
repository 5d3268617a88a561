"""The extension's preferences (Edit > Preferences > Add-ons / Extensions > ProcAnim)."""

from __future__ import annotations

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty, StringProperty

from ..addon.limits import TIME_LIMIT
from ..operators.preferences import DEFAULT_CACHE_DIRECTORY, DEFAULT_GENOME_DIRECTORY, PACKAGE
from ..operators.render import ENGINE_ITEMS

# 4.5+ warns on "//" paths unless the property says it takes blend-relative paths; 4.2 has no such flag
_PATH_OPTIONS = {"PATH_SUPPORTS_BLEND_RELATIVE"} if bpy.app.version >= (4, 5, 0) else set()


class PROCANIM_AP_preferences(bpy.types.AddonPreferences):
    """Folders, render defaults and what Add operators create"""

    bl_idname = PACKAGE

    cache_directory: StringProperty(
        name="Cache Folder",
        description="Where soft-body PC2 caches go; // is the folder of the .blend, so caches travel with it",
        default=DEFAULT_CACHE_DIRECTORY,
        subtype="DIR_PATH",
        options=_PATH_OPTIONS,
    )
    genome_directory: StringProperty(
        name="Genome Folder",
        description="Where Train Fly writes trained genomes and their curves (// is beside the .blend)",
        default=DEFAULT_GENOME_DIRECTORY,
        subtype="DIR_PATH",
        options=_PATH_OPTIONS,
    )
    render_engine: EnumProperty(
        name="Render Engine",
        description="Engine Export Render starts with in a new scene",
        items=ENGINE_ITEMS,
        default="EEVEE",
    )
    resolution_x: IntProperty(
        name="Resolution X", description="Export Render's default image width", default=1280, min=16, max=8192
    )
    resolution_y: IntProperty(
        name="Resolution Y", description="Export Render's default image height", default=720, min=16, max=8192
    )
    add_camera: BoolProperty(
        name="Add Camera and Light",
        description="Add operators create a camera and a sun when the scene has none, so a new scene renders",
        default=True,
    )
    add_floor: BoolProperty(
        name="Add Floor",
        description="Add operators put a floor under the result in an empty scene",
        default=True,
    )
    script_time_limit: FloatProperty(
        name="Script Time Limit",
        description="Seconds of work a ProcAnim operator called from a Python script may take before it is "
        "refused (estimated) or stopped (measured), so a mistyped size cannot hang a script; 0 turns the "
        "limit off for pipeline scripts with long bakes. The sidebar and the command line are not limited",
        default=TIME_LIMIT,
        min=0.0,
        soft_max=3600.0,
    )

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        layout.use_property_split = True
        column = layout.column(heading="Files")
        column.prop(self, "cache_directory")
        column.prop(self, "genome_directory")
        column = layout.column(heading="Export Render")
        column.prop(self, "render_engine")
        sub = column.column(align=True)
        sub.prop(self, "resolution_x", text="Resolution X")
        sub.prop(self, "resolution_y", text="Y")
        column = layout.column(heading="Add")
        column.prop(self, "add_camera")
        column.prop(self, "add_floor")
        layout.prop(self, "script_time_limit")


SCENE_SETTINGS = None
OBJECT_SETTINGS = None
classes = (PROCANIM_AP_preferences,)
