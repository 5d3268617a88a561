"""The fly in Blender: add, bake, train, genome files, panel and CLI."""

from __future__ import annotations

from pathlib import Path

import bpy
import numpy as np
import pytest
from conftest import data_counts, run_cli, view3d_override
from ui_smoke import smoke_draw

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def fly(ext):
    return ext("operators.fly")


def _parts(fly):
    return fly.fly_parts(bpy.context)


def _channel(obj, path, index):
    action = obj.animation_data.action
    if hasattr(action, "layers"):
        from bpy_extras.anim_utils import action_get_channelbag_for_slot

        curves = action_get_channelbag_for_slot(action, obj.animation_data.action_slot).fcurves
    else:
        curves = action.fcurves
    return curves.find(path, index=index)


def test_add_fly_matches_the_simulated_geometry(fly, ext):
    assert bpy.ops.procanim.add_fly() == {"FINISHED"}
    parts = _parts(fly)
    # In an empty scene the Add also brings the follow camera and ground, so it renders at once.
    assert set(parts) == {"body", "legs", "wing_r", "wing_l", "camera", "ground"}
    model = ext("addon.fly").FlyModel()
    body = parts["body"]
    size = np.ptp(np.array([v.co for v in body.data.vertices]), axis=0)
    np.testing.assert_allclose(size, model.body_size, rtol=1e-6)
    for key, sign in (("wing_r", 1.0), ("wing_l", -1.0)):
        wing = parts[key]
        assert wing.parent is body
        np.testing.assert_allclose(wing.location, np.array(model.hinge) * [sign, 1, 1], atol=1e-7)
        area = sum(p.area for p in wing.data.polygons)
        assert area == pytest.approx(model.wing_span * model.wing_chord, rel=1e-5)
        assert len(wing.data.polygons) == 4 * model.strips  # each simulated strip cut in four
        assert wing.material_slots[0].material is not None
    # smooth head, thorax and abdomen (eyes on their own material), legs hanging below the body
    assert len(body.data.polygons) > 300 and all(p.use_smooth for p in body.data.polygons)
    assert {slot.material.name for slot in body.material_slots} == {"Fly Body", "Fly Eyes"}
    legs = parts["legs"]
    assert legs.parent is body
    assert min(v.co.z for v in legs.data.vertices) < -0.5 * model.body_size[2]


def test_stroke_genome_adds_and_bakes_a_real_size_fly_with_veined_wings(fly, ext, tmp_path):
    core = ext("addon.fly")
    genome = core.Genome(
        np.random.default_rng(0).normal(0, 0.3, core.genome_size((17, 20, 20, 5))),
        (17, 20, 20, 5),
        aero="quasi_steady",
        size="fruit_fly",
    )
    path = core.save_genome(genome, tmp_path / "stroke.npz")
    bpy.context.scene.procanim.fly.genome_path = str(path)
    assert bpy.ops.procanim.add_fly() == {"FINISHED"}
    parts = _parts(fly)
    model = core.FlyModel.fruit_fly()
    body = parts["body"]
    size = np.ptp(np.array([v.co for v in body.data.vertices]), axis=0)
    np.testing.assert_allclose(size, model.body_size, rtol=1e-5)  # 2.5 mm long
    for key in ("wing_r", "wing_l"):
        wing = parts[key]
        area = sum(p.area for p in wing.data.polygons)
        assert area == pytest.approx(model.wing_area(), rel=0.03)  # the simulated planform
        assert max(abs(v.co.x) for v in wing.data.vertices) == pytest.approx(model.wing_span, rel=1e-5)
        material = wing.material_slots[0].material
        bsdf = next(n for n in material.node_tree.nodes if n.type == "BSDF_PRINCIPLED")
        assert bsdf.inputs["Alpha"].is_linked  # veins drawn from the UVs into the alpha
        assert wing.data.uv_layers.active is not None
        if hasattr(material, "surface_render_method"):
            assert material.surface_render_method == "BLENDED"
    collections = len(bpy.data.collections)
    assert bpy.ops.procanim.bake_fly(duration=0.1, genome_path=str(path)) == {"FINISHED"}
    scene = bpy.context.scene
    assert scene.frame_end == scene.frame_start + int(0.1 * scene.render.fps)
    # wings keyed every third 0.2 ms step at 24 fps (Blender merges keys within 0.01 frame)
    baked = _parts(fly)
    assert set(baked) == set(parts)  # the same fly, not a second one
    curve = _channel(baked["wing_r"], "rotation_quaternion", 0)
    times = np.array([k.co.x for k in curve.keyframe_points])
    step = np.median(np.diff(times)) / scene.render.fps
    assert step == pytest.approx(3 * model.time_step, rel=1e-3)
    assert len(times) == 0.1 / step // 1 + 1
    assert len(bpy.data.collections) == collections


