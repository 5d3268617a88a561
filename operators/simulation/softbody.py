"""Soft bodies: bake the selected meshes (edges, volume, shape matching) into a PC2 cache or shape keys."""

import bpy
import numpy as np
from bpy.props import FloatProperty, IntProperty

from ...addon.simulation import SimulationError, write_pc2
from ...addon.simulation.budget import check_bake_size
from ...addon.simulation.scenes import build_softbody_world, grid_sheet, icosphere, run_frames
from ...addon.simulation.substeps import SubstepLog
from .. import writers
from .._base import BakeOperator, ProcAnimOperator
from .blender_data import (
    _file_name,
    _ground_plane,
    _place_on_ground,
    _remove_procanim_shape_keys,
    _select_only,
    _stage,
    _to_local,
    _use_mesh_cache,
    _write_shape_keys,
    body_of,
    cache_folder,
    collider_surfaces,
    selected_meshes,
)
from .properties import CACHE_MODIFIER, _SoftBodyProperties, simulation_settings

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
            self_collision=self.self_collision,
        )
        bodies = [body_of(o) for o in objects]
        first = context.scene.frame_start
        colliders = collider_surfaces(context, {o.name for o in objects}, first, settings.frame_count)
        folder, beside_blend = cache_folder(self.cache_directory)
        world, offsets, notes = build_softbody_world(bodies, colliders, settings)
        constraints = len(world.distance_constraints[0])
        check_bake_size(
            "Soft body bake",
            settings,
            world.particle_count,
            constraints,
            self.time_limit(),
            strain_limited=world.strain_limiting,
        )
        positions = np.empty((settings.frame_count + 1, world.particle_count, 3))
        positions[0] = world.positions
        log = SubstepLog()
        for k, (frame, current) in enumerate(run_frames(world, settings, first, log), start=1):
            positions[k] = current
            yield k / settings.frame_count, f"frame {frame}"
        return {
            "names": [o.name for o in objects],
            "offsets": offsets,
            "positions": positions,
            "first": first,
            "notes": notes + ([log.summary()] if settings.auto_substeps else []),
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
            warnings = set()
            for obj, path in zip(objects, paths, strict=True):
                _remove_procanim_shape_keys(obj)
                warnings.add(_use_mesh_cache(obj, path, first))
            for warning in sorted(w for w in warnings if w):
                self.report({"WARNING"}, warning)
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
                message + ". Unsaved file: the cache is in a temporary folder until you save the .blend, "
                "which moves it beside the file",
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
        stage = writers.stage_for(context)
        collection = writers.new_instance(context, "Soft Body")
        if stage.floor:
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
        _stage(context.scene, collection, (-2 * r, -2 * r, 0.0), (2 * r, 2 * r, self.height + r), stage)
        _place_on_ground(context, collection)
        _select_only(context, [jelly])
        self.report({"INFO"}, "Added a jelly ball; press Bake Soft Body")
        return {"FINISHED"}


class PROCANIM_OT_add_sheet_demo(ProcAnimOperator, bpy.types.Operator):
    """Add a jelly sheet standing on its edge above a ground plane, selected and ready for Bake Soft Body
    with Self Collision: it topples and folds onto itself"""

    bl_idname = "procanim.add_sheet_demo"
    bl_label = "Add Jelly Sheet"
    bl_options = {"REGISTER", "UNDO"}

    size: FloatProperty(
        name="Size", description="Width and height of the square sheet", default=1.2, min=0.1, unit="LENGTH"
    )
    resolution: IntProperty(
        name="Resolution", description="Vertices along each side of the sheet", default=24, min=3, max=200
    )

    def run(self, context: bpy.types.Context) -> set[str]:
        flat, faces = grid_sheet(self.resolution, self.resolution, self.size, self.size)
        # Standing on its lower edge, leaning back, with gentle waves so it folds irregularly.
        side, up = flat[:, 0], flat[:, 1] + 0.5 * self.size + 0.05
        lean = 0.25 * (up - up.min()) + 0.04 * self.size * np.sin(6.0 * side / self.size) * np.sin(
            5.0 * up / self.size
        )
        vertices = np.stack((side, lean, up), axis=1)
        stage = writers.stage_for(context)
        collection = writers.new_instance(context, "Jelly Sheet")
        if stage.floor:
            _ground_plane(collection)
        mesh = writers.mesh_from_arrays("Jelly Sheet", vertices, faces)
        mesh.polygons.foreach_set("use_smooth", np.ones(len(faces), dtype=bool))
        sheet = writers.new_object("Jelly Sheet", mesh, collection)
        writers.assign_material(
            sheet,
            writers.principled_material(
                "ProcAnim Jelly", (0.1, 0.8, 0.3, 1.0), roughness=0.2, transmission=0.5
            ),
        )
        s = self.size
        _stage(context.scene, collection, (-s, -s, 0.0), (s, s, 1.1 * s), stage)
        _place_on_ground(context, collection)
        _select_only(context, [sheet])
        self.report(
            {"INFO"}, "Added a jelly sheet; Bake Soft Body with Self Collision on, Keep Volume and Shape off"
        )
        return {"FINISHED"}
