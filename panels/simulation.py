"""The Simulation sub-panel: demo scenes to start from, solver and material settings, the three
bakes (soft body, rigid pile, rope), the collider flag of the active object and the geometry tools."""

from __future__ import annotations

import bpy
from bpy.props import BoolProperty, FloatProperty

from ..operators.simulation import _RigidPileProperties, _RopeProperties, _SoftBodyProperties
from .common import GeneratorPanel, copy_settings, draw_presets, preset_menu


def _annotations_of(*sources: type) -> dict:
    """Fresh copies of the operators' property definitions, so sidebar and operators share names,
    ranges and tooltips (no update callbacks: they crash bpy 4.2 at exit)."""
    found: dict = {}
    for source in sources:
        for klass in reversed(source.__mro__):
            for key, deferred in getattr(klass, "__annotations__", {}).items():
                if hasattr(deferred, "function"):
                    found[key] = deferred.function(**deferred.keywords)
    return found


SimulationSettings = type(
    "SimulationSettings",
    (bpy.types.PropertyGroup,),
    {
        "__doc__": "Sidebar settings of the simulation bakes (copied into the operators by name)",
        "__annotations__": _annotations_of(_SoftBodyProperties, _RigidPileProperties, _RopeProperties),
    },
)


class SimulationObjectSettings(bpy.types.PropertyGroup):
    """Per-object simulation flags"""

    collider: BoolProperty(
        name="Collider",
        description="Simulated bodies, piles and ropes collide with this mesh (modifiers applied)",
        default=False,
    )
    collider_friction: FloatProperty(
        name="Collider Friction",
        description="Friction of this collider's surface (0 = ice)",
        default=0.5,
        min=0.0,
        soft_max=2.0,
    )


SimulationPresetMenu = preset_menu("simulation", "Simulation Presets")


class PROCANIM_PT_simulation(GeneratorPanel, bpy.types.Panel):
    """Verlet, constraints and shape matching"""

    bl_label = "Verlet & Shape Matching"

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        settings = context.scene.procanim.simulation
        draw_presets(layout, SimulationPresetMenu, "Material Presets")

        start = layout.column(align=True)
        start.label(text="Start from an empty scene:")
        row = start.row(align=True)
        row.operator("procanim.add_softbody_demo", icon="MESH_ICOSPHERE")
        row.operator("procanim.add_rigid_pile_demo", icon="MESH_CUBE")
        start.operator("procanim.add_sheet_demo", icon="MESH_GRID")

        solver = layout.box().column()
        solver.use_property_split = True
        solver.label(text="Solver", icon="PHYSICS")
        solver.prop(settings, "frame_count")
        solver.prop(settings, "auto_substeps")
        if settings.auto_substeps:
            solver.prop(settings, "max_stretch")
        solver.prop(settings, "substeps")
        for name in ("iterations", "solver", "stretch_compliance", "damping", "friction", "particle_radius",
                     "use_ground"):  # fmt: skip
            solver.prop(settings, name)
        if settings.use_ground:
            solver.prop(settings, "ground_height")

        soft = layout.box().column()
        soft.use_property_split = True
        soft.label(text="Soft Body", icon="MOD_SOFT")
        # Baking several meshes at once leaves it off (the bake's report says so).
        soft.prop(settings, "limit_stretch")
        if settings.limit_stretch and not settings.auto_substeps:
            soft.prop(settings, "max_stretch")
        soft.prop(settings, "use_volume")
        if settings.use_volume:
            soft.prop(settings, "pressure")
        soft.prop(settings, "shape_stiffness")
        soft.prop(settings, "shape_regions")
        soft.prop(settings, "self_collision")
        soft.prop(settings, "cache_mode")
        if settings.cache_mode == "PC2":
            soft.prop(settings, "cache_directory")
        copy_settings(settings, soft.operator("procanim.bake_softbody", icon="RENDER_ANIMATION"))
        rigid = layout.box().column()
        rigid.use_property_split = True
        rigid.label(text="Rigid Pile", icon="RIGID_BODY")
        rigid.prop(settings, "static_friction")
        rigid.prop(settings, "pour_interval")
        drop = rigid.row()
        drop.active = settings.pour_interval > 0
        drop.prop(settings, "pour_drop")
        rigid.prop(settings, "rigid_contacts")
        sequential = rigid.row()
        sequential.active = settings.rigid_contacts == "SEQUENTIAL"
        sequential.prop(settings, "rolling_resistance")
        copy_settings(settings, rigid.operator("procanim.bake_rigid_pile", icon="RIGID_BODY"))

        rope = layout.box().column()
        rope.use_property_split = True
        rope.label(text="Rope", icon="CURVE_PATH")
        for name in ("links", "slack", "thickness", "pin_end"):
            rope.prop(settings, name)
        copy_settings(settings, rope.operator("procanim.add_rope", icon="CONSTRAINT_BONE"))

        obj = context.active_object
        if obj is not None and obj.type == "MESH":
            flags = layout.box().column()
            flags.label(text=f"Active: {obj.name}", icon="OBJECT_DATA")
            flags.prop(obj.procanim.simulation, "collider")
            if obj.procanim.simulation.collider:
                flags.prop(obj.procanim.simulation, "collider_friction")

        tools = layout.column(align=True)
        tools.label(text="Geometry Tools:")
        row = tools.row(align=True)
        row.operator("procanim.fit_line", icon="EMPTY_SINGLE_ARROW")
        row.operator("procanim.fit_plane", icon="MESH_PLANE")
        tools.operator("procanim.align_kabsch", icon="SNAP_ON")


SCENE_SETTINGS = ("simulation", SimulationSettings)
OBJECT_SETTINGS = ("simulation", SimulationObjectSettings)
classes = (SimulationSettings, SimulationObjectSettings, SimulationPresetMenu, PROCANIM_PT_simulation)
