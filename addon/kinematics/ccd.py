"""Quaternion cyclic coordinate descent (CCD-IK) with hinges, Euler limits, a 5-DoF end-effector
direction and simulated-annealing restarts (after the seed's "Inverse Kinematics" post).

Each sweep goes from the tip to the base and turns each joint so that the effector points at the
goal, then rotates the joint's hinge axis back onto its parent's and clamps its Euler angles.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from numpy.typing import ArrayLike

from ..quaternions import scalar as sq
from .chain import (
    Chain,
    IKResult,
    KinematicsError,
    Solution,
    _ScalarChain,
    check_target,
    constrain_joint,
    default_tolerance,
    initial_rotations,
    is_reachable,
    scalar_pose,
    twist_for_hinge,
)


@dataclass
class _Attempt:
    rotations: list[sq.Quat]
    positions: list[sq.Vec]
    error: float
    direction_error: float
    iterations: int

    def score(self, last_length: float) -> float:
        # One number to compare poses: a direction miss weighs like the tip bone's arc length.
        return self.error + self.direction_error * last_length


def _measure(
    layout: _ScalarChain,
    orientations: list[sq.Quat],
    positions: list[sq.Vec],
    goal: sq.Vec,
    direction: sq.Vec | None,
) -> tuple[float, float]:
    error = sq.norm(sq.sub(positions[-1], goal))
    direction_error = 0.0
    if direction is not None:
        tip = sq.unit(sq.qrot(orientations[-1], layout.local_offsets[-1]))
        assert tip is not None  # bones have non-zero length
        direction_error = math.acos(max(-1.0, min(1.0, sq.dot(tip, direction))))
    return error, direction_error


def _sweep(
    layout: _ScalarChain,
    rotations: list[sq.Quat],
    orientations: list[sq.Quat],
    positions: list[sq.Vec],
    goal: sq.Vec,
    direction: sq.Vec | None,
) -> None:
    """One tip-to-base CCD pass from the pose (``orientations``, ``positions``), updating
    ``rotations`` in place."""
    n = len(rotations)
    effector = positions[n]
    wrist = positions[n - 1]
    wrist_goal = goal
    tip_direction: sq.Vec = (0.0, 0.0, 0.0)
    if direction is not None:
        wrist_goal = sq.sub(goal, sq.scale(direction, layout.lengths[-1]))
        tip_direction = sq.qrot(orientations[n - 1], layout.local_offsets[n - 1])
    for i in range(n - 1, -1, -1):
        # Ancestors do not move during a tip-to-base sweep, so their orientations stay valid.
        parent = orientations[i - 1] if i > 0 else sq.IDENTITY
        zero = parent if layout.rest_is_identity[i] else sq.qmul(parent, layout.joint_rests[i])
        to_local = sq.qconj(zero)
        p = positions[i]
        # Work in the joint's frame: the step is a local rotation, limits apply to it directly.
        effector_local = sq.qrot(to_local, sq.sub(effector, p))
        if direction is None:
            source, wanted = effector_local, sq.qrot(to_local, sq.sub(goal, p))
        elif i == n - 1:
            source, wanted = sq.qrot(to_local, tip_direction), sq.qrot(to_local, direction)
        else:
            source, wanted = sq.qrot(to_local, sq.sub(wrist, p)), sq.qrot(to_local, sq.sub(wrist_goal, p))
        old = rotations[i]
        step = sq.qbetween(source, wanted)
        new = sq.qnormalize(sq.qmul(step, old))
        constrained = layout.constrained[i]
        if direction is not None and i < n - 1 and layout.planar_tail[i] and layout.axes[i] is None:
            # The hinged rest of the arm moves in one plane, which must hold the goal direction.
            new = twist_for_hinge(layout, i, new, sq.qrot(to_local, direction))
            constrained = True
        if constrained:
            new = constrain_joint(layout, i, new)
            step = sq.qmul(new, sq.qconj(old))
        rotations[i] = new
        reach = sq.norm(effector_local)
        to_goal = sq.sub(goal, p)
        distance = sq.norm(to_goal)
        if direction is None and not constrained and distance > 1e-12:
            # A free joint puts the effector exactly on its ray to the goal: no rotation needed.
            effector = sq.add(p, sq.scale(to_goal, reach / distance))
        else:
            # The subtree turns rigidly about joint i by the (constrained) step, seen from the joint.
            effector = sq.add(p, sq.qrot(zero, sq.qrot(step, effector_local)))
        if direction is not None:
            wrist = sq.add(p, sq.qrot(zero, sq.qrot(step, sq.qrot(to_local, sq.sub(wrist, p)))))
            tip_direction = sq.qrot(zero, sq.qrot(step, sq.qrot(to_local, tip_direction)))


def _attempt(
    layout: _ScalarChain,
    rotations: list[sq.Quat],
    goal: sq.Vec,
    direction: sq.Vec | None,
    tolerance: float,
    direction_tolerance: float,
    max_iterations: int,
) -> _Attempt:
    rotations = list(rotations)
    orientations, positions = scalar_pose(layout, rotations)
    error, direction_error = _measure(layout, orientations, positions, goal, direction)
    last = layout.lengths[-1]
    iterations = 0
    while iterations < max_iterations and not (error <= tolerance and direction_error <= direction_tolerance):
        previous = error + direction_error * last
        _sweep(layout, rotations, orientations, positions, goal, direction)
        iterations += 1
        orientations, positions = scalar_pose(layout, rotations)
        error, direction_error = _measure(layout, orientations, positions, goal, direction)
        if previous - (error + direction_error * last) < 1e-3 * tolerance:
            break  # stalled: at a limit, stretched out of reach, or in a local minimum
    return _Attempt(rotations, positions, error, direction_error, iterations)


def _random_turn(rng: random.Random, max_angle: float) -> sq.Quat:
    axis = sq.unit((rng.gauss(0.0, 1.0), rng.gauss(0.0, 1.0), rng.gauss(0.0, 1.0))) or (1.0, 0.0, 0.0)
    return sq.qaxis_angle(axis, max_angle * rng.random())


def solve_ccd(
    chain: Chain,
    target: ArrayLike,
    rotations: ArrayLike | None = None,
    direction: ArrayLike | None = None,
    tolerance: float | None = None,
    max_iterations: int = 100,
    restarts: int = 8,
    seed: int = 0,
    direction_tolerance: float = 1e-3,
) -> IKResult:
    """Solve ``chain`` towards ``target`` (base frame) by quaternion CCD.

    ``rotations``: starting local rotations ``(n, 4)`` (warm start; default the rest pose).
    ``direction``: optional goal direction of the last bone (5-DoF). ``tolerance``: metres
    (default 1e-4 of the chain length). ``max_iterations``: sweeps per attempt; ``restarts``:
    simulated-annealing restarts tried only when an attempt stalls short of a reachable target
    (each perturbs the current pose by random turns that shrink with the temperature, accepts
    worse results with the Metropolis probability and keeps the best pose). Deterministic for a
    given ``seed``. One sweep per call (``max_iterations=1, restarts=0``) animates convergence.
    """
    if max_iterations < 1 or restarts < 0:
        raise KinematicsError(
            f"max_iterations must be >= 1 and restarts >= 0, got {max_iterations}, {restarts}"
        )
    goal, unit_direction = check_target(chain, target, direction)
    start = initial_rotations(chain, rotations)
    tolerance = default_tolerance(chain, tolerance)
    return ccd_solution(
        chain, goal, unit_direction, start, tolerance, max_iterations, restarts, seed, direction_tolerance
    ).result()


def ccd_solution(
    chain: Chain,
    goal: sq.Vec,
    unit_direction: sq.Vec | None,
    start: list[sq.Quat],
    tolerance: float,
    max_iterations: int,
    restarts: int,
    seed: int,
    direction_tolerance: float,
) -> Solution:
    """:func:`solve_ccd` on checked tuples (a bake calls this once per frame)."""
    layout = chain.scalar_layout()
    reachable = is_reachable(chain, goal, unit_direction)

    def solved(a: _Attempt) -> bool:
        return a.error <= tolerance and a.direction_error <= direction_tolerance

    current = _attempt(layout, start, goal, unit_direction, tolerance, direction_tolerance, max_iterations)
    total = current.iterations
    if not solved(current) and reachable and restarts > 0 and any(q != sq.IDENTITY for q in start):
        # A warm start (the previous frame) can sit in a fold; the rest pose is the first restart.
        fresh = _attempt(
            layout,
            [sq.IDENTITY] * len(start),
            goal,
            unit_direction,
            tolerance,
            direction_tolerance,
            max_iterations,
        )
        total += fresh.iterations
        if fresh.score(layout.lengths[-1]) < current.score(layout.lengths[-1]):
            current = fresh
    best = current
    last = layout.lengths[-1]
    rng = random.Random(seed)
    for k in range(restarts if reachable else 0):
        if solved(best):
            break
        temperature = 1.0 - k / restarts
        kicked = [
            constrain_joint(layout, i, sq.qnormalize(sq.qmul(_random_turn(rng, temperature * math.pi), q)))
            for i, q in enumerate(current.rotations)
        ]
        candidate = _attempt(
            layout, kicked, goal, unit_direction, tolerance, direction_tolerance, max_iterations
        )
        total += candidate.iterations
        if candidate.score(last) < best.score(last):
            best = candidate
        worse_by = candidate.score(last) - current.score(last)
        if worse_by < 0.0 or rng.random() < math.exp(-worse_by / (temperature * 0.05 * chain.reach)):
            current = candidate
    return Solution(
        best.rotations, best.positions, best.error, best.direction_error, total, reachable, solved(best)
    )
