"""Network shapes, the paper's layer formula, GA invariants and genome files."""

import numpy as np
import pytest

from addon.errors import ProcAnimError
from addon.fly import (
    ASYMMETRIC_LAYERS,
    GenomeFileError,
    Network,
    Population,
    genome_size,
    load_genome,
    save_genome,
)
from addon.fly.errors import FlyError
from addon.fly.genome import Genome


def test_layer_formula_counts_weights_and_biases():
    assert genome_size((15, 20, 20, 3)) == 15 * 20 + 20 + 20 * 20 + 20 + 20 * 3 + 3 == 803
    assert genome_size(ASYMMETRIC_LAYERS) == 18 * 20 + 20 + 20 * 20 + 20 + 20 * 6 + 6


def test_activate_maps_columns_and_matches_the_layer_equations():
    rng = np.random.default_rng(3)
    genome = rng.normal(size=803)
    network = Network(genome)
    inputs = rng.normal(size=(15, 7))
    outputs = network.activate(inputs)
    assert outputs.shape == (3, 7)
    values = inputs
    offset = 0
    for prev, n in ((15, 20), (20, 20), (20, 3)):
        weight = genome[offset : offset + n * prev].reshape(n, prev)
        offset += n * prev
        bias = genome[offset : offset + n].reshape(n, 1)
        offset += n
        values = np.tanh(weight @ values + bias)
    np.testing.assert_allclose(outputs, values, rtol=1e-12)
    # column j depends on input column j only
    np.testing.assert_allclose(network.activate(inputs[:, 2:3])[:, 0], outputs[:, 2], rtol=1e-12)


@pytest.mark.parametrize("activation, low, high", [("sigmoid", 0.0, 1.0), ("relu", 0.0, np.inf)])
def test_other_activations_stay_in_their_range(activation, low, high):
    network = Network(np.random.default_rng(1).normal(size=926), ASYMMETRIC_LAYERS, activation)
    outputs = network.activate(np.random.default_rng(2).normal(size=(18, 5)))
    assert outputs.shape == (6, 5)
    assert np.all(outputs >= low) and np.all(outputs <= high)


def test_stacked_networks_equal_single_ones():
    genomes = np.random.default_rng(5).normal(size=(4, 803))
    inputs = np.random.default_rng(6).normal(size=(4, 15, 2))
    stacked = Network(genomes).activate(inputs)
    for index in range(4):
        np.testing.assert_allclose(
            stacked[index], Network(genomes[index]).activate(inputs[index]), rtol=1e-12
        )


def test_wrong_shapes_raise_domain_errors():
    with pytest.raises(ProcAnimError, match="803"):
        Network(np.zeros(10))
    with pytest.raises(FlyError, match="n = 15"):
        Network(np.zeros(803)).activate(np.zeros((14, 1)))
    with pytest.raises(FlyError, match="activation"):
        Network(np.zeros(803), activation="softmax")


def _scored(size=40, seed=0):
    population = Population(size=size, seed=seed, sigma=1.0)
    # a fitness that ranks genomes by their first gene makes the pool predictable
    population.evaluate(lambda genomes: genomes[:, 0].copy())
    return population


def test_initial_genomes_are_gaussian_with_sigma():
    population = Population(size=200, seed=4, sigma=0.5)
    assert population.genomes.shape == (200, 803)
    assert abs(population.genomes.std() - 0.5) < 0.01
    assert abs(population.genomes.mean()) < 0.01


def test_elites_survive_unchanged_and_children_come_from_the_pool():
    population = _scored(size=100)
    before = population.genomes.copy()
    order = np.argsort(-before[:, 0])
    population.breed(crossover=0.5, mutation_rate=0.0)
    np.testing.assert_array_equal(population.genomes[:5], before[order[:5]])
    pool = before[order[:10]]
    children = population.genomes[5:]
    # without mutation every child gene equals the same gene of some pool member
    for child in children:
        assert np.all(np.any(child[None, :] == pool, axis=0))
    # and genes from non-pool genomes never appear
    outsiders = before[order[10:]]
    assert not np.any(np.isin(children[:, 0], outsiders[:, 0]))


