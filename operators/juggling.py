"""Juggling: a siteswap becomes a looping, keyframed scene of rigged jugglers, props and a camera."""

from __future__ import annotations

import colorsys
import math
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path

import bpy
import numpy as np
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty, StringProperty
from mathutils import Matrix

from ..addon.errors import ProcAnimError
from ..addon.juggling import Pattern, jml, parse_siteswap, plan_pattern
from ..addon.juggling.body import (
    arm_bone_names,
    arm_pose_quaternions,
    rest_skeleton,
)
from ..addon.juggling.body_motion import BodyMotion
from ..addon.juggling.meshes import limb, prop_mesh, sphere
from ..addon.juggling.model import LEFT, RIGHT
from ..addon.juggling.parameters import is_config, parse_config, plan_config
from ..addon.quaternions import continuous as continuous_quaternions
from ..addon.quaternions import from_matrix as quaternion_from_matrix
from ..addon.quaternions import to_matrix as quaternion_to_matrix
from . import rig as rig_targets
from . import writers
from ._base import BakeOperator
from .cli import COMMON, call_operator

COLLECTION = "Juggling"
#: Time step of the finite differences that give Bezier slopes of rotations (seconds).
_SLOPE_STEP = 1e-4
#: Samples per progress step while baking.
_CHUNK = 1500
#: Refuse bakes that would take more than a few seconds and hundreds of megabytes.
MAX_KEYS = 6_000_000
#: How far below and behind the palm point (where a prop sits) the hand mesh is drawn, metres.
_PALM_DROP = 0.035

PROP_ITEMS = (
    ("ball", "Ball", "Juggling balls"),
    ("club", "Club", "Juggling clubs: they spin, floor(n/2) turns by default, S{n} overrides"),
    ("ring", "Ring", "Juggling rings: they spin in their own plane"),
)
BOUNCE_MODEL_ITEMS = (
    (
        "ENERGY",
        "Energy",
        "A bounce keeps Bounciness of the prop's energy: speed x sqrt(Bounciness) (Juggling Lab)",
    ),
    ("SPEED", "Speed", "A bounce keeps Bounciness of the prop's vertical speed"),
)
KEY_ITEMS = (
    ("FRAME", "Every Frame", "One linear key per frame: exactly the sampled motion"),
    (
        "BEZIER",
        "Bezier",
        "One Bezier key per frame whose handles follow the true velocities (smooth sub-frames)",
    ),
)


