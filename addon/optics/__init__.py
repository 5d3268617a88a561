"""Ellipsoidal and Fresnel mirrors: spheroids from two foci, focus-to-focus chains, flat Fresnel plates,
vectorised ray tracing and spot-size measures (no bpy)."""

from .ellipsoid import Ellipsoid, ellipsoid_from_foci, ellipsoid_from_path_length, reflect
from .errors import OpticsError
from .mesh import STEP_FACE, Mesh, MeshSurface, ellipsoid_mirror_mesh, facet_normals, fresnel_reflector
from .mirrors import (
    KINDS,
    BounceRecord,
    EllipsoidMirror,
    MirrorChain,
    TraceResult,
    cap_sample_directions,
    ellipsoid_mirror,
    mirror_chain,
    rays_to_mirror,
    trace,
    trace_chain,
    trace_records,
)
from .quality import SpotSize, chain_spot, mesh_spot, mirror_spot, spot_of_rays

__all__ = [
    "KINDS",
    "STEP_FACE",
    "BounceRecord",
    "Ellipsoid",
    "EllipsoidMirror",
    "Mesh",
    "MeshSurface",
    "MirrorChain",
    "OpticsError",
    "SpotSize",
    "TraceResult",
    "cap_sample_directions",
    "chain_spot",
    "ellipsoid_from_foci",
    "ellipsoid_from_path_length",
    "ellipsoid_mirror",
    "ellipsoid_mirror_mesh",
    "facet_normals",
    "fresnel_reflector",
    "mesh_spot",
    "mirror_chain",
    "mirror_spot",
    "rays_to_mirror",
    "reflect",
    "spot_of_rays",
    "trace",
    "trace_chain",
    "trace_records",
]
