"""Mirrors in Blender: add operators from an empty scene, mirrors that follow their foci, ray tracing,
persistence through a saved .blend, clean failure on bad input, the panel and the CLI."""

import sys
from pathlib import Path

import bpy
import mathutils
import numpy as np
import pytest
from conftest import data_counts, run_cli, view3d_override
from ui_smoke import smoke_draw

ROOT = Path(__file__).resolve().parents[2]


def _world_vertices(obj):
    co = np.empty(3 * len(obj.data.vertices), dtype=np.float32)
    obj.data.vertices.foreach_get("co", co)
    matrix = np.array(obj.matrix_world, dtype=np.float64)
    return co.reshape(-1, 3).astype(np.float64) @ matrix[:3, :3].T + matrix[:3, 3]


def _focus_sum(obj):
    recipe = obj.procanim.mirror
    first = np.array(recipe.focus_1.matrix_world.translation)
    second = np.array(recipe.focus_2.matrix_world.translation)
    vertices = _world_vertices(obj)
    return np.linalg.norm(vertices - first, axis=1) + np.linalg.norm(vertices - second, axis=1)


def _expected_path(obj):
    recipe = obj.procanim.mirror
    first = np.array(recipe.focus_1.matrix_world.translation)
    second = np.array(recipe.focus_2.matrix_world.translation)
    return 2.0 * np.hypot(np.linalg.norm(second - first) / 2.0, recipe.minor_axis / 2.0)


def _mirrors():
    return [o for o in bpy.data.objects if o.type == "MESH" and o.procanim.mirror.mirror_type != "NONE"]


def test_add_ellipsoid_mirror_from_an_empty_scene():
    assert bpy.ops.procanim.add_ellipsoid_mirror() == {"FINISHED"}
    (mirror,) = _mirrors()
    recipe = mirror.procanim.mirror
    assert recipe.focus_1.type == "EMPTY" and recipe.focus_2.type == "EMPTY"
    assert np.allclose(recipe.focus_1.location, (-0.5, 0, 1))
    assert np.allclose(recipe.focus_2.location, (0.5, 0, 1))
    # every vertex lies on the spheroid: focus-to-surface-to-focus distance is 2a
    assert np.allclose(_focus_sum(mirror), _expected_path(mirror), atol=1e-5)
    material = mirror.data.materials[0]
    bsdf = next(n for n in material.node_tree.nodes if n.type == "BSDF_PRINCIPLED")
    assert bsdf.inputs["Metallic"].default_value == 1.0 and bsdf.inputs["Roughness"].default_value == 0.0
    assert all(p.use_smooth for p in mirror.data.polygons)


def test_mirror_shading_normals_are_exact_so_renders_focus():
    bpy.ops.procanim.add_ellipsoid_mirror(resolution=6)
    (mirror,) = _mirrors()
    mesh = mirror.data
    loops = len(mesh.loops)
    normals = np.empty(3 * loops, dtype=np.float32)
    mesh.corner_normals.foreach_get("vector", normals)
    normals = normals.reshape(-1, 3).astype(np.float64)
    corner_vertices = np.empty(loops, dtype=np.int32)
    mesh.loops.foreach_get("vertex_index", corner_vertices)
    points = _world_vertices(mirror)[corner_vertices]
    recipe = mirror.procanim.mirror
    first = np.array(recipe.focus_1.matrix_world.translation)
    second = np.array(recipe.focus_2.matrix_world.translation)
    incoming = (points - first) / np.linalg.norm(points - first, axis=1, keepdims=True)
    outgoing = incoming - 2.0 * np.einsum("ij,ij->i", incoming, normals)[:, None] * normals
    offset = second - points
    miss = np.linalg.norm(offset - np.einsum("ij,ij->i", offset, outgoing)[:, None] * outgoing, axis=1)
    # Blender stores custom normals to about 1e-4 rad, yet on a 6-ring mesh (flat-face spot ~0.1 m) every
    # corner's ray still passes within a millimetre of the focus
    assert miss.max() < 1e-3


