"""File > Import / Export > Juggling Lab Pattern (.jml) in Blender: keys match the layout, pattern lists
fill the sidebar, broken files change nothing, exports load back, the CLI does both."""

from __future__ import annotations

from pathlib import Path

import bpy
import numpy as np
import pytest
from conftest import data_counts, run_cli, view3d_override
from ui_smoke import smoke_draw, smoke_draw_menu

DATA = Path(__file__).resolve().parents[1] / "data" / "jml"
COLLECTION = "ProcAnim Juggling"


def _fps() -> float:
    render = bpy.context.scene.render
    return render.fps / render.fps_base


def _balls() -> list[bpy.types.Object]:
    """The props of the latest juggling scene (each Add makes a new "ProcAnim Juggling.00N")."""
    latest = max((c for c in bpy.data.collections if c.name.startswith(COLLECTION)), key=lambda c: c.name)
    objects = [o for o in latest.objects if o.name.startswith(("Ball ", "Ring "))]
    return sorted(objects, key=lambda o: int(o.name.split()[1].split(".")[0]))


def _keyed(objects, frames) -> np.ndarray:
    out = np.empty((len(objects), len(frames), 3))
    for k, frame in enumerate(frames):
        bpy.context.scene.frame_set(int(frame))
        for i, obj in enumerate(objects):
            out[i, k] = obj.matrix_world.translation
    return out


def test_import_a_pattern_keys_its_layout(ext):
    path = DATA / "cascade_switchdelay.jml"
    assert bpy.ops.procanim.import_jml(filepath=str(path)) == {"FINISHED"}
    balls = _balls()
    assert len(balls) == 3
    pattern = ext("addon.juggling.jml").load(path)[0].plan(frame_rate=_fps())
    frames_per_loop = round(pattern.loop_duration * _fps())
    assert bpy.context.scene.frame_end == 2 * frames_per_loop
    frames = np.arange(1, frames_per_loop, 5)
    expected = pattern.prop_positions((frames - 1) / _fps())
    np.testing.assert_allclose(_keyed(balls, frames), expected, atol=1e-4)
    settings = bpy.context.scene.procanim.juggling
    assert settings.jml_source and len(settings.jml_entries) == 1


def test_a_pattern_list_fills_the_sidebar_and_each_line_animates(ext):
    path = DATA / "patternlist.jml"
    assert bpy.ops.procanim.import_jml(filepath=str(path), entry=2) == {"FINISHED"}
    settings = bpy.context.scene.procanim.juggling
    assert [e.name for e in settings.jml_entries] == ["Cascade", "531 slow", "Passing", "Left-hand column"]
    assert [e.section for e in settings.jml_entries] == ["Basics"] * 3 + ["Full patterns"]
    assert settings.jml_index == 1 and settings.siteswap == "pattern=531;bps=3.5;dwell=1.0"
    # Picking a full-pattern line makes the sidebar's Add button animate it.
    assert bpy.ops.procanim.pick_jml_entry(index=3) == {"FINISHED"}
    assert "<event" in settings.jml_source
    panels = ext("panels.juggling")
    with bpy.context.temp_override(**view3d_override()):
        record = smoke_draw(panels.PROCANIM_PT_juggling)
    assert any("JML pattern: Left-hand column" in label for label in record.labels)
    button = dict(record.operator_properties)["procanim.juggle"]
    assert button["jml_source"] == settings.jml_source
    assert bpy.ops.procanim.juggle(jml_source=settings.jml_source) == {"FINISHED"}
    assert len(_balls()) == 1
    assert bpy.ops.procanim.pick_jml_entry(index=2) == {"FINISHED"}
    assert settings.jml_source == "" and settings.siteswap.startswith("pattern=<3p|3p>")
    assert bpy.ops.procanim.clear_jml() == {"FINISHED"}
    assert not settings.jml_entries


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('<?xml version="1.0"?>\n<jml version="3">\n<pattern>\n', "line 4: not well-formed"),
        ('<jml version="3"><pattern><setup paths="1"/>\n<event x="0" t="0" hand="1:left"/></pattern></jml>',
         "needs exactly one delay symmetry"),
        ('<jml version="3"><pattern><setup paths="1"/><symmetry type="delay" pperm="(1)" delay="1"/>\n'
         '<event x="0" t="0" hand="1:left"><throw path="1"/></event>\n'
         '<event x="0" t="0.5" hand="1:left"><throw path="1"/></event></pattern></jml>', "line 3, <event>"),
    ],
)  # fmt: skip
def test_a_broken_file_is_reported_and_changes_nothing(tmp_path, text, words):
    assert bpy.ops.procanim.juggle(siteswap="3") == {"FINISHED"}
    settings = bpy.context.scene.procanim.juggling
    settings.siteswap = "441"
    bpy.context.scene.frame_set(5)
    before = data_counts()
    names = sorted(o.name for o in bpy.data.objects)
    path = tmp_path / "broken.jml"
    path.write_text(text)
    with pytest.raises(RuntimeError, match=words):
        bpy.ops.procanim.import_jml(filepath=str(path))
    assert data_counts() == before
    assert sorted(o.name for o in bpy.data.objects) == names
    assert bpy.context.scene.frame_current == 5
    assert settings.siteswap == "441" and not settings.jml_entries and not settings.jml_source


