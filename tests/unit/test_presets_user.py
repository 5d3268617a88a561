"""User presets: saved as TOML beside (never inside) the bundled ones, listed after them, removable."""

from __future__ import annotations

import tomllib

import pytest

from addon.errors import PresetError
from addon.presets import (
    all_presets,
    load_presets,
    load_user_presets,
    remove_user_preset,
    save_user_preset,
)


def test_save_list_and_remove_round_trip(tmp_path):
    settings = {"siteswap": 'say "5"\\n', "beat_duration": 0.25, "loops": 3, "floor": False}
    settings["tint"] = [0.5, 1.0]
    path = save_user_preset("juggling", "  My   Fast ", settings, tmp_path)
    assert path == tmp_path / "juggling.toml"
    assert tomllib.loads(path.read_text(encoding="utf-8"))["preset"][0]["name"] == "My Fast"
    save_user_preset("juggling", "Other", {"loops": 1}, tmp_path)
    listed = all_presets("juggling", tmp_path)
    bundled = load_presets("juggling")
    assert [p["name"] for p, user in listed if not user] == [p["name"] for p in bundled]
    assert [p["name"] for p, user in listed if user] == ["My Fast", "Other"]
    assert listed[-2][0] == {"name": "My Fast", **settings}
    # Saving under the same name replaces it in place of appending a second one.
    save_user_preset("juggling", "My Fast", {"loops": 9}, tmp_path)
    assert [p for p in load_user_presets("juggling", tmp_path) if p["name"] == "My Fast"] == [
        {"name": "My Fast", "loops": 9}
    ]
    remove_user_preset("juggling", "My Fast", tmp_path)
    remove_user_preset("juggling", "Other", tmp_path)
    assert load_user_presets("juggling", tmp_path) == []
    assert [p["name"] for p, _ in all_presets("juggling", tmp_path)] == [p["name"] for p in bundled]


def test_bundled_presets_cannot_be_replaced_or_removed(tmp_path):
    bundled = load_presets("juggling")[0]["name"]
    with pytest.raises(PresetError, match="bundled"):
        save_user_preset("juggling", bundled, {"loops": 1}, tmp_path)
    with pytest.raises(PresetError, match="cannot be removed"):
        remove_user_preset("juggling", bundled, tmp_path)
    with pytest.raises(PresetError, match="no user juggling preset"):
        remove_user_preset("juggling", "Never Saved", tmp_path)


@pytest.mark.parametrize(
    ("name", "settings", "message"),
    [
        ("", {"loops": 1}, "needs a name"),
        ("x" * 65, {"loops": 1}, "at most 64"),
        ("Bad", {"loops": float("nan")}, "not a finite number"),
        ("Bad", {"name": "x"}, "cannot be saved"),
        ("Bad", {"loops": object()}, "cannot store"),
    ],
)
def test_bad_presets_are_refused_and_write_nothing(tmp_path, name, settings, message):
    with pytest.raises(PresetError, match=message):
        save_user_preset("juggling", name, settings, tmp_path)
    assert not (tmp_path / "juggling.toml").exists()


def test_a_preset_is_data_even_when_its_text_looks_like_code(tmp_path):
    code = '__import__("os").system("echo hacked")'
    save_user_preset("ik", "Sneaky", {"solver": code}, tmp_path)
    assert load_user_presets("ik", tmp_path)[0]["solver"] == code  # a plain string, never evaluated
