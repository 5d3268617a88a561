"""Vectorised uniform-grid broad phase: every pair of points closer than a radius.

Points are sorted by cell key once; each of the 27 neighbour offsets is then a ``searchsorted``
range lookup, and the ranges are expanded into pairs without a Python loop over points.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

_OFFSETS = np.array([(x, y, z) for x in (-1, 0, 1) for y in (-1, 0, 1) for z in (-1, 0, 1)], dtype=np.int64)
# The own cell and the 13 neighbours "after" it: every pair of neighbouring cells is visited once, so
# half the range lookups of all 27 (a pair found from cell c towards c + o is the one c + o has towards c).
_HALF_OFFSETS = np.array([o for o in _OFFSETS.tolist() if tuple(o) >= (0, 0, 0)], dtype=np.int64)
# Cell coordinates are packed into one int64 key; 2^20 cells per axis is far beyond any scene here.
_BITS = 21
_MASK = (1 << _BITS) - 1


def _keys(cells: NDArray[np.int64]) -> NDArray[np.int64]:
    shifted = cells + (1 << (_BITS - 1))
    return (
        ((shifted[:, 0] & _MASK) << (2 * _BITS))
        | ((shifted[:, 1] & _MASK) << _BITS)
        | (shifted[:, 2] & _MASK)
    )


def _expand_ranges(starts: NDArray[np.int64], counts: NDArray[np.int64]) -> tuple[NDArray, NDArray]:
    """For ranges ``[start, start+count)``: (owner index per element, element value)."""
    total = int(counts.sum())
    owner = np.repeat(np.arange(len(counts)), counts)
    if total == 0:
        return owner, np.zeros(0, dtype=np.int64)
    first = np.cumsum(counts) - counts
    values = np.arange(total) - np.repeat(first, counts) + np.repeat(starts, counts)
    return owner, values


def close_pairs(points: NDArray[np.float64], radius: float) -> NDArray[np.int64]:
    """Index pairs ``(K, 2)`` with ``i < j`` and ``|p_i - p_j| < radius``.

    The lookups are made per occupied cell, not per point: each of the 14 neighbour offsets is one
    ``searchsorted`` of the occupied cells' keys, and every pair of neighbouring cells expands into
    its points' pairs at once, over the points sorted by cell (contiguous gathers). A crumpled
    2,562-vertex sheet: 8 ms a search instead of 23 with a lookup per point."""
    n = len(points)
    if n < 2 or radius <= 0:
        return np.zeros((0, 2), dtype=np.int64)
    cells = np.floor(points / radius).astype(np.int64)
    keys = _keys(cells)
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    starts = np.flatnonzero(np.concatenate(([True], sorted_keys[1:] != sorted_keys[:-1])))
    counts = np.diff(np.append(starts, n))
    occupied = cells[order[starts]]
    occupied_keys = sorted_keys[starts]
    first_cells, second_cells = [], []
    for offset in _HALF_OFFSETS:
        neighbour = _keys(occupied + offset)
        at = np.minimum(np.searchsorted(occupied_keys, neighbour), len(occupied_keys) - 1)
        found = occupied_keys[at] == neighbour
        first_cells.append(np.flatnonzero(found))
        second_cells.append(at[found])
    first, second = np.concatenate(first_cells), np.concatenate(second_cells)
    # Every (point of the first cell, point of the second) combination, numbered within its cell pair.
    # Gathers by take: fancy indexing cost as much again as the rest of a search.
    combinations = counts.take(first) * counts.take(second)
    owner, local = _expand_ranges(np.zeros(len(first), np.int64), combinations)
    along, across = np.divmod(local, counts.take(second).take(owner))
    i = starts.take(first).take(owner) + along
    j = starts.take(second).take(owner) + across
    keep = np.flatnonzero((first != second).take(owner) | (i < j))  # within a cell, each pair once
    i, j = i.take(keep), j.take(keep)
    ordered = points.take(order, axis=0)
    delta = ordered.take(i, axis=0)
    delta -= ordered.take(j, axis=0)
    close = np.einsum("ij,ij->i", delta, delta) < radius * radius
    i, j = order.take(i.compress(close)), order.take(j.compress(close))
    return np.stack((np.minimum(i, j), np.maximum(i, j)), axis=1)


def close_pairs_between_groups(
    points: NDArray[np.float64],
    radius: float,
    groups: NDArray[np.int64],
    active: NDArray[np.bool_] | None = None,
) -> NDArray[np.int64]:
    """Pairs closer than ``radius`` whose particles belong to different ``groups``.

    Bodies only meet where their bounding boxes overlap, so only the particles inside some overlap of two
    groups' boxes are hashed, all in one search: a pile pays neither for the particles far from any
    other body nor one search per touching pair of bodies. With ``active`` (per point), only pairs of
    groups of which at least one has an active point are searched: resting (sleeping) bodies are not
    searched against each other.
    """
    labels, member_of = np.unique(groups, return_inverse=True)
    if len(labels) < 2:
        return np.zeros((0, 2), dtype=np.int64)
    order = np.argsort(member_of, kind="stable")
    starts = np.searchsorted(member_of[order], np.arange(len(labels) + 1))
    low = np.minimum.reduceat(points[order], starts[:-1])
    high = np.maximum.reduceat(points[order], starts[:-1])
    overlap = np.all((low[:, None] - radius <= high[None]) & (low[None] - radius <= high[:, None]), axis=2)
    if active is not None:
        awake = np.bincount(member_of, weights=active, minlength=len(labels)) > 0
        overlap &= awake[:, None] | awake[None]
    first, second = np.nonzero(np.triu(overlap, k=1))
    if len(first) == 0:
        return np.zeros((0, 2), dtype=np.int64)
    # Only points inside some overlap of two groups' boxes can be close to another group's points; hash
    # them all at once (one search, whatever the number of touching bodies in a pile).
    box_low = np.maximum(low[first], low[second]) - radius
    box_high = np.minimum(high[first], high[second]) + radius
    # Only the points of groups in some overlapping pair can be inside an overlap.
    involved = np.zeros(len(labels), bool)
    involved[first] = involved[second] = True
    tested = np.flatnonzero(involved[member_of])
    near = points[tested]
    candidates = []
    for start in range(0, len(box_low), 256):  # (points x boxes) masks in bounded chunks
        lo, hi = box_low[start : start + 256], box_high[start : start + 256]
        touching = np.any(np.all((near[:, None] >= lo[None]) & (near[:, None] <= hi[None]), axis=2), axis=1)
        candidates.append(tested[touching])
    inside = np.unique(np.concatenate(candidates))
    if len(inside) < 2:
        return np.zeros((0, 2), dtype=np.int64)
    pairs = inside[close_pairs(points[inside], radius)]
    return pairs[member_of[pairs[:, 0]] != member_of[pairs[:, 1]]]


def pairs_near(points: NDArray[np.float64], queries: NDArray[np.int64], radius: float) -> NDArray[np.int64]:
    """Index pairs ``(K, 2)`` ``(q, j)`` of each point ``q`` of ``queries`` with every other point ``j``
    closer than ``radius`` (a pair of two queried points appears both ways): a search of only the points
    that moved, at a cost in proportion to their number."""
    if len(points) < 2 or len(queries) == 0 or radius <= 0:
        return np.zeros((0, 2), dtype=np.int64)
    n = len(points)
    cells = np.floor(points / radius).astype(np.int64)
    keys = _keys(cells)
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys.take(order)
    starts = np.flatnonzero(np.concatenate(([True], sorted_keys[1:] != sorted_keys[:-1])))
    counts = np.diff(np.append(starts, n))
    occupied_keys = sorted_keys.take(starts)
    # All 27 neighbour cells of every queried point in one lookup among the occupied cells (few points:
    # numpy's per-call cost would dominate 27 lookups). Gathers by take, not fancy indexing: half the
    # cost of a search, which self collision makes every few substeps of an impact.
    neighbour = _keys((cells.take(queries, axis=0)[:, None, :] + _OFFSETS[None]).reshape(-1, 3))
    at = np.searchsorted(occupied_keys, neighbour)
    np.minimum(at, len(occupied_keys) - 1, out=at)
    hit = np.flatnonzero(occupied_keys.take(at) == neighbour)
    at = at.take(hit)
    owner, slot = _expand_ranges(starts.take(at), counts.take(at))
    q = queries.take(hit.take(owner) // len(_OFFSETS))
    j = order.take(slot)
    delta = points.take(q, axis=0)
    delta -= points.take(order, axis=0).take(slot, axis=0)
    close = np.einsum("ij,ij->i", delta, delta) < radius * radius
    close &= q != j
    return np.stack((q.compress(close), j.compress(close)), axis=1)
