"""Juggling Lab's JML files: File > Import / Export > Juggling Lab Pattern (.jml)."""

from __future__ import annotations

from collections.abc import Generator

import bpy
from bpy.props import IntProperty, StringProperty
from bpy_extras.io_utils import ExportHelper, ImportHelper

from ..addon.errors import ProcAnimError
from ..addon.juggling import jml
from . import paths
from ._base import ProcAnimOperator
from .juggling import JuggleBake, JuggleBaker, juggling_properties, plan_settings, planning_options


def _import_properties() -> dict:
    properties = juggling_properties()
    properties.update(
        filepath=StringProperty(
            name="File Path",
            description="The .jml file to import",
            subtype="FILE_PATH",
            options={"SKIP_SAVE"},
        ),
        filter_glob=StringProperty(
            name="Filter", description="Files the browser shows", default="*.jml;*.xml", options={"HIDDEN"}
        ),
        entry=IntProperty(
            name="Entry",
            description="Which playable line of a pattern list to animate first (1 is the first)",
            default=1,
            min=1,
        ),
    )
    return properties


class PROCANIM_OT_import_jml(JuggleBaker, bpy.types.Operator, ImportHelper):
    """Import a Juggling Lab pattern or pattern list (.jml) and animate it; a list's lines appear in
    the Juggling sidebar to pick from"""

    bl_idname = "procanim.import_jml"
    bl_label = "Import Juggling Lab Pattern"
    bl_options = {"REGISTER", "UNDO"}

    filename_ext = ".jml"
    __annotations__ = _import_properties()

    def invoke(self, context: bpy.types.Context, event: bpy.types.Event) -> set[str]:
        # The file browser first; it runs execute() (a blocking bake) once a file is picked.
        return ImportHelper.invoke(self, context, event)

    def bake(self, context: bpy.types.Context) -> Generator[float | tuple[float, str], None, JuggleBake]:
        path = paths.input_file(self.filepath, "Import JML")
        # The whole file is read and checked before anything in the scene changes.
        self._entries = jml.load(path)
        if not self._entries:
            raise ProcAnimError(f"{path.name}: no pattern to animate (only headers)")
        if self.entry > len(self._entries):
            raise ProcAnimError(
                f"{path.name} has {len(self._entries)} pattern(s); there is no entry {self.entry}"
            )
        self._use(self._entries[self.entry - 1], self)
        return (yield from super().bake(context))

    def plan(self, fps: float, **extra):
        # Planned from the file as read, so that a layout error names the file's own line.
        return self._entries[self.entry - 1].plan(defaults=planning_options(self), frame_rate=fps, **extra)

    @staticmethod
    def _use(entry: jml.JmlEntry, settings) -> None:
        if entry.kind == "siteswap":
            settings.siteswap = entry.source
            settings.jml_source = ""
        else:
            settings.jml_source = entry.source

    def write(self, context: bpy.types.Context, result: JuggleBake) -> set[str]:
        status = super().write(context, result)
        settings = context.scene.procanim.juggling
        settings.jml_entries.clear()
        for entry in self._entries:
            item = settings.jml_entries.add()
            item.name = entry.title
            item.section = entry.section or ""
            item.kind = entry.kind
            item.source = entry.source
        settings.jml_file = bpy.path.basename(self.filepath)
        # Show the animated entry in the sidebar without re-running the pick.
        settings["jml_index"] = self.entry - 1
        self._use(self._entries[self.entry - 1], settings)
        if len(self._entries) > 1:
            self.report(
                {"INFO"}, f"{len(self._entries)} patterns in the list: pick one in the Juggling sidebar"
            )
        return status


