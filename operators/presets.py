"""Applying a bundled TOML preset to the sidebar settings of one generator."""

from __future__ import annotations

import bpy
from bpy.props import StringProperty

from ..addon.errors import PresetError
from ..addon.presets import find_preset, preset_settings
from ._base import ProcAnimOperator


def apply_settings(settings: bpy.types.PropertyGroup, values: dict, source: str) -> None:
    """Set each value on ``settings``; unknown names and ill-typed values raise :class:`PresetError`."""
    known = settings.bl_rna.properties
    unknown = [key for key in values if key not in known or key == "rna_type"]
    if unknown:
        raise PresetError(f"{source}: unknown setting(s) {', '.join(sorted(unknown))}")
    # Validate every value before setting any, so a bad preset changes nothing.
    previous = {key: getattr(settings, key) for key in values}
    try:
        for key, value in values.items():
            setattr(settings, key, tuple(value) if isinstance(value, list) else value)
    except (TypeError, ValueError) as exc:
        for key, value in previous.items():
            setattr(settings, key, value)
        raise PresetError(f"{source}: {exc}") from None


class PROCANIM_OT_apply_preset(ProcAnimOperator, bpy.types.Operator):
    """Load a bundled preset into the generator's sidebar settings"""

    bl_idname = "procanim.apply_preset"
    bl_label = "Apply Preset"
    bl_options = {"REGISTER", "UNDO"}

    kind: StringProperty(name="Kind", description="Generator whose settings the preset fills, e.g. juggling")
    name: StringProperty(name="Preset", description="Name of the preset in presets/<kind>.toml")

    def run(self, context: bpy.types.Context) -> set[str]:
        group = getattr(context.scene.procanim, self.kind, None)
        if group is None:
            raise PresetError(f"no generator settings named {self.kind!r}")
        preset = find_preset(self.kind, self.name)
        apply_settings(group, preset_settings(preset), f"{self.kind} preset {self.name!r}")
        self.report({"INFO"}, f"Loaded {self.kind} preset {self.name!r}")
        return {"FINISHED"}


classes = (PROCANIM_OT_apply_preset,)
