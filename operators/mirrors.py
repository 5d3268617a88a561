"""Ellipsoidal and Fresnel mirrors: add them from focus objects, keep them in step with their foci, and
trace rays that show the light going from one focus to the other.

Every mirror object stores its recipe in ``Object.procanim.mirror`` (focus objects, minor axis, cap
side, plate settings). A ``depsgraph_update_post`` handler rebuilds a mirror's mesh whenever one of its
focus objects has moved, so the geometry is never stale; editing the recipe in the sidebar rebuilds it
too.
"""

# No "from __future__ import annotations": the panel reuses these property annotations as objects.
import math

import bpy
import numpy as np
from bpy.app.handlers import persistent
from bpy.props import (
    BoolProperty,
    EnumProperty,
    FloatProperty,
    FloatVectorProperty,
    IntProperty,
    StringProperty,
)

from ..addon.optics import (
    BounceRecord,
    EllipsoidMirror,
    MeshSurface,
    OpticsError,
    TraceResult,
    cap_sample_directions,
    ellipsoid_mirror,
    ellipsoid_mirror_mesh,
    fresnel_reflector,
    mesh_spot,
    mirror_chain,
    spot_of_rays,
    trace_chain,
    trace_records,
)
from ..addon.optics.ellipsoid import unit_directions
from ..addon.optics.mirrors import cap_axis_towards
from . import writers
from ._base import BakeOperator, ProcAnimOperator
from .cli import COMMON, call_operator

SURFACE_ITEMS = (
    ("CONCAVE", "Concave", "Reflect on the inside: light from the first focus converges on the second"),
    ("CONVEX", "Convex", "Reflect on the outside: light aimed at the first focus diverges from the second"),
)
PATTERN_ITEMS = (
    ("FAN", "Fan", "Rays in one plane across the mirror, through its major axis"),
    ("CONE", "Cone", "Rings of rays around the mirror's centre"),
    ("RANDOM", "Random", "A random bundle spread evenly over the mirror"),
)
FOCUS_ITEMS = (
    ("FIRST", "First Focus", "Rays start at the mirror's first focus"),
    ("SECOND", "Second Focus", "Rays start at the mirror's second focus (light runs backwards)"),
)
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
        thickness=recipe.thickness if recipe.thickness > 0.0 else None,
    )


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
        mesh.normals_split_custom_set(normals.tolist())
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
    focus_names = tuple(f.name if f is not None else "" for f in (recipe.focus_1, recipe.focus_2))
    return repr((*values, focus_names))


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


@persistent
def follow_foci(scene: bpy.types.Scene, depsgraph=None) -> None:
    """``depsgraph_update_post`` and ``frame_change_post``: rebuild every mirror whose focus objects have
    moved (by hand, by a driver or by animation) or whose recipe was edited."""
    for obj in mirror_objects(scene):
        refresh_mirror(obj)


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


