"""Juggling on a user's rig: key the arms so the palms follow planned paths, place the rigs."""

from __future__ import annotations

import bpy
import numpy as np
from mathutils import Matrix

from ...addon.rig import (
    RigError,
    local_rotations,
    pole_positions,
    rigify_controls,
    solve_arm,
)
from ...addon.rig.bone_map import SIDES
from .. import writers
from .bone_map import Rig, read_rig
from .keys import _cycle, _np, _object_rotation, _pose_to_local, _to_armature, write_rotation_keys


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
    from ..preferences import preferences

    own = {r.obj for r in rigs}
    # Rigify's bone widgets are scene objects too, but part of the rig.
    shapes = {b.custom_shape for r in rigs for b in r.obj.pose.bones if b.custom_shape is not None}
    others = [o for o in context.scene.objects if o not in own and o.parent not in own and o not in shapes]
    if others:
        return stage
    prefs = preferences(context)
    floor = prefs.add_floor if prefs is not None else True
    return writers.Stage(camera=stage.camera, light=stage.light, floor=floor, frame_range=True)


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
    from ...addon.juggling.body import yaw_matrix

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
    from ...addon.geometry.rotation import matrix_to_quaternion, quaternion_multiply

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
