"""The zip that `make build` produces installs and enables in a fresh Blender session."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_INSTALL = """
import sys, bpy, addon_utils
zip_path = sys.argv[1]
result = bpy.ops.extensions.package_install_files(
    filepath=zip_path, repo="user_default", enable_on_install=True)
package = "bl_ext.user_default.procanim"
enabled = package in bpy.context.preferences.addons
print("RESULT", sorted(result), enabled, hasattr(bpy.types.Scene, "procanim"), "procanim" in dir(bpy.ops))
bpy.ops.wm.read_homefile(use_empty=True)
bpy.context.scene.procanim.render.resolution_x = 320
import importlib
print("MUJOCO", importlib.util.find_spec("mujoco") is not None)
addon_utils.disable(package, default_set=True)
print("DISABLED", hasattr(bpy.types.Scene, "procanim"))
"""


def test_built_zip_installs_and_enables(tmp_path):
    version = tomllib.loads((ROOT / "blender_manifest.toml").read_text())["version"]
    zip_path = ROOT / "dist" / f"procanim-{version}.zip"
    assert zip_path.exists(), "run `make build` first (make test does)"
    env = {**os.environ, "BLENDER_USER_RESOURCES": str(tmp_path / "user")}
    result = subprocess.run(
        [sys.executable, "-c", _INSTALL, str(zip_path)], capture_output=True, text=True, env=env, timeout=600
    )
    assert result.returncode == 0, result.stderr[-3000:]
    lines = {
        line.split()[0]: line.split()[1:]
        for line in result.stdout.splitlines()
        if line.split() and line.split()[0] in ("RESULT", "MUJOCO", "DISABLED")
    }
    assert lines["RESULT"] == ["['FINISHED']", "True", "True", "True"], result.stdout
    assert lines["MUJOCO"] == ["True"]
    assert lines["DISABLED"] == ["False"]
    installed = tmp_path / "user" / "extensions" / "user_default" / "procanim" / "blender_manifest.toml"
    assert installed.exists()
