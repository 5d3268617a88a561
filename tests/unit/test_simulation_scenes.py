"""Scene builders: icosphere topology, clusters, rope shapes, rigid transforms and bone-chain poses."""

import numpy as np
import pytest

from addon.geometry import quaternion_to_matrix
from addon.simulation import SimulationError
from addon.simulation.scenes import (
    Body,
    SimulationSettings,
    build_rigid_world,
    build_softbody_world,
    chain_pose,
    icosphere,
    is_closed_surface,
    one_ring_clusters,
    rigid_transforms,
    rope_rest_positions,
    run_frames,
    surface_samples,
    triangle_edges,
)


def test_icosphere_matches_blender_counts_and_is_closed():
    verts, faces = icosphere(4)
    assert len(verts) == 2562 and len(triangle_edges(faces)) == 7680  # Blender's "subdivisions 5"
    assert is_closed_surface(faces)
    assert not is_closed_surface(faces[:-1])
    assert not is_closed_surface(
        faces[:, ::-1][: len(faces) // 2].tolist() + faces[len(faces) // 2 :].tolist()
    )
    np.testing.assert_allclose(np.linalg.norm(verts, axis=1), 1.0)


def test_one_ring_clusters_hold_each_vertex_and_its_neighbours():
    _, faces = icosphere(1)
    edges = triangle_edges(faces)
    clusters = one_ring_clusters(42, edges)
    assert len(clusters) == 42
    for v, cluster in enumerate(clusters):
        assert cluster[0] == v
        neighbours = set(edges[edges[:, 0] == v, 1]) | set(edges[edges[:, 1] == v, 0])
        assert set(cluster[1:].tolist()) == neighbours


def test_rope_rest_positions_have_the_requested_length_and_ends():
    points, link = rope_rest_positions([0, 0, 2], [2, 0, 2], 20, 1.25)
    assert link == pytest.approx(2.5 / 20)
    np.testing.assert_allclose(points[0], [0, 0, 2])
    np.testing.assert_allclose(points[-1], [2, 0, 2], atol=1e-12)
    links = np.linalg.norm(np.diff(points, axis=0), axis=1)
    assert links.sum() == pytest.approx(2.5, rel=2e-3)
    with pytest.raises(SimulationError, match="same place"):
        rope_rest_positions([0, 0, 0], [0, 0, 0], 5, 1.2)
    with pytest.raises(SimulationError, match="slack"):
        rope_rest_positions([0, 0, 0], [1, 0, 0], 5, 0.5)


def test_rigid_transforms_recover_a_known_motion():
    rng = np.random.default_rng(2)
    rest = rng.normal(size=(20, 3))
    rotations = quaternion_to_matrix(
        rng.normal(size=(5, 4)) / np.linalg.norm(rng.normal(size=(5, 4)), axis=1)[:, None]
    )
    rotations = np.stack([np.linalg.qr(r)[0] * np.sign(np.linalg.det(np.linalg.qr(r)[0])) for r in rotations])
    shifts = rng.normal(size=(5, 3))
    frames = np.einsum("tij,nj->tni", rotations, rest) + shifts[:, None]
    found_r, found_t = rigid_transforms(rest, frames)
    np.testing.assert_allclose(found_r, rotations, atol=1e-12)
    np.testing.assert_allclose(found_t, shifts, atol=1e-12)


def test_chain_pose_rebuilds_the_simulated_bone_directions():
    rng = np.random.default_rng(3)
    rest = np.cumsum(np.tile([0.0, 0.0, -0.1], (6, 1)), axis=0)
    frames = rest + rng.normal(scale=0.05, size=(4, 6, 3))
    rolls = quaternion_to_matrix(
        rng.normal(size=(5, 4)) / np.linalg.norm(rng.normal(size=(5, 4)), axis=1)[:, None]
    )
    rolls = np.stack([np.linalg.qr(r)[0] * np.sign(np.linalg.det(np.linalg.qr(r)[0])) for r in rolls])
    # A bone's rest matrix has its y axis along the bone: build such rest frames from rolls.
    direction = np.array([0.0, 0.0, -1.0])
    rest_mats = []
    for r in rolls:
        x = np.cross(r[:, 0], direction)
        x /= np.linalg.norm(x)
        rest_mats.append(np.stack([x, direction, np.cross(x, direction)], axis=1))
    rest_mats = np.array(rest_mats)
    local, root = chain_pose(rest, frames, rest_mats)
    for t in range(len(frames)):
        pose = np.eye(3)
        previous_rest = np.eye(3)
        for k in range(5):
            basis = quaternion_to_matrix(local[t, k])
            pose = pose @ previous_rest.T @ rest_mats[k] @ basis  # Blender's pose-matrix recursion
            previous_rest = rest_mats[k]
            along = pose[:, 1]
            want = frames[t, k + 1] - frames[t, k]
            np.testing.assert_allclose(along, want / np.linalg.norm(want), atol=1e-9)
        np.testing.assert_allclose(rest[0] + rest_mats[0] @ root[t], frames[t, 0], atol=1e-12)


def test_softbody_world_from_bodies_and_notes_for_open_meshes():
    verts, faces = icosphere(1, 0.3)
    closed = Body("Ball", verts + [0, 0, 1], triangles=faces)
    open_body = Body("Sheet", verts[:3] + [2, 0, 1], triangles=[[0, 1, 2]])
    settings = SimulationSettings(frame_count=3, shape_stiffness=0.3, shape_regions=True)
    world, offsets, notes = build_softbody_world([closed, open_body], [], settings)
    assert offsets.tolist() == [0, 42, 45]
    assert notes == ["Sheet: not a closed surface, so no volume constraint"]
    frames = list(run_frames(world, settings, first_frame=10))
    assert [f for f, _ in frames] == [11, 12, 13]
    with pytest.raises(SimulationError, match="no vertices"):
        Body("Empty", np.zeros((0, 3)))
    with pytest.raises(SimulationError, match="substeps"):
        SimulationSettings(substeps=0)


def test_rigid_world_samples_faces_and_keeps_each_body_rigid():
    corners = np.array([[i, j, k] for i in (0, 1) for j in (0, 1) for k in (0, 1)], float) * 0.4
    quads = [[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1], [2, 3, 7], [2, 7, 6],
             [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]]  # fmt: skip
    bodies = [
        Body("A", corners + [0, 0, 0.5], triangles=quads),
        Body("B", corners + [0.1, 0.1, 1.2], triangles=quads),
    ]
    settings = SimulationSettings(frame_count=36, particle_radius=0.05, damping=0.2)
    world, samples, offsets = build_rigid_world(bodies, [], settings)
    assert len(samples[0]) > 8  # faces sampled, not just corners
    positions = np.array([p for _, p in run_frames(world, settings, 1)])
    for k in range(2):
        body = positions[:, offsets[k] : offsets[k + 1]]
        r, t = rigid_transforms(samples[k], body)
        fitted = np.einsum("tij,nj->tni", r, samples[k]) + t[:, None]
        assert np.abs(fitted - body).max() < 0.01 * 0.4
    top = positions[-1, offsets[1] : offsets[2], 2].min()
    bottom_top = positions[-1, offsets[0] : offsets[1], 2].max()
    assert top > bottom_top - 0.02  # B rests on A instead of sinking through it


def test_surface_samples_cover_faces_at_the_spacing():
    corners = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], float)
    points = surface_samples(corners, [[0, 1, 2]], 0.1)
    # A lattice along the two legs from the right angle (the corner opposite the longest edge), each leg
    # cut into 10 steps of the spacing.
    assert len(points) == 11 * 12 // 2
    assert np.all(points[:, 0] + points[:, 1] <= 1 + 1e-12)
    # Every point of the face is within the spacing of a sample (no hole a particle could pass).
    u, v = np.meshgrid(np.linspace(0, 1, 60), np.linspace(0, 1, 60))
    probe = np.stack([u.ravel(), v.ravel(), np.zeros(u.size)], axis=1)[(u + v).ravel() <= 1]
    gaps = np.linalg.norm(probe[:, None] - points[None], axis=2).min(axis=1)
    assert gaps.max() < 0.1


def test_surface_samples_of_a_long_thin_face_are_a_row_not_a_square():
    """A plank's 1 m x 1 cm side: about 100 points at 1 cm spacing (a square lattice would be ~5,000)."""
    corners = np.array([[0, 0, 0], [1, 0, 0], [0, 0, 0.01]], float)
    points = surface_samples(corners, [[0, 1, 2]], 0.01)
    assert 100 <= len(points) <= 202
    assert np.ptp(points[:, 0]) == pytest.approx(1.0)
