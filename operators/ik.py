"""IK arms: add a rigged arm with a target, bake CCD / FABRIK solves onto any bone chain, and
measure the closest points between two edges.

The chain's joint constraints come from the bones' own Blender IK settings (``lock_ik_*``,
``use_ik_limit_*``, ``ik_min_*`` / ``ik_max_*``): two locked axes make a hinge about the third,
and limits are read as XYZ Euler limits of the bone's local rotation. The same settings drive
Blender's IK constraint, so a rig behaves alike under both.
"""

from __future__ import annotations

import math
from collections.abc import Generator
from dataclasses import dataclass

import bpy
import numpy as np
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty, StringProperty
from mathutils import Matrix, Vector

from ..addon import limits
from ..addon.errors import ProcAnimError
from ..addon.geometry import closest_points_on_segments
from ..addon.kinematics import Chain, Solver, TrackResult, track
from . import rig as rig_targets
from . import writers
from ._base import BakeOperator, ProcAnimOperator
from .cli import COMMON, call_operator

SOLVER_ITEMS = (
    ("CCD", "CCD", "Quaternion cyclic coordinate descent, joint by joint from the tip; exact hinges"),
    ("FABRIK", "FABRIK", "Forwards and backwards reaching: fewest iterations; ball joints get no twist"),
)
JOINT_ITEMS = (
    ("MIXED", "Shoulder + Hinges", "A ball-jointed first bone, then hinges bending about each bone's X axis"),
    ("BALL", "Ball Joints", "Every joint turns freely (within the limit), like a tentacle"),
    ("HINGE_X", "Hinges (X)", "Every joint bends about its bone's X axis: a planar arm"),
    ("HINGE_Z", "Hinges (Z)", "Every joint bends about its bone's Z axis: a planar arm"),
)
_AXES = "xyz"
_CHUNK_FRAMES = 25
#: Blender's last frame (MAXFRAME).
MAX_FRAME = 1_048_574
#: Rotations, positions and errors kept per bone and frame, with the keys written from them (bytes).
IK_BYTES_PER_BONE_FRAME = 256.0
#: Solver work per wall-clock second on a busy 2-core machine; a frame whose target must be sampled
#: by evaluating the scene costs about as much as a thousand bone iterations.
IK_BONE_ITERATIONS_PER_SECOND = 1e6
IK_SCENE_EVALUATION_COST = 1000.0


class IKError(ProcAnimError):
    """The armature, chain or target cannot be baked as asked."""


# --------------------------------------------------------------------------- reading a rig


@dataclass(frozen=True)
class BoneChain:
    """A chain of pose bones (root first) as a solvable :class:`Chain` plus what maps it back."""

    bone_names: tuple[str, ...]
    chain: Chain
    root_head: np.ndarray  # rest head of the root bone, armature space
    parent_name: str | None  # the bone the chain hangs from, if any


def _quaternion(matrix: Matrix) -> tuple[float, float, float, float]:
    q = matrix.to_quaternion()
    return (q.w, q.x, q.y, q.z)


def bone_limits(pose_bone: bpy.types.PoseBone) -> tuple[np.ndarray | None, np.ndarray]:
    """(hinge axis or None, XYZ Euler limits (3, 2)) from a pose bone's Blender IK settings."""
    locked = [getattr(pose_bone, f"lock_ik_{a}") for a in _AXES]
    limits = np.tile([-math.pi, math.pi], (3, 1)).astype(np.float64)
    for index, axis in enumerate(_AXES):
        if locked[index]:
            limits[index] = (0.0, 0.0)
        elif getattr(pose_bone, f"use_ik_limit_{axis}"):
            limits[index] = (getattr(pose_bone, f"ik_min_{axis}"), getattr(pose_bone, f"ik_max_{axis}"))
    hinge = None
    if sum(locked) == 2:
        hinge = np.eye(3)[locked.index(False)]
    return hinge, limits


