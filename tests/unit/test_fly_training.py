"""Training improves a fly, and the shipped genome really flies for 30 s."""

from pathlib import Path

import numpy as np
import pytest

from addon.fly import Population, fitness, load_genome, simulate
from addon.fly.errors import FlyError
from addon.fly.training import TrainingConfig, train_steps

SHIPPED = Path(__file__).resolve().parents[2] / "presets" / "fly" / "hover.npz"
TILT_BOUND = 0.85  # rad, mean body tilt of the shipped hover genome over 30 s (0.81; the old one: 1.16)


def _run(generator):
    while True:
        try:
            next(generator)
        except StopIteration as stop:
            return stop.value


def test_short_seeded_training_improves_the_best_fitness():
    config = TrainingConfig(population=20, generations=6, duration=0.3, seed=5, fitness="mean_height")
    result = _run(train_steps(config))
    best = result.history["best"]
    assert best[-1] > best[0]
    assert all(b >= a for a, b in zip(best, best[1:], strict=False))
    again = _run(train_steps(config))
    assert again.history == result.history  # same seed, same training
    np.testing.assert_array_equal(again.best.weights, result.best.weights)


def test_population_run_with_a_flight_fitness():
    population = Population(size=12, seed=1)
    history = population.run(
        fitness.evaluator("final_height", duration=0.2), 3, crossover=0.6, mutation_rate=0.1
    )
    assert len(history["best"]) == 3 and history["best"][-1] >= history["best"][0]
    assert population.best.weights.shape == (803,)


def test_fitness_definitions_follow_the_paper():
    flight = simulate(np.zeros((2, 803)), duration=0.1)
    flight.positions[:] = 0.0
    flight.positions[0, :, 2] = np.linspace(0.0, 1.0, flight.positions.shape[1])
    flight.positions[0, :, 0] = 0.5
    flight.positions[0, :, 1] = -0.25
    assert fitness.final_height(flight)[0] == pytest.approx(1.0)
    assert fitness.mean_height(flight)[0] == pytest.approx(0.5)
    assert fitness.final_height_minus_drift(flight)[0] == pytest.approx(1.0 - (0.5 + 0.25) / 5)
    flight.blown_up[1] = True
    assert fitness.final_height(flight)[1] == fitness.WORST_FITNESS


def test_target_fitness_needs_a_target():
    flight = simulate(np.zeros(803), duration=0.05)
    with pytest.raises(FlyError, match="target"):
        fitness.toward_target(flight)
    steered = simulate(np.zeros(803), duration=0.05, target=(0.0, 0.1, 0.0))
    assert fitness.toward_target(steered)[0] < 0


def test_training_config_is_checked():
    with pytest.raises(FlyError, match="fitness"):
        TrainingConfig(fitness="speed").check()
    with pytest.raises(FlyError, match="4 flies"):
        TrainingConfig(population=2).check()


def test_shipped_genome_stays_aloft_for_30_s_with_small_drift():
    genome = load_genome(SHIPPED)
    flight = simulate(genome, duration=30.0, record_every=10)
    heights = fitness.heights(flight)[0]
    gain = heights[-1]
    assert not flight.blown_up[0]
    assert gain > 1.0  # it climbs, it does not merely fall slowly
    assert heights.min() > -0.05  # never sinks below where it started
    assert fitness.mean_lateral_drift(flight)[0] < gain / 4
    tilt = fitness.tilts(flight)[0]
    assert tilt.mean() < TILT_BOUND  # a fairly level body, not a tumbling one
    assert tilt.max() < np.pi / 2  # never on its side or upside down


def test_upright_fitness_penalises_tilt_and_full_drift():
    flight = simulate(np.zeros((2, 803)), duration=0.1)
    flight.positions[:] = 0.0
    flight.positions[:, -1, 2] = 1.0
    flight.rotations[:] = [1.0, 0.0, 0.0, 0.0]
    flight.rotations[1] = [np.cos(0.25), np.sin(0.25), 0.0, 0.0]  # tilted by 0.5 rad about x
    flight.positions[1, :, 1] = 0.2
    scores = fitness.upright_height_minus_drift(flight)
    assert scores[0] == pytest.approx(1.0)
    assert scores[1] == pytest.approx(1.0 - 2 * 0.2 - 0.5 * 0.5)


def test_level_fitness_rewards_a_steady_capped_climb_and_penalises_tilt_and_sinking():
    flight = simulate(np.zeros((5, 803)), duration=0.1)
    duration, half = flight.times[-1], flight.times.size // 2
    cap, half_cap = fitness.LEVEL_CLIMB * duration, fitness.LEVEL_CLIMB * (duration - flight.times[half])
    flight.positions[:] = 0.0
    flight.positions[:, :, 2] = np.linspace(0.0, cap, flight.times.size)  # steady climb at the cap
    flight.positions[3, :, 2] *= 10.0  # faster earns nothing more
    flight.positions[4, 1:, 2] = cap  # one jump, then hovering: the second half earns nothing
    flight.rotations[:] = [1.0, 0.0, 0.0, 0.0]
    flight.rotations[1] = [np.cos(0.75), np.sin(0.75), 0.0, 0.0]  # tilted by 1.5 rad about x
    flight.positions[2, :, 1] = 0.2
    flight.positions[2, 3, 2] = -0.1
    best = 5.0 * (cap + half_cap)
    scores = fitness.level_height_minus_drift(flight)
    assert scores[0] == pytest.approx(best)
    assert scores[1] == pytest.approx(best - 3.0 * 1.5 - 10.0 * (1.5 - fitness.LEVEL_TILT) - 2.0 * 0.2)
    assert scores[2] == pytest.approx(best - 2 * 0.2 - 10.0 * 0.1)
    assert scores[3] == pytest.approx(best)
    assert scores[4] == pytest.approx(5.0 * cap)
    assert fitness.FITNESS_FUNCTIONS["level_height_minus_drift"] is fitness.level_height_minus_drift


def test_asymmetric_wings_move_independently():
    genomes = np.random.default_rng(4).normal(size=(3, 926))
    flight = simulate(genomes, duration=0.2)
    assert flight.wing_angles.shape == (3, 201, 2, 3)
    assert np.abs(flight.wing_angles[:, :, 0] - flight.wing_angles[:, :, 1]).max() > 0.1
    assert np.all(np.isfinite(flight.positions))


def test_shipped_steering_genome_flies_toward_targets_in_its_plane():
    genome = load_genome(SHIPPED.with_name("steer.npz"))
    for offset in ((0.0, 0.2, 0.25), (0.0, -0.25, 0.1)):
        target = np.array(offset)
        flight = simulate(genome, duration=4.0, target=target, record_every=10)
        distance = np.linalg.norm(flight.positions[0] - target, axis=1)
        assert not flight.blown_up[0]
        assert distance[-100:].mean() < 0.6 * np.linalg.norm(target)


def test_resume_continues_the_saved_population_with_new_settings(tmp_path):
    from addon.fly.training import new_population

    first = Population(size=8, seed=2)
    first.run(lambda genomes: genomes[:, 0].copy(), 2)
    path = first.save(tmp_path / "population.npz")
    config = TrainingConfig(population=8, generations=1, duration=0.05, fitness="final_height")
    resumed = new_population(config, resume=path)
    np.testing.assert_array_equal(resumed.genomes, first.genomes)
    assert resumed.best_fitness == -np.inf  # scored with another fitness before
    with pytest.raises(FlyError, match="layers"):
        new_population(TrainingConfig(population=8, asymmetric=True), resume=path)
