"""Juggling and bone maps on the user's own rigs: Rigify generated in the test, plain skeletons named
like the metarig, Mixamo and the Unreal mannequin (one in centimetres facing +Y)."""

from __future__ import annotations

import bpy
import numpy as np
import pytest
from conftest import data_counts
from rig_helpers import append_rigify, build_skeleton, fcurve_snapshot, generate_rigify, world_matrix


@pytest.fixture(scope="session")
def rigify_file(tmp_path_factory, extension_package):
    path = tmp_path_factory.mktemp("rigify") / "rigify_rig.blend"
    generate_rigify(path)
    return path


def _palm(obj, rig, side: int, hand_bone: str) -> tuple[np.ndarray, np.ndarray]:
    """The evaluated palm point and the unit vector out of the palm, world space."""
    m = world_matrix(obj, hand_bone)
    rotation = m[:3, :3] / np.linalg.norm(m[:3, :3], axis=0)
    arm = rig.measure.arms[side]
    return m[:3, 3] + rotation @ arm.palm_local, rotation @ arm.hand_rotation.T @ arm.palm_normal


def _plan(ext, rig, siteswap: str, loops: int = 1, **settings):
    juggling = ext("addon.juggling")
    scene = bpy.context.scene
    fps = scene.render.fps / scene.render.fps_base
    body = rig.measure.body()
    # The operator's defaults are the sidebar's.
    options = ext("operators.juggling").planning_options(scene.procanim.juggling)
    pattern = juggling.plan_pattern(
        juggling.parse_siteswap(siteswap),
        **options,
        frame_rate=fps,
        body=body,
        floor_drop=body.pattern_height,
        **settings,
    )
    frames = round(pattern.loop_duration * fps) * loops + 1
    times = np.arange(frames) / fps
    return pattern, times


def _check_juggling(ext, objs, siteswap: str, placement=None, tolerance=0.02, loops=1):
    """Juggle ``siteswap`` on ``objs`` and check the evaluated palms against the plan on every frame,
    the props against the palms while held, and the arm bones' lengths."""
    rig_mod = ext("operators.rig")
    palm_offset = ext("addon.rig.measure").PALM_OFFSET
    rigs_before = [rig_mod.read_rig(o, bpy.context.scene) for o in objs]
    placed_before = [np.array(o.matrix_world) for o in objs]
    names = ", ".join(o.name for o in objs)
    result = bpy.ops.procanim.juggle(siteswap=siteswap, target_rig=names, loops=loops)
    assert result == {"FINISHED"}
    rigs = [rig_mod.read_rig(o, bpy.context.scene) for o in objs]
    pattern, times = _plan(ext, rigs_before[0], siteswap, loops)
    if len(objs) == 1:
        placement = rigs[0].measure.plan_matrix
        # One rig stays where the user put it; the pattern comes to it.
        assert np.allclose(np.array(objs[0].matrix_world), placed_before[0])
    else:
        placement = np.eye(4)
        placement[:3, :3] *= rigs[0].measure.units_per_metre
        placement[:3, 3] = np.mean([r.measure.anchor for r in rigs_before], axis=0)
    upm = rigs[0].measure.units_per_metre
    hands = pattern.hand_positions(times) @ placement[:3, :3].T + placement[:3, 3]
    grips = pattern.grip_positions(times) @ placement[:3, :3].T + placement[:3, 3]
    plan_hands = pattern.hand_positions(times)
    plan_grips = pattern.grip_positions(times)
    props = [bpy.data.objects[f"Ball {p + 1}"] for p in range(pattern.num_props)]
    scene = bpy.context.scene
    start = scene.frame_start
    worst_hand, worst_prop, held_checks = 0.0, 0.0, 0
    # The driven arms' deform bones, Rigify's segments (DEF-forearm.L.001) included.
    arm_bones = [
        rig.bone_map.bones[f"{p}.{s}"] for rig in rigs for p in ("upper_arm", "forearm", "hand") for s in "LR"
    ]
    rest_lengths = {
        (obj.name, b.name): b.length
        for obj in objs
        for b in obj.data.bones
        if any(b.name.startswith(name) for name in arm_bones)
    }
    for index in range(len(times)):
        scene.frame_set(start + index)
        for j, (obj, rig) in enumerate(zip(objs, rigs, strict=True)):
            for side in (0, 1):
                palm, normal = _palm(obj, rig, side, rig.bone_map.bones[f"hand.{'LR'[side]}"])
                worst_hand = max(worst_hand, float(np.linalg.norm(palm - hands[j, side, index])) / upm)
                for p, prop in enumerate(props):
                    if np.linalg.norm(plan_grips[p, index] - plan_hands[j, side, index]) < 1e-6:
                        held_checks += 1
                        at = np.array(prop.matrix_world.translation)
                        assert np.allclose(at, grips[p, index], atol=1e-4 * upm)
                        worst_prop = max(worst_prop, float(np.linalg.norm(at - palm)) / upm)
                        # The palm faces the prop it holds (and faces up, under it).
                        surface = palm - normal * palm_offset * upm
                        assert np.dot(normal, (at - surface) / np.linalg.norm(at - surface)) > 0.95
                        assert normal[2] > 0.95
            for pose_bone in obj.pose.bones:
                rest = rest_lengths.get((obj.name, pose_bone.name))
                if rest is not None:
                    length = (pose_bone.tail - pose_bone.head).length
                    assert length == pytest.approx(rest, rel=1e-4, abs=1e-6), pose_bone.name
    assert held_checks > len(times)  # props are held on many frames
    print(
        f"{siteswap} on {', '.join(o.name for o in objs)}: palm off path <= {worst_hand * 100:.3f} cm, "
        f"held prop from palm <= {worst_prop * 100:.3f} cm over {len(times)} frames"
    )
    assert worst_hand < tolerance, f"palm {worst_hand * 100:.2f} cm off its path"
    assert worst_prop < 0.03, f"held prop {worst_prop * 100:.2f} cm from the palm"
    return worst_hand, worst_prop


