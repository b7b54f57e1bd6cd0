"""The query adapter: identity-safe (shapes, unit output, a file for another model or format ignored
with a log line) and training on a tiny real sample brings its held-in pairs closer (relative to the
other pairs: the contrastive loss may lower the cosines themselves)."""

from __future__ import annotations

import logging
import random

import numpy as np
import pytest

from peerlint.index.embedding.adapter import FORMAT, QueryAdapter, TrainConfig, adapter_path, info_nce, train

MODEL = "all-MiniLM-L6-v2@torch"


def _unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


@pytest.fixture
def queries() -> np.ndarray:
    return _unit(np.random.default_rng(0).normal(size=(5, 384)).astype(np.float32))


def test_identity_leaves_queries_as_they_are_and_keeps_shapes(queries):
    identity = QueryAdapter.identity(MODEL, 384, rank=8)
    assert np.allclose(identity.apply(queries), queries, atol=1e-6)
    assert identity.apply(queries[0]).shape == (384,)
    assert identity.apply(queries).shape == (5, 384)


def test_output_is_unit_and_round_trips_through_its_file(tmp_path, queries):
    rng = np.random.default_rng(1)
    adapter = QueryAdapter(MODEL, rng.normal(size=(384, 4)).astype(np.float32),
                           rng.normal(size=(4, 384)).astype(np.float32), "test")
    out = adapter.apply(queries)
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    assert not np.allclose(out, queries, atol=1e-2)  # it does move them
    path = adapter.save(adapter_path(MODEL, tmp_path))
    assert path.name == "query-adapter-all-MiniLM-L6-v2_torch.npz"
    loaded = QueryAdapter.load(MODEL, path)
    assert loaded is not None and loaded.note == "test"
    assert np.allclose(loaded.apply(queries), out, atol=2e-3)  # float16 weights


def test_file_of_another_model_or_format_is_ignored_with_a_log_line(tmp_path, caplog):
    path = QueryAdapter.identity("other-model@torch", 384).save(tmp_path / "a.npz")
    with caplog.at_level(logging.WARNING, logger="peerlint.index.embedding.adapter"):
        assert QueryAdapter.load(MODEL, path) is None
    assert "is for other-model@torch" in caplog.text and "not applied" in caplog.text
    caplog.clear()
    old = QueryAdapter(MODEL, np.zeros((384, 2), np.float32), np.zeros((2, 384), np.float32), format=FORMAT + 1)
    with caplog.at_level(logging.WARNING, logger="peerlint.index.embedding.adapter"):
        assert QueryAdapter.load(MODEL, old.save(tmp_path / "b.npz")) is None
    assert f"format {FORMAT + 1}" in caplog.text
    (tmp_path / "c.npz").write_bytes(b"not a zip")
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="peerlint.index.embedding.adapter"):
        assert QueryAdapter.load(MODEL, tmp_path / "c.npz") is None
    assert "cannot be read" in caplog.text
    assert QueryAdapter.load(MODEL, tmp_path / "missing.npz") is None


def test_training_rejects_mismatched_pairs():
    with pytest.raises(ValueError, match="matching"):
        train(np.zeros((3, 384)), np.zeros((4, 384)), ["a", "b", "c"], MODEL)


def test_training_on_real_titles_brings_them_closer_to_their_abstracts():
    from peerlint.index.embedding.embedder import Embedder, query_route
    from conftest import shipped_papers

    papers = [p for p in shipped_papers()
              if p.venue == "COLT" and len(p.abstract) > 200]
    chosen = random.Random(0).sample(papers, 64)
    embedder = Embedder(query_route(MODEL))
    titles = embedder.encode([p.title for p in chosen])
    abstracts = embedder.encode([p.abstract for p in chosen])
    keys = [p.id for p in chosen]
    adapter = train(titles, abstracts, keys, MODEL, TrainConfig(rank=8, epochs=30, batch=64, lr=5e-3))

    def margin(q: np.ndarray) -> float:
        """Mean cosine with its own abstract minus the mean cosine with the others'."""
        sims = q @ abstracts.T
        own = np.diag(sims)
        return float(np.mean(own - (sims.sum(axis=1) - own) / (len(q) - 1)))

    assert margin(adapter.apply(titles)) > margin(titles) + 0.02
    identity = QueryAdapter.identity(MODEL, 384, rank=8)
    assert info_nce(adapter, titles, abstracts, keys) < info_nce(identity, titles, abstracts, keys) - 0.05
