"""ProcAnim's domain core: pure numpy / standard-library code, no ``bpy``.

Every generator lives in its own subpackage and raises subclasses of
:class:`addon.errors.ProcAnimError`, which the operator layer reports once.
"""
