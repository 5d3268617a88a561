"""The strict fake layout catches every kind of draw() mistake and accepts Blender's own panels.

Throwaway classes (a settings group, an operator, a menu, a UI list and panels) are registered for
each test and unregistered after it: 4.2 segfaults and 4.5 hangs at exit otherwise.
"""

from __future__ import annotations

import bpy
import pytest
from bpy.props import EnumProperty, FloatVectorProperty, IntProperty, PointerProperty, StringProperty
from ui_smoke import (
    SmokeDrawAttributeError,
    SmokeDrawError,
    SmokeDrawTypeError,
    smoke_draw,
    smoke_draw_function,
    smoke_draw_menu,
    smoke_draw_operator,
)

MODES = [("SLOW", "Slow", "Move slowly"), ("FAST", "Fast", "Move fast")]


class UISmokeProbeSettings(bpy.types.PropertyGroup):
    count: IntProperty(name="Count", description="How many", default=3, min=1)
    mode: EnumProperty(name="Mode", description="How fast", items=MODES, default="SLOW")
    title: StringProperty(name="Title", description="A name", default="probe")


class UISMOKE_OT_probe(bpy.types.Operator):
    """Probe operator for the fake-layout tests."""

    bl_idname = "ui_smoke.probe"
    bl_label = "Probe"

    count: IntProperty(name="Count", description="How many", default=3)
    mode: EnumProperty(name="Mode", description="How fast", items=MODES)
    offset: FloatVectorProperty(name="Offset", description="Where", size=3)

    def execute(self, context):
        return {"FINISHED"}

    def draw(self, context):
        layout = self.layout
        layout.prop(self, "count")
        if self.mode == "FAST":
            layout.prop(self, "offset")


class UISMOKE_MT_probe(bpy.types.Menu):
    bl_label = "Probe Menu"

    def draw(self, context):
        self.layout.operator("ui_smoke.probe", text="Slow").mode = "SLOW"
        self.layout.separator()
        self.layout.operator("ui_smoke.probe", text="Fast").mode = "FAST"


class UISMOKE_UL_probe(bpy.types.UIList):
    pass


class UISmokePanel:
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "UI Smoke"


class UISMOKE_PT_good(UISmokePanel, bpy.types.Panel):
    """Uses most of what generator panels use; must pass."""

    bl_label = "Good Probe"

    def draw_header(self, context):
        self.layout.label(text="", icon="PHYSICS")

    def draw(self, context):
        settings = context.scene.ui_smoke_probe
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        column = layout.column(align=True, heading="Settings")
        column.prop(settings, "count")
        column.prop(settings, "mode", expand=True)
        column.prop(settings, '["custom"]', text="Custom")
        row = layout.row(align=True)
        row.alignment = "RIGHT"
        row.scale_y = 1.5
        row.enabled = settings.count > 0
        row.prop_enum(settings, "mode", "FAST")
        row.menu("UISMOKE_MT_probe", text="", icon="PRESET")
        split = layout.split(factor=0.3)
        split.label(text=settings.title)
        grid = split.grid_flow(columns=2, even_columns=True)
        grid.prop(context.scene, "frame_start")
        grid.prop(context.scene.render, "fps")
        layout.template_list("UISMOKE_UL_probe", "", context.scene, "objects", context.scene,
                             "frame_current", rows=2)
        if hasattr(layout, "panel"):
            header, body = layout.panel("UISMOKE_good_sub", default_closed=True)
            header.label(text="More")
            if body:
                body.prop(settings, "title")
        box = layout.box()
        box.label(text="Runs the probe", icon="INFO")
        op = box.operator("ui_smoke.probe", text="Go", icon="PLAY")
        op.count = settings.count
        op.mode = settings.mode
        op.offset = (0.0, 1.0, 2.0)
        op.offset[2] = 5.0
        layout.operator("mesh.primitive_cube_add", text="Cube").size = 2.0


