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

    @property
    def wings(self) -> int:
        return 2 if self.asymmetric else 1

    @property
    def network_inputs(self) -> int:
        return 12 + 3 * self.wings

    @property
    def network_outputs(self) -> int:
        return 3 * self.wings

    @property
    def total_mass(self) -> float:
        return self.body_mass + 2.0 * self.wing_mass

    def wing_points(self) -> np.ndarray:
        """The three points defining the right wing plane in its hinge frame: hinge, tip, trailing root."""
        return np.array([[0.0, 0.0, 0.0], [self.wing_span, 0.0, 0.0], [0.0, -self.wing_chord, 0.0]])

    def strip_centres(self) -> np.ndarray:
        """(S, 3) centres of the spanwise strips of the right wing in its hinge frame."""
        x = (np.arange(self.strips) + 0.5) * self.wing_span / self.strips
        return np.stack([x, np.full_like(x, -0.5 * self.wing_chord), np.zeros_like(x)], axis=1)

    def strip_area(self) -> float:
        return self.wing_span * self.wing_chord / self.strips

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
        mid = np.array(self.hinge) + np.array([0.5 * self.wing_span, -0.5 * self.wing_chord, 0.0])
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
    """The wing plate in its hinge frame, one quad per simulated strip (mirrored for the left wing)."""
    x = np.linspace(0.0, model.wing_span, model.strips + 1)
    leading = np.stack([x, np.zeros_like(x), np.zeros_like(x)], axis=1)
    trailing = leading + np.array([0.0, -model.wing_chord, 0.0])
    vertices = np.concatenate([leading, trailing])
    n = model.strips + 1
    faces = [(i, i + 1, n + i + 1, n + i) for i in range(model.strips)]
    if left:
        vertices = vertices * MIRROR_X
        faces = [tuple(reversed(face)) for face in faces]
    return vertices, faces


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
