"""The Mirrors sub-panel: add ellipsoidal mirrors, chains and Fresnel plates, trace rays, and edit the
active mirror's recipe (it rebuilds live) next to its measured spot size."""

from __future__ import annotations

import bpy
from bpy.props import (
    EnumProperty,
    FloatProperty,
    FloatVectorProperty,
    IntProperty,
    PointerProperty,
    StringProperty,
)

from ..operators.mirrors import (
    PROCANIM_OT_add_fresnel_reflector,
    PROCANIM_OT_add_mirror_chain,
    PROCANIM_OT_trace_rays,
    _EllipsoidProperties,
    _FociProperties,
    _FresnelProperties,
    recipe_changed,
)
from .common import GeneratorPanel, copy_settings, draw_presets, preset_menu


def _annotations_of(*sources: type, update=None, skip: tuple[str, ...] = ()) -> dict:
    """The property annotations of operator classes / mixins (with an optional update callback), so the
    sidebar settings and the stored recipe use exactly the operators' names, ranges and tooltips."""
    found: dict = {}
    for source in sources:
        for klass in reversed(source.__mro__):
            for key, deferred in getattr(klass, "__annotations__", {}).items():
                if key in skip or not hasattr(deferred, "function"):
                    continue
                keywords = dict(deferred.keywords)
                if update is not None:
                    keywords["update"] = update
                found[key] = deferred.function(**keywords)
    return found


MirrorSettings = type(
    "PROCANIM_PG_mirror_settings",
    (bpy.types.PropertyGroup,),
    {
        "__doc__": "Sidebar settings of the mirror operators (copied into them by name)",
        "__annotations__": _annotations_of(
            _FociProperties,
            _EllipsoidProperties,
            PROCANIM_OT_add_mirror_chain,
            PROCANIM_OT_add_fresnel_reflector,
            PROCANIM_OT_trace_rays,
        ),
    },
)

_MIRROR_TYPES = (
    ("NONE", "None", "Not a ProcAnim mirror"),
    ("ELLIPSOID", "Ellipsoid", "A cap of an ellipsoid built from two foci"),
    ("FRESNEL", "Fresnel", "A flat plate of confocal ellipsoid zones"),
)

MirrorObjectSettings = type(
    "PROCANIM_PG_mirror_object",
    (bpy.types.PropertyGroup,),
    {
        "__doc__": "The recipe a mirror object is rebuilt from when its foci move, and its measured spot",
        "__annotations__": {
            **_annotations_of(
                _EllipsoidProperties, _FresnelProperties, update=recipe_changed, skip=("use_selection",)
            ),
            "mirror_type": EnumProperty(
                name="Mirror Type",
                description="What kind of ProcAnim mirror this object is",
                items=_MIRROR_TYPES,
                default="NONE",
            ),
            "focus_1": PointerProperty(
                type=bpy.types.Object,
                update=recipe_changed,
                name="Focus 1",
                description="Object whose location is the first focus; move it and the mirror follows",
            ),
            "focus_2": PointerProperty(
                type=bpy.types.Object,
                update=recipe_changed,
                name="Focus 2",
                description="Object whose location is the second focus; move it and the mirror follows",
            ),
            "support_object": PointerProperty(
                type=bpy.types.Object,
                update=recipe_changed,
                name="Surface Object",
                description="Mesh object the Fresnel zones are cut on (Surface: Active Mesh)",
            ),
            "chain_id": StringProperty(
                name="Chain", description="Name of the mirror chain this mirror belongs to (empty: none)"
            ),
            "chain_index": IntProperty(
                name="Chain Position", description="Position of this mirror in its chain, from 0", min=0
            ),
            "last_focus_1": FloatVectorProperty(
                name="Built Focus 1",
                description="First focus the mesh was last built for",
                subtype="TRANSLATION",
            ),
            "last_focus_2": FloatVectorProperty(
                name="Built Focus 2",
                description="Second focus the mesh was last built for",
                subtype="TRANSLATION",
            ),
            "built_recipe": StringProperty(
                name="Built Recipe", description="The recipe the mesh was last built from (to notice edits)"
            ),
            "status": StringProperty(
                name="Status", description="Why the mirror could not follow its foci (empty when it did)"
            ),
            "spot_rms": FloatProperty(
                name="Spot RMS",
                description="RMS distance of traced rays from the target focus",
                unit="LENGTH",
            ),
            "spot_max": FloatProperty(
                name="Spot Max",
                description="Largest distance of a traced ray from the target focus",
                unit="LENGTH",
            ),
            "path_spread": FloatProperty(
                name="Path Spread",
                description="Spread of optical path lengths of the traced rays (0 for a perfect focus)",
                unit="LENGTH",
            ),
            "spot_rays": IntProperty(name="Rays", description="Rays that reached the target focus"),
            "mesh_spot_rms": FloatProperty(
                name="Mesh Spot RMS",
                description="RMS spot of the mesh's flat faces (falls as the resolution rises)",
                unit="LENGTH",
            ),
            "mesh_spot_max": FloatProperty(
                name="Mesh Spot Max",
                description="Largest spot distance of the mesh's flat faces",
                unit="LENGTH",
            ),
        },
    },
)

