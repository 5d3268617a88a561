"""Segment masses, centres of mass and radii of gyration of the human body.

Male: Winter, *Biomechanics and Motor Control of Human Movement*, Table 4.1 (after Dempster).
Female: Plagenhoef 1983 mass and COM fractions; the trunk is split into thorax / abdomen / pelvis
in Winter's proportions and the radii of gyration are Winter's (Plagenhoef gives none).
Segment lengths are Drillis & Contini fractions of the body height.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ProcAnimError


class DancerError(ProcAnimError, ValueError):
    """A dancer parameter (height, mass, sex, gains, pose, sequence) is out of range or unknown."""


@dataclass(frozen=True)
class SegmentFraction:
    """One row of the table: fractions of body mass and of segment length."""

    mass: float
    com_from_proximal: float
    radius_of_gyration: float


_WINTER_TRUNK = {"thorax": 0.216, "abdomen": 0.139, "pelvis": 0.142}

WINTER_MALE: dict[str, SegmentFraction] = {
    "hand": SegmentFraction(0.006, 0.506, 0.297),
    "forearm": SegmentFraction(0.016, 0.430, 0.303),
    "upper_arm": SegmentFraction(0.028, 0.436, 0.322),
    "foot": SegmentFraction(0.0145, 0.50, 0.475),
    "shank": SegmentFraction(0.0465, 0.433, 0.302),
    "thigh": SegmentFraction(0.100, 0.433, 0.323),
    "head_neck": SegmentFraction(0.081, 1.000, 0.495),
    "thorax": SegmentFraction(0.216, 0.82, 0.0),
    "abdomen": SegmentFraction(0.139, 0.44, 0.0),
    "pelvis": SegmentFraction(0.142, 0.105, 0.0),
}


def _plagenhoef_female() -> dict[str, SegmentFraction]:
    trunk = 0.45
    trunk_sum = sum(_WINTER_TRUNK.values())
    rows = {
        "hand": SegmentFraction(0.0050, 0.468, 0.297),
        "forearm": SegmentFraction(0.0157, 0.434, 0.303),
        "upper_arm": SegmentFraction(0.0290, 0.458, 0.322),
        "foot": SegmentFraction(0.0133, 0.50, 0.475),
        "shank": SegmentFraction(0.0535, 0.419, 0.302),
        "thigh": SegmentFraction(0.1175, 0.428, 0.323),
        "head_neck": SegmentFraction(0.0820, 0.55, 0.495),
    }
    for name, winter_mass in _WINTER_TRUNK.items():
        winter = WINTER_MALE[name]
        rows[name] = SegmentFraction(trunk * winter_mass / trunk_sum, winter.com_from_proximal, 0.0)
    return rows


PLAGENHOEF_FEMALE: dict[str, SegmentFraction] = _plagenhoef_female()

# Landmark heights and lengths as fractions of body height (Drillis & Contini, Winter Fig. 4.1).
LENGTHS = {
    "upper_arm": 0.186,
    "forearm": 0.146,
    "hand": 0.108,
    "thigh": 0.245,
    "shank": 0.246,
    "foot": 0.152,
    "ankle_height": 0.039,
    "hip_height": 0.530,
    "knee_height": 0.285,
    "shoulder_height": 0.818,
    "lumbar_height": 0.600,   # L4/L5: top of Winter's pelvis segment
    "thoracic_height": 0.700,  # T12/L1: top of Winter's abdomen segment
    "ear_height": 0.936,
    "hip_half_width": 0.050,
    "shoulder_half_width": 0.110,
    "foot_half_width": 0.027,
    "heel_behind_ankle": 0.035,
    "ball_ahead_of_ankle": 0.074,   # metatarsal heads: the toe joint
    "toe_ahead_of_ankle": 0.117,
}

# Fraction of the table's foot mass carried by the toe segment (phalanges and soft tissue).
TOE_MASS_SHARE = 0.15


def segment_table(sex: str) -> dict[str, SegmentFraction]:
    """The anthropometric table for ``sex`` ("female" or "male")."""
    if sex == "female":
        return PLAGENHOEF_FEMALE
    if sex == "male":
        return WINTER_MALE
    raise DancerError(f"sex must be 'female' or 'male', got {sex!r}")


def total_mass_fraction(table: dict[str, SegmentFraction]) -> float:
    """Sum of mass fractions over the whole body (paired segments twice): 1.0 for a valid table."""
    paired = ("hand", "forearm", "upper_arm", "foot", "shank", "thigh")
    return sum(row.mass * (2 if name in paired else 1) for name, row in table.items())
