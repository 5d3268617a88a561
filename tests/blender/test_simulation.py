"""Verlet / shape-matching bakes in Blender: soft bodies through PC2 and shape keys, rigid piles, ropes,
geometry tools, clean failures, the panel and the CLI."""

import importlib
import sys
from pathlib import Path

import bpy
import numpy as np
import pytest
from conftest import data_counts, run_cli, view3d_override
from ui_smoke import smoke_draw

ROOT = Path(__file__).resolve().parents[2]
FAST = {"frame_count": 8, "substeps": 8, "auto_substeps": False}


def _module(name):
    package = next(m for m in sys.modules if m.endswith(".operators.simulation")).rsplit(".operators", 1)[0]
    return sys.modules[f"{package}.{name}"]


def _evaluated_local(obj, frame):
    bpy.context.scene.frame_set(frame)
    mesh = obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).data
    co = np.empty(3 * len(mesh.vertices), dtype=np.float32)
    mesh.vertices.foreach_get("co", co)
    return co.reshape(-1, 3)


def _world(obj, local):
    matrix = np.array(obj.matrix_world, dtype=np.float64)
    return local @ matrix[:3, :3].T + matrix[:3, 3]


def _expected_jelly_positions(obj, frame_count, substeps):
    """The same simulation run directly in the domain core, in the object's local space (float32)."""
    scenes = _module("addon.simulation.scenes")
    ops = _module("operators.simulation")
    settings = scenes.SimulationSettings(
        frame_count=frame_count, fps=24.0, substeps=substeps, shape_stiffness=0.2
    )
    world, _, _ = scenes.build_softbody_world([ops.body_of(obj)], [], settings)
    frames = [world.positions] + [p for _, p in scenes.run_frames(world, settings, 1)]
    inverse = np.linalg.inv(np.array(obj.matrix_world, dtype=np.float64))
    return np.array([f @ inverse[:3, :3].T + inverse[:3, 3] for f in frames]).astype(np.float32)


def test_jelly_from_empty_scene_bakes_to_pc2_that_plays_back_exactly_after_reload(tmp_path):
    blend = tmp_path / "jelly.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    assert bpy.ops.procanim.add_softbody_demo() == {"FINISHED"}
    jelly = bpy.data.objects["Jelly"]
    assert bpy.context.selected_objects == [jelly]
    expected = _expected_jelly_positions(jelly, **{"frame_count": 8, "substeps": 8})
    assert bpy.ops.procanim.bake_softbody(**FAST) == {"FINISHED"}
    cache = tmp_path / "procanim_cache" / "Jelly.pc2"
    assert cache.exists()
    modifier = jelly.modifiers["ProcAnim Cache"]
    assert modifier.type == "MESH_CACHE" and modifier.filepath.startswith("//")
    assert bpy.context.scene.frame_current == 1
    bpy.ops.wm.save_mainfile()
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    jelly = bpy.data.objects["Jelly"]
    cached = _module("addon.simulation").read_pc2(cache).positions
    for k in (0, 1, 4, 8):
        played = _evaluated_local(jelly, 1 + k)
        np.testing.assert_array_equal(played, cached[k])  # the modifier plays the file bit for bit
        np.testing.assert_allclose(played, expected[k], rtol=0, atol=1e-6)  # float32 of the simulation
    # It really fell and did not sink into the ground (radius 0.02 particles on z = 0).
    assert expected[8][:, 2].min() < expected[0][:, 2].min() - 0.3
    assert _world(jelly, expected[8].astype(np.float64))[:, 2].min() > -1e-3


