"""The one quaternion module of the core: unit quaternions ``(w, x, y, z)``, ``w`` first, vectorised
with numpy over any leading shape (``(..., 4)``).

Every core (IK, geometry, soft bodies, juggling, fly, dancer) uses these; :mod:`.scalar` holds the
same operations on plain float tuples, the fast path for the IK solvers' one-joint-at-a-time inner
loops. Operators convert to Blender with ``mathutils``. Composition ``multiply(a, b)`` applies ``b``
first (Hamilton product, as ``mathutils.Quaternion`` ``a @ b``).

Euler angles follow Blender's 'XYZ' order: the matrix is Rz @ Ry @ Rx (X is applied first).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

Array = NDArray[np.float64]

_TINY = 1e-12


def _as(a: ArrayLike) -> Array:
    return np.asarray(a, dtype=np.float64)


def _join(scalar: Array, vector: Array) -> Array:
    """``(..., 1)`` and ``(..., 3)`` parts into ``(..., 4)``, broadcasting the leading shape only."""
    lead = np.broadcast_shapes(scalar.shape[:-1], vector.shape[:-1])
    return np.concatenate([np.broadcast_to(scalar, (*lead, 1)), np.broadcast_to(vector, (*lead, 3))], axis=-1)


def identity(shape: tuple[int, ...] = ()) -> Array:
    q = np.zeros((*shape, 4))
    q[..., 0] = 1.0
    return q


def normalize(q: ArrayLike) -> Array:
    """Unit quaternions; a zero quaternion becomes the identity rather than NaN."""
    q = _as(q)
    length = np.linalg.norm(q, axis=-1, keepdims=True)
    return np.where(length < _TINY, identity(q.shape[:-1]), q / np.maximum(length, _TINY))


def conjugate(q: ArrayLike) -> Array:
    """The inverse of a unit quaternion."""
    q = _as(q)
    return q * np.array([1.0, -1.0, -1.0, -1.0])


def multiply(a: ArrayLike, b: ArrayLike) -> Array:
    """Composition ``a * b``: rotate by ``b`` first, then by ``a``."""
    a, b = np.broadcast_arrays(_as(a), _as(b))
    aw, ax, ay, az = np.moveaxis(a, -1, 0)
    bw, bx, by, bz = np.moveaxis(b, -1, 0)
    return np.stack(
        [
            aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
        ],
        axis=-1,
    )


def rotate(q: ArrayLike, v: ArrayLike) -> Array:
    """Vectors ``v`` (..., 3) rotated by unit quaternions ``q`` (..., 4)."""
    q, v = _as(q), _as(v)
    u = q[..., 1:]
    t = 2.0 * np.cross(u, v)
    return v + q[..., :1] * t + np.cross(u, t)


def from_axis_angle(axis: ArrayLike, angle: ArrayLike) -> Array:
    """Rotation by ``angle`` radians about ``axis`` (normalised here; a zero axis gives identity)."""
    axis = _as(axis)
    angle = _as(angle)[..., None]
    length = np.linalg.norm(axis, axis=-1, keepdims=True)
    unit_axis = axis / np.maximum(length, _TINY)
    q = _join(np.cos(0.5 * angle), unit_axis * np.sin(0.5 * angle))
    return np.where(np.broadcast_to(length, (*q.shape[:-1], 1)) < _TINY, identity(q.shape[:-1]), q)


def to_axis_angle(q: ArrayLike) -> tuple[Array, Array]:
    """``(axis, angle)`` with the angle in [0, pi]; the identity reports the X axis and angle 0."""
    q = normalize(q)
    q = np.where(q[..., :1] < 0.0, -q, q)
    sin_half = np.linalg.norm(q[..., 1:], axis=-1)
    angle = 2.0 * np.arctan2(sin_half, q[..., 0])
    axis = np.where(
        (sin_half < _TINY)[..., None],
        np.array([1.0, 0.0, 0.0]),
        q[..., 1:] / np.maximum(sin_half, _TINY)[..., None],
    )
    return axis, angle


def _any_perpendicular(u: Array) -> Array:
    least = np.argmin(np.abs(u), axis=-1)
    other = np.eye(3)[least]
    p = np.cross(u, other)
    return p / np.maximum(np.linalg.norm(p, axis=-1, keepdims=True), _TINY)


def between(u: ArrayLike, v: ArrayLike) -> Array:
    """Shortest rotations taking the directions ``u`` to ``v``.

    Opposite vectors give half a revolution about an axis perpendicular to ``u`` (the half-vector
    formula would divide by zero there); a zero vector gives the identity.
    """
    u, v = np.broadcast_arrays(_as(u), _as(v))
    nu = np.linalg.norm(u, axis=-1, keepdims=True)
    nv = np.linalg.norm(v, axis=-1, keepdims=True)
    un = u / np.maximum(nu, _TINY)
    vn = v / np.maximum(nv, _TINY)
    w = 1.0 + np.sum(un * vn, axis=-1, keepdims=True)
    q = np.concatenate([w, np.cross(un, vn)], axis=-1)
    opposite = np.concatenate([np.zeros_like(w), _any_perpendicular(un)], axis=-1)
    q = np.where(w < 1e-9, opposite, q)
    degenerate = ((nu < _TINY) | (nv < _TINY))[..., 0]
    return np.where(degenerate[..., None], identity(q.shape[:-1]), normalize(q))


def twist(q: ArrayLike, axis: ArrayLike) -> Array:
    """The rotation of ``q`` about the unit ``axis`` (swing-twist); a pure half-turn swing gives identity."""
    q, axis = _as(q), _as(axis)
    projection = np.sum(q[..., 1:] * axis, axis=-1, keepdims=True)
    t = _join(q[..., :1], axis * projection)
    length = np.linalg.norm(t, axis=-1, keepdims=True)
    return np.where(length < 1e-9, identity(t.shape[:-1]), t / np.maximum(length, 1e-9))


def to_matrix(q: ArrayLike) -> Array:
    """3x3 rotation matrices ``(..., 3, 3)`` of quaternions ``(..., 4)``.

    A quaternion that is not unit length gives the rotation of its normalised self (the ``2 / |q|^2``
    form needs no square root); a zero quaternion gives the identity.
    """
    q = _as(q)
    if q.ndim == 1:  # one quaternion: the same arithmetic on floats, without numpy's per-call cost
        w, x, y, z = q.tolist()
        length_sq = w * w + x * x + y * y + z * z
        s = 0.0 if length_sq < _TINY * _TINY else 2.0 / length_sq
        return np.array(
            [
                [1 - s * (y * y + z * z), s * (x * y - w * z), s * (x * z + w * y)],
                [s * (x * y + w * z), 1 - s * (x * x + z * z), s * (y * z - w * x)],
                [s * (x * z - w * y), s * (y * z + w * x), 1 - s * (x * x + y * y)],
            ]
        )
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    length_sq = w * w + x * x + y * y + z * z
    s = 2.0 / np.where(length_sq < _TINY * _TINY, np.inf, length_sq)
    out = np.empty(q.shape[:-1] + (3, 3))
    out[..., 0, 0] = 1 - s * (y * y + z * z)
    out[..., 0, 1] = s * (x * y - w * z)
    out[..., 0, 2] = s * (x * z + w * y)
    out[..., 1, 0] = s * (x * y + w * z)
    out[..., 1, 1] = 1 - s * (x * x + z * z)
    out[..., 1, 2] = s * (y * z - w * x)
    out[..., 2, 0] = s * (x * z - w * y)
    out[..., 2, 1] = s * (y * z + w * x)
    out[..., 2, 2] = 1 - s * (x * x + y * y)
    return out


def from_matrix(matrices: ArrayLike) -> Array:
    """Unit quaternions ``(..., 4)`` (``w >= 0``) of rotation matrices ``(..., 3, 3)``.

    Shepperd's method: build the quaternion from its largest component, which stays accurate near
    half a revolution where the trace formula cancels.
    """
    m = _as(matrices)
    trace = m[..., 0, 0] + m[..., 1, 1] + m[..., 2, 2]
    squares = np.stack(
        (1 + trace, 1 + 2 * m[..., 0, 0] - trace, 1 + 2 * m[..., 1, 1] - trace, 1 + 2 * m[..., 2, 2] - trace),
        axis=-1,
    )
    pick = np.argmax(squares, axis=-1)
    root = np.sqrt(np.maximum(np.take_along_axis(squares, pick[..., None], -1)[..., 0], 1e-300))
    half = 0.5 / root
    wx = (m[..., 2, 1] - m[..., 1, 2]) * half
    wy = (m[..., 0, 2] - m[..., 2, 0]) * half
    wz = (m[..., 1, 0] - m[..., 0, 1]) * half
    xy = (m[..., 0, 1] + m[..., 1, 0]) * half
    xz = (m[..., 0, 2] + m[..., 2, 0]) * half
    yz = (m[..., 1, 2] + m[..., 2, 1]) * half
    big = 0.5 * root
    candidates = np.stack(
        (
            np.stack((big, wx, wy, wz), -1),
            np.stack((wx, big, xy, xz), -1),
            np.stack((wy, xy, big, yz), -1),
            np.stack((wz, xz, yz, big), -1),
        ),
        axis=-2,
    )
    q = np.take_along_axis(candidates, pick[..., None, None], -2)[..., 0, :]
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    return np.where(q[..., :1] < 0, -q, q)


def to_euler_xyz_pair(q: ArrayLike) -> tuple[Array, Array]:
    """Both XYZ Euler triples of each rotation (the second equals the first at gimbal lock)."""
    m = to_matrix(q)
    cy = np.hypot(m[..., 0, 0], m[..., 1, 0])
    locked = cy <= 1e-9
    first = np.stack(
        [
            np.where(locked, np.arctan2(-m[..., 1, 2], m[..., 1, 1]), np.arctan2(m[..., 2, 1], m[..., 2, 2])),
            np.arctan2(-m[..., 2, 0], cy),
            np.where(locked, 0.0, np.arctan2(m[..., 1, 0], m[..., 0, 0])),
        ],
        axis=-1,
    )
    second = np.stack(
        [
            np.arctan2(-m[..., 2, 1], -m[..., 2, 2]),
            np.arctan2(-m[..., 2, 0], -cy),
            np.arctan2(-m[..., 1, 0], -m[..., 0, 0]),
        ],
        axis=-1,
    )
    return first, np.where(locked[..., None], first, second)


def to_euler_xyz(q: ArrayLike) -> Array:
    """The XYZ Euler triple with the Y angle in [-pi/2, pi/2]."""
    return to_euler_xyz_pair(q)[0]


def from_euler_xyz(euler: ArrayLike) -> Array:
    e = _as(euler)
    half = 0.5 * e
    c, s = np.cos(half), np.sin(half)
    cx, cy, cz = np.moveaxis(c, -1, 0)
    sx, sy, sz = np.moveaxis(s, -1, 0)
    return np.stack(
        [
            cz * cy * cx + sz * sy * sx,
            cz * cy * sx - sz * sy * cx,
            cz * sy * cx + sz * cy * sx,
            sz * cy * cx - cz * sy * sx,
        ],
        axis=-1,
    )


def within_limits(q: ArrayLike, limits: ArrayLike, slack: float = 1e-9) -> NDArray[np.bool_]:
    """True where either Euler triple of ``q`` lies inside ``limits`` (``(..., 3, 2)`` min/max)."""
    limits = _as(limits)
    lo, hi = limits[..., 0], limits[..., 1]
    first, second = to_euler_xyz_pair(q)
    fits = [np.all((e >= lo - slack) & (e <= hi + slack), axis=-1) for e in (first, second)]
    return fits[0] | fits[1]


def clamp_euler(q: ArrayLike, limits: ArrayLike) -> Array:
    """Rotations with their XYZ Euler angles clamped into ``limits`` (``(..., 3, 2)``, radians).

    Rotations already inside (by either Euler triple) are returned unchanged; otherwise the
    clamped triple nearer the original rotation wins.
    """
    q = normalize(q)
    limits = _as(limits)
    lo, hi = limits[..., 0], limits[..., 1]
    first, second = to_euler_xyz_pair(q)
    candidates = [from_euler_xyz(np.clip(e, lo, hi)) for e in (first, second)]
    alignment = [np.abs(np.sum(c * q, axis=-1)) for c in candidates]
    clamped = np.where((alignment[0] >= alignment[1])[..., None], candidates[0], candidates[1])
    clamped = align_hemisphere(clamped, q)
    return np.where(within_limits(q, limits, 1e-12)[..., None], q, clamped)


def align_hemisphere(q: ArrayLike, reference: ArrayLike) -> Array:
    """``q`` or ``-q`` (the same rotation), whichever is nearer ``reference``; keeps keys continuous."""
    q = _as(q)
    return np.where(np.sum(q * _as(reference), axis=-1, keepdims=True) < 0.0, -q, q)


def angle_between(a: ArrayLike, b: ArrayLike) -> Array:
    """Rotation angle (radians, [0, pi]) taking ``a`` to ``b``."""
    d = np.abs(np.sum(normalize(a) * normalize(b), axis=-1))
    return 2.0 * np.arccos(np.clip(d, 0.0, 1.0))


def slerp(q0: ArrayLike, q1: ArrayLike, s: ArrayLike) -> Array:
    """Spherical interpolation from ``q0`` to ``q1`` (``(..., 4)``) at fractions ``s`` ``(...)``,
    the short way round."""
    a = _as(q0)
    b = _as(q1)
    s = _as(s)[..., None]
    dot = np.sum(a * b, axis=-1, keepdims=True)
    b = np.where(dot < 0, -b, b)
    dot = np.abs(dot)
    theta = np.arccos(np.clip(dot, -1.0, 1.0))
    sin_theta = np.sin(theta)
    small = sin_theta < 1e-9
    safe = np.where(small, 1.0, sin_theta)
    w0 = np.where(small, 1 - s, np.sin((1 - s) * theta) / safe)
    w1 = np.where(small, s, np.sin(s * theta) / safe)
    q = w0 * a + w1 * b
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def continuous(q: ArrayLike, axis: int = -2) -> Array:
    """Flip signs along ``axis`` (the time axis) so consecutive quaternions stay in one hemisphere:
    the same rotations, but keyframe interpolation never takes the long way round."""
    q = np.moveaxis(np.array(q, dtype=np.float64), axis, 0)
    if len(q) > 1:
        dots = np.sum(q[1:] * q[:-1], axis=-1)
        flips = np.cumprod(np.where(dots < 0.0, -1.0, 1.0), axis=0)
        q[1:] *= flips[..., None]
    return np.moveaxis(q, 0, axis)
