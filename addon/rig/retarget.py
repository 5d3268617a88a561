"""Retarget the simulated dancer onto a user's rig: rest-pose-aware rotation transfer, hip
translation scaled by leg length and the feet re-solved so that they stay planted.

World space, rig units. The dancer's frame is x forward, y left, z up (metres); its rotations are
each body's turn relative to its parent, in world-aligned rest axes, so a body's world turn is the
product down its chain. Each mapped bone turns by the dancer's turn of the same body, after a fixed
rest correction that aligns the bone's rest direction with the dancer's (a T-posed arm hangs like
the dancer's). The legs are then re-solved with the shared two-bone solver so each ankle follows
the dancer's ankle (scaled): feet the simulation holds still stay still.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..kinematics import elbow_positions
from ..quaternions import to_matrix as quaternion_to_matrix
from .bone_map import SIDES, BoneMap
from .errors import RigError
from .measure import UP, BoneRest, RigMeasure

Array = NDArray[np.float64]

#: Dancer frame (x forward, y left, z up) to the plan frame (x left, -y forward, z up).
DANCER_TO_PLAN = np.array([[0.0, 1.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
#: Roles that ride on another dancer body: the head on the neck, hands on forearms, clavicles on the chest.
_RIDES = {
    "head": "neck",
    "shoulder.L": "chest",
    "shoulder.R": "chest",
    "hand.L": "forearm.L",
    "hand.R": "forearm.R",
}
#: Rest directions aligned per limb: the dancer's segment from joint to joint.
_SEGMENT_END = {
    **{f"upper_arm.{s}": f"forearm.{s}" for s in SIDES},
    **{f"thigh.{s}": f"shin.{s}" for s in SIDES},
    **{f"shin.{s}": f"foot.{s}" for s in SIDES},
    **{f"foot.{s}": f"toe.{s}" for s in SIDES},
}
_LEG_ROLES = tuple(f"{p}.{s}" for s in SIDES for p in ("thigh", "shin", "foot"))
#: The body's hierarchy by role (what a role's head rides on).
ROLE_PARENTS: dict[str, str | None] = {
    "hips": None,
    "spine": "hips",
    "chest": "spine",
    "neck": "chest",
    "head": "neck",
    **{f"shoulder.{s}": "chest" for s in SIDES},
    **{f"upper_arm.{s}": f"shoulder.{s}" for s in SIDES},
    **{f"forearm.{s}": f"upper_arm.{s}" for s in SIDES},
    **{f"hand.{s}": f"forearm.{s}" for s in SIDES},
    **{f"thigh.{s}": "hips" for s in SIDES},
    **{f"shin.{s}": f"thigh.{s}" for s in SIDES},
    **{f"foot.{s}": f"shin.{s}" for s in SIDES},
    **{f"toe.{s}": f"foot.{s}" for s in SIDES},
}


@dataclass(frozen=True)
class DancerRest:
    """The simulated dancer's rest geometry (metres, dancer frame): joint positions per body and the
    direction of the bones the simulation has no joint at the end of (forearm, hand, toe)."""

    joints: Mapping[str, Array]
    tips: Mapping[str, Array]


@dataclass(frozen=True)
class Retargeted:
    """Per mapped role: world head positions ``(T, 3)`` and world rotations ``(T, 3, 3)``."""

    heads: dict[str, Array]
    rotations: dict[str, Array]
    #: Per role, the fixed turn from the rig's rest direction to the dancer's (3x3, world).
    corrections: dict[str, Array]
    #: Leg length of the rig over the dancer's, the scale of the hip translation.
    scale: float
    #: Dancer frame (metres) to world (rig units) for positions.
    to_world: Array


def _minimal_rotation(a: Array, b: Array) -> Array:
    """The smallest rotation turning unit ``a`` to unit ``b`` (3x3)."""
    a = a / np.linalg.norm(a)
    b = b / np.linalg.norm(b)
    v = np.cross(a, b)
    c = float(np.dot(a, b))
    if c < -1.0 + 1e-9:
        axis = np.cross(a, [1.0, 0.0, 0.0])
        if np.linalg.norm(axis) < 1e-6:
            axis = np.cross(a, [0.0, 1.0, 0.0])
        axis /= np.linalg.norm(axis)
        return 2.0 * np.outer(axis, axis) - np.eye(3)
    k = np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])
    return np.eye(3) + k + k @ k / (1.0 + c)


def _minimal_rotations(a: Array, b: Array) -> Array:
    """Batched smallest rotations ``(T, 3, 3)`` from ``a`` to ``b`` (``(T, 3)``)."""
    return np.stack([_minimal_rotation(x, y) for x, y in zip(a, b, strict=True)])


def dancer_world_turns(rotations: Mapping[str, Array], parents: Mapping[str, str | None]) -> dict[str, Array]:
    """World turns ``(T, 3, 3)`` of every dancer body: its parent's turn times its own relative one."""
    turns: dict[str, Array] = {}

    def turn(name: str) -> Array:
        if name not in turns:
            local = quaternion_to_matrix(rotations[name])
            parent = parents.get(name)
            turns[name] = local if parent is None else turn(parent) @ local
        return turns[name]

    for name in rotations:
        turn(name)
    return turns


