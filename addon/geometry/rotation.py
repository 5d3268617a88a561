"""Best-fit rotations: Müller et al. 2016 ("A robust method to extract the rotational part of
deformations") iterated on quaternions, and the Kabsch rigid fit built on it.

Müller's iteration is used instead of the plain polar square root ``A (A^T A)^-1/2`` because the
latter returns reflections for inverted matrices and fails for flattened ones (physics note 4.2).
Kabsch itself uses the closed-form SVD with the determinant fix: it is exact on cold starts,
where a few Müller iterations are not.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..quaternions import from_matrix as matrix_to_quaternion
from ..quaternions import multiply as quaternion_multiply
from ..quaternions import to_matrix as quaternion_to_matrix
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


def polar_rotation_batch(
    matrices: NDArray[np.float64],
    initial: NDArray[np.float64] | None = None,
    iterations: int = 40,
) -> NDArray[np.float64]:
    """Batched Müller-2016 rotation extraction: quaternions ``(..., 4)`` of ``(..., 3, 3)`` matrices.

    Each iteration applies the average "torque" between the current basis and the input columns
    (the seed's Orthonormalization post). Warm starts (``initial``) converge in 1-3 iterations.
    """
    a = np.asarray(matrices, dtype=np.float64)
    if initial is None:
        q = np.zeros(a.shape[:-2] + (4,))
        q[..., 0] = 1.0
    else:
        q = np.array(np.broadcast_to(np.asarray(initial, dtype=np.float64), a.shape[:-2] + (4,)))
        q /= np.maximum(np.linalg.norm(q, axis=-1, keepdims=True), _TINY)
    columns = np.swapaxes(a, -1, -2)  # columns[..., i, :] is the input basis vector i
    for _ in range(int(iterations)):
        basis = np.swapaxes(quaternion_to_matrix(q), -1, -2)
        torque = np.cross(basis, columns).sum(axis=-2)
        alignment = np.abs(np.einsum("...ij,...ij->...", basis, columns)) + 1e-9
        omega = torque / alignment[..., None]
        angle = np.linalg.norm(omega, axis=-1)
        if not np.any(angle > _OMEGA_TOLERANCE):
            break
        axis = omega / np.maximum(angle, _TINY)[..., None]
        half = 0.5 * angle
        step = np.concatenate((np.cos(half)[..., None], np.sin(half)[..., None] * axis), axis=-1)
        q = quaternion_multiply(step, q)
        q /= np.linalg.norm(q, axis=-1, keepdims=True)
    return q


def polar_rotation(
    M: ArrayLike, initial: ArrayLike | None = None, iterations: int = 40
) -> NDArray[np.float64]:
    """The rotation part of a 3x3 matrix as a unit quaternion ``(4,)``, ``w`` first.

    The result maximises ``trace(R^T M)`` over proper rotations (the orthogonal factor of the polar
    decomposition when ``det M > 0``). ``initial`` (a quaternion, e.g. last frame's) warm-starts the
    iteration; without it the search starts from the identity and runs up to ``iterations`` steps.
    Also accepts a stack ``(..., 3, 3)`` and returns ``(..., 4)``.
    """
    a = np.asarray(M, dtype=np.float64)
    if a.shape[-2:] != (3, 3):
        raise GeometryError(f"polar_rotation needs 3x3 matrices, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise GeometryError("polar_rotation got a matrix containing NaN or infinity")
    if iterations < 1:
        raise GeometryError(f"polar_rotation needs at least 1 iteration, got {iterations}")
    init = None if initial is None else np.asarray(initial, dtype=np.float64)
    if init is not None and (init.shape[-1] != 4 or not np.all(np.isfinite(init))):
        raise GeometryError("polar_rotation initial must be a finite quaternion (w, x, y, z)")
    q = polar_rotation_batch(a, init, iterations)
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
