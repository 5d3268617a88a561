"""Measure a humanoid rig from its rest pose: where it stands and faces, its units and proportions.

Everything here is in world space (the caller applies the armature object's matrix), in the rig's
own units; ``units_per_metre`` converts. The *plan frame* is the juggling planner's juggler-local
frame in metres: origin on the floor under the middle of the shoulders, +X the rig's left,
-Y its forward, +Z up.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..juggling.body import Body
from .bone_map import SIDES, BoneMap, side_role
from .errors import RigError

Array = NDArray[np.float64]

UP = np.array([0.0, 0.0, 1.0])
#: How far the palm point (where a held prop sits) is off the palm, metres: about a ball's radius.
PALM_OFFSET = 0.03
#: Where along the hand bone, from the wrist, the palm's centre is.
PALM_ALONG = 0.5
#: The default juggler's arm (upper arm + forearm to the palm) and how far below its shoulders and
#: in front of them it juggles; a rig's pattern is scaled by its arm length against these.
_DEFAULT = Body()
_DEFAULT_ARM = _DEFAULT.upper_arm + _DEFAULT.forearm
#: Steepest lean of the rig's spine from world +Z that still counts as standing.
MAX_LEAN_DEGREES = 35.0


@dataclass(frozen=True)
class BoneRest:
    """One bone at rest in world space: head, tail and its orthonormal rotation (columns X, Y, Z)."""

    head: Array
    tail: Array
    rotation: Array

    @staticmethod
    def of(head: ArrayLike, tail: ArrayLike, rotation: ArrayLike) -> BoneRest:
        r = np.asarray(rotation, dtype=np.float64)
        # Object scale leaks into bone matrices; keep only the rotation.
        r = r / np.linalg.norm(r, axis=0, keepdims=True)
        return BoneRest(np.asarray(head, dtype=np.float64), np.asarray(tail, dtype=np.float64), r)


@dataclass(frozen=True)
class ArmRest:
    """One arm at rest, world space: joints, bone rotations and the hand's palm geometry."""

    shoulder: Array
    elbow: Array
    wrist: Array
    upper_rotation: Array
    forearm_rotation: Array
    hand_rotation: Array
    upper_length: float
    forearm_length: float
    hand_length: float
    #: Unit vectors: along the hand bone, out of the palm, and the elbow's hinge axis.
    finger: Array
    palm_normal: Array
    hinge: Array
    #: Where a held prop sits, and that point in the hand bone's own frame (rig units).
    palm_point: Array
    palm_local: Array


@dataclass(frozen=True)
class RigMeasure:
    units_per_metre: float
    floor: float
    anchor: Array
    left: Array
    forward: Array
    height: float
    arms: tuple[ArmRest, ArmRest]
    #: Heights above the floor (rig units) of hips, chest, neck; None where the role is unmapped.
    hip_height: float | None
    chest_height: float | None
    neck_height: float | None
    hip_half_width: float | None

    @property
    def plan_matrix(self) -> Array:
        """4x4 world matrix of the plan frame: metres in the plan frame to rig units in the world."""
        m = np.eye(4)
        m[:3, 0] = self.left * self.units_per_metre
        m[:3, 1] = -self.forward * self.units_per_metre
        m[:3, 2] = UP * self.units_per_metre
        m[:3, 3] = self.anchor
        return m

    def plan_to_world(self, points: ArrayLike) -> Array:
        m = self.plan_matrix
        return np.asarray(points, dtype=np.float64) @ m[:3, :3].T + m[:3, 3]

    def world_to_plan(self, points: ArrayLike) -> Array:
        m = self.plan_matrix
        return (np.asarray(points, dtype=np.float64) - m[:3, 3]) @ np.linalg.inv(m[:3, :3]).T

    def body(self) -> Body:
        """The juggling planner's body (metres) with this rig's proportions."""
        upm = self.units_per_metre
        plan = self.world_to_plan(np.stack([arm.shoulder for arm in self.arms]))
        shoulder_height = float(np.mean(plan[:, 2]))
        half_width = float(abs(plan[0, 0] - plan[1, 0]) / 2)
        upper = float(np.mean([a.upper_length for a in self.arms])) / upm
        hand = float(np.mean([a.hand_length for a in self.arms])) / upm
        forearm = float(np.mean([a.forearm_length for a in self.arms])) / upm + PALM_ALONG * hand
        ratio = (upper + forearm) / _DEFAULT_ARM
        height = self.height / upm
        scale = height / _DEFAULT.head_top

        def level(value: float | None, default: float) -> float:
            return value / upm if value is not None else default * scale

        return Body(
            hip_height=level(self.hip_height, _DEFAULT.hip_height),
            hip_half_width=level(self.hip_half_width, _DEFAULT.hip_half_width),
            chest_height=level(self.chest_height, _DEFAULT.chest_height),
            neck_height=level(self.neck_height, _DEFAULT.neck_height),
            head_top=height,
            shoulder_height=shoulder_height,
            shoulder_half_width=half_width,
            upper_arm=upper,
            forearm=forearm,
            hand_length=hand,
            pattern_height=shoulder_height - (_DEFAULT.shoulder_height - _DEFAULT.pattern_height) * ratio,
            pattern_forward=_DEFAULT.pattern_forward * ratio,
        )


