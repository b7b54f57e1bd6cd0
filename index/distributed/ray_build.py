"""`peerlint index build --engine ray`: chunk and embed on a Ray cluster, then write one ordinary index.

Why Ray Data: when a corpus outgrows one machine's embedding speed (arXiv's 2.7M abstracts are a day
on one 2-core machine), an existing engine schedules the work, restarts dead workers and streams
results back; peerlint only says what a shard is. The pipeline:

    read      the driver reads and normalises the corpus with peerlint's own loaders (one view of all
              files: duplicates across files are merged there) and cuts it into shards (shards.py);
    chunk     a Ray task per shard splits its texts into model-token spans, exactly as `build_index`;
    embed     a pool of `--workers` actors, each holding the model once, embeds a shard's chunks;
    write     the driver writes each finished shard atomically under `<index>/distributed/<key>/`;
    merge     one writer (`build.finish_build`, the single-process build's own) writes the USearch
              graph, SQLite metadata and BM25 table and swaps CURRENT.

A rerun of an interrupted build skips the shards already written; a dead worker is restarted by Ray
and its shard retried. The merged vectors also go into the index's embedding cache, so a later
single-process build of the same corpus embeds nothing.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from ..build import BuildReport, finish_build
from ..embedding.cache import EmbeddingCache
from ..embedding.embedder import DIM, Embedder
from ...hashing import text_hash
from ..papers import Paper
from .shards import SHARD_PAPERS, Shard, ShardChunks, finished, plan_shards, read_shard, work_dir, write_shard

INSTALL_HINT = "the Ray engine needs Ray: run `pip install 'peerlint[scale]'` (or drop --engine ray)"


class RayUnavailable(RuntimeError):
    """Ray is not installed, the cluster cannot be reached, or the pipeline failed; the message names the fix."""


@dataclass(frozen=True)
class RayOptions:
    address: str | None = None  # a running cluster ("ray://host:10001", "auto"); None starts one here
    workers: int | None = None  # embedding actors; None: one per CPU the cluster has
    shard_papers: int = SHARD_PAPERS  # papers per shard, the unit of resume


def _ray():
    try:
        import ray
        import ray.data  # noqa: F401  (the extra installs both; a bare `ray` lacks Ray Data)
    except ImportError:
        raise RayUnavailable(INSTALL_HINT) from None
    return ray


_SPLITTERS: dict[str, Embedder] = {}


def chunk_shard(row: dict) -> dict:
    """Ray task: a shard's texts -> its chunks (paper within the shard, start, end, text), as build_index cuts them."""
    route, max_tokens = row["route"], int(row["max_tokens"])
    splitter = _SPLITTERS.setdefault(route, Embedder(route))  # the tokenizer only, once per worker process
    paper, start, end, texts = [], [], [], []
    for i, (text, spans) in enumerate(zip(row["texts"], splitter.split_many(list(row["texts"]), max_tokens))):
        for s in spans:
            paper.append(i)
            start.append(s.start)
            end.append(s.end)
            texts.append(text[s.start : s.end])
    return {"number": row["number"], "route": route, "paper": paper, "start": start, "end": end, "chunk_texts": texts}


class EmbedWorker:
    """Ray actor: loads the embedding model once and embeds whole shards."""

    def __init__(self, route: str, threads: int):
        self.embedder = Embedder(route, threads=threads)

    def __call__(self, row: dict) -> dict:
        texts = list(row["chunk_texts"])
        vectors = self.embedder.encode(texts) if texts else np.zeros((0, DIM), np.float32)
        return {"number": row["number"], "paper": row["paper"], "start": row["start"], "end": row["end"],
                "vectors": np.ascontiguousarray(vectors, dtype=np.float32).tobytes()}


def _per_shard(fn):
    """A one-row pandas batch in, one row out: Ray's batching around a function of one shard."""
    import pandas as pd

    def call(batch):
        return pd.DataFrame([fn(batch.iloc[0].to_dict())])

    return call


class _ShardActor:
    """The actor Ray runs: one `worker` (EmbedWorker or a test's subclass) fed one-row batches."""

    def __init__(self, worker: type, route: str, threads: int):
        self.worker = worker(route, threads)

    def __call__(self, batch):
        return _per_shard(self.worker)(batch)


def _rows(ds):
    """Each shard's row as soon as Ray has it (no prefetching: a shard is written before the next fails)."""
    for batch in ds.iter_batches(batch_size=None, batch_format="pandas", prefetch_batches=0):
        yield from (row for _, row in batch.iterrows())


