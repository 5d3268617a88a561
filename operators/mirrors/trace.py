"""Trace rays from a mirror's focus and draw them as (animated) curves."""

# No "from __future__ import annotations": the panel reuses these property annotations as objects.
import bpy
import numpy as np
from bpy.props import (
    BoolProperty,
    EnumProperty,
    FloatProperty,
    IntProperty,
)

from ...addon.optics import (
    BounceRecord,
    EllipsoidMirror,
    MeshSurface,
    OpticsError,
    TraceResult,
    cap_sample_directions,
    mesh_spot,
    spot_of_rays,
    trace_chain,
    trace_records,
)
from ...addon.optics.ellipsoid import unit_directions
from ...addon.optics.mirrors import cap_axis_towards
from ...addon.optics.slab import ClearSlab
from .. import writers
from .._base import BakeOperator
from .properties import FOCUS_ITEMS, PATTERN_ITEMS
from .recipes import RAYS_COLLECTION, _vector, focus_positions, mesh_of, mirror_objects, mirror_of

# --------------------------------------------------------------------------- tracing


def _target_mirror(context) -> bpy.types.Object | None:
    active = context.active_object
    if active is not None and active.type == "MESH" and active.procanim.mirror.mirror_type != "NONE":
        return active
    mirrors = mirror_objects(context.scene) if context.scene else []
    return mirrors[-1] if mirrors else None


def _chain_members(context, obj: bpy.types.Object) -> list[bpy.types.Object]:
    chain_id = obj.procanim.mirror.chain_id
    if not chain_id:
        return [obj]
    members = [o for o in mirror_objects(context.scene) if o.procanim.mirror.chain_id == chain_id]
    return sorted(members, key=lambda o: o.procanim.mirror.chain_index)


