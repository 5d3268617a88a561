"""Fly geometry and kinematics (paper section 2.1), vectorised over a population.

Frames: body x = right (span direction of the right wing), y = forward, z = up; the body's origin
is its centre of mass. A world point is M p with M = T x R (translation after rotation). Each wing
is a rigid plane through three points (hinge, tip, trailing corner) rotated about its hinge by
three angles: flap (tip up), sweep (tip forward) and pitch (about the leading edge). The left wing
is the mirror image (x -> -x) of a right wing at its own angles, so equal angles give an exactly
symmetric fly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import quaternions
from .errors import FlyError

ANGLE_NAMES: tuple[str, ...] = ("flap", "sweep", "pitch")
MIRROR_X = np.array([-1.0, 1.0, 1.0])
CONTROL_MODES: tuple[str, ...] = ("direct", "stroke")  # paper: network sets wing angles / stroke generator
SIZES: tuple[str, ...] = ("fruit_fly", "cartoon")
PLANFORMS: tuple[str, ...] = ("rectangle", "ellipse")


@dataclass(frozen=True)
class FlyModel:
    """Physical description of the simulated fly (SI units).

    A "cartoon fly" a few times larger and slower than a real Drosophila: with a 1 ms step and a
    controller acting every 10 ms a wing beat needs at least 20 ms, so the fly is scaled until
    such beats can carry it (see physics notes, time-step warning).
    """

    body_size: tuple[float, float, float] = (0.008, 0.02, 0.008)  # width x, length y, height z
    body_mass: float = 4.0e-5
    wing_mass: float = 2.0e-6  # per wing, folded into the body inertia at rest pose
    hinge: tuple[float, float, float] = (0.004, 0.005, 0.003)  # right hinge (mid-chord over the COM)
    wing_span: float = 0.025
    wing_chord: float = 0.010
    strips: int = 4
    max_angle: tuple[float, float, float] = (1.0, 0.8, 1.5)  # flap, sweep, pitch limits (rad)
    max_speed: tuple[float, float, float] = (200.0, 120.0, 400.0)  # angular speed limits (rad/s)
    air_density: float = 1.2
    gravity: float = 9.81
    wing_drag_max: float = 2.0  # C_D of a plate moving along its normal
    body_drag: float = 1.0
    aero: str = "drag"  # "drag" (paper) or "quasi_steady" (Dickinson 1999)
    asymmetric: bool = False
    position_scale: float = 0.5  # m; positions enter the network as tanh(p / scale)
    velocity_scale: float = 1.0
    spin_scale: float = 20.0
    blowup_speed: float = 50.0  # m/s; beyond this (or non-finite) the fly is retired
    blowup_spin: float = 5000.0  # rad/s
    control: str = "direct"  # "direct" (paper: next wing angles) or "stroke" (pattern generator)
    size: str = "cartoon"  # preset name this model was built from (recorded in genome files)
    planform: str = "rectangle"  # "ellipse": chord(r) of a half ellipse, wing_chord its largest chord
    time_step: float = 0.001  # s: the default physics step (stroke mode must resolve the wing beat)
    # stroke generator ranges (network outputs -1..1 map linearly onto them), per wing
    frequency_range: tuple[float, float] = (8.0, 30.0)  # Hz
    amplitude_range: tuple[float, float] = (1.0, 2.9)  # rad, peak to peak stroke angle
    mean_stroke_range: tuple[float, float] = (-0.5, 0.5)  # rad, stroke centre (forward positive)
    mid_pitch_range: tuple[float, float] = (0.3, 1.3)  # rad, angle of attack at mid-stroke
    rotation_timing_range: tuple[float, float] = (-0.8, 0.8)  # rad of phase, advanced rotation positive
    stroke_deviation: float = 0.1  # rad, figure-eight deviation out of the stroke plane
    rotation_sharpness: float = 3.0  # how square the pitch wave is (tanh gain; 0 would be a sine)
    parameter_lag: float = 0.002  # s, first-order lag of the stroke parameters behind the network
    rotational_lift: bool = True  # Sane & Dickinson 2002 rotational circulation in quasi-steady aero

    def __post_init__(self) -> None:
        positive = {
            "body_mass": self.body_mass,
            "wing_span": self.wing_span,
            "wing_chord": self.wing_chord,
            "air_density": self.air_density + 1e-300,
            "wing_drag_max": self.wing_drag_max + 1e-300,
        }
        for name, value in positive.items():
            if not np.isfinite(value) or value <= 0:
                raise FlyError(f"Fly model {name} must be positive, got {value}")
        if min(self.body_size) <= 0 or self.strips < 1:
            raise FlyError("Fly body size must be positive and wings need at least one strip")
        if self.aero not in ("drag", "quasi_steady"):
            raise FlyError(f"Unknown aerodynamics '{self.aero}': use 'drag' or 'quasi_steady'")
        if min(self.max_angle) <= 0 or min(self.max_speed) <= 0:
            raise FlyError("Wing angle and speed limits must be positive")
        if self.control not in CONTROL_MODES:
            raise FlyError(f"Unknown control mode '{self.control}': use one of {', '.join(CONTROL_MODES)}")
        if self.planform not in PLANFORMS:
            raise FlyError(f"Unknown wing planform '{self.planform}': use one of {', '.join(PLANFORMS)}")
        if not (np.isfinite(self.time_step) and 0 < self.time_step <= 0.01):
            raise FlyError(f"Fly time step must be in (0, 10 ms], got {self.time_step}")
        low, high = self.frequency_range
        if not (np.isfinite(low) and np.isfinite(high) and 0 < low < high <= 1000):
            raise FlyError(f"Wing-beat frequency range must be 0 < low < high <= 1000 Hz, got {low}..{high}")

    @classmethod
    def fruit_fly(cls, **changes) -> FlyModel:
        """Drosophila at real scale (about 1 mg, 2.5 mm wings, wing beats near 220 Hz).

        Numbers from the physics notes (section 3.2): body 1.0 mg, each wing about 2 ug with an
        elliptic planform of 2.0 mm^2; the stroke generator beats 150-250 Hz, so the physics step
        is 0.2 ms (about 23 samples per beat at 220 Hz, 20 at 250 Hz; halving it changes the mean
        lift over a beat by well under 1%, pinned by the convergence test).
        """
        settings = dict(
            body_size=(0.001, 0.0025, 0.001),
            body_mass=1.0e-6,
            wing_mass=2.0e-9,
            hinge=(0.0005, 0.0, 0.0004),  # wing bases right above the centre of mass
            wing_span=0.0025,
            wing_chord=0.00102,  # largest chord of the half ellipse: area pi/4 * 2.5 * 1.02 = 2.0 mm^2
            strips=6,
            planform="ellipse",
            aero="quasi_steady",
            control="stroke",
            size="fruit_fly",
            time_step=0.0002,
            frequency_range=(150.0, 250.0),
            # centred on hover: 200 Hz with a 2.3 rad (132 degree) stroke lifts the fly's weight,
            # so a network whose outputs are all zero starts near a hover
            amplitude_range=(1.6, 3.0),
            position_scale=0.05,
            velocity_scale=0.2,
            spin_scale=20.0,
            blowup_speed=20.0,
            blowup_spin=3000.0,
        )
        settings.update(changes)
        return cls(**settings)

    @classmethod
    def cartoon(cls, **changes) -> FlyModel:
        """The paper-era "cartoon fly" (2 cm body, 2.5 cm wings), in any control mode."""
        return cls(**changes)

    @classmethod
    def preset(cls, size: str, **changes) -> FlyModel:
        if size not in SIZES:
            raise FlyError(f"Unknown fly size '{size}': use one of {', '.join(SIZES)}")
        return cls.fruit_fly(**changes) if size == "fruit_fly" else cls.cartoon(**changes)

    @property
    def wings(self) -> int:
        return 2 if self.asymmetric else 1

    @property
    def controls_per_wing(self) -> int:
        """Network outputs per wing: 3 wing angles (direct) or 5 stroke parameters."""
        return 5 if self.control == "stroke" else 3

    @property
    def network_inputs(self) -> int:
        return 12 + self.controls_per_wing * self.wings

    @property
    def network_outputs(self) -> int:
        return self.controls_per_wing * self.wings

    @property
    def total_mass(self) -> float:
        return self.body_mass + 2.0 * self.wing_mass

    def wing_points(self) -> np.ndarray:
        """The three points defining the right wing plane in its hinge frame: hinge, tip, trailing root."""
        return np.array([[0.0, 0.0, 0.0], [self.wing_span, 0.0, 0.0], [0.0, -self.wing_chord, 0.0]])

    def strip_chords(self) -> np.ndarray:
        """(S,) chord of each spanwise strip at its mid-span (the leading edge is the straight hinge line)."""
        if self.planform == "rectangle":
            return np.full(self.strips, self.wing_chord)
        return planform_chord(self, self.strip_radii())

    def strip_radii(self) -> np.ndarray:
        return (np.arange(self.strips) + 0.5) * self.wing_span / self.strips

    def strip_centres(self) -> np.ndarray:
        """(S, 3) centres of the spanwise strips of the right wing in its hinge frame."""
        x = self.strip_radii()
        return np.stack([x, -0.5 * self.strip_chords(), np.zeros_like(x)], axis=1)

    def strip_areas(self) -> np.ndarray:
        return self.strip_chords() * (self.wing_span / self.strips)

    def strip_area(self) -> float:
        """Area of one strip of a rectangular wing (the mean strip area otherwise)."""
        if self.planform == "rectangle":
            return self.wing_span * self.wing_chord / self.strips
        return float(self.strip_areas().mean())

    def wing_area(self) -> float:
        return float(self.strip_areas().sum())

    def body_corners(self) -> np.ndarray:
        """(8, 3) box corners in the body frame, right half (x > 0) first then its mirror."""
        hx, hy, hz = (0.5 * s for s in self.body_size)
        right = np.array([[hx, sy * hy, sz * hz] for sy in (-1, 1) for sz in (-1, 1)])
        return np.concatenate([right, right * MIRROR_X])

    def body_face_areas(self) -> np.ndarray:
        """Areas of the faces normal to the body x, y and z axes."""
        lx, ly, lz = self.body_size
        return np.array([ly * lz, lx * lz, lx * ly])

    def inertia(self) -> np.ndarray:
        """Body-frame inertia tensor (box plus wings as point masses at mid span)."""
        lx, ly, lz = self.body_size
        box = self.body_mass / 12.0 * np.array([ly**2 + lz**2, lx**2 + lz**2, lx**2 + ly**2])
        chord = self.wing_chord if self.planform == "rectangle" else float(self.strip_chords().mean())
        mid = np.array(self.hinge) + np.array([0.5 * self.wing_span, -0.5 * chord, 0.0])
        wings = (
            2.0
            * self.wing_mass
            * np.array([mid[1] ** 2 + mid[2] ** 2, mid[0] ** 2 + mid[2] ** 2, mid[0] ** 2 + mid[1] ** 2])
        )
        return np.diag(box + wings)


def rotation_x(angle: np.ndarray) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    o, z = np.ones_like(c), np.zeros_like(c)
    return np.stack([np.stack([o, z, z], -1), np.stack([z, c, -s], -1), np.stack([z, s, c], -1)], -2)


def rotation_y(angle: np.ndarray) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    o, z = np.ones_like(c), np.zeros_like(c)
    return np.stack([np.stack([c, z, s], -1), np.stack([z, o, z], -1), np.stack([-s, z, c], -1)], -2)


def rotation_z(angle: np.ndarray) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    o, z = np.ones_like(c), np.zeros_like(c)
    return np.stack([np.stack([c, -s, z], -1), np.stack([s, c, z], -1), np.stack([z, z, o], -1)], -2)


def wing_rotation(angles: np.ndarray) -> np.ndarray:
    """Right-wing rotation about its hinge from (..., 3) angles (flap, sweep, pitch).

    R = Rz(sweep) Ry(-flap) Rx(pitch).

    Flap raises the tip, sweep moves it forward, pitch turns the wing about its leading edge.
    """
    return rotation_z(angles[..., 1]) @ rotation_y(-angles[..., 0]) @ rotation_x(angles[..., 2])


def homogeneous(rotation: np.ndarray, translation: np.ndarray) -> np.ndarray:
    """M = T x R as (..., 4, 4) homogeneous matrices."""
    lead = rotation.shape[:-2]
    matrix = np.zeros(lead + (4, 4))
    matrix[..., :3, :3] = rotation
    matrix[..., :3, 3] = translation
    matrix[..., 3, 3] = 1.0
    return matrix


def transform_points(matrix: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Apply (..., 4, 4) homogeneous matrices to (K, 3) local points -> (..., K, 3)."""
    return np.einsum("...ij,kj->...ki", matrix[..., :3, :3], points) + matrix[..., None, :3, 3]


