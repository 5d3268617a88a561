"""ProcAnim: procedural animation generators for Blender.

``register()`` and ``unregister()`` mirror each other exactly: every class, property and handler
added by one is removed by the other, in reverse order. Imports happen inside them so that
importing this package (as pytest does for the repository root) never needs ``bpy``.
"""

from __future__ import annotations


def _parts():
    from . import operators, panels

    classes = (*operators.classes, *panels.classes)
    # Modules with handlers of their own expose register()/unregister().
    hooks = [
        module
        for module in (*operators.MODULES, *panels.MODULES)
        if callable(getattr(module, "register", None)) and callable(getattr(module, "unregister", None))
    ]
    return classes, panels, hooks


def register() -> None:
    import bpy

    classes, panels, hooks = _parts()
    for cls in classes:
        bpy.utils.register_class(cls)
    panels.register_properties()
    for module in hooks:
        module.register()


def unregister() -> None:
    import bpy

    classes, panels, hooks = _parts()
    for module in reversed(hooks):
        module.unregister()
    panels.unregister_properties()
    for cls in reversed(classes):
        bpy.utils.unregister_class(cls)
