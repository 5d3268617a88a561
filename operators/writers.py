"""Blender writers shared by every generator: keyframes, meshes, armatures, collections, materials.

Keyframes go in bulk (``keyframe_points.add`` + ``foreach_set``) and work on every supported
version: 4.2 has legacy actions with ``Action.fcurves``; 4.4+ has layered actions with slots and
channelbags, and 5.0 removed ``Action.fcurves`` altogether.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import bpy
import mathutils
import numpy as np
from numpy.typing import ArrayLike

from ..addon import quaternions as addon_quaternions
from ..addon.errors import ProcAnimError

COLLECTION_PREFIX = "ProcAnim "


def _enum_value(struct: type, prop: str, identifier: str) -> int:
    return struct.bl_rna.properties[prop].enum_items[identifier].value


# --------------------------------------------------------------------------- keyframes


def _is_layered(action: bpy.types.Action) -> bool:
    return hasattr(action, "layers")


def _channelbag(id_data: bpy.types.ID, ensure: bool):
    """The channelbag holding ``id_data``'s F-curves in a layered action (4.4+)."""
    anim = id_data.animation_data
    action = anim.action
    if anim.action_slot is None:
        if not ensure:
            return None
        anim.action_slot = action.slots.new(id_data.id_type, id_data.name)
    if len(action.layers) == 0:
        if not ensure:
            return None
        action.layers.new("Layer")
    layer = action.layers[0]
    if len(layer.strips) == 0:
        if not ensure:
            return None
        layer.strips.new(type="KEYFRAME")
    strip = layer.strips[0]
    if ensure:
        return strip.channelbag(anim.action_slot, ensure=True)
    return strip.channelbag(anim.action_slot)


def fcurve_ensure(id_data: bpy.types.ID, data_path: str, index: int = 0, group: str = "") -> bpy.types.FCurve:
    """The F-curve animating ``id_data.<data_path>[index]``, created (with its action) if needed."""
    anim = id_data.animation_data or id_data.animation_data_create()
    if anim.action is None:
        anim.action = bpy.data.actions.new(f"{id_data.name}Action")
    action = anim.action
    if not _is_layered(action):
        fcurve = action.fcurves.find(data_path, index=index)
        if fcurve is None:
            fcurve = action.fcurves.new(data_path, index=index, action_group=group)
        return fcurve
    bag = _channelbag(id_data, ensure=True)
    fcurve = bag.fcurves.find(data_path, index=index)
    if fcurve is None:
        fcurve = bag.fcurves.new(data_path, index=index)
        if group:
            fcurve.group = bag.groups.get(group) or bag.groups.new(group)
    return fcurve


def fcurves_of(id_data: bpy.types.ID) -> list[bpy.types.FCurve]:
    """Every F-curve animating ``id_data`` through its active action (and slot)."""
    anim = id_data.animation_data
    if anim is None or anim.action is None:
        return []
    if not _is_layered(anim.action):
        return list(anim.action.fcurves)
    bag = _channelbag(id_data, ensure=False)
    return list(bag.fcurves) if bag is not None else []


