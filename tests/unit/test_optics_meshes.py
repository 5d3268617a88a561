"""Generated mirror meshes: Fresnel zones focus within a zone width, spots shrink as resolution grows."""

import numpy as np
import pytest

from addon.optics import (
    STEP_FACE,
    MeshSurface,
    OpticsError,
    ellipsoid_mirror,
    ellipsoid_mirror_mesh,
    facet_normals,
    fresnel_reflector,
    mesh_spot,
    reflect,
    trace_records,
)

SAME_SIDE = ((-0.3, 0.0, 0.8), (0.3, 0.0, 0.8))
OPPOSITE = ((-0.3, 0.0, 0.8), (0.3, 0.0, -0.8))
OFF_AXIS = ((-0.3, 0.0, 0.8), (0.8, 0.2, 1.5))


def _line_distance(points, directions, target):
    offset = target - points
    along = np.einsum("ij,ij->i", offset, directions)
    return np.linalg.norm(offset - along[:, None] * directions, axis=1)


def _check_mesh(mesh):
    assert np.all(np.isfinite(mesh.vertices)) and np.all(np.isfinite(mesh.normals))
    assert mesh.faces.min() >= 0 and mesh.faces.max() < len(mesh.vertices)
    assert np.allclose(np.linalg.norm(mesh.normals, axis=1), 1.0)
    geometric, areas = facet_normals(mesh.vertices, mesh.faces)
    assert np.all(areas > 0)
    # winding agrees with the optical normal, so Blender shades the reflecting side as the front
    assert np.all(np.einsum("ij,ij->i", geometric, mesh.normals) > 0)


@pytest.mark.parametrize("foci", [SAME_SIDE, OPPOSITE, OFF_AXIS])
def test_fresnel_mesh_reflects_focus_to_focus_within_the_zone_width(foci):
    f1, f2 = (np.asarray(f, float) for f in foci)
    plate = fresnel_reflector(f1, f2, (0, 0, 0), (0, 0, 1), 0.5, 24, segments=384)
    _check_mesh(plate)
    assert plate.zone_count == 24
    assert set(np.unique(plate.face_zone[plate.face_zone >= 0])) == set(range(24))
    spot = mesh_spot(plate, f1, f2)
    assert spot.max < plate.zone_width
    # the exact per-zone normals focus perfectly: every zone is a piece of a confocal ellipsoid
    centroids = plate.vertices[plate.faces].mean(axis=1)
    reflecting = plate.face_zone != STEP_FACE
    incoming = centroids[reflecting] - f1
    incoming /= np.linalg.norm(incoming, axis=1, keepdims=True)
    outgoing = reflect(incoming, plate.normals[reflecting])
    assert _line_distance(centroids[reflecting], outgoing, f2).max() < 1e-9
    # so do the per-corner shading normals at every vertex of every zone face
    corners = plate.vertices[plate.faces[reflecting]].reshape(-1, 3)
    incoming = corners - f1
    incoming /= np.linalg.norm(incoming, axis=1, keepdims=True)
    corner_normals = plate.corner_normals[reflecting].reshape(-1, 3)
    assert _line_distance(corners, reflect(incoming, corner_normals), f2).max() < 1e-9


def test_fresnel_mesh_traced_as_a_mesh_sends_light_to_the_second_focus():
    f1, f2 = (np.asarray(f, float) for f in SAME_SIDE)
    rng = np.random.default_rng(5)
    targets = rng.uniform(-0.3, 0.3, size=(150, 3)) * (1, 1, 0)
    for draft in (False, True):
        plate = fresnel_reflector(f1, f2, (0, 0, 0), (0, 0, 1), 0.5, 12, segments=128, draft=draft)
        record = trace_records([MeshSurface(plate)], np.repeat(f1[None], 150, 0), targets - f1).records[0]
        assert record.hit.mean() > 0.95
        miss = _line_distance(record.points[record.hit], record.directions[record.hit], f2)
        if draft:
            # seen from an off-axis focus a few step faces are lit; they scatter light elsewhere
            assert np.mean(miss < plate.zone_width) > 0.97
        else:
            assert miss.max() < plate.zone_width


def test_fresnel_plate_is_flat_and_zone_width_sets_the_zone_count():
    f1, f2 = (np.asarray(f, float) for f in SAME_SIDE)
    plate = fresnel_reflector(f1, f2, (0, 0, 0), (0, 0, 1), 0.5, zone_width=0.05)
    assert plate.zone_count == 10 and np.isclose(plate.zone_width, 0.05)
    heights = plate.vertices[:, 2]
    # every zone meets the plate at its outer edge and dips behind it (away from the foci) by less than
    # a zone width
    assert heights.max() < 1e-9 and heights.min() > -plate.zone_width
    radial = np.linalg.norm(plate.vertices[:, :2], axis=1)
    assert radial.max() <= 0.5 + 1e-9
    assert np.any(plate.face_zone == STEP_FACE)
    no_steps = fresnel_reflector(f1, f2, (0, 0, 0), (0, 0, 1), 0.5, zone_width=0.05, draft=False)
    assert not np.any(no_steps.face_zone == STEP_FACE)
    assert len(no_steps.faces) == np.count_nonzero(plate.face_zone >= 0)