def juggling_properties() -> dict:
    """The settings shared by the operator and the sidebar (fresh property objects per call)."""
    return {
        "siteswap": StringProperty(
            name="Siteswap",
            description="Pattern in Juggling Lab notation (gunswap modifiers accepted), "
            "e.g. 3, 531, (4,4), <3p|3p>, or Juggling Lab's parameters: pattern=531;bps=4;dwell=1",
            default="3",
            # The sidebar checks the pattern on every keystroke, not only when the field is left.
            options={"TEXTEDIT_UPDATE"},
        ),
        "auto_beat": BoolProperty(
            name="Automatic Beat",
            description="Juggling Lab's tempo for this pattern (its calcBps, from how high the throws "
            "are), slowed down where a bounce cannot make its catch; off: use Beat Duration",
            default=True,
        ),
        "beat_duration": FloatProperty(
            name="Beat Duration",
            description="Seconds between two throws (1 / throws per second) when Automatic Beat is off; "
            "stretched slightly so a loop is a whole number of frames",
            default=0.3,
            min=0.05,
            max=2.0,
            step=1,
            precision=3,
            unit="TIME_ABSOLUTE",
        ),
        "dwell_ratio": FloatProperty(
            name="Dwell Ratio",
            description="Beats a prop rests in the hand before it is thrown; a throw of n flies n minus "
            "this many beats (Juggling Lab uses 1.3)",
            default=1.3,
            min=0.05,
            max=1.95,
            step=5,
        ),
        "prop_type": EnumProperty(
            name="Prop", description="What is juggled", items=PROP_ITEMS, default="ball"
        ),
        "prop_size": FloatProperty(
            name="Prop Size",
            description="Scale of the props: 1 is a 6.8 cm ball, a 32 cm ring, a 50 cm club",
            default=1.0,
            min=0.25,
            max=4.0,
        ),
        "chicken_wing": FloatProperty(
            name="Chicken Wing",
            description="How far the elbows swing out and up from hanging straight down (gunswap's "
            "chicken-wing angle)",
            default=0.0,
            min=-math.pi / 2,
            max=math.pi / 2,
            subtype="ANGLE",
        ),
        "loops": IntProperty(
            name="Loops",
            description="Number of pattern repetitions to key; the frame range covers them exactly",
            default=2,
            min=1,
            max=200,
        ),
        "key_style": EnumProperty(
            name="Keys", description="How the motion is keyed", items=KEY_ITEMS, default="FRAME"
        ),
        "dwell_path": StringProperty(
            name="Dwell Path",
            description="Hand path while holding, gunswap notation in cm: (x,y,z) points from catch to "
            "throw, x outward, y up, z forward; '.' separates throws. Empty: Juggling Lab's positions. "
            "Mills Mess: (2.5,5)(-30,5).(-2.5,-10)(30,-10).(0,-10)(-30,-10)",
            default="",
        ),
        "restitution": FloatProperty(
            name="Bounciness",
            description="What a prop keeps at each bounce off the floor: a share of its energy "
            "(Juggling Lab's bouncefrac, the default model) or of its vertical speed",
            default=0.9,
            min=0.05,
            max=1.0,
        ),
        "bounce_model": EnumProperty(
            name="Bounce Model",
            description="How Bounciness is applied at each bounce",
            items=BOUNCE_MODEL_ITEMS,
            default="ENERGY",
        ),
        "squeeze_beats": FloatProperty(
            name="Squeeze Catch",
            description="Beats over which one hand catches several props landing on the same beat, one "
            "after the other (Juggling Lab's squeezebeats); 0 catches them together",
            default=0.4,
            min=0.0,
            max=1.0,
        ),
        "floor": BoolProperty(
            name="Floor",
            description="Add a floor plane under the jugglers when the scene is empty",
            default=True,
        ),
        "target_rig": StringProperty(
            name="Rig",
            description="Armature to juggle with instead of ProcAnim's figure (Rigify, Mixamo, Unreal or "
            "any rig with a bone map); a comma-separated list, one per juggler, for passing patterns. "
            "Empty: ProcAnim's own figures",
            default="",
        ),
        "max_hand_acceleration": FloatProperty(
            name="Hand Acceleration Bound",
            description="Hands are planned to stay under this acceleration where the pattern allows it; "
            "strokes that need more are reported, with the least any hand needs in the pattern (a cascade "
            "of n props at dwell d needs g (n - d) at any beat; a human hand juggles comfortably within "
            "about 4 g)",
            default=4 * 9.81,
            min=1.0,
            max=1000.0,
            unit="ACCELERATION",
        ),
        "jml_source": StringProperty(
            name="JML Pattern",
            description="A full Juggling Lab (JML) pattern to animate instead of the siteswap; set by "
            "File > Import > Juggling Lab Pattern",
            default="",
            options={"HIDDEN", "SKIP_SAVE"},
        ),
    }


def planning_options(settings) -> dict:
    """``plan_pattern`` keywords from the operator's or the sidebar's settings (not the siteswap)."""
    energy = settings.bounce_model == "ENERGY"
    return {
        "beat_duration": None if settings.auto_beat else settings.beat_duration,
        "dwell_ratio": settings.dwell_ratio,
        "prop_type": settings.prop_type,
        "prop_size": settings.prop_size,
        "chicken_wing": settings.chicken_wing,
        "bounce_frac": settings.restitution if energy else 0.9,
        "restitution": None if energy else settings.restitution,
        "squeeze_beats": settings.squeeze_beats,
        "max_hand_acceleration": settings.max_hand_acceleration,
        "dwell_paths": settings.dwell_path,
    }


def plan_settings(settings, **overrides) -> Pattern:
    """Plan the settings' pattern: a siteswap, or Juggling Lab's ``pattern=...;bps=...`` string whose
    own parameters win over the settings."""
    source = getattr(settings, "jml_source", "")
    if source:
        entries = jml.load(source)
        if not entries:
            raise ProcAnimError("the imported JML pattern has nothing to animate")
        return entries[0].plan(defaults=planning_options(settings), **overrides)
    if is_config(settings.siteswap):
        return plan_config(parse_config(settings.siteswap), defaults=planning_options(settings), **overrides)
    return plan_pattern(parse_siteswap(settings.siteswap), **planning_options(settings), **overrides)


