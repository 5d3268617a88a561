"""The one path resolver: '//' against the saved .blend, refused in an unsaved file, bad paths refused
with a message by every operator that reads or writes a file."""

from __future__ import annotations

import os
from pathlib import Path

import bpy
import pytest
from conftest import data_counts


@pytest.fixture()
def paths(ext):
    return ext("operators.paths")


@pytest.fixture()
def path_error(ext):
    return ext("addon.errors").PathError


def _save_blend(tmp_path: Path) -> Path:
    blend = tmp_path / "scene" / "shot.blend"
    blend.parent.mkdir()
    bpy.ops.wm.save_as_mainfile(filepath=str(blend), check_existing=False)
    return blend


def test_blend_relative_path_is_refused_in_an_unsaved_file(paths, path_error):
    with pytest.raises(path_error, match="not saved yet"):
        paths.resolve("//genome.npz", "Genome")


def test_blend_relative_path_resolves_beside_the_saved_file(paths, tmp_path):
    blend = _save_blend(tmp_path)
    assert paths.resolve("//sub/genome.npz", "Genome") == blend.parent / "sub" / "genome.npz"
    assert paths.resolve("//../up.npz", "Genome") == tmp_path / "up.npz"


def test_unsaved_fallback_keeps_the_path_inside_the_fallback_folder(paths, path_error, tmp_path):
    assert paths.resolve("//a/b.npz", "Out", unsaved_fallback=tmp_path) == tmp_path / "a" / "b.npz"
    with pytest.raises(path_error, match="outside the temporary folder"):
        paths.resolve("//../../../../../x.npz", "Out", unsaved_fallback=tmp_path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("\x00.npz", "NUL"),
        ("a" * 300 + ".npz", "longer than 255 bytes"),
        ("/tmp/" + "d/" * 2100 + "x.npz", "characters long"),
    ],
)
def test_malformed_paths_are_refused(paths, path_error, text, message):
    with pytest.raises(path_error, match=message):
        paths.output_file(text, "Out", ".npz")


def test_output_file_refuses_folders_and_unwritable_parents(paths, path_error, tmp_path):
    with pytest.raises(path_error, match="names a folder"):
        paths.output_file(str(tmp_path) + os.sep, "Out")
    (tmp_path / "dir.npz").mkdir()
    with pytest.raises(path_error, match="is a folder"):
        paths.output_file(str(tmp_path / "dir.npz"), "Out", ".npz")
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(path_error, match="is a file, not a folder"):
        paths.output_file(str(blocker / "sub" / "x.npz"), "Out")
    if os.geteuid() != 0:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        with pytest.raises(path_error, match="permission denied"):
            paths.output_file(str(locked / "x.npz"), "Out")
    # A missing parent is fine: it is created just before writing.
    assert paths.output_file(str(tmp_path / "new" / "x"), "Out", ".npz") == tmp_path / "new" / "x.npz"


def test_input_file_must_exist_and_be_a_file(paths, path_error, tmp_path):
    with pytest.raises(path_error, match="does not exist"):
        paths.input_file(str(tmp_path / "missing.npz"), "Genome")
    with pytest.raises(path_error, match="is a folder"):
        paths.input_file(str(tmp_path), "Genome")


def test_stored_path_is_blend_relative_once_saved(paths, tmp_path):
    target = tmp_path / "g.npz"
    assert paths.stored_path(target) == (str(target), None)
    _save_blend(tmp_path)
    stored, warning = paths.stored_path(target)
    assert stored == "//../g.npz" and warning is None
    assert Path(bpy.path.abspath(stored)).resolve() == target


def test_save_genome_never_writes_at_the_file_system_root(tmp_path):
    before = data_counts()
    for bad in ("", "//", "\x00.npz", "//../../../../../procanim_fuzz_root.npz", "x" * 2000):
        with pytest.raises(RuntimeError):
            bpy.ops.procanim.save_genome(filepath=bad)
    assert not Path("/procanim_fuzz_root.npz").exists()
    assert data_counts() == before


def test_genome_operators_resolve_blend_relative_paths(tmp_path):
    blend = _save_blend(tmp_path)
    assert bpy.ops.procanim.save_genome(filepath="//genomes/copy.npz") == {"FINISHED"}
    assert (blend.parent / "genomes" / "copy.npz").is_file()
    assert bpy.ops.procanim.load_genome(filepath="//genomes/copy.npz") == {"FINISHED"}
    assert bpy.context.scene.procanim.fly.genome_path == "//genomes/copy.npz"
    assert bpy.ops.procanim.add_fly() == {"FINISHED"}
    assert bpy.ops.procanim.bake_fly(duration=0.05) == {"FINISHED"}
    with pytest.raises(RuntimeError, match="longer than 255"):
        bpy.ops.procanim.load_genome(filepath="x" * 2000)
    with pytest.raises(RuntimeError, match="longer than 255"):
        bpy.ops.procanim.bake_fly(duration=0.05, genome_path="x" * 2000)


def test_export_render_refuses_bad_outputs_before_changing_settings(tmp_path):
    camera = bpy.data.objects.new("Cam", bpy.data.cameras.new("Cam"))
    bpy.context.scene.collection.objects.link(camera)
    scene = bpy.context.scene
    scene.camera = camera
    render = scene.render
    def settings():
        return (render.engine, render.resolution_x, render.resolution_y, render.filepath, scene.world)

    before = settings()
    blocker = tmp_path / "file"
    blocker.write_text("x")
    cases = [
        ({"filepath": "//out.mp4"}, "not saved yet"),
        ({"filepath": ""}, "empty"),
        ({"filepath": str(blocker / "out.mp4")}, "is a file"),
        ({"filepath": str(blocker), "file_format": "PNG"}, "is a file"),
        ({"filepath": str(tmp_path / "odd.mp4"), "resolution_x": 641}, "even width"),
    ]
    for kwargs, message in cases:
        with pytest.raises(RuntimeError, match=message):
            bpy.ops.procanim.export_render(**kwargs)
        assert settings() == before