def test_cloth_like_bake_with_the_operators_defaults_keeps_impact_stretch_under_ten_percent(capsys):
    """The issue's drop through the button a user clicks: Add Jelly Drop (642 vertices), volume and shape
    matching off, every other setting at its default (Auto Substeps, Limit Stretch). Larger balls: the
    unit test of the same settings and bench/bench_softbody_scale.py."""
    assert bpy.ops.procanim.add_softbody_demo(height=1.3) == {"FINISHED"}
    jelly = bpy.data.objects["Jelly"]
    cloth_like = {"use_volume": False, "shape_stiffness": 0.0}
    assert bpy.ops.procanim.bake_softbody(frame_count=30, **cloth_like) == {"FINISHED"}
    report = capsys.readouterr().out
    assert "auto substeps" in report and "limited in" in report  # it says what it chose and did
    path = Path(bpy.path.abspath(jelly.modifiers["ProcAnim Cache"].filepath))
    frames = _module("addon.simulation").read_pc2(path).positions.astype(np.float64)
    edges = np.array([e.vertices[:] for e in jelly.data.edges])
    rest = np.linalg.norm(frames[0][edges[:, 0]] - frames[0][edges[:, 1]], axis=1)
    lengths = np.linalg.norm(frames[:, edges[:, 0]] - frames[:, edges[:, 1]], axis=2)
    assert _world(jelly, frames[-1])[:, 2].min() < 0.05  # it landed
    assert (lengths / rest - 1.0).max() < 0.10


def test_the_default_jelly_bake_limits_stretch_and_says_when_it_stays_off(capsys):
    """Limit Stretch, Keep Volume and Shape Stiffness are all on by default: the jelly's frames end with
    strain limiting (the report says in how many passes), with Self Collision too; baked with another
    mesh the limiting cannot run, and the report says so instead of leaving the box ticked in silence."""
    assert bpy.ops.procanim.add_softbody_demo(height=1.3) == {"FINISHED"}
    jelly = bpy.context.active_object
    assert bpy.ops.procanim.bake_softbody(frame_count=16) == {"FINISHED"}
    report = capsys.readouterr().out
    assert "limited in" in report and "Limit Stretch is off" not in report
    assert bpy.ops.procanim.bake_softbody(frame_count=16, self_collision=True) == {"FINISHED"}
    report = capsys.readouterr().out
    assert "limited in" in report and "Limit Stretch is off" not in report
    bpy.ops.mesh.primitive_ico_sphere_add(subdivisions=2, radius=0.3, location=(2.0, 0.0, 1.0))
    jelly.select_set(True)
    assert bpy.ops.procanim.bake_softbody(frame_count=2) == {"FINISHED"}
    report = capsys.readouterr().out
    assert "Limit Stretch is off with several bodies colliding" in report
    assert "limited in" not in report


def test_a_cloth_sheet_baked_with_self_collision_never_passes_through_itself():
    """A 1 m grid (20 x 20 vertices) standing tilted just above the ground collapses onto itself; with
    Self Collision no triangle pair intersects on any baked frame (read back from the PC2 cache)."""
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=19, y_subdivisions=19, size=1.0, location=(0, 0, 0.6))
    sheet = bpy.context.active_object
    sheet.rotation_euler = (np.pi / 2 - 0.3, 0.2, 0.0)
    cloth_like = {"use_volume": False, "shape_stiffness": 0.0}
    assert bpy.ops.procanim.bake_softbody(frame_count=30, self_collision=True, **cloth_like) == {"FINISHED"}
    path = Path(bpy.path.abspath(sheet.modifiers["ProcAnim Cache"].filepath))
    frames = _module("addon.simulation").read_pc2(path).positions.astype(np.float64)
    sheet.data.calc_loop_triangles()
    triangles = np.array([t.vertices[:] for t in sheet.data.loop_triangles])
    package = _module("operators.simulation").__name__.rsplit(".operators", 1)[0]
    check = importlib.import_module(f"{package}.addon.simulation.intersections").intersecting_triangle_pairs
    assert [len(check(f, triangles)) for f in frames] == [0] * len(frames)
    assert _world(sheet, frames[-1])[:, 2].max() < 0.45  # it did fall over onto itself


