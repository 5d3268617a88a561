"""The one path resolver of the extension: every file or folder path an operator reads or writes
goes through here, so '//' means the same thing everywhere and a bad path is refused with a message.

Blend-relative paths ('//...') are resolved with ``bpy.path.abspath`` against the saved .blend. In an
unsaved file they have nothing to be relative to: the OS would read a leading '//' as '/', so they are
refused, unless the caller names a fallback folder (Blender's temporary folder for default outputs),
in which case the path must stay inside that folder.
"""

from __future__ import annotations

import os
from pathlib import Path

import bpy

from ..addon.errors import PathError

#: Property option that lets Blender's file browser keep '//' paths (it exists from 4.5 on).
BLEND_RELATIVE = {"PATH_SUPPORTS_BLEND_RELATIVE"} if bpy.app.version >= (4, 5, 0) else set()
#: Longest file or folder name most file systems accept (bytes, UTF-8).
MAX_NAME_BYTES = 255
#: Longest whole path the OS accepts (Windows without long-path support: 260 characters).
MAX_PATH_BYTES = 259 if os.name == "nt" else 4095


def _shown(path: str, limit: int = 80) -> str:
    """A path short enough to quote in a one-line status-bar report."""
    text = path.replace("\x00", "\\0")
    return text if len(text) <= limit else text[: limit // 2 - 2] + "..." + text[-(limit // 2 - 1) :]


def _os_error(what: str, action: str, path: Path, error: OSError) -> PathError:
    return PathError(f"{what}: {action} '{_shown(str(path))}': {error.strerror or error}")


def blend_is_saved() -> bool:
    return bool(bpy.data.filepath)


def check_text(path: str, what: str) -> str:
    """The path string itself: not empty, no NUL byte, no name or whole path the OS cannot hold."""
    if not isinstance(path, str) or not path.strip():
        raise PathError(f"{what}: the path is empty")
    if "\x00" in path:
        raise PathError(f"{what}: the path '{_shown(path)}' contains a NUL character")
    if len(path.encode("utf-8", "surrogatepass")) > MAX_PATH_BYTES:
        raise PathError(f"{what}: the path is {len(path)} characters long (at most {MAX_PATH_BYTES} bytes)")
    for name in path.replace("\\", "/").split("/"):
        if len(name.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
            raise PathError(f"{what}: the name '{_shown(name, 40)}' is longer than {MAX_NAME_BYTES} bytes")
    return path


def resolve(path: str, what: str, unsaved_fallback: Path | None = None) -> Path:
    """An absolute path for a settings or operator path.

    '//' is relative to the saved .blend. In an unsaved file it is refused, or, with
    ``unsaved_fallback``, resolved inside that folder (and refused if it climbs out of it).
    Other relative paths are relative to the working directory, as in Blender.
    """
    check_text(path, what)
    if path.startswith("//"):
        if blend_is_saved():
            return Path(os.path.normpath(bpy.path.abspath(path)))
        if unsaved_fallback is None:
            raise PathError(
                f"{what}: '{_shown(path)}' is relative to the .blend file (//), but this file is not "
                "saved yet; save the .blend first or give an absolute path"
            )
        base = Path(os.path.normpath(os.path.abspath(unsaved_fallback)))
        inside = Path(os.path.normpath(base / path[2:].lstrip("/\\")))
        if inside != base and base not in inside.parents:
            raise PathError(
                f"{what}: '{_shown(path)}' points outside the temporary folder used while the .blend "
                "is unsaved; save the .blend first or give an absolute path"
            )
        return inside
    return Path(os.path.normpath(os.path.abspath(os.path.expanduser(path))))


def temporary_folder() -> Path:
    """Where default outputs go while the .blend is unsaved."""
    return Path(bpy.app.tempdir or os.environ.get("TMPDIR", "/tmp"))


def _looks_like_folder(path: str) -> bool:
    stripped = path.rstrip()
    return stripped.endswith(("/", "\\")) or stripped in ("//", ".", "..") or stripped.endswith(("/.", "/.."))


def _check_writable_parent(target: Path, what: str) -> None:
    """The nearest existing ancestor must be a writable folder (missing folders are created later)."""
    ancestor = target.parent
    while not ancestor.exists():
        if ancestor.parent == ancestor:
            break
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise PathError(f"{what}: '{_shown(str(ancestor))}' is a file, not a folder")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise PathError(f"{what}: cannot write into '{_shown(str(ancestor))}' (permission denied)")


def input_file(path: str, what: str) -> Path:
    """An existing, readable file to load."""
    target = resolve(path, what)
    try:
        if target.is_dir():
            raise PathError(f"{what}: '{_shown(str(target))}' is a folder, not a file")
        if not target.is_file():
            raise PathError(f"{what}: '{_shown(str(target))}' does not exist")
    except OSError as error:  # e.g. a component is a file, or the path is otherwise unusable
        raise _os_error(what, "cannot read", target, error) from error
    if not os.access(target, os.R_OK):
        raise PathError(f"{what}: cannot read '{_shown(str(target))}' (permission denied)")
    return target


def output_file(
    path: str, what: str, suffix: str | None = None, unsaved_fallback: Path | None = None
) -> Path:
    """A file path to write: not a folder, its suffix forced, its parent folder writable or creatable.

    Missing parent folders are not created here; call :func:`make_parent` just before writing.
    """
    check_text(path, what)
    if _looks_like_folder(path):
        raise PathError(f"{what}: '{_shown(path)}' names a folder; give a file name")
    target = resolve(path, what, unsaved_fallback)
    if suffix and target.suffix.lower() != suffix.lower():
        target = target.with_name(target.name + suffix) if not target.suffix else target.with_suffix(suffix)
        check_text(str(target), what)
    try:
        if target.is_dir():
            raise PathError(f"{what}: '{_shown(str(target))}' is a folder; give a file name")
        _check_writable_parent(target, what)
    except OSError as error:
        raise _os_error(what, "cannot write", target, error) from error
    return target


def output_folder(path: str, what: str, unsaved_fallback: Path | None = None) -> Path:
    """A folder to write files into: an existing writable folder, or one that can be created."""
    target = resolve(path, what, unsaved_fallback)
    try:
        if target.exists() and not target.is_dir():
            raise PathError(f"{what}: '{_shown(str(target))}' is a file, not a folder")
        if target.is_dir():
            if not os.access(target, os.W_OK | os.X_OK):
                raise PathError(f"{what}: cannot write into '{_shown(str(target))}' (permission denied)")
        else:
            _check_writable_parent(target, what)
    except OSError as error:
        raise _os_error(what, "cannot use folder", target, error) from error
    return target


def make_parent(target: Path, what: str) -> None:
    """Create the folders above ``target``, turning an OS refusal into a message."""
    make_folder(target.parent, what)


def make_folder(folder: Path, what: str) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise _os_error(what, "cannot create folder", folder, error) from error


def stored_path(path: Path | str) -> tuple[str, str | None]:
    """How to store ``path`` in the .blend: blend-relative ('//...') when the file is saved and the
    path is on the same drive, else absolute. Returns the string and a warning, or None."""
    absolute = os.path.abspath(str(path))
    if not blend_is_saved():
        return absolute, None
    try:
        return bpy.path.relpath(absolute), None
    except ValueError:  # another drive on Windows: no relative path exists
        return absolute, (
            f"'{_shown(absolute)}' is on another drive than the .blend, so it is stored as an absolute "
            "path and will not follow the .blend if it is moved"
        )
