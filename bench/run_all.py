"""Run every bench/bench_*.py, print one table and write out/bench.json.

Scripts whose docstring says ``# bench: every-blender-version`` run once per bpy venv; the others
run on the 5.0 venv. Each script records its figures through ``_common.record``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENVS = {
    "5.0": ROOT / ".venv",
    "4.2": ROOT / ".venv-4.2",
    "4.5": ROOT / ".venv-4.5",
    "5.2": ROOT / ".venv-5.2",
    "5.3": ROOT / ".venv-5.3",
}
RAW = ROOT / "out" / "bench.jsonl"


def main() -> int:
    RAW.parent.mkdir(exist_ok=True)
    RAW.unlink(missing_ok=True)
    failures = []
    for script in sorted((ROOT / "bench").glob("bench_*.py")):
        every_version = "# bench: every-blender-version" in script.read_text(encoding="utf-8")
        for version, venv in VENVS.items():
            if version != "5.0" and not every_version:
                continue
            print(f"== {script.name} on bpy {version}", flush=True)
            start = time.perf_counter()
            result = subprocess.run(
                [str(venv / "bin" / "python"), str(ROOT / "bench" / "_run.py"), str(script)],
                cwd=ROOT,
                env={**os.environ, "BENCH_OUT": str(RAW)},
            )
            print(f"   ({time.perf_counter() - start:.1f} s)", flush=True)
            if result.returncode != 0:
                failures.append(f"{script.name} on {version}")
    rows = [json.loads(line) for line in RAW.read_text(encoding="utf-8").splitlines()] if RAW.exists() else []
    print()
    print(f"{'benchmark':<72} {'value':>12} {'unit':<12} {'target':<16} blender")
    for row in rows:
        target = row["target"] or "-"
        print(f"{row['name']:<72} {row['value']:>12.4g} {row['unit']:<12} {target:<16} {row['blender']}")
    (ROOT / "out" / "bench.json").write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    print(f"\n{len(rows)} figures written to out/bench.json")
    if failures:
        print("benchmarks that failed: " + ", ".join(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
