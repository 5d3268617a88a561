"""User presets in Blender: saved from the sidebar to the extension's user folder, listed after the
bundled ones, applied, removed; bundled presets stay."""

from __future__ import annotations

import importlib
import tomllib
from pathlib import Path

import bpy
import pytest
from conftest import view3d_override
from ui_smoke import smoke_draw, smoke_draw_menu


@pytest.fixture()
def folder(ext, extension_package):
    presets = ext("operators.presets")
    path = presets.user_preset_folder(create=True)
    assert path == Path(bpy.utils.extension_path_user(extension_package, path="presets"))
    yield path
    for file in path.glob("*.toml"):
        file.unlink()
    presets.ACTIVE.clear()


def test_save_list_apply_and_remove_a_user_preset(folder, ext, extension_package):
    panels = importlib.import_module(f"{extension_package}.panels.juggling")
    settings = bpy.context.scene.procanim.juggling
    settings.siteswap, settings.loops, settings.beat_duration = "531", 3, 0.27
    assert bpy.ops.procanim.preset_add(kind="juggling", name="My 531") == {"FINISHED"}
    saved = tomllib.loads((folder / "juggling.toml").read_text(encoding="utf-8"))["preset"]
    assert saved[0]["name"] == "My 531" and saved[0]["siteswap"] == "531" and saved[0]["loops"] == 3

    with bpy.context.temp_override(**view3d_override()):
        menu = smoke_draw_menu(panels.JugglingPresetMenu)
        panel = smoke_draw(panels.PROCANIM_PT_juggling)
    names = [values.get("name") for op, values in menu.operator_properties if op == "procanim.apply_preset"]
    bundled = [p["name"] for p in ext("addon.presets").load_presets("juggling")]
    assert names == [*bundled, "My 531"]  # the user's after the bundled ones
    assert menu.operators[-1] == "procanim.preset_remove"  # only the user's have a remove button
    assert menu.operators.count("procanim.preset_remove") == 1
    assert {"procanim.preset_add", "procanim.preset_remove"} <= set(panel.operators)

    settings.siteswap, settings.loops, settings.beat_duration = "3", 1, 0.3
    assert bpy.ops.procanim.apply_preset(kind="juggling", name="My 531") == {"FINISHED"}
    assert (settings.siteswap, settings.loops) == ("531", 3)
    assert settings.beat_duration == pytest.approx(0.27)

    assert bpy.ops.procanim.preset_remove(kind="juggling", name="My 531") == {"FINISHED"}
    with bpy.context.temp_override(**view3d_override()):
        menu = smoke_draw_menu(panels.JugglingPresetMenu)
    assert "procanim.preset_remove" not in menu.operators
    with pytest.raises(RuntimeError, match="no juggling preset named 'My 531'"):
        bpy.ops.procanim.apply_preset(kind="juggling", name="My 531")


def test_bundled_presets_cannot_be_removed_or_overwritten(folder, ext):
    bundled = ext("addon.presets").load_presets("ik")[0]["name"]
    with pytest.raises(RuntimeError, match="cannot be removed"):
        bpy.ops.procanim.preset_remove(kind="ik", name=bundled)
    with pytest.raises(RuntimeError, match="bundled"):
        bpy.ops.procanim.preset_add(kind="ik", name=bundled)
    assert not (folder / "ik.toml").exists()
    assert bpy.ops.procanim.apply_preset(kind="ik", name=bundled) == {"FINISHED"}


@pytest.mark.parametrize("kind", ["juggling", "ik", "simulation", "mirrors", "dancer"])
def test_every_generator_saves_and_reapplies_its_own_settings(folder, ext, kind):
    presets = ext("operators.presets")
    bundled = ext("addon.presets").load_presets(kind)[-1]["name"]
    assert bpy.ops.procanim.apply_preset(kind=kind, name=bundled) == {"FINISHED"}
    group = getattr(bpy.context.scene.procanim, kind)
    before = presets.preset_values(group, kind)
    assert before, f"{kind}: nothing to save"
    assert bpy.ops.procanim.preset_add(kind=kind, name="Round Trip") == {"FINISHED"}
    for key in before:
        group.property_unset(key)
    assert bpy.ops.procanim.apply_preset(kind=kind, name="Round Trip") == {"FINISHED"}
    assert presets.preset_values(group, kind) == before
