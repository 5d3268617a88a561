"""Geometry tools against independent references: SVD, Horn's quaternion method, brute force."""

import numpy as np
import pytest

from addon.errors import ProcAnimError
from addon.geometry import (
    GeometryError,
    closest_points_on_segments,
    fit_line,
    fit_plane,
    kabsch,
    polar_rotation,
    polar_rotation_batch,
    quaternion_to_matrix,
)
from addon.quaternions import multiply


def random_rotation(rng):
    q = rng.normal(size=4)
    return quaternion_to_matrix(q / np.linalg.norm(q))


def svd_reference(source, target, weights):
    """Textbook weighted Kabsch: SVD of the cross-covariance with the determinant fix."""
    w = weights / weights.sum()
    cs, ct = w @ source, w @ target
    h = ((source - cs) * w[:, None]).T @ (target - ct)
    u, _, vt = np.linalg.svd(h)
    fix = np.diag([1.0, 1.0, np.sign(np.linalg.det(vt.T @ u.T))])
    r = vt.T @ fix @ u.T
    return r, ct - r @ cs


def horn_reference(source, target):
    """Horn 1987: the best rotation is the top eigenvector of a symmetric 4x4 matrix (no SVD)."""
    s = source - source.mean(0)
    t = target - target.mean(0)
    m = s.T @ t
    (sxx, sxy, sxz), (syx, syy, syz), (szx, szy, szz) = m
    n = np.array(
        [
            [sxx + syy + szz, syz - szy, szx - sxz, sxy - syx],
            [syz - szy, sxx - syy - szz, sxy + syx, szx + sxz],
            [szx - sxz, sxy + syx, -sxx + syy - szz, syz + szy],
            [sxy - syx, szx + sxz, syz + szy, -sxx - syy + szz],
        ]
    )
    q = np.linalg.eigh(n)[1][:, -1]
    return quaternion_to_matrix(q)


@pytest.mark.parametrize("seed", range(25))
def test_kabsch_matches_svd_reference_with_noise_and_reflections(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 60))
    source = rng.normal(size=(n, 3)) * rng.uniform(0.1, 3.0, size=3)
    rotation = random_rotation(rng)
    if seed % 3 == 0:  # a mirrored target: the answer must still be a proper rotation
        rotation = rotation @ np.diag([1.0, 1.0, -1.0])
    target = source @ rotation.T + rng.normal(size=3) * 5 + rng.normal(scale=0.05 * (seed % 4), size=(n, 3))
    weights = rng.uniform(0.1, 2.0, size=n) if seed % 2 else np.ones(n)
    r, t = kabsch(source, target, weights if seed % 2 else None)
    r_ref, t_ref = svd_reference(source, target, weights)
    assert np.linalg.det(r) == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(r, r_ref, atol=1e-9)
    np.testing.assert_allclose(t, t_ref, atol=1e-9)
    if seed % 2 == 0:
        np.testing.assert_allclose(r, horn_reference(source, target), atol=1e-9)


def test_kabsch_exact_for_rigid_motion_and_optimal_against_perturbation():
    rng = np.random.default_rng(7)
    source = rng.normal(size=(30, 3))
    rotation = random_rotation(rng)
    r, t = kabsch(source, source @ rotation.T + [1.0, -2.0, 0.5])
    np.testing.assert_allclose(r, rotation, atol=1e-12)
    np.testing.assert_allclose(t, [1.0, -2.0, 0.5], atol=1e-12)
    noisy = source @ rotation.T + rng.normal(scale=0.2, size=source.shape)
    r, t = kabsch(source, noisy)
    best = np.sum((source @ r.T + t - noisy) ** 2)
    for _ in range(50):
        small = quaternion_to_matrix(np.r_[1.0, rng.normal(scale=1e-3, size=3)] / 1.0)
        small = np.linalg.qr(small)[0] * np.sign(np.diag(np.linalg.qr(small)[1]))
        trial = small @ r
        trial_t = noisy.mean(0) - trial @ source.mean(0)
        assert np.sum((source @ trial.T + trial_t - noisy) ** 2) >= best - 1e-12


def test_kabsch_rejects_bad_input_with_domain_error():
    with pytest.raises(GeometryError, match="equal shape"):
        kabsch(np.zeros((4, 3)), np.zeros((5, 3)))
    with pytest.raises(ProcAnimError, match="NaN"):
        kabsch(np.full((4, 3), np.nan), np.zeros((4, 3)))
    with pytest.raises(GeometryError, match="weights"):
        kabsch(np.zeros((3, 3)), np.zeros((3, 3)), weights=[1, -1, 1])