def chain_from_bones(armature: bpy.types.Object, tip_bone: str, length: int = 0) -> BoneChain:
    """The chain from ``tip_bone`` up ``length - 1`` parents (0: up to the root), in rest space."""
    bones = armature.data.bones
    tip = bones.get(tip_bone)
    if tip is None:
        raise IKError(f"armature {armature.name!r} has no bone named {tip_bone!r}")
    if length < 0:
        raise IKError(f"chain length must be at least 1 bone (0 for up to the root), got {length}")
    if length == 0:
        length = len(tip.parent_recursive) + 1
    names = [tip.name]
    bone = tip
    while len(names) < length:
        if bone.parent is None:
            raise IKError(
                f"bone {tip_bone!r} has only {len(names) - 1} parent(s); a chain of {length} bones "
                f"needs {length - 1}"
            )
        bone = bone.parent
        names.append(bone.name)
    names.reverse()
    chain_bones = [bones[n] for n in names]
    heads = np.array([b.head_local for b in chain_bones], dtype=np.float64)
    tail = np.array(chain_bones[-1].tail_local, dtype=np.float64)
    offsets = np.diff(np.vstack([heads, tail]), axis=0)
    rests = np.array([_quaternion(b.matrix_local) for b in chain_bones])
    axes = np.zeros((length, 3))
    limits = np.empty((length, 3, 2))
    for i, name in enumerate(names):
        hinge, limits[i] = bone_limits(armature.pose.bones[name])
        if hinge is not None:
            axes[i] = hinge
    parent = chain_bones[0].parent
    chain = Chain(offsets, axes=axes, limits=limits, rest_orientations=rests)
    return BoneChain(tuple(names), chain, heads[0], parent.name if parent else None)


def chain_base(armature: bpy.types.Object, bone_chain: BoneChain) -> Matrix:
    """World matrix of the chain's base frame now: origin at the root's head, axes of rest space
    turned by the parent bone's pose (scale removed)."""
    base = armature.matrix_world.copy()
    if bone_chain.parent_name is not None:
        parent = armature.pose.bones[bone_chain.parent_name]
        base = base @ parent.matrix @ parent.bone.matrix_local.inverted()
    base = base @ Matrix.Translation(Vector(bone_chain.root_head))
    location, rotation, _ = base.decompose()
    return Matrix.Translation(location) @ rotation.to_matrix().to_4x4()


def _to_chain_space(base: Matrix, point: Vector) -> tuple[float, float, float]:
    return tuple(base.inverted_safe() @ point)  # type: ignore[return-value]


# --------------------------------------------------------------------------- settings


def solver_properties() -> dict:
    """How a bake solves; shared by the operators, the sidebar and the armature's stored settings."""
    return dict(
        solver=EnumProperty(name="Solver", description="IK algorithm used for the bake", items=SOLVER_ITEMS),
        tolerance=FloatProperty(
            name="Tolerance",
            description="A frame is solved when the chain's tip is this close to the target",
            default=0.001,
            min=1e-6,
            soft_max=0.1,
            subtype="DISTANCE",
            unit="LENGTH",
        ),
        iterations_per_frame=IntProperty(
            name="Iterations per Frame",
            description="Solver sweeps allowed per frame; 1 lets the arm visibly catch up with a fast target",
            default=40,
            min=1,
            max=10000,
        ),
        annealing=BoolProperty(
            name="Annealing",
            description="When CCD gets stuck against a joint limit, retry from randomly kicked poses "
            "(simulated annealing) and keep the best",
            default=True,
        ),
    )


# --------------------------------------------------------------------------- add an arm


def add_arm_properties() -> dict:
    """The shape of a new arm; shared by the operator and the sidebar settings."""
    return dict(
        bone_count=IntProperty(
            name="Bones", description="Number of bones in the arm", default=3, min=1, max=64
        ),
        bone_length=FloatProperty(
            name="Bone Length",
            description="Length of the first bone",
            default=0.5,
            min=0.001,
            soft_max=5.0,
            subtype="DISTANCE",
            unit="LENGTH",
        ),
        length_falloff=FloatProperty(
            name="Length Falloff",
            description="Each bone is this fraction of its parent's length (below 1 tapers like a tentacle)",
            default=0.85,
            min=0.1,
            max=2.0,
        ),
        joint_type=EnumProperty(name="Joints", description="How the joints may turn", items=JOINT_ITEMS),
        limit_angle=FloatProperty(
            name="Joint Limit",
            description="Largest turn of each joint about each free axis, stored as the bones' IK limits "
            "(0 for no limits)",
            default=math.radians(120.0),
            min=0.0,
            max=math.pi,
            subtype="ANGLE",
        ),
        use_direction=BoolProperty(
            name="Direction Empty",
            description="Also add an arrow on the target; the last bone points along its Z axis (5-DoF)",
            default=False,
        ),
        animate_target=BoolProperty(
            name="Animate Target",
            description="Move the target on a loop over the scene's frame range so a bake shows motion",
            default=True,
        ),
        frame_count=IntProperty(
            name="Frames",
            description="Length of the target's loop in frames (sets the scene's frame range)",
            default=120,
            min=2,
            max=100000,
        ),
    )