def test_selected_objects_are_the_foci():
    collection = bpy.context.scene.collection
    first = bpy.data.objects.new("Lamp", None)
    second = bpy.data.objects.new("Eye", None)
    for obj, where in ((first, (0, 0, 0.3)), (second, (0.2, 0.1, 0.4))):
        collection.objects.link(obj)
        obj.location = where
        obj.select_set(True)
    bpy.context.view_layer.update()
    with bpy.context.temp_override(selected_objects=[first, second]):
        assert bpy.ops.procanim.add_ellipsoid_mirror(minor_axis=0.3) == {"FINISHED"}
    (mirror,) = _mirrors()
    assert {mirror.procanim.mirror.focus_1.name, mirror.procanim.mirror.focus_2.name} == {"Lamp", "Eye"}
    assert len([o for o in bpy.data.objects if o.type == "EMPTY"]) == 2
    assert np.allclose(_focus_sum(mirror), _expected_path(mirror), atol=1e-5)


def test_mirror_follows_a_moved_focus_through_the_depsgraph_handler():
    bpy.ops.procanim.add_ellipsoid_mirror()
    (mirror,) = _mirrors()
    focus = mirror.procanim.mirror.focus_2
    before = _world_vertices(mirror)
    focus.location = (0.9, 0.2, 1.3)
    bpy.context.view_layer.update()
    assert not np.allclose(_world_vertices(mirror), before, atol=1e-3)
    assert np.allclose(_focus_sum(mirror), _expected_path(mirror), atol=1e-5)
    # an animated focus: the mirror is right on every frame the scene is set to
    focus.location = (0.5, 0, 1)
    focus.keyframe_insert("location", frame=1)
    focus.location = (0.7, -0.2, 1.1)
    focus.keyframe_insert("location", frame=20)
    for frame in (20, 7, 1):
        bpy.context.scene.frame_set(frame)
        assert np.allclose(_focus_sum(mirror), _expected_path(mirror), atol=1e-5), frame
    # editing the recipe in the sidebar rebuilds too
    mirror.procanim.mirror.minor_axis = 1.2
    bpy.context.view_layer.update()
    assert np.allclose(_focus_sum(mirror), _expected_path(mirror), atol=1e-5)


def test_trace_rays_on_the_default_mirror_measures_a_perfect_focus():
    bpy.ops.procanim.add_ellipsoid_mirror()
    assert bpy.ops.procanim.trace_rays() == {"FINISHED"}
    (mirror,) = _mirrors()
    recipe = mirror.procanim.mirror
    assert recipe.spot_rays == 24
    assert recipe.spot_max < 1e-9 and recipe.path_spread < 1e-9
    assert 0.0 < recipe.mesh_spot_rms < 0.1
    rays = bpy.data.objects["Light Rays"]
    assert rays.type == "CURVE" and len(rays.data.splines) == 24
    second = np.array(recipe.focus_2.matrix_world.translation)
    for spline in rays.data.splines:
        points = np.array([p.co[:3] for p in spline.points])
        direction = points[-1] - points[-2]
        direction /= np.linalg.norm(direction)
        offset = second - points[-2]
        assert np.linalg.norm(offset - (offset @ direction) * direction) < 1e-5
    ext_writers = __import__(f"{_package()}.operators.writers", fromlist=["fcurves_of"])
    (curve,) = ext_writers.fcurves_of(rays.data)
    assert curve.data_path == "bevel_factor_end"
    assert curve.evaluate(1) == pytest.approx(0.0) and curve.evaluate(48) == pytest.approx(1.0)


def _package():
    return next(name for name in sys.modules if name.endswith(".procanim") and name.startswith("bl_ext."))


def test_add_mirror_chain_from_an_empty_scene_and_trace_it():
    assert bpy.ops.procanim.add_mirror_chain() == {"FINISHED"}
    mirrors = sorted(_mirrors(), key=lambda o: o.procanim.mirror.chain_index)
    assert [m.procanim.mirror.surface for m in mirrors] == ["CONCAVE", "CONVEX", "CONCAVE"]
    assert mirrors[0].procanim.mirror.focus_2 == mirrors[1].procanim.mirror.focus_1
    assert bpy.ops.procanim.trace_rays(ray_pattern="CONE", ray_count=30) == {"FINISHED"}
    recipe = mirrors[2].procanim.mirror
    assert recipe.spot_rays == 30 and recipe.spot_max < 1e-9 and recipe.path_spread < 1e-9
    # the shared focus moves both neighbouring mirrors
    shared = mirrors[1].procanim.mirror.focus_1
    before = [_world_vertices(m) for m in mirrors]
    shared.location.z += 0.05
    bpy.context.view_layer.update()
    after = [_world_vertices(m) for m in mirrors]
    changed = [not np.allclose(a, b, atol=1e-4) for a, b in zip(before, after, strict=True)]
    assert changed == [True, True, False]


