"""Quaternion and vector maths on plain float tuples, for the solvers' inner loops.

The solvers step one joint at a time, so every operation touches a single 3- or 4-vector.
numpy's per-call overhead dominates at that size (a quaternion product costs about 25 us as a
``(1, 4)`` array against 0.5 us on a tuple), so the loops use these scalar twins of the
vectorised helpers in :mod:`addon.quaternions`; a unit test checks that both agree.
Quaternions are ``(w, x, y, z)``.
"""

from __future__ import annotations

import math

Vec = tuple[float, float, float]
Quat = tuple[float, float, float, float]
Limits = tuple[tuple[float, float], tuple[float, float], tuple[float, float]]

IDENTITY: Quat = (1.0, 0.0, 0.0, 0.0)
_TINY = 1e-12


def add(a: Vec, b: Vec) -> Vec:
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


def sub(a: Vec, b: Vec) -> Vec:
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


def scale(a: Vec, s: float) -> Vec:
    return (a[0] * s, a[1] * s, a[2] * s)


def dot(a: Vec, b: Vec) -> float:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def cross(a: Vec, b: Vec) -> Vec:
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def norm(a: Vec) -> float:
    return math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])


def unit(a: Vec) -> Vec | None:
    """``a`` scaled to length 1, or None when it has no direction."""
    length = norm(a)
    if length < _TINY:
        return None
    inv = 1.0 / length
    return (a[0] * inv, a[1] * inv, a[2] * inv)


def qmul(a: Quat, b: Quat) -> Quat:
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return (
        aw * bw - ax * bx - ay * by - az * bz,
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
    )


def qconj(q: Quat) -> Quat:
    return (q[0], -q[1], -q[2], -q[3])


def qnormalize(q: Quat) -> Quat:
    length = math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    if length < _TINY:
        return IDENTITY
    inv = 1.0 / length
    return (q[0] * inv, q[1] * inv, q[2] * inv, q[3] * inv)


def qrot(q: Quat, v: Vec) -> Vec:
    """Rotate ``v`` by the unit quaternion ``q`` (v' = v + 2w(u x v) + 2u x (u x v))."""
    w, x, y, z = q
    tx = 2.0 * (y * v[2] - z * v[1])
    ty = 2.0 * (z * v[0] - x * v[2])
    tz = 2.0 * (x * v[1] - y * v[0])
    return (
        v[0] + w * tx + (y * tz - z * ty),
        v[1] + w * ty + (z * tx - x * tz),
        v[2] + w * tz + (x * ty - y * tx),
    )


def qaxis_angle(axis: Vec, angle: float) -> Quat:
    half = 0.5 * angle
    s = math.sin(half)
    return (math.cos(half), axis[0] * s, axis[1] * s, axis[2] * s)


def any_perpendicular(u: Vec) -> Vec:
    """A unit vector perpendicular to the unit vector ``u``: crossed with the least aligned axis."""
    ax, ay, az = abs(u[0]), abs(u[1]), abs(u[2])
    if ax <= ay and ax <= az:
        other = (1.0, 0.0, 0.0)
    elif ay <= az:
        other = (0.0, 1.0, 0.0)
    else:
        other = (0.0, 0.0, 1.0)
    perpendicular = unit(cross(u, other))
    assert perpendicular is not None  # the least aligned axis is never parallel to a unit vector
    return perpendicular


def qbetween(u: Vec, v: Vec) -> Quat:
    """Shortest rotation taking the direction of ``u`` to that of ``v``; identity if either is zero.

    Opposite vectors turn half a revolution about an axis perpendicular to ``u``, which is the
    one case where the half-vector formula divides by zero. Written out flat: CCD calls this for
    every joint of every sweep.
    """
    ux, uy, uz = u
    vx, vy, vz = v
    nu = math.sqrt(ux * ux + uy * uy + uz * uz)
    nv = math.sqrt(vx * vx + vy * vy + vz * vz)
    if nu < _TINY or nv < _TINY:
        return IDENTITY
    scale_uv = nu * nv
    w = scale_uv + ux * vx + uy * vy + uz * vz
    if w < 1e-9 * scale_uv:
        axis = any_perpendicular((ux / nu, uy / nu, uz / nu))
        return (0.0, axis[0], axis[1], axis[2])
    cx = uy * vz - uz * vy
    cy = uz * vx - ux * vz
    cz = ux * vy - uy * vx
    inv = 1.0 / math.sqrt(w * w + cx * cx + cy * cy + cz * cz)
    return (w * inv, cx * inv, cy * inv, cz * inv)


