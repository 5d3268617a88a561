"""Follow a moving target frame by frame, each solve warm-started from the previous frame's pose."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .ccd import solve_ccd
from .chain import Chain, KinematicsError
from .fabrik import solve_fabrik

Array = NDArray[np.float64]


class Solver(StrEnum):
    CCD = "CCD"
    FABRIK = "FABRIK"


@dataclass(frozen=True, eq=False)
class TrackResult:
    """Per-frame local rotations ``(T, n, 4)`` (sign-continuous, ready for keys), joint positions
    ``(T, n + 1, 3)``, miss distances ``(T,)``, sweeps ``(T,)`` and reachability ``(T,)``."""

    rotations: Array
    positions: Array
    errors: Array
    iterations: NDArray[np.int64]
    reachable: NDArray[np.bool_]

    @property
    def worst_error(self) -> float:
        return float(self.errors.max()) if len(self.errors) else 0.0


def track(
    chain: Chain,
    targets: ArrayLike,
    solver: Solver | str = Solver.CCD,
    rotations: ArrayLike | None = None,
    directions: ArrayLike | None = None,
    tolerance: float | None = None,
    iterations_per_frame: int = 50,
    annealing: bool = True,
    cone_angles: ArrayLike | float | None = None,
    seed: int = 0,
) -> TrackResult:
    """Solve ``chain`` for every row of ``targets (T, 3)`` in order (optionally ``directions (T, 3)``).

    ``iterations_per_frame=1`` without annealing is the seed's "animated convergence": the arm
    visibly catches up with a fast target over several frames. Annealing restarts (CCD only) are
    seeded per frame, so a bake is reproducible.
    """
    try:
        solver = Solver(solver)
    except ValueError as exc:
        raise KinematicsError(f"solver must be CCD or FABRIK, got {solver!r}") from exc
    goals = np.asarray(targets, dtype=np.float64)
    if goals.ndim != 2 or goals.shape[1] != 3:
        raise KinematicsError(f"targets must have shape (T, 3), got {goals.shape}")
    if not np.all(np.isfinite(goals)):
        bad = int(np.argwhere(~np.isfinite(goals))[0, 0])
        raise KinematicsError(f"target of frame index {bad} is NaN or infinite")
    aims = None
    if directions is not None:
        aims = np.asarray(directions, dtype=np.float64)
        if aims.shape != goals.shape:
            raise KinematicsError(f"directions must match targets {goals.shape}, got {aims.shape}")
    if iterations_per_frame < 1:
        raise KinematicsError(f"iterations per frame must be >= 1, got {iterations_per_frame}")

    count = len(goals)
    out_rotations = np.empty((count, chain.count, 4))
    out_positions = np.empty((count, chain.count + 1, 3))
    errors = np.empty(count)
    iterations = np.empty(count, dtype=np.int64)
    reachable = np.empty(count, dtype=bool)
    pose = None if rotations is None else np.asarray(rotations, dtype=np.float64)
    for t in range(count):
        direction = None if aims is None else aims[t]
        if solver is Solver.CCD:
            result = solve_ccd(
                chain,
                goals[t],
                pose,
                direction,
                tolerance,
                iterations_per_frame,
                restarts=4 if annealing else 0,
                seed=seed + t,
            )
        else:
            result = solve_fabrik(
                chain, goals[t], pose, direction, tolerance, iterations_per_frame, cone_angles
            )
        q = result.rotations
        if pose is not None:
            # q and -q are one rotation, but keys interpolate component-wise: stay on one side.
            q = np.where(np.sum(q * pose, axis=1, keepdims=True) < 0.0, -q, q)
        out_rotations[t] = q
        out_positions[t] = result.positions
        errors[t] = result.error
        iterations[t] = result.iterations
        reachable[t] = result.reachable
        pose = q
    return TrackResult(out_rotations, out_positions, errors, iterations, reachable)
