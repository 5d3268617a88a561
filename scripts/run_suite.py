"""Run the test suite as independent pytest jobs side by side, one lane per core (`make test` calls this).

Jobs: each unit test file is one job (a file that would dominate a lane is split into chunks of its
node ids, balanced by their measured seconds), and each Blender version's ``tests/blender`` run is one
job in that version's venv. Jobs start longest first, estimated from a committed table of measured
CPU seconds (``tests/suite_times.json``; ``--record`` rewrites it from the run); unknown jobs get a default.
Each job's output is buffered and printed when it ends: a header line with its pytest summary and
seconds, and the whole output when it failed. The exit status is non-zero if any job failed.

Stdlib only: it runs before anything else is known to work.

    scripts/run_suite.py --blender 5.0=.venv --blender 4.2=.venv-4.2     # unit + those Blender versions
    scripts/run_suite.py --stage unit --jobs 1                           # the unit suite in one lane
    scripts/run_suite.py --stage 5.0 --blender 5.0=.venv                 # one Blender version only
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TABLE_NAME = "tests/suite_times.json"
TABLE = ROOT / TABLE_NAME
UNIT_DIR = "tests/unit"
BLENDER_DIR = "tests/blender"
UNIT_VENV = ".venv"
# Unknown jobs: a new unit file is usually quick; a Blender version's whole suite is minutes.
DEFAULT_SECONDS = {"unit": 60.0, "blender": 300.0}
# A file is split when it alone would take more than this share of one lane's estimated work, so the
# longest job stays well below the wall time (longest-first scheduling ends within one job of ideal).
CHUNK_SHARE = 0.125
# Never split below this: each chunk pays pytest's start-up and the file's module fixtures again.
MIN_CHUNK_SECONDS = 90.0
# --record keeps per-test seconds only for files this long (the ones that may be split), and only the
# tests this long: the rest of a file's time is shared out evenly over its other tests.
RECORD_TESTS_OF_FILES_OVER = 120.0
RECORD_TESTS_OVER = 3.0
# With no job ending for this long the runner says what is still running (a hung job shows itself).
QUIET_SECONDS = 300.0
SUMMARY_KINDS = ("passed", "failed", "errors", "skipped", "xfailed", "xpassed")
NO_TESTS_COLLECTED = 5


@dataclass
class Job:
    stage: str  # "unit" or "blender <version>"
    name: str  # what the header line and the table call it
    command: list[str]
    estimate: float
    file: str | None = None  # the unit file this job runs (whole or a chunk of it)
    process: subprocess.Popen | None = None
    output: Path | None = None
    junit: Path | None = None
    started: float = 0.0
    seconds: float = 0.0  # wall
    cpu_seconds: float = 0.0  # user + system of the job and every process it waited for
    returncode: int | None = None
    counts: dict[str, int] = field(default_factory=dict)
    summary: str = ""

    @property
    def failed(self) -> bool:
        return self.returncode != 0


def load_table(path: Path) -> dict:
    if not path.is_file():
        return {"files": {}, "blender": {}, "tests": {}}
    table = json.loads(path.read_text(encoding="utf-8"))
    for key in ("files", "blender", "tests"):
        table.setdefault(key, {})
    return table


def unit_files(patterns: list[str] | None) -> list[str]:
    files = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / UNIT_DIR).glob("test_*.py"))
    if patterns:
        wanted = [f for f in files if any(Path(f).match(p) or f == p for p in patterns)]
        missing = [p for p in patterns if not any(Path(f).match(p) or f == p for f in files)]
        if missing:
            raise SystemExit(f"run_suite: no unit file matches {', '.join(missing)}")
        return wanted
    return files


def collect_node_ids(python: str, files: list[str]) -> dict[str, list[str]]:
    """Node ids per file, collected in one pytest process (new tests are never left out of a chunk)."""
    result = subprocess.run(
        [python, "-m", "pytest", "-q", "--collect-only", *files],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    ids: dict[str, list[str]] = {f: [] for f in files}
    for line in result.stdout.splitlines():
        file, sep, _ = line.partition("::")
        if sep and file in ids:
            ids[file].append(line)
    return ids


def split_into_chunks(node_ids: list[str], table_tests: dict[str, float], file_seconds: float,
                      chunks: int) -> list[tuple[list[str], float]]:
    """Longest-processing-time split of a file's tests into ``chunks`` lists of similar total seconds,
    each with its estimated seconds; tests without a recorded time share the rest of the file's seconds
    evenly. Each chunk keeps the file's order, so module fixtures are built once per chunk."""
    known = {n: table_tests[n] for n in node_ids if n in table_tests}
    unknown = [n for n in node_ids if n not in known]
    rest = max(file_seconds - sum(known.values()), 0.0)
    share = rest / len(unknown) if unknown else 0.0
    cost = {n: known.get(n, share) for n in node_ids}
    bins: list[list[str]] = [[] for _ in range(chunks)]
    loads = [0.0] * chunks
    for node in sorted(node_ids, key=lambda n: -cost[n]):
        lightest = loads.index(min(loads))
        bins[lightest].append(node)
        loads[lightest] += cost[node]
    order = {n: i for i, n in enumerate(node_ids)}
    return [(sorted(b, key=order.__getitem__), load) for b, load in zip(bins, loads, strict=True) if b]


