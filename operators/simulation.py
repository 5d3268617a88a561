"""Verlet / shape-matching bakes: soft bodies cached as PC2 (or shape keys), rigid piles keyed as
object transforms, ropes baked onto bone chains, and the geometry tools (fit line / plane, Kabsch align).

All computation happens in ``addon.simulation`` before anything is written, so a diverging run or
bad input leaves the scene exactly as it was.
"""

# No "from __future__ import annotations": the panel reuses these property annotations as objects.
import re
from pathlib import Path

import bpy
import numpy as np
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty, StringProperty

from ..addon.geometry import GeometryError, fit_line, fit_plane, kabsch
from ..addon.geometry.rotation import matrix_to_quaternion
from ..addon.simulation import SimulationError, write_pc2
from ..addon.simulation.scenes import (
    Body,
    ColliderSurface,
    SimulationSettings,
    build_rigid_world,
    build_rope_world,
    build_softbody_world,
    chain_pose,
    icosphere,
    rigid_transforms,
    rope_rest_positions,
    run_frames,
)
from . import writers
from ._base import BakeOperator, ProcAnimOperator
from .cli import COMMON, call_operator

SOLVER_ITEMS = (
    ("GAUSS_SEIDEL", "Gauss-Seidel", "Constraints one after another: stiffer, converges faster"),
    ("JACOBI", "Jacobi", "Constraints averaged: order-independent and softer (squishier)"),
)
CACHE_ITEMS = (
    ("PC2", "PC2 File", "Write a PC2 point cache beside the .blend, played by a Mesh Cache modifier"),
    ("SHAPE_KEYS", "Shape Keys", "Store every frame as a shape key inside the .blend (larger file)"),
)
CACHE_MODIFIER = "ProcAnim Cache"
SHAPE_KEY_PREFIX = "ProcAnim "
DEFAULT_CACHE_DIRECTORY = "procanim_cache"
DEFAULT_ANCHORS = ("Rope Start", "Rope End")


# --------------------------------------------------------------------------- shared properties


class _SolverProperties:
    frame_count: IntProperty(
        name="Frames",
        description="How many frames to simulate, starting at the scene's start frame",
        default=72,
        min=1,
        max=10000,
    )
    substeps: IntProperty(
        name="Substeps",
        description="Small time steps per frame; more substeps make constraints stiffer and collisions safer",
        default=20,
        min=1,
        max=500,
    )
    iterations: IntProperty(
        name="Iterations",
        description="Constraint projections per substep (many substeps with one iteration is usually best)",
        default=1,
        min=1,
        max=50,
    )
    solver: EnumProperty(
        name="Solver", description="How constraints are projected", items=SOLVER_ITEMS, default="GAUSS_SEIDEL"
    )
    stretch_compliance: FloatProperty(
        name="Stretch Compliance",
        description="Softness of edges and rope links (XPBD compliance, m/N); 0 keeps them at rest length",
        default=0.0,
        min=0.0,
        soft_max=0.01,
        precision=5,
        step=0.01,
    )
    damping: FloatProperty(
        name="Damping",
        description="Fraction of velocity lost per second (air drag); 0 swings forever",
        default=0.1,
        min=0.0,
        max=0.99,
    )
    friction: FloatProperty(
        name="Friction",
        description="Coulomb friction against the ground and colliders (0 = ice)",
        default=0.5,
        min=0.0,
        soft_max=2.0,
    )
    particle_radius: FloatProperty(
        name="Particle Radius",
        description="Collision thickness of every particle (vertex) against colliders and other bodies",
        default=0.02,
        min=0.001,
        soft_max=0.5,
        unit="LENGTH",
    )
    use_ground: BoolProperty(
        name="Ground", description="Collide with an infinite horizontal ground plane", default=True
    )
    ground_height: FloatProperty(
        name="Ground Height", description="Height (z) of the ground plane", default=0.0, unit="LENGTH"
    )


class _SoftBodyProperties(_SolverProperties):
    use_volume: BoolProperty(
        name="Keep Volume",
        description="Keep the volume of closed meshes (a pressure constraint): jelly instead of cloth",
        default=True,
    )
    pressure: FloatProperty(
        name="Pressure",
        description="Target volume as a multiple of the rest volume (above 1 inflates)",
        default=1.0,
        min=0.1,
        max=5.0,
    )
    shape_stiffness: FloatProperty(
        name="Shape Stiffness",
        description="Pull towards the rest shape by shape matching (0 = off, 1 = rigid)",
        default=0.2,
        min=0.0,
        max=1.0,
    )
    shape_regions: BoolProperty(
        name="Local Clusters",
        description="One shape-matching cluster per vertex and its neighbours (wobbly), not one per mesh",
        default=False,
    )
    cache_mode: EnumProperty(
        name="Cache", description="Where the baked motion is stored", items=CACHE_ITEMS, default="PC2"
    )
    cache_directory: StringProperty(
        name="Cache Folder",
        description="Folder for PC2 caches; empty means a procanim_cache folder beside the .blend",
        default="",
        subtype="DIR_PATH",
    )