def _fresnel_rays(obj, pattern: str, count: int, from_second: bool, seed: int):
    recipe = obj.procanim.mirror
    first, second = focus_positions(obj)
    source = second if from_second else first
    normal = unit_directions(tuple(recipe.plate_normal), "plate normal")[0]
    # The fan lies in the plane of the two foci when they are not stacked along the plate normal.
    between = (second - first) - ((second - first) @ normal) * normal
    if np.linalg.norm(between) > 1e-9:
        across = between / np.linalg.norm(between)
    else:
        helper = np.array([1.0, 0.0, 0.0]) if abs(normal[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
        across = np.cross(helper, normal)
        across /= np.linalg.norm(across)
    other = np.cross(normal, across)
    if pattern == "FAN":
        offsets = np.linspace(-0.95, 0.95, count)[:, None] * across
    elif pattern == "CONE":
        angle = 2.0 * np.pi * np.arange(count) / count
        ring = 0.4 + 0.5 * (np.arange(count) % 2)
        offsets = ring[:, None] * (np.cos(angle)[:, None] * across + np.sin(angle)[:, None] * other)
    else:
        rng = np.random.default_rng(seed)
        radius, angle = np.sqrt(rng.random(count)) * 0.95, rng.random(count) * 2.0 * np.pi
        offsets = radius[:, None] * (np.cos(angle)[:, None] * across + np.sin(angle)[:, None] * other)
    targets = _vector(recipe.plate_point) + recipe.plate_radius * offsets
    return (
        np.repeat(source[None, :], count, axis=0),
        unit_directions(targets - source),
        source,
        (first if from_second else second),
    )


class PROCANIM_OT_trace_rays(BakeOperator, bpy.types.Operator):
    """Trace rays from a focus of the active mirror (or chain) and draw them as curves"""

    bl_idname = "procanim.trace_rays"
    bl_label = "Trace Rays"
    bl_options = {"REGISTER", "UNDO"}

    ray_pattern: EnumProperty(
        name="Pattern", description="How the rays spread", items=PATTERN_ITEMS, default="FAN"
    )
    ray_count: IntProperty(
        name="Rays", description="Number of rays to draw", default=24, min=1, max=20_000, soft_max=2000
    )
    from_focus: EnumProperty(
        name="From", description="Focus the rays start at", items=FOCUS_ITEMS, default="FIRST"
    )
    overshoot: FloatProperty(
        name="Overshoot",
        description="How far the rays run on past the focus they converge on, as a fraction of the path",
        default=0.15,
        min=0.0,
        max=2.0,
        subtype="FACTOR",
    )
    animate: BoolProperty(
        name="Animate",
        description="Let the light visibly travel along the rays over the frame range",
        default=True,
    )
    travel_frames: IntProperty(
        name="Travel Frames",
        description="Frames the light takes from source to the end of the rays",
        default=48,
        min=2,
        max=100_000,
    )
    seed: IntProperty(name="Seed", description="Random seed of the random bundle", default=0, min=0)

    @classmethod
    def poll(cls, context) -> bool:
        if context.scene is None or _target_mirror(context) is None:
            cls.poll_message_set("Add a mirror first (or make one active)")
            return False
        return True

    def bake(self, context):
        """Trace in chunks (a Fresnel plate is traced as a mesh, through its BVH), yielding progress."""
        obj = _target_mirror(context)
        recipe = obj.procanim.mirror
        pattern = self.ray_pattern.lower()
        from_second = self.from_focus == "SECOND"
        if recipe.mirror_type == "FRESNEL":
            origins, directions, source, target = _fresnel_rays(
                obj, self.ray_pattern, self.ray_count, from_second, self.seed
            )
            optics_mesh = mesh_of(obj)
            surfaces = [MeshSurface(optics_mesh)]
            if recipe.embed_in_slab:
                # Into the slab, off the zones, out again: refracted at both faces (or trapped).
                surfaces.append(
                    ClearSlab(
                        tuple(recipe.plate_point),
                        tuple(recipe.plate_normal),
                        recipe.plate_radius,
                        recipe.slab_thickness,
                        recipe.refractive_index,
                    )
                )
            members = [obj]
            chunk = 65536  # the BVH trace costs O(rays x log triangles)

            def trace_part(part_origins, part_directions):
                return trace_records(surfaces, part_origins, part_directions, bounces=len(surfaces) * 2 - 1)

            measure_mesh = optics_mesh
        else:
            members = _chain_members(context, obj)
            mirrors = [mirror_of(m) for m in members]
            targets = mirrors[0].cap_points(
                cap_sample_directions(mirrors[0], pattern, self.ray_count, self.seed)
            )
            if from_second:
                # Aim the backward rays at where the forward light lands on the last mirror: a
                # backward bundle filling the last cap would mostly miss the smaller footprints
                # upstream.
                forward = trace_chain(
                    mirrors, np.repeat(mirrors[0].foci[:1], len(targets), 0), targets - mirrors[0].foci[0]
                )
                landed = forward.records[-1]
                targets = landed.points[landed.hit]
                mirrors = [_reversed(m) for m in reversed(mirrors)]
            source, target = mirrors[0].foci[0], mirrors[-1].foci[1]
            origins = np.repeat(source[None, :], len(targets), axis=0)
            directions = unit_directions(targets - source, "rays")
            chunk = 65536

            def trace_part(part_origins, part_directions):
                return trace_chain(mirrors, part_origins, part_directions)

            measure_mesh = mesh_of(members[0]) if len(members) == 1 else None
        if len(origins) == 0:
            raise OpticsError(f"no ray from the focus reaches {obj.name!r}; check its aperture and side")
        member_names = [m.name for m in members]
        parts = []
        for start in range(0, len(origins), chunk):
            parts.append(trace_part(origins[start : start + chunk], directions[start : start + chunk]))
            yield min(0.9, (start + chunk) / len(origins) * 0.9), "tracing"
        mesh_measure = mesh_spot(measure_mesh, source, target) if measure_mesh is not None else None
        last = BounceRecord(
            t=np.concatenate([p.records[-1].t for p in parts]),
            points=np.concatenate([p.records[-1].points for p in parts]),
            normals=np.concatenate([p.records[-1].normals for p in parts]),
            hit=np.concatenate([p.records[-1].hit for p in parts]),
            surface=np.concatenate([p.records[-1].surface for p in parts]),
            directions=np.concatenate([p.records[-1].directions for p in parts]),
        )
        result = TraceResult(np.concatenate([p.paths for p in parts]), (last,))
        arrived = last.hit
        if not np.any(arrived):
            raise OpticsError(f"no ray from the focus reaches {obj.name!r}; check its aperture and side")
        path_before = np.linalg.norm(np.diff(result.paths[:, :-1], axis=1), axis=2).sum(axis=1)
        spot = spot_of_rays(last.points[arrived], last.directions[arrived], target, path_before[arrived])
        return {
            "result": result,
            "arrived": arrived,
            "target": target,
            "path_before": path_before,
            "spot": spot,
            "mesh_spot": mesh_measure,
            "members": member_names,
        }

    def write(self, context, traced) -> set[str]:
        result, arrived, spot = traced["result"], traced["arrived"], traced["spot"]
        # Each mirror (or chain) keeps its own rays: tracing another one leaves these alone.
        rays_name = f"{RAYS_COLLECTION}: {traced['members'][0]}"
        collection = writers.generator_collection(context.scene, rays_name, replace=True)
        curve_obj = _ray_curves(
            result, arrived, traced["target"], traced["path_before"], self.overshoot, collection
        )
        if self.animate:
            scene = context.scene
            start = scene.frame_start
            writers.write_channels(
                curve_obj.data,
                "bevel_factor_end",
                np.array([start, start + self.travel_frames - 1], dtype=np.float64),
                np.array([0.0, 1.0]),
            )
            if scene.frame_end < start + self.travel_frames - 1:
                writers.set_frame_range(scene, start, start + self.travel_frames - 1)
        mesh_measure = traced["mesh_spot"]
        for name in traced["members"]:
            measured = bpy.data.objects[name].procanim.mirror
            measured.spot_rms, measured.spot_max = spot.rms, spot.max
            measured.path_spread, measured.spot_rays = spot.path_spread, spot.rays
            if mesh_measure is not None:
                measured.mesh_spot_rms, measured.mesh_spot_max = mesh_measure.rms, mesh_measure.max
        reached = f"{int(arrived.sum())}/{len(arrived)}"
        self.report({"INFO"}, f"Traced {reached} rays: spot RMS {spot.rms:.3g} m, max {spot.max:.3g} m")
        return {"FINISHED"}


def _reversed(mirror: EllipsoidMirror) -> EllipsoidMirror:
    """The same cap with its foci swapped, so light runs from the second focus to the first."""
    from ...addon.optics import ellipsoid_from_foci

    ellipsoid = mirror.ellipsoid
    swapped = ellipsoid_from_foci(ellipsoid.foci[1], ellipsoid.foci[0], 2.0 * ellipsoid.semi_axes[0])
    cap_point = mirror.cap_points(mirror.cap_axis[None, :])[0]
    axis = cap_axis_towards(swapped, cap_point - swapped.center)
    return EllipsoidMirror(swapped, axis, mirror.aperture, mirror.kind)


def _ray_curves(result, arrived, target, path_before, overshoot: float, collection) -> bpy.types.Object:
    """One curve object, a poly spline per ray: source, every bounce, then on past the target.

    Every ray that arrives ends at the same optical path length, so with the bevel growing along each
    spline (mapping 'SPLINE') the light reaches the focus on all rays in the same frame.
    """
    paths = result.paths
    final_direction = result.final_directions
    last_points = result.records[-1].points
    along = np.einsum("ij,ij->i", target - last_points, final_direction)
    total = float(np.max(path_before[arrived] + along[arrived]))
    run_on = np.where(arrived, total * (1.0 + overshoot) - path_before, 0.5 * total)
    run_on = np.maximum(run_on, 1e-3)
    ends = last_points + run_on[:, None] * final_direction
    curve = bpy.data.curves.new("Light Rays", type="CURVE")
    curve.dimensions = "3D"
    curve.bevel_depth = max(total * 0.0015, 1e-4)
    curve.bevel_resolution = 1
    curve.bevel_factor_mapping_end = "SPLINE"
    for index in range(len(paths)):
        points = np.concatenate([paths[index, :-1], ends[index][None, :]])
        spline = curve.splines.new("POLY")
        spline.points.add(len(points) - 1)
        spline.points.foreach_set(
            "co", np.hstack([points, np.ones((len(points), 1))]).astype(np.float32).ravel()
        )
    curve.materials.append(
        writers.principled_material("Light Ray", (1.0, 0.85, 0.3, 1.0), roughness=1.0, emission=3.0)
    )
    return writers.new_object("Light Rays", curve, collection)