def pytest_command(python: str, targets: list[str]) -> list[str]:
    return [python, "-m", "pytest", "-q", *targets]


def plan_jobs(args: argparse.Namespace, table: dict, lanes: int) -> list[Job]:
    stages = set(args.stage or ["unit", *args.blender_venvs])
    unknown = stages - {"unit", *args.blender_venvs}
    if unknown:
        raise SystemExit(f"run_suite: unknown stage {', '.join(sorted(unknown))} "
                         f"(stages: unit, {', '.join(args.blender_venvs)})")
    jobs: list[Job] = []
    python = str(ROOT / UNIT_VENV / "bin" / "python")
    if "unit" in stages:
        files = unit_files(args.files)
        estimate = {f: table["files"].get(f, DEFAULT_SECONDS["unit"]) for f in files}
        blender = [table["blender"].get(v, DEFAULT_SECONDS["blender"]) for v in args.blender_venvs
                   if v in stages]
        lane_work = (sum(estimate.values()) + sum(blender)) / lanes
        chunk_seconds = max(MIN_CHUNK_SECONDS, CHUNK_SHARE * lane_work)
        split = {f: math.ceil(estimate[f] / chunk_seconds) for f in files
                 if lanes > 1 and estimate[f] > chunk_seconds}
        node_ids = collect_node_ids(python, sorted(split)) if split else {}
        for file in files:
            ids = node_ids.get(file)
            if file in split and ids and len(ids) > 1:
                chunks = split_into_chunks(ids, table["tests"], estimate[file], min(split[file], len(ids)))
                # A few long tests may not share out evenly (5 pours in 4 chunks puts 2 in one): one more
                # chunk until none is over the target.
                while max(seconds for _, seconds in chunks) > chunk_seconds and len(chunks) < len(ids):
                    chunks = split_into_chunks(ids, table["tests"], estimate[file], len(chunks) + 1)
                for number, (chunk, seconds) in enumerate(chunks, 1):
                    jobs.append(Job("unit", f"{file} [{number}/{len(chunks)}]", pytest_command(python, chunk),
                                    seconds, file=file))
            else:
                # Not split, or its collection failed: the whole file runs and shows any error.
                jobs.append(Job("unit", file, pytest_command(python, [file]), estimate[file], file=file))
    for version, venv in args.blender_venvs.items():
        if version in stages:
            command = pytest_command(str(ROOT / venv / "bin" / "python"), [BLENDER_DIR])
            estimate = table["blender"].get(version, DEFAULT_SECONDS["blender"])
            jobs.append(Job(f"blender {version}", f"blender {version}", command, estimate))
    return sorted(jobs, key=lambda job: -job.estimate)


def bpy_version(venv: str) -> str:
    """The venv's bpy version from its package metadata (importing bpy costs seconds)."""
    found = sorted((ROOT / venv).glob("lib/python*/site-packages/bpy-*.dist-info"))
    return found[0].name.removeprefix("bpy-").removesuffix(".dist-info") if found else "?"


