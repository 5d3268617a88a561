"""Curves the juggling planner is built from: Hermite hand splines, parabolas, bounce solutions and
gunswap-style dwell paths.

Units are metres and seconds, z up. Everything here is pure numpy and vectorised over sample times.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import ProcAnimError

GRAVITY = 9.81

Array = NDArray[np.float64]


class MotionError(ProcAnimError, ValueError):
    """A pattern that parses but cannot be animated with the chosen timing or hand paths."""


class BounceError(MotionError):
    """No bounce path reaches its catch in the time the beat allows (a slower beat may fix it)."""


# --------------------------------------------------------------------------------------------------
# Cubic Hermite splines


def hermite(
    t: Array, t0: Array, t1: Array, p0: Array, p1: Array, v0: Array, v1: Array
) -> tuple[Array, Array]:
    """Positions and velocities on cubic Hermite segments, one segment per sample.

    ``t, t0, t1`` are ``(T,)``; ``p0, p1, v0, v1`` are ``(T, 3)``: each sample carries its own segment.
    """
    dt = (t1 - t0)[:, None]
    s = ((t - t0)[:, None]) / dt
    s2 = s * s
    s3 = s2 * s
    h00 = 2 * s3 - 3 * s2 + 1
    h10 = s3 - 2 * s2 + s
    h01 = -2 * s3 + 3 * s2
    h11 = s3 - s2
    pos = h00 * p0 + h10 * dt * v0 + h01 * p1 + h11 * dt * v1
    d00 = 6 * s2 - 6 * s
    d10 = 3 * s2 - 4 * s + 1
    d01 = -6 * s2 + 6 * s
    d11 = 3 * s2 - 2 * s
    vel = (d00 * p0 + d01 * p1) / dt + d10 * v0 + d11 * v1
    return pos, vel


@dataclass(frozen=True)
class PeriodicSpline:
    """A closed C1 path through knots ``(time, position, velocity)`` repeating every ``period`` s."""

    times: Array  # (K,) strictly increasing, within [times[0], times[0] + period)
    positions: Array  # (K, 3)
    velocities: Array  # (K, 3)
    period: float

    def end_accelerations(self) -> tuple[Array, Array, Array, Array]:
        """Per piece ``k`` (knot ``k`` to ``k + 1``): start time, duration, and the acceleration at its
        start and end ``(K, 3)``. A cubic's acceleration is linear in time, so a piece's largest
        acceleration is at one of its ends."""
        k = len(self.times)
        if k < 2:
            zeros = np.zeros((k, 3))
            return self.times.copy(), np.full(k, self.period), zeros, zeros.copy()
        t1 = np.append(self.times[1:], self.times[0] + self.period)
        span = (t1 - self.times)[:, None]
        p0, p1 = self.positions, np.roll(self.positions, -1, axis=0)
        v0, v1 = self.velocities, np.roll(self.velocities, -1, axis=0)
        start = (6 * (p1 - p0) - (4 * v0 + 2 * v1) * span) / span**2
        end = (-6 * (p1 - p0) + (2 * v0 + 4 * v1) * span) / span**2
        return self.times.copy(), span[:, 0], start, end

    def sample(self, t: ArrayLike) -> tuple[Array, Array]:
        t = np.asarray(t, dtype=np.float64)
        k = len(self.times)
        if k == 1:
            pos = np.broadcast_to(self.positions[0], t.shape + (3,)).copy()
            return pos, np.zeros_like(pos)
        start = self.times[0]
        local = start + np.mod(t - start, self.period)
        idx = np.searchsorted(self.times, local, side="right") - 1
        nxt = idx + 1
        wrap = nxt == k
        nxt = np.where(wrap, 0, nxt)
        t1 = self.times[nxt] + np.where(wrap, self.period, 0.0)
        return hermite(
            local,
            self.times[idx],
            t1,
            self.positions[idx],
            self.positions[nxt],
            self.velocities[idx],
            self.velocities[nxt],
        )


# --------------------------------------------------------------------------------------------------
# Free flight


@dataclass(frozen=True)
class Ballistic:
    """One parabolic arc: position ``p0 + v0 (t - t0) - g/2 (t - t0)^2 z`` on ``[t0, t1]``."""

    t0: float
    t1: float
    p0: Array
    v0: Array
    gravity: float = GRAVITY

    def at(self, t: float) -> tuple[Array, Array]:
        dt = t - self.t0
        pos = self.p0 + self.v0 * dt
        pos = pos - np.array([0.0, 0.0, 0.5 * self.gravity * dt * dt])
        vel = self.v0 - np.array([0.0, 0.0, self.gravity * dt])
        return pos, vel


def parabola(t0: float, t1: float, p0: Array, p1: Array, gravity: float = GRAVITY) -> Ballistic:
    """The unique gravity arc leaving ``p0`` at ``t0`` and arriving at ``p1`` at ``t1``."""
    duration = t1 - t0
    v0 = (p1 - p0) / duration
    v0 = v0 + np.array([0.0, 0.0, 0.5 * gravity * duration])
    return Ballistic(t0, t1, np.asarray(p0, dtype=np.float64), v0, gravity)


#: Bounce kinds: (thrown upward?, caught while rising?), after gunswap's definitions.
BOUNCE_KINDS = {
    "lift": (True, True),
    "hyperlift": (True, False),
    "force": (False, False),
    "hyperforce": (False, True),
}


def _bounce_durations(
    v: Array, h0: float, h1: float, count: int, restitution: float, g: float = GRAVITY
) -> tuple[Array, Array]:
    """Total flight time for launch speeds ``v`` (up positive): (caught rising, caught falling).

    NaN where the prop never climbs back to the catch height after its last bounce.
    """
    impact = np.sqrt(v * v + 2 * g * h0)
    first = (v + impact) / g
    between = sum(2 * restitution**i * impact / g for i in range(1, count))
    rebound = restitution**count * impact
    disc = rebound * rebound - 2 * g * h1
    root = np.sqrt(np.where(disc >= 0, disc, np.nan))
    rising = first + between + (rebound - root) / g
    falling = first + between + (rebound + root) / g
    return rising, falling


def solve_bounce(
    t0: float,
    t1: float,
    p0: Array,
    p1: Array,
    count: int,
    kind: str,
    restitution: float,
    floor: float,
    what: str,
    gravity: float = GRAVITY,
) -> list[Ballistic]:
    """Arcs of a prop thrown at ``(t0, p0)`` that bounces ``count`` times on the plane ``z = floor``
    (vertical speed scaled by ``restitution`` each bounce) and is caught at ``(t1, p1)``.

    The requested kind (up/down throw, rising/falling catch) is preferred; if it has no solution the
    catch side, then the throw side are relaxed, as Juggling Lab does. Raises ``MotionError``
    naming ``what`` when no launch speed works.
    """
    if kind not in BOUNCE_KINDS:
        raise MotionError(f"{what}: unknown bounce kind {kind!r}; use one of {', '.join(BOUNCE_KINDS)}")
    duration = t1 - t0
    h0 = float(p0[2] - floor)
    h1 = float(p1[2] - floor)
    if h0 <= 0 or h1 <= 0:
        raise MotionError(f"{what}: throw and catch must be above the floor to bounce")
    up, rising = BOUNCE_KINDS[kind]
    v_max = gravity * duration * 2.0 + 1.0
    preferences = [(up, rising), (up, not rising), (not up, rising), (not up, not rising)]
    for want_up, want_rising in preferences:
        grid = np.linspace(0.0, v_max, 801) if want_up else np.linspace(-v_max, 0.0, 801)
        rise_t, fall_t = _bounce_durations(grid, h0, h1, count, restitution, gravity)
        values = (rise_t if want_rising else fall_t) - duration
        ok = np.isfinite(values)
        cross = np.nonzero(ok[:-1] & ok[1:] & (np.sign(values[:-1]) != np.sign(values[1:])))[0]
        if len(cross) == 0:
            continue
        # Smallest launch speed: the gentlest throw that makes the catch.
        best = cross[np.argmin(np.abs(grid[cross]))]
        lo, hi = grid[best], grid[best + 1]
        f_lo = values[best]
        for _ in range(80):
            mid = 0.5 * (lo + hi)
            r, f = _bounce_durations(np.array([mid]), h0, h1, count, restitution, gravity)
            f_mid = (r if want_rising else f)[0] - duration
            if not np.isfinite(f_mid):
                break
            if np.sign(f_mid) == np.sign(f_lo):
                lo, f_lo = mid, f_mid
            else:
                hi = mid
        return _bounce_arcs(t0, t1, p0, p1, 0.5 * (lo + hi), count, restitution, floor, gravity)
    raise BounceError(
        f"{what}: no {count}-bounce path reaches the catch in {duration:.2f} s when a bounce keeps "
        f"{restitution:.3g} of the speed; raise the beat duration or the bounciness"
    )


def _bounce_arcs(
    t0: float,
    t1: float,
    p0: Array,
    p1: Array,
    v: float,
    count: int,
    restitution: float,
    floor: float,
    g: float = GRAVITY,
) -> list[Ballistic]:
    horizontal = (p1 - p0) / (t1 - t0)
    horizontal[2] = 0.0
    h0 = p0[2] - floor
    impact = math.sqrt(v * v + 2 * g * h0)
    arcs = []
    start_t = t0
    start_p = np.asarray(p0, dtype=np.float64).copy()
    vz = v
    bounce_t = t0 + (v + impact) / g
    for i in range(1, count + 1):
        arcs.append(Ballistic(start_t, bounce_t, start_p, np.array([horizontal[0], horizontal[1], vz]), g))
        start_p = start_p + horizontal * (bounce_t - start_t)
        start_p[2] = floor
        start_t = bounce_t
        vz = restitution**i * impact
        bounce_t = start_t + 2 * vz / g
    arcs.append(Ballistic(start_t, t1, start_p, np.array([horizontal[0], horizontal[1], vz]), g))
    return arcs


# --------------------------------------------------------------------------------------------------
# Dwell paths


@dataclass(frozen=True)
class DwellPath:
    """Hand points of one dwell, catch first and throw last, in metres in the hand's frame:
    x outward from the body centre, y forward, z up from the pattern's base height."""

    points: tuple[tuple[float, float, float], ...]