@pytest.mark.parametrize("seed", range(20))
def test_polar_rotation_recovers_rotation_of_stretched_matrix(seed):
    rng = np.random.default_rng(100 + seed)
    rotation = random_rotation(rng)
    basis = random_rotation(rng)
    stretch = basis @ np.diag(rng.uniform(0.5, 2.0, size=3)) @ basis.T  # symmetric positive definite
    q = polar_rotation(rotation @ stretch)
    assert q.shape == (4,)
    assert np.linalg.norm(q) == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(quaternion_to_matrix(q), rotation, atol=1e-8)


def test_polar_rotation_batch_warm_start_converges_in_few_iterations():
    """The solvers' fast path: from last frame's rotation a few Müller steps suffice."""
    rng = np.random.default_rng(3)
    rotation = random_rotation(rng)
    q_true = polar_rotation(rotation)
    turned = quaternion_to_matrix(np.r_[np.cos(0.05), np.sin(0.05) * np.array([0.0, 0.6, 0.8])]) @ rotation
    errors = [
        np.abs(quaternion_to_matrix(polar_rotation_batch(turned, q_true, iterations=k)) - turned).max()
        for k in (1, 2, 3, 5)
    ]
    assert all(later < 0.5 * earlier for earlier, later in zip(errors, errors[1:], strict=False))
    assert errors[-1] < 1e-3
    from_identity = polar_rotation_batch(turned, np.array([1.0, 0.0, 0.0, 0.0]), iterations=5)
    assert errors[-1] < 0.1 * np.abs(quaternion_to_matrix(from_identity) - turned).max()
    np.testing.assert_allclose(quaternion_to_matrix(polar_rotation_batch(turned)), turned, atol=1e-12)


def _polar_reference(m):
    """Textbook: U V^T from the SVD (the orthogonal polar factor when det > 0)."""
    u, _, vt = np.linalg.svd(m)
    return u @ vt


def _random_ill_conditioned(rng, n, max_log_condition=6.0):
    rotation = quaternion_to_matrix(rng.normal(size=(n, 4)))
    basis = quaternion_to_matrix(rng.normal(size=(n, 4)))
    log_condition = rng.uniform(0.0, max_log_condition, size=n)
    log_condition[:10] = max_log_condition  # always include the worst case
    middle = rng.uniform(0.0, 1.0, size=n)
    middle[:5] = 1.0  # the two small singular values equal: the slowest case for the iteration
    singular = np.stack([np.ones(n), 10.0 ** (-log_condition * middle), 10.0 ** (-log_condition)], axis=1)
    stretch = basis @ (singular[:, :, None] * np.swapaxes(basis, 1, 2))
    return rotation @ stretch * 10.0 ** rng.uniform(-3.0, 3.0, size=(n, 1, 1))


def test_polar_rotation_at_defaults_matches_svd_on_10000_matrices_up_to_condition_1e6():
    rng = np.random.default_rng(2026)
    matrices = _random_ill_conditioned(rng, 10_000)
    conditions = np.linalg.cond(matrices)
    assert conditions.max() > 0.9e6
    rotations = quaternion_to_matrix(polar_rotation(matrices))
    errors = np.abs(rotations - _polar_reference(matrices)).max(axis=(1, 2))
    assert errors.max() < 1e-9
    # one matrix at a time, as a script would call it
    for m in matrices[:50]:
        np.testing.assert_allclose(quaternion_to_matrix(polar_rotation(m)), _polar_reference(m), atol=1e-9)


def test_polar_rotation_issue_case_well_posed_matrices_from_identity_guess():
    """The issue's reference set: R @ (A A^T + 0.3 I); 40 plain iterations from identity got half wrong."""
    rng = np.random.default_rng(17)
    rotation = quaternion_to_matrix(rng.normal(size=(1000, 4)))
    a = rng.normal(size=(1000, 3, 3))
    matrices = rotation @ (a @ np.swapaxes(a, 1, 2) + 0.3 * np.eye(3))
    np.testing.assert_allclose(quaternion_to_matrix(polar_rotation(matrices)), rotation, atol=1e-9)