@pytest.mark.parametrize("siteswap", ["3", "531"])
def test_rigify_rig_juggles_with_its_deform_hands_on_the_pattern(ext, rigify_file, siteswap):
    rig = append_rigify(rigify_file)
    # Another control's keys must survive.
    rig.pose.bones["foot_ik.L"].location = (0.0, 0.05, 0.0)
    rig.keyframe_insert('pose.bones["foot_ik.L"].location', frame=1)
    rig.pose.bones["foot_ik.L"].location = (0.0, 0.0, 0.1)
    rig.keyframe_insert('pose.bones["foot_ik.L"].location', frame=30)
    writers = ext("operators.writers")
    before = fcurve_snapshot(rig, writers.fcurves_of)
    _check_juggling(ext, [rig], siteswap)
    after = fcurve_snapshot(rig, writers.fcurves_of)
    for key, keys in before.items():
        assert after[key] == keys, key
    assert rig.pose.bones["upper_arm_ik.L"].ik_stretch == 0.0
    assert any("hand_ik.L" in path for path, _ in after)


def test_two_rigify_rigs_pass(ext, rigify_file):
    one = append_rigify(rigify_file, "Alice", location=(-1.0, 0.5, 0.0))
    two = append_rigify(rigify_file, "Bob", location=(1.0, 0.0, 0.0), yaw=1.0)
    _check_juggling(ext, [one, two], "<3p|3p>")


@pytest.mark.parametrize(
    ("naming", "units", "facing_y", "object_scale"),
    [("metarig", 1.0, False, 1.0), ("mixamo", 100.0, False, 0.01), ("unreal", 100.0, True, 1.0)],
)
def test_plain_skeletons_juggle_by_baked_arm_rotations(ext, naming, units, facing_y, object_scale):
    obj = build_skeleton(
        naming,
        units=units,
        facing_y=facing_y,
        object_scale=object_scale,
        location=(0.3 * units * object_scale, -0.2, 0.0),
    )
    rig = ext("operators.rig").read_rig(obj, bpy.context.scene)
    assert rig.bone_map.convention == naming.upper()
    assert rig.measure.units_per_metre == pytest.approx(units * object_scale)
    expected_forward = (0.0, 1.0, 0.0) if facing_y else (0.0, -1.0, 0.0)
    assert np.allclose(rig.measure.forward, expected_forward, atol=1e-6)
    body = rig.measure.body()
    assert body.shoulder_half_width == pytest.approx(0.17)
    assert body.upper_arm == pytest.approx(0.28)
    assert body.head_top == pytest.approx(1.75)
    _check_juggling(ext, [obj], "3")


def test_passing_with_two_mixamo_skeletons(ext):
    one = build_skeleton("mixamo", "One", location=(-1.2, 0.0, 0.0))
    two = build_skeleton("mixamo", "Two", location=(1.2, 0.0, 0.0))
    _check_juggling(ext, [one, two], "<3p|3p>")


