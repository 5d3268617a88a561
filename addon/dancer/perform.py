"""The ballet sequence of the paper's Fig. 2: position, weight shift, retiré, relevé on one toe.

Left is the supporting leg. Every phase blends the joint targets towards its key pose and the COM
target towards its support region; the COP strategy (eqs. 7-9) keeps the balance throughout, with
the lean on the supporting ankle(s) and hip(s) (equal angle changes, pelvis level), the spine
counter-rotating any pelvis tilt, a COM term at the supporting hip once the polygon is one foot,
and the toe joint taking over the sagittal control once the heel is up.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from .anthropometry import DancerError
from .balance import Gains
from .model import build_body
from .poses import (
    DEFAULT_TURNOUT,
    position_pose,
    releve_pose,
    retire_lift_pose,
    retire_pose,
    validate_sequence,
)
from .sim import CONTACT_BODIES, CONTROL_DT, DancerSim, bone_rotations, lean_for_shift
from .support import clamp_into_hull, convex_hull, polygon_area

DEFAULT_SEQUENCE = ("first_position", "weight_shift", "retire", "releve")
PHASE_SECONDS = {"position": 1.5, "weight_shift": 3.0, "retire": 3.5, "releve": 7.0}



@dataclass
class Performance:
    """Time series of a performed sequence (metres, seconds, z up).

    ``rotations[bone]`` (T, 4) are quaternions (w first) of each body relative to its parent in
    the rest frame (every body frame is world-aligned at rest); for ``hips`` it is the world
    rotation and ``root_positions`` (T, 3) is its joint position. ``rest_positions[bone]`` is the
    rest position of that joint. Bones not listed (head, hands) stay in their rest pose.
    """

    sequence: tuple[str, ...]
    times: NDArray[np.float64]
    com: NDArray[np.float64]
    cop: NDArray[np.float64]
    support_polygons: list[NDArray[np.float64]]
    in_contact: NDArray[np.bool_]
    phase_times: list[tuple[str, float, float]]
    fell: bool
    fall_time: float
    rotations: dict[str, NDArray[np.float64]]
    root_positions: NDArray[np.float64]
    rest_positions: dict[str, NDArray[np.float64]]
    com_targets: NDArray[np.float64]
    parents: dict[str, str | None] = field(default_factory=dict)
    contact_bodies: tuple[str, ...] = CONTACT_BODIES


@dataclass
class _Phase:
    name: str
    duration: float
    pose: dict[str, float]
    stance: str
    com_target: NDArray[np.float64]
    pose_blend: float
    target_blend: float
    pose_delay: float = 0.0
    toe_control: bool = False
    via: dict[str, float] = field(default_factory=dict)


def _smooth(x: float) -> float:
    x = min(max(x, 0.0), 1.0)
    return x * x * x * (10.0 + x * (-15.0 + 6.0 * x))


def _contact_points(sim: DancerSim, bodies: tuple[str, ...]) -> NDArray[np.float64]:
    d = sim.data
    ids = [sim.body_ids[b] for b in bodies]
    mask = np.isin(sim.model.geom_bodyid, ids) & (sim.contact_body >= 0)
    return d.geom_xpos[mask, :2].copy()


def _validate_durations(durations: dict[str, float] | None) -> dict[str, float]:
    out = dict(PHASE_SECONDS)
    for key, value in (durations or {}).items():
        if key not in out:
            raise DancerError(f"unknown phase {key!r} in durations; phases are {', '.join(out)}")
        minimum = {"position": 0.2, "weight_shift": 1.0, "retire": 1.0, "releve": 2.5}[key]
        if not np.isfinite(value) or not minimum <= value <= 30.0:
            raise DancerError(f"phase {key!r} must last between {minimum} and 30 s, got {value}")
        out[key] = float(value)
    return out


def perform_steps(
    sequence: tuple[str, ...] | list[str] = DEFAULT_SEQUENCE,
    gains: Gains | None = None,
    height: float = 1.65,
    mass: float = 55.0,
    sex: str = "female",
    turnout: float = DEFAULT_TURNOUT,
    durations: dict[str, float] | None = None,
    pose_overrides: dict[str, float] | None = None,
) -> Generator[tuple[float, str], None, Performance]:
    """:func:`perform` in chunks: yields ``(progress, phase text)``, returns the :class:`Performance`."""
    seq = validate_sequence(sequence)
    gains = gains or Gains()
    gains.validate()
    seconds = _validate_durations(durations)
    body = build_body(height, mass, sex)
    sim = DancerSim(body)
    start_pose = position_pose(seq[0], turnout, height)
    for name, value in (pose_overrides or {}).items():
        if name not in sim.index:
            raise DancerError(f"unknown joint {name!r} in the pose; joints are {', '.join(body.joints)}")
        if not np.isfinite(value):
            raise DancerError(f"joint {name!r} angle must be finite, got {value}")
        start_pose[name] = float(value)
    sim.set_angles(start_pose)
    sim.place()
    base = sim.targets.copy()
    pose0 = {name: float(base[i]) for i, name in enumerate(body.joints)}

    left = convex_hull(_contact_points(sim, ("foot.L", "toe.L")))
    small_polygon = 0.5 * polygon_area(left)
    toe = convex_hull(_contact_points(sim, ("toe.L",)))
    # Quiet standing in the position first: hold the COM where the pose put it.
    phases = [_Phase("position", seconds["position"], pose0, "both", sim.measure().com[:2], 0.3, 0.3)]
    pose = pose0
    for step in seq[1:]:
        if step == "weight_shift":
            phases.append(_Phase(step, seconds[step], pose, "both", left.mean(axis=0), 0.5, 2.0))
        elif step == "retire":
            pose = retire_pose(pose)
            # Halfway the working foot is lifted flat (knee twice the hip flexion, ankle
            # compensating) so no part of it pushes against the floor; then it points.
            phases.append(_Phase(step, seconds[step], pose, "L", left.mean(axis=0), 2.5, 0.5,
                                 via=retire_lift_pose(pose)))
        else:
            pose = releve_pose(pose)
            # Over the ball of the foot first, then rise: the heel leaves the floor last.
            phases.append(_Phase(step, seconds[step], pose, "L", toe.mean(axis=0), 2.2, 1.2,
                                 pose_delay=1.5, toe_control=True))

    n_ticks = int(round(sum(p.duration for p in phases) / CONTROL_DT))
    nb = sim.model.nbody
    times = np.empty(n_ticks + 1)
    com = np.empty((n_ticks + 1, 3))
    cop = np.empty((n_ticks + 1, 3))
    targets_log = np.empty((n_ticks + 1, 2))
    contact_log = np.zeros((n_ticks + 1, len(CONTACT_BODIES)), dtype=bool)
    quats = np.empty((n_ticks + 1, nb, 4))
    root_pos = np.empty((n_ticks + 1, 3))
    polygons: list[NDArray[np.float64]] = []
    phase_times: list[tuple[str, float, float]] = []

    lean = np.zeros(2)
    hip_lean = np.zeros(2)
    meas = sim.measure()
    last_cop = meas.cop[:2].copy()
    prev_pose_vec = base.copy()
    prev_target = phases[0].com_target.copy()
    fell, fall_time = False, float("inf")
    tick = 0
    phase_start = 0.0
    count = 0
    spine_weights = sim.lean_weights({"spine_x": -1.0, "spine_y": -1.0})
    hip_weights = sim.lean_weights({"thigh.L_x": -1.0, "thigh.L_y": -1.0})
    for k, phase in enumerate(phases):
        pose_vec = prev_pose_vec.copy()
        for name, value in phase.pose.items():
            pose_vec[sim.index[name]] = value
        via_vec = prev_pose_vec.copy()
        for name, value in phase.via.items():
            via_vec[sim.index[name]] = value
        if k > 0 and phase.stance != phases[k - 1].stance:
            # The leg leaving the floor keeps the lean it had, as the start of its own motion.
            dropped = sim.lean_offsets(lean, {"foot.R_x": -1.0, "foot.R_y": -1.0,
                                              "thigh.R_x": 1.0, "thigh.R_y": 1.0})
            prev_pose_vec = prev_pose_vec + dropped
            pose_vec = pose_vec + dropped * np.array([name not in phase.pose for name in body.joints])
            via_vec = via_vec + dropped * np.array([name not in phase.via for name in body.joints])
        phase_ticks = int(round(phase.duration / CONTROL_DT))
        sides = ("L", "R") if phase.stance == "both" else ("L",)
        lean_joints = {"foot.L_y": -1.0, "toe.L_y": 0.0}
        for side in sides:
            lean_joints.update({f"foot.{side}_x": -1.0, f"foot.{side}_y": -1.0,
                                f"thigh.{side}_x": 1.0, f"thigh.{side}_y": 1.0})
        lean_index, lean_weights = sim.lean_weights(lean_joints)
        foot_y, toe_y = 0, 1
        phase_times.append((phase.name if k else seq[0], phase_start, phase_start + phase.duration))
        for local in range(phase_ticks + (1 if k == len(phases) - 1 else 0)):
            t_local = local * CONTROL_DT
            t = phase_start + t_local
            # Record the state this tick sees.
            times[tick], com[tick], cop[tick] = t, meas.com, meas.cop
            contact_log[tick] = meas.in_contact
            quats[tick] = sim.data.xquat
            root_pos[tick] = sim.data.xpos[sim.root]
            polygons.append(meas.hull)
            count = tick + 1
            if sim.fallen(meas) or meas.total_normal_force <= 0.0:
                fell, fall_time = True, t
                break
            if tick == n_ticks:
                break
            a = _smooth((t_local - phase.pose_delay) / phase.pose_blend)
            b = _smooth(t_local / phase.target_blend)
            target = (1 - b) * prev_target + b * phase.com_target
            targets_log[tick] = target
            base_now = (1 - a) * prev_pose_vec + a * pose_vec
            if phase.via:
                u = (t_local - phase.pose_delay) / phase.pose_blend
                first, second = _smooth(2.0 * u), _smooth(2.0 * u - 1.0)
                base_now = (1 - first) * prev_pose_vec + first * via_vec
                base_now = (1 - second) * base_now + second * pose_vec

            c, v = meas.com[:2], meas.com_velocity[:2]
            toe_share = a if phase.toe_control else 0.0
            pivot = "toe.L" if toe_share > 0.5 else "foot.L"
            h = max(meas.com[2] - sim.data.xpos[sim.body_ids[pivot], 2], 0.2)
            desired = c + gains.cop_com_position * (c - target) + gains.cop_com_velocity * v
            if len(meas.hull) >= 3:
                desired = clamp_into_hull(desired, meas.hull, 0.1 * body.contact_radius)
            cop_velocity = (meas.cop[:2] - last_cop) / CONTROL_DT
            last_cop = meas.cop[:2].copy()
            shift = gains.cop_tracking * (meas.cop[:2] - desired) - gains.cop_damping * cop_velocity
            lean += CONTROL_DT * lean_for_shift(shift, h)

            weights = lean_weights.copy()
            weights[foot_y] = -(1.0 - toe_share)
            weights[toe_y] = -toe_share
            offsets = sim.lean_offsets(lean, (lean_index, weights))
            if phase.stance == "L" and gains.hip_com > 0 and polygon_area(meas.hull) < small_polygon:
                # Eq. 6 at the supporting hip once the polygon is small (on the toe): the body is
                # no stiff pendulum any more, so the upper body also leans over the support.
                shift = gains.hip_com * ((target - c) - 0.5 * v)
                hip_lean += CONTROL_DT * lean_for_shift(shift, 0.4 * h)
            if hip_lean.any():
                offsets += sim.lean_offsets(hip_lean, hip_weights)
            # Spine counter-rotation keeps the upper body vertical whatever the pelvis does. The
            # pelvis itself is stabilised by the hips turning with the ankles (the lean above):
            # an extra spring on its measured pitch did not reduce it and at 0.5 made it fall.
            up = sim.data.xmat[sim.root, [2, 5]]
            offsets += sim.lean_offsets(np.array([-up[1], up[0]]), spine_weights)
            sim.apply(base_now + offsets)
            meas = sim.measure()
            tick += 1
            if tick % 50 == 0:
                yield min(tick / n_ticks, 0.99), f"{phase_times[-1][0]} at {t:.1f} s"
        if fell:
            break
        prev_pose_vec = pose_vec
        prev_target = phase.com_target.copy()
        phase_start += phase.duration

    if count > 1:
        targets_log[count - 1] = targets_log[count - 2]  # the last tick records but does not control
    rotations, rest = bone_rotations(sim, quats[:count])
    result = Performance(
        seq, times[:count], com[:count], cop[:count], polygons[:count], contact_log[:count], phase_times,
        fell, fall_time, rotations, root_pos[:count], rest, targets_log[:count],
        parents={spec.name: spec.parent for spec in body.bodies})
    yield 1.0, "done"
    return result


def perform(
    sequence: tuple[str, ...] | list[str] = DEFAULT_SEQUENCE,
    gains: Gains | None = None,
    height: float = 1.65,
    mass: float = 55.0,
    sex: str = "female",
    turnout: float = DEFAULT_TURNOUT,
    durations: dict[str, float] | None = None,
    pose_overrides: dict[str, float] | None = None,
) -> Performance:
    """Perform ``sequence``: a position then a prefix of weight_shift, retire, releve.

    Ends, for the full sequence, in quiet standing on the left toe. Falling is a result
    (``fell=True``, ``fall_time``), not an exception.
    """
    steps = perform_steps(sequence, gains, height, mass, sex, turnout, durations, pose_overrides)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value
