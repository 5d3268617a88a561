"""Fresnel plates waste no light: with steps along the rays from the first focus (the default) all the
light from it that lands on the plate is reflected through the second focus; vertical steps lose a
fifth (the issue's measure: every face weighted by its solid angle from the first focus)."""

import numpy as np
import pytest

from addon.optics import STEP_FACE, OpticsError, facet_normals, fresnel_reflector
from addon.optics.quality import face_weighted_efficiency, light_budget

F1 = np.array([-0.3, 0.0, 0.5])
F2 = np.array([0.3, 0.0, 0.5])


def _issue_plate(**options):
    return fresnel_reflector(F1, F2, (0, 0, 0), (0, 0, 1), 0.5, 50, **options)


def test_default_steps_lie_along_the_rays_from_the_first_focus():
    plate = _issue_plate()
    steps = plate.face_zone == STEP_FACE
    assert steps.sum() > 1000
    geometric, _ = facet_normals(plate.vertices, plate.faces[steps])
    first_corner = plate.vertices[plate.faces[steps, 0]]
    # every step face's plane passes through F1: it is edge-on to the light
    assert np.abs(np.einsum("ij,ij->i", geometric, F1 - first_corner)).max() < 1e-9


def test_default_plate_sends_all_of_f1s_light_through_f2_vertical_steps_a_fifth_less():
    plate = _issue_plate()
    assert face_weighted_efficiency(plate, F1) >= 0.98
    budget = light_budget(plate, F1, F2, rays=6000, seed=1)
    assert budget.through_target >= 0.98
    assert budget.on_steps == 0.0
    vertical = _issue_plate(risers="vertical")
    assert face_weighted_efficiency(vertical, F1) == pytest.approx(0.79, abs=0.02)  # the issue's 79%
    without_steps = _issue_plate(draft=False)
    assert face_weighted_efficiency(without_steps, F1) == 1.0


@pytest.mark.parametrize(
    ("first", "second"), [((-0.3, 0.0, 0.8), (0.8, 0.2, 1.5)), ((0.1, -0.2, 0.6), (-0.2, 0.3, 0.9))]
)
def test_other_same_side_foci_also_waste_no_light(first, second):
    first, second = np.array(first), np.array(second)
    plate = fresnel_reflector(first, second, (0, 0, 0), (0, 0, 1), 0.5, 30, segments=128)
    assert face_weighted_efficiency(plate, first) >= 0.98
    assert light_budget(plate, first, second, rays=4000).through_target >= 0.98


def test_unknown_riser_style_is_a_clear_error():
    with pytest.raises(OpticsError, match="risers"):
        _issue_plate(risers="diagonal")