def parse_summary(text: str) -> tuple[str, dict[str, int]]:
    """pytest's last summary line (``3 passed, 1 skipped in 2.10s``) and its counts."""
    for line in reversed(text.splitlines()):
        stripped = line.strip().strip("=").strip()
        if re.search(r"\d+ \w+.* in [\d.]+s", stripped) or stripped.startswith("no tests ran"):
            counts: dict[str, int] = {}
            for number, kind in re.findall(r"(\d+) (\w+)", stripped):
                kind = "errors" if kind == "error" else kind
                if kind in SUMMARY_KINDS:
                    counts[kind] = counts.get(kind, 0) + int(number)
            return stripped, counts
    return "", {}


class Runner:
    def __init__(self, jobs: list[Job], lanes: int, work: Path, blender_venvs: dict[str, str],
                 on_finish: Callable[[list[Job]], None] | None = None, all_output: bool = False):
        self.on_finish = on_finish
        self.all_output = all_output
        self.pending = list(jobs)
        self.running: list[Job] = []
        self.done: list[Job] = []
        self.lanes = lanes
        self.work = work
        self.blender_venvs = blender_venvs
        self.total = len(jobs)

    def start(self, job: Job) -> None:
        slug = re.sub(r"[^\w.-]+", "_", job.name).strip("_")
        job.output = self.work / f"{slug}.log"
        job.junit = self.work / f"{slug}.xml"
        # Each job gets its own pytest temporary root: no job ever cleans up or reuses another's tmp_path.
        command = [*job.command, f"--basetemp={self.work / (slug + '.tmp')}", f"--junitxml={job.junit}"]
        with open(job.output, "wb") as stream:
            # A session of its own, so an interrupt can end the job with every process it started.
            job.process = subprocess.Popen(command, cwd=ROOT, stdout=stream, stderr=subprocess.STDOUT,
                                           stdin=subprocess.DEVNULL, start_new_session=True)
        job.started = time.monotonic()
        self.running.append(job)

    def finish(self, job: Job, status: int, usage: resource.struct_rusage) -> None:
        assert job.process is not None and job.output is not None
        job.returncode = job.process.returncode = os.waitstatus_to_exitcode(status)
        job.seconds = time.monotonic() - job.started
        job.cpu_seconds = usage.ru_utime + usage.ru_stime
        text = job.output.read_text(encoding="utf-8", errors="replace")
        job.summary, job.counts = parse_summary(text)
        if job.returncode == NO_TESTS_COLLECTED:
            job.summary = f"no tests collected (pytest exit {NO_TESTS_COLLECTED}) {job.summary}".strip()
        self.running.remove(job)
        self.done.append(job)
        verdict = "FAIL" if job.failed else "ok"
        if job.stage == "unit":
            title = f"[{len(self.done):>3}/{self.total}] {verdict:<4} {job.name}"
        else:
            version = job.stage.split()[1]
            title = f"== Blender tests on {bpy_version(self.blender_venvs[version])} ({verdict})"
        summary = job.summary or "no pytest summary"
        print(f"{title}: {summary} ({job.seconds:.0f} s, CPU {job.cpu_seconds:.0f} s)", flush=True)
        if job.failed or self.all_output:
            print(f"---- output of {job.name} (exit {job.returncode}) " + "-" * 20, flush=True)
            print(text.rstrip("\n"), flush=True)
            print(f"---- end of {job.name} " + "-" * 20, flush=True)
        if self.on_finish is not None:
            self.on_finish(self.done)

    def run(self) -> None:
        said = time.monotonic()
        while self.pending or self.running:
            while self.pending and len(self.running) < self.lanes:
                self.start(self.pending.pop(0))
            for job in list(self.running):
                assert job.process is not None
                # wait4 rather than poll: the job's CPU seconds are what the table records.
                pid, status, usage = os.wait4(job.process.pid, os.WNOHANG)
                if pid:
                    self.finish(job, status, usage)
                    said = time.monotonic()
            if time.monotonic() - said > QUIET_SECONDS:
                said = time.monotonic()
                running = ", ".join(f"{job.name} ({said - job.started:.0f} s)" for job in self.running)
                print(f"       still running: {running}", flush=True)
            time.sleep(0.2)

    def kill_all(self) -> None:
        for job in self.running:
            assert job.process is not None
            _signal_group(job.process, signal.SIGTERM)
        deadline = time.monotonic() + 5
        for job in self.running:
            assert job.process is not None
            try:
                job.process.wait(timeout=max(deadline - time.monotonic(), 0.1))
            except subprocess.TimeoutExpired:
                pass
            _signal_group(job.process, signal.SIGKILL)


