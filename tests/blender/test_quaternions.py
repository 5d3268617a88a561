"""The core's one quaternion module agrees with Blender's own mathutils (w first, same product order)."""

import mathutils
import numpy as np

from addon import quaternions as qt


def test_batched_helpers_match_mathutils():
    rng = np.random.default_rng(5)
    a, b = qt.normalize(rng.normal(size=(2, 20, 4)))
    for qa, qb in zip(a, b, strict=True):
        expected = mathutils.Quaternion(qa) @ mathutils.Quaternion(qb)
        np.testing.assert_allclose(qt.multiply(qa, qb), tuple(expected), atol=1e-6)
        np.testing.assert_allclose(
            qt.to_matrix(qa), np.array(mathutils.Quaternion(qa).to_matrix()), atol=1e-6
        )
        np.testing.assert_allclose(
            qt.slerp(qa, qb, 0.3),
            qt.align_hemisphere(
                np.array(mathutils.Quaternion(qa).slerp(mathutils.Quaternion(qb), 0.3)), qt.slerp(qa, qb, 0.3)
            ),
            atol=1e-6,
        )
