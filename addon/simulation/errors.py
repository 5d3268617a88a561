"""Errors raised by the particle simulation."""

from ..errors import ProcAnimError


class SimulationError(ProcAnimError, ValueError):
    """A simulation was set up with input it cannot use (bad indices, shapes, NaN, negative values)."""


class SimulationDivergedError(SimulationError):
    """The simulation blew up (NaN or runaway speed); ``frame`` is the frame where it happened."""

    def __init__(self, frame: int, reason: str) -> None:
        super().__init__(
            f"Simulation diverged at frame {frame}: {reason}. "
            "Use more substeps, a higher compliance (softer constraints) or more damping"
        )
        self.frame = frame
        self.reason = reason


class PC2Error(ProcAnimError, OSError):
    """A PC2 point-cache file cannot be read or written (missing, truncated, wrong header)."""
