"""The BVH mesh trace agrees ray for ray with the brute force (every ray against every triangle)."""

import numpy as np
import pytest

from addon.optics import (
    STEP_FACE,
    MeshSurface,
    ellipsoid_mirror,
    ellipsoid_mirror_mesh,
    fresnel_reflector,
    trace_records,
)
from addon.optics.bvh import TriangleBVH, brute_force_hits

F1 = np.array([-0.3, 0.0, 0.5])
F2 = np.array([0.3, 0.0, 0.5])


def _rays(rng, count, centre, spread):
    origins = centre + rng.normal(scale=spread, size=(count, 3))
    targets = rng.uniform(-0.6, 0.6, size=(count, 3)) * [1.0, 1.0, 0.05]
    directions = targets - origins
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    return origins, directions


@pytest.mark.parametrize("draft", [True, False])
def test_bvh_hits_equal_brute_force_on_a_fresnel_plate(draft):
    plate = fresnel_reflector(F1, F2, (0, 0, 0), (0, 0, 1), 0.5, 12, segments=32, draft=draft)
    rng = np.random.default_rng(1)
    origins, directions = _rays(rng, 600, F1, 0.2)
    # awkward rays: along the axes (zero direction components), grazing, from below, and starting on
    # the plate itself (the hit there must be skipped, as by the brute force)
    axis_rays = np.array([[0, 0, -1.0], [1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]])
    origins = np.vstack([origins, [[0.1, 0.05, 0.3]] * 4, plate.vertices[:50] + [0, 0, 1e-12]])
    directions = np.vstack([directions, axis_rays, np.tile([0.3, 0.2, -1.0], (50, 1)) / np.sqrt(1.13)])
    below = np.array([[0.05, 0.02, -0.4]]) + rng.normal(scale=0.05, size=(200, 3))
    up = rng.normal(size=(200, 3)) * [0.3, 0.3, 0.0] + [0, 0, 1.0]
    origins = np.vstack([origins, below])
    directions = np.vstack([directions, up / np.linalg.norm(up, axis=1, keepdims=True)])
    tree_t, tree_face = TriangleBVH(plate.vertices, plate.faces).intersect(origins, directions)
    brute_t, brute_face = brute_force_hits(plate.vertices, plate.faces, origins, directions)
    assert np.isfinite(brute_t).sum() > 400  # many rays really hit
    np.testing.assert_array_equal(tree_t, brute_t)
    np.testing.assert_array_equal(tree_face, brute_face)
    # the same through the traceable surface: points, normals and reflected directions
    fast = trace_records([MeshSurface(plate)], origins, directions).records[0]
    slow = trace_records([MeshSurface(plate, brute_force=True)], origins, directions).records[0]
    for name in ("t", "points", "normals", "hit", "directions"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(slow, name), err_msg=name)


def test_bvh_hits_equal_brute_force_on_an_ellipsoid_cap_and_on_tiny_meshes():
    mirror = ellipsoid_mirror(F1, F2, 1.0)
    cap = ellipsoid_mirror_mesh(mirror, 10)
    rng = np.random.default_rng(2)
    # enough rays for the BVH to sort them into coherent batches (and put the answers back in order)
    origins = np.repeat(F1[None], 6000, 0) + rng.normal(scale=0.05, size=(6000, 3))
    origins[3000:] = F1  # half of them from one point, the shared-origin path
    directions = rng.normal(size=(6000, 3))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    for vertices, faces in (
        (cap.vertices, cap.faces),
        (cap.vertices, cap.faces[:1]),
        (cap.vertices, cap.faces[:5]),
    ):
        tree = TriangleBVH(vertices, faces)
        for ray_origins in (origins, np.repeat(F1[None], 6000, 0)):  # the second: one shared origin
            fast = tree.intersect(ray_origins, directions)
            brute = brute_force_hits(vertices, faces, ray_origins, directions)
            np.testing.assert_array_equal(fast[0], brute[0])
            np.testing.assert_array_equal(fast[1], brute[1])
    empty = TriangleBVH(cap.vertices, np.zeros((0, 3), dtype=np.int64)).intersect(origins, directions)
    assert np.all(np.isinf(empty[0])) and np.all(empty[1] == -1)


