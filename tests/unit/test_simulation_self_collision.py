"""Self collision: a crumpling cloth never passes through itself; the triangle-intersection check."""

import numpy as np
import pytest

from addon.simulation import SimulationError, World
from addon.simulation.intersections import intersecting_triangle_pairs
from addon.simulation.scenes import (
    Body,
    SimulationSettings,
    build_softbody_world,
    grid_sheet,
    run_frames,
    self_collision_radius,
)


def test_intersection_check_finds_crossing_triangles_and_ignores_neighbours():
    flat = [[0, 0, 0], [1, 0, 0], [0, 1, 0]]
    upright = [[0.2, 0.2, -0.5], [0.3, 0.2, 0.5], [0.2, 0.3, 0.5]]  # pierces the flat one
    above = [[0.2, 0.2, 0.1], [0.3, 0.2, 0.5], [0.2, 0.3, 0.5]]  # clear of it
    tris = [[0, 1, 2], [3, 4, 5]]
    assert intersecting_triangle_pairs(np.array(flat + upright, float), tris).tolist() == [[0, 1]]
    assert len(intersecting_triangle_pairs(np.array(flat + above, float), tris)) == 0
    sheet, triangles = grid_sheet(5, 5, 1.0, 1.0)
    assert len(intersecting_triangle_pairs(sheet, triangles)) == 0  # neighbours share vertices


def _crumple(self_collision: bool, frames: int = 40):
    """A 1 m cloth square (18 x 18 vertices) hanging wavy just above the ground, dropped: it falls
    onto itself and crumples. Settings: bake_softbody's defaults made cloth-like."""
    flat, triangles = grid_sheet(18, 18, 1.0, 1.0)
    vertices = np.stack((flat[:, 0], 0.03 * np.sin(7 * flat[:, 1]), flat[:, 1] + 0.55), axis=1)
    vertices[:, 1] += 0.05 * np.sin(5 * vertices[:, 0]) * np.sin(6 * vertices[:, 2])
    settings = SimulationSettings(
        frame_count=frames,
        use_volume=False,
        shape_stiffness=0.0,
        auto_substeps=True,
        limit_stretch=True,
        self_collision=self_collision,
    )
    world, _, _ = build_softbody_world([Body("sheet", vertices, triangles=triangles)], [], settings)
    crossings = [len(intersecting_triangle_pairs(p, triangles)) for _, p in run_frames(world, settings, 1)]
    return world, crossings


def test_a_crumpled_cloth_square_dropped_on_itself_never_self_intersects():
    world, crossings = _crumple(self_collision=True)
    assert world.strain_limiting  # Limit Stretch holds the stretch, the substeps only the motion
    assert crossings == [0] * len(crossings)
    positions = world.positions
    assert positions[:, 2].max() < 0.4  # it did collapse onto itself (it started 1.05 m tall)


def test_without_self_collision_the_same_cloth_passes_through_itself():
    _, crossings = _crumple(self_collision=False, frames=24)
    assert max(crossings) > 50


def test_self_collision_radius_covers_triangles_but_not_neighbours():
    vertices, triangles = grid_sheet(11, 11, 1.0, 1.0)  # 0.1 m edges
    radius = self_collision_radius([Body("sheet", vertices, triangles=triangles)])
    assert radius == pytest.approx(0.06)
    world = World(vertices)
    with pytest.raises(SimulationError, match="self collision"):
        world.add_self_collision(np.arange(len(vertices)), radius=0.0)


def test_close_pairs_between_groups_matches_brute_force():
    from addon.simulation.spatial_hash import close_pairs_between_groups

    rng = np.random.default_rng(7)
    points = np.concatenate([rng.uniform(0, 1, (60, 3)) + [0.7 * g, 0.0, 0.0] for g in range(5)])
    groups = np.repeat(np.arange(5), 60)
    found = close_pairs_between_groups(points, 0.15, groups)
    distance = np.linalg.norm(points[:, None] - points[None], axis=2)
    expected = {
        (i, j) for i, j in zip(*np.nonzero(distance < 0.15), strict=True) if i < j and groups[i] != groups[j]
    }
    assert {tuple(sorted(p)) for p in found.tolist()} == expected
    assert len(found) == len(expected)  # each pair once


@pytest.mark.parametrize(("count", "radius"), [(500, 0.1), (300, 0.3)])
def test_close_pairs_finds_every_pair_once(count, radius):
    from addon.simulation.spatial_hash import close_pairs

    points = np.random.default_rng(3).uniform(0, 1, (count, 3))
    found = close_pairs(points, radius)
    distance = np.linalg.norm(points[:, None] - points[None], axis=2)
    expected = {(i, j) for i, j in zip(*np.nonzero(distance < radius), strict=True) if i < j}
    assert {tuple(p) for p in found.tolist()} == expected and len(found) == len(expected)


def test_pairs_near_finds_every_pair_of_the_queried_points():
    from addon.simulation.spatial_hash import pairs_near

    points = np.random.default_rng(5).uniform(0, 1, (400, 3))
    queries = np.array([3, 17, 18, 250, 399])
    found = pairs_near(points, queries, 0.12)
    distance = np.linalg.norm(points[:, None] - points[None], axis=2)
    near = {q: np.flatnonzero(distance[q] < 0.12).tolist() for q in queries.tolist()}
    expected = {(q, j) for q, others in near.items() for j in others if j != q}
    assert {tuple(p) for p in found.tolist()} == expected and len(found) == len(expected)
