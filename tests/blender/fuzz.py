"""ProcAnim fuzzes itself: hostile argument sets for every ``bpy.ops.procanim.*`` operator, generated
from the operator's own RNA properties, so a new operator or property is covered without editing this.

Run as a script (one fresh Blender per operator, so a case over its time budget can be stopped):

    python tests/blender/fuzz.py --operator bake_ik --cases 30 --seed 7 --budget 60 --report out.jsonl

Every case starts from an empty file or from a scene prepared for the operator (the right selection),
then calls the operator with EXEC_DEFAULT and checks the outcome:

- FINISHED: every object matrix, mesh vertex, shape key, curve point, bone and F-curve key is finite;
- refused (an error report, a failed poll, CANCELLED): the report is one line and the scene is exactly
  as before (datablock counts, frame range, current frame, frame rate, camera, world, render output,
  active object, selection);
- anything else (an exception escaping the operator, or arguments Blender itself rejects) is a failure;
- a watchdog thread ends the process when a case runs past its budget, after writing the case's
  arguments, so the test fails with them.

One JSON line per case goes to the report: the operator, scene, arguments, outcome, seconds, message
and the failure (None when the case passed).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

INT_MIN, INT_MAX = -(2**31), 2**31 - 1
FLOAT_SPECIALS = (
    math.nan,
    math.inf,
    -math.inf,
    0.0,
    -0.0,
    1e-9,
    -1e-9,
    1.0,
    -1.0,
    1e9,
    -1e9,
    3.4e38,
    -3.4e38,
)
INT_SPECIALS = (0, 1, -1, 2, 3, 1000, 10**6, 10**9, INT_MAX, INT_MIN)
GARBAGE_TEXT = (
    "",
    " ",
    "x" * 10_000,
    "((((",
    ")]}>",
    "<3p|[",
    "\U0001f600\u202e\u0301ñ漢字",
    "Cube",
    "None",
    "nan",
    "-1",
    "a\nb\tc",
    "${HOME}",
    "'; DROP",
)
# '<tmp>' becomes a fresh folder per case, '<file>' an existing non-genome file in it and '<genome>'
# a copy of the shipped genome there (never the shipped file itself: an output would overwrite it).
GARBAGE_PATHS = (
    "",
    "//",
    "//../../../../../procanim_fuzz_root.npz",
    "//sub/out.npz",
    "\x00.npz",
    "x" * 2000,
    "/nonexistent/procanim/dir/out.npz",
    "/proc/procanim_fuzz/out.npz",
    "/",
    ".",
    "<tmp>/",
    "<tmp>/out",
    "<tmp>/new/deeper/out.npz",
    "<file>",
    "<file>/below.npz",
    "relative_out.npz",
    "<genome>",
)


# --------------------------------------------------------------------------- argument generation


def _soft_random_float(prop, rng: random.Random) -> float:
    low = max(prop.soft_min, -1e3)
    high = min(prop.soft_max, 1e3)
    return rng.uniform(low, high) if high > low else low


def float_value(prop, rng: random.Random) -> float:
    pool = (*FLOAT_SPECIALS, prop.hard_min, prop.hard_max, prop.soft_min, prop.soft_max)
    if rng.random() < 0.35:
        return _soft_random_float(prop, rng)
    return rng.choice(pool)


def int_value(prop, rng: random.Random) -> int:
    pool = (*INT_SPECIALS, prop.hard_min, prop.hard_max, prop.soft_min, prop.soft_max)
    if rng.random() < 0.35:
        low, high = max(prop.soft_min, -1000), min(prop.soft_max, 1000)
        return rng.randint(low, high) if high > low else low
    return int(min(max(rng.choice(pool), INT_MIN), INT_MAX))


def text_value(prop, rng: random.Random):
    if prop.subtype in ("FILE_PATH", "DIR_PATH", "FILE_NAME"):
        return rng.choice(GARBAGE_PATHS)
    if rng.random() < 0.25:
        return prop.default
    return rng.choice(GARBAGE_TEXT)


def property_value(prop, rng: random.Random):
    """One hostile value for ``prop`` (an ``bpy.types.Property``), or None to leave it unset."""
    kind = prop.type
    length = getattr(prop, "array_length", 0)
    if kind == "BOOLEAN":
        value = rng.random() < 0.5
        return [rng.random() < 0.5 for _ in range(length)] if length else value
    if kind == "INT":
        return [int_value(prop, rng) for _ in range(length)] if length else int_value(prop, rng)
    if kind == "FLOAT":
        if not length:
            return float_value(prop, rng)
        if rng.random() < 0.5:  # one hostile component among ordinary ones
            vector = [_soft_random_float(prop, rng) for _ in range(length)]
            vector[rng.randrange(length)] = float_value(prop, rng)
            return vector
        return [float_value(prop, rng) for _ in range(length)]
    if kind == "ENUM":
        items = [item.identifier for item in prop.enum_items]
        if not items:
            return None
        if prop.is_enum_flag:
            return {i for i in items if rng.random() < 0.5}
        return rng.choice(items)
    if kind == "STRING":
        return text_value(prop, rng)
    return None  # pointers and collections cannot be given as operator arguments


def fuzzable_properties(rna) -> list:
    return [p for p in rna.properties if p.identifier != "rna_type" and not p.is_readonly]


# Arguments every case of an operator gets. Rendering with EEVEE or Cycles is Blender's own renderer,
# its time set by the GPU (minutes per frame on a CI machine's software OpenGL), not ProcAnim's code:
# the export is fuzzed with Workbench, every other argument free.
FIXED_ARGUMENTS = {"export_render": {"engine": "WORKBENCH"}}


def systematic_value(prop, round_: int):
    """The ``round_``-th extreme of a property, in the order most likely to break something: NaN, +-inf
    and the limits for numbers, then garbage for text; None once the list is used up."""
    length = getattr(prop, "array_length", 0)
    if prop.type == "FLOAT":
        extremes = (math.nan, math.inf, -math.inf, prop.hard_max, prop.hard_min, 0.0, 1e-9, 1e9)
        if round_ >= len(extremes):
            return None
        value = extremes[round_]
        if length:  # the extreme in one component of an otherwise default vector
            vector = list(prop.default_array)
            vector[round_ % length] = value
            return vector
        return value
    if prop.type == "INT":
        extremes = (prop.hard_max, prop.hard_min, 0, -1, INT_MAX, INT_MIN)
        if round_ >= len(extremes):
            return None
        value = int(min(max(extremes[round_], INT_MIN), INT_MAX))
        return [value] * length if length else value
    if prop.type == "STRING":
        pool = GARBAGE_PATHS if prop.subtype in ("FILE_PATH", "DIR_PATH", "FILE_NAME") else GARBAGE_TEXT
        return pool[round_] if round_ < len(pool) else None
    if prop.type == "ENUM":
        items = [item.identifier for item in prop.enum_items]
        if prop.is_enum_flag or round_ >= len(items):
            return None
        return items[round_]
    if prop.type == "BOOLEAN" and round_ < 2:
        return [bool(round_)] * length if length else bool(round_)
    return None


def generate_arguments(rna, rng: random.Random, case: int) -> dict:
    """Case 0 is the defaults. Then each case takes the next property in turn and gives it its next
    extreme (NaN, infinities, limits, garbage: see ``systematic_value``), so a short run already puts
    NaN and the hard limits into every property; with it, often, one or two more random hostile
    properties, and sometimes every property at once."""
    fixed = FIXED_ARGUMENTS.get(rna.identifier.split("_OT_")[-1].lower(), {})
    props = [p for p in fuzzable_properties(rna) if p.identifier not in fixed]
    if case == 0 or not props:
        return dict(fixed)
    primary = props[(case - 1) % len(props)]
    arguments = {}
    value = systematic_value(primary, (case - 1) // len(props))
    if value is not None:
        arguments[primary.identifier] = value
    roll = rng.random()
    extra = len(props) if roll < 0.1 else (0 if roll < 0.5 and value is not None else rng.randint(1, 2))
    for prop in rng.sample(props, min(extra, len(props))):
        if prop.identifier in arguments:
            continue
        random_value = property_value(prop, rng)
        if random_value is not None:
            arguments[prop.identifier] = random_value
    return {**arguments, **fixed}


def materialise(arguments: dict, folder: Path) -> dict:
    """Fill the '<tmp>' and '<file>' placeholders of path arguments with this case's folder."""
    existing = folder / "not_a_genome.npz"
    existing.write_bytes(b"procanim fuzz: not an archive")
    genome = folder / "genome.npz"
    genome.write_bytes((ROOT / "presets" / "fly" / "hover.npz").read_bytes())
    result = {}
    for key, value in arguments.items():
        if isinstance(value, str):
            value = value.replace("<tmp>", str(folder)).replace("<file>", str(existing))
            value = value.replace("<genome>", str(genome))
        result[key] = value
    return result


