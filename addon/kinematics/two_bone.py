"""Analytic two-bone arm: the elbow on the circle of possible elbows, placed by a swivel angle.

One implementation shared by the IK rigs and the juggling bodies. The swivel ("chicken wing"
angle, after gunswap) turns the elbow about the shoulder-hand axis away from the circle's lowest
point, which is where Juggling Lab hangs it.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .chain import Chain, IKResult, KinematicsError, check_target, forward_kinematics, is_reachable
from .fabrik import rotations_from_positions

_EPS = 1e-12


def elbow_positions(
    shoulders: ArrayLike,
    hands: ArrayLike,
    upper_length: float,
    forearm_length: float,
    chicken_wing: ArrayLike = 0.0,
    down: ArrayLike = (0.0, 0.0, -1.0),
    outward: ArrayLike | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Elbow positions for arms reaching from ``shoulders`` to ``hands`` (both ``(..., 3)``).

    ``chicken_wing`` (radians, broadcastable to the leading shape) swings the elbow about the
    shoulder-hand axis from its lowest point; positive swings towards ``outward`` (``(..., 3)``,
    e.g. the body's side for that arm), or by the right-hand rule about the axis if omitted.

    Returns ``(elbows, reachable)``. Where the hand is out of reach (too far, or too close for
    the bone lengths) the arm points straight at it, bone lengths kept, and ``reachable`` is False.
    Upper arm and forearm lengths are exact for every reachable sample.
    """
    s = np.asarray(shoulders, dtype=np.float64)
    h = np.asarray(hands, dtype=np.float64)
    a = float(upper_length)
    b = float(forearm_length)
    if a <= 0.0 or b <= 0.0:
        raise KinematicsError(f"bone lengths must be positive, got upper {a} and forearm {b}")
    s, h = np.broadcast_arrays(s, h)
    axis = h - s
    dist = np.linalg.norm(axis, axis=-1)
    u = axis / np.maximum(dist, _EPS)[..., None]
    # A hand exactly at the shoulder has no axis; any direction will do, pick "forward".
    u = np.where((dist < _EPS)[..., None], np.array([0.0, 1.0, 0.0]), u)

    lo, hi = abs(a - b), a + b
    reachable = (dist <= hi + 1e-9) & (dist >= lo - 1e-9)
    d = np.clip(dist, max(lo, _EPS), hi)

    along = (a * a - b * b + d * d) / (2.0 * d)
    radius = np.sqrt(np.maximum(a * a - along * along, 0.0))

    down_v = np.broadcast_to(np.asarray(down, dtype=np.float64), u.shape)
    w0 = down_v - np.sum(down_v * u, axis=-1, keepdims=True) * u
    w0_len = np.linalg.norm(w0, axis=-1)
    # Arm pointing straight down or up: the lowest point is undefined; fall back to any normal.
    fallback = np.cross(u, np.array([1.0, 0.0, 0.0]))
    fallback_bad = np.linalg.norm(fallback, axis=-1) < 1e-6
    fallback = np.where(fallback_bad[..., None], np.cross(u, np.array([0.0, 1.0, 0.0])), fallback)
    fallback /= np.linalg.norm(fallback, axis=-1, keepdims=True)
    w0 = np.where((w0_len < 1e-9)[..., None], fallback, w0 / np.maximum(w0_len, _EPS)[..., None])

    side = np.cross(u, w0)
    if outward is not None:
        out = np.broadcast_to(np.asarray(outward, dtype=np.float64), u.shape)
        flip = np.sum(side * out, axis=-1) < 0.0
        side = np.where(flip[..., None], -side, side)

    angle = np.asarray(chicken_wing, dtype=np.float64)[..., None]
    w = np.cos(angle) * w0 + np.sin(angle) * side
    elbows = s + along[..., None] * u + radius[..., None] * w
    return elbows, reachable


def solve_two_bone(
    chain: Chain,
    target: ArrayLike,
    chicken_wing: float = 0.0,
    down: ArrayLike = (0.0, 0.0, -1.0),
    outward: ArrayLike | None = None,
) -> IKResult:
    """Closed-form solve of a two-bone ``chain`` (upper arm, forearm) with the elbow placed by
    :func:`elbow_positions`; the bones' rotations follow from the three joint positions.

    The elbow circle ignores the chain's hinges and limits; a hinged elbow is then aimed as well
    as its axis allows, and ``error`` reports any miss that causes.
    """
    if chain.count != 2:
        raise KinematicsError(f"the analytic arm needs exactly 2 bones, the chain has {chain.count}")
    goal, _ = check_target(chain, target, None)
    hand = np.array(goal)
    elbow, _ = elbow_positions(
        np.zeros(3), hand, chain.lengths[0], chain.lengths[1], chicken_wing, down, outward
    )
    direction = hand / max(float(np.linalg.norm(hand)), _EPS)
    # Out of reach, elbow_positions points the arm at the hand; the hand ends where the arm does.
    reached = elbow + direction * chain.lengths[1] if not is_reachable(chain, goal, None) else hand
    rotations = rotations_from_positions(chain, np.stack([np.zeros(3), elbow, reached]))
    positions = forward_kinematics(chain, rotations)
    error = float(np.linalg.norm(positions[-1] - hand))
    return IKResult(
        rotations=rotations,
        positions=positions,
        error=error,
        iterations=1,
        reachable=is_reachable(chain, goal, None),
        converged=error <= 1e-6 * chain.reach,
    )