def _signal_group(process: subprocess.Popen, signum: int) -> None:
    try:
        os.killpg(process.pid, signum)
    except ProcessLookupError:
        pass


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def junit_seconds(path: Path) -> dict[str, float]:
    """Seconds per node id (setup + call + teardown) from a job's JUnit XML."""
    if not path.is_file():
        return {}
    seconds = {}
    for case in ElementTree.parse(path).iter("testcase"):
        module = case.get("classname", "").split(".")
        name = case.get("name", "")
        # classname is the dotted path plus any test class; node ids use "/" for the file part.
        for split in range(len(module), 0, -1):
            file = "/".join(module[:split]) + ".py"
            if (ROOT / file).is_file():
                node = "::".join([file, *module[split:], name])
                seconds[node] = seconds.get(node, 0.0) + float(case.get("time", 0.0))
                break
    return seconds


def record(table: dict, jobs: list[Job], path: Path) -> None:
    """Merge this run's CPU seconds into the table: per unit file (its chunks summed), per Blender
    version, and per long test of long files, for balancing the chunks of a split file.

    CPU seconds, not wall: they hardly change with the machine's load, and one busy lane runs a job in
    about its CPU seconds. Per-test times come from JUnit (wall) and are scaled to their file's CPU."""
    files: dict[str, float] = {}
    walls: dict[str, float] = {}
    tests: dict[str, dict[str, float]] = {}
    for job in jobs:
        if job.stage == "unit" and job.file is not None:
            files[job.file] = files.get(job.file, 0.0) + job.cpu_seconds
            walls[job.file] = walls.get(job.file, 0.0) + job.seconds
            assert job.junit is not None
            tests.setdefault(job.file, {}).update(junit_seconds(job.junit))
        elif job.stage.startswith("blender "):
            table["blender"][job.stage.split()[1]] = round(job.cpu_seconds, 1)
    for file, seconds in files.items():
        table["files"][file] = round(seconds, 1)
        table["tests"] = {n: s for n, s in table["tests"].items() if not n.startswith(file + "::")}
        if seconds > RECORD_TESTS_OF_FILES_OVER:
            scale = seconds / walls[file] if walls[file] > 0 else 1.0
            for node, node_seconds in tests.get(file, {}).items():
                if node_seconds * scale >= RECORD_TESTS_OVER:
                    table["tests"][node] = round(node_seconds * scale, 1)
    # Files that no longer exist leave the table.
    table["files"] = {f: s for f, s in sorted(table["files"].items()) if (ROOT / f).is_file()}
    table["tests"] = {n: s for n, s in sorted(table["tests"].items()) if n.split("::")[0] in table["files"]}
    path.write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")


def print_summary(jobs: list[Job], wall: float, lanes: int) -> None:
    stages: dict[str, dict[str, int]] = {}
    failed: dict[str, int] = {}
    cpu_of: dict[str, float] = {}
    for job in jobs:
        counts = stages.setdefault(job.stage, dict.fromkeys(SUMMARY_KINDS, 0))
        for kind, number in job.counts.items():
            counts[kind] += number
        failed[job.stage] = failed.get(job.stage, 0) + job.failed
        cpu_of[job.stage] = cpu_of.get(job.stage, 0.0) + job.cpu_seconds
    print("== Summary", flush=True)
    for stage in sorted(stages, key=_stage_order):
        shown = ", ".join(f"{n} {k}" for k, n in stages[stage].items() if n)
        jobs_failed = f"; {failed[stage]} job(s) FAILED" if failed[stage] else ""
        print(f"  {stage:<12} {shown or 'nothing ran'}{jobs_failed} (CPU {cpu_of[stage]:.0f} s)", flush=True)
    busy = sum(job.seconds for job in jobs)
    cpu = sum(job.cpu_seconds for job in jobs)
    print(f"  {len(jobs)} jobs on {lanes} lane(s): wall {wall:.0f} s; the jobs' wall {busy:.0f} s, "
          f"CPU {cpu:.0f} s", flush=True)
    for job in jobs:
        if job.failed:
            print(f"  FAILED: {job.name} (exit {job.returncode})", flush=True)