def units_per_metre(height: float, scale_length: float = 1.0, name: str = "the rig") -> float:
    """Rig units per metre, judged from the rig's height in world units: a person is 0.4 to 3 m
    tall, so a rig 40 to 300 units tall is in centimetres. A scene unit scale other than 1 that
    makes the height plausible wins."""
    if not (math.isfinite(height) and height > 0):
        raise RigError(f"{name} has no height (its head is not above its feet)")
    if scale_length > 0 and scale_length != 1.0 and 0.4 <= height * scale_length <= 3.0:
        return 1.0 / scale_length
    if 0.4 <= height <= 3.0:
        return 1.0
    if 40.0 <= height <= 300.0:
        return 100.0
    raise RigError(
        f"{name} is {height:.3g} units tall, neither a person in metres nor in centimetres: "
        "scale the armature object or set the scene's unit scale"
    )


def _unit(v: ArrayLike) -> Array:
    v = np.asarray(v, dtype=np.float64)
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    return v / np.maximum(n, 1e-12)


def _horizontal(v: ArrayLike) -> Array:
    v = np.array(v, dtype=np.float64)
    v[..., 2] = 0.0
    return v


def _arm(bones: Mapping[str, BoneRest], bone_map: BoneMap, side: str, forward: Array, upm: float) -> ArmRest:
    upper = bones[bone_map.bones[side_role("upper_arm", side)]]
    fore = bones[bone_map.bones[side_role("forearm", side)]]
    hand = bones[bone_map.bones[side_role("hand", side)]]
    shoulder, elbow, wrist = upper.head, fore.head, hand.head
    upper_length = float(np.linalg.norm(elbow - shoulder))
    forearm_length = float(np.linalg.norm(wrist - elbow))
    hand_length = float(np.linalg.norm(hand.tail - hand.head))
    if min(upper_length, forearm_length, hand_length) <= 1e-6 * upm:
        raise RigError(
            f"the {'left' if side == 'L' else 'right'} arm's bones do not form a chain "
            "(upper arm, forearm and hand heads coincide)"
        )
    finger = _unit(hand.tail - hand.head)
    # Rigs are built in a T- or A-pose with the palms down: the palm faces world -Z at rest.
    palm_normal = -UP - np.dot(-UP, finger) * finger
    if np.linalg.norm(palm_normal) < 0.2:
        # A hand hanging straight down: its palm faces the body's side.
        palm_normal = np.cross(forward, UP) * (1.0 if side == "L" else -1.0)
        palm_normal = palm_normal - np.dot(palm_normal, finger) * finger
    palm_normal = _unit(palm_normal)
    hinge = np.cross(_unit(elbow - shoulder), forward)
    if np.linalg.norm(hinge) < 1e-3:
        hinge = np.cross(_unit(elbow - shoulder), -UP)
    hinge = _unit(hinge)
    palm_point = wrist + PALM_ALONG * hand_length * finger + PALM_OFFSET * upm * palm_normal
    palm_local = hand.rotation.T @ (palm_point - wrist)
    return ArmRest(
        shoulder=shoulder,
        elbow=elbow,
        wrist=wrist,
        upper_rotation=upper.rotation,
        forearm_rotation=fore.rotation,
        hand_rotation=hand.rotation,
        upper_length=upper_length,
        forearm_length=forearm_length,
        hand_length=hand_length,
        finger=finger,
        palm_normal=palm_normal,
        hinge=hinge,
        palm_point=palm_point,
        palm_local=palm_local,
    )


