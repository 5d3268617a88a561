"""Wing-beat pattern generator: the fly's "stroke" control mode.

Each wing follows smooth periodic functions of its own phase (stroke-plane Euler angles, the same
flap / sweep / pitch as the paper's wing, read as deviation / stroke / pitch):

* stroke angle  = mean + amplitude / 2 * cos(phase)                   (sweep, forward positive)
* deviation     = deviation_amplitude * cos(2 phase)                  (flap, a figure-eight)
* pitch         = pi/2 - (pi/2 - mid_pitch) * tanh(K s) / tanh(K),   s = -sin(phase + timing)

so at mid-stroke the wing meets the air at ``mid_pitch`` leading edge first, flips through
vertical (pi/2) around stroke reversal, and ``timing`` > 0 flips it before the reversal
(advanced rotation). The phase advances by 2 pi f dt, so a new frequency never makes the wing jump.

The network still acts every control_dt (10 ms, as in the paper) but sets five parameters per wing
(frequency, amplitude, mean stroke, mid-stroke pitch, rotation timing) instead of the next wing
angles; the parameters follow its outputs with a short first-order lag so the stroke stays smooth.
The physics step must resolve the beat (FlyModel.time_step: 0.2 ms at fruit-fly scale).

Wing inertia: each strip carries its share of the wing mass; the wings' acceleration relative to
the body (from the prescribed stroke) pushes back on the body as a force and torque, so a body at
rest in still air recoils from a stroke (momentum is conserved to first order in the body's spin).
"""

from __future__ import annotations

from collections.abc import Generator

import numpy as np

from .errors import FlyError
from .model import FlyModel
from .simulate import (
    Controller,
    Flight,
    FlightRecorder,
    _constants,
    _cross,
    control_outputs,
    flight_schedule,
    integrate_body,
    loads,
    wing_frames,
)

PARAMETER_NAMES: tuple[str, ...] = ("frequency", "amplitude", "mean_stroke", "mid_pitch", "rotation_timing")
DIFFERENCE_STEP = 1e-5  # s: central differences of the prescribed wing motion (velocity, acceleration)


def parameter_ranges(model: FlyModel) -> np.ndarray:
    """(5, 2) low / high of each stroke parameter, in PARAMETER_NAMES order."""
    return np.array(
        [
            model.frequency_range,
            model.amplitude_range,
            model.mean_stroke_range,
            model.mid_pitch_range,
            model.rotation_timing_range,
        ],
        dtype=np.float64,
    )


def parameters_from_outputs(model: FlyModel, outputs: np.ndarray) -> np.ndarray:
    """Network outputs (..., 5) in [-1, 1] -> stroke parameters (..., 5), linear onto their ranges."""
    ranges = parameter_ranges(model)
    unit = np.clip(np.nan_to_num(np.asarray(outputs, dtype=np.float64)), -1.0, 1.0)
    return ranges[:, 0] + 0.5 * (unit + 1.0) * (ranges[:, 1] - ranges[:, 0])


def outputs_from_parameters(model: FlyModel, parameters: np.ndarray) -> np.ndarray:
    """Inverse of :func:`parameters_from_outputs` (the network's view of the current parameters)."""
    ranges = parameter_ranges(model)
    return 2.0 * (np.asarray(parameters) - ranges[:, 0]) / (ranges[:, 1] - ranges[:, 0]) - 1.0


def stroke_angles(model: FlyModel, phase: np.ndarray, parameters: np.ndarray) -> np.ndarray:
    """Wing angles (..., 3) = (deviation as flap, stroke as sweep, pitch) at ``phase`` (...,).

    ``parameters`` (..., 5) in PARAMETER_NAMES order (the frequency is not used here).
    """
    amplitude = parameters[..., 1]
    mean = parameters[..., 2]
    mid_pitch = parameters[..., 3]
    timing = parameters[..., 4]
    gain = model.rotation_sharpness
    square = np.tanh(-gain * np.sin(phase + timing)) / np.tanh(gain)
    angles = np.empty(np.shape(phase) + (3,))
    angles[..., 0] = model.stroke_deviation * np.cos(2.0 * phase)
    angles[..., 1] = mean + 0.5 * amplitude * np.cos(phase)
    angles[..., 2] = 0.5 * np.pi - (0.5 * np.pi - mid_pitch) * square
    return angles


