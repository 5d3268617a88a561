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
from .training import Evaluator, TrainingConfig, new_population, train_steps

RECIPE_FILE = Path(__file__).resolve().parents[2] / "presets" / "fly" / "recipes.toml"
GENOME_DIR = RECIPE_FILE.parent
_SETTINGS = {field.name for field in fields(TrainingConfig)}


@dataclass(frozen=True)
class Recipe:
    name: str
    file: str
    seed: int
    stages: tuple[TrainingConfig, ...]
    description: str = ""

    def settings(self) -> dict:
        return {"recipe": self.name, "seed": self.seed, "stages": [stage.settings() for stage in self.stages]}

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
        return replace(self, stages=stages)


def load_recipes(path: str | Path = RECIPE_FILE) -> dict[str, Recipe]:
    source = Path(path)
    try:
        data = tomllib.loads(source.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise FlyError(f"Cannot read the genome recipes '{source.name}': {error}") from error
    recipes = {}
    for name, table in data.items():
        stages = table.get("stage")
        if not isinstance(stages, list) or not stages or "file" not in table or "seed" not in table:
            raise FlyError(f"Recipe '{name}' needs a file, a seed and at least one [[{name}.stage]]")
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
        if len({(c.control, c.asymmetric, c.fly_size, c.aero) for c in configs}) != 1:
            raise FlyError(f"Recipe '{name}': every stage must train the same fly (mode, wings, size, aero)")
        recipes[name] = Recipe(
            name, str(table["file"]), int(table["seed"]), tuple(configs), table.get("description", "")
        )
    return recipes


def train_recipe(
    recipe: Recipe,
    evaluate: Evaluator | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[Genome, float]:
    """Run every stage on one population; returns the best genome of the last stage and its fitness."""
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
        genome, fitness = train_recipe(replace(recipe, stages=stages), evaluate, progress)
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