def test_armature_without_arms_names_the_missing_roles_and_changes_nothing(ext):
    obj = build_skeleton("mixamo", arms=False)
    counts = data_counts()
    with pytest.raises(RuntimeError) as error:
        bpy.ops.procanim.juggle(siteswap="3", target_rig=obj.name)
    message = str(error.value)
    for role in ("upper arm left", "forearm left", "hand left", "upper arm right", "hand right"):
        assert role in message
    assert data_counts() == counts
    assert obj.animation_data is None


def test_bone_map_is_stored_on_the_armature_and_wins_over_detection(ext, tmp_path):
    obj = build_skeleton("unreal")
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.procanim.detect_bone_map() == {"FINISHED"}
    settings = obj.procanim.bone_map
    assert settings.convention == "UNREAL"
    assert settings.upper_arm_l == "upperarm_l" and settings.toe_r == "ball_r"
    settings.chest = "spine_01"
    path = tmp_path / "mapped.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.open_mainfile(filepath=str(path))
    obj = bpy.data.objects["Character"]
    assert obj.procanim.bone_map.chest == "spine_01"
    bone_map = ext("operators.rig").bone_map_of(obj)
    assert bone_map.bones["chest"] == "spine_01"
    assert bone_map.bones["hand.L"] == "hand_l"


@pytest.mark.parametrize(
    ("naming", "limb", "tip"), [("mixamo", "ARM_L", "mixamorig:LeftForeArm"), ("unreal", "LEG_R", "calf_r")]
)
def test_bake_ik_picks_the_chain_by_role(ext, naming, limb, tip):
    obj = build_skeleton(naming)
    target = bpy.data.objects.new("Target", None)
    bpy.context.scene.collection.objects.link(target)
    # Within reach of the limb, away from its rest pose.
    target.location = (0.4, -0.35, 1.2) if limb == "ARM_L" else (-0.15, -0.3, 0.35)
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.procanim.bake_ik(limb=limb, target="Target", frame_start=1, frame_end=3) == {"FINISHED"}
    writers = ext("operators.writers")
    keyed = {path.split('"')[1] for path, _ in fcurve_snapshot(obj, writers.fcurves_of)}
    upper = ext("operators.rig").bone_map_of(obj).bones[("upper_arm.L" if limb == "ARM_L" else "thigh.R")]
    assert keyed == {upper, tip}
    bpy.context.scene.frame_set(2)
    reached = np.array(obj.matrix_world @ obj.pose.bones[tip].tail)
    assert np.linalg.norm(reached - np.array(target.location)) < 1e-3


def test_bake_ik_limb_without_the_roles_is_refused(ext):
    obj = build_skeleton("mixamo", arms=False)
    target = bpy.data.objects.new("Target", None)
    bpy.context.scene.collection.objects.link(target)
    bpy.context.view_layer.objects.active = obj
    with pytest.raises(RuntimeError, match="no recognisable left arm"):
        bpy.ops.procanim.bake_ik(limb="ARM_L", target="Target", frame_start=1, frame_end=3)
    assert obj.animation_data is None