def shown(arguments: dict) -> str:
    def short(value):
        if isinstance(value, str) and len(value) > 60:
            return f"{value[:20]!r}...({len(value)} chars)"
        if isinstance(value, set):
            return sorted(value)
        return value

    return repr({k: short(v) for k, v in arguments.items()})


# --------------------------------------------------------------------------- scenes


def _mesh_object(bpy, name, vertices, faces, location=(0.0, 0.0, 0.0)):
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata(vertices, [], faces)
    obj = bpy.data.objects.new(name, mesh)
    obj.location = location
    bpy.context.scene.collection.objects.link(obj)
    return obj


def _select(bpy, objects) -> None:
    for obj in bpy.context.view_layer.objects:
        if obj is not None:
            obj.select_set(False)
    for obj in objects:
        obj.select_set(True)
    if objects:
        bpy.context.view_layer.objects.active = objects[-1]


def scene_meshes(bpy) -> None:
    """Two selected meshes: a bent grid (for fits and alignment) and a tetrahedron."""
    grid = [(x * 0.3, y * 0.3, 0.05 * x * y) for x in range(4) for y in range(4)]
    quads = [
        (4 * x + y, 4 * x + y + 1, 4 * (x + 1) + y + 1, 4 * (x + 1) + y) for x in range(3) for y in range(3)
    ]
    first = _mesh_object(bpy, "Grid", grid, quads)
    tetra = [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1)]
    second = _mesh_object(bpy, "Tetra", tetra, [(0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3)], (0.5, 0.2, 1.0))
    _select(bpy, [first, second])


