"""Juggling sub-panel: the siteswap with live feedback, timing, props, arms, presets, the button."""

from __future__ import annotations

import bpy
from bpy.props import CollectionProperty, IntProperty, StringProperty

from ..addon.errors import ProcAnimError
from ..addon.juggling.notation import siteswap_status
from ..operators.jml import use_entry
from ..operators.juggling import juggling_properties, plan_settings, planning_options
from .common import GeneratorPanel, copy_settings, draw_presets, preset_menu


class JugglingJmlEntry(bpy.types.PropertyGroup):
    """One playable line of an imported Juggling Lab pattern list"""

    __annotations__ = {
        "section": StringProperty(name="Section", description="The list header this line sits under"),
        "kind": StringProperty(
            name="Kind", description="siteswap: a parameter string; jml: a full JML pattern"
        ),
        "source": StringProperty(name="Source", description="The line's pattern text or JML document"),
    }


def _jml_settings() -> dict:
    properties = juggling_properties()
    properties.update(
        jml_entries=CollectionProperty(
            type=JugglingJmlEntry,
            name="Imported Patterns",
            description="The playable lines of the last imported Juggling Lab file",
        ),
        jml_index=IntProperty(
            name="Imported Pattern",
            description="The line of the imported pattern list the Add button animates",
            default=0,
            min=0,
            update=lambda settings, context: use_entry(settings, context),
        ),
        jml_file=StringProperty(name="JML File", description="Name of the imported .jml file"),
    )
    return properties


class JugglingSettings(bpy.types.PropertyGroup):
    """Juggling settings of this scene; the Add button copies them into procanim.juggle"""

    __annotations__ = _jml_settings()


JugglingPresetMenu = preset_menu("juggling", "Juggling Presets")

_plan_cache: dict[tuple, tuple[bool, str]] = {}


def timing_feedback(settings, fps: float) -> tuple[bool, str]:
    """``(ok, message)``: the loop length in seconds and frames, or why these timings cannot work
    (a bounce that cannot reach the hand, a dwell path typo) before the button is pressed."""
    options = planning_options(settings)
    key = (
        settings.siteswap,
        settings.jml_source,
        fps,
        *sorted((k, round(v, 6) if isinstance(v, float) else v) for k, v in options.items()),
    )
    cached = _plan_cache.get(key)
    if cached is not None:
        return cached
    try:
        pattern = plan_settings(settings, frame_rate=fps)
    except ProcAnimError as error:
        result = (False, str(error))
    else:
        frames = round(pattern.loop_duration * fps)
        beat = f"beat {pattern.beat_duration:.3f} s ({1 / pattern.beat_duration:.2f}/s)"
        result = (True, f"Loop {pattern.loop_duration:.2f} s, {frames} frames, {beat}")
        if pattern.reach_warning:
            result = (True, f"{result[1]}; {pattern.reach_warning}")
    if len(_plan_cache) > 64:
        _plan_cache.clear()
    _plan_cache[key] = result
    return result


class PROCANIM_PT_juggling(GeneratorPanel, bpy.types.Panel):
    """Build a juggling scene from a siteswap"""

    bl_label = "Juggling"
    bl_idname = "PROCANIM_PT_juggling"

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        settings = context.scene.procanim.juggling
        draw_presets(layout, JugglingPresetMenu)
        if settings.jml_entries:
            box = layout.box()
            row = box.row()
            row.label(text=settings.jml_file or "Imported JML", icon="FILE")
            row.operator("procanim.clear_jml", text="", icon="X")
            box.template_list(
                "UI_UL_list", "procanim_jml", settings, "jml_entries", settings, "jml_index", rows=4
            )
        if settings.jml_source:
            valid, message = True, "JML pattern: " + _jml_title(settings)
        else:
            layout.prop(settings, "siteswap")
            valid, message = siteswap_status(settings.siteswap)
        feedback = layout.box() if not valid else layout
        # Long parser messages wrap over a few labels so the sidebar shows them whole.
        for number, line in enumerate(_wrap(message, 38)):
            feedback.label(text=line, icon=("CHECKMARK" if valid else "ERROR") if number == 0 else "BLANK1")

        if valid:
            render = context.scene.render
            ok, timing = timing_feedback(settings, render.fps / render.fps_base)
            for number, line in enumerate(_wrap(timing, 38)):
                layout.label(
                    text=line, icon=("PREVIEW_RANGE" if ok else "ERROR") if number == 0 else "BLANK1"
                )
            valid = ok
        column = layout.column(align=True)
        column.prop(settings, "auto_beat")
        beat = column.row(align=True)
        beat.enabled = not settings.auto_beat
        beat.prop(settings, "beat_duration")
        column.prop(settings, "dwell_ratio")
        column = layout.column(align=True)
        column.prop(settings, "prop_type")
        column.prop(settings, "prop_size")
        layout.prop(settings, "chicken_wing")
        row = layout.row(align=True)
        row.prop(settings, "target_rig", icon="ARMATURE_DATA")
        row.operator("procanim.use_active_rig", text="", icon="EYEDROPPER").settings = "juggling"
        row = layout.row(align=True)
        row.prop(settings, "loops")
        row.prop(settings, "key_style", text="")
        button = layout.row()
        button.enabled = valid
        button.scale_y = 1.4
        copy_settings(settings, button.operator("procanim.juggle", icon="PLAY"))


class PROCANIM_PT_juggling_more(GeneratorPanel, bpy.types.Panel):
    """Hand paths, bounces and the floor"""

    bl_label = "Hand Paths and Bounces"
    bl_idname = "PROCANIM_PT_juggling_more"
    bl_parent_id = "PROCANIM_PT_juggling"

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        settings = context.scene.procanim.juggling
        layout.prop(settings, "dwell_path", text="Dwell")
        layout.label(text="cm, catch to throw: (x,y,z) ... '.' next", icon="INFO")
        row = layout.row(align=True)
        row.prop(settings, "restitution")
        row.prop(settings, "bounce_model", text="")
        layout.prop(settings, "squeeze_beats")
        layout.prop(settings, "max_hand_acceleration")
        layout.prop(settings, "floor")


def _jml_title(settings) -> str:
    if 0 <= settings.jml_index < len(settings.jml_entries):
        return settings.jml_entries[settings.jml_index].name
    return "imported"


def _wrap(text: str, width: int) -> list[str]:
    lines, current = [], ""
    for word in text.split():
        if current and len(current) + 1 + len(word) > width:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}".strip()
    return [*lines, current] if current else lines or [""]


SCENE_SETTINGS = ("juggling", JugglingSettings)
classes = (
    JugglingJmlEntry,
    JugglingSettings,
    JugglingPresetMenu,
    PROCANIM_PT_juggling,
    PROCANIM_PT_juggling_more,
)
