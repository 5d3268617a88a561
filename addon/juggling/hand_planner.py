"""Hand paths a human could move: bounded, jerk-limited acceleration through the throws and catches.

A hand's acceleration over one cycle is a periodic, piecewise linear function: a step function
``b`` on ``N`` equal cells, smoothed by a moving average ``window`` seconds wide. The smoothing is
the jerk limit (the slope of ``a`` is at most ``2 max|b| / window``) and keeps ``|a| <= max|b|``.
Position and velocity are its exact integrals, so every piece between grid nodes is a cubic and
the path is a :class:`PeriodicSpline` with one knot per node: the keys the user gets are the path.

The conditions are linear in ``b``:

- **throws**: the hand is at the throw point and moves with the prop's exact launch velocity;
- **catches**: the hand is at the catch point and moves along the incoming prop's velocity, in
  its direction, no faster than the prop (Juggling Lab's natural catch, ``TRANS_CATCH``: the
  hand's velocity is parallel to the landing prop's; the difference is the catch's impact);
- **waypoints** (dwell path points): position only;
- the path closes: position and velocity are periodic.

Among the paths that meet them, :func:`plan_hand_path` minimises the least-squares stroke
``sum |b|^2 / 2`` plus stiff penalties on ``|b|`` above ``0.9 A`` (the bound ``A``) and on the hand
dipping under a floor (arm's reach): convex, solved by Newton's method (see :func:`_solve`). The
result is a gentle stroke with its peak pushed under the bound wherever the conditions and the
floor allow it; where they do not, the peak is what the penalty balance leaves, and the caller
reports it.

Why some patterns cannot stay under a bound whatever the beat: a hand that throws every ``P``
seconds with vertical speed ``v`` has a mean vertical velocity of zero, and with ``|a| <= A`` its
velocity stays above ``v - A |t - t_throw|``; so ``A >= 4 v / P``. For a cascade,
``v = g (n - d) tau / 2`` and ``P = 2 tau``: ``A >= g (n - d)``, independent of the beat
(:func:`vertical_acceleration_floor` computes this bound for any hand's throws).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .paths import PeriodicSpline

Array = NDArray[np.float64]

#: Cells per beat of the acceleration grid, and the jerk window in beats.
CELLS_PER_BEAT = 16
WINDOW_BEATS = 0.25
#: The planner aims this far under the bound (the penalty's threshold), with this stiffness.
_TARGET = 0.9
_STIFFNESS = 1e3
_NEWTON_STEPS = 25
#: Depth scale of the floor penalty (metres).
_HEIGHT_SCALE = 0.01
_MAX_CELLS = 1024


@dataclass(frozen=True)
class HandEvent:
    """One condition on a hand's path at ``time`` (seconds).

    ``kind`` is "throw" (``velocity`` is the prop's launch velocity), "catch" (``velocity`` is the
    incoming prop's velocity; the hand moves along it, 0 to 1 times as fast) or "point" (a
    waypoint: position only)."""

    time: float
    kind: str
    position: Array
    velocity: Array | None = None


def vertical_acceleration_floor(throws: list[tuple[float, float]], period: float) -> float:
    """The least peak acceleration (m/s^2) of any periodic hand path that throws with vertical
    speeds ``v_i`` at times ``t_i`` (``(t_i, v_i)``, seconds and m/s) every ``period`` seconds.

    Catches and horizontal motion only add to it (see :func:`least_peak_acceleration`, which this
    calls with exact velocity windows at the throws)."""
    return least_peak_acceleration([(t, v, v) for t, v in throws], period)


def least_peak_acceleration(windows: list[tuple[float, float, float]], period: float) -> float:
    """The least ``A`` (m/s^2) such that some ``period``-periodic velocity ``u`` with ``|u'| <= A``
    passes through every window ``(t_k, lo_k, hi_k)`` (``lo_k <= u(t_k) <= hi_k``) and has mean 0.

    This is an exact lower bound on the peak vertical acceleration of a hand whose vertical
    velocity must lie in those windows (a throw: the prop's launch speed, ``lo = hi``; a catch:
    between the incoming prop's vertical speed and 0) and whose path closes over the period
    (zero net displacement). The hand's positions are not constrained, so it holds for any planner
    and any arm through these windows (the windows themselves depend on where props are thrown and
    caught: a throw from higher than its catch needs less launch speed).

    For a given ``A``, the least ``A``-Lipschitz periodic function above every ``lo_k`` at ``t_k``
    is ``L(t) = max_k (lo_k - A d(t, t_k))`` (``d`` the distance around the period) and the greatest
    under every ``hi_k`` is ``U(t) = min_k (hi_k + A d(t, t_k))``; every admissible ``u`` lies
    between them. A ``u`` through the windows exists iff ``L(t_k) <= hi_k`` for every ``k`` (then
    ``L`` and ``U`` are both admissible), and the admissible set being convex, its means fill
    ``[mean L, mean U]``: a closed path exists iff also ``mean L <= 0 <= mean U``. Both tests only
    get easier as ``A`` grows, so ``A`` is found by bisection (to 1e-12 relative); the means are
    exact integrals of the piecewise linear envelopes. Windows at one time are intersected (an
    empty intersection needs an infinite acceleration: ``inf``)."""
    if not (math.isfinite(period) and period > 0):
        raise ValueError(f"period must be positive, got {period}")
    merged: dict[float, tuple[float, float]] = {}
    for when, low, high in windows:
        if not (math.isfinite(when) and math.isfinite(low) and math.isfinite(high)) or low > high:
            raise ValueError(f"a velocity window must be finite with lo <= hi, got {(when, low, high)}")
        key = round(when % period, 12) % period
        old_low, old_high = merged.get(key, (-math.inf, math.inf))
        merged[key] = (max(old_low, low), min(old_high, high))
    if not merged:
        return 0.0
    times = np.array(list(merged))
    low = np.array([w[0] for w in merged.values()])
    high = np.array([w[1] for w in merged.values()])
    if np.any(low > high):
        return math.inf
    if low.max() <= 0.0 <= high.min():
        return 0.0  # a hand at rest meets every window
    gaps = np.abs((times[:, None] - times[None, :] + 0.5 * period) % period - 0.5 * period)

    def feasible(limit: float) -> bool:
        lowest = np.max(low[None, :] - limit * gaps, axis=1)
        if np.any(lowest > high):
            return False
        return (
            _envelope_mean(times, low, limit, period) <= 0.0 <= -_envelope_mean(times, -high, limit, period)
        )

    lower, upper = 0.0, 1.0
    while not feasible(upper):
        lower, upper = upper, 2.0 * upper
    while upper - lower > 1e-12 * upper:
        middle = 0.5 * (lower + upper)
        lower, upper = (lower, middle) if feasible(middle) else (middle, upper)
    return upper


def _envelope_mean(times: Array, peaks: Array, slope: float, period: float) -> float:
    """The exact mean over one period of ``max_k (peaks_k - slope d(t, times_k))`` (``d`` the
    distance around the period): tents copied one period either side, so that on the line the
    envelope is theirs; between neighbouring apexes it is the larger of the left neighbours'
    falling edge and the right neighbours' rising edge (two lines), integrated exactly."""
    centres = np.concatenate([times - period, times, times + period])
    heights = np.tile(peaks, 3)
    order = np.argsort(centres, kind="stable")
    centres, heights = centres[order], heights[order]
    left, right = heights.copy(), heights.copy()
    for i in range(1, len(centres)):
        left[i] = max(left[i], left[i - 1] - slope * (centres[i] - centres[i - 1]))
    for i in range(len(centres) - 2, -1, -1):
        right[i] = max(right[i], right[i + 1] - slope * (centres[i + 1] - centres[i]))
    a, b = left[:-1], right[1:]  # falling edge from each apex, rising edge into the next
    c0, c1 = centres[:-1], centres[1:]
    x0, x1 = np.clip(c0, 0.0, period), np.clip(c1, 0.0, period)
    cross = np.clip((a - b + slope * (c0 + c1)) / (2.0 * slope), x0, x1)

    def falling(t: Array) -> Array:
        return a - slope * (t - c0)

    def rising(t: Array) -> Array:
        return b - slope * (c1 - t)

    total = 0.5 * (cross - x0) * (falling(x0) + falling(cross)) + 0.5 * (x1 - cross) * (
        rising(cross) + rising(x1)
    )
    return float(total.sum() / period)


def _ramp_integrals(t: Array, corners: Array) -> tuple[Array, Array]:
    """``int_0^t (s - c)_+ ds`` and ``int_0^t (t - s)(s - c)_+ ds`` for times ``t`` (T, 1) and
    corners ``c`` (1, K)."""
    after = np.maximum(t - corners, 0.0)
    before = np.maximum(-corners, 0.0)
    first = 0.5 * (after**2 - before**2)
    second = (after**3 - before**3) / 6.0 - 0.5 * t * before**2
    return first, second


def _node_integrals(times: Array, cells: int, step: float) -> tuple[Array, Array]:
    """``(T, N)``: velocity and position gained by time ``t`` from a unit acceleration at each
    periodic grid node (hat functions; node ``N`` is node 0 again)."""
    t = np.asarray(times, dtype=np.float64)[:, None]
    centres = np.arange(cells + 1)[None] * step
    gains = []
    for k in (0, 1):
        left = _ramp_integrals(t, centres - step)[k]
        middle = _ramp_integrals(t, centres)[k]
        right = _ramp_integrals(t, centres + step)[k]
        hat = (left - 2.0 * middle + right) / step
        hat[:, 0] += hat[:, cells]
        gains.append(hat[:, :cells])
    return gains[0], gains[1]


def _smoothing(cells: int, width: int) -> Array:
    """``(N, N)`` periodic moving average over ``width`` cells centred on each node."""
    half = width // 2
    matrix = np.zeros((cells, cells))
    rows = np.arange(cells)[:, None]
    columns = (rows + np.arange(-half, width - half)[None]) % cells
    np.add.at(matrix, (np.repeat(rows, width, axis=1), columns), 1.0 / width)
    return matrix


def _normals(direction: Array) -> tuple[Array, Array]:
    unit = direction / np.linalg.norm(direction)
    helper = np.array([1.0, 0.0, 0.0]) if abs(unit[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    first = np.cross(unit, helper)
    first /= np.linalg.norm(first)
    return first, np.cross(unit, first)


def plan_hand_path(
    events: list[HandEvent],
    period: float,
    beat: float,
    limit: float,
    floor: float = -math.inf,
) -> PeriodicSpline:
    """The hand's path over one ``period`` (seconds) through ``events`` (at least one throw), on a
    grid of ``CELLS_PER_BEAT`` cells per ``beat``, aiming to keep the acceleration under ``limit``.
    """
    throws = sorted((e for e in events if e.kind == "throw"), key=lambda e: e.time % period)
    anchor = throws[0]
    start = anchor.time
    cells = int(min(_MAX_CELLS, max(32, math.ceil(CELLS_PER_BEAT * period / beat))))
    step = period / cells
    width = max(2, 2 * round(0.5 * WINDOW_BEATS * beat / step))
    smooth = _smoothing(cells, width)
    p0 = np.asarray(anchor.position, dtype=np.float64)
    v0 = np.asarray(anchor.velocity, dtype=np.float64)
    # Node heights from the cells: z_k = p0_z + v0_z t_k + heights[k] @ b_z.
    node_times = np.arange(cells) * step
    _, gain = _node_integrals(node_times, cells, step)
    heights = gain @ smooth
    relative_floor = floor - p0[2] - v0[2] * node_times

    fixed_catch: dict[int, Array] = {}
    # A catch whose free speed comes out against the prop or faster than it is pinned to the
    # nearest allowed speed and the path solved again (each pass pins at least one more catch).
    for _ in range(len(events) + 1):
        rows, rhs = _conditions(events, anchor, start, period, cells, step, smooth, p0, v0, fixed_catch)
        b = _solve(rows, rhs, cells, _TARGET * limit, heights, relative_floor)
        accel = smooth @ b  # (N, 3) node accelerations
        changed = False
        for index, event in enumerate(events):
            if event.kind != "catch" or index in fixed_catch:
                continue
            speed = float(np.linalg.norm(event.velocity))
            if speed <= 0:
                continue
            unit = event.velocity / speed
            local = np.array([(event.time - start) % period])
            gain, _ = _node_integrals(local, cells, step)
            along = float(unit @ (v0 + (gain @ accel)[0]))
            if along < -1e-9 or along > speed + 1e-9:
                fixed_catch[index] = min(max(along, 0.0), speed) * unit
                changed = True
        if not changed:
            break
    return _spline(accel, start, step, period, p0, v0)


def _conditions(
    events: list[HandEvent],
    anchor: HandEvent,
    start: float,
    period: float,
    cells: int,
    step: float,
    smooth: Array,
    p0: Array,
    v0: Array,
    fixed_catch: dict[int, Array],
) -> tuple[Array, Array]:
    """Rows of ``C`` (over the 3N cell values, axis-major) and the right-hand side ``r``."""
    others = [(i, e) for i, e in enumerate(events) if e is not anchor]
    local = np.array([period] + [(e.time - start) % period for _, e in others])
    gain_v, gain_p = _node_integrals(local, cells, step)
    gain_v, gain_p = gain_v @ smooth, gain_p @ smooth
    rows: list[Array] = []
    rhs: list[float] = []

    def block(axis: int, row: Array) -> Array:
        out = np.zeros(3 * cells)
        out[axis * cells : (axis + 1) * cells] = row
        return out

    def velocity_is(k: int, target: Array) -> None:
        for axis in range(3):
            rows.append(block(axis, gain_v[k]))
            rhs.append(float(target[axis] - v0[axis]))

    def position_is(k: int, when: float, target: Array) -> None:
        for axis in range(3):
            rows.append(block(axis, gain_p[k]))
            rhs.append(float(target[axis] - p0[axis] - v0[axis] * when))

    velocity_is(0, v0)
    position_is(0, period, p0)
    for k, (index, event) in enumerate(others, start=1):
        when = local[k]
        position_is(k, when, np.asarray(event.position, dtype=np.float64))
        if event.kind == "throw":
            velocity_is(k, np.asarray(event.velocity, dtype=np.float64))
        elif event.kind == "catch" and index in fixed_catch:
            velocity_is(k, fixed_catch[index])
        elif event.kind == "catch" and np.linalg.norm(event.velocity) > 0:
            for normal in _normals(np.asarray(event.velocity, dtype=np.float64)):
                rows.append(np.concatenate([normal[axis] * gain_v[k] for axis in range(3)]))
                rhs.append(float(-normal @ v0))
    return np.array(rows), np.array(rhs)


def _solve(rows: Array, rhs: Array, cells: int, cap: float, heights: Array, floor: float) -> Array:
    """``(N, 3)`` cell values minimising ``sum psi(|b_k|) + K sum (floor - z_k)_+^2 / 2`` under
    ``rows @ b = rhs``, where ``z_k = heights @ b_z`` (+ a constant folded into ``floor``) are the
    node heights.

    ``psi(r) = r^2 / 2 + K (r - cap)_+^2 / 2`` is the least-squares stroke with a stiff penalty
    above ``cap`` (``K = _STIFFNESS``); the second term keeps the hand above ``floor`` (in arm's
    reach) with the same stiffness. Both are convex: Newton's method on the equality-constrained
    problem converges in a few steps and always returns a path (where the conditions need more than
    ``cap``, the excess is spread as thinly as the penalty allows). The penalty's Hessian is 3x3
    per cell plus a few height rows, so each step only solves systems the size of the conditions
    and of the nodes below the floor (Woodbury), never the 3N cells.
    """
    scale = np.abs(rows).max(axis=1, keepdims=True)
    scale[scale == 0] = 1.0
    rows, rhs = rows / scale, rhs / scale[:, 0]
    by_cell = rows.reshape(len(rows), 3, cells).transpose(2, 1, 0)  # (N, 3, m)
    # A centimetre under the floor costs as much as a full-cap stroke over every cell.
    stiff_height = cells * (cap / _HEIGHT_SCALE) ** 2

    def cost(b: Array) -> float:
        size = np.sqrt(np.einsum("ni,ni->n", b, b))
        excess = np.maximum(size - cap, 0.0)
        below = np.maximum(floor - np.einsum("kn,n->k", heights, b[:, 2]), 0.0)
        return 0.5 * float(np.sum(b * b) + _STIFFNESS * excess @ excess + stiff_height * below @ below)

    b = np.zeros((cells, 3))
    value = cost(b)
    for iteration in range(_NEWTON_STEPS):
        size = np.sqrt(np.einsum("ni,ni->n", b, b))
        over = size > cap
        size = np.where(over, size, cap)
        alpha = 1.0 + _STIFFNESS * np.where(over, 1.0 - cap / size, 0.0)
        beta = np.where(over, _STIFFNESS * cap / size**3, 0.0)
        below = floor - np.einsum("kn,n->k", heights, b[:, 2])
        active = below > 0
        gradient = b * alpha[:, None]
        gradient[:, 2] -= stiff_height * np.einsum("kn,k->n", heights[active], below[active])
        # Each cell's Hessian block is alpha I + beta b b^T: Sherman-Morrison inverts it.
        shrink = beta / (alpha + beta * np.einsum("ni,ni->n", b, b))
        inverse = np.eye(3)[None] - shrink[:, None, None] * (b[:, :, None] * b[:, None, :])
        inverse /= alpha[:, None, None]
        pieces = _apply_inverse(
            inverse,
            math.sqrt(stiff_height) * heights[active],
            np.concatenate([by_cell, gradient[:, :, None]], axis=2),
        )
        toward_rows, toward_gradient = pieces[:, :, :-1], pieces[:, :, -1]
        flat = toward_rows.reshape(-1, toward_rows.shape[-1])
        schur = by_cell.reshape(-1, by_cell.shape[-1]).T @ flat
        error = rhs - np.einsum("nim,ni->m", by_cell, b)
        right = -(error + np.einsum("nim,ni->m", by_cell, toward_gradient))
        try:
            multipliers = _spd_solve(schur, right)  # positive definite for independent conditions
        except ArithmeticError:
            multipliers = np.linalg.lstsq(schur, right, rcond=None)[0]
        step = -(toward_gradient + np.einsum("nim,m->ni", toward_rows, multipliers))
        if iteration == 0:
            b, value = b + step, cost(b + step)  # the first step lands on the conditions
            continue
        slope = float(np.sum(gradient * step))
        if slope > -1e-9 * max(1.0, value):
            break
        t = 1.0
        while t > 1e-4 and cost(b + t * step) > value + 0.25 * t * slope:
            t *= 0.3
        b = b + t * step
        value = cost(b)
    return b


def _apply_inverse(inverse: Array, soft: Array, v: Array) -> Array:
    """``M^-1 v`` for ``v`` (N, 3, c), where ``M = D + A^T A``: ``D`` is block diagonal with 3x3
    ``inverse`` blocks (N, 3, 3) and ``A`` the ``soft`` rows (k, N) acting on the heights (the z
    components), by Woodbury's identity."""
    first = np.einsum("nij,njc->nic", inverse, v)
    if not len(soft):
        return first
    projected = np.einsum("kn,nc->kc", soft, first[:, 2, :])
    column = inverse[:, :, 2]  # D^-1 e_z per cell (N, 3)
    small = np.eye(len(soft)) + (soft * column[:, 2]) @ soft.T
    solved = _spd_solve(small, projected)  # (k, c)
    return first - column[:, :, None] * (soft.T @ solved)[:, None, :]


def _spd_solve(matrix: Array, right: Array) -> Array:
    """``matrix^-1 right`` for a symmetric positive definite ``matrix`` (Cholesky, in numpy row
    operations: LAPACK's threaded solver is tens of times slower on these small systems when the
    machine is busy). Raises ``ArithmeticError`` if ``matrix`` is not positive definite."""
    lower = np.array(matrix, dtype=np.float64)
    size = len(lower)
    for j in range(size):
        if not lower[j, j] > 1e-13 * abs(matrix[j, j]):
            raise ArithmeticError("not positive definite")
        lower[j:, j] /= math.sqrt(lower[j, j])
        column = lower[j + 1 :, j]
        lower[j + 1 :, j + 1 :] -= column[:, None] * column[None, :]
    lower = np.tril(lower)
    out = np.array(right, dtype=np.float64)
    for j in range(size):
        out[j] = (out[j] - lower[j, :j] @ out[:j]) / lower[j, j]
    for j in range(size - 1, -1, -1):
        out[j] = (out[j] - lower[j + 1 :, j] @ out[j + 1 :]) / lower[j, j]
    return out


def _spline(accel: Array, start: float, step: float, period: float, p0: Array, v0: Array) -> PeriodicSpline:
    cells = len(accel)
    nxt = np.roll(accel, -1, axis=0)
    dv = 0.5 * step * (accel + nxt)
    velocity = v0 + np.concatenate([np.zeros((1, 3)), np.cumsum(dv, axis=0)[:-1]])
    dp = step * velocity + step * step * (2.0 * accel + nxt) / 6.0
    position = p0 + np.concatenate([np.zeros((1, 3)), np.cumsum(dp, axis=0)[:-1]])
    times = start + step * np.arange(cells)
    return PeriodicSpline(times, position, velocity, period)
