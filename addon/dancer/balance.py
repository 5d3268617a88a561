"""The paper's section 3 experiment: from the heel to the middle of the feet, COM vs COP strategy."""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from .anthropometry import DancerError
from .model import build_body
from .sim import CONTROL_DT, DancerSim, bone_rotations, lean_for_shift
from .support import clamp_into_hull

SETTLE_TOLERANCE = 0.01
STRATEGIES = ("cop", "com")


@dataclass(frozen=True)
class Gains:
    """Controller gains. COM strategy (eq. 6): ``com_position`` [1/s], ``com_velocity`` [-].

    COP strategy: eq. 7 ``cop_com_position`` [-] and ``cop_com_velocity`` [s] place the desired
    COP; eq. 9 ``cop_tracking`` [1/s] and ``cop_damping`` [-] turn the ankles to bring the COP
    there. ``hip_com`` [1/s] is the COM correction at the supporting hip on a small polygon.
    ``one_foot_tracking`` [1/s] replaces ``cop_tracking`` while one foot carries the weight: the
    polygon is a third as wide, so the COP has to follow faster (the section 3 test is on two feet).
    """

    com_position: float = 0.55
    com_velocity: float = 0.5
    cop_com_position: float = 1.6
    cop_com_velocity: float = 0.75
    cop_tracking: float = 6.0
    cop_damping: float = 0.0
    hip_com: float = 1.0
    one_foot_tracking: float = 8.0

    def validate(self) -> None:
        for name, value in self.__dict__.items():
            if not np.isfinite(value):
                raise DancerError(f"gain {name} must be a finite number, got {value}")
            if value < 0:
                raise DancerError(f"gain {name} must not be negative, got {value}")


@dataclass
class Balance:
    """Time series of one balance run (metres, seconds, z up)."""

    strategy: str
    times: NDArray[np.float64]
    com: NDArray[np.float64]
    cop: NDArray[np.float64]
    target: NDArray[np.float64]
    settle_time: float
    fell: bool
    fall_time: float = float("inf")
    support_polygon: NDArray[np.float64] = field(default_factory=lambda: np.zeros((0, 2)))
    rotations: dict[str, NDArray[np.float64]] = field(default_factory=dict)
    root_positions: NDArray[np.float64] = field(default_factory=lambda: np.zeros((0, 3)))

    @property
    def cop_amplitude(self) -> float:
        """Largest COP distance (anterior axis) from the target once the COM first got near it.

        It measures how much the weight on the feet keeps changing while the body is being held
        at its goal: the paper's "amplitude of the oscillation of the centre of pressure".
        """
        near = np.nonzero(np.abs(self.com[:, 0] - self.target[0]) < SETTLE_TOLERANCE)[0]
        if len(near) == 0:
            return float("inf")
        tail = self.cop[near[0]:, 0] - self.target[0]
        return float(np.abs(tail).max())


def settle_time(times: NDArray[np.float64], com: NDArray[np.float64], target: NDArray[np.float64],
                tolerance: float = SETTLE_TOLERANCE) -> float:
    """First time after which the projected COM stays within ``tolerance`` of ``target``; inf if never."""
    off = np.linalg.norm(com[:, :2] - target[:2], axis=1) > tolerance
    if len(off) == 0 or off[-1]:
        return float("inf")
    outside = np.nonzero(off)[0]
    return float(times[0] if len(outside) == 0 else times[outside[-1] + 1])


def _pad(arr: NDArray[np.float64], n: int) -> NDArray[np.float64]:
    return arr if len(arr) >= n else np.concatenate([arr, np.repeat(arr[-1:], n - len(arr), axis=0)])


