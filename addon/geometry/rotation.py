"""Best-fit rotations: Müller et al. 2016 ("A robust method to extract the rotational part of
deformations") iterated on quaternions, and the Kabsch rigid fit built on it.

Müller's iteration is used instead of the plain polar square root ``A (A^T A)^-1/2`` because the
latter returns reflections for inverted matrices and fails for flattened ones (physics note 4.2).
Kabsch itself uses the closed-form SVD with the determinant fix: it is exact on cold starts,
where a few Müller iterations are not.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..quaternions import from_matrix as matrix_to_quaternion
from ..quaternions import multiply as quaternion_multiply
from ..quaternions import to_matrix as quaternion_to_matrix
from ..quaternions.scalar import qmul, qnormalize
from .errors import GeometryError

# The public names of the geometry API, kept stable; they are the functions of addon.quaternions.
__all__ = [
    "kabsch",
    "kabsch_rotation_batch",
    "matrix_to_quaternion",
    "polar_rotation",
    "polar_rotation_batch",
    "quaternion_multiply",
    "quaternion_to_matrix",
]

_TINY = 1e-300
# Relative stopping threshold: omega is an angle in radians, so this is far below float noise on R.
_OMEGA_TOLERANCE = 1e-13


def rotation_quadratic_form(matrices: ArrayLike) -> NDArray[np.float64]:
    """The symmetric 4x4 ``K`` with ``q^T K q == trace(R(q)^T M)`` for unit quaternions ``q`` (Davenport /
    Horn): the maximising rotation is the eigenvector of ``K``'s largest eigenvalue."""
    m = np.asarray(matrices, dtype=np.float64)
    xx, xy, xz = m[..., 0, 0], m[..., 0, 1], m[..., 0, 2]
    yx, yy, yz = m[..., 1, 0], m[..., 1, 1], m[..., 1, 2]
    zx, zy, zz = m[..., 2, 0], m[..., 2, 1], m[..., 2, 2]
    rows = (
        (xx + yy + zz, zy - yz, xz - zx, yx - xy),
        (zy - yz, xx - yy - zz, xy + yx, zx + xz),
        (xz - zx, xy + yx, -xx + yy - zz, yz + zy),
        (yx - xy, zx + xz, yz + zy, -xx - yy + zz),
    )
    return np.stack([np.stack(row, axis=-1) for row in rows], axis=-2)


def rotation_guess(matrices: ArrayLike) -> NDArray[np.float64]:
    """Quaternions ``(..., 4)`` maximising ``trace(R^T M)``, from one batched 4x4 symmetric eigen-solve.

    Exact up to rounding (its error grows like ``eps * |M| / (s2 + s3)``, the conditioning of the
    problem itself), so it is both the cold start of the iteration and a closed form on its own.
    """
    _, vectors = np.linalg.eigh(rotation_quadratic_form(matrices))
    q = vectors[..., :, -1]
    return np.where(q[..., :1] < 0, -q, q)


def polar_rotation_batch(
    matrices: NDArray[np.float64],
    initial: NDArray[np.float64] | None = None,
    iterations: int = 40,
) -> NDArray[np.float64]:
    """Batched Müller-2016 rotation extraction: quaternions ``(..., 4)`` of ``(..., 3, 3)`` matrices.

    Each iteration applies the average "torque" between the current basis and the input columns
    (the seed's Orthonormalization post). This is the solvers' fast path: warm starts (``initial``,
    last frame's rotation) converge in 1-3 iterations, and exactly ``iterations`` are run unless every
    step falls below float noise first. Without ``initial`` it starts from :func:`rotation_guess`.
    No convergence check or fallback here; :func:`polar_rotation` adds both.
    """
    a = np.asarray(matrices, dtype=np.float64)
    if initial is None:
        q = rotation_guess(a)
    else:
        q = np.array(np.broadcast_to(np.asarray(initial, dtype=np.float64), a.shape[:-2] + (4,)))
        q /= np.maximum(np.linalg.norm(q, axis=-1, keepdims=True), _TINY)
    q, _ = _muller_iterations(a, q, iterations, _OMEGA_TOLERANCE)
    return q