def _arm_bones(count: int, length: float, falloff: float) -> list[writers.BoneSpec]:
    specs = []
    z = 0.0
    for i in range(count):
        bone_length = length * falloff**i
        specs.append(
            writers.BoneSpec(
                name=f"Arm.{i + 1:02d}",
                head=(0.0, 0.0, z),
                tail=(0.0, 0.0, z + bone_length),
                parent=f"Arm.{i:02d}" if i else None,
                connected=i > 0,
            )
        )
        z += bone_length
    return specs


def _set_bone_limits(pose_bone: bpy.types.PoseBone, joint: str, limit: float) -> None:
    hinge_axis = {"HINGE_X": "x", "HINGE_Z": "z"}.get(joint)
    for axis in _AXES:
        locked = hinge_axis is not None and axis != hinge_axis
        setattr(pose_bone, f"lock_ik_{axis}", locked)
        use_limit = limit > 0.0 and not locked
        setattr(pose_bone, f"use_ik_limit_{axis}", use_limit)
        if use_limit:
            setattr(pose_bone, f"ik_min_{axis}", -limit)
            setattr(pose_bone, f"ik_max_{axis}", limit)


def target_path(reach: float, frames: np.ndarray, start: int, end: int) -> np.ndarray:
    """A figure-of-eight loop in front of the arm, inside its reach, one lap over the range."""
    phase = 2.0 * math.pi * (frames - start) / max(end - start, 1)
    return np.stack(
        [
            0.35 * reach * np.sin(phase),
            0.40 * reach + 0.15 * reach * np.sin(2.0 * phase),
            0.50 * reach + 0.20 * reach * np.cos(phase),
        ],
        axis=1,
    )


def arm_skin(specs: list[writers.BoneSpec], sides: int = 8) -> tuple[np.ndarray, list[list[int]], np.ndarray]:
    """A tapered, capped tube per bone (rest pose): (vertices, faces, bone index per vertex)."""
    vertices, faces, owners = [], [], []
    angles = np.linspace(0.0, 2.0 * math.pi, sides, endpoint=False)
    ring = np.stack([np.cos(angles), np.sin(angles), np.zeros(sides)], axis=1)
    for index, spec in enumerate(specs):
        head, tail = np.array(spec.head), np.array(spec.tail)
        length = float(np.linalg.norm(tail - head))
        radius = 0.12 * length
        first = len(vertices)
        # Bones here run along +Z, so the rings lie in XY; a small gap shows each joint.
        for height, scale in ((0.04, 1.0), (0.96, 0.7)):
            vertices.extend(head + (tail - head) * height + ring * radius * scale)
        vertices.extend([head + (tail - head) * 0.0, tail])
        bottom, top = first + 2 * sides, first + 2 * sides + 1
        for k in range(sides):
            a, b = first + k, first + (k + 1) % sides
            faces.append([a, b, b + sides, a + sides])
            faces.append([b, a, bottom])
            faces.append([a + sides, b + sides, top])
        owners.extend([index] * (2 * sides + 2))
    return np.array(vertices), faces, np.array(owners)


