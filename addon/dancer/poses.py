"""Ballet positions and key poses as joint angle targets (radians); see :mod:`.steps`.

Kept as the import place of the pose functions the paper's sequence was written with.
"""

from .steps import (
    DEFAULT_TURNOUT,
    POSITIONS,
    RELEVE_ANGLE,
    STEPS,
    arms,
    arms_low,
    mirror_pose,
    position_pose,
    releve_pose,
    retire_lift_pose,
    retire_pose,
)

__all__ = [
    "DEFAULT_TURNOUT",
    "POSITIONS",
    "RELEVE_ANGLE",
    "STEPS",
    "arms",
    "arms_low",
    "mirror_pose",
    "position_pose",
    "releve_pose",
    "retire_lift_pose",
    "retire_pose",
]
