"""Headless subcommand ``mirror`` and the demo lighting stage it can add (make demo)."""

import bpy
import numpy as np

from .. import writers
from ..cli import COMMON, call_operator
from .recipes import focus_positions
from .trace import _target_mirror

# --------------------------------------------------------------------------- demo lighting (CLI, make demo)


def add_demo_stage(context, obj: bpy.types.Object) -> None:
    """A glowing bead at the first focus, a white sensor bead at the second, an identical control bead
    as far from the light on the other side, a black world and a camera: in a Cycles render the sensor
    bead shines where the mirror concentrates the light, the control bead only gets the direct light."""
    first, second = focus_positions(obj)
    size = float(np.linalg.norm(second - first))
    collection = writers.generator_collection(context.scene, "Mirror Stage", replace=True)
    beads = (
        ("Light Bead", first, 15.0),
        ("Sensor Bead", second, 0.0),
        ("Control Bead", 2.0 * first - second, 0.0),
    )
    for name, where, emission in beads:
        mesh = _ico_sphere(name, where, 0.04 * size)
        bead = writers.new_object(name, mesh, collection)
        colour = (1.0, 0.9, 0.6, 1.0) if emission else (0.9, 0.9, 0.9, 1.0)
        writers.assign_material(bead, writers.principled_material(name, colour, emission=emission))
    matrix = np.array(obj.matrix_world, dtype=np.float64)
    vertices = writers.mesh_vertices(obj.data) @ matrix[:3, :3].T + matrix[:3, 3]
    points = np.vstack([vertices, [where for _, where, _ in beads]])
    writers.add_camera_framing(
        context.scene, collection, points.min(axis=0), points.max(axis=0), direction=(0.25, -1.0, 0.12)
    )
    world = bpy.data.worlds.new("Mirror World")
    context.scene.world = world
    world.color = (0.0, 0.0, 0.0)
    if world.node_tree is None:  # before 5.0 a new world has no node tree until asked for
        world.use_nodes = True
    background = next(n for n in world.node_tree.nodes if n.type == "BACKGROUND")
    background.inputs["Color"].default_value = (0.012, 0.014, 0.02, 1.0)
    cycles = getattr(context.scene, "cycles", None)
    if cycles is not None:
        # Cycles blurs mirrors seen after a diffuse bounce by default, which hides the very caustic
        # this stage is meant to show.
        cycles.blur_glossy = 0.0
        cycles.caustics_reflective = True


def _ico_sphere(name: str, centre, radius: float) -> bpy.types.Mesh:
    rings, segments = 8, 16
    polar = np.pi * np.arange(1, rings) / rings
    azimuth = 2.0 * np.pi * np.arange(segments) / segments
    body = np.stack(
        [
            np.outer(np.sin(polar), np.cos(azimuth)).ravel(),
            np.outer(np.sin(polar), np.sin(azimuth)).ravel(),
            np.repeat(np.cos(polar), segments),
        ],
        axis=-1,
    )
    vertices = np.concatenate([[[0, 0, 1]], body, [[0, 0, -1]]]) * radius + np.asarray(centre)
    faces = []
    bottom = len(vertices) - 1
    for j in range(segments):
        k = (j + 1) % segments
        faces.append((0, 1 + j, 1 + k))
        faces.append((bottom, 1 + (rings - 2) * segments + k, 1 + (rings - 2) * segments + j))
        for i in range(rings - 2):
            a, b = 1 + i * segments + j, 1 + i * segments + k
            faces.append((a, a + segments, b + segments, b))
    return writers.mesh_from_arrays(name, vertices, faces)


# --------------------------------------------------------------------------- headless


def add_cli(subparsers) -> None:
    parser = subparsers.add_parser(
        "mirror",
        help="an ellipsoidal mirror, mirror chain or Fresnel plate with traced rays",
        parents=[COMMON],
    )
    parser.add_argument("--type", choices=("ellipsoid", "chain", "fresnel"), default="ellipsoid")
    parser.add_argument("--focus-1", type=float, nargs=3, default=(-0.5, 0.0, 1.0), metavar=("X", "Y", "Z"))
    parser.add_argument("--focus-2", type=float, nargs=3, default=(0.5, 0.0, 1.0), metavar=("X", "Y", "Z"))
    parser.add_argument("--minor-axis", type=float, default=1.6, help="full minor axis in metres")
    parser.add_argument(
        "--mesh-resolution", dest="mesh_resolution", type=int, default=24, help="mirror mesh rings"
    )
    parser.add_argument("--zones", type=int, default=24, help="Fresnel zones")
    parser.add_argument("--rays", type=int, default=24, help="rays to trace")
    parser.add_argument("--pattern", choices=("fan", "cone", "random"), default="fan")
    parser.add_argument(
        "--travel-frames", type=int, default=48, help="frames the light takes along the rays (0: still)"
    )
    parser.add_argument("--stage", action="store_true", help="add a glowing bead, a sensor bead and a camera")
    parser.set_defaults(run=_cli_mirror)


def _cli_mirror(args, context) -> None:
    if args.type == "ellipsoid":
        call_operator(
            "procanim.add_ellipsoid_mirror",
            use_selection=False,
            focus_1=args.focus_1,
            focus_2=args.focus_2,
            minor_axis=args.minor_axis,
            resolution=args.mesh_resolution,
        )
    elif args.type == "chain":
        call_operator("procanim.add_mirror_chain", use_selection=False, resolution=args.mesh_resolution)
    else:
        call_operator(
            "procanim.add_fresnel_reflector",
            use_selection=False,
            focus_1=args.focus_1,
            focus_2=args.focus_2,
            zones=args.zones,
        )
    call_operator(
        "procanim.trace_rays",
        ray_count=args.rays,
        ray_pattern=args.pattern.upper(),
        animate=args.travel_frames > 1,
        travel_frames=max(2, args.travel_frames),
    )
    if args.stage:
        add_demo_stage(context, _target_mirror(context))
