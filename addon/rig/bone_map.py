"""Which bone of a humanoid rig plays which role: naming conventions, detection and overrides.

Roles are ProcAnim's names for the parts of a body (``hips``, ``upper_arm.L``, ``shin.R``, ...);
a convention lists, per role, the bone names a family of rigs uses for it. Detection scores every
convention by how many of its names the armature has and keeps the best; the user's own choices
(a role set by hand in the sidebar) always win.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from .errors import RigError

SIDES = ("L", "R")
CENTRE_ROLES = ("hips", "spine", "chest", "neck", "head")
ARM_PARTS = ("shoulder", "upper_arm", "forearm", "hand")
LEG_PARTS = ("thigh", "shin", "foot", "toe")


def side_role(part: str, side: str) -> str:
    return f"{part}.{side}"


ARM_ROLES = tuple(side_role(p, s) for s in SIDES for p in ARM_PARTS)
LEG_ROLES = tuple(side_role(p, s) for s in SIDES for p in LEG_PARTS)
ROLES = CENTRE_ROLES + ARM_ROLES + LEG_ROLES
#: What a rig must have for its hands to juggle (shoulder bones are optional).
REQUIRED_ARM_ROLES = tuple(side_role(p, s) for s in SIDES for p in ("upper_arm", "forearm", "hand"))
REQUIRED_LEG_ROLES = tuple(side_role(p, s) for s in SIDES for p in ("thigh", "shin", "foot"))

ROLE_LABELS = {
    "hips": "Hips",
    "spine": "Spine",
    "chest": "Chest",
    "neck": "Neck",
    "head": "Head",
    **{
        side_role(p, s): f"{p.replace('_', ' ').title()} {'Left' if s == 'L' else 'Right'}"
        for s in SIDES
        for p in ARM_PARTS + LEG_PARTS
    },
}


@dataclass(frozen=True)
class Convention:
    """A naming family: ``candidates[role]`` are the names to try, in order; ``{p}`` is a prefix."""

    key: str
    label: str
    candidates: Mapping[str, tuple[str, ...]]


def _sided(
    templates: Mapping[str, tuple[str, ...]], side_names: Mapping[str, str]
) -> dict[str, tuple[str, ...]]:
    """Expand ``{side}`` / ``{Side}`` templates for both sides."""
    out: dict[str, tuple[str, ...]] = {}
    for part, names in templates.items():
        for side in SIDES:
            out[side_role(part, side)] = tuple(
                n.format(side=side, lower=side.lower(), Side=side_names[side]) for n in names
            )
    return out


_LR = {"L": "Left", "R": "Right"}

RIGIFY = Convention(
    "RIGIFY",
    "Rigify control rig",
    {
        "hips": ("DEF-spine",),
        "spine": ("DEF-spine.001",),
        "chest": ("DEF-spine.003", "DEF-spine.002"),
        "neck": ("DEF-spine.004",),
        "head": ("DEF-spine.006", "DEF-spine.005"),
        **_sided(
            {
                "shoulder": ("DEF-shoulder.{side}",),
                "upper_arm": ("DEF-upper_arm.{side}",),
                "forearm": ("DEF-forearm.{side}",),
                "hand": ("DEF-hand.{side}",),
                "thigh": ("DEF-thigh.{side}",),
                "shin": ("DEF-shin.{side}",),
                "foot": ("DEF-foot.{side}",),
                "toe": ("DEF-toe.{side}",),
            },
            _LR,
        ),
    },
)
METARIG = Convention(
    "METARIG",
    "Rigify metarig / deform names",
    {
        "hips": ("spine", "hips"),
        "spine": ("spine.001",),
        "chest": ("spine.003", "spine.002", "chest"),
        "neck": ("spine.004", "neck"),
        "head": ("spine.006", "spine.005", "head"),
        **_sided({p: (f"{p}.{{side}}",) for p in ARM_PARTS + LEG_PARTS}, _LR),
    },
)
PROCANIM = Convention(
    "PROCANIM",
    "ProcAnim figure",
    {
        "hips": ("hips", "pelvis"),
        "spine": ("spine", "abdomen"),
        "chest": ("chest", "thorax", "spine"),
        "neck": ("neck",),
        "head": ("head",),
        **_sided({p: (f"{p}.{{side}}",) for p in ARM_PARTS + LEG_PARTS}, _LR),
    },
)
MIXAMO = Convention(
    "MIXAMO",
    "Mixamo",
    {
        "hips": ("{p}Hips",),
        "spine": ("{p}Spine",),
        "chest": ("{p}Spine2", "{p}Spine1"),
        "neck": ("{p}Neck",),
        "head": ("{p}Head",),
        **_sided(
            {
                "shoulder": ("{{p}}{Side}Shoulder",),
                "upper_arm": ("{{p}}{Side}Arm",),
                "forearm": ("{{p}}{Side}ForeArm",),
                "hand": ("{{p}}{Side}Hand",),
                "thigh": ("{{p}}{Side}UpLeg",),
                "shin": ("{{p}}{Side}Leg",),
                "foot": ("{{p}}{Side}Foot",),
                "toe": ("{{p}}{Side}ToeBase",),
            },
            _LR,
        ),
    },
)
UNREAL = Convention(
    "UNREAL",
    "Unreal mannequin",
    {
        "hips": ("pelvis",),
        "spine": ("spine_01",),
        "chest": ("spine_05", "spine_03", "spine_02"),
        "neck": ("neck_01",),
        "head": ("head",),
        **_sided(
            {
                "shoulder": ("clavicle_{lower}",),
                "upper_arm": ("upperarm_{lower}",),
                "forearm": ("lowerarm_{lower}",),
                "hand": ("hand_{lower}",),
                "thigh": ("thigh_{lower}",),
                "shin": ("calf_{lower}",),
                "foot": ("foot_{lower}",),
                "toe": ("ball_{lower}",),
            },
            _LR,
        ),
    },
)
CONVENTIONS = (RIGIFY, METARIG, MIXAMO, UNREAL, PROCANIM)
CONVENTION_LABELS = {c.key: c.label for c in CONVENTIONS} | {"CUSTOM": "Custom"}

#: Rigify's control bones that drive the deform arm, per side.
RIGIFY_ARM_CONTROLS = (
    "hand_ik.{side}",
    "upper_arm_ik_target.{side}",
    "upper_arm_parent.{side}",
    "upper_arm_ik.{side}",
    "MCH-forearm_ik.{side}",
)


@dataclass(frozen=True)
class BoneMap:
    """Role -> bone name (missing roles absent); ``convention`` is a key of ``CONVENTION_LABELS``."""

    convention: str
    bones: dict[str, str] = field(default_factory=dict)

    def get(self, role: str) -> str | None:
        return self.bones.get(role)

    def missing(self, roles: Iterable[str]) -> list[str]:
        return [r for r in roles if r not in self.bones]

    def require(self, roles: Iterable[str], what: str, rig_name: str = "the armature") -> None:
        """Raise naming every missing role if any of ``roles`` has no bone."""
        missing = self.missing(roles)
        if missing:
            names = ", ".join(ROLE_LABELS[r].lower() for r in missing)
            raise RigError(
                f"{rig_name} has no recognisable {what}: no bone for {names}. "
                "Set them in the sidebar's Bone Map (ProcAnim > Rig) or rename the bones"
            )

    @property
    def is_rigify(self) -> bool:
        return self.convention == "RIGIFY"


def _mixamo_prefix(names: Iterable[str]) -> str:
    """The prefix before ``LeftForeArm`` (``mixamorig:``, ``mixamorig1:``, or none)."""
    for name in names:
        if name.endswith("LeftForeArm"):
            return name[: -len("LeftForeArm")]
    return ""


def _match(convention: Convention, lookup: Mapping[str, str], prefix: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for role, candidates in convention.candidates.items():
        for candidate in candidates:
            name = lookup.get(candidate.replace("{p}", prefix).lower())
            if name is not None:
                found[role] = name
                break
    return found


def detect_bone_map(bone_names: Iterable[str], overrides: Mapping[str, str] | None = None) -> BoneMap:
    """The best-matching convention's map for an armature with ``bone_names``.

    Names match case-insensitively. ``overrides`` (role -> bone name; empty strings ignored) replace
    detected roles; an override naming a bone the armature lacks is an error.
    """
    names = list(bone_names)
    lookup: dict[str, str] = {}
    for name in names:
        lookup.setdefault(name.lower(), name)
    prefix = _mixamo_prefix(names)
    best_key, best = "CUSTOM", {}
    for convention in CONVENTIONS:
        found = _match(convention, lookup, prefix)
        if convention is RIGIFY and "hand_ik.l" not in lookup:
            continue  # DEF- names without Rigify's controls are a plain deform skeleton
        # Arms count double: they are what every generator needs first.
        score = len(found) + sum(1 for r in REQUIRED_ARM_ROLES if r in found)
        best_score = len(best) + sum(1 for r in REQUIRED_ARM_ROLES if r in best)
        if score > best_score:
            best_key, best = convention.key, found
    bones = dict(best)
    manual = False
    for role, bone in (overrides or {}).items():
        if not bone:
            continue
        if role not in ROLE_LABELS:
            raise RigError(f"unknown bone map role {role!r}")
        if bone not in lookup.values():
            raise RigError(
                f"the bone map sets {ROLE_LABELS[role].lower()} to {bone!r}, which the armature lacks"
            )
        if bones.get(role) != bone:
            manual = True
        bones[role] = bone
    if not best:
        best_key = "CUSTOM"
    elif manual:
        best_key = "CUSTOM" if best_key != "RIGIFY" else best_key
    return BoneMap(best_key, bones)


def rigify_controls(bone_names: Iterable[str], side: str) -> dict[str, str] | None:
    """Rigify's arm controls for ``side`` (``hand_ik``, ``pole``, ``parent``, ``ik`` bones), or None
    if the armature lacks any of them."""
    names = set(bone_names)
    keys = ("hand_ik", "pole", "parent", "upper_ik", "forearm_ik")
    found = {k: t.format(side=side) for k, t in zip(keys, RIGIFY_ARM_CONTROLS, strict=True)}
    return found if all(v in names for v in found.values()) else None
