"""The optics domain error."""

from ..errors import ProcAnimError


class OpticsError(ProcAnimError, ValueError):
    """A mirror, reflector or ray bundle cannot be built from the given input; the message says why."""
