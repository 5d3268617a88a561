"""Operators: thin shells that read properties, call addon/, write Blender data and report.

Every module here exports ``classes`` and may define ``add_cli(subparsers)`` (headless subcommand)
and ``register()`` / ``unregister()`` for handlers it owns.
"""

from . import dancer, fly, ik, jml, juggling, mirrors, portable, presets, render, rig, simulation

# Order of the subcommands in --help and of the operators' registration.
MODULES = (
    juggling,
    jml,
    ik,
    simulation,
    mirrors,
    dancer,
    fly,
    presets,
    portable,
    render,
    rig,
)

classes = tuple(cls for module in MODULES for cls in module.classes)
