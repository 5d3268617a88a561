"""The headless entry point: help, one-line failures, save and render with every engine."""

from __future__ import annotations

from pathlib import Path

import bpy
import pytest
from conftest import run_cli

ROOT = Path(__file__).resolve().parents[2]


def test_help_lists_the_subcommands(tmp_path):
    result = run_cli("--help", tmp_path=tmp_path)
    assert result.returncode == 0
    assert "render" in result.stdout and "SUBCOMMAND" in result.stdout


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (("no-such-command",), "invalid choice: 'no-such-command'"),
        (("render", "missing.blend", "--render", "x.mp4"), "no such .blend file: missing.blend"),
        (("render", "a.blend", "--resolution", "12x9"), "resolution 12x9 is too small"),
        (("render", "a.blend", "--engine", "povray"), "invalid choice: 'povray'"),
    ],
)
def test_bad_arguments_exit_non_zero_with_one_line(tmp_path, args, reason):
    result = run_cli(*args, tmp_path=tmp_path)
    assert result.returncode != 0
    errors = [line for line in result.stderr.splitlines() if line.startswith("procanim: error:")]
    assert len(errors) == 1 and reason in errors[0], result.stderr


def _scene_with_camera(path: Path, ext) -> None:
    writers = ext("operators.writers")
    scene = bpy.context.scene
    collection = writers.generator_collection(scene, "Stage")
    mesh = writers.mesh_from_arrays("Quad", [[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]], [[0, 1, 2, 3]])
    quad = writers.new_object("Quad", mesh, collection)
    writers.assign_material(quad, writers.principled_material("Orange", (1.0, 0.4, 0.0, 1.0)))
    writers.write_object_transforms(quad, [1, 3], locations=[[0, 0, 0], [0, 0, 0.5]])
    writers.add_camera_framing(scene, collection, (-1, -1, 0), (1, 1, 0.5))
    writers.add_sun(collection)
    writers.set_frame_range(scene, 1, 3, fps=24)
    bpy.ops.wm.save_as_mainfile(filepath=str(path))


@pytest.mark.parametrize(
    ("engine", "fmt", "output"),
    [("workbench", "mp4", "clip.mp4"), ("cycles", "png", "frames"), ("eevee", "png", "frames")],
)
def test_render_subcommand_writes_video_or_frames(tmp_path, ext, engine, fmt, output):
    blend = tmp_path / "stage.blend"
    _scene_with_camera(blend, ext)
    frames = "1" if engine == "eevee" else "3"  # EEVEE compiles shaders on the CPU: one frame proves it
    result = run_cli(
        "render",
        str(blend),
        "--render",
        str(tmp_path / output),
        "--engine",
        engine,
        "--format",
        fmt,
        "--resolution",
        "64x48",
        "--samples",
        "2",
        "--frames",
        frames,
        tmp_path=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    if fmt == "mp4":
        video = tmp_path / output
        assert video.stat().st_size > 0
        clip = bpy.data.movieclips.load(str(video))
        assert clip.frame_duration == 3 and tuple(clip.size) == (64, 48)
    else:
        pngs = sorted((tmp_path / output).glob("frame_*.png"))
        assert len(pngs) == int(frames)
        image = bpy.data.images.load(str(pngs[0]))
        assert tuple(image.size) == (64, 48)
        assert max(image.pixels[:]) > 0.05  # lit, not a black frame
