"""Curved Fresnel reflectors: zones cut on a sphere, a cylinder or any mesh still send the light of the
first focus through the second, with steps along its rays (edge-on) by default."""

import numpy as np
import pytest

from addon.optics import STEP_FACE, OpticsError, facet_normals
from addon.optics.curved import curved_fresnel_reflector, cylinder_support, sphere_support
from addon.optics.ellipsoid import reflect
from addon.optics.quality import face_weighted_efficiency, light_budget

F1 = np.array([-0.3, 0.0, 0.5])
F2 = np.array([0.3, 0.0, 0.5])


def _bumpy_support():
    """A wavy sheet under the foci, given only as a mesh (normals from its faces)."""
    n = 24
    x, y = np.meshgrid(np.linspace(-0.5, 0.5, n), np.linspace(-0.5, 0.5, n))
    z = 0.05 * np.sin(3 * x) * np.cos(2 * y) + 0.2 * (x**2 + y**2)
    vertices = np.stack([x.ravel(), y.ravel(), z.ravel()], axis=1)
    r, c = np.meshgrid(np.arange(n - 1), np.arange(n - 1), indexing="ij")
    a = (r * n + c).ravel()
    faces = np.concatenate([np.stack([a, a + 1, a + n + 1], -1), np.stack([a, a + n + 1, a + n], -1)])
    return vertices, faces, None


SUPPORTS = {
    "sphere": lambda: sphere_support((0, 0, 1.5), 1.5, (0, 0, -1), 20, 14),
    "cylinder": lambda: cylinder_support((0, 0, 1.2), (0, 1, 0), 1.2, 0.8, (0, 0, -1), 40, 14),
    "mesh": _bumpy_support,
}


@pytest.mark.parametrize("support", SUPPORTS)
def test_curved_plate_sends_all_light_through_the_second_focus(support):
    vertices, faces, normals = SUPPORTS[support]()
    plate = curved_fresnel_reflector(F1, F2, vertices, faces, normals, 12)
    assert plate.zone_count == 12 and set(np.unique(plate.face_zone[plate.face_zone >= 0])) == set(range(12))
    assert face_weighted_efficiency(plate, F1) >= 0.98
    assert light_budget(plate, F1, F2, rays=3000).through_target >= 0.98
    # every zone face is a piece of its confocal ellipsoid: exact normals focus F1 onto F2
    zone_faces = plate.face_zone != STEP_FACE
    corners = plate.vertices[plate.faces[zone_faces]].reshape(-1, 3)
    incoming = corners - F1
    incoming /= np.linalg.norm(incoming, axis=1, keepdims=True)
    outgoing = reflect(incoming, plate.corner_normals[zone_faces].reshape(-1, 3))
    to_second = F2 - corners
    along = np.einsum("ij,ij->i", to_second, outgoing)
    assert np.all(along > 0)
    assert np.linalg.norm(to_second - along[:, None] * outgoing, axis=1).max() < 1e-9
    # the steps contain the rays from F1: edge-on to its light
    steps = plate.face_zone == STEP_FACE
    assert steps.sum() > 20
    geometric, _ = facet_normals(plate.vertices, plate.faces[steps])
    first_corner = plate.vertices[plate.faces[steps, 0]]
    assert np.abs(np.einsum("ij,ij->i", geometric, F1 - first_corner)).max() < 1e-9


def test_vertical_steps_on_a_sphere_catch_light_and_zones_stay_on_their_ellipsoids():
    vertices, faces, normals = SUPPORTS["sphere"]()
    vertical = curved_fresnel_reflector(F1, F2, vertices, faces, normals, 12, risers="vertical")
    assert face_weighted_efficiency(vertical, F1) < 0.95
    rays = curved_fresnel_reflector(F1, F2, vertices, faces, normals, 12)
    sums = np.linalg.norm(rays.vertices - F1, axis=1) + np.linalg.norm(rays.vertices - F2, axis=1)
    zone_faces = rays.faces[rays.face_zone >= 0]
    per_face = sums[zone_faces]
    assert np.ptp(per_face, axis=1).max() < 1e-9  # all three corners on one confocal ellipsoid


def test_curved_plate_rejects_bad_input():
    vertices, faces, normals = SUPPORTS["cylinder"]()
    with pytest.raises(OpticsError, match="risers"):
        curved_fresnel_reflector(F1, F2, vertices, faces, normals, 12, risers="sideways")
    with pytest.raises(OpticsError, match="coincide"):
        curved_fresnel_reflector(F1, F1, vertices, faces, normals, 12)
    with pytest.raises(OpticsError, match="out of range"):
        curved_fresnel_reflector(F1, F2, vertices, faces + len(vertices), normals, 12)
    with pytest.raises(OpticsError, match="sphere"):
        sphere_support((0, 0, 0), -1.0, (0, 0, 1))
