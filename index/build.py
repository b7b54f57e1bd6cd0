"""Build an index from papers: chunk, embed only what the cache lacks, write a build, make it live."""

from __future__ import annotations

import os
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence

import numpy as np

from .hashing import text_hash
from .embedding.cache import EmbeddingCache
from .embedding.embedder import DIM, Embedder
from .embedding.prebuilt import Seeded, seed_cache
from .append import append_build, appendable_prefix, read_manifest
from .entities import write_entities
from .papers import Paper
from .progress import Progress
from .store import MANIFEST_VERSION, Manifest, make_live, write_build


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


def chunk_papers(papers: Sequence[Paper], embedder: Embedder, cache: EmbeddingCache, max_tokens: int,
                 show: bool) -> tuple[list[str], list[tuple[int, int, int, str]], list[str]]:
    """Split each paper's text into ≤max_tokens spans (cached by content hash).

    Returns the per-paper content hashes, chunk rows (paper_idx, start, end, text_hash) and chunk texts.
    """
    content_hashes = [text_hash(p.text) for p in papers]
    known = cache.get_spans(content_hashes, max_tokens)
    todo = {h: p.text for p, h in zip(papers, content_hashes) if h not in known}
    fresh: dict[str, list[tuple[int, int]]] = {}
    with Progress("chunking", total=len(todo), show=show) as bar:
        hashes = list(todo)
        for i in range(0, len(hashes), 1024):
            part = hashes[i : i + 1024]
            for h, spans in zip(part, embedder.split_many([todo[h] for h in part], max_tokens)):
                fresh[h] = [(s.start, s.end) for s in spans]
            bar.update(len(part))
    cache.put_spans(fresh, max_tokens)
    known.update(fresh)
    rows: list[tuple[int, int, int, str]] = []
    texts: list[str] = []
    for idx, (paper, h) in enumerate(zip(papers, content_hashes)):
        for start, end in known[h]:
            text = paper.text[start:end]
            rows.append((idx, start, end, text_hash(text)))
            texts.append(text)
    return content_hashes, rows, texts


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
        write_build(build, papers, content_hashes, rows, vectors, manifest, progress=bar.usearch_callback)
    if entities:
        write_entities(build, papers, show_progress=show_progress)  # SEC retrieval's entity postings
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
        kept = appendable_prefix(root, papers, [text_hash(p.text) for p in papers], embedder.model_id, max_tokens)
        todo = papers[kept:]  # the whole corpus, or only what an append adds to the live build
        seeded = seed_cache(cache, embedder.model_id, max_tokens, [p.text for p in todo]) if shipped_vectors else Seeded()
        content_hashes, rows, texts = chunk_papers(todo, embedder, cache, max_tokens, show_progress)
        vectors, missing, embed_seconds = embed_chunks(rows, texts, embedder, cache, show_progress)
        if kept:
            with Progress("appending", total=len(rows), unit="vec", show=show_progress) as bar:
                build = append_build(root, new_build_id(), todo, content_hashes, rows, vectors, sources,
                                     progress=bar.usearch_callback)
            chunks = int(read_manifest(build).chunks)
        else:
            finish_build(root, papers, content_hashes, rows, vectors, embedder.model_id, sources, max_tokens,
                         show_progress)
            chunks = len(rows)
    finally:
        cache.close()
    return BuildReport(str(root), len(papers), chunks, missing, chunks - missing, time.perf_counter() - t0,
                       embed_seconds, seeded.notice, appended=len(todo) if kept else 0)


def embed_chunks(rows: Sequence[tuple[int, int, int, str]], texts: Sequence[str], embedder: Embedder,
                 cache: EmbeddingCache, show_progress: bool) -> tuple[np.ndarray, int, float]:
    """The vector of every chunk row, embedding only what the cache lacks: (vectors, embedded, seconds)."""
    hashes = [r[3] for r in rows]
    vectors_by_hash = cache.get_vectors(embedder.model_id, hashes)
    missing = list(dict.fromkeys(h for h in hashes if h not in vectors_by_hash))
    text_of = dict(zip(hashes, texts))
    t_embed = time.perf_counter()
    with Progress("embedding", total=len(missing), unit="chunk", show=show_progress) as bar:
        for i in range(0, len(missing), 512):
            part = missing[i : i + 512]
            vecs = embedder.encode([text_of[h] for h in part], progress=bar.update)
            new = dict(zip(part, vecs))
            cache.put_vectors(embedder.model_id, new)  # saved as we go: a killed build keeps its work
            vectors_by_hash.update(new)
    vectors = np.stack([vectors_by_hash[h] for h in hashes]) if hashes else np.zeros((0, DIM), np.float32)
    return vectors, len(missing), time.perf_counter() - t_embed


def default_index_path() -> Path:
    """Per-user data directory; PEERLINT_INDEX overrides it."""
    env = os.environ.get("PEERLINT_INDEX")
    if env:
        return Path(env)
    base = Path(os.environ.get("XDG_DATA_HOME", Path.home() / ".local" / "share"))
    return base / "peerlint" / "index"
