"""Fitness definitions of the paper (z up here; the paper's y) plus the steerable target fitness.

Each takes a Flight and returns one value per fly, larger is better. A fly whose simulation blew
up gets WORST_FITNESS, a finite number so averages and plots stay meaningful.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .simulate import Flight, simulate

WORST_FITNESS = -1000.0


def _finish(flight: Flight, values: np.ndarray) -> np.ndarray:
    values = np.where(flight.blown_up | ~np.isfinite(values), WORST_FITNESS, values)
    return values.astype(np.float64)


def heights(flight: Flight) -> np.ndarray:
    """(m, T) height above the start point."""
    return flight.positions[..., 2] - flight.start[:, None, 2]


def lateral_offsets(flight: Flight) -> np.ndarray:
    """(m, T, 2) horizontal offset from the start point."""
    return flight.positions[..., :2] - flight.start[:, None, :2]


def mean_height(flight: Flight) -> np.ndarray:
    """Paper's first fitness: the mean height over the flight."""
    return _finish(flight, heights(flight).mean(axis=1))


def final_height(flight: Flight) -> np.ndarray:
    """Paper's second fitness: the height at the last instant."""
    return _finish(flight, heights(flight)[:, -1])


def final_height_minus_drift(flight: Flight) -> np.ndarray:
    """Paper's third fitness: final height minus a fifth of the mean |x| and of the mean |y| deviation."""
    drift = np.abs(lateral_offsets(flight)).mean(axis=1).sum(axis=1)
    return _finish(flight, heights(flight)[:, -1] - drift / 5.0)


def tilts(flight: Flight) -> np.ndarray:
    """(m, T) angle in radians between the body's up axis and the world's."""
    quat = flight.rotations
    cosine = 1.0 - 2.0 * (quat[..., 1] ** 2 + quat[..., 2] ** 2)
    return np.arccos(np.clip(cosine, -1.0, 1.0))


def upright_height_minus_drift(flight: Flight) -> np.ndarray:
    """Beyond the paper: final height minus twice the mean horizontal distance from the start and
    half a metre per radian of mean body tilt.

    The paper's fitness lets a fly tumble, or climb on a slant, as long as it gains height; this one
    asks for a level body going straight up (a 45 degree slant scores no better than hovering).
    """
    penalty = 2.0 * mean_lateral_drift(flight) + 0.5 * tilts(flight).mean(axis=1)
    return _finish(flight, heights(flight)[:, -1] - penalty)


LEVEL_TILT = 1.0  # rad: tilt past this costs again, and hard (past 90 degrees a body reads as tumbling)
LEVEL_CLIMB = 0.06  # m/s: climbing faster than this earns nothing more, so height cannot buy a tumbling body


def level_height_minus_drift(flight: Flight) -> np.ndarray:
    """Beyond *Upright*: five metres per metre climbed, both over the flight and over its second half
    (a steady climb, not one jump), each counted up to LEVEL_CLIMB per second; minus twice the mean
    horizontal distance from the start, three per radian of mean tilt, ten per radian of mean tilt
    past LEVEL_TILT, two per radian of the largest tilt past 1.3 rad and ten per metre of the
    deepest sink below the start.

    *Upright*'s half metre per radian still lets a fly rock past 90 degrees at every wing beat if it
    climbs well; here a slow steady climb with a level body is worth more than a fast one.
    """
    height = heights(flight)
    tilt = tilts(flight)
    duration = float(flight.times[-1])
    half = height.shape[1] // 2
    climb = np.minimum(height[:, -1], LEVEL_CLIMB * duration) + np.minimum(
        height[:, -1] - height[:, half], LEVEL_CLIMB * (duration - float(flight.times[half]))
    )
    sink = np.maximum(0.0, -height.min(axis=1))
    penalty = (
        2.0 * mean_lateral_drift(flight)
        + 3.0 * tilt.mean(axis=1)
        + 10.0 * np.maximum(0.0, tilt - LEVEL_TILT).mean(axis=1)
        + 2.0 * np.maximum(0.0, tilt.max(axis=1) - 1.3)
        + 10.0 * sink
    )
    return _finish(flight, 5.0 * climb - penalty)