def polar_rotation_one(matrix: NDArray[np.float64], initial: NDArray[np.float64], iterations: int):
    """:func:`polar_rotation_batch` for one matrix on Python floats, the same Müller steps from
    ``initial`` (a w-first quaternion): numpy's per-call overhead on a single 3x3 costs ten times the
    arithmetic, and the soft-body solver calls this every projection."""
    columns = matrix.T.tolist()
    q = qnormalize(tuple(initial.tolist()))
    for _ in range(iterations):
        w, x, y, z = q
        basis = (  # the columns of the rotation matrix of q
            (1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y)),
            (2 * (x * y - w * z), 1 - 2 * (x * x + z * z), 2 * (y * z + w * x)),
            (2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)),
        )
        torque = [0.0, 0.0, 0.0]
        alignment = 0.0
        for (bx, by, bz), (cx, cy, cz) in zip(basis, columns, strict=True):
            torque[0] += by * cz - bz * cy
            torque[1] += bz * cx - bx * cz
            torque[2] += bx * cy - by * cx
            alignment += bx * cx + by * cy + bz * cz
        alignment = abs(alignment) + 1e-9
        omega = [t / alignment for t in torque]
        angle = math.sqrt(omega[0] ** 2 + omega[1] ** 2 + omega[2] ** 2)
        if not angle > _OMEGA_TOLERANCE:
            break
        sine = math.sin(0.5 * angle) / angle
        q = qnormalize(qmul((math.cos(0.5 * angle), omega[0] * sine, omega[1] * sine, omega[2] * sine), q))
    return np.array(q)


