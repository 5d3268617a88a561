"""FABRIK (forwards and backwards reaching IK) with conical limits, after the seed's
"Constraints" post: a chain of distance constraints solved from the tip, then from the base.

The base-to-tip pass rebuilds the pose joint by joint as rotations (hinge, cone and Euler limits
applied as it goes), so the positions it returns are always the forward kinematics of valid
rotations: bone lengths hold exactly and nothing needs converting afterwards.
"""

from __future__ import annotations

import math

import numpy as np
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


def cone_limits(chain: Chain, cone_angles: ArrayLike | float | None) -> list[float | None]:
    if cone_angles is None:
        return [None] * chain.count
    cones = np.broadcast_to(np.asarray(cone_angles, dtype=np.float64), (chain.count,))
    if not np.all(np.isfinite(cones)) or np.any(cones < 0.0) or np.any(cones > math.pi):
        raise KinematicsError(f"cone_angles must lie in [0, pi] radians, got {cones.tolist()}")
    return [None if c >= math.pi else float(c) for c in cones]


def _aim_joint(
    layout: _ScalarChain, i: int, wanted: sq.Vec, cone: float | None, previous: sq.Quat
) -> sq.Quat:
    """The local rotation of joint ``i`` pointing its bone along ``wanted`` (joint frame)."""
    bone = layout.local_offsets[i]
    axis = layout.axes[i]
    if axis is not None:
        angle = sq.hinge_towards(axis, bone, wanted)
        q = sq.twist(previous, axis) if angle is None else sq.qaxis_angle(axis, angle)
    else:
        q = sq.qbetween(bone, wanted)
        if cone is not None and abs(q[0]) < math.cos(0.5 * cone):
            # Outside the cone around the rest direction: stop on its rim, in the same plane.
            plane = sq.unit(sq.cross(bone, wanted))
            if plane is None:
                bone_unit = sq.unit(bone)
                assert bone_unit is not None
                plane = sq.any_perpendicular(bone_unit)
            q = sq.qaxis_angle(plane, cone)
    limits = layout.limits[i]
    if limits is not None:
        q = sq.clamp_euler(q, limits)
    return q


def reach_forward(
    layout: _ScalarChain,
    rotations: list[sq.Quat],
    points: list[sq.Vec],
    cones: list[float | None],
    direction: sq.Vec | None = None,
) -> tuple[list[sq.Quat], list[sq.Vec], list[sq.Quat]]:
    """Base-to-tip pass: rotations aiming each bone at the next of ``points`` (n + 1 positions).

    With ``direction`` the last bone aims along it instead. Returns (rotations, positions, world
    orientations) of the resulting pose.
    """
    orientation = sq.IDENTITY
    position: sq.Vec = (0.0, 0.0, 0.0)
    new_rotations: list[sq.Quat] = []
    positions = [position]
    orientations: list[sq.Quat] = []
    last = len(rotations) - 1
    for i in range(len(rotations)):
        zero = sq.qmul(orientation, layout.joint_rests[i])
        wanted_world = direction if (direction is not None and i == last) else sq.sub(points[i + 1], position)
        planar_aim = direction is not None and i < last and layout.planar_tail[i] and layout.axes[i] is None
        if planar_aim:
            # The arm from here on will lie in the plane through this joint, the goal and the goal
            # direction: aim this bone within that plane too.
            normal = sq.unit(sq.cross(sq.sub(points[-1], position), direction))
            if normal is not None:
                wanted_world = sq.sub(wanted_world, sq.scale(normal, sq.dot(wanted_world, normal)))
        q = _aim_joint(layout, i, sq.qrot(sq.qconj(zero), wanted_world), cones[i], rotations[i])
        if layout.axes[i] is None and i < last and layout.axes[i + 1] is not None:
            # A planar remainder must contain the goal; otherwise aim the next hinge at the next point.
            if layout.planar_tail[i] and direction is not None:
                along = direction  # the plane must hold the goal direction too
            else:
                along = sq.sub(points[-1] if layout.planar_tail[i] else points[i + 2], points[i + 1])
            q = twist_for_hinge(layout, i, q, sq.qrot(sq.qconj(zero), along))
        orientation = sq.qmul(zero, q)
        position = sq.add(position, sq.qrot(orientation, layout.local_offsets[i]))
        new_rotations.append(q)
        positions.append(position)
        orientations.append(orientation)
    return new_rotations, positions, orientations


