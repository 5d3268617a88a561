"""From a parsed siteswap to sampled motion: prop flights, hand paths, arms and prop spin.

Timing follows Juggling Lab: with beat duration ``tau`` and dwell ``d`` beats, a throw on beat ``b``
leaves at ``b tau`` (a ``1`` leaves ``max(0, d + 0.3 - 1)`` beats early) and its prop is caught
``d`` beats before its next throw, so a throw of value ``n`` flies ``(n - d) tau``. Props fly exact
parabolas (several, joined at the floor, for bounces). Hands follow C1 Hermite splines whose knots
are the throws (hand velocity equals the prop's launch velocity) and catches (hand moves along the
incoming prop), plus gunswap-style dwell path points. Elbows come from the shared two-bone solver.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import reduce

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..kinematics.two_bone import elbow_positions as solve_elbows
from ..quaternions import continuous as continuous_quaternions
from ..quaternions import from_axis_angle as axis_angle_quaternions
from ..quaternions import multiply as quaternion_multiply
from ..quaternions import rotate as rotate_vectors
from ..quaternions import slerp
from ..quaternions import to_matrix as quaternion_to_matrix
from .body import Body, juggler_placement, yaw_matrix
from .body_motion import BodyMotion, body_motion
from .hand_planner import HandEvent, least_peak_acceleration, plan_hand_path
from .model import LEFT, Siteswap, Throw
from .paths import (
    GRAVITY,
    Ballistic,
    BounceError,
    DwellPath,
    MotionError,
    PeriodicSpline,
    parabola,
    parse_dwell_paths,
    solve_bounce,
)
from .timing import (
    BOUNCE_FRAC_DEFAULT,
    DWELL_DEFAULT,
    FLOOR_DROP_DEFAULT,
    SQUEEZE_BEATS_DEFAULT,
    auto_beat_duration,
    neighbour_spacing,
    rebound_speed_ratio,
)

Array = NDArray[np.float64]

PROP_TYPES = ("ball", "club", "ring")
#: A human hand's comfortable peak acceleration while juggling (4 g), the default bound.
MAX_HAND_ACCELERATION = 4 * GRAVITY
GUNSWAP_SHOULDER_HALF_WIDTH = 0.225
#: Hands short of the arm's reach by less than this stay unreported: the palm misses by under 1 cm.
_REACH_TOLERANCE = 0.01

# Juggling Lab's default hand positions (cm, outward from the body centre), indexed by throw value.
_SAME_THROW_X = (0, 20, 25, 12, 7, 7.5, 5, 5, 5)
_CROSS_THROW_X = (0, 17, 17, 7, 10, 14, 25, 24, 30)
_CATCH_X = (0, 17, 25, 30, 40, 45, 45, 50, 50)
_PASS_THROW = (0.18, 0.06, 0.04)
_REST_HAND = (0.18, 0.0, -0.05)

#: Earliest a catch may follow the same hand's previous throw, and latest before its own throw (beats).
_CATCH_AFTER_THROW = 0.05
_CATCH_BEFORE_THROW = 0.02
_MIN_FLIGHT = 0.1
_ONE_AIRTIME = 0.3
#: Hand knots closer than this are one event.
_SAME_TIME = 1e-7
#: Empty-hand gaps longer than this (seconds) get a stop in the middle instead of one big loop.
_LONG_GAP = 0.45
#: A hand carrying a prop from its catch to its throw scoops in one stroke unless the dwell is longer
#: than this (a slow automatic beat gives dwells of 0.45 s and more).
_LONG_DWELL = 1.0
_FOLLOW_THROUGH = 0.15
#: Natural prop sizes at prop_size 1: ball diameter, ring diameter, club length (metres).
PROP_LENGTHS = {"ball": 0.068, "ring": 0.32, "club": 0.50}
#: Clubs arrive a little over-rotated and swing back during the dwell (gunswap's +0.2 turn).
_CLUB_OVERSPIN = 0.2
_CLUB_TILT = math.radians(25.0)
_MAX_CATCH_SPEED = 1.5
#: A cubic hand stroke that ends at launch speed v after a dwell of T dips about 0.148 v T below
#: its ends; raising the throw point by half of that (capped) keeps the stroke inside arm's reach.
_STROKE_DIP = 0.148
_MAX_THROW_LIFT = 0.15
#: How far below its lowest throw or catch the bounded planner lets a hand dip (metres).
_MAX_DIP = 0.2
_TARGET_SHARE = 0.92
_REACH_MARGIN = 0.06
#: The hand is not at rest at the bottom of its run, nor at full acceleration over all of it.
_RUN_MARGIN = 1.5
#: The automatic beat is tried this much slower when the hands need more than the bound; stretching
#: stops as soon as it makes them need more (it helps the sideways strokes, whose accelerations go
#: as 1 / beat^2, and hurts the vertical ones, whose launch speeds grow with the beat while arm's
#: reach fixes their run).
_HAND_STRETCH = (1.1, 1.2, 1.35, 1.5)
#: Beyond this share of the bound the sideways strokes are not what stretching could fix.
_STRETCH_REACH = 1.25
_MAX_SCOOP = 0.15
_MIN_SCOOP = 0.06
_THROW_PUSH = 0.1


@dataclass(frozen=True)
class Flight:
    """One throw of one prop, with its arcs (several for bounces)."""

    prop: int
    throw_time: float
    catch_time: float
    from_juggler: int
    from_hand: int
    to_juggler: int
    to_hand: int
    value: int
    is_pass: bool
    multiplex: bool
    bounces: int
    arcs: tuple[Ballistic, ...]
    spin_turns: float


@dataclass
class _PropTrack:
    """Segments of one prop over its own period, sampled by searchsorted on ``starts``."""

    period: float
    starts: Array
    is_flight: NDArray[np.bool_]
    # flights
    p0: Array
    v0: Array
    q0: Array
    spin_axis: Array
    spin_rate: Array
    spin_t0: Array
    # dwells
    hand_index: NDArray[np.int64]
    slot: Array
    q_start: Array
    q_end: Array
    ends: Array
    #: Gravity of each flight segment (m/s^2); None: the pattern's.
    gravity: Array | None = None


@dataclass
class Pattern:
    """A planned juggling pattern: sample it at any times (seconds) to get metres, z up."""

    siteswap: Siteswap
    beat_duration: float
    dwell_ratio: float
    loop_beats: int
    num_props: int
    num_jugglers: int
    prop_type: str
    prop_size: float
    chicken_wing: float
    body: Body
    juggler_origins: Array
    juggler_yaws: Array
    flights: tuple[Flight, ...]
    #: Vector from the hand point to the prop's origin, in the prop's own frame.
    hold_offset: Array
    #: None when every hand stays in reach; otherwise one sentence for the user.
    reach_warning: str | None = None
    #: True when the beat is Juggling Lab's automatic one (possibly slowed for bounces).
    auto_beat: bool = False
    #: Per juggler, None (standing still) or periodic splines of its origin and of its yaw (in the
    #: first component), when a JML file moves the juggler.
    root_motion: list | None = None
    #: How much the juggler's body moves with the pattern (0: a still torso, 1: ProcAnim's default).
    body_motion_gain: float = 1.0
    #: None when every hand stays within ``max_hand_acceleration``; otherwise one sentence naming the
    #: worst throw or catch and the acceleration it needs.
    acceleration_warning: str | None = None
    #: Height of the floor surface the props bounce on (metres, world z).
    floor_height: float = 0.0
    #: Gravity of the prop flights (m/s^2; Juggling Lab's gravity= parameter, 980 cm/s^2 by default).
    gravity: float = GRAVITY
    #: RGB (0-1) per prop from Juggling Lab's colors=, or None for ProcAnim's own colours.
    prop_colors: list[tuple[float, float, float]] | None = None
    #: A name for the pattern (Juggling Lab's title=), or None.
    title: str | None = None
    #: Juggling Lab's body= positions (per juggler, per beat, (angle deg, x, y, z cm)), or None.
    body_positions: list | None = None
    _hands: list[PeriodicSpline] = field(default_factory=list, repr=False)
    _tracks: list[_PropTrack] = field(default_factory=list, repr=False)

    @property
    def loop_duration(self) -> float:
        """Seconds after which every prop, hand and arm is back where it started."""
        return self.loop_beats * self.beat_duration

    # ---------------------------------------------------------------------------------- hands

    def hand_positions(self, times: ArrayLike) -> Array:
        """``(num_jugglers, 2, T, 3)``: where a held prop sits, hand index 0 = left."""
        return self._sample_hands(times)[0]

    def hand_knot_times(self, juggler: int, hand: int) -> Array:
        """Times (within the first hand cycle) where a hand's spline pieces join: throws, catches,
        dwell path points, scoop bottoms."""
        return self._hands[juggler * 2 + hand].times.copy()

    def hand_velocities(self, times: ArrayLike) -> Array:
        return self._sample_hands(times)[1]

    def hand_acceleration_peaks(self) -> Array:
        """``(num_jugglers, 2, 2)``: each hand's largest acceleration (m/s^2) and when (s, in the loop)."""
        out = np.zeros((self.num_jugglers, 2, 2))
        for index, spline in enumerate(self._hands):
            starts, spans, first, last = spline.end_accelerations()
            if not len(starts):
                continue
            size = np.maximum(np.linalg.norm(first, axis=-1), np.linalg.norm(last, axis=-1))
            k = int(np.argmax(size))
            at_end = np.linalg.norm(last[k]) > np.linalg.norm(first[k])
            out[index // 2, index % 2] = (
                size[k],
                (starts[k] + (spans[k] if at_end else 0.0)) % self.loop_duration,
            )
        return out

    def acceleration_report(self, limit: float) -> list[tuple[float, int, int, float, str]]:
        """Throws and catches whose hand strokes need more than ``limit`` m/s^2, worst first:
        ``(acceleration, juggler, hand, time, "throw 5" / "catch 3")``."""
        found = []
        loop = self.loop_duration
        for index, spline in enumerate(self._hands):
            juggler, hand = divmod(index, 2)
            starts, spans, first, last = spline.end_accelerations()
            for start, span, a0, a1 in zip(starts, spans, first, last, strict=True):
                for when, size in ((start, np.linalg.norm(a0)), (start + span, np.linalg.norm(a1))):
                    if size <= limit:
                        continue
                    found.append(
                        (
                            float(size),
                            juggler,
                            hand,
                            float(when % loop),
                            self._event_near(juggler, hand, when),
                        )
                    )
        found.sort(key=lambda item: -item[0])
        return found

    def hand_velocity_windows(self, laid_out: bool = False) -> list[list[tuple[float, float, float]]]:
        """Per hand (index ``juggler * 2 + hand``), the windows its vertical velocity must pass
        through over the loop: ``(time s, lo, hi)`` m/s.

        A throw leaves with its prop's vertical launch speed (a multiplex: anywhere between its
        props' speeds, the hand leaves with one); a catch moves along the incoming prop, 0 to 1 times
        its speed, so its vertical speed lies between the prop's and 0 (between every landing
        prop's and 0 when several land at once). Holds add nothing. ``laid_out=False``: each prop
        is thrown and caught at one height (Juggling Lab's layout), ``+-g T / 2`` for a flight of
        ``T`` seconds, so the windows depend on the timing in beats and scale with the beat;
        bounced throws keep their real vertical speeds (the floor does not scale). ``laid_out=True``:
        the planned props' own speeds (with this layout's throw and catch heights)."""
        loop = self.loop_duration
        # Events of one hand at one moment (a multiplex, props landing together) share a window.
        windows: list[dict[float, tuple[float, list[float]]]] = [{} for _ in range(2 * self.num_jugglers)]
        for flight in self.flights:
            first, last = flight.arcs[0], flight.arcs[-1]
            if laid_out or flight.bounces:
                launch, arrival = float(first.v0[2]), float(last.at(flight.catch_time)[1][2])
            else:
                launch = 0.5 * first.gravity * (flight.catch_time - flight.throw_time)
                arrival = -launch
            for hand, when, speeds in (
                (flight.from_juggler * 2 + flight.from_hand, flight.throw_time, (launch,)),
                (flight.to_juggler * 2 + flight.to_hand, flight.catch_time, (arrival, 0.0)),
            ):
                when %= loop
                windows[hand].setdefault(round(when, 9) % loop, (when, []))[1].extend(speeds)
        return [[(t, min(v), max(v)) for t, v in sorted(found.values())] for found in windows]

    def hand_acceleration_bound(self, laid_out: bool = False) -> float:
        """The least peak vertical acceleration (m/s^2) that ANY hand path needs in this pattern:
        throws with the prop's exact vertical speed, catches along the incoming prop, a closed loop
        (see :func:`.hand_planner.least_peak_acceleration` and :meth:`hand_velocity_windows`).
        The hand's positions and arm's reach are left out, so no planner or arm does better.
        ``laid_out=False`` (each prop thrown and caught at one height, Juggling Lab's layout)
        depends only on the timing in beats: the same at every beat for patterns without bounces.
        ``laid_out=True`` uses this plan's own prop speeds (its throw and catch heights): the plan's
        peak is never below it. Other heights change the prop speeds, and so the bound."""
        return max(
            (least_peak_acceleration(w, self.loop_duration) for w in self.hand_velocity_windows(laid_out)),
            default=0.0,
        )

    def _event_near(self, juggler: int, hand: int, when: float) -> str:
        """The throw or catch of this hand closest in time to ``when`` (seconds)."""
        loop = self.loop_duration
        best, label = math.inf, "hand stroke"
        for flight in self.flights:
            for kind, t, who in (
                ("throw", flight.throw_time, (flight.from_juggler, flight.from_hand)),
                ("catch", flight.catch_time, (flight.to_juggler, flight.to_hand)),
            ):
                if who != (juggler, hand):
                    continue
                gap = abs((t - when + loop / 2) % loop - loop / 2)
                if gap < best:
                    value = f" {flight.value}" if flight.value else ""
                    best, label = gap, f"{kind}{value}"
        return label

    def _sample_hands(self, times: ArrayLike) -> tuple[Array, Array]:
        t = np.atleast_1d(np.asarray(times, dtype=np.float64))
        pos = np.empty((self.num_jugglers, 2, len(t), 3))
        vel = np.empty_like(pos)
        for index, spline in enumerate(self._hands):
            p, v = spline.sample(t)
            pos[index // 2, index % 2] = p
            vel[index // 2, index % 2] = v
        return pos, vel

    def body_motion(self, times: ArrayLike) -> BodyMotion:
        """The juggler's own motion (knee dip, torso sway and turn, head tracking); periodic."""
        return body_motion(self, times, self.body_motion_gain)

    def torso_transforms(self, times: ArrayLike, motion: BodyMotion | None = None) -> Array:
        """``(J, T, 4, 4)``: how the upper body (spine, shoulders, head) has moved, in each juggler's
        own frame: turned about the hips by ``motion.torso``, then lowered by the knee dip."""
        t = np.atleast_1d(np.asarray(times, dtype=np.float64))
        motion = motion or self.body_motion(t)
        rotation = quaternion_to_matrix(motion.torso)  # (J, T, 3, 3)
        pivot = np.array([0.0, 0.0, self.body.hip_height])
        out = np.zeros((self.num_jugglers, len(t), 4, 4))
        out[..., :3, :3] = rotation
        out[..., :3, 3] = pivot - rotation @ pivot
        out[..., 2, 3] -= motion.hip_drop
        out[..., 3, 3] = 1.0
        return out

    def juggler_frames(self, times: ArrayLike) -> tuple[Array, Array]:
        """Where each juggler stands and faces at ``times``: origins ``(J, T, 3)`` and yaws ``(J, T)``.
        Jugglers stand still unless a JML file moves them (``root_motion``)."""
        t = np.atleast_1d(np.asarray(times, dtype=np.float64))
        origins = np.broadcast_to(self.juggler_origins[:, None, :], (self.num_jugglers, len(t), 3)).copy()
        yaws = np.broadcast_to(self.juggler_yaws[:, None], (self.num_jugglers, len(t))).copy()
        for j, motion in enumerate(self.root_motion or ()):
            if motion is not None:
                place, turn = motion
                origins[j] = place.sample(t)[0]
                yaws[j] = turn.sample(t)[0][:, 0]
        return origins, yaws

    def shoulder_positions(self, times: ArrayLike) -> Array:
        t = np.atleast_1d(np.asarray(times, dtype=np.float64))
        out = np.empty((self.num_jugglers, 2, len(t), 3))
        moved = self.torso_transforms(t) if self.body_motion_gain else None
        origins, yaws = self.juggler_frames(t)
        for j in range(self.num_jugglers):
            for hand in (0, 1):
                local = np.broadcast_to(self.body.shoulder_local(hand), (len(t), 3))
                if moved is not None:
                    local = np.einsum("tij,tj->ti", moved[j, :, :3, :3], local) + moved[j, :, :3, 3]
                out[j, hand] = _yawed(local, yaws[j]) + origins[j]
        return out

    def elbow_positions(self, times: ArrayLike) -> Array:
        return self._solve_arms(times)[0]

    def _solve_arms(self, times: ArrayLike) -> tuple[Array, NDArray[np.bool_]]:
        hands = self.hand_positions(times)
        shoulders = self.shoulder_positions(times)
        outward = np.empty_like(hands)
        _, yaws = self.juggler_frames(times)
        for j in range(self.num_jugglers):
            for hand in (0, 1):
                side = np.broadcast_to([self.body.hand_side(hand), 0.0, 0.0], (yaws.shape[1], 3))
                outward[j, hand] = _yawed(side, yaws[j])
        return solve_elbows(
            shoulders, hands, self.body.upper_arm, self.body.forearm, self.chicken_wing, outward=outward
        )

    def local_arm_points(self, times: ArrayLike, juggler: int) -> tuple[Array, Array, Array]:
        """Shoulders, elbows, hands ``(2, T, 3)`` of one juggler in that juggler's own frame."""
        t = np.atleast_1d(np.asarray(times, dtype=np.float64))
        elbows, _ = self._solve_arms(t)
        origins, yaws = self.juggler_frames(t)

        def local(points: Array) -> Array:
            return _yawed(points - origins[juggler], -yaws[juggler])

        return (
            local(self.shoulder_positions(t)[juggler]),
            local(elbows[juggler]),
            local(self.hand_positions(t)[juggler]),
        )

    # ---------------------------------------------------------------------------------- props

    def prop_positions(self, times: ArrayLike) -> Array:
        """``(num_props, T, 3)`` prop origins (ball centre, club balance point, ring centre)."""
        return self._sample_props(times, want_velocity=False)[0]

    def prop_velocities(self, times: ArrayLike) -> Array:
        return self._sample_props(times, want_velocity=True)[1]

    def prop_orientations(self, times: ArrayLike) -> Array:
        """``(num_props, T, 4)`` unit quaternions, w first, sign-continuous in time."""
        t = np.atleast_1d(np.asarray(times, dtype=np.float64))
        out = np.empty((self.num_props, len(t), 4))
        for index, track in enumerate(self._tracks):
            out[index] = _track_orientations(track, t)
        return continuous_quaternions(out, axis=1)

    def grip_positions(self, times: ArrayLike) -> Array:
        """``(num_props, T, 3)``: the point of each prop a hand holds (prop origin minus hold offset)."""
        t = np.atleast_1d(np.asarray(times, dtype=np.float64))
        offsets = rotate_vectors(self.prop_orientations(t), self.hold_offset)
        return self.prop_positions(t) - offsets

    def _sample_props(self, times: ArrayLike, want_velocity: bool) -> tuple[Array, Array | None]:
        t = np.atleast_1d(np.asarray(times, dtype=np.float64))
        pos = np.empty((self.num_props, len(t), 3))
        vel = np.empty_like(pos) if want_velocity else None
        for index, track in enumerate(self._tracks):
            p, v = self._track_positions(track, t, want_velocity)
            pos[index] = p
            if vel is not None:
                vel[index] = v
        return pos, vel

    def _track_positions(
        self, track: _PropTrack, t: Array, want_velocity: bool
    ) -> tuple[Array, Array | None]:
        local = track.starts[0] + np.mod(t - track.starts[0], track.period)
        seg = np.searchsorted(track.starts, local, side="right") - 1
        pos = np.empty((len(t), 3))
        vel = np.empty((len(t), 3)) if want_velocity else None
        fly = track.is_flight[seg]
        if np.any(fly):
            s = seg[fly]
            dt = (local[fly] - track.starts[s])[:, None]
            pos[fly] = track.p0[s] + track.v0[s] * dt
            g = self.gravity if track.gravity is None else track.gravity[s]
            pos[fly, 2] -= 0.5 * g * dt[:, 0] ** 2
            if vel is not None:
                vel[fly] = track.v0[s]
                vel[fly, 2] -= g * dt[:, 0]
        held = ~fly
        if np.any(held):
            s = seg[held]
            th = local[held]
            for hand_index in np.unique(track.hand_index[s]):
                mask = track.hand_index[s] == hand_index
                idx = np.nonzero(held)[0][mask]
                hp, hv = self._hands[hand_index].sample(th[mask])
                q = _dwell_quaternions(track, s[mask], th[mask])
                pos[idx] = hp + track.slot[s[mask]] + rotate_vectors(q, self.hold_offset)
                if vel is not None:
                    h = 1e-4
                    q_plus = _dwell_quaternions(track, s[mask], th[mask] + h)
                    q_minus = _dwell_quaternions(track, s[mask], th[mask] - h)
                    spin = rotate_vectors(q_plus, self.hold_offset) - rotate_vectors(
                        q_minus, self.hold_offset
                    )
                    vel[idx] = hv + spin / (2 * h)
        return pos, vel

    def _to_world(self, juggler: int, local: ArrayLike) -> Array:
        return (
            np.asarray(local, dtype=np.float64) @ yaw_matrix(self.juggler_yaws[juggler]).T
            + (self.juggler_origins[juggler])
        )


def _yawed(points: Array, yaws: Array) -> Array:
    """Points ``(..., T, 3)`` turned about +Z by per-sample ``yaws`` ``(T,)``."""
    points = np.asarray(points, dtype=np.float64)
    c, s = np.cos(yaws), np.sin(yaws)
    out = np.empty_like(points)
    out[..., 0] = c * points[..., 0] - s * points[..., 1]
    out[..., 1] = s * points[..., 0] + c * points[..., 1]
    out[..., 2] = points[..., 2]
    return out


def _smoothstep(s: Array) -> Array:
    s = np.clip(s, 0.0, 1.0)
    return s * s * (3 - 2 * s)


def _dwell_quaternions(track: _PropTrack, seg: NDArray[np.int64], t: Array) -> Array:
    span = track.ends[seg] - track.starts[seg]
    # Dwells are sampled just outside their ends by velocity finite differences; clamp there.
    s = (t - track.starts[seg]) / span
    return slerp(track.q_start[seg], track.q_end[seg], _smoothstep(s))


def _track_orientations(track: _PropTrack, t: Array) -> Array:
    local = track.starts[0] + np.mod(t - track.starts[0], track.period)
    seg = np.searchsorted(track.starts, local, side="right") - 1
    out = np.empty((len(t), 4))
    fly = track.is_flight[seg]
    if np.any(fly):
        s = seg[fly]
        angle = track.spin_rate[s] * (local[fly] - track.spin_t0[s])
        spin = axis_angle_quaternions(track.spin_axis[s], angle)
        out[fly] = quaternion_multiply(spin, track.q0[s])
    held = ~fly
    if np.any(held):
        out[held] = _dwell_quaternions(track, seg[held], local[held])
    return out


# ==================================================================================================
# Planning


@dataclass
class _Event:
    """A throw or a catch of one hand at one moment (several props for multiplex / squeeze)."""

    hand: int  # juggler * 2 + hand
    time: float  # seconds, absolute
    kind: str  # "throw", "catch", "path"
    members: list[int] = field(default_factory=list)
    position: Array | None = None  # world
    velocity: Array | None = None
    #: A catch's incoming prop velocity (mean over its props).
    incoming: Array | None = None


def _lcm(a: int, b: int) -> int:
    return a * b // math.gcd(a, b)


def _default_spins(throw: Throw, prop_type: str) -> float:
    if prop_type == "ball":
        return 0.0
    if throw.spins is not None:
        return float(throw.spins)
    return float(throw.value // 2)


def _table(values: tuple[float, ...], value: int) -> float:
    return values[min(value, len(values) - 1)] / 100.0


def plan_pattern(
    siteswap: Siteswap,
    beat_duration: float | None = None,
    dwell_ratio: float = DWELL_DEFAULT,
    *,
    prop_type: str = "ball",
    prop_size: float = 1.0,
    chicken_wing: float = 0.0,
    restitution: float | None = None,
    bounce_frac: float = BOUNCE_FRAC_DEFAULT,
    floor_drop: float = FLOOR_DROP_DEFAULT,
    squeeze_beats: float = SQUEEZE_BEATS_DEFAULT,
    gravity: float = GRAVITY,
    dwell_paths: str | tuple[DwellPath, ...] = "",
    juggler_spacing: float | None = None,
    catch_follow: float = 0.5,
    frame_rate: float | None = None,
    body: Body | None = None,
    max_hand_acceleration: float = MAX_HAND_ACCELERATION,
) -> Pattern:
    """Plan the motion of every prop, hand and arm of ``siteswap``.

    ``beat_duration`` seconds per beat, or None for Juggling Lab's automatic beat (``calcBps``,
    slowed down where a bounce cannot make its catch); the beat used is ``pattern.beat_duration``.
    ``dwell_ratio`` beats a prop spends in the hand before its throw (Juggling Lab's dwell, 1.3);
    ``prop_size`` scales the natural prop sizes; ``chicken_wing`` (radians) lifts the elbows
    outward from hanging. Bounces keep ``bounce_frac`` of their energy (Juggling Lab's
    ``bouncefrac``: rebound speed x sqrt(bounce_frac)), or, when ``restitution`` is given, that share
    of their vertical speed; the floor is ``floor_drop`` metres below the hands' base height.
    ``squeeze_beats`` staggers several props caught by one hand on one beat (Juggling Lab's
    ``squeezebeats``). ``gravity`` (m/s^2) pulls the props in flight. ``dwell_paths`` is gunswap's
    hand path notation (see :func:`parse_dwell_paths`); ``juggler_spacing`` is the distance between
    neighbouring jugglers (None: Juggling Lab's circle, 1.40 m for two); ``catch_follow`` is the
    hand's speed at a catch as a fraction of the incoming prop's; ``frame_rate``, if given,
    stretches the beat slightly so that one loop is a whole number of frames (seamless loops).
    ``max_hand_acceleration`` (m/s^2, 4 g by default): where a hand stroke needs more,
    ``pattern.acceleration_warning`` names the throw or catch and the acceleration it needs.
    """
    if not (math.isfinite(max_hand_acceleration) and max_hand_acceleration > 0):
        raise MotionError(f"the hand acceleration bound must be positive, got {max_hand_acceleration}")
    pattern = _plan_timed(
        siteswap, beat_duration, dwell_ratio, prop_type, prop_size, chicken_wing, restitution, bounce_frac,
        floor_drop, squeeze_beats, gravity, dwell_paths, juggler_spacing, catch_follow, frame_rate, body,
        max_hand_acceleration,
    )  # fmt: skip
    pattern.acceleration_warning = _acceleration_warning(pattern, max_hand_acceleration)
    return pattern


def _acceleration_warning(pattern: Pattern, limit: float) -> str | None:
    report = pattern.acceleration_report(limit)
    if not report:
        return None
    size, juggler, hand, when, event = report[0]
    who = f"juggler {juggler + 1}'s " if pattern.num_jugglers > 1 else "the "
    side = "left" if hand == LEFT else "right"
    beat = when / pattern.beat_duration
    needs = (
        f"hands need up to {size / GRAVITY:.1f} g (the bound is {limit / GRAVITY:.1f} g): {who}{side} "
        f"hand at the {event} at {when:.2f} s (beat {beat:.1f}); "
    )
    return needs + _acceleration_reason(pattern, limit)


def _acceleration_reason(pattern: Pattern, limit: float) -> str:
    """Why the hands need more than ``limit``: the pattern itself (the least any hand needs, from
    the throw and catch speeds alone), or this plan's positions and reach."""
    bound = limit / GRAVITY
    level = pattern.hand_acceleration_bound() / GRAVITY
    own = pattern.hand_acceleration_bound(laid_out=True) / GRAVITY
    bounces = any(flight.bounces for flight in pattern.flights)
    if level > bound:
        when = "at this beat" if bounces else "at any beat"
        return (
            f"no hand that throws each prop at its speed and catches along it can stay under {bound:.1f} g "
            f"in this pattern: with throws and catches at one height it needs at least "
            f"{_over(level, bound)} g {when} (dwell {pattern.dwell_ratio:g})"
        )
    if own > bound:
        return (
            f"with these throw and catch heights no hand that throws each prop at its speed can stay "
            f"under {bound:.1f} g: it needs at least {_over(own, bound)} g"
        )
    return (
        f"the throw and catch speeds alone need {own:.1f} g; the rest is what the hand needs "
        "to reach the throw and catch points within arm's reach, with its jerk limited"
    )


def _over(value: float, bound: float) -> str:
    """``value`` (> ``bound``) to one decimal, or two where one would not show it is larger."""
    return f"{value:.1f}" if round(value, 1) > round(bound, 1) else f"{value:.2f}"


def _plan_timed(
    siteswap: Siteswap,
    beat_duration: float | None,
    dwell_ratio: float,
    prop_type: str,
    prop_size: float,
    chicken_wing: float,
    restitution: float | None,
    bounce_frac: float,
    floor_drop: float,
    squeeze_beats: float,
    gravity: float,
    dwell_paths: str | tuple[DwellPath, ...],
    juggler_spacing: float | None,
    catch_follow: float,
    frame_rate: float | None,
    body: Body | None,
    max_hand_acceleration: float,
) -> Pattern:
    auto = beat_duration is None
    if auto:
        if not (isinstance(dwell_ratio, (int, float)) and math.isfinite(dwell_ratio) and 0 < dwell_ratio < 2):
            raise MotionError(f"dwell ratio must be between 0 and 2 beats (exclusive), got {dwell_ratio}")
        beat_duration = min(max(auto_beat_duration(siteswap, dwell_ratio), _AUTO_BEAT_MIN), _AUTO_BEAT_MAX)
    if juggler_spacing is None:
        juggler_spacing = neighbour_spacing(siteswap.num_jugglers)
    speed_ratio = rebound_speed_ratio(bounce_frac) if restitution is None else restitution
    if restitution is None and not (math.isfinite(bounce_frac) and 0.0025 <= bounce_frac <= 1.0):
        raise MotionError(f"bounce energy fraction must be between 0.0025 and 1, got {bounce_frac}")
    if not (math.isfinite(squeeze_beats) and 0.0 <= squeeze_beats < 2.0):
        raise MotionError(f"squeeze beats must be from 0 to 2, got {squeeze_beats}")
    if not (isinstance(gravity, (int, float)) and math.isfinite(gravity) and 0.1 <= gravity <= 100.0):
        raise MotionError(f"gravity must be between 0.1 and 100 m/s^2, got {gravity}")
    if not (math.isfinite(floor_drop) and 0.2 <= floor_drop <= 10.0):
        raise MotionError(f"the floor must be 0.2 to 10 m below the hands, got {floor_drop}")

    def attempt(beat: float) -> Pattern:
        return _plan_at(
            siteswap,
            beat,
            dwell_ratio,
            prop_type,
            prop_size,
            chicken_wing,
            speed_ratio,
            floor_drop,
            squeeze_beats,
            gravity,
            dwell_paths,
            juggler_spacing,
            catch_follow,
            frame_rate,
            body or Body(),
            auto,
            max_hand_acceleration,
        )

    if not auto:
        return attempt(beat_duration)
    return _stretch_for_hands(_stretch_for_bounces(attempt, beat_duration), attempt, max_hand_acceleration)


def _hand_peak(pattern: Pattern) -> float:
    return float(pattern.hand_acceleration_peaks()[..., 0].max(initial=0.0))


def _stretch_for_hands(pattern: Pattern, attempt: Callable[[float], Pattern], limit: float) -> Pattern:
    """The automatic beat slowed (a little) where that brings the hands under ``limit``."""
    peak = _hand_peak(pattern)
    if peak <= limit or peak > _STRETCH_REACH * limit:
        return pattern
    base = pattern.beat_duration
    for factor in _HAND_STRETCH:
        try:
            slower = attempt(base * factor)
        except BounceError:
            continue
        slower_peak = _hand_peak(slower)
        if slower_peak <= limit and slower.reach_warning is None:
            return slower
        if slower_peak >= peak:
            break
        peak = slower_peak
    return pattern


def _stretch_for_bounces(attempt: Callable[[float], Pattern], beat_duration: float) -> Pattern:
    try:
        return attempt(beat_duration)
    except BounceError:
        pass
    # Juggling Lab's slow-down: the automatic beat stretches until every bounce makes its catch.
    low, high = beat_duration, beat_duration
    while True:
        high *= 1.25
        if high > _AUTO_BEAT_MAX:
            return attempt(_AUTO_BEAT_MAX)  # raises the bounce error at the slowest beat
        try:
            best = attempt(high)
            break
        except BounceError:
            low = high
    while high / low > _STRETCH_TOLERANCE:
        middle = math.sqrt(low * high)
        try:
            best = attempt(middle)
            high = middle
        except BounceError:
            low = middle
    return best


#: The automatic beat stays within these bounds (seconds) and is stretched to within 1%.
_AUTO_BEAT_MIN = 0.05
_AUTO_BEAT_MAX = 2.0
_STRETCH_TOLERANCE = 1.01


def _plan_at(
    siteswap: Siteswap,
    beat_duration: float,
    dwell_ratio: float,
    prop_type: str,
    prop_size: float,
    chicken_wing: float,
    restitution: float,
    floor_drop: float,
    squeeze_beats: float,
    gravity: float,
    dwell_paths: str | tuple[DwellPath, ...],
    juggler_spacing: float,
    catch_follow: float,
    frame_rate: float | None,
    body: Body,
    auto: bool,
    max_hand_acceleration: float | None = None,
) -> Pattern:
    _check_settings(
        beat_duration, dwell_ratio, prop_type, prop_size, chicken_wing, restitution, juggler_spacing
    )
    if siteswap.num_props < 0:
        raise MotionError(f"{siteswap.text!r} has a negative number of props")
    paths = parse_dwell_paths(dwell_paths) if isinstance(dwell_paths, str) else tuple(dwell_paths)
    # gunswap's paths are drawn for its juggler (shoulders 22.5 cm from the centre): fit them to ours.
    width = body.shoulder_half_width / GUNSWAP_SHOULDER_HALF_WIDTH
    paths = tuple(DwellPath(tuple((x * width, y, z) for x, y, z in path.points)) for path in paths)

    throws, cycle = _expand_cycle(siteswap, paths)
    successor = _match_landings(siteswap, throws, cycle)
    orbits = _orbits(successor)
    props_per_orbit = []
    for orbit in orbits:
        total = sum(throws[i].value for i in orbit)
        if total % cycle:
            raise MotionError(f"{siteswap.text!r}: a prop orbit spans {total} beats, not a whole cycle")
        props_per_orbit.append(total // cycle)
    if sum(props_per_orbit) != siteswap.num_props:
        raise MotionError(
            f"{siteswap.text!r}: the throws carry {sum(props_per_orbit)} props, "
            f"the notation says {siteswap.num_props}"
        )
    loop_beats = cycle * reduce(_lcm, props_per_orbit, 1)
    if frame_rate is not None:
        if not (math.isfinite(frame_rate) and frame_rate > 0):
            raise MotionError(f"frame rate must be positive, got {frame_rate}")
        exact = loop_beats * beat_duration * frame_rate
        # An automatic beat only ever stretches: a shorter one could undo the bounce slow-down.
        frames = max(1, math.ceil(exact - 1e-9) if auto else round(exact))
        beat_duration = frames / (frame_rate * loop_beats)

    planner = _Planner(
        siteswap,
        throws,
        cycle,
        successor,
        orbits,
        props_per_orbit,
        beat_duration,
        dwell_ratio,
        prop_type,
        prop_size,
        restitution,
        paths,
        juggler_spacing,
        catch_follow,
        body,
        floor_drop,
        squeeze_beats,
        gravity,
        max_hand_acceleration,
    )
    pattern = planner.build(loop_beats, chicken_wing)
    pattern.auto_beat = auto
    return pattern


def _check_settings(
    beat_duration: float,
    dwell_ratio: float,
    prop_type: str,
    prop_size: float,
    chicken_wing: float,
    restitution: float,
    juggler_spacing: float,
) -> None:
    if not (math.isfinite(beat_duration) and 0.02 <= beat_duration <= 5.0):
        raise MotionError(f"beat duration must be between 0.02 and 5 seconds, got {beat_duration}")
    if not (math.isfinite(dwell_ratio) and 0.0 < dwell_ratio < 2.0):
        raise MotionError(f"dwell ratio must be between 0 and 2 beats (exclusive), got {dwell_ratio}")
    if prop_type not in PROP_TYPES:
        raise MotionError(f"prop type must be one of {', '.join(PROP_TYPES)}, got {prop_type!r}")
    if not (math.isfinite(prop_size) and 0.1 <= prop_size <= 10.0):
        raise MotionError(f"prop size must be between 0.1 and 10, got {prop_size}")
    if not math.isfinite(chicken_wing):
        raise MotionError(f"chicken-wing angle must be finite, got {chicken_wing}")
    if not (math.isfinite(restitution) and 0.05 <= restitution <= 1.0):
        raise MotionError(f"restitution must be between 0.05 and 1, got {restitution}")
    if not (math.isfinite(juggler_spacing) and juggler_spacing > 0.5):
        raise MotionError(f"juggler spacing must exceed 0.5 m, got {juggler_spacing}")


def _expand_cycle(siteswap: Siteswap, paths: tuple[DwellPath, ...]) -> tuple[list[Throw], int]:
    """Repeat the cycle until dwell paths, which cycle over each juggler's throws, line up again."""
    cycle = siteswap.cycle_beats
    if cycle <= 0:
        raise MotionError(f"{siteswap.text!r}: cycle of {cycle} beats")
    repeats = 1
    if paths:
        for juggler in range(siteswap.num_jugglers):
            events = {(t.beat, t.hand) for t in siteswap.throws if t.juggler == juggler and not _is_hold(t)}
            if events:
                repeats = _lcm(repeats, len(paths) // math.gcd(len(events), len(paths)))
    throws = []
    for r in range(repeats):
        for t in siteswap.throws:
            if not 0 <= t.beat < cycle:
                raise MotionError(f"{siteswap.text!r}: throw on beat {t.beat} outside the {cycle}-beat cycle")
            if t.value <= 0:
                raise MotionError(f"{siteswap.text!r}: throw of value {t.value} on beat {t.beat}")
            throws.append(_shift(t, r * cycle))
    throws.sort(key=lambda t: (t.beat, t.juggler, t.hand))
    return throws, cycle * repeats


def _shift(throw: Throw, beats: int) -> Throw:
    if beats == 0:
        return throw
    return replace(throw, beat=throw.beat + beats)


def _is_hold(throw: Throw) -> bool:
    return throw.hold and throw.to_juggler == throw.juggler and throw.to_hand == throw.hand


def _match_landings(siteswap: Siteswap, throws: list[Throw], cycle: int) -> list[int]:
    """successor[i]: the throw that next launches the prop thrown by throw i."""
    slots: dict[tuple[int, int, int], list[int]] = {}
    for index, t in enumerate(throws):
        slots.setdefault((t.juggler, t.hand, t.beat % cycle), []).append(index)
    free = {key: list(members) for key, members in slots.items()}
    successor = [-1] * len(throws)
    for index, t in enumerate(throws):
        key = (t.to_juggler, t.to_hand, (t.beat + t.value) % cycle)
        if not free.get(key):
            hand = "left" if t.to_hand == LEFT else "right"
            raise MotionError(
                f"{siteswap.text!r}: too many props land in juggler {t.to_juggler + 1}'s {hand} hand on beat "
                f"{(t.beat + t.value) % cycle}"
            )
        successor[index] = free[key].pop(0)
    return successor


def _orbits(successor: list[int]) -> list[list[int]]:
    seen = [False] * len(successor)
    orbits = []
    for start in range(len(successor)):
        if seen[start]:
            continue
        orbit = []
        i = start
        while not seen[i]:
            seen[i] = True
            orbit.append(i)
            i = successor[i]
        orbits.append(orbit)
    return orbits


class _Planner:
    def __init__(
        self,
        siteswap: Siteswap,
        throws: list[Throw],
        cycle: int,
        successor: list[int],
        orbits: list[list[int]],
        props_per_orbit: list[int],
        tau: float,
        dwell: float,
        prop_type: str,
        prop_size: float,
        restitution: float,
        paths: tuple[DwellPath, ...],
        spacing: float,
        catch_follow: float,
        body: Body,
        floor_drop: float = FLOOR_DROP_DEFAULT,
        squeeze_beats: float = SQUEEZE_BEATS_DEFAULT,
        gravity: float = GRAVITY,
        max_hand_acceleration: float | None = None,
    ) -> None:
        #: None: Hermite hand paths through the events (no acceleration bound).
        self.max_hand_acceleration = max_hand_acceleration
        self.siteswap = siteswap
        self.throws = throws
        self.cycle = cycle
        self.successor = successor
        self.orbits = orbits
        self.props_per_orbit = props_per_orbit
        self.tau = tau
        self.dwell = dwell
        self.prop_type = prop_type
        self.prop_size = prop_size
        self.restitution = restitution
        self.paths = paths
        self.catch_follow = catch_follow
        self.body = body
        self.period = cycle * tau
        self.origins, self.yaws = juggler_placement(siteswap.num_jugglers, spacing)
        length = PROP_LENGTHS[prop_type] * prop_size
        self.prop_radius = length / 2 if prop_type == "ball" else 0.03 * prop_size
        if prop_type == "club":
            self.hold_offset = np.array([0.0, 0.0, 0.2 * length / 0.5])
        elif prop_type == "ring":
            self.hold_offset = np.array([0.0, 0.0, length / 2])
        else:
            self.hold_offset = np.zeros(3)
        self.squeeze_beats = squeeze_beats
        self.gravity = gravity
        #: Prop centres touch the floor this high: the floor is floor_drop below the hands.
        self.bounce_plane = body.pattern_height - floor_drop

    # ---------------------------------------------------------------------------------- helpers

    def _throw_dwell(self, index: int) -> float:
        t = self.throws[index]
        return self.dwell if t.dwell is None else float(t.dwell)

    def _describe(self, index: int) -> str:
        t = self.throws[index]
        hand = "left" if t.hand == LEFT else "right"
        who = f"juggler {t.juggler + 1}'s " if self.siteswap.num_jugglers > 1 else ""
        return f"{self.siteswap.text!r}: throw {t.value} from {who}{hand} hand on beat {t.beat}"

    def _world(self, juggler: int, local: ArrayLike) -> Array:
        return np.asarray(local, dtype=np.float64) @ yaw_matrix(self.yaws[juggler]).T + self.origins[juggler]

    def _world_dir(self, juggler: int, local: ArrayLike) -> Array:
        return yaw_matrix(self.yaws[juggler]) @ np.asarray(local, dtype=np.float64)

    def _hold_quaternion(self, juggler: int) -> Array:
        yaw = axis_angle_quaternions(np.array([0.0, 0.0, 1.0]), self.yaws[juggler])
        if self.prop_type == "club":
            tilt = axis_angle_quaternions(np.array([1.0, 0.0, 0.0]), _CLUB_TILT)
            return quaternion_multiply(yaw, tilt)
        return yaw

    # ---------------------------------------------------------------------------------- timing

    def _throw_times(self) -> list[float]:
        """Launch time (beats, within the cycle) of every throw; 1s leave early."""
        out = []
        for index, t in enumerate(self.throws):
            early = (
                max(0.0, self._throw_dwell(index) + 0.3 - 1.0) if t.value == 1 and not _is_hold(t) else 0.0
            )
            out.append(t.beat - early)
        return out

    def _catch_leads(self, launch: list[float]) -> list[float]:
        """Beats between catching the prop thrown by throw s and throw s's own beat."""
        by_hand: dict[int, list[tuple[int, float]]] = {}
        for index, t in enumerate(self.throws):
            if not _is_hold(t):
                by_hand.setdefault(t.juggler * 2 + t.hand, []).append((t.beat, launch[index]))
        leads = []
        for index, t in enumerate(self.throws):
            lead = self._throw_dwell(index)
            hand_throws = by_hand.get(t.juggler * 2 + t.hand, [])
            # The hand must have let go of its previous throw first (Juggling Lab's clamp).
            earlier = [
                when - k * self.cycle
                for beat, when in hand_throws
                for k in (0, 1, 2)
                if beat - k * self.cycle < t.beat
            ]
            if earlier:
                lead = min(lead, t.beat - (max(earlier) + _CATCH_AFTER_THROW))
            leads.append(lead)
        # Every prop gets some airtime, a caught 1 at least 0.3 beat (Juggling Lab): catch later.
        for index, t in enumerate(self.throws):
            if _is_hold(t):
                continue
            s = self.successor[index]
            least = _ONE_AIRTIME if t.value == 1 else _MIN_FLIGHT
            leads[s] = min(leads[s], t.beat + t.value - launch[index] - least)
        # ... but never after the prop's own next throw.
        for index, t in enumerate(self.throws):
            own_launch = launch[index] if not _is_hold(t) else float(t.beat)
            leads[index] = max(leads[index], t.beat - own_launch + _CATCH_BEFORE_THROW)
        return leads

    def _next_real(self, index: int) -> int:
        """The first non-hold throw after ``index`` along its prop's chain (-1 if all are holds)."""
        i = self.successor[index]
        for _ in range(len(self.throws) + 1):
            if not _is_hold(self.throws[i]):
                return i
            i = self.successor[i]
        return -1

    # ---------------------------------------------------------------------------------- build

    def build(self, loop_beats: int, chicken_wing: float) -> Pattern:
        tau = self.tau
        throws = self.throws
        launch = self._throw_times()
        n_throws = len(throws)
        real = [not _is_hold(t) for t in throws]

        # Throw events: one per (hand, beat) of real throws; members keep multiplex slot order.
        throw_event: dict[int, _Event] = {}
        events_by_key: dict[tuple[int, int], _Event] = {}
        for index, t in enumerate(throws):
            if not real[index]:
                continue
            key = (t.juggler * 2 + t.hand, t.beat)
            event = events_by_key.get(key)
            if event is None:
                event = _Event(key[0], launch[index] * tau, "throw")
                events_by_key[key] = event
            else:
                event.time = max(event.time, launch[index] * tau)
            event.members.append(index)
            throw_event[index] = event
        # A multiplex leaves the hand together, even when one of its throws is a (normally early) 1.
        for index, event in throw_event.items():
            launch[index] = event.time / tau
        leads = self._catch_leads(launch)

        # Dwell path of each throw event: cycles over each juggler's events in beat order.
        path_of: dict[int, DwellPath] = {}
        if self.paths:
            counters: dict[int, int] = {}
            for key in sorted(events_by_key, key=lambda k: (k[1], k[0] % 2)):
                juggler = key[0] // 2
                n = counters.get(juggler, 0)
                counters[juggler] = n + 1
                path_of[id(events_by_key[key])] = self.paths[n % len(self.paths)]

        # Squeeze catches (Juggling Lab): props landing in one hand on one beat are caught one after
        # the other, spread evenly over squeeze_beats, but never later than just before their throw.
        squeeze: dict[int, float] = {}
        landing: dict[tuple[int, int, int], list[int]] = {}
        for index in range(n_throws):
            if real[index]:
                t = throws[index]
                key = (t.to_juggler, t.to_hand, (t.beat + t.value) % self.cycle)
                landing.setdefault(key, []).append(index)
        for members in landing.values():
            if len(members) < 2 or self.squeeze_beats <= 0:
                continue
            members.sort(key=lambda i: (launch[i], throws[i].value))
            for rank, index in enumerate(members):
                squeeze[index] = rank / (len(members) - 1) * self.squeeze_beats

        # Flight timings (cycle-relative, for the flight of each real throw).
        flight_time = {}
        for index in range(n_throws):
            if not real[index]:
                continue
            s = self.successor[index]
            t = throws[index]
            catch_beat = t.beat + t.value - leads[s]
            if index in squeeze:
                next_launch = launch[s] if real[s] else float(throws[s].beat)
                latest = t.beat + t.value + (next_launch - throws[s].beat) - _CATCH_BEFORE_THROW
                catch_beat = min(catch_beat + squeeze[index], max(catch_beat, latest))
            duration = catch_beat - launch[index]
            if duration < _MIN_FLIGHT:
                raise MotionError(
                    f"{self._describe(index)} gets {max(duration, 0.0):.2f} beats in the air with dwell "
                    f"{self._throw_dwell(s):g}; lower the dwell ratio"
                )
            flight_time[index] = (launch[index] * tau, catch_beat * tau)

        # Hand events: throws at their times, catches at the landing times.
        hand_events: dict[int, list[_Event]] = {h: [] for h in range(self.siteswap.num_jugglers * 2)}
        for event in events_by_key.values():
            hand_events[event.hand].append(event)
        catch_event: dict[int, _Event] = {}
        for index in range(n_throws):
            if not real[index]:
                continue
            t = throws[index]
            hand = t.to_juggler * 2 + t.to_hand
            when = flight_time[index][1] % self.period
            found = None
            for event in hand_events[hand]:
                gap = abs((event.time - when + self.period / 2) % self.period - self.period / 2)
                if gap < _SAME_TIME:
                    found = event
                    break
            if found is None:
                found = _Event(hand, when, "catch")
                hand_events[hand].append(found)
            elif found.kind != "catch":
                who = f"juggler {t.to_juggler + 1}'s " if self.siteswap.num_jugglers > 1 else ""
                side = "left" if t.to_hand == LEFT else "right"
                raise MotionError(
                    f"{self.siteswap.text!r}: {who}{side} hand would catch "
                    f"and throw at the same moment (beat {when / tau:.2f}); change the dwell ratio"
                )
            found.members.append(index)
            catch_event[index] = found

        # Positions of throw and catch knots (world).
        for event in events_by_key.values():
            juggler, hand = divmod(event.hand, 2)
            path = path_of.get(id(event))
            if path is not None:
                local = self.body.hand_frame_to_local(hand, path.points[-1])
            else:
                point = np.mean([self._throw_point(i) for i in event.members], 0)
                if self.max_hand_acceleration is None:
                    point[2] += self._throw_lift(event.members, flight_time, leads)
                local = self.body.hand_frame_to_local(hand, point)
            event.position = self._world(juggler, local)
        for event in {id(e): e for e in catch_event.values()}.values():
            juggler, hand = divmod(event.hand, 2)
            points = []
            for index in event.members:
                nxt = self._next_real(index)
                path = path_of.get(id(throw_event[nxt])) if nxt >= 0 else None
                if path is not None:
                    points.append(path.points[0])
                else:
                    points.append((_table(_CATCH_X, throws[index].value), 0.0, 0.0))
            event.position = self._world(juggler, self.body.hand_frame_to_local(hand, np.mean(points, 0)))

        if self.max_hand_acceleration is not None:
            floors: dict[int, float] = {}
            for event in [*events_by_key.values(), *catch_event.values()]:
                floor = self._reach_floor(event.hand, event.position)
                floors[event.hand] = max(floors.get(event.hand, -math.inf), floor)
            for event in events_by_key.values():
                event.position[2] += self._bounded_lift(event, flight_time, floors[event.hand])

        # Slot offsets of multiplex props (lateral spread) and hold orientations.
        def slot_offset(index: int) -> Array:
            event = throw_event[index]
            k = len(event.members)
            if k == 1:
                return np.zeros(3)
            juggler = event.hand // 2
            rank = event.members.index(index) - (k - 1) / 2
            spacing = max(2 * self.prop_radius, 0.05 * self.prop_size) * 1.1
            return self._world_dir(juggler, [rank * spacing, 0.0, 0.0])

        # Flights: geometry for the cycle-relative instance of each real throw.
        arcs_of: dict[int, list[Ballistic]] = {}
        spin_of: dict[int, tuple[float, Array, Array, Array]] = {}
        for index in range(n_throws):
            if not real[index]:
                continue
            t = throws[index]
            t0, t1 = flight_time[index]
            q_throw = self._hold_quaternion(t.juggler)
            turns = _default_spins(t, self.prop_type)
            if self.prop_type == "club" and turns >= 1:
                turns += _CLUB_OVERSPIN
            axis_local = (
                np.array(t.spin_axis)
                if t.spin_axis is not None
                else (np.array([1.0, 0.0, 0.0]) if self.prop_type != "ring" else np.array([0.0, 1.0, 0.0]))
            )
            norm = np.linalg.norm(axis_local)
            if not norm > 0:
                raise MotionError(f"{self._describe(index)}: spin axis is zero")
            axis = self._world_dir(t.juggler, axis_local / norm)
            q_arrive = quaternion_multiply(axis_angle_quaternions(axis, 2 * math.pi * turns), q_throw)
            nxt = self._next_real(index)
            p0 = throw_event[index].position + slot_offset(index) + rotate_vectors(q_throw, self.hold_offset)
            catch_slot = slot_offset(nxt) if nxt >= 0 else np.zeros(3)
            p1 = catch_event[index].position + catch_slot + rotate_vectors(q_arrive, self.hold_offset)
            # Catches are stored modulo the cycle; the flight's own catch may be a cycle later.
            if t.bounce is not None and t.bounce.count > 0:
                arcs = solve_bounce(
                    t0,
                    t1,
                    p0,
                    p1,
                    t.bounce.count,
                    t.bounce.kind,
                    self.restitution,
                    self.bounce_plane,
                    self._describe(index),
                    self.gravity,
                )
            else:
                arcs = [parabola(t0, t1, p0, p1, self.gravity)]
            arcs_of[index] = arcs
            spin_of[index] = (turns, axis, q_throw, q_arrive)

        # Knot velocities.
        for event in events_by_key.values():
            event.velocity = np.mean([arcs_of[i][0].v0 for i in event.members], axis=0)
        for event in {id(e): e for e in catch_event.values()}.values():
            arriving = np.mean([arcs_of[i][-1].at(arcs_of[i][-1].t1)[1] for i in event.members], axis=0)
            speed = np.linalg.norm(arriving)
            # Along the incoming prop, but no faster than a hand gives way on a real catch.
            scale = min(self.catch_follow, _MAX_CATCH_SPEED / speed) if speed > 0 else 0.0
            event.velocity = scale * arriving
            event.incoming = arriving

        hands = [self._hand_path(h, hand_events[h], path_of) for h in sorted(hand_events)]

        self.loop_beats = loop_beats
        flights, tracks = self._prop_tracks(flight_time, arcs_of, spin_of, slot_offset, real, throw_event)
        # One loop of throws: each prop's flights repeat with its own period, which starts where its
        # first throw is; fold them all into [0, loop) so every throw of the loop is listed once.
        loop = loop_beats * tau
        flights = sorted(
            (_shifted(f, -loop * math.floor(f.throw_time / loop + 1e-9)) for f in flights),
            key=lambda f: (f.throw_time, f.prop),
        )
        pattern = Pattern(
            siteswap=self.siteswap,
            beat_duration=tau,
            dwell_ratio=self.dwell,
            loop_beats=loop_beats,
            num_props=len(tracks),
            num_jugglers=self.siteswap.num_jugglers,
            prop_type=self.prop_type,
            prop_size=self.prop_size,
            chicken_wing=chicken_wing,
            body=self.body,
            juggler_origins=self.origins,
            juggler_yaws=self.yaws,
            flights=tuple(flights),
            hold_offset=self.hold_offset,
            _hands=hands,
            _tracks=tracks,
            floor_height=self.bounce_plane - self.prop_radius,
            gravity=self.gravity,
        )
        pattern.reach_warning = _reach_warning(pattern)
        if pattern.reach_warning is not None and self.max_hand_acceleration is not None:
            # Out of arm's reach: the Hermite strokes, if they stay in it (the acceleration report
            # then says what the pattern needs).
            bounded, warning = pattern._hands, pattern.reach_warning
            pattern._hands = [self._hand_spline(h, hand_events[h], path_of) for h in sorted(hand_events)]
            pattern.reach_warning = _reach_warning(pattern)
            if pattern.reach_warning is not None:
                pattern._hands, pattern.reach_warning = bounded, warning
        return pattern

    def _throw_lift(self, members: list[int], flight_time: dict, leads: list[float]) -> float:
        index = members[0]
        t0, t1 = flight_time[index]
        rise = 0.5 * self.gravity * (t1 - t0)
        if self.throws[index].bounce is not None:
            return 0.0
        return min(0.5 * _STROKE_DIP * max(rise, 0.0) * leads[index] * self.tau, _MAX_THROW_LIFT)

    def _reach_floor(self, hand: int, position: Array) -> float:
        """The lowest a hand can go under ``position`` and stay in arm's reach (less a margin for
        the body's sway), metres, world z."""
        juggler, side = divmod(hand, 2)
        shoulder = self._world(juggler, self.body.shoulder_local(side))
        arm = self.body.upper_arm + self.body.forearm - _REACH_MARGIN
        across = float(np.linalg.norm((position - shoulder)[:2]))
        return float(shoulder[2] - math.sqrt(max(arm * arm - across * across, 0.0)))

    def _bounded_lift(self, event: _Event, flight_time: dict, floor: float) -> float:
        """How much higher than its dwell path height the bounded planner throws: a hand reaching
        launch speed v from rest under the bound A needs a run of v^2 / 2A; it may dip at most
        _MAX_DIP under the throw point and no lower than ``floor`` (the arm's reach under any of the
        hand's events), the rest is made up by throwing higher (capped)."""
        index = event.members[0]
        if self.throws[index].bounce is not None:
            return 0.0
        t0, t1 = flight_time[index]
        rise = max(0.5 * self.gravity * (t1 - t0), 0.0)
        run = _RUN_MARGIN * rise * rise / (2 * _TARGET_SHARE * self.max_hand_acceleration)
        dip = min(_MAX_DIP, float(event.position[2]) - floor)
        return min(max(run - dip, 0.0), _MAX_THROW_LIFT)

    def _throw_point(self, index: int) -> tuple[float, float, float]:
        t = self.throws[index]
        if t.to_juggler != t.juggler:
            return _PASS_THROW
        crossing = t.to_hand != t.hand
        return (_table(_CROSS_THROW_X if crossing else _SAME_THROW_X, t.value), 0.0, 0.0)

    def _hand_path(self, hand: int, events: list[_Event], path_of: dict[int, DwellPath]) -> PeriodicSpline:
        """The hand's bounded-acceleration path (see :mod:`.hand_planner`); a hand that never
        throws keeps the Hermite path through its events."""
        if self.max_hand_acceleration is None or not any(e.kind == "throw" for e in events):
            return self._hand_spline(hand, events, path_of)
        juggler, side = divmod(hand, 2)
        ordered = sorted(events, key=lambda e: e.time % self.period)
        conditions = []
        for k, event in enumerate(ordered):
            if event.kind == "throw":
                conditions.append(HandEvent(event.time, "throw", event.position, event.velocity))
                continue
            conditions.append(HandEvent(event.time, "catch", event.position, event.incoming))
            following = ordered[(k + 1) % len(ordered)]
            path = path_of.get(id(following)) if following.kind == "throw" else None
            if path is None or len(path.points) <= 2:
                continue
            gap = (following.time - event.time) % self.period
            chain, stamps = self._dwell_path_points(
                juggler, side, path, event.time, event.position, gap, following.position
            )
            for stamp, point in zip(stamps, chain[1:-1], strict=True):
                conditions.append(HandEvent(float(stamp), "point", point))
        # The hand dips at most _MAX_DIP under its lowest event, and never lower than the arm
        # reaches below any of its events (less the body's sway).
        lowest = max(self._reach_floor(hand, e.position) for e in events)
        floor = max(min(float(e.position[2]) for e in events) - _MAX_DIP, lowest)
        return plan_hand_path(conditions, self.period, self.tau, self.max_hand_acceleration, floor)

    def _dwell_path_points(
        self, juggler: int, side: int, path: DwellPath, start: float, catch: Array, gap: float, throw: Array
    ) -> tuple[list[Array], Array]:
        """A dwell path's points from ``catch`` to ``throw`` (world) and the times of its interior
        points, spread over ``gap`` seconds by chord length."""
        local = self.body.hand_frame_to_local(side, np.array(path.points[1:-1]))
        chain = [catch, *(self._world(juggler, p) for p in local), throw]
        lengths = np.linalg.norm(np.diff(np.array(chain), axis=0), axis=-1) + 1e-9
        return chain, start + gap * np.cumsum(lengths)[:-1] / lengths.sum()

    def _hand_spline(
        self,
        hand: int,
        events: list[_Event],
        path_of: dict[int, DwellPath],
    ) -> PeriodicSpline:
        juggler, side = divmod(hand, 2)
        if not events:
            rest = self._world(juggler, self.body.hand_frame_to_local(side, _REST_HAND))
            return PeriodicSpline(np.zeros(1), rest[None], np.zeros((1, 3)), self.period)
        knots = sorted(
            ((e.time % self.period, e.position, e.velocity, e) for e in events), key=lambda k: k[0]
        )
        times = [k[0] for k in knots]
        for a, b in zip(times, times[1:] + [times[0] + self.period], strict=True):
            if b - a < _SAME_TIME:
                raise MotionError(
                    f"{self.siteswap.text!r}: a hand has two events at one moment; change the dwell ratio"
                )
        out_t: list[float] = []
        out_p: list[Array] = []
        out_v: list[Array] = []
        n = len(knots)
        for k in range(n):
            t_a, p_a, v_a, event = knots[k]
            t_b, p_b, v_b, next_event = knots[(k + 1) % n]
            if k == n - 1:
                t_b += self.period
            out_t.append(t_a)
            out_p.append(p_a)
            out_v.append(v_a)
            gap = t_b - t_a
            path = path_of.get(id(next_event)) if next_event.kind == "throw" else None
            if event.kind == "catch" and path is not None and len(path.points) > 2:
                # Interior dwell path points, timed by chord length between catch and throw.
                chain, stamps = self._dwell_path_points(juggler, side, path, t_a, p_a, gap, p_b)
                interior = chain[1:-1]
                all_t = [t_a, *stamps, t_b]
                for m, (stamp, point) in enumerate(zip(stamps, interior, strict=True), start=1):
                    velocity = (chain[m + 1] - chain[m - 1]) / (all_t[m + 1] - all_t[m - 1])
                    out_t.append(float(stamp))
                    out_p.append(point)
                    out_v.append(velocity)
            else:
                # Also for a two-point dwell path: it fixes the ends, the scoop stays ours.
                for knot in between_events(event.kind, next_event.kind, t_a, p_a, v_a, t_b, p_b, v_b):
                    out_t.append(knot[0])
                    out_p.append(knot[1])
                    out_v.append(knot[2])
        return PeriodicSpline(np.array(out_t), np.array(out_p), np.array(out_v), self.period)

    def _prop_tracks(
        self,
        flight_time: dict[int, tuple[float, float]],
        arcs_of: dict[int, list[Ballistic]],
        spin_of: dict[int, tuple[float, Array, Array, Array]],
        slot_offset: Callable[[int], Array],
        real: list[bool],
        throw_event: dict[int, _Event],
    ) -> tuple[list[Flight], list[_PropTrack]]:
        tau = self.tau
        flights: list[Flight] = []
        tracks: list[_PropTrack] = []
        prop = 0
        for orbit, count in zip(self.orbits, self.props_per_orbit, strict=True):
            real_in_orbit = [i for i in orbit if real[i]]
            for k in range(count):
                period = count * self.period
                if not real_in_orbit:
                    tracks.append(self._held_track(orbit[0], period))
                    prop += 1
                    continue
                # Walk the chain from the first real throw for one prop period.
                start = real_in_orbit[0]
                offset_beats = k * self.cycle
                chain = []
                beat = self.throws[start].beat + offset_beats
                i = start
                while True:
                    chain.append((i, beat))
                    beat += self.throws[i].value
                    i = self.successor[i]
                    if i == start and beat - (self.throws[start].beat + offset_beats) >= count * self.cycle:
                        break
                real_chain = [(i, b) for i, b in chain if real[i]]
                rows = []
                first_flight = len(flights)
                for n, (i, b) in enumerate(real_chain):
                    shift = (b - self.throws[i].beat) * tau
                    arcs = arcs_of[i]
                    turns, axis, q_throw, q_arrive = spin_of[i]
                    t0, t1 = flight_time[i]
                    t = self.throws[i]
                    flights.append(
                        Flight(
                            prop=prop,
                            throw_time=t0 + shift,
                            catch_time=t1 + shift,
                            from_juggler=t.juggler,
                            from_hand=t.hand,
                            to_juggler=t.to_juggler,
                            to_hand=t.to_hand,
                            value=t.value,
                            is_pass=t.to_juggler != t.juggler,
                            multiplex=len(throw_event[i].members) > 1,
                            bounces=len(arcs) - 1,
                            arcs=tuple(
                                Ballistic(a.t0 + shift, a.t1 + shift, a.p0, a.v0, a.gravity) for a in arcs
                            ),
                            spin_turns=turns,
                        )
                    )
                    rate = 2 * math.pi * turns / (t1 - t0)
                    for arc in arcs:
                        rows.append(
                            dict(
                                start=arc.t0 + shift,
                                flight=True,
                                p0=arc.p0,
                                v0=arc.v0,
                                q0=q_throw,
                                axis=axis,
                                rate=rate,
                                spin_t0=t0 + shift,
                            )
                        )
                    nxt_i, nxt_b = real_chain[(n + 1) % len(real_chain)]
                    nxt_shift = (nxt_b - self.throws[nxt_i].beat) * tau
                    if n == len(real_chain) - 1:
                        nxt_shift += period
                    t_next = flight_time[nxt_i][0] + nxt_shift
                    catcher = self.throws[i].to_juggler * 2 + self.throws[i].to_hand
                    rows.append(
                        dict(
                            start=t1 + shift,
                            flight=False,
                            hand=catcher,
                            slot=slot_offset(nxt_i),
                            q_start=q_arrive,
                            q_end=spin_of[nxt_i][2],
                            end=t_next,
                        )
                    )
                tracks.append(_make_track(rows, period))
                # Flights cover the whole loop, so each prop's own period repeats in it.
                one_period = flights[first_flight:]
                for r in range(1, round(self.loop_beats * tau / period)):
                    flights += [_shifted(f, r * period) for f in one_period]
                prop += 1
        return flights, tracks

    def _held_track(self, index: int, period: float) -> _PropTrack:
        """A prop that is only ever held (every throw of its orbit is a hold)."""
        t = self.throws[index]
        q = self._hold_quaternion(t.juggler)
        rows = [
            dict(
                start=0.0,
                flight=False,
                hand=t.juggler * 2 + t.hand,
                slot=np.zeros(3),
                q_start=q,
                q_end=q,
                end=period,
            )
        ]
        return _make_track(rows, period)


def between_events(
    kind: str, next_kind: str, t_a: float, p_a: Array, v_a: Array, t_b: float, p_b: Array, v_b: Array
) -> list[tuple[float, Array, Array]]:
    """Hermite knots ProcAnim adds between two events of a hand: a scoop bottom when it carries a prop
    from a catch to a fast throw, a rest in the middle of a long empty wait."""
    gap = t_b - t_a
    if kind == "catch" and next_kind == "throw" and gap <= _LONG_DWELL:
        bottom = _scoop_bottom(t_a, p_a, v_a, t_b, p_b, v_b)
        return [] if bottom is None else [bottom]
    if gap > _LONG_GAP:
        # Ease out of the last event, rest, ease into the next one.
        delta = min(_FOLLOW_THROUGH, gap / 3)
        return [
            (t_a + delta, p_a + v_a * delta / 2, np.zeros(3)),
            (t_b - delta, p_b - v_b * delta / 2, np.zeros(3)),
        ]
    return []


def _scoop_bottom(
    t_a: float, p_a: Array, v_a: Array, t_b: float, p_b: Array, v_b: Array
) -> tuple[float, Array, Array] | None:
    """A knot at the bottom of a catch-to-throw scoop that would otherwise dip too deep.

    One cubic from a catch to a fast throw spreads the acceleration over the whole dwell and dips
    about 0.148 (v_catch + v_throw) T below its ends. Real hands scoop to a modest depth and
    accelerate late; the last piece is kept short enough (T <= 3 rise / v) not to undershoot.
    """
    duration = t_b - t_a
    dip = _STROKE_DIP * (max(v_b[2], 0.0) + max(-v_a[2], 0.0)) * duration
    # Deep enough that the final push lasts _THROW_PUSH seconds (a few g), no deeper than needed.
    depth = min(_MAX_SCOOP, max(_MIN_SCOOP, v_b[2] * _THROW_PUSH / 3.0))
    if dip <= depth or v_b[2] <= 0.0:
        return None
    z_bottom = min(p_a[2], p_b[2]) - depth
    rise = p_b[2] - z_bottom
    last = min(0.6 * duration, 3.0 * rise / v_b[2])
    t_bottom = t_b - last
    fraction = (t_bottom - t_a) / duration
    position = p_a + fraction * (p_b - p_a)
    position[2] = z_bottom
    velocity = (p_b - p_a) / duration
    velocity[2] = 0.0
    return t_bottom, position, velocity


def _shifted(flight: Flight, seconds: float) -> Flight:
    arcs = tuple(Ballistic(a.t0 + seconds, a.t1 + seconds, a.p0, a.v0, a.gravity) for a in flight.arcs)
    return replace(
        flight, throw_time=flight.throw_time + seconds, catch_time=flight.catch_time + seconds, arcs=arcs
    )


def _make_track(rows: list[dict], period: float) -> _PropTrack:
    n = len(rows)
    zeros3 = np.zeros((n, 3))
    track = _PropTrack(
        period=period,
        starts=np.array([r["start"] for r in rows]),
        is_flight=np.array([r["flight"] for r in rows]),
        p0=zeros3.copy(),
        v0=zeros3.copy(),
        q0=np.tile([1.0, 0.0, 0.0, 0.0], (n, 1)),
        spin_axis=np.tile([1.0, 0.0, 0.0], (n, 1)),
        spin_rate=np.zeros(n),
        spin_t0=np.zeros(n),
        hand_index=np.zeros(n, dtype=np.int64),
        slot=zeros3.copy(),
        q_start=np.tile([1.0, 0.0, 0.0, 0.0], (n, 1)),
        q_end=np.tile([1.0, 0.0, 0.0, 0.0], (n, 1)),
        ends=np.zeros(n),
    )
    for m, r in enumerate(rows):
        if r["flight"]:
            track.p0[m] = r["p0"]
            track.v0[m] = r["v0"]
            track.q0[m] = r["q0"]
            track.spin_axis[m] = r["axis"]
            track.spin_rate[m] = r["rate"]
            track.spin_t0[m] = r["spin_t0"]
            track.ends[m] = rows[(m + 1) % n]["start"] if m + 1 < n else r["start"]
        else:
            track.hand_index[m] = r["hand"]
            track.slot[m] = r["slot"]
            track.q_start[m] = r["q_start"]
            track.q_end[m] = r["q_end"]
            track.ends[m] = r["end"]
    if any("gravity" in r for r in rows):
        track.gravity = np.array([float(r.get("gravity", GRAVITY)) for r in rows])
    order = np.argsort(track.starts, kind="stable")
    if np.any(order != np.arange(n)):
        raise MotionError("internal: prop segments out of order")
    return track


def _reach_warning(pattern: Pattern) -> str | None:
    samples = np.linspace(0.0, pattern.loop_duration, max(64, 24 * pattern.loop_beats), endpoint=False)
    hands = pattern.hand_positions(samples)
    shoulders = pattern.shoulder_positions(samples)
    reach = np.linalg.norm(hands - shoulders, axis=-1)
    limit = pattern.body.upper_arm + pattern.body.forearm
    over = reach > limit + _REACH_TOLERANCE
    if not np.any(over):
        return None
    worst = float(np.max(reach - limit))
    share = float(np.mean(over)) * 100
    return (
        f"hands are out of arm's reach {share:.0f}% of the time (by up to {worst * 100:.0f} cm); "
        "the arms point straight at them there. Lower the beat duration or narrow the dwell path"
    )