class _RopeProperties(_SolverProperties):
    links: IntProperty(
        name="Links", description="Number of rope segments (one bone each)", default=20, min=2, max=200
    )
    slack: FloatProperty(
        name="Slack",
        description="Rope length as a multiple of the distance between its two ends",
        default=1.25,
        min=1.0,
        max=5.0,
    )
    thickness: FloatProperty(
        name="Thickness", description="Radius of the rope's tube mesh", default=0.02, min=0.001, unit="LENGTH"
    )
    pin_end: BoolProperty(
        name="Pin Both Ends",
        description="Hold the rope at both anchors; off leaves the far end free to swing",
        default=True,
    )


def simulation_settings(op, context: bpy.types.Context, **overrides) -> SimulationSettings:
    """The domain settings from an operator's properties and the scene's frame rate."""
    render = context.scene.render
    values = {
        "frame_count": op.frame_count,
        "fps": render.fps / render.fps_base,
        "substeps": op.substeps,
        "iterations": op.iterations,
        "solver": op.solver.lower(),
        "stretch_compliance": op.stretch_compliance,
        "damping": op.damping,
        "friction": op.friction,
        "particle_radius": op.particle_radius,
        "use_ground": op.use_ground,
        "ground_height": op.ground_height,
    }
    values.update(overrides)
    return SimulationSettings(**values)


# --------------------------------------------------------------------------- reading Blender data


def _matrix(obj: bpy.types.Object) -> np.ndarray:
    return np.array(obj.matrix_world, dtype=np.float64)


def mesh_arrays(mesh: bpy.types.Mesh) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Local vertices ``(V,3)``, edges ``(E,2)`` and triangles ``(T,3)`` of a mesh."""
    vertices = writers.mesh_vertices(mesh)
    edges = np.empty(2 * len(mesh.edges), dtype=np.int32)
    mesh.edges.foreach_get("vertices", edges)
    mesh.calc_loop_triangles()
    triangles = np.empty(3 * len(mesh.loop_triangles), dtype=np.int32)
    mesh.loop_triangles.foreach_get("vertices", triangles)
    return vertices, edges.reshape(-1, 2).astype(np.int64), triangles.reshape(-1, 3).astype(np.int64)


def body_of(obj: bpy.types.Object) -> Body:
    """A simulation body from a mesh object's own vertices (modifiers ignored), in world space."""
    if obj.mode == "EDIT":  # edits live in the edit-mode copy until written back
        obj.update_from_editmode()
    vertices, edges, triangles = mesh_arrays(obj.data)
    if len(vertices) == 0:
        raise SimulationError(f"{obj.name!r} has no vertices; select meshes with geometry to simulate")
    matrix = _matrix(obj)
    return Body(obj.name, vertices @ matrix[:3, :3].T + matrix[:3, 3], edges, triangles)


def _sample_colliders(
    context: bpy.types.Context,
    chosen: list[bpy.types.Object],
    first_frame: int,
    frame_count: int,
    samples: dict[str, list[np.ndarray]],
    triangles: dict[str, np.ndarray],
) -> None:
    """Fill ``samples`` (world vertices on every bake frame) and ``triangles`` of each collider."""
    scene = context.scene
    for k in range(frame_count + 1):
        scene.frame_set(first_frame + k)
        depsgraph = context.evaluated_depsgraph_get()
        for obj in chosen:
            evaluated = obj.evaluated_get(depsgraph)
            mesh = evaluated.to_mesh()
            try:
                vertices, _, tris = mesh_arrays(mesh)
            finally:
                evaluated.to_mesh_clear()
            if k == 0:
                triangles[obj.name] = tris
            elif len(vertices) != len(samples[obj.name][0]):
                raise SimulationError(
                    f"collider {obj.name!r} changes its vertex count during the bake "
                    f"(frame {first_frame + k}); apply or disable the modifier that does it"
                )
            matrix = _matrix(obj)
            samples[obj.name].append(vertices @ matrix[:3, :3].T + matrix[:3, 3])


def collider_surfaces(
    context: bpy.types.Context, exclude: set[str], first_frame: int, frame_count: int
) -> list[ColliderSurface]:
    """Every visible mesh marked as a ProcAnim collider (modifiers applied), in world space.

    Colliders are sampled on every frame of the bake; one that moves or deforms gets a ``path``.
    """
    scene = context.scene
    chosen = [
        obj
        for obj in scene.objects
        if obj.type == "MESH"
        and obj.name not in exclude
        and obj.procanim.simulation.collider
        and obj.visible_get()  # hidden colliders are switched off, as in Blender's own physics
    ]
    if not chosen:
        return []
    samples: dict[str, list[np.ndarray]] = {obj.name: [] for obj in chosen}
    triangles: dict[str, np.ndarray] = {}
    frame_now = scene.frame_current
    try:
        _sample_colliders(context, chosen, first_frame, frame_count, samples, triangles)
    finally:
        scene.frame_set(frame_now)
    surfaces = []
    for obj in chosen:
        if len(triangles[obj.name]) == 0:
            continue
        path = np.array(samples[obj.name])
        moving = float(np.ptp(path, axis=0).max()) > 1e-9
        surfaces.append(
            ColliderSurface(
                obj.name,
                path[0],
                triangles[obj.name],
                obj.procanim.simulation.collider_friction,
                path=path if moving else None,
                first_frame=first_frame,
            )
        )
    return surfaces