def _reach_backward(
    layout: _ScalarChain, positions: list[sq.Vec], goal: sq.Vec, direction: sq.Vec | None
) -> list[sq.Vec]:
    n = len(positions) - 1
    points = list(positions)
    points[n] = goal
    first = n - 1
    if direction is not None:
        points[n - 1] = sq.sub(goal, sq.scale(direction, layout.lengths[-1]))
        first = n - 2
    for i in range(first, -1, -1):
        # Pull joint i onto the sphere around joint i + 1 (the seed's ConstrainDistance).
        toward = sq.unit(sq.sub(points[i], points[i + 1])) or sq.unit(sq.sub(positions[i], positions[i + 1]))
        points[i] = sq.add(points[i + 1], sq.scale(toward or (0.0, 0.0, -1.0), layout.lengths[i]))
    return points


def _bend(layout: _ScalarChain, rotations: list[sq.Quat], angle: float) -> list[sq.Quat]:
    """Every joint turned by ``angle`` (alternating sign) about an axis across its bone."""
    bent = []
    for i, q in enumerate(rotations):
        bone = sq.unit(layout.local_offsets[i])
        assert bone is not None
        axis = layout.axes[i] or sq.any_perpendicular(bone)
        turned = sq.qmul(q, sq.qaxis_angle(axis, angle if i % 2 == 0 else -angle))
        bent.append(constrain_joint(layout, i, turned))
    return bent


def _errors(layout: _ScalarChain, positions, orientations, goal, direction) -> tuple[float, float]:
    error = sq.norm(sq.sub(positions[-1], goal))
    if direction is None:
        return error, 0.0
    tip = sq.unit(sq.qrot(orientations[-1], layout.local_offsets[-1]))
    assert tip is not None
    return error, math.acos(max(-1.0, min(1.0, sq.dot(tip, direction))))


def solve_fabrik(
    chain: Chain,
    target: ArrayLike,
    rotations: ArrayLike | None = None,
    direction: ArrayLike | None = None,
    tolerance: float | None = None,
    max_iterations: int = 100,
    cone_angles: ArrayLike | float | None = None,
    direction_tolerance: float = 1e-3,
) -> IKResult:
    """Solve ``chain`` towards ``target`` by FABRIK; arguments as :func:`solve_ccd`.

    ``cone_angles``: half-angle (radians, per joint or one for all) of the cone around each
    bone's rest direction relative to its parent that the bone must stay inside. Hinge axes and
    Euler limits of the chain apply too. Ball joints come out with no twist.
    """
    if max_iterations < 1:
        raise KinematicsError(f"max_iterations must be >= 1, got {max_iterations}")
    goal, unit_direction = check_target(chain, target, direction)
    start = initial_rotations(chain, rotations)
    tolerance = default_tolerance(chain, tolerance)
    cones = cone_limits(chain, cone_angles)
    return fabrik_solution(
        chain, goal, unit_direction, start, tolerance, max_iterations, cones, direction_tolerance
    ).result()