MirrorPresetMenu = preset_menu("mirrors", "Mirror Presets")


class PROCANIM_PT_mirrors(GeneratorPanel, bpy.types.Panel):
    """Ellipsoidal and Fresnel mirrors"""

    bl_label = "Mirrors"

    def draw(self, context) -> None:
        layout = self.layout
        settings = context.scene.procanim.mirrors
        draw_presets(layout, MirrorPresetMenu, "Mirror Presets")
        layout.prop(settings, "use_selection")
        if not settings.use_selection or not context.selected_objects:
            column = layout.column(align=True)
            column.prop(settings, "focus_1")
            column.prop(settings, "focus_2")

        box = layout.box()
        box.label(text="Ellipsoid Mirror", icon="MESH_UVSPHERE")
        for key in ("minor_axis", "aperture", "side", "surface", "resolution"):
            box.prop(settings, key)
        copy_settings(settings, box.operator("procanim.add_ellipsoid_mirror", icon="ADD"))

        box = layout.box()
        box.label(text="Mirror Chain", icon="LINKED")
        for key in ("chain_points", "chain_kinds", "chain_minor_axes", "chain_direction", "chain_aperture"):
            box.prop(settings, key)
        copy_settings(settings, box.operator("procanim.add_mirror_chain", icon="ADD"))

        box = layout.box()
        box.label(text="Fresnel Reflector", icon="MESH_CIRCLE")
        for key in ("plate_point", "plate_normal", "plate_radius", "zones", "zone_width", "segments"):
            box.prop(settings, key)
        row = box.row()
        row.prop(settings, "draft")
        row.prop(settings, "embed_in_slab")
        if settings.draft:
            box.prop(settings, "risers")
        box.prop(settings, "support")
        if settings.support in {"SPHERE", "CYLINDER"}:
            box.prop(settings, "support_radius")
        if settings.embed_in_slab:
            box.prop(settings, "slab_thickness")
            box.prop(settings, "refractive_index")
        copy_settings(settings, box.operator("procanim.add_fresnel_reflector", icon="ADD"))

        box = layout.box()
        box.label(text="Rays", icon="LIGHT_SUN")
        for key in ("ray_pattern", "ray_count", "from_focus", "animate"):
            box.prop(settings, key)
        if settings.animate:
            box.prop(settings, "travel_frames")
        copy_settings(settings, box.operator("procanim.trace_rays", icon="CURVE_PATH"))

        obj = context.active_object
        if obj is None or obj.type != "MESH" or obj.procanim.mirror.mirror_type == "NONE":
            return
        recipe = obj.procanim.mirror
        box = layout.box()
        box.label(text=f"Active: {obj.name}", icon="OBJECT_DATA")
        if recipe.status:
            box.label(text=recipe.status, icon="ERROR")
        box.prop(recipe, "focus_1")
        box.prop(recipe, "focus_2")
        keys = (
            ("minor_axis", "aperture", "surface", "resolution")
            if recipe.mirror_type == "ELLIPSOID"
            else ("plate_radius", "zones", "segments", "draft", "risers", "support", "support_radius")
        )
        for key in keys:
            box.prop(recipe, key)
        column = box.column(align=True)
        if recipe.spot_rays:
            column.label(text=f"Spot RMS {recipe.spot_rms:.3g} m, max {recipe.spot_max:.3g} m")
            column.label(text=f"Path spread {recipe.path_spread:.3g} m over {recipe.spot_rays} rays")
            if recipe.mesh_spot_max > 0.0:
                column.label(
                    text=f"Mesh spot RMS {recipe.mesh_spot_rms:.3g} m, max {recipe.mesh_spot_max:.3g} m"
                )
        else:
            column.label(text="Trace rays to measure the spot size", icon="INFO")


SCENE_SETTINGS = ("mirrors", MirrorSettings)
OBJECT_SETTINGS = ("mirror", MirrorObjectSettings)
classes = (MirrorSettings, MirrorObjectSettings, MirrorPresetMenu, PROCANIM_PT_mirrors)
