"""Fixtures for tests that run against the bpy module (or inside Blender via pytest-blender).

The extension is enabled once per session from the source tree as ``bl_ext.procanim_dev.procanim``
(exactly the package name an installed extension gets) and disabled at the end: 4.2 segfaults and
4.5 hangs at exit while classes stay registered. Every test starts from an empty file.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import dev_extension  # noqa: E402

dev_extension.isolate_user_resources()

try:
    import bpy
except ImportError:  # pytest-blender's outer process collects this file without bpy
    bpy = None


@pytest.hookimpl(hookwrapper=True)
def pytest_sessionfinish(session, exitstatus):
    yield
    session.config.stash[_EXIT_STATUS] = int(session.exitstatus)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    """Leave with pytest's own exit status but without Python's teardown, which segfaults bpy 4.2
    once a property update callback was registered (tests/blender/test_exit.py keeps that honest)."""
    if bpy is not None and _EXIT_STATUS in config.stash:
        dev_extension.exit_process(config.stash[_EXIT_STATUS])


_EXIT_STATUS = pytest.StashKey[int]()


@pytest.fixture(scope="session")
def extension_package():
    """The enabled extension's package name, e.g. ``bl_ext.procanim_dev.procanim``."""
    package = dev_extension.enable()
    yield package
    dev_extension.disable(package)


@pytest.fixture(autouse=True)
def empty_scene(extension_package):
    """Every test starts from an empty file with the extension registered."""
    bpy.ops.wm.read_homefile(use_empty=True)
    yield
    # Leave edit/pose modes so the next reset never trips over them.
    if bpy.context.object is not None and bpy.context.object.mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")


@pytest.fixture()
def ext(extension_package):
    """Import a module of the extension by its relative name: ``ext("operators.writers")``."""

    def load(name: str):
        return importlib.import_module(f"{extension_package}.{name}")

    return load


def view3d_override() -> dict:
    """A context override with a 3D View area and its sidebar region (for panels and view ops)."""
    window = bpy.context.window_manager.windows[0]
    area = next(a for a in window.screen.areas if a.type == "VIEW_3D")
    region = next(r for r in area.regions if r.type == "UI")
    return {"window": window, "screen": window.screen, "area": area, "region": region}


def data_counts() -> dict[str, int]:
    """How many datablocks of each kind exist: equal before and after means nothing was left behind."""
    kinds = (
        "objects",
        "meshes",
        "armatures",
        "curves",
        "actions",
        "materials",
        "collections",
        "cameras",
        "lights",
        "images",
        "node_groups",
    )
    return {kind: len(getattr(bpy.data, kind)) for kind in kinds}


CLI = ROOT / "scripts" / "procanim_cli.py"


def run_cli(*args: str, tmp_path: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run the headless entry point in a fresh process, with its own user config under ``tmp_path``."""
    env = {**os.environ, "BLENDER_USER_RESOURCES": str(tmp_path / "user")}
    return subprocess.run(
        [sys.executable, str(CLI), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        cwd=tmp_path,
    )