def selected_meshes(context: bpy.types.Context) -> list[bpy.types.Object]:
    return sorted((o for o in context.selected_objects if o.type == "MESH"), key=lambda o: o.name)


def cache_folder(directory: str) -> tuple[Path, bool]:
    """The PC2 folder and whether it sits beside a saved .blend (False: Blender's temporary folder)."""
    if directory and (bpy.data.filepath or not directory.startswith("//")):
        return Path(bpy.path.abspath(directory)), True
    if bpy.data.filepath:
        return Path(bpy.path.abspath("//" + DEFAULT_CACHE_DIRECTORY)), True
    return Path(bpy.app.tempdir) / DEFAULT_CACHE_DIRECTORY, False


def _file_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name) + ".pc2"


# --------------------------------------------------------------------------- writing results


def _remove_procanim_shape_keys(obj: bpy.types.Object) -> None:
    keys = obj.data.shape_keys
    if keys is None:
        return
    for block in [b for b in keys.key_blocks if b.name.startswith(SHAPE_KEY_PREFIX)]:
        obj.shape_key_remove(block)
    if len(obj.data.shape_keys.key_blocks) == 1:  # only the Basis we added is left
        obj.shape_key_clear()


def _use_mesh_cache(obj: bpy.types.Object, path: Path, first_frame: int, saved: bool) -> bpy.types.Modifier:
    modifier = obj.modifiers.get(CACHE_MODIFIER)
    if modifier is None:
        modifier = obj.modifiers.new(CACHE_MODIFIER, "MESH_CACHE")
        # First in the stack: the cache replaces the base vertices, other modifiers then apply on top.
        obj.modifiers.move(len(obj.modifiers) - 1, 0)
    modifier.cache_format = "PC2"
    modifier.filepath = bpy.path.relpath(str(path)) if saved and bpy.data.filepath else str(path)
    modifier.time_mode = "FRAME"
    modifier.play_mode = "SCENE"
    modifier.frame_start = first_frame
    modifier.frame_scale = 1.0
    return modifier


def _write_shape_keys(obj: bpy.types.Object, local: np.ndarray, frames: np.ndarray) -> None:
    if obj.data.shape_keys is None:
        obj.shape_key_add(name="Basis", from_mix=False)
    key = obj.data.shape_keys
    for sample, frame in zip(local[1:], frames[1:], strict=True):
        block = obj.shape_key_add(name=f"{SHAPE_KEY_PREFIX}{int(frame):04d}", from_mix=False)
        block.data.foreach_set("co", sample.astype(np.float32).ravel())
        path = f'key_blocks["{bpy.utils.escape_identifier(block.name)}"].value'
        writers.write_channels(
            key,
            path,
            [frame - 1, frame, frame + 1],
            [0.0, 1.0, 0.0],
            group="ProcAnim Bake",
            interpolation="LINEAR",
        )


def _to_local(obj: bpy.types.Object, world_positions: np.ndarray) -> np.ndarray:
    inverse = np.linalg.inv(_matrix(obj))
    return world_positions @ inverse[:3, :3].T + inverse[:3, 3]


def _ground_plane(
    collection: bpy.types.Collection, size: float = 8.0, height: float = 0.0
) -> bpy.types.Object:
    half = size / 2
    verts = [(-half, -half, height), (half, -half, height), (half, half, height), (-half, half, height)]
    plane = writers.new_object(
        "Ground", writers.mesh_from_arrays("Ground", verts, [(0, 1, 2, 3)]), collection
    )
    writers.assign_material(plane, writers.principled_material("ProcAnim Ground", (0.35, 0.37, 0.4, 1.0)))
    return plane


def _stage(scene: bpy.types.Scene, collection: bpy.types.Collection, low, high) -> None:
    """A camera framing the box low-high and a sun, unless the scene already has a camera."""
    if scene.camera is None:
        writers.add_camera_framing(scene, collection, low, high)
        writers.add_sun(collection)


def _select_only(context: bpy.types.Context, objects: list[bpy.types.Object]) -> None:
    for obj in context.view_layer.objects:
        obj.select_set(False)
    for obj in objects:
        obj.select_set(True)
    context.view_layer.objects.active = objects[-1]


# --------------------------------------------------------------------------- soft bodies


