"""Refraction in the clear slab: Snell's law at both faces, total internal reflection past the
critical angle, and the seed's Fresnel plate traced through its slab."""

import numpy as np
import pytest

from addon.optics import MeshSurface, OpticsError, fresnel_reflector, trace_records
from addon.optics.slab import ClearSlab, refract

INDEX = 1.5


def _sine(directions, normal):
    return np.linalg.norm(np.cross(directions, normal), axis=1)


def test_a_ray_through_the_slab_obeys_snell_at_both_faces():
    slab = ClearSlab((0, 0, 0), (0, 0, 1), radius=1.0, thickness=0.1, index=INDEX)
    angles = np.radians([0.0, 10.0, 35.0, 60.0, 85.0])
    incoming = np.stack([np.sin(angles), np.zeros_like(angles), -np.cos(angles)], axis=1)
    origins = np.array([0.0, 0.0, 0.05]) - incoming  # every ray meets the top face at its centre
    result = trace_records([slab], origins, incoming, bounces=2)
    enter, leave = result.records
    assert enter.hit.all() and leave.hit.all()
    np.testing.assert_allclose(enter.points[:, 2], 0.05)
    np.testing.assert_allclose(leave.points[:, 2], -0.05)
    up = np.array([0.0, 0.0, 1.0])
    inside = enter.directions
    # n1 sin(theta1) = n2 sin(theta2) at the top face, and back again at the bottom face
    np.testing.assert_allclose(_sine(incoming, up), INDEX * _sine(inside, up), atol=1e-12)
    np.testing.assert_allclose(INDEX * _sine(inside, up), _sine(leave.directions, up), atol=1e-12)
    # the ray stays in its plane of incidence and leaves parallel to how it came, shifted sideways
    np.testing.assert_allclose(inside[:, 1], 0.0, atol=1e-15)
    np.testing.assert_allclose(leave.directions, incoming, atol=1e-12)
    shift = enter.points[:, 0] + (leave.points[:, 2] - enter.points[:, 2]) * incoming[:, 0] / incoming[:, 2]
    expected = 0.1 * (np.tan(np.arcsin(np.sin(angles) / INDEX)) - np.tan(angles))  # bent towards the normal
    np.testing.assert_allclose(leave.points[:, 0] - shift, expected, atol=1e-12)


def test_total_internal_reflection_past_the_critical_angle():
    slab = ClearSlab((0, 0, 0), (0, 0, 1), radius=10.0, thickness=0.1, index=INDEX)
    critical = np.arcsin(1.0 / INDEX)
    angles = critical + np.radians([-2.0, -0.1, 0.1, 2.0, 30.0])
    directions = np.stack([np.sin(angles), np.zeros_like(angles), np.cos(angles)], axis=1)  # upwards
    origins = np.zeros((len(angles), 3))  # inside the slab
    record = trace_records([slab], origins, directions, bounces=1).records[0]
    trapped = record.directions[:, 2] < 0.0
    np.testing.assert_array_equal(trapped, angles > critical)
    # reflected: angle kept, only the normal component flips
    np.testing.assert_allclose(record.directions[trapped, 0], directions[trapped, 0])
    np.testing.assert_allclose(record.directions[trapped, 2], -directions[trapped, 2])
    # below the critical angle it leaves by Snell's law
    leaving = ~trapped
    np.testing.assert_allclose(np.sin(angles[leaving]) * INDEX, record.directions[leaving, 0], atol=1e-12)
    _, total = refract(directions, np.tile([0.0, 0.0, 1.0], (len(angles), 1)), INDEX, 1.0)
    np.testing.assert_array_equal(total, angles > critical)


def test_fresnel_plate_in_its_slab_refracts_on_the_way_in_and_out():
    f1, f2 = np.array([-0.3, 0.0, 0.8]), np.array([0.3, 0.0, 0.8])
    plate = fresnel_reflector(f1, f2, (0, 0, 0), (0, 0, 1), 0.6, 24, segments=128)
    slab = ClearSlab((0, 0, 0), (0, 0, 1), radius=0.6, thickness=0.08, index=INDEX)
    targets = np.stack([np.linspace(-0.45, 0.45, 40), np.zeros(40), np.zeros(40)], axis=1)
    result = trace_records([MeshSurface(plate), slab], np.repeat(f1[None], 40, 0), targets - f1, bounces=3)
    into, mirror, out = result.records
    assert into.hit.all() and (into.surface == 1).all()  # the slab's top face first
    assert (mirror.surface == 0).all()  # then the mirror zones inside it
    at_top = out.surface == 1  # then the top face (a few meet the relief first)
    leaving = at_top & (out.directions[:, 2] > 0.0)  # the steep ones are trapped (internal reflection)
    assert np.any(at_top & ~leaving)
    assert leaving.mean() > 0.7
    np.testing.assert_allclose(out.points[leaving, 2], 0.04)
    # Snell at the way out: sin(outside) = n sin(inside), about the slab normal
    up = np.array([0.0, 0.0, 1.0])
    np.testing.assert_allclose(
        _sine(out.directions[leaving], up), INDEX * _sine(mirror.directions[leaving], up), atol=1e-12
    )

    # refraction bends the light: it no longer meets the second focus as it does in air
    def miss(record, rows):
        height = f2[2] - record.points[rows, 2]
        return np.abs(
            record.points[rows, 0] + height * record.directions[rows, 0] / record.directions[rows, 2] - 0.3
        )

    in_air = trace_records([MeshSurface(plate)], np.repeat(f1[None], 40, 0), targets - f1).records[0]
    assert miss(out, leaving).max() > 10.0 * miss(in_air, slice(None)).max()


def test_bad_slab_settings_are_clear_errors():
    with pytest.raises(OpticsError, match="index"):
        ClearSlab((0, 0, 0), (0, 0, 1), radius=1.0, thickness=0.1, index=0.5)
    with pytest.raises(OpticsError, match="thickness"):
        ClearSlab((0, 0, 0), (0, 0, 1), radius=1.0, thickness=0.0)