@pytest.mark.parametrize("operator", ["add_ellipsoid_mirror", "add_mirror_chain"])
def test_rays_from_the_second_focus_run_the_light_backwards(operator):
    getattr(bpy.ops.procanim, operator)()
    assert bpy.ops.procanim.trace_rays(from_focus="SECOND", ray_pattern="RANDOM", ray_count=50) == {
        "FINISHED"
    }
    recipe = bpy.context.active_object.procanim.mirror
    assert recipe.spot_rays == 50 and recipe.spot_max < 1e-9 and recipe.path_spread < 1e-9
    first_focus = min(
        (o for o in bpy.data.objects if o.type == "EMPTY"), key=lambda o: o.name
    ).matrix_world.translation
    for spline in bpy.data.objects["Light Rays"].data.splines:
        start = np.array(spline.points[0].co[:3])
        assert not np.allclose(start, first_focus)


def test_add_fresnel_reflector_in_a_clear_slab_and_trace_it():
    assert bpy.ops.procanim.add_fresnel_reflector(embed_in_slab=True) == {"FINISHED"}
    (plate,) = _mirrors()
    slab = bpy.data.objects["Clear Slab"]
    assert slab.data.materials[0].node_tree is not None
    heights = _world_vertices(plate)[:, 2]
    assert np.abs(heights).max() < 0.05
    recipe = plate.procanim.mirror
    assert recipe.embed_in_slab and recipe.refractive_index == pytest.approx(1.49)
    assert bpy.ops.procanim.trace_rays(ray_count=16, animate=False) == {"FINISHED"}
    # the rays refract into the slab's top face, reflect off the zones, and refract out again
    rays = bpy.data.objects["Light Rays"].data.splines
    top = recipe.slab_thickness / 2.0
    leaving = 0
    for spline in rays:
        co = np.empty(4 * len(spline.points), dtype=np.float32)
        spline.points.foreach_get("co", co)
        path = co.reshape(-1, 4)[:, :3]
        assert len(path) == 5  # focus, slab in, zone, slab out, run-on
        assert path[1, 2] == pytest.approx(top, abs=1e-5)
        assert -top < path[2, 2] < top
        leaving += abs(path[3, 2] - top) < 1e-5  # a few meet the relief again on their way out
    assert leaving >= 12 and recipe.spot_rays >= 12
    # refraction moves the focus: in air (no slab) the same plate focuses within a zone width
    recipe.embed_in_slab = False
    refracted_spot = recipe.spot_max
    assert bpy.ops.procanim.trace_rays(ray_count=16, animate=False) == {"FINISHED"}
    zone_width = 0.6 * np.sqrt(2) / recipe.zones  # generous: the longest radius over the zone count
    assert recipe.spot_max < zone_width < refracted_spot


def test_fresnel_with_foci_on_opposite_sides_follows_its_focus_and_draws():
    arguments = {"focus_1": (-0.3, 0, 0.8), "focus_2": (0.3, 0, -0.8), "zones": 12, "segments": 64}
    assert bpy.ops.procanim.add_fresnel_reflector(**arguments) == {"FINISHED"}
    (plate,) = _mirrors()
    assert all(p.use_smooth for p in plate.data.polygons)
    # louvres stay in the default slab (a tenth of the radius) around the plate
    assert np.abs(_world_vertices(plate)[:, 2]).max() <= 0.03 + 1e-5
    assert bpy.ops.procanim.trace_rays(ray_pattern="RANDOM", ray_count=40) == {"FINISHED"}
    assert plate.procanim.mirror.spot_rays > 0
    before = _world_vertices(plate)
    plate.procanim.mirror.focus_2.location = (0.2, 0.1, -0.9)
    bpy.context.view_layer.update()
    assert plate.procanim.mirror.status == ""
    assert len(_world_vertices(plate)) != len(before) or not np.allclose(_world_vertices(plate), before)
    panel = sys.modules[f"{_package()}.panels.mirrors"].PROCANIM_PT_mirrors
    with bpy.context.temp_override(**view3d_override()):
        smoke_draw(panel)


def test_a_focus_moved_into_the_plate_is_reported_and_the_plate_kept():
    bpy.ops.procanim.add_fresnel_reflector(zones=8, segments=32)
    (plate,) = _mirrors()
    before = _world_vertices(plate)
    plate.procanim.mirror.focus_1.location = (0.1, 0.0, 0.0)
    bpy.context.view_layer.update()
    assert "plate plane" in plate.procanim.mirror.status
    assert np.allclose(_world_vertices(plate), before)
    assert np.all(np.isfinite(_world_vertices(plate)))
    plate.procanim.mirror.focus_1.location = (0.1, 0.0, 0.7)
    bpy.context.view_layer.update()
    assert plate.procanim.mirror.status == ""


