"""Mesh trace benchmark: nearest hits of rays through a 200-zone Fresnel plate mesh (the issue's plate:
radius 0.5 m, foci (+-0.3, 0, 0.5), the operator's 128 segments x 2 rows per zone, 140,314 triangles),
all in one run:

- the numpy trace Trace Rays uses (``MeshSurface.hits``), 1,000,000 rays from the first focus spread
  evenly over the plate: cold, so the time includes building the fan grid for that focus (cells
  along the plate's zone rings) and the tree;
- Blender's own ``mathutils.bvhtree.BVHTree.ray_cast`` looped over the same rays on the same mesh;
- the same two on rays from many origins (the light reflected off the plate towards the second focus,
  traced against the plate again: through the grid over the plate's own slab, built on this first
  call and timed with it);
- the brute force (every ray against every triangle), measured on 1,000 rays and scaled to 10,000.

The numpy answers equal the brute force's ray for ray (checked here on the rays the brute force ran).
The machine's load average is printed beside the figures: on a shared machine wall-clock times
grow with it; the ratios are measured in the same run.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import record  # noqa: E402

from addon.optics import MeshSurface, fresnel_reflector  # noqa: E402
from addon.optics.bvh import brute_force_hits  # noqa: E402

F1 = np.array([-0.3, 0.0, 0.5])
F2 = np.array([0.3, 0.0, 0.5])
RAYS = 1_000_000
MATHUTILS_RAYS = 200_000
REFLECTED_RAYS = 100_000
BRUTE_RAYS = 1_000


def rays_from_focus(count: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    radius = 0.5 * np.sqrt(rng.random(count))
    angle = rng.random(count) * 2.0 * np.pi
    targets = np.stack([radius * np.cos(angle), radius * np.sin(angle), np.zeros(count)], axis=1)
    directions = targets - F1
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    return np.repeat(F1[None], count, axis=0), directions


def load() -> str:
    return "load average " + " ".join(f"{value:.1f}" for value in os.getloadavg())


def mathutils_loop(plate):
    """A function tracing rays one by one with Blender's BVHTree (None without bpy)."""
    try:
        import bpy  # noqa: F401
        from mathutils import Vector
        from mathutils.bvhtree import BVHTree
    except ImportError:
        return None
    blender_tree = BVHTree.FromPolygons(plate.vertices.tolist(), plate.faces.tolist(), all_triangles=True)

    def loop(origins, directions):
        cast = blender_tree.ray_cast
        pairs = list(zip(origins.tolist(), directions.tolist(), strict=True))
        start = time.perf_counter()
        for o, d in pairs:
            cast(Vector(o), Vector(d))
        return time.perf_counter() - start

    return loop


def main() -> None:
    plate = fresnel_reflector(F1, F2, (0, 0, 0), (0, 0, 1), 0.5, 200, segments=128, zone_steps=2)
    note = f"200-zone plate, {len(plate.faces)} triangles"
    origins, directions = rays_from_focus(RAYS)

    surface = MeshSurface(plate)
    start = time.perf_counter()
    best_t, best_face = surface.hits(origins, directions)
    ours = time.perf_counter() - start
    tree_start = time.perf_counter()
    surface.tree._build_hierarchy()  # the BVH, for rays from many points (not needed above)
    tree_time = time.perf_counter() - tree_start
    record(
        f"mesh trace: numpy, {RAYS:,} rays from a focus (incl. builds)",
        ours,
        "s",
        "< 3 s",
        f"{note}; {load()}",
    )
    record("mesh trace: numpy rays/s (from a focus)", RAYS / ours, "rays/s", "> mathutils", note)
    record("mesh trace: BVH build (any mesh; rays the plate's grids leave)", tree_time, "s", "", note)

    loop = mathutils_loop(plate)
    if loop is not None:
        theirs = loop(origins[:MATHUTILS_RAYS], directions[:MATHUTILS_RAYS])
        rate = MATHUTILS_RAYS / theirs
        record(
            "mesh trace: mathutils BVHTree.ray_cast loop rays/s (from a focus)",
            rate,
            "rays/s",
            "",
            f"{note}, {MATHUTILS_RAYS:,} rays in a Python loop; {load()}",
        )
        record("mesh trace: numpy / mathutils loop (from a focus)", (RAYS / ours) / rate, "x", "> 1", note)

    # The light reflected towards F2, traced against the plate again: rays from many origins.
    hit = np.flatnonzero(np.isfinite(best_t))[:REFLECTED_RAYS]
    points = origins[hit] + best_t[hit, None] * directions[hit]
    towards = F2 - points
    towards /= np.linalg.norm(towards, axis=1, keepdims=True)
    start = time.perf_counter()
    surface.hits(points, towards)
    general = time.perf_counter() - start
    record(
        f"mesh trace: numpy rays/s (from {len(hit):,} points on the plate, slab grid)",
        len(hit) / general,
        "rays/s",
        "",
        f"{note}; {load()}",
    )
    if loop is not None:
        theirs = loop(points, towards)
        record(
            "mesh trace: numpy / mathutils loop (from points on the plate)",
            (len(hit) / general) / (len(hit) / theirs),
            "x",
            "",
            f"{note}; mathutils {len(hit) / theirs:,.0f} rays/s",
        )

    few_o, few_d = origins[:BRUTE_RAYS], directions[:BRUTE_RAYS]
    start = time.perf_counter()
    brute = brute_force_hits(plate.vertices, plate.faces, few_o, few_d)
    brute_time = time.perf_counter() - start
    record(
        "mesh trace: brute force, 10,000 rays (measured on 1,000, x10)",
        brute_time * 10_000 / BRUTE_RAYS,
        "s",
        "",
        f"{note}; {load()}",
    )
    agree = np.array_equal(best_t[:BRUTE_RAYS], brute[0]) and np.array_equal(best_face[:BRUTE_RAYS], brute[1])
    record("mesh trace: numpy trace == brute force ray for ray", float(agree), "bool", "1", note)


if __name__ == "__main__":
    main()