def test_polar_rotation_bad_warm_start_still_converges_to_the_maximum():
    """A warm start near a saddle (another stationary rotation) or far away is caught and fixed."""
    rng = np.random.default_rng(8)
    matrices = _random_ill_conditioned(rng, 500, max_log_condition=3.0)
    reference = _polar_reference(matrices)
    right = polar_rotation(matrices)
    # Start exactly at a stationary saddle: the right answer times a half turn about an axis of S.
    _, _, vt = np.linalg.svd(matrices)
    axis = vt[:, 0, :]
    half_turn = np.concatenate([np.zeros((len(axis), 1)), axis], axis=1)
    saddle_start = multiply(right, half_turn)
    for start in (saddle_start, -right + 0.7 * rng.normal(size=right.shape)):
        result = polar_rotation(matrices, initial=start, iterations=3)
        np.testing.assert_allclose(quaternion_to_matrix(result), reference, atol=1e-9)


def test_polar_rotation_inverted_and_rank_deficient_matrices():
    rng = np.random.default_rng(4)
    rotation = random_rotation(rng)
    basis = random_rotation(rng)
    stretch = basis @ np.diag([2.0, 1.0, 0.5]) @ basis.T
    # det < 0: the nearest proper rotation (smallest singular direction flipped), never a reflection
    mirrored = rotation @ stretch @ np.diag([1.0, 1.0, -1.0])
    u, _, vt = np.linalg.svd(mirrored)
    expected = u @ np.diag([1.0, 1.0, np.linalg.det(u @ vt)]) @ vt
    result = quaternion_to_matrix(polar_rotation(mirrored))
    np.testing.assert_allclose(result, expected, atol=1e-9)
    assert np.linalg.det(result) == pytest.approx(1.0)
    # rank 2 (flattened): still the unique answer
    flat = rotation @ np.diag([1.0, 0.5, 0.0])
    np.testing.assert_allclose(quaternion_to_matrix(polar_rotation(flat)), rotation, atol=1e-9)
    # not unique (-I, rank 1): some maximiser of trace(R^T M)
    for m in (-np.eye(3), rotation @ np.diag([1.0, 0.0, 0.0])):
        best = np.trace(quaternion_to_matrix(polar_rotation(m)).T @ m)
        trials = quaternion_to_matrix(rng.normal(size=(2000, 4)))
        assert best >= np.einsum("kij,ij->k", trials, m).max() - 1e-12
    np.testing.assert_array_equal(polar_rotation(np.zeros((3, 3))), [1.0, 0.0, 0.0, 0.0])


def test_polar_rotation_rejects_non_3x3():
    with pytest.raises(GeometryError, match="3x3"):
        polar_rotation(np.eye(2))


def principal_axes(points):
    centred = points - points.mean(0)
    return np.linalg.svd(centred, full_matrices=False)[2]


@pytest.mark.parametrize("seed", range(15))
def test_fit_line_and_plane_match_svd_principal_axes(seed):
    rng = np.random.default_rng(200 + seed)
    axes = random_rotation(rng)
    spread = np.sort(rng.uniform(0.2, 3.0, size=3))[::-1] * [1.0, 0.8, 0.3]
    points = (rng.normal(size=(80, 3)) * spread) @ axes.T + rng.normal(size=3) * 4
    reference = principal_axes(points)
    centroid, direction = fit_line(points)
    np.testing.assert_allclose(centroid, points.mean(0), atol=1e-12)
    assert np.linalg.norm(direction) == pytest.approx(1.0, abs=1e-12)
    assert abs(direction @ reference[0]) == pytest.approx(1.0, abs=1e-9)
    centroid, normal = fit_plane(points)
    assert np.linalg.norm(normal) == pytest.approx(1.0, abs=1e-12)
    assert abs(normal @ reference[2]) == pytest.approx(1.0, abs=1e-9)


def test_fits_reject_degenerate_points():
    with pytest.raises(GeometryError, match="coincide"):
        fit_line(np.ones((5, 3)))
    with pytest.raises(GeometryError, match="collinear"):
        fit_plane(np.outer(np.arange(6.0), [1.0, 2.0, 3.0]))
    with pytest.raises(GeometryError, match="at least 3"):
        fit_plane(np.zeros((2, 3)))


def brute_force_distance(a, b, c, d, samples=4001):
    """Sample ab densely; for each sample the closest point on cd is an exact clamped projection."""
    s = np.linspace(0.0, 1.0, samples)[:, None]
    p = a + s * (b - a)
    cd = d - c
    t = np.clip(((p - c) @ cd) / max(cd @ cd, 1e-300), 0.0, 1.0)[:, None]
    return np.min(np.linalg.norm(p - (c + t * cd), axis=1))


def on_segment(point, a, b):
    ab = b - a
    t = np.clip((point - a) @ ab / max(ab @ ab, 1e-300), 0, 1)
    return np.linalg.norm(a + t * ab - point) < 1e-9