def test_operator_defaults_are_the_unit_tested_settings():
    """tests/unit/test_simulation_substeps.py bounds stretch with these values; keep them in step."""
    props = bpy.ops.procanim.bake_softbody.get_rna_type().properties
    unit = _module("addon.simulation.scenes").SimulationSettings(auto_substeps=True, limit_stretch=True)
    assert props["auto_substeps"].default is True and props["limit_stretch"].default is True
    for name in ("max_stretch", "damping", "friction", "particle_radius"):
        assert props[name].default == pytest.approx(getattr(unit, name)), name
    assert props["iterations"].default == unit.iterations and props["solver"].default == "GAUSS_SEIDEL"


def test_unsaved_bake_goes_to_temp_folder_warns_and_rebake_replaces(tmp_path):
    bpy.ops.procanim.add_softbody_demo(subdivisions=1)
    jelly = bpy.data.objects["Jelly"]
    assert bpy.ops.procanim.bake_softbody(frame_count=4, substeps=4) == {"FINISHED"}
    path = Path(bpy.path.abspath(jelly.modifiers["ProcAnim Cache"].filepath))
    assert path.is_relative_to(Path(bpy.app.tempdir))
    first = path.read_bytes()
    assert bpy.ops.procanim.bake_softbody(frame_count=6, substeps=4, damping=0.5) == {"FINISHED"}
    assert len(jelly.modifiers) == 1
    second = path.read_bytes()
    assert len(second) == len(first) + 2 * 42 * 12  # two more samples of 42 vertices
    assert [p.name for p in path.parent.iterdir() if p.name.startswith("Jelly")] == ["Jelly.pc2"]


def test_shape_key_bake_keys_every_frame_and_replaces_the_cache_modifier():
    bpy.ops.procanim.add_softbody_demo(subdivisions=1)
    jelly = bpy.data.objects["Jelly"]
    bpy.ops.procanim.bake_softbody(frame_count=4, substeps=4)
    assert bpy.ops.procanim.bake_softbody(frame_count=4, substeps=4, cache_mode="SHAPE_KEYS") == {"FINISHED"}
    assert "ProcAnim Cache" not in jelly.modifiers
    names = [k.name for k in jelly.data.shape_keys.key_blocks]
    assert names == ["Basis", "ProcAnim 0002", "ProcAnim 0003", "ProcAnim 0004", "ProcAnim 0005"]
    key = jelly.data.shape_keys.key_blocks["ProcAnim 0005"]
    stored = np.empty(3 * len(key.data), dtype=np.float32)
    key.data.foreach_get("co", stored)
    np.testing.assert_allclose(_evaluated_local(jelly, 5), stored.reshape(-1, 3), atol=1e-6)


def test_bad_input_is_cancelled_and_leaves_the_scene_unchanged():
    empty_mesh = bpy.data.objects.new("Nothing", bpy.data.meshes.new("Nothing"))
    bpy.context.scene.collection.objects.link(empty_mesh)
    empty_mesh.select_set(True)
    before = data_counts()
    with pytest.raises(RuntimeError, match="no vertices"):
        bpy.ops.procanim.bake_softbody(**FAST)
    assert data_counts() == before and len(empty_mesh.modifiers) == 0
    with pytest.raises(RuntimeError, match="below the radius"):
        bpy.ops.procanim.add_softbody_demo(radius=1.0, height=0.5)
    assert data_counts() == before
    bpy.ops.procanim.add_softbody_demo(subdivisions=1)
    before = data_counts()
    not_a_folder = Path(bpy.app.tempdir) / "occupied"
    not_a_folder.write_text("a file where the cache folder should go")
    with pytest.raises(RuntimeError, match="is a file, not a folder"):  # refused before baking
        bpy.ops.procanim.bake_softbody(frame_count=4, substeps=4, cache_directory=str(not_a_folder))
    jelly = bpy.data.objects["Jelly"]
    assert data_counts() == before and len(jelly.modifiers) == 0 and jelly.data.shape_keys is None


def test_bakes_explain_what_to_select():
    assert not bpy.ops.procanim.bake_softbody.poll()
    assert not bpy.ops.procanim.bake_rigid_pile.poll()
    assert not bpy.ops.procanim.align_kabsch.poll()
    assert bpy.ops.procanim.add_softbody_demo.poll() and bpy.ops.procanim.add_rope.poll()