def _selected_foci(context, count: int | None) -> list[bpy.types.Object]:
    """Selected objects (not mirrors) used as foci, ordered by name, or [] if too few are selected."""
    chosen = [
        obj
        for obj in (context.selected_objects or ())
        if obj.type != "MESH" or obj.procanim.mirror.mirror_type == "NONE"
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


# --------------------------------------------------------------------------- operators


class _UseSelection:
    use_selection: BoolProperty(
        name="Foci from Selection",
        description="Use the selected objects' locations as the foci (else the typed coordinates)",
        default=True,
    )


class _FociProperties(_UseSelection):
    focus_1: FloatVectorProperty(
        name="Focus 1",
        description="First focus (where the light starts), used when the foci are not taken from selection",
        default=(-0.5, 0.0, 1.0),
        subtype="TRANSLATION",
        unit="LENGTH",
    )
    focus_2: FloatVectorProperty(
        name="Focus 2",
        description="Second focus (where the light converges), used when not taken from selection",
        default=(0.5, 0.0, 1.0),
        subtype="TRANSLATION",
        unit="LENGTH",
    )

    def foci(self, context, collection):
        """Two focus objects: the two selected ones, or new empties at the typed coordinates."""
        selected = _selected_foci(context, 2) if self.use_selection else []
        if selected:
            return selected[0], selected[1]
        if np.allclose(tuple(self.focus_1), tuple(self.focus_2), atol=1e-12):
            raise OpticsError("Focus 1 and Focus 2 coincide; move one of them")
        return (
            _focus_empty("Focus 1", self.focus_1, collection),
            _focus_empty("Focus 2", self.focus_2, collection),
        )


class _EllipsoidProperties:
    minor_axis: FloatProperty(
        name="Minor Axis",
        description="Full width of the ellipsoid across its major axis; wider means a shallower mirror",
        default=1.6,
        min=1e-4,
        soft_max=10.0,
        unit="LENGTH",
    )
    aperture: FloatProperty(
        name="Aperture",
        description="Half-angle of the mirror cap, measured on the ellipsoid's unit sphere",
        default=math.radians(60.0),
        min=math.radians(1.0),
        max=math.radians(180.0),
        subtype="ANGLE",
    )
    side: FloatVectorProperty(
        name="Side",
        description="Direction from the ellipsoid's centre to the middle of the mirror cap",
        default=(0.0, 0.0, -1.0),
        subtype="DIRECTION",
    )
    surface: EnumProperty(
        name="Surface",
        description="Which side of the ellipsoid reflects",
        items=SURFACE_ITEMS,
        default="CONCAVE",
    )
    resolution: IntProperty(
        name="Resolution",
        description="Rings of the mirror mesh (with four times as many segments); more is a smaller spot",
        default=24,
        min=1,
        soft_max=128,
    )


class PROCANIM_OT_add_ellipsoid_mirror(
    _FociProperties, _EllipsoidProperties, ProcAnimOperator, bpy.types.Operator
):
    """Add an ellipsoidal mirror that reflects light from one focus to the other; it follows its foci"""

    bl_idname = "procanim.add_ellipsoid_mirror"
    bl_label = "Add Ellipsoid Mirror"
    bl_options = {"REGISTER", "UNDO"}

    def run(self, context) -> set[str]:
        # Validate everything before creating anything: a bad recipe raises here.
        collection = writers.generator_collection(context.scene, MIRROR_COLLECTION, replace=False)
        first, second = self.foci(context, collection)
        obj = _new_mirror_object(
            "Ellipsoid Mirror",
            collection,
            {
                "minor_axis": self.minor_axis,
                "aperture": self.aperture,
                "side": tuple(self.side),
                "surface": self.surface,
                "resolution": self.resolution,
            },
            first,
            second,
        )
        _make_active(context, obj)
        semi = mirror_of(obj).ellipsoid.semi_axes
        self.report({"INFO"}, f"Added ellipsoid mirror (semi-axes {semi[2]:.3g} x {semi[0]:.3g} m)")
        return {"FINISHED"}


class PROCANIM_OT_add_mirror_chain(_UseSelection, ProcAnimOperator, bpy.types.Operator):
    """Add mirrors that pass light focus to focus through a list of points (concave or convex each)"""

    bl_idname = "procanim.add_mirror_chain"
    bl_label = "Add Mirror Chain"
    bl_options = {"REGISTER", "UNDO"}

    chain_points: StringProperty(
        name="Foci",
        description="Focus points 'x y z; x y z; ...' (one more than mirrors), used without a selection",
        default="-1 0 0; 0 0 0; 0.3 0 0.4; 1 0 0",
    )
    chain_kinds: StringProperty(
        name="Kinds",
        description="Concave or convex per mirror, e.g. 'concave convex concave'; the last must be concave",
        default="concave convex concave",
    )
    chain_minor_axes: StringProperty(
        name="Minor Axes",
        description="Minor-axis length of each mirror in metres, e.g. '1.5 0.3 1.5'",
        default="1.5 0.3 1.5",
    )
    chain_direction: FloatVectorProperty(
        name="First Ray",
        description="Direction of the chief ray from the first focus; each cap is centred where it hits",
        default=(0.3, 0.0, -1.0),
        subtype="DIRECTION",
    )
    chain_aperture: FloatProperty(
        name="Aperture",
        description="Half-angle of every mirror cap, on the ellipsoid's unit sphere",
        default=math.radians(30.0),
        min=math.radians(1.0),
        max=math.radians(180.0),
        subtype="ANGLE",
    )
    resolution: IntProperty(
        name="Resolution", description="Rings of each mirror mesh", default=24, min=1, soft_max=128
    )

    def run(self, context) -> set[str]:
        selected = _selected_foci(context, None) if self.use_selection else []
        points = (
            np.array([tuple(o.matrix_world.translation) for o in selected])
            if selected
            else _parse_points(self.chain_points)
        )
        kinds = _parse_words(self.chain_kinds, len(points) - 1, "Kinds", ("concave", "convex"))
        minor = _parse_numbers(self.chain_minor_axes, len(points) - 1, "Minor Axes")
        chain = mirror_chain(
            points, minor, kinds, tuple(self.chain_direction), math.degrees(self.chain_aperture)
        )
        collection = writers.generator_collection(context.scene, MIRROR_COLLECTION, replace=False)
        foci = selected or [_focus_empty(f"Focus {i + 1}", p, collection) for i, p in enumerate(points)]
        chain_id = (
            f"Chain {len([o for o in mirror_objects(context.scene) if o.procanim.mirror.chain_id]) + 1}"
        )
        created = []
        for index, mirror in enumerate(chain.mirrors):
            centre_to_cap = mirror.cap_points(mirror.cap_axis[None, :])[0] - mirror.ellipsoid.center
            obj = _new_mirror_object(
                f"{chain_id} Mirror {index + 1}",
                collection,
                {
                    "minor_axis": float(minor[index]),
                    "aperture": self.chain_aperture,
                    "side": tuple(centre_to_cap / np.linalg.norm(centre_to_cap)),
                    "surface": kinds[index].upper(),
                    "resolution": self.resolution,
                    "chain_id": chain_id,
                    "chain_index": index,
                },
                foci[index],
                foci[index + 1],
            )
            created.append(obj)
        _make_active(context, created[0])
        self.report(
            {"INFO"}, f"Added {len(created)} mirrors ({chain_id}), optical path {chain.path_length:.4g} m"
        )
        return {"FINISHED"}


class _FresnelProperties:
    plate_point: FloatVectorProperty(
        name="Plate Centre",
        description="Centre of the flat plate",
        default=(0.0, 0.0, 0.0),
        subtype="TRANSLATION",
        unit="LENGTH",
    )
    plate_normal: FloatVectorProperty(
        name="Plate Normal",
        description="Normal of the plate's plane",
        default=(0.0, 0.0, 1.0),
        subtype="DIRECTION",
    )
    plate_radius: FloatProperty(
        name="Radius",
        description="Radius of the round plate",
        default=0.6,
        min=1e-3,
        soft_max=10.0,
        unit="LENGTH",
    )
    zones: IntProperty(
        name="Zones", description="Number of confocal zones across the plate", default=24, min=1, soft_max=400
    )
    zone_width: FloatProperty(
        name="Zone Width",
        description="Width of each zone in metres; 0 uses the zone count instead",
        default=0.0,
        min=0.0,
        unit="LENGTH",
    )
    segments: IntProperty(
        name="Segments", description="Segments around the plate; more is a smaller spot", default=128, min=8
    )
    zone_steps: IntProperty(
        name="Zone Rows", description="Rows of faces across each zone", default=2, min=1, soft_max=16
    )
    draft: BoolProperty(
        name="Step Faces", description="Close the steps between zones with draft faces", default=True
    )
    thickness: FloatProperty(
        name="Louvre Depth",
        description="Slab depth of the zones when the foci are on opposite sides; 0: a tenth of the radius",
        default=0.0,
        min=0.0,
        unit="LENGTH",
    )


class PROCANIM_OT_add_fresnel_reflector(
    _FociProperties, _FresnelProperties, ProcAnimOperator, bpy.types.Operator
):
    """Add a flat Fresnel reflector: confocal ellipsoid zones that send light from one focus to the other"""

    bl_idname = "procanim.add_fresnel_reflector"
    bl_label = "Add Fresnel Reflector"
    bl_options = {"REGISTER", "UNDO"}

    embed_in_slab: BoolProperty(
        name="Clear Slab",
        description="Embed the mirror zones in a clear slab, as the practical cast or printed part",
        default=False,
    )
    slab_thickness: FloatProperty(
        name="Slab Thickness",
        description="Thickness of the clear slab around the plate",
        default=0.04,
        min=1e-4,
        unit="LENGTH",
    )

    def run(self, context) -> set[str]:
        collection = writers.generator_collection(context.scene, MIRROR_COLLECTION, replace=False)
        first, second = self.foci(context, collection)
        values = {
            "mirror_type": "FRESNEL",
            "plate_point": tuple(self.plate_point),
            "plate_normal": tuple(self.plate_normal),
            "plate_radius": self.plate_radius,
            "zones": self.zones,
            "zone_width": self.zone_width,
            "segments": self.segments,
            "zone_steps": self.zone_steps,
            "draft": self.draft,
            "thickness": self.thickness,
        }
        plate = _new_mirror_object("Fresnel Reflector", collection, values, first, second)
        if self.embed_in_slab:
            _clear_slab(plate, collection, self.slab_thickness)
        _make_active(context, plate)
        mesh = mesh_of(plate)
        self.report(
            {"INFO"},
            f"Added Fresnel reflector: {mesh.zone_count} zones, {mesh.zone_width * 1000:.3g} mm wide",
        )
        return {"FINISHED"}


def _clear_slab(plate: bpy.types.Object, collection, thickness: float) -> bpy.types.Object:
    recipe = plate.procanim.mirror
    normal = unit_directions(tuple(recipe.plate_normal), "plate normal")[0]
    centre = _vector(recipe.plate_point)
    segments = 64
    angle = 2.0 * np.pi * np.arange(segments) / segments
    helper = np.array([1.0, 0.0, 0.0]) if abs(normal[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    across = np.cross(helper, normal)
    across /= np.linalg.norm(across)
    other = np.cross(normal, across)
    ring = recipe.plate_radius * (np.cos(angle)[:, None] * across + np.sin(angle)[:, None] * other)
    vertices = np.concatenate(
        [centre + ring - normal * thickness / 2, centre + ring + normal * thickness / 2]
    )
    sides = [(i, (i + 1) % segments, segments + (i + 1) % segments, segments + i) for i in range(segments)]
    faces = [tuple(reversed(range(segments))), tuple(range(segments, 2 * segments)), *sides]
    slab = writers.new_object(
        "Clear Slab", writers.mesh_from_arrays("Clear Slab", vertices, faces), collection
    )
    writers.assign_material(
        slab, writers.principled_material("Clear Resin", (1, 1, 1, 1), roughness=0.0, transmission=1.0)
    )
    return slab


def _make_active(context, obj: bpy.types.Object) -> None:
    view_layer = context.view_layer
    if view_layer is None:
        return
    for other in context.selected_objects or ():
        other.select_set(False)
    obj.select_set(True)
    view_layer.objects.active = obj


def _parse_points(text: str) -> np.ndarray:
    rows = [row for row in text.replace(",", " ").split(";") if row.strip()]
    try:
        points = np.array([[float(v) for v in row.split()] for row in rows], dtype=np.float64)
    except ValueError:
        raise OpticsError(f"Foci: cannot read {text!r}; write points as 'x y z; x y z; ...'") from None
    if points.ndim != 2 or points.shape[1] != 3 or len(points) < 2:
        raise OpticsError(f"Foci: need at least two points of three numbers each, got {text!r}")
    return points


def _parse_words(text: str, count: int, label: str, allowed: tuple[str, ...]) -> list[str]:
    words = text.replace(",", " ").lower().split()
    if len(words) != count or any(w not in allowed for w in words):
        raise OpticsError(f"{label}: need {count} of {'/'.join(allowed)}, got {text!r}")
    return words


def _parse_numbers(text: str, count: int, label: str) -> list[float]:
    try:
        numbers = [float(v) for v in text.replace(",", " ").split()]
    except ValueError:
        raise OpticsError(f"{label}: cannot read {text!r} as numbers") from None
    if len(numbers) != count:
        raise OpticsError(f"{label}: need {count} numbers, got {len(numbers)}")
    return numbers


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
        name="Rays", description="Number of rays to draw", default=24, min=1, soft_max=2000
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
    )
    seed: IntProperty(name="Seed", description="Random seed of the random bundle", default=0, min=0)

    @classmethod
    def poll(cls, context) -> bool:
        if context.scene is None or _target_mirror(context) is None:
            cls.poll_message_set("Add a mirror first (or make one active)")
            return False
        return True

    def bake(self, context):
        """Trace in chunks (a Fresnel plate is traced as a mesh, triangle by triangle), yielding progress."""
        obj = _target_mirror(context)
        recipe = obj.procanim.mirror
        pattern = self.ray_pattern.lower()
        from_second = self.from_focus == "SECOND"
        if recipe.mirror_type == "FRESNEL":
            origins, directions, source, target = _fresnel_rays(
                obj, self.ray_pattern, self.ray_count, from_second, self.seed
            )
            optics_mesh = mesh_of(obj)
            surface = MeshSurface(optics_mesh)
            members = [obj]
            chunk = max(1, 400_000 // max(1, len(optics_mesh.faces)))

            def trace_part(part_origins, part_directions):
                return trace_records([surface], part_origins, part_directions, bounces=1)

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
        collection = writers.generator_collection(context.scene, RAYS_COLLECTION, replace=True)
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
    from ..addon.optics import ellipsoid_from_foci

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


# --------------------------------------------------------------------------- demo lighting (CLI, make demo)


def add_demo_stage(context, obj: bpy.types.Object) -> None:
    """A glowing bead at the first focus, a white sensor bead at the second, an identical control bead
    as far from the light on the other side, a black world and a camera: in a Cycles render the sensor
    bead shines where the mirror concentrates the light, the control bead only gets the direct light."""
    first, second = focus_positions(obj)
    size = float(np.linalg.norm(second - first))
    collection = writers.generator_collection(context.scene, "Mirror Stage", replace=True)
    beads = (
        ("Light Bead", first, 15.0),
        ("Sensor Bead", second, 0.0),
        ("Control Bead", 2.0 * first - second, 0.0),
    )
    for name, where, emission in beads:
        mesh = _ico_sphere(name, where, 0.04 * size)
        bead = writers.new_object(name, mesh, collection)
        colour = (1.0, 0.9, 0.6, 1.0) if emission else (0.9, 0.9, 0.9, 1.0)
        writers.assign_material(bead, writers.principled_material(name, colour, emission=emission))
    matrix = np.array(obj.matrix_world, dtype=np.float64)
    vertices = writers.mesh_vertices(obj.data) @ matrix[:3, :3].T + matrix[:3, 3]
    points = np.vstack([vertices, [where for _, where, _ in beads]])
    writers.add_camera_framing(
        context.scene, collection, points.min(axis=0), points.max(axis=0), direction=(0.25, -1.0, 0.12)
    )
    world = bpy.data.worlds.new("Mirror World")
    context.scene.world = world
    world.color = (0.0, 0.0, 0.0)
    if world.node_tree is None:  # before 5.0 a new world has no node tree until asked for
        world.use_nodes = True
    background = next(n for n in world.node_tree.nodes if n.type == "BACKGROUND")
    background.inputs["Color"].default_value = (0.012, 0.014, 0.02, 1.0)
    cycles = getattr(context.scene, "cycles", None)
    if cycles is not None:
        # Cycles blurs mirrors seen after a diffuse bounce by default, which hides the very caustic
        # this stage is meant to show.
        cycles.blur_glossy = 0.0
        cycles.caustics_reflective = True


def _ico_sphere(name: str, centre, radius: float) -> bpy.types.Mesh:
    rings, segments = 8, 16
    polar = np.pi * np.arange(1, rings) / rings
    azimuth = 2.0 * np.pi * np.arange(segments) / segments
    body = np.stack(
        [
            np.outer(np.sin(polar), np.cos(azimuth)).ravel(),
            np.outer(np.sin(polar), np.sin(azimuth)).ravel(),
            np.repeat(np.cos(polar), segments),
        ],
        axis=-1,
    )
    vertices = np.concatenate([[[0, 0, 1]], body, [[0, 0, -1]]]) * radius + np.asarray(centre)
    faces = []
    bottom = len(vertices) - 1
    for j in range(segments):
        k = (j + 1) % segments
        faces.append((0, 1 + j, 1 + k))
        faces.append((bottom, 1 + (rings - 2) * segments + k, 1 + (rings - 2) * segments + j))
        for i in range(rings - 2):
            a, b = 1 + i * segments + j, 1 + i * segments + k
            faces.append((a, a + segments, b + segments, b))
    return writers.mesh_from_arrays(name, vertices, faces)


# --------------------------------------------------------------------------- headless


def add_cli(subparsers) -> None:
    parser = subparsers.add_parser(
        "mirror",
        help="an ellipsoidal mirror, mirror chain or Fresnel plate with traced rays",
        parents=[COMMON],
    )
    parser.add_argument("--type", choices=("ellipsoid", "chain", "fresnel"), default="ellipsoid")
    parser.add_argument("--focus-1", type=float, nargs=3, default=(-0.5, 0.0, 1.0), metavar=("X", "Y", "Z"))
    parser.add_argument("--focus-2", type=float, nargs=3, default=(0.5, 0.0, 1.0), metavar=("X", "Y", "Z"))
    parser.add_argument("--minor-axis", type=float, default=1.6, help="full minor axis in metres")
    parser.add_argument(
        "--mesh-resolution", dest="mesh_resolution", type=int, default=24, help="mirror mesh rings"
    )
    parser.add_argument("--zones", type=int, default=24, help="Fresnel zones")
    parser.add_argument("--rays", type=int, default=24, help="rays to trace")
    parser.add_argument("--pattern", choices=("fan", "cone", "random"), default="fan")
    parser.add_argument(
        "--travel-frames", type=int, default=48, help="frames the light takes along the rays (0: still)"
    )
    parser.add_argument("--stage", action="store_true", help="add a glowing bead, a sensor bead and a camera")
    parser.set_defaults(run=_cli_mirror)


def _cli_mirror(args, context) -> None:
    if args.type == "ellipsoid":
        call_operator(
            "procanim.add_ellipsoid_mirror",
            use_selection=False,
            focus_1=args.focus_1,
            focus_2=args.focus_2,
            minor_axis=args.minor_axis,
            resolution=args.mesh_resolution,
        )
    elif args.type == "chain":
        call_operator("procanim.add_mirror_chain", use_selection=False, resolution=args.mesh_resolution)
    else:
        call_operator(
            "procanim.add_fresnel_reflector",
            use_selection=False,
            focus_1=args.focus_1,
            focus_2=args.focus_2,
            zones=args.zones,
        )
    call_operator(
        "procanim.trace_rays",
        ray_count=args.rays,
        ray_pattern=args.pattern.upper(),
        animate=args.travel_frames > 1,
        travel_frames=max(2, args.travel_frames),
    )
    if args.stage:
        add_demo_stage(context, _target_mirror(context))


classes = (
    PROCANIM_OT_add_ellipsoid_mirror,
    PROCANIM_OT_add_mirror_chain,
    PROCANIM_OT_add_fresnel_reflector,
    PROCANIM_OT_trace_rays,
)


def _handler_lists():
    # Edits in the viewport arrive as depsgraph updates; animated foci arrive as frame changes.
    return (bpy.app.handlers.depsgraph_update_post, bpy.app.handlers.frame_change_post)


def register() -> None:
    for handlers in _handler_lists():
        if follow_foci not in handlers:
            handlers.append(follow_foci)


def unregister() -> None:
    for handlers in _handler_lists():
        while follow_foci in handlers:
            handlers.remove(follow_foci)