def uv_sphere(radius: float, rings: int = 8, segments: int = 12) -> tuple[np.ndarray, list[list[int]]]:
    latitudes = np.linspace(0.0, math.pi, rings + 1)[1:-1]
    longitudes = np.linspace(0.0, 2.0 * math.pi, segments, endpoint=False)
    lat, lon = np.meshgrid(latitudes, longitudes, indexing="ij")
    body = np.stack([np.sin(lat) * np.cos(lon), np.sin(lat) * np.sin(lon), np.cos(lat)], axis=-1).reshape(
        -1, 3
    )
    vertices = np.vstack([[0.0, 0.0, 1.0], body, [0.0, 0.0, -1.0]]) * radius
    south = len(vertices) - 1
    faces = []
    for j in range(segments):
        k = (j + 1) % segments
        faces.append([0, 1 + j, 1 + k])
        faces.append([south, 1 + (rings - 2) * segments + k, 1 + (rings - 2) * segments + j])
        for i in range(rings - 2):
            a, b = 1 + i * segments, 1 + (i + 1) * segments
            faces.append([a + j, b + j, b + k, a + k])
    return vertices, faces


def _add_visuals(context, collection, armature, specs, target, reach: float, floor: bool = True) -> None:
    """Renderable stand-ins: armatures and empties do not render, meshes do."""
    vertices, faces, owners = arm_skin(specs)
    skin = writers.new_object(
        "IK Arm Skin", writers.mesh_from_arrays("IK Arm Skin", vertices, faces), collection
    )
    for index, spec in enumerate(specs):
        group = skin.vertex_groups.new(name=spec.name)
        group.add([int(v) for v in np.flatnonzero(owners == index)], 1.0, "REPLACE")
    skin.parent = armature
    skin.modifiers.new("Armature", "ARMATURE").object = armature
    writers.assign_material(skin, writers.principled_material("IK Arm", (0.85, 0.45, 0.12, 1.0), 0.3, 0.35))

    ball_vertices, ball_faces = uv_sphere(0.04 * reach)
    ball = writers.new_object(
        "IK Target Ball", writers.mesh_from_arrays("IK Target Ball", ball_vertices, ball_faces), collection
    )
    ball.parent = target
    writers.assign_material(
        ball, writers.principled_material("IK Target", (0.9, 0.1, 0.15, 1.0), emission=2.0)
    )

    if not floor:
        return
    half = 0.9 * reach
    floor_vertices = [(-half, -half, 0.0), (half, -half, 0.0), (half, half, 0.0), (-half, half, 0.0)]
    floor = writers.new_object(
        "IK Floor", writers.mesh_from_arrays("IK Floor", floor_vertices, [[0, 1, 2, 3]]), collection
    )
    writers.assign_material(
        floor, writers.principled_material("IK Floor", (0.5, 0.5, 0.52, 1.0), roughness=0.8)
    )
    if context.scene.world is None:
        world = bpy.data.worlds.new("IK World")
        world.color = (0.05, 0.06, 0.08)
        context.scene.world = world


