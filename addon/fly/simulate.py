"""Rigid-body flight of a whole population at once (paper section 2.2).

Every wing is cut into spanwise strips; each strip feels the paper's drag
F = 1/2 rho v|v| C_D A (A: the strip area projected on the global axes, C_D the plate's maximum
times the cosine between wing normal and velocity) or, optionally, quasi-steady lift + drag with
the Dickinson 1999 coefficients. The body box feels drag at its 8 corners, which also damps its
spin. Forces and torques are summed about the centre of mass, plus gravity; semi-implicit Euler at
dt (1 ms) and the controller sets new wing targets every control_dt (10 ms), the paper's fix for
blow-ups. A fly whose state still blows up is frozen and flagged, so results never hold NaN.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Generator
from dataclasses import dataclass

import numpy as np

from .. import quaternions
from .errors import FlyError
from .model import MIRROR_X, FlyModel, rotation_vectors
from .network import Network

Controller = Callable[[np.ndarray], np.ndarray]


@dataclass
class Flight:
    """Recorded flight of m flies over T samples (z up, metres, seconds)."""

    times: np.ndarray  # (T,)
    positions: np.ndarray  # (m, T, 3) centre of mass
    rotations: np.ndarray  # (m, T, 4) body orientation quaternions, w first
    wing_angles: np.ndarray  # (m, T, 2, 3) right / left wing (flap, sweep, pitch) in rad
    blown_up: np.ndarray  # (m,) bool: the fly's numbers diverged and it was frozen
    start: np.ndarray  # (m, 3)
    targets: np.ndarray | None  # (T, 3) target point per sample when steering, else None

    @property
    def count(self) -> int:
        return self.positions.shape[0]


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # explicit components into one buffer: np.cross / np.stack cost more than the arithmetic here
    ax, ay, az = a[..., 0], a[..., 1], a[..., 2]
    bx, by, bz = b[..., 0], b[..., 1], b[..., 2]
    x = ay * bz - az * by
    out = np.empty(x.shape + (3,))
    out[..., 0] = x
    np.subtract(az * bx, ax * bz, out=out[..., 1])
    np.subtract(ax * by, ay * bx, out=out[..., 2])
    return out


def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a[..., 0] * b[..., 0] + a[..., 1] * b[..., 1] + a[..., 2] * b[..., 2]


def dickinson_coefficients(alpha_degrees: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Translational lift and drag coefficients of Dickinson, Lehmann & Sane 1999 (alpha in degrees)."""
    lift = 0.225 + 1.58 * np.sin(np.radians(2.13 * alpha_degrees - 7.20))
    drag = 1.92 - 1.55 * np.cos(np.radians(2.04 * alpha_degrees - 9.82))
    return lift, drag


@dataclass(frozen=True)
class _Constants:
    hinge: np.ndarray
    strip_x: np.ndarray
    corners: np.ndarray
    face_areas: np.ndarray
    half_chords: np.ndarray  # (S, 1) half of each strip's chord
    strip_areas: np.ndarray  # (S, 1)


@functools.lru_cache(maxsize=16)
def _constants(model: FlyModel) -> _Constants:
    """Per-model geometry arrays, built once instead of every millisecond."""
    return _Constants(
        np.array(model.hinge),
        model.strip_centres()[:, 0].copy(),
        model.body_corners(),
        model.body_face_areas(),
        (0.5 * model.strip_chords())[:, None],
        model.strip_areas()[:, None],
    )


