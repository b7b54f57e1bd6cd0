"""`peerlint bench index`: build speed, retrieval quality cost, index size, search latency and recall.

One run measures, on the same documents:
1. baselines: a plain `SentenceTransformer.encode(text)` loop, one document at a time, and a plain
   `encode(all, batch_size=32)`;
2. for each embedding route, `build_index` docs/s with a cold embedding cache (so it measures
   chunking + embedding + writing, not the cache), its ratio to both baselines, the index size, and
   what the route costs in retrieval: hit@10 of a paper for its own title, overlap@10 of its
   neighbour lists with the torch route's for held-out abstracts, dense R@50 on an ACM-CR
   sub-corpus (acm_recall.py), and its cold start (a fresh process embedding one query), which
   is what `peerlint search` waits for; a route "meets the default rule" at >= 2.5x the loop with
   overlap@10 >= 0.95 and R@50 loss <= 0.01;
3. search over the real corpus index (torch route; its embedding cache is kept under
   ~/.cache/peerlint/bench so only the first run embeds the corpus): p50/p99 latency of
   `VectorIndex.search_vector` and recall@10 against `exact=True`;
4. search over clustered synthetic vectors at 100k and `--synthetic` N, straight into USearch with
   the index's HNSW settings and f16 storage: build time, size, p50/p99, recall@10 vs numpy brute force;
5. peak RSS after each phase.
A table goes to stdout and everything to results/bench-index-<UTC time>.json.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ..harness.results import RESULTS_HELP, peak_rss_mb, print_table, rss_mb, write_result
from .synthetic import clustered_vectors, exact_top_k, latency_percentiles as _percentiles

from ...errors import UserError
from ...index.embedding.prebuilt import SHIPPED_LEVELS
from ..related.truth import ACM_DIR
from .default_build import print_default_build, run_default_build
from ...locations import cache_root
from ...index.embedding.embedder import model_dir, Embedder
from ...index.build import build_index
from ...index.store import open_index, HNSW
from .acm_recall import recall_at_50, loss_vs, describe, load_acm
from ...index.ingest.load import CorpusError, default_corpus_path, load_papers
from .query_route import print_query_route, run_query_route
from .scale import print_scale, run_scale, print_engines, run_engines

TITLE_QUERIES = 200  # own-title retrieval queries per route
HELD_OUT = 200  # abstracts outside the indexed documents, for neighbour-list overlap
SYNTHETIC_TARGET = 100_000  # the size the search target is stated at
BASELINE_PAPERS_PER_S = 23.0  # the measurement of the plain loop on this 2-core machine


def _log(message: str) -> None:
    print(f"bench index: {message}", file=sys.stderr, flush=True)


def _dir_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file())


def _rss(phase: str, memory: dict[str, Any]) -> None:
    memory[phase] = {"peak_rss_mb": peak_rss_mb(), "rss_mb": rss_mb()}


# -- 1. baselines -----------------------------------------------------------------------------

def measure_baselines(texts: Sequence[str]) -> dict[str, Any]:
    """The plain loop the targets are stated against, and plain batched encode for honesty."""
    from sentence_transformers import SentenceTransformer


    model = SentenceTransformer(str(model_dir()), device="cpu")
    model.encode(list(texts[:4]), show_progress_bar=False)  # warm-up: first call allocates
    t0, cpu0 = time.perf_counter(), time.process_time()
    for text in texts:
        model.encode(text, show_progress_bar=False)
    loop_s, loop_cpu = time.perf_counter() - t0, time.process_time() - cpu0
    _log(f"plain loop: {len(texts) / loop_s:.1f} docs/s")
    t0 = time.perf_counter()
    model.encode(list(texts), batch_size=32, show_progress_bar=False)
    batch_s = time.perf_counter() - t0
    _log(f"plain encode(batch_size=32): {len(texts) / batch_s:.1f} docs/s")
    del model
    gc.collect()
    return {"loop": {"seconds": round(loop_s, 3), "docs_per_s": round(len(texts) / loop_s, 2),
                     "cpu_seconds": round(loop_cpu, 2)},
            "batch32": {"seconds": round(batch_s, 3), "docs_per_s": round(len(texts) / batch_s, 2)}}


# -- 2. routes --------------------------------------------------------------------------------

def _top_ids(index, vectors: np.ndarray, k: int = 10) -> list[list[str]]:
    return [[h.paper.id for h in index.search_vector(v, k)] for v in vectors]


DEFAULT_RULE = {"ratio_vs_loop": 2.5, "overlap_at_10": 0.95, "r50_loss": 0.01}  # issue 22, item 6


def cold_query_seconds(route: str) -> float | None:
    """Wall seconds of a fresh process that imports peerlint, loads `route` and embeds one query."""
    import subprocess

    code = ("import time; t0 = time.perf_counter(); from peerlint.index.embedding.embedder import Embedder; "
            f"Embedder({route!r}).encode(['dense passage retrieval with hard negatives']); "
            "print(time.perf_counter() - t0)")
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, check=True)
        return round(float(out.stdout.strip().splitlines()[-1]), 2)
    except (subprocess.SubprocessError, ValueError, IndexError):
        return None


def measure_route(route: str, docs, title_queries, held_out, baselines: dict, work: Path,
                  acm=None) -> dict[str, Any]:
    """Cold build of `docs` with one route, then what the route costs in retrieval."""
    try:
        t0 = time.perf_counter()
        embedder = Embedder(route)
        embedder.encode(["warm-up sentence for the embedding route"])
        load_s = time.perf_counter() - t0
    except Exception as exc:  # a missing optional package or a failed export: report, don't crash
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        _log(f"route {route}: unavailable: {reason}")
        return {"route": route, "available": False, "reason": f"{type(exc).__name__}: {reason}"}
    root = work / f"route-{route}"
    shutil.rmtree(root, ignore_errors=True)
    cpu0 = time.process_time()
    report = build_index(docs, root, embedder, sources=["bench"], show_progress=False, shipped_vectors=False)
    cpu_s = time.process_time() - cpu0
    docs_per_s = len(docs) / report.seconds
    _log(f"route {route}: {docs_per_s:.1f} docs/s ({report.chunks} chunks in {report.seconds:.1f} s, "
         f"{report.embed_seconds:.1f} s embedding)")
    index = open_index(root, embedder)
    try:
        title_vectors = embedder.encode([p.title for p in title_queries])
        ranked = _top_ids(index, title_vectors)
        ranks = [ids.index(p.id) + 1 if p.id in ids else None for p, ids in zip(title_queries, ranked)]
        held_out_ids = _top_ids(index, embedder.encode([p.abstract for p in held_out])) if held_out else []
        size = _dir_bytes(index.build)
    finally:
        index.close()
    shutil.rmtree(root, ignore_errors=True)
    acm_result = None
    if acm is not None:
        acm_result = recall_at_50(embedder.encode, acm)
        _log(f"route {route}: ACM-CR R@50 paper {acm_result['paper']['recall_at_50']}, "
             f"context {acm_result['context']['recall_at_50']}")
    cold = cold_query_seconds(route)
    _log(f"route {route}: cold query {cold} s")
    return {
        "route": route, "available": True, "model_id": embedder.model_id, "load_seconds": round(load_s, 2),
        "docs": len(docs), "chunks": report.chunks, "embedded": report.embedded,
        "build_seconds": round(report.seconds, 3), "embed_seconds": round(report.embed_seconds, 3),
        "build_cpu_seconds": round(cpu_s, 2), "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "docs_per_s": round(docs_per_s, 2), "cold_query_seconds": cold, "acm": acm_result,
        "ratio_vs_loop": round(docs_per_s / baselines["loop"]["docs_per_s"], 3),
        # the same ratio in process CPU-seconds: what the machine pays, less sensitive to other load
        "cpu_ratio_vs_loop": round(baselines["loop"]["cpu_seconds"] / max(cpu_s, 1e-9), 3),
        "ratio_vs_batch32": round(docs_per_s / baselines["batch32"]["docs_per_s"], 3),
        "index_bytes": size,
        "title_hit_at_10": round(sum(r is not None for r in ranks) / max(1, len(ranks)), 4),
        "title_mrr_at_10": round(sum(1 / r for r in ranks if r) / max(1, len(ranks)), 4),
        "_held_out_ids": held_out_ids,
    }


def add_overlap(routes: list[dict[str, Any]]) -> None:
    """overlap@10 of each route's held-out neighbour lists with the torch route's, its ACM-CR R@50
    loss against torch, and whether it meets the rule for becoming the default route."""
    reference = next((r for r in routes if r.get("route") == "torch" and r.get("available")), None)
    ref_ids = reference.get("_held_out_ids") if reference else None
    for r in routes:
        if not r.get("available"):
            continue
        mine = r.pop("_held_out_ids", None)
        if not ref_ids or not mine:
            r["overlap_at_10_vs_torch"] = None
            continue
        pairs = [len(set(a) & set(b)) / max(1, len(b)) for a, b in zip(mine, ref_ids)]
        r["overlap_at_10_vs_torch"] = round(float(np.mean(pairs)), 4)
        r["r50_loss_vs_torch"] = loss_vs(reference.get("acm"), r.get("acm"))
        r["meets_default_rule"] = bool(
            r["ratio_vs_loop"] >= DEFAULT_RULE["ratio_vs_loop"]
            and r["overlap_at_10_vs_torch"] >= DEFAULT_RULE["overlap_at_10"]
            and (r["r50_loss_vs_torch"] is None or r["r50_loss_vs_torch"] <= DEFAULT_RULE["r50_loss"]))


# -- 3. search on the real corpus ---------------------------------------------------------------

def corpus_index(papers, sources: Sequence[str]) -> tuple[Path, Any]:
    """The torch-route index of the whole corpus, kept (with its embedding cache) between runs."""
    key = hashlib.sha1("\n".join(sorted(str(Path(s).resolve()) for s in sources)).encode()).hexdigest()[:10]
    root = cache_root() / "bench" / f"corpus-{key}"
    _log(f"corpus index of {len(papers)} papers at {root} (the first run embeds them all)")
    report = build_index(papers, root, sources=list(sources), show_progress=sys.stderr.isatty())
    return root, report


def _perturbed_queries(vectors: np.ndarray, n: int, rng: np.random.Generator, noise: float) -> np.ndarray:
    picks = rng.integers(0, len(vectors), size=n)
    q = np.asarray(vectors[picks], dtype=np.float32) + rng.normal(0, noise, size=(n, vectors.shape[1])).astype(np.float32)
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def _timed(fn: Callable[[np.ndarray], Any], queries: np.ndarray) -> tuple[list[Any], list[float]]:
    results, times = [], []
    for q in queries:
        t0 = time.perf_counter()
        results.append(fn(q))
        times.append(time.perf_counter() - t0)
    return results, times


def measure_corpus_search(root: Path, n_queries: int, rng: np.random.Generator) -> dict[str, Any]:
    index = open_index(root)
    try:
        queries = _perturbed_queries(index.vectors, n_queries, rng, noise=0.03)
        for q in queries[:20]:  # warm-up: page in the graph, fill the paper cache
            index.search_vector(q, 10)
        approx, approx_t = _timed(lambda q: index.search_vector(q, 10), queries)
        exact, exact_t = _timed(lambda q: index.search_vector(q, 10, exact=True), queries)
        recall = [len({h.paper.id for h in a} & {h.paper.id for h in e}) / max(1, len(e)) for a, e in zip(approx, exact)]
        return {"papers": len(index), "vectors": int(len(index.vectors)), "queries": n_queries,
                "query_kind": "stored chunk vectors + N(0, 0.03) noise, normalised",
                "hnsw": dict(HNSW), "index_bytes": _dir_bytes(index.build),
                "hnsw_bytes": (index.build / "vectors.usearch").stat().st_size,
                "search": _percentiles(approx_t), "exact": _percentiles(exact_t),
                "recall_at_10": round(float(np.mean(recall)), 4),
                "nn1_cos": round(float(np.mean([e[0].similarity for e in exact if e])), 4),
                "nn10_cos": round(float(np.mean([e[-1].similarity for e in exact if e])), 4)}
    finally:
        index.close()


# -- 4. synthetic scale ----------------------------------------------------------------------

def measure_synthetic(n: int, n_queries: int, rng: np.random.Generator, work: Path, threads: int,
                      hnsw: dict[str, int] | None = None) -> dict[str, Any]:
    from usearch.index import Index


    hnsw = dict(hnsw or HNSW)
    t0 = time.perf_counter()
    data = clustered_vectors(n + n_queries, 384, rng)
    queries = data[n:].copy()
    gen_s = time.perf_counter() - t0
    index = Index(ndim=384, metric="cos", dtype="f16", connectivity=hnsw["connectivity"],
                  expansion_add=hnsw["expansion_add"], expansion_search=hnsw["expansion_search"])
    t0 = time.perf_counter()
    index.add(np.arange(n, dtype=np.uint64), data[:n], threads=threads)
    build_s = time.perf_counter() - t0
    _log(f"synthetic {n:,}: built in {build_s:.1f} s ({n / build_s:,.0f} vectors/s)")
    # exact neighbours over what the index stores (f16), as the real index's exact path does
    base16 = data[:n].astype(np.float16)
    del data
    gc.collect()
    path = work / f"synthetic-{n}.usearch"
    index.save(str(path))
    hnsw_bytes = path.stat().st_size
    path.unlink()
    truth, truth_s = exact_top_k(base16, queries, 10)
    truth_sets = [set(t.tolist()) for t in truth]

    def measure(expansion: int) -> dict[str, Any]:
        index.expansion_search = expansion
        for q in queries[:20]:
            index.search(q, 10)
        found, times = _timed(lambda q: index.search(q, 10).keys, queries)
        recall = [len(set(np.asarray(f).tolist()) & t) / 10 for f, t in zip(found, truth_sets)]
        return {"expansion_search": expansion, **_percentiles(times), "recall_at_10": round(float(np.mean(recall)), 4)}

    # the store's setting first, then wider beams: what recall costs at this size
    sweep = [measure(e) for e in sorted({hnsw["expansion_search"], 2 * hnsw["expansion_search"],
                                         4 * hnsw["expansion_search"]})]
    mine = next(m for m in sweep if m["expansion_search"] == hnsw["expansion_search"])
    result = {"vectors": n, "queries": n_queries, "dim": 384, "dtype": "f16", "hnsw": hnsw, "threads": threads,
              "generate_seconds": round(gen_s, 2), "build_seconds": round(build_s, 2),
              "build_vectors_per_s": round(n / build_s, 1), "hnsw_bytes": hnsw_bytes,
              "with_vectors_npy_bytes": hnsw_bytes + base16.nbytes + 128,
              "search": {k: mine[k] for k in ("p50_ms", "p99_ms", "mean_ms")}, "recall_at_10": mine["recall_at_10"],
              "expansion_sweep": sweep,
              "nn1_cos": round(float(truth_s[:, 0].mean()), 4), "nn10_cos": round(float(truth_s[:, -1].mean()), 4)}
    del index, base16
    gc.collect()
    return result


# -- the command ------------------------------------------------------------------------------

def _route_rows(routes: list[dict[str, Any]], baselines: dict) -> list[list[Any]]:
    rows: list[list[Any]] = [
        ["plain loop (encode 1 doc)", baselines["loop"]["docs_per_s"], 1.0, None] + [None] * 8,
        ["plain encode(batch_size=32)", baselines["batch32"]["docs_per_s"],
         round(baselines["batch32"]["docs_per_s"] / baselines["loop"]["docs_per_s"], 2)] + [None] * 9,
    ]
    for r in routes:
        if not r["available"]:
            rows.append([f"build_index {r['route']}: unavailable: {r['reason']}"] + [None] * 11)
            continue
        acm = r.get("acm") or {}
        rows.append([f"build_index {r['route']}", r["docs_per_s"], r["ratio_vs_loop"], r["ratio_vs_batch32"],
                     r.get("cpu_ratio_vs_loop"), r["title_hit_at_10"], r["title_mrr_at_10"],
                     r["overlap_at_10_vs_torch"], (acm.get("paper") or {}).get("recall_at_50"),
                     (acm.get("context") or {}).get("recall_at_50"), r["cold_query_seconds"],
                     "yes" if r.get("meets_default_rule") else "no"])
    return rows


STORAGE_HEADERS = ["route, documents stored as", "split", "R@50 paper", "MRR paper", "R@50 ctx", "MRR ctx"]
STORAGE_TITLE = (f"What storing the vectors as the shipped file does (int8 rounded to {SHIPPED_LEVELS} levels a side) "
                 "costs on ACM-CR")


def run_storage(routes: Sequence[str], sample: int) -> dict[str, Any]:
    """Each route's ACM-CR recall with float documents and with documents stored as the shipped file stores them."""
    acm = load_acm(ACM_DIR, sample) if sample > 0 else None
    if acm is None:
        raise UserError(f"--storage needs ACM-CR ({ACM_DIR}) and --acm-sample of at least 1")
    _log(describe(acm))
    results = [{"route": route, "acm": recall_at_50(Embedder(route).encode, acm)} for route in routes]
    return {"dataset": {"acm_cr": describe(acm), "sample": sample}, "levels": SHIPPED_LEVELS, "routes": results}