@dataclass
class JuggleBake:
    """Everything sampled, ready to write."""

    pattern: Pattern
    frames: np.ndarray  # absolute frame numbers of the keys
    fps: float
    prop_positions: np.ndarray  # (P, T, 3)
    prop_slopes: np.ndarray | None  # (P, T, 3) per frame
    prop_rotations: np.ndarray | None  # (P, T, 4)
    prop_rotation_slopes: np.ndarray | None
    arm_points: list[tuple[np.ndarray, ...]]  # per offset (0, +h, -h): shoulders, elbows, hands (J, 2, T, 3)
    frames_per_loop: int
    #: Per offset (0, +h, -h): torso transforms (J, T, 4, 4) and the body motion (knees, head).
    body: list[tuple[np.ndarray, BodyMotion]] = field(default_factory=list)
    #: The user's rigs that juggle instead of ProcAnim's figures, and where the plan goes in the world.
    rigs: list[rig_targets.Rig] = field(default_factory=list)
    placement: np.ndarray | None = None  # 4x4: pattern metres -> world
    rig_moves: list[np.ndarray] = field(default_factory=list)  # new matrix_world per rig


def _joined_body(chunks: list[tuple[np.ndarray, BodyMotion]]) -> tuple[np.ndarray, BodyMotion]:
    """One offset's torso transforms and body motion, chunks joined along time."""
    motions = [m for _, m in chunks]
    joined = BodyMotion(
        **{
            name: np.concatenate([getattr(m, name) for m in motions], axis=1)
            for name in ("hip_drop", "torso", "head", "thigh", "shin")
        }
    )
    return np.concatenate([t for t, _ in chunks], axis=1), joined


def _aligned(q: np.ndarray, reference: np.ndarray) -> np.ndarray:
    return np.where((np.sum(q * reference, axis=-1) < 0)[..., None], -q, q)


