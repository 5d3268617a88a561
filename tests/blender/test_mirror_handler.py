"""The mirror handler touches only what changed: a moved focus rebuilds its own mirror, nothing else
rebuilds anything, frame changes look only at mirrors with animated foci, and no update scans every
object of the scene."""

from __future__ import annotations

import bpy
import numpy as np
import pytest


@pytest.fixture()
def rebuilds(ext, monkeypatch):
    """The names of the mirrors rebuilt, in order."""
    recipes = ext("operators.mirrors.recipes")
    original = recipes.rebuild_mirror
    calls: list[str] = []

    def counting(obj):
        calls.append(obj.name)
        return original(obj)

    monkeypatch.setattr(recipes, "rebuild_mirror", counting)
    return calls


def _two_mirrors():
    assert bpy.ops.procanim.add_ellipsoid_mirror(minor_axis=0.4) == {"FINISHED"}
    first = bpy.context.active_object
    assert bpy.ops.procanim.add_ellipsoid_mirror(minor_axis=0.6) == {"FINISHED"}
    second = bpy.context.active_object
    assert first != second
    bpy.context.view_layer.update()
    return first, second


def test_only_the_mirror_of_a_moved_focus_is_rebuilt(ext, rebuilds):
    handlers = ext("operators.mirrors.handlers")
    first, second = _two_mirrors()
    bystander = bpy.data.objects.new("Bystander", None)
    bpy.context.scene.collection.objects.link(bystander)
    bpy.context.view_layer.update()
    rebuilds.clear()
    scans = handlers.SCANS

    bystander.location = (3.0, 0.0, 0.0)
    bpy.context.view_layer.update()
    assert rebuilds == []

    second.procanim.mirror.focus_2.location.x += 0.05
    bpy.context.view_layer.update()
    assert rebuilds == [second.name]
    assert handlers.SCANS == scans, "no update scanned the scene's objects"


def test_frame_changes_rebuild_only_mirrors_with_animated_foci(ext, rebuilds):
    first, second = _two_mirrors()
    scene = bpy.context.scene
    rebuilds.clear()
    for frame in (5, 9, 2):
        scene.frame_set(frame)
    assert rebuilds == [], "nothing is animated: playback costs nothing"

    focus = first.procanim.mirror.focus_1
    start = focus.location.copy()
    focus.keyframe_insert("location", frame=1)
    focus.location = start + type(start)((0.1, 0.0, 0.05))
    focus.keyframe_insert("location", frame=20)
    rebuilds.clear()
    for frame in (10, 15):
        scene.frame_set(frame)
        expected = np.array(focus.matrix_world.translation)
        assert np.allclose(first.procanim.mirror.last_focus_1, expected, atol=1e-6)
    assert set(rebuilds) == {first.name}
    assert second.name not in rebuilds


def test_renaming_a_focus_keeps_its_mirror_following(rebuilds):
    first, _second = _two_mirrors()
    focus = first.procanim.mirror.focus_2
    focus.name = "Renamed Focus"
    bpy.context.view_layer.update()
    rebuilds.clear()
    focus.location.z += 0.1
    bpy.context.view_layer.update()
    assert rebuilds == [first.name]


def test_no_mesh_is_edited_during_an_unlocked_render(ext, rebuilds, monkeypatch):
    """In the UI a render runs beside the interface: mirrors follow only with the interface locked."""
    from types import SimpleNamespace

    handlers = ext("operators.mirrors.handlers")
    first, _second = _two_mirrors()
    focus = first.procanim.mirror.focus_1
    focus.keyframe_insert("location", frame=1)
    focus.location.x += 0.1
    focus.keyframe_insert("location", frame=20)
    scene = bpy.context.scene
    ui = SimpleNamespace(app=SimpleNamespace(background=False), data=bpy.data, types=bpy.types)
    monkeypatch.setattr(handlers, "bpy", ui)  # as in Blender with a window
    monkeypatch.setitem(handlers._RENDERING, "active", True)
    scene.render.use_lock_interface = False
    rebuilds.clear()
    scene.frame_set(10)  # the focus moves; the handlers (seeing a render) leave the mirror alone
    handlers.follow_animated_foci(scene)
    assert rebuilds == [], "an unlocked render is never raced"
    scene.render.use_lock_interface = True
    handlers.follow_animated_foci(scene)
    assert rebuilds == [first.name]


def test_animated_foci_turn_on_lock_interface_for_renders_in_the_ui(ext, monkeypatch):
    from types import SimpleNamespace

    handlers = ext("operators.mirrors.handlers")
    first, _second = _two_mirrors()
    focus = first.procanim.mirror.focus_1
    focus.keyframe_insert("location", frame=1)
    scene = bpy.context.scene
    scene.render.use_lock_interface = False
    handlers.follow_animated_foci(scene)
    assert not scene.render.use_lock_interface, "background renders need no lock"
    ui = SimpleNamespace(app=SimpleNamespace(background=False), data=bpy.data, types=bpy.types)
    monkeypatch.setattr(handlers, "bpy", ui)
    handlers.follow_animated_foci(scene)
    assert scene.render.use_lock_interface


def test_in_the_interface_a_dragged_focus_rebuilds_once_the_drag_pauses(ext, rebuilds, monkeypatch):
    import time
    from types import SimpleNamespace

    handlers = ext("operators.mirrors.handlers")
    first, _second = _two_mirrors()
    registered = []
    timers = SimpleNamespace(
        is_registered=lambda f: f in registered,
        register=lambda f, first_interval=0.0: registered.append(f),
        unregister=lambda f: registered.remove(f),
    )
    ui = SimpleNamespace(app=SimpleNamespace(background=False, timers=timers), data=bpy.data, types=bpy.types)
    monkeypatch.setattr(handlers, "bpy", ui)
    rebuilds.clear()
    focus = first.procanim.mirror.focus_2
    for _move in range(5):  # five mouse moves of a drag
        focus.location.x += 0.01
        bpy.context.view_layer.update()
    assert rebuilds == [], "no rebuild while the focus is being dragged"
    assert registered == [handlers.rebuild_when_quiet]
    assert handlers.rebuild_when_quiet() > 0 and rebuilds == []  # still within the quiet time
    monkeypatch.setitem(handlers._PENDING, "last_update", time.monotonic() - 1.0)
    assert handlers.rebuild_when_quiet() is None
    assert rebuilds == [first.name]
    assert np.allclose(first.procanim.mirror.last_focus_2, tuple(focus.matrix_world.translation), atol=1e-6)
