"""Mesh trace benchmark: nearest hits of rays from a focus through a 200-zone Fresnel plate mesh (the
issue's plate: radius 0.5 m, foci (+-0.3, 0, 0.5), the operator's 128 segments x 2 rows per zone),
with the numpy trace (what Trace Rays uses: a fan grid for rays from one focus, the BVH otherwise),
against Blender's own ``mathutils.bvhtree.BVHTree.ray_cast``
looped over the same rays on the same mesh, and the brute force (every ray against every triangle),
all in one run. The BVH and the brute force agree ray for ray (checked here on the brute-force rays).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import best_time, record  # noqa: E402

from addon.optics import fresnel_reflector  # noqa: E402
from addon.optics.bvh import TriangleBVH, brute_force_hits  # noqa: E402

F1 = np.array([-0.3, 0.0, 0.5])
F2 = np.array([0.3, 0.0, 0.5])
RAYS = 1_000_000
MATHUTILS_RAYS = 200_000
BRUTE_RAYS = 1_000


def rays_from_focus(count: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    radius = 0.5 * np.sqrt(rng.random(count))
    angle = rng.random(count) * 2.0 * np.pi
    targets = np.stack([radius * np.cos(angle), radius * np.sin(angle), np.zeros(count)], axis=1)
    directions = targets - F1
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    return np.repeat(F1[None], count, axis=0), directions


def main() -> None:
    plate = fresnel_reflector(F1, F2, (0, 0, 0), (0, 0, 1), 0.5, 200, segments=128, zone_steps=2)
    faces = len(plate.faces)
    note = f"200-zone plate, {faces} triangles"
    start = time.perf_counter()
    tree = TriangleBVH(plate.vertices, plate.faces)
    record("mesh trace: BVH build", time.perf_counter() - start, "s", "", note)

    origins, directions = rays_from_focus(RAYS)
    ours = best_time(lambda: tree.intersect(origins, directions), 1)
    record(f"mesh trace: numpy (fan grid from the focus), {RAYS:,} rays", ours, "s", "< 3 s", note)
    record("mesh trace: numpy trace rays/s", RAYS / ours, "rays/s", "> mathutils", note)

    try:
        import bpy  # noqa: F401
        from mathutils import Vector
        from mathutils.bvhtree import BVHTree
    except ImportError:
        BVHTree = None
    if BVHTree is not None:
        blender_tree = BVHTree.FromPolygons(plate.vertices.tolist(), plate.faces.tolist(), all_triangles=True)
        pairs = list(
            zip(origins[:MATHUTILS_RAYS].tolist(), directions[:MATHUTILS_RAYS].tolist(), strict=True)
        )

        def loop():
            cast = blender_tree.ray_cast
            return [cast(Vector(o), Vector(d)) for o, d in pairs]

        theirs = best_time(loop, 1)
        rate = MATHUTILS_RAYS / theirs
        record(
            "mesh trace: mathutils BVHTree.ray_cast loop rays/s",
            rate,
            "rays/s",
            "",
            f"{note}, {MATHUTILS_RAYS:,} rays in a Python loop",
        )
        record("mesh trace: numpy trace / mathutils loop", (RAYS / ours) / rate, "x", "> 1", note)

    few_o, few_d = origins[:BRUTE_RAYS], directions[:BRUTE_RAYS]
    start = time.perf_counter()
    brute = brute_force_hits(plate.vertices, plate.faces, few_o, few_d)
    brute_time = time.perf_counter() - start
    record(
        "mesh trace: brute force, 10,000 rays (extrapolated)",
        brute_time * 10_000 / BRUTE_RAYS,
        "s",
        "",
        f"{note}; measured on {BRUTE_RAYS:,} rays",
    )
    fast = tree.intersect(few_o, few_d)
    agree = np.array_equal(fast[0], brute[0]) and np.array_equal(fast[1], brute[1])
    record("mesh trace: numpy trace == brute force ray for ray", float(agree), "bool", "1", note)


if __name__ == "__main__":
    main()