def test_saved_blend_keeps_the_recipe_and_the_mirror_still_follows(tmp_path):
    bpy.ops.procanim.add_ellipsoid_mirror(minor_axis=1.3)
    bpy.ops.procanim.trace_rays()
    path = tmp_path / "mirror.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.wm.open_mainfile(filepath=str(path))
    (mirror,) = _mirrors()
    recipe = mirror.procanim.mirror
    assert recipe.minor_axis == pytest.approx(1.3) and recipe.focus_1.name == "Focus 1"
    assert recipe.spot_rays == 24 and recipe.spot_max < 1e-9
    assert len(bpy.data.objects["Light Rays"].data.splines) == 24
    recipe.focus_1.location = (-0.6, 0.1, 0.9)
    bpy.context.view_layer.update()
    assert np.allclose(_focus_sum(mirror), _expected_path(mirror), atol=1e-5)


@pytest.mark.parametrize(
    ("operator", "arguments", "words"),
    [
        ("add_ellipsoid_mirror", {"focus_1": (1, 1, 1), "focus_2": (1, 1, 1)}, "coincide"),
        ("add_fresnel_reflector", {"focus_1": (0, 0, 0)}, "plate plane"),
        ("add_mirror_chain", {"chain_kinds": "concave flat concave"}, "Kinds"),
        ("add_mirror_chain", {"chain_kinds": "concave concave convex"}, "last mirror"),
        ("add_mirror_chain", {"chain_points": "0 0 0; 1 2"}, "Foci"),
    ],
)
def test_bad_input_is_cancelled_and_leaves_the_scene_unchanged(operator, arguments, words):
    bpy.ops.procanim.add_ellipsoid_mirror()
    before = data_counts()
    names = sorted(o.name for o in bpy.data.objects)
    with pytest.raises(RuntimeError, match=words):
        getattr(bpy.ops.procanim, operator)(**arguments)
    assert data_counts() == before
    assert sorted(o.name for o in bpy.data.objects) == names


def test_cancelled_trace_leaves_no_curves():
    assert not bpy.ops.procanim.trace_rays.poll()
    bpy.ops.procanim.add_ellipsoid_mirror(aperture=0.2)
    (mirror,) = _mirrors()
    mirror.procanim.mirror.side = (0, 0, 1)  # the cap now faces away; rays aimed at it still arrive
    assert bpy.ops.procanim.trace_rays() == {"FINISHED"}


def test_panel_draws_with_and_without_an_active_mirror():
    panel = sys.modules[f"{_package()}.panels.mirrors"].PROCANIM_PT_mirrors
    with bpy.context.temp_override(**view3d_override()):
        record = smoke_draw(panel)
        assert "procanim.add_ellipsoid_mirror" in record.operators
    bpy.ops.procanim.add_ellipsoid_mirror()
    bpy.ops.procanim.trace_rays()
    with bpy.context.temp_override(**view3d_override()):
        record = smoke_draw(panel)
        assert "procanim.trace_rays" in record.operators


@pytest.mark.parametrize(
    ("preset", "operator"),
    [
        ("Bird-Bath Combiner", "add_ellipsoid_mirror"),
        ("Offner Relay", "add_mirror_chain"),
        ("Fresnel Plate", "add_fresnel_reflector"),
    ],
)
def test_presets_apply_and_build(preset, operator):
    assert bpy.ops.procanim.apply_preset(kind="mirrors", name=preset) == {"FINISHED"}
    settings = bpy.context.scene.procanim.mirrors
    common = sys.modules[f"{_package()}.panels.common"]
    operator_rna = getattr(bpy.ops.procanim, operator).get_rna_type()
    values = {}

    class Collect:
        """Stands in for the button's operator properties: records what the panel would pass."""

        bl_rna = operator_rna

        def __setattr__(self, key, value):
            values[key] = value

    common.copy_settings(settings, Collect())
    assert getattr(bpy.ops.procanim, operator)(**values) == {"FINISHED"}
    assert bpy.ops.procanim.trace_rays() == {"FINISHED"}
    mirror = bpy.context.active_object
    assert mirror.procanim.mirror.spot_rays > 0


def test_follow_handler_is_registered_once():
    handlers = [h for h in bpy.app.handlers.depsgraph_update_post if h.__name__ == "follow_foci"]
    assert len(handlers) == 1


