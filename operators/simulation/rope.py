"""Ropes: hang a simulated rope between two objects and bake it onto a bone chain with a tube mesh."""

import bpy
import numpy as np

from ...addon.simulation.budget import check_bake_size
from ...addon.simulation.scenes import build_rope_world, chain_pose, rope_rest_positions, run_frames
from .. import writers
from .._base import BakeOperator
from .blender_data import _stage, collider_surfaces
from .properties import DEFAULT_ANCHORS, _RopeProperties, simulation_settings

# --------------------------------------------------------------------------- ropes


ANCHOR_KEY = "procanim_rope_anchor"


def _anchor(collection: bpy.types.Collection, name: str, location) -> bpy.types.Object:
    obj = writers.new_object(name, None, collection)
    obj.empty_display_type = "SPHERE"
    obj.empty_display_size = 0.08
    obj.location = location
    obj[ANCHOR_KEY] = True
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
        self._stage = writers.stage_for(context)
        # Another rope's rig and tube bend with it, so they can never be anchors (its anchors can).
        chosen = [
            o
            for o in context.selected_objects
            if ANCHOR_KEY in o or writers.instance_of(o, "Rope") is None
        ]
        active = context.view_layer.objects.active
        if len(chosen) == 2:
            end = active if active in chosen else chosen[1]
            start = chosen[0] if chosen[0] is not end else chosen[1]
            anchors = (start.name, end.name)
        else:
            anchors = None  # two new anchors, either side of the 3D cursor
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
            cursor = np.array(scene.cursor.location)
            track = np.empty((2, settings.frame_count + 1, 3))
            track[0] = cursor + (-1.0, 0.0, 2.0)
            track[1] = cursor + (1.0, 0.0, 2.0)
        colliders = collider_surfaces(context, set(anchors or ()), first, settings.frame_count)
        points, _ = rope_rest_positions(track[0, 0], track[1, 0], self.links, self.slack)
        times = np.arange(settings.frame_count + 1) * settings.dt

        def follow(which: int):
            def position(time: float) -> np.ndarray:
                return np.array([[np.interp(time, times, track[which, :, axis]) for axis in range(3)]])

            return position

        world = build_rope_world(points, colliders, settings, follow(0), follow(1), self.pin_end)
        constraints = len(world.distance_constraints[0])
        check_bake_size("Rope bake", settings, world.particle_count, constraints, self.time_limit())
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
        stage = getattr(self, "_stage", None) or writers.stage_for(context)
        collection = writers.new_instance(context, "Rope")
        new_anchors = []
        if result["anchors"] is None:
            new_anchors = [
                _anchor(collection, DEFAULT_ANCHORS[0], rest[0]),
                _anchor(collection, DEFAULT_ANCHORS[1], rest[-1]),
            ]
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
        _stage(scene, collection, swept.min(axis=0), swept.max(axis=0), stage)
        if stage.frame_range and scene.frame_end < frames[-1]:
            scene.frame_end = int(frames[-1])
        writers.select_only(context, [rig, *new_anchors], rig)
        ends = "the selected objects" if result["anchors"] else "two new anchors"
        self.report({"INFO"}, f"Baked a {len(bones)}-link rope between {ends} over {len(frames) - 1} frames")
        return {"FINISHED"}
