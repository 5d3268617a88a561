"""The fly in the scene: its objects and materials, the follow camera, floor, target and wing blur."""

from __future__ import annotations

import bpy
import numpy as np

from ...addon.fly import FlyModel
from ...addon.fly.errors import FlyError
from ...addon.fly.looks import body_parts_mesh, legs_mesh, wing_outline_mesh
from .. import writers
from .constants import (
    COLLECTION,
    PART_KEY,
    SIZE_KEY,
    WING_MATERIAL,
)


def fly_parts(source: bpy.types.Context | bpy.types.Collection | None) -> dict[str, bpy.types.Object]:
    """The parts of one fly: of an instance collection, or of the fly the user selected."""
    collection = source
    if source is not None and not isinstance(source, bpy.types.Collection):
        collection = writers.selected_instance(source, COLLECTION)
    if collection is None:
        return {}
    return {obj[PART_KEY]: obj for obj in collection.all_objects if PART_KEY in obj}


def build_fly(
    context: bpy.types.Context, location=(0.0, 0.0, 0.0), model: FlyModel | None = None
) -> dict[str, bpy.types.Object]:
    """A new fly instance, the body at ``location`` (world), selected and active.

    The body is smooth head, thorax and abdomen just filling the simulated body box, with legs as
    a child; the wings are the simulated planform (finely cut, with UVs for the veined material),
    hinged where the simulation hinges them.
    """
    model = model or FlyModel()
    collection = writers.new_instance(context, COLLECTION)
    body_material = writers.principled_material("Fly Body", (0.09, 0.06, 0.04, 1.0), roughness=0.35)
    eye_material = writers.principled_material("Fly Eyes", (0.45, 0.03, 0.02, 1.0), roughness=0.25)
    wing_material = veined_wing_material()
    vertices, faces, materials = body_parts_mesh(model)
    body_data = writers.mesh_from_arrays("Fly Body", vertices, faces)
    body_data.materials.append(body_material)
    body_data.materials.append(eye_material)
    body_data.polygons.foreach_set("material_index", materials)
    body_data.polygons.foreach_set("use_smooth", np.ones(len(faces), dtype=bool))
    body = writers.new_object("Fly Body", body_data, collection)
    body.location = location
    body.rotation_mode = "QUATERNION"
    body[PART_KEY] = "body"
    body[SIZE_KEY] = model.size
    vertices, faces = legs_mesh(model)
    legs = writers.new_object("Fly Legs", writers.mesh_from_arrays("Fly Legs", vertices, faces), collection)
    writers.assign_material(legs, body_material)
    legs.parent = body
    legs[PART_KEY] = "legs"
    parts = {"body": body, "legs": legs}
    for key, left, label in (("wing_r", False, "Fly Wing R"), ("wing_l", True, "Fly Wing L")):
        vertices, faces, uv = wing_outline_mesh(model, left)
        mesh = writers.mesh_from_arrays(label, vertices, faces)
        layer = mesh.uv_layers.new(name="UVMap")
        corners = np.array([index for face in faces for index in face])
        layer.data.foreach_set("uv", uv[corners].astype(np.float32).ravel())
        wing = writers.new_object(label, mesh, collection)
        writers.assign_material(wing, wing_material)
        wing.parent = body
        wing.location = np.array(model.hinge) * (np.array([-1.0, 1.0, 1.0]) if left else 1.0)
        wing.rotation_mode = "QUATERNION"
        wing[PART_KEY] = key
        parts[key] = wing
    writers.select_only(context, [body], body)
    return parts


