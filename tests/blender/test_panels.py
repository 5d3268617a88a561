"""Every sidebar panel and menu draws against the real RNA; every setting has a tooltip."""

from __future__ import annotations

import importlib

import bpy
from conftest import view3d_override
from ui_smoke import smoke_draw, smoke_draw_menu, smoke_draw_operator


def _classes(extension_package):
    operators = importlib.import_module(f"{extension_package}.operators")
    panels = importlib.import_module(f"{extension_package}.panels")
    return operators.classes, panels.classes


def test_every_panel_lives_in_the_procanim_tab(extension_package):
    _, panel_classes = _classes(extension_package)
    panels = [cls for cls in panel_classes if issubclass(cls, bpy.types.Panel)]
    names = {cls.__name__ for cls in panels}
    assert "PROCANIM_PT_main" in names
    for cls in panels:
        assert (cls.bl_space_type, cls.bl_region_type, cls.bl_category) == ("VIEW_3D", "UI", "ProcAnim")
        assert cls.__name__.startswith("PROCANIM_PT_")
        if cls.__name__ != "PROCANIM_PT_main":
            assert getattr(cls, "bl_parent_id", "") in names, (
                f"{cls.__name__} is not under the ProcAnim panel"
            )


def test_every_panel_and_menu_draws_in_an_empty_scene(extension_package):
    _, panel_classes = _classes(extension_package)
    drawn = []
    with bpy.context.temp_override(**view3d_override()):
        for cls in panel_classes:
            if issubclass(cls, bpy.types.Panel):
                if cls.poll(bpy.context) if hasattr(cls, "poll") else True:
                    smoke_draw(cls)
                    drawn.append(cls.__name__)
            elif issubclass(cls, bpy.types.Menu):
                smoke_draw_menu(cls)
                drawn.append(cls.__name__)
    assert {"PROCANIM_PT_main", "PROCANIM_PT_render"} <= set(drawn)


def test_render_panel_sends_its_settings_to_the_operator(extension_package):
    panels = importlib.import_module(f"{extension_package}.panels.main")
    settings = bpy.context.scene.procanim.render
    settings.resolution_x, settings.engine = 333, "CYCLES"
    with bpy.context.temp_override(**view3d_override()):
        record = smoke_draw(panels.PROCANIM_PT_render)
    assert "procanim.export_render" in record.operators
    assert {"resolution_x": 333, "engine": "CYCLES"}.items() <= dict(
        record.operator_properties[-1][1]
    ).items()


def test_operators_follow_the_naming_and_have_tooltips(extension_package):
    operator_classes, _ = _classes(extension_package)
    for cls in operator_classes:
        verb = cls.bl_idname.removeprefix("procanim.")
        assert cls.bl_idname.startswith("procanim.") and cls.__name__ == f"PROCANIM_OT_{verb}"
        assert (cls.__doc__ or "").strip(), f"{cls.__name__} has no tooltip"
        assert "REGISTER" in cls.bl_options


def _undocumented(rna, owner: str) -> list[str]:
    return [
        f"{owner}.{prop.identifier}"
        for prop in rna.properties
        if prop.identifier not in ("rna_type", "name") and not prop.description.strip()
    ]


def test_every_property_has_a_description(extension_package):
    operator_classes, panel_classes = _classes(extension_package)
    missing = []
    for cls in operator_classes:
        category, name = cls.bl_idname.split(".")
        missing += _undocumented(getattr(getattr(bpy.ops, category), name).get_rna_type(), cls.bl_idname)
    for cls in panel_classes:
        if issubclass(cls, bpy.types.PropertyGroup):
            missing += _undocumented(cls.bl_rna, cls.__name__)
    missing += _undocumented(bpy.types.Scene.bl_rna.properties["procanim"].fixed_type, "Scene.procanim")
    assert missing == []


def test_operators_with_custom_redo_panels_draw(extension_package):
    operator_classes, _ = _classes(extension_package)
    for cls in operator_classes:
        if "draw" in vars(cls):
            smoke_draw_operator(cls)