class PROCANIM_OT_add_ik_arm(ProcAnimOperator, bpy.types.Operator):
    """Add an armature arm with hinge axes and joint limits, a target empty that moves, and the
    settings Bake IK needs"""

    bl_idname = "procanim.add_ik_arm"
    bl_label = "Add IK Arm"
    bl_options = {"REGISTER", "UNDO"}

    __annotations__ = {**add_arm_properties(), **solver_properties()}

    def run(self, context: bpy.types.Context) -> set[str]:
        scene = context.scene
        stage = writers.stage_for(context)
        specs = _arm_bones(self.bone_count, self.bone_length, self.length_falloff)
        reach = sum(self.bone_length * self.length_falloff**i for i in range(self.bone_count))
        collection = writers.new_instance(context, "IK Arm")
        armature = writers.armature_from_bones(context, "IK Arm", specs, collection)
        armature.show_in_front = True
        for index, spec in enumerate(specs):
            pose_bone = armature.pose.bones[spec.name]
            pose_bone.rotation_mode = "QUATERNION"
            joint = self.joint_type
            if joint == "MIXED":
                joint = "BALL" if index == 0 else "HINGE_X"
            _set_bone_limits(pose_bone, joint, self.limit_angle)

        target = writers.new_object("IK Target", None, collection)
        target.empty_display_type = "SPHERE"
        target.empty_display_size = 0.06 * reach
        start = scene.frame_start if self.animate_target else scene.frame_current
        end = start + self.frame_count - 1
        frames = np.arange(start, end + 1, dtype=np.float64)
        path = target_path(reach, frames, start, end)
        if self.animate_target:
            if stage.frame_range:
                writers.set_frame_range(scene, start, end)
            writers.write_object_transforms(target, frames, locations=path, interpolation="BEZIER")
        target.location = path[0]

        direction = None
        if self.use_direction:
            direction = writers.new_object("IK Direction", None, collection)
            direction.empty_display_type = "SINGLE_ARROW"
            direction.empty_display_size = 0.25 * reach
            direction.parent = target
            direction.rotation_euler = (-math.pi / 2.0, 0.0, 0.0)  # arrow (Z) pointing forward, +Y

        _add_visuals(context, collection, armature, specs, target, reach, floor=stage.floor)
        if stage.camera:
            writers.add_camera_framing(
                scene, collection, (-0.45 * reach, 0.0, 0.0), (0.45 * reach, 0.7 * reach, 0.9 * reach)
            )
        if stage.light:
            writers.add_sun(collection)
        writers.place_instance(collection, context.scene.cursor.location)

        settings = armature.procanim.ik
        settings.tip_bone = specs[-1].name
        settings.chain_length = self.bone_count
        settings.target = target
        settings.direction_target = direction
        settings.solver = self.solver
        settings.tolerance = self.tolerance
        settings.iterations_per_frame = self.iterations_per_frame
        settings.annealing = self.annealing

        writers.select_only(context, [armature], armature)
        self.report(
            {"INFO"}, f"Added a {self.bone_count}-bone IK arm, reach {reach:.3g} m; Bake IK solves it"
        )
        return {"FINISHED"}


# --------------------------------------------------------------------------- bake


@dataclass
class BakeJob:
    armature: bpy.types.Object
    bone_chain: BoneChain
    frames: np.ndarray
    result: TrackResult


_TRANSFORM_PATHS = {
    "location",
    "rotation_euler",
    "rotation_quaternion",
    "rotation_axis_angle",
    "scale",
    "delta_location",
    "delta_rotation_euler",
    "delta_rotation_quaternion",
    "delta_scale",
}


def _animated_paths(obj: bpy.types.Object) -> set[str]:
    anim = obj.animation_data
    if anim is None:
        return set()
    paths = {fc.data_path for fc in writers.fcurves_of(obj)}
    return paths | {driver.data_path for driver in anim.drivers}


def _base_is_static(armature: bpy.types.Object, bone_chain: BoneChain) -> bool:
    """True when the chain's base cannot move over time (no parents, constraints or keys on it)."""
    return (
        bone_chain.parent_name is None
        and armature.parent is None
        and not armature.constraints
        and not (_animated_paths(armature) & _TRANSFORM_PATHS)
    )


def _keyed_locations(obj: bpy.types.Object, frames: np.ndarray) -> np.ndarray | None:
    """World positions of ``obj`` at ``frames`` straight from its location keys, or None when
    anything else (a parent, a constraint, a driver, NLA strips) could move it."""
    if obj.parent is not None or obj.constraints:
        return None
    anim = obj.animation_data
    if anim is not None and (anim.drivers or anim.nla_tracks):
        return None
    curves = {fc.data_path: fc for fc in writers.fcurves_of(obj) if fc.data_path in _TRANSFORM_PATHS}
    if set(curves) - {"location"} or any(fc.data_path == "location" and fc.mute for fc in curves.values()):
        return None
    located = {fc.array_index: fc for fc in writers.fcurves_of(obj) if fc.data_path == "location"}
    positions = np.empty((len(frames), 3))
    for axis in range(3):
        curve = located.get(axis)
        if curve is None:
            positions[:, axis] = obj.location[axis]
        else:
            positions[:, axis] = [curve.evaluate(float(f)) for f in frames]
    return positions + np.array(obj.delta_location)


def _object_by_name(name: str, role: str) -> bpy.types.Object:
    obj = bpy.data.objects.get(name)
    if obj is None:
        raise IKError(f"no object named {name!r} for the {role}")
    return obj


