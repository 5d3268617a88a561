"""Add adds: every Add makes a new instance at the 3D cursor, keeps the user's scene, and bakes act on
the selected instance only."""

from __future__ import annotations

import bpy
import numpy as np
import pytest
from conftest import data_counts

# (operator, generator name, options that keep it quick)
ADDS = [
    ("juggle", "Juggling", {"siteswap": "3", "loops": 1}),
    ("add_ik_arm", "IK Arm", {"frame_count": 24}),
    ("add_dancer", "Dancer", {}),
    ("add_fly", "Fly", {}),
    ("add_softbody_demo", "Soft Body", {"subdivisions": 1}),
    ("add_sheet_demo", "Jelly Sheet", {}),
    ("add_rigid_pile_demo", "Rigid Pile", {"count": 2}),
    ("add_rope", "Rope", {"frame_count": 2, "substeps": 5, "links": 4}),
]
IDS = [name for _, name, _ in ADDS]


def _instances(writers, generator):
    return [c for c in bpy.data.collections if c.get(writers.INSTANCE_KEY) == generator]


def _add(operator, options):
    assert getattr(bpy.ops.procanim, operator)(**options) == {"FINISHED"}


def _user_scene():
    """A scene someone built: a cube, their own camera and light, and a frame range of their own."""
    scene = bpy.context.scene
    cube = bpy.data.objects.new("Their Cube", bpy.data.meshes.new("Their Cube"))
    camera = bpy.data.objects.new("Their Camera", bpy.data.cameras.new("Their Camera"))
    light = bpy.data.objects.new("Their Light", bpy.data.lights.new("Their Light", "POINT"))
    for obj in (cube, camera, light):
        scene.collection.objects.link(obj)
    cube.location = (0.5, -0.25, 0.125)
    scene.camera = camera
    scene.frame_start, scene.frame_end = 10, 40
    return cube, camera


@pytest.mark.parametrize(("operator", "generator", "options"), ADDS, ids=IDS)
def test_add_twice_gives_two_independent_instances(ext, operator, generator, options):
    writers = ext("operators.writers")
    _add(operator, options)
    first = _instances(writers, generator)
    assert len(first) == 1
    first_objects = {obj.name for obj in first[0].all_objects}
    _add(operator, options)
    both = _instances(writers, generator)
    assert len(both) == 2
    assert {obj.name for obj in both[0].all_objects} == first_objects  # the first is kept, untouched
    assert both[0].name != both[1].name and both[1].name.startswith(f"ProcAnim {generator}")
    # The second is a whole generator result of its own (the stage came only with the first).
    second = both[1]
    kinds = sorted(o.type for o in second.all_objects if o.type not in {"CAMERA", "LIGHT"})
    assert kinds and all(o.name in bpy.context.scene.objects for o in second.all_objects)
    # The new instance is what is selected and active, as with Blender's own Add.
    active = bpy.context.view_layer.objects.active
    assert active is not None and writers.instance_of(active) == second
    assert {o.name for o in bpy.context.selected_objects} <= {o.name for o in second.all_objects}


@pytest.mark.parametrize(("operator", "generator", "options"), ADDS, ids=IDS)
def test_a_users_scene_keeps_its_camera_frame_range_and_objects(ext, operator, generator, options):
    cube, camera = _user_scene()
    scene = bpy.context.scene
    counts = data_counts()
    _add(operator, options)
    _add(operator, options)
    assert scene.camera == camera
    assert (scene.frame_start, scene.frame_end) == (10, 40)
    assert tuple(cube.location) == (0.5, -0.25, 0.125)
    assert cube.name in scene.collection.objects
    after = data_counts()
    assert after["cameras"] == counts["cameras"] and after["lights"] == counts["lights"]
    assert not any(o.name.endswith("Floor") for o in bpy.data.objects)


@pytest.mark.parametrize(("operator", "generator", "options"), ADDS, ids=IDS)
def test_an_empty_scene_gets_camera_light_and_a_renderable_result(ext, operator, generator, options):
    _add(operator, options)
    scene = bpy.context.scene
    assert scene.camera is not None
    assert any(o.type == "LIGHT" for o in scene.objects)
    assert bpy.ops.procanim.export_render.poll()


