"""The paper's genetic algorithm (section 2.3.3), one generation at a time.

Per generation: the whole population is scored by one fitness call (one vectorised simulation),
the best 10% form the mating pool, children take every gene from parent 1 with probability x
(``crossover``) and otherwise from parent 2, each child gene is mutated with ``mutation_rate``,
and the best 5% are copied unchanged.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import FlyError, GenomeFileError
from .genome import Genome, _read_npz, save_genome
from .network import SYMMETRIC_LAYERS, check_activation, check_layers, genome_size

FitnessFunction = Callable[[np.ndarray], np.ndarray]
MUTATION_MODES = ("reset", "perturb")


@dataclass
class GenerationResult:
    generation: int
    best: float
    mean: float
    best_genome: Genome


class Population:
    """A population of controller genomes, Gaussian-initialised with ``sigma``, seeded."""

    def __init__(
        self,
        size: int = 100,
        layers=SYMMETRIC_LAYERS,
        seed: int | None = 0,
        sigma: float = 1.0,
        activation: str = "tanh",
        genomes: np.ndarray | None = None,
    ) -> None:
        self.layers = check_layers(layers)
        self.activation = check_activation(activation)
        if int(size) < 2:
            raise FlyError(f"A population needs at least 2 genomes, got {size}")
        if not (np.isfinite(sigma) and sigma > 0):
            raise FlyError(f"Initial sigma must be positive, got {sigma}")
        self.size = int(size)
        self.sigma = float(sigma)
        self.rng = np.random.default_rng(seed)
        gene_count = genome_size(self.layers)
        if genomes is None:
            self.genomes = self.rng.normal(0.0, self.sigma, size=(self.size, gene_count))
        else:
            genomes = np.asarray(genomes, dtype=np.float64)
            if genomes.shape != (self.size, gene_count) or not np.all(np.isfinite(genomes)):
                raise FlyError(
                    f"Population genomes must be finite ({self.size}, {gene_count}), got {genomes.shape}"
                )
            self.genomes = genomes.copy()
        self.fitness: np.ndarray | None = None
        self.generation = 0
        self.best_fitness = -np.inf
        self._best_weights = self.genomes[0].copy()
        self.history: dict[str, list[float]] = {"best": [], "mean": []}

    @property
    def best(self) -> Genome:
        """The best genome seen so far (the first one before any evaluation)."""
        return Genome(self._best_weights.copy(), self.layers, self.activation)

    def evaluate(self, fitness_fn: FitnessFunction) -> np.ndarray:
        scores = np.asarray(fitness_fn(self.genomes), dtype=np.float64).reshape(-1)
        if scores.shape != (self.size,):
            raise FlyError(f"Fitness function returned {scores.shape[0]} values for {self.size} genomes")
        scores = np.where(np.isfinite(scores), scores, -np.inf)
        self.fitness = scores
        top = int(np.argmax(scores))
        if scores[top] > self.best_fitness:
            self.best_fitness = float(scores[top])
            self._best_weights = self.genomes[top].copy()
        return scores

    def breed(
        self,
        crossover: float = 0.5,
        mutation_rate: float = 0.05,
        pool_fraction: float = 0.10,
        elite_fraction: float = 0.05,
        mutation: str = "reset",
        mutation_sigma: float | None = None,
    ) -> np.ndarray:
        """Replace the population by the next generation, from the last evaluated fitness."""
        if self.fitness is None:
            raise FlyError("Evaluate the population before breeding it")
        check_rates(crossover, mutation_rate, pool_fraction, elite_fraction, mutation)
        order = np.argsort(-self.fitness, kind="stable")
        pool = self.genomes[order[: max(2, int(round(pool_fraction * self.size)))]]
        elite_count = max(1, int(round(elite_fraction * self.size)))
        child_count = self.size - elite_count
        first = self.rng.integers(0, len(pool), size=child_count)
        # the second parent differs from the first: an offset in [1, len(pool)) never wraps to itself
        second = (first + self.rng.integers(1, len(pool), size=child_count)) % len(pool)
        from_first = self.rng.random((child_count, pool.shape[1])) < crossover
        children = np.where(from_first, pool[first], pool[second])
        mutated = self.rng.random(children.shape) < mutation_rate
        scale = self.sigma if mutation_sigma is None else float(mutation_sigma)
        noise = self.rng.normal(0.0, scale, size=children.shape)
        children = np.where(mutated, noise if mutation == "reset" else children + noise, children)
        self.genomes = np.concatenate([self.genomes[order[:elite_count]], children])
        self.fitness = None
        return self.genomes

    def steps(
        self,
        fitness_fn: FitnessFunction,
        generations: int,
        crossover: float = 0.5,
        mutation_rate: float = 0.05,
        *,
        pool_fraction: float = 0.10,
        elite_fraction: float = 0.05,
        mutation: str = "reset",
        mutation_sigma: float | None = None,
        checkpoint_dir: str | os.PathLike | None = None,
        fitness_threshold: float = float("inf"),
        fitness_delta: float = 0.1,
    ) -> Iterator[GenerationResult]:
        """Run generation by generation, yielding after each one (for progress and cancel)."""
        check_rates(crossover, mutation_rate, pool_fraction, elite_fraction, mutation)
        if int(generations) < 1:
            raise FlyError(f"Train for at least one generation, got {generations}")
        if not fitness_delta > 0:
            raise FlyError(f"Checkpoint fitness delta must be positive, got {fitness_delta}")
        folder = Path(checkpoint_dir) if checkpoint_dir is not None else None
        threshold = float(fitness_threshold)
        for index in range(int(generations)):
            if index > 0:
                self.breed(crossover, mutation_rate, pool_fraction, elite_fraction, mutation, mutation_sigma)
            scores = self.evaluate(fitness_fn)
            best, mean = float(scores.max()), mean_fitness(scores)
            self.history["best"].append(best)
            self.history["mean"].append(mean)
            self.generation += 1
            if folder is not None and best >= threshold:
                save_genome(
                    self.best, folder / f"best_gen{self.generation:05d}.npz", fitness=self.best_fitness
                )
                while threshold <= best:
                    threshold += fitness_delta
            yield GenerationResult(self.generation, best, mean, self.best)
        if folder is not None:
            self.save(folder / "population.npz")

    def run(
        self,
        fitness_fn: FitnessFunction,
        generations: int,
        crossover: float = 0.5,
        mutation_rate: float = 0.05,
        **options,
    ) -> dict[str, list[float]]:
        """Train for ``generations``; returns {"best": [...], "mean": [...]} for this run's generations."""
        start = len(self.history["best"])
        for _ in self.steps(fitness_fn, generations, crossover, mutation_rate, **options):
            pass
        return {key: values[start:] for key, values in self.history.items()}

    def save(self, path: str | os.PathLike) -> Path:
        """Save the current population (to resume training, possibly with other settings)."""
        target = Path(path)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "wb") as handle:
                np.savez(
                    handle,
                    genomes=self.genomes,
                    layers=np.array(self.layers, dtype=np.int64),
                    activation=np.array(self.activation),
                    sigma=np.float64(self.sigma),
                    generation=np.int64(self.generation),
                    best=self._best_weights,
                    best_fitness=np.float64(self.best_fitness),
                )
        except OSError as error:
            raise GenomeFileError(
                f"Cannot write population file '{target}': {error.strerror or error}"
            ) from error
        return target

    @classmethod
    def load(cls, path: str | os.PathLike, seed: int | None = 0) -> Population:
        source = Path(path)
        data = _read_npz(source, ("genomes", "layers"))
        try:
            genomes = np.asarray(data["genomes"], dtype=np.float64)
            population = cls(
                size=genomes.shape[0],
                layers=tuple(int(n) for n in data["layers"]),
                seed=seed,
                sigma=float(data.get("sigma", 1.0)),
                activation=str(data.get("activation", "tanh")),
                genomes=genomes,
            )
        except (FlyError, TypeError, ValueError, IndexError) as error:
            raise GenomeFileError(
                f"Population file '{source.name}' does not fit its network: {error}"
            ) from error
        population.generation = int(data.get("generation", 0))
        if "best" in data and data["best"].shape == genomes.shape[1:]:
            population._best_weights = np.asarray(data["best"], dtype=np.float64)
            population.best_fitness = float(data.get("best_fitness", -np.inf))
        return population


def mean_fitness(scores: np.ndarray) -> float:
    """Mean over the flies that did not blow up (their worst-fitness marker would swamp it)."""
    from .fitness import WORST_FITNESS

    healthy = scores[np.isfinite(scores) & (scores > WORST_FITNESS)]
    return float(healthy.mean()) if healthy.size else WORST_FITNESS


def check_rates(
    crossover: float, mutation_rate: float, pool_fraction: float, elite_fraction: float, mutation: str
) -> None:
    for name, value in (("crossover", crossover), ("mutation rate", mutation_rate)):
        if not 0.0 <= value <= 1.0:
            raise FlyError(f"The {name} must be a probability in [0, 1], got {value}")
    if not 0.0 < pool_fraction <= 1.0 or not 0.0 < elite_fraction < 1.0:
        raise FlyError(
            f"Pool and elite fractions must be in (0, 1], got {pool_fraction} and {elite_fraction}"
        )
    if mutation not in MUTATION_MODES:
        raise FlyError(f"Unknown mutation '{mutation}': use one of {', '.join(MUTATION_MODES)}")
