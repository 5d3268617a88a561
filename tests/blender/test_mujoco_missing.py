"""Where MuJoCo cannot load (Intel macs, Windows on ARM, a broken install), ProcAnim still registers,
every other generator works, and the dancer says why it is unavailable instead of failing on a click."""

from __future__ import annotations

import os
import subprocess
import sys

import bpy
import pytest
from conftest import ROOT, view3d_override
from ui_smoke import smoke_draw

# Run in a fresh process where `import mujoco` fails, as on a platform with no wheel: the extension
# registers from scratch there, the dancer's operators refuse in poll, and the other generators run.
_SCRIPT = """
import sys
sys.modules["mujoco"] = None          # `import mujoco` now raises ImportError
sys.path.insert(0, sys.argv[1])
import dev_extension
dev_extension.isolate_user_resources()
import bpy
package = dev_extension.enable()
bpy.ops.wm.read_homefile(use_empty=True)
print("DANCER_POLL", bpy.ops.procanim.add_dancer.poll(), bpy.ops.procanim.bake_balance.poll())
try:
    bpy.ops.procanim.add_dancer()
except RuntimeError as error:
    print("REFUSED", str(error).replace("\\n", " "))
print("JUGGLE", sorted(bpy.ops.procanim.juggle()))
print("MIRROR", sorted(bpy.ops.procanim.add_ellipsoid_mirror()))
print("IK", sorted(bpy.ops.procanim.add_ik_arm()))
dev_extension.disable(package)
dev_extension.exit_process(0)
"""


def test_without_mujoco_the_extension_registers_and_only_the_dancer_is_refused(tmp_path):
    env = {**os.environ, "BLENDER_USER_RESOURCES": str(tmp_path / "user")}
    result = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(ROOT / "scripts")],
        capture_output=True, text=True, env=env, timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    lines = {line.split()[0]: line.split(None, 1)[1] for line in result.stdout.splitlines() if " " in line}
    assert lines["DANCER_POLL"] == "False False"
    assert "The dancer is unavailable" in lines["REFUSED"] and "MuJoCo" in lines["REFUSED"]
    for generator in ("JUGGLE", "MIRROR", "IK"):
        assert lines[generator] == "['FINISHED']", (generator, result.stdout)
    assert "Traceback" not in result.stderr


def test_the_dancer_panel_explains_instead_of_drawing_controls(monkeypatch, extension_package):
    panel = bpy.types.PROCANIM_PT_dancer
    with bpy.context.temp_override(**view3d_override()):
        assert "procanim.bake_balance" in smoke_draw(panel).operators
        monkeypatch.setitem(sys.modules, "mujoco", None)
        record = smoke_draw(panel)
    assert record.operators == []
    assert any("unavailable" in label for label in record.labels)
    assert not bpy.ops.procanim.add_dancer.poll()
    with pytest.raises(RuntimeError, match="MuJoCo"):
        bpy.ops.procanim.add_dancer()