def test_crossover_takes_parent_one_genes_with_probability_x():
    population = Population(size=200, seed=7)
    population.evaluate(lambda genomes: genomes[:, 0].copy())
    pool_size = 20
    order = np.argsort(-population.genomes[:, 0])
    pool = population.genomes[order[:pool_size]]
    state = population.rng.bit_generator.state
    population.breed(crossover=0.8, mutation_rate=0.0)
    # replay the parent draws with the same generator state
    replay = np.random.default_rng()
    replay.bit_generator.state = state
    child_count = 200 - 10
    first = replay.integers(0, pool_size, size=child_count)
    second = (first + replay.integers(1, pool_size, size=child_count)) % pool_size
    children = population.genomes[10:]
    share_first = np.mean(children == pool[first])
    assert np.all((children == pool[first]) | (children == pool[second]))
    assert abs(share_first - 0.8) < 0.01


def test_mutation_rate_is_per_gene():
    population = _scored(size=100)
    order = np.argsort(-population.genomes[:, 0])
    pool = population.genomes[order[:10]]
    population.breed(crossover=1.0, mutation_rate=0.2)
    children = population.genomes[5:]
    unchanged = np.any(children[:, None, :] == pool[None, :, :], axis=1)
    assert abs((1.0 - unchanged.mean()) - 0.2) < 0.01


def test_same_seed_same_history_and_other_seed_differs():
    def fitness(genomes):
        return -np.abs(genomes[:, :10]).sum(axis=1)

    runs = [
        Population(size=30, seed=seed).run(fitness, 6, crossover=0.5, mutation_rate=0.05)
        for seed in (11, 11, 12)
    ]
    assert runs[0] == runs[1]
    assert runs[0]["best"] != runs[2]["best"]
    assert len(runs[0]["best"]) == len(runs[0]["mean"]) == 6
    best = runs[0]["best"]
    assert all(b >= a for a, b in zip(best, best[1:], strict=False))  # elitism: never worse


def test_bad_rates_raise():
    population = _scored()
    with pytest.raises(FlyError, match="crossover"):
        population.breed(crossover=1.5)
    with pytest.raises(FlyError, match="mutation rate"):
        population.breed(mutation_rate=-0.1)


def test_checkpoints_best_on_threshold_and_last_population(tmp_path):
    population = Population(size=20, seed=2)
    population.run(
        lambda g: g[:, 0].copy(), 4, checkpoint_dir=tmp_path, fitness_threshold=-10.0, fitness_delta=100.0
    )
    saved = sorted(p.name for p in tmp_path.glob("best_gen*.npz"))
    assert saved == ["best_gen00001.npz"]  # the threshold jumped by delta past every later best
    resumed = Population.load(tmp_path / "population.npz")
    np.testing.assert_array_equal(resumed.genomes, population.genomes)
    assert resumed.generation == 4


def test_genome_round_trip(tmp_path):
    genome = Genome(np.random.default_rng(0).normal(size=926), ASYMMETRIC_LAYERS, "sigmoid")
    path = save_genome(genome, tmp_path / "g.npz")
    loaded = load_genome(path)
    np.testing.assert_array_equal(loaded.weights, genome.weights)
    assert loaded.layers == ASYMMETRIC_LAYERS and loaded.activation == "sigmoid"


def test_corrupt_or_wrong_genome_files_raise_domain_errors(tmp_path):
    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(b"this is not a zip archive")
    with pytest.raises(GenomeFileError, match="garbage.npz"):
        load_genome(garbage)
    wrong = tmp_path / "wrong.npz"
    np.savez(wrong, weights=np.zeros(17), layers=np.array([15, 20, 20, 3]))
    with pytest.raises(GenomeFileError, match="wrong.npz.*803"):
        load_genome(wrong)
    missing = tmp_path / "missing.npz"
    np.savez(missing, something=np.zeros(3))
    with pytest.raises(GenomeFileError, match="lacks weights"):
        load_genome(missing)
    pickled = tmp_path / "pickled.npz"
    np.savez(pickled, weights=np.array([{"a": 1}], dtype=object), layers=np.array([15, 20, 20, 3]))
    with pytest.raises(GenomeFileError, match="pickled.npz"):
        load_genome(pickled)
    with pytest.raises(GenomeFileError, match="does not exist"):
        load_genome(tmp_path / "nope.npz")
