"""ProcAnim in Blender's own menus: Add > ProcAnim, Object > ProcAnim, the context menus.

Blender's F3 search finds an operator without Developer Extras only through a menu, so every
operator of the extension is in one of these (``tests/blender/test_menus.py`` checks the list).
"""

from __future__ import annotations

import bpy

# (operator, icon): the Add menu, in the sidebar's order.
ADD_ENTRIES = (
    ("procanim.juggle", "OUTLINER_OB_ARMATURE"),
    ("procanim.add_ik_arm", "BONE_DATA"),
    ("procanim.add_softbody_demo", "MOD_SOFT"),
    ("procanim.add_sheet_demo", "MOD_CLOTH"),
    ("procanim.add_rigid_pile_demo", "MESH_CUBE"),
    ("procanim.add_rope", "OUTLINER_OB_CURVE"),
    ("procanim.add_ellipsoid_mirror", "MESH_UVSPHERE"),
    ("procanim.add_mirror_chain", "LIGHT_SPOT"),
    ("procanim.add_fresnel_reflector", "MESH_CIRCLE"),
    ("procanim.add_dancer", "ARMATURE_DATA"),
    ("procanim.add_fly", "OUTLINER_OB_FORCE_FIELD"),
)

# Object > ProcAnim: everything that works on what is selected, by generator.
OBJECT_SECTIONS = (
    (
        ("procanim.use_active_rig", "ARMATURE_DATA"),
        ("procanim.detect_bone_map", "GROUP_BONE"),
    ),
    (("procanim.bake_ik", "ACTION"),),
    (
        ("procanim.bake_softbody", "MOD_SOFT"),
        ("procanim.bake_rigid_pile", "RIGID_BODY"),
        ("procanim.fit_line", "IPO_LINEAR"),
        ("procanim.fit_plane", "MESH_PLANE"),
        ("procanim.align_kabsch", "SNAP_ON"),
        ("procanim.closest_edge_points", "DRIVER_DISTANCE"),
    ),
    (("procanim.trace_rays", "LIGHT_SUN"),),
    (("procanim.bake_balance", "ACTION"),),
    (
        ("procanim.bake_fly", "ACTION"),
        ("procanim.train_fly", "SHADERFX"),
        ("procanim.load_genome", "FILEBROWSER"),
        ("procanim.save_genome", "FILE_TICK"),
    ),
    (("procanim.export_render", "RENDER_ANIMATION"),),
)

# What the right-click menu offers, by the type of the active object (only what applies).
CONTEXT_ENTRIES = {
    "ARMATURE": (
        "procanim.bake_ik",
        "procanim.bake_balance",
        "procanim.use_active_rig",
        "procanim.detect_bone_map",
    ),
    "MESH": (
        "procanim.bake_softbody",
        "procanim.bake_rigid_pile",
        "procanim.fit_line",
        "procanim.fit_plane",
        "procanim.align_kabsch",
        "procanim.closest_edge_points",
        "procanim.trace_rays",
        "procanim.bake_fly",
    ),
}
# Edit Mode > Mesh > ProcAnim: the tools that read the selected vertices or edges.
EDIT_MESH_ENTRIES = (
    ("procanim.closest_edge_points", "DRIVER_DISTANCE"),
    ("procanim.fit_line", "IPO_LINEAR"),
    ("procanim.fit_plane", "MESH_PLANE"),
)


def _context_entries(context: bpy.types.Context) -> tuple[str, ...]:
    obj = context.active_object
    return CONTEXT_ENTRIES.get(obj.type, ()) if obj is not None else ()


def _operator_poll(idname: str) -> bool:
    category, name = idname.split(".")
    return getattr(getattr(bpy.ops, category), name).poll()


class PROCANIM_MT_add(bpy.types.Menu):
    """Add a procedural animation generator at the 3D cursor"""

    bl_idname = "PROCANIM_MT_add"
    bl_label = "ProcAnim"

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        layout.operator_context = "INVOKE_REGION_WIN"
        for idname, icon in ADD_ENTRIES:
            layout.operator(idname, icon=icon)


class PROCANIM_MT_presets(bpy.types.Menu):
    """Apply a preset to a generator's sidebar settings"""

    bl_idname = "PROCANIM_MT_presets"
    bl_label = "Presets"

    def draw(self, context: bpy.types.Context) -> None:
        from . import PRESET_MENUS

        layout = self.layout
        for menu in PRESET_MENUS:
            layout.menu(menu.bl_idname)
        layout.separator()
        for menu in PRESET_MENUS:
            name = menu.bl_label.removesuffix("s")
            layout.operator("procanim.preset_add", text=f"Save {name}...", icon="ADD").kind = menu.kind


class PROCANIM_MT_dancer_steps(bpy.types.Menu):
    """Edit the dancer's step list (the same as the buttons beside the list in the sidebar)"""

    bl_idname = "PROCANIM_MT_dancer_steps"
    bl_label = "Dancer Steps"

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        layout.operator_menu_enum("procanim.dancer_step_add", "step", text="Add Step", icon="ADD")
        layout.operator("procanim.dancer_step_remove", icon="REMOVE")
        for direction, icon in (("UP", "TRIA_UP"), ("DOWN", "TRIA_DOWN")):
            text = f"Move Step {direction.title()}"
            move = layout.operator("procanim.dancer_step_move", text=text, icon=icon)
            move.direction = direction