def scene_flat_mesh(bpy) -> None:
    """A selected mesh scaled to zero: degenerate input for anything that bakes meshes."""
    obj = _mesh_object(bpy, "Flat", [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1)], [(0, 1, 2), (0, 1, 3)])
    obj.scale = (0.0, 0.0, 0.0)
    _select(bpy, [obj])


def scene_camera(bpy) -> None:
    """A camera looking at a cube, two frames long (so renders stay short)."""
    scene = bpy.context.scene
    camera = bpy.data.objects.new("Camera", bpy.data.cameras.new("Camera"))
    camera.location = (0.0, -6.0, 1.0)
    camera.rotation_euler = (1.45, 0.0, 0.0)
    scene.collection.objects.link(camera)
    scene.camera = camera
    scene.frame_start, scene.frame_end = 1, 2
    scene_meshes(bpy)


def _with(operator: str, **kwargs):
    def build(bpy) -> None:
        getattr(bpy.ops.procanim, operator)(**kwargs)

    build.__name__ = operator
    return build


# Scenes an operator may need: the fuzzer tries the named one first, then any whose poll passes.
PREPARED_SCENES = {
    "meshes": scene_meshes,
    "flat_mesh": scene_flat_mesh,
    "camera": scene_camera,
    "softbody": _with("add_softbody_demo", subdivisions=1),
    "pile": _with("add_rigid_pile_demo", count=3),
    "ik_arm": _with("add_ik_arm", frame_count=10),
    "fly": _with("add_fly"),
    "dancer": _with("add_dancer"),
    "mirror": _with("add_ellipsoid_mirror"),
}
SCENE_HINTS = {
    "bake_softbody": ("softbody", "flat_mesh"),
    "bake_rigid_pile": ("pile", "flat_mesh"),
    "bake_ik": ("ik_arm",),
    "bake_fly": ("fly",),
    "bake_balance": ("dancer",),
    "trace_rays": ("mirror",),
    "export_render": ("camera",),
    "add_rope": ("meshes",),
}


