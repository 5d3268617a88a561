"""The Blender-side skeleton, skin and pose conversion, checked without Blender."""

import numpy as np
import pytest

from addon.dancer import build_body
from addon.dancer.rig import body_mesh, pose_basis, skeleton


def _matrix(q):
    w, x, y, z = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def test_pose_basis_is_the_rotation_seen_from_the_bone_frame():
    rng = np.random.default_rng(3)
    q = rng.normal(size=(5, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    rest, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    rest *= np.sign(np.linalg.det(rest))
    basis = pose_basis(q, rest)
    for original, converted in zip(q, basis, strict=True):
        np.testing.assert_allclose(_matrix(converted), rest.T @ _matrix(original) @ rest, atol=1e-12)


def test_skeleton_joints_sit_on_the_simulated_joints_and_parents_come_first():
    body = build_body(1.7, 60.0)
    bones = skeleton(body)
    seen = set()
    for bone in bones:
        assert bone.parent is None or bone.parent in seen
        seen.add(bone.name)
        if bone.name in {spec.name for spec in body.bodies}:
            np.testing.assert_allclose(bone.head, body.body(bone.name).origin)
    assert bones[[b.name for b in bones].index("head")].tail == pytest.approx((0.0, 0.0, 1.7))


def test_every_skin_vertex_belongs_to_exactly_one_bone():
    bones = skeleton(build_body())
    vertices, faces, groups = body_mesh(bones)
    owners = np.concatenate(list(groups.values()))
    assert sorted(owners.tolist()) == list(range(len(vertices)))
    assert max(max(f) for f in faces) < len(vertices)
    assert vertices[:, 2].max() == pytest.approx(1.65, abs=1e-9)
