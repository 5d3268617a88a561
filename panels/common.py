"""Building blocks of the ProcAnim sidebar tab."""

from __future__ import annotations

import bpy

from ..addon.errors import PresetError
from ..addon.presets import all_presets
from ..operators.presets import ACTIVE, is_user_preset, user_preset_folder


class ProcAnimPanel:
    """Places a panel in the 3D View sidebar, "ProcAnim" tab."""

    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "ProcAnim"


class GeneratorPanel(ProcAnimPanel):
    """A generator's sub-panel under the main ProcAnim panel."""

    bl_parent_id = "PROCANIM_PT_main"
    bl_options = {"DEFAULT_CLOSED"}


def copy_settings(settings: bpy.types.PropertyGroup, operator_properties) -> None:
    """Copy every property that ``settings`` and the operator share by name into the operator.

    The button then runs with the sidebar's values while the operator stays scriptable with
    explicit keyword arguments.
    """
    if operator_properties is None:
        return
    target = operator_properties.bl_rna.properties
    for prop in settings.bl_rna.properties:
        key = prop.identifier
        if key == "rna_type" or key not in target or prop.type in {"POINTER", "COLLECTION"}:
            continue
        setattr(operator_properties, key, getattr(settings, key))


def preset_menu(kind: str, label: str) -> type[bpy.types.Menu]:
    """A menu class listing the bundled presets of ``presets/<kind>.toml``, then the user's own (each
    with a remove button); each entry applies one."""

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        try:
            entries = all_presets(kind, user_preset_folder())
        except PresetError as exc:
            layout.label(text=str(exc), icon="ERROR")
            return
        for index, (preset, user) in enumerate(entries):
            row = layout.row(align=True) if user else layout
            if user and (index == 0 or not entries[index - 1][1]):
                layout.separator()
                row = layout.row(align=True)
            op = row.operator("procanim.apply_preset", text=preset["name"])
            op.kind = kind
            op.name = preset["name"]
            if user:
                remove = row.operator("procanim.preset_remove", text="", icon="REMOVE")
                remove.kind = kind
                remove.name = preset["name"]

    return type(
        f"PROCANIM_MT_{kind}_presets",
        (bpy.types.Menu,),
        {"bl_label": label, "bl_idname": f"PROCANIM_MT_{kind}_presets", "draw": draw, "kind": kind},
    )


def draw_presets(layout: bpy.types.UILayout, menu: type[bpy.types.Menu], text: str = "Presets") -> None:
    """The preset menu with Blender's add (+) and remove (-) buttons beside it."""
    row = layout.row(align=True)
    active = ACTIVE.get(menu.kind, "")
    row.menu(menu.bl_idname, text=active or text, icon="PRESET")
    row.operator("procanim.preset_add", text="", icon="ADD").kind = menu.kind
    remove = row.operator("procanim.preset_remove", text="", icon="REMOVE")
    remove.kind = menu.kind
    remove.name = active if is_user_preset(menu.kind, active) else ""