def hover_parameters(model: FlyModel) -> np.ndarray:
    """A plausible mid-range stroke (5,): 220 Hz (or the range's middle), 150 degrees, 40 degrees."""
    low, high = model.frequency_range
    frequency = 220.0 if low <= 220.0 <= high else 0.5 * (low + high)
    return np.array([frequency, np.radians(150.0), 0.0, np.radians(40.0), 0.0])


def _kinematics(model: FlyModel, phase: np.ndarray, parameters: np.ndarray):
    """Strip centres, normals, chords, strip velocity / acceleration and pitch rate, body frame.

    phase (P, W), parameters (P, W, 5). Velocities and accelerations are central differences of the
    analytic stroke at +-DIFFERENCE_STEP (the parameters held), so they do not depend on dt.
    """
    h = DIFFERENCE_STEP
    shift = 2.0 * np.pi * parameters[..., 0] * h  # (P, W)
    count, wings = phase.shape
    phases = np.concatenate([phase - shift, phase, phase + shift])  # (3P, W)
    angles = stroke_angles(model, phases, np.concatenate([parameters] * 3))
    centres, normals, chords = wing_frames(model, angles)
    before, now, after = centres[:count], centres[count : 2 * count], centres[2 * count :]
    velocity = (after - before) / (2.0 * h)
    acceleration = (after - 2.0 * now + before) / (h * h)
    pitch_rate = (angles[2 * count :, :, 2] - angles[:count, :, 2]) / (2.0 * h)
    if wings == 1:
        pitch_rate = np.concatenate([pitch_rate, pitch_rate], axis=1)
    return (
        now,
        normals[count : 2 * count],
        chords[count : 2 * count],
        velocity,
        acceleration,
        pitch_rate,
        angles[count : 2 * count],
    )


def strip_masses(model: FlyModel) -> np.ndarray:
    """(2S,) wing mass carried by each strip of both wings (proportional to strip area)."""
    areas = model.strip_areas()
    share = model.wing_mass * areas / areas.sum()
    return np.concatenate([share, share])


