"""What the fly looks like in Blender (no bpy): smooth head, thorax and abdomen that fill the
simulated body box, six jointed legs, and finely cut wing outlines with UVs for a veined material.

The body box still is what the simulation drags through the air; the wing meshes keep the
simulated planform (their outline is the one the strips sample), only cut finer.
"""

from __future__ import annotations

import numpy as np

from .model import MIRROR_X, FlyModel, planform_chord

Faces = list[tuple[int, ...]]


def ellipsoid(centre, radii, rings: int = 10, segments: int = 16) -> tuple[np.ndarray, Faces]:
    """A UV ellipsoid (poles on the y axis, the fly's length), quads plus pole triangles."""
    centre = np.asarray(centre, dtype=np.float64)
    radii = np.asarray(radii, dtype=np.float64)
    latitude = np.linspace(0.0, np.pi, rings + 1)[1:-1]
    longitude = np.linspace(0.0, 2.0 * np.pi, segments, endpoint=False)
    lat, lon = np.meshgrid(latitude, longitude, indexing="ij")
    ring_points = np.stack([np.sin(lat) * np.cos(lon), np.cos(lat), np.sin(lat) * np.sin(lon)], axis=-1)
    points = np.concatenate([[[0.0, 1.0, 0.0]], ring_points.reshape(-1, 3), [[0.0, -1.0, 0.0]]])
    vertices = centre + points * radii
    faces: Faces = []
    last = len(vertices) - 1
    for j in range(segments):
        faces.append((0, 1 + (j + 1) % segments, 1 + j))
    for i in range(rings - 2):
        for j in range(segments):
            a, b = 1 + i * segments + j, 1 + i * segments + (j + 1) % segments
            faces.append((a, b, b + segments, a + segments))
    base = 1 + (rings - 2) * segments
    for j in range(segments):
        faces.append((base + j, base + (j + 1) % segments, last))
    return vertices, faces


def _merge(parts: list[tuple[np.ndarray, Faces, int]]) -> tuple[np.ndarray, Faces, np.ndarray]:
    vertices, faces, materials, offset = [], [], [], 0
    for points, polygons, material in parts:
        vertices.append(points)
        faces.extend(tuple(offset + i for i in polygon) for polygon in polygons)
        materials.extend([material] * len(polygons))
        offset += len(points)
    return np.concatenate(vertices), faces, np.array(materials, dtype=np.int32)


BODY_MATERIAL, EYE_MATERIAL = 0, 1


def body_parts_mesh(model: FlyModel) -> tuple[np.ndarray, Faces, np.ndarray]:
    """Head, thorax and abdomen as smooth ellipsoids whose union just fills the body box.

    Returns vertices, faces and a material index per face (0 body, 1 eyes / head).
    """
    width, length, height = model.body_size
    half = 0.5 * length
    # along the length (y): abdomen at the back, thorax over the centre of mass, head in front
    thorax = ellipsoid((0.0, 0.1 * length, 0.0), (0.5 * width, 0.22 * length, 0.5 * height))
    head_radius = 0.14 * length
    head = ellipsoid(
        (0.0, half - head_radius, 0.12 * height), (0.45 * width, head_radius, 0.36 * height), 8, 14
    )
    abdomen_length = 0.3 * length
    abdomen = ellipsoid(
        (0.0, -half + abdomen_length, -0.08 * height), (0.42 * width, abdomen_length, 0.42 * height), 10, 16
    )
    return _merge(
        [
            (thorax[0], thorax[1], BODY_MATERIAL),
            (head[0], head[1], EYE_MATERIAL),
            (abdomen[0], abdomen[1], BODY_MATERIAL),
        ]
    )


def _tube(points: np.ndarray, radius: float, sides: int = 5) -> tuple[np.ndarray, Faces]:
    """A thin open tube through ``points`` (K, 3)."""
    rings = []
    for index, point in enumerate(points):
        direction = points[min(index + 1, len(points) - 1)] - points[max(index - 1, 0)]
        direction = direction / np.linalg.norm(direction)
        helper = np.array([0.0, 0.0, 1.0]) if abs(direction[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
        u = np.cross(direction, helper)
        u /= np.linalg.norm(u)
        v = np.cross(direction, u)
        angles = np.linspace(0.0, 2.0 * np.pi, sides, endpoint=False)
        rings.append(point + radius * (np.cos(angles)[:, None] * u + np.sin(angles)[:, None] * v))
    vertices = np.concatenate(rings)
    faces: Faces = []
    for k in range(len(points) - 1):
        for j in range(sides):
            a, b = k * sides + j, k * sides + (j + 1) % sides
            faces.append((a, b, b + sides, a + sides))
    return vertices, faces


def legs_mesh(model: FlyModel) -> tuple[np.ndarray, Faces]:
    """Six legs (coxa-femur-tibia-tarsus polylines as thin tubes) hanging from the thorax."""
    width, length, height = model.body_size
    parts = []
    for side in (1.0, -1.0):
        for pair, (forward, splay) in enumerate(((0.2, 0.7), (0.08, 0.0), (-0.04, -0.6))):
            root = np.array([0.25 * width, forward * length, -0.3 * height])
            knee = root + np.array([0.55 * width, 0.25 * length * np.sin(splay), 0.15 * height])
            ankle = knee + np.array([0.2 * width, 0.3 * length * np.sin(splay), -0.75 * height])
            foot = ankle + np.array([0.15 * width, 0.12 * length * np.sin(splay + 0.3), -0.05 * height])
            points = np.stack([root, knee, ankle, foot]) * np.array([side, 1.0, 1.0])
            parts.append(_tube(points, 0.05 * width * (1.0 - 0.1 * pair)))
    vertices, faces, _ = _merge([(v, f, 0) for v, f in parts])
    return vertices, faces


def wing_outline_mesh(
    model: FlyModel, left: bool = False, cuts_per_strip: int = 4
) -> tuple[np.ndarray, Faces, np.ndarray]:
    """The wing in its hinge frame, each simulated strip cut into ``cuts_per_strip`` quads whose
    trailing edge follows the planform; returns vertices, faces and per-vertex UVs
    (u along the span from the hinge, v across the chord from the leading edge, both 0..1)."""
    pieces = model.strips * max(1, int(cuts_per_strip))
    x = np.linspace(0.0, model.wing_span, pieces + 1)
    chord = planform_chord(model, x)
    leading = np.stack([x, np.zeros_like(x), np.zeros_like(x)], axis=1)
    trailing = np.stack([x, -chord, np.zeros_like(x)], axis=1)
    vertices = np.concatenate([leading, trailing])
    uv = np.concatenate(
        [
            np.stack([x / model.wing_span, np.zeros_like(x)], 1),
            np.stack([x / model.wing_span, chord / model.wing_chord], 1),
        ]
    )
    n = pieces + 1
    faces: Faces = [(i, i + 1, n + i + 1, n + i) for i in range(pieces)]
    if left:
        vertices = vertices * MIRROR_X
        faces = [tuple(reversed(face)) for face in faces]
    return vertices, faces, uv
