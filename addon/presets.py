"""Bundled presets: TOML data files under ``presets/``, read with the standard library only.

Presets are data, never code: a preset is a table of setting names and values.
"""

from __future__ import annotations

import json
import tomllib
from functools import cache
from pathlib import Path
from typing import Any

from .errors import PresetError

PRESET_DIR = Path(__file__).resolve().parent.parent / "presets"
_RESERVED = ("name", "description")


def _kind_file(directory: Path, kind: str) -> Path:
    """``<directory>/<kind>.toml``; a kind is a generator's name, never a path (no '../', no 10,000
    characters) so a script's garbage cannot read or write files elsewhere."""
    if not (isinstance(kind, str) and kind.isidentifier() and kind.isascii() and len(kind) <= 64):
        raise PresetError(f"unknown preset kind {kind[:40]!r}: use a generator's name, e.g. juggling")
    return directory / f"{kind}.toml"


def load_presets(kind: str, directory: Path | None = None) -> list[dict[str, Any]]:
    """The presets of ``presets/<kind>.toml`` in file order, each a dict with ``name``.

    Raises :class:`PresetError` naming the file and the problem when the file is missing,
    is not valid TOML, or a preset lacks a unique ``name``.
    """
    path = _kind_file(directory or PRESET_DIR, kind)
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


# --------------------------------------------------------------------------- user presets
#
# A user's presets live in their own folder (the extension's user folder, which survives updates),
# one ``<kind>.toml`` per generator in the same format as the bundled files. They are written by
# :func:`save_user_preset` and read like the bundled ones: data only, never executed.

MAX_NAME_LENGTH = 64


def load_user_presets(kind: str, directory: Path) -> list[dict[str, Any]]:
    """The user's presets of ``kind`` (none when the file does not exist yet)."""
    path = _kind_file(directory, kind)
    try:
        stamp = path.stat()
    except OSError:
        return []
    # Menus redraw often: the file is parsed again only when it changed on disk.
    return [dict(p) for p in _load_user(path, stamp.st_mtime_ns, stamp.st_size)]


@cache
def _load_user(path: Path, mtime_ns: int, size: int) -> tuple[dict[str, Any], ...]:
    _load.cache_clear()
    try:
        return _load(path)
    except PresetError as exc:
        if "has no [[preset]] tables" in str(exc):
            return ()
        raise


def all_presets(kind: str, user_directory: Path | None) -> list[tuple[dict[str, Any], bool]]:
    """Bundled presets, then the user's: ``(preset, is_user)`` pairs, in menu order."""
    entries = [(preset, False) for preset in load_presets(kind)]
    if user_directory is not None:
        entries += [(preset, True) for preset in load_user_presets(kind, user_directory)]
    return entries


def check_preset_name(kind: str, name: str) -> str:
    """A usable preset name: stripped, not empty, not too long, not a bundled preset's name."""
    clean = " ".join(str(name).split())
    if not clean:
        raise PresetError("a preset needs a name")
    if len(clean) > MAX_NAME_LENGTH:
        raise PresetError(f"the preset name is {len(clean)} characters long (at most {MAX_NAME_LENGTH})")
    if any(ord(c) < 32 for c in clean):
        raise PresetError("the preset name contains control characters")
    if any(p["name"] == clean for p in load_presets(kind)):
        raise PresetError(f"{clean!r} is a bundled {kind} preset; choose another name")
    return clean


def save_user_preset(kind: str, name: str, settings: dict[str, Any], directory: Path) -> Path:
    """Add (or replace) the user's preset ``name`` of ``kind``; returns the file written.

    The file is rewritten whole through a temporary file, so a failure never leaves it half-written.
    """
    name = check_preset_name(kind, name)
    for key in settings:
        if key in _RESERVED or not key.isidentifier():
            raise PresetError(f"{key!r} cannot be saved as a preset setting")
    presets = [p for p in load_user_presets(kind, directory) if p["name"] != name]
    presets.append({"name": name, **settings})
    return _write_presets(_kind_file(directory, kind), presets)


def remove_user_preset(kind: str, name: str, directory: Path) -> Path:
    """Delete the user's preset ``name``; bundled presets cannot be removed."""
    if any(p["name"] == name for p in load_presets(kind)):
        raise PresetError(f"{name!r} is a bundled {kind} preset; bundled presets cannot be removed")
    presets = load_user_presets(kind, directory)
    kept = [p for p in presets if p["name"] != name]
    if len(kept) == len(presets):
        raise PresetError(f"no user {kind} preset named {name!r}")
    return _write_presets(_kind_file(directory, kind), kept)


def _write_presets(path: Path, presets: list[dict[str, Any]]) -> Path:
    text = "# ProcAnim user presets: data only, read with tomllib, never executed.\n"
    for preset in presets:
        lines = (f"{key} = {_toml_value(value, key)}\n" for key, value in preset.items())
        text += "\n[[preset]]\n" + "".join(lines)
    tomllib.loads(text)  # what is written must read back
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    try:
        partial.write_text(text, encoding="utf-8")
        partial.replace(path)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise PresetError(f"cannot write the presets file {path}: {exc.strerror or exc}") from None
    _load.cache_clear()
    _load_user.cache_clear()
    return path


def _toml_value(value: Any, key: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise PresetError(f"setting {key!r} is not a finite number")
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v, key) for v in value) + "]"
    raise PresetError(f"setting {key!r} has a value ProcAnim cannot store ({type(value).__name__})")
