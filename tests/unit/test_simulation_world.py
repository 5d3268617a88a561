"""Physics invariants of the position-based World: ropes, shape matching, solvers, volume, XPBD."""

import numpy as np
import pytest

from addon.errors import ProcAnimError
from addon.geometry import quaternion_to_matrix
from addon.simulation import SimulationDivergedError, SimulationError, World
from addon.simulation.spatial_hash import close_pairs

FPS = 24


def rope(links=20, length=2.0, height=3.0, solver="gauss_seidel"):
    x = np.zeros((links + 1, 3))
    x[:, 0] = np.linspace(0.0, length, links + 1)
    x[:, 2] = height
    world = World(x, solver=solver)
    world.add_distance(np.arange(links), np.arange(1, links + 1))
    world.add_pin(0)
    return world


def link_strain(positions, rest):
    return np.abs(np.linalg.norm(np.diff(positions, axis=0), axis=1) / rest - 1.0)


def test_twenty_link_rope_keeps_every_link_within_one_percent_while_swinging():
    world = rope()
    worst = 0.0
    lowest = np.inf
    for _ in range(48):
        world.step(1.0 / FPS, substeps=100, iterations=1)
        worst = max(worst, link_strain(world.positions, 0.1).max())
        lowest = min(lowest, world.positions[-1, 2])
    assert worst < 0.01
    # It really swung: the free end fell well below the pin and moves fast.
    assert lowest < 3.0 - 1.5
    assert np.linalg.norm(world.velocities[-1]) > 1.0
    np.testing.assert_allclose(world.positions[0], [0.0, 0.0, 3.0])


def cube(size=0.5, height=2.0, tilt=(0.9, 0.3, 0.2, 0.1)):
    corners = np.array([[i, j, k] for i in (0, 1) for j in (0, 1) for k in (0, 1)], dtype=float) * size
    q = np.asarray(tilt) / np.linalg.norm(tilt)
    return corners @ quaternion_to_matrix(q).T + [0.0, 0.0, height]


def pairwise(points):
    return np.linalg.norm(points[:, None] - points[None], axis=2)


def test_shape_matched_cube_comes_to_rest_on_ground_with_shape_kept():
    x = cube()
    world = World(x)
    world.add_shape_match(np.arange(8), stiffness=1.0)
    world.add_ground(0.0, friction=0.8)
    rest = pairwise(x)
    offdiag = ~np.eye(8, dtype=bool)
    for _ in range(5 * FPS):
        world.step(1.0 / FPS, substeps=10)
        assert np.all(np.abs(pairwise(world.positions)[offdiag] / rest[offdiag] - 1.0) < 0.01)
    p = world.positions
    # Resting contact sinks by at most one substep of gravity (g h^2 = 0.17 mm here).
    assert abs(p[:, 2].min()) < 5e-4
    assert np.count_nonzero(p[:, 2] < 1e-3) == 4  # resting on a face
    assert np.abs(world.velocities).max() < 1e-3


def test_soft_shape_matching_with_overlapping_clusters_restores_rest_shape():
    rng = np.random.default_rng(1)
    grid = np.array([[i, j, k] for i in range(3) for j in range(3) for k in range(3)], dtype=float) * 0.2
    world = World(grid, gravity=(0, 0, 0))
    near = np.linalg.norm(grid[:, None] - grid[None], axis=2) < 0.21
    world.add_shape_match([np.flatnonzero(row) for row in near], stiffness=0.5)
    world.add_shape_match(np.arange(len(grid)), stiffness=0.2)
    rotation = quaternion_to_matrix(np.array([0.8, 0.2, -0.5, 0.3]) / np.linalg.norm([0.8, 0.2, -0.5, 0.3]))
    world._x = grid @ rotation.T + rng.normal(scale=0.03, size=grid.shape)  # deformed, rotated start
    for _ in range(40):
        world.step(1.0 / FPS, substeps=4)
    final = world.positions
    np.testing.assert_allclose(pairwise(final), pairwise(grid), atol=2e-3)


