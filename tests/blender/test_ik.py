"""IK arms in Blender: add then bake, keys equal to the solver, playback after reload, Blender's own
IK limits, the rest of the action kept, bad input, the panels, the edge tool and the CLI."""

from __future__ import annotations

import math
from pathlib import Path

import bpy
import numpy as np
import pytest
from conftest import data_counts, run_cli, view3d_override
from ui_smoke import smoke_draw

ROOT = Path(__file__).resolve().parents[2]
WRITERS = None  # operators.writers of the enabled extension, set per test


@pytest.fixture()
def ik(ext):
    return ext("operators.ik")


@pytest.fixture()
def kinematics(ext):
    return ext("addon.kinematics")


@pytest.fixture(autouse=True)
def writers(ext):
    global WRITERS
    WRITERS = ext("operators.writers")
    return WRITERS


def quaternion_keys(armature, bone_name, frames):
    """The baked rotation_quaternion of a bone at ``frames``, read back from its F-curves."""
    path = f'pose.bones["{bone_name}"].rotation_quaternion'
    curves = {fc.array_index: fc for fc in WRITERS.fcurves_of(armature) if fc.data_path == path}
    assert sorted(curves) == [0, 1, 2, 3], f"{bone_name} has no quaternion keys"
    return np.array([[curves[i].evaluate(f) for i in range(4)] for f in frames])


def tip_and_target(armature, bone_name, target):
    tip = armature.matrix_world @ armature.pose.bones[bone_name].tail
    return np.array(tip), np.array(target.matrix_world.translation)


def add_arm(**options):
    assert bpy.ops.procanim.add_ik_arm(**options) == {"FINISHED"}
    return bpy.context.active_object


def test_add_then_bake_from_an_empty_scene_reaches_the_moving_target():
    armature = add_arm()
    settings = armature.procanim.ik
    assert armature.type == "ARMATURE" and len(armature.data.bones) == 3
    assert settings.tip_bone == "Arm.03" and settings.target is not None
    assert bpy.context.scene.camera is not None
    target = settings.target
    scene = bpy.context.scene
    scene.frame_set(scene.frame_start)
    start = np.array(target.matrix_world.translation)
    scene.frame_set(scene.frame_start + 30)
    assert np.linalg.norm(np.array(target.matrix_world.translation) - start) > 0.1  # it moves

    assert bpy.ops.procanim.bake_ik() == {"FINISHED"}
    frames = range(scene.frame_start, scene.frame_end + 1, 7)
    keys = quaternion_keys(armature, "Arm.02", frames)
    assert np.ptp(keys, axis=0).max() > 0.1  # visible motion
    for frame in frames:
        scene.frame_set(frame)
        tip, goal = tip_and_target(armature, "Arm.03", target)
        assert np.linalg.norm(tip - goal) <= settings.tolerance + 1e-5


@pytest.mark.parametrize("solver", ["CCD", "FABRIK"])
def test_bake_keys_are_the_solvers_rotations(ik, kinematics, solver):
    armature = add_arm(bone_count=4, joint_type="BALL", limit_angle=math.radians(90))
    assert bpy.ops.procanim.bake_ik(solver=solver, frame_start=1, frame_end=40) == {"FINISHED"}
    bone_chain = ik.chain_from_bones(armature, "Arm.04", 4)
    scene = bpy.context.scene
    target = armature.procanim.ik.target
    targets = []
    for frame in range(1, 41):
        scene.frame_set(frame)
        base = ik.chain_base(armature, bone_chain)
        targets.append(base.inverted() @ target.matrix_world.translation)
    expected = kinematics.track(
        bone_chain.chain,
        np.array(targets),
        solver=solver,
        rotations=kinematics.quaternions.identity((4,)),
        tolerance=0.001,
        iterations_per_frame=40,
        annealing=True,
    )
    for index, name in enumerate(bone_chain.bone_names):
        keys = quaternion_keys(armature, name, range(1, 41))
        assert np.allclose(keys, expected.rotations[:, index], atol=2e-5)