def write_fcurve(
    fcurve: bpy.types.FCurve,
    frames: ArrayLike,
    values: ArrayLike,
    interpolation: str = "LINEAR",
    slopes: ArrayLike | None = None,
    keep_outside: bool = False,
) -> None:
    """Replace the keys of ``fcurve`` with ``(frames, values)`` in one bulk write.

    ``slopes`` (value per frame) makes Bezier keys whose handles follow the true derivative, a
    third of the way to each neighbouring key. With ``keep_outside`` the keys before the first and
    after the last new frame are kept, so a bake over a range leaves the rest of the action alone.
    """
    frames = np.asarray(frames, dtype=np.float64).ravel()
    values = np.asarray(values, dtype=np.float64).ravel()
    if frames.shape != values.shape:
        raise ValueError(f"{len(frames)} frames but {len(values)} values for {fcurve.data_path}")
    if not (np.isfinite(frames).all() and np.isfinite(values).all()):
        raise ProcAnimError(f"refusing to write non-finite keys to {fcurve.data_path}[{fcurve.array_index}]")
    points = fcurve.keyframe_points
    if keep_outside and len(points) and len(frames):
        old = np.empty(2 * len(points), dtype=np.float32)
        points.foreach_get("co", old)
        old_frames, old_values = old[0::2].astype(np.float64), old[1::2].astype(np.float64)
        outside = (old_frames < frames.min() - 1e-6) | (old_frames > frames.max() + 1e-6)
        if slopes is not None:
            slopes = np.concatenate([np.zeros(outside.sum()), np.asarray(slopes, dtype=np.float64).ravel()])
        frames = np.concatenate([old_frames[outside], frames])
        values = np.concatenate([old_values[outside], values])
        order = np.argsort(frames, kind="stable")
        frames, values = frames[order], values[order]
        if slopes is not None:
            slopes = slopes[order]
    count = len(frames)
    points.clear()
    points.add(count)
    co = np.empty(2 * count, dtype=np.float32)
    co[0::2] = frames
    co[1::2] = values
    points.foreach_set("co", co)
    if slopes is None:
        points.foreach_set(
            "interpolation", np.full(count, _enum_value(bpy.types.Keyframe, "interpolation", interpolation))
        )
    else:
        _set_bezier_handles(points, frames, values, np.asarray(slopes, dtype=np.float64).ravel())
    fcurve.update()


def _set_bezier_handles(points, frames: np.ndarray, values: np.ndarray, slopes: np.ndarray) -> None:
    count = len(frames)
    if slopes.shape != frames.shape:
        raise ValueError(f"{len(slopes)} slopes for {count} keys")
    if not np.isfinite(slopes).all():
        raise ProcAnimError("refusing to write non-finite key slopes")
    gaps = np.diff(frames)
    left = np.concatenate([gaps[:1], gaps]) / 3.0 if count > 1 else np.ones(1)
    right = np.concatenate([gaps, gaps[-1:]]) / 3.0 if count > 1 else np.ones(1)
    handle_left = np.empty(2 * count, dtype=np.float32)
    handle_right = np.empty(2 * count, dtype=np.float32)
    handle_left[0::2] = frames - left
    handle_left[1::2] = values - slopes * left
    handle_right[0::2] = frames + right
    handle_right[1::2] = values + slopes * right
    points.foreach_set(
        "interpolation", np.full(count, _enum_value(bpy.types.Keyframe, "interpolation", "BEZIER"))
    )
    free = _enum_value(bpy.types.Keyframe, "handle_left_type", "FREE")
    points.foreach_set("handle_left_type", np.full(count, free))
    points.foreach_set("handle_right_type", np.full(count, free))
    points.foreach_set("handle_left", handle_left)
    points.foreach_set("handle_right", handle_right)


def write_channels(
    id_data: bpy.types.ID,
    data_path: str,
    frames: ArrayLike,
    values: ArrayLike,
    group: str = "",
    interpolation: str = "LINEAR",
    slopes: ArrayLike | None = None,
    keep_outside: bool = False,
) -> list[bpy.types.FCurve]:
    """Key ``id_data.<data_path>``: ``values`` is ``(T,)`` for a scalar or ``(T, k)`` for k channels."""
    values = np.asarray(values, dtype=np.float64)
    columns = values.reshape(len(values), -1)
    slope_columns = None if slopes is None else np.asarray(slopes, dtype=np.float64).reshape(columns.shape)
    is_vector = values.ndim == 2
    curves = []
    for index in range(columns.shape[1]):
        fcurve = fcurve_ensure(id_data, data_path, index if is_vector else 0, group)
        write_fcurve(
            fcurve,
            frames,
            columns[:, index],
            interpolation,
            None if slope_columns is None else slope_columns[:, index],
            keep_outside,
        )
        curves.append(fcurve)
    return curves