BASE_CLASSES = (UISmokeProbeSettings, UISMOKE_OT_probe, UISMOKE_MT_probe, UISMOKE_UL_probe, UISMOKE_PT_good)


@pytest.fixture(autouse=True)
def probe_classes():
    """Register the probe classes and a fresh scene with its settings; unregister after."""
    bpy.ops.wm.read_homefile(use_empty=True)
    for cls in BASE_CLASSES:
        bpy.utils.register_class(cls)
    bpy.types.Scene.ui_smoke_probe = PointerProperty(type=UISmokeProbeSettings)
    bpy.context.scene.ui_smoke_probe["custom"] = 1.5
    yield
    del bpy.types.Scene.ui_smoke_probe
    for cls in reversed(BASE_CLASSES):
        bpy.utils.unregister_class(cls)


@pytest.fixture()
def sidebar():
    """Context override with the 3D View's sidebar region, as a real panel draw has."""
    window = bpy.context.window_manager.windows[0]
    area = next(a for a in window.screen.areas if a.type == "VIEW_3D")
    region = next(r for r in area.regions if r.type == "UI")
    with bpy.context.temp_override(window=window, screen=window.screen, area=area, region=region):
        yield bpy.context


_panel_counter = 0


def draw_with(draw, *, header=None):
    """Register a one-off panel whose draw() is ``draw(layout, settings)``, smoke-draw it, unregister."""
    global _panel_counter
    _panel_counter += 1
    namespace = {
        "bl_label": "Broken Probe",
        "bl_idname": f"UISMOKE_PT_broken_{_panel_counter}",
        "draw": lambda self, context: draw(self.layout, context.scene.ui_smoke_probe),
    }
    if header is not None:
        namespace["draw_header"] = lambda self, context: header(self.layout, context.scene.ui_smoke_probe)
    panel = type(namespace["bl_idname"], (UISmokePanel, bpy.types.Panel), namespace)
    bpy.utils.register_class(panel)
    try:
        return smoke_draw(panel)
    finally:
        bpy.utils.unregister_class(panel)


def test_correct_panel_passes_and_records_what_it_drew(sidebar):
    assert bpy.context.space_data.type == "VIEW_3D"
    record = smoke_draw(UISMOKE_PT_good)
    assert record.operators == ["ui_smoke.probe", "mesh.primitive_cube_add"]
    probe_values = record.operator_properties[0][1]
    assert probe_values["count"] == 3 and probe_values["mode"] == "SLOW"
    assert list(probe_values["offset"]) == [0.0, 1.0, 5.0]
    assert record.operator_properties[1][1] == {"size": 2.0}
    assert "UISmokeProbeSettings.count" in record.properties
    assert 'UISmokeProbeSettings.["custom"]' in record.properties
    assert "RenderSettings.fps" in record.properties
    assert "Runs the probe" in record.labels
    functions = [name for name, _arguments in record.calls]
    assert functions[0] == "label"  # draw_header runs first
    assert {"column", "row", "split", "grid_flow", "box", "menu", "prop_enum"} <= set(functions)


def test_operator_array_item_assignment_is_kept(sidebar):
    record = draw_with(lambda layout, s: layout.operator("ui_smoke.probe").offset.__setitem__(1, 4.0))
    assert list(record.operator_properties[0][1]["offset"]) == [0.0, 4.0, 0.0]


def test_child_layouts_and_panel_tuple(sidebar):
    seen = {}

    def draw(layout, settings):
        makers = (layout.row, layout.column, layout.box, layout.split, layout.grid_flow, layout.column_flow)
        for make in makers:
            child = make()
            child.label(text="child")
            seen[len(seen)] = type(child).__name__
        seen["has_panel"] = hasattr(layout, "panel")
        if seen["has_panel"]:
            seen["panel"] = layout.panel("UISMOKE_sub")
        seen["no_such"] = hasattr(layout, "no_such_function")

    draw_with(draw)
    assert all(seen[i] == "FakeLayout" for i in range(6))
    assert seen["has_panel"] == ("panel" in bpy.types.UILayout.bl_rna.functions)
    if seen["has_panel"]:
        header, body = seen["panel"]
        assert type(header).__name__ == type(body).__name__ == "FakeLayout"
    assert seen["no_such"] is False