def test_cli_juggles_and_dances_with_a_rig_from_a_blend_file(ext, tmp_path):
    from conftest import run_cli

    build_skeleton("mixamo", units=100.0, object_scale=0.01)
    source = tmp_path / "character.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(source))
    out = tmp_path / "juggled.blend"
    done = run_cli(
        "juggle",
        "--rig",
        f"{source}:Character",
        "--siteswap",
        "3",
        "--loops",
        "1",
        "--out",
        str(out),
        tmp_path=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    bpy.ops.wm.open_mainfile(filepath=str(out))
    obj = bpy.data.objects["Character"]
    paths = {fc.data_path for fc in ext("operators.writers").fcurves_of(obj)}
    assert 'pose.bones["mixamorig:LeftForeArm"].rotation_quaternion' in paths
    assert {"Ball 1", "Ball 2", "Ball 3", "Floor"} <= set(bpy.data.objects.keys())
    # An empty scene but for the character: the pattern's loop is the frame range.
    assert bpy.context.scene.frame_end - bpy.context.scene.frame_start < 100

    danced = tmp_path / "danced.blend"
    done = run_cli(
        "dance",
        "--rig",
        f"{source}:Character",
        "--sequence",
        "first_position@1,weight_shift@2",
        "--out",
        str(danced),
        tmp_path=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    bpy.ops.wm.open_mainfile(filepath=str(danced))
    paths = {fc.data_path for fc in ext("operators.writers").fcurves_of(bpy.data.objects["Character"])}
    assert 'pose.bones["mixamorig:Hips"].location' in paths

    bad = run_cli("juggle", "--rig", f"{source}:Nobody", tmp_path=tmp_path)
    assert bad.returncode != 0
    assert "has no object 'Nobody'" in bad.stderr + bad.stdout


def test_generated_rigify_character_juggles_clubs_in_its_palms(ext):
    """What `make demo` renders: Blender's Rigify human with a capsule body juggling clubs."""
    rig_mod = ext("operators.rig")
    obj = rig_mod.generate_rigify_character(bpy.context)
    assert "metarig" not in bpy.data.objects
    parts = [o for o in bpy.data.objects if o.parent == obj and o.parent_type == "BONE"]
    assert len(parts) > 20 and all(obj.data.bones[o.parent_bone].use_deform for o in parts)
    rig = rig_mod.read_rig(obj, bpy.context.scene)
    assert bpy.ops.procanim.juggle(siteswap="3", prop_type="club", loops=1, target_rig=obj.name) == {
        "FINISHED"
    }
    # Nothing in the scene but the character (and its widgets): the loop becomes the frame range.
    assert bpy.context.scene.frame_end - bpy.context.scene.frame_start < 100
    assert "Floor" in bpy.data.objects
    clubs = [bpy.data.objects[f"Club {i}"] for i in (1, 2, 3)]
    bpy.context.scene.procanim.juggling.prop_type = "club"  # the plan takes the sidebar's settings
    pattern, times = _plan(ext, rig, "3")
    grips = pattern.grip_positions(times)
    hands = pattern.hand_positions(times)[0]
    scene = bpy.context.scene
    held = 0
    for index in range(0, len(times), 3):
        scene.frame_set(scene.frame_start + index)
        for p, club in enumerate(clubs):
            for side in (0, 1):
                if np.linalg.norm(grips[p, index] - hands[side, index]) < 1e-6:
                    palm, _ = _palm(obj, rig, side, rig.bone_map.bones[f"hand.{'LR'[side]}"])
                    # The club's grip (its origin less the hold offset) is in the palm.
                    offset = np.array(club.matrix_world.to_3x3()) @ pattern.hold_offset
                    assert np.linalg.norm(np.array(club.matrix_world.translation) - offset - palm) < 0.03
                    held += 1
    assert held > 5


def test_rig_panel_shows_the_detected_map_with_a_bone_search_per_role(ext):
    from conftest import view3d_override
    from ui_smoke import smoke_draw

    obj = build_skeleton("unreal")
    bpy.context.view_layer.objects.active = obj
    obj.procanim.bone_map.chest = "spine_01"
    with bpy.context.temp_override(**view3d_override()):
        record = smoke_draw(ext("panels.rig").PROCANIM_PT_rig)
    searches = [args for name, args in record.calls if name == "prop_search"]
    roles = ext("addon.rig").ROLES
    assert len(searches) == len(roles)
    assert all(args["search_property"] == "bones" for args in searches)
    labels = [str(args.get("text", "")) for name, args in record.calls if name == "label"]
    assert any("Custom" in text or "Unreal" in text for text in labels)
    assert any("detected: upperarm_l" in text for text in labels)
    assert "procanim.detect_bone_map" in record.operators


def test_bake_ik_by_role_on_a_rigify_rig_keys_its_fk_controls(ext, rigify_file):
    obj = append_rigify(rigify_file)
    target = bpy.data.objects.new("Target", None)
    bpy.context.scene.collection.objects.link(target)
    target.location = (0.45, -0.25, 1.35)
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.procanim.bake_ik(limb="ARM_L", target="Target", frame_start=1, frame_end=2) == {"FINISHED"}
    paths = {path for path, _ in fcurve_snapshot(obj, ext("operators.writers").fcurves_of)}
    assert 'pose.bones["forearm_fk.L"].rotation_quaternion' in paths
    assert obj.pose.bones["upper_arm_parent.L"]["IK_FK"] == 1.0
    bpy.context.scene.frame_set(2)
    wrist = world_matrix(obj, "DEF-hand.L")[:3, 3]
    assert np.linalg.norm(wrist - np.array(target.location)) < 2e-3