def test_opposite_side_plate_stays_inside_its_slab():
    f1, f2 = (np.asarray(f, float) for f in OPPOSITE)
    plate = fresnel_reflector(f1, f2, (0, 0, 0.1), (0, 0, 2), 0.4, 8, thickness=0.06)
    assert np.abs(plate.vertices[:, 2] - 0.1).max() <= 0.03 + 1e-9
    assert np.linalg.norm(plate.vertices[:, :2], axis=1).max() <= 0.4 + 1e-9


def test_ellipsoid_mesh_lies_on_the_surface_and_its_spot_falls_with_resolution():
    mirror = ellipsoid_mirror((-0.5, 0, 1), (0.5, 0, 1), 1.6)
    spots = []
    for resolution in (4, 8, 16, 32):
        mesh = ellipsoid_mirror_mesh(mirror, resolution)
        _check_mesh(mesh)
        sums = np.linalg.norm(mesh.vertices - mirror.foci[0], axis=1)
        sums += np.linalg.norm(mesh.vertices - mirror.foci[1], axis=1)
        assert np.allclose(sums, mirror.ellipsoid.path_length, atol=1e-12)
        spots.append(mesh_spot(mesh, mirror.foci[0], mirror.foci[1]))
    rms = [spot.rms for spot in spots]
    assert all(later < 0.6 * earlier for earlier, later in zip(rms, rms[1:], strict=False))
    assert all(b.max < a.max for a, b in zip(spots, spots[1:], strict=False))
    assert all(b.path_spread < a.path_spread for a, b in zip(spots, spots[1:], strict=False))


def test_fresnel_spot_falls_with_resolution():
    f1, f2 = (np.asarray(f, float) for f in SAME_SIDE)
    coarse = mesh_spot(fresnel_reflector(f1, f2, (0, 0, 0), (0, 0, 1), 0.5, 16, segments=48), f1, f2)
    fine = mesh_spot(fresnel_reflector(f1, f2, (0, 0, 0), (0, 0, 1), 0.5, 16, segments=192), f1, f2)
    assert fine.rms < 0.5 * coarse.rms


def test_convex_mirror_mesh_faces_outwards():
    mirror = ellipsoid_mirror((-0.5, 0, 0), (0.5, 0, 0), 0.6, side=(0, 1, 0), kind="convex")
    mesh = ellipsoid_mirror_mesh(mirror, 6)
    centroids = mesh.vertices[mesh.faces].mean(axis=1)
    outward = np.einsum("ij,ij->i", mesh.normals, centroids - mirror.ellipsoid.center)
    assert np.all(outward > 0)


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        (((0, 0, 1), (0, 0, 1), (0, 0, 0), (0, 0, 1), 0.5, 8), "coincide"),
        (((0, 0, 0), (1, 0, 1), (0, 0, 0), (0, 0, 1), 0.5, 8), "first focus lies in the plate"),
        (((0, 0, 1), (1, 0, 0), (0, 0, 0), (0, 0, 1), 0.5, 8), "second focus lies in the plate"),
        (((0, 0, 1), (1, 0, 1), (0, 0, 0), (0, 0, 0), 0.5, 8), "zero-length"),
        (((0, 0, 1), (1, 0, 1), (0, 0, 0), (0, 0, 1), -0.5, 8), "radius"),
        (((0, 0, 1), (1, 0, 1), (0, 0, 0), (0, 0, 1), 0.5, 0), "at least one zone"),
    ],
)
def test_degenerate_fresnel_input_raises_the_domain_error(arguments, words):
    with pytest.raises(OpticsError, match=words):
        fresnel_reflector(*arguments)


def test_degenerate_mesh_settings_raise_the_domain_error():
    mirror = ellipsoid_mirror((-0.5, 0, 1), (0.5, 0, 1), 1.6)
    with pytest.raises(OpticsError, match="resolution"):
        ellipsoid_mirror_mesh(mirror, 0)
    with pytest.raises(OpticsError, match="thickness"):
        fresnel_reflector(*OPPOSITE, (0, 0, 0), (0, 0, 1), 0.5, 8, thickness=5.0)
    with pytest.raises(OpticsError, match="zone width"):
        fresnel_reflector(*SAME_SIDE, (0, 0, 0), (0, 0, 1), 0.5, zone_width=-1.0)
