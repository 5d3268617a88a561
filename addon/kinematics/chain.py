"""A serial chain of joints: its rest shape, hinge axes and limits, and forward kinematics.

Conventions: joint ``i`` sits at the head of bone ``i``; its local rotation ``q_i`` (unit
quaternion, ``w`` first) is expressed in the joint's own rest frame and applied on top of the
parent's pose, so the joint's world orientation is ``O_i = O_(i-1) * C_i * q_i`` with ``C_i`` the
rest orientation of joint ``i`` relative to its parent. Joint positions start at the origin and
``p_(i+1) = p_i + O_i * d_i`` where ``d_i`` is the bone vector in the joint's own frame.

With ``rest_orientations`` left ``None`` every joint frame coincides with the chain's base frame
at rest, which is the plain ``Chain(offsets, axes, limits)`` of the scripting API. Blender bones
pass their rest orientations (``bone.matrix_local``), so that hinge axes and Euler limits are in
each bone's own axes, exactly like Blender's IK limits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import quaternions as qt
from ..errors import ProcAnimError
from ..quaternions import scalar as sq

Array = NDArray[np.float64]


class KinematicsError(ProcAnimError, ValueError):
    """A chain, target or pose that cannot be solved; the message says which value is wrong."""


#: Coordinates (metres) beyond this overflow once squared in the solvers, or lose every digit of precision.
MAX_MAGNITUDE = 1e9


def _finite(name: str, value: ArrayLike, shape: tuple[int, ...]) -> Array:
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise KinematicsError(f"{name} must be numbers, got {value!r}") from exc
    if array.shape != shape:
        raise KinematicsError(f"{name} must have shape {shape}, got {array.shape}")
    if not np.all(np.isfinite(array)):
        raise KinematicsError(f"{name} contains NaN or infinity: {array.tolist()}")
    if array.size and float(np.max(np.abs(array))) > MAX_MAGNITUDE:
        raise KinematicsError(f"{name} has a value beyond {MAX_MAGNITUDE:g}: {array.tolist()}")
    return array


@dataclass(frozen=True, eq=False)
class Chain:
    """Bone vectors ``offsets (n, 3)`` at rest in the chain's base frame.

    ``axes (n, 3)``: hinge axis of each joint in its own rest frame, a zero row for a ball joint,
    or ``None`` for all ball joints. ``limits (n, 3, 2)``: XYZ Euler min/max (radians) of each
    joint's local rotation, or ``None``; use -pi / pi for a free axis. ``rest_orientations
    (n, 4)``: each joint frame's rest orientation in the base frame (``None``: all identity).
    """

    offsets: Array
    axes: Array | None = None
    limits: Array | None = None
    rest_orientations: Array | None = None

    count: int = field(init=False)
    lengths: Array = field(init=False)
    reach: float = field(init=False)
    inner_reach: float = field(init=False)
    local_offsets: Array = field(init=False)
    joint_rests: Array = field(init=False)
    hinge: NDArray[np.bool_] = field(init=False)
    limited: NDArray[np.bool_] = field(init=False)

    def __post_init__(self) -> None:
        offsets = np.asarray(self.offsets, dtype=np.float64)
        if offsets.ndim != 2 or offsets.shape[1] != 3 or offsets.shape[0] < 1:
            raise KinematicsError(f"offsets must have shape (n, 3) with n >= 1, got {offsets.shape}")
        n = offsets.shape[0]
        offsets = _finite("offsets", offsets, (n, 3))
        lengths = np.linalg.norm(offsets, axis=1)
        if np.any(lengths < 1e-9):
            raise KinematicsError(
                f"bone {int(np.argmin(lengths))} has zero length; every offset must be non-zero"
            )

        if self.axes is None:
            axes = np.zeros((n, 3))
        else:
            axes = _finite("axes", self.axes, (n, 3))
        axis_lengths = np.linalg.norm(axes, axis=1)
        hinge = axis_lengths > 1e-9
        axes = np.where(hinge[:, None], axes / np.maximum(axis_lengths, 1e-12)[:, None], 0.0)

        if self.limits is None:
            limits = np.tile(np.array([-math.pi, math.pi]), (n, 3, 1))
        else:
            limits = np.asarray(self.limits, dtype=np.float64)
            if limits.shape != (n, 3, 2) or np.any(np.isnan(limits)):
                raise KinematicsError(f"limits must be (n, 3, 2) = ({n}, 3, 2) numbers, got {limits.shape}")
            bad = np.argwhere(limits[..., 0] > limits[..., 1])
            if len(bad):
                joint, axis = (int(i) for i in bad[0])
                raise KinematicsError(
                    f"joint {joint} axis {'XYZ'[axis]}: minimum {limits[joint, axis, 0]:.4g} exceeds "
                    f"maximum {limits[joint, axis, 1]:.4g}"
                )
            limits = np.clip(limits, -math.pi, math.pi)
        limited = np.any((limits[..., 0] > -math.pi) | (limits[..., 1] < math.pi), axis=1)

        if self.rest_orientations is None:
            rests = qt.identity((n,))
        else:
            rests = _finite("rest_orientations", self.rest_orientations, (n, 4))
            if np.any(np.abs(np.linalg.norm(rests, axis=1) - 1.0) > 1e-3):
                raise KinematicsError("rest_orientations must be unit quaternions (w, x, y, z)")
            rests = qt.normalize(rests)
        parents = np.concatenate([qt.identity((1,)), rests[:-1]])

        object.__setattr__(self, "offsets", offsets)
        object.__setattr__(self, "axes", axes if np.any(hinge) else None)
        object.__setattr__(self, "limits", limits if np.any(limited) else None)
        object.__setattr__(self, "rest_orientations", rests)
        object.__setattr__(self, "count", n)
        object.__setattr__(self, "lengths", lengths)
        object.__setattr__(self, "reach", float(lengths.sum()))
        object.__setattr__(self, "inner_reach", float(max(0.0, 2.0 * lengths.max() - lengths.sum())))
        object.__setattr__(self, "local_offsets", qt.rotate(qt.conjugate(rests), offsets))
        object.__setattr__(self, "joint_rests", qt.multiply(qt.conjugate(parents), rests))
        object.__setattr__(self, "hinge", hinge)
        object.__setattr__(self, "limited", limited)
        object.__setattr__(self, "_axes_all", axes)
        object.__setattr__(self, "_limits_all", limits)

    # Tuples for the scalar inner loops, built once per chain.
    def scalar_layout(self) -> _ScalarChain:
        cached = self.__dict__.get("_scalar_layout")
        if cached is None:
            cached = _ScalarChain(
                local_offsets=[tuple(map(float, d)) for d in self.local_offsets],
                joint_rests=[tuple(map(float, c)) for c in self.joint_rests],
                lengths=[float(v) for v in self.lengths],
                axes=[
                    tuple(map(float, a)) if h else None
                    for a, h in zip(self._axes_all, self.hinge, strict=True)
                ],
                limits=[
                    tuple((float(lo), float(hi)) for lo, hi in lim) if lmt else None
                    for lim, lmt in zip(self._limits_all, self.limited, strict=True)
                ],
                planar_tail=self._planar_tails(),
                rest_is_identity=[
                    bool(np.allclose(c, (1.0, 0.0, 0.0, 0.0), atol=1e-12)) for c in self.joint_rests
                ],
                constrained=[bool(h or lmt) for h, lmt in zip(self.hinge, self.limited, strict=True)],
            )
            object.__setattr__(self, "_scalar_layout", cached)
        return cached

    def _planar_tails(self) -> list[bool]:
        """Per joint: every later joint is a hinge and their axes are parallel at rest, so the
        rest of the chain can only move in one plane."""
        rest_axes = qt.rotate(self.rest_orientations, self._axes_all)
        tails = []
        for i in range(self.count):
            later = rest_axes[i + 1 :]
            hinged = bool(np.all(self.hinge[i + 1 :])) and len(later) > 0
            parallel = hinged and bool(np.all(np.linalg.norm(np.cross(later, later[0]), axis=1) < 1e-6))
            tails.append(parallel)
        return tails

    def constrain(self, rotations: ArrayLike) -> Array:
        """``rotations`` (..., n, 4) projected onto the hinges and clamped into the limits."""
        q = qt.normalize(rotations)
        if q.shape[-2:] != (self.count, 4):
            raise KinematicsError(f"rotations must have shape (..., {self.count}, 4), got {q.shape}")
        axes = self._axes_all
        q = np.where(self.hinge[:, None], qt.twist(q, axes), q)
        if self.limits is not None:
            q = np.where(self.limited[:, None], qt.clamp_euler(q, self._limits_all), q)
        return q


@dataclass(frozen=True)
class _ScalarChain:
    local_offsets: list[sq.Vec]
    joint_rests: list[sq.Quat]
    lengths: list[float]
    axes: list[sq.Vec | None]
    limits: list[sq.Limits | None]
    planar_tail: list[bool]
    rest_is_identity: list[bool]
    constrained: list[bool]


@dataclass(frozen=True, eq=False)
class IKResult:
    """A solved pose. ``reachable`` is False when the target lies outside the chain's reach
    (the chain then stretches towards it); ``converged`` says the tolerance was met."""

    rotations: Array
    positions: Array
    error: float
    iterations: int
    reachable: bool
    converged: bool
    direction_error: float = 0.0


@dataclass(frozen=True)
class Solution:
    """A solver's answer on tuples (the form the inner loops use); :meth:`result` makes arrays."""

    rotations: list[sq.Quat]
    positions: list[sq.Vec]
    error: float
    direction_error: float
    iterations: int
    reachable: bool
    converged: bool

    def result(self) -> IKResult:
        return IKResult(
            rotations=np.array(self.rotations, dtype=np.float64),
            positions=np.array(self.positions, dtype=np.float64),
            error=float(self.error),
            iterations=self.iterations,
            reachable=self.reachable,
            converged=self.converged,
            direction_error=float(self.direction_error),
        )


