"""Names and files every part of the fly's Blender side shares."""

from __future__ import annotations

from pathlib import Path

from .. import paths

SHIPPED_GENOME = Path(__file__).resolve().parent.parent.parent / "presets" / "fly" / "hover.npz"
SHIPPED_STEERING_GENOME = SHIPPED_GENOME.with_name("steer.npz")
STROKE_HOVER_GENOME = SHIPPED_GENOME.with_name("stroke_hover.npz")
STROKE_STEERING_GENOME = SHIPPED_GENOME.with_name("stroke_steer.npz")
SIZE_KEY = "procanim_fly_size"
WING_MATERIAL = "Fly Wing Veined"
MIN_KEY_SPACING = 0.011  # frames: Blender treats keys within 0.01 frame of each other as one
COLLECTION = "Fly"
PART_KEY = "procanim_fly_part"
DEFAULT_OUTPUT = "//fly_trained.npz"
CURVE_IMAGE = "ProcAnim Fly Training"
# 4.5+ warns on "//" paths unless the property says it takes blend-relative paths; 4.2 has no such flag
PATH_OPTIONS = paths.BLEND_RELATIVE
#: Seconds of flight simulated and keyed per wall-clock second (1 ms steps, wing keys every 2 ms),
#: measured on a busy 2-core machine.
BAKED_FLIGHT_SECONDS_PER_SECOND = 2.0