def test_rigid_pile_from_empty_scene_keys_rigid_motion_that_lands_on_the_ground():
    assert bpy.ops.procanim.add_rigid_pile_demo(count=3, arrangement="STACK") == {"FINISHED"}
    cubes = sorted(bpy.context.selected_objects, key=lambda o: o.name)
    starts = {c.name: np.array(c.matrix_world) for c in cubes}
    assert bpy.ops.procanim.bake_rigid_pile(frame_count=36, substeps=10) == {"FINISHED"}
    fcurves = _module("operators.writers").fcurves_of
    for cube in cubes:
        paths = {(f.data_path, f.array_index) for f in fcurves(cube)}
        assert {("location", i) for i in range(3)} | {("rotation_quaternion", i) for i in range(4)} <= paths
        assert all(len(f.keyframe_points) == 37 for f in fcurves(cube))
    bpy.context.scene.frame_set(37)
    lowest = min(_world(c, np.array([v.co for v in c.data.vertices]))[:, 2].min() for c in cubes)
    assert -0.01 < lowest < 0.1  # the pile reached the ground and did not sink into it
    for cube in cubes:
        moved = np.array(cube.matrix_world)
        np.testing.assert_allclose(
            np.linalg.det(moved[:3, :3]), np.linalg.det(starts[cube.name][:3, :3]), rtol=1e-5
        )
        assert moved[2, 3] < starts[cube.name][2, 3]


def test_rolling_resistance_with_body_fit_contacts_is_reported_not_ignored_in_silence(capsys):
    """Body Fit contacts cannot roll, so a script's Rolling Resistance has nothing to act on: the bake
    still runs (the sidebar only greys the setting) but warns by name; with Sequential it applies."""
    assert bpy.ops.procanim.add_rigid_pile_demo(count=2, arrangement="STACK") == {"FINISHED"}
    capsys.readouterr()
    assert bpy.ops.procanim.bake_rigid_pile(frame_count=3, rolling_resistance=0.2) == {"FINISHED"}
    report = capsys.readouterr().out
    assert "Rolling Resistance 0.2 ignored: it applies with Sequential Contacts only" in report
    assert "Baked 3 frames of 2 rigid bodies" in report
    assert bpy.ops.procanim.bake_rigid_pile(frame_count=3, rolling_resistance=0.0) == {"FINISHED"}
    assert "Rolling Resistance" not in capsys.readouterr().out
    sequential = {"rigid_contacts": "SEQUENTIAL", "rolling_resistance": 0.2}
    assert bpy.ops.procanim.bake_rigid_pile(frame_count=3, **sequential) == {"FINISHED"}
    assert "Rolling Resistance" not in capsys.readouterr().out


