"""Follow a moving target frame by frame, each solve warm-started from the previous frame's pose."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .ccd import ccd_solution
from .chain import Chain, KinematicsError, default_tolerance, initial_rotations
from .fabrik import cone_limits, fabrik_solution

Array = NDArray[np.float64]


class Solver(StrEnum):
    CCD = "CCD"
    FABRIK = "FABRIK"


@dataclass(frozen=True, eq=False)
class TrackResult:
    """Per-frame local rotations ``(T, n, 4)`` (sign-continuous, ready for keys), joint positions
    ``(T, n + 1, 3)``, miss distances ``(T,)``, sweeps ``(T,)``, reachability ``(T,)`` and the
    angle between the last bone and the goal direction ``(T,)`` (zeros without directions)."""

    rotations: Array
    positions: Array
    errors: Array
    iterations: NDArray[np.int64]
    reachable: NDArray[np.bool_]
    direction_errors: Array

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
    seeded per frame, so a bake is reproducible. To continue a track in chunks, pass the last solved
    pose as ``rotations`` and ``seed`` advanced by the frames done: the result equals one call.
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
    tolerance = default_tolerance(chain, tolerance)
    cones = cone_limits(chain, cone_angles)
    pose = initial_rotations(chain, rotations)
    goal_rows = goals.tolist()
    aim_rows = None
    if aims is not None:
        lengths = np.linalg.norm(aims, axis=1, keepdims=True)
        if not np.all(np.isfinite(aims)) or np.any(lengths < 1e-9):
            raise KinematicsError("every direction must be a finite, non-zero vector")
        aim_rows = (aims / lengths).tolist()
    solutions = []
    for t in range(count):
        goal = tuple(goal_rows[t])
        direction = None if aim_rows is None else tuple(aim_rows[t])
        if solver is Solver.CCD:
            restarts = 4 if annealing else 0
            solution = ccd_solution(
                chain, goal, direction, pose, tolerance, iterations_per_frame, restarts, seed + t, 1e-3
            )
        else:
            solution = fabrik_solution(
                chain, goal, direction, pose, tolerance, iterations_per_frame, cones, 1e-3
            )
        # q and -q are one rotation, but keys interpolate component-wise: stay on one side.
        pose = [
            q
            if q[0] * p[0] + q[1] * p[1] + q[2] * p[2] + q[3] * p[3] >= 0.0
            else (-q[0], -q[1], -q[2], -q[3])
            for q, p in zip(solution.rotations, pose, strict=True)
        ]
        solutions.append((pose, solution))
    return TrackResult(
        rotations=np.array([p for p, _ in solutions], dtype=np.float64).reshape(count, chain.count, 4),
        positions=np.array([s.positions for _, s in solutions], dtype=np.float64).reshape(
            count, chain.count + 1, 3
        ),
        errors=np.array([s.error for _, s in solutions], dtype=np.float64),
        iterations=np.array([s.iterations for _, s in solutions], dtype=np.int64),
        reachable=np.array([s.reachable for _, s in solutions], dtype=bool),
        direction_errors=np.array([s.direction_error for _, s in solutions], dtype=np.float64),
    )
