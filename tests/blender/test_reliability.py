"""The defects a hostile script found (issue 16), each pinned: NaN refused before anything is written,
every scene setting put back after a failure, sizes that would exhaust memory or run for minutes
refused with what they need, degenerate meshes refused, re-running and re-baking leave nothing behind."""

from __future__ import annotations

import math
import time

import bpy
import numpy as np
import pytest
from conftest import data_counts


def _scene_settings():
    scene = bpy.context.scene
    layer = bpy.context.view_layer
    return (
        scene.frame_start,
        scene.frame_end,
        scene.frame_current,
        scene.camera,
        layer.objects.active,
        sorted(o.name for o in layer.objects if o is not None and o.select_get()),
    )


def _user_scene():
    """A scene the user built: a camera, a selected active cube, a frame range of their own."""
    scene = bpy.context.scene
    camera = bpy.data.objects.new("User Camera", bpy.data.cameras.new("User Camera"))
    scene.collection.objects.link(camera)
    scene.camera = camera
    cube = bpy.data.objects.new("User Cube", bpy.data.meshes.new("User Cube"))
    scene.collection.objects.link(cube)
    cube.select_set(True)
    bpy.context.view_layer.objects.active = cube
    scene.frame_start, scene.frame_end = 11, 33
    scene.frame_set(17)


@pytest.fixture()
def probe(ext):
    base = ext("operators._base")
    errors = ext("addon.errors")

    class PROCANIM_OT_test_settings_probe(base.ProcAnimOperator, bpy.types.Operator):
        """Changes every scene setting an operator may touch, then fails"""

        bl_idname = "procanim.test_settings_probe"
        bl_label = "Settings Probe"
        bl_options = {"REGISTER", "UNDO"}

        def run(self, context):
            scene = context.scene
            camera = bpy.data.objects.new("Probe Camera", bpy.data.cameras.new("Probe Camera"))
            scene.collection.objects.link(camera)
            scene.camera = camera
            scene.frame_start, scene.frame_end = 1, 500
            scene.render.fps = 60
            for obj in context.view_layer.objects:
                obj.select_set(False)
            camera.select_set(True)
            context.view_layer.objects.active = camera
            scene.frame_set(250)
            raise errors.ProcAnimError("failed after changing the scene")

    bpy.utils.register_class(PROCANIM_OT_test_settings_probe)
    yield
    bpy.utils.unregister_class(PROCANIM_OT_test_settings_probe)


def test_failure_restores_every_scene_setting_not_only_datablocks(probe):
    _user_scene()
    before, counts, fps = _scene_settings(), data_counts(), bpy.context.scene.render.fps
    with pytest.raises(RuntimeError, match="failed after changing the scene"):
        bpy.ops.procanim.test_settings_probe()
    assert _scene_settings() == before
    assert data_counts() == counts
    assert bpy.context.scene.render.fps == fps


def test_cancelled_ik_arm_leaves_the_frame_range_alone():
    _user_scene()
    before = _scene_settings()
    with pytest.raises(RuntimeError, match="Bone Length must be a finite number"):
        bpy.ops.procanim.add_ik_arm(frame_count=50, bone_length=math.nan)
    assert _scene_settings() == before


@pytest.mark.parametrize(
    ("operator", "arguments", "message"),
    [
        ("add_softbody_demo", {"height": math.nan}, "Drop Height must be a finite number"),
        ("add_fly", {"location": (0.0, math.nan, 1.0)}, "Location must be a finite number"),
        ("add_ellipsoid_mirror", {"focus_1": (1e30, 0.0, 0.0)}, "at most 1e"),
        # Blender clamps inf to a property's hard maximum; without a real one that is 3.4e38.
        ("add_ellipsoid_mirror", {"side": (math.inf, 0.0, 0.0)}, "Side is"),
    ],
)
def test_nan_infinity_and_huge_values_are_refused_before_anything_is_written(operator, arguments, message):
    counts = data_counts()
    with pytest.raises(RuntimeError, match=message):
        getattr(bpy.ops.procanim, operator)(**arguments)
    assert data_counts() == counts