def test_inverted_cluster_is_restored_by_svd_fallback_not_left_mirrored():
    x = cube(tilt=(1, 0, 0, 0))
    world = World(x, gravity=(0, 0, 0))
    world.add_shape_match(np.arange(8), stiffness=1.0)
    world.step(1.0 / FPS)  # warm start the rotation
    mirrored = x.copy()
    mirrored[:, 0] = 2 * x[:, 0].mean() - mirrored[:, 0]  # a reflection: det < 0 covariance
    world._x = mirrored + 1e-3 * np.arange(24).reshape(8, 3) / 24
    world.step(1.0 / FPS)
    result = world.positions - world.positions.mean(0)
    rest = x - x.mean(0)
    # The result is the rest shape properly rotated: same distances, and a positive orientation.
    np.testing.assert_allclose(pairwise(result), pairwise(rest), atol=1e-9)
    basis = np.stack([result[4] - result[0], result[2] - result[0], result[1] - result[0]])
    reference = np.stack([rest[4] - rest[0], rest[2] - rest[0], rest[1] - rest[0]])
    assert np.sign(np.linalg.det(basis)) == np.sign(np.linalg.det(reference))


def stretched_chain_residual(solver, iterations, order=None, mirrored=False, branch=False):
    """A 6-link chain 30% too long, pinned at one end, after one step of ``iterations`` projections.

    ``branch`` hangs a seventh link off the middle particle: no longer a chain, so Gauss-Seidel uses
    its coloured sweep rather than the exact chain solve.
    """
    links = 6
    x = np.zeros((links + 1, 3))
    x[:, 0] = np.linspace(0.0, 1.3 * links * 0.1, links + 1)  # 30% too long
    x[:, 2] = 0.02 * np.sin(np.arange(links + 1))
    i, j = np.arange(links), np.arange(1, links + 1)
    if branch:
        x = np.vstack([x, x[3] + [0.0, 0.13, 0.0]])
        i, j = np.append(i, 3), np.append(j, links + 1)
    if mirrored:  # the same chain pointing the other way: a sweep along x now starts at the free end
        x[:, 0] *= -1
    world = World(x, gravity=(0, 0, 0), solver=solver, max_speed=np.inf)
    if order is not None:
        i, j = i[order], j[order]
    world.add_distance(i, j, rest=0.1)
    world.add_pin(0)
    world.step(1e-6, substeps=1, iterations=iterations)
    result = world.positions
    if mirrored:
        result[:, 0] *= -1
    return result, np.sqrt(np.mean(link_strain(result[: links + 1], 0.1) ** 2))


def test_jacobi_and_gauss_seidel_both_converge_and_differ_as_stated():
    for solver in ("gauss_seidel", "jacobi"):
        _, residual = stretched_chain_residual(solver, 1500, branch=True)
        assert residual < 1e-6, solver
    # Gauss-Seidel: each constraint sees the previous corrections, so it converges faster.
    for iterations in (20, 50, 100):
        _, gauss_seidel = stretched_chain_residual("gauss_seidel", iterations, branch=True)
        _, jacobi = stretched_chain_residual("jacobi", iterations, branch=True)
        assert gauss_seidel < 0.7 * jacobi
    # Jacobi averages corrections computed from the same positions: the order does not matter.
    order = np.random.default_rng(0).permutation(7)
    jacobi_a, _ = stretched_chain_residual("jacobi", 7, branch=True)
    jacobi_b, _ = stretched_chain_residual("jacobi", 7, order, branch=True)
    np.testing.assert_allclose(jacobi_a, jacobi_b, atol=1e-12)
    np.testing.assert_allclose(
        jacobi_a, stretched_chain_residual("jacobi", 7, mirrored=True, branch=True)[0], atol=1e-12
    )
    # Gauss-Seidel sweeps in a fixed spatial order, so the same graph pointing the other way (solved
    # from its free end first) ends somewhere else after the same number of iterations.
    seidel_a, _ = stretched_chain_residual("gauss_seidel", 7, branch=True)
    seidel_b, _ = stretched_chain_residual("gauss_seidel", 7, mirrored=True, branch=True)
    assert np.abs(seidel_a - seidel_b).max() > 1e-4


