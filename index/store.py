"""The on-disk index: USearch vectors + SQLite metadata, swapped in atomically.

Layout of an index directory::

    CURRENT                 name of the live build, replaced with os.replace (atomic)
    builds/<build-id>/      vectors.usearch (HNSW), vectors.npy (float16, for exact search),
                            meta.sqlite (papers, chunks, and `lexical`: BM25 over title and abstract,
                            see lexical.py), manifest.json,
                            entities.sqlite (paper entities for SEC retrieval, see entities.py)
    embeddings.sqlite       content-hash cache of chunk vectors, shared by all builds

A build writes a new ``builds/<id>`` and only then points CURRENT at it, so a build killed
halfway leaves the previous index untouched and readable.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Sequence

import numpy as np

from ..locations import forget_build
from ..lru import LRU
from . import lexical
from .embedding.embedder import Embedder, model_key, query_route
from .embedding.query_cache import FILE_NAME, PersistentEmbedder
from .ingest.identity import normalise_title
from .npy_reader import NpyReader, prefetch
from .papers import Hit, Paper, SearchFilter

# 2: meta.sqlite holds the BM25 table. An index of version 1 still opens; its lexical search is off
# (`VectorIndex.lexical_problem` says so and names the rebuild) and hybrid search falls back to dense.
MANIFEST_VERSION = 2
HNSW = {"connectivity": 16, "expansion_add": 128, "expansion_search": 128}
# From this many vectors on (the default corpus's 274k chunks among them), the graph stores int8
# scalars (half its bytes, distances ~1.8x faster to insert with AVX-512 VNNI) and is built with a
# narrower beam; every search re-ranks its candidates exactly against vectors.npy (float16), which
# recovers what int8 loses. The beams were chosen on real papers' paragraphs searched in the default
# index: `peerlint bench index --default-build` measures the graph's recall against exact search, and
# docs/benchmarks/index.md compares these beams with the former ones.
LARGE_INDEX_VECTORS = 200_000
HNSW_LARGE = {"dtype": "i8", "expansion_add": 96}
EXACT_FRACTION = 0.1  # below this share of allowed papers, search the subset exactly
PAPERS_KEPT = 20_000  # records `VectorIndex.paper` keeps decoded: hovers and suggestions, not whole-index passes


class IndexError_(RuntimeError):
    """Base for index problems a user can fix; the message names the fix."""


class IndexMissing(IndexError_):
    pass


class IndexCorrupt(IndexError_):
    pass


@dataclass(frozen=True)
class Manifest:
    version: int
    model_id: str
    dim: int
    papers: int
    chunks: int
    sources: tuple[str, ...]
    built_at: str
    build_id: str
    max_tokens: int


def build_command(path: Path | None = None) -> str:
    return "peerlint index build" + (f" --index {path}" if path else "")


def current_build(root: Path) -> Path:
    """The live build CURRENT names: only a plain folder name under builds/, never a path out of the index."""
    pointer = root / "CURRENT"
    if not pointer.exists():
        raise IndexMissing(f"no index at {root}: run `{build_command(root)}`")
    try:
        name = pointer.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise IndexCorrupt(f"index at {root} has an unreadable CURRENT ({exc}): rebuild with `{build_command(root)}`") from exc
    if not name or name in (".", "..") or "/" in name or "\\" in name or "\0" in name:
        raise IndexCorrupt(f"index at {root} has a damaged CURRENT ({name[:60]!r} is not a build name): "
                           f"rebuild with `{build_command(root)}`")
    build = root / "builds" / name
    if not build.is_dir():
        raise IndexCorrupt(f"index at {root} points to a missing build: rebuild with `{build_command(root)}`")
    return build


def _paper_from_row(row: sqlite3.Row) -> Paper:
    return Paper(
        id=row["id"], title=row["title"], abstract=row["abstract"], venue=row["venue"] or "",
        year=row["year"], status=row["status"] or "", authors=tuple(json.loads(row["authors"] or "[]")),
        keywords=tuple(json.loads(row["keywords"] or "[]")), url=row["url"] or "",
        rating_avg=row["rating_avg"], citations=row["citations"], date=row["date"] or "",
        references=tuple(json.loads(row["refs"] or "[]")),
        **({"doi": row["doi"] or "", "arxiv_id": row["arxiv_id"] or "",
            "categories": tuple(json.loads(row["categories"] or "[]"))} if "doi" in row.keys() else {}),
    )  # an index written before DOIs were kept has no such columns: its papers have none


def parse_before(before: str) -> tuple[int, str]:
    """'2017' or '2017-06-01' -> (2017, '2017-06-01' or ''); a ValueError naming both forms otherwise."""
    import datetime

    text = str(before).strip()
    try:
        if len(text) > 4:
            datetime.date.fromisoformat(text)
        return int(text[:4]), (text if len(text) > 4 else "")
    except ValueError:
        raise ValueError(f"a published-before date is a year or an ISO date (2017 or 2017-06-01), got {before!r}") from None


class VectorIndex:
    """Read side of an index: opened once, searched many times, from any thread."""

    def __init__(self, root: Path, embedder=None, read_ahead: bool = True):
        """`read_ahead`: False for a caller that will not search (`index info`, `doctor`), which then
        does not read the whole graph and vectors (seconds at 3M papers) for nothing."""
        from usearch.index import Index

        self.root = Path(root)
        self.build = current_build(self.root)
        try:
            raw = json.loads((self.build / "manifest.json").read_text())
            self.manifest = Manifest(**{**raw, "sources": tuple(raw["sources"])})
        except (OSError, ValueError, TypeError, KeyError) as exc:
            raise IndexCorrupt(f"index manifest at {self.build} is unreadable ({exc}): rebuild with `{build_command(self.root)}`") from exc
        try:
            self._hnsw = Index.restore(str(self.build / "vectors.usearch"), view=True)
            # what searches and whole-array users (heads, exact search) read: not resident (npy_reader.py)
            self.vectors = NpyReader(self.build / "vectors.npy")
        except Exception as exc:  # usearch raises RuntimeError/ValueError on damaged files
            raise IndexCorrupt(f"index vectors at {self.build} are damaged ({exc}): rebuild with `{build_command(self.root)}`") from exc
        if self._hnsw is None:  # usearch returns None when the file is missing
            raise IndexCorrupt(f"index vectors at {self.build} are missing: rebuild with `{build_command(self.root)}`")
        if self._hnsw.ndim != self.manifest.dim or self.vectors.shape[1:] != (self.manifest.dim,):
            raise IndexCorrupt(f"index at {self.build} has the wrong dimension: rebuild with `{build_command(self.root)}`")
        self._hnsw.expansion_search = HNSW["expansion_search"]
        try:
            # inside the try: a deleted meta.sqlite fails here ("unable to open database file")
            self._db = sqlite3.connect(f"file:{self.build / 'meta.sqlite'}?mode=ro", uri=True, check_same_thread=False)
            self._db.row_factory = sqlite3.Row
            self._read_columns()
        except sqlite3.DatabaseError as exc:
            raise IndexCorrupt(f"index metadata at {self.build} is damaged ({exc}): rebuild with `{build_command(self.root)}`") from exc
        if len(self.chunk_paper) != len(self.vectors) or len(self._hnsw) != len(self.vectors):
            raise IndexCorrupt(f"index at {self.build} is inconsistent (vectors vs metadata): rebuild with `{build_command(self.root)}`")
        if len(self.chunk_paper) and np.any(np.diff(self.chunk_paper) < 0):  # builds write chunks paper by paper
            raise IndexCorrupt(f"index at {self.build} has chunks out of paper order: rebuild with `{build_command(self.root)}`")
        self.chunk_ptr = np.searchsorted(self.chunk_paper, np.arange(len(self.ids) + 1))  # paper i: chunks [ptr[i], ptr[i+1])
        self.lexical_problem = self._lexical_problem()
        self._lexical = lexical.Lexical(self._db, len(self.ids)) if self.lexical_problem is None else None
        self._paper_cache = LRU(PAPERS_KEPT)
        self._paper_cache_lock = threading.Lock()
        self._embedder = embedder
        self.query_embedding = "exact"  # or "int8": `embed_queries` (the editor's default)
        if read_ahead:
            self._read_ahead()

    def _read_ahead(self) -> None:
        """Read the graph, then the vectors the searches re-rank with, then the BM25 postings, into the page
        cache while they fit `PREFETCH_SHARE` of the memory available: the first searches after opening a
        large index then do not wait on one disk read per graph node, re-ranked row and posting list (at
        3M: 3.9 GB, a few seconds of sequential reading on top of the ~20 s the metadata takes; the
        latency page measures what the postings save a first look)."""
        budget = int(available_memory() * PREFETCH_SHARE)
        for path in (self.build / "vectors.usearch", self.build / "vectors.npy",
                     lexical.postings_file(self.build, "docs.npy"), lexical.postings_file(self.build, "tf.npy")):
            if not prefetch(path, budget):
                break
            budget -= path.stat().st_size

    def _read_columns(self) -> None:
        """The per-paper and per-chunk columns search needs: from the build's `columns.npz` when it was
        written from this very metadata (milliseconds), else streamed from SQLite (~1 s at 158k papers,
        as for a build written before the file was)."""
        columns = read_columns(self.build) or columns_from_sqlite(self._db)
        self.ids, self.venues, self.dates, self.years = columns.ids, columns.venues, columns.dates, columns.years
        self.id_to_idx = {pid: i for i, pid in enumerate(self.ids)}
        self.chunk_paper = columns.chunks[:, 0].copy()
        self.chunk_spans = columns.chunks[:, 1:].copy()

    def paper_matrix(self, block: int = 8192, dtype=np.float32) -> np.ndarray:
        """One unit vector per paper, the mean of its chunk vectors ((papers, dim), computed in float32 and
        stored as `dtype`); the float16 rows are read a block of papers at a time, so a 274k-chunk index
        needs ~10 MB beside the result."""
        n = len(self.ids)
        out = np.zeros((n, self.vectors.shape[1]), dtype=dtype)
        ptr = self.chunk_ptr
        for lo in range(0, n, block):
            hi = min(n, lo + block)
            a, b = int(ptr[lo]), int(ptr[hi])
            if b > a:
                out[lo:hi] = _unit_means(np.asarray(self.vectors.slice(a, b), dtype=np.float32), ptr[lo + 1:hi + 1] - ptr[lo:hi])
        return out

    def paper_vectors(self, papers: Sequence[int]) -> np.ndarray:
        """`paper_matrix` rows of a few papers ((len(papers), dim), float32), read from their chunks alone."""
        papers = np.asarray(papers, dtype=np.int64)
        starts, stops = self.chunk_ptr[papers], self.chunk_ptr[papers + 1]
        if not len(papers) or not (stops > starts).any():
            return np.zeros((len(papers), self.vectors.shape[1]), dtype=np.float32)
        keys = np.concatenate([np.arange(a, b) for a, b in zip(starts, stops)])
        return _unit_means(np.asarray(self.vectors[keys], dtype=np.float32), stops - starts)

    def _lexical_problem(self) -> str | None:
        """Why this index cannot search by words (an index built before lexical search existed), or None."""
        try:
            ok = self.manifest.version >= 2 and lexical.has_table(self._db)
        except sqlite3.DatabaseError:
            ok = False
        if ok:
            return None
        return (f"the index at {self.root} was built before lexical (BM25) search existed: searching by embeddings "
                f"only until you rebuild it with `{build_command(self.root)}`")

    @property
    def has_lexical(self) -> bool:
        return self.lexical_problem is None

    # -- metadata ---------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.ids)

    def paper(self, idx: int) -> Paper:
        """Paper `idx`, its record read once; the `PAPERS_KEPT` read last are kept."""
        idx = int(idx)
        cached = self._paper_cache.get(idx)
        if cached is None:
            cached = _paper_from_row(self._db.execute("SELECT * FROM papers WHERE idx = ?", (idx,)).fetchone())
            with self._paper_cache_lock:
                self._paper_cache.put(idx, cached)
        return cached

    def texts(self) -> Iterator[str]:
        """Every paper's `Paper.text` in index order, read in one pass that keeps none of the papers:
        what fits a model to the whole index reads."""
        cursor = self._db.execute("SELECT id, title, abstract FROM papers ORDER BY idx")
        while rows := cursor.fetchmany(10_000):
            for paper_id, title, abstract in rows:
                yield Paper(paper_id, title or "", abstract or "").text

    def statuses(self) -> list[str]:
        """Each paper's status ("Poster", "Workshop", ...; "" when unknown) in index order, read on demand:
        only the venue heads need it, once per build."""
        return [s for (s,) in self._db.execute("SELECT IFNULL(status, '') FROM papers ORDER BY idx")]

    def get(self, paper_id: str) -> Paper | None:
        idx = self.id_to_idx.get(paper_id)
        return None if idx is None else self.paper(idx)

    def stats(self) -> dict:
        """What `index info` shows. `venues` counts papers by lower-case venue (how filters match them);
        `venue_names` gives each as its papers write it ("neurips" -> "NeurIPS")."""
        venues, first, counts = np.unique(self.venues.astype(str), return_index=True, return_counts=True)
        names = {}
        for venue, idx in zip(venues, first):
            row = self._db.execute("SELECT venue FROM papers WHERE idx = ?", (int(idx),)).fetchone()
            names[str(venue)] = (row[0] if row and row[0] else "") or str(venue)
        known = self.years[self.years >= 0]
        size = sum(f.stat().st_size for f in self.build.iterdir() if f.is_file())
        return {
            "path": str(self.root), "build": self.build.name, "model": self.manifest.model_id,
            "papers": len(self.ids), "chunks": int(len(self.vectors)), "built_at": self.manifest.built_at,
            "years": [int(known.min()), int(known.max())] if len(known) else None,
            "venues": {str(v): int(c) for v, c in zip(venues, counts)}, "venue_names": names, "bytes_on_disk": size,
            "sources": list(self.manifest.sources), "lexical": self.has_lexical,
        }

    # -- search -----------------------------------------------------------------------------
    @property
    def embedder(self):
        if self._embedder is None:
            # the exact onnx twin of a torch index where it is exported: the same vectors without torch
            self._embedder = Embedder(route=query_route(self.manifest.model_id, self.query_embedding),
                                      model=model_key(self.manifest.model_id))
        return self._embedder

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.embedder.encode(list(texts))

    def embed_queries(self, query_embedding: str) -> None:
        """Embed queries "exact"ly (the index's own vectors) or on "int8"; before the first query only."""
        if query_embedding != self.query_embedding:
            self.query_embedding = query_embedding
            self._embedder = None

    def keep_query_vectors(self, cache_dir: Path) -> None:
        """Keep the vectors of text embedded through this index in `cache_dir`, across processes (exact float32).

        A second `peerlint check` of an unchanged paper then loads no embedding model at all.
        """
        if not isinstance(self.embedder, PersistentEmbedder):
            self._embedder = PersistentEmbedder(self.embedder, cache_dir / FILE_NAME)

    def allowed_mask(self, flt: SearchFilter | None) -> np.ndarray | None:
        """Per-paper boolean mask for a filter, or None when nothing is filtered."""
        if flt is None:
            return None
        mask = np.ones(len(self.ids), dtype=bool)
        touched = False
        if flt.venues:
            wanted = {v.lower() for v in flt.venues}
            mask &= np.array([v in wanted for v in self.venues], dtype=bool)
            touched = True
        if flt.year_min is not None:
            mask &= self.years >= flt.year_min
            touched = True
        if flt.year_max is not None:
            mask &= (self.years >= 0) & (self.years <= flt.year_max)
            touched = True
        if flt.before:
            year, date = parse_before(flt.before)
            dated = self.dates != ""
            by_date = np.array([d < date if date and d else False for d in self.dates], dtype=bool)
            by_year = (self.years >= 0) & (self.years < year)
            mask &= np.where(dated & bool(date), by_date, by_year)
            touched = True
        for pid in flt.exclude_ids:
            idx = self.id_to_idx.get(pid)
            if idx is not None:
                mask[idx] = False
                touched = True
        return mask if touched else None

    def search_vector(self, query: np.ndarray, k: int = 10, flt: SearchFilter | None = None,
                      exact: bool = False) -> list[Hit]:
        """Top-k papers (best chunk each) by cosine similarity, honouring the filter."""
        return [self.hit(p, sim, key) for p, sim, key in self.dense_ranked(query, k, flt, exact)]

    def dense_ranked(self, query: np.ndarray, k: int = 10, flt: SearchFilter | None = None,
                     exact: bool = False) -> list[tuple[int, float, int]]:
        """(paper idx, cosine, best chunk key) of the top-k papers, without reading their metadata:
        hybrid search takes 100 dense candidates and keeps a few, so building a `Hit` (a SQLite row)
        for each cost more than the graph search itself."""
        return self.dense_ranked_many(np.asarray(query, dtype=np.float32).reshape(1, -1), k, flt, exact)[0]

    def dense_ranked_many(self, queries: np.ndarray, k: int = 10, flt: SearchFilter | None = None,
                          exact: bool = False) -> list[list[tuple[int, float, int]]]:
        """`dense_ranked` of each row of `queries`, the graph searched once for all of them on every
        core: a draft's ~150 paragraphs took 1.6 ms each one by one, ~0.6 ms batched (the same keys)."""
        queries = np.asarray(queries, dtype=np.float32)
        if queries.ndim != 2 or queries.shape[1] != self.manifest.dim:
            raise ValueError(f"query has {queries.shape[-1]} dimensions, the index has {self.manifest.dim}")
        mask = self.allowed_mask(flt)
        n_chunks = len(self.chunk_paper)
        if n_chunks == 0 or k <= 0 or not len(queries):
            return [[] for _ in queries]
        if exact or (mask is not None and mask.mean() < EXACT_FRACTION):
            return self._exact_many(queries, k, mask)
        fetch = min(n_chunks, max(4 * k, 32))
        found = self._hnsw.search(queries, fetch, threads=0)
        keys = [found.keys] if len(queries) == 1 else [found.keys[i][: found.counts[i]] for i in range(len(queries))]
        return [self._rerank(q, np.asarray(key, dtype=np.int64), fetch, k, mask) for q, key in zip(queries, keys)]

    def _rerank(self, query: np.ndarray, keys: np.ndarray, fetch: int, k: int,
                mask: np.ndarray | None) -> list[tuple[int, float, int]]:
        """The top-k papers among a graph search's `fetch` candidate chunks, re-ranked exactly; searched
        again 4x deeper while filtering leaves fewer than k papers."""
        n_chunks = len(self.chunk_paper)
        while True:
            if len(keys) < fetch:  # the graph reaches fewer vectors than it holds (seen on small, threaded builds)
                return self._exact(query, k, mask)
            keys = np.sort(keys)  # sorted: file order
            sims = np.asarray(self.vectors.rows(keys), dtype=np.float32) @ query
            order = np.argsort(-sims, kind="stable")
            ranked = self._collect(keys[order], sims[order], k, mask)
            if len(ranked) >= k or fetch >= n_chunks:
                return ranked
            if fetch >= 4096:
                return self._exact(query, k, mask)
            fetch = min(n_chunks, fetch * 4)
            keys = np.asarray(self._hnsw.search(query, fetch).keys, dtype=np.int64)

    def lexical_scores(self, text: str, flt: SearchFilter | None = None) -> lexical.LexicalScores:
        """BM25 score of every paper the filter allows that matches a word of `text`, by paper idx.

        Empty when the text has no content words (empty, pure math) or the index has no BM25 table."""
        scores = self._lexical.query(text) if self._lexical is not None else None
        if scores is None:
            return lexical.LexicalScores(np.zeros(0, dtype=np.float32))
        return scores.masked(self.allowed_mask(flt))

    def titled(self, text: str, flt: SearchFilter | None = None) -> list[int]:
        """The papers whose title is `text`, as `normalise_title` reads both (case, accents, punctuation
        aside), that the filter allows; none without the BM25 table, whose title phrases find them."""
        wanted = normalise_title(text)
        phrase = lexical.title_phrase(text) if self._lexical is not None and wanted else None
        if phrase is None:
            return []
        mask = self.allowed_mask(flt)
        rows = self._db.execute(f"SELECT idx, title FROM papers WHERE idx IN (SELECT rowid FROM {lexical.TABLE} "
                                f"WHERE {lexical.TABLE} MATCH ?)", (phrase,)).fetchall()
        return sorted(int(i) for i, title in rows if normalise_title(title) == wanted and (mask is None or mask[int(i)]))

    def lexical_search(self, text: str, k: int = 10, flt: SearchFilter | None = None) -> list[tuple[int, float]]:
        """Top-k (paper idx, BM25 score) for the words of `text`, honouring the filter."""
        return self.lexical_scores(text, flt).top(k)

    def best_chunks(self, query: np.ndarray, papers: Sequence[int]) -> dict[int, tuple[float, int]]:
        """Exact cosine of each paper's best chunk with the query, and that chunk's key: what dense search
        reports. One read of every candidate's chunks and numpy segment maxima (the first best chunk on
        ties), not a loop per paper: hybrid search asks this for ~200 papers per paragraph."""
        papers_arr = np.asarray([int(p) for p in papers], dtype=np.int64)
        if not len(papers_arr):
            return {}
        query = np.asarray(query, dtype=np.float32).reshape(-1)
        starts, counts = self.chunk_ptr[papers_arr], self.chunk_ptr[papers_arr + 1] - self.chunk_ptr[papers_arr]
        held = counts > 0
        papers_arr, starts, counts = papers_arr[held], starts[held], counts[held]
        if not len(papers_arr):
            return {}
        offsets = np.cumsum(counts) - counts  # where each paper's chunks begin among `rows`
        rows = np.repeat(starts - offsets, counts) + np.arange(int(counts.sum()))
        sims = np.asarray(self.vectors.rows(rows), dtype=np.float32) @ query
        best = np.maximum.reduceat(sims, offsets)
        segment = np.repeat(np.arange(len(papers_arr)), counts)
        at_best = np.flatnonzero(sims == best[segment])
        _, first = np.unique(segment[at_best], return_index=True)
        position = at_best[first]
        return {int(p): (float(best[i]), int(rows[position[i]])) for i, p in enumerate(papers_arr)}

    def hit(self, paper_idx: int, similarity: float, chunk_key: int, score: float | None = None) -> Hit:
        """The `Hit` of one paper through one of its chunks; `score` defaults to the similarity."""
        start, end = self.chunk_spans[int(chunk_key)]
        return Hit(self.paper(paper_idx), float(similarity), int(start), int(end),
                   float(similarity if score is None else score))

    def _exact(self, query: np.ndarray, k: int, mask: np.ndarray | None) -> list[tuple[int, float, int]]:
        return self._exact_many(query.reshape(1, -1), k, mask)[0]

    def _exact_many(self, queries: np.ndarray, k: int, mask: np.ndarray | None) -> list[list[tuple[int, float, int]]]:
        """Exact top-k of each query over the allowed chunks, read and converted once for the batch
        (a selective filter sends a whole draft's paragraphs here)."""
        keys = np.arange(len(self.chunk_paper)) if mask is None else np.nonzero(mask[self.chunk_paper])[0]
        if len(keys) == 0:
            return [[] for _ in queries]
        vectors = np.asarray(self.vectors[keys], dtype=np.float32)
        out = []
        for query in queries:
            sims = vectors @ query
            order = np.argsort(-sims)
            out.append(self._collect(keys[order], sims[order], k, None))
        return out

    def _collect(self, keys, sims, k: int, mask: np.ndarray | None) -> list[tuple[int, float, int]]:
        """The first k distinct allowed papers of chunk keys ranked by similarity: (paper, cosine, key)."""
        papers = self.chunk_paper[np.asarray(keys, dtype=np.int64)]
        seen: set[int] = set()
        out: list[tuple[int, float, int]] = []
        for pidx, key, sim in zip(papers.tolist(), np.asarray(keys).tolist(), np.asarray(sims).tolist()):
            if pidx in seen or (mask is not None and not mask[pidx]):
                continue
            seen.add(pidx)
            out.append((pidx, sim, key))
            if len(out) == k:
                break
        return out

    def search(self, text: str, k: int = 10, flt: SearchFilter | None = None) -> list[Hit]:
        """Dense search by a text; text queries of the product go through `retrieval/retriever.py`."""
        return self.search_vector(self.embed([text])[0], k, flt)

    def close(self) -> None:
        self._db.close()
        self.vectors.close()


COLUMN_BLOCK = 65_536  # rows converted at a time: numpy per block, not a Python call per value


def _unit_means(rows: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The mean of each run of `counts[i]` consecutive `rows`, scaled to unit length; a run of none is zeros."""
    out = np.zeros((len(counts), rows.shape[1]), dtype=np.float32)
    has = counts > 0
    if has.any():
        out[has] = np.add.reduceat(rows, np.concatenate([[0], np.cumsum(counts)[:-1]])[has], axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        out /= np.where(norms > 0, norms, 1.0)
    return out


def _columns(db: sqlite3.Connection, sql: str, dtype, count: int, width: int) -> np.ndarray:
    """`width` numeric columns of `count` rows as one array, filled block by block."""
    out = np.empty((count, width), dtype=dtype)
    cursor, i = db.execute(sql), 0
    while rows := cursor.fetchmany(COLUMN_BLOCK):
        out[i:i + len(rows)] = rows
        i += len(rows)
    return out


@dataclass
class Columns:
    """What opening an index reads of every paper and chunk."""

    ids: list[str]
    venues: np.ndarray  # object: lower-case venue, one shared string per venue
    dates: np.ndarray  # object: ISO date or ""
    years: np.ndarray  # int32, -1 when unknown
    chunks: np.ndarray  # int64 (chunks, 3): paper index, start, end


def columns_from_sqlite(db: sqlite3.Connection) -> Columns:
    """The columns, streamed from meta.sqlite in one pass per table.

    Never all rows at once: at 3M papers, rows fetched as tuples took ~3x the memory of the columns
    they fill; rows come a block at a time."""
    n = db.execute("SELECT COUNT(*) FROM papers").fetchone()[0]
    m = db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
    # one pass over the papers table (its rows hold the abstracts: each pass reads the whole file)
    ids = [""] * n
    venues = np.empty(n, dtype=object)  # venues and dates repeat: one shared string each
    dates = np.empty(n, dtype=object)
    years = np.empty(n, dtype=np.int32)
    venue_of: dict = {}
    date_of: dict = {}
    cursor, i = db.execute("SELECT id, venue, date, IFNULL(year, -1) FROM papers ORDER BY idx"), 0
    while rows := cursor.fetchmany(COLUMN_BLOCK):
        for pid, venue, date, year in rows:
            ids[i] = pid
            venues[i] = venue_of.get(venue) or venue_of.setdefault(venue, (venue or "").lower())
            dates[i] = date_of.get(date) or date_of.setdefault(date, date or "")
            years[i] = year
            i += 1
    chunks = _columns(db, "SELECT paper_idx, start, end FROM chunks ORDER BY key", np.int64, m, width=3)
    return Columns(ids, venues, dates, years, chunks)


COLUMNS_FILE = "columns.npz"


def _coded(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Repeating strings as (codes, the distinct strings)."""
    names, codes = np.unique(values.astype(str), return_inverse=True)
    return codes.astype(np.int32), names


def write_columns(build: Path) -> None:
    """`columns.npz` beside a finished build's meta.sqlite, with that file's size to tell a stale copy."""
    meta = build / "meta.sqlite"
    db = sqlite3.connect(f"file:{meta}?mode=ro", uri=True)
    try:
        columns = columns_from_sqlite(db)
    finally:
        db.close()
    venue_codes, venue_names = _coded(columns.venues)
    date_codes, date_names = _coded(columns.dates)
    tmp = build / f"{COLUMNS_FILE}.tmp{os.getpid()}.npz"
    np.savez(tmp, meta_bytes=np.int64(meta.stat().st_size), ids=np.frombuffer("\n".join(columns.ids).encode(), np.uint8),
             venue_codes=venue_codes, venue_names=venue_names, date_codes=date_codes, date_names=date_names,
             years=columns.years, chunks=_narrow(columns.chunks))
    os.replace(tmp, build / COLUMNS_FILE)


def _narrow(values: np.ndarray) -> np.ndarray:
    """int32 where every value fits (offsets and paper numbers below 2**31): half the file."""
    return values.astype(np.int32) if not values.size or int(values.max()) < 2**31 else values


def read_columns(build: Path) -> Columns | None:
    """The columns of `columns.npz`, or None when it is absent, unreadable or not of this meta.sqlite."""
    try:
        with np.load(build / COLUMNS_FILE, allow_pickle=False) as data:
            if int(data["meta_bytes"]) != (build / "meta.sqlite").stat().st_size:
                return None
            blob = data["ids"].tobytes().decode()
            ids = blob.split("\n") if blob else []
            years, chunks = data["years"], data["chunks"]
            venues = np.array([str(v) for v in data["venue_names"]], dtype=object)[data["venue_codes"]]
            dates = np.array([str(d) for d in data["date_names"]], dtype=object)[data["date_codes"]]
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return None
    if not (len(ids) == len(years) == len(venues) == len(dates)) or chunks.ndim != 2 or chunks.shape[1] != 3:
        return None
    return Columns(ids, venues, dates, years.astype(np.int32, copy=False), chunks.astype(np.int64, copy=False))


def open_index(root: Path | str, embedder=None, read_ahead: bool = True) -> VectorIndex:
    return VectorIndex(Path(root), embedder, read_ahead)


def graph_dtype(vectors: int) -> str:
    """The scalars a graph of `vectors` vectors stores (int8 from LARGE_INDEX_VECTORS on)."""
    return graph_settings(vectors)["dtype"]


def graph_settings(vectors: int) -> dict:
    """The HNSW settings of a graph of `vectors` vectors."""
    return HNSW | (HNSW_LARGE if vectors >= LARGE_INDEX_VECTORS else {"dtype": "f16"})


def new_graph(dim: int, vectors: int, dtype: str | None = None):
    """An empty HNSW graph with the settings for an index of `vectors` vectors."""
    from usearch.index import Index

    settings = graph_settings(vectors) | ({"dtype": dtype} if dtype else {})
    return Index(ndim=dim, metric="cos", dtype=settings["dtype"], connectivity=settings["connectivity"],
                 expansion_add=settings["expansion_add"], expansion_search=settings["expansion_search"])


def write_build(build: Path, papers: Sequence[Paper], content_hashes: Sequence[str],
                chunk_rows: Sequence[tuple[int, int, int, str]], vectors: np.ndarray, manifest: Manifest,
                progress=None, alongside: Callable[[], object] | None = None) -> None:
    """Write one complete build directory; the caller makes it live only after this returns.

    The HNSW graph is built beside the metadata, BM25 and then `alongside` (the entity postings)
    written here: on two cores the slower of the two, not their sum. A small graph grows on a thread;
    a large one in a child process (graph_child.py says why). An error on either side is raised here,
    after both have stopped."""
    build.mkdir(parents=True)
    np.save(build / "vectors.npy", np.asarray(vectors, dtype=np.float16))
    failed: list[BaseException] = []
    child = _graph_child(build, manifest.dim, len(vectors)) if len(vectors) >= GRAPH_CHILD_FROM else None

    def graph() -> None:
        try:
            if child is None:
                write_graph(build, manifest.dim, vectors, progress)
            else:
                _follow(child, progress)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread below
            failed.append(exc)

    worker = threading.Thread(target=graph, name="peerlint-hnsw", daemon=True)
    worker.start()
    try:
        write_metadata(build, papers, content_hashes, chunk_rows)
        if alongside is not None:
            alongside()
    finally:
        if child is not None and sys.exc_info()[0] is not None:
            child.kill()  # the build failed or was interrupted here: the graph is not needed
        worker.join()
    if failed:
        raise failed[0]
    seal_build(build, manifest)


GRAPH_CHILD_FROM = 50_000  # vectors: from here on the graph is built in a child process


def _graph_child(build: Path, dim: int, vectors: int) -> subprocess.Popen:
    log = tempfile.TemporaryFile()
    child = subprocess.Popen([sys.executable, "-m", "peerlint.index.graph_child", str(build), str(dim), graph_dtype(vectors)],
                             stdout=subprocess.PIPE, stderr=log, text=True)
    child.log = log  # what it says on stderr, read when it fails
    return child


def _follow(child: subprocess.Popen, progress) -> None:
    """Pass the child's "<done> <total>" lines to `progress` until it ends; an OSError with its last
    words when it failed; a child that cannot be followed is stopped."""
    try:
        for line in child.stdout:
            done, total = (int(x) for x in line.split())
            if progress is not None:
                progress(done, total)
    except BaseException:
        child.kill()
        raise
    with child.log:
        child.log.seek(0)
        err = child.log.read().decode(errors="replace")
    if child.wait() != 0:
        raise OSError(f"building the HNSW graph failed (exit {child.returncode}): "
                      f"{err.strip().splitlines()[-1] if err.strip() else 'no message'}")


def write_graph(build: Path, dim: int, vectors: np.ndarray, progress=None, dtype: str | None = None) -> None:
    hnsw = new_graph(dim, len(vectors), dtype)
    if len(vectors):
        hnsw.add(np.arange(len(vectors), dtype=np.uint64), vectors, progress=progress, threads=insert_threads(len(vectors)))
    hnsw.save(str(build / "vectors.usearch"))


def write_metadata(build: Path, papers: Sequence[Paper], content_hashes: Sequence[str],
                   chunk_rows: Sequence[tuple[int, int, int, str]]) -> None:
    """meta.sqlite: the papers, their chunks and the BM25 table (with its postings beside it)."""
    db = sqlite3.connect(build / "meta.sqlite")
    with db:
        db.execute("""CREATE TABLE papers (idx INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, title TEXT,
            abstract TEXT, venue TEXT, year INTEGER, status TEXT, authors TEXT, keywords TEXT, url TEXT,
            rating_avg REAL, citations INTEGER, date TEXT, refs TEXT, content_hash TEXT, doi TEXT, arxiv_id TEXT,
            categories TEXT)""")
        db.execute("CREATE TABLE chunks (key INTEGER PRIMARY KEY, paper_idx INTEGER, start INTEGER, end INTEGER, text_hash TEXT)")
        insert_rows(db, papers, content_hashes, chunk_rows, first_paper=0, first_chunk=0)
        db.execute("CREATE INDEX chunks_paper ON chunks(paper_idx)")
        lexical.write_table(db, ((i, p.title, p.abstract) for i, p in enumerate(papers)))  # BM25, same transaction
    db.close()


def insert_rows(db: sqlite3.Connection, papers: Sequence[Paper], content_hashes: Sequence[str],
                chunk_rows: Sequence[tuple[int, int, int, str]], first_paper: int, first_chunk: int) -> None:
    """Insert papers and chunks numbered from `first_paper`/`first_chunk` (chunk rows hold paper numbers
    relative to `papers`); generators, so 3M rows never sit in memory as tuples. A table copied from an index
    written before DOIs were kept gains their columns first (its earlier papers keep none)."""
    have = {row[1] for row in db.execute("PRAGMA table_info(papers)")}
    for column in ("doi", "arxiv_id", "categories"):
        if column not in have:
            db.execute(f"ALTER TABLE papers ADD COLUMN {column} TEXT")
    db.executemany(
        "INSERT INTO papers VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        ((first_paper + i, p.id, p.title, p.abstract, p.venue, p.year, p.status, json.dumps(list(p.authors)),
          json.dumps(list(p.keywords)), p.url, p.rating_avg, p.citations, p.date,
          json.dumps(list(p.references)), h, p.doi, p.arxiv_id, json.dumps(list(p.categories)))
         for i, (p, h) in enumerate(zip(papers, content_hashes))),
    )
    db.executemany("INSERT INTO chunks VALUES (?,?,?,?,?)",
                   ((first_chunk + k, first_paper + row[0], *row[1:]) for k, row in enumerate(chunk_rows)))


