"""Optics benchmark: rays per second through a 3-mirror (Offner-like) chain, traced analytically in
sphere space with numpy, against a plain-Python per-ray loop of the same maths and against Blender's
own ray casting (``mathutils.bvhtree.BVHTree.ray_cast`` on the mirror meshes, reflecting in Python),
all in one run; then the build time of a 200-zone Fresnel plate and of writing it into a Blender mesh
(bulk ``foreach_set`` against ``Mesh.from_pydata``).
"""

from __future__ import annotations

import math
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import best_time, record  # noqa: E402

from addon.optics import (  # noqa: E402
    ellipsoid_mirror_mesh,
    fresnel_reflector,
    mirror_chain,
    rays_to_mirror,
    trace,
    trace_chain,
)

RAYS = 1_000_000
NAIVE_RAYS = 3_000
BVH_RAYS = 20_000
FOCI = np.array([[-1.0, 0, 0], [0.0, 0, 0.0], [0.3, 0, 0.4], [1.0, 0, 0]])


def offner_chain():
    return mirror_chain(FOCI, [1.5, 0.3, 1.5], ["concave", "convex", "concave"], first_direction=(0.3, 0, -1))


def _cpu_seconds(function) -> float:
    start = time.process_time()
    function()
    return time.process_time() - start


def naive_trace(chain, origins, directions) -> np.ndarray:
    """The same sphere-space maths, one ray at a time in plain Python (the straightforward way)."""
    elements = []
    for mirror in chain.mirrors:
        e = mirror.ellipsoid
        elements.append(
            (
                e.center.tolist(),
                e.rotation.tolist(),
                e.semi_axes.tolist(),
                mirror.cap_axis.tolist(),
                math.cos(mirror.aperture),
            )
        )
    ends = []
    for origin, direction in zip(origins.tolist(), directions.tolist(), strict=True):
        o, d = origin, direction
        for center, rot, semi, cap, cos_ap in elements:
            rel = [o[k] - center[k] for k in range(3)]
            os_ = [sum(rel[k] * rot[k][j] for k in range(3)) / semi[j] for j in range(3)]
            ds = [sum(d[k] * rot[k][j] for k in range(3)) / semi[j] for j in range(3)]
            a = sum(v * v for v in ds)
            b = sum(os_[j] * ds[j] for j in range(3))
            c = sum(v * v for v in os_) - 1.0
            disc = b * b - a * c
            if disc < 0:
                break
            root = math.sqrt(disc)
            best = None
            for t in sorted(((-b - root) / a, (-b + root) / a)):
                if t <= 1e-9:
                    continue
                u = [os_[j] + t * ds[j] for j in range(3)]
                if sum(u[j] * cap[j] for j in range(3)) >= cos_ap:
                    best = (t, u)
                    break
            if best is None:
                break
            t, u = best
            g = [u[j] / semi[j] for j in range(3)]
            n = [sum(rot[k][j] * g[j] for j in range(3)) for k in range(3)]
            length = math.sqrt(sum(v * v for v in n))
            n = [v / length for v in n]
            p = [o[k] + t * d[k] for k in range(3)]
            dn = sum(d[k] * n[k] for k in range(3))
            d = [d[k] - 2 * dn * n[k] for k in range(3)]
            o = p
        ends.append(o)
    return np.array(ends)


def bvh_trace(trees, origins, directions) -> int:
    """Blender's built-in ray casting: a BVH per mirror mesh, one ray_cast per ray and bounce."""
    from mathutils import Vector

    arrived = 0
    for origin, direction in zip(origins.tolist(), directions.tolist(), strict=True):
        o, d = Vector(origin), Vector(direction)
        for tree in trees:
            location, normal, _index, _distance = tree.ray_cast(o + d * 1e-6, d)
            if location is None:
                break
            d = d.reflect(normal)
            o = location
        else:
            arrived += 1
    return arrived


