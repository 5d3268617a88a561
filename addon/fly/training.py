"""Training as a resumable sequence of small steps, for the modal Blender operator and the CLI.

Each generation's single vectorised simulation is itself chunked, so the caller can show progress
and stop (ESC) between chunks; the best genome so far is always available.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .. import limits
from .errors import FlyError
from .fitness import FITNESS_FUNCTIONS
from .ga import Population, check_rates, mean_fitness
from .genome import Genome, save_genome
from .model import FlyModel
from .network import default_layers
from .simulate import simulate_genomes_steps

TARGET_REACH = 0.3  # m: steering targets are drawn this far from the start in each free direction
TARGET_REACH_BY_SIZE = {"cartoon": TARGET_REACH, "fruit_fly": 0.05}


#: Simulated fly-seconds per wall-clock second (a population flies vectorised), measured on a busy
#: 2-core machine (200 at best, 80 when other work shares it; the defaults' 6,000 fly-seconds took
#: 30-90 s); quasi-steady aerodynamics cost about twice as much.
FLY_SECONDS_PER_SECOND = {"drag": 80.0, "quasi_steady": 45.0}
#: Memory per fly in flight: its genome, state and network activations (bytes, with margin).
GENOME_BYTES_ESTIMATE = 64 * 1024


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
    control: str = "direct"  # "stroke": the wing-beat pattern generator
    size: str = ""  # "" = the control mode's own default: fruit_fly for stroke, cartoon for direct
    starts: int = 1  # start offsets per genome; a genome scores its worst (a robust controller)
    seed_genome: str = ""  # genome file (name in presets/fly, or a path) the first population varies
    start_spread: float = 0.0  # m: start offsets drawn this far from the hover point per axis

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
        if self.starts < 1 or not (np.isfinite(self.start_spread) and self.start_spread >= 0):
            raise FlyError("Use at least one start point and a non-negative start spread")
        self.model()

    def check_size(self, time_limit: float = limits.TIME_LIMIT) -> None:
        """Refuse a training run that would take longer than ``time_limit`` seconds or exhaust memory."""
        what = f"training {self.population} flies x {self.generations} generations x {self.duration:g} s"
        hint = "use a smaller population, fewer generations or a shorter flight time"
        limits.check_memory(what, self.population * max(self.starts, 1), GENOME_BYTES_ESTIMATE, hint)
        fly_seconds = float(self.population) * self.generations * self.duration * max(self.starts, 1)
        limits.check_time(what, fly_seconds, FLY_SECONDS_PER_SECOND[self.aero], hint, limit=time_limit)

    @property
    def layers(self) -> tuple[int, ...]:
        return default_layers(self.control, self.asymmetric)

    @property
    def fly_size(self) -> str:
        return self.size or ("fruit_fly" if self.control == "stroke" else "cartoon")

    def model(self) -> FlyModel:
        return FlyModel.preset(
            self.fly_size, aero=self.aero, asymmetric=self.asymmetric, control=self.control
        )

    def settings(self) -> dict:
        """Everything that determines the training, as JSON-ready values (recorded in the genome)."""
        from dataclasses import asdict

        return asdict(self)


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
    population = Population(
        size=config.population,
        layers=config.layers,
        seed=config.seed,
        sigma=config.sigma,
        activation=config.activation,
    )
    if config.seed_genome:
        base = seed_weights(config)
        # the parent itself, then children with every gene nudged by N(0, sigma) from the seeded RNG
        population.genomes = base + population.rng.normal(0.0, config.sigma, population.genomes.shape)
        population.genomes[0] = base
    return population


def seed_weights(config: TrainingConfig) -> np.ndarray:
    """The weights of ``config.seed_genome`` in ``config.layers`` (a symmetric stroke genome is
    embedded into the asymmetric network that flies the same)."""
    from .genome import load_genome, preset_genome_path
    from .network import STROKE_ASYMMETRIC_LAYERS, STROKE_SYMMETRIC_LAYERS, embed_symmetric_stroke

    path = preset_genome_path(config.seed_genome)
    genome = load_genome(path)
    if genome.layers == config.layers:
        return genome.weights.copy()
    if genome.layers == STROKE_SYMMETRIC_LAYERS and config.layers == STROKE_ASYMMETRIC_LAYERS:
        return embed_symmetric_stroke(genome.weights)
    raise FlyError(
        f"Seed genome '{path.name}' ({list(genome.layers)}) cannot seed a {list(config.layers)} network"
    )


def _target_path(rng: np.random.Generator, config: TrainingConfig, steps: int) -> np.ndarray:
    free = np.array([1.0 if config.asymmetric else 0.0, 1.0, 1.0])  # a symmetric fly cannot side-step
    reach = TARGET_REACH_BY_SIZE[config.fly_size]
    return np.broadcast_to(rng.uniform(-reach, reach, 3) * free, (steps + 1, 3))


def start_offsets(config: TrainingConfig) -> np.ndarray:
    """(starts, 3) start points (fixed by the seed): the first is the origin, the others spread."""
    rng = np.random.default_rng([config.seed, 11])
    offsets = rng.uniform(-config.start_spread, config.start_spread, (config.starts, 3))
    offsets[0] = 0.0
    return offsets


def flight_steps(config: TrainingConfig) -> int:
    return int(round(config.duration / config.model().time_step))


def evaluation_steps(
    genomes: np.ndarray, config: TrainingConfig, target: np.ndarray | None = None
) -> Generator[float, None, np.ndarray]:
    """Score a stack of genomes (P, G): yields progress in [0, 1], returns (P,) fitness.

    Each genome flies from every start offset (``config.starts``) and keeps its worst score. Every
    fly's arithmetic is independent of the others', so any split of the population into chunks
    scores each genome exactly as the whole population would (what Dask training relies on).
    """
    measure = FITNESS_FUNCTIONS[config.fitness]
    offsets = start_offsets(config)
    count = genomes.shape[0]
    stack = np.repeat(genomes, len(offsets), axis=0)
    starts = np.tile(offsets, (count, 1))
    flight = yield from simulate_genomes_steps(
        stack,
        config.duration,
        layers=config.layers,
        activation=config.activation,
        model=config.model(),
        start=starts,
        target=target,
    )
    scores = measure(flight).reshape(count, len(offsets))
    return scores.min(axis=1)


def evaluate_genomes(
    genomes: np.ndarray, config: TrainingConfig, target: np.ndarray | None = None
) -> np.ndarray:
    """Blocking :func:`evaluation_steps` (what a Dask worker runs on its chunk)."""
    from .simulate import run_to_end

    return run_to_end(evaluation_steps(np.asarray(genomes, dtype=np.float64), config, target))


Evaluator = Callable[[np.ndarray, TrainingConfig, "np.ndarray | None"], np.ndarray]


def train_steps(
    config: TrainingConfig,
    population: Population | None = None,
    checkpoint_dir: str | Path | None = None,
    fitness_threshold: float = float("inf"),
    fitness_delta: float = 0.1,
    result: TrainingResult | None = None,
    evaluate: Evaluator | None = None,
) -> Generator[tuple[float, str], None, TrainingResult]:
    """Train generation by generation; yields (fraction, message); returns the TrainingResult.

    ``result`` (optional) is filled in place after each generation, so a caller that stops early
    still holds the best genome so far. ``evaluate`` (optional) scores a whole population at once
    instead of the in-process simulation, e.g. :func:`distributed.dask_evaluator`; it must return
    what :func:`evaluate_genomes` would.
    """
    population = population or new_population(config)
    config.check()
    steps = flight_steps(config)
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
        if evaluate is None:
            evaluation = evaluation_steps(population.genomes, config, target)
            while True:
                try:
                    fraction = next(evaluation)
                except StopIteration as stop:
                    scores = stop.value
                    break
                yield (index + fraction) / config.generations, f"generation {index + 1}/{config.generations}"
        else:
            scores = np.asarray(evaluate(population.genomes, config, target), dtype=np.float64)
        if target is not None:
            # each generation draws a new target, so only this generation's scores are comparable
            population.best_fitness = -np.inf
        population.evaluate(lambda genomes, scores=scores: scores)
        best, mean = float(scores.max()), mean_fitness(scores)
        population.history["best"].append(best)
        population.history["mean"].append(mean)
        population.generation += 1
        result.best = trained_genome(population.best.weights, config)
        result.best_fitness = population.best_fitness
        result.history["best"].append(population.history["best"][-1])
        result.history["mean"].append(population.history["mean"][-1])
        result.generations = index + 1
        if checkpoint_dir is not None and best >= threshold:
            save_genome(
                result.best,
                Path(checkpoint_dir) / f"best_gen{population.generation:05d}.npz",
                fitness=population.best_fitness,
                seed=config.seed,
                settings=config.settings(),
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


def trained_genome(weights: np.ndarray, config: TrainingConfig) -> Genome:
    return Genome(weights, config.layers, config.activation, config.aero, config.fly_size)


def train(
    config: TrainingConfig, population: Population | None = None, evaluate: Evaluator | None = None
) -> TrainingResult:
    """Blocking :func:`train_steps`."""
    generator = train_steps(config, population, evaluate=evaluate)
    while True:
        try:
            next(generator)
        except StopIteration as stop:
            return stop.value
