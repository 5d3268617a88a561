"""ProcAnim fuzzes itself: every ``procanim.*`` operator gets hostile argument sets generated from its
own RNA properties (see fuzz.py), each case in a fresh scene, under a time budget the harness enforces.

CI runs a few cases per operator with a fixed seed on one Blender version (5.0). ``make fuzz`` runs
more, with a random seed, through the same test:

    PROCANIM_FUZZ_CASES=30 PROCANIM_FUZZ_SEED=random .venv/bin/python -m pytest -q tests/blender/test_fuzz.py

Environment: PROCANIM_FUZZ_CASES (per operator, default 6), PROCANIM_FUZZ_SEED (default 16, or
'random'), PROCANIM_FUZZ_BUDGET (seconds per case, default 60), PROCANIM_FUZZ_REPORT (a JSONL file that
collects every case), PROCANIM_FUZZ_ANY_VERSION=1 to run on another Blender than 5.0.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import bpy
import pytest

ROOT = Path(__file__).resolve().parents[2]
FUZZER = Path(__file__).resolve().parent / "fuzz.py"
CI_VERSION = (5, 0)

CASES = int(os.environ.get("PROCANIM_FUZZ_CASES", "6"))
_seed = os.environ.get("PROCANIM_FUZZ_SEED", "16")
SEED = random.SystemRandom().randrange(10**6) if _seed == "random" else int(_seed)
BUDGET = float(os.environ.get("PROCANIM_FUZZ_BUDGET", "60"))
# Case 0 is the operator with its defaults, which every generator's own tests already run; CI skips it
# (train_fly's defaults alone are half a minute) and `make fuzz` includes it.
FIRST = 0 if os.environ.get("PROCANIM_FUZZ_DEFAULTS") else 1


def operator_ids() -> list[str]:
    """Every operator the extension defines, read from its sources (so new ones are fuzzed too)."""
    found = set()
    for source in (ROOT / "operators").rglob("*.py"):
        found.update(re.findall(r'bl_idname\s*=\s*"procanim\.(\w+)"', source.read_text(encoding="utf-8")))
    return sorted(found)


pytestmark = [
    pytest.mark.skipif(
        tuple(bpy.app.version[:2]) != CI_VERSION and not os.environ.get("PROCANIM_FUZZ_ANY_VERSION"),
        reason="the fuzz suite runs on one Blender version, 5.0 (PROCANIM_FUZZ_ANY_VERSION=1 for others)",
    ),
    # Inside a Blender binary sys.executable is Blender's own Python, which cannot start a bpy process.
    pytest.mark.skipif(bool(bpy.app.binary_path), reason="the fuzz runner needs the bpy module's Python"),
]


def _records(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def fuzz_operator(operator: str, report: Path, count: int = CASES, seed: int = SEED) -> list[dict]:
    """Run the operator's cases in fresh processes, restarting after a case that overran or crashed."""
    first, cases = FIRST, FIRST + count
    while first < cases:
        command = [
            sys.executable,
            str(FUZZER),
            f"--operator={operator}",
            f"--cases={cases}",
            f"--seed={seed}",
            f"--budget={BUDGET}",
            f"--first-case={first}",
            f"--report={report}",
        ]
        # The watchdog inside the process stops an overrunning case; this outer limit also catches
        # a case stuck in C code that never lets the watchdog thread run.
        try:
            subprocess.run(command, capture_output=True, timeout=BUDGET * (cases - first) + 120, cwd=ROOT)
        except subprocess.TimeoutExpired:
            pass
        records = _records(report)
        done = {r["case"] for r in records if r["operator"] == operator and "outcome" in r}
        started = [r for r in records if r["operator"] == operator and r.get("started")]
        unfinished = [r for r in started if r["case"] not in done]
        for record in unfinished:  # crashed or killed: fail with its arguments
            with report.open("a", encoding="utf-8") as stream:
                stream.write(json.dumps({**record, "started": False, "outcome": "crash",
                                         "failure": "the process died or hung during this case"}) + "\n")
        last = max((r["case"] for r in started), default=first - 1)
        first = max(first + 1, last + 1)
    return [r for r in _records(report) if r["operator"] == operator and "outcome" in r]


@pytest.mark.parametrize("operator", operator_ids())
def test_operator_survives_hostile_arguments(operator, tmp_path):
    report = Path(os.environ["PROCANIM_FUZZ_REPORT"]) if os.environ.get("PROCANIM_FUZZ_REPORT") else None
    local = tmp_path / "fuzz.jsonl"
    records = fuzz_operator(operator, local)
    if report is not None:
        with report.open("a", encoding="utf-8") as stream:
            stream.write(local.read_text(encoding="utf-8"))
    assert len({r["case"] for r in records}) == CASES, f"{operator}: not every case ran"
    failures = [r for r in records if r.get("failure")]
    lines = [
        f"  case {r['case']} ({r['scene']} scene) procanim.{operator}(**{r['arguments']}): "
        f"{r['outcome']}: {r['failure']}"
        for r in failures
    ]
    assert not failures, f"seed {SEED}: {len(failures)} of {len(records)} cases failed\n" + "\n".join(lines)
