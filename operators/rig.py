"""Drive a user's humanoid rig: read its bone map and rest pose, key its arms, store the map.

The bone map lives on the armature object (``Object.procanim.bone_map``, one bone name per role,
empty = detect); :func:`read_rig` combines it with detection and measures the rig in world space.
:func:`drive_arms` keys the arms so the palms follow given world paths: on a Rigify control rig
through ``hand_ik`` and the pole targets (IK on, IK stretch off), on any other skeleton by baking
the upper arm, forearm and hand rotations.
"""

from __future__ import annotations

from dataclasses import dataclass

import bpy
import numpy as np
from bpy.props import StringProperty
from mathutils import Matrix

from ..addon.rig import (
    REQUIRED_ARM_ROLES,
    ROLES,
    BoneMap,
    BoneRest,
    RigError,
    RigMeasure,
    detect_bone_map,
    local_rotations,
    measure_rig,
    pole_positions,
    rigify_controls,
    rotation_keys,
    solve_arm,
)
from ..addon.rig.bone_map import SIDES
from . import writers
from ._base import ProcAnimOperator


def role_attribute(role: str) -> str:
    """The settings attribute of a role: ``upper_arm.L`` -> ``upper_arm_l``."""
    return role.replace(".", "_").lower()


@dataclass
class Rig:
    """A user's armature, its bone map and its rest-pose measurements (world space)."""

    obj: bpy.types.Object
    bone_map: BoneMap
    measure: RigMeasure


def stored_overrides(obj: bpy.types.Object) -> dict[str, str]:
    settings = getattr(getattr(obj, "procanim", None), "bone_map", None)
    if settings is None:
        return {}
    return {role: getattr(settings, role_attribute(role)) for role in ROLES}


def armature_by_name(name: str) -> bpy.types.Object:
    obj = bpy.data.objects.get(name)
    if obj is None:
        raise RigError(f"no object named {name!r} to animate")
    if obj.type != "ARMATURE":
        raise RigError(f"{name!r} is a {obj.type.lower()}, not an armature")
    return obj


def rig_names(text: str) -> list[str]:
    """``"A, B"`` -> ``["A", "B"]`` (a comma-separated list of rigs, one per juggler)."""
    return [part.strip() for part in text.split(",") if part.strip()]


def bone_map_of(obj: bpy.types.Object) -> BoneMap:
    return detect_bone_map([b.name for b in obj.data.bones], stored_overrides(obj))


def world_rest(obj: bpy.types.Object, names) -> dict[str, BoneRest]:
    world = obj.matrix_world
    out = {}
    for name in names:
        bone = obj.data.bones[name]
        m = world @ bone.matrix_local
        out[name] = BoneRest.of(world @ bone.head_local, world @ bone.tail_local, np.array(m.to_3x3()))
    return out


def read_rig(obj: bpy.types.Object, scene: bpy.types.Scene, required=REQUIRED_ARM_ROLES, what="arms") -> Rig:
    """Map and measure ``obj``; raises :class:`RigError` naming the missing roles."""
    bone_map = bone_map_of(obj)
    bone_map.require(required, what, repr(obj.name))
    scale = np.array(obj.matrix_world.to_scale())
    if np.ptp(scale) > 1e-4 * np.max(np.abs(scale)):
        shown = tuple(round(float(s), 4) for s in scale)
        raise RigError(f"{obj.name!r} is scaled unevenly {shown}: apply its scale first")
    measure = measure_rig(
        world_rest(obj, set(bone_map.bones.values())),
        bone_map,
        scale_length=scene.unit_settings.scale_length,
        origin_z=float(obj.matrix_world.translation.z),
        name=repr(obj.name),
    )
    return Rig(obj, bone_map, measure)


# ------------------------------------------------------------------------------------- writing


def _np(matrix: Matrix) -> np.ndarray:
    return np.array(matrix, dtype=np.float64)


def write_rotation_keys(
    obj: bpy.types.Object, bone: str, frames: np.ndarray, bases: np.ndarray, interpolation: str
) -> list[bpy.types.FCurve]:
    """Key a pose bone's rotation basis ``(T, 3, 3)`` in the bone's own rotation mode."""
    pose_bone = obj.pose.bones[bone]
    mode = pose_bone.rotation_mode
    if mode == "QUATERNION":
        values, prop = rotation_keys(bases), "rotation_quaternion"
    elif mode == "AXIS_ANGLE":
        q = rotation_keys(bases)
        half = np.arccos(np.clip(q[:, 0], -1.0, 1.0))
        axis = q[:, 1:] / np.maximum(np.sin(half), 1e-12)[:, None]
        axis[np.sin(half) < 1e-9] = (0.0, 1.0, 0.0)
        values, prop = np.concatenate([2 * half[:, None], axis], axis=1), "rotation_axis_angle"
    else:
        eulers, previous = [], None
        for m in bases:
            e = Matrix(m.tolist()).to_euler(mode, previous) if previous else Matrix(m.tolist()).to_euler(mode)
            eulers.append(tuple(e))
            previous = e
        values, prop = np.array(eulers), "rotation_euler"
    return writers.write_channels(
        obj, writers.pose_bone_path(bone, prop), frames, values, bone, interpolation, keep_outside=True
    )