def continuous_quaternions(quaternions: ArrayLike) -> np.ndarray:
    """Flip signs so consecutive quaternions lie in one hemisphere (no spins when interpolating)."""
    return addon_quaternions.continuous(quaternions, axis=0)


def write_object_transforms(
    obj: bpy.types.Object,
    frames: ArrayLike,
    locations: ArrayLike | None = None,
    quaternions: ArrayLike | None = None,
    scales: ArrayLike | None = None,
    interpolation: str = "LINEAR",
    location_slopes: ArrayLike | None = None,
    keep_outside: bool = False,
) -> None:
    """Key an object's location ``(T,3)``, rotation (``(T,4)`` quaternions, w first) and scale."""
    group = "Object Transforms"
    if locations is not None:
        write_channels(
            obj, "location", frames, locations, group, interpolation, location_slopes, keep_outside
        )
    if quaternions is not None:
        obj.rotation_mode = "QUATERNION"
        q = continuous_quaternions(quaternions)
        write_channels(obj, "rotation_quaternion", frames, q, group, interpolation, keep_outside=keep_outside)
    if scales is not None:
        write_channels(obj, "scale", frames, scales, group, interpolation, keep_outside=keep_outside)


def pose_bone_path(bone_name: str, prop: str) -> str:
    """The data path of a pose bone property, with the bone name escaped."""
    return f'pose.bones["{bpy.utils.escape_identifier(bone_name)}"].{prop}'


def write_pose_quaternions(
    arm_obj: bpy.types.Object,
    bone_name: str,
    frames: ArrayLike,
    quaternions: ArrayLike,
    interpolation: str = "LINEAR",
    keep_outside: bool = False,
) -> None:
    """Key a pose bone's ``rotation_quaternion`` (``(T,4)``, w first), grouped under the bone."""
    arm_obj.pose.bones[bone_name].rotation_mode = "QUATERNION"
    q = continuous_quaternions(quaternions)
    path = pose_bone_path(bone_name, "rotation_quaternion")
    write_channels(arm_obj, path, frames, q, bone_name, interpolation, keep_outside=keep_outside)


def write_pose_locations(
    arm_obj: bpy.types.Object,
    bone_name: str,
    frames: ArrayLike,
    locations: ArrayLike,
    interpolation: str = "LINEAR",
    keep_outside: bool = False,
) -> None:
    """Key a pose bone's ``location`` (``(T,3)``, in the bone's rest frame)."""
    path = pose_bone_path(bone_name, "location")
    write_channels(arm_obj, path, frames, locations, bone_name, interpolation, keep_outside=keep_outside)


# --------------------------------------------------------------------------- meshes


def mesh_from_arrays(
    name: str,
    vertices: ArrayLike,
    faces: ArrayLike | Sequence[Sequence[int]] | None = None,
    edges: ArrayLike | None = None,
) -> bpy.types.Mesh:
    """A new mesh from ``vertices (V,3)``, ``faces`` (``(F,k)`` array or index lists), ``edges (E,2)``."""
    verts = np.asarray(vertices, dtype=np.float32).reshape(-1, 3)
    if not np.isfinite(verts).all():
        raise ProcAnimError(f"refusing to build mesh {name!r} from non-finite vertices")
    mesh = bpy.data.meshes.new(name)
    mesh.vertices.add(len(verts))
    mesh.vertices.foreach_set("co", verts.ravel())
    if edges is not None:
        edge_array = np.asarray(edges, dtype=np.int32).reshape(-1, 2)
        mesh.edges.add(len(edge_array))
        mesh.edges.foreach_set("vertices", edge_array.ravel())
    if faces is not None and len(faces):
        if isinstance(faces, np.ndarray) and faces.ndim == 2:
            sizes = np.full(len(faces), faces.shape[1], dtype=np.int32)
            flat = faces.astype(np.int32).ravel()
        else:
            sizes = np.fromiter((len(f) for f in faces), dtype=np.int32, count=len(faces))
            flat = np.fromiter((i for f in faces for i in f), dtype=np.int32, count=int(sizes.sum()))
        if flat.size and (flat.min() < 0 or flat.max() >= len(verts)):
            raise ValueError(f"mesh {name!r}: face index out of range for {len(verts)} vertices")
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int32)
        mesh.loops.add(len(flat))
        mesh.loops.foreach_set("vertex_index", flat)
        mesh.polygons.add(len(sizes))
        mesh.polygons.foreach_set("loop_start", starts)
        if "loop_total" in mesh.polygons[0].bl_rna.properties and not (
            mesh.polygons[0].bl_rna.properties["loop_total"].is_readonly
        ):
            mesh.polygons.foreach_set("loop_total", sizes)
    mesh.update(calc_edges=True)
    return mesh


