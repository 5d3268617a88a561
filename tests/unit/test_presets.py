"""The TOML preset loader: data only, with clear errors for broken files."""

from __future__ import annotations

import pytest

from addon.errors import PresetError
from addon.presets import PRESET_DIR, find_preset, load_presets, preset_settings


def _write(tmp_path, text):
    (tmp_path / "thing.toml").write_text(text, encoding="utf-8")
    return tmp_path


def test_presets_load_in_file_order(tmp_path):
    directory = _write(tmp_path, '[[preset]]\nname = "B"\nsize = 2\n\n[[preset]]\nname = "A"\nsize = 1.5\n')
    presets = load_presets("thing", directory)
    assert [p["name"] for p in presets] == ["B", "A"]
    assert preset_settings(find_preset("thing", "A", directory)) == {"size": 1.5}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[[preset]]\nname = \n", "not valid TOML"),
        ("title = 'no presets'\n", "no \\[\\[preset\\]\\] tables"),
        ("[[preset]]\nsize = 1\n", "preset 1 has no name"),
        ('[[preset]]\nname = "A"\n[[preset]]\nname = "A"\n', "'A' is used twice"),
    ],
)
def test_broken_files_name_the_problem(tmp_path, text, message):
    with pytest.raises(PresetError, match=message):
        load_presets("thing", _write(tmp_path, text))


def test_missing_file_and_unknown_name(tmp_path):
    with pytest.raises(PresetError, match="no preset file thing.toml"):
        load_presets("thing", tmp_path)
    directory = _write(tmp_path, '[[preset]]\nname = "A"\n')
    with pytest.raises(PresetError, match="no thing preset named 'Z' \\(known: A\\)"):
        find_preset("thing", "Z", directory)


def test_every_bundled_preset_file_loads():
    files = sorted(PRESET_DIR.glob("*.toml"))
    for path in files:
        assert load_presets(path.stem), path.name
