"""`peerlint bench index --synthetic N --scale`: an N-vector index on disk, searched as the server searches it.

What `bench.py`'s synthetic rows measure is a graph held in the bench's own memory; this measures the
product's path at research scale:
1. N synthetic papers, one chunk each: titles and abstracts recycled from the shipped corpus (so BM25
   sees real word statistics, each text ~N/17,630 times), chunk vectors from `synthetic.near_real`
   (drawn between neighbouring MiniLM vectors of the shipped corpus, plus noise), written by the
   index's own writer (`finish_build`; the SEC entity postings are skipped) under `--work`, and kept
   there so a second run reuses the build;
2. a fresh process opens it with `VectorIndex` (graph and vectors memory-mapped) and measures the open
   time, its RSS, dense p50/p99 and recall@10 against exact search over the stored float16 vectors (at the
   store's search beam: a first pass over pages not yet read, then the same queries again, warm; then
   at the `SWEEP_BEAMS`), and
   lexical (BM25) p50/p99 for 200 abstracts: the server's memory, not the builder's;
3. 2,000 new papers appended to it (`append_build`: copy, grow the graph and the BM25 table), timed, beside
   the full build's time, and the grown index opened again.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np
from ...hashing import text_hash
from ...index.append import append_build
from ...index.build import finish_build, new_build_id, build_index
from ...index.distributed.ray_build import RayOptions, ray_build_index
from ...index.embedding.embedder import Embedder
from ...index.store import current_build, IndexError_, make_live, HNSW, VectorIndex
from ..harness.results import peak_rss_mb, print_table, status_kib
from .synthetic import near_real, exact_top_k, latency_percentiles

APPEND_PAPERS = 2000
BLOCK = 500_000  # vectors generated per block: 3M never sit in memory as float32
LEXICAL_QUERIES = 200
SWEEP_BEAMS = (64, 128, 192, 256)  # search beams also measured on the built graph (the store's own is the main row)
SWEEP_QUERIES = 200


def _log(message: str) -> None:
    print(f"bench index: {message}", file=sys.stderr, flush=True)


def synthetic_papers(shipped: Sequence, first: int, count: int) -> tuple[list, list[str], list[tuple[int, int, int, str]]]:
    """`count` papers numbered from `first`, each recycling a shipped paper's text (shared strings: ~150 B a paper)."""
    import dataclasses


    hashes = [text_hash(p.text) for p in shipped]
    papers, content, rows = [], [], []
    for i in range(count):
        src = shipped[(first + i) % len(shipped)]
        papers.append(dataclasses.replace(src, id=f"syn{first + i:08d}"))
        content.append(hashes[(first + i) % len(shipped)])
        rows.append((i, 0, len(src.text), hashes[(first + i) % len(shipped)]))
    return papers, content, rows


