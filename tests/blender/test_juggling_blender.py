"""procanim.juggle end to end in Blender: defaults, re-runs, bad input, saved keys, Bezier, panel, CLI."""

from __future__ import annotations

from pathlib import Path

import bpy
import numpy as np
import pytest
from conftest import data_counts, run_cli, view3d_override
from ui_smoke import smoke_draw, smoke_draw_menu

ROOT = Path(__file__).resolve().parents[2]
COLLECTION = "ProcAnim Juggling"


def _planned(ext, fps: float, **settings):
    """The pattern the operator bakes for these settings, planned independently of Blender."""
    juggling = ext("addon.juggling")
    defaults = dict(
        siteswap="3",
        beat_duration=None,  # the operator's default: Juggling Lab's automatic beat
        dwell_ratio=1.3,
        prop_type="ball",
        prop_size=1.0,
        chicken_wing=0.0,
        bounce_frac=0.9,
        dwell_path="",
    )
    defaults.update(settings)
    return juggling.plan_pattern(
        juggling.parse_siteswap(defaults["siteswap"]),
        beat_duration=defaults["beat_duration"],
        dwell_ratio=defaults["dwell_ratio"],
        prop_type=defaults["prop_type"],
        prop_size=defaults["prop_size"],
        chicken_wing=defaults["chicken_wing"],
        bounce_frac=defaults["bounce_frac"],
        dwell_paths=defaults["dwell_path"],
        frame_rate=fps,
    )


def _fps() -> float:
    render = bpy.context.scene.render
    return render.fps / render.fps_base


def _props() -> list[bpy.types.Object]:
    names = ("Ball ", "Club ", "Ring ")
    objects = [o for o in bpy.data.collections[COLLECTION].objects if o.name.startswith(names)]
    return sorted(objects, key=lambda o: int(o.name.split()[-1]))


def _world_positions(objects, frames) -> np.ndarray:
    out = np.empty((len(objects), len(frames), 3))
    for k, frame in enumerate(frames):
        bpy.context.scene.frame_set(int(frame))
        for i, obj in enumerate(objects):
            out[i, k] = obj.matrix_world.translation
    return out


def test_add_from_an_empty_scene_with_defaults(ext):
    assert bpy.ops.procanim.juggle() == {"FINISHED"}
    scene = bpy.context.scene
    collection = bpy.data.collections[COLLECTION]
    arms = [o for o in collection.objects if o.type == "ARMATURE"]
    assert len(arms) == 1
    bones = set(arms[0].data.bones.keys())
    for name in ("hips", "spine", "neck", "head", "shoulder.L", "upper_arm.R", "forearm.L", "hand.R"):
        assert name in bones
    props = _props()
    assert len(props) == 3
    assert scene.camera is not None and scene.camera.name in collection.objects
    pattern = _planned(ext, _fps())
    frames_per_loop = round(pattern.loop_duration * _fps())
    assert (scene.frame_start, scene.frame_end) == (1, 2 * frames_per_loop)

    # Keys reproduce the planned motion: props and the posed hands and elbows.
    frames = np.arange(1, scene.frame_end + 1, 5)
    times = (frames - 1) / _fps()
    np.testing.assert_allclose(_world_positions(props, frames), pattern.prop_positions(times), atol=2e-5)
    arm = arms[0]
    hands = pattern.hand_positions(times)[0]
    elbows = pattern.elbow_positions(times)[0]
    for k, frame in enumerate(frames):
        scene.frame_set(int(frame))
        for hand, suffix in ((0, "L"), (1, "R")):
            forearm = arm.pose.bones[f"forearm.{suffix}"]
            np.testing.assert_allclose(arm.matrix_world @ forearm.tail, hands[hand, k], atol=2e-5)
            np.testing.assert_allclose(arm.matrix_world @ forearm.head, elbows[hand, k], atol=2e-5)
            upper = arm.pose.bones[f"upper_arm.{suffix}"]
            assert (upper.tail - upper.head).length == pytest.approx(pattern.body.upper_arm, abs=1e-5)
            assert (forearm.tail - forearm.head).length == pytest.approx(pattern.body.forearm, abs=1e-5)
    # The body meshes ride on their bones: the forearm mesh starts at the elbow.
    part = bpy.data.objects["Juggler 1 forearm.R"]
    scene.frame_set(int(frames[3]))
    np.testing.assert_allclose(part.matrix_world.translation, elbows[1, 3], atol=2e-5)


