"""Inverse kinematics: quaternion CCD-IK, FABRIK and the analytic two-bone arm.

Scripting API::

    from addon.kinematics import Chain, solve_ccd, solve_fabrik, forward_kinematics
    chain = Chain(offsets=[[0, 0, 1]] * 3, axes=[[1, 0, 0]] * 3)
    result = solve_ccd(chain, target=[0.5, 1.0, 1.5])
    result.rotations, result.positions, result.error, result.iterations, result.reachable
"""

from .. import quaternions
from .ccd import solve_ccd
from .chain import Chain, IKResult, KinematicsError, forward_kinematics, world_orientations
from .fabrik import rotations_from_positions, solve_fabrik
from .track import Solver, TrackResult, track
from .two_bone import elbow_positions, solve_two_bone

__all__ = [
    "Chain",
    "IKResult",
    "KinematicsError",
    "Solver",
    "TrackResult",
    "elbow_positions",
    "forward_kinematics",
    "quaternions",
    "rotations_from_positions",
    "solve_ccd",
    "solve_fabrik",
    "solve_two_bone",
    "track",
    "world_orientations",
]