class JuggleBaker(BakeOperator):
    """Plans the operator's pattern, samples it and writes the scene; shared by procanim.juggle and
    procanim.import_jml (a registered operator class cannot be subclassed by another)."""

    redo_reruns = True  # a pattern is keyed in well under a second: F9 re-runs it with new values

    def plan(self, fps: float, **extra) -> Pattern:
        return plan_settings(self, frame_rate=fps, **extra)

    def bake(self, context: bpy.types.Context) -> Generator[float | tuple[float, str], None, JuggleBake]:
        render = context.scene.render
        fps = render.fps / render.fps_base
        frame_start = context.scene.frame_start
        self._stage = writers.stage_for(context)
        bezier = self.key_style == "BEZIER"
        rigs = [
            rig_targets.read_rig(rig_targets.armature_by_name(name), context.scene)
            for name in rig_targets.rig_names(self.target_rig)
        ]
        yield 0.0, "planning"
        pattern = self.plan(fps, **rig_targets.planning_body(rigs))
        placement, rig_moves = rig_targets.place_rigs(rigs, pattern) if rigs else (None, [])
        if rigs:
            self._stage = rig_targets.stage_around(context, rigs, self._stage)
        frames_per_loop = round(pattern.loop_duration * fps)
        # Per juggler: two arms (4 quaternions), hips location, spine, head and four leg bones.
        channels = pattern.num_props * (3 if pattern.prop_type == "ball" else 7) + pattern.num_jugglers * 43
        keys = channels * (frames_per_loop * self.loops + 1)
        if keys > MAX_KEYS:
            raise ProcAnimError(
                f"{self.loops} loops of {self.siteswap!r} would be {keys:,} keys ({frames_per_loop} frames a "
                f"loop); the limit is {MAX_KEYS:,}: use fewer loops or a lower frame rate"
            )
        offsets = np.arange(frames_per_loop * self.loops + 1)
        times = offsets / fps
        spins = pattern.prop_type != "ball"
        positions, slopes, rotations, rotation_slopes = [], [], [], []
        arms: list[list[tuple[np.ndarray, ...]]] = [[], [], []]
        bodies: list[list[tuple[np.ndarray, BodyMotion]]] = [[], [], []]
        for start in range(0, len(times), _CHUNK):
            t = times[start : start + _CHUNK]
            positions.append(pattern.prop_positions(t))
            if bezier:
                slopes.append(pattern.prop_velocities(t) / fps)
            if spins:
                q = pattern.prop_orientations(t)
                rotations.append(q)
                if bezier:
                    q_plus = _aligned(pattern.prop_orientations(t + _SLOPE_STEP), q)
                    q_minus = _aligned(pattern.prop_orientations(t - _SLOPE_STEP), q)
                    rotation_slopes.append((q_plus - q_minus) / (2 * _SLOPE_STEP * fps))
            for slot, shift in enumerate((0.0, _SLOPE_STEP, -_SLOPE_STEP) if bezier else (0.0,)):
                arms[slot].append(
                    (
                        pattern.shoulder_positions(t + shift),
                        pattern.elbow_positions(t + shift),
                        pattern.hand_positions(t + shift),
                    )
                )
                motion = pattern.body_motion(t + shift)
                bodies[slot].append((pattern.torso_transforms(t + shift, motion), motion))
            yield min(0.95, 0.1 + 0.85 * (start + len(t)) / len(times)), "sampling"

        def joined(chunks: list[np.ndarray]) -> np.ndarray | None:
            return np.concatenate(chunks, axis=1) if chunks else None

        rotations_all = joined(rotations)
        rotation_slopes_all = joined(rotation_slopes)
        if rotations_all is not None:
            # Chunks were each made continuous; join them into one hemisphere-continuous track.
            fixed = continuous_quaternions(rotations_all, axis=1)
            if rotation_slopes_all is not None:
                flip = np.sum(fixed * rotations_all, axis=-1) < 0
                rotation_slopes_all[flip] *= -1
            rotations_all = fixed
        arm_points = [
            tuple(np.concatenate([chunk[k] for chunk in slot], axis=2) for k in range(3))
            for slot in arms
            if slot
        ]
        return JuggleBake(
            pattern=pattern,
            frames=frame_start + offsets.astype(np.float64),
            fps=fps,
            prop_positions=joined(positions),
            prop_slopes=joined(slopes),
            prop_rotations=rotations_all,
            prop_rotation_slopes=rotation_slopes_all,
            arm_points=arm_points,
            frames_per_loop=frames_per_loop,
            body=[_joined_body(slot) for slot in bodies if slot],
            rigs=rigs,
            placement=placement,
            rig_moves=rig_moves,
        )

    def write(self, context: bpy.types.Context, result: JuggleBake) -> set[str]:
        scene = context.scene
        pattern = result.pattern
        stage = getattr(self, "_stage", None) or writers.stage_for(context)
        collection = writers.new_instance(context, COLLECTION)
        interpolation = "BEZIER" if self.key_style == "BEZIER" else "LINEAR"
        warnings = []
        if result.rigs:
            warnings = rig_targets.juggle_rigs(result, self.chicken_wing)
        else:
            materials = _body_materials()
            arms = [
                _write_juggler(context, collection, result, juggler, materials, interpolation)
                for juggler in range(pattern.num_jugglers)
            ]
            if stage.camera and len(arms) > 1:
                _add_view_cameras(context, collection, arms, pattern)
        _write_props(collection, result, interpolation)
        # A pattern that bounces needs the floor it bounces on, even in a scene of the user's.
        bounces = any(flight.bounces for flight in pattern.flights)
        if self.floor and (stage.floor or bounces):
            _add_floor(collection, pattern, result.placement)
        # The keys span whole loops, so a Cycles modifier carries the pattern past the frame range.
        for obj in collection.all_objects:
            for fcurve in writers.fcurves_of(obj):
                fcurve.modifiers.new("CYCLES")
        if stage.camera:
            _add_camera(scene, collection, result)
        if stage.light:
            writers.add_sun(collection)
        frames = result.frames
        if stage.frame_range:
            writers.set_frame_range(scene, int(frames[0]), int(frames[-1]) - 1)
        if result.rigs:
            # The pattern stands where the user's rigs stand, not at the cursor.
            jugglers = [rig.obj for rig in result.rigs]
        else:
            writers.place_instance(collection, scene.cursor.location)
            jugglers = [obj for obj in collection.objects if obj.type == "ARMATURE"]
        writers.select_only(context, jugglers, jugglers[0] if jugglers else None)
        seconds = result.frames_per_loop / result.fps
        label = pattern.title if self.jml_source else self.siteswap
        self.report(
            {"INFO"},
            f"Added {label!r}: {pattern.num_props} props, {pattern.num_jugglers} juggler"
            f"{'s' if pattern.num_jugglers > 1 else ''}, {self.loops} loop(s) of {seconds:.2f} s "
            f"({result.frames_per_loop} frames, beat {pattern.beat_duration:.3f} s)",
        )
        if pattern.reach_warning and not result.rigs:
            warnings.append(pattern.reach_warning)
        if pattern.acceleration_warning:
            warnings.append(pattern.acceleration_warning)
        if warnings:
            self.report({"WARNING"}, "; ".join(warnings))
        return {"FINISHED"}


