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