def wing_to_body(model: FlyModel, angles: np.ndarray, left: bool) -> np.ndarray:
    """(..., 4, 4) transform of a wing's hinge frame into the body frame (left wings mirror x)."""
    hinge = np.array(model.hinge)
    matrix = homogeneous(wing_rotation(angles), np.broadcast_to(hinge, angles.shape))
    if left:
        matrix = matrix * np.array([-1.0, 1.0, 1.0, 1.0])[:, None]
    return matrix


def rotation_vectors(matrices: np.ndarray) -> np.ndarray:
    """(..., 3, 3) rotation matrices -> (..., 3) axis * angle (the network's rotation input)."""
    m = matrices
    skew = np.stack(
        [m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0], m[..., 1, 0] - m[..., 0, 1]], -1
    )
    sine2 = np.linalg.norm(skew, axis=-1)
    cosine = m[..., 0, 0] + m[..., 1, 1] + m[..., 2, 2] - 1.0
    angle = np.arctan2(sine2, cosine)
    factor = np.where(sine2 > 1e-12, angle / np.maximum(sine2, 1e-300), 0.5)
    return skew * factor[..., None]


def body_mesh(model: FlyModel) -> tuple[np.ndarray, list[tuple[int, int, int, int]]]:
    """The body box (the same 8 corners the simulation drags through the air) and its 6 faces."""
    hx, hy, hz = (0.5 * s for s in model.body_size)
    vertices = np.array([[sx * hx, sy * hy, sz * hz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
    faces = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    return vertices, faces


def wing_mesh(model: FlyModel, left: bool = False) -> tuple[np.ndarray, list[tuple[int, int, int, int]]]:
    """The wing plate in its hinge frame, one quad per simulated strip (mirrored for the left wing).

    The trailing edge follows the planform whose chord the simulated strips sample at mid-span.
    """
    x = np.linspace(0.0, model.wing_span, model.strips + 1)
    leading = np.stack([x, np.zeros_like(x), np.zeros_like(x)], axis=1)
    trailing = leading.copy()
    if model.planform == "rectangle":
        trailing[:, 1] = -model.wing_chord
    else:
        trailing[:, 1] = -planform_chord(model, x)
    vertices = np.concatenate([leading, trailing])
    n = model.strips + 1
    faces = [(i, i + 1, n + i + 1, n + i) for i in range(model.strips)]
    if left:
        vertices = vertices * MIRROR_X
        faces = [tuple(reversed(face)) for face in faces]
    return vertices, faces


def planform_chord(model: FlyModel, radius: np.ndarray) -> np.ndarray:
    """Chord of the wing outline at spanwise ``radius`` (the strips sample it at their mid-span)."""
    if model.planform == "rectangle":
        return np.full_like(np.asarray(radius, dtype=np.float64), model.wing_chord)
    fraction = np.clip(2.0 * np.asarray(radius, dtype=np.float64) / model.wing_span - 1.0, -1.0, 1.0)
    return model.wing_chord * np.sqrt(1.0 - fraction**2)


def wing_quaternions(model: FlyModel, angles: np.ndarray, left: bool = False) -> np.ndarray:
    """(..., 4) rotation of a wing object about its hinge, in the body frame, from (..., 3) angles.

    The left wing's rotation is the mirror conjugate M R M of the right formula, i.e. the same
    formula with flap and sweep negated, so its mirrored mesh follows the simulated plate.
    """
    signed = np.asarray(angles, dtype=np.float64) * (np.array([-1.0, -1.0, 1.0]) if left else 1.0)
    return quaternions.from_matrix(wing_rotation(signed))


def yaw_quaternion(yaw: float) -> np.ndarray:
    """Rotation by ``yaw`` about the world z axis, w first."""
    return quaternions.from_axis_angle((0.0, 0.0, 1.0), yaw)


def rotate_about_z(points: np.ndarray, centre: np.ndarray, yaw: float) -> np.ndarray:
    """(..., 3) points turned by ``yaw`` about the vertical line through ``centre``."""
    c, s = np.cos(yaw), np.sin(yaw)
    offset = points - centre
    rotated = np.stack(
        [c * offset[..., 0] - s * offset[..., 1], s * offset[..., 0] + c * offset[..., 1], offset[..., 2]],
        axis=-1,
    )
    return rotated + centre
