"""Appends and large-index settings, on real shipped papers with a deterministic stand-in embedder.

What is tested is the index machinery (append vs full build, atomicity, the int8 graph with exact
re-ranking), not the embedding model, so a chunk's vector is the sum of hashed directions of its
words: fast, deterministic, and shaped like real embeddings (texts sharing words lie close).
"""

from __future__ import annotations

import dataclasses
import errno
import hashlib

import numpy as np
import pytest

import peerlint.index.append as append_module
import peerlint.index.store as store_module
from peerlint.index.build import build_index
from peerlint.index.embedding.embedder import DIM, Span
from peerlint.index.entities import read_entities
from conftest import shipped_papers
from peerlint.index.store import open_index


class HashEmbedder:
    """One chunk per ~60 words, a vector per chunk from its words: the Embedder interface build_index uses."""

    model_id = "test@hash"

    def split_many(self, texts, max_tokens=200):
        out = []
        for text in texts:
            cuts = [i for i, ch in enumerate(text) if ch == " "][60::60]
            bounds = [0, *cuts, len(text)]
            out.append([Span(a, b) for a, b in zip(bounds, bounds[1:]) if text[a:b].strip()])
        return out

    def encode(self, texts, progress=None):
        out = np.zeros((len(texts), DIM), np.float32)
        for i, text in enumerate(texts):  # a bag of hashed word directions: similar texts, near vectors
            for word in text.lower().split():
                out[i] += _direction(word)
        if progress:
            progress(len(texts))
        return out / np.linalg.norm(out, axis=1, keepdims=True).clip(1e-9)


_DIRECTIONS: dict[str, np.ndarray] = {}


def _direction(word: str) -> np.ndarray:
    if word not in _DIRECTIONS:
        seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "little")
        _DIRECTIONS[word] = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return _DIRECTIONS[word]


@pytest.fixture(scope="module")
def shipped():
    return list(shipped_papers()[:460])


def _build(papers, root):
    return build_index(papers, root, HashEmbedder(), sources=["test"], show_progress=False, shipped_vectors=False)


def test_append_matches_a_full_build(shipped, tmp_path):
    old, new = shipped[:400], shipped[400:460]
    _build(old, tmp_path / "grown")
    report = _build(old + new, tmp_path / "grown")
    assert report.appended == len(new) and report.papers == 460
    full = _build(old + new, tmp_path / "full")
    assert full.appended == 0 and full.chunks == report.chunks
    assert report.embedded == sum(len(s) for s in HashEmbedder().split_many([p.text for p in new]))
    grown, fresh = open_index(tmp_path / "grown"), open_index(tmp_path / "full")
    try:
        assert grown.ids == fresh.ids
        assert np.array_equal(np.asarray(grown.vectors), np.asarray(fresh.vectors))
        assert np.array_equal(grown.chunk_spans, fresh.chunk_spans)
        for key in [0, 5, len(fresh.vectors) - 1, len(fresh.vectors) - 9]:  # old and appended chunks
            q = np.asarray(fresh.vectors[key], dtype=np.float32)
            owner = fresh.ids[int(fresh.chunk_paper[key])]
            assert grown.search_vector(q, 1)[0].paper.id == owner  # found through the grown graph
            assert [h.paper.id for h in grown.search_vector(q, 10, exact=True)] == \
                   [h.paper.id for h in fresh.search_vector(q, 10, exact=True)]
        for p in new[:10] + old[:5]:
            assert grown.lexical_search(p.title, 10) == fresh.lexical_search(p.title, 10)
        a, b = read_entities(grown.build, 460), read_entities(fresh.build, 460)
        assert a is not None and b is not None
        assert [sorted(a.texts[e] for e in a.entities_of(i)) for i in range(460)] == \
               [sorted(b.texts[e] for e in b.entities_of(i)) for i in range(460)]
    finally:
        grown.close()
        fresh.close()


def test_a_changed_or_reordered_paper_means_a_full_build(shipped, tmp_path):
    _build(shipped[:100], tmp_path / "idx")
    edited = dataclasses.replace(shipped[3], abstract=shipped[3].abstract + " Code is released.")
    assert _build(shipped[:3] + [edited] + shipped[4:120], tmp_path / "idx").appended == 0
    assert _build(shipped[1:130], tmp_path / "idx").appended == 0
    assert _build(shipped[1:130] + shipped[200:210], tmp_path / "idx").appended == 10


def test_a_full_disk_during_an_append_leaves_the_previous_index_answering(shipped, tmp_path, monkeypatch):
    root = tmp_path / "idx"
    _build(shipped[:100], root)
    current = (root / "CURRENT").read_text()

    def full_disk(src, dst):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(append_module.shutil, "copyfile", full_disk)
    with pytest.raises(OSError) as caught:
        _build(shipped[:150], root)
    assert caught.value.errno == errno.ENOSPC
    assert (root / "CURRENT").read_text() == current
    index = open_index(root)
    try:
        assert len(index) == 100 and index.search_vector(HashEmbedder().encode([shipped[5].text])[0], 1)
    finally:
        index.close()


