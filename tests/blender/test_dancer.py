"""The ballet dancer in Blender: add, bake (sequence and balance test), round trip, errors, panel, CLI."""

from __future__ import annotations

from pathlib import Path

import bpy
import numpy as np
import pytest
from conftest import data_counts, run_cli, view3d_override
from ui_smoke import smoke_draw

ROOT = Path(__file__).resolve().parents[2]
SHORT = {"weight_shift": True, "retire": False, "releve": False, "position_time": 0.5, "shift_time": 1.5}


@pytest.fixture()
def dancer(ext):
    return ext("operators.dancer")


def _fcurves(ext, obj):
    return ext("operators.writers").fcurves_of(obj)


def _curve(ext, obj, path, index=0):
    return next(fc for fc in _fcurves(ext, obj) if fc.data_path == path and fc.array_index == index)


def test_add_dancer_from_empty_scene_builds_a_skinned_rig_sized_by_height(dancer):
    assert bpy.ops.procanim.add_dancer(height=1.80) == {"FINISHED"}
    armature = bpy.context.active_object
    assert dancer.is_dancer(armature)
    names = {b.name for b in armature.data.bones}
    assert {
        "hips",
        "spine",
        "chest",
        "neck",
        "head",
        "thigh.L",
        "shin.L",
        "foot.L",
        "toe.L",
        "upper_arm.R",
        "forearm.R",
        "hand.R",
    } <= names
    assert armature.data.bones["head"].tail_local.z == pytest.approx(1.80, abs=1e-4)
    skin = next(o for o in bpy.data.objects if o.type == "MESH" and o.parent is armature)
    assert skin.modifiers["Armature"].object is armature
    assert {g.name for g in skin.vertex_groups} == names
    heights = np.array([v.co.z for v in skin.data.vertices])
    assert heights.max() == pytest.approx(1.80, abs=0.08) and heights.min() < 0.02


def test_add_then_bake_keys_bones_helpers_and_the_plot(dancer, ext):
    assert bpy.ops.procanim.add_dancer() == {"FINISHED"}
    armature = bpy.context.active_object
    assert bpy.ops.procanim.bake_balance(**SHORT) == {"FINISHED"}
    scene = bpy.context.scene
    fps = scene.render.fps / scene.render.fps_base
    assert scene.frame_end - scene.frame_start == int(2.0 * fps)
    paths = {fc.data_path for fc in _fcurves(ext, armature)}
    assert 'pose.bones["thigh.L"].rotation_quaternion' in paths
    assert 'pose.bones["hips"].location' in paths
    helpers = {o.name: o for o in bpy.data.objects if o.get(dancer.HELPER_KEY) == armature.name}
    assert {"Dancer COM", "Dancer COP", "Dancer Support Polygon"} <= set(helpers)
    # The weight goes onto the left foot: the COP goes over it to the left (+y) of where it started
    # and ends there, near the foot's inner heel edge, where the supporting leg stands upright.
    cop_y = _curve(ext, helpers["Dancer COP"], "location", 1)
    start = cop_y.evaluate(scene.frame_start)
    assert max(cop_y.evaluate(f) for f in range(scene.frame_start, scene.frame_end + 1)) > start + 0.03
    assert cop_y.evaluate(scene.frame_end) > start + 0.015
    # The posed left foot sits on the floor under the keyed hips motion at the end.
    scene.frame_set(scene.frame_end)
    foot = armature.pose.bones["foot.L"]
    assert (armature.matrix_world @ foot.head).z == pytest.approx(
        armature.data.bones["foot.L"].head_local.z, abs=0.01
    )
    polygon = helpers["Dancer Support Polygon"].data
    assert len(polygon.vertices) == dancer.POLYGON_RING and polygon.animation_data is not None
    image = bpy.data.images.get(dancer.PLOT_IMAGE)
    assert image is not None and tuple(image.size) == (800, 450)
    assert image.packed_file is not None, "the plot travels inside the .blend"


def test_every_position_is_a_start_and_third_bakes_the_weight_shift(dancer):
    # Saved values of the older three positions are kept (first, second, fifth were 0, 1, 2).
    items = bpy.ops.procanim.bake_balance.get_rna_type().properties["position"].enum_items
    assert [item.identifier for item in items] == ["FIRST_POSITION", "SECOND_POSITION", "THIRD_POSITION",
                                                   "FOURTH_POSITION", "FIFTH_POSITION"]
    assert [item.value for item in items] == [0, 1, 3, 4, 2]
    assert bpy.ops.procanim.add_dancer() == {"FINISHED"}
    assert bpy.ops.procanim.bake_balance(position="THIRD_POSITION", **SHORT) == {"FINISHED"}
    # In fourth the weight shifts onto either foot; coming back off the front foot is refused with
    # the reason.
    assert bpy.ops.procanim.bake_balance(position="FOURTH_POSITION", **SHORT) == {"FINISHED"}
    onto_the_front = "fourth_position@0.5,weight_shift:right@1.5"
    assert bpy.ops.procanim.bake_balance(sequence=onto_the_front) == {"FINISHED"}
    with pytest.raises(RuntimeError, match="from the right .front. foot in fourth_position is not balanced"):
        bpy.ops.procanim.bake_balance(sequence=onto_the_front + ",fourth_position@1.5")


