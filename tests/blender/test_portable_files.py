"""Files travel with the .blend: caches and genomes are stored relative to it, what an unsaved bake left
in the temporary folder moves beside the file on its first save, images are packed, and a project
folder moved elsewhere plays back the same."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import bpy
import numpy as np

FRAMES = (1, 3, 5, 7)


def _evaluated(obj_name: str) -> np.ndarray:
    """World vertex positions of the object at FRAMES, after its modifiers (the Mesh Cache)."""
    scene = bpy.context.scene
    out = []
    for frame in FRAMES:
        scene.frame_set(frame)
        depsgraph = bpy.context.evaluated_depsgraph_get()
        evaluated = bpy.data.objects[obj_name].evaluated_get(depsgraph)
        mesh = evaluated.to_mesh()
        co = np.empty(3 * len(mesh.vertices), dtype=np.float32)
        mesh.vertices.foreach_get("co", co)
        evaluated.to_mesh_clear()
        out.append(co.reshape(-1, 3))
    return np.array(out)


def _bake_jelly() -> str:
    assert bpy.ops.procanim.add_softbody_demo(subdivisions=1, height=1.0, radius=0.3) == {"FINISHED"}
    jelly = bpy.context.active_object.name
    assert bpy.ops.procanim.bake_softbody(frame_count=8, substeps=4, cache_mode="PC2") == {"FINISHED"}
    return jelly


def _cache_path(obj_name: str) -> str:
    return bpy.data.objects[obj_name].modifiers["ProcAnim Cache"].filepath


def _move_and_reopen(folder: Path, blend_name: str) -> Path:
    bpy.ops.wm.read_homefile(use_empty=True)
    moved = folder.with_name(folder.name + " moved")
    shutil.move(str(folder), str(moved))
    bpy.ops.wm.open_mainfile(filepath=str(moved / blend_name))
    return moved


def test_bake_save_move_the_folder_reopen_and_play_back_the_same(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    bpy.ops.wm.save_as_mainfile(filepath=str(project / "scene.blend"))
    jelly = _bake_jelly()
    assert _cache_path(jelly) == "//procanim_cache/Jelly.pc2"
    before = _evaluated(jelly)
    assert np.ptp(before[:, :, 2]) > 0.01, "the jelly moves"
    bpy.ops.wm.save_mainfile()
    moved = _move_and_reopen(project, "scene.blend")
    assert not project.exists() and (moved / "procanim_cache" / "Jelly.pc2").is_file()
    np.testing.assert_array_equal(_evaluated(jelly), before)


def test_an_unsaved_bake_moves_beside_the_blend_on_its_first_save(tmp_path, ext):
    jelly = _bake_jelly()
    temporary = Path(bpy.app.tempdir)
    cached = Path(_cache_path(jelly))
    assert cached.is_absolute() and temporary in cached.parents
    before = _evaluated(jelly)
    project = tmp_path / "first save"
    project.mkdir()
    bpy.ops.wm.save_as_mainfile(filepath=str(project / "jelly.blend"))
    assert _cache_path(jelly) == "//procanim_cache/Jelly.pc2"
    assert (project / "procanim_cache" / "Jelly.pc2").is_file()
    assert ext("operators.portable").LAST_SAVE["moved"] == [str(project / "procanim_cache" / "Jelly.pc2")]
    np.testing.assert_array_equal(_evaluated(jelly), before)
    _move_and_reopen(project, "jelly.blend")
    np.testing.assert_array_equal(_evaluated(jelly), before)


def test_a_genome_trained_unsaved_moves_beside_the_blend_and_its_curve_is_packed(tmp_path, ext):
    fly = ext("operators.fly")
    result = bpy.ops.procanim.train_fly(population=4, generations=1, train_duration=0.05, seed=2)
    assert result == {"FINISHED"}
    settings = bpy.context.scene.procanim.fly
    assert Path(bpy.app.tempdir) in Path(settings.genome_path).parents
    curve = bpy.data.images[fly.CURVE_IMAGE]
    assert curve.packed_file is not None and curve.packed_file.size > 0
    project = tmp_path / "fly project"
    project.mkdir()
    bpy.ops.wm.save_as_mainfile(filepath=str(project / "fly.blend"))
    assert settings.genome_path == "//fly_trained.npz"
    assert (project / "fly_trained.npz").is_file()
    moved = _move_and_reopen(project, "fly.blend")
    settings = bpy.context.scene.procanim.fly
    assert Path(bpy.path.abspath(settings.genome_path)) == moved / "fly_trained.npz"
    # The curve is inside the .blend: it loads with every PNG on disk gone.
    for png in moved.glob("*.png"):
        png.unlink()
    curve = bpy.data.images[fly.CURVE_IMAGE]
    assert curve.packed_file is not None
    assert curve.size[0] > 0 and len(curve.pixels) == 4 * curve.size[0] * curve.size[1]


def test_a_path_on_another_drive_stays_absolute_with_a_warning(tmp_path, monkeypatch, ext):
    project = tmp_path / "drive c"
    project.mkdir()
    bpy.ops.wm.save_as_mainfile(filepath=str(project / "scene.blend"))

    def no_relative_path(*args, **kwargs):
        raise ValueError("path is on mount 'D:', start on mount 'C:'")

    monkeypatch.setattr(bpy.path, "relpath", no_relative_path)
    monkeypatch.setattr(os.path, "relpath", no_relative_path)
    stored, warning = ext("operators.paths").stored_path(project / "x.pc2")
    assert stored == str(project / "x.pc2") and "another drive" in warning
    jelly = _bake_jelly()
    cached = _cache_path(jelly)
    assert Path(cached).is_absolute() and Path(cached).is_file()  # kept whole, nothing half-written
    bpy.ops.wm.save_mainfile()
    assert _cache_path(jelly) == cached
    saved = ext("operators.portable").LAST_SAVE
    assert saved["moved"] == [] and "another drive" in saved["warnings"][0]