def test_add_rigid_pile_pours_its_cubes_one_after_another_with_the_sidebar_settings(capsys):
    capsys.readouterr()
    assert bpy.ops.procanim.add_rigid_pile_demo(count=3, size=0.3) == {"FINISHED"}
    settings = bpy.context.scene.procanim.simulation
    assert settings.pour_interval > 0  # the demo prepared the sidebar's Bake Rigid Pile for a pour
    # with the contacts and the funnel that heap at the friction's angle (test_simulation_heap_pour.py)
    assert settings.rigid_contacts == "SEQUENTIAL"
    # Rolling resistance growing with the Static Friction (0.6 by default): a steeper heap at more friction.
    pour_rolling_resistance = _module("addon.simulation.heaps").pour_rolling_resistance
    assert settings.rolling_resistance == pytest.approx(pour_rolling_resistance(settings.static_friction))
    assert settings.pour_drop == 0.0  # they fall from the spout
    # The sidebar settings it changed are named, not changed in silence.
    report = capsys.readouterr().out
    for setting in ("Pour Interval 4", "Pour Drop 0 m", "Contacts Sequential", "Rolling Resistance 0.52"):
        assert setting in report
    cubes = sorted(bpy.context.selected_objects, key=lambda o: o.matrix_world[2][3])  # lowest first
    spout = max(c.matrix_world[2][3] for c in cubes)
    overrides = {
        "frame_count": 60,
        "pour_interval": settings.pour_interval,
        "pour_drop": 0.15,  # each let go half a cube above the floor or the cubes before it
        "static_friction": 0.8,
        "rigid_contacts": "SEQUENTIAL",
        "rolling_resistance": 0.1,  # passed through to the rigid world (cubes barely roll)
    }
    assert bpy.ops.procanim.bake_rigid_pile(**overrides) == {"FINISHED"}
    scene = bpy.context.scene
    heights = []
    for frame in range(1, 62):
        scene.frame_set(frame)
        heights.append([c.matrix_world[2][3] for c in cubes])
    heights = np.array(heights)
    # Each waits at the spout, exactly still, until its turn: lowest first, at least the interval apart.
    first_move = [int(np.argmax(heights[:, k] < heights[0, k] - 1e-6)) for k in range(3)]
    assert first_move[0] < first_move[1] < first_move[2]
    assert np.diff(first_move).min() >= settings.pour_interval
    for k in range(3):
        np.testing.assert_allclose(heights[: first_move[k], k], heights[0, k], atol=1e-6)
    # All end on the floor or on each other: nothing thrown over the spout, nothing through the ground.
    assert heights[-1].max() < spout - 0.5 and heights[-1].min() > 0.1
    # Let go half a cube above what lies beneath, not from the spout (1.7 m; from there a frame's fall is
    # 8.5 mm): the first cube, over the bare floor, is within 0.15 m + its half diagonal (0.26) + a
    # particle radius of it the frame after its release (the others land on it, each higher).
    assert heights[first_move[0], 0] < 0.15 + 0.26 + 0.03
    assert heights[first_move, range(3)].max() < spout


def test_a_plank_dropped_from_five_metres_onto_another_rests_on_it_at_the_defaults():
    """No tunnelling through the button: two 1 cm planks, one lying on the ground, the other dropped
    across it from 5 m, baked by Bake Rigid Pile with every setting at its default."""
    planks = []
    for name, z, turn in (("Lower", 0.005, 0.0), ("Falling", 5.0, np.pi / 2)):
        bpy.ops.mesh.primitive_cube_add(size=1.0, location=(0.0, 0.0, z), rotation=(0.0, 0.0, turn))
        plank = bpy.context.active_object
        plank.name = name
        plank.scale = (0.4, 0.08, 0.01)
        planks.append(plank)
    for plank in planks:
        plank.select_set(True)
    assert bpy.ops.procanim.bake_rigid_pile(frame_count=60) == {"FINISHED"}
    falling = bpy.data.objects["Falling"]
    # The middle of its underside (local z = -0.5 at scale 0.01) after it has settled: on the lower
    # plank's top (z = 0.01, lifted a 5 mm particle radius off the ground) plus the two planks' 5 mm
    # collision radii, i.e. 0.025; a plank that tunnelled lies on the ground (0.005, a radius up).
    for frame in (50, 61):
        bpy.context.scene.frame_set(frame)
        underside = np.array(falling.matrix_world) @ np.array([0.0, 0.0, -0.5, 1.0])
        assert 0.009 < underside[2] < 0.027, frame
        assert abs(underside[0]) < 0.2 and abs(underside[1]) < 0.04  # still above the lower plank


