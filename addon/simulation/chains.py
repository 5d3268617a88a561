"""Exact distance projection for chains (ropes): one tridiagonal solve per projection.

A colour-batched Gauss-Seidel sweep on a chain is a red-black Jacobi: every link is corrected
against its neighbours' old positions, and a 20-link rope stretches by several percent at the usual
substep counts. On a chain, though, the XPBD system of all links at once,
``(J W J^T + alpha~) dlambda = -(C + alpha~ lambda)``, is tridiagonal: link ``k`` only shares a
particle with links ``k - 1`` and ``k + 1``. Solving it directly (Thomas algorithm, O(links)) is one
Newton step on the whole chain, so a single projection leaves only a second-order error, where a
sweep leaves a first-order one.

The world uses this when its distance constraints form chains only (every particle in at most two
links, no loop): ropes and chains. Anything else (cloth, soft bodies) keeps the coloured sweep.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

_TINY = 1e-12
#: A link still off its rest length by more than this fraction after a Newton step gets another one.
RELATIVE_TOLERANCE = 1e-3
MAX_NEWTON_STEPS = 4


def chain_paths(
    first: NDArray[np.int64], second: NDArray[np.int64]
) -> list[tuple[list[int], list[int]]] | None:
    """The distance graph as simple paths ``(particles, links)`` in order, or None if it is not one.

    ``particles[k]`` and ``particles[k + 1]`` are the two ends of link ``links[k]``. None when a
    particle has three or more links, a link repeats a pair, or the links close a loop.
    """
    neighbours: dict[int, list[tuple[int, int]]] = {}
    for index, (a, b) in enumerate(zip(first.tolist(), second.tolist(), strict=True)):
        neighbours.setdefault(a, []).append((b, index))
        neighbours.setdefault(b, []).append((a, index))
        if len(neighbours[a]) > 2 or len(neighbours[b]) > 2:
            return None
    seen_links: set[int] = set()
    paths = []
    for start, around in neighbours.items():
        if len(around) != 1 or any(link in seen_links for _, link in around):
            continue
        particles, links = [start], []
        previous_link = -1
        here = start
        while True:
            step = [(other, link) for other, link in neighbours[here] if link != previous_link]
            if not step:
                break
            other, link = step[0]
            if link in seen_links:
                return None
            seen_links.add(link)
            links.append(link)
            particles.append(other)
            previous_link, here = link, other
        paths.append((particles, links))
    if len(seen_links) != len(first):  # some links form loops (every particle of a loop has two links)
        return None
    if len({tuple(sorted(pair)) for pair in zip(first.tolist(), second.tolist(), strict=True)}) != len(first):
        return None
    return paths


class ChainSolver:
    """The chains of a world's distance constraints, solved exactly per projection.

    All chains are laid end to end into one sequence of particles; the gap between two chains is a
    dummy link (diagonal 1, right-hand side 0) so every link is a consecutive pair and the gathers
    are slices. Built once per constraint set; :meth:`prepare` caches the per-substep constants.
    """

    def __init__(self, paths: list[tuple[list[int], list[int]]], rest: NDArray[np.float64], compliance):
        nodes: list[int] = []
        links: list[int] = []  # world link of every consecutive pair, -1 for the gap between chains
        for particles, path_links in paths:
            if nodes:
                links.append(-1)
            nodes.extend(particles)
            links.extend(path_links)
        self.nodes = np.array(nodes, dtype=np.int64)
        # A rope built in order is its own node sequence: no gather or scatter at all.
        self.in_order = bool(np.array_equal(self.nodes, np.arange(len(nodes))))
        self.links = np.array(links, dtype=np.int64)
        real = self.links >= 0
        self.real = real
        safe = np.where(real, self.links, 0)
        self.safe_links = safe
        self.rest = np.where(real, np.asarray(rest, dtype=np.float64)[safe], 0.0)
        self.compliance = np.where(real, np.asarray(compliance, dtype=np.float64)[safe], 0.0)
        self._prepared: dict = {}

    def prepare(self, h: float, inverse_masses: NDArray[np.float64]) -> dict:
        """Constants of one substep length and one set of inverse masses."""
        key = (h, inverse_masses.tobytes())
        found = self._prepared.get(key)
        if found is not None:
            return found
        w_nodes = inverse_masses[self.nodes]
        alpha = self.compliance / (h * h)
        diagonal = w_nodes[:-1] + w_nodes[1:] + alpha
        # A gap between chains, or a link with both ends pinned and no compliance, cannot move:
        # it gets the row 1 * dlambda = 0.
        active = self.real & (diagonal > 0.0)
        shared = np.where(active[:-1] & active[1:], w_nodes[1:-1], 0.0)
        plan = {
            "alpha": alpha,
            "compliant": bool(np.any(alpha > 0)),
            "diagonal": np.where(active, diagonal, 1.0).tolist(),
            "rest": np.where(active, self.rest, 0.0),
            "active": active.astype(np.float64),
            "all_active": bool(np.all(active)),
            "negative_shared": -shared,
            "w_before": np.repeat(w_nodes[:-1], 3).reshape(-1, 3),
            "w_after": np.repeat(w_nodes[1:], 3).reshape(-1, 3),
            "tolerance": RELATIVE_TOLERANCE * np.where(active, self.rest, np.inf).min(initial=np.inf),
            "rest_squared": np.where(active, self.rest**2, 0.0),
            # Inactive links (chain gaps, pinned pairs) never count as off.
            "inverse_bound": np.where(
                active, 1.0 / np.maximum(2.0 * RELATIVE_TOLERANCE * self.rest**2, _TINY), 0.0
            ),
        }
        if len(self._prepared) > 8:
            self._prepared.clear()
        self._prepared[key] = plan
        return plan

    def solve(self, p: NDArray[np.float64], lambdas: NDArray[np.float64], plan: dict) -> None:
        """One projection of every chain, in place on positions ``p``; ``lambdas`` per world link.

        One Newton step is usually all it takes (the leftover is second order in how far the links
        turned this substep). When a chain is whipped so hard that a link is still off by more than
        ``RELATIVE_TOLERANCE`` afterwards, further Newton steps follow, at most ``MAX_NEWTON_STEPS``.
        """
        x = p if self.in_order else p.take(self.nodes, axis=0)
        compliant = plan["compliant"]
        if compliant:
            link_lambdas = lambdas[self.safe_links]
        delta = x[1:] - x[:-1]
        square = np.einsum("ij,ij->i", delta, delta)
        for newton_step in range(MAX_NEWTON_STEPS):
            if newton_step:
                delta = x[1:] - x[:-1]
                square = np.einsum("ij,ij->i", delta, delta)
                if not compliant:
                    # |L^2 - r^2| ~ 2 r |L - r|, scaled so 1 is the tolerance; a sum of squares <= 1
                    # bounds every link at once (conservatively) in one reduction, without roots.
                    deviation = square - plan["rest_squared"]
                    deviation *= plan["inverse_bound"]
                    if np.dot(deviation, deviation) <= 1.0:
                        break
            length = np.sqrt(square)
            residual = plan["rest"] - length  # -C on the active links
            if not plan["all_active"]:
                residual *= plan["active"]
            if compliant:
                residual -= plan["alpha"] * link_lambdas
                if newton_step and np.abs(residual).max() <= plan["tolerance"]:
                    break
            np.maximum(length, _TINY, out=length)
            delta /= length[:, None]  # unit directions from here on
            upper = plan["negative_shared"] * np.einsum("ij,ij->i", delta[:-1], delta[1:])
            change = _solve_tridiagonal(plan["diagonal"], upper.tolist(), residual.tolist())
            if compliant:
                link_lambdas += change
            delta *= change[:, None]  # impulses along the links
            x[1:] += delta * plan["w_after"]
            x[:-1] -= delta * plan["w_before"]
        if compliant:
            lambdas[self.links[self.real]] = link_lambdas[self.real]
        if not self.in_order:
            p[self.nodes] = x


def _solve_tridiagonal(diagonal: list[float], upper: list[float], rhs: list[float]) -> NDArray[np.float64]:
    """Symmetric tridiagonal ``A x = rhs`` (``A[k, k+1] = A[k+1, k] = upper[k]``), Thomas algorithm.

    Plain Python floats: the recurrence is sequential, and a float loop beats per-element numpy calls
    many times over. The matrix is ``J W J^T`` plus a non-negative diagonal, symmetric positive
    definite on every active link, so it needs no pivoting.
    """
    ratios = []
    forward = []
    ratio = 0.0
    value = 0.0
    below = 0.0
    for b, c, d in zip(diagonal, upper + [0.0], rhs, strict=True):
        inverse = 1.0 / (b - below * ratio)
        value = (d - below * value) * inverse
        ratio = c * inverse
        ratios.append(ratio)
        forward.append(value)
        below = c
    solution = forward
    following = 0.0
    for k in range(len(solution) - 1, -1, -1):
        following = solution[k] - ratios[k] * following
        solution[k] = following
    return np.array(solution)