def _pose_to_local(obj: bpy.types.Object, bone: str, matrices: np.ndarray) -> np.ndarray:
    """Armature-space pose matrices ``(T, 4, 4)`` of ``bone`` -> its keyable basis matrices, through
    Blender's own conversion (it knows the bone's parent, local-location and inherit flags); the
    parents' current pose is used, constant while they are not animated."""
    pose_bone = obj.pose.bones[bone]
    return np.array(
        [
            _np(
                obj.convert_space(
                    pose_bone=pose_bone, matrix=Matrix(m.tolist()), from_space="POSE", to_space="LOCAL"
                )
            )
            for m in matrices
        ]
    )


def _to_armature(obj: bpy.types.Object, points: np.ndarray) -> np.ndarray:
    inverse = np.linalg.inv(_np(obj.matrix_world))
    return points @ inverse[:3, :3].T + inverse[:3, 3]


def _object_rotation(obj: bpy.types.Object) -> np.ndarray:
    return _np(obj.matrix_world.to_3x3().normalized())


def _cycle(curves: list[bpy.types.FCurve]) -> None:
    for fcurve in curves:
        if not any(m.type == "CYCLES" for m in fcurve.modifiers):
            fcurve.modifiers.new("CYCLES")


def drive_arms(
    rig: Rig,
    frames: np.ndarray,
    palms: np.ndarray,
    chicken_wing: float = 0.0,
    interpolation: str = "LINEAR",
    cyclic: bool = False,
) -> list[str]:
    """Key ``rig``'s arms so both palm points follow ``palms`` ``(2, T, 3)`` (world, left first).

    Returns warnings (hands out of reach). Only the arm channels are keyed; keys outside
    ``frames`` on those channels are kept.
    """
    obj = rig.obj
    names = [b.name for b in obj.data.bones]
    bpy.context.view_layer.update()
    object_rotation = _object_rotation(obj)
    warnings = []
    written: list[bpy.types.FCurve] = []
    for hand, side in enumerate(SIDES):
        arm = rig.measure.arms[hand]
        outward = rig.measure.left * (1.0 if side == "L" else -1.0)
        pose = solve_arm(arm, palms[hand], rig.measure.forward, outward, chicken_wing)
        if not pose.reachable.all():
            share = 100.0 * float(np.mean(~pose.reachable))
            which = "left" if side == "L" else "right"
            warnings.append(f"{obj.name}'s {which} hand is out of reach {share:.0f}% of the time")
        controls = rigify_controls(names, side) if rig.bone_map.is_rigify else None
        if controls is not None:
            written += _key_rigify_arm(rig, controls, side, frames, pose, object_rotation, interpolation)
        else:
            written += _key_plain_arm(rig, side, frames, pose, object_rotation, interpolation)
    if cyclic:
        _cycle(written)
    return warnings


def _key_plain_arm(rig: Rig, side: str, frames, pose, object_rotation, interpolation) -> list:
    obj = rig.obj
    bones = obj.data.bones
    upper, fore, hand = (rig.bone_map.bones[f"{part}.{side}"] for part in ("upper_arm", "forearm", "hand"))
    parent = bones[upper].parent
    count = len(frames)
    if parent is not None:
        rest_parent = _np(parent.matrix_local.to_3x3())
        pose_parent = _np(obj.pose.bones[parent.name].matrix.to_3x3().normalized())
    else:
        rest_parent = pose_parent = np.eye(3)
    to_arm = object_rotation.T
    pose_upper = to_arm @ pose.upper_rotations
    pose_fore = to_arm @ pose.forearm_rotations
    pose_hand = to_arm @ pose.hand_rotations

    def rest(name: str) -> np.ndarray:
        return np.broadcast_to(_np(bones[name].matrix_local.to_3x3()), (count, 3, 3))

    written = []
    bases = (
        (
            upper,
            local_rotations(
                np.broadcast_to(rest_parent, (count, 3, 3)),
                np.broadcast_to(pose_parent, (count, 3, 3)),
                rest(upper),
                pose_upper,
            ),
        ),
        (fore, local_rotations(rest(upper), pose_upper, rest(fore), pose_fore)),
        (hand, local_rotations(rest(fore), pose_fore, rest(hand), pose_hand)),
    )
    for name, basis in bases:
        written += write_rotation_keys(obj, name, frames, basis, interpolation)
    return written


