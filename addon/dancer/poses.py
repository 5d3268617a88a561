"""Ballet positions and the key poses of the sequence, as joint angle targets (radians).

Joint names are ``<body>_<axis>`` (see :mod:`.model`). Left is the supporting leg.
Turnout is external hip rotation; heels are brought together (or crossed in fifth) by hip
adduction, and the feet are flattened on the floor afterwards by the simulator.
"""

from __future__ import annotations

import numpy as np

from .anthropometry import DancerError

POSITIONS = ("first_position", "second_position", "fifth_position")
STEPS = ("weight_shift", "retire", "releve")
DEFAULT_TURNOUT = np.radians(40.0)
RELEVE_ANGLE = 0.75


def arms_low() -> dict[str, float]:
    """Bras bas: arms rounded slightly forward and away from the body, elbows soft."""
    return {
        "upper_arm.L_x": 0.25, "upper_arm.R_x": -0.25,
        "upper_arm.L_y": -0.15, "upper_arm.R_y": -0.15,
        "forearm.L_y": -0.35, "forearm.R_y": -0.35,
    }


def position_pose(name: str, turnout: float = DEFAULT_TURNOUT, height: float = 1.65) -> dict[str, float]:
    """Joint targets of a basic ballet position (feet placement by hip rotation and spread)."""
    if name not in POSITIONS:
        raise DancerError(f"unknown position {name!r}; choose one of {', '.join(POSITIONS)}")
    if not 0.0 <= turnout <= np.radians(80.0):
        raise DancerError(f"turnout must be between 0 and 80 degrees, got {np.degrees(turnout):.1f}")
    pose = arms_low()
    pose["thigh.L_z"] = turnout
    pose["thigh.R_z"] = -turnout
    leg = 0.491 * height
    hip = 0.050 * height
    heel = 0.035 * height
    if name == "first_position":
        # Heels touching: each ankle sits a heel's sideways offset from the midline.
        ankle_y = heel * np.sin(turnout) + 0.005 * height
    elif name == "second_position":
        ankle_y = hip + 0.06 * height
    else:
        # Fifth: the feet overlap, the right (front) heel at the left toes; the legs cross.
        ankle_y = -0.012 * height
    spread = np.arctan2(ankle_y - hip, leg)
    pose["thigh.L_x"] = spread
    pose["thigh.R_x"] = -spread
    if name == "fifth_position":
        # Symmetric split so both feet reach the floor with a level pelvis.
        pose["thigh.R_y"] = -0.08
        pose["thigh.L_y"] = 0.08
    return pose


def retire_pose(base: dict[str, float]) -> dict[str, float]:
    """Working (right) leg lifted, turned out, its toes at the supporting knee."""
    pose = dict(base)
    pose.update({
        "thigh.R_x": -0.55, "thigh.R_y": -0.95, "thigh.R_z": -0.6,
        "shin.R_y": 2.1, "foot.R_y": 0.6, "toe.R_y": 0.3,
        "upper_arm.L_x": 0.35, "upper_arm.R_x": -0.35,
    })
    return pose


def retire_lift_pose(base: dict[str, float]) -> dict[str, float]:
    """Halfway to retiré: the working foot lifted flat, knee bent twice as far as the hip."""
    pose = dict(base)
    pose.update({"thigh.R_y": -0.35, "shin.R_y": 0.75, "foot.R_y": -0.42, "toe.R_y": 0.0})
    return pose


def releve_pose(base: dict[str, float]) -> dict[str, float]:
    """Supporting foot on demi-pointe: ankle plantarflexed, toes flat on the floor."""
    pose = dict(base)
    # Rolling the foot over the ball carries the ankle forward; lean back by as much so the
    # COM stays over the ball instead of leaving the controller to catch it.
    ball, ankle_above_ball, com_above_ankle = 0.074, 0.0315, 0.52
    ankle_travel = ball * (1.0 - np.cos(RELEVE_ANGLE)) + ankle_above_ball * np.sin(RELEVE_ANGLE)
    pose["foot.L_y"] = base.get("foot.L_y", 0.0) + RELEVE_ANGLE + ankle_travel / com_above_ankle
    pose["toe.L_y"] = base.get("toe.L_y", 0.0) - RELEVE_ANGLE
    return pose


def validate_sequence(sequence: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """A position followed by a prefix of weight_shift, retire, releve (each needs the previous)."""
    seq = tuple(sequence)
    if not seq:
        raise DancerError("the sequence is empty; start it with a position such as 'first_position'")
    if seq[0] not in POSITIONS:
        raise DancerError(f"the sequence must start with a position ({', '.join(POSITIONS)}), got {seq[0]!r}")
    steps = seq[1:]
    if steps and seq[0] != "first_position":
        # The weight shift is tuned from first position only; from the wide second or the
        # crossed fifth the dancer falls, so refuse instead of baking a fall.
        raise DancerError(f"steps after {seq[0]!r} are not supported; start the sequence from"
                          f" 'first_position' or stand in {seq[0]!r} alone")
    for i, step in enumerate(steps):
        if step not in STEPS:
            raise DancerError(f"unknown step {step!r}; steps are {', '.join(STEPS)}")
        if step != STEPS[i]:
            raise DancerError(f"step {step!r} needs {STEPS[i]!r} before it (order: {', '.join(STEPS)})")
    return seq
