"""Presets of the generators' sidebar settings: bundled ones (read-only, shipped in presets/) and the
user's own, saved as TOML in the extension's user folder, which survives extension updates.

Both are data read with tomllib, never executed.
"""

from __future__ import annotations

from pathlib import Path

import bpy
from bpy.props import StringProperty

from ..addon.errors import PresetError
from ..addon.presets import (
    all_presets,
    check_preset_name,
    load_presets,
    load_user_presets,
    preset_settings,
    remove_user_preset,
    save_user_preset,
)
from ._base import ProcAnimOperator
from .preferences import PACKAGE

#: The preset last applied or saved, per generator: what the remove (-) button removes.
ACTIVE: dict[str, str] = {}
_PATH_SUBTYPES = {"FILE_PATH", "DIR_PATH", "FILE_NAME", "BYTE_STRING", "PASSWORD"}


def user_preset_folder(create: bool = False) -> Path | None:
    """The user's presets folder (the extension's user folder), or None when there is none."""
    try:
        folder = bpy.utils.extension_path_user(PACKAGE, path="presets", create=create)
    except (ValueError, AttributeError):  # installed as a legacy add-on, not as an extension
        base = bpy.utils.user_resource("CONFIG", path="procanim", create=create)
        folder = str(Path(base) / "presets") if base else ""
        if folder and create:
            Path(folder).mkdir(parents=True, exist_ok=True)
    return Path(folder) if folder else None


def generator_settings(context: bpy.types.Context, kind: str) -> bpy.types.PropertyGroup:
    group = getattr(getattr(context.scene, "procanim", None), kind, None) if kind.isidentifier() else None
    if group is None:
        raise PresetError(f"no generator settings named {kind!r}")
    return group


def preset_values(group: bpy.types.PropertyGroup, kind: str) -> dict:
    """What a user preset keeps: every setting the bundled presets use, and every other one changed
    from its default (not file paths, not links to objects)."""
    bundled_keys = {key for preset in load_presets(kind) for key in preset_settings(preset)}
    values = {}
    for prop in group.bl_rna.properties:
        key = prop.identifier
        if key in ("rna_type", "name") or prop.is_readonly or prop.is_hidden:
            continue
        if prop.type in {"POINTER", "COLLECTION"}:
            continue
        if prop.type == "STRING" and prop.subtype in _PATH_SUBTYPES:
            continue
        if prop.type == "ENUM" and prop.is_enum_flag:
            continue
        value = getattr(group, key)
        is_array = getattr(prop, "is_array", False) or getattr(prop, "array_length", 0) > 0
        if is_array:
            value = list(value)
            default = list(prop.default_array)
        else:
            default = prop.default
        if key in bundled_keys or value != default:
            values[key] = value
    return values


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
    """Load a preset (bundled or your own) into the generator's sidebar settings"""

    bl_idname = "procanim.apply_preset"
    bl_label = "Apply Preset"
    bl_options = {"REGISTER", "UNDO"}

    kind: StringProperty(name="Kind", description="Generator whose settings the preset fills, e.g. juggling")
    name: StringProperty(name="Preset", description="Name of the preset (bundled or one you saved)")

    def run(self, context: bpy.types.Context) -> set[str]:
        group = generator_settings(context, self.kind)
        entries = all_presets(self.kind, user_preset_folder())
        found = [preset for preset, _user in entries if preset["name"] == self.name]
        if not found:
            raise PresetError(f"no {self.kind} preset named {self.name!r}")
        apply_settings(group, preset_settings(found[-1]), f"{self.kind} preset {self.name!r}")
        ACTIVE[self.kind] = self.name
        self.report({"INFO"}, f"Loaded {self.kind} preset {self.name!r}")
        return {"FINISHED"}


class PROCANIM_OT_preset_add(ProcAnimOperator, bpy.types.Operator):
    """Save the generator's current sidebar settings as a preset of your own"""

    bl_idname = "procanim.preset_add"
    bl_label = "Add Preset"
    bl_options = {"REGISTER"}

    kind: StringProperty(name="Kind", description="Generator whose settings are saved, e.g. juggling")
    name: StringProperty(name="Name", description="Name of the new preset (the same name replaces yours)")

    def invoke(self, context: bpy.types.Context, event: bpy.types.Event) -> set[str]:
        if not self.name:
            self.name = "My Preset"
        return context.window_manager.invoke_props_dialog(self)

    def draw(self, context: bpy.types.Context) -> None:
        self.layout.prop(self, "name")

    def run(self, context: bpy.types.Context) -> set[str]:
        group = generator_settings(context, self.kind)
        name = check_preset_name(self.kind, self.name)
        folder = user_preset_folder(create=True)
        if folder is None:
            raise PresetError("there is no user folder to save presets in")
        path = save_user_preset(self.kind, name, preset_values(group, self.kind), folder)
        ACTIVE[self.kind] = name
        self.report({"INFO"}, f"Saved {self.kind} preset {name!r} to {path}")
        return {"FINISHED"}


class PROCANIM_OT_preset_remove(ProcAnimOperator, bpy.types.Operator):
    """Delete one of your own presets (bundled presets cannot be removed)"""

    bl_idname = "procanim.preset_remove"
    bl_label = "Remove Preset"
    bl_options = {"REGISTER"}

    kind: StringProperty(name="Kind", description="Generator the preset belongs to, e.g. juggling")
    name: StringProperty(name="Preset", description="Your preset to delete (default: the last one applied)")

    def invoke(self, context: bpy.types.Context, event: bpy.types.Event) -> set[str]:
        if not self.name:
            self.name = ACTIVE.get(self.kind, "")
        return context.window_manager.invoke_confirm(self, event)

    def run(self, context: bpy.types.Context) -> set[str]:
        name = self.name or ACTIVE.get(self.kind, "")
        if not name:
            raise PresetError(f"choose one of your {self.kind} presets to remove (apply it first)")
        folder = user_preset_folder()
        if folder is None:
            raise PresetError(f"no user {self.kind} preset named {name!r}")
        remove_user_preset(self.kind, name, folder)
        if ACTIVE.get(self.kind) == name:
            del ACTIVE[self.kind]
        self.report({"INFO"}, f"Removed {self.kind} preset {name!r}")
        return {"FINISHED"}


def is_user_preset(kind: str, name: str) -> bool:
    if not name:
        return False
    folder = user_preset_folder()
    try:
        return folder is not None and any(p["name"] == name for p in load_user_presets(kind, folder))
    except PresetError:
        return False


classes = (PROCANIM_OT_apply_preset, PROCANIM_OT_preset_add, PROCANIM_OT_preset_remove)
