"""Every ProcAnim operator is in Blender's menus (so F3 finds it without Developer Extras), the Add
menu has every Add operator with an icon, and operators that need a selection say so in their poll."""

from __future__ import annotations

import importlib

import bpy
import pytest
from conftest import view3d_override
from ui_smoke import smoke_draw_menu

# Operators that need something selected or active, and a word their poll message must contain.
NEEDS_SELECTION = {
    "procanim.bake_ik": "armature",
    "procanim.closest_edge_points": "mesh",
    "procanim.bake_balance": "dancer",
    "procanim.bake_softbody": "mesh",
    "procanim.bake_rigid_pile": "mesh",
    "procanim.fit_line": "mesh",
    "procanim.fit_plane": "mesh",
    "procanim.align_kabsch": "mesh",
    "procanim.trace_rays": "mirror",
    "procanim.export_render": "camera",
    "procanim.detect_bone_map": "armature",
    "procanim.use_active_rig": "armature",
}


def _operator_classes(extension_package):
    return importlib.import_module(f"{extension_package}.operators").classes


def _reachable(menu_names, context=None):
    """Operators (with their draw arguments) in these menus and every submenu they open."""
    found: dict[str, dict] = {}
    seen: set[str] = set()
    pending = list(menu_names)
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        menu = getattr(bpy.types, name)
        if hasattr(menu, "poll") and not menu.poll(bpy.context):
            continue
        record = smoke_draw_menu(menu, context)
        for function, arguments in record.calls:
            if function in ("operator", "operator_menu_enum"):
                found.setdefault(arguments["operator"], arguments)
            elif function == "menu" and arguments["menu"].startswith("PROCANIM_MT_"):
                pending.append(arguments["menu"])  # Blender's own submenus need their own modes
    return found, seen


def test_every_operator_is_in_a_menu_f3_can_search(extension_package):
    # A user preset of one's own brings its remove button into the preset menu.
    assert bpy.ops.procanim.preset_add(kind="ik", name="Menu Probe") == {"FINISHED"}
    try:
        _check_every_operator_is_in_a_menu(extension_package)
    finally:
        bpy.ops.procanim.preset_remove(kind="ik", name="Menu Probe")


def _check_every_operator_is_in_a_menu(extension_package):
    with bpy.context.temp_override(**view3d_override()):
        found, menus = _reachable(["VIEW3D_MT_add", "VIEW3D_MT_object"])
        imports, _ = _reachable(["TOPBAR_MT_file_import", "TOPBAR_MT_file_export"])
    assert {"procanim.import_jml", "procanim.export_jml"} <= set(imports)
    ours = {cls.bl_idname for cls in _operator_classes(extension_package)}
    assert ours - set(found) == set(), "operators F3 cannot find"
    assert {"PROCANIM_MT_add", "PROCANIM_MT_object", "PROCANIM_MT_presets"} <= menus
    # Presets are findable by name too: each preset is an entry of its generator's preset menu.
    assert "PROCANIM_MT_juggling_presets" in menus and "PROCANIM_MT_ik_presets" in menus
    assert "procanim.apply_preset" in found
    # In Edit Mode the mesh tools are under Mesh > ProcAnim and the right-click menu.
    for name in ("VIEW3D_MT_edit_mesh", "VIEW3D_MT_edit_mesh_context_menu"):
        functions = getattr(getattr(bpy.types, name).draw, "_draw_funcs", [])
        drawn = [getattr(f, "__name__", "") for f in functions]
        assert "_edit_mesh_menu" in drawn, name
    with bpy.context.temp_override(**view3d_override()):
        edit_tools, _ = _reachable(["PROCANIM_MT_edit_mesh"])
    assert set(edit_tools) == {"procanim.closest_edge_points", "procanim.fit_line", "procanim.fit_plane"}


def test_the_add_menu_has_every_add_operator_with_an_icon(extension_package):
    with bpy.context.temp_override(**view3d_override()):
        top = smoke_draw_menu(bpy.types.VIEW3D_MT_add)
        record = smoke_draw_menu(bpy.types.PROCANIM_MT_add)
    assert ("menu", "PROCANIM_MT_add") in [(f, a.get("menu")) for f, a in top.calls]
    adds = {
        cls.bl_idname
        for cls in _operator_classes(extension_package)
        if cls.bl_idname.startswith("procanim.add_") or cls.bl_idname == "procanim.juggle"
    }
    assert len(adds) >= 10
    assert set(record.operators) == adds
    for function, arguments in record.calls:
        if function == "operator":
            assert arguments.get("icon", "NONE") != "NONE", f"{arguments['operator']} has no icon"


def test_operators_are_searchable_and_say_what_they_do(extension_package):
    for cls in _operator_classes(extension_package):
        assert "INTERNAL" not in cls.bl_options, f"{cls.bl_idname} is hidden from search"
        assert cls.bl_label and cls.bl_label[0].isupper(), cls.bl_idname
        category, name = cls.bl_idname.split(".")
        rna = getattr(getattr(bpy.ops, category), name).get_rna_type()
        assert rna.description.strip(), f"{cls.bl_idname} has no tooltip"


def _poll_message(cls) -> tuple[bool, list[str]]:
    messages: list[str] = []
    original = cls.__dict__.get("poll_message_set")
    cls.poll_message_set = classmethod(lambda c, message, *args: messages.append(message))
    try:
        return cls.poll(bpy.context), messages
    finally:
        if original is None:
            del cls.poll_message_set
        else:
            cls.poll_message_set = original


@pytest.mark.parametrize("idname", sorted(NEEDS_SELECTION))
def test_operators_needing_a_selection_refuse_in_an_empty_scene_and_say_why(extension_package, idname):
    cls = next(c for c in _operator_classes(extension_package) if c.bl_idname == idname)
    category, name = idname.split(".")
    assert not getattr(getattr(bpy.ops, category), name).poll()
    allowed, messages = _poll_message(cls)
    assert not allowed
    # Without MuJoCo the dancer's poll explains that instead; either way there is a message.
    assert messages and messages[-1].strip()
    if idname != "procanim.bake_balance" or "MuJoCo" not in messages[-1]:
        assert NEEDS_SELECTION[idname] in messages[-1].lower()


def test_the_context_menu_offers_what_applies_to_the_active_object():
    with bpy.context.temp_override(**view3d_override()):
        assert "PROCANIM_MT_context" not in {
            a.get("menu") for f, a in smoke_draw_menu(bpy.types.VIEW3D_MT_object_context_menu).calls
        }
        assert bpy.ops.procanim.add_ik_arm() == {"FINISHED"}
        assert bpy.ops.procanim.bake_ik.poll()
        top = smoke_draw_menu(bpy.types.VIEW3D_MT_object_context_menu)
        assert "PROCANIM_MT_context" in {a.get("menu") for f, a in top.calls}
        record = smoke_draw_menu(bpy.types.PROCANIM_MT_context)
    assert record.operators[0] == "procanim.bake_ik"
    assert "procanim.bake_softbody" not in record.operators  # only what applies to an armature