def test_export_writes_a_file_that_loads_back(ext, tmp_path):
    settings = bpy.context.scene.procanim.juggling
    settings.siteswap = "531"
    target = tmp_path / "out" / "five three one"
    assert bpy.ops.procanim.export_jml(filepath=str(target)) == {"FINISHED"}
    written = target.with_suffix(".jml")
    [entry] = ext("addon.juggling.jml").load(written)
    pattern = entry.plan()
    original = ext("addon.juggling").plan_pattern(ext("addon.juggling").parse_siteswap("531"))
    assert len(pattern.flights) == len(original.flights)
    assert pattern.loop_duration == pytest.approx(original.loop_duration, abs=1e-6)
    with pytest.raises(RuntimeError, match="folder"):
        bpy.ops.procanim.export_jml(filepath=str(tmp_path) + "/")


def test_file_menus_offer_import_and_export():
    with bpy.context.temp_override(**view3d_override()):
        assert "procanim.import_jml" in smoke_draw_menu(bpy.types.TOPBAR_MT_file_import).operators
        assert "procanim.export_jml" in smoke_draw_menu(bpy.types.TOPBAR_MT_file_export).operators


def test_cli_imports_and_exports_jml(tmp_path):
    out = tmp_path / "list.blend"
    exported = tmp_path / "again.jml"
    done = run_cli(
        "juggle", "--jml", str(DATA / "patternlist.jml"), "--jml-entry", "4", "--loops", "1",
        "--export-jml", str(exported), "--out", str(out), tmp_path=tmp_path, timeout=240,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert out.exists() and exported.exists()
    assert "<event" in exported.read_text()
    bad = run_cli("juggle", "--jml", str(DATA / "patternlist.jml"), "--jml-entry", "9", tmp_path=tmp_path)
    assert bad.returncode == 1
    assert "no entry 9" in bad.stderr


def test_a_hand_siteswap_line_animates_two_jugglers():
    assert bpy.ops.procanim.juggle(siteswap="pattern=3;hss=4", loops=1) == {"FINISHED"}
    latest = max((c for c in bpy.data.collections if c.name.startswith(COLLECTION)), key=lambda c: c.name)
    assert len([o for o in latest.objects if o.type == "ARMATURE"]) == 2
    assert len(_balls()) == 3


def test_a_walking_juggler_is_keyed_where_the_file_puts_it(ext):
    path = DATA / "walking.jml"
    assert bpy.ops.procanim.import_jml(filepath=str(path)) == {"FINISHED"}
    latest = max((c for c in bpy.data.collections if c.name.startswith(COLLECTION)), key=lambda c: c.name)
    arm = next(o for o in latest.objects if o.type == "ARMATURE")
    pattern = ext("addon.juggling.jml").load(path)[0].plan(frame_rate=_fps())
    frames = [1, 7, 13, 19]
    origins, yaws = pattern.juggler_frames([(f - 1) / _fps() for f in frames])
    balls = _balls()
    for k, frame in enumerate(frames):
        bpy.context.scene.frame_set(frame)
        np.testing.assert_allclose(np.array(arm.matrix_world.translation), origins[0, k], atol=1e-5)
        t = (frame - 1) / _fps()
        hand = np.array(arm.matrix_world @ arm.pose.bones["hand.L"].head)
        # The posed left palm (the hand bone's head is the palm point) follows the plan.
        planned = pattern.hand_positions([t])[0, 0, 0]
        assert np.linalg.norm(hand - planned) < 1e-4
        ball = np.array(balls[0].matrix_world.translation)
        np.testing.assert_allclose(ball, pattern.prop_positions([t])[0, 0], atol=1e-4)


def test_body_walks_the_figure(ext):
    text = "pattern=3;body=(0,0,0).(20,10,0).(0,0,0).(-20,-10,0)."
    assert bpy.ops.procanim.juggle(siteswap=text, loops=1) == {"FINISHED"}
    latest = max((c for c in bpy.data.collections if c.name.startswith(COLLECTION)), key=lambda c: c.name)
    arm = next(o for o in latest.objects if o.type == "ARMATURE")
    xs = []
    for frame in range(1, 40, 4):
        bpy.context.scene.frame_set(frame)
        xs.append(arm.matrix_world.translation.x)
    assert np.ptp(xs) > 0.1  # it walks 10 cm each way
