"""Drive a user's humanoid rig: read its bone map and rest pose, key its arms, store the map.

The bone map lives on the armature object (``Object.procanim.bone_map``, one bone name per role,
empty = detect); :func:`read_rig` combines it with detection and measures the rig in world space.
:func:`drive_arms` keys the arms so the palms follow given world paths: on a Rigify control rig
through ``hand_ik`` and the pole targets (IK on, IK stretch off), on any other skeleton by baking
the upper arm, forearm and hand rotations.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

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


def _pose_to_local_per_frame(obj: bpy.types.Object, bone: str, frames, rotations: np.ndarray) -> np.ndarray:
    """Like :func:`_pose_to_local` for a bone whose parents are animated: the scene is evaluated at
    every frame (only the rotation of ``rotations`` is used; the bone's location stays)."""
    scene = bpy.context.scene
    pose_bone = obj.pose.bones[bone]
    out = []
    for frame, wanted in zip(frames, rotations, strict=True):
        scene.frame_set(int(frame))
        m = _np(pose_bone.matrix)
        m[:3, :3] = wanted[:3, :3] * np.linalg.norm(m[:3, :3], axis=0)
        out.append(
            _np(
                obj.convert_space(
                    pose_bone=pose_bone, matrix=Matrix(m.tolist()), from_space="POSE", to_space="LOCAL"
                )
            )
        )
    return np.array(out)


def _reaim_per_frame(obj: bpy.types.Object, control: str, follower: str, frames, wanted: np.ndarray):
    """New rotation bases of ``control`` that turn it about its head so that ``follower``'s head
    (world) moves to ``wanted`` ``(T, 3)``; evaluated frame by frame."""
    from ..addon.rig.retarget import _minimal_rotation

    scene = bpy.context.scene
    pose_bone = obj.pose.bones[control]
    world = _np(obj.matrix_world)
    inverse = np.linalg.inv(world)
    out = []
    for frame, target in zip(frames, wanted, strict=True):
        scene.frame_set(int(frame))
        m = _np(pose_bone.matrix)
        pivot = world[:3, :3] @ m[:3, 3] + world[:3, 3]
        actual = np.array(obj.matrix_world @ obj.pose.bones[follower].head)
        turn = _minimal_rotation(actual - pivot, target - pivot)
        local_turn = inverse[:3, :3] @ turn @ world[:3, :3]
        local_turn /= np.linalg.norm(local_turn, axis=0)
        m[:3, :3] = local_turn @ m[:3, :3]
        basis = _np(
            obj.convert_space(
                pose_bone=pose_bone, matrix=Matrix(m.tolist()), from_space="POSE", to_space="LOCAL"
            )
        )
        out.append(basis[:3, :3] / np.linalg.norm(basis[:3, :3], axis=0))
    return np.array(out)


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


def _rigify_limb_in_ik(obj, controls: dict[str, str], lower_ik: str, frames) -> list:
    """Switch a Rigify limb to IK with its pole on, keyed over ``frames``; returns the F-curves written."""
    # Rigify's IK bones stretch the deform chain about 3% even within reach unless this is 0.
    for name in (controls["upper_ik"], controls[lower_ik]):
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
    return written


def _key_rigify_arm(
    rig: Rig, controls: dict[str, str], side: str, frames, pose, object_rotation, interpolation
) -> list:
    obj = rig.obj
    bones = obj.data.bones
    count = len(frames)
    written = _rigify_limb_in_ik(obj, controls, "forearm_ik", frames)
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


# ------------------------------------------------------------------------------------ scene


def stage_around(context: bpy.types.Context, rigs: list[Rig], stage: writers.Stage) -> writers.Stage:
    """An Add onto the user's rigs in an otherwise empty scene (a character just loaded to animate)
    gets the floor and frame range an empty scene would; a scene with anything else keeps ``stage``."""
    from .preferences import preferences

    own = {r.obj for r in rigs}
    # Rigify's bone widgets are scene objects too, but part of the rig.
    shapes = {b.custom_shape for r in rigs for b in r.obj.pose.bones if b.custom_shape is not None}
    others = [o for o in context.scene.objects if o not in own and o.parent not in own and o not in shapes]
    if others:
        return stage
    prefs = preferences(context)
    floor = prefs.add_floor if prefs is not None else True
    return writers.Stage(camera=stage.camera, light=stage.light, floor=floor, frame_range=True)


#: Radii (metres) of the simple body drawn on a generated Rigify character, by deform bone prefix.
_BODY_RADII = (
    ("DEF-spine.006", 0.0),
    ("DEF-spine.005", 0.045),
    ("DEF-spine.004", 0.05),
    ("DEF-spine", 0.12),
    ("DEF-shoulder", 0.045),
    ("DEF-upper_arm", 0.05),
    ("DEF-forearm", 0.04),
    ("DEF-hand", 0.035),
    ("DEF-thigh", 0.075),
    ("DEF-shin", 0.055),
    ("DEF-foot", 0.045),
    ("DEF-toe", 0.035),
)


def generate_rigify_character(context: bpy.types.Context, name: str = "Rigify Character") -> bpy.types.Object:
    """Blender's own Rigify human, generated here (the metarig removed), with a simple skinless body
    of capsules parented to its deform bones so that it renders: a stand-in for your character."""
    import addon_utils

    from ..addon.juggling.meshes import limb, sphere

    addon_utils.enable("rigify", default_set=True)
    bpy.ops.object.armature_human_metarig_add()
    metarig = context.view_layer.objects.active
    bpy.ops.pose.rigify_generate()
    rig = context.view_layer.objects.active
    bpy.data.objects.remove(metarig)
    rig.name = name
    skin = writers.principled_material("Character Skin", (0.80, 0.58, 0.45, 1.0), roughness=0.6)
    cloth = writers.principled_material("Character Clothes", (0.55, 0.20, 0.25, 1.0), roughness=0.8)
    collection = rig.users_collection[0]
    for bone in rig.data.bones:
        radius = next((r for prefix, r in _BODY_RADII if bone.name.startswith(prefix)), None)
        if not bone.use_deform or radius is None:
            continue
        if bone.name.startswith("DEF-spine.006"):
            vertices, faces = sphere(0.11)
            vertices = vertices + np.array([0.0, 0.45 * bone.length, 0.0])
        else:
            vertices, faces = limb(radius, bone.length)
        part = writers.new_object(
            f"{name} {bone.name}", writers.mesh_from_arrays(bone.name, vertices, faces), collection
        )
        part.parent = rig
        part.parent_type = "BONE"
        part.parent_bone = bone.name
        part.location = (0.0, -bone.length, 0.0)
        bare = any(k in bone.name for k in ("hand", "forearm", "spine.006", "spine.005", "spine.004"))
        writers.assign_material(part, skin if bare else cloth)
        for polygon in part.data.polygons:
            polygon.use_smooth = True
    context.view_layer.update()
    return rig


def load_cli_rigs(spec: str) -> list[str]:
    """``FILE.blend:Object[,FILE.blend:Object...]`` (or plain object names already in the scene, or
    ``rigify`` for Blender's own Rigify human generated here): bring each armature into the current
    scene; returns the objects' names in this file."""
    from .cli import CliError

    names = []
    for item in rig_names(spec):
        if item.lower() == "rigify":
            names.append(generate_rigify_character(bpy.context).name)
            continue
        path, _, name = item.rpartition(":") if ".blend:" in item else ("", "", item)
        if not path:
            if name not in bpy.data.objects:
                raise CliError(f"--rig: no object {name!r} in the scene (use FILE.blend:OBJECT)")
            names.append(name)
            continue
        file = Path(bpy.path.abspath(path)).expanduser()
        if not file.is_file():
            raise CliError(f"--rig: no such .blend file: {file}")
        with bpy.data.libraries.load(str(file), link=False) as (source, loaded):
            if name not in source.objects:
                shown = ", ".join(sorted(source.objects)[:12])
                raise CliError(f"--rig: {file.name} has no object {name!r} (it has {shown})")
            loaded.objects = [name]
        obj = loaded.objects[0]
        if obj.type != "ARMATURE":
            raise CliError(f"--rig: {name!r} in {file.name} is a {obj.type.lower()}, not an armature")
        bpy.context.scene.collection.objects.link(obj)
        names.append(obj.name)
    bpy.context.view_layer.update()
    return names


# ------------------------------------------------------------------------------------ IK chains

LIMB_ITEMS = (
    ("NONE", "Tip Bone", "The chain ends at the tip bone and is as long as Chain Length says"),
    ("ARM_L", "Left Arm", "Upper arm and forearm of the bone map's left arm; the wrist reaches"),
    ("ARM_R", "Right Arm", "Upper arm and forearm of the bone map's right arm; the wrist reaches"),
    ("LEG_L", "Left Leg", "Thigh and shin of the bone map's left leg; the ankle reaches"),
    ("LEG_R", "Right Leg", "Thigh and shin of the bone map's right leg; the ankle reaches"),
)


def limb_chain(obj: bpy.types.Object, limb: str) -> tuple[str, int]:
    """``(tip bone, chain length)`` of a limb picked by role. On a Rigify control rig the FK
    controls (``upper_arm_fk.L``, ``forearm_fk.L``, ...): its deform bones follow constraints."""
    side = limb[-1]
    upper_part, lower_part = ("upper_arm", "forearm") if limb.startswith("ARM") else ("thigh", "shin")
    bone_map = bone_map_of(obj)
    names = obj.data.bones
    rigify = (f"{upper_part}_fk.{side}", f"{lower_part}_fk.{side}")
    if bone_map.is_rigify and all(n in names for n in rigify):
        upper, tip = rigify
    else:
        roles = (f"{upper_part}.{side}", f"{lower_part}.{side}")
        what = "left" if side == "L" else "right"
        bone_map.require(roles, f"{what} {'arm' if limb.startswith('ARM') else 'leg'}", repr(obj.name))
        upper, tip = (bone_map.bones[r] for r in roles)
    length, bone = 1, names[tip]
    while bone.name != upper:
        bone = bone.parent
        if bone is None:
            raise RigError(f"{tip!r} does not hang under {upper!r} in {obj.name!r}: fix the bone map")
        length += 1
    return tip, length


def use_fk_for_limb(obj: bpy.types.Object, limb: str, frames: np.ndarray) -> list:
    """On a Rigify rig, switch the limb baked by :func:`limb_chain` to FK (``IK_FK`` = 1, keyed over
    ``frames``) so its FK controls' keys show; other rigs are left alone."""
    side = limb[-1]
    holder = f"{'upper_arm' if limb.startswith('ARM') else 'thigh'}_parent.{side}"
    if not bone_map_of(obj).is_rigify or holder not in obj.pose.bones:
        return []
    pose_bone = obj.pose.bones[holder]
    if "IK_FK" not in pose_bone.keys():
        return []
    pose_bone["IK_FK"] = 1.0
    path = f'pose.bones["{bpy.utils.escape_identifier(holder)}"]["IK_FK"]'
    span = np.asarray(frames, dtype=np.float64)[[0, -1]]
    return writers.write_channels(obj, path, span, np.ones(2), holder, "CONSTANT", keep_outside=True)


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
        group = self.settings if self.settings.isidentifier() else ""
        settings = getattr(context.scene.procanim, group, None)
        if settings is None or not hasattr(settings, "target_rig"):
            raise RigError(f"no generator settings named {self.settings!r} take a target rig")
        settings.target_rig = ", ".join([active.name, *sorted(others)])
        return {"FINISHED"}


classes = (PROCANIM_OT_detect_bone_map, PROCANIM_OT_use_active_rig)


# ------------------------------------------------------------------------------------ dancer

#: Rigify's leg controls per side: IK foot, knee pole, the limb's property bone and the IK bones.
RIGIFY_LEG_CONTROLS = (
    "foot_ik.{side}",
    "thigh_ik_target.{side}",
    "thigh_parent.{side}",
    "thigh_ik.{side}",
    "MCH-shin_ik.{side}",
)


def read_dancer_rig(obj: bpy.types.Object, scene: bpy.types.Scene) -> Rig:
    """Map and measure ``obj`` for the dancer: it needs hips and both legs (arms are optional)."""
    from ..addon.rig import REQUIRED_LEG_ROLES

    bone_map = bone_map_of(obj)
    bone_map.require(("hips", *REQUIRED_LEG_ROLES), "hips and legs", repr(obj.name))
    return read_rig(obj, scene)


def dancer_body(rig: Rig) -> dict:
    """The simulated dancer's body for ``rig``: its height, a mass of BMI 21, the female table."""
    height = rig.measure.height / rig.measure.units_per_metre
    if not 1.1 <= height <= 2.3:
        raise RigError(f"{rig.obj.name!r} is {height:.2f} m tall; the dancer simulates 1.1 to 2.3 m bodies")
    return {"height": height, "mass": 21.0 * height**2, "sex": "female"}


def _nearest_mapped_parent(obj: bpy.types.Object, bone_map: BoneMap, bone: str) -> str | None:
    by_bone = {b: r for r, b in bone_map.bones.items()}
    parent = obj.data.bones[bone].parent
    while parent is not None:
        if parent.name in by_bone:
            return parent.name
        parent = parent.parent
    return None


def _controls(names, templates, side) -> dict[str, str] | None:
    keys = ("ik", "pole", "parent", "upper_ik", "lower_ik")
    found = {k: t.format(side=side) for k, t in zip(keys, templates, strict=True)}
    return found if all(v in names for v in found.values()) else None


def _key_ik_limb(
    obj,
    controls,
    end_bone: str,
    frames,
    ends,
    end_rotations,
    roots,
    middles,
    pole_distance,
    object_rotation,
    interpolation,
    middle_bone: str | None = None,
) -> list:
    """Key a Rigify limb's IK control so ``end_bone`` (DEF-hand / DEF-foot) gets the world
    ``ends`` / ``end_rotations``, and its pole so the middle joint bends towards ``middles``.

    With ``middle_bone`` (the deform shin / forearm) the pole is calibrated: the rig's pole angle
    may swing the bend plane off the pole, so the plane is measured where the limb bends most and
    every pole turned about its limb by the difference."""
    bones = obj.data.bones
    count = len(frames)
    written = _rigify_limb_in_ik(obj, controls, "lower_ik", frames)
    offset = np.linalg.inv(_np(bones[end_bone].matrix_local)) @ _np(bones[controls["ik"]].matrix_local)
    desired = np.zeros((count, 4, 4))
    desired[:, :3, :3] = object_rotation.T @ end_rotations
    desired[:, :3, 3] = _to_armature(obj, ends)
    desired[:, 3, 3] = 1.0
    basis = _pose_to_local(obj, controls["ik"], desired @ offset)
    written += writers.write_channels(
        obj,
        writers.pose_bone_path(controls["ik"], "location"),
        frames,
        basis[:, :3, 3],
        controls["ik"],
        interpolation,
        keep_outside=True,
    )
    rotation = basis[:, :3, :3] / np.linalg.norm(basis[:, :3, :3], axis=1, keepdims=True)
    written += write_rotation_keys(obj, controls["ik"], frames, rotation, interpolation)
    poles = pole_positions(roots, middles, ends, pole_distance)
    pole_matrices = np.broadcast_to(_np(obj.pose.bones[controls["pole"]].matrix), (count, 4, 4)).copy()
    pole_path = writers.pose_bone_path(controls["pole"], "location")

    def write_poles(points: np.ndarray) -> list:
        pole_matrices[:, :3, 3] = _to_armature(obj, points)
        local = _pose_to_local(obj, controls["pole"], pole_matrices)[:, :3, 3]
        return writers.write_channels(
            obj, pole_path, frames, local, controls["pole"], interpolation, keep_outside=True
        )

    written += write_poles(poles)
    if middle_bone is not None:
        axis = ends - roots
        axis /= np.linalg.norm(axis, axis=1, keepdims=True)
        offsets = middles - roots
        bends = np.linalg.norm(offsets - np.sum(offsets * axis, axis=1, keepdims=True) * axis, axis=1)
        index = int(np.argmax(bends))
        if bends[index] > 0.05 * pole_distance:
            for _ in range(2):
                bpy.context.scene.frame_set(int(frames[index]))
                actual = np.array(obj.matrix_world @ obj.pose.bones[middle_bone].head)
                angle = _angle_about(axis[index], actual - roots[index], middles[index] - roots[index])
                if abs(angle) < 1e-3:
                    break
                poles = roots + _rotate_about(axis, angle, poles - roots)
                write_poles(poles)
    return written


def _angle_about(axis: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """Signed angle (radians) from ``a`` to ``b`` about unit ``axis``, both projected off it."""
    a = a - np.dot(a, axis) * axis
    b = b - np.dot(b, axis) * axis
    return float(np.arctan2(np.dot(np.cross(a, b), axis), np.dot(a, b)))


def _rotate_about(axes: np.ndarray, angle: float, vectors: np.ndarray) -> np.ndarray:
    """Rodrigues: ``vectors`` ``(T, 3)`` turned by ``angle`` about unit ``axes`` ``(T, 3)``."""
    c, s = np.cos(angle), np.sin(angle)
    dot = np.sum(axes * vectors, axis=1, keepdims=True)
    return vectors * c + np.cross(axes, vectors) * s + axes * dot * (1 - c)


def dancer_masses(model) -> dict:
    """Body -> (mass, centre of mass relative to its joint) of a dancer model."""
    return {b.name: (b.mass, np.subtract(b.com, b.origin)) for b in model.bodies}


def retarget_dancer(
    rig: Rig,
    performance,
    model,
    frames: np.ndarray,
    samples: np.ndarray,
    interpolation: str = "LINEAR",
):
    """Key ``rig`` so it dances ``performance`` (sampled at ``samples`` for ``frames``); returns the
    :class:`Retargeted` world poses that were keyed."""
    from dataclasses import replace

    from ..addon.dancer.rig import skeleton
    from ..addon.rig.retarget import dancer_rest, retarget

    obj = rig.obj
    bpy.context.view_layer.update()
    sampled = replace(
        performance,
        rotations={k: v[samples] for k, v in performance.rotations.items()},
        root_positions=performance.root_positions[samples],
        joint_positions={k: v[samples] for k, v in performance.joint_positions.items()},
        in_contact=performance.in_contact[samples],
    )
    bones = world_rest(obj, set(rig.bone_map.bones.values()))
    pose = retarget(
        sampled,
        dancer_rest(performance, skeleton(model)),
        bones,
        rig.bone_map,
        rig.measure,
        dancer_masses(model),
    )
    object_rotation = _object_rotation(obj)
    names = {b.name for b in obj.data.bones}
    if rig.bone_map.is_rigify and "torso" in names:
        _key_rigify_dancer(rig, pose, frames, object_rotation, names, interpolation)
    else:
        _key_plain_dancer(rig, pose, frames, object_rotation, interpolation)
    return pose


def _key_plain_dancer(rig: Rig, pose, frames, object_rotation, interpolation) -> None:
    obj = rig.obj
    bones = obj.data.bones
    count = len(frames)
    by_role = rig.bone_map.bones
    armature_pose = {by_role[r]: object_rotation.T @ w for r, w in pose.rotations.items()}

    def rest(name: str) -> np.ndarray:
        return np.broadcast_to(_np(bones[name].matrix_local.to_3x3()), (count, 3, 3))

    for name in by_role.values():
        if name not in armature_pose:
            continue
        parent = _nearest_mapped_parent(obj, rig.bone_map, name)
        if parent is None or parent not in armature_pose:
            rest_parent = pose_parent = np.broadcast_to(np.eye(3), (count, 3, 3))
        else:
            rest_parent, pose_parent = rest(parent), armature_pose[parent]
        basis = local_rotations(rest_parent, pose_parent, rest(name), armature_pose[name])
        write_rotation_keys(obj, name, frames, basis, interpolation)
    hips = by_role["hips"]
    desired = np.zeros((count, 4, 4))
    desired[:, :3, :3] = armature_pose[hips]
    desired[:, :3, 3] = _to_armature(obj, pose.heads["hips"])
    desired[:, 3, 3] = 1.0
    basis = np.linalg.inv(_np(bones[hips].matrix_local)) @ desired
    writers.write_pose_locations(obj, hips, frames, basis[:, :3, 3], interpolation, keep_outside=True)


def _key_rigify_dancer(rig: Rig, pose, frames, object_rotation, names, interpolation) -> None:
    obj = rig.obj
    bones = obj.data.bones
    count = len(frames)
    by_role = rig.bone_map.bones
    # The torso control carries the hips: where they are and how they turn.
    hips = by_role["hips"]
    turn = pose.rotations["hips"] @ np.array(rig_rest_rotation(obj, hips)).T
    torso_rest = _np(obj.matrix_world @ bones["torso"].matrix_local)
    desired_world = np.zeros((count, 4, 4))
    desired_world[:, :3, :3] = turn @ (torso_rest[:3, :3] / np.linalg.norm(torso_rest[:3, :3], axis=0))
    hips_rest_head = np.array(obj.matrix_world @ bones[hips].head_local)
    torso_offset = torso_rest[:3, 3] - hips_rest_head
    desired_world[:, :3, 3] = pose.heads["hips"] + np.einsum("tij,j->ti", turn, torso_offset)
    desired = np.zeros_like(desired_world)
    desired[:, :3, :3] = object_rotation.T @ desired_world[:, :3, :3]
    desired[:, :3, 3] = _to_armature(obj, desired_world[:, :3, 3])
    desired[:, 3, 3] = 1.0
    basis = _pose_to_local(obj, "torso", desired)
    writers.write_channels(
        obj,
        writers.pose_bone_path("torso", "location"),
        frames,
        basis[:, :3, 3],
        "torso",
        interpolation,
        keep_outside=True,
    )
    rotation = basis[:, :3, :3] / np.linalg.norm(basis[:, :3, :3], axis=1, keepdims=True)
    write_rotation_keys(obj, "torso", frames, rotation, interpolation)
    torso_pose = desired[:, :3, :3]

    def rest3(name: str) -> np.ndarray:
        return np.broadcast_to(_np(bones[name].matrix_local.to_3x3()), (count, 3, 3))

    def control_pose(role: str, control: str) -> np.ndarray:
        """Armature-space rotation of ``control`` that gives the role's deform bone its turn."""
        deform = by_role[role]
        offset = _np(bones[deform].matrix_local.to_3x3()).T @ _np(bones[control].matrix_local.to_3x3())
        return object_rotation.T @ pose.rotations[role] @ offset

    # The chest control turns the upper body about its pivot: aim it so the neck goes where the
    # dancer's does (that is where the upper body's weight goes), twisted as the dancer's chest.
    if (
        "chest" in names
        and "chest" in pose.rotations
        and bones["chest"].parent is not None
        and bones["chest"].parent.name == "torso"
    ):
        from ..addon.rig.retarget import _minimal_rotations

        chest_rest = rig_rest_rotation(obj, by_role["chest"])
        chest_turn = pose.rotations["chest"] @ chest_rest.T
        world = _np(obj.matrix_world)
        pivot_rest = world[:3, :3] @ np.array(bones["chest"].head_local) + world[:3, 3]
        pivot = desired_world[:, :3, 3] + np.einsum("tij,j->ti", turn, pivot_rest - torso_rest[:3, 3])
        neck_role = "neck" if "neck" in pose.heads else None
        if neck_role is not None:
            neck_rest = np.array(obj.matrix_world @ bones[by_role["neck"]].head_local)
            aim = _minimal_rotations(
                np.einsum("tij,j->ti", chest_turn, neck_rest - pivot_rest), pose.heads["neck"] - pivot
            )
            chest_turn = aim @ chest_turn
        offset = _np(bones[by_role["chest"]].matrix_local.to_3x3()).T @ _np(
            bones["chest"].matrix_local.to_3x3()
        )
        wanted = object_rotation.T @ chest_turn @ chest_rest @ offset
        basis = local_rotations(rest3("torso"), torso_pose, rest3("chest"), wanted)
        write_rotation_keys(obj, "chest", frames, basis, interpolation)
        if neck_role is not None:
            # Rigify spreads the chest's turn over the spine: check the neck where the rig really
            # puts it and re-aim, twice (each pass takes it about ten times closer).
            for _ in range(2):
                basis = _reaim_per_frame(obj, "chest", by_role["neck"], frames, pose.heads["neck"])
                write_rotation_keys(obj, "chest", frames, basis, interpolation)
    for side in SIDES:
        legs = _controls(names, RIGIFY_LEG_CONTROLS, side)
        if legs is not None:
            thigh, shin, foot = (f"{p}.{side}" for p in ("thigh", "shin", "foot"))
            length = float(np.linalg.norm(pose.heads[shin][0] - pose.heads[thigh][0]))
            _key_ik_limb(
                obj,
                legs,
                by_role[foot],
                frames,
                pose.heads[foot],
                pose.rotations[foot],
                pose.heads[thigh],
                pose.heads[shin],
                length,
                object_rotation,
                interpolation,
                by_role[shin],
            )
            toe_ik = f"toe_ik.{side}"
            if toe_ik in names and f"toe.{side}" in pose.rotations:
                # The toe control hangs under the IK foot through the roll bones, which move every
                # frame: convert frame by frame. The deform toe copies the control's whole transform.
                wanted = np.zeros((count, 4, 4))
                wanted[:, :3, :3] = object_rotation.T @ pose.rotations[f"toe.{side}"]
                wanted[:, 3, 3] = 1.0
                basis = _pose_to_local_per_frame(obj, toe_ik, frames, wanted)
                rotation = basis[:, :3, :3] / np.linalg.norm(basis[:, :3, :3], axis=1, keepdims=True)
                write_rotation_keys(obj, toe_ik, frames, rotation, interpolation)
        arms = _controls(names, RIGIFY_ARM_CONTROLS_DANCE, side)
        upper, fore, hand = (f"{p}.{side}" for p in ("upper_arm", "forearm", "hand"))
        if arms is not None and all(r in pose.heads for r in (upper, fore, hand)):
            length = float(np.linalg.norm(pose.heads[fore][0] - pose.heads[upper][0]))
            _key_ik_limb(
                obj,
                arms,
                by_role[hand],
                frames,
                pose.heads[hand],
                pose.rotations[hand],
                pose.heads[upper],
                pose.heads[fore],
                length,
                object_rotation,
                interpolation,
                by_role[fore],
            )


RIGIFY_ARM_CONTROLS_DANCE = (
    "hand_ik.{side}",
    "upper_arm_ik_target.{side}",
    "upper_arm_parent.{side}",
    "upper_arm_ik.{side}",
    "MCH-forearm_ik.{side}",
)


def rig_rest_rotation(obj: bpy.types.Object, bone: str) -> np.ndarray:
    """A bone's rest rotation in world space (unit columns)."""
    m = _np((obj.matrix_world @ obj.data.bones[bone].matrix_local).to_3x3())
    return m / np.linalg.norm(m, axis=0)