class PROCANIM_MT_juggling_lab(bpy.types.Menu):
    """Juggling Lab files: import, export, and the lines of an imported pattern list"""

    bl_idname = "PROCANIM_MT_juggling_lab"
    bl_label = "Juggling Lab"

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        layout.operator_context = "INVOKE_REGION_WIN"
        layout.operator("procanim.import_jml", icon="IMPORT")
        layout.operator("procanim.export_jml", icon="EXPORT")
        layout.separator()
        settings = getattr(getattr(context.scene, "procanim", None), "juggling", None)
        entries = list(settings.jml_entries) if settings is not None else []
        for index, entry in enumerate(entries):
            layout.operator("procanim.pick_jml_entry", text=entry.name or f"Line {index + 1}").index = index
        if not entries:
            layout.operator("procanim.pick_jml_entry", text="Imported Pattern")
        layout.operator("procanim.clear_jml", icon="X")


class PROCANIM_MT_object(bpy.types.Menu):
    """Bake, fit, align and export with ProcAnim"""

    bl_idname = "PROCANIM_MT_object"
    bl_label = "ProcAnim"

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        layout.operator_context = "INVOKE_REGION_WIN"
        for index, section in enumerate(OBJECT_SECTIONS):
            if index:
                layout.separator()
            for idname, icon in section:
                layout.operator(idname, icon=icon)
        layout.separator()
        layout.menu(PROCANIM_MT_juggling_lab.bl_idname, icon="FILE")
        layout.menu(PROCANIM_MT_dancer_steps.bl_idname, icon="OUTLINER_OB_ARMATURE")
        layout.menu(PROCANIM_MT_presets.bl_idname, icon="PRESET")


class PROCANIM_MT_context(bpy.types.Menu):
    """ProcAnim tools for the active object"""

    bl_idname = "PROCANIM_MT_context"
    bl_label = "ProcAnim"

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        layout.operator_context = "INVOKE_REGION_WIN"
        entries = [idname for idname in _context_entries(context) if _operator_poll(idname)]
        for idname in entries:
            layout.operator(idname)
        if not entries:
            layout.label(text="Nothing here applies to the active object")


class PROCANIM_MT_edit_mesh(bpy.types.Menu):
    """ProcAnim measuring and fitting tools for the selected vertices and edges"""

    bl_idname = "PROCANIM_MT_edit_mesh"
    bl_label = "ProcAnim"

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        for idname, icon in EDIT_MESH_ENTRIES:
            layout.operator(idname, icon=icon)


def _add_menu(self, context: bpy.types.Context) -> None:
    self.layout.separator()
    self.layout.menu(PROCANIM_MT_add.bl_idname, icon="PHYSICS")


def _object_menu(self, context: bpy.types.Context) -> None:
    self.layout.separator()
    self.layout.menu(PROCANIM_MT_object.bl_idname, icon="PHYSICS")


def _context_menu(self, context: bpy.types.Context) -> None:
    if any(_operator_poll(idname) for idname in _context_entries(context)):
        self.layout.separator()
        self.layout.menu(PROCANIM_MT_context.bl_idname, icon="PHYSICS")


def _import_menu(self, context: bpy.types.Context) -> None:
    self.layout.operator("procanim.import_jml", text="Juggling Lab Pattern (.jml)")


def _export_menu(self, context: bpy.types.Context) -> None:
    self.layout.operator("procanim.export_jml", text="Juggling Lab Pattern (.jml)")


def _edit_mesh_menu(self, context: bpy.types.Context) -> None:
    self.layout.separator()
    self.layout.menu(PROCANIM_MT_edit_mesh.bl_idname, icon="PHYSICS")


# (Blender menu, our entry): appended on register, removed on unregister.
HOOKS = (
    ("VIEW3D_MT_add", _add_menu),
    ("VIEW3D_MT_object", _object_menu),
    ("VIEW3D_MT_object_context_menu", _context_menu),
    ("VIEW3D_MT_edit_mesh", _edit_mesh_menu),
    ("VIEW3D_MT_edit_mesh_context_menu", _edit_mesh_menu),
    ("TOPBAR_MT_file_import", _import_menu),
    ("TOPBAR_MT_file_export", _export_menu),
)


def register() -> None:
    for menu, function in HOOKS:
        getattr(bpy.types, menu).append(function)


def unregister() -> None:
    for menu, function in reversed(HOOKS):
        getattr(bpy.types, menu).remove(function)


SCENE_SETTINGS = None
OBJECT_SETTINGS = None
classes = (
    PROCANIM_MT_add,
    PROCANIM_MT_presets,
    PROCANIM_MT_dancer_steps,
    PROCANIM_MT_juggling_lab,
    PROCANIM_MT_object,
    PROCANIM_MT_context,
    PROCANIM_MT_edit_mesh,
)