def set_mesh_vertices(mesh: bpy.types.Mesh, vertices: ArrayLike) -> None:
    """Move the vertices of an existing mesh in one bulk write (same vertex count)."""
    verts = np.asarray(vertices, dtype=np.float32).reshape(-1, 3)
    if len(verts) != len(mesh.vertices):
        raise ValueError(f"mesh {mesh.name!r} has {len(mesh.vertices)} vertices, got {len(verts)}")
    if not np.isfinite(verts).all():
        raise ProcAnimError(f"refusing to write non-finite vertices to mesh {mesh.name!r}")
    mesh.vertices.foreach_set("co", verts.ravel())
    mesh.update()


def mesh_vertices(mesh: bpy.types.Mesh) -> np.ndarray:
    """The vertex positions of a mesh as ``(V,3)`` float64."""
    co = np.empty(3 * len(mesh.vertices), dtype=np.float32)
    mesh.vertices.foreach_get("co", co)
    return co.reshape(-1, 3).astype(np.float64)


# --------------------------------------------------------------------------- armatures


@dataclass(frozen=True)
class BoneSpec:
    """One bone to create: head and tail in armature space, metres."""

    name: str
    head: tuple[float, float, float]
    tail: tuple[float, float, float]
    parent: str | None = None
    roll: float = 0.0
    connected: bool = False
    deform: bool = True


def armature_from_bones(
    context: bpy.types.Context,
    name: str,
    bones: Iterable[BoneSpec],
    collection: bpy.types.Collection,
) -> bpy.types.Object:
    """A new armature object in ``collection`` with ``bones`` (parents listed before children)."""
    bones = list(bones)
    armature = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, armature)
    collection.objects.link(obj)
    view_layer = context.view_layer
    previous_active = view_layer.objects.active
    view_layer.objects.active = obj
    try:
        with context.temp_override(active_object=obj, object=obj, selected_objects=[obj]):
            bpy.ops.object.mode_set(mode="EDIT")
            try:
                for spec in bones:
                    edit_bone = armature.edit_bones.new(spec.name)
                    edit_bone.head = spec.head
                    edit_bone.tail = spec.tail
                    edit_bone.roll = spec.roll
                    edit_bone.use_deform = spec.deform
                    if spec.parent is not None:
                        parent = armature.edit_bones.get(spec.parent)
                        if parent is None:
                            raise ValueError(
                                f"bone {spec.name!r}: parent {spec.parent!r} is not defined before it"
                            )
                        edit_bone.parent = parent
                        edit_bone.use_connect = spec.connected
            finally:
                bpy.ops.object.mode_set(mode="OBJECT")
    finally:
        view_layer.objects.active = previous_active
    return obj


# --------------------------------------------------------------------------- objects, collections


def generator_collection(scene: bpy.types.Scene, name: str, replace: bool = True) -> bpy.types.Collection:
    """The collection "ProcAnim <name>" under the scene's master collection.

    With ``replace`` an existing one is emptied first (its objects, child collections and the data
    only they used are deleted), so running a generator again replaces its result.
    """
    full_name = name if name.startswith(COLLECTION_PREFIX) else COLLECTION_PREFIX + name
    collection = scene.collection.children.get(full_name)
    if collection is None:
        collection = bpy.data.collections.new(full_name)
        scene.collection.children.link(collection)
    elif replace:
        clear_collection(collection)
    return collection


