"""PC2 point caches: exact float32 round trip, header fields, clear errors on bad files."""

import numpy as np
import pytest

from addon.simulation import PC2Error, read_pc2, write_pc2
from addon.simulation.pc2 import MAGIC


def test_pc2_round_trip_is_exact_in_float32(tmp_path):
    rng = np.random.default_rng(0)
    frames = rng.normal(size=(7, 11, 3))
    path = write_pc2(tmp_path / "cache" / "jelly.pc2", frames, start_frame=5.0, sample_rate=1.0)
    cache = read_pc2(path)
    assert cache.start_frame == 5.0 and cache.sample_rate == 1.0
    np.testing.assert_array_equal(cache.positions, frames.astype(np.float32))
    raw = path.read_bytes()
    assert raw[:12] == MAGIC
    assert len(raw) == 32 + 7 * 11 * 12
    assert np.frombuffer(raw[12:20], "<i4").tolist() == [1, 11]


def test_rewrite_replaces_the_cache(tmp_path):
    path = tmp_path / "a.pc2"
    write_pc2(path, np.zeros((3, 2, 3)))
    write_pc2(path, np.ones((5, 4, 3)), start_frame=2.0)
    cache = read_pc2(path)
    assert cache.positions.shape == (5, 4, 3) and cache.start_frame == 2.0
    assert [p.name for p in tmp_path.iterdir()] == ["a.pc2"]


def test_bad_files_and_bad_data_raise_pc2_errors(tmp_path):
    with pytest.raises(PC2Error, match="cannot read"):
        read_pc2(tmp_path / "missing.pc2")
    (tmp_path / "junk.pc2").write_bytes(b"NOTACACHE000" + bytes(40))
    with pytest.raises(PC2Error, match="not a PC2"):
        read_pc2(tmp_path / "junk.pc2")
    path = write_pc2(tmp_path / "t.pc2", np.zeros((4, 3, 3)))
    path.write_bytes(path.read_bytes()[:-5])
    with pytest.raises(PC2Error, match="truncated"):
        read_pc2(path)
    with pytest.raises(PC2Error, match="NaN"):
        write_pc2(tmp_path / "nan.pc2", np.full((2, 2, 3), np.nan))
    assert not (tmp_path / "nan.pc2").exists()
    with pytest.raises(PC2Error, match="shape"):
        write_pc2(tmp_path / "s.pc2", np.zeros((2, 3)))
