"""Files travel with the .blend: on every save, the caches and genomes ProcAnim wrote are stored as
paths relative to the .blend ('//'), and what a bake left in Blender's temporary folder while the file
was unsaved (which Blender empties on quit) is moved beside the .blend first.

Images ProcAnim makes (plots, training curves) are packed into the .blend by ``writers.show_image``.
Where no relative path exists (another drive on Windows) the absolute path is kept and the save
prints a warning.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import bpy
from bpy.app.handlers import persistent

from .preferences import DEFAULT_CACHE_DIRECTORY, preferences

#: What the last save did, for the status bar and for tests: (moved files, warnings).
LAST_SAVE: dict[str, list[str]] = {"moved": [], "warnings": []}


def _absolute(path: str) -> Path:
    """``path`` as the file currently open (before the save) resolves it."""
    return Path(os.path.normpath(bpy.path.abspath(path)))


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True


def blend_relative(path: Path, blend_dir: Path) -> tuple[str, str | None]:
    """'//...' relative to ``blend_dir``, or the absolute path and a warning when none exists."""
    absolute = os.path.abspath(str(path))
    try:
        relative = os.path.relpath(absolute, str(blend_dir))
    except ValueError:  # another drive on Windows
        return absolute, f"'{absolute}' is on another drive than the .blend: kept as an absolute path"
    return "//" + relative.replace(os.sep, "/"), None


def _cache_folder_for(blend_dir: Path) -> Path:
    prefs = preferences()
    folder = (prefs.cache_directory if prefs is not None else "") or DEFAULT_CACHE_DIRECTORY
    if folder.startswith("//"):
        return blend_dir / folder[2:].strip("/\\")
    return Path(folder)


def _move_beside(source: Path, folder: Path, moved: list[str]) -> Path:
    """Copy ``source`` into ``folder`` (the temporary folder is Blender's to empty, not ours)."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / source.name
    shutil.copy2(source, target)
    moved.append(str(target))
    return target


def _temporary_folder() -> Path | None:
    return Path(bpy.app.tempdir) if bpy.app.tempdir else None


def relink_caches(blend_dir: Path, moved: list[str], warnings: list[str]) -> None:
    temporary = _temporary_folder()
    for obj in bpy.data.objects:
        for modifier in obj.modifiers:
            if modifier.type != "MESH_CACHE" or not modifier.filepath:
                continue
            current = _absolute(modifier.filepath)
            in_temporary = temporary is not None and _inside(current, temporary)
            if in_temporary and current.is_file():
                current = _move_beside(current, _cache_folder_for(blend_dir), moved)
            elif modifier.filepath.startswith("//"):
                continue  # already relative: Blender remaps it when the file is saved elsewhere
            stored, warning = blend_relative(current, blend_dir)
            modifier.filepath = stored
            if warning:
                warnings.append(f"{obj.name}: {warning}")


def relink_genomes(blend_dir: Path, moved: list[str], warnings: list[str]) -> None:
    temporary = _temporary_folder()
    for scene in bpy.data.scenes:
        settings = getattr(getattr(scene, "procanim", None), "fly", None)
        if settings is None or not settings.genome_path or settings.genome_path.startswith("//"):
            continue
        current = _absolute(settings.genome_path)
        if temporary is not None and _inside(current, temporary) and current.is_file():
            curve = current.with_name(current.stem + "_curve.png")
            current = _move_beside(current, blend_dir, moved)
            if curve.is_file():
                _move_beside(curve, blend_dir, moved)
        stored, warning = blend_relative(current, blend_dir)
        settings.genome_path = stored
        if warning:
            warnings.append(f"genome of scene {scene.name}: {warning}")


@persistent
def keep_files_with_the_blend(filepath=None, *_args) -> None:
    """save_pre: make ProcAnim's stored paths relative to the file being written."""
    if not isinstance(filepath, str) or not filepath:
        return
    blend_dir = Path(os.path.abspath(filepath)).parent
    moved: list[str] = []
    warnings: list[str] = []
    try:
        relink_caches(blend_dir, moved, warnings)
        relink_genomes(blend_dir, moved, warnings)
    except OSError as error:  # a save must never fail because of us: keep the paths as they were
        warnings.append(f"could not move ProcAnim files beside the .blend: {error}")
    LAST_SAVE["moved"], LAST_SAVE["warnings"] = moved, warnings
    for path in moved:
        print(f"ProcAnim: moved {path} beside the .blend (it was in the temporary folder)")
    for warning in warnings:
        print(f"ProcAnim warning: {warning}")


def register() -> None:
    bpy.app.handlers.save_pre.append(keep_files_with_the_blend)


def unregister() -> None:
    if keep_files_with_the_blend in bpy.app.handlers.save_pre:
        bpy.app.handlers.save_pre.remove(keep_files_with_the_blend)


classes = ()
