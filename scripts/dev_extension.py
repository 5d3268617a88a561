"""Enable the ProcAnim source tree as a Blender extension, the way Blender itself does.

A local extension repository pointing at the source makes the package ``bl_ext.<repo>.procanim``,
exactly as an installed extension. The repository folder must be named after the extension id,
so a temporary folder holding a ``procanim`` link to the source is used.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

REPO_MODULE = "procanim_dev"
EXTENSION_ID = "procanim"
SOURCE = Path(__file__).resolve().parent.parent


def isolate_user_resources() -> None:
    """Keep Blender's user config out of the home directory (call before ``import bpy``)."""
    if "BLENDER_USER_RESOURCES" not in os.environ:
        os.environ["BLENDER_USER_RESOURCES"] = tempfile.mkdtemp(prefix="procanim-user-")


def enable(source: Path = SOURCE) -> str:
    """Enable the extension from ``source``; returns its package name."""
    import addon_utils
    import bpy

    for module in addon_utils.modules():
        if module.__name__.endswith("." + EXTENSION_ID) and addon_utils.check(module.__name__)[1]:
            return module.__name__  # already installed and enabled (e.g. a user's Blender)
    repos = bpy.context.preferences.extensions.repos
    repo = next((r for r in repos if r.module == REPO_MODULE), None)
    if repo is None:
        holder = Path(tempfile.mkdtemp(prefix="procanim-repo-"))
        (holder / EXTENSION_ID).symlink_to(source, target_is_directory=True)
        repo = repos.new(
            name="ProcAnim source", module=REPO_MODULE, custom_directory=str(holder), source="USER"
        )
    package = f"bl_ext.{REPO_MODULE}.{EXTENSION_ID}"
    module = addon_utils.enable(package, default_set=True, persistent=True, handle_error=_raise)
    if module is None:
        raise RuntimeError(f"could not enable {package}")
    return package


def disable(package: str) -> None:
    """Unregister the extension (4.2 crashes and 4.5 hangs at exit if classes stay registered)."""
    import addon_utils

    addon_utils.disable(package, default_set=True, handle_error=_raise)


def _raise(exc: BaseException) -> None:
    raise exc


def exit_process(code: int) -> None:
    """Leave the process without the interpreter's own teardown.

    The bpy module of Blender 4.2 segfaults while Python finalizes once any RNA property with an
    update callback has been registered, even after it was unregistered again (4.5 and later exit
    cleanly). Blender's own binary never finalizes that way, so skipping the teardown loses nothing:
    the extension is disabled and files are closed before this is called.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