HOVER_DRIFT = 0.02  # m: mean distance from the start a hovering fly may drift
HOVER_ALTITUDE = 0.05  # m: how far from the start altitude it may end up
HOVER_TILT_SPREAD = 0.1  # rad: standard deviation of the tilt after the first second
HOVER_TILT_SWING = 0.3  # rad: largest departure of the tilt from its mean
SETTLE_TIME = 1.0  # s: the tilt is judged after this (shorter flights: after their first tenth)


def settled_tilts(flight: Flight) -> np.ndarray:
    """(m, T') tilts after the settling time (after the first tenth of a flight shorter than 2 s)."""
    duration = float(flight.times[-1])
    settle = SETTLE_TIME if duration >= 2.0 * SETTLE_TIME else 0.1 * duration
    return tilts(flight)[:, flight.times >= settle]


def hover_scores(flight: Flight) -> dict[str, np.ndarray]:
    """The hover criteria of issue 15, per fly: mean 3D drift, largest altitude error, tilt spread
    (standard deviation) and swing (largest departure from the mean), tilts after settling."""
    offsets = flight.positions - flight.start[:, None]
    tilt = settled_tilts(flight)
    return {
        "drift": np.linalg.norm(offsets, axis=2).mean(axis=1),
        "altitude": np.abs(offsets[..., 2]).max(axis=1),
        "tilt_spread": tilt.std(axis=1),
        "tilt_swing": np.abs(tilt - tilt.mean(axis=1, keepdims=True)).max(axis=1),
        "tilt_mean": tilt.mean(axis=1),
    }


def hold_level(flight: Flight) -> np.ndarray:
    """Hover in place with a steady body: minus the mean of drift, altitude error, tilt spread and
    tilt swing, each divided by its limit (HOVER_*): 0 is a perfect hover and a fly scoring
    -1 sits on the limits on average.

    The mean tilt itself is free: it is the fly's own hover attitude, only its steadiness counts.
    """
    scores = hover_scores(flight)
    penalty = (
        scores["drift"] / HOVER_DRIFT
        + scores["altitude"] / HOVER_ALTITUDE
        + scores["tilt_spread"] / HOVER_TILT_SPREAD
        + scores["tilt_swing"] / HOVER_TILT_SWING
    ) / 4.0
    return _finish(flight, -penalty)


def final_distance_to_target(flight: Flight) -> np.ndarray:
    """Distance between the fly and the target at the end of the flight."""
    if flight.targets is None:
        from .errors import FlyError

        raise FlyError("The target distance needs a flight simulated with a target")
    return np.linalg.norm(flight.positions[:, -1] - flight.targets[None, -1], axis=1)


def mean_lateral_drift(flight: Flight) -> np.ndarray:
    """Mean horizontal distance from the start point over the flight."""
    return np.linalg.norm(lateral_offsets(flight), axis=2).mean(axis=1)


def toward_target(flight: Flight) -> np.ndarray:
    """Steerable fitness: minus the mean distance to the target over the second half of the flight."""
    if flight.targets is None:
        from .errors import FlyError

        raise FlyError("The target fitness needs a flight simulated with a target")
    half = flight.positions.shape[1] // 2
    distance = np.linalg.norm(flight.positions[:, half:] - flight.targets[None, half:], axis=2)
    return _finish(flight, -distance.mean(axis=1))


FITNESS_FUNCTIONS: dict[str, Callable[[Flight], np.ndarray]] = {
    "mean_height": mean_height,
    "final_height": final_height,
    "final_height_minus_drift": final_height_minus_drift,
    "upright_height_minus_drift": upright_height_minus_drift,
    "level_height_minus_drift": level_height_minus_drift,
    "toward_target": toward_target,
    "hold_level": hold_level,
}


def evaluator(
    measure: Callable[[Flight], np.ndarray] | str, duration: float = 3.0, **simulate_options
) -> Callable[[np.ndarray], np.ndarray]:
    """A Population.run fitness function: simulate the whole population at once, then measure each fly."""
    if isinstance(measure, str):
        from .errors import FlyError

        if measure not in FITNESS_FUNCTIONS:
            raise FlyError(f"Unknown fitness '{measure}': choose one of {', '.join(FITNESS_FUNCTIONS)}")
        measure = FITNESS_FUNCTIONS[measure]

    def evaluate(genomes: np.ndarray) -> np.ndarray:
        return measure(simulate(genomes, duration=duration, **simulate_options))

    return evaluate
