"""Registering and unregistering the extension is symmetric and repeatable."""

from __future__ import annotations

import addon_utils
import bpy


def _handler_lists():
    return {
        name: getattr(bpy.app.handlers, name)
        for name in dir(bpy.app.handlers)
        if not name.startswith("_") and isinstance(getattr(bpy.app.handlers, name), list)
    }


def _ours(function, package: str) -> bool:
    return getattr(function, "__module__", "").startswith(package)


def _menu_entries(package: str) -> list[tuple[str, str]]:
    """Draw functions the extension appended to Blender's menus, headers and panels."""
    entries = []
    for base in (bpy.types.Menu, bpy.types.Header, bpy.types.Panel):
        for cls in base.__subclasses__():
            for function in getattr(getattr(cls, "draw", None), "_draw_funcs", ()):
                if _ours(function, package):
                    entries.append((cls.__name__, function.__name__))
    return entries


def _snapshot(package: str) -> dict:
    return {
        "scene_prop": hasattr(bpy.types.Scene, "procanim"),
        "object_prop": hasattr(bpy.types.Object, "procanim"),
        "handler_counts": {name: len(handlers) for name, handlers in _handler_lists().items()},
        "our_handlers": sorted(
            (name, h.__name__)
            for name, handlers in _handler_lists().items()
            for h in handlers
            if _ours(h, package)
        ),
        "menu_entries": sorted(_menu_entries(package)),
        "types": sorted(name for name in dir(bpy.types) if name.startswith("PROCANIM_")),
        "ops": sorted(dir(bpy.ops.procanim)),
    }


def test_unregister_removes_everything_and_register_restores_it(extension_package):
    registered = _snapshot(extension_package)
    assert registered["scene_prop"] and registered["object_prop"]
    assert "PROCANIM_PT_main" in registered["types"]

    addon_utils.disable(extension_package, default_set=True)
    try:
        gone = _snapshot(extension_package)
        assert not gone["scene_prop"] and not gone["object_prop"]
        assert gone["types"] == []
        assert gone["our_handlers"] == [] and gone["menu_entries"] == []
        ours_per_list = {
            name: sum(1 for n, _ in registered["our_handlers"] if n == name)
            for name in registered["handler_counts"]
        }
        assert gone["handler_counts"] == {
            name: count - ours_per_list[name] for name, count in registered["handler_counts"].items()
        }
    finally:
        addon_utils.enable(extension_package, default_set=True)
    assert _snapshot(extension_package) == registered


def test_package_is_an_extension_module(extension_package):
    assert extension_package.startswith("bl_ext.") and extension_package.endswith(".procanim")
    assert bpy.ops.procanim.export_render.idname() == "PROCANIM_OT_export_render"