def _key_rigify_arm(
    rig: Rig, controls: dict[str, str], side: str, frames, pose, object_rotation, interpolation
) -> list:
    obj = rig.obj
    bones = obj.data.bones
    count = len(frames)
    # Rigify's IK bones stretch the deform chain about 3% even within reach unless this is 0.
    for name in (controls["upper_ik"], controls["forearm_ik"]):
        obj.pose.bones[name].ik_stretch = 0.0
    written = []
    parent = obj.pose.bones[controls["parent"]]
    for prop, value in (("IK_FK", 0.0), ("pole_vector", 1.0)):
        if prop in parent.keys():
            parent[prop] = type(parent[prop])(value)
            written += writers.write_channels(
                obj,
                f'pose.bones["{bpy.utils.escape_identifier(controls["parent"])}"]["{prop}"]',
                frames[[0, -1]],
                np.full(2, value),
                controls["parent"],
                "CONSTANT",
                keep_outside=True,
            )
    hand_bone = rig.bone_map.bones[f"hand.{side}"]
    rest_hand = _np(bones[hand_bone].matrix_local)
    rest_ik = _np(bones[controls["hand_ik"]].matrix_local)
    offset = np.linalg.inv(rest_hand) @ rest_ik
    desired = np.zeros((count, 4, 4))
    desired[:, :3, :3] = object_rotation.T @ pose.hand_rotations
    desired[:, :3, 3] = _to_armature(obj, pose.wrists)
    desired[:, 3, 3] = 1.0
    desired = desired @ offset
    basis = _pose_to_local(obj, controls["hand_ik"], desired)
    written += writers.write_channels(
        obj,
        writers.pose_bone_path(controls["hand_ik"], "location"),
        frames,
        basis[:, :3, 3],
        controls["hand_ik"],
        interpolation,
        keep_outside=True,
    )
    rotation = basis[:, :3, :3] / np.linalg.norm(basis[:, :3, :3], axis=1, keepdims=True)
    written += write_rotation_keys(obj, controls["hand_ik"], frames, rotation, interpolation)

    arm = rig.measure.arms[0 if side == "L" else 1]
    poles = pole_positions(
        np.broadcast_to(arm.shoulder, pose.elbows.shape), pose.elbows, pose.wrists, arm.upper_length
    )
    pole_matrices = np.broadcast_to(_np(obj.pose.bones[controls["pole"]].matrix), (count, 4, 4)).copy()
    pole_matrices[:, :3, 3] = _to_armature(obj, poles)
    local = _pose_to_local(obj, controls["pole"], pole_matrices)[:, :3, 3]
    written += writers.write_channels(
        obj,
        writers.pose_bone_path(controls["pole"], "location"),
        frames,
        local,
        controls["pole"],
        interpolation,
        keep_outside=True,
    )
    return written


# ------------------------------------------------------------------------------------ juggling


def planning_body(rigs: list[Rig]) -> dict:
    """``plan_pattern`` keywords for juggling on ``rigs``: the first rig's body, with the floor the
    props bounce on where its feet are."""
    if not rigs:
        return {}
    body = rigs[0].measure.body()
    return {"body": body, "floor_drop": body.pattern_height}


def place_rigs(rigs: list[Rig], pattern) -> tuple[np.ndarray, list[np.ndarray | None]]:
    """Where the planned pattern (metres, jugglers at ``pattern.juggler_origins``) goes in the world,
    and each rig's new ``matrix_world`` (None: it stays). One rig stays where the user put it and
    the pattern follows it; passing rigs keep their units and middle but stand as planned."""
    from ..addon.juggling.body import yaw_matrix

    if len(rigs) != pattern.num_jugglers:
        raise RigError(
            f"{pattern.siteswap.text!r} needs {pattern.num_jugglers} juggler(s) but {len(rigs)} rig(s) "
            f"were given: list one armature per juggler, separated by commas"
        )
    if len({r.obj.name for r in rigs}) != len(rigs):
        raise RigError("the same rig is listed twice: each juggler needs its own armature")
    if len(rigs) == 1:
        return rigs[0].measure.plan_matrix, [None]
    units = [r.measure.units_per_metre for r in rigs]
    if max(units) > 1.01 * min(units):
        raise RigError("the rigs are in different units (metres and centimetres): scale them alike first")
    placement = np.eye(4)
    placement[:3, :3] *= units[0]
    placement[:3, 3] = np.mean([r.measure.anchor for r in rigs], axis=0)
    moves = []
    for index, rig in enumerate(rigs):
        juggler = np.eye(4)
        juggler[:3, :3] = yaw_matrix(float(pattern.juggler_yaws[index]))
        juggler[:3, 3] = pattern.juggler_origins[index]
        wanted = placement @ juggler
        moves.append(wanted @ np.linalg.inv(rig.measure.plan_matrix) @ _np(rig.obj.matrix_world))
    return placement, moves


