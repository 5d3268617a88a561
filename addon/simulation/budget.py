"""How much a bake asks for, checked before it starts: frames x substeps x iterations over every
particle and constraint, against a time limit, and the baked positions against memory."""

from __future__ import annotations

from .. import limits
from .scenes import SimulationSettings

#: Fixed cost of one substep's projection sweep (collisions, friction, bookkeeping), and the cost per
#: particle or constraint in it, measured on a busy 2-core machine (a 48-particle pile: 2.4 ms per
#: substep-iteration; a 642-vertex jelly: 4 ms).
SECONDS_PER_SWEEP = 2.5e-3
SECONDS_PER_ELEMENT = 1e-6
#: Positions kept per particle and frame, and what the writers make of them (bytes, with margin).
BYTES_PER_PARTICLE_FRAME = 64.0
#: Substeps assumed per frame when they are chosen automatically (few while falling, more on impact).
AUTO_SUBSTEPS_ESTIMATE = 20
#: The same when the world limits strain at each frame's end (World.strain_limiting): the icosphere
#: drops took 6-8 substeps a frame on average at 642-40,962 vertices, the limiting's passes about as
#: much again.
LIMITED_SUBSTEPS_ESTIMATE = 8


def substeps_estimate(settings: SimulationSettings, strain_limited: bool = False) -> int:
    if settings.auto_substeps:
        typical = LIMITED_SUBSTEPS_ESTIMATE if strain_limited else AUTO_SUBSTEPS_ESTIMATE
        return max(settings.min_substeps, typical)
    return settings.substeps


def check_bake_size(
    what: str,
    settings: SimulationSettings,
    particles: int,
    constraints: int,
    time_limit: float = limits.TIME_LIMIT,
    strain_limited: bool = False,
) -> None:
    """Refuse a bake that would run past ``time_limit`` seconds or not fit in memory
    (``strain_limited``: the world limits strain, so automatic substeps stay few)."""
    frames = settings.frame_count
    substeps = substeps_estimate(settings, strain_limited)
    sweeps = float(frames) * substeps * settings.iterations
    seconds = sweeps * (SECONDS_PER_SWEEP + SECONDS_PER_ELEMENT * (particles + constraints))
    description = (
        f"{what}: {frames} frames x {substeps} substeps x {settings.iterations} "
        f"iterations over {particles} particles"
    )
    hint = "use fewer frames, substeps or iterations (or a coarser mesh)"
    limits.check_memory(description, float(frames + 1) * particles, BYTES_PER_PARTICLE_FRAME, hint)
    limits.check_time(description, seconds, 1.0, hint, limit=time_limit)
