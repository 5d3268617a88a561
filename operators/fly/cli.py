"""The headless ``fly`` subcommand: train and bake without the UI."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from ...addon.fly import load_genome
from ..cli import COMMON, CliError, call_operator
from .genomes import (
    genome_file,
)
from .properties import (
    FITNESS_ITEMS,
)
from .scene import (
    add_looping_target,
    blur_wings,
)


def add_cli(subparsers) -> None:
    fly = subparsers.add_parser("fly", help="train a fly controller or bake a fly's flight")
    actions = fly.add_subparsers(dest="fly_command", metavar="ACTION", parser_class=type(fly))
    actions.required = True
    train = actions.add_parser("train", parents=[COMMON], help="evolve a genome; write it and its curve")
    train.add_argument("--population", type=int, default=100, help="flies per generation")
    train.add_argument("--generations", type=int, default=30, help="generations to train")
    train.add_argument(
        "--fitness",
        choices=[i[0].lower() for i in FITNESS_ITEMS],
        default="final_height_minus_drift",
        help="what a good flight is",
    )
    train.add_argument("--flight-time", type=float, default=2.0, help="seconds per training flight")
    train.add_argument("--crossover", type=float, default=0.5, help="gene-from-parent-1 probability")
    train.add_argument("--mutation-rate", type=float, default=0.05, help="per-gene mutation probability")
    train.add_argument("--mutation", choices=("perturb", "reset"), default="perturb", help="mutation kind")
    train.add_argument("--seed", type=int, default=0, help="random seed")
    train.add_argument(
        "--aero",
        choices=("drag", "quasi_steady"),
        help="wing force model (default: drag, quasi_steady for stroke)",
    )
    train.add_argument("--asymmetric", action="store_true", help="control both wings separately")
    train.add_argument(
        "--control",
        choices=("direct", "stroke"),
        default="direct",
        help="direct: the paper's wing angles (cartoon fly); stroke: the wing-beat generator (fruit fly)",
    )
    cluster = train.add_mutually_exclusive_group()
    cluster.add_argument(
        "--workers", type=int, help="score generations on a local Dask cluster of N processes (needs Dask)"
    )
    cluster.add_argument(
        "--scheduler", help="score generations on a Dask scheduler, tcp://HOST:8786 (needs Dask)"
    )
    train.add_argument("--resume", action="store_true", help="continue from the saved population")
    train.add_argument(
        "--checkpoint-threshold",
        type=float,
        help="save the best genome to <genome>_checkpoints/ whenever the best fitness passes "
        "this, raising it by --checkpoint-delta each time",
    )
    train.add_argument("--checkpoint-delta", type=float, default=0.1, help="threshold step (default 0.1)")
    train.add_argument(
        "--genome", type=Path, default=Path("out/fly_trained.npz"), help="genome file to write"
    )
    train.add_argument("--curve", type=Path, help="also copy the training curve PNG here")
    train.add_argument("--bake", type=float, default=0.0, help="then bake this many seconds of its flight")
    train.set_defaults(run=_cli_train)
    bake = actions.add_parser("bake", parents=[COMMON], help="bake a genome's flight onto a fly model")
    bake.add_argument("--genome", type=Path, help="genome .npz (default: the shipped hovering genome)")
    bake.add_argument("--duration", type=float, default=30.0, help="seconds of flight")
    bake.add_argument("--camera", action="store_true", help="add a camera and light that follow the fly")
    bake.add_argument(
        "--chase",
        action="store_true",
        help="add a target bead looping in front of the fly and steer toward it "
        "(uses the shipped steering genome unless --genome is given)",
    )
    bake.set_defaults(run=_cli_bake)


def _cli_train(args, context) -> None:
    genome = args.genome.resolve()
    aero = args.aero or ("quasi_steady" if args.control == "stroke" else "drag")
    if args.workers or args.scheduler:
        _train_on_dask(args, genome, aero)
    else:
        _train_in_process(args, genome, aero)
    if args.bake > 0:
        context.scene.procanim.fly.genome_path = str(genome)
        call_operator("procanim.add_fly")
        call_operator(
            "procanim.bake_fly",
            duration=args.bake,
            genome_path=str(genome),
            follow_camera=args.render is not None,
        )


def _train_on_dask(args, genome: Path, aero: str) -> None:
    """Distributed training runs in the bpy-free core (``python -m addon.fly train``) in a child
    Python, so Blender never imports Dask; the genome it writes is what Load Genome takes."""
    import subprocess
    import sys

    if args.resume or args.checkpoint_threshold is not None:
        raise CliError("fly train: --resume and checkpoints are not available with --workers / --scheduler")
    command = [
        sys.executable,
        "-m",
        "addon.fly",
        "train",
        "--control",
        args.control,
        "--aero",
        aero,
        "--fitness",
        args.fitness,
        "--population",
        str(args.population),
        "--generations",
        str(args.generations),
        "--flight-time",
        str(args.flight_time),
        "--seed",
        str(args.seed),
        "--genome",
        str(genome),
    ]
    command += ["--asymmetric"] if args.asymmetric else []
    command += ["--workers", str(args.workers)] if args.workers else ["--scheduler", args.scheduler]
    result = subprocess.run(command, cwd=Path(__file__).resolve().parent.parent.parent, check=False)
    if result.returncode != 0:
        raise CliError(f"fly train: distributed training failed (exit {result.returncode}); see above")
    print(f"procanim: genome {genome} (trained on Dask)")


def _train_in_process(args, genome: Path, aero: str) -> None:
    call_operator(
        "procanim.train_fly",
        population=args.population,
        generations=args.generations,
        fitness=args.fitness.upper(),
        train_duration=args.flight_time,
        crossover=args.crossover,
        mutation_rate=args.mutation_rate,
        mutation=args.mutation.upper(),
        seed=args.seed,
        aero=aero.upper(),
        asymmetric=args.asymmetric,
        control=args.control.upper(),
        resume=args.resume,
        checkpoints=args.checkpoint_threshold is not None,
        checkpoint_threshold=args.checkpoint_threshold if args.checkpoint_threshold is not None else 0.5,
        checkpoint_delta=args.checkpoint_delta,
        output_path=str(genome),
    )
    curve = genome.with_name(genome.stem + "_curve.png")
    print(f"procanim: genome {genome}, training curve {curve}")
    if args.curve is not None:
        args.curve.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(curve, args.curve)


def _cli_bake(args, context) -> None:
    if args.genome is not None and not args.genome.is_file():
        raise CliError(f"fly bake: genome file {args.genome} does not exist")
    if not (np.isfinite(args.duration) and args.duration > 0):
        raise CliError(f"fly bake: --duration must be a positive number of seconds, got {args.duration}")
    genome_path = str(args.genome.resolve()) if args.genome else ""
    context.scene.procanim.fly.genome_path = genome_path  # Add Fly builds the fly this genome flies
    call_operator("procanim.add_fly")
    model = load_genome(genome_file(genome_path, steering=args.chase)).model()
    target = add_looping_target(context.scene, args.duration, model).name if args.chase else ""
    call_operator(
        "procanim.bake_fly",
        duration=args.duration,
        genome_path=genome_path,
        follow_camera=args.camera or args.render is not None,
        target=target,
    )
    if model.control == "stroke":
        blur_wings(context.scene)