class PROCANIM_OT_juggle(JuggleBaker, bpy.types.Operator):
    """Add a looping, keyframed juggling scene from a siteswap: rigged jugglers, props and a camera"""

    bl_idname = "procanim.juggle"
    bl_label = "Add Juggling Pattern"
    bl_options = {"REGISTER", "UNDO"}

    __annotations__ = juggling_properties()


# ------------------------------------------------------------------------------------------ writing


def _body_materials() -> dict[str, bpy.types.Material]:
    return {
        "skin": writers.principled_material("Juggler Skin", (0.80, 0.58, 0.45, 1.0), roughness=0.6),
        "shirt": writers.principled_material("Juggler Shirt", (0.15, 0.32, 0.62, 1.0), roughness=0.8),
        "trousers": writers.principled_material("Juggler Trousers", (0.12, 0.12, 0.14, 1.0), roughness=0.8),
    }


_BONE_MATERIAL = {
    "head": "skin",
    "neck": "skin",
    "hand": "skin",
    "forearm": "skin",
    "thigh": "trousers",
    "shin": "trousers",
    "hips": "trousers",
}


def _write_juggler(
    context: bpy.types.Context,
    collection: bpy.types.Collection,
    result: JuggleBake,
    juggler: int,
    materials: dict[str, bpy.types.Material],
    interpolation: str,
) -> bpy.types.Object:
    pattern = result.pattern
    bones = rest_skeleton(pattern.body)
    name = f"Juggler {juggler + 1}"
    specs = [writers.BoneSpec(b.name, b.head, b.tail, b.parent, 0.0, b.connected) for b in bones]
    arm = writers.armature_from_bones(context, name, specs, collection)
    arm.location = pattern.juggler_origins[juggler]
    arm.rotation_euler = (0.0, 0.0, float(pattern.juggler_yaws[juggler]))
    arm.data.display_type = "STICK"
    for bone in bones:
        length = float(np.linalg.norm(np.subtract(bone.tail, bone.head)))
        kind = bone.name.split(".")[0]
        if kind == "head":
            vertices, faces = sphere(bone.radius)
            vertices = vertices + np.array([0.0, length * 0.45, 0.0])
        elif kind == "forearm":
            # Stop short of the palm point so a held ball is not swallowed by the wrist.
            vertices, faces = limb(bone.radius, length - _PALM_DROP)
        elif kind == "hand":
            # The palm lies under the held prop: the bone's local -Z points down the bent arm.
            vertices, faces = limb(bone.radius * 0.85, length + _PALM_DROP * 0.5)
            vertices = vertices + np.array([0.0, -_PALM_DROP, -_PALM_DROP])
        else:
            vertices, faces = limb(bone.radius, length)
        part = writers.new_object(
            f"{name} {bone.name}",
            writers.mesh_from_arrays(f"{name} {bone.name}", vertices, faces),
            collection,
        )
        part.parent = arm
        part.parent_type = "BONE"
        part.parent_bone = bone.name
        # Bone children sit at the bone's tail; shift back so the mesh's origin is the bone's head.
        part.location = (0.0, -length, 0.0)
        writers.assign_material(part, materials[_BONE_MATERIAL.get(kind, "shirt")])
        for polygon in part.data.polygons:
            polygon.use_smooth = True

    # Where the juggler stands at each key (a JML file may walk and turn it).
    frame_origins, frame_yaws = pattern.juggler_frames((result.frames - result.frames[0]) / result.fps)
    origin, yaw = frame_origins[juggler], frame_yaws[juggler]
    if pattern.root_motion and pattern.root_motion[juggler] is not None:
        group = "Object Transforms"
        writers.write_channels(arm, "location", result.frames, origin, group, interpolation)
        turns = np.column_stack([np.zeros_like(yaw), np.zeros_like(yaw), yaw])
        writers.write_channels(arm, "rotation_euler", result.frames, turns, group, interpolation)

    def to_local(points: np.ndarray) -> np.ndarray:
        d = points - origin
        c, s = np.cos(yaw), np.sin(yaw)
        return np.stack([c * d[:, 0] + s * d[:, 1], -s * d[:, 0] + c * d[:, 1], d[:, 2]], axis=-1)

    def rest(name: str) -> np.ndarray:
        return np.array(arm.data.bones[name].matrix_local.to_3x3())

    def key_rotation(bone_name: str, per_offset: list[np.ndarray]) -> None:
        q = continuous_quaternions(per_offset[0], axis=0)
        slopes = None
        if len(per_offset) == 3:
            slopes = (_aligned(per_offset[1], q) - _aligned(per_offset[2], q)) / (
                2 * _SLOPE_STEP * result.fps
            )
        arm.pose.bones[bone_name].rotation_mode = "QUATERNION"
        writers.write_channels(
            arm,
            writers.pose_bone_path(bone_name, "rotation_quaternion"),
            result.frames,
            q,
            bone_name,
            interpolation,
            slopes,
        )

    def basis(bone_name: str, parent_turn: np.ndarray, turn: np.ndarray) -> np.ndarray:
        """Pose quaternions of a bone whose armature-space turn is ``turn`` under a parent turned by
        ``parent_turn`` (both (T, 3, 3)): basis = rest^T parent^T turn rest."""
        r = rest(bone_name)
        return quaternion_from_matrix(r.T @ np.swapaxes(parent_turn, -1, -2) @ turn @ r)

    # The arms, solved from the moving shoulders, are written in the torso's moved frame.
    for hand in (LEFT, RIGHT):
        _, upper_name, fore_name, _ = arm_bone_names(hand)
        upper_rest, fore_rest = rest(upper_name), rest(fore_name)
        per_offset = []
        for (shoulders, elbows, hands), (torso, _) in zip(result.arm_points, result.body, strict=True):
            inverse = np.linalg.inv(torso[juggler])  # (T, 4, 4)
            local = []
            for points in (shoulders, elbows, hands):
                p = to_local(points[juggler, hand])
                local.append(np.einsum("tij,tj->ti", inverse[:, :3, :3], p) + inverse[:, :3, 3])
            per_offset.append(arm_pose_quaternions(*local, upper_rest, fore_rest))
        for which, bone_name in ((0, upper_name), (1, fore_name)):
            key_rotation(bone_name, [q[which] for q in per_offset])

    # Knee dip, torso sway and twist, head tracking, legs that keep the feet down.
    still = np.broadcast_to(np.eye(3), (len(result.frames), 3, 3))
    hips_rest = rest("hips")
    drops = [motion.hip_drop[juggler] for _, motion in result.body]
    lowered = [np.outer(-d, [0.0, 0.0, 1.0]) @ hips_rest for d in drops]  # armature -> bone space
    slopes = (lowered[1] - lowered[2]) / (2 * _SLOPE_STEP * result.fps) if len(lowered) == 3 else None
    writers.write_channels(
        arm,
        writers.pose_bone_path("hips", "location"),
        result.frames,
        lowered[0],
        "hips",
        interpolation,
        slopes,
    )
    spine, head, legs = [], [], {}
    for torso, motion in result.body:
        turn = torso[juggler, :, :3, :3]
        spine.append(basis("spine", still, turn))
        head.append(basis("head", turn, turn @ quaternion_to_matrix(motion.head[juggler])))
        for side in ("L", "R"):
            thigh_turn = _pitch(-motion.thigh[juggler])
            legs.setdefault(f"thigh.{side}", []).append(basis(f"thigh.{side}", still, thigh_turn))
            legs.setdefault(f"shin.{side}", []).append(
                basis(f"shin.{side}", thigh_turn, _pitch(motion.shin[juggler]))
            )
    key_rotation("spine", spine)
    key_rotation("head", head)
    for name, per_offset in legs.items():
        key_rotation(name, per_offset)
    return arm


