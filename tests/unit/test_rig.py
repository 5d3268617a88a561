"""The bone map (convention detection, overrides) and rest-pose measurements, without Blender."""

from __future__ import annotations

import math

import numpy as np
import pytest

from addon.rig import (
    REQUIRED_ARM_ROLES,
    BoneRest,
    RigError,
    detect_bone_map,
    local_rotations,
    measure_rig,
    solve_arm,
    units_per_metre,
)
from addon.rig.bone_map import rigify_controls

ARMS = {
    "L": {
        "upper_arm": ((0.17, 0, 1.44), (0.45, 0, 1.44)),
        "forearm": ((0.45, 0, 1.44), (0.71, 0, 1.44)),
        "hand": ((0.71, 0, 1.44), (0.80, 0, 1.44)),
    },
}
MIXAMO_PARTS = {"upper_arm": "Arm", "forearm": "ForeArm", "hand": "Hand"}


def _rotation_along(direction, roll: float) -> np.ndarray:
    y = np.asarray(direction, dtype=float) / np.linalg.norm(direction)
    x = np.cross(y, (0.0, 0.0, 1.0))
    x = x / np.linalg.norm(x) if np.linalg.norm(x) > 1e-9 else np.array([1.0, 0.0, 0.0])
    z = np.cross(x, y)
    c, s = math.cos(roll), math.sin(roll)
    return np.stack([c * x + s * z, y, -s * x + c * z], axis=-1)


def _skeleton(prefix="mixamorig:", units=1.0, turn=0.0, offset=(0.0, 0.0, 0.0)):
    """Mixamo-named arms, head and feet in a T-pose facing -Y, turned ``turn`` about Z."""
    c, s = math.cos(turn), math.sin(turn)
    yaw = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])

    def place(p):
        return yaw @ np.asarray(p, dtype=float) * units + np.asarray(offset)

    bones = {}
    for sign, name in ((1, "Left"), (-1, "Right")):
        for part, (head, tail) in ARMS["L"].items():
            h = (sign * head[0], head[1], head[2])
            t = (sign * tail[0], tail[1], tail[2])
            bones[f"{prefix}{name}{MIXAMO_PARTS[part]}"] = BoneRest.of(
                place(h), place(t), yaw @ _rotation_along(np.subtract(t, h), 0.3 * sign)
            )
        bones[f"{prefix}{name}Foot"] = BoneRest.of(
            place((sign * 0.09, 0, 0.09)),
            place((sign * 0.09, -0.13, 0.0)),
            yaw @ _rotation_along((0, -0.13, -0.09), 0),
        )
    bones[f"{prefix}Hips"] = BoneRest.of(
        place((0, 0, 0.95)), place((0, 0, 1.05)), yaw @ _rotation_along((0, 0, 1), 0)
    )
    bones[f"{prefix}Head"] = BoneRest.of(
        place((0, 0, 1.55)), place((0, 0, 1.75)), yaw @ _rotation_along((0, 0, 1), 0)
    )
    return bones


@pytest.mark.parametrize("prefix", ["mixamorig:", "mixamorig1:", ""])
def test_mixamo_names_are_found_with_or_without_prefix(prefix):
    bone_map = detect_bone_map(_skeleton(prefix))
    assert bone_map.convention == "MIXAMO"
    assert bone_map.bones["forearm.L"] == f"{prefix}LeftForeArm"
    assert bone_map.bones["upper_arm.R"] == f"{prefix}RightArm"
    assert bone_map.bones["foot.R"] == f"{prefix}RightFoot"
    assert not bone_map.missing(REQUIRED_ARM_ROLES)


def test_each_convention_is_told_apart():
    rigify = [
        "DEF-upper_arm.L",
        "DEF-forearm.L",
        "DEF-hand.L",
        "hand_ik.L",
        "upper_arm_ik_target.L",
        "upper_arm_parent.L",
        "upper_arm_ik.L",
        "MCH-forearm_ik.L",
        "upper_arm.L",
        "forearm.L",
        "ORG-hand.L",
        "DEF-spine",
        "DEF-spine.006",
        "torso",
    ]
    assert detect_bone_map(rigify).convention == "RIGIFY"
    assert detect_bone_map(rigify).bones["hand.L"] == "DEF-hand.L"
    assert rigify_controls(rigify, "L")["pole"] == "upper_arm_ik_target.L"
    assert rigify_controls(rigify, "R") is None
    metarig = [
        "spine",
        "spine.001",
        "spine.003",
        "spine.006",
        "upper_arm.L",
        "forearm.L",
        "hand.L",
        "thigh.R",
    ]
    assert detect_bone_map(metarig).convention == "METARIG"
    assert detect_bone_map(metarig).bones["head"] == "spine.006"
    # DEF- names without Rigify's controls are a plain deform skeleton, not a control rig.
    assert detect_bone_map([n for n in rigify if n != "hand_ik.L"]).convention != "RIGIFY"
    unreal = [
        "pelvis",
        "spine_01",
        "spine_02",
        "spine_03",
        "upperarm_l",
        "lowerarm_l",
        "hand_l",
        "calf_r",
        "ball_r",
    ]
    bone_map = detect_bone_map(unreal)
    assert bone_map.convention == "UNREAL"
    assert bone_map.bones["chest"] == "spine_03" and bone_map.bones["toe.R"] == "ball_r"
    procanim = ["hips", "spine", "neck", "head", "upper_arm.L", "forearm.L", "hand.L", "thigh.L", "shin.L"]
    assert detect_bone_map(procanim).bones["hips"] == "hips"
    assert detect_bone_map(["Bone", "Bone.001"]).convention == "CUSTOM"