def segment_cases():
    rng = np.random.default_rng(5)
    cases = [tuple(rng.normal(size=(4, 3))) for _ in range(30)]
    direction = np.array([1.0, 2.0, -0.5])
    cases += [
        (
            np.zeros(3),
            direction,
            np.array([0.3, 0.0, 1.0]),
            np.array([0.3, 0.0, 1.0]) + 2 * direction,
        ),  # parallel
        (
            np.zeros(3),
            direction,
            np.array([5.0, 1.0, 1.0]),
            np.array([5.0, 1.0, 1.0]) + direction,
        ),  # parallel apart
        (np.zeros(3), direction, direction * 3, direction * 2),  # collinear, disjoint
        (np.zeros(3), np.zeros(3), np.array([1.0, 1.0, 0.0]), np.array([1.0, -1.0, 0.0])),  # point vs segment
        (np.ones(3), np.ones(3), np.zeros(3), np.zeros(3)),  # two points
    ]
    return cases


@pytest.mark.parametrize("case", segment_cases())
def test_closest_points_match_brute_force_minimum(case):
    a, b, c, d = (np.asarray(v, dtype=float) for v in case)
    p, q = closest_points_on_segments(a, b, c, d)
    assert on_segment(p, a, b) and on_segment(q, c, d)
    ours = np.linalg.norm(p - q)
    brute = min(brute_force_distance(a, b, c, d), brute_force_distance(c, d, a, b))
    assert ours <= brute + 1e-12
    assert ours == pytest.approx(brute, abs=1e-6)


def test_closest_points_vectorised_over_stacks():
    rng = np.random.default_rng(11)
    a, b, c, d = rng.normal(size=(4, 50, 3))
    p, q = closest_points_on_segments(a, b, c, d)
    for k in range(50):
        pk, qk = closest_points_on_segments(a[k], b[k], c[k], d[k])
        np.testing.assert_allclose(p[k], pk, atol=1e-14)
        np.testing.assert_allclose(q[k], qk, atol=1e-14)


def test_the_scalar_polar_rotation_takes_the_batched_steps():
    """The soft-body solver's one-matrix fast path is the batched Müller iteration on Python floats:
    from the same warm start and step count it lands on the same rotation."""
    from addon.geometry.rotation import polar_rotation_batch, polar_rotation_one

    rng = np.random.default_rng(7)
    for _ in range(50):
        matrix = rng.normal(size=(3, 3))
        start = rng.normal(size=4)
        start /= np.linalg.norm(start)
        for iterations in (1, 2, 40):
            batched = polar_rotation_batch(matrix[None], start[None], iterations)[0]
            scalar = polar_rotation_one(matrix, start, iterations)
            np.testing.assert_allclose(scalar * np.sign(scalar @ batched), batched, atol=1e-12)


@pytest.mark.parametrize("columns", [None, 1, 3])
def test_small_spd_batches_solve_like_lapack(columns):
    from addon.geometry.small_systems import solve_spd_batch

    rng = np.random.default_rng(7)
    jac = rng.normal(size=(40, 6, 6))
    matrices = jac @ jac.transpose(0, 2, 1) + 1e-4 * np.eye(6)
    right = rng.normal(size=(40, 6) if columns is None else (40, 6, columns))
    stacked = right[..., None] if columns is None else right
    expected = np.linalg.solve(matrices, stacked).reshape(right.shape)
    np.testing.assert_allclose(solve_spd_batch(matrices, right), expected, rtol=1e-8, atol=1e-10)


def test_small_spd_system_in_python_floats_solves_like_the_batch():
    from addon.geometry.small_systems import solve_spd_batch, solve_spd_small

    rng = np.random.default_rng(11)
    jac = rng.normal(size=(40, 6, 6)) * rng.uniform(0.01, 1.0, size=(40, 1, 1))
    matrices = jac @ jac.transpose(0, 2, 1) + 1e-4 * np.eye(6)
    right = rng.normal(size=(40, 6))
    batched = solve_spd_batch(matrices, right)
    pairs = zip(matrices.tolist(), right.tolist(), strict=True)
    one_by_one = np.array([solve_spd_small(m, r) for m, r in pairs])
    # The same operations in the same order: equal to the last bits on the machine measured (the
    # back substitution's sums follow numpy's einsum, whose order may differ with another build).
    np.testing.assert_allclose(one_by_one, batched, rtol=1e-12, atol=1e-15)
    expected = np.linalg.solve(matrices, right[..., None])[..., 0]
    np.testing.assert_allclose(one_by_one, expected, rtol=1e-8, atol=1e-10)
