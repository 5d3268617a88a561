"""The Blender-side skeleton and skin of the dancer, as plain arrays (no bpy).

Bones carry Rigify-like names (hips, spine, chest, neck, head, thigh.L, shin.L, foot.L, toe.L,
upper_arm.L, forearm.L, hand.L, ...); the simulated bodies use the same names, so a bone's pose
rotation is its body's rotation relative to the parent body. Head and hands have no body of their
own: they ride on the neck and forearm.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .anthropometry import LENGTHS
from .model import CONTACT_RADIUS_FRACTION, DancerBody


@dataclass(frozen=True)
class Bone:
    """Head and tail in the rest pose (metres, z up), parent bone name, radius of its skin."""

    name: str
    head: tuple[float, float, float]
    tail: tuple[float, float, float]
    parent: str | None
    radius: float
    tail_radius: float
    flatten: float = 1.0
    tip: bool = False


def skeleton(body: DancerBody) -> list[Bone]:
    """Bones for ``body``, parents before children."""
    h = body.height
    f = {k: v * h for k, v in LENGTHS.items()}
    r = CONTACT_RADIUS_FRACTION * h
    o = {spec.name: np.array(spec.origin) for spec in body.bodies}

    def p(v) -> tuple[float, float, float]:
        return tuple(float(x) for x in v)  # type: ignore[return-value]

    bones = [
        Bone("hips", p(o["hips"]), p(o["spine"]), None, 0.090 * h, 0.080 * h, 0.65),
        Bone("spine", p(o["spine"]), p(o["chest"]), "hips", 0.075 * h, 0.080 * h, 0.65),
        Bone("chest", p(o["chest"]), p(o["neck"]), "spine", 0.085 * h, 0.080 * h, 0.62),
        Bone("neck", p(o["neck"]), p(o["neck"] + [0, 0, 0.05 * h]), "chest", 0.028 * h, 0.026 * h),
        Bone("head", p(o["neck"] + [0, 0, 0.05 * h]), (0.0, 0.0, h), "neck", 0.055 * h, 0.045 * h, 0.9,
             tip=True),
    ]
    for side in ("L", "R"):
        shoulder, elbow = o[f"upper_arm.{side}"], o[f"forearm.{side}"]
        wrist = elbow - [0, 0, f["forearm"]]
        fingertips = wrist - [0, 0, f["hand"]]
        bones += [
            Bone(f"upper_arm.{side}", p(shoulder), p(elbow), "chest", 0.027 * h, 0.022 * h),
            Bone(f"forearm.{side}", p(elbow), p(wrist), f"upper_arm.{side}", 0.021 * h, 0.016 * h),
            Bone(f"hand.{side}", p(wrist), p(fingertips), f"forearm.{side}", 0.016 * h, 0.010 * h, 0.5,
                 tip=True),
        ]
    for side in ("L", "R"):
        hip, knee, ankle, ball = (o[f"{n}.{side}"] for n in ("thigh", "shin", "foot", "toe"))
        toe_tip = np.array([f["toe_ahead_of_ankle"], ball[1], r])
        bones += [
            Bone(f"thigh.{side}", p(hip), p(knee), "hips", 0.052 * h, 0.034 * h),
            Bone(f"shin.{side}", p(knee), p(ankle), f"thigh.{side}", 0.032 * h, 0.020 * h),
            Bone(f"foot.{side}", p(ankle), p(ball), f"shin.{side}", 0.020 * h, 0.022 * h, 0.6),
            Bone(f"toe.{side}", p(ball), p(toe_tip), f"foot.{side}", 0.018 * h, 0.010 * h, 0.5, tip=True),
        ]
    return bones


def _tube(bone: Bone, sides: int, overlap: float) -> tuple[NDArray[np.float64], list[list[int]]]:
    head, tail = np.array(bone.head), np.array(bone.tail)
    axis = tail - head
    length = float(np.linalg.norm(axis))
    axis = axis / length
    # Flattened sections are wide across the body (y) and thin front to back (x).
    helper = np.array([0.0, 1.0, 0.0]) if abs(axis[1]) < 0.9 else np.array([1.0, 0.0, 0.0])
    wide = helper - axis * (helper @ axis)
    wide /= np.linalg.norm(wide)
    thin = np.cross(axis, wide)
    angles = np.linspace(0.0, 2.0 * np.pi, sides, endpoint=False)
    ring = np.cos(angles)[:, None] * wide + bone.flatten * np.sin(angles)[:, None] * thin
    start = head - axis * overlap * bone.radius
    # A tip (head, hand, toe) ends flat at the bone's tail: that is where the body ends.
    end = tail if bone.tip else tail + axis * overlap * bone.tail_radius
    cap = 0.0 if bone.tip else 0.5 * bone.tail_radius
    verts = np.vstack([start + bone.radius * ring, end + bone.tail_radius * ring,
                       start - axis * 0.5 * bone.radius, end + axis * cap])
    faces: list[list[int]] = []
    for i in range(sides):
        j = (i + 1) % sides
        faces.append([i, j, sides + j, sides + i])
        faces.append([2 * sides, j, i])
        faces.append([2 * sides + 1, sides + i, sides + j])
    return verts, faces


def body_mesh(
    bones: list[Bone], sides: int = 10
) -> tuple[NDArray[np.float64], list[list[int]], dict[str, NDArray[np.intp]]]:
    """A closed tube per bone, ends overlapping into the neighbours so bends show no gaps.

    Returns vertices, faces and, per bone, the indices of its vertices (rigid skin: weight 1).
    """
    vertices: list[NDArray[np.float64]] = []
    faces: list[list[int]] = []
    groups: dict[str, NDArray[np.intp]] = {}
    offset = 0
    for bone in bones:
        verts, tube_faces = _tube(bone, sides, 0.6)
        vertices.append(verts)
        faces.extend([[offset + i for i in face] for face in tube_faces])
        groups[bone.name] = np.arange(offset, offset + len(verts))
        offset += len(verts)
    return np.vstack(vertices), faces, groups


def pose_basis(rotations: NDArray[np.float64], rest_rotation: NDArray[np.float64]) -> NDArray[np.float64]:
    """Pose-bone quaternions (w first) from world-frame relative rotations (T, 4).

    A bone whose rest orientation in the armature is ``rest_rotation`` (3x3) turns by
    ``B^T R B`` in its own frame when its body turns by ``R`` relative to the parent.
    """
    b = np.asarray(rest_rotation, dtype=np.float64)
    w, v = rotations[:, :1], rotations[:, 1:]
    # Conjugating a rotation keeps the angle and maps the axis by B^T.
    return np.hstack([w, v @ b])
