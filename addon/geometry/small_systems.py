"""Batches of small symmetric positive definite linear systems, solved in elementwise numpy.

LAPACK's batched solve goes through OpenBLAS, whose threads cost ~30x the work on 6 x 6 systems
when the machine is busy (measured 1.26 ms against 0.04 ms a call with one thread); Gaussian
elimination over the batch axis costs a dozen array operations and no thread hand-offs.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


def solve_spd_batch(matrices: NDArray[np.float64], right: NDArray[np.float64]) -> NDArray[np.float64]:
    """``solve(matrices, right)`` for ``(K, n, n)`` symmetric positive definite systems by elimination
    without pivoting; ``right`` is ``(K, n)`` or ``(K, n, c)``."""
    a = matrices.copy()
    b = right.copy()
    size = a.shape[1]
    column = (slice(None),) * 2 + (None,) * (b.ndim - 2)
    for k in range(size):
        factors = a[:, k + 1 :, k] / a[:, k, k, None]
        a[:, k + 1 :, k:] -= factors[:, :, None] * a[:, k, None, k:]
        b[:, k + 1 :] -= factors[column] * b[:, k, None]
    x = np.empty_like(b)
    for k in range(size - 1, -1, -1):
        rest = np.einsum("kj,kj...->k...", a[:, k, k + 1 :], x[:, k + 1 :])
        x[:, k] = (b[:, k] - rest) / a[:, k, k].reshape((-1,) + (1,) * (b.ndim - 2))
    return x


def solve_spd_small(matrix: list[list[float]], right: list[float]) -> list[float]:
    """:func:`solve_spd_batch` for one system held in Python floats, with the same operations in the
    same order (the back substitution's dot products summed in two interleaved partial sums, as numpy's
    einsum does), so the same bits: on two 6 x 6 systems a third of the cost, numpy's per-call
    overhead being most of it at that size. ``matrix`` is modified."""
    a, b = matrix, list(right)
    size = len(b)
    for k in range(size):
        row, pivot, bk = a[k], a[k][k], b[k]
        for i in range(k + 1, size):
            other = a[i]
            factor = other[k] / pivot
            for j in range(k, size):
                other[j] -= factor * row[j]
            b[i] -= factor * bk
    x = [0.0] * size
    for k in range(size - 1, -1, -1):
        row = a[k]
        even = odd = 0.0
        for j in range(k + 1, size, 2):
            even += row[j] * x[j]
        for j in range(k + 2, size, 2):
            odd += row[j] * x[j]
        x[k] = (b[k] - (even + odd)) / row[k]
    return x