class PROCANIM_OT_bake_softbody(_SoftBodyProperties, BakeOperator, bpy.types.Operator):
    """Simulate the selected meshes as soft bodies (edges, volume, shape matching) and cache the motion"""

    bl_idname = "procanim.bake_softbody"
    bl_label = "Bake Soft Body"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        if context.scene is None or not any(o.type == "MESH" for o in context.selected_objects):
            cls.poll_message_set("Select one or more mesh objects to bake (or click Add Jelly Drop first)")
            return False
        return True

    def bake(self, context: bpy.types.Context):
        objects = selected_meshes(context)
        settings = simulation_settings(
            self,
            context,
            use_volume=self.use_volume,
            pressure=self.pressure,
            shape_stiffness=self.shape_stiffness,
            shape_regions=self.shape_regions,
        )
        bodies = [body_of(o) for o in objects]
        first = context.scene.frame_start
        colliders = collider_surfaces(context, {o.name for o in objects}, first, settings.frame_count)
        folder, beside_blend = cache_folder(self.cache_directory)
        world, offsets, notes = build_softbody_world(bodies, colliders, settings)
        positions = np.empty((settings.frame_count + 1, world.particle_count, 3))
        positions[0] = world.positions
        for k, (frame, current) in enumerate(run_frames(world, settings, first), start=1):
            positions[k] = current
            yield k / settings.frame_count, f"frame {frame}"
        return {
            "names": [o.name for o in objects],
            "offsets": offsets,
            "positions": positions,
            "first": first,
            "notes": notes,
            "folder": folder,
            "beside_blend": beside_blend,
        }

    def write(self, context: bpy.types.Context, result) -> set[str]:
        objects = [bpy.data.objects[name] for name in result["names"]]
        offsets = result["offsets"]
        first = result["first"]
        frames = first + np.arange(len(result["positions"]))
        local = [
            _to_local(obj, result["positions"][:, offsets[k] : offsets[k + 1]])
            for k, obj in enumerate(objects)
        ]
        if self.cache_mode == "PC2":
            # Files first: a write error then leaves every object untouched.
            paths = [
                write_pc2(result["folder"] / _file_name(obj.name), samples, start_frame=first)
                for obj, samples in zip(objects, local, strict=True)
            ]
            for obj, path in zip(objects, paths, strict=True):
                _remove_procanim_shape_keys(obj)
                _use_mesh_cache(obj, path, first, result["beside_blend"])
        else:
            for obj, samples in zip(objects, local, strict=True):
                if (modifier := obj.modifiers.get(CACHE_MODIFIER)) is not None:
                    obj.modifiers.remove(modifier)
                _remove_procanim_shape_keys(obj)
                _write_shape_keys(obj, samples, frames)
        scene = context.scene
        if scene.frame_end < frames[-1]:
            scene.frame_end = int(frames[-1])
        where = "as shape keys" if self.cache_mode == "SHAPE_KEYS" else f"to {result['folder']}"
        message = f"Baked {len(frames) - 1} frames of {len(objects)} mesh(es) {where}"
        if result["notes"]:
            message += " (" + "; ".join(result["notes"]) + ")"
        if self.cache_mode == "PC2" and not result["beside_blend"]:
            self.report(
                {"WARNING"},
                message + ". Unsaved file: the cache is in a temporary folder; "
                "save the .blend and bake again to keep it beside the file",
            )
        else:
            self.report({"INFO"}, message)
        return {"FINISHED"}


class PROCANIM_OT_add_softbody_demo(ProcAnimOperator, bpy.types.Operator):
    """Add a jelly ball above a ground plane, selected and ready for Bake Soft Body"""

    bl_idname = "procanim.add_softbody_demo"
    bl_label = "Add Jelly Drop"
    bl_options = {"REGISTER", "UNDO"}

    radius: FloatProperty(
        name="Radius", description="Radius of the jelly ball", default=0.5, min=0.05, unit="LENGTH"
    )
    height: FloatProperty(
        name="Drop Height",
        description="Height of the ball's centre above the ground",
        default=1.5,
        min=0.0,
        unit="LENGTH",
    )
    subdivisions: IntProperty(
        name="Subdivisions",
        description="Icosphere subdivisions (3 gives 642 vertices)",
        default=3,
        min=1,
        max=5,
    )

    def run(self, context: bpy.types.Context) -> set[str]:
        if self.height < self.radius:
            raise SimulationError(
                f"drop height {self.height:g} m is below the radius {self.radius:g} m: "
                "the ball would start in the ground"
            )
        vertices, faces = icosphere(self.subdivisions, self.radius)
        collection = writers.generator_collection(context.scene, "Soft Body")
        _ground_plane(collection)
        mesh = writers.mesh_from_arrays("Jelly", vertices, faces)
        mesh.polygons.foreach_set("use_smooth", np.ones(len(faces), dtype=bool))
        jelly = writers.new_object("Jelly", mesh, collection)
        jelly.location = (0.0, 0.0, self.height)
        writers.assign_material(
            jelly,
            writers.principled_material(
                "ProcAnim Jelly", (0.1, 0.8, 0.3, 1.0), roughness=0.2, transmission=0.5
            ),
        )
        r = self.radius
        _stage(context.scene, collection, (-2 * r, -2 * r, 0.0), (2 * r, 2 * r, self.height + r))
        _select_only(context, [jelly])
        self.report({"INFO"}, "Added a jelly ball; press Bake Soft Body")
        return {"FINISHED"}


# --------------------------------------------------------------------------- rigid piles


