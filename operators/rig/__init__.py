"""Drive a user's humanoid rig: read its bone map and rest pose, key its arms, store the map.

The bone map lives on the armature object (``Object.procanim.bone_map``, one bone name per role,
empty = detect); :func:`read_rig` combines it with detection and measures the rig in world space.
:func:`drive_arms` keys the arms so the palms follow given world paths: on a Rigify control rig
through ``hand_ik`` and the pole targets (IK on, IK stretch off), on any other skeleton by baking
the upper arm, forearm and hand rotations.

One module per concern: :mod:`.bone_map` (reading a rig), :mod:`.keys` (writing its keys),
:mod:`.juggle` (juggling on it), :mod:`.limbs` (IK chains), :mod:`.character` (the generated Rigify
human), :mod:`.dance` (dancer retargeting), :mod:`.operators` (the rig panel's operators) and
:mod:`.cli` (``--rig``). Everything used elsewhere is re-exported here.
"""

from .bone_map import (
    Rig,
    armature_by_name,
    bone_map_of,
    read_rig,
    rig_names,
    role_attribute,
    stored_overrides,
    world_rest,
)
from .character import generate_rigify_character
from .cli import load_cli_rigs
from .dance import (
    RIGIFY_ARM_CONTROLS_DANCE,
    RIGIFY_LEG_CONTROLS,
    dancer_body,
    dancer_masses,
    read_dancer_rig,
    retarget_dancer,
    rig_rest_rotation,
)
from .juggle import (
    drive_arms,
    juggle_rigs,
    place_rigs,
    placed_props,
    planned_palms,
    planning_body,
    stage_around,
)
from .keys import write_rotation_keys
from .limbs import LIMB_ITEMS, limb_chain, use_fk_for_limb
from .operators import PROCANIM_OT_detect_bone_map, PROCANIM_OT_use_active_rig, classes

__all__ = [
    "LIMB_ITEMS",
    "PROCANIM_OT_detect_bone_map",
    "PROCANIM_OT_use_active_rig",
    "RIGIFY_ARM_CONTROLS_DANCE",
    "RIGIFY_LEG_CONTROLS",
    "Rig",
    "armature_by_name",
    "bone_map_of",
    "classes",
    "dancer_body",
    "dancer_masses",
    "drive_arms",
    "generate_rigify_character",
    "juggle_rigs",
    "limb_chain",
    "load_cli_rigs",
    "place_rigs",
    "placed_props",
    "planned_palms",
    "planning_body",
    "read_dancer_rig",
    "read_rig",
    "retarget_dancer",
    "rig_names",
    "rig_rest_rotation",
    "role_attribute",
    "stage_around",
    "stored_overrides",
    "use_fk_for_limb",
    "world_rest",
    "write_rotation_keys",
]
