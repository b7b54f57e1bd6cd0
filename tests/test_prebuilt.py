"""Shipped chunk vectors: a build of the shipped corpus embeds nothing; edited text and other models still embed."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest

from peerlint.index.embedding.cache import EmbeddingCache
from peerlint.index.embedding.prebuilt import SHIPPED, ShippedFirst, ShippedVectors, export, shipped_first
from peerlint.hashing import text_hash

TEXTS = ["Dual encoders retrieve passages. Cross-encoders rerank them.", "Batch norm helps autoencoders."]
SPANS = [[(0, 31), (32, 60)], [(0, 30)]]


def _filled_cache(path, model="m@torch"):
    cache = EmbeddingCache(path)
    cache.put_spans({text_hash(t): s for t, s in zip(TEXTS, SPANS)}, 200)
    rng = np.random.default_rng(0)
    chunks = [text_hash(t[a:b]) for t, spans in zip(TEXTS, SPANS) for a, b in spans]
    cache.put_vectors(model, {h: rng.standard_normal(384).astype(np.float32) for h in chunks})
    return cache, chunks


def test_export_then_look_up_gives_the_same_vectors_without_copying_them(tmp_path):
    source, chunks = _filled_cache(tmp_path / "a.sqlite")
    out = tmp_path / "vectors.npz"
    assert export(source, "m@torch", 200, [text_hash(t) for t in TEXTS], chunks, out) == 3
    fresh = EmbeddingCache(tmp_path / "b.sqlite")
    lookup, notice = shipped_first(fresh, "m@torch", 200, path=out)
    assert isinstance(lookup, ShippedFirst) and notice == ""
    assert lookup.get_spans([text_hash(TEXTS[0])], 200) == {text_hash(TEXTS[0]): SPANS[0]}
    want, got = source.get_vectors("m@torch", chunks), lookup.get_vectors("m@torch", chunks + chunks[:1])
    assert all(np.array_equal(want[h], got[h]) for h in chunks)  # float16 in the file as in the cache
    assert lookup.vectors_found == 3 and fresh.get_vectors("m@torch", chunks) == {}  # read, not copied
    new = {"ab" * 16: np.ones(384, np.float32)}  # a chunk the file lacks: embedded, then cached
    lookup.put_vectors("m@torch", new)
    assert set(lookup.get_vectors("m@torch", chunks + ["ab" * 16])) == {*chunks, "ab" * 16}


def test_edited_text_other_model_and_other_chunking_are_not_looked_up(tmp_path):
    source, chunks = _filled_cache(tmp_path / "a.sqlite")
    out = tmp_path / "vectors.npz"
    export(source, "m@torch", 200, [text_hash(t) for t in TEXTS], chunks, out)
    edited = EmbeddingCache(tmp_path / "c.sqlite")
    lookup, _ = shipped_first(edited, "m@torch", 200, path=out)
    assert lookup.get_spans([text_hash(TEXTS[0] + " Edited.")], 200) == {}
    other = EmbeddingCache(tmp_path / "d.sqlite")
    lookup, notice = shipped_first(other, "m@onnx-int8", 200, path=out)
    assert lookup is other and "m@torch" in notice and "m@onnx-int8" in notice
    assert shipped_first(EmbeddingCache(tmp_path / "e.sqlite"), "m@torch", 120, path=out)[1] == ""
    plain = EmbeddingCache(tmp_path / "f.sqlite")
    assert shipped_first(plain, "m@torch", 120, path=out)[0] is plain


def test_missing_or_damaged_file_means_embedding_as_before(tmp_path):
    cache = EmbeddingCache(tmp_path / "a.sqlite")
    assert shipped_first(cache, "m@torch", 200, path=tmp_path / "none.npz") == (cache, "")
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"PK\x03\x04 not a zip")
    assert shipped_first(cache, "m@torch", 200, path=bad) == (cache, "")
    with pytest.raises(ValueError, match="build the default index first"):
        export(cache, "m@torch", 200, [text_hash(t) for t in TEXTS], ["00" * 16], tmp_path / "x.npz")


@pytest.mark.skipif(not SHIPPED.exists(), reason="no shipped vectors in this checkout")
def test_building_shipped_papers_embeds_nothing(tmp_path):
    from peerlint.index.build import build_index
    from peerlint.index.embedding.embedder import Embedder
    from conftest import shipped_papers
    from peerlint.index.store import open_index

    class NoEncoding(Embedder):
        def encode(self, texts, progress=None):
            raise AssertionError(f"embedded {len(texts)} chunks that the shipped vectors hold")

        def split_many(self, texts, max_tokens=200):
            raise AssertionError("tokenized papers whose spans are shipped")

    papers = shipped_papers()[:300]
    report = build_index(papers, tmp_path / "index", NoEncoding(), show_progress=False)
    assert (report.embedded, report.notice) == (0, "")
    assert report.cached == report.chunks > 300
    shipped = ShippedVectors.load()
    assert shipped is not None and shipped.model == Embedder().model_id
    assert len(open_index(tmp_path / "index")) == 300


def test_the_environment_can_turn_the_shipped_vectors_off(tmp_path, monkeypatch):
    source, chunks = _filled_cache(tmp_path / "a.sqlite")
    out = tmp_path / "vectors.npz"
    export(source, "m@torch", 200, [text_hash(t) for t in TEXTS], chunks, out)
    monkeypatch.setenv("PEERLINT_SHIPPED_VECTORS", str(out))
    lookup, _ = shipped_first(EmbeddingCache(tmp_path / "b.sqlite"), "m@torch", 200)
    assert len(lookup.get_vectors("m@torch", chunks)) == 3
    monkeypatch.setenv("PEERLINT_SHIPPED_VECTORS", "")
    plain = EmbeddingCache(tmp_path / "c.sqlite")
    assert shipped_first(plain, "m@torch", 200) == (plain, "")


def test_a_supplements_file_is_looked_up_after_the_main_one(tmp_path, monkeypatch):
    """The corpus supplements ship their own vectors file: a build finds each paper's spans and chunks in
    whichever file holds them, the main file first, and embeds only what neither holds."""
    import os

    source, chunks = _filled_cache(tmp_path / "a.sqlite")
    main, supplement = tmp_path / "main.npz", tmp_path / "journals.npz"
    first = [text_hash(t[a:b]) for a, b in SPANS[0] for t in TEXTS[:1]]
    export(source, "m@torch", 200, [text_hash(TEXTS[0])], first, main)
    export(source, "m@torch", 200, [text_hash(TEXTS[1])], [h for h in chunks if h not in first], supplement)
    monkeypatch.setenv("PEERLINT_SHIPPED_VECTORS", os.pathsep.join([str(main), str(supplement)]))
    lookup, notice = shipped_first(EmbeddingCache(tmp_path / "b.sqlite"), "m@torch", 200)
    assert isinstance(lookup, ShippedFirst) and notice == "" and len(lookup.files) == 2
    assert lookup.get_spans([text_hash(t) for t in TEXTS], 200) == {text_hash(t): s for t, s in zip(TEXTS, SPANS)}
    want = source.get_vectors("m@torch", chunks)
    got = lookup.get_vectors("m@torch", chunks + ["cd" * 16])
    assert set(got) == set(chunks) and all(np.array_equal(want[h], got[h]) for h in chunks)
    assert lookup.vectors_found == 3
    monkeypatch.setenv("PEERLINT_SHIPPED_VECTORS", os.pathsep.join([str(main), str(tmp_path / "gone.npz")]))
    lookup, _ = shipped_first(EmbeddingCache(tmp_path / "c.sqlite"), "m@torch", 200)
    assert len(lookup.files) == 1 and set(lookup.get_vectors("m@torch", chunks)) == set(first)


def test_gpu_chunks_and_int8_pack_give_what_a_build_would_embed(tmp_path):
    """The one-time GPU path: chunk a corpus exactly as a build does, take int8 vectors back in order,
    pack them (format 2) and look them up as a build does: every chunk of every paper is found, within int8's error."""
    import json
    import sys
    from pathlib import Path

    from peerlint.index.embedding import gpu_transfer
    from peerlint.index.embedding.embedder import Embedder
    from peerlint.index.embedding.prebuilt import FORMAT_INT8, SHIPPED_LEVELS

    sys.path.insert(0, str(Path(gpu_transfer.__file__).parent))
    from gpu_embed import quantise  # the GPU machine's own script: plain numpy here

    long = " ".join(f"Sentence {i} says that retrieval of scientific abstracts needs good chunking." for i in range(40))
    rows = [{"id": "a", "title": "Short paper", "abstract": "Dual encoders retrieve passages. " * 3},
            {"id": "b", "title": "Long paper", "abstract": long}]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    report = gpu_transfer.write_chunks([corpus], tmp_path / "chunks", parts=2)
    assert report["papers"] == 2 and report["chunks"] >= 3  # the long abstract is split like index build splits it
    index = json.loads((tmp_path / "chunks" / "chunks-index.json").read_text())
    rng = np.random.default_rng(1)
    exact = rng.standard_normal((len(index["chunk_hashes"]), 384)).astype(np.float32)
    exact /= np.linalg.norm(exact, axis=1, keepdims=True)
    halves = np.array_split(np.arange(len(exact)), 2)
    parts = []
    for i, rows_i in enumerate(halves):  # what the GPU returns, part by part
        q, s = quantise(exact[rows_i])
        np.savez(tmp_path / f"v{i}.npz", vectors=q, scales=s)
        parts.append(tmp_path / f"v{i}.npz")
    out = tmp_path / "shipped.npz"
    assert gpu_transfer.pack(tmp_path / "chunks", parts, out) == len(exact)
    with pytest.raises(ValueError, match="a part is missing"):
        gpu_transfer.pack(tmp_path / "chunks", parts[:1], tmp_path / "short.npz")
    shipped = ShippedVectors.load(out)
    assert shipped is not None and shipped.vectors.dtype == np.int8 and int(np.load(out)["format"]) == FORMAT_INT8
    assert np.abs(shipped.vectors).max() == SHIPPED_LEVELS  # rounded to the shipped levels: fewer bits once deflated
    assert {i.compress_type for i in zipfile.ZipFile(out).infolist()} == {zipfile.ZIP_DEFLATED}
    from peerlint.index.ingest.load import load_papers

    texts = [p.text for p in load_papers([corpus], warn=lambda m: None)]  # as a build reads them
    model = Embedder().model_id
    lookup, notice = shipped_first(EmbeddingCache(tmp_path / "cache.sqlite"), model, 200, path=out)
    assert notice == "" and set(lookup.get_spans([text_hash(t) for t in texts], 200)) == {text_hash(t) for t in texts}
    got = lookup.get_vectors(model, index["chunk_hashes"])
    assert len(got) == len(exact)
    cosines = [float(got[h] @ exact[i]) / float(np.linalg.norm(got[h])) for i, h in enumerate(index["chunk_hashes"])]
    assert min(cosines) > 0.999


