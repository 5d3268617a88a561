"""Errors raised by the geometry tools."""

from ..errors import ProcAnimError


class GeometryError(ProcAnimError, ValueError):
    """The input points cannot define the requested fit or transform (too few, degenerate, NaN)."""
