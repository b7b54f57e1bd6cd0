"""The pread reader the searches use instead of the memory-mapped arrays: the same numbers."""

from __future__ import annotations

import numpy as np
import pytest

from peerlint.index.npy_reader import NpyReader, prefetch


@pytest.mark.parametrize("dtype,shape", [(np.float16, (1000, 384)), (np.int32, (5000,)), (np.float32, (300, 7))])
@pytest.mark.parametrize("map_limit", [0, 1 << 30])  # read with pread, and through the memory map
def test_rows_and_slices_equal_the_arrays_own(tmp_path, dtype, shape, map_limit):
    rng = np.random.default_rng(0)
    array = (rng.standard_normal(shape) * 100).astype(dtype)
    np.save(tmp_path / "a.npy", array)
    reader = NpyReader(tmp_path / "a.npy", map_limit)
    assert len(reader) == shape[0] and reader.dtype == np.dtype(dtype)
    sorted_keys = np.sort(rng.choice(shape[0], 40, replace=False))
    runs = np.concatenate([np.arange(10, 20), np.arange(50, 51), np.arange(shape[0] - 5, shape[0])])
    unsorted = rng.permutation(shape[0])[:25]
    for keys in (sorted_keys, runs, unsorted, np.array([], dtype=np.int64)):
        assert np.array_equal(reader.rows(keys), array[keys])
    assert np.array_equal(reader.slice(3, 200), array[3:200])
    assert reader.slice(7, 7).shape == (0, *shape[1:])
    reader.close()


def test_a_fortran_array_is_refused_and_prefetch_keeps_to_its_budget(tmp_path):
    np.save(tmp_path / "f.npy", np.asfortranarray(np.ones((4, 3))))
    with pytest.raises(ValueError, match="Fortran"):
        NpyReader(tmp_path / "f.npy")
    np.save(tmp_path / "g.npy", np.zeros(1000))
    size = (tmp_path / "g.npy").stat().st_size
    assert prefetch(tmp_path / "g.npy", size) is True
    assert prefetch(tmp_path / "g.npy", size - 1) is False
    assert prefetch(tmp_path / "missing.npy", 10**9) is False


def _resident_kb(path) -> int:
    """Resident kB of this process's mappings of `path` (/proc/self/smaps)."""
    total, current = 0, None
    with open("/proc/self/smaps") as fh:
        for line in fh:
            head = line.split()
            if "-" in head[0] and len(head) >= 5:
                current = head[5] if len(head) > 5 else None
            elif head[0] == "Rss:" and current == str(path):
                total += int(head[1])
    return total


def test_a_mapped_file_gives_its_pages_back_as_it_is_read(tmp_path, monkeypatch):
    """Reading all of a 16 MB mapped file row by row leaves at most RELEASE_PAGES pages resident, and the
    rows handed out are copies that outlive the release."""
    import peerlint.index.npy_reader as npy_reader

    monkeypatch.setattr(npy_reader, "RELEASE_PAGES", 512)
    array = np.arange(4096 * 1024, dtype=np.float32).reshape(4096, 1024)  # one 4 KB page a row
    path = (tmp_path / "big.npy").resolve()
    np.save(path, array)
    reader = NpyReader(path, 1 << 30)
    kept = [reader.rows(np.arange(start, start + 256)) for start in range(0, 4096, 256)]
    assert _resident_kb(path) <= 600 * 4  # 16,384 kB had every row stayed resident
    assert np.array_equal(np.concatenate(kept), array)
    assert np.array_equal(reader.slice(0, 4096), array)
    reader.close()


@pytest.mark.parametrize("map_limit", [0, 1 << 30])
def test_indexing_like_an_array_and_a_bad_index_is_an_index_error(tmp_path, map_limit):
    array = np.arange(60, dtype=np.float32).reshape(20, 3)
    np.save(tmp_path / "a.npy", array)
    reader = NpyReader(tmp_path / "a.npy", map_limit)
    assert np.array_equal(reader[2:5], array[2:5]) and np.array_equal(reader[::4], array[::4])
    assert np.array_equal(reader[-1], array[-1]) and np.array_equal(reader[[3, 1, 3]], array[[3, 1, 3]])
    assert np.array_equal(reader[array[:, 0] > 40], array[array[:, 0] > 40])
    assert np.array_equal(np.asarray(reader, dtype=np.float64), array.astype(np.float64))
    for bad in (20, -21, [0, 99]):
        with pytest.raises(IndexError, match="out of range for 20 rows"):
            reader[bad]
    reader.close()
