"""PC2 point caches (the format Blender's Mesh Cache modifier reads), in pure numpy.

Layout, little-endian: ``b"POINTCACHE2\\0"``, int32 version (1), int32 point count, float32 start
frame, float32 sample rate (frames between samples), int32 sample count, then float32 xyz for
every point of every sample.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .errors import PC2Error

MAGIC = b"POINTCACHE2\0"
_HEADER = np.dtype(
    [
        ("magic", "S12"),
        ("version", "<i4"),
        ("points", "<i4"),
        ("start", "<f4"),
        ("rate", "<f4"),
        ("samples", "<i4"),
    ]
)


@dataclass(frozen=True)
class PointCache:
    """A read PC2 file: ``positions`` ``(samples, points, 3)`` float32, frame of the first sample, rate."""

    positions: NDArray[np.float32]
    start_frame: float
    sample_rate: float


def write_pc2(
    path: str | os.PathLike, positions: ArrayLike, start_frame: float = 0.0, sample_rate: float = 1.0
) -> Path:
    """Write ``positions`` ``(samples, points, 3)`` to ``path``, replacing any existing file atomically."""
    data = np.asarray(positions, dtype=np.float64)
    if data.ndim != 3 or data.shape[2] != 3 or data.shape[0] < 1 or data.shape[1] < 1:
        raise PC2Error(f"PC2 positions must have shape (samples, points, 3), got {data.shape}")
    if not np.all(np.isfinite(data)):
        raise PC2Error("PC2 positions contain NaN or infinity; nothing was written")
    if not (np.isfinite(start_frame) and np.isfinite(sample_rate) and sample_rate > 0):
        raise PC2Error(
            f"PC2 start frame must be finite and sample rate positive, got {start_frame}, {sample_rate}"
        )
    header = np.zeros(1, dtype=_HEADER)
    header[0] = (MAGIC, 1, data.shape[1], start_frame, sample_rate, data.shape[0])
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        # Write beside the target, then rename: a re-bake never leaves a half-written cache in place.
        handle, temporary = tempfile.mkstemp(prefix=target.name + ".", suffix=".tmp", dir=target.parent)
        with os.fdopen(handle, "wb") as stream:
            stream.write(header.tobytes())
            stream.write(data.astype("<f4").tobytes())
        os.replace(temporary, target)
    except OSError as error:
        raise PC2Error(f"cannot write PC2 cache {target}: {error}") from error
    return target


def read_pc2(path: str | os.PathLike) -> PointCache:
    """Read a PC2 file; raises PC2Error naming what is wrong with it."""
    source = Path(path)
    try:
        raw = source.read_bytes()
    except OSError as error:
        raise PC2Error(f"cannot read PC2 cache {source}: {error}") from error
    if len(raw) < _HEADER.itemsize:
        raise PC2Error(f"{source} is too short to be a PC2 file ({len(raw)} bytes)")
    header = np.frombuffer(raw, dtype=_HEADER, count=1)[0]
    if bytes(header["magic"]).ljust(12, b"\0") != MAGIC:
        raise PC2Error(f"{source} is not a PC2 file (bad header)")
    points, samples = int(header["points"]), int(header["samples"])
    if points < 0 or samples < 0:
        raise PC2Error(f"{source} has a corrupt header ({points} points, {samples} samples)")
    expected = _HEADER.itemsize + points * samples * 12
    if len(raw) < expected:
        raise PC2Error(f"{source} is truncated: {len(raw)} bytes, header promises {expected}")
    values = np.frombuffer(raw, dtype="<f4", count=points * samples * 3, offset=_HEADER.itemsize)
    return PointCache(
        values.reshape(samples, points, 3).copy(), float(header["start"]), float(header["rate"])
    )
