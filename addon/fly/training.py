"""Training as a resumable sequence of small steps, for the modal Blender operator and the CLI.

Each generation's single vectorised simulation is itself chunked, so the caller can show progress
and stop (ESC) between chunks; the best genome so far is always available.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .errors import FlyError
from .fitness import FITNESS_FUNCTIONS
from .ga import Population, check_rates, mean_fitness
from .genome import Genome, save_genome
from .model import FlyModel
from .network import ASYMMETRIC_LAYERS, SYMMETRIC_LAYERS
from .simulate import simulate_genomes_steps

TARGET_REACH = 0.3  # m: steering targets are drawn this far from the start in each free direction


@dataclass(frozen=True)
class TrainingConfig:
    population: int = 100
    generations: int = 50
    fitness: str = "final_height_minus_drift"
    duration: float = 2.0
    crossover: float = 0.5
    mutation_rate: float = 0.05
    mutation: str = "perturb"
    mutation_sigma: float = 0.3
    sigma: float = 1.0
    seed: int = 0
    activation: str = "tanh"
    aero: str = "drag"
    asymmetric: bool = False

    def check(self) -> None:
        if self.fitness not in FITNESS_FUNCTIONS:
            raise FlyError(f"Unknown fitness '{self.fitness}': choose one of {', '.join(FITNESS_FUNCTIONS)}")
        if self.population < 4:
            raise FlyError(f"Train at least 4 flies per generation, got {self.population}")
        if self.generations < 1:
            raise FlyError(f"Train for at least one generation, got {self.generations}")
        if not (np.isfinite(self.duration) and 0.05 <= self.duration <= 60.0):
            raise FlyError(f"Training flight duration must be between 0.05 and 60 s, got {self.duration}")
        if not (np.isfinite(self.mutation_sigma) and self.mutation_sigma > 0):
            raise FlyError(f"Mutation sigma must be positive, got {self.mutation_sigma}")
        check_rates(self.crossover, self.mutation_rate, 0.1, 0.05, self.mutation)

    @property
    def layers(self) -> tuple[int, ...]:
        return ASYMMETRIC_LAYERS if self.asymmetric else SYMMETRIC_LAYERS

    def model(self) -> FlyModel:
        return FlyModel(aero=self.aero, asymmetric=self.asymmetric)


@dataclass
class TrainingResult:
    best: Genome
    best_fitness: float
    history: dict[str, list[float]] = field(default_factory=lambda: {"best": [], "mean": []})
    generations: int = 0
    stopped_early: bool = False


def new_population(config: TrainingConfig, resume: str | Path | None = None) -> Population:
    config.check()
    if resume:
        population = Population.load(resume, seed=config.seed)
        if population.layers != config.layers or population.activation != config.activation:
            raise FlyError(
                f"Population file has layers {list(population.layers)} / {population.activation}; "
                f"the settings ask for {list(config.layers)} / {config.activation}"
            )
        # the resumed run may score with another fitness, so the old best score means nothing here
        population.best_fitness = -np.inf
        return population
    return Population(
        size=config.population,
        layers=config.layers,
        seed=config.seed,
        sigma=config.sigma,
        activation=config.activation,
    )


def _target_path(rng: np.random.Generator, config: TrainingConfig, steps: int) -> np.ndarray:
    free = np.array([1.0 if config.asymmetric else 0.0, 1.0, 1.0])  # a symmetric fly cannot side-step
    return np.broadcast_to(rng.uniform(-TARGET_REACH, TARGET_REACH, 3) * free, (steps + 1, 3))


def train_steps(
    config: TrainingConfig,
    population: Population | None = None,
    checkpoint_dir: str | Path | None = None,
    fitness_threshold: float = float("inf"),
    fitness_delta: float = 0.1,
    result: TrainingResult | None = None,
) -> Generator[tuple[float, str], None, TrainingResult]:
    """Train generation by generation; yields (fraction, message); returns the TrainingResult.

    ``result`` (optional) is filled in place after each generation, so a caller that stops early
    still holds the best genome so far.
    """
    population = population or new_population(config)
    config.check()
    measure = FITNESS_FUNCTIONS[config.fitness]
    model = config.model()
    steps = int(round(config.duration / 0.001))
    target_rng = np.random.default_rng([config.seed, 7])
    threshold = float(fitness_threshold)
    result = result or TrainingResult(population.best, -np.inf)
    for index in range(config.generations):
        if index > 0:
            population.breed(
                config.crossover,
                config.mutation_rate,
                mutation=config.mutation,
                mutation_sigma=config.mutation_sigma,
            )
        target = _target_path(target_rng, config, steps) if config.fitness == "toward_target" else None
        simulation = simulate_genomes_steps(
            population.genomes,
            config.duration,
            layers=population.layers,
            activation=population.activation,
            model=model,
            target=target,
        )
        while True:
            try:
                fraction = next(simulation)
            except StopIteration as stop:
                flight = stop.value
                break
            yield (index + fraction) / config.generations, f"generation {index + 1}/{config.generations}"
        scores = measure(flight)
        if target is not None:
            # each generation draws a new target, so only this generation's scores are comparable
            population.best_fitness = -np.inf
        population.evaluate(lambda genomes, scores=scores: scores)
        best, mean = float(scores.max()), mean_fitness(scores)
        population.history["best"].append(best)
        population.history["mean"].append(mean)
        population.generation += 1
        result.best = Genome(population.best.weights, population.layers, population.activation, config.aero)
        result.best_fitness = population.best_fitness
        result.history["best"].append(population.history["best"][-1])
        result.history["mean"].append(population.history["mean"][-1])
        result.generations = index + 1
        if checkpoint_dir is not None and best >= threshold:
            save_genome(
                result.best,
                Path(checkpoint_dir) / f"best_gen{population.generation:05d}.npz",
                fitness=population.best_fitness,
            )
            while threshold <= best:
                threshold += fitness_delta
        yield (
            (index + 1) / config.generations,
            (f"generation {index + 1}/{config.generations}, best fitness {population.best_fitness:.3f}"),
        )
    if checkpoint_dir is not None:
        population.save(Path(checkpoint_dir) / "population.npz")
    return result
