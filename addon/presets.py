"""Bundled presets: TOML data files under ``presets/``, read with the standard library only.

Presets are data, never code: a preset is a table of setting names and values.
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from typing import Any

from .errors import PresetError

PRESET_DIR = Path(__file__).resolve().parent.parent / "presets"
_RESERVED = ("name", "description")


def load_presets(kind: str, directory: Path | None = None) -> list[dict[str, Any]]:
    """The presets of ``presets/<kind>.toml`` in file order, each a dict with ``name``.

    Raises :class:`PresetError` naming the file and the problem when the file is missing,
    is not valid TOML, or a preset lacks a unique ``name``.
    """
    path = (directory or PRESET_DIR) / f"{kind}.toml"
    return list(_load(path))


@cache
def _load(path: Path) -> tuple[dict[str, Any], ...]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PresetError(f"no preset file {path.name}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise PresetError(f"{path.name} is not valid TOML: {exc}") from None
    entries = data.get("preset")
    if not isinstance(entries, list) or not entries:
        raise PresetError(f"{path.name} has no [[preset]] tables")
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name:
            raise PresetError(f"{path.name}: preset {index + 1} has no name")
        if name in seen:
            raise PresetError(f"{path.name}: preset name {name!r} is used twice")
        seen.add(name)
    return tuple(entries)


def find_preset(kind: str, name: str, directory: Path | None = None) -> dict[str, Any]:
    """One preset by name; :class:`PresetError` lists the known names if it is not there."""
    presets = load_presets(kind, directory)
    for preset in presets:
        if preset["name"] == name:
            return preset
    known = ", ".join(p["name"] for p in presets)
    raise PresetError(f"no {kind} preset named {name!r} (known: {known})")


def preset_settings(preset: dict[str, Any]) -> dict[str, Any]:
    """The setting values of a preset, without its name and description."""
    return {k: v for k, v in preset.items() if k not in _RESERVED}