def test_cli_names_the_full_disk_and_the_rerun(shipped, tmp_path, monkeypatch, capsys):
    import json

    from peerlint.server.cli import main

    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"id": p.id, "title": p.title, "abstract": p.abstract}) + "\n" for p in shipped[:30]))
    monkeypatch.setattr("peerlint.server.commands.index.make_embedder", lambda route, model="minilm": HashEmbedder())

    def full_disk(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("peerlint.index.build.write_build", full_disk)
    assert main(["index", "build", "--corpus", str(corpus), "--index", str(tmp_path / "idx"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "disk" in err[0] and "run the same command again" in err[0], err


def test_large_indexes_store_int8_and_rerank_exactly(shipped, tmp_path, monkeypatch):
    monkeypatch.setattr(store_module, "LARGE_INDEX_VECTORS", 100)
    _build(shipped, tmp_path / "idx")
    index = open_index(tmp_path / "idx")
    try:
        assert "I8" in str(index._hnsw.dtype).upper()
        rng = np.random.default_rng(0)
        for key in range(0, len(index.vectors), 37):
            q = np.asarray(index.vectors[key], dtype=np.float32) + rng.normal(0, 0.02, DIM).astype(np.float32)
            q /= np.linalg.norm(q)
            approx, exact = index.search_vector(q, 10), index.search_vector(q, 10, exact=True)
            assert approx[0].paper.id == exact[0].paper.id == index.ids[int(index.chunk_paper[key])]
            best = index.best_chunks(q, [index.id_to_idx[h.paper.id] for h in approx])
            # the int8 graph only proposes candidates: each hit's similarity is the exact cosine
            assert [h.similarity for h in approx] == pytest.approx([best[index.id_to_idx[h.paper.id]][0] for h in approx], abs=1e-6)
    finally:
        index.close()


def test_an_older_format_index_is_rebuilt_not_appended_to(shipped, tmp_path):
    import json

    from peerlint.index.store import current_build

    root = tmp_path / "idx"
    _build(shipped[:100], root)
    manifest = current_build(root) / "manifest.json"
    manifest.write_text(json.dumps(json.loads(manifest.read_text()) | {"version": 1}))
    old = open_index(root)
    try:
        assert not old.has_lexical and "peerlint index build" in old.lexical_problem
    finally:
        old.close()
    report = _build(shipped[:120], root)
    assert report.appended == 0 and report.papers == 120
    index = open_index(root)
    try:
        assert index.has_lexical and index.manifest.version >= 2
    finally:
        index.close()


def test_postings_grouped_block_by_block_equal_a_full_sort(tmp_path):
    """The postings writer's counting sort (blocks far smaller than the postings) gives each term its
    postings in doc order, exactly what a lexsort by (term, doc) gives."""
    from peerlint.index.lexical import POSTINGS, _bucket_by_term

    rng = np.random.default_rng(3)
    docs = np.repeat(np.arange(500, dtype=np.int32), rng.integers(1, 40, 500))  # papers added in order
    term = rng.integers(0, 70, len(docs)).astype(np.int32)
    tfs = rng.random(len(docs)).astype(np.float32)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(term, minlength=70))]).astype(np.int64)
    _bucket_by_term(term, docs, tfs, indptr, tmp_path, block=997)
    order = np.lexsort((docs, term))
    assert np.array_equal(np.load(tmp_path / f"{POSTINGS}-docs.npy"), docs[order])
    assert np.array_equal(np.load(tmp_path / f"{POSTINGS}-tf.npy"), tfs[order])


def test_lexical_top_k_over_millions_of_scores_is_exactly_the_full_sort():
    """top(k) on a corpus-sized score array looks only at papers above a sampled floor; what it returns must
    be the full sort's top k, ties by paper idx, including ties at the cut."""
    from peerlint.index.lexical import LexicalScores

    rng = np.random.default_rng(5)
    scores = np.where(rng.random(300_000) < 0.7, rng.integers(1, 400, 300_000) / 10, 0).astype(np.float32)
    scores[[17, 90_000, 250_000]] = 55.5  # a three-way tie at the top
    for k in (1, 3, 10, 50):
        matched = np.flatnonzero(scores > 0)
        order = matched[np.lexsort((matched, -scores[matched]))][:k]
        assert LexicalScores(scores).top(k) == [(int(i), float(scores[i])) for i in order]
    assert LexicalScores(np.zeros(300_000, np.float32)).top(10) == []
