"""Operators that add ellipsoid mirrors, mirror chains and Fresnel reflectors."""

# No "from __future__ import annotations": the panel reuses these property annotations as objects.
import math

import bpy
import numpy as np
from bpy.props import (
    FloatProperty,
    FloatVectorProperty,
    IntProperty,
    StringProperty,
)

from ...addon.optics import (
    OpticsError,
    mirror_chain,
)
from ...addon.optics.ellipsoid import unit_directions
from .. import writers
from .._base import ProcAnimOperator
from .properties import _EllipsoidProperties, _FociProperties, _FresnelProperties, _UseSelection
from .recipes import (
    MIRROR_COLLECTION,
    _focus_empty,
    _new_mirror_object,
    _selected_foci,
    _vector,
    mesh_of,
    mirror_objects,
    mirror_of,
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
        collection = writers.new_instance(context, MIRROR_COLLECTION)
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
        description="Focus points 'x y z; x y z; ...' from the 3D cursor (one more than mirrors), used "
        "without a selection",
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
        name="Resolution", description="Rings of each mirror mesh", default=24, min=1, max=512, soft_max=128
    )

    def run(self, context) -> set[str]:
        selected = _selected_foci(context, None) if self.use_selection else []
        points = (
            np.array([tuple(o.matrix_world.translation) for o in selected])
            if selected
            else _parse_points(self.chain_points) + np.array(context.scene.cursor.location, dtype=np.float64)
        )
        kinds = _parse_words(self.chain_kinds, len(points) - 1, "Kinds", ("concave", "convex"))
        minor = _parse_numbers(self.chain_minor_axes, len(points) - 1, "Minor Axes")
        chain = mirror_chain(
            points, minor, kinds, tuple(self.chain_direction), math.degrees(self.chain_aperture)
        )
        collection = writers.new_instance(context, MIRROR_COLLECTION)
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


class PROCANIM_OT_add_fresnel_reflector(
    _FociProperties, _FresnelProperties, ProcAnimOperator, bpy.types.Operator
):
    """Add a flat Fresnel reflector: confocal ellipsoid zones that send light from one focus to the other"""

    bl_idname = "procanim.add_fresnel_reflector"
    bl_label = "Add Fresnel Reflector"
    bl_options = {"REGISTER", "UNDO"}

    def run(self, context) -> set[str]:
        support = None
        if self.support == "MESH":
            support = context.active_object
            if support is None or support.type != "MESH" or support.procanim.mirror.mirror_type != "NONE":
                raise OpticsError(
                    "Surface 'Active Mesh': make the mesh to cut the zones on the active object"
                )
            if len(support.data.polygons) == 0:
                raise OpticsError(f"Surface 'Active Mesh': {support.name!r} has no faces")
        collection = writers.new_instance(context, MIRROR_COLLECTION)
        first, second = self.foci(context, collection, exclude=support)
        new_foci = first.name in collection.objects and second.name in collection.objects
        plate_point = np.array(tuple(self.plate_point), dtype=np.float64)
        if new_foci:  # typed foci are placed from the cursor: the plate goes with them
            plate_point = plate_point + np.array(context.scene.cursor.location, dtype=np.float64)
        values = {
            "mirror_type": "FRESNEL",
            "support_object": support,
            "plate_point": tuple(plate_point),
            "plate_normal": tuple(self.plate_normal),
            "plate_radius": self.plate_radius,
            "zones": self.zones,
            "zone_width": self.zone_width,
            "segments": self.segments,
            "zone_steps": self.zone_steps,
            "draft": self.draft,
            "risers": self.risers,
            "support": self.support,
            "support_radius": self.support_radius,
            "embed_in_slab": self.embed_in_slab,
            "slab_thickness": self.slab_thickness,
            "refractive_index": self.refractive_index,
            "thickness": self.thickness,
        }
        plate = _new_mirror_object("Fresnel Reflector", collection, values, first, second)
        if self.embed_in_slab:
            _clear_slab(plate, collection, self.slab_thickness, self.refractive_index)
        _make_active(context, plate)
        mesh = mesh_of(plate)
        self.report(
            {"INFO"},
            f"Added Fresnel reflector: {mesh.zone_count} zones, {mesh.zone_width * 1000:.3g} mm wide",
        )
        return {"FINISHED"}


def _clear_slab(plate: bpy.types.Object, collection, thickness: float, index: float) -> bpy.types.Object:
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
    resin = writers.principled_material("Clear Resin", (1, 1, 1, 1), roughness=0.0, transmission=1.0)
    ior = resin.node_tree.nodes["Principled BSDF"].inputs.get("IOR") if resin.node_tree else None
    if ior is not None:  # the render refracts like the trace
        ior.default_value = index
    writers.assign_material(slab, resin)
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