def retarget(
    performance,
    dancer: DancerRest,
    bones: Mapping[str, BoneRest],
    bone_map: BoneMap,
    measure: RigMeasure,
    masses: Mapping[str, tuple[float, Array]] | None = None,
) -> Retargeted:
    """Pose every mapped role of the rig from a dancer ``performance`` (``rotations``,
    ``root_positions``, ``joint_positions``, ``parents``). A role's head rides on its nearest
    mapped ancestor in :data:`ROLE_PARENTS`."""
    for role in ("hips", *_LEG_ROLES):
        if role not in bone_map.bones:
            raise RigError(f"the dancer needs the rig's {role.replace('.', ' ').replace('_', ' ')}")
    upm = measure.units_per_metre
    plan_rotation = np.stack([measure.left, -measure.forward, UP], axis=-1)
    m = plan_rotation @ DANCER_TO_PLAN
    turns = dancer_world_turns(performance.rotations, performance.parents)

    def rest(role: str) -> BoneRest:
        return bones[bone_map.bones[role]]

    def leg_length(side: str) -> float:
        return float(
            np.linalg.norm(rest(f"shin.{side}").head - rest(f"thigh.{side}").head)
            + np.linalg.norm(rest(f"foot.{side}").head - rest(f"shin.{side}").head)
        )

    dancer_leg = float(
        np.mean(
            [
                np.linalg.norm(dancer.joints[f"shin.{s}"] - dancer.joints[f"thigh.{s}"])
                + np.linalg.norm(dancer.joints[f"foot.{s}"] - dancer.joints[f"shin.{s}"])
                for s in SIDES
            ]
        )
    )
    scale = float(np.mean([leg_length(s) for s in SIDES])) / upm / dancer_leg
    to_world = scale * upm * m

    def dancer_direction(role: str) -> Array | None:
        end = _SEGMENT_END.get(role)
        body = _RIDES.get(role, role)
        if end is not None:
            return m @ (dancer.joints[end] - dancer.joints[body])
        if role in dancer.tips:
            return m @ dancer.tips[role]
        return None

    def target_direction(role: str) -> Array:
        part, _, side = role.partition(".")
        ends = {"upper_arm": "forearm", "forearm": "hand", "thigh": "shin", "shin": "foot", "foot": "toe"}
        end = ends.get(part)
        if end is not None and f"{end}.{side}" in bone_map.bones:
            return rest(f"{end}.{side}").head - rest(role).head
        return rest(role).tail - rest(role).head

    count = len(performance.root_positions)
    heads: dict[str, Array] = {}
    rotations: dict[str, Array] = {}
    deltas: dict[str, Array] = {}
    corrections: dict[str, Array] = {}
    mapped_parent = ROLE_PARENTS
    order = sorted(bone_map.bones, key=lambda r: _depth(r, mapped_parent))
    for role in order:
        body = _RIDES.get(role, role)
        if body not in turns:
            continue
        turn = np.einsum("ij,tjk,lk->til", m, turns[body], m)
        d = dancer_direction(role)
        correction = (
            np.eye(3)
            if d is None or role in ("hips", "spine", "chest", "neck", "head")
            else _minimal_rotation(target_direction(role), d)
        )
        corrections[role] = correction
        delta = turn @ correction
        deltas[role] = delta
        rotations[role] = delta @ rest(role).rotation
        parent = mapped_parent.get(role)
        while parent is not None and parent not in deltas:
            parent = mapped_parent.get(parent)
        if parent is None:
            heads[role] = rest(role).head + (performance.root_positions - dancer.joints["hips"]) @ to_world.T
        else:
            offset = rest(role).head - rest(parent).head
            heads[role] = heads[parent] + deltas[parent] @ offset
    if "hips" not in heads:
        raise RigError("the dancer could not place the rig's hips")

    if masses:
        shift = balance_shift(dancer, bones, bone_map, to_world, masses)
        for role in heads:
            heads[role] = heads[role] + shift
    ankles = {}
    drop = np.zeros(count)
    for side in SIDES:
        _hold_planted_turns(side, performance, bone_map, rotations, deltas)
        ankles[side] = _ankle_targets(side, performance, dancer, bones, bone_map, deltas, to_world)
        leg = sum(_leg_lengths(side, bones, bone_map)) * (1.0 - 1e-4)
        drop = np.maximum(drop, _drop_for_reach(heads[f"thigh.{side}"], ankles[side], leg))
    # A leg straighter than the rig's can reach: the body sinks that little instead of the foot lifting.
    for role in heads:
        heads[role] = heads[role] - drop[:, None] * UP
    for side in SIDES:
        _solve_leg(side, bones, bone_map, heads, rotations, deltas, ankles[side])
    if any(len(h) != count for h in heads.values()):
        raise RigError("internal: retargeted tracks of different lengths")
    return Retargeted(
        heads=heads, rotations=rotations, corrections=corrections, scale=scale, to_world=to_world
    )