def test_trace_rays_refuses_nan_overshoot():
    assert bpy.ops.procanim.add_ellipsoid_mirror() == {"FINISHED"}
    counts = data_counts()
    with pytest.raises(RuntimeError, match="Overshoot must be a finite number"):
        bpy.ops.procanim.trace_rays(overshoot=math.nan)
    assert data_counts() == counts


def test_report_is_one_line_even_for_a_name_with_newlines():
    assert bpy.ops.procanim.add_fly() == {"FINISHED"}
    with pytest.raises(RuntimeError) as error:
        bpy.ops.procanim.bake_fly(duration=0.1, target="a\nb" + "x" * 5000)
    assert len(str(error.value).strip().splitlines()) == 1
    assert len(str(error.value)) < 500


def test_ellipsoid_aperture_of_pi_is_accepted_and_too_wide_minor_axis_is_named(ext):
    assert bpy.ops.procanim.add_ellipsoid_mirror(aperture=math.pi) == {"FINISHED"}
    optics = ext("addon.optics")
    with pytest.raises(optics.OpticsError, match="too wide"):
        optics.ellipsoid_from_foci((0, 0, 0), (1, 0, 0), 1e9)


@pytest.mark.parametrize(
    ("operator", "arguments", "message"),
    [
        ("add_fresnel_reflector", {"zones": 40, "segments": 549450}, "memory"),
        ("add_fresnel_reflector", {"zones": 10**9, "zone_steps": 2**31 - 1}, "would"),
        ("add_fresnel_reflector", {"zone_width": 1e-9}, "would"),
        ("train_fly", {"population": 2**31 - 1}, "would take about"),
        ("train_fly", {"generations": 10**9}, "would take about"),
    ],
)
def test_absurd_sizes_are_refused_with_what_they_would_need(operator, arguments, message):
    counts = data_counts()
    with pytest.raises(RuntimeError, match=message):
        getattr(bpy.ops.procanim, operator)(**arguments)
    assert data_counts() == counts


def test_integer_sizes_have_hard_limits():
    limits = {
        ("add_fresnel_reflector", "zones"): 10_000,
        ("add_fresnel_reflector", "segments"): 100_000,
        ("add_fresnel_reflector", "zone_steps"): 256,
        ("add_ellipsoid_mirror", "resolution"): 512,
        ("add_mirror_chain", "resolution"): 512,
        ("trace_rays", "ray_count"): 20_000,
        ("train_fly", "population"): 5000,
    }
    for (operator, name), limit in limits.items():
        prop = getattr(bpy.ops.procanim, operator).get_rna_type().properties[name]
        assert prop.hard_max == limit, (operator, name)
    assert bpy.ops.procanim.bake_fly.get_rna_type().properties["duration"].hard_max == 3600.0


def test_bake_fly_and_ik_refuse_work_beyond_a_minute_from_a_script():
    assert bpy.ops.procanim.add_fly() == {"FINISHED"}
    with pytest.raises(RuntimeError, match="would take about"):
        bpy.ops.procanim.bake_fly(duration=1e9)
    assert bpy.ops.procanim.add_ik_arm(frame_count=10) == {"FINISHED"}
    before = _scene_settings()
    with pytest.raises(RuntimeError, match="memory|would take"):
        bpy.ops.procanim.bake_ik(frame_start=-(2**31), frame_end=2**31 - 1)
    assert _scene_settings() == before


def test_cli_batch_mode_allows_long_work(ext):
    base = ext("operators._base")

    class Probe(base.ProcAnimOperator):
        pass

    probe = Probe()
    assert probe.time_limit() == base.BLOCKING_TIME_LIMIT
    with base.batch_mode():
        assert probe.time_limit() > base.BLOCKING_TIME_LIMIT
    assert probe.time_limit() == base.BLOCKING_TIME_LIMIT


def test_rigid_pile_refuses_extreme_substeps_and_iterations():
    assert bpy.ops.procanim.add_rigid_pile_demo(count=3) == {"FINISHED"}
    counts = data_counts()
    with pytest.raises(RuntimeError, match="would take about"):
        bpy.ops.procanim.bake_rigid_pile(substeps=500, iterations=50, stretch_compliance=-1e9)
    assert data_counts() == counts