def veined_wing_material() -> bpy.types.Material:
    """Clear, faintly iridescent membrane with dark veins fanning from the hinge (EEVEE and Cycles).

    The veins are drawn from the wing's UVs (u along the span, v across the chord): the costa on
    the leading edge, longitudinal veins on rays from the hinge and two cross-veins.
    """
    existing = bpy.data.materials.get(WING_MATERIAL)
    if existing is not None and existing.get(PART_KEY) == "wing_material":
        return existing
    material = writers.principled_material(WING_MATERIAL, (0.78, 0.84, 0.9, 0.25), roughness=0.15)
    material[PART_KEY] = "wing_material"
    material.diffuse_color = (0.78, 0.84, 0.9, 0.35)  # Workbench / viewport
    if hasattr(material, "surface_render_method"):  # EEVEE Next (4.2+)
        material.surface_render_method = "BLENDED"
    if hasattr(material, "blend_method"):  # legacy EEVEE, still read by some versions
        try:
            material.blend_method = "BLEND"
        except (TypeError, AttributeError):
            pass
    material.use_backface_culling = False
    nodes, links = material.node_tree.nodes, material.node_tree.links
    bsdf = next(node for node in nodes if node.type == "BSDF_PRINCIPLED")
    uv = nodes.new("ShaderNodeTexCoord")
    split = nodes.new("ShaderNodeSeparateXYZ")
    links.new(uv.outputs["UV"], split.inputs[0])

    def math(operation, a, b=None, clamp=False):
        node = nodes.new("ShaderNodeMath")
        node.operation = operation
        node.use_clamp = clamp
        for slot, value in ((0, a), (1, b)):
            if value is None:
                continue
            if isinstance(value, (int, float)):
                node.inputs[slot].default_value = value
            else:
                links.new(value, node.inputs[slot])
        return node.outputs[0]

    u, v = split.outputs[0], split.outputs[1]
    # longitudinal veins: thin where sin(9 * angle from the span axis) crosses zero
    angle = math("ARCTAN2", v, math("ADD", u, 0.02))
    rays = math("LESS_THAN", math("ABSOLUTE", math("SINE", math("MULTIPLY", angle, 9.0))), 0.07)
    radius = math("SQRT", math("ADD", math("MULTIPLY", u, u), math("MULTIPLY", v, v)))
    cross = math("LESS_THAN", math("ABSOLUTE", math("SUBTRACT", radius, 0.42)), 0.008)
    cross_outer = math("LESS_THAN", math("ABSOLUTE", math("SUBTRACT", radius, 0.62)), 0.006)
    costa = math("LESS_THAN", v, 0.035)
    veins = math(
        "MAXIMUM", math("MAXIMUM", rays, costa), math("MAXIMUM", math("MULTIPLY", cross, 1.0), cross_outer)
    )
    # the membrane lets most light through (a motion-blurred beat still shows); veins are dark, nearly opaque
    alpha = math("ADD", 0.35, math("MULTIPLY", veins, 0.6), clamp=True)
    links.new(alpha, bsdf.inputs["Alpha"])
    tint = nodes.new("ShaderNodeMix") if bpy.app.version >= (3, 4, 0) else None
    if tint is not None:
        tint.data_type = "RGBA"
        links.new(veins, tint.inputs["Factor"])
        tint.inputs[6].default_value = (0.78, 0.84, 0.9, 1.0)  # A: membrane
        tint.inputs[7].default_value = (0.12, 0.08, 0.05, 1.0)  # B: vein
        links.new(tint.outputs[2], bsdf.inputs["Base Color"])
    coat = bsdf.inputs.get("Coat Weight")
    if coat is not None:
        coat.default_value = 0.4  # the thin-film sheen of a real wing, roughly
    return material


def sample_target(
    scene: bpy.types.Scene, name: str, frame_start: int, fps: float, steps: int, step: float = 0.001
) -> np.ndarray:
    """The target object's world position every simulated step, from its position at every frame."""
    target = scene.objects.get(name)
    if target is None:
        raise FlyError(f"Target object '{name}' is not in the scene")
    frame_count = int(np.ceil(steps * step * fps)) + 1
    positions = np.empty((frame_count, 3))
    for index in range(frame_count):
        scene.frame_set(frame_start + index)
        positions[index] = target.matrix_world.translation
    frame_times = np.arange(frame_count) / fps
    times = np.arange(steps + 1) * step
    return np.stack([np.interp(times, frame_times, positions[:, axis]) for axis in range(3)], axis=1)


def add_follow_camera(
    scene: bpy.types.Scene,
    body: bpy.types.Object,
    ground_height: float,
    ground: bool = True,
    scale: float | None = None,
) -> bpy.types.Object:
    """A camera chasing the body over a checkered floor; baking again reuses them.

    ``scale`` (default: from the body's fly size) shrinks the camera offset and floor for a fly
    smaller than the paper's 2 cm one; the floor stays ``ground_height`` below unless scaled too.
    """
    if scale is None:
        scale = fly_scale(body)
    existing = fly_parts(writers.instance_of(body, COLLECTION)).get("camera")
    if existing is not None:
        scene.camera = existing
        return existing
    collection = body.users_collection[0]
    camera = writers.new_object("Fly Camera", bpy.data.cameras.new("Fly Camera"), collection)
    camera[PART_KEY] = "camera"
    camera.data.lens = 50.0 if scale >= 1.0 else 120.0  # a real-size fly fills more of the frame
    camera.data.clip_start = 0.005 * scale
    camera.location = np.array((0.18, -0.32, 0.1)) * scale
    follow = camera.constraints.new("COPY_LOCATION")
    follow.target = body
    follow.use_offset = True
    aim = camera.constraints.new("TRACK_TO")
    aim.target = body
    aim.track_axis = "TRACK_NEGATIVE_Z"
    aim.up_axis = "UP_Y"
    scene.camera = camera
    if not any(obj.type == "LIGHT" for obj in scene.objects):
        writers.add_sun(collection)
    if ground:
        floor = add_checker_ground(collection, ground_height, size=8.0 * max(scale, 0.125))
        floor[PART_KEY] = "ground"
    return camera