def test_preferences_can_turn_the_stage_off(ext):
    prefs = ext("operators.preferences").preferences()
    assert prefs is not None
    prefs.add_camera = False
    prefs.add_floor = False
    try:
        _add("juggle", {"siteswap": "3", "loops": 1})
    finally:
        prefs.add_camera = True
        prefs.add_floor = True
    assert bpy.context.scene.camera is None
    assert not any(o.type in {"CAMERA", "LIGHT"} or o.name.startswith("Floor") for o in bpy.data.objects)


def _world_locations(objects, frames):
    scene = bpy.context.scene
    out = []
    for frame in frames:
        scene.frame_set(frame)
        out.append([np.array(o.matrix_world.translation) for o in objects])
    return np.array(out)


def test_juggling_is_added_at_the_3d_cursor_and_plays_there(ext):
    writers = ext("operators.writers")
    _add("juggle", {"siteswap": "3", "loops": 1})
    cursor = np.array([2.0, -3.0, 0.5])
    bpy.context.scene.cursor.location = cursor
    _add("juggle", {"siteswap": "3", "loops": 1})
    first, second = _instances(writers, "Juggling")

    def balls(collection):
        return sorted((o for o in collection.objects if o.name.startswith("Ball")), key=lambda o: o.name)

    frames = [1, 7, 15]
    at_origin = _world_locations(balls(first), frames)
    at_cursor = _world_locations(balls(second), frames)
    np.testing.assert_allclose(at_cursor - at_origin, np.broadcast_to(cursor, at_origin.shape), atol=1e-5)


def test_baking_the_selected_ik_arm_leaves_the_other_untouched(ext):
    writers = ext("operators.writers")
    _add("add_ik_arm", {"frame_count": 24})
    first = bpy.context.active_object
    bpy.context.scene.cursor.location = (3.0, 0.0, 0.0)
    _add("add_ik_arm", {"frame_count": 24})
    second = bpy.context.active_object
    assert second != first and np.allclose(second.location, (3.0, 0.0, 0.0))
    assert bpy.ops.procanim.bake_ik() == {"FINISHED"}
    assert writers.fcurves_of(second), "the selected arm is baked"
    assert not writers.fcurves_of(first), "the other arm has no keys"
    # The baked arm reaches its own (moved) target.
    scene = bpy.context.scene
    scene.frame_set(scene.frame_start + 12)
    tip = second.matrix_world @ second.pose.bones[second.procanim.ik.tip_bone].tail
    target = second.procanim.ik.target.matrix_world.translation
    assert (tip - target).length < 0.05
    # Now bake the first one: the second's keys stay exactly as they were.
    before = [tuple(kp.co) for fc in writers.fcurves_of(second) for kp in fc.keyframe_points]
    writers.select_only(bpy.context, [first], first)
    assert bpy.ops.procanim.bake_ik() == {"FINISHED"}
    assert writers.fcurves_of(first)
    assert [tuple(kp.co) for fc in writers.fcurves_of(second) for kp in fc.keyframe_points] == before


def test_baking_the_selected_fly_leaves_the_other_untouched(ext):
    fly = ext("operators.fly")
    writers = ext("operators.writers")
    _add("add_fly", {})
    first = fly.fly_parts(bpy.context)
    bpy.context.scene.cursor.location = (1.0, 0.0, 0.0)
    _add("add_fly", {})
    second = fly.fly_parts(bpy.context)
    assert first["body"] != second["body"]
    np.testing.assert_allclose(second["body"].location, (1.0, 0.0, 1.0))
    counts = data_counts()
    assert bpy.ops.procanim.bake_fly(duration=0.1) == {"FINISHED"}
    assert data_counts()["objects"] == counts["objects"], "the bake built no new fly"
    assert writers.fcurves_of(second["body"]) and writers.fcurves_of(second["wing_r"])
    assert not any(writers.fcurves_of(part) for part in first.values())
    # The flight starts where the selected fly stands.
    scene = bpy.context.scene
    scene.frame_set(scene.frame_start)
    np.testing.assert_allclose(second["body"].matrix_world.translation, (1.0, 0.0, 1.0), atol=1e-3)


