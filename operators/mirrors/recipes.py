"""A mirror object's recipe -> its optics mesh, rebuilt when a focus moves or the recipe changes, and
the helpers that create mirror and focus objects."""

import math
import zlib

import bpy
import numpy as np

from ...addon.optics import (
    EllipsoidMirror,
    OpticsError,
    ellipsoid_mirror,
    ellipsoid_mirror_mesh,
    fresnel_reflector,
)
from ...addon.optics.curved import curved_fresnel_reflector, cylinder_support, sphere_support
from ...addon.optics.ellipsoid import unit_directions
from .. import writers

MIRROR_COLLECTION = "Mirrors"
RAYS_COLLECTION = "Mirror Rays"
_MOVED = 1e-7  # metres a focus must move before the mirror is rebuilt


# --------------------------------------------------------------------------- recipes -> meshes


def _vector(values) -> np.ndarray:
    return np.array(tuple(values), dtype=np.float64)


def focus_positions(obj: bpy.types.Object) -> tuple[np.ndarray, np.ndarray]:
    """World positions of a mirror's two focus objects."""
    recipe = obj.procanim.mirror
    if recipe.focus_1 is None or recipe.focus_2 is None:
        raise OpticsError(f"mirror {obj.name!r} has lost a focus object; add the mirror again")
    return _vector(recipe.focus_1.matrix_world.translation), _vector(recipe.focus_2.matrix_world.translation)


def mirror_of(obj: bpy.types.Object) -> EllipsoidMirror:
    """The analytic mirror an ellipsoid-mirror object stands for, from its foci as they are now."""
    recipe = obj.procanim.mirror
    first, second = focus_positions(obj)
    return ellipsoid_mirror(
        first,
        second,
        recipe.minor_axis,
        side=tuple(recipe.side),
        aperture_deg=math.degrees(recipe.aperture),
        kind=recipe.surface.lower(),
    )


def mesh_of(obj: bpy.types.Object):
    """The optics mesh of a mirror object (ellipsoid cap or Fresnel plate) from its recipe."""
    recipe = obj.procanim.mirror
    if recipe.mirror_type == "ELLIPSOID":
        return ellipsoid_mirror_mesh(mirror_of(obj), recipe.resolution)
    first, second = focus_positions(obj)
    if recipe.support != "FLAT":
        vertices, faces, normals = support_surface(recipe)
        return curved_fresnel_reflector(
            first,
            second,
            vertices,
            faces,
            normals,
            recipe.zones,
            draft=recipe.draft,
            risers=recipe.risers.lower(),
        )
    return fresnel_reflector(
        first,
        second,
        tuple(recipe.plate_point),
        tuple(recipe.plate_normal),
        recipe.plate_radius,
        recipe.zones,
        zone_width=recipe.zone_width if recipe.zone_width > 0.0 else None,
        segments=recipe.segments,
        zone_steps=recipe.zone_steps,
        draft=recipe.draft,
        risers=recipe.risers.lower(),
        thickness=recipe.thickness if recipe.thickness > 0.0 else None,
    )