def test_baked_range_plays_back_to_the_same_joints_after_save_and_reload(tmp_path):
    armature = add_arm(bone_count=5, joint_type="MIXED", use_direction=True)
    assert bpy.ops.procanim.bake_ik(solver="CCD") == {"FINISHED"}
    scene = bpy.context.scene
    frames = list(range(scene.frame_start, scene.frame_end + 1, 11))
    names = [b.name for b in armature.pose.bones]

    def joints():
        out = []
        for frame in frames:
            scene.frame_set(frame)
            arm = bpy.data.objects["IK Arm"]
            out.append([np.array(arm.matrix_world @ arm.pose.bones[n].tail) for n in names])
        return np.array(out)

    before = joints()
    aim = bpy.data.objects["IK Direction"]
    for frame in frames:  # 5-DoF: the hand also points along the arrow
        scene.frame_set(frame)
        hand = armature.matrix_world.to_3x3() @ armature.pose.bones[names[-1]].y_axis
        arrow = aim.matrix_world.to_3x3().normalized().col[2]
        assert hand.angle(arrow) < 2e-3
    path = tmp_path / "ik.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.wm.open_mainfile(filepath=str(path))
    scene = bpy.context.scene
    after = joints()
    assert np.allclose(before, after, atol=1e-6)
    assert np.ptp(after[:, -1], axis=0).max() > 0.1
    stored = bpy.data.objects["IK Arm"].procanim.ik
    assert stored.target.name == "IK Target" and stored.direction_target.name == "IK Direction"


def test_blender_ik_locks_and_limits_are_respected(ik, kinematics):
    armature = add_arm(bone_count=3, joint_type="MIXED", limit_angle=math.radians(150))
    scene = bpy.context.scene
    frames = range(scene.frame_start, scene.frame_end + 1)
    euler = kinematics.quaternions.to_euler_xyz
    assert bpy.ops.procanim.bake_ik() == {"FINISHED"}
    free_elbow = euler(quaternion_keys(armature, "Arm.02", frames))[:, 0]
    assert np.abs(free_elbow).max() > math.radians(45)  # the motion needs more than the limit below

    middle = armature.pose.bones["Arm.02"]
    middle.ik_min_x, middle.ik_max_x = math.radians(-35), math.radians(35)
    root = armature.pose.bones["Arm.01"]
    root.use_ik_limit_y = True
    root.ik_min_y, root.ik_max_y = -0.1, 0.1
    assert bpy.ops.procanim.bake_ik() == {"FINISHED"}
    for name in ("Arm.01", "Arm.02", "Arm.03"):
        pose_bone = armature.pose.bones[name]
        hinge, limits = ik.bone_limits(pose_bone)
        keys = quaternion_keys(armature, name, frames)
        assert np.all(kinematics.quaternions.within_limits(keys, limits, slack=1e-5)), name
        if hinge is not None:
            assert np.allclose(kinematics.quaternions.rotate(keys, hinge), hinge, atol=1e-5)
    limited_elbow = euler(quaternion_keys(armature, "Arm.02", frames))[:, 0]
    assert np.abs(limited_elbow).max() == pytest.approx(math.radians(35), abs=1e-4)  # used, never exceeded


def test_bake_keeps_other_bones_and_keys_outside_the_range(ik):
    armature = add_arm(bone_count=3)
    root = armature.pose.bones["Arm.01"]
    root.rotation_quaternion = (0.9, 0.1, 0.0, 0.0)
    root.keyframe_insert("rotation_quaternion", frame=5)
    tip = armature.pose.bones["Arm.03"]
    tip.rotation_quaternion = (0.8, 0.0, 0.6, 0.0)
    tip.keyframe_insert("rotation_quaternion", frame=100)
    assert bpy.ops.procanim.bake_ik(tip_bone="Arm.03", chain_length=2, frame_start=10, frame_end=60) == {
        "FINISHED"
    }
    assert np.allclose(quaternion_keys(armature, "Arm.01", [5, 50]), [[0.9, 0.1, 0, 0]] * 2, atol=1e-6)
    assert np.allclose(quaternion_keys(armature, "Arm.03", [100]), [[0.8, 0.0, 0.6, 0.0]], atol=1e-6)
    keyed = WRITERS.fcurves_of(armature)
    tip_w = next(
        fc for fc in keyed if fc.data_path.endswith('"Arm.03"].rotation_quaternion') and fc.array_index == 0
    )
    frames = sorted(k.co[0] for k in tip_w.keyframe_points)
    assert frames[0] == 10 and frames[-2] == 60 and frames[-1] == 100


