"""Reading meshes and colliders out of Blender, and the writers and staging the simulation bakes share."""

import re
from pathlib import Path

import bpy
import numpy as np

from ...addon.simulation import SimulationError
from ...addon.simulation.scenes import Body, ColliderSurface
from .. import paths, writers
from ..preferences import preferences
from .properties import CACHE_MODIFIER, DEFAULT_CACHE_DIRECTORY, SHAPE_KEY_PREFIX

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
    if not np.all(np.isfinite(matrix)):
        raise SimulationError(f"{obj.name!r} has a NaN or infinite transform; fix its location or scale")
    # Baked positions go back into the object's own space through the inverse of its matrix.
    if abs(float(np.linalg.det(matrix[:3, :3]))) <= 1e-12:
        raise SimulationError(
            f"{obj.name!r} is scaled to zero along an axis (its transform cannot be inverted); "
            "give it a non-zero scale"
        )
    world = vertices @ matrix[:3, :3].T + matrix[:3, 3]
    if len(world) > 1 and float(np.ptp(world, axis=0).max()) <= 1e-9:
        raise SimulationError(f"all vertices of {obj.name!r} sit at one point; it has no shape to simulate")
    return Body(obj.name, world, edges, triangles)


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
    """The PC2 folder and whether it lasts (False: Blender's temporary folder, as the .blend is unsaved).

    An empty ``directory`` means the preferences' cache folder (``//procanim_cache`` by default).
    '//' is beside the saved .blend; while the file is unsaved it is inside the temporary folder.
    """
    if not directory:
        prefs = preferences()
        directory = (prefs.cache_directory if prefs is not None else "") or "//" + DEFAULT_CACHE_DIRECTORY
    if directory.strip() in ("//", "//./"):
        directory = "//" + DEFAULT_CACHE_DIRECTORY
    folder = paths.output_folder(directory, "Cache folder", unsaved_fallback=paths.temporary_folder())
    return folder, paths.blend_is_saved() or not directory.startswith("//")


def _file_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name) + ".pc2"


# --------------------------------------------------------------------------- writing results


def _remove_procanim_shape_keys(obj: bpy.types.Object) -> None:
    keys = obj.data.shape_keys
    if keys is None:
        return
    action = keys.animation_data.action if keys.animation_data else None
    for block in [b for b in keys.key_blocks if b.name.startswith(SHAPE_KEY_PREFIX)]:
        obj.shape_key_remove(block)
    if len(obj.data.shape_keys.key_blocks) == 1:  # only the Basis we added is left
        obj.shape_key_clear()
        # The keys' action goes with them, or every re-bake leaves an orphan action behind.
        if action is not None and action.users == 0:
            bpy.data.actions.remove(action)


def _use_mesh_cache(obj: bpy.types.Object, path: Path, first_frame: int) -> str | None:
    """Play ``path`` on ``obj`` through a Mesh Cache modifier; returns a warning when the path cannot be
    stored relative to the .blend (another drive), else None."""
    modifier = obj.modifiers.get(CACHE_MODIFIER)
    if modifier is None:
        modifier = obj.modifiers.new(CACHE_MODIFIER, "MESH_CACHE")
        # First in the stack: the cache replaces the base vertices, other modifiers then apply on top.
        obj.modifiers.move(len(obj.modifiers) - 1, 0)
    modifier.cache_format = "PC2"
    # Relative to a saved .blend so the cache travels with it; an unsaved file's cache (in the
    # temporary folder) is moved beside the .blend and relinked when it is first saved (portable.py).
    stored, warning = paths.stored_path(path)
    modifier.filepath = stored
    modifier.time_mode = "FRAME"
    modifier.play_mode = "SCENE"
    modifier.frame_start = first_frame
    modifier.frame_scale = 1.0
    return warning


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


def _stage(
    scene: bpy.types.Scene, collection: bpy.types.Collection, low, high, stage: writers.Stage | None = None
) -> None:
    """A camera framing the box low-high and a sun, where ``stage`` allows (default: no camera yet)."""
    if stage is None:
        stage = writers.Stage(camera=scene.camera is None, light=scene.camera is None, floor=False,
                              frame_range=False)
    if stage.camera:
        writers.add_camera_framing(scene, collection, low, high)
    if stage.light:
        writers.add_sun(collection)


def _place_on_ground(context: bpy.types.Context, collection: bpy.types.Collection) -> None:
    """Move a demo under the 3D cursor, on the simulation's ground (which stays at its height)."""
    x, y, _ = context.scene.cursor.location
    writers.place_instance(collection, (x, y, 0.0))


def _select_only(context: bpy.types.Context, objects: list[bpy.types.Object]) -> None:
    writers.select_only(context, objects, objects[-1])
