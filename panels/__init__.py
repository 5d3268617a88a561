"""The "ProcAnim" sidebar tab: one parent panel, a sub-panel per generator, and their settings.

Each module in ``MODULES`` exports ``classes`` and names its settings group in ``SCENE_SETTINGS``
(and ``OBJECT_SETTINGS``) as ``(attribute, PropertyGroup)``; they are gathered into
``Scene.procanim`` and ``Object.procanim`` here.
"""

from __future__ import annotations

import bpy
from bpy.props import PointerProperty

from . import dancer, fly, ik, juggling, main, menus, mirrors, preferences, rig, simulation

# The sidebar shows the sub-panels in this order, the flagship first.
MODULES = (preferences, main, juggling, ik, simulation, mirrors, dancer, fly, rig, menus)

# Every generator's preset menu, in the sidebar's order (Object > ProcAnim > Presets lists them).
PRESET_MENUS = tuple(
    cls
    for module in MODULES
    if module is not menus
    for cls in module.classes
    if issubclass(cls, bpy.types.Menu) and cls.__name__.endswith("_presets")
)


def _settings_group(class_name: str, entries: list[tuple[str, type]], doc: str) -> type:
    annotations = {
        attr: PointerProperty(type=group, name=attr.replace("_", " ").title(), description=f"{doc}: {attr}")
        for attr, group in entries
    }
    return type(class_name, (bpy.types.PropertyGroup,), {"__annotations__": annotations, "__doc__": doc})


SceneSettings = _settings_group(
    "PROCANIM_PG_scene",
    [m.SCENE_SETTINGS for m in MODULES if getattr(m, "SCENE_SETTINGS", None)],
    "ProcAnim generator settings of this scene",
)
ObjectSettings = _settings_group(
    "PROCANIM_PG_object",
    [m.OBJECT_SETTINGS for m in MODULES if getattr(m, "OBJECT_SETTINGS", None)],
    "ProcAnim settings stored on this object",
)

# Settings groups register before the panels that draw them and the groups that point to them.
classes = (
    *(cls for module in MODULES for cls in module.classes),
    SceneSettings,
    ObjectSettings,
)


def register_properties() -> None:
    bpy.types.Scene.procanim = PointerProperty(
        type=SceneSettings, name="ProcAnim", description="ProcAnim generator settings"
    )
    bpy.types.Object.procanim = PointerProperty(
        type=ObjectSettings, name="ProcAnim", description="ProcAnim settings of this object"
    )


def unregister_properties() -> None:
    del bpy.types.Object.procanim
    del bpy.types.Scene.procanim
