"""Ellipsoidal and Fresnel mirrors: add them from focus objects, keep them in step with their foci, and
trace rays that show the light going from one focus to the other.

Every mirror object stores its recipe in ``Object.procanim.mirror`` (focus objects, minor axis, cap
side, plate settings). A ``depsgraph_update_post`` handler rebuilds a mirror's mesh whenever one of its
focus objects has moved, so the geometry is never stale; editing the recipe in the sidebar rebuilds it
too.

The package: ``recipes`` (recipe -> mesh, creating objects), ``properties`` (operator properties the
sidebar reuses), ``add`` and ``trace`` (the operators), ``handlers`` (follow the foci), ``cli``
(headless subcommand and demo stage).
"""

from .add import (
    PROCANIM_OT_add_ellipsoid_mirror,
    PROCANIM_OT_add_fresnel_reflector,
    PROCANIM_OT_add_mirror_chain,
)
from .cli import add_cli, add_demo_stage
from .handlers import follow_foci, register, unregister
from .properties import _EllipsoidProperties, _FociProperties, _FresnelProperties
from .recipes import focus_positions, mesh_of, mirror_objects, mirror_of, rebuild_mirror, recipe_changed
from .trace import PROCANIM_OT_trace_rays

classes = (
    PROCANIM_OT_add_ellipsoid_mirror,
    PROCANIM_OT_add_mirror_chain,
    PROCANIM_OT_add_fresnel_reflector,
    PROCANIM_OT_trace_rays,
)

__all__ = [
    "PROCANIM_OT_add_ellipsoid_mirror",
    "PROCANIM_OT_add_fresnel_reflector",
    "PROCANIM_OT_add_mirror_chain",
    "PROCANIM_OT_trace_rays",
    "_EllipsoidProperties",
    "_FociProperties",
    "_FresnelProperties",
    "add_cli",
    "add_demo_stage",
    "classes",
    "focus_positions",
    "follow_foci",
    "mesh_of",
    "mirror_objects",
    "mirror_of",
    "rebuild_mirror",
    "recipe_changed",
    "register",
    "unregister",
]
