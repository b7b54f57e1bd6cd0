"""Build an index from papers: chunk, embed only what the cache lacks, write a build, make it live."""

from __future__ import annotations

import itertools
import os
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from ..hashing import text_hash
from .embedding.cache import EmbeddingCache
from .embedding.embedder import DIM, Embedder
from .embedding.prebuilt import VectorCache, shipped_first
from .append import append_build, appendable_prefix, read_manifest
from .entities import write_entities
from .papers import Paper
from .progress import Progress
from .store import MANIFEST_VERSION, Manifest, make_live, write_build

BLOCK = 2048  # papers chunked and embedded at a time: their texts are all a build holds of the corpus


@dataclass(frozen=True)
class BuildReport:
    path: str
    papers: int
    chunks: int
    embedded: int  # chunks whose vectors were computed in this run
    cached: int  # chunks whose vectors came from the content-hash cache (or the shipped vectors)
    seconds: float
    embed_seconds: float
    notice: str = ""  # one line for the user, e.g. why the shipped vectors could not be used
    appended: int = 0  # papers appended to the previous build's graph and BM25 table (0: a full build)


def chunk_and_embed(papers: Iterable[Paper], content_hashes: Sequence[str], embedder: Embedder, cache: VectorCache,
                    max_tokens: int, show: bool) -> tuple[list[tuple[int, int, int, str]], np.ndarray, int, float]:
    """Split each paper's text into ≤max_tokens spans and give every span its vector, `BLOCK` papers at a time,
    computing only what the cache lacks (spans by content hash, vectors by chunk hash) and saving as it goes.

    Returns the chunk rows (paper_idx, start, end, text_hash), their vectors, the chunks embedded and the
    seconds spent embedding. Only one block's texts are held at a time, never the whole corpus's.
    """
    rows: list[tuple[int, int, int, str]] = []
    parts: list[np.ndarray] = []
    embedded, embed_seconds = 0, 0.0
    stream = iter(papers)
    with Progress("embedding", total=len(content_hashes), unit="paper", show=show) as bar:
        for lo in range(0, len(content_hashes), BLOCK):
            texts = [p.text for p in itertools.islice(stream, BLOCK)]
            hashes = content_hashes[lo : lo + len(texts)]
            spans = _spans(texts, hashes, embedder, cache, max_tokens)
            chunk_texts: dict[str, str] = {}
            keys = []
            for i, (text, h) in enumerate(zip(texts, hashes)):
                for start, end in spans[h]:
                    key = text_hash(chunk := text[start:end])
                    rows.append((lo + i, start, end, key))
                    chunk_texts[key] = chunk
                    keys.append(key)
            vectors = cache.get_vectors(embedder.model_id, keys)
            if missing := [key for key in chunk_texts if key not in vectors]:
                t0 = time.perf_counter()
                new = dict(zip(missing, embedder.encode([chunk_texts[key] for key in missing])))
                cache.put_vectors(embedder.model_id, new)  # saved as we go: a killed build keeps its work
                embed_seconds += time.perf_counter() - t0
                vectors.update(new)
                embedded += len(missing)
            if keys:
                parts.append(np.stack([vectors[key] for key in keys]))
            bar.update(len(texts))
    return rows, np.concatenate(parts) if parts else np.zeros((0, DIM), np.float32), embedded, embed_seconds


def _spans(texts: Sequence[str], hashes: Sequence[str], embedder: Embedder, cache: VectorCache,
           max_tokens: int) -> dict[str, list[tuple[int, int]]]:
    """Each text's chunk spans by content hash: from the cache, the rest split now and cached."""
    spans = cache.get_spans(hashes, max_tokens)
    todo = {h: t for h, t in zip(hashes, texts) if h not in spans}
    if todo:
        cuts = embedder.split_many(list(todo.values()), max_tokens)
        fresh = {h: [(s.start, s.end) for s in cut] for h, cut in zip(todo, cuts)}
        cache.put_spans(fresh, max_tokens)
        spans.update(fresh)
    return spans


def new_build_id() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:6]


def finish_build(root: Path, papers: Sequence[Paper], content_hashes: Sequence[str],
                 rows: Sequence[tuple[int, int, int, str]], vectors: np.ndarray, model_id: str,
                 sources: Sequence[str], max_tokens: int, show_progress: bool, entities: bool = True) -> Path:
    """Write a complete build from chunk rows and their vectors, then make it live; every engine ends here.

    A write that fails (a full disk) leaves CURRENT as it was, so the previous index keeps answering; the
    half-written folder is pruned by a later build, and the OSError goes on to the caller, which names the fix."""
    build_id = new_build_id()
    manifest = Manifest(MANIFEST_VERSION, model_id, DIM, len(papers), len(rows), tuple(sources),
                        datetime.now(timezone.utc).isoformat(timespec="seconds"), build_id, max_tokens)
    build = root / "builds" / build_id
    with Progress("indexing", total=len(rows), unit="vec", show=show_progress) as bar:
        write_build(build, papers, content_hashes, rows, vectors, manifest, progress=bar.usearch_callback,
                    alongside=(lambda: write_entities(build, papers, show_progress=show_progress, position=1))
                    if entities else None)  # SEC retrieval's entity postings, while the graph is built
    make_live(root, build)
    return build


def build_index(papers: Sequence[Paper], root: Path | str, embedder: Embedder | None = None,
                sources: Sequence[str] = (), max_tokens: int = 200, show_progress: bool = True,
                shipped_vectors: bool = True) -> BuildReport:
    """Build a complete index under `root`; the previous one stays live until the last step.

    When the live build's papers are an unchanged prefix of `papers`, only the rest is chunked, embedded and
    appended to a copy of it (append.py): no graph or BM25 rebuild.

    `shipped_vectors=False` embeds every chunk the cache lacks, even those the package ships (benchmarks).
    """
    t0 = time.perf_counter()
    root = Path(root)
    (root / "builds").mkdir(parents=True, exist_ok=True)
    embedder = embedder or Embedder()
    cache = EmbeddingCache(root / "embeddings.sqlite")
    try:
        content_hashes = [text_hash(p.text) for p in papers]
        kept = appendable_prefix(root, papers, content_hashes, embedder.model_id, max_tokens)
        todo = papers[kept:]  # the whole corpus, or only what an append adds to the live build
        todo_hashes = content_hashes[kept:]
        lookup, notice = shipped_first(cache, embedder.model_id, max_tokens) if shipped_vectors else (cache, "")
        rows, vectors, missing, embed_seconds = chunk_and_embed(todo, todo_hashes, embedder, lookup, max_tokens,
                                                                show_progress)
        if kept:
            with Progress("appending", total=len(rows), unit="vec", show=show_progress) as bar:
                build = append_build(root, new_build_id(), todo, todo_hashes, rows, vectors, sources,
                                     progress=bar.usearch_callback)
            chunks = int(read_manifest(build).chunks)
        else:
            finish_build(root, papers, content_hashes, rows, vectors, embedder.model_id, sources, max_tokens,
                         show_progress)
            chunks = len(rows)
    finally:
        cache.close()
    return BuildReport(str(root), len(papers), chunks, missing, chunks - missing, time.perf_counter() - t0,
                       embed_seconds, notice, appended=len(todo) if kept else 0)


def default_index_path() -> Path:
    """Per-user data directory; PEERLINT_INDEX overrides it."""
    env = os.environ.get("PEERLINT_INDEX")
    if env:
        return Path(env)
    base = Path(os.environ.get("XDG_DATA_HOME", Path.home() / ".local" / "share"))
    return base / "peerlint" / "index"