def reset(bpy) -> None:
    bpy.ops.wm.read_homefile(use_empty=True)


def prepare(bpy, name: str) -> None:
    reset(bpy)
    if name != "empty":
        PREPARED_SCENES[name](bpy)


def scenes_for(bpy, operator: str) -> list[str]:
    """The empty scene, the hinted scenes, and any prepared scene that makes a failing poll pass."""
    op = getattr(bpy.ops.procanim, operator)
    chosen = ["empty", *SCENE_HINTS.get(operator, ())]
    if len(chosen) == 1:
        prepare(bpy, "empty")
        if not op.poll():
            for name in PREPARED_SCENES:
                prepare(bpy, name)
                if op.poll():
                    chosen.append(name)
                    break
        elif any(p.identifier == "use_selection" for p in op.get_rna_type().properties):
            chosen.append("meshes")
    # Run twice: the same arguments once more in a scene where they already ran (re-adding a demo,
    # re-baking), which must neither fail nor leave orphan data behind.
    return [*chosen, "again:" + chosen[-1]]


# --------------------------------------------------------------------------- checks


_UI_DATA = ("window_managers", "screens", "workspaces")


def scene_state(bpy) -> dict:
    scene = bpy.context.scene
    layer = bpy.context.view_layer
    counts = {}
    for name in dir(bpy.data):
        collection = getattr(bpy.data, name, None)
        if isinstance(collection, bpy.types.bpy_prop_collection) and name not in _UI_DATA:
            counts[name] = len(collection)
    render = scene.render
    return {
        "counts": counts,
        "frames": (scene.frame_start, scene.frame_end, scene.frame_current),
        "fps": (render.fps, render.fps_base),
        "camera": scene.camera.name if scene.camera else None,
        "world": scene.world.name if scene.world else None,
        "render": (render.engine, render.resolution_x, render.resolution_y, render.filepath),
        "active": layer.objects.active.name if layer.objects.active else None,
        "selected": sorted(o.name for o in layer.objects if o is not None and o.select_get()),
    }


def _finite(values) -> bool:
    return bool(np.all(np.isfinite(values)))


def _fcurves(action):
    if hasattr(action, "layers") and len(action.layers):
        for layer in action.layers:
            for strip in layer.strips:
                for bag in getattr(strip, "channelbags", ()):
                    yield from bag.fcurves
    elif hasattr(action, "fcurves"):
        yield from action.fcurves


def nonfinite_data(bpy) -> list[str]:
    """Where NaN or infinity sits in the scene's data (empty when all is finite)."""
    found = []
    for obj in bpy.data.objects:
        if not _finite(np.array(obj.matrix_world)):
            found.append(f"object '{obj.name}' matrix_world")
        if obj.pose is not None:
            for bone in obj.pose.bones:
                if not _finite(np.array(bone.matrix)):
                    found.append(f"pose bone '{obj.name}:{bone.name}'")
                    break
    for mesh in bpy.data.meshes:
        co = np.empty(3 * len(mesh.vertices), dtype=np.float32)
        mesh.vertices.foreach_get("co", co)
        if not _finite(co):
            found.append(f"mesh '{mesh.name}' vertices")
    for key in bpy.data.shape_keys:
        for block in key.key_blocks:
            co = np.empty(3 * len(block.data), dtype=np.float32)
            block.data.foreach_get("co", co)
            if not _finite(co):
                found.append(f"shape key '{key.name}:{block.name}'")
                break
    for curve in bpy.data.curves:
        for spline in getattr(curve, "splines", ()):
            points = spline.points
            co = np.empty(4 * len(points), dtype=np.float32)
            points.foreach_get("co", co)
            bezier = spline.bezier_points
            bco = np.empty(3 * len(bezier), dtype=np.float32)
            bezier.foreach_get("co", bco)
            if not (_finite(co) and _finite(bco)):
                found.append(f"curve '{curve.name}' points")
                break
    for armature in bpy.data.armatures:
        for bone in armature.bones:
            if not (_finite(bone.head_local) and _finite(bone.tail_local)):
                found.append(f"armature '{armature.name}' bones")
                break
    for action in bpy.data.actions:
        for fcurve in _fcurves(action):
            co = np.empty(2 * len(fcurve.keyframe_points), dtype=np.float32)
            fcurve.keyframe_points.foreach_get("co", co)
            if not _finite(co):
                found.append(f"action '{action.name}' {fcurve.data_path}[{fcurve.array_index}] keys")
                break
    if None in list(bpy.context.view_layer.objects):
        found.append("stale (None) entries in the view layer")
    return found