def test_gauss_seidel_solves_a_chain_exactly_in_any_order():
    """On a pure chain every projection is one Newton step on all links at once (tridiagonal solve):
    a 30% stretch is gone to 1e-9 in a handful of projections, whatever the link order or direction,
    where the coloured sweep (a red-black Jacobi on a chain) still has percent-level errors."""
    chain, residual = stretched_chain_residual("gauss_seidel", 6)
    assert residual < 1e-9
    order = np.random.default_rng(1).permutation(6)
    np.testing.assert_allclose(stretched_chain_residual("gauss_seidel", 6, order)[0], chain, atol=1e-9)
    np.testing.assert_allclose(
        stretched_chain_residual("gauss_seidel", 6, mirrored=True)[0], chain, atol=1e-9
    )
    _, swept = stretched_chain_residual("gauss_seidel", 6, branch=True)
    assert swept > 1e-3


def test_xpbd_compliance_gives_the_same_spring_stretch_for_any_substep_count():
    compliance = 1e-3
    stretches = []
    for substeps in (5, 40):
        world = World([[0, 0, 1.0], [0, 0, 0.5]], damping=0.9)
        world.add_distance([0], [1], compliance=compliance)
        world.add_pin(0)
        for _ in range(3 * FPS):
            world.step(1.0 / FPS, substeps=substeps)
        stretches.append(np.linalg.norm(world.positions[0] - world.positions[1]) - 0.5)
    # Hanging unit mass: extension = compliance * m g, whatever the step.
    np.testing.assert_allclose(stretches, compliance * 9.81, rtol=0.03)


def icosphere(subdivisions=2):
    t = (1 + 5**0.5) / 2
    verts = [(-1, t, 0), (1, t, 0), (-1, -t, 0), (1, -t, 0), (0, -1, t), (0, 1, t),
             (0, -1, -t), (0, 1, -t), (t, 0, -1), (t, 0, 1), (-t, 0, -1), (-t, 0, 1)]  # fmt: skip
    faces = [(0, 11, 5), (0, 5, 1), (0, 1, 7), (0, 7, 10), (0, 10, 11), (1, 5, 9), (5, 11, 4), (11, 10, 2),
             (10, 7, 6), (7, 1, 8), (3, 9, 4), (3, 4, 2), (3, 2, 6), (3, 6, 8), (3, 8, 9), (4, 9, 5),
             (2, 4, 11), (6, 2, 10), (8, 6, 7), (9, 8, 1)]  # fmt: skip
    verts = [np.array(v) / np.linalg.norm(v) for v in verts]
    for _ in range(subdivisions):
        cache, refined = {}, []

        def middle(a, b, cache=cache):
            key = (min(a, b), max(a, b))
            if key not in cache:
                m = verts[a] + verts[b]
                verts.append(m / np.linalg.norm(m))
                cache[key] = len(verts) - 1
            return cache[key]

        for a, b, c in faces:
            ab, bc, ca = middle(a, b), middle(b, c), middle(c, a)
            refined += [(a, ab, ca), (b, bc, ab), (c, ca, bc), (ab, bc, ca)]
        faces = refined
    faces = np.array(faces)
    edges = np.unique(
        np.sort(np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]]), axis=1), axis=0
    )
    return np.array(verts) * 0.5, faces, edges


