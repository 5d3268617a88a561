"""Geometry tools: best-fit line and plane through vertices, and rigid Kabsch alignment of two meshes."""

import bpy
import numpy as np

from ...addon.geometry import GeometryError, fit_line, fit_plane, kabsch
from .. import writers
from .._base import ProcAnimOperator
from .blender_data import _matrix

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