def chain_rays_per_second() -> None:
    chain = offner_chain()
    origins, directions = rays_to_mirror(chain.mirrors[0], FOCI[0], "random", RAYS, seed=1)
    holder = {}

    def sequential():
        holder["result"] = trace_chain(chain, origins, directions, keep_records=False)

    seconds = best_time(sequential, repeat=3)
    cpu = min(_cpu_seconds(sequential) for _ in range(2))
    result = holder["result"]
    arrived = result.records[-1].hit
    offset = FOCI[3] - result.records[-1].points[arrived]
    final = result.final_directions[arrived]
    miss = np.linalg.norm(offset - np.einsum("ij,ij->i", offset, final)[:, None] * final, axis=1)
    record(
        "optics: rays through a 3-mirror chain (numpy, sphere space)",
        RAYS / seconds,
        "rays/s",
        ">= 1e6 rays/s",
        f"{RAYS} rays in {seconds:.3f} s wall, {cpu:.3f} s CPU (load {os.getloadavg()[0]:.1f} on "
        f"{os.cpu_count()} cores); {arrived.mean():.1%} arrive, worst miss {miss.max():.1e} m",
    )
    with_records = best_time(lambda: trace_chain(chain, origins, directions), repeat=2)
    record(
        "optics: rays through the chain with per-bounce hit records",
        RAYS / with_records,
        "rays/s",
        "",
        f"{RAYS} rays in {with_records:.3f} s (t, points, normals, hits, directions per bounce)",
    )
    few = slice(0, RAYS // 5)
    nonsequential = best_time(lambda: trace(list(chain.mirrors), origins[few], directions[few], bounces=3), 1)
    record(
        "optics: rays through the chain, nearest-hit tracing (3 bounces)",
        (RAYS // 5) / nonsequential,
        "rays/s",
        "",
        f"{RAYS // 5} rays in {nonsequential:.3f} s (every mirror tested at every bounce)",
    )

    start = time.perf_counter()
    naive_ends = naive_trace(chain, origins[:NAIVE_RAYS], directions[:NAIVE_RAYS])
    naive_rate = NAIVE_RAYS / (time.perf_counter() - start)
    assert np.allclose(naive_ends, result.records[-1].points[:NAIVE_RAYS], atol=1e-9)
    record(
        "optics: speed-up over a plain-Python per-ray loop",
        (RAYS / seconds) / naive_rate,
        "x",
        "",
        f"naive {naive_rate:.3g} rays/s on {NAIVE_RAYS} rays, same end points to 1e-9 m",
    )

    try:
        import bpy  # noqa: F401
        from mathutils.bvhtree import BVHTree
    except ImportError:
        return
    trees = []
    for mirror in chain.mirrors:
        mesh = ellipsoid_mirror_mesh(mirror, 32)
        trees.append(BVHTree.FromPolygons(mesh.vertices.tolist(), mesh.faces.tolist()))
    start = time.perf_counter()
    bvh_arrived = bvh_trace(trees, origins[:BVH_RAYS], directions[:BVH_RAYS])
    bvh_rate = BVH_RAYS / (time.perf_counter() - start)
    record(
        "optics: speed-up over Blender BVHTree.ray_cast on the meshes",
        (RAYS / seconds) / bvh_rate,
        "x",
        "",
        f"BVH {bvh_rate:.3g} rays/s on {BVH_RAYS} rays ({bvh_arrived / BVH_RAYS:.1%} arrive; 32-ring meshes)",
    )


def fresnel_build() -> None:
    args = ((-0.3, 0.0, 0.8), (0.3, 0.0, 0.8), (0.0, 0.0, 0.0), (0.0, 0.0, 1.0), 0.6, 200)
    holder = {}

    def build():
        holder["mesh"] = fresnel_reflector(*args, segments=128, zone_steps=2)

    seconds = best_time(build, repeat=3)
    mesh = holder["mesh"]
    record(
        "optics: build a 200-zone Fresnel plate",
        seconds,
        "s",
        "< 1 s",
        f"{len(mesh.vertices)} vertices, {len(mesh.faces)} triangles, 128 segments, 2 rows per zone",
    )
    try:
        import bpy
    except ImportError:
        return
    vertices = mesh.vertices.astype(np.float32)
    faces = mesh.faces.astype(np.int32)

    def bulk():
        data = bpy.data.meshes.new("bulk")
        data.vertices.add(len(vertices))
        data.vertices.foreach_set("co", vertices.ravel())
        data.loops.add(faces.size)
        data.loops.foreach_set("vertex_index", faces.ravel())
        data.polygons.add(len(faces))
        data.polygons.foreach_set("loop_start", np.arange(0, faces.size, 3, dtype=np.int32))
        data.update(calc_edges=True)
        bpy.data.meshes.remove(data)

    def pydata():
        data = bpy.data.meshes.new("pydata")
        data.from_pydata(vertices.tolist(), [], faces.tolist())
        data.update()
        bpy.data.meshes.remove(data)

    bulk_seconds = best_time(bulk, repeat=3)
    pydata_seconds = best_time(pydata, repeat=3)
    record(
        "optics: write the plate into a Blender mesh (foreach_set)",
        bulk_seconds,
        "s",
        "",
        f"{pydata_seconds / bulk_seconds:.1f}x faster than Mesh.from_pydata ({pydata_seconds:.3f} s)",
    )


if __name__ == "__main__":
    chain_rays_per_second()
    fresnel_build()