def test_add_then_bake_from_empty_scene_keys_the_shipped_flight(fly, ext, tmp_path):
    assert bpy.ops.procanim.add_fly() == {"FINISHED"}
    assert bpy.ops.procanim.bake_fly(duration=0.5) == {"FINISHED"}
    scene = bpy.context.scene
    body = _parts(fly)["body"]
    fps = scene.render.fps
    assert scene.frame_end == scene.frame_start + int(0.5 * fps)
    core = ext("addon.fly")
    expected = core.simulate(core.load_genome(fly.SHIPPED_GENOME), duration=0.5, start=(0.0, 0.0, 1.0))
    last = scene.frame_end
    index = int(round((last - scene.frame_start) / fps / 0.001))
    scene.frame_set(last)
    np.testing.assert_allclose(body.matrix_world.translation, expected.positions[0, index], atol=1e-5)
    wing = _parts(fly)["wing_r"]
    curve = _channel(wing, "rotation_quaternion", 0)
    assert len(curve.keyframe_points) == 251  # a key every 2 ms: wings beat faster than frames

    path = tmp_path / "fly.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.wm.open_mainfile(filepath=str(path))
    body = _parts(fly)["body"]
    bpy.context.scene.frame_set(last)
    np.testing.assert_allclose(body.matrix_world.translation, expected.positions[0, index], atol=1e-5)
    assert len(_channel(_parts(fly)["wing_r"], "rotation_quaternion", 0).keyframe_points) == 251


def test_bake_alone_builds_the_fly_and_baking_again_reuses_everything(fly):
    assert bpy.ops.procanim.bake_fly(duration=0.1) == {"FINISHED"}
    assert set(_parts(fly)) == {"body", "legs", "wing_r", "wing_l"}
    assert bpy.ops.procanim.bake_fly(duration=0.1, follow_camera=True) == {"FINISHED"}
    counts = data_counts()
    assert set(_parts(fly)) == {"body", "legs", "wing_r", "wing_l", "camera", "ground"}
    assert bpy.context.scene.camera is _parts(fly)["camera"]
    assert bpy.ops.procanim.bake_fly(duration=0.2, follow_camera=True) == {"FINISHED"}
    assert data_counts() == counts


def test_tiny_training_writes_genome_curve_and_bakes_it(fly, ext, tmp_path):
    output = tmp_path / "trained.npz"
    result = bpy.ops.procanim.train_fly(
        population=6, generations=2, train_duration=0.1, seed=3, output_path=str(output)
    )
    assert result == {"FINISHED"}
    settings = bpy.context.scene.procanim.fly
    assert Path(settings.genome_path) == output
    genome = ext("addon.fly").load_genome(output)
    assert genome.weights.shape == (803,)
    curve = tmp_path / "trained_curve.png"
    assert ext("addon.plotting").read_png_size(curve) == (800, 450)
    assert bpy.data.images[fly.CURVE_IMAGE].size[0] == 800
    assert (tmp_path / "trained_population.npz").is_file()
    with bpy.context.temp_override(**view3d_override()):
        smoke_draw(ext("panels.fly").PROCANIM_PT_fly)  # the panel with a training curve to show
    assert not (tmp_path / "trained_checkpoints").exists()
    # resume continues from the saved population; checkpoints go beside the genome
    assert bpy.ops.procanim.train_fly(
        checkpoints=True,
        checkpoint_threshold=-100.0,
        checkpoint_delta=1000.0,
        population=6,
        generations=1,
        train_duration=0.1,
        resume=True,
        output_path=str(output),
    ) == {"FINISHED"}
    saved = sorted(path.name for path in (tmp_path / "trained_checkpoints").iterdir())
    assert saved == ["best_gen00003.npz", "population.npz"]  # generation 3 overall: it resumed after 2
    assert bpy.ops.procanim.bake_fly(duration=0.1, genome_path=settings.genome_path) == {"FINISHED"}


def test_bad_genome_file_cancels_and_leaves_the_scene_unchanged(fly, tmp_path):
    assert bpy.ops.procanim.add_fly() == {"FINISHED"}
    before = data_counts()
    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(b"not a genome")
    with pytest.raises(RuntimeError, match="garbage.npz"):
        bpy.ops.procanim.bake_fly(duration=0.1, genome_path=str(garbage))
    assert data_counts() == before
    assert _parts(fly)["body"].animation_data is None
    with pytest.raises(RuntimeError, match="garbage.npz"):
        bpy.ops.procanim.load_genome(filepath=str(garbage))
    assert bpy.context.scene.procanim.fly.genome_path == ""
    with pytest.raises(RuntimeError, match="not in the scene"):
        bpy.ops.procanim.bake_fly(duration=0.1, target="Nowhere")
    with pytest.raises(RuntimeError, match="Nothing to resume"):
        bpy.ops.procanim.train_fly(
            population=6, generations=1, train_duration=0.05, output_path=str(tmp_path / "x"), resume=True
        )
    assert data_counts() == before