MISTAKES = [
    ("prop typo", lambda layout, s: layout.prop(s, "cuont"),
     SmokeDrawAttributeError, "property 'cuont' not found on UISmokeProbeSettings (did you mean 'count'"),
    ("missing ID property", lambda layout, s: layout.prop(s, '["absent"]'),
     SmokeDrawAttributeError, 'ID property ["absent"] not found'),
    ("bad icon", lambda layout, s: layout.label(text="x", icon="NOT_AN_ICON"),
     SmokeDrawTypeError, "enum 'NOT_AN_ICON' not found"),
    ("bad icon on operator", lambda layout, s: layout.operator("ui_smoke.probe", icon="PLAYY"),
     SmokeDrawTypeError, "enum 'PLAYY' not found (did you mean 'PLAY'"),
    ("unknown operator", lambda layout, s: layout.operator("ui_smoke.prob"),
     SmokeDrawAttributeError, "operator 'ui_smoke.prob' is not registered (did you mean 'probe'"),
    ("malformed operator id", lambda layout, s: layout.operator("probe"),
     SmokeDrawAttributeError, "'probe' is not an operator idname"),
    ("bad kwarg", lambda layout, s: layout.label(txt="x"),
     SmokeDrawTypeError, "unexpected keyword argument 'txt' (did you mean 'text'"),
    ("optional argument given positionally", lambda layout, s: layout.label("x"),
     SmokeDrawTypeError, "parameter 'text' must be a keyword argument"),
    ("required argument missing", lambda layout, s: layout.prop(s),
     SmokeDrawTypeError, "required parameter(s) ['property'] not given"),
    ("wrong argument type", lambda layout, s: layout.label(text=3),
     SmokeDrawTypeError, "expected a string, got int"),
    ("bad operator property", lambda layout, s: setattr(layout.operator("ui_smoke.probe"), "cuont", 1),
     SmokeDrawAttributeError, "operator 'ui_smoke.probe' has no property 'cuont' (did you mean 'count'"),
    ("operator property wrong type",
     lambda layout, s: setattr(layout.operator("ui_smoke.probe"), "count", "3"),
     SmokeDrawTypeError, "ui_smoke.probe.count = '3': expected an int"),
    ("operator enum value", lambda layout, s: setattr(layout.operator("ui_smoke.probe"), "mode", "MEDIUM"),
     SmokeDrawTypeError, "enum 'MEDIUM' not found"),
    ("operator array length", lambda layout, s: setattr(layout.operator("ui_smoke.probe"), "offset", (1, 2)),
     SmokeDrawTypeError, "expected 3 values, got 2"),
    ("unknown menu", lambda layout, s: layout.menu("UISMOKE_MT_prob"),
     SmokeDrawAttributeError, "menu 'UISMOKE_MT_prob' is not registered (did you mean 'UISMOKE_MT_probe'"),
    ("unknown popover", lambda layout, s: layout.popover("UISMOKE_PT_nothing"),
     SmokeDrawAttributeError, "panel 'UISMOKE_PT_nothing' is not registered"),
    ("unknown UI list", lambda layout, s: layout.template_list(
        "UISMOKE_UL_none", "", bpy.context.scene, "objects", bpy.context.scene, "frame_current"),
     SmokeDrawAttributeError, "UI list 'UISMOKE_UL_none' is not registered"),
    ("UI list over a non-collection", lambda layout, s: layout.template_list(
        "UISMOKE_UL_probe", "", s, "count", bpy.context.scene, "frame_current"),
     SmokeDrawTypeError, "propname 'count' must be a collection property"),
    ("bad layout attribute", lambda layout, s: setattr(layout, "scale_why", 2.0),
     SmokeDrawAttributeError, "UILayout has no attribute 'scale_why'"),
    ("bad layout attribute value", lambda layout, s: setattr(layout.row(), "alignment", "MIDDLE"),
     SmokeDrawTypeError, "enum 'MIDDLE' not found"),
    ("read-only layout attribute", lambda layout, s: setattr(layout, "direction", "VERTICAL"),
     SmokeDrawAttributeError, "UILayout.direction is read-only"),
    ("None data", lambda layout, s: layout.prop(None, "count"),
     SmokeDrawTypeError, "None is not accepted"),
    ("None data in prop_search", lambda layout, s: layout.prop_search(s, "title", None, "objects"),
     SmokeDrawTypeError, "search_data"),
    ("unknown layout function", lambda layout, s: layout.column().lable(text="x"),
     SmokeDrawAttributeError, "layout.column().lable: UILayout has no function or attribute 'lable'"),
    ("prop_enum on a non-enum", lambda layout, s: layout.prop_enum(s, "count", "SLOW"),
     SmokeDrawTypeError, "property 'count' is not an enum"),
    ("prop_enum bad value", lambda layout, s: layout.prop_enum(s, "mode", "MEDIUM"),
     SmokeDrawTypeError, "enum 'MEDIUM' not found"),
    ("operator_enum bad property", lambda layout, s: layout.operator_enum("ui_smoke.probe", "mood"),
     SmokeDrawAttributeError, "property 'mood' not found"),
]