def test_add_rope_from_empty_scene_bakes_a_bone_chain_that_keeps_its_links():
    assert bpy.ops.procanim.add_rope(frame_count=12, substeps=40) == {"FINISHED"}
    rig = bpy.data.objects["Rope Rig"]
    start, end = bpy.data.objects["Rope Start"], bpy.data.objects["Rope End"]
    assert len(rig.data.bones) == 20
    rope = bpy.data.objects["Rope"]
    assert rope.modifiers["Rope Rig"].object == rig and len(rope.vertex_groups) == 20
    scene = bpy.context.scene
    heads_at = {}
    for frame in (1, 7, 13):
        scene.frame_set(frame)
        bones = rig.pose.bones
        matrix = np.array(rig.matrix_world)
        heads = np.array([matrix[:3, :3] @ np.array(b.head) + matrix[:3, 3] for b in bones])
        tail = matrix[:3, :3] @ np.array(bones[-1].tail) + matrix[:3, 3]
        np.testing.assert_allclose(heads[0], start.location, atol=1e-5)
        np.testing.assert_allclose(tail, end.location, atol=0.02)
        links = np.linalg.norm(np.diff(np.vstack([heads, tail]), axis=0), axis=1)
        np.testing.assert_allclose(links, [bone.length for bone in rig.data.bones], rtol=1e-5)
        heads_at[frame] = heads
    assert heads_at[13][10, 2] < heads_at[1][10, 2] - 0.2  # the middle swung down


def test_rope_between_two_selected_objects_follows_them():
    first = bpy.data.objects.new("Post A", None)
    second = bpy.data.objects.new("Post B", None)
    for obj, x in ((first, -0.5), (second, 0.7)):
        bpy.context.scene.collection.objects.link(obj)
        obj.location = (x, 0.2, 1.5)
        obj.select_set(True)
    bpy.context.view_layer.objects.active = second
    assert bpy.ops.procanim.add_rope(frame_count=4, substeps=10, links=6) == {"FINISHED"}
    assert "Rope Start" not in bpy.data.objects
    rig = bpy.data.objects["Rope Rig"]
    bpy.context.scene.frame_set(3)
    np.testing.assert_allclose(rig.pose.bones[0].head, first.location, atol=1e-5)


def test_rigid_and_soft_bakes_collide_with_marked_colliders():
    bpy.ops.procanim.add_softbody_demo(subdivisions=1, height=1.5)
    jelly = bpy.data.objects["Jelly"]
    shelf_mesh = _module("operators.writers").mesh_from_arrays(
        "Shelf", [(-2, -2, 0.6), (2, -2, 0.6), (2, 2, 0.6), (-2, 2, 0.6)], [(0, 1, 2, 3)]
    )
    shelf = bpy.data.objects.new("Shelf", shelf_mesh)
    bpy.context.scene.collection.objects.link(shelf)
    shelf.procanim.simulation.collider = True
    bpy.context.view_layer.objects.active = jelly
    assert bpy.ops.procanim.bake_softbody(frame_count=24, substeps=10) == {"FINISHED"}
    resting = _world(jelly, _evaluated_local(jelly, 25).astype(np.float64))
    assert resting[:, 2].min() > 0.6 - 0.02  # held by the shelf, far above the ground