def drop_balloon(with_volume, pressure=1.0):
    verts, faces, edges = icosphere()
    world = World(verts + [0, 0, 1.5])
    world.add_distance(edges[:, 0], edges[:, 1], compliance=1e-3)  # soft skin: squashes without volume
    if with_volume:
        world.add_volume(faces, pressure=pressure)
    world.add_ground(0.0)
    rest = world.volume(faces)
    ratios = []
    for _ in range(2 * FPS):
        world.step(1.0 / FPS, substeps=10)
        ratios.append(world.volume(faces) / rest)
    return np.array(ratios)


def test_volume_constraint_preserves_volume_of_a_dropped_balloon():
    kept = drop_balloon(True)
    lost = drop_balloon(False)
    assert np.abs(kept - 1.0).max() < 0.01
    assert lost.min() < 0.9  # the same skin without the constraint squashes
    inflated = drop_balloon(True, pressure=1.2)
    assert inflated[-1] == pytest.approx(1.2, abs=0.02)


def test_divergence_raises_naming_the_frame_and_leaves_state_unchanged():
    world = rope(links=5, length=0.5)
    world.frame = 10
    yank = {"speed": 0.0}
    world.add_pin([5], trajectory=lambda t: np.array([[0.5 + yank["speed"] * t, 0.0, 3.0]]))
    for _ in range(3):
        world.step(1.0 / FPS)
    before = world.positions
    yank["speed"] = 1e7
    with pytest.raises(SimulationDivergedError, match="frame 14") as caught:
        world.step(1.0 / FPS)
    assert caught.value.frame == 14
    assert isinstance(caught.value, ProcAnimError)
    np.testing.assert_array_equal(world.positions, before)
    assert world.frame == 13
    nan_world = rope(links=3, length=0.3)
    nan_world.add_pin([3], trajectory=lambda t: np.array([[np.nan if t > 0.05 else 0.3, 0.0, 3.0]]))
    with pytest.raises(SimulationDivergedError, match="frame 2.*NaN"):
        for _ in range(4):
            nan_world.step(1.0 / FPS)


def test_particle_collisions_separate_bodies_and_skip_own_group():
    x = np.array([[-0.5, 0, 1.0], [0.5, 0, 1.0], [0.0, 0, 3.0], [0.05, 0, 3.0]])
    world = World(x, gravity=(0, 0, 0))
    world.set_velocities([[2.0, 0, 0], [-2.0, 0, 0], [0, 0, 0], [0, 0, 0]])
    world.add_particle_collisions(0.1, groups=[0, 1, 2, 2])
    for _ in range(FPS):
        world.step(1.0 / FPS, substeps=8)
        p = world.positions
        assert np.linalg.norm(p[0] - p[1]) >= 0.2 - 1e-9
    assert np.linalg.norm(world.positions[2] - world.positions[3]) == pytest.approx(0.05)


def test_colliders_hold_particles_on_their_surfaces():
    world = World([[0.05, 0, 2.0], [3.0, 0.1, 2.0], [6.0, 0.0, 2.0]])
    world.add_particle_collisions(0.02)
    world.add_sphere([0, 0, 0.5], 0.5, friction=1.0)
    world.add_box([3.0, 0, 0.25], [0.5, 0.5, 0.25], friction=1.0)
    tilt = np.deg2rad(10)
    plane = np.array([[5, -1, 0], [7, -1, 0], [7, 1, 0], [5, 1, 0]], float)
    plane[:, 2] = (plane[:, 0] - 6.0) * np.tan(tilt) + 0.3
    world.add_mesh_collider(plane, [[0, 1, 2], [0, 2, 3]], friction=1.0)
    for _ in range(2 * FPS):
        world.step(1.0 / FPS, substeps=10)
    p = world.positions
    assert np.linalg.norm(p[0] - [0, 0, 0.5]) == pytest.approx(0.52, abs=1e-3)
    assert p[1, 2] == pytest.approx(0.52, abs=1e-6)
    on_plane = (p[2, 0] - 6.0) * np.tan(tilt) + 0.3
    assert (p[2, 2] - on_plane) * np.cos(tilt) == pytest.approx(0.02, abs=1e-3)


