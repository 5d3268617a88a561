"""Inverse kinematics: quaternion CCD-IK, FABRIK and the analytic two-bone arm."""

from .two_bone import elbow_positions

__all__ = ["elbow_positions"]
