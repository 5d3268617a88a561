"""Juggling: siteswap notation and the data the motion planner turns into keyframes.

Scripting API: ``parse_siteswap(text) -> Siteswap`` (raises ``SiteswapError``), ``summarize(text)``
for one-line feedback, and the model classes ``Siteswap``, ``Throw``, ``Bounce``.
"""

from .model import HAND_NAMES, LEFT, RIGHT, Bounce, Siteswap, Throw
from .motion import Pattern, plan_pattern
from .notation import SiteswapError, parse_siteswap, summarize

__all__ = [
    "HAND_NAMES",
    "LEFT",
    "RIGHT",
    "Bounce",
    "Pattern",
    "Siteswap",
    "SiteswapError",
    "Throw",
    "parse_siteswap",
    "plan_pattern",
    "summarize",
]