#: Where a juggler's eyes are: ahead of and above the neck's top (armature space, metres), and how far
#: above level they look (the props fly up).
_EYE = (0.0, -0.10, 0.13)
_EYE_TILT = math.radians(10.0)


def _add_view_cameras(
    context: bpy.types.Context, collection: bpy.types.Collection, arms: list, pattern: Pattern
) -> None:
    """One camera per juggler of a passing pattern, on the head bone: that juggler's point of view."""
    context.view_layer.update()
    forward = np.array([0.0, -math.cos(_EYE_TILT), math.sin(_EYE_TILT)])
    right = np.array([-1.0, 0.0, 0.0])
    up = np.cross(right, forward)
    look = Matrix(np.column_stack([right, up, -forward]).tolist()).to_4x4()
    for number, arm in enumerate(arms, start=1):
        name = f"Juggler {number} View"
        data = bpy.data.cameras.new(name)
        data.lens = 18.0
        camera = writers.new_object(name, data, collection)
        camera.parent = arm
        camera.parent_type = "BONE"
        camera.parent_bone = "head"
        eye = Matrix.Translation((_EYE[0], _EYE[1], pattern.body.neck_height + _EYE[2]))
        context.view_layer.update()
        camera.matrix_world = arm.matrix_world @ eye @ look