def world_orientations(chain: Chain, rotations: ArrayLike) -> Array:
    """Each joint's world orientation ``(..., n, 4)`` for local ``rotations (..., n, 4)``."""
    q = qt.normalize(rotations)
    if q.shape[-2:] != (chain.count, 4):
        raise KinematicsError(f"rotations must have shape (..., {chain.count}, 4), got {q.shape}")
    out = np.empty_like(q)
    current = qt.identity(q.shape[:-2])
    for i in range(chain.count):
        current = qt.multiply(qt.multiply(current, chain.joint_rests[i]), q[..., i, :])
        out[..., i, :] = current
    return out


def forward_kinematics(chain: Chain, rotations: ArrayLike) -> Array:
    """Joint positions ``(..., n + 1, 3)``, root at the origin, for local unit quaternions
    ``rotations (..., n, 4)`` (``w`` first); vectorised over any leading shape (e.g. frames)."""
    orientations = world_orientations(chain, rotations)
    bones = qt.rotate(orientations, chain.local_offsets)
    positions = np.zeros((*orientations.shape[:-2], chain.count + 1, 3))
    positions[..., 1:, :] = np.cumsum(bones, axis=-2)
    return positions


def check_target(
    chain: Chain, target: ArrayLike, direction: ArrayLike | None
) -> tuple[sq.Vec, sq.Vec | None]:
    goal = _finite("target", target, (3,))
    unit_direction = None
    if direction is not None:
        d = _finite("direction", direction, (3,))
        length = float(np.linalg.norm(d))
        if length < 1e-9:
            raise KinematicsError("direction must be a non-zero vector")
        unit_direction = tuple(float(v) for v in d / length)
    return (float(goal[0]), float(goal[1]), float(goal[2])), unit_direction  # type: ignore[return-value]