class PROCANIM_OT_bake_ik(BakeOperator, bpy.types.Operator):
    """Solve the active armature's bone chain towards its target on every frame of a range and
    key the bones' quaternion rotations (other bones and keys outside the range stay as they were)"""

    bl_idname = "procanim.bake_ik"
    bl_label = "Bake IK"
    bl_options = {"REGISTER", "UNDO"}

    # Every property left unset falls back to the armature's stored IK settings (Object > ProcAnim).
    tip_bone: StringProperty(
        name="Tip Bone", description="Last bone of the chain (default: the armature's stored tip bone)"
    )
    chain_length: IntProperty(
        name="Chain Length",
        description="Number of bones from the tip bone up through its parents (0: up to the root)",
        default=0,
        min=0,
        max=255,
    )
    limb: EnumProperty(
        name="Limb",
        description="Pick the chain by its role in the armature's bone map (Rigify, Mixamo, Unreal, ...) "
        "instead of a tip bone",
        items=rig_targets.LIMB_ITEMS,
        default="NONE",
    )
    target: StringProperty(name="Target", description="Object the chain's tip reaches for (by name)")
    direction_target: StringProperty(
        name="Direction", description="Optional object whose Z axis the last bone points along (by name)"
    )
    frame_start: IntProperty(
        name="Start",
        description="First frame to bake (default: scene's)",
        default=1,
        min=-MAX_FRAME,
        max=MAX_FRAME,
    )
    frame_end: IntProperty(
        name="End",
        description="Last frame to bake (default: scene's)",
        default=250,
        min=-MAX_FRAME,
        max=MAX_FRAME,
    )
    __annotations__.update(solver_properties())

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        obj = context.active_object
        if obj is None or obj.type != "ARMATURE":
            cls.poll_message_set("Make an armature active (Add IK Arm makes one with a target)")
            return False
        return True

    def _setting(self, stored, name: str):
        if self.properties.is_property_set(name) or stored is None:
            return getattr(self, name)
        return getattr(stored, name)

    def bake(self, context: bpy.types.Context) -> Generator[float, None, BakeJob]:
        scene = context.scene
        armature = context.active_object
        if armature is None or armature.type != "ARMATURE":
            raise IKError("Bake IK needs an active armature: select the arm's armature object")
        stored = armature.procanim.ik if armature.procanim.ik.tip_bone else None

        tip_bone = self.tip_bone or (stored.tip_bone if stored else "")
        limb_length = None
        if self.limb != "NONE":
            tip_bone, limb_length = rig_targets.limb_chain(armature, self.limb)
        if not tip_bone:
            active = armature.data.bones.active
            if active is None:
                raise IKError(f"armature {armature.name!r}: choose a tip bone (none stored, none active)")
            tip_bone = active.name
        length = limb_length or self._setting(stored, "chain_length")
        bone_chain = chain_from_bones(armature, tip_bone, length)

        if self.target:
            target = _object_by_name(self.target, "target")
        elif stored is not None and stored.target is not None:
            target = stored.target
        else:
            raise IKError(f"armature {armature.name!r} has no IK target: set one in the IK panel")
        direction_object = None
        if self.direction_target:
            direction_object = _object_by_name(self.direction_target, "direction")
        elif stored is not None and not self.properties.is_property_set("direction_target"):
            direction_object = stored.direction_target
        if target == armature or direction_object == armature:
            raise IKError("the target must be another object than the armature itself")

        if self.properties.is_property_set("frame_start") or self.properties.is_property_set("frame_end"):
            start, end = self.frame_start, self.frame_end
        else:
            start, end = scene.frame_start, scene.frame_end
        if end < start:
            raise IKError(f"frame range {start}-{end} is empty: the end comes before the start")
        solver = self._setting(stored, "solver")
        tolerance = self._setting(stored, "tolerance")
        iterations = self._setting(stored, "iterations_per_frame")
        frame_count = end - start + 1
        bones = len(bone_chain.bone_names)
        what = f"baking {bones} bones over {frame_count} frames"
        hint = "bake a shorter frame range"
        limits.check_memory(what, float(frame_count) * bones, IK_BYTES_PER_BONE_FRAME, hint)
        limits.check_time(
            what + f" with up to {iterations} iterations each",
            float(frame_count) * (bones * iterations + IK_SCENE_EVALUATION_COST),
            IK_BONE_ITERATIONS_PER_SECOND,
            hint + " or allow fewer iterations per frame",
            limit=self.time_limit(),
        )
        annealing = self._setting(stored, "annealing")
        frames = np.arange(start, end + 1)

        scene.frame_set(start)
        pose_bones = [armature.pose.bones[n] for n in bone_chain.bone_names]
        warm = np.array([_quaternion(b.matrix_basis) for b in pose_bones], dtype=np.float64)
        directions = None
        base = chain_base(armature, bone_chain)
        target_path = _keyed_locations(target, frames)
        if direction_object is None and target_path is not None and _base_is_static(armature, bone_chain):
            # Nothing moves but the target's own keys: read them, skip evaluating the scene per frame.
            to_chain = np.array(base.inverted_safe(), dtype=np.float64)
            targets = target_path @ to_chain[:3, :3].T + to_chain[:3, 3]
        else:
            targets = np.empty((len(frames), 3))
            directions = None if direction_object is None else np.empty((len(frames), 3))
            for index, frame in enumerate(frames):
                scene.frame_set(int(frame))
                base = chain_base(armature, bone_chain)
                targets[index] = _to_chain_space(base, target.matrix_world.translation)
                if directions is not None:
                    aim = direction_object.matrix_world.to_3x3().normalized() @ Vector((0.0, 0.0, 1.0))
                    directions[index] = tuple(base.to_3x3().transposed() @ aim)
                if index % 200 == 199:
                    yield 0.2 * index / len(frames), "sampling the target"
        if not np.all(np.isfinite(targets)):
            raise IKError(f"target {target.name!r} has a non-finite position in frames {start}-{end}")

        parts = []
        pose = warm
        for first in range(0, len(frames), _CHUNK_FRAMES):
            chunk = slice(first, first + _CHUNK_FRAMES)
            part = track(
                bone_chain.chain,
                targets[chunk],
                solver=Solver(solver),
                rotations=pose,
                directions=None if directions is None else directions[chunk],
                tolerance=tolerance,
                iterations_per_frame=iterations,
                annealing=annealing,
                seed=first,
            )
            parts.append(part)
            pose = part.rotations[-1]
            yield 0.2 + 0.8 * min(first + _CHUNK_FRAMES, len(frames)) / len(frames), f"frame {start + first}"
        result = TrackResult(
            rotations=np.concatenate([p.rotations for p in parts]),
            positions=np.concatenate([p.positions for p in parts]),
            errors=np.concatenate([p.errors for p in parts]),
            iterations=np.concatenate([p.iterations for p in parts]),
            reachable=np.concatenate([p.reachable for p in parts]),
            direction_errors=np.concatenate([p.direction_errors for p in parts]),
        )
        return BakeJob(armature, bone_chain, frames, result)

    def write(self, context: bpy.types.Context, job: BakeJob) -> set[str]:
        result = job.result
        for index, name in enumerate(job.bone_chain.bone_names):
            writers.write_pose_quaternions(
                job.armature, name, job.frames, result.rotations[:, index], keep_outside=True
            )
        if self.limb != "NONE":
            rig_targets.use_fk_for_limb(job.armature, self.limb, job.frames)
        context.scene.frame_set(context.scene.frame_current)
        worst = int(np.argmax(result.errors))
        out_of_reach = int(np.sum(~result.reachable))
        message = (
            f"Baked {len(job.bone_chain.bone_names)} bones over {len(job.frames)} frames; worst miss "
            f"{result.errors[worst]:.4g} m at frame {int(job.frames[worst])}"
        )
        if result.direction_errors.any():
            message += f"; worst aim error {math.degrees(float(result.direction_errors.max())):.3g} deg"
        if out_of_reach:
            message += f"; target out of reach on {out_of_reach} frame(s)"
        overriding = [
            name
            for name in job.bone_chain.bone_names
            for constraint in job.armature.pose.bones[name].constraints
            if constraint.type == "IK" and constraint.enabled and constraint.influence > 0.0
        ]
        if overriding:
            message += f"; the IK constraint on {overriding[0]!r} still overrides these keys (mute it)"
        trouble = overriding or result.errors[worst] > self._tolerance(job)
        self.report({"WARNING"} if trouble else {"INFO"}, message)
        return {"FINISHED"}

    def _tolerance(self, job: BakeJob) -> float:
        stored = job.armature.procanim.ik if job.armature.procanim.ik.tip_bone else None
        return self._setting(stored, "tolerance")


