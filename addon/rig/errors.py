"""Errors of the rig layer."""

from ..errors import ProcAnimError


class RigError(ProcAnimError, ValueError):
    """An armature that cannot be driven: missing roles, a lying or tilted rig, unknown units."""
