"""Genome files refuse unusable paths with the fly's own domain error, never a bare ValueError/OSError."""

from __future__ import annotations

import numpy as np
import pytest

from addon.fly import load_genome, save_genome
from addon.fly.errors import GenomeFileError
from addon.fly.network import SYMMETRIC_LAYERS, genome_size


@pytest.fixture()
def weights():
    return np.zeros(genome_size(SYMMETRIC_LAYERS))


@pytest.mark.parametrize("path", ["", "   ", "\x00.npz", "dir/", "x" * 2000])
def test_save_genome_refuses_unusable_paths(weights, path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(GenomeFileError):
        save_genome(weights, path)


@pytest.mark.parametrize("path", ["", "\x00.npz", "x" * 2000, "missing.npz"])
def test_load_genome_refuses_unusable_paths(path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(GenomeFileError):
        load_genome(path)


def test_save_genome_adds_the_suffix_to_a_bare_name(weights, tmp_path):
    written = save_genome(weights, tmp_path / "best")
    assert written == tmp_path / "best.npz"
    np.testing.assert_array_equal(load_genome(written).weights, weights)