# --------------------------------------------------------------------------- closest edge points


def _selected_edges(obj: bpy.types.Object) -> list[tuple[np.ndarray, np.ndarray]]:
    if obj.mode == "EDIT":
        obj.update_from_editmode()
    mesh = obj.data
    matrix = np.array(obj.matrix_world, dtype=np.float64)
    segments = []
    for edge in mesh.edges:
        if edge.select:
            ends = [np.append(np.array(mesh.vertices[v].co, dtype=np.float64), 1.0) for v in edge.vertices]
            segments.append(tuple((matrix @ end)[:3] for end in ends))
    return segments


class PROCANIM_OT_closest_edge_points(ProcAnimOperator, bpy.types.Operator):
    """Mark the closest points between the two selected edges of the active mesh with two empties
    and a measured line"""

    bl_idname = "procanim.closest_edge_points"
    bl_label = "Closest Points of Two Edges"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        obj = context.active_object
        if obj is None or obj.type != "MESH":
            cls.poll_message_set("Make a mesh active and select exactly two of its edges")
            return False
        return True

    def run(self, context: bpy.types.Context) -> set[str]:
        obj = context.active_object
        if obj is None or obj.type != "MESH":
            raise IKError("select a mesh with exactly two edges selected (edit mode or object mode)")
        segments = _selected_edges(obj)
        if len(segments) != 2:
            raise IKError(f"mesh {obj.name!r} has {len(segments)} selected edges; select exactly two")
        (a, b), (c, d) = segments
        p, q = closest_points_on_segments(a, b, c, d)
        distance = float(np.linalg.norm(q - p))
        collection = writers.generator_collection(context.scene, "Measure", replace=False)
        size = max(0.02, 0.05 * float(max(np.linalg.norm(b - a), np.linalg.norm(d - c))))
        for name, point in (("Closest A", p), ("Closest B", q)):
            empty = writers.new_object(name, None, collection)
            empty.empty_display_type = "SPHERE"
            empty.empty_display_size = size
            empty.location = point
        line = writers.mesh_from_arrays(f"Distance {distance:.4g} m", np.stack([p, q]), edges=[(0, 1)])
        line_object = writers.new_object(line.name, line, collection)
        line_object["distance"] = distance
        line_object.show_name = True
        self.report({"INFO"}, f"Closest distance between the edges: {distance:.6g} m")
        return {"FINISHED"}


# --------------------------------------------------------------------------- headless


def add_cli(subparsers) -> None:
    parser = subparsers.add_parser(
        "ik", help="an IK arm chasing an animated target, baked with CCD or FABRIK", parents=[COMMON]
    )
    parser.add_argument("--bones", type=int, default=3, help="bones in the arm (default 3)")
    parser.add_argument(
        "--joints", choices=[item[0] for item in JOINT_ITEMS], default="MIXED", help="joints (default MIXED)"
    )
    parser.add_argument("--solver", choices=("CCD", "FABRIK"), default="CCD", help="IK solver (default CCD)")
    parser.add_argument("--length", type=int, default=120, help="frames of target motion (default 120)")
    parser.add_argument("--direction", action="store_true", help="also aim the last bone (5-DoF)")
    parser.set_defaults(run=_cli_ik)


def _cli_ik(args, context) -> None:
    call_operator(
        "procanim.add_ik_arm",
        bone_count=args.bones,
        joint_type=args.joints,
        solver=args.solver,
        frame_count=args.length,
        use_direction=args.direction,
    )
    call_operator("procanim.bake_ik")


classes = (PROCANIM_OT_add_ik_arm, PROCANIM_OT_bake_ik, PROCANIM_OT_closest_edge_points)