def test_balance_test_bake_reports_and_keys(dancer, ext):
    assert bpy.ops.procanim.add_dancer() == {"FINISHED"}
    result = bpy.ops.procanim.bake_balance(experiment="BALANCE", strategy="COP", balance_duration=3.0)
    assert result == {"FINISHED"}
    com = next(o for o in bpy.data.objects if o.name == "Dancer COM")
    x = _curve(ext, com, "location", 0)
    scene = bpy.context.scene
    # From over the heel to the middle of the feet.
    assert x.evaluate(scene.frame_end) > x.evaluate(scene.frame_start) + 0.05


def test_keys_survive_a_saved_blend(dancer, ext, tmp_path):
    assert bpy.ops.procanim.add_dancer() == {"FINISHED"}
    assert bpy.ops.procanim.bake_balance(**SHORT) == {"FINISHED"}
    armature = bpy.context.active_object
    before = _curve(ext, armature, 'pose.bones["foot.L"].rotation_quaternion', 1)
    values = [before.evaluate(f) for f in range(1, 40, 7)]
    path = tmp_path / "dancer.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.wm.open_mainfile(filepath=str(path))
    armature = bpy.data.objects["Dancer"]
    assert dancer.is_dancer(armature) and dancer.dancer_parameters(armature)["height"] == pytest.approx(1.65)
    after = _curve(ext, armature, 'pose.bones["foot.L"].rotation_quaternion', 1)
    np.testing.assert_allclose([after.evaluate(f) for f in range(1, 40, 7)], values, atol=1e-6)
    polygon = bpy.data.objects["Dancer Support Polygon"].data
    assert len(_fcurves(ext, polygon)) == 3 * dancer.POLYGON_RING


def test_bad_input_is_cancelled_and_leaves_the_scene_unchanged(dancer):
    assert bpy.ops.procanim.add_dancer() == {"FINISHED"}
    before = data_counts()
    frame = bpy.context.scene.frame_current
    with pytest.raises(RuntimeError, match="not balanced yet"):
        bpy.ops.procanim.bake_balance(sequence="fourth_position@0.5,demi_plie@1.5,weight_shift:right@1.5")
    assert data_counts() == before
    assert bpy.context.scene.frame_current == frame
    armature = bpy.context.active_object
    armature[dancer.DANCER_KEY + "_height"] = 0.2
    with pytest.raises(RuntimeError, match="height"):
        bpy.ops.procanim.bake_balance(**SHORT)
    assert data_counts() == before


def test_bake_needs_a_dancer():
    bpy.ops.object.empty_add()
    with pytest.raises(RuntimeError, match="dancer"):
        bpy.ops.procanim.bake_balance()


def test_panel_draws(ext):
    panel = ext("panels.dancer").PROCANIM_PT_dancer
    with bpy.context.temp_override(**view3d_override()):
        smoke_draw(panel)
        bpy.context.scene.procanim.dancer.experiment = "BALANCE"
        smoke_draw(panel)


def test_presets_apply(ext):
    presets = ext("addon.presets").load_presets("dancer")
    for preset in presets:
        assert bpy.ops.procanim.apply_preset(kind="dancer", name=preset["name"]) == {"FINISHED"}
    assert bpy.context.scene.procanim.dancer.sex == "MALE"


