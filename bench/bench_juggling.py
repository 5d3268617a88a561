"""Juggling: bake a 3-juggler passing pattern, 60 s at 60 fps (props' location and spin, arm bones).

The keys the operator wrote are read back and written again two ways onto the same objects, in the
same run: through the bulk writer, and through a ``keyframe_insert`` loop (set each property, insert
a key, frame by frame). The loop takes minutes for the whole minute of animation (over 400,000 keys),
so both ways write the same first NAIVE_SECONDS of every channel; the loop's cost per key only grows
with the curve length, so the ratio on the full bake would be higher still. The full operator (plan,
sample, build rigs and meshes, write all 60 s) and the bulk writer on all keys are timed too.

# bench: every-blender-version
"""

from __future__ import annotations

import importlib
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import best_time, disable_extension, enable_extension, record  # noqa: E402

SITESWAP = "<3p2 3|3p3 3|3p1 3>"
SECONDS = 60.0
FPS = 60
NAIVE_SECONDS = 15.0


def main() -> None:
    package = enable_extension()
    import bpy

    try:
        writers = importlib.import_module(f"{package}.operators.writers")
        juggling = importlib.import_module(f"{package}.addon.juggling")
        version = bpy.app.version_string
        loop = juggling.plan_pattern(juggling.parse_siteswap(SITESWAP), frame_rate=FPS).loop_duration
        loops = max(1, math.ceil(SECONDS / loop - 1e-9))

        def operator() -> None:
            bpy.ops.wm.read_homefile(use_empty=True)
            bpy.context.scene.render.fps = FPS
            bpy.context.scene.render.fps_base = 1.0
            assert bpy.ops.procanim.juggle(siteswap=SITESWAP, loops=loops, prop_type="club") == {"FINISHED"}

        full = best_time(operator, repeat=3)
        scene = bpy.context.scene
        frames_baked = scene.frame_end - scene.frame_start + 1

        # What the operator keyed, grouped per animated property: (owner, path, frames, values (T, k)).
        channels = []
        for obj in bpy.data.objects:
            curves = writers.fcurves_of(obj)
            by_path: dict[str, list] = {}
            for fcurve in curves:
                by_path.setdefault(fcurve.data_path, []).append(fcurve)
            for path, fcurves in by_path.items():
                fcurves.sort(key=lambda f: f.array_index)
                keys = len(fcurves[0].keyframe_points)
                co = np.empty((len(fcurves), 2 * keys), dtype=np.float32)
                for row, fcurve in enumerate(fcurves):
                    fcurve.keyframe_points.foreach_get("co", co[row])
                channels.append((obj, path, co[0, 0::2].astype(np.float64), co[:, 1::2].T.astype(np.float64)))
        total_keys = sum(values.size for _, _, _, values in channels)

        def clear() -> None:
            for obj in bpy.data.objects:
                obj.animation_data_clear()

        def bulk(limit: float) -> None:
            clear()
            for obj, path, frames, values in channels:
                keep = frames <= frames[0] + limit * FPS
                writers.write_channels(obj, path, frames[keep], values[keep])

        def naive(limit: float) -> None:
            clear()
            for obj, path, frames, values in channels:
                owner, prop = (obj, path)
                if path.startswith("pose.bones"):
                    owner = obj.path_resolve(path.rsplit(".", 1)[0])
                    prop = path.rsplit(".", 1)[1]
                keep = frames <= frames[0] + limit * FPS
                for frame, value in zip(frames[keep].tolist(), values[keep].tolist(), strict=True):
                    setattr(owner, prop, value)
                    owner.keyframe_insert(prop, frame=frame)

        all_keys_seconds = best_time(lambda: bulk(SECONDS * 2), repeat=3)
        bulk_seconds = best_time(lambda: bulk(NAIVE_SECONDS), repeat=3)
        start = time.perf_counter()
        naive(NAIVE_SECONDS)
        naive_seconds = time.perf_counter() - start
        subset_keys = sum(
            int((frames <= frames[0] + NAIVE_SECONDS * FPS).sum()) * values.shape[1]
            for _, _, frames, values in channels
        )
        label = f"3 jugglers, {frames_baked / FPS:.0f} s @ {FPS} fps"
        first = f"first {NAIVE_SECONDS:.0f} s, {subset_keys} keys"
        record(f"juggling: full operator, {label} (Blender {version})", full, "s")
        record(
            f"juggling: bulk writer, all {total_keys} keys of that bake (Blender {version})",
            all_keys_seconds * 1e3,
            "ms",
        )
        record(f"juggling: bulk writer, {first} (Blender {version})", bulk_seconds * 1e3, "ms")
        record(f"juggling: keyframe_insert loop, {first} (Blender {version})", naive_seconds * 1e3, "ms")
        record(
            f"juggling: writer speed-up over keyframe_insert (Blender {version})",
            naive_seconds / bulk_seconds,
            "x",
            ">= 50x",
            note="same keys; the loop slows further on longer curves",
        )
    finally:
        disable_extension(package)


if __name__ == "__main__":
    main()
