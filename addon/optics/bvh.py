"""Nearest ray-triangle hits through a bounding-volume hierarchy, in numpy: O(rays x log triangles).

The tree is a linear BVH: triangles sorted along a Morton (Z-order) curve of their centroids, cut
into leaves of ``LEAF_SIZE`` consecutive triangles, and a complete binary tree of axis-aligned boxes
over the leaves (node ``k`` of a level has children ``2k`` and ``2k + 1`` on the next level), built
bottom-up with a handful of vectorised reductions. Traversal is breadth-first over (ray, node) pairs,
one level at a time, so every step is one numpy batch however many rays there are; the leaves'
triangles are then tested with exactly the arithmetic of :func:`ray_triangle_hits`, which the brute
force uses too, so both agree ray for ray (ties between triangles sharing an edge go to the lower
face index, as with the brute force).

Many rays from one point (a trace from a focus) go through a fan grid instead: triangles binned by
their projection seen from that point, one cell lookup per ray (:class:`_FanGrid`). A mesh with a
:class:`RingLayout` (a flat Fresnel plate: its plane and foci) is binned along its zone rings, and
rays from anywhere go through a grid over its own thin slab (:class:`_SlabGrid`); the tree answers
what those grids leave. Every path ends in :func:`ray_triangle_hits`: the same hits, bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

LEAF_SIZE = 2
#: From this many rays from one point on, a fan grid seen from that point is built and used.
_FAN_MIN_RAYS = 2048
#: Hits closer than this (metres) are ignored: the ray's own starting surface.
MIN_DISTANCE = 1e-9
_CHUNK = 16384
#: Rays per batch through the grids: the (ray, triangle) pair arrays stay in the L2 cache.
_FAN_CHUNK = 4096


def ray_triangle_hits(origins, directions, base, edge1, edge2) -> np.ndarray:
    """Möller-Trumbore distances for paired rays and triangles (all ``(3, P)``, one row per axis); inf
    where they miss.

    Two-sided: either winding counts. Hits nearer than ``MIN_DISTANCE`` are misses. Written out per
    component: ``np.cross`` and ``einsum`` on ``(P, 3)`` rows cost several times more.
    """
    dx, dy, dz = directions
    ax, ay, az = edge1
    bx, by, bz = edge2
    px, py, pz = dy * bz - dz * by, dz * bx - dx * bz, dx * by - dy * bx
    det = px * ax + py * ay + pz * az
    sx, sy, sz = origins[0] - base[0], origins[1] - base[1], origins[2] - base[2]
    qx, qy, qz = sy * az - sz * ay, sz * ax - sx * az, sx * ay - sy * ax
    with np.errstate(divide="ignore", invalid="ignore"):
        inverse = 1.0 / det
        u = (sx * px + sy * py + sz * pz) * inverse
        v = (dx * qx + dy * qy + dz * qz) * inverse
        t = (bx * qx + by * qy + bz * qz) * inverse
        ok = (np.abs(det) > 1e-300) & (u >= 0) & (v >= 0) & (u + v <= 1) & (t > MIN_DISTANCE)
    return np.where(ok, t, np.inf)


def _nearest(rays, faces, t, count):
    """Per ray the smallest ``t`` and, among equal ones, the lowest face index (-1 and inf on a miss)."""
    best_t = np.full(count, np.inf)
    np.minimum.at(best_t, rays, t)
    best_face = np.full(count, np.iinfo(np.int64).max)
    closest = (t == best_t[rays]) & np.isfinite(t)
    np.minimum.at(best_face, rays[closest], faces[closest])
    return best_t, np.where(np.isfinite(best_t), best_face, -1)


def brute_force_hits(vertices, faces, origins, directions, chunk_pairs: int = 2_000_000):
    """Nearest hit of every ray against every triangle (the reference): ``(t, face)``."""
    corners = np.asarray(vertices, dtype=np.float64)[np.asarray(faces)]
    base, edge1, edge2 = corners[:, 0].T, (corners[:, 1] - corners[:, 0]).T, (corners[:, 2] - corners[:, 0]).T
    origins, directions = np.asarray(origins, dtype=np.float64).T, np.asarray(directions, dtype=np.float64).T
    count, face_count = origins.shape[1], base.shape[1]
    best_t = np.full(count, np.inf)
    best_face = np.full(count, -1)
    step = max(1, chunk_pairs // max(1, face_count))
    for start in range(0, count, step):
        rows = np.arange(start, min(count, start + step))
        rays = np.repeat(rows, face_count)
        tris = np.tile(np.arange(face_count), len(rows))
        t = ray_triangle_hits(
            origins[:, rays], directions[:, rays], base[:, tris], edge1[:, tris], edge2[:, tris]
        )
        part_t, part_face = _nearest(rays - start, tris, t, len(rows))
        best_t[rows], best_face[rows] = part_t, part_face
    return best_t, best_face


def _pieces(corners: np.ndarray, aspect: float = 3.0, most: int = 64):
    """Tight boxes of triangle pieces: each triangle cut across its long sides into strips about
    ``aspect`` times as long as its shortest side is wide; ``(face of each piece, low, high)``."""
    edges = np.linalg.norm(corners[:, [1, 2, 0]] - corners, axis=2)  # edge k runs corner k -> k + 1
    shortest = np.argmin(edges, axis=1)
    longest = edges.max(axis=1)
    counts = np.clip(np.ceil(longest / np.maximum(aspect * edges.min(axis=1), 1e-300)), 1, most).astype(
        np.int64
    )
    rows = np.arange(len(corners))
    apex = corners[rows, (shortest + 2) % 3]
    first = corners[rows, shortest] - apex
    second = corners[rows, (shortest + 1) % 3] - apex
    face = np.repeat(rows, counts)
    starts = np.cumsum(counts) - counts
    index = np.arange(len(face)) - np.repeat(starts, counts)
    near = (index / counts[face])[:, None]
    far = ((index + 1) / counts[face])[:, None]
    points = np.stack(
        [apex[face] + near * first[face], apex[face] + near * second[face],
         apex[face] + far * first[face], apex[face] + far * second[face]],
        axis=1,
    )  # fmt: skip
    return face, points.min(axis=1), points.max(axis=1)


def _morton_order(centroids: np.ndarray) -> np.ndarray:
    """Order of points ``(N, D)`` along a Z-order curve (10 bits per axis for D <= 3, fewer above)."""
    low = centroids.min(axis=0)
    # One scale for all axes: per-axis scaling would order a flat plate by height first.
    extent = max(float((centroids.max(axis=0) - low).max()), 1e-300)
    dims = centroids.shape[1]
    bits = min(10, 62 // dims)
    top = (1 << bits) - 1
    cells = np.clip(((centroids - low) / extent * top).astype(np.int64), 0, top)
    code = np.zeros(len(centroids), dtype=np.int64)
    for bit in range(bits):
        for axis in range(dims):
            code |= ((cells[:, axis] >> bit) & 1) << (dims * bit + axis)
    return np.argsort(code, kind="stable")


def _unit_columns(vectors: np.ndarray) -> np.ndarray:
    """Columns of ``(3, N)`` scaled to unit length (zero columns stay zero)."""
    length = np.linalg.norm(vectors, axis=0)
    return vectors / np.where(length > 0.0, length, 1.0)


def _ragged_index(counts: np.ndarray) -> np.ndarray:
    """0, 1, .., counts[0] - 1, 0, 1, .., counts[1] - 1, ...: each item's place within its group."""
    counts = counts.astype(np.int32)  # entry counts stay far below 2**31
    ends = np.cumsum(counts, dtype=np.int32)
    return np.arange(ends[-1] if len(ends) else 0, dtype=np.int32) - np.repeat(ends - counts, counts)


