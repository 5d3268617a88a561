"""Rigid piles: drop the selected meshes as shape-matched rigid bodies and key their transforms."""

import bpy
import numpy as np
from bpy.props import EnumProperty, FloatProperty, IntProperty

from ...addon.quaternions import from_matrix as matrix_to_quaternion
from ...addon.simulation.budget import check_bake_size
from ...addon.simulation.heaps import (
    CUBE_CORNERS,
    CUBE_FACES,
    POUR_CONTACTS,
    POUR_DROP,
    POUR_INTERVAL,
    pour_rolling_resistance,
)
from ...addon.simulation.scenes import build_rigid_world, rigid_transforms, run_frames
from ...addon.simulation.substeps import SubstepLog
from .. import writers
from .._base import BakeOperator, ProcAnimOperator
from .blender_data import (
    _ground_plane,
    _matrix,
    _place_on_ground,
    _select_only,
    _stage,
    body_of,
    collider_surfaces,
    selected_meshes,
)
from .properties import _RigidPileProperties, simulation_settings

# --------------------------------------------------------------------------- rigid piles


def _decompose(matrices: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    locations = matrices[:, :3, 3]
    linear = matrices[:, :3, :3]
    scales = np.linalg.norm(linear, axis=1)
    rotations = linear / scales[:, None, :]
    return locations, matrix_to_quaternion(rotations), scales


class PROCANIM_OT_bake_rigid_pile(_RigidPileProperties, BakeOperator, bpy.types.Operator):
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
        # Stacks need this many projections per frame to settle, so Substeps is the floor of the
        # automatic choice here, which only adds substeps for fast bodies (no tunnelling).
        settings = simulation_settings(self, context, min_substeps=self.substeps)
        bodies = [body_of(o) for o in objects]
        first = context.scene.frame_start
        colliders = collider_surfaces(context, {o.name for o in objects}, first, settings.frame_count)
        world, samples, offsets = build_rigid_world(bodies, colliders, settings)
        constraints = len(world.distance_constraints[0])
        check_bake_size("Rigid pile bake", settings, world.particle_count, constraints, self.time_limit())
        positions = np.empty((settings.frame_count + 1, world.particle_count, 3))
        positions[0] = world.positions
        log = SubstepLog()
        for k, (frame, current) in enumerate(run_frames(world, settings, first, log), start=1):
            positions[k] = current
            yield k / settings.frame_count, f"frame {frame}"
        motions = [
            rigid_transforms(samples[k], positions[:, offsets[k] : offsets[k + 1]])
            for k in range(len(objects))
        ]
        note = log.summary() if settings.auto_substeps else ""
        return {"names": [o.name for o in objects], "motions": motions, "first": first, "note": note}

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
        message = f"Baked {count} frames of {len(result['names'])} rigid bodies as keyframes"
        message += f" ({result['note']})" if result["note"] else ""
        if self.rigid_contacts != "SEQUENTIAL" and self.rolling_resistance > 0.0:
            # Body Fit contacts cannot roll, so the setting had nothing to act on: say so rather than
            # leave a script's value ignored in silence (the sidebar greys it out).
            self.report(
                {"WARNING"},
                f"{message}. Rolling Resistance {self.rolling_resistance:g} ignored: "
                "it applies with Sequential Contacts only",
            )
        else:
            self.report({"INFO"}, message)
        return {"FINISHED"}


ARRANGEMENTS = (
    ("POUR", "Pour", "Cubes waiting at one spout above the floor, poured one after another into a heap"),
    ("STACK", "Stack", "A tumbling column of cubes, all dropped at once"),
)


class PROCANIM_OT_add_rigid_pile_demo(ProcAnimOperator, bpy.types.Operator):
    """Add cubes above a ground plane (waiting at a spout, or a tumbling stack), selected and ready for Bake
    Rigid Pile"""

    bl_idname = "procanim.add_rigid_pile_demo"
    bl_label = "Add Rigid Pile"
    bl_options = {"REGISTER", "UNDO"}

    count: IntProperty(name="Cubes", description="How many cubes to drop", default=6, min=1, max=100)
    size: FloatProperty(
        name="Size", description="Edge length of each cube", default=0.4, min=0.05, unit="LENGTH"
    )
    seed: IntProperty(name="Seed", description="Random seed for the cubes' start poses", default=1, min=0)
    arrangement: EnumProperty(
        name="Arrangement", description="Where the cubes start", items=ARRANGEMENTS, default="POUR"
    )

    def run(self, context: bpy.types.Context) -> set[str]:
        rng = np.random.default_rng(self.seed)
        corners = CUBE_CORNERS * self.size
        stage = writers.stage_for(context)
        collection = writers.new_instance(context, "Rigid Pile")
        if stage.floor:
            _ground_plane(collection)
        material = writers.principled_material("ProcAnim Crate", (0.8, 0.45, 0.15, 1.0), roughness=0.6)
        cubes = []
        # A spout high enough for the heap the cubes make (about as high as a cone of their volume at
        # 30 degrees), with the cubes spread over a disc of a few sizes so they land all over its top.
        spout = self.size * (4.0 + 1.2 * self.count ** (1.0 / 3.0))
        for index in range(self.count):
            cube = writers.new_object(
                f"Crate.{index:03d}", writers.mesh_from_arrays("Crate", corners, CUBE_FACES), collection
            )
            if self.arrangement == "POUR":
                radius, angle = 1.5 * self.size * np.sqrt(rng.uniform()), rng.uniform(0.0, 2.0 * np.pi)
                # Lowest first: the pour releases them in order of height, one every Pour Interval.
                height = spout + 0.001 * self.size * index
                cube.location = (radius * np.cos(angle), radius * np.sin(angle), height)
                cube.rotation_euler = tuple(rng.uniform(-np.pi, np.pi, size=3))
            else:
                # Two sizes apart: a cube turned any way reaches at most 0.87 sizes from its centre, so
                # no two start overlapping.
                cube.location = (*rng.uniform(-0.3, 0.3, size=2) * self.size, (1.0 + 2.0 * index) * self.size)
                cube.rotation_euler = tuple(rng.uniform(-0.6, 0.6, size=3))
            writers.assign_material(cube, material)
            cubes.append(cube)
        reach = 3 * self.size  # frame where the pile lands, not where the cubes start
        if self.arrangement == "POUR":  # the heap: 50 cubes spread 1.8 m and stand 2.1 m at 0.4 m a cube
            reach = max(reach, 1.7 * self.size * self.count ** (1.0 / 3.0))
        _stage(context.scene, collection, (-reach, -reach, 0.0), (reach, reach, 1.5 * reach), stage)
        _place_on_ground(context, collection)
        _select_only(context, cubes)
        if self.arrangement == "POUR":
            # The sidebar's Bake Rigid Pile button then pours them (one every few frames, lowest first).
            settings = context.scene.procanim.simulation
            # The sidebar's Rigid Pile settings are the pour's (the user asked for a pour ready to bake;
            # the report names every one it set, and Undo restores them).
            settings.pour_interval = POUR_INTERVAL
            settings.pour_drop = POUR_DROP
            settings.rigid_contacts = POUR_CONTACTS.upper()
            settings.rolling_resistance = pour_rolling_resistance(settings.static_friction)
            # Each cube also waits until the one before has cleared the spout: up to four intervals
            # apiece (46 of 50 cubes had left after 700 frames), then six seconds to settle (the last
            # ones still slid and toppled three seconds after leaving).
            settings.frame_count = max(settings.frame_count, 4 * POUR_INTERVAL * self.count + 144)
            self.report(
                {"INFO"},
                f"Added {self.count} cubes at a spout; press Bake Rigid Pile to pour them (set Pour Interval "
                f"{settings.pour_interval}, Pour Drop {settings.pour_drop:.3g} m, Contacts Sequential, "
                f"Rolling Resistance {settings.rolling_resistance:g}, Frames {settings.frame_count})",
            )
        else:
            self.report({"INFO"}, f"Added {self.count} cubes; press Bake Rigid Pile")
        return {"FINISHED"}