def wing_axes(angles: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Columns of the right-wing rotation Rz(sweep) Ry(-flap) Rx(pitch) for (..., 3) angles.

    Closed form of :func:`model.wing_rotation` (span axis, chord-normal axis, plate normal); it is
    evaluated every millisecond, so it avoids building the three factor matrices.
    """
    cf, sf = np.cos(angles[..., 0]), np.sin(angles[..., 0])
    cs, ss = np.cos(angles[..., 1]), np.sin(angles[..., 1])
    cp, sp = np.cos(angles[..., 2]), np.sin(angles[..., 2])
    span = np.empty(angles.shape)
    span[..., 0], span[..., 1], span[..., 2] = cs * cf, ss * cf, sf
    flat = np.empty(angles.shape)  # Rz Ry(-flap) e_y
    flat[..., 0], flat[..., 1], flat[..., 2] = -ss, cs, 0.0
    lifted = np.empty(angles.shape)  # Rz Ry(-flap) e_z
    lifted[..., 0], lifted[..., 1], lifted[..., 2] = -cs * sf, -ss * sf, cf
    chord = cp[..., None] * flat + sp[..., None] * lifted
    normal = cp[..., None] * lifted - sp[..., None] * flat
    return span, chord, normal


def wing_geometry(model: FlyModel, angles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Strip centres (P, 2S, 3) and unit normals (P, 2, 3) of both wings in the body frame.

    ``angles`` is (P, 2, 3) (right then left wing) or (P, 1, 3) for a symmetric fly, whose left
    wing is then the exact mirror of the right one.
    """
    centres, normal, _ = wing_frames(model, angles)
    return centres, normal


def wing_frames(model: FlyModel, angles: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`wing_geometry` plus the chord axes (P, 2, 3), pointing to the leading edge."""
    span, chord, normal = wing_axes(angles)
    constants = _constants(model)
    centres = (
        constants.hinge
        + constants.strip_x[:, None] * span[:, :, None, :]
        - constants.half_chords * chord[:, :, None, :]
    )  # (P, W, S, 3)
    if angles.shape[1] == 1:
        centres = np.concatenate([centres, centres * MIRROR_X], axis=1)
        normal = np.concatenate([normal, normal * MIRROR_X], axis=1)
        chord = np.concatenate([chord, chord * MIRROR_X], axis=1)
    else:
        centres[:, 1] *= MIRROR_X
        normal[:, 1] *= MIRROR_X
        chord[:, 1] *= MIRROR_X
    count, _, strips, _ = centres.shape
    return centres.reshape(count, 2 * strips, 3), normal, chord


def loads(
    model: FlyModel,
    velocity: np.ndarray,
    axes: np.ndarray,
    spin: np.ndarray,
    centres: np.ndarray,
    normals: np.ndarray,
    centre_velocity: np.ndarray,
    gravity: float | None = None,
    rotation: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Net force and torque about the centre of mass, both (P, 3) in world axes.

    velocity, spin: (P, 3) world linear / angular velocity; axes (P, 3, 3): the body x, y, z axes
    in world coordinates as rows (the transposed body rotation R^T); centres (P, 2S, 3), normals
    (P, 2, 3): wing strips in the body frame; centre_velocity (P, 2S, 3): strip velocity relative
    to the body from the wing's own rotation about its hinge.
    Right wing, left wing, right and left body halves are summed separately, so a mirror-symmetric
    fly cancels exactly (floating-point sums of mirrored terms in the same order are exact negatives).
    rotation: optional (chords (P, 2, 3) body frame, pitch_rate (P, 2) rad/s); with quasi-steady
    aerodynamics it adds the rotational force of Sane & Dickinson 2002 (see :func:`rotational_force`).
    """
    count = velocity.shape[0]
    strips = centres.shape[1] // 2
    wing_points = 2 * strips
    constants = _constants(model)
    corners = np.broadcast_to(constants.corners, (count, 8, 3))
    offsets = np.concatenate([centres, corners], axis=1) @ axes  # (P, K, 3)
    point_velocity = velocity[:, None] + _cross(spin[:, None], offsets)
    point_velocity[:, :wing_points] += centre_velocity @ axes
    speed = np.sqrt(_dot(point_velocity, point_velocity))[..., None]
    normal = (normals @ axes)[:, :, None, :]  # (P, 2, 1, 3)
    wing_velocity = point_velocity[:, :wing_points].reshape(count, 2, strips, 3)
    wing_speed = speed[:, :wing_points].reshape(count, 2, strips, 1)
    normal_velocity = _dot(normal, wing_velocity)[..., None]
    half_rho_area = 0.5 * model.air_density * constants.strip_areas  # (S, 1)
    if model.aero == "drag":
        drag_coefficient = model.wing_drag_max * np.abs(normal_velocity) / np.maximum(wing_speed, 1e-12)
        wing_force = -half_rho_area * drag_coefficient * np.abs(normal) * wing_velocity * wing_speed
    else:
        safe_speed = np.maximum(wing_speed, 1e-12)
        sine = np.minimum(np.abs(normal_velocity) / safe_speed, 1.0)
        lift_coefficient, drag_coefficient = dickinson_coefficients(np.degrees(np.arcsin(sine)))
        across = normal - (normal_velocity / safe_speed**2) * wing_velocity
        across_norm = np.maximum(np.sqrt(_dot(across, across))[..., None], 1e-12)
        lift_direction = -np.sign(normal_velocity) * across / across_norm
        wing_force = half_rho_area * (
            lift_coefficient * wing_speed**2 * lift_direction - drag_coefficient * wing_speed * wing_velocity
        )
        if rotation is not None and model.rotational_lift:
            chords, pitch_rate = rotation
            wing_force = wing_force + rotational_force(
                model, chords @ axes, pitch_rate, normal, wing_velocity
            )
    projected = constants.face_areas @ np.abs(axes)  # (P, 3) box area per world axis
    body_force = (
        (-0.0625 * model.air_density * model.body_drag)
        * projected[:, None]
        * point_velocity[:, wing_points:]
        * speed[:, wing_points:]
    )
    force = np.concatenate([wing_force.reshape(count, wing_points, 3), body_force], axis=1)
    torque = _cross(offsets, force)
    groups = [0, strips, wing_points, wing_points + 4]
    force_parts = np.add.reduceat(force, groups, axis=1)
    torque_parts = np.add.reduceat(torque, groups, axis=1)
    total_force = (force_parts[:, 0] + force_parts[:, 1]) + (force_parts[:, 2] + force_parts[:, 3])
    total_torque = (torque_parts[:, 0] + torque_parts[:, 1]) + (torque_parts[:, 2] + torque_parts[:, 3])
    g = model.gravity if gravity is None else gravity
    total_force[:, 2] -= model.total_mass * g
    return total_force, total_torque


ROTATION_AXIS = 0.0  # chord fraction from the leading edge of the pitch axis (the wings pitch about it)
ROTATIONAL_COEFFICIENT = np.pi * (0.75 - ROTATION_AXIS)  # Sane & Dickinson 2002: C_rot = pi (3/4 - x0)


def rotational_force(
    model: FlyModel, chords: np.ndarray, pitch_rate: np.ndarray, normal: np.ndarray, wing_velocity: np.ndarray
) -> np.ndarray:
    """Rotational circulation force per strip (P, 2, S, 3), normal to the wing.

    Sane & Dickinson 2002: dF = C_rot rho U omega c^2 dr along the normal, enhancing the
    translational normal force when the wing pitches its leading edge up into the flow (so a
    rotation advanced ahead of stroke reversal adds lift and a delayed one takes it away, as in
    Dickinson 1999). With chord axis c (to the leading edge), flow -v and pitch rate omega about
    the span, the signed form is C_rot rho c^2 omega (c . v) n.
    """
    constants = _constants(model)
    chord_squared = (2.0 * constants.half_chords) ** 2  # (S, 1)
    along = _dot(chords[:, :, None, :], wing_velocity)[..., None]  # (P, 2, S, 1)
    scale = ROTATIONAL_COEFFICIENT * model.air_density * (model.wing_span / model.strips)
    return scale * chord_squared * pitch_rate[:, :, None, None] * along * normal


def integrate_body(
    position: np.ndarray,
    velocity: np.ndarray,
    axes: np.ndarray,
    spin: np.ndarray,
    force: np.ndarray,
    torque: np.ndarray,
    mass: float,
    inertia: np.ndarray,
    dt: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One semi-implicit Euler step of the rigid body (world force / torque); returns the new
    position, velocity, axes (rows: body axes in world) and world spin."""
    velocity = velocity + force * (dt / mass)
    position = position + velocity * dt
    body_spin = (axes @ spin[..., None])[..., 0]
    body_torque = (axes @ torque[..., None])[..., 0]
    body_spin = body_spin + (body_torque - _cross(body_spin, body_spin * inertia)) / inertia * dt
    spin = (body_spin[:, None] @ axes)[:, 0]
    # Rodrigues on the axis rows, u = spin dt:
    # a' = a + sin(t)/t (u x a) + (1 - cos t)/t^2 (u x (u x a))
    turn = spin * dt
    angle = np.sqrt(_dot(turn, turn))
    small = angle < 1e-8
    sine_term = np.where(small, 1.0, np.sin(angle) / np.where(small, 1.0, angle))
    cosine_term = np.where(small, 0.5, (1.0 - np.cos(angle)) / np.where(small, 1.0, angle**2))
    once = _cross(turn[:, None], axes)
    axes = axes + sine_term[:, None, None] * once + cosine_term[:, None, None] * _cross(turn[:, None], once)
    return position, velocity, axes, spin


def network_controller(genomes: np.ndarray, layers, activation: str) -> Controller:
    """Wrap a stack of genomes as a controller: inputs (P, n_in) -> outputs (P, n_out) in [-1, 1]."""
    from .network import output_unit_range

    network = Network(np.atleast_2d(genomes), layers, activation)

    def control(inputs: np.ndarray) -> np.ndarray:
        return output_unit_range(network.activate(inputs[:, :, None])[:, :, 0], activation)

    return control


def _as_points(value, count: int, name: str) -> np.ndarray:
    points = np.asarray(value, dtype=np.float64)
    if points.shape == (3,):
        points = np.broadcast_to(points, (count, 3)).copy()
    if points.shape != (count, 3) or not np.all(np.isfinite(points)):
        raise FlyError(
            f"{name} must be a finite point (3,) or one per fly ({count}, 3), got shape {points.shape}"
        )
    return points


def flight_schedule(
    model: FlyModel, duration: float, dt: float | None, control_dt: float, count: int, record_every: int,
    start, target,
) -> tuple[float, int, int, np.ndarray, np.ndarray | None]:
    """Check a flight's timing and points (both control modes): the time step, the number of steps,
    steps per control tick, the (count, 3) start points and the target path (steps + 1, 3) or None."""
    dt = model.time_step if dt is None else float(dt)
    if not (np.isfinite(duration) and duration > 0 and np.isfinite(dt) and dt > 0):
        raise FlyError(f"Flight duration and time step must be positive, got {duration} s and {dt} s")
    steps = int(round(duration / dt))
    control_every = int(round(control_dt / dt))
    if control_every < 1 or abs(control_every * dt - control_dt) > 1e-9:
        raise FlyError(f"Control interval {control_dt} s must be a whole multiple of the time step {dt} s")
    if count < 1 or record_every < 1:
        raise FlyError("Simulate at least one fly and record at least every step")
    start_points = _as_points(np.zeros(3) if start is None else start, count, "Start position")
    target_path = None
    if target is not None:
        target_path = np.asarray(target, dtype=np.float64)
        if target_path.shape == (3,):
            target_path = np.broadcast_to(target_path, (steps + 1, 3))
        if target_path.shape != (steps + 1, 3) or not np.all(np.isfinite(target_path)):
            raise FlyError(f"Target must be a point (3,) or a path ({steps + 1}, 3), got {target_path.shape}")
    return dt, steps, control_every, start_points, target_path


def control_outputs(
    controller: Controller,
    model: FlyModel,
    offset: np.ndarray,
    axes: np.ndarray,
    velocity: np.ndarray,
    spin: np.ndarray,
    wing_inputs: np.ndarray,
) -> np.ndarray:
    """The controller's (P, outputs) answer to the network inputs (both control modes): the offset
    from the reference, body rotation vector, velocity and spin (each squashed to its scale), then
    the mode's own view of the wings."""
    count = offset.shape[0]
    inputs = np.concatenate(
        [
            np.tanh(offset / model.position_scale),
            rotation_vectors(np.swapaxes(axes, 1, 2)),
            np.tanh(velocity / model.velocity_scale),
            np.tanh(spin / model.spin_scale),
            wing_inputs,
        ],
        axis=1,
    )
    outputs = np.asarray(controller(inputs), dtype=np.float64)
    if outputs.shape != (count, model.network_outputs):
        expected = (count, model.network_outputs)
        raise FlyError(f"Controller returned shape {outputs.shape}, expected {expected}")
    return outputs


class FlightRecorder:
    """What both control modes' step loops share: a sample every ``record_every`` steps, and the check
    (once per control period) that freezes a diverging fly where it last was healthy.

    Flies never interact, so a diverging one only needs its samples since the last healthy check
    overwritten; the check resets its position and axes in place and zeroes its velocity and spin.
    """

    def __init__(
        self,
        model: FlyModel,
        steps: int,
        record_every: int,
        wings: int,
        position: np.ndarray,
        axes: np.ndarray,
    ) -> None:
        count = position.shape[0]
        samples = steps // record_every + 1
        self.model = model
        self.record_every = record_every
        self.positions = np.empty((count, samples, 3))
        self.axes = np.empty((count, samples, 3, 3))
        self.wing_angles = np.empty((count, samples, wings, 3))
        self.blown = np.zeros(count, dtype=bool)
        self.safe_position, self.safe_axes, self.safe_sample = position.copy(), axes.copy(), 0

    def record(self, step: int, position: np.ndarray, axes: np.ndarray, angles: np.ndarray) -> None:
        if step % self.record_every == 0:
            k = step // self.record_every
            self.positions[:, k] = position
            self.axes[:, k] = axes
            self.wing_angles[:, k] = angles

    def check(
        self, step: int, position: np.ndarray, velocity: np.ndarray, axes: np.ndarray, spin: np.ndarray
    ) -> np.ndarray:
        """Freeze the flies that diverged since the last check; returns the (count,) blown mask."""
        model, blown = self.model, self.blown
        healthy = (
            (_dot(velocity, velocity) < model.blowup_speed**2)
            & (_dot(spin, spin) < model.blowup_spin**2)
            & np.isfinite(position).all(1)
            & np.isfinite(axes).all((1, 2))
        )
        newly = ~healthy & ~blown
        if newly.any():
            blown |= newly
            last = step // self.record_every
            self.positions[newly, self.safe_sample : last + 1] = self.safe_position[newly, None]
            self.axes[newly, self.safe_sample : last + 1] = self.safe_axes[newly, None]
        if blown.any():
            position[blown], axes[blown] = self.safe_position[blown], self.safe_axes[blown]
            velocity[blown], spin[blown] = 0.0, 0.0
        self.safe_position, self.safe_axes = position.copy(), axes.copy()
        self.safe_sample = step // self.record_every
        return blown

    def flight(self, dt: float, start: np.ndarray, target_path: np.ndarray | None) -> Flight:
        wing_angles = self.wing_angles
        if wing_angles.shape[2] == 1:  # a symmetric fly: the left wing mirrors the right one
            wing_angles = np.concatenate([wing_angles, wing_angles], axis=2)
        return Flight(
            times=np.arange(self.positions.shape[1]) * dt * self.record_every,
            positions=self.positions,
            rotations=quaternions.from_matrix(np.swapaxes(self.axes, -1, -2)),
            wing_angles=wing_angles,
            blown_up=self.blown,
            start=start,
            targets=None if target_path is None else np.ascontiguousarray(target_path[:: self.record_every]),
        )


def simulate_steps(
    controller: Controller,
    count: int,
    duration: float = 3.0,
    dt: float | None = None,
    control_dt: float = 0.01,
    model: FlyModel | None = None,
    start=None,
    target=None,
    record_every: int = 1,
) -> Generator[float, None, Flight]:
    """Simulate ``count`` flies driven by ``controller``; yields progress in [0, 1], returns the Flight.

    target: None, a point (3,), or a path (steps + 1, 3) sampled every dt; when given, the
    network's position input is the offset from the target instead of from the start.
    """
    model = model or FlyModel()
    if model.control != "direct":
        raise FlyError("simulate_steps drives wing angles directly; use stroke.simulate_stroke_steps")
    dt, steps, control_every, start_points, target_path = flight_schedule(
        model, duration, dt, control_dt, count, record_every, start, target
    )

    inertia = np.diag(model.inertia())
    mass = model.total_mass
    max_angle = np.array(model.max_angle)
    max_step = np.array(model.max_speed) * dt
    wings = model.wings
    position = start_points.copy()
    velocity = np.zeros((count, 3))
    axes = np.broadcast_to(np.eye(3), (count, 3, 3)).copy()  # rows: body axes in world (R^T)
    spin = np.zeros((count, 3))
    angles = np.zeros((count, wings, 3))
    wing_targets = np.zeros((count, wings, 3))
    centres, normals = wing_geometry(model, angles)
    recorder = FlightRecorder(model, steps, record_every, wings, position, axes)
    chunk = max(1, steps // 50)

    with np.errstate(all="ignore"):  # a diverging fly may overflow; it is caught and frozen below
        for step in range(steps + 1):
            recorder.record(step, position, axes, angles)
            if step % control_every == 0 or step == steps:
                blown = recorder.check(step, position, velocity, axes, spin)
                angles[blown] = 0.0
            if step == steps:
                break
            if step % control_every == 0:
                reference = start_points if target_path is None else target_path[step][None, :]
                wing_inputs = (angles / max_angle).reshape(count, 3 * wings)
                outputs = control_outputs(
                    controller, model, position - reference, axes, velocity, spin, wing_inputs
                )
                outputs = np.clip(np.nan_to_num(outputs), -1.0, 1.0).reshape(count, wings, 3)
                wing_targets = outputs * max_angle
                wing_targets[blown] = 0.0
                # repeated products drift off orthonormal; one Newton-Schulz step pulls the axes back
                axes = 1.5 * axes - 0.5 * axes @ np.swapaxes(axes, 1, 2) @ axes
            angles = angles + np.clip(wing_targets - angles, -max_step, max_step)
            new_centres, normals = wing_geometry(model, angles)
            centre_velocity = (new_centres - centres) / dt
            centres = new_centres
            force, torque = loads(model, velocity, axes, spin, centres, normals, centre_velocity)
            force[blown], torque[blown] = 0.0, 0.0

            position, velocity, axes, spin = integrate_body(
                position, velocity, axes, spin, force, torque, mass, inertia, dt
            )
            if step % chunk == 0:
                yield step / steps

    flight = recorder.flight(dt, start_points, target_path)
    yield 1.0
    return flight


def run_to_end(generator: Generator[float, None, Flight]) -> Flight:
    while True:
        try:
            next(generator)
        except StopIteration as stop:
            return stop.value


def simulate_controlled(controller: Controller, count: int, **options) -> Flight:
    """Blocking form of :func:`simulate_steps` for any controller (tests, prescribed wing motion)."""
    return run_to_end(simulate_steps(controller, count, **options))


def simulate(
    genomes,
    duration: float = 3.0,
    dt: float | None = None,
    control_dt: float = 0.01,
    *,
    layers=None,
    activation: str | None = None,
    model: FlyModel | None = None,
    start=None,
    target=None,
    record_every: int = 1,
) -> Flight:
    """Fly every genome (a Genome, a (G,) array or a (P, G) stack) in one vectorised simulation.

    A Genome (or a list of them) flies the fly it was trained for (its control mode, size and
    aerodynamics), so ``simulate([load_genome(path)], duration=30.0)`` needs nothing else; ``dt``
    defaults to that fly's time step.
    """
    return run_to_end(
        simulate_genomes_steps(
            genomes,
            duration,
            dt,
            control_dt,
            layers=layers,
            activation=activation,
            model=model,
            start=start,
            target=target,
            record_every=record_every,
        )
    )


def simulate_genomes_steps(
    genomes,
    duration: float = 3.0,
    dt: float | None = None,
    control_dt: float = 0.01,
    *,
    layers=None,
    activation: str | None = None,
    model: FlyModel | None = None,
    start=None,
    target=None,
    record_every: int = 1,
) -> Generator[float, None, Flight]:
    from .genome import Genome, as_genome_stack
    from .network import OUTPUT_MODES

    first = genomes[0] if isinstance(genomes, (list, tuple)) and genomes else genomes
    stack, layers, activation, asymmetric = as_genome_stack(genomes, layers, activation)
    control = OUTPUT_MODES[layers[-1]][0]
    if model is None:
        if isinstance(first, Genome):
            model = first.model()
        else:
            size = "fruit_fly" if control == "stroke" else "cartoon"
            model = FlyModel.preset(
                size,
                control=control,
                asymmetric=asymmetric,
                **({} if control == "stroke" else {"aero": "drag"}),
            )
    if (
        model.asymmetric != asymmetric
        or model.control != control
        or layers[0] != model.network_inputs
        or layers[-1] != model.network_outputs
    ):
        raise FlyError(
            f"Network layers {list(layers)} do not fit a fly with {model.network_inputs} inputs "
            f"and {model.network_outputs} outputs ({model.control} control)"
        )
    controller = network_controller(stack, layers, activation)
    step = model.time_step if dt is None else dt
    if control == "stroke":
        from .stroke import simulate_stroke_steps

        return (
            yield from simulate_stroke_steps(
                controller, stack.shape[0], duration, step, control_dt, model, start, target, record_every
            )
        )
    return (
        yield from simulate_steps(
            controller, stack.shape[0], duration, step, control_dt, model, start, target, record_every
        )
    )