INSTANCE_KEY = "procanim_generator"


def new_instance(context: bpy.types.Context, name: str) -> bpy.types.Collection:
    """A new, empty collection "ProcAnim <name>" for one Add (Blender numbers repeats: ``.001``).

    It goes into the active collection, as Blender's own Add does, unless that is another ProcAnim
    instance (then the scene's master collection), and is tagged so bakes can find the instance of
    a selected object.
    """
    full_name = name if name.startswith(COLLECTION_PREFIX) else COLLECTION_PREFIX + name
    collection = bpy.data.collections.new(full_name)
    collection[INSTANCE_KEY] = name.removeprefix(COLLECTION_PREFIX)
    parent = context.scene.collection
    layer = context.view_layer.active_layer_collection if context.view_layer else None
    if layer is not None and not layer.exclude and INSTANCE_KEY not in layer.collection:
        parent = layer.collection
    parent.children.link(collection)
    return collection


def instance_of(obj: bpy.types.Object | None, generator: str | None = None) -> bpy.types.Collection | None:
    """The ProcAnim instance collection ``obj`` belongs to (of ``generator``, if given), or None."""
    if obj is None:
        return None
    for collection in obj.users_collection:
        kind = collection.get(INSTANCE_KEY)
        if kind is not None and (generator is None or kind == generator):
            return collection
    if obj.parent is not None:
        return instance_of(obj.parent, generator)
    return None


def selected_instance(context: bpy.types.Context, generator: str) -> bpy.types.Collection | None:
    """The instance of ``generator`` the user means: the active object's, else a selected object's."""
    found = instance_of(context.active_object, generator)
    if found is None:
        for obj in getattr(context, "selected_objects", None) or ():
            found = instance_of(obj, generator)
            if found is not None:
                break
    return found


def place_instance(collection: bpy.types.Collection, offset: ArrayLike) -> None:
    """Move what an Add built around the origin to ``offset`` (the 3D cursor).

    Only objects without a parent move; their location keys move with them, so animation made
    around the origin plays at the cursor. Children follow their parents.
    """
    delta = np.asarray(offset, dtype=np.float64).reshape(3)
    if not np.isfinite(delta).all():
        raise ProcAnimError("the 3D cursor is not at a finite location")
    if not delta.any():
        return
    for obj in collection.all_objects:
        if obj.parent is not None:
            continue
        for fcurve in fcurves_of(obj):
            if fcurve.data_path == "location":
                _shift_keys(fcurve, float(delta[fcurve.array_index]))
        obj.location = np.asarray(obj.location) + delta


def _shift_keys(fcurve: bpy.types.FCurve, amount: float) -> None:
    points = fcurve.keyframe_points
    if not len(points) or amount == 0.0:
        return
    for attribute in ("co", "handle_left", "handle_right"):
        values = np.empty(2 * len(points), dtype=np.float32)
        points.foreach_get(attribute, values)
        values[1::2] += amount
        points.foreach_set(attribute, values)
    fcurve.update()


def select_only(context: bpy.types.Context, objects: Iterable[bpy.types.Object],
                active: bpy.types.Object | None = None) -> None:
    """Select exactly ``objects`` and make ``active`` the active object, as Blender's Add does."""
    view_layer = context.view_layer
    for obj in view_layer.objects:
        if obj.select_get():
            obj.select_set(False)
    for obj in objects:
        try:
            obj.select_set(True, view_layer=view_layer)
        except RuntimeError:  # not in this view layer (an excluded collection): leave it
            pass
    if active is not None:
        try:
            view_layer.objects.active = active
        except (RuntimeError, ValueError):
            pass


@dataclass(frozen=True)
class Stage:
    """What an Add may create besides the generator's own objects, decided before it adds anything.

    An empty scene gets a camera, a light, a floor and the frame range, so add-then-render works; a
    scene the user built keeps its camera, lights and frame range (a camera, and a sun if it has no
    light either, only where it has no camera), and no floor appears under their set.
    """

    camera: bool
    light: bool
    floor: bool
    frame_range: bool