def twist(q: Quat, axis: Vec) -> Quat:
    """The part of ``q`` that turns about the unit ``axis`` (swing-twist decomposition).

    Equals the seed's hinge step "rotate the current hinge axis back onto the parent's": that
    from-to rotation is exactly the inverse of the swing. A pure half-turn swing has no twist.
    """
    projection = q[1] * axis[0] + q[2] * axis[1] + q[3] * axis[2]
    t = (q[0], axis[0] * projection, axis[1] * projection, axis[2] * projection)
    length = math.sqrt(t[0] * t[0] + projection * projection)
    if length < 1e-9:
        return IDENTITY
    return (t[0] / length, t[1] / length, t[2] / length, t[3] / length)


def hinge_towards(axis: Vec, source: Vec, target: Vec) -> float | None:
    """Angle about ``axis`` that best turns ``source`` towards ``target``; None if undefined."""
    s = sub(source, scale(axis, dot(source, axis)))
    t = sub(target, scale(axis, dot(target, axis)))
    if norm(s) < 1e-9 or norm(t) < 1e-9:
        return None
    return math.atan2(dot(axis, cross(s, t)), dot(s, t))


def euler_xyz_pair(q: Quat) -> tuple[Vec, Vec]:
    """Both XYZ Euler triples of ``q`` (Blender's 'XYZ' order: R = Rz Ry Rx)."""
    w, x, y, z = q
    r00 = 1.0 - 2.0 * (y * y + z * z)
    r10 = 2.0 * (x * y + w * z)
    r20 = 2.0 * (x * z - w * y)
    r21 = 2.0 * (y * z + w * x)
    r22 = 1.0 - 2.0 * (x * x + y * y)
    cy = math.hypot(r00, r10)
    if cy > 1e-9:
        first = (math.atan2(r21, r22), math.atan2(-r20, cy), math.atan2(r10, r00))
        second = (math.atan2(-r21, -r22), math.atan2(-r20, -cy), math.atan2(-r10, -r00))
        return first, second
    # Gimbal lock: X and Z turn about the same axis; put all of it on X.
    r11 = 1.0 - 2.0 * (x * x + z * z)
    r12 = 2.0 * (y * z - w * x)
    only = (math.atan2(-r12, r11), math.atan2(-r20, cy), 0.0)
    return only, only


def from_euler_xyz(e: Vec) -> Quat:
    cx, sx = math.cos(0.5 * e[0]), math.sin(0.5 * e[0])
    cy, sy = math.cos(0.5 * e[1]), math.sin(0.5 * e[1])
    cz, sz = math.cos(0.5 * e[2]), math.sin(0.5 * e[2])
    # qz * qy * qx, expanded.
    return (
        cz * cy * cx + sz * sy * sx,
        cz * cy * sx - sz * sy * cx,
        cz * sy * cx + sz * cy * sx,
        sz * cy * cx - cz * sy * sx,
    )


def _inside(e: Vec, limits: Limits, slack: float) -> bool:
    (x0, x1), (y0, y1), (z0, z1) = limits
    return (
        x0 - slack <= e[0] <= x1 + slack
        and y0 - slack <= e[1] <= y1 + slack
        and z0 - slack <= e[2] <= z1 + slack
    )


def clamp_euler(q: Quat, limits: Limits) -> Quat:
    """``q`` with its XYZ Euler angles clamped into ``limits`` ((min, max) per axis, radians).

    A rotation has two Euler triples; it is left alone when either fits, and otherwise the clamped
    triple closest to the original rotation wins.
    """
    first, second = euler_xyz_pair(q)
    if _inside(first, limits, 1e-12) or _inside(second, limits, 1e-12):
        return q
    best = IDENTITY
    best_alignment = -1.0
    for e in (first, second):
        clamped = tuple(min(max(a, lo), hi) for a, (lo, hi) in zip(e, limits, strict=True))
        candidate = from_euler_xyz(clamped)  # type: ignore[arg-type]
        alignment = abs(candidate[0] * q[0] + candidate[1] * q[1] + candidate[2] * q[2] + candidate[3] * q[3])
        if alignment > best_alignment:
            best, best_alignment = candidate, alignment
    if best[0] * q[0] + best[1] * q[1] + best[2] * q[2] + best[3] * q[3] < 0.0:
        best = (-best[0], -best[1], -best[2], -best[3])
    return best
