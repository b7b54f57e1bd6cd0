"""Query vectors persist across processes: exact, bounded, and a damaged file never breaks a search."""

from __future__ import annotations

import numpy as np

from peerlint.index.embedding.query_cache import PersistentEmbedder


class CountingEmbedder:
    model_id = "fake@torch"

    def __init__(self):
        self.calls: list[list[str]] = []

    def encode(self, texts, progress=None):
        self.calls.append(list(texts))
        rng = np.random.default_rng(len(self.calls))
        return rng.standard_normal((len(texts), 8)).astype(np.float32)

    def count_tokens(self, text):
        return len(text.split())


def test_second_process_embeds_nothing_and_gets_the_same_vectors(tmp_path):
    first = PersistentEmbedder(CountingEmbedder(), tmp_path / "q.sqlite")
    a = first.encode(["one", "two", "one"])
    assert first.inner.calls == [["one", "two"]]  # duplicates embedded once
    assert np.array_equal(a[0], a[2])
    second = PersistentEmbedder(CountingEmbedder(), tmp_path / "q.sqlite")  # a new process, same file
    b = second.encode(["two", "one"])
    assert second.inner.calls == []
    assert np.array_equal(b[0], a[1]) and np.array_equal(b[1], a[0])  # exact: float32 stored as is
    assert second.count_tokens("a b c") == 3  # everything else is the wrapped embedder's


def test_cache_is_pruned_to_the_most_recently_used(tmp_path):
    cache = PersistentEmbedder(CountingEmbedder(), tmp_path / "q.sqlite", max_rows=3)
    cache.encode(["a", "b", "c"])
    cache.encode(["a"])  # used again: kept
    cache.encode(["d", "e"])
    inner = CountingEmbedder()
    again = PersistentEmbedder(inner, tmp_path / "q.sqlite", max_rows=3)
    again.encode(["a", "d", "e"])
    assert inner.calls == []
    again.encode(["b"])
    assert inner.calls == [["b"]]


def test_damaged_or_unwritable_cache_still_embeds(tmp_path):
    bad = tmp_path / "q.sqlite"
    bad.write_bytes(b"not a database" * 100)
    cache = PersistentEmbedder(CountingEmbedder(), bad)
    assert cache.encode(["x"]).shape == (1, 8)
    blocked = tmp_path / "file"
    blocked.write_text("a file where a folder should be")
    cache = PersistentEmbedder(CountingEmbedder(), blocked / "q.sqlite")
    assert cache.encode(["x", "y"]).shape == (2, 8)