def test_names_match_case_insensitively_and_overrides_win():
    names = ["MIXAMORIG:LEFTARM", "mixamorig:LeftForeArm", "Wrist_Left", "mixamorig:LeftHand"]
    bone_map = detect_bone_map(names, {"hand.L": "Wrist_Left", "chest": ""})
    assert bone_map.bones["upper_arm.L"] == "MIXAMORIG:LEFTARM"
    assert bone_map.bones["hand.L"] == "Wrist_Left"
    assert "chest" not in bone_map.bones
    with pytest.raises(RigError, match="hand left to 'Gone'"):
        detect_bone_map(names, {"hand.L": "Gone"})


def test_missing_arms_are_named():
    bone_map = detect_bone_map(["mixamorig:Hips", "mixamorig:LeftArm", "mixamorig:LeftForeArm"])
    with pytest.raises(RigError) as error:
        bone_map.require(REQUIRED_ARM_ROLES, "arms", "'Bob'")
    message = str(error.value)
    assert "'Bob' has no recognisable arms" in message
    assert "hand left" in message and "upper arm right" in message and "forearm right" in message
    assert "upper arm left" not in message


def test_units_come_from_the_height():
    assert units_per_metre(1.75) == 1.0
    assert units_per_metre(175.0) == 100.0
    assert units_per_metre(175.0, scale_length=0.01) == 100.0
    assert units_per_metre(1750.0, scale_length=0.001) == 1000.0
    with pytest.raises(RigError, match="neither a person"):
        units_per_metre(12.0)
    with pytest.raises(RigError):
        units_per_metre(float("nan"))


@pytest.mark.parametrize(("units", "turn"), [(1.0, 0.0), (100.0, math.pi), (1.0, 1.1)])
def test_measurements_do_not_depend_on_units_or_facing(units, turn):
    offset = (3.0 * units, -2.0 * units, 0.5 * units)
    bones = _skeleton(units=units, turn=turn, offset=offset)
    rig = measure_rig(bones, detect_bone_map(bones))
    assert rig.units_per_metre == units
    assert rig.floor == pytest.approx(0.5 * units)
    assert np.allclose(rig.forward, [math.sin(turn), -math.cos(turn), 0.0], atol=1e-12)
    assert np.allclose(rig.left, [math.cos(turn), math.sin(turn), 0.0], atol=1e-12)
    body = rig.body()
    assert body.shoulder_half_width == pytest.approx(0.17)
    assert body.shoulder_height == pytest.approx(1.44)
    assert body.upper_arm == pytest.approx(0.28)
    assert body.forearm == pytest.approx(0.26 + 0.5 * 0.09)
    assert body.head_top == pytest.approx(1.75)
    # The plan frame: the left shoulder is at +X, 1.44 m up, in metres, wherever the rig stands.
    assert np.allclose(rig.world_to_plan(bones["mixamorig:LeftArm"].head), [0.17, 0.0, 1.44])
    assert np.allclose(rig.plan_to_world(rig.world_to_plan([[1.0, 2.0, 3.0]])), [[1.0, 2.0, 3.0]])


def test_lying_rigs_are_refused():
    bones = _skeleton()
    bones["mixamorig:Head"] = BoneRest.of((0, 0, 1.05), (0, -1.0, 1.1), np.eye(3))
    with pytest.raises(RigError, match="upright"):
        measure_rig(bones, detect_bone_map(bones))


def test_solved_arm_puts_the_palm_on_target_palm_up_with_bone_lengths_kept():
    bones = _skeleton(turn=0.4)
    rig = measure_rig(bones, detect_bone_map(bones))
    arm = rig.arms[0]
    t = np.linspace(0, 1, 50)
    palms = rig.plan_to_world(
        np.stack([0.15 + 0.1 * np.cos(6 * t), -0.3 + 0.05 * np.sin(6 * t), 1.15 + 0.1 * t], -1)
    )
    pose = solve_arm(arm, palms, rig.forward, rig.left, chicken_wing=0.2)
    assert pose.reachable.all()
    # Forward kinematics from the rotations alone: each bone turned from its rest.
    upper_turn = pose.upper_rotations @ arm.upper_rotation.T
    fore_turn = pose.forearm_rotations @ arm.forearm_rotation.T
    hand_turn = pose.hand_rotations @ arm.hand_rotation.T
    elbows = arm.shoulder + upper_turn @ (arm.elbow - arm.shoulder)
    wrists = elbows + fore_turn @ (arm.wrist - arm.elbow)
    palm_points = wrists + hand_turn @ (arm.palm_point - arm.wrist)
    assert np.allclose(elbows, pose.elbows, atol=1e-9)
    assert np.allclose(wrists, pose.wrists, atol=1e-9)
    assert np.allclose(palm_points, palms, atol=1e-9)
    normals = hand_turn @ arm.palm_normal
    assert np.allclose(normals[:, 2], 1.0)
    for r in (pose.upper_rotations, pose.forearm_rotations, pose.hand_rotations):
        assert np.allclose(r @ np.swapaxes(r, 1, 2), np.eye(3), atol=1e-9)
        assert np.allclose(np.linalg.det(r), 1.0)


def test_local_rotations_invert_blenders_pose_composition():
    rng = np.random.default_rng(3)

    def random_rotation():
        q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        return q * np.sign(np.linalg.det(q))

    rest_parent, pose_parent, rest_child, basis = (random_rotation() for _ in range(4))
    pose_child = pose_parent @ rest_parent.T @ rest_child @ basis
    assert np.allclose(local_rotations(rest_parent, pose_parent, rest_child, pose_child), basis)