def test_fit_line_plane_and_kabsch_align():
    rng = np.random.default_rng(0)
    direction = np.array([1.0, 2.0, 2.0]) / 3.0
    points = np.outer(np.linspace(-1, 1, 30), direction) + rng.normal(scale=0.01, size=(30, 3)) + [0, 0, 1]
    writers = _module("operators.writers")
    line_obj = bpy.data.objects.new("Samples", writers.mesh_from_arrays("Samples", points))
    bpy.context.scene.collection.objects.link(line_obj)
    bpy.context.view_layer.objects.active = line_obj
    assert bpy.ops.procanim.fit_line() == {"FINISHED"}
    arrow = bpy.data.objects["Samples Line"]
    z_axis = np.array(arrow.matrix_world)[:3, 2]
    assert abs(z_axis @ direction) > 0.999
    flat = np.c_[rng.uniform(-1, 1, (40, 2)), np.zeros(40)] @ np.linalg.qr(rng.normal(size=(3, 3)))[0].T
    plane_obj = bpy.data.objects.new("Flat", writers.mesh_from_arrays("Flat", flat))
    bpy.context.scene.collection.objects.link(plane_obj)
    bpy.context.view_layer.objects.active = plane_obj
    assert bpy.ops.procanim.fit_plane() == {"FINISHED"}
    normal = np.array(bpy.data.objects["Flat Plane"].matrix_world)[:3, 2]
    assert np.allclose(flat @ normal, (flat @ normal).mean(), atol=1e-6)

    shape = rng.normal(size=(12, 3))
    target = bpy.data.objects.new("Target", writers.mesh_from_arrays("Target", shape))
    source = bpy.data.objects.new("Source", writers.mesh_from_arrays("Source", shape))
    for obj in (target, source):
        bpy.context.scene.collection.objects.link(obj)
        obj.select_set(True)
    target.location = (1.0, -2.0, 0.5)
    target.rotation_euler = (0.3, -0.7, 1.1)
    bpy.context.view_layer.objects.active = target
    bpy.context.view_layer.update()
    assert bpy.ops.procanim.align_kabsch() == {"FINISHED"}
    np.testing.assert_allclose(np.array(source.matrix_world), np.array(target.matrix_world), atol=1e-5)
    other = bpy.data.objects.new("Other", writers.mesh_from_arrays("Other", shape[:5]))
    bpy.context.scene.collection.objects.link(other)
    source.select_set(False)
    other.select_set(True)
    before = np.array(other.matrix_world)
    with pytest.raises(RuntimeError, match="corresponding vertices"):
        bpy.ops.procanim.align_kabsch()
    np.testing.assert_array_equal(np.array(other.matrix_world), before)


def test_panel_draws_in_an_empty_scene_and_with_a_mesh_active():
    panel = _module("panels.simulation").PROCANIM_PT_simulation
    with bpy.context.temp_override(**view3d_override()):
        record = smoke_draw(panel)
    assert {"procanim.add_softbody_demo", "procanim.bake_softbody", "procanim.add_rope"} <= set(
        record.operators
    )
    bpy.ops.procanim.add_softbody_demo(subdivisions=1)
    with bpy.context.temp_override(**view3d_override()):
        record = smoke_draw(panel)
    assert "SimulationObjectSettings.collider" in record.properties


@pytest.mark.parametrize("name", ["Jelly", "Rubber", "Rope", "Chain", "Stiff", "Cloth Bag"])
def test_presets_apply(name):
    assert bpy.ops.procanim.apply_preset(kind="simulation", name=name) == {"FINISHED"}