def test_spatial_hash_finds_exactly_the_brute_force_pairs():
    rng = np.random.default_rng(4)
    points = rng.uniform(-1, 1, size=(400, 3))
    found = {tuple(pair) for pair in close_pairs(points, 0.15).tolist()}
    distances = np.linalg.norm(points[:, None] - points[None], axis=2)
    i, j = np.nonzero(np.triu(distances < 0.15, k=1))
    assert found == set(zip(i.tolist(), j.tolist(), strict=True))


def test_bad_input_raises_domain_errors_naming_the_problem():
    with pytest.raises(SimulationError, match=r"\(N, 3\)"):
        World(np.zeros((3, 2)))
    with pytest.raises(SimulationError, match="NaN"):
        World([[np.nan, 0, 0]])
    world = World(np.zeros((3, 3)) + np.arange(3)[:, None])
    with pytest.raises(SimulationError, match="out of range"):
        world.add_distance([0], [5])
    with pytest.raises(SimulationError, match="itself"):
        world.add_distance([1], [1])
    with pytest.raises(SimulationError, match="stiffness"):
        world.add_shape_match([0, 1], stiffness=2.0)
    with pytest.raises(SimulationError, match="solver"):
        world.step(0.1, solver="newton")
    with pytest.raises(SimulationError, match="time step"):
        world.step(-1.0)
    with pytest.raises(SimulationError, match="no volume"):
        World(np.zeros((4, 3))).add_volume([[0, 1, 2], [0, 2, 3], [0, 3, 1], [1, 3, 2]])


def test_animated_attachment_follows_its_trajectory_exactly():
    world = rope(links=4, length=0.4)
    path = lambda t: np.array([[0.4 + 0.5 * np.sin(3 * t), 0.2 * t, 3.0]])  # noqa: E731
    world.add_pin([4], trajectory=path)
    for frame in range(1, 25):
        world.step(1.0 / FPS, substeps=10)
        np.testing.assert_allclose(world.positions[4], path(frame / FPS)[0], atol=1e-12)
    np.testing.assert_allclose(world.positions[0], [0.0, 0.0, 3.0])


def test_animated_mesh_collider_lifts_what_rests_on_it():
    square = np.array([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]], float)
    frames = np.array([square + [0, 0, 0.5 + 0.04 * k] for k in range(25)])  # rises 1 m/s at 24 fps
    world = World([[0.0, 0.0, 0.52]], frame=0)
    world.add_particle_collisions(0.02)
    world.add_mesh_collider(frames[0], [[0, 1, 2], [0, 2, 3]], friction=1.0, path=frames, first_frame=0)
    for _ in range(24):
        world.step(1.0 / FPS, substeps=10)
    assert world.positions[0, 2] == pytest.approx(0.5 + 0.96 + 0.02, abs=2e-3)
    assert world.velocities[0, 2] == pytest.approx(0.96, abs=0.05)


def test_friction_carries_a_particle_on_a_sliding_platform():
    square = np.array([[-3, -1, 0], [3, -1, 0], [3, 1, 0], [-3, 1, 0]], float)
    frames = np.array([square + [0.05 * k, 0, 0.5] for k in range(25)])  # slides 1.2 m/s along x
    world = World([[0.0, 0.0, 0.52]], frame=0)
    world.add_particle_collisions(0.02)
    world.add_mesh_collider(frames[0], [[0, 1, 2], [0, 2, 3]], friction=1.0, path=frames, first_frame=0)
    for _ in range(24):
        world.step(1.0 / FPS, substeps=10)
    # Static friction (mu g = 9.8 m/s^2) drags it up to speed within ~0.12 s, then it rides along.
    assert world.velocities[0, 0] == pytest.approx(1.2, abs=0.02)
    assert world.positions[0, 0] > 0.05 * 24 - 0.15