def stage_for(context: bpy.types.Context) -> Stage:
    from .preferences import preferences

    scene = context.scene
    prefs = preferences(context)
    add_camera = prefs.add_camera if prefs is not None else True
    add_floor = prefs.add_floor if prefs is not None else True
    empty = len(scene.objects) == 0
    return Stage(
        camera=add_camera and scene.camera is None,
        # A scene with a camera is set up for rendering already: its lighting is the user's.
        light=add_camera and scene.camera is None and not any(obj.type == "LIGHT" for obj in scene.objects),
        floor=add_floor and empty,
        frame_range=empty,
    )


def clear_collection(collection: bpy.types.Collection) -> None:
    """Delete everything in ``collection`` (recursively) and the data nothing else uses."""
    objects = list(collection.all_objects)
    children = _child_collections(collection)
    owned: list[bpy.types.ID] = []
    for obj in objects:
        owned.extend(_data_of(obj))
    bpy.data.batch_remove([*objects, *children])
    # Materials are used by meshes, so a second pass finds what the first one orphaned.
    pending = {d.as_pointer(): d for d in owned if d is not None}
    while True:
        orphans = [d for d in pending.values() if d.users == 0]
        if not orphans:
            break
        for d in orphans:
            del pending[d.as_pointer()]
        bpy.data.batch_remove(orphans)
    # Deleting objects leaves stale (None) entries in the view layer's object list until it resyncs,
    # and selecting or activating objects afterwards trips over them.
    view_layer = getattr(bpy.context, "view_layer", None)
    if objects and view_layer is not None:
        view_layer.update()


def _child_collections(collection: bpy.types.Collection) -> list[bpy.types.Collection]:
    found = []
    for child in collection.children:
        found.append(child)
        found.extend(_child_collections(child))
    return found


def _data_of(obj: bpy.types.Object) -> list[bpy.types.ID]:
    ids: list[bpy.types.ID] = []
    if obj.animation_data and obj.animation_data.action:
        ids.append(obj.animation_data.action)
    data = obj.data
    if data is not None:
        ids.append(data)
        anim = getattr(data, "animation_data", None)
        if anim and anim.action:
            ids.append(anim.action)
        keys = getattr(data, "shape_keys", None)
        if keys and keys.animation_data and keys.animation_data.action:
            ids.append(keys.animation_data.action)
        ids.extend(m for m in getattr(data, "materials", ()) if m is not None)
    return ids


def new_object(name: str, data: bpy.types.ID | None, collection: bpy.types.Collection) -> bpy.types.Object:
    """A new object (an empty when ``data`` is None) linked into ``collection``."""
    obj = bpy.data.objects.new(name, data)
    collection.objects.link(obj)
    return obj


def principled_material(
    name: str,
    color: Sequence[float] = (0.8, 0.8, 0.8, 1.0),
    metallic: float = 0.0,
    roughness: float = 0.5,
    transmission: float = 0.0,
    emission: float = 0.0,
) -> bpy.types.Material:
    """A Principled BSDF material; its viewport colour matches, so Workbench renders it too."""
    rgba = (*color[:3], color[3] if len(color) > 3 else 1.0)
    material = bpy.data.materials.new(name)
    material.diffuse_color = rgba
    material.metallic = metallic
    material.roughness = roughness
    if material.node_tree is None:  # before 5.0 a new material has no node tree yet
        material.use_nodes = True
    bsdf = next(n for n in material.node_tree.nodes if n.type == "BSDF_PRINCIPLED")
    inputs = bsdf.inputs
    inputs["Base Color"].default_value = rgba
    inputs["Metallic"].default_value = metallic
    inputs["Roughness"].default_value = roughness
    transmission_input = inputs.get("Transmission Weight") or inputs.get("Transmission")
    if transmission_input is not None:
        transmission_input.default_value = transmission
    if emission > 0.0:
        (inputs.get("Emission Color") or inputs["Emission"]).default_value = rgba
        inputs["Emission Strength"].default_value = emission
    return material