def test_cli_simulate_saves_a_baked_rope(tmp_path):
    out = tmp_path / "rope.blend"
    result = run_cli(
        "simulate",
        "--scene",
        "rope",
        "--length",
        "6",
        "--substeps",
        "5",
        "--out",
        str(out),
        tmp_path=tmp_path,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    bpy.ops.wm.open_mainfile(filepath=str(out))
    rig = bpy.data.objects["Rope Rig"]
    fcurves = _module("operators.writers").fcurves_of(rig)
    assert fcurves and all(len(f.keyframe_points) == 7 for f in fcurves)


def test_cli_simulate_no_limit_stretch_reaches_the_bake(tmp_path):
    out = tmp_path / "jelly.blend"
    args = ("simulate", "--scene", "jelly", "--length", "2", "--no-limit-stretch", "--out", str(out))
    result = run_cli(*args, tmp_path=tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr
    bpy.ops.wm.open_mainfile(filepath=str(out))
    assert bpy.context.scene.procanim.simulation.limit_stretch is False
    assert "ProcAnim Cache" in bpy.data.objects["Jelly"].modifiers


def test_cli_simulate_sheet_folds_a_jelly_sheet_with_self_collision(tmp_path):
    out = tmp_path / "sheet.blend"
    result = run_cli("simulate", "--scene", "sheet", "--length", "12", "--out", str(out), tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    bpy.ops.wm.open_mainfile(filepath=str(out))
    sheet = bpy.data.objects["Jelly Sheet"]
    cache = Path(bpy.path.abspath(sheet.modifiers["ProcAnim Cache"].filepath))
    frames = _module("addon.simulation").read_pc2(cache).positions.astype(np.float64)
    assert len(frames) == 13 and len(frames[0]) == 24 * 24
    sheet.data.calc_loop_triangles()
    triangles = np.array([t.vertices[:] for t in sheet.data.loop_triangles])
    package = _module("operators.simulation").__name__.rsplit(".operators", 1)[0]
    check = importlib.import_module(f"{package}.addon.simulation.intersections").intersecting_triangle_pairs
    assert all(len(check(f, triangles)) == 0 for f in frames)
    assert frames[-1][:, 2].max() < frames[0][:, 2].max() - 0.1  # it is toppling over


def test_diverging_rope_names_the_frame_and_writes_nothing():
    anchors = []
    for name, x in (("Post A", -0.5), ("Post B", 0.5)):
        obj = bpy.data.objects.new(name, None)
        bpy.context.scene.collection.objects.link(obj)
        obj.location = (x, 0.0, 1.5)
        obj.select_set(True)
        anchors.append(obj)
    far = anchors[1]
    far.keyframe_insert("location", frame=1)
    far.location = (1e6, 0.0, 1.5)  # the anchor is yanked a thousand kilometres in two frames
    far.keyframe_insert("location", frame=3)
    bpy.context.view_layer.objects.active = far
    before = data_counts()
    with pytest.raises(RuntimeError, match="diverged at frame 2"):
        bpy.ops.procanim.add_rope(frame_count=6, substeps=5, links=5)
    assert data_counts() == before and "Rope Rig" not in bpy.data.objects
    assert bpy.context.scene.frame_current == 1


def test_add_rope_again_between_the_moved_anchors_adds_a_second_rope():
    bpy.ops.procanim.add_rope(frame_count=2, substeps=5, links=4)
    start, end = bpy.data.objects["Rope Start"], bpy.data.objects["Rope End"]
    end.location = (1.5, 0.5, 2.5)
    for obj in bpy.context.view_layer.objects:
        obj.select_set(False)
    start.select_set(True)
    end.select_set(True)
    bpy.context.view_layer.objects.active = end
    assert bpy.ops.procanim.add_rope(frame_count=2, substeps=5, links=4) == {"FINISHED"}
    rigs = sorted((o for o in bpy.data.objects if o.name.startswith("Rope Rig")), key=lambda o: o.name)
    assert len(rigs) == 2  # the first rope is kept
    assert not [o for o in bpy.data.objects if o.name.startswith("Rope Start.")], "no new anchors"
    rig = bpy.context.view_layer.objects.active
    assert rig == rigs[1]
    bpy.context.scene.frame_set(1)
    matrix = np.array(rig.matrix_world)
    tail = matrix[:3, :3] @ np.array(rig.pose.bones[-1].tail) + matrix[:3, 3]
    np.testing.assert_allclose(tail, end.location, atol=1e-4)


def test_soft_body_rides_an_animated_collider():
    bpy.ops.procanim.add_softbody_demo(subdivisions=1, radius=0.3, height=0.55)
    jelly = bpy.data.objects["Jelly"]
    lift = bpy.data.objects.new(
        "Lift",
        _module("operators.writers").mesh_from_arrays(
            "Lift", [(-1, -1, 0), (1, -1, 0), (1, 1, 0), (-1, 1, 0)], [(0, 1, 2, 3)]
        ),
    )
    bpy.context.scene.collection.objects.link(lift)
    lift.procanim.simulation.collider = True
    lift.location = (0, 0, 0.2)
    lift.keyframe_insert("location", frame=1)
    lift.location = (0, 0, 1.2)
    lift.keyframe_insert("location", frame=25)
    bpy.context.view_layer.objects.active = jelly
    assert bpy.ops.procanim.bake_softbody(frame_count=24, substeps=10) == {"FINISHED"}
    lowest = _world(jelly, _evaluated_local(jelly, 25).astype(np.float64))[:, 2].min()
    assert lowest > 1.2 - 0.01  # carried up on the lift, not left behind