def test_load_and_save_genome_round_trip(fly, ext, tmp_path):
    copy = tmp_path / "copy.npz"
    assert bpy.ops.procanim.save_genome(filepath=str(copy)) == {"FINISHED"}
    assert bpy.ops.procanim.load_genome(filepath=str(copy)) == {"FINISHED"}
    assert bpy.context.scene.procanim.fly.genome_path == str(copy)
    core = ext("addon.fly")
    np.testing.assert_array_equal(
        core.load_genome(copy).weights, core.load_genome(fly.SHIPPED_GENOME).weights
    )


def test_bake_chases_an_animated_target(fly):
    target = bpy.data.objects.new("Goal", None)
    bpy.context.scene.collection.objects.link(target)
    target.location = (0.0, 0.3, 1.2)
    target.keyframe_insert("location", frame=1)
    target.location = (0.0, -0.3, 1.5)
    target.keyframe_insert("location", frame=12)
    assert bpy.ops.procanim.bake_fly(duration=0.2, target="Goal") == {"FINISHED"}
    assert bpy.context.scene.frame_current == 1


@pytest.mark.parametrize("yaw", [0.0, np.pi / 2])
def test_shipped_steering_genome_reaches_a_target_ahead_of_a_turned_fly(fly, yaw):
    assert bpy.ops.procanim.add_fly(location=(1.0, 2.0, 1.0)) == {"FINISHED"}
    body = _parts(fly)["body"]
    body.rotation_quaternion = (np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2))
    ahead = np.array([-np.sin(yaw), np.cos(yaw), 0.0]) * 0.2 + [1.0, 2.0, 1.25]
    target = bpy.data.objects.new("Goal", None)
    bpy.context.scene.collection.objects.link(target)
    target.location = ahead
    assert bpy.ops.procanim.bake_fly(duration=4.0, target="Goal") == {"FINISHED"}
    scene = bpy.context.scene
    distances = []
    for frame in range(scene.frame_end - 24, scene.frame_end + 1):
        scene.frame_set(frame)
        distances.append(np.linalg.norm(np.array(body.matrix_world.translation) - ahead))
    start_distance = np.hypot(0.2, 0.25)
    assert np.mean(distances) < 0.6 * start_distance  # it went toward the target and stays near


def test_panel_draws(fly, ext):
    panel = ext("panels.fly").PROCANIM_PT_fly
    with bpy.context.temp_override(**view3d_override()):
        record = smoke_draw(panel)
        bpy.context.scene.procanim.fly.checkpoints = True  # draws the threshold row too
        bpy.context.scene.procanim.fly.genome_path = "//g.npz"
        smoke_draw(panel)
    assert {"procanim.add_fly", "procanim.train_fly", "procanim.bake_fly"} <= set(record.operators)
    assert {"procanim.load_genome", "procanim.save_genome"} <= set(record.operators)


def test_cli_trains_and_bakes(tmp_path):
    args = [
        "fly",
        "train",
        "--population",
        "6",
        "--generations",
        "1",
        "--flight-time",
        "0.1",
        "--genome",
        str(tmp_path / "g.npz"),
        "--curve",
        str(tmp_path / "curve.png"),
        "--bake",
        "0.2",
        "--out",
        str(tmp_path / "fly.blend"),
    ]
    result = run_cli(*args, tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "curve.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "g.npz").is_file() and (tmp_path / "fly.blend").is_file()
    chase = run_cli(
        "fly",
        "bake",
        "--duration",
        "0.3",
        "--chase",
        "--camera",
        "--out",
        str(tmp_path / "chase.blend"),
        tmp_path=tmp_path,
    )
    assert chase.returncode == 0, chase.stderr
    assert "Baked 0.3 s" in chase.stdout
    bad = run_cli("fly", "bake", "--genome", str(tmp_path / "missing.npz"), tmp_path=tmp_path)
    assert bad.returncode == 1 and "missing.npz" in bad.stderr


def test_cli_trains_a_stroke_genome_on_a_local_dask_cluster_and_bakes_it(tmp_path, ext):
    pytest.importorskip("distributed")
    genome = tmp_path / "stroke.npz"
    args = ["fly", "train", "--control", "stroke", "--population", "4", "--generations", "1"]
    args += ["--flight-time", "0.05", "--workers", "1", "--genome", str(genome), "--bake", "0.05"]
    result = run_cli(*args, "--out", str(tmp_path / "s.blend"), tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    loaded = ext("addon.fly").load_genome(genome)
    assert (loaded.control, loaded.size, loaded.aero) == ("stroke", "fruit_fly", "quasi_steady")
    record = ext("addon.fly.genome").genome_record(genome)
    assert record["settings"]["control"] == "stroke" and record["seed"] == 0
