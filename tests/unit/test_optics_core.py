"""Analytic ellipsoids, reflection and mirror chains: the focal property holds to rounding error."""

import numpy as np
import pytest

from addon.errors import ProcAnimError
from addon.optics import (
    OpticsError,
    chain_spot,
    ellipsoid_from_foci,
    ellipsoid_mirror,
    mirror_chain,
    mirror_spot,
    rays_to_mirror,
    reflect,
    trace,
    trace_chain,
    trace_records,
)


def _line_distance(points, directions, target):
    offset = target - points
    along = np.einsum("ij,ij->i", offset, directions)
    return np.linalg.norm(offset - along[:, None] * directions, axis=1)


def _random_directions(rng, count):
    directions = rng.normal(size=(count, 3))
    return directions / np.linalg.norm(directions, axis=1, keepdims=True)


CASES = [
    ((-0.5, 0.0, 1.0), (0.5, 0.0, 1.0), 1.6),
    ((1.0, 2.0, -3.0), (1.3, 2.9, -2.2), 0.05),
    ((0.0, 0.0, 0.0), (0.0, 0.0, 40.0), 25.0),
    ((-2.0, 1.0, 0.5), (3.0, -4.0, 7.0), 12.0),
]


@pytest.mark.parametrize(("f1", "f2", "minor"), CASES)
def test_every_ray_from_one_focus_reflects_through_the_other_with_path_2a(f1, f2, minor):
    ellipsoid = ellipsoid_from_foci(f1, f2, minor)
    directions = _random_directions(np.random.default_rng(1), 5000)
    origins = np.repeat(np.asarray(f1, float)[None, :], len(directions), axis=0)
    t, points, normals = ellipsoid.intersect(origins, directions)
    assert np.all(np.isfinite(t)) and np.all(t > 0)
    outgoing = reflect(directions, normals)
    size = ellipsoid.semi_major
    assert _line_distance(points, outgoing, np.asarray(f2, float)).max() < 1e-9 * size
    # The reflected ray heads towards the second focus, not away from it.
    assert np.all(np.einsum("ij,ij->i", np.asarray(f2) - points, outgoing) > -1e-9 * size)
    path = t + np.linalg.norm(points - np.asarray(f2), axis=1)
    assert np.abs(path - 2.0 * size).max() < 1e-9 * size


def test_ellipsoid_from_foci_matches_the_seed_construction():
    ellipsoid = ellipsoid_from_foci((-0.5, 0, 1), (0.5, 0, 1), 1.6)
    assert np.allclose(ellipsoid.center, (0, 0, 1))
    assert np.allclose(ellipsoid.semi_axes, (0.8, 0.8, np.hypot(0.5, 0.8)))
    assert np.allclose(ellipsoid.rotation.T @ ellipsoid.rotation, np.eye(3))
    assert np.isclose(np.linalg.det(ellipsoid.rotation), 1.0)
    assert np.allclose(ellipsoid.rotation[:, 2], (1, 0, 0))
    unit = _random_directions(np.random.default_rng(2), 200)
    surface = ellipsoid.center + (unit * ellipsoid.semi_axes) @ ellipsoid.rotation.T
    sums = np.linalg.norm(surface - ellipsoid.foci[0], axis=1) + np.linalg.norm(
        surface - ellipsoid.foci[1], axis=1
    )
    assert np.allclose(sums, ellipsoid.path_length, atol=1e-12)


def test_intersect_outside_hits_near_side_inside_hits_far_side_and_misses_give_inf():
    ellipsoid = ellipsoid_from_foci((0, 0, -1), (0, 0, 1), 2.0)
    a = ellipsoid.semi_major
    origins = np.array([[5.0, 0, 0], [0, 0, 0], [5.0, 5.0, 0], [5.0, 0, 0]])
    directions = np.array([[-1.0, 0, 0], [1.0, 0, 0], [-1.0, 0, 0], [1.0, 0, 0]])
    t, points, normals = ellipsoid.intersect(origins, directions)
    assert np.allclose(t[:2], [4.0, 1.0])
    assert np.allclose(points[0], (1, 0, 0)) and np.allclose(points[1], (1, 0, 0))
    assert np.allclose(normals[0], (1, 0, 0))
    assert np.isinf(t[2]) and np.isinf(t[3])
    assert np.allclose(points[2:], origins[2:])
    # a ray starting on the surface goes to the opposite side, not to its own start
    t_on, points_on, _ = ellipsoid.intersect([[0, 0, a]], [[0, 0, -1.0]])
    assert np.isclose(t_on[0], 2 * a) and np.allclose(points_on[0], (0, 0, -a))


def test_trace_paths_shape_bounces_and_straight_misses():
    ellipsoid = ellipsoid_from_foci((-1, 0, 0), (1, 0, 0), 1.0)
    rng = np.random.default_rng(3)
    directions = _random_directions(rng, 300)
    origins = np.repeat([[-1.0, 0, 0]], 300, axis=0)
    paths = trace([ellipsoid], origins, directions, bounces=2)
    assert paths.shape == (300, 4, 3)
    assert np.allclose(paths[:, 0], origins)
    first_out = paths[:, 2] - paths[:, 1]
    first_out /= np.linalg.norm(first_out, axis=1, keepdims=True)
    assert _line_distance(paths[:, 1], first_out, np.array([1.0, 0, 0])).max() < 1e-9
    # the second bounce sends the light back through the first focus
    final = paths[:, 3] - paths[:, 2]
    assert np.allclose(np.linalg.norm(final, axis=1), 1.0)
    assert _line_distance(paths[:, 2], final, np.array([-1.0, 0, 0])).max() < 1e-9
    missing = trace([ellipsoid], [[0, 10.0, 0]], [[0, 1.0, 0]], bounces=3)
    assert np.allclose(missing[0], [[0, 10, 0], [0, 11, 0], [0, 12, 0], [0, 13, 0], [0, 14, 0]])


