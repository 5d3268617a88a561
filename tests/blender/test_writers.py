"""The shared Blender writers on every supported version (legacy and slotted actions)."""

from __future__ import annotations

import bpy
import numpy as np
import pytest


def _sample(obj, data_path, index, frames):
    values = []
    for frame in frames:
        bpy.context.scene.frame_set(int(frame))
        values.append(obj.path_resolve(data_path)[index])
    return np.array(values)


def test_bulk_keys_evaluate_and_survive_save_and_reload(ext, tmp_path):
    writers = ext("operators.writers")
    scene = bpy.context.scene
    collection = writers.generator_collection(scene, "Writers")
    obj = writers.new_object("Mover", None, collection)
    frames = np.arange(1, 101)
    locations = np.column_stack([np.sin(frames / 10.0), frames * 0.01, -frames * 0.02])
    writers.write_object_transforms(obj, frames, locations=locations)

    assert len(writers.fcurves_of(obj)) == 3
    assert np.allclose(_sample(obj, "location", 0, frames[::7]), locations[::7, 0], atol=1e-6)

    path = tmp_path / "keys.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.open_mainfile(filepath=str(path))
    reloaded = bpy.data.objects["Mover"]
    assert np.allclose(_sample(reloaded, "location", 2, frames[::9]), locations[::9, 2], atol=1e-6)
    assert all(len(fc.keyframe_points) == 100 for fc in writers.fcurves_of(reloaded))


def test_bezier_keys_follow_given_slopes(ext):
    writers = ext("operators.writers")
    obj = writers.new_object("Ballistic", None, writers.generator_collection(bpy.context.scene, "Writers"))
    # A parabola keyed every 10 frames with exact slopes is reproduced between the keys.
    frames = np.arange(0, 101, 10, dtype=float)
    curve = lambda f: 0.5 - 0.0004 * (f - 50.0) ** 2  # noqa: E731
    slope = -0.0008 * (frames - 50.0)
    writers.write_channels(
        obj, "location", frames, np.column_stack([curve(frames)] * 3), slopes=np.column_stack([slope] * 3)
    )
    fcurve = writers.fcurves_of(obj)[2]
    between = np.arange(0, 100, 3) + 0.5
    evaluated = np.array([fcurve.evaluate(f) for f in between])
    assert np.allclose(evaluated, curve(between), atol=1e-4)
    assert {kp.interpolation for kp in fcurve.keyframe_points} == {"BEZIER"}


def test_keep_outside_replaces_only_the_baked_range(ext):
    writers = ext("operators.writers")
    obj = writers.new_object("Ranged", None, writers.generator_collection(bpy.context.scene, "Writers"))
    writers.write_channels(obj, "location", np.arange(1, 21), np.zeros((20, 3)))
    writers.write_channels(obj, "location", np.arange(5, 11), np.ones((6, 3)), keep_outside=True)
    fcurve = writers.fcurves_of(obj)[0]
    co = np.array([kp.co[:] for kp in fcurve.keyframe_points])
    assert len(co) == 20
    assert np.array_equal(co[:, 1] == 1.0, (co[:, 0] >= 5) & (co[:, 0] <= 10))


def test_non_finite_values_are_refused(ext):
    writers = ext("operators.writers")
    errors = ext("addon.errors")
    obj = writers.new_object("Nan", None, writers.generator_collection(bpy.context.scene, "Writers"))
    with pytest.raises(errors.ProcAnimError, match="non-finite"):
        writers.write_channels(obj, "location", [1, 2], [[0, 0, 0], [np.nan, 0, 0]])


def test_pose_quaternion_keys_on_a_new_armature(ext):
    writers = ext("operators.writers")
    collection = writers.generator_collection(bpy.context.scene, "Writers")
    bones = [
        writers.BoneSpec("root", (0, 0, 0), (0, 0, 1)),
        writers.BoneSpec("tip", (0, 0, 1), (0, 0, 2), parent="root", connected=True),
    ]
    arm = writers.armature_from_bones(bpy.context, "Rig", bones, collection)
    assert [b.name for b in arm.data.bones] == ["root", "tip"]
    assert arm.data.bones["tip"].parent.name == "root"
    assert arm.data.bones["tip"].length == pytest.approx(1.0)

    angle = np.linspace(0.0, np.pi, 11)
    quats = np.column_stack([np.cos(angle / 2), np.sin(angle / 2), np.zeros(11), np.zeros(11)])
    quats[5:] *= -1.0  # the writer must make the signs continuous
    writers.write_pose_quaternions(arm, "tip", np.arange(1, 12), quats)
    bpy.context.scene.frame_set(11)
    tail = arm.matrix_world @ arm.pose.bones["tip"].tail
    assert np.allclose(tail[:], (0.0, 0.0, 0.0), atol=1e-5)  # the tip folded back down onto the root


def test_mesh_from_arrays_with_mixed_faces(ext):
    writers = ext("operators.writers")
    vertices = np.array(
        [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [2, 0, 0], [2.5, 0.5, 0], [2, 1, 0]], float
    )
    mesh = writers.mesh_from_arrays("Mixed", vertices, [[0, 1, 2, 3], [1, 4, 5, 6, 2]])
    assert (len(mesh.vertices), len(mesh.polygons), len(mesh.edges)) == (7, 2, 8)
    assert [p.loop_total for p in mesh.polygons] == [4, 5]
    assert not mesh.validate(verbose=False)
    tris = writers.mesh_from_arrays("Tris", vertices[:3], np.array([[0, 1, 2]]))
    assert tris.polygons[0].area == pytest.approx(0.5)
    assert np.allclose(writers.mesh_vertices(tris), vertices[:3])


def test_generator_collection_replaces_its_previous_contents(ext):
    writers = ext("operators.writers")
    scene = bpy.context.scene
    for _ in range(2):
        collection = writers.generator_collection(scene, "Again")
        mesh = writers.mesh_from_arrays("Tri", [[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]])
        obj = writers.new_object("Tri", mesh, collection)
        writers.assign_material(obj, writers.principled_material("Red", (1, 0, 0, 1)))
        writers.write_object_transforms(obj, [1, 2], locations=[[0, 0, 0], [1, 1, 1]])
    assert len(scene.collection.children) == 1
    assert (len(bpy.data.objects), len(bpy.data.meshes), len(bpy.data.materials), len(bpy.data.actions)) == (
        1,
        1,
        1,
        1,
    )
