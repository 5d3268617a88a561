"""`make test-blender` (pytest-blender driving a `blender` executable) keeps working.

No Blender binary is installed here, so the run goes through scripts/blender, a `blender`-compatible
launcher around the bpy module; with a real binary the same command runs inside Blender.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUNNER = ROOT / ".venv-pytest-blender" / "bin" / "python"


def test_pytest_blender_runs_the_suite_inside_blender():
    assert RUNNER.exists(), "run `make .venv-pytest-blender/.stamp` (make test does)"
    env = {**os.environ, "BPY_PYTHON": sys.executable}  # this very Blender version
    result = subprocess.run(
        [
            str(RUNNER),
            "-m",
            "pytest",
            "-q",
            "tests/blender/test_writers.py",
            "--blender-executable",
            str(ROOT / "scripts" / "blender"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert " passed" in result.stdout and "failed" not in result.stdout