def fly_scale(body: bpy.types.Object) -> float:
    """Body length relative to the paper's 2 cm cartoon fly (camera and floor scale with it)."""
    size = body.get(SIZE_KEY, "cartoon")
    return (
        FlyModel.preset(size).body_size[1] / FlyModel().body_size[1]
        if size in ("cartoon", "fruit_fly")
        else 1.0
    )


def add_checker_ground(
    collection: bpy.types.Collection, height: float, size: float = 8.0, cells: int = 32
) -> bpy.types.Object:
    """A checkered floor below the start, so the follow camera shows how fast the fly climbs."""
    edges = np.linspace(-size / 2, size / 2, cells + 1)
    grid_x, grid_y = np.meshgrid(edges, edges, indexing="ij")
    vertices = np.stack([grid_x.ravel(), grid_y.ravel(), np.full(grid_x.size, height)], axis=1)
    index = np.arange((cells + 1) ** 2).reshape(cells + 1, cells + 1)
    faces = np.stack([index[:-1, :-1], index[1:, :-1], index[1:, 1:], index[:-1, 1:]], axis=-1).reshape(-1, 4)
    mesh = writers.mesh_from_arrays("Fly Ground", vertices, faces)
    for color in ((0.8, 0.8, 0.75, 1.0), (0.25, 0.3, 0.35, 1.0)):
        mesh.materials.append(writers.principled_material("Fly Ground", color, roughness=0.8))
    checker = (np.add.outer(np.arange(cells), np.arange(cells)) % 2).ravel()
    mesh.polygons.foreach_set("material_index", checker.astype(np.int32))
    return writers.new_object("Fly Ground", mesh, collection)


def blur_wings(scene: bpy.types.Scene) -> None:
    """Motion blur on, with enough steps that a wing sweeping a whole beat per shutter smears
    along its arc (Cycles per-object steps, EEVEE's blur steps); Workbench draws no blur."""
    scene.render.use_motion_blur = True
    scene.render.motion_blur_shutter = 0.5
    eevee = getattr(scene, "eevee", None)
    if eevee is not None and hasattr(eevee, "motion_blur_steps"):
        eevee.motion_blur_steps = 8
    for obj in fly_parts(bpy.context).values():
        settings = getattr(obj, "cycles", None)
        if (
            obj.get(PART_KEY) in ("wing_r", "wing_l")
            and settings is not None
            and hasattr(settings, "motion_steps")
        ):
            settings.motion_steps = 6


def add_looping_target(
    scene: bpy.types.Scene, duration: float, model: FlyModel | None = None
) -> bpy.types.Object:
    """A red bead looping in front of the fly, keyed every frame.

    The paper's symmetric cartoon fly gets a figure-eight in its vertical plane (it cannot turn);
    an asymmetric fly a path that also swings sideways, through all three dimensions, scaled to
    the fly's size.
    """
    model = model or FlyModel()
    scale = model.body_size[1] / FlyModel().body_size[1]
    collection = writers.selected_instance(bpy.context, COLLECTION) or scene.collection
    bead = (
        0.008
        * max(scale, 0.25)
        * np.array([[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]], dtype=float)
    )
    faces = [(0, 2, 4), (2, 1, 4), (1, 3, 4), (3, 0, 4), (2, 0, 5), (1, 2, 5), (3, 1, 5), (0, 3, 5)]
    target = writers.new_object("Fly Target", writers.mesh_from_arrays("Fly Target", bead, faces), collection)
    writers.assign_material(target, writers.principled_material("Fly Target", (0.9, 0.1, 0.05, 1.0)))
    fps = scene.render.fps / scene.render.fps_base
    frames = scene.frame_start + np.arange(int(duration * fps) + 2)
    time = (frames - scene.frame_start) / fps
    if model.asymmetric:
        # the fruit fly's steering genome closes in at 1-2 cm/s: a 2 cm loop at half speed (about
        # 1 cm/s) keeps it within about 7 mm of the bead, a 4 cm one at full speed 2-3 cm behind
        reach, period = (0.02, 12.0) if model.size == "fruit_fly" else (0.25, 6.0)
        path = np.stack(
            [
                reach * np.sin(2 * np.pi * time / period),
                reach * 0.8 * np.sin(3 * np.pi * time / period),
                1.0 + reach * 0.5 * np.sin(4 * np.pi * time / period + 0.5) - reach * 0.5 * np.sin(0.5),
            ],
            axis=1,
        )
    else:
        path = np.stack(
            [
                np.zeros_like(time),
                0.25 * np.sin(2 * np.pi * time / 5.0),
                1.3 + 0.15 * np.sin(4 * np.pi * time / 5.0),
            ],
            axis=1,
        )
    writers.write_object_transforms(target, frames, locations=path)
    return target