def test_bad_input_is_cancelled_and_leaves_the_scene_unchanged():
    before = data_counts()
    with pytest.raises(RuntimeError, match="armature"):  # refused by its poll, naming what to select
        bpy.ops.procanim.bake_ik()
    assert data_counts() == before

    armature = add_arm(bone_count=3)
    before = data_counts()
    assert armature.animation_data is None
    with pytest.raises(RuntimeError, match="has only 2 parent"):
        bpy.ops.procanim.bake_ik(tip_bone="Arm.03", chain_length=4)
    with pytest.raises(RuntimeError, match="no bone named"):
        bpy.ops.procanim.bake_ik(tip_bone="Hand")
    with pytest.raises(RuntimeError, match="end comes before the start"):
        bpy.ops.procanim.bake_ik(frame_start=50, frame_end=10)
    armature.procanim.ik.target = None
    with pytest.raises(RuntimeError, match="no IK target"):
        bpy.ops.procanim.bake_ik()
    assert data_counts() == before
    assert armature.animation_data is None  # no action, no keys: nothing half-written
    assert all(abs(b.rotation_quaternion[0] - 1.0) < 1e-9 for b in armature.pose.bones)


def test_closest_edge_points_works_in_edit_mode():
    mesh = bpy.data.meshes.new("Edges")
    mesh.from_pydata([(0, 0, 0), (0, 2, 0), (-1, 1, 3), (1, 1, 3)], [(0, 1), (2, 3)], [])
    obj = bpy.data.objects.new("Edges", mesh)
    bpy.context.scene.collection.objects.link(obj)
    obj.location = (0, 0, 1)
    bpy.context.view_layer.objects.active = obj
    for edge in mesh.edges:
        edge.select = True
    with bpy.context.temp_override(active_object=obj, object=obj):
        bpy.ops.object.mode_set(mode="EDIT")
        assert bpy.ops.procanim.closest_edge_points() == {"FINISHED"}
        bpy.ops.object.mode_set(mode="OBJECT")
    assert np.allclose(bpy.data.objects["Closest A"].location, (0, 1, 1))
    assert np.allclose(bpy.data.objects["Closest B"].location, (0, 1, 4))


def test_closest_edge_points_marks_both_points_and_the_distance(ik):
    vertices = [(0, 0, 0), (2, 0, 0), (1, -1, 1), (1, 1, 1), (5, 5, 5)]
    mesh = bpy.data.meshes.new("Edges")
    mesh.from_pydata(vertices, [(0, 1), (2, 3), (3, 4)], [])
    obj = bpy.data.objects.new("Edges", mesh)
    bpy.context.scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    for edge, chosen in zip(mesh.edges, (True, True, False), strict=True):
        edge.select = chosen
    assert bpy.ops.procanim.closest_edge_points() == {"FINISHED"}
    a, b = bpy.data.objects["Closest A"], bpy.data.objects["Closest B"]
    assert np.allclose(a.location, (1, 0, 0)) and np.allclose(b.location, (1, 0, 1))
    line = next(o for o in bpy.data.objects if o.name.startswith("Distance"))
    assert line["distance"] == pytest.approx(1.0)

    mesh.edges[2].select = True
    before = data_counts()
    with pytest.raises(RuntimeError, match="3 selected edges"):
        bpy.ops.procanim.closest_edge_points()
    assert data_counts() == before


def test_panels_draw(ext):
    panels = ext("panels.ik")
    with bpy.context.temp_override(**view3d_override()):
        smoke_draw(panels.PROCANIM_PT_ik)
        smoke_draw(panels.PROCANIM_PT_ik_bake)
        smoke_draw(panels.PROCANIM_PT_ik_measure)
    add_arm()
    with bpy.context.temp_override(**view3d_override()):
        record = smoke_draw(panels.PROCANIM_PT_ik_bake)
    assert record is not None


