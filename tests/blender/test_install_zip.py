"""The zip that `make build` produces for this platform installs through Blender's own extension
installer into a fresh session, enables, and bakes the dancer with the MuJoCo wheel it bundles."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import sysconfig
import tomllib

from conftest import ROOT

# The venv's own MuJoCo is hidden from the install session, so the bake below can only succeed with
# the wheel Blender unpacked from the zip (into the user's extensions/.local site-packages).
_INSTALL = """
import importlib.abc, importlib.machinery, sys
venv_site = sys.argv[2]

class _NoVenvMujoco(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != "mujoco" and not name.startswith("mujoco."):
            return None
        if path is None:
            path = [entry for entry in sys.path if entry != venv_site]
        return importlib.machinery.PathFinder.find_spec(name, path)

sys.meta_path.insert(0, _NoVenvMujoco())
import bpy, addon_utils
result = bpy.ops.extensions.package_install_files(
    filepath=sys.argv[1], repo="user_default", enable_on_install=True)
package = "bl_ext.user_default.procanim"
enabled = package in bpy.context.preferences.addons
print("RESULT", sorted(result), enabled, hasattr(bpy.types.Scene, "procanim"), "procanim" in dir(bpy.ops))
bpy.ops.wm.read_homefile(use_empty=True)
bpy.ops.procanim.add_dancer()
bake = bpy.ops.procanim.bake_balance(experiment="BALANCE", balance_duration=0.5)
import mujoco
print("MUJOCO", mujoco.__file__)
print("BAKE", sorted(bake), bpy.context.active_object.animation_data is not None)
addon_utils.disable(package, default_set=True)
print("DISABLED", hasattr(bpy.types.Scene, "procanim"))
sys.path.insert(0, sys.argv[3])
import dev_extension
dev_extension.exit_process(0)
"""


def _blender_platform() -> str:
    """This machine as Blender names platforms in split zips, e.g. ``linux_x64``."""
    machines = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}
    machine = machines[platform.machine().lower()]
    system = "windows" if sys.platform == "win32" else "macos" if sys.platform == "darwin" else "linux"
    return f"{system}_{machine}"


def test_built_zip_installs_enables_and_bakes_the_dancer_from_its_bundled_wheel(tmp_path):
    version = tomllib.loads((ROOT / "blender_manifest.toml").read_text())["version"]
    zip_path = ROOT / "dist" / f"procanim-{version}-{_blender_platform()}.zip"
    assert zip_path.exists(), "run `make build` first (make test does)"
    env = {**os.environ, "BLENDER_USER_RESOURCES": str(tmp_path / "user")}
    venv_site = sysconfig.get_paths()["purelib"]
    result = subprocess.run(
        [sys.executable, "-c", _INSTALL, str(zip_path), venv_site, str(ROOT / "scripts")],
        capture_output=True, text=True, env=env, timeout=600,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    lines = {
        line.split()[0]: line.split()[1:]
        for line in result.stdout.splitlines()
        if line.split() and line.split()[0] in ("RESULT", "MUJOCO", "BAKE", "DISABLED")
    }
    assert lines["RESULT"] == ["['FINISHED']", "True", "True", "True"], result.stdout
    # MuJoCo was imported from the wheel Blender unpacked for this extension, not from the venv
    assert lines["MUJOCO"][0].startswith(str(tmp_path / "user" / "extensions")), lines["MUJOCO"]
    assert lines["BAKE"] == ["['FINISHED']", "True"], result.stdout + result.stderr[-2000:]
    assert lines["DISABLED"] == ["False"]
    installed = tmp_path / "user" / "extensions" / "user_default" / "procanim" / "blender_manifest.toml"
    assert installed.exists()