def seal_build(build: Path, manifest: Manifest) -> None:
    """Write the manifest and flush every file of a finished build to disk, before it can be made live."""
    write_columns(build)
    (build / "manifest.json").write_text(json.dumps(manifest.__dict__ | {"sources": list(manifest.sources)}, indent=1))
    for f in build.iterdir():
        with open(f, "rb") as fh:
            os.fsync(fh.fileno())


SMALL_GRAPH = 10_000  # vectors: a graph this small is built on one thread


def insert_threads(n: int) -> int:
    """Threads for inserting `n` vectors (0: all cores). Concurrent insertion into a small graph left some
    builds with nodes the search could not reach (a paper's own abstract not its first hit, 39 of 40
    results), varying from build to build; one thread builds the same graph every time, in seconds."""
    return 1 if n <= SMALL_GRAPH else 0


PREFETCH_SHARE = 0.25  # index files up to this share of the memory available at open are read ahead


def available_memory() -> int:
    """Bytes the kernel could give without swapping (MemAvailable), else free pages; 0 when unknown."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        return 0


BUILD_NAME = re.compile(r"\d{8}T\d{6}-[0-9a-f]{6}")  # what build_index names a build folder
KEEP_RECENT_S = 3600  # old builds younger than this are kept for readers that still have them open


def make_live(root: Path, build: Path) -> None:
    """Point CURRENT at `build` atomically, then drop old builds.

    The build CURRENT pointed at until now, and any build younger than `KEEP_RECENT_S`, stay: another
    process (an editor's server, a second test session) may still be reading them."""
    import shutil

    try:
        previous = (root / "CURRENT").read_text().strip()
    except OSError:
        previous = ""
    tmp = root / f"CURRENT.tmp{os.getpid()}"
    tmp.write_text(build.name)
    with open(tmp, "rb") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, root / "CURRENT")
    cutoff = time.time() - KEEP_RECENT_S
    for old in (root / "builds").iterdir():
        if old.name in (build.name, previous) or not BUILD_NAME.fullmatch(old.name):
            continue  # only what a build made is pruned: an index path pointed at another folder loses nothing
        try:
            if old.stat().st_mtime < cutoff:
                shutil.rmtree(old, ignore_errors=True)
                forget_build(old.name)  # its novelty lexicon, venue heads and calibrations
        except OSError:
            pass