def dancer_rest(performance, bones) -> DancerRest:
    """The dancer's rest joints (from the simulation) and bone directions (from its skeleton)."""
    return DancerRest(
        joints={k: np.asarray(v, dtype=np.float64) for k, v in performance.rest_positions.items()},
        tips={b.name: np.subtract(b.tail, b.head) for b in bones},
    )


def rest_com(bones, bone_map: BoneMap, to_world: Array, masses) -> Array:
    """The rig's rest centre of mass with the dancer's segment masses (world)."""
    total, weighted = 0.0, np.zeros(3)
    for role, (mass, offset) in masses.items():
        if role in bone_map.bones:
            total += mass
            weighted += mass * (bones[bone_map.bones[role]].head + to_world @ np.asarray(offset))
    return weighted / total


def feet_middle(bones, bone_map: BoneMap) -> Array:
    return 0.5 * sum(bones[bone_map.bones[f"foot.{s}"]].head for s in SIDES)


def dancer_com_on_rig(com: Array, dancer: DancerRest, bones, bone_map: BoneMap, to_world: Array) -> Array:
    """The dancer's centre of mass ``(T, 3)`` carried onto the rig relative to the feet (world)."""
    middle = 0.5 * sum(dancer.joints[f"foot.{s}"] for s in SIDES)
    return feet_middle(bones, bone_map) + (np.asarray(com) - middle) @ to_world.T


def balance_shift(dancer: DancerRest, bones, bone_map: BoneMap, to_world: Array, masses) -> Array:
    """Horizontal shift of the body (not the feet) that puts the rig's rest centre of mass over its
    feet where the dancer's rest centre of mass is over its own."""
    dancer_com = sum(
        m * (dancer.joints[b] + np.asarray(o)) for b, (m, o) in masses.items() if b in dancer.joints
    )
    dancer_com = dancer_com / sum(m for b, (m, _) in masses.items() if b in dancer.joints)
    wanted = dancer_com_on_rig(dancer_com[None], dancer, bones, bone_map, to_world)[0]
    shift = wanted - rest_com(bones, bone_map, to_world, masses)
    shift[2] = 0.0
    return shift