def _decompose(matrices: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    locations = matrices[:, :3, 3]
    linear = matrices[:, :3, :3]
    scales = np.linalg.norm(linear, axis=1)
    rotations = linear / scales[:, None, :]
    return locations, matrix_to_quaternion(rotations), scales


class PROCANIM_OT_bake_rigid_pile(_SolverProperties, BakeOperator, bpy.types.Operator):
    """Drop the selected meshes as rigid bodies (shape-matched clusters) and key their motion"""

    bl_idname = "procanim.bake_rigid_pile"
    bl_label = "Bake Rigid Pile"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        if context.scene is None or not any(o.type == "MESH" for o in context.selected_objects):
            cls.poll_message_set("Select the mesh objects to pile up (or click Add Rigid Pile first)")
            return False
        return True

    def bake(self, context: bpy.types.Context):
        objects = selected_meshes(context)
        settings = simulation_settings(self, context)
        bodies = [body_of(o) for o in objects]
        first = context.scene.frame_start
        colliders = collider_surfaces(context, {o.name for o in objects}, first, settings.frame_count)
        world, samples, offsets = build_rigid_world(bodies, colliders, settings)
        positions = np.empty((settings.frame_count + 1, world.particle_count, 3))
        positions[0] = world.positions
        for k, (frame, current) in enumerate(run_frames(world, settings, first), start=1):
            positions[k] = current
            yield k / settings.frame_count, f"frame {frame}"
        motions = [
            rigid_transforms(samples[k], positions[:, offsets[k] : offsets[k + 1]])
            for k in range(len(objects))
        ]
        return {"names": [o.name for o in objects], "motions": motions, "first": first}

    def write(self, context: bpy.types.Context, result) -> set[str]:
        first = result["first"]
        for name, (rotations, shifts) in zip(result["names"], result["motions"], strict=True):
            obj = bpy.data.objects[name]
            start = _matrix(obj)
            motion = np.tile(np.eye(4), (len(rotations), 1, 1))
            motion[:, :3, :3] = rotations
            motion[:, :3, 3] = shifts
            world = motion @ start
            if obj.parent is not None:
                parent = np.array(obj.parent.matrix_world) @ np.array(obj.matrix_parent_inverse)
                world = np.linalg.inv(parent) @ world
            locations, quaternions, _ = _decompose(world)
            frames = first + np.arange(len(world))
            writers.write_object_transforms(obj, frames, locations=locations, quaternions=quaternions)
        count = len(result["motions"][0][0]) - 1
        if context.scene.frame_end < first + count:
            context.scene.frame_end = first + count
        self.report({"INFO"}, f"Baked {count} frames of {len(result['names'])} rigid bodies as keyframes")
        return {"FINISHED"}


class PROCANIM_OT_add_rigid_pile_demo(ProcAnimOperator, bpy.types.Operator):
    """Add a tumbling stack of cubes above a ground plane, selected and ready for Bake Rigid Pile"""

    bl_idname = "procanim.add_rigid_pile_demo"
    bl_label = "Add Rigid Pile"
    bl_options = {"REGISTER", "UNDO"}

    count: IntProperty(name="Cubes", description="How many cubes to drop", default=6, min=1, max=100)
    size: FloatProperty(
        name="Size", description="Edge length of each cube", default=0.4, min=0.05, unit="LENGTH"
    )
    seed: IntProperty(name="Seed", description="Random seed for the cubes' start poses", default=1, min=0)

    def run(self, context: bpy.types.Context) -> set[str]:
        rng = np.random.default_rng(self.seed)
        corners = (
            np.array([[i, j, k] for i in (0, 1) for j in (0, 1) for k in (0, 1)], float) - 0.5
        ) * self.size
        faces = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
        collection = writers.generator_collection(context.scene, "Rigid Pile")
        _ground_plane(collection)
        material = writers.principled_material("ProcAnim Crate", (0.8, 0.45, 0.15, 1.0), roughness=0.6)
        cubes = []
        for index in range(self.count):
            cube = writers.new_object(
                f"Crate.{index:03d}", writers.mesh_from_arrays("Crate", corners, faces), collection
            )
            # Two sizes apart: a cube turned any way reaches at most 0.87 sizes from its centre, so
            # no two start overlapping (an overlap would be resolved as a violent push).
            cube.location = (*rng.uniform(-0.3, 0.3, size=2) * self.size, (1.0 + 2.0 * index) * self.size)
            cube.rotation_euler = tuple(rng.uniform(-0.6, 0.6, size=3))
            writers.assign_material(cube, material)
            cubes.append(cube)
        reach = 3 * self.size  # frame where the pile lands, not where the cubes start
        _stage(context.scene, collection, (-reach, -reach, 0.0), (reach, reach, 1.5 * reach))
        _select_only(context, cubes)
        self.report({"INFO"}, f"Added {self.count} cubes; press Bake Rigid Pile")
        return {"FINISHED"}


# --------------------------------------------------------------------------- ropes


def _anchor(collection: bpy.types.Collection, name: str, location) -> bpy.types.Object:
    obj = bpy.data.objects.get(name)
    if obj is None or obj.type != "EMPTY":
        obj = writers.new_object(name, None, collection)
        obj.empty_display_type = "SPHERE"
        obj.empty_display_size = 0.08
        obj.location = location
    return obj


def _tube(points: np.ndarray, radius: float, sides: int = 8) -> tuple[np.ndarray, list[tuple[int, ...]]]:
    tangents = np.gradient(points, axis=0)
    tangents /= np.linalg.norm(tangents, axis=1, keepdims=True)
    helper = np.where(np.abs(tangents[:, 2:3]) < 0.9, [[0.0, 0.0, 1.0]], [[1.0, 0.0, 0.0]])
    normal = np.cross(tangents, helper)
    normal /= np.linalg.norm(normal, axis=1, keepdims=True)
    binormal = np.cross(tangents, normal)
    angles = np.linspace(0, 2 * np.pi, sides, endpoint=False)
    rings = points[:, None] + radius * (
        np.cos(angles)[None, :, None] * normal[:, None] + np.sin(angles)[None, :, None] * binormal[:, None]
    )
    faces = []
    for ring in range(len(points) - 1):
        for side in range(sides):
            a, b = ring * sides + side, ring * sides + (side + 1) % sides
            faces.append((a, b, b + sides, a + sides))
    faces.append(tuple(range(sides - 1, -1, -1)))
    last = (len(points) - 1) * sides
    faces.append(tuple(range(last, last + sides)))
    return rings.reshape(-1, 3), faces


class PROCANIM_OT_add_rope(_RopeProperties, BakeOperator, bpy.types.Operator):
    """Hang a rope between the two selected objects (or two new anchors), simulate it, bake it onto bones"""

    bl_idname = "procanim.add_rope"
    bl_label = "Add Rope"
    bl_options = {"REGISTER", "UNDO"}

    def bake(self, context: bpy.types.Context):
        scene = context.scene
        settings = simulation_settings(self, context)
        # The previous rope's rig and tube are replaced by this bake, so they can never be anchors.
        previous = scene.collection.children.get(writers.COLLECTION_PREFIX + "Rope")
        generated = set(previous.all_objects) if previous is not None else set()
        chosen = [o for o in context.selected_objects if o not in generated]
        active = context.view_layer.objects.active
        if len(chosen) == 2:
            end = active if active in chosen else chosen[1]
            start = chosen[0] if chosen[0] is not end else chosen[1]
            anchors = (start.name, end.name)
        elif all(bpy.data.objects.get(name) is not None for name in DEFAULT_ANCHORS):
            anchors = DEFAULT_ANCHORS  # the anchors of an earlier Add Rope, wherever the user moved them
        else:
            anchors = None
        first = scene.frame_start
        frame_now = scene.frame_current
        if anchors is not None:
            # Anchors may be animated: sample where they are on every frame of the bake.
            track = np.empty((2, settings.frame_count + 1, 3))
            for k in range(settings.frame_count + 1):
                scene.frame_set(first + k)
                for a, name in enumerate(anchors):
                    track[a, k] = np.array(bpy.data.objects[name].matrix_world.translation)
            scene.frame_set(frame_now)
        else:
            track = np.empty((2, settings.frame_count + 1, 3))
            track[0] = (-1.0, 0.0, 2.0)
            track[1] = (1.0, 0.0, 2.0)
        colliders = collider_surfaces(context, set(anchors or ()), first, settings.frame_count)
        points, _ = rope_rest_positions(track[0, 0], track[1, 0], self.links, self.slack)
        times = np.arange(settings.frame_count + 1) * settings.dt

        def follow(which: int):
            def position(time: float) -> np.ndarray:
                return np.array([[np.interp(time, times, track[which, :, axis]) for axis in range(3)]])

            return position

        world = build_rope_world(points, colliders, settings, follow(0), follow(1), self.pin_end)
        positions = np.empty((settings.frame_count + 1, len(points), 3))
        positions[0] = world.positions
        for k, (frame, current) in enumerate(run_frames(world, settings, first), start=1):
            positions[k] = current
            yield k / settings.frame_count, f"frame {frame}"
        return {"anchors": anchors, "positions": positions, "first": first}

    def write(self, context: bpy.types.Context, result) -> set[str]:
        scene = context.scene
        positions = result["positions"]
        rest = positions[0]
        if result["anchors"] is None:
            anchor_collection = writers.generator_collection(scene, "Rope Anchors", replace=False)
            _anchor(anchor_collection, DEFAULT_ANCHORS[0], rest[0])
            _anchor(anchor_collection, DEFAULT_ANCHORS[1], rest[-1])
        collection = writers.generator_collection(scene, "Rope")
        bones = [
            writers.BoneSpec(
                f"Link.{k:03d}",
                tuple(rest[k]),
                tuple(rest[k + 1]),
                parent=None if k == 0 else f"Link.{k - 1:03d}",
                connected=k > 0,
            )
            for k in range(len(rest) - 1)
        ]
        rig = writers.armature_from_bones(context, "Rope Rig", bones, collection)
        rig.data.display_type = "STICK"
        rest_rolls = np.array([np.array(bone.matrix_local)[:3, :3] for bone in rig.data.bones])
        local, root = chain_pose(rest, positions, rest_rolls)
        frames = result["first"] + np.arange(len(positions))
        for k, bone in enumerate(bones):
            writers.write_pose_quaternions(rig, bone.name, frames, local[:, k])
        writers.write_pose_locations(rig, bones[0].name, frames, root)
        vertices, faces = _tube(rest, self.thickness)
        tube = writers.new_object("Rope", writers.mesh_from_arrays("Rope", vertices, faces), collection)
        writers.assign_material(
            tube, writers.principled_material("ProcAnim Rope", (0.55, 0.4, 0.2, 1.0), roughness=0.8)
        )
        sides = len(vertices) // len(rest)
        for k, bone in enumerate(bones):
            group = tube.vertex_groups.new(name=bone.name)
            ring = list(range(k * sides, (k + 1) * sides))
            if k == len(bones) - 1:
                ring += list(range((k + 1) * sides, (k + 2) * sides))
            group.add(ring, 1.0, "REPLACE")
        modifier = tube.modifiers.new("Rope Rig", "ARMATURE")
        modifier.object = rig
        swept = positions.reshape(-1, 3)
        _stage(scene, collection, swept.min(axis=0), swept.max(axis=0))
        if scene.frame_end < frames[-1]:
            scene.frame_end = int(frames[-1])
        ends = "the selected objects" if result["anchors"] else "two new anchors"
        self.report({"INFO"}, f"Baked a {len(bones)}-link rope between {ends} over {len(frames) - 1} frames")
        return {"FINISHED"}


# --------------------------------------------------------------------------- geometry tools


def _selected_vertices_world(obj: bpy.types.Object) -> tuple[np.ndarray, bool]:
    if obj.mode == "EDIT":
        obj.update_from_editmode()
    mesh = obj.data
    vertices = writers.mesh_vertices(mesh)
    selected = np.empty(len(mesh.vertices), dtype=bool)
    mesh.vertices.foreach_get("select", selected)
    used_all = not selected.any()
    points = vertices if used_all else vertices[selected]
    matrix = _matrix(obj)
    return points @ matrix[:3, :3].T + matrix[:3, 3], used_all


def _frame_from_axes(origin, z_axis, x_hint=None) -> np.ndarray:
    z = np.asarray(z_axis, dtype=np.float64)
    hint = np.array([1.0, 0.0, 0.0]) if x_hint is None else np.asarray(x_hint, dtype=np.float64)
    if abs(hint @ z) > 0.9:
        hint = np.array([0.0, 1.0, 0.0])
    x = hint - z * (hint @ z)
    x /= np.linalg.norm(x)
    matrix = np.eye(4)
    matrix[:3, :3] = np.stack([x, np.cross(z, x), z], axis=1)
    matrix[:3, 3] = origin
    return matrix


class _MeshToolPoll:
    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        obj = context.active_object
        if obj is None or obj.type != "MESH":
            cls.poll_message_set("Make a mesh active; its selected vertices (or all of them) are fitted")
            return False
        return True


class PROCANIM_OT_fit_line(_MeshToolPoll, ProcAnimOperator, bpy.types.Operator):
    """Add an arrow empty along the best-fit line through the active mesh's selected vertices"""

    bl_idname = "procanim.fit_line"
    bl_label = "Fit Line"
    bl_options = {"REGISTER", "UNDO"}

    def run(self, context: bpy.types.Context) -> set[str]:
        obj = context.active_object
        points, used_all = _selected_vertices_world(obj)
        centroid, direction = fit_line(points)
        spread = np.abs((points - centroid) @ direction).max()
        collection = writers.generator_collection(context.scene, "Geometry", replace=False)
        empty = writers.new_object(f"{obj.name} Line", None, collection)
        empty.empty_display_type = "SINGLE_ARROW"
        empty.empty_display_size = max(spread, 1e-3)
        empty.matrix_world = _frame_from_axes(centroid, direction).T.tolist()
        which = "all" if used_all else "the selected"
        self.report({"INFO"}, f"Fitted a line to {which} {len(points)} vertices of {obj.name}")
        return {"FINISHED"}


class PROCANIM_OT_fit_plane(_MeshToolPoll, ProcAnimOperator, bpy.types.Operator):
    """Add a plane through the best-fit plane of the active mesh's selected vertices"""

    bl_idname = "procanim.fit_plane"
    bl_label = "Fit Plane"
    bl_options = {"REGISTER", "UNDO"}

    def run(self, context: bpy.types.Context) -> set[str]:
        obj = context.active_object
        points, used_all = _selected_vertices_world(obj)
        centroid, normal = fit_plane(points)
        _, primary = fit_line(points)
        frame = _frame_from_axes(centroid, normal, primary)
        local = (points - centroid) @ frame[:3, :3]
        low, high = local[:, :2].min(axis=0), local[:, :2].max(axis=0)
        corners = [
            (low[0], low[1], 0.0),
            (high[0], low[1], 0.0),
            (high[0], high[1], 0.0),
            (low[0], high[1], 0.0),
        ]
        collection = writers.generator_collection(context.scene, "Geometry", replace=False)
        plane = writers.new_object(
            f"{obj.name} Plane", writers.mesh_from_arrays("Fit Plane", corners, [(0, 1, 2, 3)]), collection
        )
        plane.matrix_world = frame.T.tolist()
        rms = float(np.sqrt(np.mean(local[:, 2] ** 2)))
        which = "all" if used_all else "the selected"
        self.report(
            {"INFO"},
            f"Fitted a plane to {which} {len(points)} vertices of {obj.name} (RMS distance {rms:.4g} m)",
        )
        return {"FINISHED"}


class PROCANIM_OT_align_kabsch(ProcAnimOperator, bpy.types.Operator):
    """Move the selected mesh rigidly onto the active mesh, matching vertices by index (Kabsch)"""

    bl_idname = "procanim.align_kabsch"
    bl_label = "Align by Kabsch"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        meshes = [o for o in context.selected_objects if o.type == "MESH"]
        active = context.active_object
        if len(meshes) != 2 or active not in meshes:
            cls.poll_message_set("Select the mesh to move, then the target mesh (active): two meshes")
            return False
        return True

    def run(self, context: bpy.types.Context) -> set[str]:
        target = context.active_object
        source = next(o for o in context.selected_objects if o.type == "MESH" and o is not target)
        source_points = writers.mesh_vertices(source.data)
        target_points = writers.mesh_vertices(target.data)
        if len(source_points) != len(target_points):
            raise GeometryError(
                f"{source.name!r} has {len(source_points)} vertices and "
                f"{target.name!r} has {len(target_points)}: "
                "Kabsch needs corresponding vertices (same mesh topology)"
            )
        source_matrix, target_matrix = _matrix(source), _matrix(target)
        source_world = source_points @ source_matrix[:3, :3].T + source_matrix[:3, 3]
        target_world = target_points @ target_matrix[:3, :3].T + target_matrix[:3, 3]
        rotation, shift = kabsch(source_world, target_world)
        motion = np.eye(4)
        motion[:3, :3], motion[:3, 3] = rotation, shift
        source.matrix_world = (motion @ source_matrix).T.tolist()
        moved = source_world @ rotation.T + shift
        rms = float(np.sqrt(np.mean(np.sum((moved - target_world) ** 2, axis=1))))
        self.report({"INFO"}, f"Aligned {source.name} onto {target.name} (RMS vertex distance {rms:.4g} m)")
        return {"FINISHED"}


classes = (
    PROCANIM_OT_bake_softbody,
    PROCANIM_OT_add_softbody_demo,
    PROCANIM_OT_bake_rigid_pile,
    PROCANIM_OT_add_rigid_pile_demo,
    PROCANIM_OT_add_rope,
    PROCANIM_OT_fit_line,
    PROCANIM_OT_fit_plane,
    PROCANIM_OT_align_kabsch,
)


# --------------------------------------------------------------------------- headless CLI


def add_cli(subparsers) -> None:
    parser = subparsers.add_parser(
        "simulate", help="a Verlet / shape-matching bake: jelly drop, rope or rigid pile", parents=[COMMON]
    )
    parser.add_argument(
        "--scene", choices=("jelly", "rope", "pile"), default="jelly", help="what to simulate"
    )
    parser.add_argument("--length", type=int, default=72, help="frames to simulate (default 72)")
    parser.add_argument("--substeps", type=int, default=20, help="substeps per frame (default 20)")
    parser.add_argument(
        "--solver", choices=("GAUSS_SEIDEL", "JACOBI"), default="GAUSS_SEIDEL", help="projection"
    )
    parser.add_argument(
        "--preset", help="a preset of presets/simulation.toml (jelly, rubber, rope, chain, stiff)"
    )
    parser.set_defaults(run=_cli_simulate)


def _cli_simulate(args, context) -> None:
    if args.preset:
        call_operator("procanim.apply_preset", kind="simulation", name=args.preset)
    settings = context.scene.procanim.simulation
    settings.frame_count = args.length
    settings.substeps = args.substeps
    settings.solver = args.solver
    shared = {key: getattr(settings, key) for key in _SolverProperties.__annotations__}
    writers.set_frame_range(context.scene, 1, args.length)
    if args.scene == "rope":
        call_operator("procanim.add_rope", links=settings.links, slack=settings.slack, **shared)
        return
    if args.scene == "pile":
        call_operator("procanim.add_rigid_pile_demo")
        call_operator("procanim.bake_rigid_pile", **shared)
        return
    call_operator("procanim.add_softbody_demo")
    folder = "" if args.out is None else str(args.out.resolve().parent / f"{args.out.stem}_cache")
    soft = {
        key: getattr(settings, key) for key in ("use_volume", "pressure", "shape_stiffness", "shape_regions")
    }
    call_operator("procanim.bake_softbody", cache_directory=folder, **soft, **shared)
