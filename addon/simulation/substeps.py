"""Choosing substeps: an estimate from the mesh, the expected speed and the frame rate, and a per-frame
controller that redoes a frame with more substeps when its edges stretched too far.

Measured on cloth-like icospheres dropped on the ground (coloured Gauss-Seidel, one iteration per
substep): the worst impact stretch stays under 10% when a particle travels at most about 4% of an edge
length per substep, at 642 and 2,562 vertices alike. So fine meshes need proportionally more substeps,
but only while something hits: a falling or resting body needs few. The controller therefore keeps
substeps low while nothing stretches, raises them for the frames that do (redoing such a frame from
its saved state), and never lets a particle move further than its collision radius in one substep
(so thin or fast things do not tunnel through colliders).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
from numpy.typing import NDArray

from .world import World

# Per-substep travel, as a fraction of the shortest edge, that keeps impact stretch under ~10%.
TRAVEL_PER_EDGE = 0.04
# Per-substep travel, as a fraction of the particle radius, that cannot skip through a contact.
TRAVEL_PER_RADIUS = 1.0
# A frame may end with this fraction more kinetic plus potential energy than the frame before it
# started with (rounding) before it counts as pumped (see AdaptiveStepper.step).
ENERGY_TOLERANCE = 1e-6
# How many times a frame is redone at more substeps because the next one pumped energy.
PUMP_REDOS = 3
# An impact squashes: a frame counts as one when its most compressed edge got shorter by this fraction
# of Max Stretch (the 642-vertex jelly: 0 -> 11% at 9 substeps; a resting body varies by 1-2%).
SQUEEZE_PER_STRETCH = 0.5


def expected_speed(positions: NDArray[np.float64], floor: float, gravity: float = 9.81) -> float:
    """The speed of a body falling from its highest point down to ``floor`` (m/s), at least 1 m/s."""
    drop = float(np.max(positions[:, 2])) - floor if len(positions) else 0.0
    return max(1.0, math.sqrt(2.0 * gravity * max(drop, 0.0)))


def estimate_substeps(edge_length: float, speed: float, fps: float, maximum: int = 500) -> int:
    """Substeps per frame that keep impact stretch low for edges of ``edge_length`` hit at ``speed``."""
    if not (edge_length > 0 and speed > 0 and fps > 0):
        return 1
    return int(np.clip(math.ceil(speed / fps / (TRAVEL_PER_EDGE * edge_length)), 1, maximum))


@dataclass
class SubstepLog:
    """What the controller chose: substeps per frame (the accepted attempt), redone frames, and the
    frames whose stretch stayed above the limit even at the maximum."""

    estimate: int = 0
    per_frame: list[int] = field(default_factory=list)
    attempts: int = 0
    # Substeps computed, those of redone attempts included (what the frames cost).
    spent: int = 0
    redone: int = 0
    worst_stretch: float = 0.0
    over_limit: list[int] = field(default_factory=list)
    # Strain-limiting passes over the accepted frames (0 without strain limiting).
    strain_passes: int = 0

    def summary(self) -> str:
        if not self.per_frame:
            return "no frames stepped"
        low, high = min(self.per_frame), max(self.per_frame)
        mean = sum(self.per_frame) / len(self.per_frame)
        text = f"auto substeps {low}-{high} (mean {mean:.0f}"
        if self.estimate:
            text += f", impacts estimated at {self.estimate}"
        text += f"), worst stretch {100 * self.worst_stretch:.1f}%"
        if self.strain_passes:
            text += f" (limited in {self.strain_passes} passes)"
        if self.redone:
            text += f", {self.redone} frame(s) redone with more substeps"
        if self.over_limit:
            text += f"; stretch above the limit at the substep maximum on {len(self.over_limit)} frame(s)"
        return text


@dataclass
class _Frame:
    """One stepped frame: the state it started from (and that state's energy and compression), its
    stretch limit, the substeps it took, and once accepted or kept, the state it ended in."""

    start: tuple
    energy: float
    squeeze: float
    before: float
    limit: float
    substeps: int
    stretch: float
    redone: bool
    end: tuple | None = None
    strain_limiting: tuple = (0, True, 0)


class AdaptiveStepper:
    """Steps a World one frame at a time with as few substeps as keep stretch under ``max_stretch``
    and per-substep travel under the particle radius (between ``minimum`` and ``maximum``)."""

    def __init__(
        self,
        world: World,
        dt: float,
        iterations: int = 1,
        max_stretch: float = 0.08,
        minimum: int = 2,
        maximum: int = 500,
        estimate: int = 0,
        log: SubstepLog | None = None,
    ) -> None:
        self.world = world
        self.dt = dt
        self.iterations = iterations
        self.max_stretch = max_stretch
        self.minimum = max(1, int(minimum))
        self.maximum = max(self.minimum, int(maximum))
        self.current = self.minimum
        self.log = SubstepLog() if log is None else log
        self.log.estimate = int(estimate)
        # The next frame, computed ahead by step(look_ahead=True).
        self._ahead: _Frame | None = None
        self._edges: tuple | None = None

    def _travel_need(self) -> int:
        world = self.world
        v = world.velocities
        fastest = float(np.sqrt(np.max(np.einsum("ij,ij->i", v, v)))) if len(v) else 0.0
        fastest += float(np.linalg.norm(world.gravity)) * self.dt
        radius = max(world.collision_radius, 1e-4)
        return math.ceil(fastest * self.dt / (TRAVEL_PER_RADIUS * radius))

    @property
    def guards_energy(self) -> bool:
        """Whether ``step(look_ahead=True)`` checks for energy pumped by a change of substeps: in worlds
        with inextensible edges (rigid bodies and free particles have none)."""
        return self.world.stiff_edge_count > 0

    def _compression(self) -> float:
        """How much shorter than its rest length the most compressed distance constraint is (>= 0)."""
        if self._edges is None:
            i, j, rest = self.world.distance_constraints
            keep = rest > 1e-12
            self._edges = (i[keep], j[keep], rest[keep])
        i, j, rest = self._edges
        x = self.world.positions
        delta = x.take(i, axis=0) - x.take(j, axis=0)
        return float(max(0.0, 1.0 - np.min(np.sqrt(np.einsum("ij,ij->i", delta, delta)) / rest)))

    def _attempt(self, state: tuple, n: int, limit: float) -> tuple[int, float, bool]:
        """Step the frame from ``state`` with ``n`` substeps, redoing it with more while its stretch
        is over ``limit`` (up to the maximum). Returns ``(substeps, stretch, redone)``."""
        world = self.world
        redone = False
        while True:
            self.log.attempts += 1
            world.step(self.dt, substeps=n, iterations=self.iterations)
            self.log.spent += n
            stretch = world.max_stretch()
            if stretch <= limit or n >= self.maximum:
                return n, stretch, redone
            world.restore(state)
            redone = True
            # Stretch falls roughly in proportion to the substeps (module docstring): jump to where
            # it should pass, with a margin, rather than doubling blindly.
            factor = float(np.clip(1.3 * stretch / self.max_stretch, 1.5, 8.0))
            n = min(self.maximum, math.ceil(n * factor))

    def _frame(self) -> _Frame:
        """The next frame from the world's current state, at the substeps the controller picks."""
        world = self.world
        before = world.max_stretch()
        # A frame fails only if it made stretch worse than allowed: a body that starts stretched
        # (or is pinned apart) is not forced to the maximum forever.
        limit = max(self.max_stretch, before)
        n = int(np.clip(max(self.current, self._travel_need()), self.minimum, self.maximum))
        start = world.snapshot()
        guarded = self.guards_energy
        energy, squeeze = (world.mechanical_energy(), self._compression()) if guarded else (0.0, 0.0)
        n, stretch, redone = self._attempt(start, n, limit)
        return _Frame(start, energy, squeeze, before, limit, n, stretch, redone)

    def step(self, look_ahead: bool = False) -> int:
        """Advance one frame; returns the substeps used.

        With ``look_ahead`` (the bakes: every frame but the last) the next frame is computed too and
        kept for the next call. Inextensible Gauss-Seidel constraints are stiffer the more substeps
        (about n^2), so a body squashed by an impact at few substeps and released at many gains
        energy, like a spring stiffened at full compression: a 642-vertex jelly dropped from 1.3 m
        rose to 1.39 m. When the next frame needs more substeps than this one and ends with more
        kinetic plus potential energy than this one started with (which no passive body can), this
        frame is redone at the next one's substeps, so the squash and the release see the same
        stiffness. A frame that does not pump costs nothing extra: the frame looked at is the next
        frame, kept."""
        world = self.world
        frame, self._ahead = self._ahead, None
        if frame is None:
            frame = self._frame()
        else:
            world.restore(frame.end)
            world.last_strain_limiting = frame.strain_limiting
        if look_ahead and self.guards_energy:
            frame = self._without_pumping(frame)
        self._accept(frame)
        return frame.substeps

    def _without_pumping(self, frame: _Frame) -> _Frame:
        """``frame``, redone at the next frame's substeps while that one pumps energy (see ``step``);
        keeps the next frame for the next call."""
        world = self.world
        for _ in range(PUMP_REDOS + 1):
            frame.end = world.snapshot()
            frame.strain_limiting = world.last_strain_limiting
            squashed = self._compression() > frame.squeeze + SQUEEZE_PER_STRETCH * self.max_stretch
            current = self.current
            self.current = self._following(frame)
            ahead = self._frame()
            self.current = current
            if not squashed or ahead.substeps <= frame.substeps:
                break
            if self.world.mechanical_energy() <= frame.energy + ENERGY_TOLERANCE * abs(frame.energy):
                break
            world.restore(frame.start)
            n, stretch, _ = self._attempt(frame.start, ahead.substeps, frame.limit)
            frame = replace(frame, substeps=n, stretch=stretch, redone=True)
        else:  # redone as often as allowed: accept the last redo as it is
            frame.end = world.snapshot()
            frame.strain_limiting = world.last_strain_limiting
            return frame
        ahead.end = world.snapshot()
        ahead.strain_limiting = world.last_strain_limiting
        self._ahead = ahead
        world.restore(frame.end)
        world.last_strain_limiting = frame.strain_limiting
        return frame

    def _accept(self, frame: _Frame) -> None:
        world = self.world
        n, stretch = frame.substeps, frame.stretch
        self.log.redone += int(frame.redone)
        self.log.per_frame.append(n)
        self.log.worst_stretch = max(self.log.worst_stretch, stretch)
        if world.strain_limiting:
            self.log.strain_passes += world.last_strain_limiting[0]
        if stretch > self.max_stretch and stretch > frame.before:
            self.log.over_limit.append(world.frame)
        self.current = self._following(frame)

    def _following(self, frame: _Frame) -> int:
        """The substeps the frame after ``frame`` tries first (with the world at ``frame``'s end)."""
        if self.world.strain_limiting:
            return self._next_limited(frame.substeps, frame.redone)
        return self._next(frame.substeps, frame.stretch)

    def _next(self, n: int, stretch: float) -> int:
        """The substeps to try first next frame: fewer while stretch stays well inside the limit, the
        further inside the faster. The stretch of a crumpling body jumps from frame to frame, so a
        frame that fails costs its redo; measured over ten drops (642 and 2,562 vertices, 0.8-2 m)
        and two at 10,242, relaxing to 0.6 below half the limit and 0.8 below three quarters spent
        12-16% fewer substeps in total, redone frames included, than relaxing only below half."""
        if stretch < 0.5 * self.max_stretch:
            return max(self.minimum, math.floor(0.6 * n))
        if stretch < 0.75 * self.max_stretch:
            return max(self.minimum, math.floor(0.8 * n))
        return n

    def _next_limited(self, n: int, redone: bool) -> int:
        """The substeps to try first next frame when the world limits strain at each frame's end:
        the limiting holds the stretch whatever the substeps, but it costs more passes the fewer
        there were, so substeps follow what costs less. Fewer while the limiting cost under half of
        the frame's substeps (in edge projections), more while it cost over twice as much. Measured
        on the drop against relaxing whenever the frame passed and against relaxing only when the
        passes were at most the substeps: 1.9 / 5.1 / 20.5 / 67 ms per frame at 642 / 2,562 /
        10,242 / 40,962 vertices (CPU), against 1.9 / 5.0 / 28.6 / 56 and 1.9 / 4.9 / 21.6 / 86."""
        if redone:
            return n
        work = self.world.last_strain_limiting[2]
        substep_work = n * self.world.stiff_edge_count
        if work <= 0.5 * substep_work:
            return max(self.minimum, math.floor(0.6 * n))
        if work <= 2 * substep_work:
            return n
        return min(self.maximum, math.ceil(1.25 * n))