def test_analytic_mirror_spot_is_at_rounding_level():
    mirror = ellipsoid_mirror((-0.5, 0, 1), (0.5, 0, 1), 1.6)
    spot = mirror_spot(mirror, count=3000)
    assert spot.rays == 3000
    assert spot.max < 1e-9 * mirror.size
    assert spot.path_spread < 1e-9 * mirror.size
    assert np.isclose(spot.path_mean, mirror.ellipsoid.path_length)


def test_concave_chain_passes_rays_focus_to_focus():
    foci = np.array([[0, 0, 0], [1.0, 0, 0.2], [2.0, 0.3, 0.0], [3.0, 0, 0.4]])
    chain = mirror_chain(
        foci, [0.8, 0.8, 0.8], ["concave"] * 3, first_direction=(0.5, 0, -1), apertures_deg=25
    )
    origins, directions = rays_to_mirror(chain.mirrors[0], foci[0], "random", 2000, seed=4)
    result = trace_chain(chain, origins, directions)
    assert result.paths.shape == (2000, 5, 3)
    for index, record in enumerate(result.records):
        assert record.hit.all()
        assert np.all(record.surface == index)
        assert _line_distance(record.points, record.directions, foci[index + 1]).max() < 1e-9
    spot = chain_spot(chain)
    assert spot.max < 1e-9 and spot.path_spread < 1e-9
    assert np.isclose(spot.path_mean, chain.path_length)


def test_offner_like_chain_with_convex_element_refocuses():
    foci = np.array([[-1.0, 0, 0], [0.0, 0, 0.0], [0.3, 0, 0.4], [1.0, 0, 0]])
    chain = mirror_chain(
        foci, [1.5, 0.3, 1.5], ["concave", "convex", "concave"], first_direction=(0.3, 0, -1)
    )
    origins, directions = rays_to_mirror(chain.mirrors[0], foci[0], "cone", 1500)
    result = trace_chain(chain, origins, directions)
    assert all(record.hit.all() for record in result.records)
    convex = result.records[1]
    # light leaving the convex mirror diverges from its second focus (a virtual point behind it)
    assert _line_distance(convex.points, convex.directions, foci[2]).max() < 1e-9
    behind = np.einsum("ij,ij->i", foci[2] - convex.points, convex.directions)
    assert np.all(behind < 0)
    assert _line_distance(result.records[2].points, result.final_directions, foci[3]).max() < 1e-9
    spot = chain_spot(chain)
    # concave minus convex plus concave: the optical path is the same for every ray
    assert spot.path_spread < 1e-9 and np.isclose(spot.path_mean, chain.path_length)


def test_a_ray_missing_a_cap_mirror_is_a_miss_not_a_hit_at_infinity():
    mirror = ellipsoid_mirror((-0.5, 0, 0), (0.5, 0, 0), 0.6, side=(0, 0, -1), aperture_deg=90)
    # far below the ellipsoid, heading along the cap axis direction (down), never meeting it
    t, points, normals = mirror.intersect([[0.0, 5.0, -2.0]], [[0.0, 0.0, -1.0]])
    assert np.isinf(t[0]) and np.allclose(points[0], (0, 5, -2)) and np.allclose(normals[0], 0.0)
    paths = trace([mirror], [[0.0, 5.0, -2.0]], [[0.0, 0.0, -1.0]], bounces=2)
    assert np.all(np.isfinite(paths)) and np.allclose(paths[0, :, 2], [-2, -3, -4, -5])


def test_nonsequential_trace_finds_the_nearest_mirror():
    first = ellipsoid_mirror((-0.5, 0, 1), (0.5, 0, 1), 1.6, side=(0, 0, -1), aperture_deg=50)
    blocker = ellipsoid_mirror((-0.5, 0, 1), (0.5, 0, 1), 0.6, side=(0, 0, -1), aperture_deg=50)
    origins, directions = rays_to_mirror(first, first.foci[0], "fan", 11)
    result = trace_records([first, blocker], origins, directions, bounces=1)
    blocked = np.isfinite(blocker.intersect(origins, directions)[0])
    assert blocked.any() and (~blocked).any()
    assert np.array_equal(result.records[0].surface, np.where(blocked, 1, 0))


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda: ellipsoid_from_foci((1, 2, 3), (1, 2, 3), 1.0), "coincide"),
        (lambda: ellipsoid_from_foci((0, 0, 0), (1, 0, 0), 0.0), "minor axis"),
        (lambda: ellipsoid_from_foci((0, 0, 0), (1, 0, 0), -2.0), "minor axis"),
        (lambda: ellipsoid_from_foci((0, 0, 0), (1, 0, 0), float("nan")), "minor axis"),
        (lambda: ellipsoid_from_foci((0, 0, np.nan), (1, 0, 0), 1.0), "NaN"),
        (lambda: ellipsoid_mirror((0, 0, 0), (1, 0, 0), 1.0, kind="flat"), "kind"),
        (lambda: mirror_chain([[0, 0, 0], [1, 0, 0], [2, 0, 0]], [1, 1], ["concave", "convex"]), "last"),
        (lambda: mirror_chain([[0, 0, 0]], [], []), "two foci"),
        (
            lambda: trace([ellipsoid_from_foci((0, 0, 0), (1, 0, 0), 1)], [[0, 0, 0]], [[0, 0, 0]]),
            "zero-length",
        ),
    ],
)
def test_degenerate_input_raises_the_domain_error(call, words):
    with pytest.raises(OpticsError, match=words) as caught:
        call()
    assert isinstance(caught.value, ProcAnimError)
