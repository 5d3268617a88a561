"""The headless ``simulate`` subcommand: jelly drop, folding jelly sheet, rope or rigid pile through the
operators."""

import argparse

from ...addon.simulation.scenes import RIGID_CONTACTS
from .. import writers
from ..cli import COMMON, call_operator
from .properties import _SolverProperties

# --------------------------------------------------------------------------- headless CLI


def add_cli(subparsers) -> None:
    parser = subparsers.add_parser(
        "simulate",
        help="a Verlet / shape-matching bake: jelly drop, jelly sheet, rope or rigid pile",
        parents=[COMMON],
    )
    parser.add_argument(
        "--scene",
        choices=("jelly", "sheet", "rope", "pile"),
        default="jelly",
        help="what to simulate (sheet: a cloth-like jelly sheet folding onto itself, with self collision)",
    )
    parser.add_argument("--length", type=int, default=72, help="frames to simulate (default 72)")
    parser.add_argument(
        "--substeps",
        type=int,
        help="a fixed number of substeps per frame (default: chosen per frame, Auto Substeps)",
    )
    parser.add_argument(
        "--solver", choices=("GAUSS_SEIDEL", "JACOBI"), default="GAUSS_SEIDEL", help="projection"
    )
    parser.add_argument(
        "--preset",
        help="a preset of presets/simulation.toml (Jelly, Rubber, Rope, Chain, Stiff, 'Cloth Bag')",
    )
    parser.add_argument(
        "--limit-stretch",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="jelly: pull edges stretched past Max Stretch back every frame (default: on, Limit Stretch)",
    )
    parser.add_argument("--cubes", type=int, default=None, help="pile: how many cubes to pour")
    parser.add_argument("--friction", type=float, default=None, help="friction while sliding (dynamic)")
    parser.add_argument(
        "--particle-radius", type=float, default=None, help="collision radius of the particles (m)"
    )
    parser.add_argument(
        "--static-friction", type=float, default=None, help="pile: friction to start sliding (static)"
    )
    parser.add_argument(
        "--contacts",
        choices=RIGID_CONTACTS,
        default=None,
        help="pile: how contacts are solved (sequential: bodies roll and keep their spin)",
    )
    parser.add_argument(
        "--rolling-resistance",
        type=float,
        default=None,
        help="pile: rolling resistance coefficient (sequential contacts; 0 rolls freely)",
    )
    parser.add_argument(
        "--pour-interval",
        type=int,
        default=None,
        help="pile: frames between one cube's drop and the next (default: the demo's; 0 drops all at once)",
    )
    parser.add_argument(
        "--pour-drop",
        type=float,
        default=None,
        help="pile: let each cube go this far (m) above the heap, not from the spout (default: the demo's)",
    )
    parser.set_defaults(run=_cli_simulate)


def _cli_simulate(args, context) -> None:
    if args.preset:
        call_operator("procanim.apply_preset", kind="simulation", name=args.preset)
    settings = context.scene.procanim.simulation
    settings.frame_count = args.length
    if args.substeps is not None:
        settings.substeps = args.substeps
        settings.auto_substeps = False
    if args.limit_stretch is not None:
        settings.limit_stretch = args.limit_stretch
    settings.solver = args.solver
    for key in ("friction", "static_friction", "particle_radius"):
        if getattr(args, key) is not None:
            setattr(settings, key, getattr(args, key))
    shared = {key: getattr(settings, key) for key in _SolverProperties.__annotations__}
    automatic = {key: getattr(settings, key) for key in ("auto_substeps", "max_stretch")}
    writers.set_frame_range(context.scene, 1, args.length)
    if args.scene == "rope":
        call_operator("procanim.add_rope", links=settings.links, slack=settings.slack, **shared)
        return
    if args.scene == "pile":
        call_operator("procanim.add_rigid_pile_demo", **({"count": args.cubes} if args.cubes else {}))
        if args.pour_interval is not None:  # after the demo, which sets its own
            settings.pour_interval = args.pour_interval
        if args.pour_drop is not None:
            settings.pour_drop = args.pour_drop
        if args.contacts is not None:
            settings.rigid_contacts = args.contacts.upper()
        if args.rolling_resistance is not None:  # after the demo too: a pour sets its own
            settings.rolling_resistance = args.rolling_resistance
        keys = ("static_friction", "pour_interval", "pour_drop", "rigid_contacts", "rolling_resistance")
        pile = {key: getattr(settings, key) for key in keys}
        call_operator("procanim.bake_rigid_pile", **shared, **automatic, **pile)
        return
    folder = "" if args.out is None else str(args.out.resolve().parent / f"{args.out.stem}_cache")
    soft = {
        key: getattr(settings, key)
        for key in (
            "use_volume", "pressure", "shape_stiffness", "shape_regions", "self_collision", "limit_stretch"
        )  # fmt: skip
    }
    if args.scene == "sheet":
        call_operator("procanim.add_sheet_demo")
        soft.update(use_volume=False, shape_stiffness=0.0, self_collision=True)  # cloth-like, folding
    else:
        call_operator("procanim.add_softbody_demo")
    call_operator("procanim.bake_softbody", cache_directory=folder, **soft, **shared, **automatic)