def test_rays_from_one_focus_use_the_fan_grid_and_still_equal_brute_force():
    plate = fresnel_reflector(F1, F2, (0, 0, 0), (0, 0, 1), 0.5, 12, segments=32)
    rng = np.random.default_rng(4)
    targets = np.c_[rng.uniform(-0.6, 0.6, (2200, 2)), rng.uniform(-0.02, 0.0, 2200)]
    directions = targets - F1
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    # a few exactly along the view axis and backwards
    directions[:3] = [[0.0, 0.0, -1.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]
    origins = np.repeat(F1[None], len(directions), 0)
    tree = TriangleBVH(plate.vertices, plate.faces)
    fast = tree.intersect(origins, directions)
    assert tree._fan_cache[1] is not None  # the plate is all in front of F1: the fan grid was used
    brute = brute_force_hits(plate.vertices, plate.faces, origins, directions)
    assert np.isfinite(brute[0]).sum() > 1000
    np.testing.assert_array_equal(fast[0], brute[0])
    np.testing.assert_array_equal(fast[1], brute[1])
    # seen from below the plate's plane some triangles are behind the point: no fan, the tree answers
    below = np.repeat([[0.0, 0.0, 0.002]], 2200, 0)
    fast = tree.intersect(below, directions)
    assert tree._fan_cache[1] is None
    brute = brute_force_hits(plate.vertices, plate.faces, below, directions)
    np.testing.assert_array_equal(fast[0], brute[0])
    np.testing.assert_array_equal(fast[1], brute[1])


def _awkward_rays_from(source, plate, rng, centre=(0.0, 0.0, 0.0)):
    """Over 2,048 rays from one point at a plate (so the fan grid answers): random points on it, its
    exact vertices, points on its edges (midpoints and anywhere along them), its step faces, points
    past its rim (misses), grazing and upward rays; some directions not of unit length."""
    corners = plate.vertices[plate.faces]
    angle = rng.uniform(0.0, 2.0 * np.pi, 1200)
    radius = 0.5 * np.sqrt(rng.uniform(0.0, 1.0, 1200))
    on_plate = np.c_[radius * np.cos(angle), radius * np.sin(angle), rng.uniform(-0.03, 0.0, 1200)]
    vertices = plate.vertices[rng.choice(len(plate.vertices), 300, replace=False)]
    edge = rng.integers(0, 3, 400)
    face = rng.integers(0, len(plate.faces), 400)
    fraction = np.where(np.arange(400) < 200, 0.5, rng.uniform(0.0, 1.0, 400))[:, None]
    start, end = corners[face, edge], corners[face, (edge + 1) % 3]
    on_edges = start + fraction * (end - start)
    steps = np.flatnonzero(plate.face_zone == STEP_FACE)
    on_steps = corners[rng.choice(steps, 200)].mean(axis=1) if len(steps) else np.zeros((0, 3))
    outside = (
        rng.uniform(0.55, 0.9, 100)[:, None]
        * np.c_[np.cos(angle[:100]), np.sin(angle[:100]), 0 * angle[:100]]
    )
    targets = np.vstack([on_plate + centre, vertices, on_edges, on_steps, outside + centre])
    directions = targets - source
    grazing = np.c_[rng.normal(size=(60, 2)), -rng.uniform(0.0, 1e-3, 60)]
    upward = np.c_[rng.normal(size=(40, 2)), rng.uniform(0.1, 1.0, 40)]
    directions = np.vstack([directions, grazing, upward])
    directions[::7] *= rng.uniform(0.01, 50.0, len(directions[::7]))[:, None]
    return np.repeat(np.asarray(source, dtype=np.float64)[None], len(directions), 0), directions


@pytest.mark.parametrize("risers", ["rays", "vertical"])
def test_a_plate_traced_through_its_ring_layout_equals_brute_force_on_awkward_rays(risers):
    plate = fresnel_reflector(F1, F2, (0, 0, 0), (0, 0, 1), 0.5, 16, segments=32, zone_steps=2, risers=risers)
    assert plate.layout is not None
    rng = np.random.default_rng(7)
    for source in (F1, F2):
        origins, directions = _awkward_rays_from(source, plate, rng)
        surface = MeshSurface(plate)
        fast = surface.hits(origins, directions)
        grid = surface.tree._fan_cache[1]
        assert (
            grid is not None and grid.cells.first is not grid.cells.second
        )  # cells follow the plate's zones
        brute = brute_force_hits(plate.vertices, plate.faces, origins, directions)
        np.testing.assert_array_equal(fast[0], brute[0])
        np.testing.assert_array_equal(fast[1], brute[1])
        hit_faces = brute[1][brute[1] >= 0]
        assert np.isfinite(brute[0][:1500]).mean() > 0.9  # the plate points, vertices, edges are hit
        assert not np.isfinite(brute[0][-200:]).any()  # past the rim, grazing, upward: all miss
        if risers == "vertical" and source is F1:
            assert np.any(plate.face_zone[hit_faces] == STEP_FACE)  # vertical steps catch light


def test_the_ring_layout_keeps_few_triangles_per_cell_and_other_plates_still_equal_brute_force():
    rng = np.random.default_rng(8)
    # a 100-zone plate: its zones are not circles seen from F1, so plain polar cells around its centre
    # cut across them; cells along the plate's rings hold a few triangles however fine the zones
    fine = fresnel_reflector(F1, F2, (0, 0, 0), (0, 0, 1), 0.5, 100, segments=64, zone_steps=2)
    columns = np.ascontiguousarray(_awkward_rays_from(F1, fine, rng)[1][:1200].T)  # random plate points
    along_rings = TriangleBVH(fine.vertices, fine.faces, layout=fine.layout)._fan(F1).candidates(columns)[1]
    around_centre = TriangleBVH(fine.vertices, fine.faces)._fan(F1).candidates(columns)[1]
    assert along_rings.mean() < 7.0 and along_rings.mean() < 0.5 * around_centre.mean()
    plate = fresnel_reflector(F1, F2, (0, 0, 0), (0, 0, 1), 0.5, 24, segments=48, zone_steps=2)
    # an off-centre plate (its optical centre off the disk), a lens of louvres (foci on both sides),
    # rays from under the plate, and from a point inside its relief (some triangles on either side of
    # it: no fan grid, the tree answers), all as the brute force
    depth = float(plate.vertices[:, 2].min())
    cases = [
        (fresnel_reflector(F1, F2, (0.9, 0.0, 0.0), (0, 0, 1), 0.5, 12, segments=32), F1, True, (0.9, 0, 0)),
        (
            fresnel_reflector(F1, F2 * [1, 1, -1], (0, 0, 0), (0, 0, 1), 0.5, 12, segments=32),
            F1,
            True,
            (0, 0, 0),
        ),
        (plate, np.array([0.05, 0.0, -0.3]), True, (0, 0, 0)),
        (plate, np.array([0.45, 0.0, 0.5 * depth]), False, (0, 0, 0)),
    ]
    for mesh, source, fan, centre in cases:
        origins, directions = _awkward_rays_from(source, mesh, rng, centre)
        tree = TriangleBVH(mesh.vertices, mesh.faces, layout=mesh.layout)
        fast = tree.intersect(origins, directions)
        assert (tree._fan_cache[1] is not None) == fan
        brute = brute_force_hits(mesh.vertices, mesh.faces, origins, directions)
        assert np.isfinite(brute[0]).sum() > 500
        np.testing.assert_array_equal(fast[0], brute[0])
        np.testing.assert_array_equal(fast[1], brute[1])


@pytest.mark.parametrize("risers", ["rays", "vertical"])
def test_rays_from_many_points_through_the_plates_slab_equal_brute_force(risers):
    plate = fresnel_reflector(F1, F2, (0, 0, 0), (0, 0, 1), 0.5, 16, segments=32, zone_steps=2, risers=risers)
    rng = np.random.default_rng(9)
    corners = plate.vertices[plate.faces]
    depth = float(plate.vertices[:, 2].min())
    # origins above, below and inside the relief; targets: plate points, vertices, points on edges,
    # step faces, past the rim; plus rays along the plate inside its slab (grazing), rays starting on
    # the plate (their own start is skipped), and the light reflected off the plate towards F2
    count = 400
    origins = np.vstack(
        [
            rng.uniform(-0.6, 0.6, (count, 3)) * [1, 1, 0]
            + rng.choice([0.3, -0.3, 0.5 * depth], (count, 1)) * [0, 0, 1],
            rng.uniform(-0.6, 0.6, (count, 3)) * [1, 1, 0] + [0, 0, 0.4],
        ]
    )
    face = rng.integers(0, len(plate.faces), 2 * count)
    edge = rng.integers(0, 3, 2 * count)
    fraction = rng.choice([0.0, 0.5, rng.uniform()], (2 * count, 1))
    targets = corners[face, edge] + fraction * (corners[face, (edge + 1) % 3] - corners[face, edge])
    steps = np.flatnonzero(plate.face_zone == STEP_FACE)
    targets[::5] = corners[rng.choice(steps, len(targets[::5]))].mean(axis=1)
    targets[1::9] *= [1.6, 1.6, 1.0]  # past the rim
    directions = targets - origins
    grazing_origins = np.c_[
        rng.uniform(-0.7, -0.55, (100, 1)), rng.uniform(-0.3, 0.3, (100, 1)), rng.uniform(depth, 0, (100, 1))
    ]
    grazing = np.c_[np.ones(100), rng.normal(scale=0.2, size=100), rng.normal(scale=1e-4, size=100)]
    grazing[:20, 2] = 0.0  # exactly along the plane
    surface_hits = MeshSurface(plate, brute_force=True).hits(np.repeat(F1[None], 300, 0), targets[:300] - F1)
    landed = np.isfinite(surface_hits[0])
    on_plate = F1 + surface_hits[0][landed, None] * (targets[:300][landed] - F1)
    origins = np.vstack([origins, grazing_origins, on_plate])
    directions = np.vstack([directions, grazing, F2 - on_plate])
    surface = MeshSurface(plate)
    fast = surface.hits(origins, directions)
    assert surface.tree._slab_grid is not None  # the plate's own grid answered (the tree only some)
    brute = brute_force_hits(plate.vertices, plate.faces, origins, directions)
    assert np.isfinite(brute[0]).sum() > 800
    np.testing.assert_array_equal(fast[0], brute[0])
    np.testing.assert_array_equal(fast[1], brute[1])
    pairs = surface.tree._slab_grid.pairs(np.ascontiguousarray(origins.T), np.ascontiguousarray(directions.T))
    # rays along the plate inside its slab went to the tree; the reflected light, steep and short in
    # the slab, was all answered by the plate's grid
    assert set(range(count * 2, count * 2 + 20)) <= set(pairs[2].tolist())
    assert not np.any(pairs[2] >= len(origins) - len(on_plate))
    # a lens of louvres (foci on both sides: a thick slab of steep bands) from the same points
    lens = fresnel_reflector(F1, F2 * [1, 1, -1], (0, 0, 0), (0, 0, 1), 0.5, 12, segments=32, risers=risers)
    fast = MeshSurface(lens).hits(origins, directions)
    brute = brute_force_hits(lens.vertices, lens.faces, origins, directions)
    assert np.isfinite(brute[0]).sum() > 100
    np.testing.assert_array_equal(fast[0], brute[0])
    np.testing.assert_array_equal(fast[1], brute[1])