class PROCANIM_OT_export_jml(ProcAnimOperator, bpy.types.Operator, ExportHelper):
    """Save the Juggling sidebar's pattern as a Juggling Lab pattern (.jml) that Juggling Lab opens"""

    bl_idname = "procanim.export_jml"
    bl_label = "Export Juggling Lab Pattern"
    bl_options = {"REGISTER"}

    filename_ext = ".jml"
    filepath: StringProperty(
        name="File Path", description="Where to write the .jml file", subtype="FILE_PATH"
    )
    filter_glob: StringProperty(
        name="Filter", description="Files the browser shows", default="*.jml", options={"HIDDEN"}
    )

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        if getattr(context.scene, "procanim", None) is None:
            cls.poll_message_set("No ProcAnim settings in this scene")
            return False
        return True

    def run(self, context: bpy.types.Context) -> set[str]:
        settings = context.scene.procanim.juggling
        pattern = plan_settings(settings)
        text = jml.dump(pattern)
        target = paths.output_file(self.filepath, "Export JML", ".jml")
        paths.make_parent(target, "Export JML")
        try:
            target.write_text(text, encoding="utf-8")
        except OSError as error:
            raise ProcAnimError(f"Export JML: cannot write '{target}': {error.strerror or error}") from None
        self.report(
            {"INFO"},
            f"Wrote {target.name}: {len(pattern.flights)} throws, loop {pattern.loop_duration:.2f} s",
        )
        return {"FINISHED"}


class PROCANIM_OT_pick_jml_entry(ProcAnimOperator, bpy.types.Operator):
    """Use this line of the imported pattern list in the Juggling sidebar (press Add to animate it)"""

    bl_idname = "procanim.pick_jml_entry"
    bl_label = "Use Imported Pattern"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        return _has_entries(cls, context)

    index: IntProperty(
        name="Index", description="Line of the imported list (0 is the first)", default=0, min=0
    )

    def run(self, context: bpy.types.Context) -> set[str]:
        settings = context.scene.procanim.juggling
        if self.index >= len(settings.jml_entries):
            raise ProcAnimError(
                f"the imported list has {len(settings.jml_entries)} line(s), not {self.index + 1}"
            )
        settings.jml_index = self.index
        return {"FINISHED"}


class PROCANIM_OT_clear_jml(ProcAnimOperator, bpy.types.Operator):
    """Forget the imported JML list and pattern; the sidebar animates its siteswap again"""

    bl_idname = "procanim.clear_jml"
    bl_label = "Clear Imported JML"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        return _has_entries(cls, context)

    def run(self, context: bpy.types.Context) -> set[str]:
        settings = context.scene.procanim.juggling
        settings.jml_entries.clear()
        settings.jml_source = ""
        settings.jml_file = ""
        return {"FINISHED"}


def _has_entries(cls, context: bpy.types.Context) -> bool:
    settings = getattr(getattr(context.scene, "procanim", None), "juggling", None)
    if settings is None or not (settings.jml_entries or settings.jml_source):
        cls.poll_message_set("Import a Juggling Lab file first (File > Import > Juggling Lab Pattern)")
        return False
    return True


def use_entry(settings, context=None) -> None:
    """Copy the picked list line into the sidebar settings (``jml_index``'s update)."""
    if not 0 <= settings.jml_index < len(settings.jml_entries):
        return
    item = settings.jml_entries[settings.jml_index]
    if item.kind == "siteswap":
        settings.siteswap = item.source
        settings.jml_source = ""
    else:
        settings.jml_source = item.source


def _menu_import(self, context: bpy.types.Context) -> None:
    self.layout.operator(PROCANIM_OT_import_jml.bl_idname, text="Juggling Lab Pattern (.jml)")


def _menu_export(self, context: bpy.types.Context) -> None:
    self.layout.operator(PROCANIM_OT_export_jml.bl_idname, text="Juggling Lab Pattern (.jml)")


def register() -> None:
    bpy.types.TOPBAR_MT_file_import.append(_menu_import)
    bpy.types.TOPBAR_MT_file_export.append(_menu_export)


def unregister() -> None:
    bpy.types.TOPBAR_MT_file_export.remove(_menu_export)
    bpy.types.TOPBAR_MT_file_import.remove(_menu_import)


classes = (PROCANIM_OT_import_jml, PROCANIM_OT_export_jml, PROCANIM_OT_pick_jml_entry, PROCANIM_OT_clear_jml)