def placed_props(result) -> tuple:
    """The bake's props (pattern metres) moved into the world by ``result.placement``: positions,
    slopes, quaternions, quaternion slopes and the props' scale."""
    from ..addon.geometry.rotation import matrix_to_quaternion, quaternion_multiply

    m = result.placement
    scale = float(np.cbrt(np.linalg.det(m[:3, :3])))
    rotation = m[:3, :3] / scale
    positions = result.prop_positions @ m[:3, :3].T + m[:3, 3]
    slopes = None if result.prop_slopes is None else result.prop_slopes @ m[:3, :3].T
    q = matrix_to_quaternion(rotation)
    rotations = None if result.prop_rotations is None else quaternion_multiply(q, result.prop_rotations)
    rotation_slopes = (
        None if result.prop_rotation_slopes is None else quaternion_multiply(q, result.prop_rotation_slopes)
    )
    return positions, slopes, rotations, rotation_slopes, scale


def planned_palms(result, juggler: int) -> np.ndarray:
    """World palm paths ``(2, T, 3)`` of one juggler at the bake's frames."""
    times = (result.frames - result.frames[0]) / result.fps
    hands = result.pattern.hand_positions(times)[juggler]
    m = result.placement
    return hands @ m[:3, :3].T + m[:3, 3]


def juggle_rigs(result, chicken_wing: float) -> list[str]:
    """Move passing rigs into place and key every rig's arms along its hand paths."""
    warnings = []
    for index, rig in enumerate(result.rigs):
        move = result.rig_moves[index]
        if move is not None:
            rig.obj.matrix_world = Matrix(move.tolist())
            bpy.context.view_layer.update()
            rig = read_rig(rig.obj, bpy.context.scene)
        warnings += drive_arms(rig, result.frames, planned_palms(result, index), chicken_wing, cyclic=True)
    return warnings


# ------------------------------------------------------------------------------------ operators


def _active_armature(context: bpy.types.Context) -> bpy.types.Object | None:
    obj = context.active_object
    return obj if obj is not None and obj.type == "ARMATURE" else None


class PROCANIM_OT_detect_bone_map(ProcAnimOperator, bpy.types.Operator):
    """Fill the active armature's bone map from its bone names (Rigify, metarig, Mixamo, Unreal or
    ProcAnim's own), replacing the roles set by hand"""

    bl_idname = "procanim.detect_bone_map"
    bl_label = "Detect Bone Map"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        if _active_armature(context) is None:
            cls.poll_message_set("Select an armature")
            return False
        return True

    def run(self, context: bpy.types.Context) -> set[str]:
        obj = _active_armature(context)
        detected = detect_bone_map([b.name for b in obj.data.bones])
        settings = obj.procanim.bone_map
        for role in ROLES:
            setattr(settings, role_attribute(role), detected.bones.get(role, ""))
        settings.convention = detected.convention
        missing = detected.missing(ROLES)
        level = {"WARNING"} if detected.missing(REQUIRED_ARM_ROLES) else {"INFO"}
        found = f"{obj.name}: {detected.convention.title()}, {len(detected.bones)} of {len(ROLES)} roles"
        self.report(level, found + (f"; missing {', '.join(missing)}" if missing else ""))
        return {"FINISHED"}


class PROCANIM_OT_use_active_rig(ProcAnimOperator, bpy.types.Operator):
    """Animate the active armature (the selected armatures, for passing patterns) instead of
    ProcAnim's own figure"""

    bl_idname = "procanim.use_active_rig"
    bl_label = "Use Active Armature"
    bl_options = {"REGISTER", "UNDO"}

    settings: StringProperty(
        name="Settings",
        description="Which generator's settings to set",
        default="juggling",
        options={"HIDDEN"},
    )

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        if _active_armature(context) is None:
            cls.poll_message_set("Select an armature")
            return False
        return True

    def run(self, context: bpy.types.Context) -> set[str]:
        active = _active_armature(context)
        others = [o.name for o in context.selected_objects if o.type == "ARMATURE" and o != active]
        settings = getattr(context.scene.procanim, self.settings)
        settings.target_rig = ", ".join([active.name, *sorted(others)])
        return {"FINISHED"}


classes = (PROCANIM_OT_detect_bone_map, PROCANIM_OT_use_active_rig)