def test_presets_apply_and_build(ext):
    presets = ext("addon.presets").load_presets("ik")
    assert {p["name"] for p in presets} == {"3-Bone Arm", "5-DoF Arm", "Tentacle"}
    for preset in presets:
        assert bpy.ops.procanim.apply_preset(kind="ik", name=preset["name"]) == {"FINISHED"}
    assert bpy.context.scene.procanim.ik.bone_count == 10


def test_cli_builds_and_bakes_an_arm(tmp_path):
    out = tmp_path / "ik.blend"
    result = run_cli(
        "ik",
        "--bones",
        "4",
        "--solver",
        "FABRIK",
        "--length",
        "24",
        "--out",
        str(out),
        tmp_path=tmp_path,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert out.exists()
    bpy.ops.wm.open_mainfile(filepath=str(out))
    armature = bpy.data.objects["IK Arm"]
    assert len(armature.data.bones) == 4 and bpy.context.scene.frame_end - bpy.context.scene.frame_start == 23
    assert armature.animation_data is not None and armature.animation_data.action is not None


def test_chain_under_an_animated_parent_bone_follows_it(ik):
    armature = add_arm(bone_count=4, joint_type="BALL", limit_angle=0.0)
    root = armature.pose.bones["Arm.01"]
    scene = bpy.context.scene
    for frame, angle in ((scene.frame_start, -0.25), (scene.frame_end, 0.25)):
        root.rotation_quaternion = (math.cos(angle / 2), 0.0, math.sin(angle / 2), 0.0)
        root.keyframe_insert("rotation_quaternion", frame=frame)
    assert bpy.ops.procanim.bake_ik(tip_bone="Arm.04", chain_length=3) == {"FINISHED"}
    target = armature.procanim.ik.target
    reach = sum(armature.data.bones[f"Arm.0{i}"].length for i in (2, 3, 4))
    checked = 0
    for frame in range(scene.frame_start, scene.frame_end + 1, 3):
        scene.frame_set(frame)
        chain_root = np.array(armature.matrix_world @ armature.pose.bones["Arm.02"].head)
        tip, goal = tip_and_target(armature, "Arm.04", target)
        if np.linalg.norm(goal - chain_root) < 0.97 * reach:  # out of reach, or CCD's slow full stretch
            assert np.linalg.norm(tip - goal) <= armature.procanim.ik.tolerance + 1e-5, frame
            checked += 1
    assert checked >= 30


def test_parented_target_bakes_the_same_keys_as_a_keyed_one():
    armature = add_arm(bone_count=3)
    assert bpy.ops.procanim.bake_ik(frame_start=1, frame_end=30) == {"FINISHED"}
    keyed = [quaternion_keys(armature, f"Arm.0{i}", range(1, 31)) for i in (1, 2, 3)]
    holder = bpy.data.objects.new("Holder", None)  # an identity parent forces the per-frame path
    bpy.context.scene.collection.objects.link(holder)
    armature.procanim.ik.target.parent = holder
    for bone in armature.pose.bones:
        bone.rotation_quaternion = (1, 0, 0, 0)
    armature.animation_data_clear()
    assert bpy.ops.procanim.bake_ik(frame_start=1, frame_end=30) == {"FINISHED"}
    evaluated = [quaternion_keys(armature, f"Arm.0{i}", range(1, 31)) for i in (1, 2, 3)]
    assert np.allclose(keyed, evaluated, atol=1e-5)


def test_bake_warns_when_an_ik_constraint_would_override_the_keys(capsys):
    armature = add_arm(bone_count=2)
    constraint = armature.pose.bones["Arm.02"].constraints.new("IK")
    constraint.target = armature.procanim.ik.target
    assert bpy.ops.procanim.bake_ik(frame_start=1, frame_end=5) == {"FINISHED"}
    assert "still overrides these keys" in capsys.readouterr().out
