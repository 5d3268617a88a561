"""The handlers that keep every mirror in step with its focus objects."""

import bpy
from bpy.app.handlers import persistent

from .recipes import mirror_objects, refresh_mirror


@persistent
def follow_foci(scene: bpy.types.Scene, depsgraph=None) -> None:
    """``depsgraph_update_post`` and ``frame_change_post``: rebuild every mirror whose focus objects have
    moved (by hand, by a driver or by animation) or whose recipe was edited."""
    for obj in mirror_objects(scene):
        refresh_mirror(obj)


def _handler_lists():
    # Edits in the viewport arrive as depsgraph updates; animated foci arrive as frame changes.
    return (bpy.app.handlers.depsgraph_update_post, bpy.app.handlers.frame_change_post)


def register() -> None:
    for handlers in _handler_lists():
        if follow_foci not in handlers:
            handlers.append(follow_foci)


def unregister() -> None:
    for handlers in _handler_lists():
        while follow_foci in handlers:
            handlers.remove(follow_foci)