def assign_material(obj: bpy.types.Object, material: bpy.types.Material) -> None:
    """Give ``obj``'s data ``material`` as its only material."""
    obj.data.materials.clear()
    obj.data.materials.append(material)


def set_frame_range(scene: bpy.types.Scene, start: int, end: int, fps: int | None = None) -> None:
    """Set the scene's frame range (and frame rate)."""
    if end < start:
        raise ValueError(f"frame range {start}-{end} is empty")
    scene.frame_start = int(start)
    scene.frame_end = int(end)
    if fps is not None:
        scene.render.fps = int(fps)
        scene.render.fps_base = 1.0


def add_camera_framing(
    scene: bpy.types.Scene,
    collection: bpy.types.Collection,
    bounds_min: ArrayLike,
    bounds_max: ArrayLike,
    direction: ArrayLike = (0.35, -1.0, 0.45),
    lens: float = 40.0,
    name: str = "Camera",
) -> bpy.types.Object:
    """An active camera looking at the box ``bounds_min``-``bounds_max`` from ``direction``, fitting it."""
    lo = np.asarray(bounds_min, dtype=np.float64)
    hi = np.asarray(bounds_max, dtype=np.float64)
    centre = (lo + hi) / 2.0
    radius = max(float(np.linalg.norm(hi - lo)) / 2.0, 1e-3)
    view = np.asarray(direction, dtype=np.float64)
    view = view / np.linalg.norm(view)
    camera_data = bpy.data.cameras.new(name)
    camera_data.lens = lens
    # Fit the bounding sphere inside the narrower field of view, with a margin.
    half_fov = np.arctan(camera_data.sensor_width / (2.0 * lens)) * min(1.0, 9.0 / 16.0)
    distance = radius / np.sin(half_fov) * 1.05
    camera = new_object(name, camera_data, collection)
    camera.location = centre + view * distance
    forward = -view
    camera.rotation_mode = "QUATERNION"
    camera.rotation_quaternion = _look_rotation(forward)
    camera_data.clip_end = max(100.0, distance * 4.0)
    scene.camera = camera
    return camera


def _look_rotation(forward: np.ndarray) -> tuple[float, float, float, float]:
    """Quaternion (w first) turning a camera (looking down -Z, up +Y) to look along ``forward``."""
    f = forward / np.linalg.norm(forward)
    up_hint = np.array([0.0, 0.0, 1.0]) if abs(f[2]) < 0.999 else np.array([0.0, 1.0, 0.0])
    right = np.cross(f, up_hint)
    right /= np.linalg.norm(right)
    up = np.cross(right, f)
    matrix = np.column_stack([right, up, -f])
    return tuple(mathutils.Matrix(matrix.tolist()).to_quaternion())


def add_sun(collection: bpy.types.Collection, strength: float = 3.0, name: str = "Sun") -> bpy.types.Object:
    """A sun light from above and to the side, so every engine renders a lit scene."""
    light = bpy.data.lights.new(name, type="SUN")
    light.energy = strength
    sun = new_object(name, light, collection)
    sun.rotation_euler = (0.7, 0.2, 0.6)
    return sun


def show_image(path, name: str) -> bpy.types.Image:
    """Load ``path`` as the image datablock ``name`` (or reload it if it exists) and pack it into the .blend
    (plots, curves)."""
    image = bpy.data.images.get(name)
    if image is None:
        image = bpy.data.images.load(str(path))
        image.name = name
    else:
        if image.packed_file is not None:
            image.unpack(method="REMOVE")  # drop the old pixels; the new file is packed below
        image.filepath = str(path)
        image.reload()
    # Packed into the .blend, so the plot travels with the file (its PNG may be in a temporary folder),
    # and kept by a fake user: nothing else uses it, and Blender drops unused images on save.
    image.pack()
    image.use_fake_user = True
    if not bpy.app.background:
        image.preview_ensure()  # so the sidebar can draw it as an icon right away
    return image
