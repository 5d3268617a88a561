"""Geometry tools from the seed posts: Kabsch, robust polar rotation, line / plane fits, segment distance.

Public scripting API (names kept stable)::

    from addon.geometry import kabsch, polar_rotation, fit_line, fit_plane, closest_points_on_segments
"""

from .errors import GeometryError
from .fitting import fit_line, fit_plane
from .rotation import (
    kabsch,
    polar_rotation,
    polar_rotation_batch,
    quaternion_multiply,
    quaternion_to_matrix,
)
from .segments import closest_points_on_segments

__all__ = [
    "GeometryError",
    "closest_points_on_segments",
    "fit_line",
    "fit_plane",
    "kabsch",
    "polar_rotation",
    "polar_rotation_batch",
    "quaternion_multiply",
    "quaternion_to_matrix",
]