def test_soft_body_bake_refuses_a_mesh_scaled_to_zero():
    mesh = bpy.data.meshes.new("Flat")
    mesh.from_pydata([(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1)], [], [(0, 1, 2), (0, 1, 3)])
    obj = bpy.data.objects.new("Flat", mesh)
    bpy.context.scene.collection.objects.link(obj)
    obj.scale = (0.0, 0.0, 0.0)
    obj.select_set(True)
    bpy.context.view_layer.objects.active = obj
    counts = data_counts()
    with pytest.raises(RuntimeError, match="scaled to zero"):
        bpy.ops.procanim.bake_softbody(frame_count=2)
    assert data_counts() == counts


@pytest.mark.parametrize("operator", ["add_softbody_demo", "add_rigid_pile_demo"])
def test_demos_can_be_added_again(operator):
    assert getattr(bpy.ops.procanim, operator)() == {"FINISHED"}
    assert getattr(bpy.ops.procanim, operator)() == {"FINISHED"}
    assert None not in list(bpy.context.view_layer.objects)
    assert bpy.context.view_layer.objects.active is not None


def test_soft_body_shape_key_rebake_leaves_no_orphan_action():
    assert bpy.ops.procanim.add_softbody_demo(subdivisions=1) == {"FINISHED"}
    assert bpy.ops.procanim.bake_softbody(frame_count=3, cache_mode="SHAPE_KEYS") == {"FINISHED"}
    actions = len(bpy.data.actions)
    for _ in range(2):
        assert bpy.ops.procanim.bake_softbody(frame_count=3, cache_mode="SHAPE_KEYS") == {"FINISHED"}
    assert len(bpy.data.actions) == actions
    assert all(action.users > 0 for action in bpy.data.actions)


@pytest.mark.parametrize(
    "arguments",
    [{"experiment": "BALANCE", "balance_duration": 0.5}, {"experiment": "SEQUENCE", "weight_shift": False}],
)
def test_balance_rebake_leaves_no_orphan_action(arguments):
    assert bpy.ops.procanim.add_dancer() == {"FINISHED"}
    assert bpy.ops.procanim.bake_balance(**arguments) == {"FINISHED"}
    actions = len(bpy.data.actions)
    assert bpy.ops.procanim.bake_balance(**arguments) == {"FINISHED"}
    assert len(bpy.data.actions) == actions
    assert all(action.users > 0 for action in bpy.data.actions)
    matrices = np.array([np.array(o.matrix_world) for o in bpy.data.objects])
    assert np.all(np.isfinite(matrices))


def test_a_blocking_bake_that_overruns_its_limit_is_stopped_and_rolled_back(ext, monkeypatch):
    base = ext("operators._base")
    writers = ext("operators.writers")

    class PROCANIM_OT_test_endless_bake(base.BakeOperator, bpy.types.Operator):
        """Writes a frame range, then bakes far longer than it estimated"""

        bl_idname = "procanim.test_endless_bake"
        bl_label = "Endless Bake"
        bl_options = {"REGISTER", "UNDO"}

        def bake(self, context):
            writers.new_object("Half Done", None, writers.generator_collection(context.scene, "Endless"))
            context.scene.frame_end = 999
            for step in range(10**6):
                time.sleep(0.01)
                yield step / 10**6
            return None

        def write(self, context, result):
            return {"FINISHED"}

    prefs = ext("operators.preferences").preferences()
    saved_limit, prefs.script_time_limit = prefs.script_time_limit, 0.2
    bpy.utils.register_class(PROCANIM_OT_test_endless_bake)
    try:
        before, counts = _scene_settings(), data_counts()
        with pytest.raises(RuntimeError, match=r"Endless Bake stopped after 0 s at 0%"):
            bpy.ops.procanim.test_endless_bake()
        assert _scene_settings() == before and data_counts() == counts
    finally:
        prefs.script_time_limit = saved_limit
        bpy.utils.unregister_class(PROCANIM_OT_test_endless_bake)
