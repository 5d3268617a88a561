"""The fly's training CLI without Blender: ``python -m addon.fly train|genomes ...`` (repo root).

``train`` evolves one genome; ``genomes`` replays presets/fly/recipes.toml (``make genomes``).
Both take ``--workers N`` (a local Dask cluster) or ``--scheduler tcp://HOST:8786`` to score each
generation in chunks on Dask; the result is the same as in one process for the same seed.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from .errors import FlyError
from .fitness import FITNESS_FUNCTIONS
from .genome import save_genome


def _cluster_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--workers", type=int, help="score generations on a local Dask cluster of N processes")
    group.add_argument("--scheduler", help="score generations on a running Dask scheduler (tcp://HOST:8786)")
    parser.add_argument(
        "--chunks", type=int, help="pieces each generation is split into (default: one per worker)"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m addon.fly", description=__doc__.splitlines()[0])
    actions = parser.add_subparsers(dest="action", required=True)
    train = actions.add_parser("train", help="evolve one genome and write it")
    train.add_argument("--control", choices=("direct", "stroke"), default="stroke", help="control mode")
    train.add_argument(
        "--size", choices=("fruit_fly", "cartoon"), default="", help="fly size (mode's default)"
    )
    train.add_argument("--aero", choices=("drag", "quasi_steady"), default="quasi_steady", help="wing forces")
    train.add_argument("--asymmetric", action="store_true", help="set each wing separately")
    train.add_argument("--fitness", choices=sorted(FITNESS_FUNCTIONS), default="hold_level")
    train.add_argument("--population", type=int, default=48)
    train.add_argument("--generations", type=int, default=20)
    train.add_argument("--flight-time", type=float, default=1.0, help="seconds per training flight")
    train.add_argument("--seed", type=int, default=0)
    train.add_argument("--sigma", type=float, default=0.3, help="spread of the first genomes")
    train.add_argument("--mutation-sigma", type=float, default=0.3)
    train.add_argument("--starts", type=int, default=1, help="start points per genome (scored by the worst)")
    train.add_argument("--start-spread", type=float, default=0.0, help="metres the start points spread")
    train.add_argument(
        "--genome", type=Path, default=Path("out/fly_trained.npz"), help="genome file to write"
    )
    _cluster_options(train)
    genomes = actions.add_parser("genomes", help="retrain the shipped genomes from presets/fly/recipes.toml")
    genomes.add_argument("names", nargs="*", help="recipes to run (default: all)")
    genomes.add_argument("--out", type=Path, help="folder to write to (default: presets/fly)")
    genomes.add_argument("--short", action="store_true", help="a tiny version of each schedule (a check)")
    _cluster_options(genomes)
    return parser


def _evaluator(args):
    if not (args.workers or args.scheduler):
        return None, None
    from . import distributed

    client = distributed.connect(args.scheduler, args.workers)
    return client, distributed.dask_evaluator(client, args.chunks)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    start = time.perf_counter()
    client = None
    try:
        client, evaluate = _evaluator(args)
        if args.action == "train":
            from .training import TrainingConfig, train_steps

            config = TrainingConfig(
                population=args.population,
                generations=args.generations,
                fitness=args.fitness,
                duration=args.flight_time,
                seed=args.seed,
                sigma=args.sigma,
                mutation_sigma=args.mutation_sigma,
                control=args.control,
                size=args.size,
                aero=args.aero,
                asymmetric=args.asymmetric,
                starts=args.starts,
                start_spread=args.start_spread,
            )
            steps = train_steps(config, evaluate=evaluate)
            while True:
                try:
                    _, message = next(steps)
                except StopIteration as stop:
                    result = stop.value
                    break
                if "best" in message:
                    print(f"{time.perf_counter() - start:7.1f} s  {message}", flush=True)
            path = save_genome(
                result.best,
                args.genome,
                fitness=result.best_fitness,
                seed=config.seed,
                settings=config.settings(),
            )
            print(f"genome {path} (best fitness {result.best_fitness:.4f})")
        else:
            from .recipes import GENOME_DIR, write_genomes

            written = write_genomes(
                args.out or GENOME_DIR,
                args.names,
                short=args.short,
                evaluate=evaluate,
                progress=lambda message: print(
                    f"{time.perf_counter() - start:7.1f} s  {message}", flush=True
                ),
            )
            for path in written:
                print(f"wrote {path}")
    except FlyError as error:
        print(f"fly: {error}", file=sys.stderr)
        return 2
    finally:
        if client is not None:
            from . import distributed

            distributed.close(client)
    return 0


if __name__ == "__main__":
    sys.exit(main())
