"""scripts/run_suite.py (what `make test` runs): its split of a long file, the summaries it reads, and the
per-test seconds it records."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("run_suite", ROOT / "scripts" / "run_suite.py")
run_suite = importlib.util.module_from_spec(_spec)
sys.modules["run_suite"] = run_suite  # dataclasses resolve their module by name
_spec.loader.exec_module(run_suite)


def test_a_split_runs_every_test_once_in_file_order_with_balanced_chunks():
    nodes = [f"tests/unit/test_x.py::test_{i}" for i in range(10)]
    seconds = {nodes[0]: 50.0, nodes[3]: 40.0, nodes[7]: 30.0}  # the other 7 share 14 s: 2 s each
    split = run_suite.split_into_chunks(nodes, seconds, file_seconds=134.0, chunks=3)
    chunks = [chunk for chunk, _ in split]
    assert sorted(n for chunk in chunks for n in chunk) == sorted(nodes)
    assert all(chunk == sorted(chunk, key=nodes.index) for chunk in chunks)
    loads = [sum(seconds.get(n, 2.0) for n in chunk) for chunk in chunks]
    assert sorted(loads) == [42.0, 42.0, 50.0]  # longest first, each to the lightest chunk
    assert [estimate for _, estimate in split] == pytest.approx(loads)


def test_a_file_with_fewer_tests_than_chunks_gives_no_empty_chunk():
    nodes = ["tests/unit/test_x.py::test_a", "tests/unit/test_x.py::test_b"]
    split = run_suite.split_into_chunks(nodes, {}, file_seconds=10.0, chunks=5)
    assert sorted((len(chunk), seconds) for chunk, seconds in split) == [(1, 5.0), (1, 5.0)]


@pytest.mark.parametrize(
    ("output", "summary", "counts"),
    [
        ("....\n3 passed, 1 skipped, 2 xfailed in 2.10s\n", "3 passed, 1 skipped, 2 xfailed in 2.10s",
         {"passed": 3, "skipped": 1, "xfailed": 2}),
        ("F.E\n=== short test summary info ===\nFAILED x\n1 failed, 1 passed, 1 error in 0.31s\n",
         "1 failed, 1 passed, 1 error in 0.31s", {"failed": 1, "passed": 1, "errors": 1}),
        ("=========== 5 passed, 2 warnings in 1.00s ===========\n", "5 passed, 2 warnings in 1.00s",
         {"passed": 5}),
        ("\nno tests ran in 0.01s\n", "no tests ran in 0.01s", {}),
        ("Segmentation fault (core dumped)\n", "", {}),
    ],
)
def test_the_pytest_summary_line_and_its_counts_are_read(output, summary, counts):
    assert run_suite.parse_summary(output) == (summary, counts)


def test_junit_times_become_node_ids_with_classes_and_parameters(tmp_path):
    junit = tmp_path / "job.xml"
    junit.write_text(
        '<testsuites><testsuite name="pytest">'
        '<testcase classname="tests.unit.test_geometry" name="test_a[1-x]" time="1.5"/>'
        '<testcase classname="tests.unit.test_geometry.TestBox" name="test_b" time="0.25"/>'
        "</testsuite></testsuites>"
    )
    assert run_suite.junit_seconds(junit) == {
        "tests/unit/test_geometry.py::test_a[1-x]": 1.5,
        "tests/unit/test_geometry.py::TestBox::test_b": 0.25,
    }


def test_the_lane_count_defaults_to_the_cores_and_never_drops_below_one(monkeypatch):
    monkeypatch.delenv("JOBS", raising=False)
    assert run_suite.lane_count(None) == max(1, os.cpu_count() or 1)
    assert run_suite.lane_count(0) == 1
    monkeypatch.setenv("JOBS", "3")
    assert run_suite.lane_count(None) == 3
    assert run_suite.lane_count(1) == 1


def _project(root: Path, unit: dict[str, str], blender: dict[str, str] | None = None) -> Path:
    """A scratch checkout for the runner: test files and a .venv whose python is this one."""
    for folder, files in (("unit", unit), ("blender", blender or {})):
        (root / "tests" / folder).mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (root / "tests" / folder / name).write_text(text)
    python = root / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    # A wrapper, not a link: a venv's python only finds its site-packages when called by its own path.
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    (root / ".venv" / "lib" / "python3.11" / "site-packages" / "bpy-9.9.1.dist-info").mkdir(parents=True)
    return root


def test_a_failing_test_or_an_empty_job_fails_the_run_and_shows_its_output(tmp_path, monkeypatch, capsys):
    root = _project(tmp_path, {
        "test_good.py": "def test_ok():\n    assert 1 + 1 == 2\n",
        "test_bad.py": "def test_no():\n    assert 1 + 1 == 3\n",
        "test_empty.py": "def helper():\n    return 1\n",
    })
    monkeypatch.setattr(run_suite, "ROOT", root)
    code = run_suite.main(["--jobs", "2", "--table", str(root / "times.json")])
    out = capsys.readouterr().out
    assert code == 1
    assert "ok   tests/unit/test_good.py: 1 passed" in out
    assert "FAIL tests/unit/test_bad.py: 1 failed" in out and "assert (1 + 1) == 3" in out
    assert "FAIL tests/unit/test_empty.py: no tests collected (pytest exit 5)" in out
    assert "unit         1 passed, 1 failed; 2 job(s) FAILED (CPU " in out


def test_a_long_file_runs_in_chunks_beside_a_blender_stage_and_is_recorded(tmp_path, monkeypatch, capsys):
    tests = "".join(f"def test_{i}():\n    assert {i} >= 0\n" for i in range(4))
    root = _project(tmp_path, {"test_long.py": tests}, {"test_b.py": "def test_b():\n    pass\n"})
    table = root / "times.json"
    table.write_text('{"files": {"tests/unit/test_long.py": 1000.0}}')
    monkeypatch.setattr(run_suite, "ROOT", root)
    code = run_suite.main(["--jobs", "2", "--table", str(table), "--record", "--blender", "9.9=.venv"])
    out = capsys.readouterr().out
    assert code == 0, out
    # 1000 s against a lane's 650 s: more chunks than its 4 tests, so one test per chunk.
    assert [f"tests/unit/test_long.py [{n}/4]: 1 passed" in out for n in range(1, 5)] == [True] * 4
    assert "== Blender tests on 9.9.1 (ok): 1 passed" in out
    assert out.index("unit         4 passed (CPU") < out.index("blender 9.9  1 passed (CPU")
    recorded = run_suite.load_table(table)
    assert set(recorded["files"]) == {"tests/unit/test_long.py"} and set(recorded["blender"]) == {"9.9"}
    assert 0 < recorded["files"]["tests/unit/test_long.py"] < 1000


def test_long_tests_that_do_not_share_out_evenly_get_one_more_chunk(tmp_path, monkeypatch):
    tests = "".join(f"def test_{i}():\n    pass\n" for i in range(5))
    root = _project(tmp_path, {"test_pours.py": tests})
    monkeypatch.setattr(run_suite, "ROOT", root)
    args = run_suite.parse_args(["--blender", "9.9=.venv"])
    nodes = [f"tests/unit/test_pours.py::test_{i}" for i in range(5)]
    table = {"files": {"tests/unit/test_pours.py": 750.0}, "blender": {"9.9": 2400.0},
             "tests": dict.fromkeys(nodes, 150.0)}
    # A lane's work is (750 + 2400) / 2, the target an eighth of it, 197 s: 750 s would be 4 chunks, one
    # with two 150 s tests (300 s), so it becomes 5.
    jobs = run_suite.plan_jobs(args, table, lanes=2)
    chunks = [f"tests/unit/test_pours.py [{n}/5]" for n in range(1, 6)]
    assert [job.name for job in jobs] == ["blender 9.9", *chunks]
    assert [job.estimate for job in jobs[1:]] == [150.0] * 5
