"""The simulated dancer retargeted onto your own rig: Rigify generated in the test, a Mixamo skeleton."""

from __future__ import annotations

import bpy
import numpy as np
import pytest
from rig_helpers import append_rigify, build_skeleton, generate_rigify

SEQUENCE = "first_position@1,weight_shift@2.5,retire@3,releve@4"


@pytest.fixture(scope="session")
def rigify_file(tmp_path_factory, extension_package):
    path = tmp_path_factory.mktemp("rigify_dance") / "rigify_rig.blend"
    generate_rigify(path)
    return path


def _world(obj, bone: str) -> np.ndarray:
    return np.array(obj.matrix_world @ obj.pose.bones[bone].matrix)


def _check_dance(ext, obj):
    rig_mod = ext("operators.rig")
    rig = rig_mod.read_dancer_rig(obj, bpy.context.scene)
    body = rig_mod.dancer_body(rig)
    bpy.context.view_layer.objects.active = obj
    scene = bpy.context.scene
    assert bpy.ops.procanim.bake_balance(target_rig=obj.name, sequence=SEQUENCE) == {"FINISHED"}
    # The same simulation, to compare with (it is deterministic).
    dancer = ext("addon.dancer")
    perform = ext("addon.dancer.perform")
    performance = perform.perform(dancer.parse_sequence_text(SEQUENCE), **body)
    model = dancer.build_body(**body)
    fps = scene.render.fps / scene.render.fps_base
    frame_count = int(np.floor(performance.times[-1] * fps + 1e-9)) + 1
    samples = np.minimum(
        np.round(np.arange(frame_count) / fps / 0.01).astype(int), len(performance.times) - 1
    )
    assert scene.frame_end == scene.frame_start + frame_count - 1

    bones = rig.bone_map.bones
    upm = rig.measure.units_per_metre
    floor = rig.measure.floor
    retarget = ext("addon.rig.retarget")
    planned = rig_mod.world_rest(obj, set(bones.values()))
    dancer_rest = retarget.dancer_rest(performance, ext("addon.dancer.rig").skeleton(model))
    pose = retarget.retarget(
        performance,
        dancer_rest,
        planned,
        rig.bone_map,
        rig.measure,
        rig_mod.dancer_masses(model),
    )
    to_world = pose.to_world
    contact = {name: performance.in_contact[samples, i] for i, name in enumerate(performance.contact_bodies)}
    anchors: dict[str, np.ndarray | None] = {}
    worst_slide, worst_sink, worst_com = 0.0, 0.0, 0.0
    total_mass = sum(spec.mass for spec in model.bodies)
    rest_rotations = {
        role: np.array((obj.matrix_world @ obj.data.bones[b].matrix_local).to_3x3().normalized())
        for role, b in bones.items()
    }
    heel_local = {}
    for side in "LR":
        rest = np.array(obj.matrix_world @ obj.data.bones[bones[f"foot.{side}"]].matrix_local)
        ball = np.array(obj.matrix_world @ obj.data.bones[bones[f"toe.{side}"]].head_local)
        heel = np.array([rest[0, 3], rest[1, 3], min(ball[2], rest[2, 3])])
        heel_local[side] = np.linalg.inv(rest[:3, :3]) @ (heel - rest[:3, 3])
    for index in range(frame_count):
        scene.frame_set(scene.frame_start + index)
        for side in "LR":
            foot, toe = bones[f"foot.{side}"], bones[f"toe.{side}"]
            foot_matrix = _world(obj, foot)
            ankle = foot_matrix[:3, 3]
            heel = foot_matrix[:3, :3] @ heel_local[side] + ankle
            ball = _world(obj, toe)[:3, 3]
            tip = np.array(obj.matrix_world @ obj.pose.bones[toe].tail)
            for point in (ankle, heel, ball, tip):
                worst_sink = max(worst_sink, (floor - point[2]) / upm)
            # While a body touches, its weight-bearing points (its lowest ones) must not move.
            for name, points in (
                (f"foot.{side}", {"heel": heel, "ball": ball}),
                (f"toe.{side}", {"ball": ball, "tip": tip}),
            ):
                if not contact[name][index]:
                    anchors[name] = None
                    continue
                if anchors.get(name) is None:
                    anchors[name] = {k: v.copy() for k, v in points.items()}
                lowest = min(p[2] for p in points.values())
                for key, point in points.items():
                    if point[2] <= lowest + 0.003 * upm:
                        moved = float(np.linalg.norm((point - anchors[name][key])[:2])) / upm
                        worst_slide = max(worst_slide, moved)
                    else:
                        anchors[name][key] = point.copy()
        # COM of the retargeted pose: the dancer's segment masses on the rig's evaluated bones.
        com = np.zeros(3)
        for spec in model.bodies:
            role = spec.name
            if role not in bones:
                continue
            m = _world(obj, bones[role])
            turn = m[:3, :3] / np.linalg.norm(m[:3, :3], axis=0) @ rest_rotations[role].T
            dancer_turn = turn @ pose.corrections[role].T
            com += spec.mass * (m[:3, 3] + dancer_turn @ (to_world @ np.subtract(spec.com, spec.origin)))
        com /= sum(spec.mass for spec in model.bodies if spec.name in bones)
        # The simulation's centre of mass, carried onto the rig relative to the feet.
        simulated = retarget.dancer_com_on_rig(
            performance.com[samples[index]][None], dancer_rest, planned, rig.bone_map, to_world
        )[0]
        worst_com = max(worst_com, float(np.linalg.norm((com - simulated)[:2])) / upm)
    print(
        f"{obj.name}: {frame_count} frames, feet slide <= {worst_slide * 1000:.2f} mm, sink <= "
        f"{worst_sink * 1000:.2f} mm, COM off <= {worst_com * 100:.2f} cm (mass {total_mass:.0f} kg)"
    )
    assert worst_slide < 0.01
    assert worst_sink < 0.005
    assert worst_com < 0.02


def test_dancer_retargeted_onto_a_generated_rigify_rig(ext, rigify_file):
    obj = append_rigify(rigify_file)
    _check_dance(ext, obj)
    # Rigify's leg IK bones must not stretch the deform legs.
    assert obj.pose.bones["thigh_ik.L"].ik_stretch == 0.0


def test_dancer_retargeted_onto_a_mixamo_skeleton_in_centimetres(ext):
    obj = build_skeleton("mixamo", units=100.0, object_scale=0.01, location=(0.5, 0.2, 0.0))
    _check_dance(ext, obj)