def test_the_loop_is_seamless(ext):
    bpy.ops.procanim.juggle(siteswap="531", prop_type="club", loops=2)
    scene = bpy.context.scene
    props = _props()
    loop = (scene.frame_end - scene.frame_start + 1) // 2
    first = _world_positions(props, [1, 4, 9])
    second = _world_positions(props, [1 + loop, 4 + loop, 9 + loop])
    np.testing.assert_allclose(first, second, atol=1e-5)
    scene.frame_set(3)
    rotations = [tuple(p.rotation_quaternion) for p in props]
    scene.frame_set(3 + loop)
    for prop, rotation in zip(props, rotations, strict=True):
        assert abs(np.dot(tuple(prop.rotation_quaternion), rotation)) == pytest.approx(1.0, abs=1e-5)
    # Past the frame range the keys' Cycles modifiers keep juggling.
    beyond = _world_positions(props, [scene.frame_end + 4, scene.frame_end + 9 + 3 * loop])
    np.testing.assert_allclose(beyond, _world_positions(props, [4, 9]), atol=1e-5)


def test_running_again_adds_a_second_pattern_and_keeps_the_first():
    bpy.ops.procanim.juggle(siteswap="3")
    first = sorted(o.name for o in bpy.data.collections[COLLECTION].all_objects)
    bpy.ops.procanim.juggle(siteswap="5", prop_type="ring")
    collections = [c for c in bpy.data.collections if c.name.startswith(COLLECTION)]
    assert len(collections) == 2
    assert sorted(o.name for o in bpy.data.collections[COLLECTION].all_objects) == first
    assert [o.name for o in _props()] == [f"Ball {i}" for i in range(1, 4)]
    second = next(c for c in collections if c.name != COLLECTION)
    assert len([o for o in second.objects if o.name.startswith("Ring")]) == 5
    # The stage (camera, sun, floor) came with the first pattern only.
    assert len([o for o in bpy.data.objects if o.type == "CAMERA"]) == 1


@pytest.mark.parametrize(
    ("settings", "words"),
    [
        ({"siteswap": "543"}, "land"),
        ({"siteswap": "54"}, "54"),
        ({"siteswap": "3", "dwell_path": "(30)(ten)"}, "dwell path"),
        ({"siteswap": "3B", "auto_beat": False, "beat_duration": 0.05, "restitution": 0.2}, "bounce"),
    ],
)
def test_bad_input_is_reported_and_changes_nothing(settings, words):
    bpy.ops.procanim.juggle(siteswap="3")
    scene = bpy.context.scene
    scene.frame_set(7)
    before = data_counts()
    names = sorted(o.name for o in bpy.data.objects)
    with pytest.raises(RuntimeError, match=words):
        bpy.ops.procanim.juggle(**settings)
    assert data_counts() == before
    assert sorted(o.name for o in bpy.data.objects) == names
    assert scene.frame_current == 7
    assert len(_props()) == 3


def test_a_bake_too_big_is_refused_before_anything_is_built(ext, monkeypatch):
    monkeypatch.setattr(ext("operators.juggling"), "MAX_KEYS", 5000)
    before = data_counts()
    with pytest.raises(RuntimeError, match="fewer loops"):
        bpy.ops.procanim.juggle(siteswap="531", loops=50)
    assert data_counts() == before


