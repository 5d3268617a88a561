"""Low-poly meshes for props and body parts: ``(vertices (V, 3), faces)`` in metres around the
object origin; faces are quads, with triangle fans at the poles of revolved shapes.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from .motion import PROP_LENGTHS

Array = NDArray[np.float64]
Faces = list[tuple[int, ...]]


def lathe(profile: list[tuple[float, float]], segments: int = 16) -> tuple[Array, Faces]:
    """Revolve ``(radius, z)`` points (bottom to top) about Z; zero radii become single poles."""
    vertices: list[tuple[float, float, float]] = []
    rings: list[list[int]] = []
    angles = 2 * math.pi * np.arange(segments) / segments
    for radius, z in profile:
        if radius <= 1e-9:
            rings.append([len(vertices)])
            vertices.append((0.0, 0.0, z))
            continue
        start = len(vertices)
        vertices += [(radius * math.cos(a), radius * math.sin(a), z) for a in angles]
        rings.append(list(range(start, start + segments)))
    faces: Faces = []
    for lower, upper in zip(rings, rings[1:], strict=False):
        for k in range(segments):
            k1 = (k + 1) % segments
            if len(lower) == 1:
                faces.append((lower[0], upper[k1], upper[k]))
            elif len(upper) == 1:
                faces.append((lower[k], lower[k1], upper[0]))
            else:
                faces.append((lower[k], lower[k1], upper[k1], upper[k]))
    return np.array(vertices), faces


def sphere(radius: float, segments: int = 16, rings: int = 8) -> tuple[Array, Faces]:
    polar = np.linspace(math.pi, 0.0, rings + 1)
    return lathe([(radius * math.sin(p), radius * math.cos(p)) for p in polar], segments)


def ball(size: float = 1.0) -> tuple[Array, Faces]:
    return sphere(PROP_LENGTHS["ball"] / 2 * size)


def club(size: float = 1.0) -> tuple[Array, Faces]:
    """A juggling club along +Z with its balance point at the origin (its grip 0.2 m below)."""
    length = PROP_LENGTHS["club"] * size
    scale = length / 0.5
    # (radius, height above the knob) of a typical 50 cm club; the balance point is 0.3 m up.
    profile = [
        (0.0, 0.0),
        (0.018, 0.0),
        (0.02, 0.01),
        (0.013, 0.025),
        (0.013, 0.16),
        (0.02, 0.24),
        (0.038, 0.33),
        (0.045, 0.40),
        (0.04, 0.46),
        (0.025, 0.495),
        (0.0, 0.5),
    ]
    vertices, faces = lathe([(r * scale, (z - 0.3) * scale) for r, z in profile], segments=12)
    return vertices, faces


def ring(size: float = 1.0, tube: float = 0.012, segments: int = 32, sides: int = 6) -> tuple[Array, Faces]:
    """A flat juggling ring in the XZ plane (facing -Y, the juggler's forward), centred on the origin."""
    major = PROP_LENGTHS["ring"] / 2 * size - tube
    minor = tube * size
    u = 2 * math.pi * np.arange(segments) / segments
    v = 2 * math.pi * np.arange(sides) / sides
    uu, vv = np.meshgrid(u, v, indexing="ij")
    radial = major + minor * np.cos(vv)
    vertices = np.stack([radial * np.cos(uu), minor * np.sin(vv), radial * np.sin(uu)], axis=-1).reshape(
        -1, 3
    )
    faces: Faces = []
    for i in range(segments):
        for j in range(sides):
            i1, j1 = (i + 1) % segments, (j + 1) % sides
            faces.append((i * sides + j, i1 * sides + j, i1 * sides + j1, i * sides + j1))
    return vertices, faces


def prop_mesh(prop_type: str, size: float) -> tuple[Array, Faces]:
    return {"ball": ball, "club": club, "ring": ring}[prop_type](size)


def limb(radius: float, length: float, segments: int = 10) -> tuple[Array, Faces]:
    """A rounded rod along +Y from the origin to ``length`` (a bone's local axis), closed at both ends."""
    cap = min(radius, length / 2)
    profile = [
        (0.0, -cap * 0.6),
        (radius * 0.8, -cap * 0.4),
        (radius, 0.0),
        (radius, length),
        (radius * 0.8, length + cap * 0.4),
        (0.0, length + cap * 0.6),
    ]
    vertices, faces = lathe(profile, segments)
    # Lathe builds along Z; bones point along Y. (x, y, z) -> (x, z, -y) is a proper rotation,
    # so the faces keep their outward winding.
    return vertices[:, [0, 2, 1]] * np.array([1.0, 1.0, -1.0]), faces