def _depth(role: str, mapped_parent: Mapping[str, str | None]) -> int:
    depth, parent = 0, mapped_parent.get(role)
    while parent is not None:
        depth += 1
        parent = mapped_parent.get(parent)
    return depth


def _yaw(deltas: Array) -> Array:
    """Heading (radians about +Z) of each turn's image of +X."""
    x = deltas[:, :, 0]
    return np.arctan2(x[:, 1], x[:, 0])


def _z_turns(angles: Array) -> Array:
    c, s = np.cos(angles), np.sin(angles)
    out = np.zeros((len(angles), 3, 3))
    out[:, 0, 0], out[:, 0, 1], out[:, 1, 0], out[:, 1, 1], out[:, 2, 2] = c, -s, s, c, 1.0
    return out


def _hold_planted_turns(side, performance, bone_map, rotations, deltas) -> None:
    """A foot on the floor does not twist: while the foot or toe touches, the foot keeps the heading
    it landed with, and a toe on the floor keeps its whole turn (the foot rolls over it)."""
    names = list(performance.contact_bodies)
    foot_contact = performance.in_contact[:, names.index(f"foot.{side}")]
    toe_contact = performance.in_contact[:, names.index(f"toe.{side}")]
    foot, toe = f"foot.{side}", f"toe.{side}"
    touching = foot_contact | toe_contact
    yaw = _yaw(deltas[foot])
    correction = np.zeros(len(yaw))
    start = None
    for t in range(len(yaw)):
        start = (t if start is None else start) if touching[t] else None
        if start is not None:
            correction[t] = yaw[start] - yaw[t]
    turn = _z_turns(correction)
    for role in (foot, toe):
        if role in deltas:
            rest = np.swapaxes(deltas[role], 1, 2) @ rotations[role]
            deltas[role] = turn @ deltas[role]
            rotations[role] = deltas[role] @ rest
    if toe in deltas:
        rest = np.swapaxes(deltas[toe], 1, 2) @ rotations[toe]
        held = deltas[toe].copy()
        start = None
        for t in range(len(held)):
            start = (t if start is None else start) if toe_contact[t] else None
            if start is not None:
                held[t] = held[start]
        deltas[toe] = held
        rotations[toe] = held @ rest


def _ankle_targets(side, performance, dancer, bones, bone_map, deltas, to_world) -> Array:
    """The dancer's ankle, scaled onto the rig, lifted so the heel, ball and toe tip never go below
    their rest heights (standing on the floor), with the weight-bearing point held still."""
    foot, toe = f"foot.{side}", f"toe.{side}"
    rest_foot = bones[bone_map.bones[foot]]
    ankle_rest = rest_foot.head
    dancer_ankle = performance.joint_positions[foot]
    ankle = ankle_rest + (dancer_ankle - dancer.joints[foot]) @ to_world.T
    foot_delta = deltas[foot]
    lift = np.zeros(len(ankle))
    for offset in (np.zeros(3), rest_foot.tail - ankle_rest):
        z = (ankle + foot_delta @ offset)[:, 2]
        lift = np.maximum(lift, (ankle_rest[2] + offset[2]) - z)
    if toe in bone_map.bones and toe in deltas:
        rest_toe = bones[bone_map.bones[toe]]
        toe_head = ankle + foot_delta @ (rest_toe.head - ankle_rest)
        tip = toe_head + deltas[toe] @ (rest_toe.tail - rest_toe.head)
        lift = np.maximum(lift, rest_toe.head[2] - toe_head[:, 2])
        lift = np.maximum(lift, rest_toe.tail[2] - tip[:, 2])
    ankle = ankle + lift[:, None] * UP
    return _pin_contacts(side, performance, bones, bone_map, ankle, foot_delta, ankle_rest)


def _leg_lengths(side, bones, bone_map) -> tuple[float, float]:
    thigh, shin, foot = (bones[bone_map.bones[f"{p}.{side}"]] for p in ("thigh", "shin", "foot"))
    return float(np.linalg.norm(shin.head - thigh.head)), float(np.linalg.norm(foot.head - shin.head))