def _stage_order(stage: str) -> tuple[int, tuple[int, ...]]:
    """The unit stage first, then the Blender versions oldest first (jobs end in any order)."""
    if stage == "unit":
        return (0, ())
    return (1, tuple(int(part) for part in re.findall(r"\d+", stage)))


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--jobs", type=int, default=None,
                        help="lanes (default: the JOBS environment variable, else os.cpu_count())")
    parser.add_argument("--blender", action="append", default=[], metavar="VERSION=VENV",
                        help="a Blender version and its venv, e.g. 4.2=.venv-4.2 (repeat per version)")
    parser.add_argument("--stage", action="append", metavar="STAGE",
                        help="run only this stage: 'unit' or a Blender version (repeatable; default all)")
    parser.add_argument("--files", nargs="+", metavar="PATTERN",
                        help="only these unit files (paths or globs such as 'tests/unit/test_optics_*.py')")
    parser.add_argument("--record", action="store_true",
                        help=f"write the measured CPU seconds into {TABLE_NAME}")
    parser.add_argument("--all-output", action="store_true",
                        help="print every job's whole output, not only the failed jobs'")
    parser.add_argument("--dry-run", action="store_true", help="print the jobs and estimates, run nothing")
    parser.add_argument("--table", type=Path, default=TABLE, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.blender_venvs = {}
    for pair in args.blender:
        version, sep, venv = pair.partition("=")
        if not sep or not version or not venv:
            parser.error(f"--blender wants VERSION=VENV, not {pair!r}")
        args.blender_venvs[version] = venv
    return args


def lane_count(requested: int | None) -> int:
    if requested is None and os.environ.get("JOBS", "").strip():
        requested = int(os.environ["JOBS"])
    return max(1, requested if requested is not None else (os.cpu_count() or 1))


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    lanes = lane_count(args.jobs)
    table = load_table(args.table)
    jobs = plan_jobs(args, table, lanes)
    if not jobs:
        print("run_suite: nothing to run", flush=True)
        return 1
    estimate = sum(job.estimate for job in jobs)
    print(f"== {len(jobs)} jobs on {lanes} lane(s), longest first (estimated {estimate:.0f} CPU s)",
          flush=True)
    if args.dry_run:
        for job in jobs:
            print(f"  {job.estimate:7.1f} s  {job.name}  ({len(job.command) - 4} target(s))", flush=True)
        return 0
    work = Path(tempfile.mkdtemp(prefix="procanim-suite-"))
    # Recording after every job keeps the figures of a long measuring run that is cut short.
    recorder = (lambda done: record(table, done, args.table)) if args.record else None
    runner = Runner(jobs, lanes, work, args.blender_venvs, on_finish=recorder, all_output=args.all_output)
    # make and CI stop a run with SIGTERM: end the jobs as on Ctrl-C.
    signal.signal(signal.SIGTERM, _interrupt)
    start = time.monotonic()
    try:
        runner.run()
    except KeyboardInterrupt:
        print(f"\nrun_suite: interrupted; stopping {len(runner.running)} running job(s)", flush=True)
        return 130
    finally:
        # Also when the runner itself fails: no job outlives it.
        runner.kill_all()
        shutil.rmtree(work, ignore_errors=True)
    print_summary(runner.done, time.monotonic() - start, lanes)
    if args.record:
        print(f"  recorded in {args.table}: {len(table['files'])} unit files, {len(table['blender'])} "
              f"Blender versions, {len(table['tests'])} long tests", flush=True)
    return 1 if any(job.failed for job in runner.done) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