def support_surface(recipe):
    """The surface a curved Fresnel reflector is cut on, ``(vertices, faces, normals)`` in world space:
    a sphere cap or cylinder patch hollow towards the plate normal and as wide as the plate, or the
    support object's mesh."""
    normal = unit_directions(tuple(recipe.plate_normal), "plate normal")[0]
    centre = _vector(recipe.plate_point)
    radius = recipe.support_radius
    half_angle = math.degrees(math.asin(min(1.0, recipe.plate_radius / radius)))
    resolution = max(12, min(48, recipe.segments // 4))
    if recipe.support == "SPHERE":
        return sphere_support(centre + radius * normal, radius, -normal, half_angle, resolution)
    if recipe.support == "CYLINDER":
        helper = np.array([1.0, 0.0, 0.0]) if abs(normal[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
        axis = np.cross(normal, helper)
        return cylinder_support(
            centre + radius * normal,
            axis,
            radius,
            2.0 * recipe.plate_radius,
            -normal,
            2.0 * half_angle,
            resolution,
        )
    source = recipe.support_object
    if source is None or source.type != "MESH" or len(source.data.polygons) == 0:
        raise OpticsError("the Fresnel reflector's surface object is missing or has no faces; pick a mesh")
    mesh = source.data
    mesh.calc_loop_triangles()
    faces = np.empty(3 * len(mesh.loop_triangles), dtype=np.int64)
    mesh.loop_triangles.foreach_get("vertices", faces)
    matrix = np.array(source.matrix_world, dtype=np.float64)
    vertices = writers.mesh_vertices(mesh) @ matrix[:3, :3].T + matrix[:3, 3]
    return vertices, faces.reshape(-1, 3), None


def _write_mesh(obj: bpy.types.Object, optics_mesh) -> None:
    """Put ``optics_mesh`` (world coordinates) into ``obj``'s mesh, in the object's local space."""
    inverse = np.linalg.inv(np.array(obj.matrix_world, dtype=np.float64))
    local = optics_mesh.vertices @ inverse[:3, :3].T + inverse[:3, 3]
    mesh = obj.data
    same_topology = len(mesh.vertices) == len(local) and len(mesh.polygons) == len(optics_mesh.faces)
    if same_topology:
        writers.set_mesh_vertices(mesh, local)
    else:
        fresh = writers.mesh_from_arrays(mesh.name, local, optics_mesh.faces)
        for material in mesh.materials:
            fresh.materials.append(material)
        obj.data = fresh
        if mesh.users == 0:
            bpy.data.meshes.remove(mesh)
        mesh = obj.data
    corner_normals = optics_mesh.shading_normals()
    smooth = corner_normals is not None
    mesh.polygons.foreach_set("use_smooth", np.full(len(mesh.polygons), smooth))
    if smooth:
        # Exact surface normals per face corner: the render focuses like the true surface even on a
        # coarse mesh (normals transform with the inverse transpose, i.e. the transpose of world->local).
        normals = corner_normals @ np.array(obj.matrix_world.to_3x3(), dtype=np.float64)
        normals /= np.linalg.norm(normals, axis=1, keepdims=True)
        mesh.normals_split_custom_set(normals)  # the (N, 3) array as is: 2-3x faster than a list
    mesh.update()


_RECIPE_KEYS = (
    "mirror_type",
    "minor_axis",
    "aperture",
    "side",
    "surface",
    "resolution",
    "plate_point",
    "plate_normal",
    "plate_radius",
    "zones",
    "zone_width",
    "segments",
    "zone_steps",
    "draft",
    "risers",
    "support",
    "support_radius",
    "thickness",
)


def recipe_fingerprint(obj: bpy.types.Object) -> str:
    """Every recipe value that shapes the mesh, as text: a change means the mesh must be rebuilt."""
    recipe = obj.procanim.mirror
    values = []
    for key in _RECIPE_KEYS:
        value = getattr(recipe, key)
        values.append(
            tuple(round(v, 9) for v in value)
            if hasattr(value, "__len__") and not isinstance(value, str)
            else value
        )
    focus_names = tuple(
        f.name if f is not None else "" for f in (recipe.focus_1, recipe.focus_2, recipe.support_object)
    )
    return repr((*values, focus_names, _support_fingerprint(recipe)))


def _support_fingerprint(recipe) -> tuple:
    """Where the surface object of a plate cut on a mesh is and what shape it has (its world matrix
    and a checksum of its vertices): moved or edited, the plate must be cut again."""
    source = recipe.support_object
    if recipe.support != "MESH" or source is None or source.type != "MESH":
        return ()
    matrix = tuple(round(value, 9) for row in source.matrix_world for value in row)
    coordinates = np.ascontiguousarray(writers.mesh_vertices(source.data), dtype=np.float64)
    return (matrix, len(coordinates), zlib.crc32(coordinates.tobytes()))


def rebuild_mirror(obj: bpy.types.Object) -> None:
    """Rebuild a mirror object's mesh from its recipe and its foci as they are now.

    Raises :class:`OpticsError` (and leaves the mesh as it was) when the foci make no mirror.
    """
    recipe = obj.procanim.mirror
    first, second = focus_positions(obj)
    optics_mesh = mesh_of(obj)
    _write_mesh(obj, optics_mesh)
    recipe.last_focus_1 = tuple(first)
    recipe.last_focus_2 = tuple(second)
    recipe.built_recipe = recipe_fingerprint(obj)
    recipe.status = ""


def mirror_objects(scene: bpy.types.Scene) -> list[bpy.types.Object]:
    return [obj for obj in scene.objects if obj.type == "MESH" and obj.procanim.mirror.mirror_type != "NONE"]


def _stale(obj: bpy.types.Object) -> bool:
    """Whether a focus has moved or the recipe was edited since the mesh was built."""
    recipe = obj.procanim.mirror
    if recipe.focus_1 is None or recipe.focus_2 is None:
        return False
    if recipe.built_recipe != recipe_fingerprint(obj):
        return True
    first, second = focus_positions(obj)
    return bool(
        np.max(np.abs(first - _vector(recipe.last_focus_1))) > _MOVED
        or np.max(np.abs(second - _vector(recipe.last_focus_2))) > _MOVED
    )


def refresh_mirror(obj: bpy.types.Object) -> None:
    """Rebuild ``obj`` if it is stale; a failure is kept in its status instead of raised."""
    if not _stale(obj):
        return
    try:
        rebuild_mirror(obj)
    except OpticsError as exc:
        # A handler cannot report to the status bar; the panel shows why the mirror did not follow.
        # Remember what failed, so the handler does not retry (and re-trigger itself) until it changes.
        recipe = obj.procanim.mirror
        recipe.built_recipe = recipe_fingerprint(obj)
        recipe.last_focus_1, recipe.last_focus_2 = (tuple(f) for f in focus_positions(obj))
        if recipe.status != str(exc):
            recipe.status = str(exc)


def recipe_changed(recipe, context) -> None:
    """Update callback of the stored recipe: an edit in the sidebar rebuilds the mirror at once."""
    obj = recipe.id_data
    if isinstance(obj, bpy.types.Object) and obj.type == "MESH" and recipe.mirror_type != "NONE":
        refresh_mirror(obj)


# --------------------------------------------------------------------------- creating objects


def _mirror_material(name: str = "Mirror") -> bpy.types.Material:
    return writers.principled_material(name, (0.95, 0.95, 0.95, 1.0), metallic=1.0, roughness=0.0)


def _focus_empty(name: str, location, collection) -> bpy.types.Object:
    empty = writers.new_object(name, None, collection)
    empty.empty_display_type = "SPHERE"
    empty.empty_display_size = 0.05
    empty.location = tuple(location)
    # The depsgraph has not evaluated the new empty yet; the mirror is built from matrix_world now.
    empty.matrix_world.translation = tuple(location)
    return empty


def _selected_foci(context, count: int | None, exclude=None) -> list[bpy.types.Object]:
    """Selected objects (not mirrors, not ``exclude``) used as foci, ordered by name, or [] if too few
    are selected."""
    chosen = [
        obj
        for obj in (context.selected_objects or ())
        if (obj.type != "MESH" or obj.procanim.mirror.mirror_type == "NONE") and obj != exclude
    ]
    chosen.sort(key=lambda obj: obj.name)
    if count is not None:
        return chosen if len(chosen) == count else []
    return chosen if len(chosen) >= 3 else []


def _new_mirror_object(name, collection, recipe_values: dict, first, second) -> bpy.types.Object:
    mesh = bpy.data.meshes.new(name)
    mesh.materials.append(_mirror_material(f"{name} Mirror"))
    obj = writers.new_object(name, mesh, collection)
    recipe = obj.procanim.mirror
    for key, value in recipe_values.items():
        if key != "mirror_type":
            setattr(recipe, key, value)
    recipe.focus_1, recipe.focus_2 = first, second
    # Setting the type last builds the mesh once, through the recipe's update callback (4.3+).
    recipe.mirror_type = recipe_values.get("mirror_type", "ELLIPSOID")
    if _stale(obj):
        rebuild_mirror(obj)
    if recipe.status:
        raise OpticsError(recipe.status)
    return obj