def test_cli_dance_writes_blend_and_plots(tmp_path):
    out = tmp_path / "dance.blend"
    plot, compare = tmp_path / "dance.png", tmp_path / "compare.png"
    result = run_cli(
        "dance",
        "--sequence",
        "first_position,weight_shift",
        "--out",
        str(out),
        "--plot",
        str(plot),
        "--compare",
        str(compare),
        "--duration",
        "2.0",
        tmp_path=tmp_path,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert out.is_file() and plot.read_bytes()[:4] == b"\x89PNG" and compare.read_bytes()[:4] == b"\x89PNG"
    bad = run_cli("dance", "--sequence", "first_position,spin", tmp_path=tmp_path, timeout=120)
    assert bad.returncode == 1 and "spin" in bad.stderr
    illegal = run_cli("dance", "--sequence", "first_position,arabesque_45:right", tmp_path=tmp_path,
                      timeout=120)
    assert illegal.returncode == 1 and "arabesque" in illegal.stderr


def test_cli_dance_takes_sides_and_seconds(tmp_path):
    out = tmp_path / "right.blend"
    result = run_cli("dance", "--sequence", "first_position@0.5,weight_shift:right@1.5", "--out", str(out),
                     tmp_path=tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr
    assert out.is_file()


def test_step_list_add_reorder_remove_bake_and_save(dancer, ext, tmp_path):
    assert bpy.ops.procanim.add_dancer() == {"FINISHED"}
    armature = bpy.context.active_object
    settings = bpy.context.scene.procanim.dancer
    # Nothing selected in an empty list: remove and move are greyed out.
    assert not bpy.ops.procanim.dancer_step_remove.poll()
    assert not bpy.ops.procanim.dancer_step_move.poll()
    assert bpy.ops.procanim.dancer_step_add(step="WEIGHT_SHIFT", side="RIGHT") == {"FINISHED"}
    assert bpy.ops.procanim.dancer_step_add(step="FIRST_POSITION") == {"FINISHED"}
    assert bpy.ops.procanim.dancer_step_add(step="RETIRE") == {"FINISHED"}
    assert [s.step for s in settings.steps] == ["WEIGHT_SHIFT", "FIRST_POSITION", "RETIRE"]
    settings.step_index = 1
    assert bpy.ops.procanim.dancer_step_move(direction="UP") == {"FINISHED"}
    assert settings.step_index == 0
    settings.step_index = 2
    assert bpy.ops.procanim.dancer_step_remove() == {"FINISHED"}
    settings.steps[0].duration, settings.steps[1].duration = 0.5, 1.5
    text = dancer.step_list_text(settings.steps)
    assert text == "first_position@0.5,weight_shift:right@1.5"
    assert bpy.ops.procanim.bake_balance(sequence=text) == {"FINISHED"}
    scene = bpy.context.scene
    assert scene.frame_end - scene.frame_start == int(2.0 * scene.render.fps / scene.render.fps_base)
    # The right foot takes the weight: the COP goes over it, to the right (-y) of where it started,
    # and ends there, near the foot's inner heel edge, where the supporting leg stands upright.
    cop = next(o for o in bpy.data.objects if o.name == "Dancer COP")
    cop_y = _curve(ext, cop, "location", 1)
    start = cop_y.evaluate(scene.frame_start)
    assert min(cop_y.evaluate(f) for f in range(scene.frame_start, scene.frame_end + 1)) < start - 0.03
    assert cop_y.evaluate(scene.frame_end) < start - 0.015
    assert armature[dancer.DANCER_KEY + "_sequence"] == text
    path = tmp_path / "steps.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.wm.open_mainfile(filepath=str(path))
    saved = bpy.context.scene.procanim.dancer.steps
    assert [(s.step, s.side, s.duration) for s in saved] == [
        ("FIRST_POSITION", "DEFAULT", 0.5), ("WEIGHT_SHIFT", "RIGHT", 1.5)]
    assert bpy.data.objects["Dancer"][dancer.DANCER_KEY + "_sequence"] == text


def test_an_illegal_step_list_is_refused_with_the_reason_and_changes_nothing(dancer):
    assert bpy.ops.procanim.add_dancer() == {"FINISHED"}
    before = data_counts()
    with pytest.raises(RuntimeError, match="weight on one foot"):
        bpy.ops.procanim.bake_balance(sequence="first_position,retire:right")
    with pytest.raises(RuntimeError, match="unknown step 'plie'"):
        bpy.ops.procanim.bake_balance(sequence="first_position,plie")
    assert data_counts() == before
    assert dancer.DANCER_KEY + "_sequence" not in bpy.context.active_object


def test_panel_draws_the_step_list(ext):
    panel = ext("panels.dancer").PROCANIM_PT_dancer
    settings = bpy.context.scene.procanim.dancer
    for name in ("FIRST_POSITION", "WEIGHT_SHIFT", "RETIRE"):
        settings.steps.add().step = name
    with bpy.context.temp_override(**view3d_override()):
        smoke_draw(panel)


def test_unbalanced_steps_bake_only_when_asked_and_report_the_fall(dancer):
    assert bpy.ops.procanim.add_dancer() == {"FINISHED"}
    sequence = "fourth_position@0.5,releve@9,fifth_position"
    with pytest.raises(RuntimeError, match="not balanced yet"):
        bpy.ops.procanim.bake_balance(sequence=sequence)
    assert bpy.ops.procanim.bake_balance(sequence=sequence, allow_unbalanced=True) == {"FINISHED"}
    assert bpy.context.active_object[dancer.DANCER_KEY + "_sequence"] == sequence
    # After the relevé on both feet in fourth the legs stand the feet where it left them, and the change
    # into fifth falls (13.35 s in): the bake ends at the fall, before the 17 s of the sequence.
    scene = bpy.context.scene
    assert scene.frame_end - scene.frame_start < int(15.0 * scene.render.fps / scene.render.fps_base)