def orphan_actions(bpy) -> int:
    return sum(1 for action in bpy.data.actions if action.users == 0)


def state_difference(before: dict, after: dict) -> str:
    changed = []
    for key, value in before.items():
        if key == "counts":
            diff = {k: (v, after[key].get(k)) for k, v in value.items() if after[key].get(k) != v}
            if diff:
                changed.append(f"datablocks {diff}")
        elif after[key] != value:
            changed.append(f"{key} {value} -> {after[key]}")
    return "; ".join(changed)


def run_case(bpy, operator: str, arguments: dict) -> dict:
    """Call the operator once and judge the outcome; the scene is already prepared."""
    op = getattr(bpy.ops.procanim, operator)
    before = scene_state(bpy)
    orphans = orphan_actions(bpy)
    start = time.perf_counter()
    outcome, message, failure = "finished", "", None
    try:
        result = op("EXEC_DEFAULT", **arguments)
    except RuntimeError as error:
        message = str(error).strip()
        result = None
        if "Traceback" in message or "Python:" in message:
            named = re.compile(r"^[\w.]+(Error|Exception|Exit)\b")
            lines = [line for line in message.splitlines() if named.match(line)]
            last = lines[-1] if lines else message.splitlines()[-1]
            outcome, failure = "exception", "an exception escaped the operator: " + last
        elif "poll()" in message:
            outcome = "poll"
        else:
            outcome = "refused"
            if len(message.splitlines()) != 1:
                failure = f"the report is not one line: {message!r}"
    except (TypeError, ValueError, OverflowError) as error:
        # bpy.ops raises these while parsing arguments, before the operator runs.
        result, message = None, str(error)
        outcome, failure = "bad-argument", f"Blender rejected an argument the RNA advertises: {error}"
    seconds = time.perf_counter() - start
    if result is not None:
        if "FINISHED" in result:
            problems = nonfinite_data(bpy)
            if problems:
                failure = "finished with non-finite data: " + "; ".join(problems[:4])
            elif orphan_actions(bpy) > orphans:
                failure = f"left {orphan_actions(bpy) - orphans} orphan action(s) behind"
        else:
            outcome = "cancelled"
    escaped = sorted(str(p) for p in Path("/").glob("procanim_fuzz_root*"))
    if escaped and failure is None:
        # '//../../../../../procanim_fuzz_root.npz' in an unsaved file must never reach the root.
        failure = f"wrote outside any folder it was given: {', '.join(escaped)}"
        for path in escaped:
            Path(path).unlink(missing_ok=True)
    if outcome != "finished" and failure is None:
        difference = state_difference(before, scene_state(bpy))
        if difference:
            failure = "refused but changed the scene: " + difference
    if failure is not None and len(failure) > 500:
        failure = failure[:400] + " ... " + failure[-80:]
    return {"outcome": outcome, "message": message[:300], "failure": failure, "seconds": round(seconds, 3)}


# --------------------------------------------------------------------------- driver


