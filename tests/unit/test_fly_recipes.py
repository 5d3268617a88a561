"""Reproducible genomes (make genomes) and Dask-distributed training of the fly."""

import sys

import numpy as np
import pytest

from addon.fly.errors import FlyError
from addon.fly.genome import genome_record, load_genome
from addon.fly.recipes import GENOME_DIR, load_recipes, write_genomes
from addon.fly.training import TrainingConfig, train

TINY = TrainingConfig(
    population=8,
    generations=3,
    fitness="hold_level",
    duration=0.05,
    control="stroke",
    aero="quasi_steady",
    sigma=0.3,
    seed=5,
)


def test_recipes_cover_the_shipped_stroke_genomes():
    recipes = load_recipes()
    assert {"stroke_hover", "stroke_steer"} <= set(recipes)
    steer = recipes["stroke_steer"]
    assert steer.build is not None and steer.build.hover == recipes["stroke_hover"].file


def test_short_recipe_retrains_bit_for_bit(tmp_path):
    first = write_genomes(tmp_path / "a", ["stroke_hover"], short=True)[0]
    second = write_genomes(tmp_path / "b", ["stroke_hover"], short=True)[0]
    assert first.read_bytes() == second.read_bytes()
    record = genome_record(first)
    assert record["seed"] == load_recipes()["stroke_hover"].seed
    stages = load_recipes()["stroke_hover"].stages
    assert [stage["population"] for stage in record["settings"]["stages"]] == [6] * len(stages)
    assert np.isfinite(record["fitness"])
    assert (record["control"], record["size"], record["aero"]) == ("stroke", "fruit_fly", "quasi_steady")
    assert load_genome(first).control == "stroke"


@pytest.mark.parametrize("name", ["stroke_hover", "stroke_steer"])
def test_shipped_stroke_genome_records_its_recipe(name):
    path = GENOME_DIR / load_recipes()[name].file
    if not path.is_file():
        pytest.skip(f"{path.name} is not shipped")
    record = genome_record(path)
    recipe = load_recipes()[name]
    assert record["settings"] == recipe.settings()
    assert record["seed"] == recipe.seed and np.isfinite(record["fitness"])


def test_short_steering_build_is_bit_for_bit(tmp_path):
    first = write_genomes(tmp_path / "a", ["stroke_steer"], short=True)[0]
    second = write_genomes(tmp_path / "b", ["stroke_steer"], short=True)[0]
    assert first.read_bytes() == second.read_bytes()
    genome = load_genome(first)
    assert genome.asymmetric and genome.control == "stroke" and genome.size == "fruit_fly"
    record = genome_record(first)
    assert record["settings"]["build"]["settle"] == 0.05 and np.isfinite(record["fitness"])


def test_bad_recipe_names_the_problem(tmp_path):
    bad = tmp_path / "recipes.toml"
    bad.write_text('[x]\nfile = "x.npz"\nseed = 1\n[[x.stage]]\npopulaton = 4\n')
    with pytest.raises(FlyError, match="unknown settings: populaton"):
        load_recipes(bad)
    with pytest.raises(FlyError, match="No genome recipe named nope"):
        write_genomes(tmp_path, ["nope"])
    bad.write_text('[x]\nfile = "x.npz"\nseed = 1\n[x.build]\nhover = "h.npz"\nroll_gian = 1\n')
    with pytest.raises(FlyError, match="unknown: roll_gian"):
        load_recipes(bad)


@pytest.mark.parametrize(
    "config",
    [
        TINY,
        # a target path of 1 s (120 kB) each generation: big arguments must not collide across generations
        TrainingConfig(
            population=4,
            generations=2,
            fitness="toward_target",
            duration=1.0,
            control="stroke",
            aero="quasi_steady",
            asymmetric=True,
            sigma=0.3,
            seed=6,
        ),
    ],
    ids=["hover", "steering"],
)
def test_dask_training_gives_the_single_process_history(config):
    pytest.importorskip("distributed")
    from addon.fly import distributed

    single = train(config)
    client = distributed.connect(workers=2)
    try:
        spread = train(config, evaluate=distributed.dask_evaluator(client, chunks=3))
    finally:
        distributed.close(client)
    assert spread.history == single.history
    np.testing.assert_array_equal(spread.best.weights, single.best.weights)


def test_missing_dask_is_a_clear_message(monkeypatch):
    from addon.fly import distributed

    monkeypatch.setitem(sys.modules, "distributed", None)  # import now fails as if not installed
    with pytest.raises(FlyError, match=r"pip install 'dask\[distributed\]'"):
        distributed.connect(workers=1)