def test_cli_mirror_subcommand_saves_a_scene(tmp_path):
    out = tmp_path / "mirror.blend"
    result = run_cli(
        "mirror",
        "--mesh-resolution",
        "6",
        "--rays",
        "8",
        "--stage",
        "--out",
        str(out),
        tmp_path=tmp_path,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert out.exists()
    bpy.ops.wm.open_mainfile(filepath=str(out))
    assert len(bpy.data.objects["Light Rays"].data.splines) == 8
    assert bpy.context.scene.camera is not None and "Light Bead" in bpy.data.objects


def test_fresnel_steps_run_along_the_light_by_default_and_vertical_on_request():
    arguments = {"focus_1": (-0.3, 0, 0.5), "focus_2": (0.3, 0, 0.5), "plate_radius": 0.5, "zones": 20}
    assert bpy.ops.procanim.add_fresnel_reflector(**arguments) == {"FINISHED"}
    (plate,) = _mirrors()
    recipe = plate.procanim.mirror
    assert recipe.risers == "RAYS"
    along_light = _world_vertices(plate)
    recipe.risers = "VERTICAL"  # an edit in the sidebar rebuilds the plate (4.2: at the next update)
    bpy.context.view_layer.update()
    sys.modules[f"{_package()}.operators.mirrors"].follow_foci(bpy.context.scene)
    vertical = _world_vertices(plate)
    assert len(vertical) != len(along_light) or np.abs(vertical - along_light).max() > 1e-4
    assert recipe.status == ""


@pytest.mark.parametrize("support", ["SPHERE", "CYLINDER"])
def test_curved_fresnel_reflector_from_an_empty_scene_and_traced(support):
    arguments = {"focus_1": (-0.3, 0, 0.5), "focus_2": (0.3, 0, 0.5), "plate_radius": 0.4, "zones": 10}
    assert bpy.ops.procanim.add_fresnel_reflector(support=support, segments=64, **arguments) == {"FINISHED"}
    (plate,) = _mirrors()
    assert plate.procanim.mirror.support == support
    heights = _world_vertices(plate)[:, 2]
    assert heights.max() - heights.min() > 0.03  # really curved (a flat plate's zones dip < 2 cm)
    assert bpy.ops.procanim.trace_rays(ray_count=24, ray_pattern="RANDOM", animate=False) == {"FINISHED"}
    recipe = plate.procanim.mirror
    # traced off the flat facets (a coarse mesh): the light gathers at the second focus to about a
    # zone width (0.04 m); the exact zone normals focus perfectly (tests/unit/test_optics_curved.py)
    assert recipe.spot_rays >= 12 and recipe.spot_rms < 0.06 and recipe.spot_max < 0.15


def test_curved_fresnel_reflector_on_the_active_mesh_and_a_clear_error_without_one():
    arguments = {"focus_1": (-0.3, 0, 0.6), "focus_2": (0.3, 0, 0.6), "zones": 8, "use_selection": False}
    before = data_counts()
    with pytest.raises(RuntimeError, match="Active Mesh"):
        bpy.ops.procanim.add_fresnel_reflector(support="MESH", **arguments)
    assert data_counts() == before
    bpy.ops.mesh.primitive_uv_sphere_add(radius=1.2, location=(0.0, 0.0, 1.25), segments=32, ring_count=16)
    bowl = bpy.context.active_object
    assert bpy.ops.procanim.add_fresnel_reflector(support="MESH", **arguments) == {"FINISHED"}
    (plate,) = _mirrors()
    assert plate.procanim.mirror.support_object == bowl
    assert len(plate.data.polygons) > 100
    assert bpy.ops.procanim.trace_rays(ray_count=16, animate=False) == {"FINISHED"}
    assert plate.procanim.mirror.spot_rays > 0
    # the plate follows its surface object: moved, it is cut again on the bowl where it now is
    before = _world_vertices(plate)
    bowl.location.z += 0.05
    bpy.context.view_layer.update()
    after = _world_vertices(plate)
    assert len(after) != len(before) or not np.allclose(after, before, atol=1e-4)
    # and edited (its mesh scaled about its origin): cut again on the new shape
    bowl.data.transform(mathutils.Matrix.Scale(1.05, 4))
    bowl.data.update()
    bpy.context.view_layer.update()
    edited = _world_vertices(plate)
    assert len(edited) != len(after) or not np.allclose(edited, after, atol=1e-4)