@pytest.mark.parametrize(("what", "draw", "error", "message"), MISTAKES, ids=[m[0] for m in MISTAKES])
def test_every_mistake_is_caught_with_a_clear_message(sidebar, what, draw, error, message):
    with pytest.raises(error) as caught:
        draw_with(draw)
    text = str(caught.value)
    assert message in text, text
    assert "UISMOKE_PT_broken_" in text, "the message must name the panel"
    assert isinstance(caught.value, AssertionError)


def test_mistake_in_draw_header_is_caught(sidebar):
    with pytest.raises(SmokeDrawTypeError, match="draw_header.*NOT_AN_ICON"):
        draw_with(lambda layout, s: None, header=lambda layout, s: layout.label(text="", icon="NOT_AN_ICON"))


def test_poll_false_is_reported_unless_disabled(sidebar):
    panel = type("UISMOKE_PT_never", (UISmokePanel, bpy.types.Panel), {
        "bl_label": "Never", "poll": classmethod(lambda cls, context: False),
        "draw": lambda self, context: self.layout.label(text="hidden")})
    bpy.utils.register_class(panel)
    try:
        with pytest.raises(SmokeDrawError, match="poll"):
            smoke_draw(panel)
        assert smoke_draw(panel, check_poll=False).labels == ["hidden"]
    finally:
        bpy.utils.unregister_class(panel)


def test_menu_draws_and_its_mistakes_are_caught(sidebar):
    record = smoke_draw_menu(UISMOKE_MT_probe)
    assert [values["mode"] for _idname, values in record.operator_properties] == ["SLOW", "FAST"]

    def bad_entry(self, context):
        self.layout.operator("ui_smoke.probe", text="Bad").mode = "MEDIUM"

    # Blender runs appended draw functions inside a loop that prints and swallows exceptions;
    # smoke_draw_menu runs them one by one so that the mistake surfaces.
    bpy.types.VIEW3D_MT_add.append(bad_entry)
    try:
        with pytest.raises(SmokeDrawTypeError, match="MEDIUM"):
            smoke_draw_menu(bpy.types.VIEW3D_MT_add)
        with pytest.raises(SmokeDrawTypeError, match="bad_entry.*MEDIUM"):
            smoke_draw_function(bad_entry)
    finally:
        bpy.types.VIEW3D_MT_add.remove(bad_entry)
    assert "ui_smoke.probe" not in smoke_draw_menu(bpy.types.VIEW3D_MT_add).operators


