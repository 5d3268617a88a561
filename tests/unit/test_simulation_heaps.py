"""The heap measure: a profile of ring tops and its fitted slope, against arctan(mu)."""

import math

import numpy as np
import pytest

from addon.simulation import SimulationError
from addon.simulation.heaps import heap_profile, heap_slope, repose_angle


def _stepped_cone(angle, size=0.3, rings=6):
    """Boxes of ``size`` stacked as a cone whose ring tops fall at ``angle`` degrees."""
    centres, tops = [], []
    for ring in range(rings):
        radius = (ring + 0.5) * size
        top = (rings * size) * math.tan(math.radians(angle)) - radius * math.tan(math.radians(angle))
        for k in range(1 + 4 * ring):  # around the ring, each with the ring's top as its highest point
            turn = 2 * math.pi * k / (1 + 4 * ring)
            centres.append([radius * math.cos(turn), radius * math.sin(turn), top - size / 2])
            tops.append(top)
    return np.array(centres), np.array(tops)


@pytest.mark.parametrize("angle", [15.0, 26.6, 40.0])
def test_the_slope_of_a_stepped_cone_is_its_angle(angle):
    centres, tops = _stepped_cone(angle)
    assert heap_slope(centres, tops, 0.3) == pytest.approx(angle, abs=0.5)


def test_a_stray_body_beyond_a_gap_is_not_part_of_the_heap():
    centres, tops = _stepped_cone(30.0)
    stray = np.array([[3.5, 0.0, 0.15]])  # a box that tumbled off, five empty rings out
    radii, _ = heap_profile(np.vstack((centres, stray)), np.append(tops, 0.3), 0.3)
    assert radii.max() < 6 * 0.3
    assert heap_slope(np.vstack((centres, stray)), np.append(tops, 0.3), 0.3) == pytest.approx(30.0, abs=0.5)


def test_the_profile_keeps_the_highest_body_of_each_ring():
    centres = np.array([[0.0, 0.0, 0.5], [0.1, 0.0, 0.2], [0.45, 0.0, 0.2], [-0.4, 0.1, 0.1]])
    radii, heights = heap_profile(centres, centres[:, 2] + 0.15, 0.3)
    np.testing.assert_allclose(radii, [0.15, 0.45])
    np.testing.assert_allclose(heights, [0.65, 0.35])


def test_repose_angle_is_arctan_of_the_static_friction():
    assert repose_angle(0.5) == pytest.approx(26.565, abs=1e-3)
    assert repose_angle(1.0) == pytest.approx(45.0)
    with pytest.raises(SimulationError):
        repose_angle(-0.1)
    with pytest.raises(SimulationError):
        heap_profile(np.zeros((0, 3)), [], 0.3)
