"""ProcAnim: procedural animation generators for Blender.

``register()`` and ``unregister()`` mirror each other exactly: every class, property and handler
added by one is removed by the other, in reverse order.
"""

from __future__ import annotations

import bpy

from . import operators, panels

_classes = (*operators.classes, *panels.classes)


def _module_hooks():
    """Modules with handlers of their own expose register()/unregister()."""
    for module in (*operators.MODULES, *panels.MODULES):
        if callable(getattr(module, "register", None)) and callable(getattr(module, "unregister", None)):
            yield module


def register() -> None:
    for cls in _classes:
        bpy.utils.register_class(cls)
    panels.register_properties()
    for module in _module_hooks():
        module.register()


def unregister() -> None:
    for module in reversed(list(_module_hooks())):
        module.unregister()
    panels.unregister_properties()
    for cls in reversed(_classes):
        bpy.utils.unregister_class(cls)
