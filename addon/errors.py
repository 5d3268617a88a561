"""Domain exceptions shared by every generator."""


class ProcAnimError(Exception):
    """An error the user can act on; its message names what is wrong.

    The operator base turns it into one status-bar error and leaves the scene as it was.
    """


class PresetError(ProcAnimError, ValueError):
    """A bundled or user preset file cannot be read or does not fit its settings."""


class PathError(ProcAnimError, ValueError):
    """A file or folder path is empty, malformed, too long, unreadable or unwritable."""
