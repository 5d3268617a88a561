"""The extension's preferences draw; cache folder, genome folder and render defaults follow them."""

from __future__ import annotations

from pathlib import Path

import bpy
import pytest
from ui_smoke import smoke_draw


@pytest.fixture()
def prefs(ext):
    preferences = ext("operators.preferences").preferences()
    assert preferences is not None, "the preferences are registered under the extension's package"
    keys = [key for key in preferences.bl_rna.properties.keys() if key not in ("rna_type", "bl_idname")]
    saved = {key: getattr(preferences, key) for key in keys}
    yield preferences
    for key, value in saved.items():
        setattr(preferences, key, value)


def test_preferences_are_keyed_by_the_extension_package_and_draw(prefs, extension_package):
    assert type(prefs).bl_idname == extension_package
    record = smoke_draw(type(prefs), instance=prefs)
    drawn = {p.split(".")[-1] for p in record.properties}
    assert {
        "cache_directory",
        "genome_directory",
        "render_engine",
        "resolution_x",
        "resolution_y",
        "add_camera",
        "add_floor",
        "script_time_limit",
    } <= drawn
    assert prefs.cache_directory == "//procanim_cache"


def test_export_render_defaults_follow_the_preferences_until_changed_in_the_sidebar(prefs, tmp_path):
    prefs.render_engine, prefs.resolution_x, prefs.resolution_y = "WORKBENCH", 48, 32
    settings = bpy.context.scene.procanim.render
    assert (settings.engine, settings.resolution_x, settings.resolution_y) == ("WORKBENCH", 48, 32)
    settings.resolution_x = 64  # changed here: the scene keeps its own value from now on
    prefs.resolution_x = 100
    assert settings.resolution_x == 64 and settings.resolution_y == 32

    assert bpy.ops.procanim.add_ik_arm(frame_count=2) == {"FINISHED"}
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 1
    out = tmp_path / "frames"
    assert bpy.ops.procanim.export_render(file_format="PNG", filepath=str(out)) == {"FINISHED"}
    assert scene.render.engine == "BLENDER_WORKBENCH"
    assert (scene.render.resolution_x, scene.render.resolution_y) == (100, 32)
    assert len(list(out.glob("*.png"))) == 1


def test_soft_body_caches_go_to_the_preferences_cache_folder(prefs, tmp_path):
    prefs.cache_directory = str(tmp_path / "my caches")
    assert bpy.ops.procanim.add_softbody_demo(subdivisions=1) == {"FINISHED"}
    assert bpy.ops.procanim.bake_softbody(frame_count=3, substeps=4) == {"FINISHED"}
    written = list(Path(tmp_path / "my caches").glob("*.pc2"))
    assert [p.name for p in written] == ["Jelly.pc2"]


def test_trained_genomes_go_to_the_preferences_genome_folder(prefs, tmp_path):
    prefs.genome_directory = str(tmp_path / "genomes")
    result = bpy.ops.procanim.train_fly(population=4, generations=1, train_duration=0.05, seed=1)
    assert result == {"FINISHED"}
    written = tmp_path / "genomes" / "fly_trained.npz"
    assert written.is_file()
    assert Path(bpy.path.abspath(bpy.context.scene.procanim.fly.genome_path)) == written


def test_script_time_limit_refuses_or_frees_long_work_from_scripts(prefs):
    assert bpy.ops.procanim.add_softbody_demo(subdivisions=1) == {"FINISHED"}
    prefs.script_time_limit = 1e-4  # any bake is over it
    with pytest.raises(RuntimeError, match="would take about"):
        bpy.ops.procanim.bake_softbody(frame_count=3, substeps=4)
    assert bpy.context.active_object.data.shape_keys is None and not bpy.data.actions
    prefs.script_time_limit = 0.0  # a pipeline script's long bake: no limit at all
    assert bpy.ops.procanim.bake_softbody(frame_count=3, substeps=4) == {"FINISHED"}