def test_baking_the_selected_jelly_leaves_the_other_untouched(ext):
    _add("add_softbody_demo", {"subdivisions": 1})
    first = bpy.context.active_object
    bpy.context.scene.cursor.location = (2.0, 0.0, 0.0)
    _add("add_softbody_demo", {"subdivisions": 1})
    second = bpy.context.active_object
    assert first != second and second.location.x == pytest.approx(2.0)
    assert bpy.ops.procanim.bake_softbody(frame_count=3, substeps=5, cache_mode="SHAPE_KEYS") == {"FINISHED"}
    assert second.data.shape_keys is not None
    assert first.data.shape_keys is None and not first.modifiers


@pytest.mark.parametrize(
    "operator", ["add_ellipsoid_mirror", "add_fresnel_reflector", "add_mirror_chain"]
)
def test_mirror_adds_make_their_own_instances_and_each_traces_its_own_rays(ext, operator):
    writers = ext("operators.writers")
    options = {"zones": 8} if operator == "add_fresnel_reflector" else {}
    _add(operator, options)
    first = bpy.context.active_object
    _add(operator, options)
    second = bpy.context.active_object
    assert first != second and first.name in bpy.data.objects
    assert len(_instances(writers, "Mirrors")) == 2
    assert writers.instance_of(first) != writers.instance_of(second)
    assert bpy.ops.procanim.trace_rays() == {"FINISHED"}  # the active one: the second
    writers.select_only(bpy.context, [first], first)
    assert bpy.ops.procanim.trace_rays() == {"FINISHED"}
    rays = [o for o in bpy.data.objects if o.type == "CURVE" and o.name.startswith("Light Rays")]
    assert len(rays) == 2, "tracing one mirror leaves the other's rays alone"


def test_a_scene_with_a_camera_but_no_lamp_keeps_its_own_lighting():
    camera = bpy.data.objects.new("Their Camera", bpy.data.cameras.new("Their Camera"))
    bpy.context.scene.collection.objects.link(camera)
    bpy.context.scene.camera = camera
    _add("juggle", {"siteswap": "3", "loops": 1})
    assert not any(o.type == "LIGHT" for o in bpy.data.objects)
    assert bpy.context.scene.camera == camera


def test_a_bouncing_pattern_brings_the_floor_it_bounces_on_even_into_a_users_scene(ext):
    writers = ext("operators.writers")
    _user_scene()
    _add("juggle", {"siteswap": "3B", "loops": 1})
    (instance,) = _instances(writers, "Juggling")
    assert any(o.name.startswith("Floor") for o in instance.objects)
    _add("juggle", {"siteswap": "3", "loops": 1})
    assert len([o for o in bpy.data.objects if o.name.startswith("Floor")]) == 1


def _world_vertices(obj):
    co = np.empty(3 * len(obj.data.vertices), dtype=np.float32)
    obj.data.vertices.foreach_get("co", co)
    matrix = np.array(obj.matrix_world, dtype=np.float64)
    return co.reshape(-1, 3).astype(np.float64) @ matrix[:3, :3].T + matrix[:3, 3]


@pytest.mark.parametrize(
    ("operator", "options"),
    [
        ("add_ellipsoid_mirror", {"resolution": 6}),
        ("add_fresnel_reflector", {"zones": 6}),
        ("add_mirror_chain", {"resolution": 6}),
    ],
)
def test_mirrors_are_added_from_the_3d_cursor(operator, options):
    _add(operator, options)
    at_origin = _world_vertices(bpy.context.active_object)
    cursor = np.array([1.5, -2.0, 0.25])
    bpy.context.scene.cursor.location = cursor
    _add(operator, options)
    at_cursor = _world_vertices(bpy.context.active_object)
    assert at_cursor.shape == at_origin.shape
    np.testing.assert_allclose(at_cursor, at_origin + cursor, atol=2e-5)
