"""Mirror handler benchmark: what keeping mirrors in step with their foci costs per depsgraph update and
per frame, with the old handler (scan every object, check every mirror, on every update and frame
change) and the new one (depsgraph updates + a dirty set, frame changes only for animated foci), in
the same run, on a 200-zone Fresnel plate in a scene of 300 other objects, with one animated focus.

The operator defaults are used for everything but the zone count (200, as in issue 12). Times are
the best of 4, in CPU milliseconds of this process. A rebuild that is really needed (a focus moved)
costs the same with both handlers: it is the Fresnel core plus the mesh write, and the last rows
time the part of the write this change made faster (the corner normals given as an array).
"""

from __future__ import annotations

import importlib
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import disable_extension, enable_extension, record  # noqa: E402

ZONES = 200
OTHER_OBJECTS = 300
REPEATS = 4


def main() -> None:
    package = enable_extension()
    import bpy

    handlers = importlib.import_module(f"{package}.operators.mirrors.handlers")
    recipes = importlib.import_module(f"{package}.operators.mirrors.recipes")

    def scan_handler(scene, depsgraph=None):
        """The handler before issue 12: every object scanned, every mirror checked, every time."""
        for obj in recipes.mirror_objects(scene):
            recipes.refresh_mirror(obj)

    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    for index in range(OTHER_OBJECTS):
        other = bpy.data.objects.new(f"Prop {index}", None)
        other.location = (index * 0.01, 0.0, 0.0)
        scene.collection.objects.link(other)
    assert bpy.ops.procanim.add_fresnel_reflector(zones=ZONES) == {"FINISHED"}
    plate = bpy.context.active_object
    recipe = plate.procanim.mirror
    moving, still = recipe.focus_1, recipe.focus_2
    bystander = bpy.data.objects["Prop 7"]
    start = tuple(moving.location)
    moving.keyframe_insert("location", frame=1)
    moving.location = (start[0] + 0.05, start[1], start[2] + 0.02)
    moving.keyframe_insert("location", frame=40)
    vertices = len(plate.data.vertices)

    def timed(step, count=REPEATS) -> float:
        times = []
        for k in range(count):
            # CPU time of this process: the machine is shared, wall time would measure the neighbours.
            begin = time.process_time()
            step(k)
            times.append(time.process_time() - begin)
        return min(times)

    def drag_focus(k):
        still.location.x += 0.001 * (1 if k % 2 else -1)
        bpy.context.view_layer.update()

    def move_bystander(k):
        bystander.location.y += 0.01
        bpy.context.view_layer.update()

    def next_frame(k):
        scene.frame_set(2 + k)

    def use(function):
        handlers.unregister()
        for handler_list in (bpy.app.handlers.depsgraph_update_post, bpy.app.handlers.frame_change_post):
            while scan_handler in handler_list:
                handler_list.remove(scan_handler)
        if function is scan_handler:
            bpy.app.handlers.depsgraph_update_post.append(scan_handler)
            bpy.app.handlers.frame_change_post.append(scan_handler)
        else:
            handlers.register()
        scene.frame_set(1)
        bpy.context.view_layer.update()

    results = {}
    for label, function in (("scan (before)", scan_handler), ("dirty set (after)", None)):
        use(function)
        scans = handlers.SCANS
        results[label] = {
            "update: focus dragged": timed(drag_focus),
            "update: another object moved": timed(move_bystander),
            "frame: animated focus": timed(next_frame),
        }
        # Frames with no animated focus: the keys removed, the same plate and scene.
        moving.animation_data_clear()
        results[label]["frame: no animated focus"] = timed(lambda k: scene.frame_set(20 + k))
        moving.keyframe_insert("location", frame=1)
        moving.location = (start[0] + 0.05, start[1], start[2] + 0.02)
        moving.keyframe_insert("location", frame=40)
        if function is None:
            results[label]["object scans"] = handlers.SCANS - scans

    # Inside each rebuild: writing the exact corner normals, as a list (before) or as the array (after).
    import numpy as np

    normals = recipes.mesh_of(plate).shading_normals() @ np.array(plate.matrix_world.to_3x3())
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    results["scan (before)"]["rebuild part: corner normals as list (before) / array (after)"] = timed(
        lambda k: plate.data.normals_split_custom_set(normals.tolist())
    )
    results["dirty set (after)"]["rebuild part: corner normals as list (before) / array (after)"] = timed(
        lambda k: plate.data.normals_split_custom_set(normals)
    )

    print(f"\nMirror handler, {ZONES}-zone Fresnel plate ({vertices} vertices), {OTHER_OBJECTS} objects more")
    for case in results["scan (before)"]:
        if case == "object scans":
            continue
        before = results["scan (before)"][case]
        after = results["dirty set (after)"][case]
        ratio = before / after if after > 0 else float("inf")
        record(f"mirror handler {case} before (scan)", before * 1000, "ms", note=f"{ZONES} zones")
        record(f"mirror handler {case} after (dirty set)", after * 1000, "ms", note=f"{ratio:.1f}x")
    print(f"object scans by the new handler in its whole run: {results['dirty set (after)']['object scans']}")
    disable_extension(package)


if __name__ == "__main__":
    main()