def initial_rotations(chain: Chain, rotations: ArrayLike | None) -> list[sq.Quat]:
    if rotations is None:
        return [sq.IDENTITY] * chain.count
    q = _finite("rotations", rotations, (chain.count, 4))
    layout = chain.scalar_layout()
    # Scalar constraints: a bake warm-starts every frame, and numpy costs more per call here.
    rows = [sq.qnormalize(tuple(float(v) for v in row)) for row in q]
    return [constrain_joint(layout, i, row) for i, row in enumerate(rows)]


def default_tolerance(chain: Chain, tolerance: float | None) -> float:
    if tolerance is None:
        return 1e-4 * chain.reach
    if not math.isfinite(tolerance) or tolerance <= 0.0:
        raise KinematicsError(f"tolerance must be a positive distance, got {tolerance}")
    return float(tolerance)


def is_reachable(chain: Chain, goal: sq.Vec, direction: sq.Vec | None) -> bool:
    """False when no pose of the (unlimited) chain can reach ``goal``."""
    if direction is not None and chain.count > 1:
        wrist = sq.sub(goal, sq.scale(direction, chain.lengths[-1]))
        rest = chain.lengths[:-1]
        distance = sq.norm(wrist)
        inner = max(0.0, 2.0 * float(rest.max()) - float(rest.sum()))
        return inner - 1e-9 <= distance <= float(rest.sum()) + 1e-9
    distance = sq.norm(goal)
    return chain.inner_reach - 1e-9 <= distance <= chain.reach + 1e-9