_POINT = re.compile(r"\(([^()]*)\)")


def parse_dwell_paths(text: str) -> tuple[DwellPath, ...]:
    """Parse gunswap's dwell path notation: ``(x[,y[,z]])`` points in centimetres, catch first and
    throw last, dwells separated by ``.``; x outward from the body centre, y up, z forward.

    ``(30)(10)`` is a cascade, ``(30)(10).(10)(30)`` a half shower. gunswap's optional
    ``{rx,ry,rz,angle}`` hand-rotation suffix is accepted and ignored. Empty text gives ``()``.
    """
    stripped = re.sub(r"\{[^{}]*\}", "", text)
    if not stripped.strip():
        return ()
    paths = []
    for index, chunk in enumerate(_split_top_level(stripped)):
        chunk = chunk.strip()
        leftover = _POINT.sub("", chunk).strip()
        if leftover:
            raise MotionError(
                f"dwell path {index + 1} of {text!r}: unexpected {leftover!r}; write points like (30)(10,5)"
            )
        points = []
        for match in _POINT.finditer(chunk):
            fields = [f.strip() for f in match.group(1).split(",")]
            if not 1 <= len(fields) <= 3:
                raise MotionError(
                    f"dwell path {index + 1} of {text!r}: point ({match.group(1)}) needs 1 to 3 numbers"
                )
            try:
                values = [float(f) for f in fields]
            except ValueError:
                raise MotionError(
                    f"dwell path {index + 1} of {text!r}: point ({match.group(1)}) is not numeric"
                ) from None
            if not all(math.isfinite(v) for v in values):
                raise MotionError(
                    f"dwell path {index + 1} of {text!r}: point ({match.group(1)}) is not finite"
                )
            values += [0.0] * (3 - len(values))
            x_out, up, forward = values
            points.append((x_out / 100.0, forward / 100.0, up / 100.0))
        if len(points) < 2:
            raise MotionError(f"dwell path {index + 1} of {text!r} needs a catch and a throw point")
        paths.append(DwellPath(tuple(points)))
    return tuple(paths)


def _split_top_level(text: str) -> list[str]:
    """Split at the ``.`` between dwells, not at decimal points inside ``( )``."""
    chunks, depth, current = [], 0, []
    for char in text:
        depth += (char == "(") - (char == ")")
        if char == "." and depth == 0:
            chunks.append("".join(current))
            current = []
        else:
            current.append(char)
    chunks.append("".join(current))
    return chunks