def synthetic_vectors(n: int, n_queries: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """n float16 base vectors and n_queries held-out float32 queries, all drawn around the shipped MiniLM vectors."""

    base = np.empty((n, 384), dtype=np.float16)
    for lo in range(0, n, BLOCK):
        base[lo : min(n, lo + BLOCK)] = near_real(min(n, lo + BLOCK) - lo, rng)
    return base, near_real(n_queries, rng)


def build_synthetic(root: Path, n: int, n_queries: int, rng: np.random.Generator, shipped) -> dict[str, Any]:
    """Write (or reuse) the N-paper index under `root`; its queries and exact top-10 are kept beside it."""

    marker = root / "scale-queries.npz"
    try:  # a finished build is reused, with the live index pointed back at it if a run appended to it
        info = json.loads((root / "scale-build.json").read_text())
        base = root / "builds" / info["build"]
        if marker.exists() and info["papers"] == n and json.loads((base / "manifest.json").read_text())["papers"] == n:
            if current_build(root) != base:
                make_live(root, base)
            _log(f"reusing the {n:,}-paper index at {root}")
            return info
    except (IndexError_, OSError, ValueError, KeyError):
        pass
    t0 = time.perf_counter()
    base, queries = synthetic_vectors(n, n_queries, rng)
    gen_s = time.perf_counter() - t0
    _log(f"{n:,} vectors generated in {gen_s:.0f} s; exact top-10 of {n_queries} queries")
    t0 = time.perf_counter()
    truth, _ = exact_top_k(base, queries, 10)
    truth_s = time.perf_counter() - t0
    papers, content, rows = synthetic_papers(shipped, 0, n)
    _log(f"writing the index ({n:,} papers) with the index's own writer")
    t0 = time.perf_counter()
    (root / "builds").mkdir(parents=True, exist_ok=True)
    build = finish_build(root, papers, content, rows, base, "synthetic@near-real", ["bench-scale"], 200,
                         show_progress=sys.stderr.isatty(), entities=False)
    build_s = time.perf_counter() - t0
    np.savez(marker, queries=queries, truth=truth)
    info = {"papers": n, "generate_seconds": round(gen_s, 1), "exact_truth_seconds": round(truth_s, 1),
            "build_seconds": round(build_s, 1), "build": build.name, "peak_rss_mb": peak_rss_mb(),
            "files_bytes": {f.name: f.stat().st_size for f in build.iterdir() if f.is_file()}}
    (root / "scale-build.json").write_text(json.dumps(info))
    _log(f"built in {build_s:.0f} s")
    return info


def probe(root: Path, lexical_texts: Sequence[str], n_queries: int | None = None) -> dict[str, Any]:
    """Run in a fresh process: open the index as the server does and measure memory and latency."""
    import psutil


    process = psutil.Process()
    rss0 = process.memory_info().rss
    t0 = time.perf_counter()
    index = VectorIndex(root)
    open_s = time.perf_counter() - t0
    rss_open = process.memory_info().rss
    marker = np.load(root / "scale-queries.npz")
    queries, truth = marker["queries"], marker["truth"]
    if n_queries:
        queries, truth = queries[:n_queries], truth[:n_queries]
    for q in queries[:20]:
        index.search_vector(q, 10)
    times, recall = _dense(index, queries, truth)
    rss_dense = process.memory_info().rss
    warm_times, _ = _dense(index, queries, truth)  # the same queries again: a server open for a while
    sweep = []
    for beam in SWEEP_BEAMS:  # what another search beam would give on this graph, on the first queries
        index._hnsw.expansion_search = beam
        beam_times, beam_recall = _dense(index, queries[:SWEEP_QUERIES], truth[:SWEEP_QUERIES])
        sweep.append({"expansion_search": beam, **latency_percentiles(beam_times), "recall_at_10": beam_recall})
    index._hnsw.expansion_search = HNSW["expansion_search"]
    lex_times = []
    for text in lexical_texts:
        s = time.perf_counter()
        index.lexical_search(text, 10)
        lex_times.append(time.perf_counter() - s)
    out = {"papers": len(index), "vectors": int(len(index.vectors)), "open_seconds": round(open_s, 2),
           "graph_dtype": str(index._hnsw.dtype), "queries": len(queries),
           "expansion_search": HNSW["expansion_search"], "dense": latency_percentiles(times), "recall_at_10": recall,
           "dense_warm": latency_percentiles(warm_times),
           "expansion_sweep": sweep,
           "lexical": latency_percentiles(lex_times) if lex_times else None, "lexical_queries": len(lex_times),
           "rss_mb": {"start": round(rss0 / 2**20, 1), "after_open": round(rss_open / 2**20, 1),
                      "after_dense": round(rss_dense / 2**20, 1),
                      "after_lexical": round(process.memory_info().rss / 2**20, 1)},
           "peak_rss_mb": peak_rss_mb(), "rss_kinds_mb": _rss_kinds()}
    index.close()
    return out


def _rss_kinds() -> dict[str, float]:
    """This process's resident memory split as Linux counts it: RssAnon (its own heap: ids, metadata
    arrays) and RssFile (pages of the memory-mapped graph, vectors and postings, which the kernel
    drops under memory pressure and reads back on demand)."""
    return {key[3:].lower(): round(kib / 1024, 1) for key, kib in status_kib("RssAnon", "RssFile", "RssShmem").items()}


def _dense(index, queries: np.ndarray, truth: np.ndarray) -> tuple[list[float], float]:
    """Seconds of each top-10 dense search as the server runs it, and mean recall@10 against `truth`."""
    times, recall = [], []
    for q, t in zip(queries, truth):
        s = time.perf_counter()
        hits = index.search_vector(q, 10)
        times.append(time.perf_counter() - s)
        found = {index.id_to_idx[h.paper.id] for h in hits}  # one chunk per paper: paper idx == vector key
        recall.append(len(found & set(t.tolist())) / 10)
    return times, round(float(np.mean(recall)), 4)


def _probe_in_subprocess(root: Path, lexical_texts: Sequence[str], n_queries: int | None = None) -> dict[str, Any]:
    request = root / "scale-lexical.json"
    request.write_text(json.dumps(list(lexical_texts)))
    cmd = [sys.executable, "-m", "peerlint.benchmarks.index.scale", str(root), str(request)] + ([str(n_queries)] if n_queries else [])
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"scale probe failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout)


def append_papers(root: Path, n: int, rng: np.random.Generator, shipped) -> dict[str, Any]:
    """Append APPEND_PAPERS new papers to the N-paper index without a rebuild; the time of each step."""

    live = json.loads((current_build(root) / "manifest.json").read_text())
    papers, content, rows = synthetic_papers(shipped, live["papers"], APPEND_PAPERS)
    vectors = near_real(APPEND_PAPERS, rng)
    t0 = time.perf_counter()
    build = append_build(root, new_build_id(), papers, content, rows, vectors, ["bench-scale", "append"])
    seconds = time.perf_counter() - t0
    _log(f"appended {APPEND_PAPERS} papers to {live['papers']:,} in {seconds:.1f} s")
    return {"appended": APPEND_PAPERS, "to_papers": live["papers"], "seconds": round(seconds, 2), "build": build.name}


def run_scale(args, shipped, lexical_texts: Sequence[str]) -> dict[str, Any]:
    """The whole measurement; the payload for results/bench-index-scale-*.json."""
    n = args.synthetic
    root = Path(args.work or Path(os.environ.get("TMPDIR", "/tmp")) / f"peerlint-scale-{n}")
    rng = np.random.default_rng(0)
    load = [round(x, 2) for x in os.getloadavg()]
    build = build_synthetic(root, n, args.queries, rng, shipped)
    _log("opening it in a fresh process, as the server does")
    search = _probe_in_subprocess(root, lexical_texts)
    _log(f"dense p50 {search['dense']['p50_ms']} ms, recall@10 {search['recall_at_10']}, "
         f"lexical p50 {search['lexical']['p50_ms']} ms, RSS {search['rss_mb']['after_lexical']} MB")
    append = append_papers(root, n, rng, shipped)
    after = _probe_in_subprocess(root, lexical_texts[:20], n_queries=100)
    append["after"] = {"papers": after["papers"], "dense_p50_ms": after["dense"]["p50_ms"],
                       "recall_at_10": after["recall_at_10"]}
    return {"dataset": {"synthetic_papers": n, "text": "shipped abstracts recycled", "vectors": "near_real_vectors around the shipped MiniLM vectors"},
            "work": str(root), "build": build, "search": search, "append": append,
            "targets": {"rss_mb": 4096, "dense_p50_ms": 2.0, "recall_at_10": 0.95, "lexical_p50_ms": 50.0},
            "load_average_at_start": load, "load_average_at_end": [round(x, 2) for x in os.getloadavg()]}


def print_scale(payload: dict[str, Any], path: Path) -> None:
    s, b, a = payload["search"], payload["build"], payload["append"]
    rows = [["open (fresh process)", s["open_seconds"] * 1000, None, None, s["rss_mb"]["after_open"]],
            [f"dense k=10 ({s['graph_dtype']} graph, exact re-rank)", s["dense"]["p50_ms"], s["dense"]["p99_ms"],
             s["recall_at_10"], s["rss_mb"]["after_dense"]],
            ["lexical BM25 k=10", s["lexical"]["p50_ms"], s["lexical"]["p99_ms"], None, s["rss_mb"]["after_lexical"]]]
    print_table(rows, ["step", "p50 ms", "p99 ms", "recall@10", "RSS MB"],
                title=f"{s['vectors']:,} vectors, {s['papers']:,} papers, memory-mapped (targets: RSS ≤ 4096 MB, "
                      f"dense p50 < 2 ms, recall ≥ 0.95, lexical p50 < 50 ms)")
    if "dense_warm" in s:
        print(f"dense k=10, the same queries again (warm): p50 {s['dense_warm']['p50_ms']} ms, p99 {s['dense_warm']['p99_ms']} ms")
    print(f"full build {b['build_seconds']:.0f} s; appending {a['appended']:,} papers {a['seconds']:.1f} s "
          f"(then {a['after']['papers']:,} papers, dense p50 {a['after']['dense_p50_ms']} ms); peak RSS {s['peak_rss_mb']:.0f} MB")
    print("search beam (expansion_search) on the first queries: " + "; ".join(
        f"{b['expansion_search']}: p50 {b['p50_ms']} ms, recall@10 {b['recall_at_10']}" for b in s.get("expansion_sweep", [])))
    print(f"results: {path}")


class TreeCpu:
    """CPU seconds this process and every process it starts (Ray's raylet, workers, actors) spend inside the block.

    Wall time on a shared 2-core machine measures the neighbours as much as the build; CPU seconds of the
    whole process tree say what the build itself burned. Children are sampled every half second (their
    counters vanish when they exit), so a process that lives under half a second may be missed."""

    def __init__(self, every_s: float = 0.5):
        import psutil

        self._me, self._every, self._seen, self._base = psutil.Process(), every_s, {}, {}
        self.seconds = 0.0

    def _sample(self, into: dict) -> None:
        import psutil

        for proc in [self._me, *self._me.children(recursive=True)]:
            try:
                t = proc.cpu_times()
                into[(proc.pid, proc.create_time())] = t.user + t.system
            except psutil.Error:
                pass

    def __enter__(self) -> "TreeCpu":
        import threading

        self._sample(self._base)
        self._stop = threading.Event()

        def loop() -> None:
            while not self._stop.wait(self._every):
                self._sample(self._seen)

        self._thread = threading.Thread(target=loop, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._sample(self._seen)
        self.seconds = sum(v - self._base.get(k, 0.0) for k, v in self._seen.items())


def run_engines(args, shipped) -> dict[str, Any]:
    """Ray local mode against the single-process build: same papers, same route, cold caches; docs/s by the
    wall clock and by the CPU seconds of the whole process tree (Ray's processes included)."""
    import shutil
    import tempfile


    papers = list(shipped[: args.engines])
    route = args.routes.split(",")[0].strip()
    load = [round(x, 2) for x in os.getloadavg()]
    out: dict[str, Any] = {"papers": len(papers), "route": route, "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory(prefix="peerlint-engines-") as tmp:
        embedder = Embedder(route)
        embedder.encode(["warm-up"])  # the model load is not the build
        t0 = time.perf_counter()
        with TreeCpu() as cpu:
            single = build_index(papers, Path(tmp) / "single", embedder, ["bench"], show_progress=False, shipped_vectors=False)
        seconds = time.perf_counter() - t0
        out["single"] = {"seconds": round(seconds, 2), "chunks": single.chunks, "cpu_seconds": round(cpu.seconds, 1),
                         "docs_per_s": round(len(papers) / seconds, 2)}
        _log(f"single process: {out['single']['docs_per_s']} docs/s, {cpu.seconds:.0f} CPU s")
        import ray

        t0 = time.perf_counter()
        ray.init(num_cpus=os.cpu_count(), include_dashboard=False, log_to_driver=False)
        out["ray_start_seconds"] = round(time.perf_counter() - t0, 2)
        try:
            for workers in sorted({1, os.cpu_count() or 1}):
                root = Path(tmp) / f"ray-{workers}"
                t0 = time.perf_counter()
                with TreeCpu() as cpu:
                    report = ray_build_index(papers, root, embedder, ["bench"], RayOptions(workers=workers), show_progress=False)
                seconds = time.perf_counter() - t0
                out[f"ray_{workers}_workers"] = {"seconds": round(seconds, 2), "chunks": report.chunks,
                                                 "pipeline_seconds": round(report.embed_seconds, 2),
                                                 "cpu_seconds": round(cpu.seconds, 1),
                                                 "docs_per_s": round(len(papers) / seconds, 2),
                                                 "ratio_vs_single": round(out["single"]["seconds"] / seconds, 3),
                                                 "cpu_ratio_vs_single": round(out["single"]["cpu_seconds"] / cpu.seconds, 3)}
                _log(f"ray, {workers} workers: {out[f'ray_{workers}_workers']['docs_per_s']} docs/s, {cpu.seconds:.0f} CPU s")
                shutil.rmtree(root, ignore_errors=True)
        finally:
            ray.shutdown()
    out["load_average_at_start"], out["load_average_at_end"] = load, [round(x, 2) for x in os.getloadavg()]
    out["target_ratio_vs_single"] = 0.85
    return out


def print_engines(payload: dict[str, Any], path: Path) -> None:
    single = payload["single"]
    rows = [["single process (build_index)", single["docs_per_s"], single["seconds"], 1.0, single["cpu_seconds"], 1.0]]
    rows += [[f"ray local, {k.split('_')[1]} workers", v["docs_per_s"], v["seconds"], v["ratio_vs_single"],
              v["cpu_seconds"], v["cpu_ratio_vs_single"]]
             for k, v in payload.items() if k.startswith("ray_") and k.endswith("workers")]
    print_table(rows, ["engine", "docs/s", "seconds", "x single", "CPU s", "x single (CPU)"],
                title=f"{payload['papers']} papers, route {payload['route']}, cold caches (target: Ray ≥ 0.85x single); "
                      f"Ray start {payload['ray_start_seconds']} s, load {payload['load_average_at_start']}")
    print(f"results: {path}")


if __name__ == "__main__":  # the probe, run by _probe_in_subprocess
    texts = json.loads(Path(sys.argv[2]).read_text())
    print(json.dumps(probe(Path(sys.argv[1]), texts, int(sys.argv[3]) if len(sys.argv) > 3 else None)))
