"""The domain core imports and works with no Blender at all."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_IMPORT_ALL_WITHOUT_BLENDER = """
import importlib, pkgutil, sys
sys.modules["bpy"] = None        # any "import bpy" now raises ImportError
sys.modules["mathutils"] = None
sys.modules["bmesh"] = None
import addon
names = [m.name for m in pkgutil.walk_packages(addon.__path__, "addon.")]
for name in names:
    importlib.import_module(name)
print(len(names))
"""


def test_every_addon_module_imports_without_bpy():
    result = subprocess.run(
        [sys.executable, "-c", _IMPORT_ALL_WITHOUT_BLENDER], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    count = int(result.stdout.strip().splitlines()[-1])
    # One module per source file, the top-level package itself aside: nothing was skipped.
    assert count == len(list((ROOT / "addon").rglob("*.py"))) - 1


def test_no_addon_source_mentions_bpy_imports():
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in (ROOT / "addon").rglob("*.py")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if line.strip().startswith(("import bpy", "from bpy", "import mathutils", "from mathutils"))
    ]
    assert offenders == []


_IMPORT_ROOT_PACKAGE = """
import importlib.util, sys
root = sys.argv[1]
init = root + "/__init__.py"
spec = importlib.util.spec_from_file_location("procanim", init, submodule_search_locations=[root])
module = importlib.util.module_from_spec(spec)
sys.modules["procanim"] = module
spec.loader.exec_module(module)
print("bpy" in sys.modules)
"""


def test_importing_the_extension_package_does_not_need_bpy():
    # The repository root is the extension package, and pytest imports its __init__ while collecting
    # the unit tests: that must not drag Blender in, so unit tests run anywhere.
    result = subprocess.run(
        [sys.executable, "-c", _IMPORT_ROOT_PACKAGE, str(ROOT)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"
