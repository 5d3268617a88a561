"""Verlet / shape-matching bakes: soft bodies cached as PC2 (or shape keys), rigid piles keyed as
object transforms, ropes baked onto bone chains, and the geometry tools (fit line / plane, Kabsch align).

All computation happens in ``addon.simulation`` before anything is written, so a diverging run or
bad input leaves the scene exactly as it was.

Modules: ``properties`` (operator properties -> domain settings), ``blender_data`` (reading meshes and
colliders, shared writers), one module per bake (``softbody``, ``rigid``, ``rope``), ``geometry_tools``
and ``cli`` (the headless ``simulate`` subcommand).
"""

from .blender_data import body_of, cache_folder, collider_surfaces, mesh_arrays, selected_meshes
from .cli import add_cli
from .geometry_tools import PROCANIM_OT_align_kabsch, PROCANIM_OT_fit_line, PROCANIM_OT_fit_plane
from .properties import (
    CACHE_ITEMS,
    SOLVER_ITEMS,
    _AutoSubstepProperties,
    _RigidPileProperties,
    _RopeProperties,
    _SoftBodyProperties,
    _SolverProperties,
    simulation_settings,
)
from .rigid import PROCANIM_OT_add_rigid_pile_demo, PROCANIM_OT_bake_rigid_pile
from .rope import PROCANIM_OT_add_rope
from .softbody import PROCANIM_OT_add_sheet_demo, PROCANIM_OT_add_softbody_demo, PROCANIM_OT_bake_softbody

classes = (
    PROCANIM_OT_bake_softbody,
    PROCANIM_OT_add_softbody_demo,
    PROCANIM_OT_add_sheet_demo,
    PROCANIM_OT_bake_rigid_pile,
    PROCANIM_OT_add_rigid_pile_demo,
    PROCANIM_OT_add_rope,
    PROCANIM_OT_fit_line,
    PROCANIM_OT_fit_plane,
    PROCANIM_OT_align_kabsch,
)


__all__ = [
    "CACHE_ITEMS",
    "SOLVER_ITEMS",
    "PROCANIM_OT_add_rigid_pile_demo",
    "PROCANIM_OT_add_rope",
    "PROCANIM_OT_add_sheet_demo",
    "PROCANIM_OT_add_softbody_demo",
    "PROCANIM_OT_align_kabsch",
    "PROCANIM_OT_bake_rigid_pile",
    "PROCANIM_OT_bake_softbody",
    "PROCANIM_OT_fit_line",
    "PROCANIM_OT_fit_plane",
    "_AutoSubstepProperties",
    "_RigidPileProperties",
    "_RopeProperties",
    "_SoftBodyProperties",
    "_SolverProperties",
    "add_cli",
    "body_of",
    "cache_folder",
    "classes",
    "collider_surfaces",
    "mesh_arrays",
    "selected_meshes",
    "simulation_settings",
]