def measure_rig(
    bones: Mapping[str, BoneRest],
    bone_map: BoneMap,
    *,
    scale_length: float = 1.0,
    origin_z: float = 0.0,
    name: str = "the rig",
) -> RigMeasure:
    """Measure a rig whose mapped bones are ``bones`` (name -> world rest). Needs both arms;
    legs, hips and head refine the floor, height and body levels when mapped."""
    from .bone_map import REQUIRED_ARM_ROLES

    bone_map.require(REQUIRED_ARM_ROLES, "arms", name)

    def get(role: str) -> BoneRest | None:
        bone = bone_map.get(role)
        return bones.get(bone) if bone else None

    left_shoulder = get("upper_arm.L").head
    right_shoulder = get("upper_arm.R").head
    left = _horizontal(left_shoulder - right_shoulder)
    if np.linalg.norm(left) < 1e-9:
        raise RigError(f"{name}'s shoulders are level with each other vertically: it is not standing upright")
    left = _unit(left)
    forward = np.cross(left, UP)

    leg_points = [
        p
        for role in ("foot.L", "foot.R", "toe.L", "toe.R", "shin.L", "shin.R")
        if (b := get(role)) is not None
        for p in (b.head, b.tail)
    ]
    floor = float(min(p[2] for p in leg_points)) if leg_points else float(origin_z)
    head = get("head")
    top = float(head.tail[2]) if head is not None else None
    shoulder_z = 0.5 * (left_shoulder[2] + right_shoulder[2])
    height = (top if top is not None else floor + (shoulder_z - floor) / 0.81) - floor
    upm = units_per_metre(height, scale_length, name)

    hips = get("hips")
    if hips is not None and head is not None:
        spine = _unit(head.tail - hips.head)
        lean = math.degrees(math.acos(float(np.clip(spine[2], -1.0, 1.0))))
        if lean > MAX_LEAN_DEGREES:
            raise RigError(f"{name} leans {lean:.0f} degrees from upright (world +Z): stand it up first")
    if shoulder_z - floor < 0.3 * height:
        raise RigError(f"{name}'s shoulders are not above its feet: stand it upright (world +Z up)")

    middle = 0.5 * (left_shoulder + right_shoulder)
    anchor = np.array([middle[0], middle[1], floor])
    arms = (
        _arm(bones, bone_map, SIDES[0], forward, upm),
        _arm(bones, bone_map, SIDES[1], forward, upm),
    )

    def level(role: str, end: str) -> float | None:
        b = get(role)
        return None if b is None else float(getattr(b, end)[2] - floor)

    thighs = [get("thigh.L"), get("thigh.R")]
    hip_half = (
        float(np.linalg.norm(_horizontal(thighs[0].head - thighs[1].head))) / 2
        if all(t is not None for t in thighs)
        else None
    )
    return RigMeasure(
        units_per_metre=upm,
        floor=floor,
        anchor=anchor,
        left=left,
        forward=forward,
        height=float(height),
        arms=arms,
        hip_height=level("hips", "tail") if hips is not None else None,
        chest_height=level("chest", "head"),
        neck_height=level("neck", "head"),
        hip_half_width=hip_half,
    )