def wing_reaction(
    model: FlyModel, axes: np.ndarray, centres: np.ndarray, acceleration: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """World force and torque (P, 3) the wings' stroke acceleration exerts on the body (their recoil)."""
    masses = strip_masses(model)[None, :, None]
    push = -(masses * acceleration) @ axes  # (P, 2S, 3) world
    twist = _cross(centres @ axes, push)
    strips = model.strips
    # right and left wing summed apart, so a mirror-symmetric stroke cancels exactly
    return (
        push[:, :strips].sum(axis=1) + push[:, strips:].sum(axis=1),
        twist[:, :strips].sum(axis=1) + twist[:, strips:].sum(axis=1),
    )


def stroke_loads(
    model: FlyModel,
    velocity: np.ndarray,
    axes: np.ndarray,
    spin: np.ndarray,
    phase: np.ndarray,
    parameters: np.ndarray,
    gravity: float | None = None,
    inertia: bool = True,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Aerodynamic + gravity (+ wing recoil) force and torque (P, 3) and the wing angles (P, W, 3)."""
    centres, normals, chords, strip_velocity, strip_acceleration, pitch_rate, angles = _kinematics(
        model, phase, parameters
    )
    force, torque = loads(
        model, velocity, axes, spin, centres, normals, strip_velocity, gravity, rotation=(chords, pitch_rate)
    )
    if inertia and model.wing_mass > 0:
        push, twist = wing_reaction(model, axes, centres, strip_acceleration)
        force = force + push
        torque = torque + twist
    return force, torque, angles


def simulate_stroke_steps(
    controller: Controller,
    count: int,
    duration: float = 3.0,
    dt: float | None = None,
    control_dt: float = 0.01,
    model: FlyModel | None = None,
    start=None,
    target=None,
    record_every: int = 1,
    start_parameters=None,
) -> Generator[float, None, Flight]:
    """Stroke-mode counterpart of :func:`simulate.simulate_steps` (same inputs, same Flight).

    The controller sees 12 body inputs plus the current parameters (in [-1, 1]) of each wing and
    returns 5 values per wing. ``target`` is a point or a path sampled every dt (steps + 1, 3).
    """
    model = model or FlyModel.fruit_fly()
    if model.control != "stroke":
        raise FlyError("simulate_stroke_steps needs a model in the 'stroke' control mode")
    dt, steps, control_every, start_points, target_path = flight_schedule(
        model, duration, dt, control_dt, count, record_every, start, target
    )

    inertia = np.diag(model.inertia())
    mass = model.total_mass
    wings = model.wings
    lag = min(1.0, dt / model.parameter_lag) if model.parameter_lag > 0 else 1.0
    position = start_points.copy()
    velocity = np.zeros((count, 3))
    axes = np.broadcast_to(np.eye(3), (count, 3, 3)).copy()
    spin = np.zeros((count, 3))
    phase = np.zeros((count, wings))
    initial = hover_parameters(model) if start_parameters is None else np.asarray(start_parameters, float)
    parameters = np.broadcast_to(initial, (count, wings, 5)).copy()
    goal = parameters.copy()
    angles = stroke_angles(model, phase, parameters)
    _constants(model)
    recorder = FlightRecorder(model, steps, record_every, wings, position, axes)
    chunk = max(1, steps // 50)

    with np.errstate(all="ignore"):
        for step in range(steps + 1):
            recorder.record(step, position, axes, angles)
            if step % control_every == 0 or step == steps:
                blown = recorder.check(step, position, velocity, axes, spin)
            if step == steps:
                break
            if step % control_every == 0:
                reference = start_points if target_path is None else target_path[step][None, :]
                wing_inputs = outputs_from_parameters(model, parameters).reshape(count, 5 * wings)
                outputs = control_outputs(
                    controller, model, position - reference, axes, velocity, spin, wing_inputs
                )
                goal = parameters_from_outputs(model, outputs.reshape(count, wings, 5))
                axes = 1.5 * axes - 0.5 * axes @ np.swapaxes(axes, 1, 2) @ axes
            parameters = parameters + lag * (goal - parameters)
            # forces at the step's own phase: with the semi-implicit Euler update this is Stormer-Verlet
            # for the prescribed wing motion, so the body's recoil stays in phase with the wings
            force, torque, _ = stroke_loads(model, velocity, axes, spin, phase, parameters)
            force[blown], torque[blown] = 0.0, 0.0
            position, velocity, axes, spin = integrate_body(
                position, velocity, axes, spin, force, torque, mass, inertia, dt
            )
            phase = np.mod(phase + 2.0 * np.pi * parameters[..., 0] * dt, 2.0 * np.pi)
            angles = stroke_angles(model, phase, parameters)
            if step % chunk == 0:
                yield step / steps

    flight = recorder.flight(dt, start_points, target_path)
    yield 1.0
    return flight


def mean_beat_force(
    model: FlyModel, parameters, dt: float, beats: int = 1, inertia: bool = False
) -> np.ndarray:
    """Mean force (3,) on a body held still and level over whole beats, sampled every ``dt`` as the
    simulation samples it (uniformly in phase). Gravity is left out."""
    parameters = np.asarray(parameters, dtype=np.float64).reshape(1, 1, 5)
    period = 1.0 / parameters[0, 0, 0]
    steps = max(1, int(round(beats * period / dt)))
    step = beats * period / steps  # whole beats exactly
    times = np.arange(steps) * step
    phase = (2.0 * np.pi * parameters[0, 0, 0] * times)[:, None]
    params = np.broadcast_to(parameters, (steps, 1, 5))
    zeros = np.zeros((steps, 3))
    axes = np.broadcast_to(np.eye(3), (steps, 3, 3))
    force, _, _ = stroke_loads(model, zeros, axes, zeros, phase, params, gravity=0.0, inertia=inertia)
    return force.mean(axis=0)
