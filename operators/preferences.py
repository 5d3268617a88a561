"""Where operators read the extension's preferences (the class itself is in panels/preferences.py).

:func:`preferences` returns None when the extension is not registered as an add-on (a bare import
in a script), so every caller keeps a built-in default.
"""

from __future__ import annotations

import bpy

# The extension's own package (``bl_ext.<repo>.procanim``): preferences are keyed by it.
PACKAGE = __package__.rpartition(".")[0]
DEFAULT_CACHE_DIRECTORY = "//procanim_cache"
DEFAULT_GENOME_DIRECTORY = "//"


def preferences(context: bpy.types.Context | None = None) -> bpy.types.AddonPreferences | None:
    """The extension's preferences, or None when it is not enabled as an add-on."""
    context = context or bpy.context
    addon = context.preferences.addons.get(PACKAGE)
    return addon.preferences if addon is not None else None


classes = ()
