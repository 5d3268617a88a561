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
their projection seen from that point, one cell lookup per ray (:class:`_FanGrid`).
"""

from __future__ import annotations

import numpy as np

LEAF_SIZE = 2
#: From this many rays from one point on, a fan grid seen from that point is built and used.
_FAN_MIN_RAYS = 2048
#: Hits closer than this (metres) are ignored: the ray's own starting surface.
MIN_DISTANCE = 1e-9
_CHUNK = 16384


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


class TriangleBVH:
    """A linear BVH over a triangle mesh; :meth:`intersect` gives the nearest hit per ray."""

    def __init__(self, vertices, faces, leaf_size: int = LEAF_SIZE):
        vertices = np.asarray(vertices, dtype=np.float64)
        faces = np.asarray(faces, dtype=np.int64).reshape(-1, 3)
        corners = vertices[faces]
        self.face_count = len(faces)
        self.base = np.ascontiguousarray(corners[:, 0].T)
        self.edge1 = np.ascontiguousarray((corners[:, 1] - corners[:, 0]).T)
        self.edge2 = np.ascontiguousarray((corners[:, 2] - corners[:, 0]).T)
        if self.face_count == 0:
            self.depth = 0
            return
        # Long thin triangles (a Fresnel zone's facets) have fat axis-aligned boxes that many rays
        # cross; each is cut into pieces no longer than a few times its width, every piece boxed
        # tightly and referring back to its triangle, so a ray meets few leaves.
        piece_face, piece_low, piece_high = _pieces(corners)
        order = _morton_order(0.5 * (piece_low + piece_high))
        leaves = 1 << max(0, int(np.ceil(np.log2(max(1.0, len(order) / leaf_size)))))
        self.leaf_size = int(leaf_size)
        # Pad with the last piece: testing its triangle twice changes nothing.
        padded = np.concatenate([order, np.full(leaves * leaf_size - len(order), order[-1])])
        self.leaf_faces = piece_face[padded].reshape(leaves, leaf_size)
        # (3, leaves, leaf_size): each leaf's triangles side by side, gathered a leaf at a time.
        self.leaf_base = np.ascontiguousarray(self.base[:, self.leaf_faces])
        self.leaf_edge1 = np.ascontiguousarray(self.edge1[:, self.leaf_faces])
        self.leaf_edge2 = np.ascontiguousarray(self.edge2[:, self.leaf_faces])
        scale = float(np.abs(vertices).max()) if len(vertices) else 1.0
        slack = 1e-9 * max(scale, 1e-300)  # conservative boxes: rounding never loses a touching hit
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
        # Coherent batches: rays sorted along a Z-order curve of their origins and directions meet the
        # same boxes, so every gather below reads nearby memory. Results are put back in order at the end.
        shared = bool(np.all(origins == origins[0]))
        if shared and count >= _FAN_MIN_RAYS:
            fan = self._fan(origins[0])
            if fan is not None:
                return fan.intersect(self, origins[0], directions)
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
        grid = _FanGrid.build(self, np.asarray(origin, dtype=np.float64))
        self._fan_cache = (key, grid)
        return grid


class _FanGrid:
    """Rays from one point (a focus): every triangle projected from that point onto a plane across
    the mean view direction and binned into a grid of cells by its projected bounding box. A ray
    looks up the one cell it passes through and tests only that cell's triangles, with the same
    arithmetic as the brute force (the cells hold every triangle the ray can hit, so the answers are
    the same). Only built when every triangle is in front of the point."""

    @classmethod
    def build(cls, tree: TriangleBVH, origin: np.ndarray) -> _FanGrid | None:
        corners = np.stack([tree.base, tree.base + tree.edge1, tree.base + tree.edge2], axis=0)  # (3, 3, F)
        relative = corners - origin[None, :, None]
        axis = relative.mean(axis=(0, 2))
        if not np.linalg.norm(axis) > 0:
            return None
        axis /= np.linalg.norm(axis)
        helper = np.array([1.0, 0.0, 0.0]) if abs(axis[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
        across = np.cross(axis, helper)
        across /= np.linalg.norm(across)
        other = np.cross(axis, across)
        depth = np.einsum("k,vkf->vf", axis, relative)
        scale = float(np.abs(relative).max())
        if not depth.min() > 1e-6 * scale:
            return None
        u = np.einsum("k,vkf->vf", across, relative) / depth
        w = np.einsum("k,vkf->vf", other, relative) / depth
        grid = cls()
        grid.axis, grid.across, grid.other = axis, across, other
        low_u, high_u, low_w, high_w = u.min(axis=0), u.max(axis=0), w.min(axis=0), w.max(axis=0)
        span = max(float(high_u.max() - low_u.min()), float(high_w.max() - low_w.min()), 1e-300)
        pad = 1e-7 * span  # conservative: rounding never drops a triangle a ray can hit
        grid.u0, grid.w0 = float(low_u.min()) - 2 * pad, float(low_w.min()) - 2 * pad
        cells = int(np.clip(np.sqrt(tree.face_count / 2.0), 8, 2048))
        grid.cells = cells
        grid.size = (span + 4 * pad) / cells
        first_u = np.clip(((low_u - pad - grid.u0) / grid.size).astype(np.int64), 0, cells - 1)
        last_u = np.clip(((high_u + pad - grid.u0) / grid.size).astype(np.int64), 0, cells - 1)
        first_w = np.clip(((low_w - pad - grid.w0) / grid.size).astype(np.int64), 0, cells - 1)
        last_w = np.clip(((high_w + pad - grid.w0) / grid.size).astype(np.int64), 0, cells - 1)
        wide = last_w - first_w + 1
        counts = (last_u - first_u + 1) * wide
        faces = np.repeat(np.arange(tree.face_count), counts)
        local = np.arange(len(faces)) - np.repeat(np.cumsum(counts) - counts, counts)
        cell = (np.repeat(first_u, counts) + local // np.repeat(wide, counts)) * cells + (
            np.repeat(first_w, counts) + local % np.repeat(wide, counts)
        )
        order = np.argsort(cell, kind="stable")
        grid.faces = faces[order]
        grid.start = np.searchsorted(cell[order], np.arange(cells * cells + 1))
        return grid

    def intersect(self, tree: TriangleBVH, origin, directions) -> tuple[np.ndarray, np.ndarray]:
        count = len(directions)
        best_t = np.full(count, np.inf)
        best_face = np.full(count, -1)
        o = np.asarray(origin, dtype=np.float64)[:, None]
        for start in range(0, count, _CHUNK * 4):
            stop = min(count, start + _CHUNK * 4)
            d = directions[start:stop]
            depth = d @ self.axis
            with np.errstate(divide="ignore", invalid="ignore"):
                u = (d @ self.across) / depth
                w = (d @ self.other) / depth
            cu = np.floor((u - self.u0) / self.size)
            cw = np.floor((w - self.w0) / self.size)
            inside = (depth > 0) & (cu >= 0) & (cu < self.cells) & (cw >= 0) & (cw < self.cells)
            rows = np.flatnonzero(inside)
            cell = cu[rows].astype(np.int64) * self.cells + cw[rows].astype(np.int64)
            first, counts = self.start[cell], self.start[cell + 1] - self.start[cell]
            rays = np.repeat(rows, counts)
            local = np.arange(len(rays)) - np.repeat(np.cumsum(counts) - counts, counts)
            tris = self.faces[np.repeat(first, counts) + local]
            d_pairs = np.ascontiguousarray(d.T).take(rays, axis=1)
            t = ray_triangle_hits(
                o,
                d_pairs,
                tree.base.take(tris, axis=1),
                tree.edge1.take(tris, axis=1),
                tree.edge2.take(tris, axis=1),
            )
            hit = np.isfinite(t)
            part_t, part_face = _nearest(rays[hit], tris[hit], t[hit], stop - start)
            best_t[start:stop], best_face[start:stop] = part_t, part_face
        return best_t, best_face