def test_keys_round_trip_through_a_saved_blend(ext, tmp_path):
    bpy.ops.procanim.juggle(siteswap="<3p|3p>", prop_type="club", loops=1)
    path = tmp_path / "juggling.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.wm.open_mainfile(filepath=str(path))
    pattern = _planned(ext, _fps(), siteswap="<3p|3p>", prop_type="club")
    props = _props()
    assert len(props) == 6
    assert len([o for o in bpy.data.objects if o.type == "ARMATURE"]) == 2
    frames = np.array([1, 6, 13, 20, bpy.context.scene.frame_end])
    times = (frames - 1) / _fps()
    np.testing.assert_allclose(_world_positions(props, frames), pattern.prop_positions(times), atol=2e-5)
    orientations = pattern.prop_orientations(times)
    for k, frame in enumerate(frames):
        bpy.context.scene.frame_set(int(frame))
        for i, prop in enumerate(props):
            dot = abs(float(np.dot(tuple(prop.rotation_quaternion), orientations[i, k])))
            assert dot == pytest.approx(1.0, abs=1e-5)


def test_bezier_keys_follow_the_true_velocities(ext):
    bpy.ops.procanim.juggle(siteswap="3", key_style="BEZIER", loops=1)
    writers = ext("operators.writers")
    prop = _props()[0]
    curves = {fc.array_index: fc for fc in writers.fcurves_of(prop) if fc.data_path == "location"}
    z = curves[2]
    assert all(k.interpolation == "BEZIER" for k in z.keyframe_points)
    pattern = _planned(ext, _fps())
    fps = _fps()
    # Between keys a Bezier through true slopes tracks the parabola far better than a straight line.
    half_frames = np.arange(1.5, bpy.context.scene.frame_end, 1.0)
    truth = pattern.prop_positions((half_frames - 1) / fps)[0, :, 2]
    bezier = np.array([z.evaluate(f) for f in half_frames])
    keys = pattern.prop_positions((np.arange(1, bpy.context.scene.frame_end + 2) - 1) / fps)[0, :, 2]
    linear = 0.5 * (keys[:-1] + keys[1:])[: len(half_frames)]
    # Whole key intervals inside one flight (the velocity jumps at catches and throws).
    start_t, end_t = (half_frames - 1.5) / fps, (half_frames - 0.5) / fps
    in_air = np.zeros(len(half_frames), dtype=bool)
    for flight in pattern.flights:
        if flight.prop == 0:
            in_air |= (start_t > flight.throw_time) & (end_t < flight.catch_time)
    assert in_air.mean() > 0.3
    assert np.abs(bezier - truth)[in_air].max() < 1e-4
    assert np.abs(linear - truth)[in_air].max() > 10 * np.abs(bezier - truth)[in_air].max()
    slope = (z.keyframe_points[3].handle_right[1] - z.keyframe_points[3].co[1]) / (
        z.keyframe_points[3].handle_right[0] - z.keyframe_points[3].co[0]
    )
    assert slope == pytest.approx(pattern.prop_velocities([3 / fps])[0, 0, 2] / fps, abs=1e-4)


def test_three_jugglers_pass_on_a_circle():
    assert bpy.ops.procanim.juggle(siteswap="<3p2 3|3p3 3|3p1 3>", loops=1) == {"FINISHED"}
    arms = [o for o in bpy.data.objects if o.type == "ARMATURE"]
    assert len(arms) == 3
    centre = sum((a.location for a in arms), arms[0].location * 0) / 3
    distances = [(a.location - centre).length for a in arms]
    assert max(distances) == pytest.approx(min(distances), abs=1e-6)
    assert len(_props()) == 9


def test_panel_draws_with_live_feedback(ext):
    panels = ext("panels.juggling")
    settings = bpy.context.scene.procanim.juggling
    with bpy.context.temp_override(**view3d_override()):
        record = smoke_draw(panels.PROCANIM_PT_juggling)
        assert "procanim.juggle" in record.operators
        assert any("3 props" in label for label in record.labels)
        assert any(label.startswith("Loop ") and "frames" in label for label in record.labels)
        settings.siteswap = "543"
        record = smoke_draw(panels.PROCANIM_PT_juggling)
        assert any("land" in label for label in record.labels)
        # A valid siteswap whose timing cannot work is caught before the button is pressed.
        settings.siteswap = "3B"
        settings.auto_beat = False
        settings.beat_duration = 0.05
        settings.restitution = 0.2
        record = smoke_draw(panels.PROCANIM_PT_juggling)
        assert any("bounce" in label for label in record.labels)
        settings.auto_beat = True
        settings.restitution = 0.9
        smoke_draw(panels.PROCANIM_PT_juggling_more)
        menu = smoke_draw_menu(panels.JugglingPresetMenu)
        assert len(menu.operators) >= 40


