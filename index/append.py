"""Append papers to the live index as a new build, without rebuilding its graph or its BM25 table.

Why: a full build re-inserts every vector into the HNSW graph (a 3M-vector graph takes hours on
2 cores), while `corpus pull --update` adds a few thousand papers a day. When the live build's
papers are an unchanged prefix of the new corpus, the new build starts as a copy of the live one
(meta.sqlite copied, vectors.npy extended, the graph loaded and grown) and only the new rows are
added. It stays atomic: CURRENT moves only once the copy is complete and flushed, so a failure (a
full disk) leaves the previous build answering.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence

import numpy as np

from . import lexical
from .entities import paper_entities, read_entities, write_entities
from .papers import Paper
from .store import (MANIFEST_VERSION, IndexError_, Manifest, current_build, insert_rows, insert_threads, make_live,
                    seal_build)

COPY_BLOCK = 262_144  # vectors copied per step from the previous vectors.npy (100 MB of float16)


def read_manifest(build: Path) -> Manifest | None:
    try:
        raw = json.loads((build / "manifest.json").read_text())
        return Manifest(**{**raw, "sources": tuple(raw["sources"])})
    except (OSError, ValueError, TypeError, KeyError):
        return None


def appendable_prefix(root: Path, papers: Sequence[Paper], content_hashes: Sequence[str], model_id: str,
                      max_tokens: int) -> int:
    """How many leading papers the live build already holds unchanged (same ids, same text), when the rest
    can be appended to it; 0 when a full build is needed (no index, another model or format, a changed,
    removed or reordered paper, or nothing new)."""
    try:
        build = current_build(root)
    except IndexError_:
        return 0
    manifest = read_manifest(build)
    if (manifest is None or manifest.version != MANIFEST_VERSION or manifest.model_id != model_id
            or manifest.max_tokens != max_tokens or not 0 < manifest.papers < len(papers)):
        return 0
    try:
        db = sqlite3.connect(f"file:{build / 'meta.sqlite'}?mode=ro", uri=True)
        try:
            if not lexical.has_table(db):
                return 0
            stored = db.execute("SELECT id, content_hash FROM papers ORDER BY idx")
            for i, (pid, chash) in enumerate(stored):
                if i >= len(papers) or pid != papers[i].id or chash != content_hashes[i]:
                    return 0
        finally:
            db.close()
    except sqlite3.DatabaseError:
        return 0
    return manifest.papers


def append_build(root: Path, build_id: str, papers: Sequence[Paper], content_hashes: Sequence[str],
                 chunk_rows: Sequence[tuple[int, int, int, str]], vectors: np.ndarray, sources: Sequence[str],
                 progress=None) -> Path:
    """Write builds/<build_id> as the live build plus `papers` (chunk rows numbered within `papers`), then
    make it live. Raises OSError (a full disk) with CURRENT untouched."""
    from usearch.index import Index

    previous = current_build(root)
    old = read_manifest(previous)
    build = root / "builds" / build_id
    build.mkdir(parents=True)
    shutil.copyfile(previous / "meta.sqlite", build / "meta.sqlite")
    old_vectors = np.load(previous / "vectors.npy", mmap_mode="r")
    n_old = len(old_vectors)
    out = np.lib.format.open_memmap(build / "vectors.npy", mode="w+", dtype=np.float16,
                                    shape=(n_old + len(vectors), old_vectors.shape[1]))
    for start in range(0, n_old, COPY_BLOCK):
        stop = min(n_old, start + COPY_BLOCK)
        out[start:stop] = old_vectors[start:stop]
    out[n_old:] = np.asarray(vectors, dtype=np.float16)
    out.flush()
    del out, old_vectors
    graph = Index.restore(str(previous / "vectors.usearch"))  # loaded, not viewed: it grows
    if len(vectors):
        graph.add(np.arange(n_old, n_old + len(vectors), dtype=np.uint64), vectors, progress=progress,
                  threads=insert_threads(n_old + len(vectors)))
    graph.save(str(build / "vectors.usearch"))
    del graph
    db = sqlite3.connect(build / "meta.sqlite")
    try:
        with db:
            insert_rows(db, papers, content_hashes, chunk_rows, first_paper=old.papers, first_chunk=n_old)
            lexical.append_rows(db, previous, ((old.papers + i, p.title, p.abstract) for i, p in enumerate(papers)))
    finally:
        db.close()
    table = read_entities(previous, old.papers)
    if table is not None:  # SEC postings: the previous papers' entities as stored, the new ones extracted
        per_paper = [[table.texts[e] for e in table.entities_of(i)] for i in range(old.papers)]
        write_entities(build, per_paper=per_paper + [paper_entities(p) for p in papers])
    manifest = Manifest(MANIFEST_VERSION, old.model_id, old.dim, old.papers + len(papers), n_old + len(vectors),
                        tuple(sources), datetime.now(timezone.utc).isoformat(timespec="seconds"), build_id,
                        old.max_tokens)
    seal_build(build, manifest)
    make_live(root, build)
    return build
