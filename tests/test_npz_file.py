"""Learned-model files: a damaged, stale or foreign file means "refit" (None), never a crash."""

import numpy as np

from peerlint.analyzers.npz_file import load_npz, save_npz


def _build(header, data):
    return header["name"], np.asarray(data["w"]).copy()


def test_round_trip_and_no_temporary_file_left(tmp_path):
    path = tmp_path / "m" / "model.npz"
    save_npz(path, {"name": "head", "version": 3}, {"w": np.arange(4.0)})
    name, w = load_npz(path, 3, _build)
    assert name == "head" and w.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert [p.name for p in path.parent.iterdir()] == ["model.npz"]


def test_stale_damaged_missing_or_incomplete_files_give_none(tmp_path):
    path = tmp_path / "model.npz"
    save_npz(path, {"name": "head", "version": 2}, {"w": np.ones(2)})
    assert load_npz(path, 3, _build) is None  # another version
    save_npz(path, {"name": "head", "version": 3}, {"v": np.ones(2)})
    assert load_npz(path, 3, _build) is None  # the builder's key is missing
    path.write_bytes(path.read_bytes()[:40])
    assert load_npz(path, 3, _build) is None  # truncated
    path.write_bytes(b"not a zip at all")
    assert load_npz(path, 3, _build) is None
    assert load_npz(tmp_path / "absent.npz", 3, _build) is None
    save_npz(path, {"name": "head", "version": 3}, {"w": np.ones(2)}, header_key="info")
    assert load_npz(path, 3, _build) is None and load_npz(path, 3, _build, header_key="info")[0] == "head"
