"""IK benchmark: solves per second of CCD and FABRIK on 3-, 6- and 12-bone chains, then baking
1,000 frames of a 6-bone arm chasing a moving target with Bake IK against Blender's own IK
constraint + Bake Action (``nla.bake``, visual keying) on the same arm and target, in one run.

Both bakes are judged the same way afterwards: play every frame back and measure how far the
chain's tip is from the target.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import best_time, disable_extension, enable_extension, record  # noqa: E402

from addon.kinematics import Chain, forward_kinematics, quaternions, solve_ccd, solve_fabrik  # noqa: E402

TARGETS = 200
BAKE_FRAMES = 1000
BONES = 6


def solves_per_second() -> None:
    rng = np.random.default_rng(2024)
    for bones in (3, 6, 12):
        chain = Chain(np.tile([0.0, 0.0, 1.0 / bones], (bones, 1)))
        poses = quaternions.normalize(rng.normal(size=(TARGETS, bones, 4)))
        targets = forward_kinematics(chain, poses)[:, -1]
        for name, solve in (("CCD", solve_ccd), ("FABRIK", solve_fabrik)):
            results = []

            def run(solve=solve, results=results, chain=chain, targets=targets):
                results[:] = [solve(chain, t) for t in targets]

            seconds = best_time(run, repeat=2)
            reached = np.mean([r.error <= 1e-3 * chain.reach for r in results])
            iterations = np.median([r.iterations for r in results])
            record(
                f"ik {name} solves/s, {bones}-bone ball chain (cold start)",
                TARGETS / seconds,
                "solves/s",
                "higher is better",
                f"{reached:.1%} reached within 1e-3 of reach, median {iterations:.0f} iterations",
            )


def worst_miss(bpy, armature, target, tip_bone: str, frames: range) -> float:
    scene = bpy.context.scene
    worst = 0.0
    for frame in frames:
        scene.frame_set(frame)
        tip = armature.matrix_world @ armature.pose.bones[tip_bone].tail
        worst = max(worst, (tip - target.matrix_world.translation).length)
    return worst


def build_arm(bpy):
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.procanim.add_ik_arm(bone_count=BONES, joint_type="BALL", limit_angle=0.0, frame_count=BAKE_FRAMES)
    armature = bpy.context.active_object
    return armature, armature.procanim.ik.target, armature.procanim.ik.tip_bone


def bake_ours(bpy, solver: str, parented: bool = False) -> tuple[float, float]:
    armature, target, tip = build_arm(bpy)
    if parented:
        # A parent makes Bake IK evaluate the scene every frame instead of reading the keys.
        holder = bpy.data.objects.new("Holder", None)
        bpy.context.scene.collection.objects.link(holder)
        target.parent = holder
    start = time.perf_counter()
    assert bpy.ops.procanim.bake_ik(solver=solver, tolerance=0.001) == {"FINISHED"}
    seconds = time.perf_counter() - start
    return seconds, worst_miss(bpy, armature, target, tip, range(1, BAKE_FRAMES + 1))


def bake_blender(bpy) -> tuple[float, float]:
    armature, target, tip = build_arm(bpy)
    constraint = armature.pose.bones[tip].constraints.new("IK")
    constraint.target = target
    constraint.chain_count = BONES
    override = {
        "active_object": armature,
        "object": armature,
        "selected_objects": [armature],
        "selected_editable_objects": [armature],
    }
    start = time.perf_counter()
    with bpy.context.temp_override(**override):
        result = bpy.ops.nla.bake(
            frame_start=1,
            frame_end=BAKE_FRAMES,
            only_selected=False,
            visual_keying=True,
            clear_constraints=True,
            bake_types={"POSE"},
        )
    seconds = time.perf_counter() - start
    assert result == {"FINISHED"} and not armature.pose.bones[tip].constraints
    return seconds, worst_miss(bpy, armature, target, tip, range(1, BAKE_FRAMES + 1))


def bake_comparison() -> None:
    package = enable_extension()
    try:
        import bpy

        blender_seconds, blender_miss = min(bake_blender(bpy) for _ in range(2))
        record(f"ik bake {BAKE_FRAMES} frames, Blender IK + Bake Action", blender_seconds, "s", "reference")
        record("ik bake, Blender IK worst miss", blender_miss, "m", "", "standard solver, 500 iterations")
        for solver in ("CCD", "FABRIK"):
            seconds, miss = min(bake_ours(bpy, solver) for _ in range(2))
            record(f"ik bake {BAKE_FRAMES} frames, ProcAnim {solver}", seconds, "s", "")
            record(
                f"ik bake time ratio Blender / ProcAnim {solver}",
                blender_seconds / seconds,
                "x",
                "> 1 (ours faster)",
            )
            record(f"ik bake, ProcAnim {solver} worst miss", miss, "m", "<= 0.001 (tolerance)")
        seconds, miss = min(bake_ours(bpy, "CCD", parented=True) for _ in range(2))
        record(
            "ik bake time ratio Blender / ProcAnim CCD, parented target",
            blender_seconds / seconds,
            "x",
            "> 1 (ours faster)",
            "scene evaluated per frame",
        )
    finally:
        disable_extension(package)


if __name__ == "__main__":
    solves_per_second()
    bake_comparison()
