"""Errors of the fly generator; all are ProcAnimError so the operator layer reports them."""

from ..errors import ProcAnimError


class FlyError(ProcAnimError, ValueError):
    """A fly setting, genome or training parameter is out of range."""


class GenomeFileError(FlyError):
    """A genome or population file is missing, corrupt or does not fit the network."""