def summarise(report: Path) -> str:
    """Figures of a run: outcomes per operator, the slowest case, every failure with its arguments."""
    records = [json.loads(line) for line in report.read_text(encoding="utf-8").splitlines() if line.strip()]
    records = [r for r in records if "outcome" in r and not r.get("started")]
    lines = []
    operators = sorted({r["operator"] for r in records})
    outcomes = ("finished", "refused", "poll", "cancelled", "exception", "bad-argument", "timeout", "crash")
    totals = {o: sum(r["outcome"] == o for r in records) for o in outcomes}
    nan = sum("non-finite" in (r.get("failure") or "") for r in records)
    changed = sum("changed the scene" in (r.get("failure") or "") for r in records)
    slowest = max(records, key=lambda r: r.get("seconds", 0.0), default=None)
    lines.append(
        f"{len(records)} cases over {len(operators)} operators: "
        + ", ".join(f"{count} {name}" for name, count in totals.items() if count)
    )
    lines.append(
        f"failures: {sum(bool(r.get('failure')) for r in records)} "
        f"(exceptions {totals['exception']}, NaN written {nan}, scene changed after a refusal {changed}, "
        f"over budget {totals['timeout']}, crashes {totals['crash']})"
    )
    if slowest is not None:
        lines.append(
            f"slowest case: {slowest.get('seconds', 0):.1f} s, procanim.{slowest['operator']}"
            f"(**{slowest['arguments']})"
        )
    for name in operators:
        mine = [r for r in records if r["operator"] == name]
        tally = {o: sum(r["outcome"] == o for r in mine) for o in outcomes}
        counts = ", ".join(f"{count} {o}" for o, count in tally.items() if count)
        longest = max(r.get("seconds", 0) for r in mine)
        lines.append(f"  {name}: {len(mine)} cases ({counts}), longest {longest:.1f} s")
    for r in records:
        if r.get("failure"):
            lines.append(f"FAIL procanim.{r['operator']}(**{r['arguments']}) [{r['scene']}]: {r['failure']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--summary", type=Path, help="print the figures of a report and exit")
    parser.add_argument("--operator", help="operator id without 'procanim.'")
    parser.add_argument("--cases", type=int, default=8)
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--budget", type=float, default=60.0, help="seconds per case before it fails")
    parser.add_argument("--first-case", type=int, default=0, help="resume after a timed-out case")
    parser.add_argument("--report", type=Path)
    args = parser.parse_args(argv)
    if args.summary is not None:
        print(summarise(args.summary))
        return 0
    if args.operator is None or args.report is None:
        parser.error("--operator and --report are needed to run cases")

    import dev_extension

    dev_extension.isolate_user_resources()
    import bpy

    dev_extension.enable()
    work = Path(tempfile.mkdtemp(prefix="procanim-fuzz-"))
    os.chdir(work)  # relative garbage paths land here, not in the checkout
    rna = getattr(bpy.ops.procanim, args.operator).get_rna_type()
    scenes = scenes_for(bpy, args.operator)
    report = args.report.open("a", encoding="utf-8")

    def write(record: dict) -> None:
        report.write(json.dumps(record, default=str) + "\n")
        report.flush()

    # Arguments come from the seed and case number alone, so a resumed run repeats the same cases.
    for case in range(args.first_case, args.cases):
        rng = random.Random(f"{args.seed}:{args.operator}:{case}")
        scene = scenes[case % len(scenes)]
        folder = work / f"case{case}"
        folder.mkdir()
        arguments = materialise(generate_arguments(rna, rng, case), folder)
        record = {"operator": args.operator, "case": case, "scene": scene, "arguments": shown(arguments)}
        write({**record, "started": True})
        again = scene.startswith("again:")
        prepare(bpy, scene.removeprefix("again:"))

        def overran(record=record) -> None:
            write({**record, "outcome": "timeout", "failure": f"ran past the {args.budget:g} s budget"})
            os._exit(3)

        watchdog = threading.Timer(args.budget * (2 if again else 1), overran)
        watchdog.daemon = True
        watchdog.start()
        try:
            if again:
                try:
                    getattr(bpy.ops.procanim, args.operator)("EXEC_DEFAULT", **arguments)
                except Exception:  # noqa: BLE001 - the first run only sets the scene up; the second is judged
                    pass
            result = run_case(bpy, args.operator, arguments)
        finally:
            watchdog.cancel()
        write({**record, **result})
    report.close()
    # Skip interpreter teardown: some Blender versions hang or crash at exit with add-ons enabled.
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