def constrain_joint(layout: _ScalarChain, i: int, q: sq.Quat) -> sq.Quat:
    axis = layout.axes[i]
    if axis is not None:
        q = sq.twist(q, axis)
    limits = layout.limits[i]
    if limits is not None:
        q = sq.clamp_euler(q, limits)
    return q


def twist_for_hinge(layout: _ScalarChain, i: int, q: sq.Quat, wanted: sq.Vec) -> sq.Quat:
    """Twist ball joint ``i`` (local rotation ``q``) about its bone so that the hinge of joint
    ``i + 1`` can swing along ``wanted`` (in joint i's frame at zero rotation): the hinge axis is
    turned perpendicular to it, by the smallest twist.

    Neither FABRIK's aiming nor CCD's from-to steps twist a shoulder on purpose, so without this
    an elbow hinge stays near its rest plane and a goal (or a goal direction) off it is missed.
    """
    bone = sq.unit(sq.qrot(q, layout.local_offsets[i]))  # joint-local
    assert bone is not None
    # The child's hinge axis and the wanted direction, both in joint i's local frame.
    hinge = sq.qrot(q, sq.qrot(layout.joint_rests[i + 1], layout.axes[i + 1]))  # type: ignore[arg-type]
    along = sq.scale(bone, sq.dot(hinge, bone))
    across = sq.sub(hinge, along)
    a = sq.dot(along, wanted)
    b = sq.dot(across, wanted)
    c = sq.dot(sq.cross(bone, across), wanted)
    radius = math.hypot(b, c)
    if radius < 1e-12:
        return q
    phase = math.atan2(c, b)
    # hinge(theta) . wanted = a + radius cos(theta - phase); make it zero with the smallest turn.
    if abs(a) >= radius:
        candidates = [phase + (math.pi if a > 0.0 else 0.0)]
    else:
        spread = math.acos(-a / radius)
        candidates = [phase + spread, phase - spread]
    theta = min((math.remainder(t, 2.0 * math.pi) for t in candidates), key=abs)
    twisted = sq.qmul(sq.qaxis_angle(bone, theta), q)
    limits = layout.limits[i]
    return twisted if limits is None else sq.clamp_euler(twisted, limits)


def scalar_pose(layout: _ScalarChain, rotations: list[sq.Quat]) -> tuple[list[sq.Quat], list[sq.Vec]]:
    """World orientations and joint positions of a pose, on tuples."""
    orientation = sq.IDENTITY
    position: sq.Vec = (0.0, 0.0, 0.0)
    orientations: list[sq.Quat] = []
    positions = [position]
    for rest, identity, q, d in zip(
        layout.joint_rests, layout.rest_is_identity, rotations, layout.local_offsets, strict=True
    ):
        orientation = sq.qmul(orientation if identity else sq.qmul(orientation, rest), q)
        orientations.append(orientation)
        position = sq.add(position, sq.qrot(orientation, d))
        positions.append(position)
    return orientations, positions
