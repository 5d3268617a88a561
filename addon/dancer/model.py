"""The dancer as a MuJoCo model, generated in code from height, mass and sex.

Every body frame is aligned with the world in the rest pose (all joint angles zero, standing
straight, arms hanging) and sits at its proximal joint, so a body's rotation relative to its parent
is directly the pose rotation of the armature bone of the same name.
Axes: x forward, y to the dancer's left, z up. Hinges: x = roll / abduction, y = pitch / flexion,
z = twist. Positive pitch bends a child's "down" end backwards (knee flexion, ankle
plantarflexion, toes curling down).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .anthropometry import LENGTHS, TOE_MASS_SHARE, DancerError, segment_table

GRAVITY = 9.81
CONTACT_RADIUS_FRACTION = 0.0075


@dataclass(frozen=True)
class BodySpec:
    """One rigid segment: rest position of its joint, inertial data and its hinges."""

    name: str
    parent: str | None
    origin: tuple[float, float, float]
    mass: float
    com: tuple[float, float, float]
    inertia: tuple[float, float, float]
    hinges: tuple[str, ...] = ()
    stiffness: float = 0.0
    contact_points: tuple[tuple[float, float, float], ...] = ()
    table_segment: str = ""


@dataclass(frozen=True)
class DancerBody:
    """The generated body: segments, joint names, MJCF text and the numbers tests check."""

    height: float
    mass: float
    sex: str
    bodies: tuple[BodySpec, ...]
    joints: tuple[str, ...]
    contact_radius: float
    mjcf: str = field(repr=False)

    def body(self, name: str) -> BodySpec:
        for spec in self.bodies:
            if spec.name == name:
                return spec
        raise KeyError(name)


def _validate(height: float, mass: float) -> None:
    # Below 1.1 m the 100 Hz controller is too slow for the faster body and the relevé fails.
    if not np.isfinite(height) or not 1.1 <= height <= 2.3:
        raise DancerError(f"height must be between 1.1 and 2.3 m, got {height}")
    if not np.isfinite(mass) or not 25.0 <= mass <= 150.0:
        raise DancerError(f"mass must be between 25 and 150 kg, got {mass}")


def _limb_inertia(mass: float, length: float, rg: float, long_axis: int) -> tuple[float, float, float]:
    transverse = mass * (rg * length) ** 2
    inertia = [transverse, transverse, transverse]
    # Long bones are slender: about their own axis the radius of gyration is a quarter as large.
    inertia[long_axis] = transverse / 16.0
    return tuple(inertia)  # type: ignore[return-value]


def _box_inertia(mass: float, size: tuple[float, float, float]) -> tuple[float, float, float]:
    a, b, c = size
    return (mass * (b * b + c * c) / 12.0, mass * (a * a + c * c) / 12.0, mass * (a * a + b * b) / 12.0)


def build_body(height: float = 1.65, mass: float = 55.0, sex: str = "female") -> DancerBody:
    """Segments of a ``height`` m, ``mass`` kg dancer from the anthropometric table for ``sex``."""
    _validate(height, mass)
    table = segment_table(sex)
    h = height
    frac = {k: v * h for k, v in LENGTHS.items()}
    r = CONTACT_RADIUS_FRACTION * h
    # Stiffness unit: the gravitational toppling moment of the whole body over its height.
    unit = mass * GRAVITY * h
    bodies: list[BodySpec] = []

    hip_z, lumbar_z, thoracic_z = frac["hip_height"], frac["lumbar_height"], frac["thoracic_height"]
    shoulder_z, ear_z = frac["shoulder_height"], frac["ear_height"]

    def seg(name: str) -> tuple[float, float, float]:
        row = table[name]
        return row.mass * mass, row.com_from_proximal, row.radius_of_gyration

    m, c, _ = seg("pelvis")
    bodies.append(BodySpec(
        "hips", None, (0.0, 0.0, hip_z), m, (0.0, 0.0, lumbar_z - c * (lumbar_z - hip_z)),
        _box_inertia(m, (0.12 * h, 0.19 * h, lumbar_z - hip_z + 0.05 * h)), table_segment="pelvis"))
    m, c, _ = seg("abdomen")
    bodies.append(BodySpec(
        "spine", "hips", (0.0, 0.0, lumbar_z), m, (0.0, 0.0, thoracic_z - c * (thoracic_z - lumbar_z)),
        _box_inertia(m, (0.11 * h, 0.17 * h, thoracic_z - lumbar_z)), ("x", "y", "z"), 1.2 * unit,
        table_segment="abdomen"))
    m, c, _ = seg("thorax")
    bodies.append(BodySpec(
        "chest", "spine", (0.0, 0.0, thoracic_z), m, (0.0, 0.0, shoulder_z - c * (shoulder_z - thoracic_z)),
        _box_inertia(m, (0.12 * h, 0.19 * h, shoulder_z - thoracic_z)), ("x", "y", "z"), 1.2 * unit,
        table_segment="thorax"))
    m, c, rg = seg("head_neck")
    neck_len = ear_z - shoulder_z
    bodies.append(BodySpec(
        "neck", "chest", (0.0, 0.0, shoulder_z), m, (0.0, 0.0, shoulder_z + c * neck_len),
        _limb_inertia(m, neck_len, rg, 2), ("x", "y"), 0.25 * unit, table_segment="head_neck"))

    for side, sign in (("L", 1.0), ("R", -1.0)):
        sy = sign * frac["shoulder_half_width"]
        m, c, rg = seg("upper_arm")
        ua = frac["upper_arm"]
        bodies.append(BodySpec(
            f"upper_arm.{side}", "chest", (0.0, sy, shoulder_z), m, (0.0, sy, shoulder_z - c * ua),
            _limb_inertia(m, ua, rg, 2), ("x", "y"), 0.15 * unit, table_segment="upper_arm"))
        # Forearm and hand are one rigid body: the hand is held, not animated by the simulation.
        m_f, c_f, rg_f = seg("forearm")
        m_h, c_h, rg_h = seg("hand")
        fa, ha = frac["forearm"], frac["hand"]
        elbow_z = shoulder_z - ua
        com_f = elbow_z - c_f * fa
        com_h = elbow_z - fa - c_h * ha
        com_z = (m_f * com_f + m_h * com_h) / (m_f + m_h)
        i_f = np.array(_limb_inertia(m_f, fa, rg_f, 2))
        i_h = np.array(_limb_inertia(m_h, ha, rg_h, 2))
        parallel = np.array([1.0, 1.0, 0.0])
        i_total = i_f + i_h + parallel * (m_f * (com_f - com_z) ** 2 + m_h * (com_h - com_z) ** 2)
        bodies.append(BodySpec(
            f"forearm.{side}", f"upper_arm.{side}", (0.0, sy, elbow_z), m_f + m_h, (0.0, sy, com_z),
            tuple(i_total), ("y",), 0.08 * unit, table_segment="forearm+hand"))

        hy = sign * frac["hip_half_width"]
        m, c, rg = seg("thigh")
        th = frac["thigh"]
        bodies.append(BodySpec(
            f"thigh.{side}", "hips", (0.0, hy, hip_z), m, (0.0, hy, hip_z - c * th),
            _limb_inertia(m, th, rg, 2), ("x", "y", "z"), 1.6 * unit, table_segment="thigh"))
        m, c, rg = seg("shank")
        sh = frac["shank"]
        knee_z = hip_z - th
        bodies.append(BodySpec(
            f"shin.{side}", f"thigh.{side}", (0.0, hy, knee_z), m, (0.0, hy, knee_z - c * sh),
            _limb_inertia(m, sh, rg, 2), ("y",), 1.6 * unit, table_segment="shank"))
        m, c, rg = seg("foot")
        ankle_z = frac["ankle_height"]
        heel_x, ball_x = -frac["heel_behind_ankle"], frac["ball_ahead_of_ankle"]
        toe_x = frac["toe_ahead_of_ankle"]
        fw = frac["foot_half_width"]
        m_foot, m_toe = m * (1.0 - TOE_MASS_SHARE), m * TOE_MASS_SHARE
        foot_len = ball_x - heel_x
        bodies.append(BodySpec(
            f"foot.{side}", f"shin.{side}", (0.0, hy, ankle_z), m_foot,
            (heel_x + 0.5 * foot_len, hy, 0.5 * ankle_z), _limb_inertia(m_foot, foot_len, rg, 0),
            ("y", "x"), 1.6 * unit,
            contact_points=(
                (heel_x + r, hy + 0.65 * fw, r), (heel_x + r, hy - 0.65 * fw, r),
                (ball_x - 0.012 * h, hy + fw, r), (ball_x - 0.012 * h, hy - fw, r)),
            table_segment="foot"))
        toe_len = toe_x - ball_x
        bodies.append(BodySpec(
            f"toe.{side}", f"foot.{side}", (ball_x, hy, r), m_toe, (ball_x + 0.4 * toe_len, hy, r),
            _box_inertia(m_toe, (toe_len, 2 * fw, 2 * r)), ("y",), 2.0 * unit,
            contact_points=(
                (ball_x + 0.004 * h, hy + fw, r), (ball_x + 0.004 * h, hy - fw, r),
                (toe_x - 0.5 * r, hy + 0.7 * fw, r), (toe_x - 0.5 * r, hy - 0.7 * fw, r)),
            table_segment="foot"))

    joints = tuple(f"{b.name}_{axis}" for b in bodies for axis in b.hinges)
    # Joint damping and armature regularise the solver; scaled with mass and height so a heavier or
    # taller dancer is the same dynamical system (everything else already scales).
    scale = (mass / 55.0) * (height / 1.65) ** 2
    return DancerBody(height, mass, sex, tuple(bodies), joints, r, _mjcf(bodies, r, scale))


_AXES = {"x": "1 0 0", "y": "0 1 0", "z": "0 0 1"}


def _fmt(values) -> str:
    return " ".join(f"{float(v):.6g}" for v in values)


def _mjcf(bodies: list[BodySpec], radius: float, scale: float) -> str:
    children: dict[str | None, list[BodySpec]] = {}
    for spec in bodies:
        children.setdefault(spec.parent, []).append(spec)
    origin = {spec.name: np.array(spec.origin) for spec in bodies}
    lines: list[str] = []

    def emit(spec: BodySpec, depth: int) -> None:
        pad = "  " * depth
        rel = origin[spec.name] - (origin[spec.parent] if spec.parent else 0.0)
        lines.append(f'{pad}<body name="{spec.name}" pos="{_fmt(rel)}">')
        if spec.parent is None:
            lines.append(f'{pad}  <freejoint name="root"/>')
        for axis in spec.hinges:
            lines.append(f'{pad}  <joint name="{spec.name}_{axis}" axis="{_AXES[axis]}"/>')
        com = np.array(spec.com) - origin[spec.name]
        lines.append(f'{pad}  <inertial pos="{_fmt(com)}" mass="{spec.mass:.6g}" '
                     f'diaginertia="{_fmt(spec.inertia)}"/>')
        for i, point in enumerate(spec.contact_points):
            local = np.array(point) - origin[spec.name]
            lines.append(f'{pad}  <geom name="{spec.name}_contact{i}" class="contact" pos="{_fmt(local)}"/>')
        for child in children.get(spec.name, []):
            emit(child, depth + 1)
        lines.append(f"{pad}</body>")

    for root in children[None]:
        emit(root, 2)
    actuators = [
        f'    <position name="{spec.name}_{axis}" joint="{spec.name}_{axis}" kp="{spec.stiffness:.6g}" '
        f'kv="{0.06 * spec.stiffness:.6g}"/>'
        for spec in bodies for axis in spec.hinges]
    return "\n".join([
        '<mujoco model="procanim_dancer">',
        '  <option timestep="0.00333333" integrator="implicitfast"/>',
        "  <default>",
        f'    <joint damping="{0.5 * scale:.6g}" armature="{0.02 * scale:.6g}"/>',
        '    <geom contype="2" conaffinity="0" condim="3" friction="1.0 0.02 0.002" '
        'solref="0.01 1" solimp="0.95 0.99 0.001"/>',
        f'    <default class="contact"><geom type="sphere" size="{radius:.6g}" mass="0"/></default>',
        "  </default>",
        "  <worldbody>",
        '    <geom name="floor" type="plane" size="5 5 0.1" contype="0" conaffinity="2"/>',
        *lines,
        "  </worldbody>",
        "  <actuator>",
        *actuators,
        "  </actuator>",
        "</mujoco>",
    ])