def _radix_order(keys: np.ndarray) -> np.ndarray:
    """A stable sorting order of non-negative integer keys below 2**32, in two 16-bit radix passes
    (numpy sorts 16-bit keys by radix: several times faster than a comparison sort)."""
    low = np.argsort((keys & 0xFFFF).astype(np.uint16), kind="stable")
    high = np.argsort((keys[low] >> 16).astype(np.uint16), kind="stable")
    return low[high]


class TriangleBVH:
    """A linear BVH over a triangle mesh; :meth:`intersect` gives the nearest hit per ray."""

    def __init__(self, vertices, faces, leaf_size: int = LEAF_SIZE, layout: RingLayout | None = None):
        vertices = np.asarray(vertices, dtype=np.float64)
        # How the mesh is laid out (a Fresnel plate's plane and foci), if known: the fan grid's cells
        # follow its rings. Without it they circle the mesh's centroid.
        self.layout = layout
        faces = np.asarray(faces, dtype=np.int64).reshape(-1, 3)
        corners = vertices[faces]
        self.face_count = len(faces)
        self.base = np.ascontiguousarray(corners[:, 0].T)
        self.edge1 = np.ascontiguousarray((corners[:, 1] - corners[:, 0]).T)
        self.edge2 = np.ascontiguousarray((corners[:, 2] - corners[:, 0]).T)
        # (F, 9): base, edge1, edge2 of each triangle in one row, gathered at once for the exact test
        self.corner_rows = np.ascontiguousarray(np.concatenate([self.base, self.edge1, self.edge2]).T)
        self.leaf_size = int(leaf_size)
        self._corners = corners
        self._scale = float(np.abs(vertices).max()) if len(vertices) else 1.0
        self._built = self.face_count == 0
        self.depth = 0

    def _build_hierarchy(self) -> None:
        """The tree itself, built on first use: rays from one point through a fan grid never need it."""
        if self._built:
            return
        self._built = True
        corners, leaf_size = self._corners, self.leaf_size
        # Long thin triangles (a Fresnel zone's facets) have fat axis-aligned boxes that many rays
        # cross; each is cut into pieces no longer than a few times its width, every piece boxed
        # tightly and referring back to its triangle, so a ray meets few leaves.
        piece_face, piece_low, piece_high = _pieces(corners)
        order = _morton_order(0.5 * (piece_low + piece_high))
        leaves = 1 << max(0, int(np.ceil(np.log2(max(1.0, len(order) / leaf_size)))))
        # Pad with the last piece: testing its triangle twice changes nothing.
        padded = np.concatenate([order, np.full(leaves * leaf_size - len(order), order[-1])])
        self.leaf_faces = piece_face[padded].reshape(leaves, leaf_size)
        # (3, leaves, leaf_size): each leaf's triangles side by side, gathered a leaf at a time.
        self.leaf_base = np.ascontiguousarray(self.base[:, self.leaf_faces])
        self.leaf_edge1 = np.ascontiguousarray(self.edge1[:, self.leaf_faces])
        self.leaf_edge2 = np.ascontiguousarray(self.edge2[:, self.leaf_faces])
        slack = 1e-9 * max(self._scale, 1e-300)  # conservative boxes: rounding never loses a touching hit
        low = [piece_low[padded].reshape(leaves, leaf_size, 3).min(axis=1) - slack]
        high = [piece_high[padded].reshape(leaves, leaf_size, 3).max(axis=1) + slack]
        while len(low[-1]) > 1:
            low.append(np.minimum(low[-1][0::2], low[-1][1::2]))
            high.append(np.maximum(high[-1][0::2], high[-1][1::2]))
        self.low = [np.ascontiguousarray(box.T) for box in low[::-1]]  # level 0 is the root; (3, nodes)
        self.high = [np.ascontiguousarray(box.T) for box in high[::-1]]
        self.depth = len(self.low) - 1

    def _box_hits(self, level, nodes, origins, inverse, boxes=None):
        """Slab test of paired rays and boxes; ``origins`` and ``inverse`` are ``(3, P)``. ``boxes``
        (low, high per level) already relative to one shared origin replace ``origins``."""
        low, high = (
            (self.low[level], self.high[level]) if boxes is None else (boxes[0][level], boxes[1][level])
        )
        entry = leave = None
        for axis in range(3):
            if boxes is None:
                near = (low[axis].take(nodes) - origins[axis]) * inverse[axis]
                far = (high[axis].take(nodes) - origins[axis]) * inverse[axis]
            else:
                near = low[axis].take(nodes) * inverse[axis]
                far = high[axis].take(nodes) * inverse[axis]
            small, large = np.minimum(near, far), np.maximum(near, far)
            entry = small if entry is None else np.maximum(entry, small, out=entry)
            leave = large if leave is None else np.minimum(leave, large, out=leave)
        return (entry <= leave) & (leave >= MIN_DISTANCE)

    def intersect(self, origins, directions) -> tuple[np.ndarray, np.ndarray]:
        """Nearest hit ``(t, face)`` of every ray (inf and -1 where it misses)."""
        origins = np.asarray(origins, dtype=np.float64)
        directions = np.asarray(directions, dtype=np.float64)
        count = len(origins)
        best_t = np.full(count, np.inf)
        best_face = np.full(count, -1)
        if self.face_count == 0:
            return best_t, best_face
        shared = bool(np.all(origins == origins[0]))
        if shared and count >= _FAN_MIN_RAYS:
            fan = self._fan(origins[0])
            if fan is not None:
                return fan.intersect(self, origins[0], directions)
        if self.layout is not None:
            return self._slab().intersect(self, origins, directions)
        return self._traverse(origins, directions)

    def _slab(self) -> _SlabGrid:
        """The grid over the plate's own plane for rays from anywhere (built once)."""
        grid = getattr(self, "_slab_grid", None)
        if grid is None:
            grid = self._slab_grid = _SlabGrid(self, self.layout)
        return grid

    def _traverse(self, origins, directions) -> tuple[np.ndarray, np.ndarray]:
        """Nearest hits through the tree itself."""
        count = len(origins)
        best_t = np.full(count, np.inf)
        best_face = np.full(count, -1)
        if count == 0:
            return best_t, best_face
        shared = bool(np.all(origins == origins[0]))
        self._build_hierarchy()
        # Coherent batches: rays sorted along a Z-order curve of their origins and directions meet the
        # same boxes, so every gather below reads nearby memory. Results are put back in order at the end.
        keys = directions if shared else np.concatenate([origins, directions], axis=1)
        order = _morton_order(keys) if count > _CHUNK // 4 else None
        if order is not None:
            origins, directions = origins[order], directions[order]
        # A zero component becomes a huge finite one: (box - origin) * inverse is then never 0 * inf.
        safe = np.where(np.abs(directions) < 1e-300, 1e-300, directions)
        inverse_all = np.ascontiguousarray((1.0 / safe).T)
        origins_all = np.ascontiguousarray(origins.T)
        directions_all = np.ascontiguousarray(directions.T)
        children = {1: np.arange(2), 2: np.arange(4)}
        # Rays from one point (a focus: the usual trace) need no per-pair gather of their origin.
        boxes = None
        if shared:
            boxes = (
                [low - origins[0][:, None] for low in self.low],
                [high - origins[0][:, None] for high in self.high],
            )
        for start in range(0, count, _CHUNK):
            stop = min(count, start + _CHUNK)
            o, d = origins_all[:, start:stop], directions_all[:, start:stop]
            if shared:
                o = origins_all[:, :1]
            inverse = inverse_all[:, start:stop]
            rays = np.arange(stop - start)
            nodes = np.zeros(len(rays), dtype=np.int64)
            keep = self._box_hits(0, nodes, o if shared else o[:, rays], inverse, boxes)
            rays, nodes = rays[keep], nodes[keep]
            level = 0
            while level < self.depth:
                # Two levels at a time (the four grandchildren): half the bookkeeping per box tested.
                jump = 2 if level + 2 <= self.depth else 1
                width = 1 << jump
                rays = np.repeat(rays, width)
                nodes = (np.repeat(nodes, width) << jump) | np.tile(children[jump], len(nodes))
                level += jump
                keep = self._box_hits(
                    level, nodes, o if shared else o.take(rays, axis=1), inverse.take(rays, axis=1), boxes
                )
                rays, nodes = rays[keep], nodes[keep]
            if len(rays) == 0:
                continue
            rays = np.repeat(rays, self.leaf_size)
            tris = self.leaf_faces.take(nodes, axis=0).reshape(-1)
            # Leaf triangles are stored leaf by leaf: one block take per leaf instead of one per triangle.
            t = ray_triangle_hits(
                o if shared else o.take(rays, axis=1),
                d.take(rays, axis=1),
                self.leaf_base.take(nodes, axis=1).reshape(3, -1),
                self.leaf_edge1.take(nodes, axis=1).reshape(3, -1),
                self.leaf_edge2.take(nodes, axis=1).reshape(3, -1),
            )
            hit = np.isfinite(t)
            part_t, part_face = _nearest(rays[hit], tris[hit], t[hit], stop - start)
            best_t[start:stop], best_face[start:stop] = part_t, part_face
        if order is not None:
            best_t[order], best_face[order] = best_t.copy(), best_face.copy()
        return best_t, best_face

    def _fan(self, origin) -> _FanGrid | None:
        """The fan grid seen from ``origin`` (cached for the last origin), or None when the mesh is
        not entirely in front of it."""
        key = np.asarray(origin, dtype=np.float64).tobytes()
        cached = getattr(self, "_fan_cache", None)
        if cached is not None and cached[0] == key:
            return cached[1]
        grid = _FanGrid.build(self, np.asarray(origin, dtype=np.float64), self.layout)
        self._fan_cache = (key, grid)
        return grid