def simulate_balance_steps(
    strategy: str = "cop",
    duration: float = 12.0,
    start: str = "heel",
    gains: Gains | None = None,
    height: float = 1.65,
    mass: float = 55.0,
    sex: str = "female",
) -> Generator[float, None, Balance]:
    """:func:`simulate_balance` in chunks: yields progress in [0, 1], returns the :class:`Balance`."""
    if strategy not in STRATEGIES:
        raise DancerError(f"strategy must be 'cop' or 'com', got {strategy!r}")
    if start not in ("heel", "toe", "middle"):
        raise DancerError(f"start must be 'heel', 'middle' or 'toe', got {start!r}")
    if not np.isfinite(duration) or not 0.1 <= duration <= 120.0:
        raise DancerError(f"duration must be between 0.1 and 120 s, got {duration}")
    gains = gains or Gains()
    gains.validate()
    body = build_body(height, mass, sex)
    sim = DancerSim(body)
    sim.set_angles({})
    sim.place()
    meas = sim.measure()
    hull = meas.hull
    xs = hull[:, 0]
    heel_edge, toe_edge = xs.min(), xs.max()
    target = np.array([0.5 * (heel_edge + toe_edge), hull[:, 1].mean(), 0.0])
    start_x = {"heel": heel_edge + 0.12 * (toe_edge - heel_edge), "middle": target[0],
               "toe": toe_edge - 0.12 * (toe_edge - heel_edge)}[start]
    # Lean the straight body about the ankles until its COM is over the start point.
    height_above_ankle = meas.com[2] - body.body("foot.L").origin[2]
    lean_y = 0.0
    for _ in range(4):
        lean_y += (start_x - meas.com[0]) / height_above_ankle
        sim.set_angles({})
        sim.place(lean=(0.0, lean_y))
        meas = sim.measure()
    base = sim.targets.copy()
    ankles = {f"foot.{s}_{a}": -1.0 for s in ("L", "R") for a in ("y", "x")}

    n_ticks = int(round(duration / CONTROL_DT))
    times = np.empty(n_ticks + 1)
    com = np.empty((n_ticks + 1, 3))
    cop = np.empty((n_ticks + 1, 3))
    quats = np.empty((n_ticks + 1, sim.model.nbody, 4))
    roots = np.empty((n_ticks + 1, 3))
    lean = np.zeros(2)
    last_cop = meas.cop[:2].copy()
    fell, fall_time = False, float("inf")
    count = 0
    for tick in range(n_ticks + 1):
        t = tick * CONTROL_DT
        times[tick], com[tick], cop[tick] = t, meas.com, meas.cop
        quats[tick] = sim.data.xquat
        roots[tick] = sim.data.xpos[sim.root]
        count = tick + 1
        if sim.fallen(meas) or meas.total_normal_force <= 0.0:
            fell, fall_time = True, t
            break
        if tick == n_ticks:
            break
        c, v = meas.com[:2], meas.com_velocity[:2]
        h = max(meas.com[2] - sim.data.xpos[sim.body_ids["foot.L"], 2], 0.2)
        if strategy == "com":
            shift = gains.com_position * (target[:2] - c) - gains.com_velocity * v
        else:
            desired = c + gains.cop_com_position * (c - target[:2]) + gains.cop_com_velocity * v
            desired = clamp_into_hull(desired, meas.hull, 0.1 * sim.body.contact_radius)
            cop_velocity = (meas.cop[:2] - last_cop) / CONTROL_DT
            shift = gains.cop_tracking * (meas.cop[:2] - desired) - gains.cop_damping * cop_velocity
        last_cop = meas.cop[:2].copy()
        lean += CONTROL_DT * lean_for_shift(shift, h)
        sim.apply(base + sim.lean_offsets(lean, ankles))
        meas = sim.measure()
        if tick % 100 == 0:
            yield tick / n_ticks
    times, com, cop, quats, roots = times[:count], com[:count], cop[:count], quats[:count], roots[:count]
    if fell:
        # Keep the arrays at full length so plots share a time axis; the fall time says where.
        full = np.arange(n_ticks + 1) * CONTROL_DT
        com, cop, quats, roots = (_pad(a, len(full)) for a in (com, cop, quats, roots))
        times = full
    rotations, _ = bone_rotations(sim, quats)
    settle = float("inf") if fell else settle_time(times, com, target)
    yield 1.0
    return Balance(strategy, times, com, cop, target, settle, fell, fall_time, hull, rotations, roots)


def simulate_balance(strategy: str = "cop", duration: float = 12.0, start: str = "heel",
                     gains: Gains | None = None, height: float = 1.65, mass: float = 55.0,
                     sex: str = "female") -> Balance:
    """Balance from a start over the heel to the middle of the feet with one strategy.

    Feet parallel at hip width, ankles the only controlling joints (the paper's section 3).
    ``settle_time`` is when the projected COM stays within 1 cm of the target for good; a gain
    that cannot balance ends with ``fell=True`` and ``fall_time``.
    """
    steps = simulate_balance_steps(strategy, duration, start, gains, height, mass, sex)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value