def _pitch(angles: np.ndarray) -> np.ndarray:
    """Rotations (T, 3, 3) about the juggler's +X axis (positive tips -Y forward down)."""
    c, s = np.cos(angles), np.sin(angles)
    out = np.zeros((len(angles), 3, 3))
    out[:, 0, 0] = 1.0
    out[:, 1, 1], out[:, 1, 2] = c, -s
    out[:, 2, 1], out[:, 2, 2] = s, c
    return out


def _write_props(collection: bpy.types.Collection, result: JuggleBake, interpolation: str) -> None:
    pattern = result.pattern
    positions, slopes, rotations, rotation_slopes = (
        result.prop_positions,
        result.prop_slopes,
        result.prop_rotations,
        result.prop_rotation_slopes,
    )
    scale = 1.0
    if result.placement is not None:
        positions, slopes, rotations, rotation_slopes, scale = rig_targets.placed_props(result)
    vertices, faces = prop_mesh(pattern.prop_type, pattern.prop_size)
    label = pattern.prop_type.capitalize()
    for prop in range(pattern.num_props):
        if pattern.prop_colors is not None:
            color = (*pattern.prop_colors[prop], 1.0)
        else:
            hue = (prop * 0.618034) % 1.0
            color = (*colorsys.hsv_to_rgb(hue, 0.75, 0.95), 1.0)
        mesh = writers.mesh_from_arrays(f"{label} {prop + 1}", vertices, faces)
        for polygon in mesh.polygons:
            polygon.use_smooth = True
        obj = writers.new_object(f"{label} {prop + 1}", mesh, collection)
        obj.scale = (scale, scale, scale)
        writers.assign_material(
            obj, writers.principled_material(f"{label} {prop + 1}", color, roughness=0.35)
        )
        group = "Object Transforms"
        location_slopes = None if slopes is None else slopes[prop]
        writers.write_channels(
            obj, "location", result.frames, positions[prop], group, interpolation, location_slopes
        )
        if rotations is not None:
            obj.rotation_mode = "QUATERNION"
            writers.write_channels(
                obj,
                "rotation_quaternion",
                result.frames,
                rotations[prop],
                group,
                interpolation,
                None if rotation_slopes is None else rotation_slopes[prop],
            )


def _add_floor(collection: bpy.types.Collection, pattern: Pattern, placement: np.ndarray | None) -> None:
    extent = float(np.abs(pattern.juggler_origins[:, :2]).max()) + 3.0
    vertices = np.array(
        [[-extent, -extent, 0.0], [extent, -extent, 0.0], [extent, extent, 0.0], [-extent, extent, 0.0]]
    )
    floor = writers.new_object(
        "Floor", writers.mesh_from_arrays("Floor", vertices, [(0, 1, 2, 3)]), collection
    )
    writers.assign_material(
        floor, writers.principled_material("Floor", (0.55, 0.55, 0.52, 1.0), roughness=0.9)
    )
    if placement is not None:
        floor.matrix_world = Matrix(placement.tolist())


