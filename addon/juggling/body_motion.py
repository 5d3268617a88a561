"""A juggler who moves with the pattern: knees dip with high throws, the torso sways with the throws
and counter-twists against the hands, the head follows each prop near its peak, passing jugglers
turn toward the partner they throw to. Everything is computed from the pattern's own periodic hands
and flights, so the motion repeats exactly with the loop.

Juggler-local frame (as ``body.py``): +X the juggler's left, -Y forward, +Z up.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..quaternions import from_axis_angle, multiply
from .body import Body
from .paths import GRAVITY

Array = NDArray[np.float64]

#: Deepest knee dip (m) and the dip per metre of throw height.
_MAX_DIP = 0.03
_DIP_PER_METRE = 0.015
#: Torso roll per metre of height difference between the hands, twist per metre of their mean
#: sideways offset; both clamped.
_ROLL_GAIN = 0.35
_TWIST_GAIN = 0.5
_MAX_ROLL = math.radians(4.0)
_MAX_TWIST = math.radians(6.0)
#: Turn toward a pass's receiver (share of the angle to the partner, and its cap).
_PASS_TURN = 0.35
_MAX_PASS_TURN = math.radians(25.0)
#: Head: share of the angle to the gaze point it turns through, and its limits.
_HEAD_GAIN = 0.7
_MAX_HEAD_YAW = math.radians(40.0)
_HEAD_PITCH = (math.radians(-10.0), math.radians(45.0))
#: Where the head looks when nothing is near its peak: ahead, this high above the hands.
_REST_GAZE = np.array([0.0, -0.6, 0.5])


@dataclass(frozen=True)
class BodyMotion:
    """Per juggler and sample time: ``hip_drop`` (J, T) metres; ``torso`` (J, T, 4) rotation of the
    upper body about the hips (w first, juggler-local); ``head`` (J, T, 4) rotation of the head
    relative to the torso; ``thigh`` / ``shin`` (J, T) forward pitch of the legs (rad) that keeps
    the feet on the floor."""

    hip_drop: Array
    torso: Array
    head: Array
    thigh: Array
    shin: Array


def _wrapped(delta: Array, period: float) -> Array:
    return (delta + 0.5 * period) % period - 0.5 * period


def _bumps(t: Array, centres: Array, widths: Array, heights: Array, period: float) -> Array:
    """Sum of raised-cosine bumps (periodic in ``period``) at ``centres``."""
    if not len(centres):
        return np.zeros_like(t)
    d = _wrapped(t[:, None] - centres[None, :], period) / widths[None, :]
    inside = np.abs(d) < 1.0
    return np.sum(np.where(inside, 0.5 * (1 + np.cos(np.pi * d)), 0.0) * heights[None, :], axis=1)


def leg_angles(body: Body, drop: Array) -> tuple[Array, Array]:
    """Thigh and shin pitch (rad, knee forward) that lower the hips by ``drop`` with the ankles fixed."""
    thigh = body.hip_height - 0.08 - 0.52
    shin = 0.52 - 0.08
    reach = np.clip(thigh + shin - np.asarray(drop, dtype=np.float64), abs(thigh - shin) + 1e-6, thigh + shin)
    alpha = np.arccos(np.clip((thigh**2 + reach**2 - shin**2) / (2 * thigh * reach), -1.0, 1.0))
    beta = np.arccos(np.clip((shin**2 + reach**2 - thigh**2) / (2 * shin * reach), -1.0, 1.0))
    return alpha, beta


def body_motion(pattern, times: ArrayLike, gain: float = 1.0) -> BodyMotion:
    """The body's motion for ``pattern`` (a :class:`~.motion.Pattern`) at ``times`` (seconds);
    ``gain`` 0 keeps the juggler still."""
    t = np.atleast_1d(np.asarray(times, dtype=np.float64))
    loop = pattern.loop_duration
    jugglers = pattern.num_jugglers
    body: Body = pattern.body
    beat = pattern.beat_duration
    drop = np.zeros((jugglers, len(t)))
    torso = np.tile([1.0, 0.0, 0.0, 0.0], (jugglers, len(t), 1))
    head = np.tile([1.0, 0.0, 0.0, 0.0], (jugglers, len(t), 1))
    if gain == 0.0 or loop <= 0:
        alpha, beta = leg_angles(body, drop)
        return BodyMotion(drop, torso, head, alpha, beta)
    hands = pattern.hand_positions(t)  # (J, 2, T, 3) world
    origins = pattern.juggler_origins
    yaws = pattern.juggler_yaws
    props = pattern.prop_positions(t) if pattern.num_props else np.zeros((0, len(t), 3))
    frame_origins, frame_yaws = pattern.juggler_frames(t)
    for j in range(jugglers):
        c, s = math.cos(yaws[j]), math.sin(yaws[j])
        to_local = np.array([[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]])
        # Each sample in the juggler's frame at that moment (jugglers a JML file moves).
        cos_t, sin_t = np.cos(frame_yaws[j]), np.sin(frame_yaws[j])

        def in_frame(points: Array, j: int = j, cos_t: Array = cos_t, sin_t: Array = sin_t) -> Array:
            d = points - frame_origins[j]
            return np.stack(
                [cos_t * d[..., 0] + sin_t * d[..., 1], -sin_t * d[..., 0] + cos_t * d[..., 1], d[..., 2]],
                axis=-1,
            )

        local = in_frame(hands[j])  # (2, T, 3)
        own = [f for f in pattern.flights if f.from_juggler == j]
        # Knees: a dip centred on each throw, deeper for higher throws.
        duration = np.array([f.catch_time - f.throw_time for f in own])
        heights = GRAVITY * duration**2 / 8.0
        drop[j] = gain * np.minimum(
            _MAX_DIP,
            _bumps(
                t,
                np.array([f.throw_time for f in own]),
                np.full(len(own), 0.6 * beat),
                np.minimum(_MAX_DIP, _DIP_PER_METRE * heights),
                loop,
            ),
        )
        # Torso: tip toward the rising (throwing) hand's side, which keeps the reaching shoulder close,
        # and twist against the hands' sideways swing.
        left, right = local[0], local[1]
        roll = np.clip(_ROLL_GAIN * (left[:, 2] - right[:, 2]), -_MAX_ROLL, _MAX_ROLL)
        centre = 0.5 * (left[:, 0] + right[:, 0])
        twist = np.clip(-_TWIST_GAIN * centre, -_MAX_TWIST, _MAX_TWIST)
        # Passing: turn toward the juggler a pass goes to, around the throw.
        passes = [f for f in own if f.to_juggler != j]
        if passes:
            turns = []
            for f in passes:
                towards = (origins[f.to_juggler] - origins[j]) @ to_local.T
                # Angle from the juggler's forward (-Y) to the partner, positive toward +X (left).
                angle = math.atan2(towards[0], -towards[1])
                turns.append(np.clip(_PASS_TURN * angle, -_MAX_PASS_TURN, _MAX_PASS_TURN))
            twist = twist + _bumps(
                t, np.array([f.throw_time for f in passes]), np.full(len(passes), beat), np.array(turns), loop
            )
        q_roll = from_axis_angle(np.array([0.0, 1.0, 0.0]), gain * roll)
        q_twist = from_axis_angle(np.array([0.0, 0.0, 1.0]), gain * twist)
        torso[j] = multiply(q_twist, q_roll)
        # Head: look at the props near their peak (weighted by closeness to the apex).
        neck = np.array([0.0, 0.0, body.neck_height])
        gaze = np.tile(_REST_GAZE + np.array([0.0, 0.0, body.pattern_height]), (len(t), 1))
        weights_sum = np.full(len(t), 0.3)
        gaze = gaze * weights_sum[:, None]
        for f in pattern.flights:
            if j not in (f.from_juggler, f.to_juggler):
                continue
            span = f.catch_time - f.throw_time
            apex = f.throw_time + 0.5 * span
            # A Gaussian around the apex, lowered to reach zero (continuously) half a flight away.
            x = _wrapped(t - apex, loop) / (0.25 * span)
            w = np.maximum(np.exp(-(x**2)) - math.exp(-4.0), 0.0)
            prop_local = in_frame(props[f.prop])
            gaze += w[:, None] * prop_local
            weights_sum += w
        gaze /= weights_sum[:, None]
        look = gaze - neck
        yaw = np.clip(_HEAD_GAIN * np.arctan2(look[:, 0], -look[:, 1]), -_MAX_HEAD_YAW, _MAX_HEAD_YAW)
        pitch = np.clip(_HEAD_GAIN * np.arctan2(look[:, 2], np.hypot(look[:, 0], look[:, 1])), *_HEAD_PITCH)
        # The head turns with the torso; take out the torso's twist so it keeps looking.
        q_yaw = from_axis_angle(np.array([0.0, 0.0, 1.0]), gain * (yaw - twist))
        # A positive turn about +X tips the forward (-Y) gaze down: look up with -pitch.
        q_pitch = from_axis_angle(np.array([1.0, 0.0, 0.0]), -gain * pitch)
        head[j] = multiply(q_yaw, q_pitch)
    alpha, beta = leg_angles(body, drop)
    return BodyMotion(drop, torso, head, alpha, beta)
