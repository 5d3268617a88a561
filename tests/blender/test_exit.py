"""Every way ProcAnim runs headless leaves its process cleanly on every Blender version.

The bpy module of Blender 4.2 segfaults while Python finalizes once a property with an update callback
was registered (the mirrors' live recipe has them), even after the extension is disabled. The test
harness, the CLI and the benchmarks leave through ``dev_extension.exit_process`` instead; these tests
run each of them in a fresh process, after an update callback really fired, and check the exit code.
"""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import ROOT, run_cli

_SCRIPT = """
import sys
sys.path.insert(0, sys.argv[1])
import dev_extension
dev_extension.isolate_user_resources()
import bpy
package = dev_extension.enable()
bpy.ops.wm.read_homefile(use_empty=True)
bpy.ops.procanim.add_ellipsoid_mirror()
mirror = next(o for o in bpy.data.objects if o.procanim.mirror.mirror_type == "ELLIPSOID")
mirror.procanim.mirror.minor_axis = 1.2      # fires the recipe's update callback
print("UPDATED", len(mirror.data.vertices))
dev_extension.disable(package)
dev_extension.exit_process(7)
"""


def _env(tmp_path) -> dict:
    return {**os.environ, "BLENDER_USER_RESOURCES": str(tmp_path / "user")}


def test_a_script_that_fired_an_update_callback_exits_with_its_own_code(tmp_path):
    result = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(ROOT / "scripts")],
        capture_output=True, text=True, env=_env(tmp_path), timeout=600,
    )
    assert "UPDATED" in result.stdout, result.stderr[-2000:]
    assert result.returncode == 7, (result.returncode, result.stderr[-2000:])


def test_the_test_harness_exits_with_pytest_status_after_mirror_tests(tmp_path):
    test = "tests/blender/test_mirrors.py::test_mirror_follows_a_moved_focus_through_the_depsgraph_handler"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test],
        capture_output=True, text=True, env=_env(tmp_path), timeout=600, cwd=ROOT,
    )
    assert result.returncode == 0, (result.returncode, result.stdout[-2000:], result.stderr[-2000:])
    assert "1 passed" in result.stdout


def test_the_cli_exits_cleanly_after_building_mirrors(tmp_path):
    result = run_cli("mirror", "--out", str(tmp_path / "m.blend"), tmp_path=tmp_path)
    assert result.returncode == 0, (result.returncode, result.stderr[-2000:])
    assert (tmp_path / "m.blend").exists()