def _add_camera(scene: bpy.types.Scene, collection: bpy.types.Collection, result: JuggleBake) -> None:
    pattern = result.pattern
    points = [result.prop_positions.reshape(-1, 3)]
    for origin in pattern.juggler_origins:
        points.append(origin + np.array([[0.0, 0.0, 0.0], [0.0, 0.0, pattern.body.head_top]]))
        points.append(origin + np.array([[0.4, 0.4, 1.0], [-0.4, -0.4, 1.0]]))
    cloud = np.concatenate(points)
    if result.placement is not None:
        cloud = cloud @ result.placement[:3, :3].T + result.placement[:3, 3]
    direction = {1: (0.55, -1.0, 0.3), 2: (0.2, -1.0, 0.35)}.get(pattern.num_jugglers, (0.3, -1.0, 0.75))
    if result.placement is not None:
        direction = result.placement[:3, :3] @ np.asarray(direction)
    writers.add_camera_framing(scene, collection, cloud.min(axis=0), cloud.max(axis=0), direction=direction)


# ------------------------------------------------------------------------------------------ CLI


def add_cli(subparsers) -> None:
    parser = subparsers.add_parser(
        "juggle", help="a keyframed juggling scene from a siteswap", parents=[COMMON]
    )
    parser.add_argument("--siteswap", default="3", help="pattern, e.g. 531 or '<3p|3p>' (default 3)")
    parser.add_argument(
        "--beat-duration",
        type=float,
        default=None,
        help="seconds per beat (default: Juggling Lab's automatic beat)",
    )
    parser.add_argument("--dwell-ratio", type=float, default=1.3, help="beats in the hand (default 1.3)")
    parser.add_argument("--prop", choices=[item[0] for item in PROP_ITEMS], default="ball", help="prop type")
    parser.add_argument("--prop-size", type=float, default=1.0, help="prop scale (default 1)")
    parser.add_argument("--chicken-wing", type=float, default=0.0, help="elbow lift in degrees (default 0)")
    parser.add_argument("--loops", type=int, default=2, help="pattern repetitions to key (default 2)")
    parser.add_argument("--keys", choices=("frame", "bezier"), default="frame", help="key style")
    parser.add_argument("--dwell-path", default="", help="gunswap dwell path, e.g. '(30)(10)'")
    parser.add_argument(
        "--restitution", type=float, default=0.9, help="share of energy a bounce keeps (default 0.9)"
    )
    parser.add_argument(
        "--bounce-model",
        choices=("energy", "speed"),
        default="energy",
        help="--restitution scales energy or speed",
    )
    parser.add_argument("--squeeze-beats", type=float, default=0.4, help="squeeze catch spread in beats")
    parser.add_argument("--no-floor", action="store_true", help="leave out the floor plane")
    parser.add_argument(
        "--rig",
        help="juggle with your own armature instead of ProcAnim's figure: FILE.blend:OBJECT "
        "(comma-separated, one per juggler, for passing patterns), or 'rigify' for Blender's Rigify human",
    )
    parser.add_argument("--jml", type=Path, help="import this Juggling Lab .jml file instead of --siteswap")
    parser.add_argument("--jml-entry", type=int, default=1, help="which pattern of a .jml list (default 1)")
    parser.add_argument("--export-jml", type=Path, help="also save the pattern as a Juggling Lab .jml file")
    parser.set_defaults(run=_cli_juggle)


def _cli_juggle(args, context) -> None:
    jml_options = {"filepath": str(args.jml), "entry": args.jml_entry} if args.jml else {}
    if args.rig:
        jml_options["target_rig"] = ", ".join(rig_targets.load_cli_rigs(args.rig))
    call_operator(
        "procanim.import_jml" if args.jml else "procanim.juggle",
        **jml_options,
        siteswap=args.siteswap,
        auto_beat=args.beat_duration is None,
        beat_duration=0.3 if args.beat_duration is None else args.beat_duration,
        dwell_ratio=args.dwell_ratio,
        prop_type=args.prop,
        prop_size=args.prop_size,
        chicken_wing=math.radians(args.chicken_wing),
        loops=args.loops,
        key_style=args.keys.upper(),
        dwell_path=args.dwell_path,
        restitution=args.restitution,
        bounce_model=args.bounce_model.upper(),
        squeeze_beats=args.squeeze_beats,
        floor=not args.no_floor,
    )
    if args.export_jml:
        call_operator("procanim.export_jml", filepath=str(args.export_jml))


classes = (PROCANIM_OT_juggle,)