def test_the_cpu_route_embeds_what_an_earlier_shipped_file_lacks_and_resumes(tmp_path):
    """`gpu_transfer embed` (no GPU): exact ONNX vectors of the torch model, shard by shard; a rerun embeds
    nothing; `pack` names every row by its chunk; `--reuse` of an earlier file embeds nothing again."""
    import json
    import lzma

    from peerlint.index.embedding import gpu_transfer
    from peerlint.index.embedding.embedder import Embedder

    rows = [{"id": "a", "title": "Short paper", "abstract": "Dual encoders retrieve passages for open-domain QA. " * 3},
            {"id": "b", "title": "Long paper", "abstract": " ".join(
                f"Sentence {i} says that retrieval of scientific abstracts needs chunking." for i in range(40))}]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    gpu_transfer.write_chunks([corpus], tmp_path / "chunks", parts=2)
    index = json.loads((tmp_path / "chunks" / "chunks-index.json").read_text())
    messages: list[str] = []
    assert gpu_transfer.embed(tmp_path / "chunks", tmp_path / "cpu", progress=messages.append) == len(index["chunk_hashes"])
    assert messages and "shard-000.npz" in messages[0]
    assert gpu_transfer.embed(tmp_path / "chunks", tmp_path / "cpu", progress=messages.append) == 0  # resumed: done
    shards = sorted((tmp_path / "cpu").glob("shard-*.npz"))
    first = tmp_path / "first.npz"
    assert gpu_transfer.pack(tmp_path / "chunks", shards, first) == len(index["chunk_hashes"])
    shipped = ShippedVectors.load(first)
    texts = [json.loads(line)["text"] for i in range(2)
             for line in lzma.open(tmp_path / "chunks" / f"chunks-{i}.jsonl.xz", "rt")]
    exact = Embedder("torch").encode(texts)
    assert shipped.model == Embedder().model_id
    assert min(float(shipped.row(i) @ exact[i]) for i in range(len(texts))) > 0.999
    assert gpu_transfer.embed(tmp_path / "chunks", tmp_path / "again", reuse=first) == 0
    second = tmp_path / "second.npz"
    assert gpu_transfer.pack(tmp_path / "chunks", [], second, reuse=first) == len(texts)
    assert np.array_equal(np.load(second)["vectors"], np.load(first)["vectors"])
    with pytest.raises(ValueError, match="have no vector"):
        gpu_transfer.pack(tmp_path / "chunks", shards[:0], tmp_path / "none.npz")
