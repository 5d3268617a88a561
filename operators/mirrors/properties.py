"""Operator properties shared by the mirror operators and (as annotations) by the sidebar and the
stored recipe."""

# No "from __future__ import annotations": the panel reuses these property annotations as objects.
import math

import numpy as np
from bpy.props import (
    BoolProperty,
    EnumProperty,
    FloatProperty,
    FloatVectorProperty,
    IntProperty,
)

from ...addon.optics import (
    OpticsError,
)
from .recipes import _focus_empty, _selected_foci

SURFACE_ITEMS = (
    ("CONCAVE", "Concave", "Reflect on the inside: light from the first focus converges on the second"),
    ("CONVEX", "Convex", "Reflect on the outside: light aimed at the first focus diverges from the second"),
)
PATTERN_ITEMS = (
    ("FAN", "Fan", "Rays in one plane across the mirror, through its major axis"),
    ("CONE", "Cone", "Rings of rays around the mirror's centre"),
    ("RANDOM", "Random", "A random bundle spread evenly over the mirror"),
)
SUPPORT_ITEMS = (
    ("FLAT", "Flat", "Zones cut on a flat round plate"),
    ("SPHERE", "Sphere", "Zones cut on a spherical cap of the given radius, hollow towards the foci"),
    ("CYLINDER", "Cylinder", "Zones cut on a cylinder patch of the given radius, hollow towards the foci"),
    ("MESH", "Active Mesh", "Zones cut on the surface of the active mesh object"),
)
RISER_ITEMS = (
    (
        "RAYS",
        "Along the Light",
        "Steps tilted along the rays from the first focus: edge-on to the light, so none is lost on them",
    ),
    ("VERTICAL", "Vertical", "Steps straight along the plate normal: simpler to cut, but they catch light"),
)
FOCUS_ITEMS = (
    ("FIRST", "First Focus", "Rays start at the mirror's first focus"),
    ("SECOND", "Second Focus", "Rays start at the mirror's second focus (light runs backwards)"),
)


class _UseSelection:
    use_selection: BoolProperty(
        name="Foci from Selection",
        description="Use the selected objects' locations as the foci (else the typed coordinates)",
        default=True,
    )


class _FociProperties(_UseSelection):
    focus_1: FloatVectorProperty(
        name="Focus 1",
        description="First focus (where the light starts), from the 3D cursor; used when the foci are not "
        "taken from selection",
        default=(-0.5, 0.0, 1.0),
        subtype="TRANSLATION",
        unit="LENGTH",
    )
    focus_2: FloatVectorProperty(
        name="Focus 2",
        description="Second focus (where the light converges), from the 3D cursor; used when not taken from "
        "selection",
        default=(0.5, 0.0, 1.0),
        subtype="TRANSLATION",
        unit="LENGTH",
    )

    def foci(self, context, collection, exclude=None):
        """Two focus objects: the two selected ones (other than ``exclude``), or new empties at the typed
        coordinates."""
        selected = _selected_foci(context, 2, exclude) if self.use_selection else []
        if selected:
            return selected[0], selected[1]
        if np.allclose(tuple(self.focus_1), tuple(self.focus_2), atol=1e-12):
            raise OpticsError("Focus 1 and Focus 2 coincide; move one of them")
        # New foci are placed from the 3D cursor, as Blender's own Add places objects at it.
        cursor = np.array(context.scene.cursor.location, dtype=np.float64)
        return (
            _focus_empty("Focus 1", cursor + np.array(tuple(self.focus_1)), collection),
            _focus_empty("Focus 2", cursor + np.array(tuple(self.focus_2)), collection),
        )


class _EllipsoidProperties:
    minor_axis: FloatProperty(
        name="Minor Axis",
        description="Full width of the ellipsoid across its major axis; wider means a shallower mirror",
        default=1.6,
        min=1e-4,
        max=1e4,
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
        max=512,
        soft_max=128,
    )


class _FresnelProperties:
    plate_point: FloatVectorProperty(
        name="Plate Centre",
        description="Centre of the flat plate, from the 3D cursor when the foci are new ones",
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
        max=1e4,
        soft_max=10.0,
        unit="LENGTH",
    )
    zones: IntProperty(
        name="Zones",
        description="Number of confocal zones across the plate",
        default=24,
        min=1,
        max=10_000,
        soft_max=400,
    )
    zone_width: FloatProperty(
        name="Zone Width",
        description="Width of each zone in metres; 0 uses the zone count instead",
        default=0.0,
        min=0.0,
        unit="LENGTH",
    )
    segments: IntProperty(
        name="Segments",
        description="Segments around the plate; more is a smaller spot",
        default=128,
        min=8,
        max=100_000,
        soft_max=2048,
    )
    zone_steps: IntProperty(
        name="Zone Rows", description="Rows of faces across each zone", default=2, min=1, max=256, soft_max=16
    )
    draft: BoolProperty(
        name="Step Faces", description="Close the steps between zones with draft faces", default=True
    )
    support: EnumProperty(
        name="Surface",
        description="What the Fresnel zones are cut on",
        items=SUPPORT_ITEMS,
        default="FLAT",
    )
    support_radius: FloatProperty(
        name="Surface Radius",
        description="Radius of the sphere or cylinder the zones are cut on",
        default=1.5,
        min=1e-3,
        soft_max=20.0,
        unit="LENGTH",
    )
    risers: EnumProperty(
        name="Steps",
        description="How the steps between zones run",
        items=RISER_ITEMS,
        default="RAYS",
    )
    embed_in_slab: BoolProperty(
        name="Clear Slab",
        description="Embed the mirror zones in a clear slab, as the practical cast or printed part; "
        "traced rays refract at its faces",
        default=False,
    )
    slab_thickness: FloatProperty(
        name="Slab Thickness",
        description="Thickness of the clear slab around the plate",
        default=0.04,
        min=1e-4,
        unit="LENGTH",
    )
    refractive_index: FloatProperty(
        name="Index of Refraction",
        description="Refractive index of the clear slab (acrylic 1.49, glass about 1.5, water 1.33); "
        "rays bend by Snell's law at its faces and are trapped past the critical angle",
        default=1.49,
        min=1.0,
        soft_max=2.5,
    )
    thickness: FloatProperty(
        name="Louvre Depth",
        description="Slab depth of the zones when the foci are on opposite sides; 0: a tenth of the radius",
        default=0.0,
        min=0.0,
        unit="LENGTH",
    )
