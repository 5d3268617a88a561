"""Work and memory limits shared by every generator.

Hard limits on single properties keep each one sane; these checks catch the product of several
(zones x segments x rows, rays x frames, population x generations x seconds), so a request that
would exhaust memory or run for minutes is refused up front with what it would need.
"""

from __future__ import annotations

from .errors import ProcAnimError

#: Memory one request may allocate for its result (bytes).
MEMORY_LIMIT = 2 * 1024**3
#: Seconds of blocking work one request may ask for on a typical 2-core machine: under a minute, with
#: room to write the result.
TIME_LIMIT = 50.0


class TooMuchWorkError(ProcAnimError, ValueError):
    """A request is too big for memory or for a minute of work."""


def format_bytes(count: float) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if count < 1024 or unit == "TiB":
            return f"{count:.0f} {unit}" if unit == "bytes" else f"{count:.1f} {unit}"
        count /= 1024
    raise AssertionError("unreachable")


def format_seconds(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} minutes"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.0f} hours"
    return f"{seconds / 86400:.0f} days"


def check_memory(
    what: str, count: float, bytes_each: float, hint: str = "", limit: float = MEMORY_LIMIT
) -> None:
    """Refuse ``count`` items of ``bytes_each`` when they exceed ``limit``."""
    need = float(count) * float(bytes_each)
    if need > limit:
        raise TooMuchWorkError(
            f"{what} would need about {format_bytes(need)} of memory (at most {format_bytes(limit)})"
            + (f"; {hint}" if hint else "")
        )


def check_time(
    what: str, units: float, units_per_second: float, hint: str = "", limit: float = TIME_LIMIT
) -> None:
    """Refuse ``units`` of work at ``units_per_second`` when it would take longer than ``limit``."""
    seconds = float(units) / float(units_per_second)
    if seconds > limit:
        raise TooMuchWorkError(
            f"{what} would take about {format_seconds(seconds)} (at most about {format_seconds(limit)})"
            + (f"; {hint}" if hint else "")
        )
