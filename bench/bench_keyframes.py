"""Bulk keyframe writer vs a keyframe_insert loop: 6 F-curves x 10,000 keys, same values.

# bench: every-blender-version
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import best_time, disable_extension, enable_extension, record  # noqa: E402

KEYS = 10_000


def main() -> None:
    package = enable_extension()
    import bpy

    try:
        writers = importlib.import_module(f"{package}.operators.writers")
        frames = np.arange(1, KEYS + 1, dtype=np.float64)
        locations = np.column_stack([np.sin(frames * 0.01), np.cos(frames * 0.01), frames * 1e-3])
        rotations = locations[:, ::-1] * 0.5

        def fresh_object(name: str):
            bpy.ops.wm.read_homefile(use_empty=True)
            obj = bpy.data.objects.new(name, None)
            bpy.context.scene.collection.objects.link(obj)
            return obj

        def bulk() -> None:
            obj = fresh_object("Bulk")
            writers.write_channels(obj, "location", frames, locations)
            writers.write_channels(obj, "rotation_euler", frames, rotations)

        def naive() -> None:
            obj = fresh_object("Naive")
            for index, frame in enumerate(frames):
                obj.location = locations[index]
                obj.rotation_euler = rotations[index]
                obj.keyframe_insert("location", frame=frame)
                obj.keyframe_insert("rotation_euler", frame=frame)

        bulk_seconds = best_time(bulk, repeat=5)
        naive_seconds = best_time(naive, repeat=1)
        version = bpy.app.version_string
        record(f"keyframes: bulk writer, 6x{KEYS} keys (Blender {version})", bulk_seconds * 1e3, "ms")
        record(
            f"keyframes: keyframe_insert loop, 6x{KEYS} keys (Blender {version})", naive_seconds * 1e3, "ms"
        )
        record(
            f"keyframes: writer speed-up over keyframe_insert (Blender {version})",
            naive_seconds / bulk_seconds,
            "x",
            ">= 50x",
        )
    finally:
        disable_extension(package)


if __name__ == "__main__":
    main()