def _storage_rows(routes: list[dict[str, Any]]) -> list[list[Any]]:
    rows = []
    for r in routes:
        stored = (r.get("acm") or {}).get("int8_storage")
        if not stored:
            continue
        supplement = (r.get("acm") or {}).get("supplement_storage") or {}
        cells = [(f"{r['route']}, float", "all", r["acm"]), (f"{r['route']}, shipped int8", "all", stored["all"]),
                 (f"{r['route']}, supplement 4-bit", "all", supplement.get("all")),
                 (f"{r['route']}, float", "dev", stored["dev_float"]), (f"{r['route']}, shipped int8", "dev", stored["dev"]),
                 (f"{r['route']}, supplement 4-bit", "dev", supplement.get("dev"))]
        rows += [[label, split] + [result[lv][m] for lv in ("paper", "context") for m in ("recall_at_50", "mrr")]
                 for label, split, result in cells if result is not None]
    return rows


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of this benchmark."""
    parser.add_argument("--corpus", nargs="+", type=Path, default=None, help="corpus (default: the shipped proceedings)")
    parser.add_argument("--docs", type=int, default=2000, help="documents for the speed comparison (default: 2000)")
    parser.add_argument("--routes", default="torch,bf16,onnx,onnx-int8,static", help="embedding routes to compare")
    parser.add_argument("--acm-sample", type=int, default=3000,
                        help="papers of the ACM-CR sub-corpus each route's R@50 is measured on (0: skip)")
    parser.add_argument("--synthetic", type=int, default=1_000_000, help="synthetic vectors for the scale test (0: skip)")
    parser.add_argument("--queries", type=int, default=1000, help="search queries per measurement")
    parser.add_argument("--out", type=Path, default=None, help=RESULTS_HELP)
    parser.add_argument("--scale", action="store_true",
                        help="only this: an on-disk index of --synthetic N papers opened as the server opens it "
                             "(RSS, dense and lexical latency, recall, appending 2k papers; scale.py)")
    parser.add_argument("--work", type=Path, default=None,
                        help="where --scale keeps its index and --default-build keeps the one it builds (default-index; "
                             "default: a temporary folder, removed)")
    parser.add_argument("--query-route", default=None, choices=["onnx-int8", "bf16"],
                        help="only this: queries embedded on this route against exact documents (ACM-CR R@50 loss "
                             "over --acm-sample papers, overlap@10 on the shipped index for --docs real paragraphs, "
                             "CPU; query_route.py)")
    parser.add_argument("--default-build", action="store_true",
                        help="only this: `peerlint index build` of the default corpus (or --corpus) into a fresh "
                             "folder and `peerlint search` on it, each a fresh process: wall and CPU seconds, peak "
                             "RSS; then the graph's recall against exact search on real papers' paragraphs "
                             "(default_build.py)")
    parser.add_argument("--storage", action="store_true",
                        help="only this: ACM-CR R@50 and MRR of each of --routes over --acm-sample papers, documents "
                             "as float vectors and as the shipped vectors file stores them (acm_recall.py)")
    parser.add_argument("--engines", type=int, default=0, metavar="N",
                        help="only this: N papers built by the single-process build and by Ray in local mode "
                             "(first of --routes), docs/s of each (scale.py)")


def run(args) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    started = time.perf_counter()
    sources = [str(s) for s in (args.corpus or [default_corpus_path()])]
    routes = [r.strip() for r in str(args.routes).split(",") if r.strip()]
    if args.docs < 1 or args.queries < 1 or args.synthetic < 0:
        raise UserError("--docs and --queries must be at least 1 and --synthetic at least 0")
    if args.storage:
        payload = run_storage(routes, args.acm_sample)
        path = write_result(args.out, "bench-index-storage", payload)
        print_table(_storage_rows(payload["routes"]), STORAGE_HEADERS, title=STORAGE_TITLE)
        print(f"wrote {path}")
        return 0
    if args.default_build:
        payload = run_default_build(args.corpus, args.work)
        print_default_build(payload, write_result(args.out, "bench-index-default-build", payload))
        return 0
    try:
        papers = load_papers(sources, warn=lambda m: None)
    except CorpusError as exc:
        raise UserError(str(exc)) from None
    if args.query_route:
        payload = run_query_route(args)
        print_query_route(payload, write_result(args.out, "bench-index-query-route", payload))
        return 0
    if args.scale:
        payload = run_scale(args, papers, [p.abstract for p in papers[:: max(1, len(papers) // 200)][:200]])
        print_scale(payload, write_result(args.out, "bench-index-scale", payload))
        return 0
    if args.engines:
        payload = run_engines(args, papers)
        print_engines(payload, write_result(args.out, "bench-index-engines", payload))
        return 0
    order = list(range(len(papers)))
    random.Random(0).shuffle(order)
    docs = [papers[i] for i in order[: args.docs]]
    held_out = [papers[i] for i in order[args.docs : args.docs + HELD_OUT]]
    title_queries = [p for p in docs if p.title][:TITLE_QUERIES]
    threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    memory: dict[str, Any] = {}
    load_at_start = [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None
    rng = np.random.default_rng(0)
    _log(f"{len(docs)} documents of {len(papers)} from {', '.join(sources)}; routes {', '.join(routes)}")

    with tempfile.TemporaryDirectory(prefix="peerlint-bench-") as tmp:
        work = Path(tmp)
        baselines = measure_baselines([p.text for p in docs])
        _rss("baselines", memory)
        acm = None
        if args.acm_sample:
            acm = load_acm(ACM_DIR, args.acm_sample)
            _log(describe(acm))
        route_results = [measure_route(r, docs, title_queries, held_out, baselines, work, acm) for r in routes]
        add_overlap(route_results)
        _rss("routes", memory)

        root, corpus_report = corpus_index(papers, sources)
        corpus = measure_corpus_search(root, args.queries, rng)
        corpus["build"] = {"seconds": round(corpus_report.seconds, 2), "embedded": corpus_report.embedded,
                           "cached": corpus_report.cached}
        _rss("corpus_search", memory)
        _log(f"corpus search: p50 {corpus['search']['p50_ms']:.3f} ms, recall@10 {corpus['recall_at_10']:.4f}")

        synthetic = []
        sizes = sorted({min(SYNTHETIC_TARGET, args.synthetic), args.synthetic}) if args.synthetic else []
        for n in sizes:
            synthetic.append(measure_synthetic(n, args.queries, rng, work, threads))
            _rss(f"synthetic_{n}", memory)

    payload = {
        "dataset": {"corpus": sources, "papers": len(papers), "docs": len(docs), "held_out": len(held_out),
                    "title_queries": len(title_queries), "shuffle_seed": 0},
        "options": {"docs": args.docs, "routes": routes, "synthetic": args.synthetic, "queries": args.queries,
                    "acm_sample": args.acm_sample},
        "default_rule": DEFAULT_RULE,
        "baselines": baselines, "routes": route_results, "corpus_search": corpus, "synthetic": synthetic,
        "memory": memory, "peak_rss_mb": peak_rss_mb(), "load_average_at_start": load_at_start, "seconds": round(time.perf_counter() - started, 1),
        "targets": {"build_ratio_vs_loop": 3.0, "search_p50_ms_at_100k": 1.0, "recall_at_10": 0.99,
                    "issue_loop_docs_per_s": BASELINE_PAPERS_PER_S},
    }
    path = write_result(args.out, "bench-index", payload)

    _print_report(payload, path, threads)
    return 0


def _print_report(payload: dict[str, Any], path: Path, threads: int) -> None:
    """The two tables (build speed and quality per route; search latency and recall per size) and memory."""
    docs, sources = payload["dataset"]["docs"], payload["dataset"]["corpus"]
    route_results, baselines = payload["routes"], payload["baselines"]
    corpus, synthetic, memory = payload["corpus_search"], payload["synthetic"], payload["memory"]
    load_at_start = payload["load_average_at_start"]
    print(f"peerlint bench index — {docs} documents from {', '.join(Path(s).name for s in sources)}, "
          f"{threads} threads, load average at start {load_at_start}")
    print_table(_route_rows(route_results, baselines),
                ["embedding (same documents)", "docs/s", "x loop", "x batch32", "x loop CPU-s", "title hit@10",
                 "title MRR", "overlap@10 vs torch", "ACM R@50 paper", "ACM R@50 ctx", "cold query s",
                 "default rule"], title="Build speed and retrieval quality")
    if storage := _storage_rows(route_results):
        print_table(storage, STORAGE_HEADERS, title=STORAGE_TITLE)
    search_rows = [[f"corpus ({corpus['vectors']:,} chunks of {corpus['papers']:,} papers)", corpus["vectors"],
                    corpus["search"]["p50_ms"], corpus["search"]["p99_ms"], corpus["exact"]["p50_ms"],
                    corpus["recall_at_10"], round(corpus["hnsw_bytes"] / 1e6, 1), None]]
    for s in synthetic:
        search_rows.append(["synthetic clustered, f16", s["vectors"], s["search"]["p50_ms"], s["search"]["p99_ms"],
                            None, s["recall_at_10"], round(s["hnsw_bytes"] / 1e6, 1), s["build_seconds"]])
        for m in s["expansion_sweep"]:
            if m["expansion_search"] != s["hnsw"]["expansion_search"]:
                search_rows.append([f"  same, expansion_search {m['expansion_search']}", s["vectors"], m["p50_ms"],
                                    m["p99_ms"], None, m["recall_at_10"], None, None])
    print_table(search_rows, ["search (k=10)", "vectors", "p50 ms", "p99 ms", "exact p50 ms", "recall@10",
                              "HNSW MB", "build s"],
                title=f"Search (HNSW connectivity {corpus['hnsw']['connectivity']}, "
                      f"expansion_search {corpus['hnsw']['expansion_search']})")
    print(f"\npeak RSS {payload['peak_rss_mb']:,.0f} MB; "
          + ", ".join(f"{k} {v['peak_rss_mb']:,.0f}" for k, v in memory.items()))
    print(f"results: {path}  ({payload['seconds']:.0f} s)")
