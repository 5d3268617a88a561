"""Recipes of the shipped genomes (``presets/fly/recipes.toml``): replayed by ``make genomes``.

A recipe fixes a seed and a schedule of training stages (fitness, flight time, start points,
population, ...) run one after the other on one population, so retraining writes the same genome
file bit for bit. The file records the seed, the whole schedule and the final fitness.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields, replace
from pathlib import Path

import numpy as np

from .errors import FlyError
from .genome import Genome, save_genome
from .steering import SteeringGains
from .training import Evaluator, TrainingConfig, new_population, train_steps

RECIPE_FILE = Path(__file__).resolve().parents[2] / "presets" / "fly" / "recipes.toml"
GENOME_DIR = RECIPE_FILE.parent
_SETTINGS = {field.name for field in fields(TrainingConfig)}


@dataclass(frozen=True)
class SteeringBuild:
    """A genome built rather than evolved (``[name.build]`` in recipes.toml): the steering fly
    constructed on an evolved hover genome (:mod:`addon.fly.steering`)."""

    hover: str  # genome file (name in presets/fly, or a path) whose network flies the vertical plane
    gains: SteeringGains

    def settings(self) -> dict:
        return {"hover": self.hover, **self.gains.settings()}


@dataclass(frozen=True)
class Recipe:
    name: str
    file: str
    seed: int
    stages: tuple[TrainingConfig, ...]
    description: str = ""
    build: SteeringBuild | None = None

    def settings(self) -> dict:
        stages = [stage.settings() for stage in self.stages]
        settings = {"recipe": self.name, "seed": self.seed, "stages": stages}
        if self.build is not None:
            settings["build"] = self.build.settings()
        return settings

    def shortened(self, population: int = 6, generations: int = 2, duration: float = 0.05) -> Recipe:
        """The same schedule, tiny (for the determinism test)."""
        stages = tuple(
            replace(
                stage,
                population=min(stage.population, population),
                generations=min(stage.generations, generations),
                duration=min(stage.duration, duration),
            )
            for stage in self.stages
        )
        build = self.build
        if build is not None:
            short_gains = replace(build.gains, settle=duration, evaluation=duration, calibrations=1)
            build = replace(build, gains=short_gains)
        return replace(self, stages=stages, build=build)


def load_recipes(path: str | Path = RECIPE_FILE) -> dict[str, Recipe]:
    source = Path(path)
    try:
        data = tomllib.loads(source.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise FlyError(f"Cannot read the genome recipes '{source.name}': {error}") from error
    recipes = {}
    for name, table in data.items():
        stages = table.get("stage", [])
        build = _steering_build(name, table.get("build"))
        if not isinstance(stages, list) or bool(stages) == bool(build) or not {"file", "seed"} <= set(table):
            raise FlyError(
                f"Recipe '{name}' needs a file, a seed and either [[{name}.stage]] tables or a [{name}.build]"
            )
        configs = []
        for index, stage in enumerate(stages, 1):
            unknown = set(stage) - _SETTINGS
            if unknown:
                raise FlyError(
                    f"Recipe '{name}' stage {index} has unknown settings: {', '.join(sorted(unknown))}"
                )
            config = TrainingConfig(**{**stage, "seed": int(table["seed"])})
            config.check()
            configs.append(config)
        if len({(c.control, c.asymmetric, c.fly_size, c.aero) for c in configs}) > 1:
            raise FlyError(f"Recipe '{name}': every stage must train the same fly (mode, wings, size, aero)")
        recipes[name] = Recipe(
            name, str(table["file"]), int(table["seed"]), tuple(configs), table.get("description", ""), build
        )
    return recipes


def _steering_build(name: str, table) -> SteeringBuild | None:
    if table is None:
        return None
    known = {field.name for field in fields(SteeringGains)} | {"hover"}
    unknown = set(table) - known if isinstance(table, dict) else set()
    if not isinstance(table, dict) or unknown or "hover" not in table:
        raise FlyError(
            f"Recipe '{name}' build needs a hover genome and known settings"
            + (f"; unknown: {', '.join(sorted(unknown))}" if unknown else "")
        )
    gains = SteeringGains(**{key: value for key, value in table.items() if key != "hover"})
    gains.check()
    return SteeringBuild(str(table["hover"]), gains)


def build_recipe(recipe: Recipe, progress: Callable[[str], None] | None = None) -> tuple[Genome, float]:
    """Build a ``[name.build]`` recipe's genome (no evolution) and its recorded fitness."""
    from .genome import load_genome, preset_genome_path
    from .steering import build_steering, steering_layers

    hover = load_genome(preset_genome_path(recipe.build.hover))
    if progress is not None:
        progress(f"{recipe.name}: building the steering network on {Path(recipe.build.hover).name}")
    weights, fitness = build_steering(hover.weights, recipe.build.gains, recipe.seed)
    layers = steering_layers(recipe.build.gains)
    return Genome(weights, layers, "tanh", hover.aero, hover.size), fitness


def train_recipe(
    recipe: Recipe,
    evaluate: Evaluator | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[Genome, float]:
    """Run every stage on one population; returns the best genome of the last stage and its fitness."""
    if recipe.build is not None:
        return build_recipe(recipe, progress)
    population = new_population(recipe.stages[0])
    result = None
    for number, config in enumerate(recipe.stages, 1):
        if number > 1:
            population.best_fitness = -np.inf  # the next stage scores with its own fitness
        steps = train_steps(config, population, evaluate=evaluate)
        while True:
            try:
                _, message = next(steps)
            except StopIteration as stop:
                result = stop.value
                break
            if progress is not None and "best" in message:
                progress(f"{recipe.name} stage {number}/{len(recipe.stages)}: {message}")
    return result.best, float(result.best_fitness)


def write_genomes(
    directory: str | Path = GENOME_DIR,
    names: Iterable[str] | None = None,
    short: bool = False,
    evaluate: Evaluator | None = None,
    progress: Callable[[str], None] | None = None,
    recipes: dict[str, Recipe] | None = None,
) -> list[Path]:
    """Retrain the recipes (all, or ``names``) and write their genome files into ``directory``."""
    recipes = recipes or load_recipes()
    chosen = list(names) if names else list(recipes)
    missing = [name for name in chosen if name not in recipes]
    if missing:
        raise FlyError(f"No genome recipe named {', '.join(missing)}: choose from {', '.join(recipes)}")
    written: list[Path] = []
    fresh: dict[str, Path] = {}  # genome files this run wrote: later recipes seed from them
    for name in chosen:
        recipe = recipes[name].shortened() if short else recipes[name]
        settings = recipe.settings()
        stages = tuple(
            replace(stage, seed_genome=str(fresh[stage.seed_genome])) if stage.seed_genome in fresh else stage
            for stage in recipe.stages
        )
        build = recipe.build
        if build is not None and build.hover in fresh:
            build = replace(build, hover=str(fresh[build.hover]))
        genome, fitness = train_recipe(replace(recipe, stages=stages, build=build), evaluate, progress)
        written.append(
            save_genome(
                genome,
                Path(directory) / recipe.file,
                fitness=fitness,
                seed=recipe.seed,
                settings=settings,
            )
        )
        fresh[recipe.file] = written[-1]
    return written