def fabrik_solution(
    chain: Chain,
    goal: sq.Vec,
    unit_direction: sq.Vec | None,
    start: list[sq.Quat],
    tolerance: float,
    max_iterations: int,
    cones: list[float | None],
    direction_tolerance: float,
) -> Solution:
    """:func:`solve_fabrik` on checked tuples (a bake calls this once per frame).

    A warm start that stalls short of a reachable goal is retried once from the rest pose:
    tracking can carry a pose into a fold that FABRIK does not leave, which a cold start avoids.
    """
    layout = chain.scalar_layout()
    reachable = is_reachable(chain, goal, unit_direction)
    limits = (tolerance, direction_tolerance, max_iterations)
    solved = _fabrik_attempt(layout, goal, unit_direction, start, limits, cones, reachable)
    iterations = solved[-1]
    converged = solved[2] <= tolerance and solved[3] <= direction_tolerance
    if not converged and reachable and any(q != sq.IDENTITY for q in start):
        rest = [sq.IDENTITY] * len(start)
        fresh = _fabrik_attempt(layout, goal, unit_direction, rest, limits, cones, reachable)
        iterations += fresh[-1]
        last = layout.lengths[-1]
        if fresh[2] + fresh[3] * last < solved[2] + solved[3] * last:
            solved = fresh
            converged = solved[2] <= tolerance and solved[3] <= direction_tolerance
    rotations, positions, error, direction_error, _ = solved
    return Solution(rotations, positions, error, direction_error, iterations, reachable, converged)


def _fabrik_attempt(
    layout: _ScalarChain,
    goal: sq.Vec,
    unit_direction: sq.Vec | None,
    start: list[sq.Quat],
    limits: tuple[float, float, int],
    cones: list[float | None],
    reachable: bool,
) -> tuple[list[sq.Quat], list[sq.Vec], float, float, int]:
    tolerance, direction_tolerance, max_iterations = limits
    rotations_now = start
    orientations, positions = scalar_pose(layout, rotations_now)
    error, direction_error = _errors(layout, positions, orientations, goal, unit_direction)
    last = layout.lengths[-1]
    best = (error + direction_error * last, rotations_now, positions, error, direction_error)
    iterations = 0
    kicks = 0
    idle = 0
    while iterations < max_iterations and not (error <= tolerance and direction_error <= direction_tolerance):
        points = _reach_backward(layout, positions, goal, unit_direction)
        rotations_now, positions, orientations = reach_forward(
            layout, rotations_now, points, cones, unit_direction
        )
        iterations += 1
        error, direction_error = _errors(layout, positions, orientations, goal, unit_direction)
        score = error + direction_error * last
        if score < best[0] - 1e-3 * tolerance:
            idle = 0
        else:
            idle += 1  # FABRIK with hinges is not monotonic: allow a few steps without progress
        if score < best[0]:
            best = (score, rotations_now, positions, error, direction_error)
        if idle >= 3:
            if not reachable or kicks >= 2:
                break  # stretched out of reach, or held by limits
            # A chain lying on the line through the target stays on it under FABRIK; bend it.
            kicks += 1
            idle = 0
            rotations_now = _bend(layout, rotations_now, 0.2 * kicks)
            orientations, positions = scalar_pose(layout, rotations_now)
            error, direction_error = _errors(layout, positions, orientations, goal, unit_direction)
    _, rotations_now, positions, error, direction_error = best
    return rotations_now, positions, error, direction_error, iterations


def rotations_from_positions(chain: Chain, positions: ArrayLike) -> np.ndarray:
    """Local rotations ``(n, 4)`` whose pose follows the joint ``positions (n + 1, 3)`` as closely
    as the hinges and limits allow (each bone aimed at the next point, no twist on ball joints)."""
    points = np.asarray(positions, dtype=np.float64)
    if points.shape != (chain.count + 1, 3) or not np.all(np.isfinite(points)):
        raise KinematicsError(f"positions must be {chain.count + 1} finite points, got shape {points.shape}")
    layout = chain.scalar_layout()
    as_tuples = [tuple(float(v) for v in p) for p in points - points[0]]
    rotations, _, _ = reach_forward(layout, [sq.IDENTITY] * chain.count, as_tuples, cone_limits(chain, None))  # type: ignore[arg-type]
    return np.array(rotations, dtype=np.float64)