def _connect(ray, options: RayOptions) -> None:
    if ray.is_initialized():
        return  # a caller (a test, a notebook) already joined a cluster
    os.environ.setdefault("RAY_DEDUP_LOGS", "0")
    try:
        if options.address:
            ray.init(address=options.address, include_dashboard=False, log_to_driver=False)
        else:
            ray.init(include_dashboard=False, log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise RayUnavailable(f"cannot reach the Ray cluster at {options.address or 'this machine'} ({exc}): "
                             "check --address, or leave it out to start Ray here") from None


def run_pipeline(papers: Sequence[Paper], todo: Sequence[Shard], work: Path, route: str, max_tokens: int,
                 options: RayOptions, show_progress: bool, embed_worker: type = EmbedWorker) -> int:
    """Chunk and embed the `todo` shards on Ray, writing each as it arrives; returns the chunks embedded.

    `embed_worker` is the actor class (a subclass lets the tests kill a worker mid-run)."""
    ray = _ray()
    _connect(ray, options)
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    workers = max(1, options.workers or cpus)
    threads = max(1, cpus // workers)
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    ctx.verbose_progress = False
    items = [{"number": s.number, "route": route, "max_tokens": max_tokens,
              "texts": [p.text for p in papers[s.lo : s.hi]]} for s in todo]
    # One shard per task (batch_size=1: Ray would otherwise bundle small blocks, and a failure would lose
    # them all); chunking asks for the actors' resources, so Ray fuses the two stages with no hand-off.
    ds = (ray.data.from_items(items, override_num_blocks=max(1, len(items)))
          .map_batches(_per_shard(chunk_shard), batch_size=1, batch_format="pandas", num_cpus=1)
          .map_batches(_ShardActor, fn_constructor_kwargs={"worker": embed_worker, "route": route, "threads": threads},
                       batch_size=1, batch_format="pandas", compute=ray.data.ActorPoolStrategy(size=workers), num_cpus=1))
    by_number = {s.number: s for s in todo}
    done: set[int] = set()
    embedded, t0 = 0, time.perf_counter()
    papers_todo = sum(s.hi - s.lo for s in todo)
    try:
        for row in _rows(ds):
            embedded += _write_row(row, by_number, done, work)
            if show_progress:
                rate = embedded / max(1e-9, time.perf_counter() - t0)
                papers_done = sum(by_number[n].hi - by_number[n].lo for n in done)
                print(f"ray: shard {len(done)}/{len(todo)} written ({papers_done:,}/{papers_todo:,} papers, "
                      f"{rate:.1f} chunks/s, {workers} workers)", file=sys.stderr, flush=True)
    except Exception as exc:  # a worker's error, a lost cluster: what is written stays for the rerun
        if isinstance(exc, (KeyboardInterrupt, OSError)):
            raise
        errors = [line.strip() for line in str(exc).splitlines() if re.match(r"\s*\w+(Error|Exception): ", line)]
        reason = (errors[-1] if errors else type(exc).__name__)[-300:]  # the worker's own error, under Ray's wrapping
        raise RayUnavailable(f"the Ray pipeline stopped after {len(done)} of {len(todo)} shards ({reason}); they are "
                             f"kept in {work}: run the same command again to finish") from exc
    return embedded


def _write_row(row, by_number: dict[int, Shard], done: set[int], work: Path) -> int:
    """Write one shard's answer (once: a retried task's second answer is dropped); the chunks it adds."""
    shard = by_number[int(row["number"])]
    if shard.number in done:
        return 0
    vectors = np.frombuffer(row["vectors"], dtype=np.float32).reshape(-1, DIM)
    write_shard(work, ShardChunks(shard, np.asarray(row["paper"], dtype=np.int32), np.asarray(row["start"], dtype=np.int64),
                                  np.asarray(row["end"], dtype=np.int64), vectors))
    done.add(shard.number)
    return len(vectors)


def merge_shards(papers: Sequence[Paper], shards: Sequence[Shard], work: Path) -> tuple[list[tuple[int, int, int, str]], np.ndarray]:
    """All shards' chunks in corpus order: chunk rows (paper, start, end, text hash) and their vectors."""
    rows: list[tuple[int, int, int, str]] = []
    parts = []
    for shard in shards:
        chunks = read_shard(work, shard)
        if chunks is None:
            raise RuntimeError(f"shard {shard.number} of {work} is missing after the pipeline finished")
        for rel, start, end in zip(chunks.paper.tolist(), chunks.start.tolist(), chunks.end.tolist()):
            paper = shard.lo + rel
            rows.append((paper, start, end, text_hash(papers[paper].text[start:end])))
        parts.append(chunks.vectors)
    vectors = np.concatenate(parts) if parts else np.zeros((0, DIM), np.float32)
    return rows, vectors


def ray_build_index(papers: Sequence[Paper], root: Path | str, embedder: Embedder, sources: Sequence[str] = (),
                    options: RayOptions = RayOptions(), max_tokens: int = 200, show_progress: bool = True,
                    embed_worker: type = EmbedWorker) -> BuildReport:
    """Build the index of `papers` under `root` with Ray doing the chunking and embedding; same result as build_index."""
    _ray()  # before any work: no Ray, one line naming the extra
    t0 = time.perf_counter()
    root = Path(root)
    (root / "builds").mkdir(parents=True, exist_ok=True)
    content_hashes = [text_hash(p.text) for p in papers]
    shards = plan_shards([p.id for p in papers], content_hashes, options.shard_papers)
    work = work_dir(root, embedder.model_id, max_tokens, shards)
    done = finished(work, shards)
    todo = [s for s in shards if s.number not in done]
    if show_progress:
        print(f"ray: {len(shards)} shards of up to {shards[0].hi - shards[0].lo if shards else 0} papers, "
              f"{len(done)} already written in {work}", file=sys.stderr, flush=True)
    t_embed = time.perf_counter()
    embedded = run_pipeline(papers, todo, work, embedder.route, max_tokens, options, show_progress, embed_worker) if todo else 0
    embed_seconds = time.perf_counter() - t_embed
    rows, vectors = merge_shards(papers, shards, work)
    cache = EmbeddingCache(root / "embeddings.sqlite")
    try:  # a later single-process build of the same corpus then embeds nothing
        cache.put_vectors(embedder.model_id, {r[3]: v for r, v in zip(rows, vectors)})
    finally:
        cache.close()
    finish_build(root, papers, content_hashes, rows, vectors, embedder.model_id, sources, max_tokens, show_progress)
    shutil.rmtree(work, ignore_errors=True)
    return BuildReport(str(root), len(papers), len(rows), embedded, len(rows) - embedded,
                       time.perf_counter() - t0, embed_seconds)
