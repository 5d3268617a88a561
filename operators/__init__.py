"""Operators: thin shells that read properties, call addon/, write Blender data and report.

Every module here exports ``classes`` and may define ``add_cli(subparsers)`` (headless subcommand)
and ``register()`` / ``unregister()`` for handlers it owns.
"""

from . import presets, render
from . import fly
from . import ik
from . import mirrors
from . import dancer
from . import juggling
from . import simulation

MODULES = (
    fly,
    ik,
    mirrors,
    dancer,
    juggling,
    simulation,
    presets,
    render,
)

classes = tuple(cls for module in MODULES for cls in module.classes)