def _drop_for_reach(hips: Array, ankles: Array, leg: float) -> Array:
    """How far ``hips`` must come down (per sample) for ``ankles`` to be within ``leg`` of them."""
    d = ankles - hips
    dz = d[:, 2]
    excess = np.sum(d * d, axis=1) - leg * leg
    root = np.sqrt(np.maximum(dz * dz - excess, 0.0))
    return np.where(excess > 0.0, np.maximum(-dz - root, 0.0), 0.0)


def _solve_leg(side, bones, bone_map, heads, rotations, deltas, ankle) -> None:
    """Hip-knee-ankle by the two-bone solver, the knee bending where the transferred pose bends it."""
    thigh, shin, foot, toe = (f"{p}.{side}" for p in ("thigh", "shin", "foot", "toe"))
    upper, lower = _leg_lengths(side, bones, bone_map)
    hip = heads[thigh]
    knee_fk = heads[shin]
    knees, _ = elbow_positions(hip, ankle, upper, lower, 0.0, down=knee_fk - hip)
    direction = ankle - knees
    direction /= np.linalg.norm(direction, axis=-1, keepdims=True)
    ankle = knees + lower * direction
    thigh_turn = _minimal_rotations(knee_fk - hip, knees - hip)
    shin_turn = _minimal_rotations(heads[foot] - knee_fk, ankle - knees)
    rotations[thigh] = thigh_turn @ rotations[thigh]
    rotations[shin] = shin_turn @ rotations[shin]
    heads[shin] = knees
    heads[foot] = ankle
    if toe in heads and toe in bone_map.bones:
        offset = bones[bone_map.bones[toe]].head - bones[bone_map.bones[foot]].head
        heads[toe] = ankle + deltas[foot] @ offset


#: Frames over which a planted foot eases back onto the simulated path after it lifts off.
_RELEASE_FRAMES = 8
#: Points closer than this to the lowest contact point bear weight too (rig units per metre).
_LEVEL = 0.003


def _pin_contacts(side, performance, bones, bone_map, ankle, foot_delta, ankle_rest) -> Array:
    """Hold still whatever point of the foot bears weight while the simulation says the foot (heel
    and ball) or the toe touches the floor: the heel (under the ankle) or the ball, whichever is
    lowest, pivots in place. The simulation's feet creep a centimetre or so in their soft contacts;
    the rig's do not."""
    names = list(performance.contact_bodies)
    foot_contact = performance.in_contact[:, names.index(f"foot.{side}")]
    toe_contact = performance.in_contact[:, names.index(f"toe.{side}")]
    rest_foot = bones[bone_map.bones[f"foot.{side}"]]
    toe = bone_map.bones.get(f"toe.{side}")
    ball_rest = bones[toe].head if toe is not None else rest_foot.tail
    heel_rest = np.array([ankle_rest[0], ankle_rest[1], min(ball_rest[2], ankle_rest[2])])
    offsets = {"heel": heel_rest - ankle_rest, "ball": ball_rest - ankle_rest}
    out = ankle.copy()
    pivot, anchor, release = None, None, np.zeros(2)
    released = _RELEASE_FRAMES
    for t in range(len(ankle)):
        candidates = (["heel", "ball"] if foot_contact[t] else []) + (["ball"] if toe_contact[t] else [])
        if not candidates:
            pivot = None
            released += 1
            fade = max(0.0, 1.0 - released / _RELEASE_FRAMES)
            out[t, :2] = ankle[t, :2] + fade * release
            continue
        heights = {c: (ankle[t] + foot_delta[t] @ offsets[c])[2] for c in candidates}
        low = min(heights, key=heights.get)
        switch = pivot not in heights or (pivot != low and heights[pivot] > heights[low] + _LEVEL)
        if pivot is None or switch:
            # A new pivot starts where it is now (on the adjusted foot, so the foot does not jump).
            base = out[t - 1] if t > 0 and pivot is not None else out[t]
            anchor = (base + foot_delta[t] @ offsets[low])[:2]
            pivot = low
        out[t, :2] = anchor - (foot_delta[t] @ offsets[pivot])[:2]
        release = out[t, :2] - ankle[t, :2]
        released = 0
    return out