@dataclass(frozen=True)
class RingLayout:
    """How a mesh is laid out around a centre, for the cells of a fan grid: the plane it lies along
    (``point``, ``normal``) and two points whose distance sum ``|p - first| + |p - second|`` is constant
    along its rings (a flat Fresnel plate: its foci, whose level curves are its zone edges; the same
    point twice: circles around it). Only the speed of a trace depends on it, never its answers."""

    point: np.ndarray
    normal: np.ndarray
    first: np.ndarray
    second: np.ndarray

    def centre(self) -> np.ndarray:
        """The point of the plane where the distance sum is least (Fermat: where the straight path from
        ``first`` to ``second``, or to its mirror image if both lie on one side, crosses the plane)."""
        normal = self.normal / np.linalg.norm(self.normal)
        height_first = float((self.first - self.point) @ normal)
        second = self.second
        height_second = float((second - self.point) @ normal)
        if height_first * height_second > 0.0:
            second = second - 2.0 * height_second * normal
            height_second = -height_second
        if height_first == height_second:
            return self.first - height_first * normal
        return self.first + (second - self.first) * (height_first / (height_first - height_second))


class _RingCells:
    """Triangles already projected onto a plane, binned into polar cells there: sectors of angle around
    ``pole`` by rings of the distance sum ``|p - first| + |p - second|`` (each triangle listed in every
    cell its padded extent touches: the sum is convex, so over a triangle it peaks at a corner and
    stays above its tangent plane at the centroid). ``faces[start[c]:start[c + 1]]`` are cell ``c``'s."""

    def __init__(self, tree, projected, normal, pole, first, second, pad, angle_fraction, ring_fraction):
        self.first, self.second, self.pole = first, second, pole
        helper = np.array([1.0, 0.0, 0.0]) if abs(normal[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
        across = np.cross(normal, helper)
        across /= np.linalg.norm(across)
        other = np.cross(normal, across)
        self.across, self.other = across, other
        x = np.einsum("k,vkf->vf", across, projected - pole[None, :, None])
        y = np.einsum("k,vkf->vf", other, projected - pole[None, :, None])
        span = max(float(np.abs(x).max()), float(np.abs(y).max()), 1e-300)
        pad = max(pad, 1e-9 * span)
        self.pad = pad
        # Ring coordinate: the distance sum is convex, so over a triangle it peaks at a corner and stays
        # above its tangent plane at the centroid (whose least value over the triangle is at a corner).
        to_first = projected - first[None, :, None]
        to_second = projected - second[None, :, None]
        level = np.linalg.norm(to_first, axis=1) + np.linalg.norm(to_second, axis=1)  # (3, F)
        middle = projected.mean(axis=0)  # (3, F)
        slope = _unit_columns(middle - first[:, None]) + _unit_columns(middle - second[:, None])
        middle_level = np.linalg.norm(middle - first[:, None], axis=0) + np.linalg.norm(
            middle - second[:, None], axis=0
        )
        tangent = middle_level + np.einsum("kf,vkf->vf", slope, projected - middle[None]).min(axis=0)
        low_level = np.minimum(tangent, level.min(axis=0)) - 4.0 * pad
        high_level = level.max(axis=0) + 4.0 * pad
        # Angle: a triangle clear of the pole subtends less than a half turn, between its corners.
        radius = np.hypot(x, y)
        angle = np.arctan2(y, x)
        turned = np.mod(angle - angle[0] + np.pi, 2.0 * np.pi) - np.pi
        x1, y1 = np.roll(x, -1, axis=0), np.roll(y, -1, axis=0)
        turn = x * y1 - x1 * y  # which side of each edge the pole lies on
        inside = np.all(turn >= 0.0, axis=0) | np.all(turn <= 0.0, axis=0)
        extent = turned.max(axis=0) - turned.min(axis=0)
        # Every point of a segment between two points at least r from the pole, less than a half turn
        # apart (angle a), is at least r cos(a / 2) from it.
        near = radius.min(axis=0) * np.cos(np.minimum(extent, np.pi) / 2.0)
        around = inside | (extent >= np.pi / 2.0) | (near <= 4.0 * pad)
        slack = 1.1 * pad / np.where(around, 1.0, near) + 1e-12
        low_angle = angle[0] + turned.min(axis=0) - slack
        high_angle = angle[0] + turned.max(axis=0) + slack
        clear = ~around
        typical = float(np.median(extent[clear])) if np.any(clear) else np.pi
        sectors = int(np.clip(np.ceil(2.0 * np.pi / max(typical * angle_fraction, 1e-300)), 1, 4096))
        thickness = float(np.median((high_level - low_level)[clear])) if np.any(clear) else 1.0
        self.level_low = float(low_level.min())
        reach = float(high_level.max()) - self.level_low
        rings = int(np.clip(np.ceil(reach / max(thickness * ring_fraction, 1e-300)), 1, 1 << 16))
        rings = max(1, min(rings, (16 * tree.face_count) // sectors + 1))  # at most 16 cells a triangle
        self.sectors, self.rings = sectors, rings
        self.sector_width = 2.0 * np.pi / sectors
        self.ring_width = max(reach / rings, 1e-300)
        first_ring = np.clip(np.floor((low_level - self.level_low) / self.ring_width), 0, rings - 1)
        last_ring = np.clip(np.floor((high_level - self.level_low) / self.ring_width), 0, rings - 1)
        first_sector = np.floor((low_angle + np.pi) / self.sector_width).astype(np.int64)
        last_sector = np.floor((high_angle + np.pi) / self.sector_width).astype(np.int64)
        first_sector = np.where(around, 0, first_sector)
        sector_count = np.where(around, sectors, np.minimum(last_sector - first_sector + 1, sectors))
        first_ring = first_ring.astype(np.int64)
        self.first_rings = first_ring.astype(np.int32)  # each triangle's lowest ring
        ring_count = last_ring.astype(np.int64) - first_ring + 1
        # Each triangle's sectors, then each (triangle, sector)'s rings: no integer division per entry.
        owner = np.repeat(np.arange(tree.face_count, dtype=np.int32), sector_count)
        sector = (first_sector[owner] + _ragged_index(sector_count)) % sectors
        base = (sector * rings + first_ring[owner]).astype(np.int32)
        ring_count = ring_count[owner].astype(np.int32)
        cell = np.repeat(base, ring_count) + _ragged_index(ring_count)
        faces = np.repeat(owner, ring_count)
        order = _radix_order(cell) if sectors * rings < 1 << 31 else np.argsort(cell, kind="stable")
        self.faces = faces[order]
        self.start = np.zeros(sectors * rings + 1, dtype=np.int64)
        np.cumsum(np.bincount(cell, minlength=sectors * rings), out=self.start[1:])

    def level(self, points):
        """The ring coordinate ``|p - first| + |p - second|`` of points given as three coordinate arrays."""
        total = None
        for focus in (self.first, self.second):
            px, py, pz = points[0] - focus[0], points[1] - focus[1], points[2] - focus[2]
            distance = np.sqrt(px * px + py * py + pz * pz)
            total = distance if total is None else total + distance
        return total

    def angle(self, points):
        """Angle around the pole of points on the plane (three coordinate arrays)."""
        px, py, pz = points[0] - self.pole[0], points[1] - self.pole[1], points[2] - self.pole[2]
        across, other = self.across, self.other
        x = px * across[0] + py * across[1] + pz * across[2]
        y = px * other[0] + py * other[1] + pz * other[2]
        return np.arctan2(y, x)

    def locate(self, points):
        """Sector (int) and ring (float, possibly outside 0 .. rings - 1) of points on the plane."""
        ring = np.floor((self.level(points) - self.level_low) / self.ring_width)
        sector = np.floor((self.angle(points) + np.pi) / self.sector_width)
        return np.nan_to_num(sector).astype(np.int64) % self.sectors, ring

    def members(self, sector, ring):
        """The triangles of cells (sector, ring), ragged: ``(counts, faces)``."""
        cell = sector * self.rings + ring.astype(np.int64)
        first = self.start[cell]
        counts = self.start[cell + 1] - first
        ends = np.cumsum(counts)
        pairs = np.arange(ends[-1] if len(ends) else 0) + np.repeat(first - (ends - counts), counts)
        return counts, self.faces[pairs]


#: Rays whose stretch through a plate's slab crosses more cells than this go through the tree instead.
_SLAB_MOST_CELLS = 48


class _SlabGrid:
    """Rays from anywhere at a mesh with a :class:`RingLayout` (a flat Fresnel plate). The plate is a
    thin height field over its plane: each ray is clipped to the slab between its lowest and highest
    corner (padded), and only the cells its clipped stretch crosses, seen straight down onto the plane,
    can hold a triangle it hits. The cells are the fan grid's polar rings (triangles projected straight
    down); the stretch's cells are bounded the same way (the distance sum peaks at an end of the
    stretch and stays above its tangent at the middle; the angle runs between the ends). Pairs are
    tested with :func:`ray_triangle_hits` (the brute force's arithmetic), so the answers are the same.
    Rays running along the slab, passing by the centre, or crossing too many cells go through the tree."""

    ANGLE_FRACTION = 0.35
    RING_FRACTION = 0.5

    def __init__(self, tree: TriangleBVH, layout: RingLayout):
        normal = np.asarray(layout.normal, dtype=np.float64)
        self.normal = normal / np.linalg.norm(normal)
        self.point = np.asarray(layout.point, dtype=np.float64)
        corners = np.stack([tree.base, tree.base + tree.edge1, tree.base + tree.edge2], axis=0)  # (3, 3, F)
        heights = np.einsum("k,vkf->vf", self.normal, corners - self.point[None, :, None])
        scale = max(float(np.abs(corners - self.point[None, :, None]).max()), 1e-300)
        pad = 1e-9 * scale
        self.low = float(heights.min()) - 4.0 * pad
        self.high = float(heights.max()) + 4.0 * pad
        projected = corners - heights[:, None, :] * self.normal[None, :, None]
        first = np.asarray(layout.first, dtype=np.float64)
        second = np.asarray(layout.second, dtype=np.float64)
        pole = RingLayout(self.point, self.normal, first, second).centre()
        pole = pole - ((pole - self.point) @ self.normal) * self.normal
        self.cells = _RingCells(
            tree, projected, self.normal, pole, first, second, pad, self.ANGLE_FRACTION, self.RING_FRACTION
        )

    def _onto_plane(self, points):
        height = sum((points[k] - self.point[k]) * self.normal[k] for k in range(3))
        return tuple(points[k] - height * self.normal[k] for k in range(3))

    def pairs(self, origins, directions):
        """Candidate (ray, triangle) pairs of rays ``(3, N)``: ``(rays, faces, tree_rows)``, the last
        the rays left to the tree."""
        normal, cells = self.normal, self.cells
        start = sum((origins[k] - self.point[k]) * normal[k] for k in range(3))
        along = sum(directions[k] * normal[k] for k in range(3))
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            enter = (self.low - start) / along
            leave = (self.high - start) / along
            near_t = np.maximum(np.minimum(enter, leave), 0.0)
            far_t = np.maximum(enter, leave)
            in_slab = (start >= self.low) & (start <= self.high)
            flat = ~(np.isfinite(near_t) & np.isfinite(far_t))
            crossing = ~flat & (far_t >= near_t)
            rows = np.flatnonzero(crossing)
            near_t, far_t = near_t[rows], far_t[rows]
            ends = [
                self._onto_plane(tuple(origins[k, rows] + t * directions[k, rows] for k in range(3)))
                for t in (near_t, far_t)
            ]
            level = [cells.level(end) for end in ends]
            middle = tuple(0.5 * (ends[0][k] + ends[1][k]) for k in range(3))
            step = tuple(ends[1][k] - ends[0][k] for k in range(3))
            slope = 0.0
            for focus in (cells.first, cells.second):
                offset = tuple(middle[k] - focus[k] for k in range(3))
                length = np.sqrt(sum(c * c for c in offset))
                slope = slope + sum(offset[k] * step[k] for k in range(3)) / np.where(
                    length > 0.0, length, 1.0
                )
            low_level = cells.level(middle) - 0.5 * np.abs(slope) - 4.0 * cells.pad
            high_level = np.maximum(level[0], level[1]) + 4.0 * cells.pad
            first_ring = np.floor((low_level - cells.level_low) / cells.ring_width)
            last_ring = np.floor((high_level - cells.level_low) / cells.ring_width)
            # the pole's distance to the stretch: the angle bound needs it clear of the pole
            to_pole = tuple(cells.pole[k] - ends[0][k] for k in range(3))
            span = sum(c * c for c in step)
            fraction = np.clip(
                sum(to_pole[k] * step[k] for k in range(3)) / np.where(span > 0, span, 1.0), 0, 1
            )
            near = np.sqrt(sum((to_pole[k] - fraction * step[k]) ** 2 for k in range(3)))
            angle = cells.angle(ends[0])
            turn = np.mod(cells.angle(ends[1]) - angle + np.pi, 2.0 * np.pi) - np.pi
            slack = 1.1 * cells.pad / np.where(near > 0.0, near, 1.0) + 1e-12
            first_sector = np.floor((angle + np.minimum(turn, 0.0) - slack + np.pi) / cells.sector_width)
            last_sector = np.floor((angle + np.maximum(turn, 0.0) + slack + np.pi) / cells.sector_width)
        finite = np.isfinite(low_level + high_level + first_sector + last_sector + slack)
        missing = finite & ((last_ring < 0) | (first_ring >= cells.rings))
        first_ring = np.clip(np.nan_to_num(first_ring), 0, cells.rings - 1)
        last_ring = np.clip(np.nan_to_num(last_ring), 0, cells.rings - 1)
        first_sector, last_sector = np.nan_to_num(first_sector), np.nan_to_num(last_sector)
        sector_count = np.minimum(last_sector - first_sector + 1, cells.sectors)
        ring_count = last_ring - first_ring + 1
        cell_count = np.where(missing | ~finite, 0, sector_count * ring_count)
        # Too close to the centre for the angle bound, or too many cells: the tree answers.
        wide = ~missing & (
            ~finite
            | (near <= 4.0 * cells.pad)
            | (np.abs(turn) >= np.pi / 2.0)
            | (cell_count > _SLAB_MOST_CELLS)
        )
        tree_rows = np.concatenate([np.flatnonzero(flat & in_slab), rows[wide]])
        keep = ~missing & ~wide
        rows = rows[keep]
        cell_count = cell_count[keep].astype(np.int64)
        ring_count = ring_count[keep].astype(np.int64)
        owner = np.repeat(np.arange(len(rows)), cell_count)
        local = np.arange(len(owner)) - np.repeat(np.cumsum(cell_count) - cell_count, cell_count)
        sector = (first_sector[keep].astype(np.int64)[owner] + local // ring_count[owner]) % cells.sectors
        lowest = first_ring[keep].astype(np.int64)[owner]
        ring = lowest + local % ring_count[owner]
        counts, faces = cells.members(sector, ring)
        # A triangle spanning several of a ray's rings in one sector is tested once: from the lowest
        # ring both share.
        once = np.repeat(ring, counts) == np.maximum(np.repeat(lowest, counts), cells.first_rings[faces])
        return np.repeat(rows[owner], counts)[once], faces[once], np.sort(tree_rows)

    def intersect(self, tree: TriangleBVH, origins, directions) -> tuple[np.ndarray, np.ndarray]:
        count = len(origins)
        best_t = np.full(count, np.inf)
        best_face = np.full(count, -1)
        origin_columns = np.ascontiguousarray(origins.T)
        direction_columns = np.ascontiguousarray(directions.T)
        leftover = []
        for start in range(0, count, _FAN_CHUNK):
            stop = min(count, start + _FAN_CHUNK)
            o, d = origin_columns[:, start:stop], direction_columns[:, start:stop]
            rays, faces, tree_rows = self.pairs(o, d)
            leftover.append(tree_rows + start)
            if len(faces) == 0:
                continue
            corners = tree.corner_rows.take(faces, axis=0)
            t = ray_triangle_hits(
                o.take(rays, axis=1),
                d.take(rays, axis=1),
                corners[:, 0:3].T,
                corners[:, 3:6].T,
                corners[:, 6:9].T,
            )
            hit = np.isfinite(t)
            part_t, part_face = _nearest(rays[hit], faces[hit].astype(np.int64), t[hit], stop - start)
            best_t[start:stop], best_face[start:stop] = part_t, part_face
        rest = np.concatenate(leftover) if leftover else np.zeros(0, dtype=np.int64)
        if len(rest):
            best_t[rest], best_face[rest] = tree._traverse(origins[rest], directions[rest])
        return best_t, best_face


class _FanGrid:
    """Rays from one point (a focus). Every triangle is projected from that point onto a plane (the
    mesh's own plane when its :class:`RingLayout` is known, else one across the mean view direction)
    and binned into polar cells there: sectors of angle around the layout's centre by rings of the
    distance sum ``|p - first| + |p - second|``, so a Fresnel plate's zone rows, which follow those
    rings, fall into one or two rings and a few sectors each (their exact extent, padded). A ray looks
    up the one cell its own projection falls in.

    Each of that cell's triangles is first screened with the Möller-Trumbore quantities rewritten for
    the shared origin (three dot products of the unit direction with per-triangle vectors, scaled so
    one margin far above any rounding keeps every pair the exact test could accept); the few pairs
    left go through :func:`ray_triangle_hits`, the brute force's own arithmetic, so the answers are the
    same bit for bit. Only built when every triangle lies strictly on the plane's side of the point."""

    #: Screening margin, relative to each triangle's scale (the screen runs in float32, whose rounding
    #: stays below 1e-6 there; the exact test's own rounding is ~1e-15).
    MARGIN = np.float32(1e-5)
    #: Sector width, relative to a typical triangle's angle around the centre.
    ANGLE_FRACTION = 0.35
    #: Ring width, relative to a typical triangle's extent across the rings.
    RING_FRACTION = 0.5

    @classmethod
    def build(cls, tree: TriangleBVH, origin: np.ndarray, layout: RingLayout | None) -> _FanGrid | None:
        corners = np.stack([tree.base, tree.base + tree.edge1, tree.base + tree.edge2], axis=0)  # (3, 3, F)
        relative = corners - origin[None, :, None]
        scale = float(np.abs(relative).max())
        if layout is None:
            axis = relative.mean(axis=(0, 2))
            if not np.linalg.norm(axis) > 0:
                return None
            normal = axis / np.linalg.norm(axis)
            depth = np.einsum("k,vkf->vf", normal, relative)
            if not depth.min() > 1e-6 * scale:
                return None
            point = origin + normal * float(depth.mean())
        else:
            normal = np.asarray(layout.normal, dtype=np.float64)
            normal = normal / np.linalg.norm(normal)
            point = np.asarray(layout.point, dtype=np.float64)
        height = float((point - origin) @ normal)
        if height < 0.0:
            normal, height = -normal, -height
        depth = np.einsum("k,vkf->vf", normal, relative)
        # Every corner strictly on the plane's side of the origin: each triangle projects to a triangle.
        if not (height > 1e-6 * scale and depth.min() > 1e-6 * scale):
            return None
        projected = origin[None, :, None] + relative * (height / depth)[:, None, :]  # (3, 3, F) on the plane
        if layout is None:
            towards = corners.mean(axis=(0, 2)) - origin
            if not towards @ normal > 1e-6 * scale:
                towards = projected.mean(axis=(0, 2)) - origin
            pole = origin + towards * (height / (towards @ normal))
            first = second = pole
        else:
            first = np.asarray(layout.first, dtype=np.float64)
            second = np.asarray(layout.second, dtype=np.float64)
            pole = RingLayout(point, normal, first, second).centre()
        grid = cls()
        grid.origin, grid.normal, grid.height = origin, normal, height
        grid.cells = _RingCells(
            tree, projected, normal, pole, first, second, 1e-9 * scale, cls.ANGLE_FRACTION, cls.RING_FRACTION
        )
        # Screening vectors for rays from ``origin``: det = d.G, u det = d.H, v det = d.Q, each scaled by
        # the triangle's size so one margin fits all.
        e1, e2 = tree.edge1, tree.edge2
        s = origin[:, None] - tree.base
        size = (
            np.linalg.norm(e1, axis=0) * np.linalg.norm(e2, axis=0)
            + np.linalg.norm(e2, axis=0) * np.linalg.norm(s, axis=0)
            + np.linalg.norm(s, axis=0) * np.linalg.norm(e1, axis=0)
        )
        size = np.where(size > 0.0, size, 1.0)
        forms = np.concatenate([np.cross(e2, e1, axis=0), np.cross(e2, s, axis=0), np.cross(s, e1, axis=0)])
        # (F, 9) float32: one row per triangle, read at once
        grid.forms = np.ascontiguousarray((forms / size).T, dtype=np.float32)
        return grid

    def candidates(self, directions):
        """Per ray (rows) the triangles of its cell: ``(rows, counts, faces)``, pairs grouped by ray;
        ``directions`` is ``(3, N)``."""
        dx, dy, dz = directions
        normal = self.normal
        toward = dx * normal[0] + dy * normal[1] + dz * normal[2]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            reach = self.height / toward
            points = (self.origin[0] + dx * reach, self.origin[1] + dy * reach, self.origin[2] + dz * reach)
            sector, ring = self.cells.locate(points)
            inside = (toward > 0.0) & (ring >= 0.0) & (ring < self.cells.rings)
        rows = np.flatnonzero(inside)
        return (rows, *self.cells.members(sector[rows], ring[rows]))

    def intersect(self, tree: TriangleBVH, origin, directions) -> tuple[np.ndarray, np.ndarray]:
        count = len(directions)
        best_t = np.full(count, np.inf)
        best_face = np.full(count, -1)
        o = np.asarray(origin, dtype=np.float64)[:, None]
        margin = self.MARGIN
        columns = np.ascontiguousarray(np.asarray(directions, dtype=np.float64).T)
        for start in range(0, count, _FAN_CHUNK):
            stop = min(count, start + _FAN_CHUNK)
            d = columns[:, start:stop]
            rows, counts, tris = self.candidates(d)
            if len(tris) == 0:
                continue
            ux, uy, uz = d[:, rows]
            length = np.sqrt(ux * ux + uy * uy + uz * uz)
            forms = self.forms.take(tris, axis=0)
            dx, dy, dz = (
                np.repeat((component / length).astype(np.float32), counts) for component in (ux, uy, uz)
            )
            det = dx * forms[:, 0]
            det += dy * forms[:, 1]
            det += dz * forms[:, 2]
            un = dx * forms[:, 3]
            un += dy * forms[:, 4]
            un += dz * forms[:, 5]
            vn = dx * forms[:, 6]
            vn += dy * forms[:, 7]
            vn += dz * forms[:, 8]
            # Exact acceptance means 0 <= u, v and u + v <= 1 with u = un / det, v = vn / det.
            side = np.sign(det)
            un *= side
            vn *= side
            size = np.abs(det, out=det)
            size += margin
            keep = un >= -margin
            keep &= vn >= -margin
            total = un + vn
            keep &= total <= size + margin
            # Where det is within the margin of 0 its sign is not known: only |un|, |vn| <= |det| hold.
            small = size <= 2.0 * margin
            if small.any():
                keep |= small & (np.abs(un) <= size) & (np.abs(vn) <= size)
            kept = np.flatnonzero(keep)
            rays = np.repeat(rows, counts)[kept]
            tris = tris[kept]
            corners = tree.corner_rows.take(tris, axis=0)
            t = ray_triangle_hits(
                o, d.take(rays, axis=1), corners[:, 0:3].T, corners[:, 3:6].T, corners[:, 6:9].T
            )
            hit = np.isfinite(t)
            part_t, part_face = _nearest(rays[hit], tris[hit].astype(np.int64), t[hit], stop - start)
            best_t[start:stop], best_face[start:stop] = part_t, part_face
        return best_t, best_face