def _scene_with_active_cube():
    mesh = bpy.data.meshes.new("Cube")
    mesh.from_pydata([(0, 0, 0), (1, 0, 0), (0, 1, 0)], [], [(0, 1, 2)])
    cube = bpy.data.objects.new("Cube", mesh)
    bpy.context.scene.collection.objects.link(cube)
    bpy.context.view_layer.objects.active = cube
    cube.select_set(True)


# Blender's own sidebar panels and 3D View menus that need no special mode: they must draw cleanly
# through the fake, so that it does not reject correct code.
BUILTIN_PANELS = (
    "VIEW3D_PT_view3d_properties", "VIEW3D_PT_view3d_lock", "VIEW3D_PT_view3d_cursor",
    "VIEW3D_PT_collections", "VIEW3D_PT_tools_object_options_transform", "VIEW3D_PT_active_tool",
)
BUILTIN_MENUS = (
    "VIEW3D_MT_add", "VIEW3D_MT_view", "VIEW3D_MT_object", "VIEW3D_MT_select_object",
    "VIEW3D_MT_mirror", "VIEW3D_MT_object_collection", "VIEW3D_MT_object_apply",
    "VIEW3D_MT_transform_object", "VIEW3D_MT_snap",
)


@pytest.mark.parametrize("name", BUILTIN_PANELS)
def test_builtin_sidebar_panels_pass(sidebar, name):
    _scene_with_active_cube()
    record = smoke_draw(getattr(bpy.types, name))
    assert record.calls, f"{name} drew nothing"


@pytest.mark.parametrize("name", BUILTIN_MENUS)
def test_builtin_menus_pass(sidebar, name):
    _scene_with_active_cube()
    record = smoke_draw_menu(getattr(bpy.types, name))
    assert record.calls, f"{name} drew nothing"


def test_builtin_view_panel_properties_are_the_real_ones(sidebar):
    _scene_with_active_cube()
    record = smoke_draw(bpy.types.VIEW3D_PT_view3d_properties)
    assert "SpaceView3D.lens" in record.properties
    assert "SpaceView3D.clip_start" in record.properties


def test_operator_redo_panel_draw(sidebar):
    assert smoke_draw_operator(UISMOKE_OT_probe).properties == ["UI_SMOKE_OT_probe.count"]
    fast = smoke_draw_operator(UISMOKE_OT_probe, mode="FAST")
    assert fast.properties == ["UI_SMOKE_OT_probe.count", "UI_SMOKE_OT_probe.offset"]
    with pytest.raises(SmokeDrawTypeError, match="MEDIUM"):
        smoke_draw_operator(UISMOKE_OT_probe, mode="MEDIUM")

    def typo(self, context):
        self.layout.prop(self, "offest")

    broken = type("UISMOKE_OT_typo", (bpy.types.Operator,), {
        "bl_idname": "ui_smoke.typo", "bl_label": "Typo", "__annotations__": {
            "offset": FloatVectorProperty(name="Offset", description="Where", size=3)},
        "draw": typo})
    bpy.utils.register_class(broken)
    try:
        with pytest.raises(SmokeDrawAttributeError, match="'offest' not found.*did you mean 'offset'"):
            smoke_draw_operator(broken)
    finally:
        bpy.utils.unregister_class(broken)


def test_preferences_style_draw_reads_instance_properties(sidebar):
    # AddonPreferences (and any class whose draw reads self.<property>) are drawn with an instance.
    settings = bpy.context.scene.ui_smoke_probe
    settings.count = 7
    panel = type("UISMOKE_PT_instance", (UISmokePanel, bpy.types.Panel), {
        "bl_label": "Instance",
        "draw": lambda self, context: self.layout.label(text=f"{self.count} x {self.title}")})
    bpy.utils.register_class(panel)
    try:
        assert smoke_draw(panel, instance=settings).labels == ["7 x probe"]
        with pytest.raises(SmokeDrawAttributeError, match="self.count does not exist"):
            smoke_draw(panel)
    finally:
        bpy.utils.unregister_class(panel)
