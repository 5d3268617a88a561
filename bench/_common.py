"""Shared benchmark recording: each figure printed as a row and appended to a JSON-lines file.

``make bench`` runs every ``bench/bench_*.py`` (some on each Blender version) with ``BENCH_OUT``
pointing at one file, then ``bench/run_all.py`` prints the table and writes ``out/bench.json``.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def blender_version() -> str:
    """The bpy version string if bpy is importable here, else "none"."""
    try:
        import bpy
    except ImportError:
        return "none"
    return ".".join(str(v) for v in bpy.app.version)


def record(name: str, value: float, unit: str, target: str = "", note: str = "") -> None:
    """Print one figure and append it to ``$BENCH_OUT`` (default ``out/bench.jsonl``)."""
    row = {
        "name": name,
        "value": float(value),
        "unit": unit,
        "target": target,
        "note": note,
        "blender": blender_version(),
    }
    print(f"{name:<60} {value:>12.4g} {unit:<14} target: {target or '-'}  {note}")
    path = Path(os.environ.get("BENCH_OUT", ROOT / "out" / "bench.jsonl"))
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as stream:
        stream.write(json.dumps(row) + "\n")


def best_time(function: Callable[[], object], repeat: int = 3) -> float:
    """The fastest of ``repeat`` wall-clock runs, in seconds (less noise on a shared machine)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def enable_extension() -> str:
    """Enable ProcAnim from the source tree (for benchmarks that need bpy); returns the package."""
    import sys

    sys.path.insert(0, str(ROOT / "scripts"))
    import dev_extension

    dev_extension.isolate_user_resources()
    import bpy  # noqa: F401

    return dev_extension.enable()


def disable_extension(package: str) -> None:
    """Unregister before exit (4.2 segfaults and 4.5 hangs otherwise)."""
    import dev_extension

    dev_extension.disable(package)