def test_add_menu_offers_the_operator():
    with bpy.context.temp_override(**view3d_override()):
        record = smoke_draw_menu(bpy.types.PROCANIM_MT_add)
    assert "procanim.juggle" in record.operators


def test_panel_button_passes_the_sidebar_settings(ext):
    settings = bpy.context.scene.procanim.juggling
    settings.siteswap = "441"
    settings.prop_type = "ring"
    settings.loops = 1
    with bpy.context.temp_override(**view3d_override()):
        record = smoke_draw(ext("panels.juggling").PROCANIM_PT_juggling)
    # The preset row's + and - come first, then the rig row's eyedropper; the big button is last.
    buttons = [idname for idname, _ in record.operator_properties]
    assert buttons == [
        "procanim.preset_add",
        "procanim.preset_remove",
        "procanim.use_active_rig",
        "procanim.juggle",
    ]
    values = record.operator_properties[-1][1]
    assert values["target_rig"] == ""
    assert values["siteswap"] == "441" and values["prop_type"] == "ring" and values["loops"] == 1
    assert bpy.ops.procanim.juggle(**values) == {"FINISHED"}
    assert [o.name for o in _props()] == ["Ring 1", "Ring 2", "Ring 3"]


def test_cli_subcommand_saves_a_scene(tmp_path):
    out = tmp_path / "cli.blend"
    done = run_cli(
        "juggle",
        "--siteswap",
        "531",
        "--prop",
        "club",
        "--loops",
        "1",
        "--out",
        str(out),
        tmp_path=tmp_path,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr
    assert out.exists() and out.stat().st_size > 10_000
    bad = run_cli("juggle", "--siteswap", "54", tmp_path=tmp_path, timeout=240)
    assert bad.returncode == 1
    assert "54" in bad.stderr


@pytest.mark.parametrize(
    "preset", ["Three-Juggler Feed", "Five-Ball Bounce", "Sync Multiplex (4,[44])", "Ring 441"]
)
def test_presets_from_the_menu_bake(ext, preset):
    assert bpy.ops.procanim.apply_preset(kind="juggling", name=preset) == {"FINISHED"}
    settings = bpy.context.scene.procanim.juggling
    names = ext("operators.juggling").juggling_properties().keys()
    values = {name: getattr(settings, name) for name in names}
    values["loops"] = 1
    assert bpy.ops.procanim.juggle(**values) == {"FINISHED"}
    assert len(_props()) > 0


def test_bezier_spin_keys_follow_the_true_rotation(ext):
    bpy.ops.procanim.juggle(siteswap="5", prop_type="club", key_style="BEZIER", loops=1)
    writers = ext("operators.writers")
    fps = _fps()
    pattern = _planned(ext, fps, siteswap="5", prop_type="club")
    prop = _props()[0]
    curves = sorted(
        (fc for fc in writers.fcurves_of(prop) if fc.data_path == "rotation_quaternion"),
        key=lambda fc: fc.array_index,
    )
    half_frames = np.arange(1.5, bpy.context.scene.frame_end, 1.0)
    keyed = np.array([[fc.evaluate(f) for fc in curves] for f in half_frames])
    keyed /= np.linalg.norm(keyed, axis=1, keepdims=True)
    truth = pattern.prop_orientations((half_frames - 1) / fps)[0]
    start_t, end_t = (half_frames - 1.5) / fps, (half_frames - 0.5) / fps
    in_air = np.zeros(len(half_frames), dtype=bool)
    for flight in pattern.flights:
        if flight.prop == 0:
            in_air |= (start_t > flight.throw_time) & (end_t < flight.catch_time)
    assert in_air.sum() > 10
    dots = np.abs(np.sum(keyed * truth, axis=1))
    assert np.all(dots[in_air] > 1 - 1e-5)  # within about half a degree of the spinning club


def test_juggling_lab_parameter_strings_and_zero_prop_patterns(ext):
    assert bpy.ops.procanim.juggle(siteswap="pattern=531;bps=2.5;colors=red,{0,0,255}") == {"FINISHED"}
    props = _props()
    assert len(props) == 3
    colors = [tuple(p.active_material.diffuse_color)[:3] for p in props]
    assert colors[0] == pytest.approx((1.0, 0.0, 0.0))
    assert colors[1] == pytest.approx((0.0, 0.0, 1.0))
    planned = ext("addon.juggling.parameters").plan_config("pattern=531;bps=2.5", frame_rate=_fps())
    frames_per_loop = round(planned.loop_duration * _fps())
    assert planned.beat_duration == pytest.approx(0.4, rel=0.02)
    assert bpy.context.scene.frame_end == 2 * frames_per_loop
    # No props: the jugglers are still built, their hands at rest (in a fresh scene: Add adds).
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.procanim.juggle(siteswap="<0|0>") == {"FINISHED"}
    collection = bpy.data.collections[COLLECTION]
    assert len([o for o in collection.objects if o.type == "ARMATURE"]) == 2
    assert not _props()


def test_the_juggler_moves_and_keeps_feet_and_hands_where_planned(ext):
    assert bpy.ops.procanim.juggle(siteswap="7", loops=1) == {"FINISHED"}
    latest = max((c for c in bpy.data.collections if c.name.startswith(COLLECTION)), key=lambda c: c.name)
    arm = next(o for o in latest.objects if o.type == "ARMATURE")
    pattern = _planned(ext, _fps(), siteswap="7")
    frames_per_loop = round(pattern.loop_duration * _fps())
    head_dirs, hips, ankles, shoulders, planned = [], [], [], [], []
    frames = list(range(1, frames_per_loop + 1, 3))
    for frame in frames:
        bpy.context.scene.frame_set(frame)
        pose = arm.pose.bones
        world = np.array(arm.matrix_world)

        def to_world(v, world=world):
            return (world @ np.append(np.array(v), 1.0))[:3]

        head_dirs.append(np.array(pose["head"].matrix.to_3x3())[:, 1])
        hips.append(to_world(pose["hips"].head)[2])
        ankles.append([to_world(pose[f"shin.{s}"].tail)[2] for s in "LR"])
        shoulders.append(to_world(pose["upper_arm.L"].head))
        planned.append(pattern.shoulder_positions([(frame - 1) / _fps()])[0, 0, 0])
    # Knees dip (hips go down and up), feet stay on the floor, the head turns, shoulders as planned.
    assert np.ptp(hips) > 0.005
    np.testing.assert_allclose(ankles, 0.08, atol=1e-4)
    assert np.ptp(np.array(head_dirs), axis=0).max() > 0.05
    np.testing.assert_allclose(shoulders, planned, atol=1e-4)


def test_passing_adds_a_view_camera_on_each_jugglers_head():
    assert bpy.ops.procanim.juggle(siteswap="<3p|3p>", loops=1) == {"FINISHED"}
    latest = max((c for c in bpy.data.collections if c.name.startswith(COLLECTION)), key=lambda c: c.name)
    views = sorted(
        (o for o in latest.objects if o.type == "CAMERA" and "View" in o.name), key=lambda o: o.name
    )
    assert [o.name.split(".")[0] for o in views] == ["Juggler 1 View", "Juggler 2 View"]
    assert bpy.context.scene.camera not in views  # the overview stays the scene's camera
    arms = sorted((o for o in latest.objects if o.type == "ARMATURE"), key=lambda o: o.name)
    bpy.context.scene.frame_set(1)
    for view, arm, partner in zip(views, arms, reversed(arms), strict=True):
        assert (view.parent, view.parent_type, view.parent_bone) == (arm, "BONE", "head")
        looking = -np.array(view.matrix_world.to_3x3())[:, 2]
        towards = np.array(partner.matrix_world.translation - arm.matrix_world.translation)
        towards /= np.linalg.norm(towards)
        assert looking @ towards > 0.8  # looks at the partner