def _muller_iterations(
    a: NDArray[np.float64], q: NDArray[np.float64], iterations: int, tolerance: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Müller steps from ``q``; returns the quaternions and each one's last step angle (radians)."""
    columns = np.swapaxes(a, -1, -2)  # columns[..., i, :] is the input basis vector i
    last_step = np.full(a.shape[:-2], np.inf)
    for _ in range(int(iterations)):
        basis = np.swapaxes(quaternion_to_matrix(q), -1, -2)
        torque = np.cross(basis, columns).sum(axis=-2)
        alignment = np.abs(np.einsum("...ij,...ij->...", basis, columns)) + 1e-9
        omega = torque / alignment[..., None]
        angle = np.linalg.norm(omega, axis=-1)
        last_step = angle
        if not np.any(angle > tolerance):
            break
        axis = omega / np.maximum(angle, _TINY)[..., None]
        half = 0.5 * angle
        step = np.concatenate((np.cos(half)[..., None], np.sin(half)[..., None] * axis), axis=-1)
        q = quaternion_multiply(step, q)
        q /= np.linalg.norm(q, axis=-1, keepdims=True)
    return q, last_step


def rotation_error_bound(matrices: ArrayLike, quaternions: ArrayLike) -> NDArray[np.float64]:
    """First-order bound (radians) on how far each rotation is from the maximiser of ``trace(R^T M)``;
    ``inf`` where ``R`` is a saddle or another stationary point rather than the maximum.

    With ``S = R^T M``: at the maximum ``S`` is symmetric and ``trace(S) - lambda_max(sym S)`` (the
    smallest sum of two singular values, the curvature of the objective) is positive; a rotation
    ``theta`` away leaves a skew part of size ``theta * curvature / 2``.
    """
    m = np.asarray(matrices, dtype=np.float64)
    s = np.swapaxes(quaternion_to_matrix(quaternions), -1, -2) @ m
    skew = np.stack(
        (s[..., 2, 1] - s[..., 1, 2], s[..., 0, 2] - s[..., 2, 0], s[..., 1, 0] - s[..., 0, 1]), -1
    )
    symmetric = 0.5 * (s + np.swapaxes(s, -1, -2))
    curvature = np.trace(s, axis1=-2, axis2=-1) - np.linalg.eigvalsh(symmetric)[..., -1]
    noise = 1e-13 * np.abs(m).max(axis=(-2, -1))
    # No positive curvature: a saddle, or a maximum that is not unique; either way no bound.
    return np.where(curvature > noise, np.linalg.norm(skew, axis=-1) / np.maximum(curvature, _TINY), np.inf)


def polar_rotation(
    M: ArrayLike,
    initial: ArrayLike | None = None,
    iterations: int = 40,
    tolerance: float = 1e-10,
) -> NDArray[np.float64]:
    """The rotation part of a 3x3 matrix as a unit quaternion ``(4,)``, ``w`` first (``w >= 0``).

    Returns the proper rotation ``R`` maximising ``trace(R^T M)``, for any finite matrix:

    * ``det M > 0``: the orthogonal factor of the polar decomposition ``M = R S`` (``U V^T`` of the SVD).
    * ``det M < 0`` (an inverted / mirrored matrix): never a reflection, but the nearest proper
      rotation, ``U diag(1, 1, -1) V^T`` with the smallest singular value's direction flipped.
    * Rank-deficient: rank 2 (a flattened matrix) still has a unique answer (the missing axis is the
      cross product of the other two). Where the maximiser is not unique (rank 0 or 1, or ``det < 0``
      with the two smallest singular values equal, e.g. ``-I``) one of the maximisers is returned;
      the zero matrix gives the identity (or ``initial``).

    How: Müller-2016 iterations from ``initial`` (e.g. last frame's rotation) or, without it, from a
    closed-form guess (:func:`rotation_guess`), stopping once a step is below float noise; then a
    convergence check (:func:`rotation_error_bound` within ``tolerance`` radians), and the SVD answer
    for any matrix that has not converged to the maximum within ``iterations``. Also accepts a stack
    ``(..., 3, 3)`` and returns ``(..., 4)``.
    """
    a = np.asarray(M, dtype=np.float64)
    if a.ndim < 2 or a.shape[-2:] != (3, 3):
        raise GeometryError(f"polar_rotation needs 3x3 matrices, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise GeometryError("polar_rotation got a matrix containing NaN or infinity")
    if iterations < 0:
        raise GeometryError(f"polar_rotation needs a non-negative iteration count, got {iterations}")
    if not tolerance > 0.0:
        raise GeometryError(f"polar_rotation needs a positive tolerance, got {tolerance}")
    init = None if initial is None else np.asarray(initial, dtype=np.float64)
    if init is not None and (
        init.shape[-1:] != (4,) or not np.all(np.isfinite(init)) or np.any(np.linalg.norm(init, axis=-1) == 0)
    ):
        raise GeometryError("polar_rotation initial must be a finite non-zero quaternion (w, x, y, z)")
    if init is None:
        q = rotation_guess(a)
    else:
        q = np.array(np.broadcast_to(init, a.shape[:-2] + (4,)))
        q /= np.linalg.norm(q, axis=-1, keepdims=True)
    q, _ = _muller_iterations(a, q, iterations, _OMEGA_TOLERANCE)
    scale = np.abs(a).max(axis=(-2, -1))
    unconverged = (rotation_error_bound(a, q) > tolerance) & (scale > 0)
    if init is None:
        q[scale == 0] = (1.0, 0.0, 0.0, 0.0)
    if np.any(unconverged):
        q[unconverged] = matrix_to_quaternion(kabsch_rotation_batch(a[unconverged]))
    return np.where(q[..., :1] < 0, -q, q)


def kabsch_rotation_batch(covariances: NDArray[np.float64]) -> NDArray[np.float64]:
    """Proper rotations ``(..., 3, 3)`` maximising ``trace(R^T A)`` by SVD with the determinant fix."""
    u, _, vt = np.linalg.svd(covariances)
    det = np.linalg.det(u @ vt)
    u[..., :, 2] *= np.where(det < 0, -1.0, 1.0)[..., None]
    return u @ vt


def kabsch(
    source: ArrayLike, target: ArrayLike, weights: ArrayLike | None = None
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Best rigid fit ``(R, t)`` with ``target ~ source @ R.T + t`` (least squares, ``det R = +1``).

    ``source`` and ``target`` are corresponding points ``(N, 3)``; ``weights`` ``(N,)`` are optional
    non-negative per-point weights. A mirrored target still gets a proper rotation (never a reflection).
    """
    src = np.asarray(source, dtype=np.float64)
    dst = np.asarray(target, dtype=np.float64)
    if src.ndim != 2 or src.shape[1] != 3 or src.shape != dst.shape:
        raise GeometryError(
            f"kabsch needs two (N, 3) point sets of equal shape, got {src.shape} and {dst.shape}"
        )
    if len(src) < 1:
        raise GeometryError("kabsch needs at least one point pair")
    if not (np.all(np.isfinite(src)) and np.all(np.isfinite(dst))):
        raise GeometryError("kabsch got points containing NaN or infinity")
    if weights is None:
        w = np.ones(len(src))
    else:
        w = np.asarray(weights, dtype=np.float64).reshape(-1)
        if w.shape != (len(src),) or not np.all(np.isfinite(w)) or np.any(w < 0):
            raise GeometryError(f"kabsch weights must be {len(src)} finite non-negative numbers")
    total = w.sum()
    if total <= 0:
        raise GeometryError("kabsch weights sum to zero")
    src_centre = (w @ src) / total
    dst_centre = (w @ dst) / total
    covariance = ((dst - dst_centre) * w[:, None]).T @ (src - src_centre)
    rotation = kabsch_rotation_batch(covariance)
    return rotation, dst_centre - rotation @ src_centre
