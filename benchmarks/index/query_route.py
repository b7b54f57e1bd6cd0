"""`peerlint bench index --query-route R`: what embedding only the *queries* on a faster route costs.

The editor embeds every paragraph of a draft before it can show a finding; the index's own vectors
were embedded once, exactly. So the cheap place for int8 is the query side alone: the documents
keep the index's route (exact fp32, `onnx`), and each query is embedded on route R. Measured in one
run, on the same texts:
1. ACM-CR dense R@50 and MRR per level (the sub-corpus of `acm_recall.py`) with exact queries and
   with R's, so the loss is what the index route rule (`loss_vs`, <= 0.01) reads;
2. the shipped index searched with real papers' paragraphs (`tests/data/real`, parsed as the
   editor parses them): overlap@10 of the exact and R's top 10, and how far the best cosine moves
   (the editor's thresholds are cosines);
3. the CPU-seconds each route spends embedding those paragraphs (process time: what a 2-core
   machine pays whatever the neighbours' load).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
from ...index.build import default_index_path
from ...index.embedding.embedder import Embedder
from ...index.store import open_index
from ...latex.project import parse_project
from ...latex.roots import root_in_folder
from ..harness.results import print_table
from ..related.truth import ACM_DIR
from .acm_recall import loss_vs, score, describe, load_acm

REAL_PAPERS = Path(__file__).resolve().parents[2] / "tests" / "data" / "real"


def real_paragraphs(limit: int) -> list[str]:
    """Chunk texts of the real papers the tests ship, as the editor parses them (every few, up to `limit`)."""

    texts: list[str] = []
    for folder in sorted(p for p in REAL_PAPERS.iterdir() if p.is_dir()):
        try:
            choice = root_in_folder(folder)
        except OSError:
            continue
        if choice is not None:
            texts.extend(c.text for c in parse_project(choice.root).chunks if len(c.text) > 200)
    step = max(1, len(texts) // limit)
    return texts[::step][:limit]


def _embed(embedder, texts: list[str]) -> tuple[np.ndarray, float]:
    embedder.encode(texts[:2])  # load the model outside the timing
    c0 = time.process_time()
    vectors = embedder.encode(texts)
    return vectors, time.process_time() - c0


def measure(route: str, index, acm, paragraphs: int) -> dict[str, Any]:
    """The three measurements above for `route` against exact (`onnx`) queries."""

    exact, fast = Embedder(route="onnx"), Embedder(route=route)
    out: dict[str, Any] = {"route": route, "reference": "onnx (exact fp32, the index's own vectors)"}
    if acm is not None:
        docs = exact.encode(acm.texts)
        ref = score(docs, exact.encode(acm.query_texts), acm)
        mine = score(docs, fast.encode(acm.query_texts), acm)
        out["acm"] = {"exact_queries": ref, "route_queries": mine, "r50_loss": loss_vs(ref, mine)}
    texts = real_paragraphs(paragraphs)
    ref_vecs, ref_cpu = _embed(exact, texts)
    vecs, cpu = _embed(fast, texts)
    vectors = np.asarray(index.vectors, dtype=np.float32)
    ref_sims, sims = ref_vecs @ vectors.T, vecs @ vectors.T
    ref_top, top = np.argsort(-ref_sims, axis=1)[:, :10], np.argsort(-sims, axis=1)[:, :10]
    overlap = [len(set(a.tolist()) & set(b.tolist())) / 10 for a, b in zip(ref_top, top)]
    moved = np.abs(sims.max(axis=1) - ref_sims.max(axis=1))
    out["paragraphs"] = {"texts": len(texts), "index_chunks": int(len(vectors)),
                         "overlap_at_10": round(float(np.mean(overlap)), 4),
                         "top1_same": round(float(np.mean(ref_top[:, 0] == top[:, 0])), 4),
                         "cosine_to_exact_mean": round(float(np.mean(np.sum(vecs * ref_vecs, axis=1))), 4),
                         "best_cosine_moved_mean": round(float(moved.mean()), 4),
                         "best_cosine_moved_p95": round(float(np.quantile(moved, 0.95)), 4),
                         "exact_cpu_seconds": round(ref_cpu, 2), "route_cpu_seconds": round(cpu, 2),
                         "cpu_ratio": round(ref_cpu / cpu, 2) if cpu else None}
    return out


def run_query_route(args) -> dict[str, Any]:
    """The payload for results/bench-index-query-route-*.json."""
    import os


    acm = load_acm(ACM_DIR, args.acm_sample) if args.acm_sample else None
    index = open_index(default_index_path())
    t0 = time.perf_counter()
    result = measure(args.query_route, index, acm, args.docs)
    return {"dataset": {"acm": describe(acm), "paragraphs": "chunks of tests/data/real papers",
                        "index": str(index.root)},
            "seconds": round(time.perf_counter() - t0, 1), "load_average": [round(x, 2) for x in os.getloadavg()],
            **result}


def print_query_route(payload: dict[str, Any], path: Path) -> None:
    p, acm = payload["paragraphs"], payload.get("acm")
    rows = [["overlap@10 with exact queries (shipped index)", p["overlap_at_10"]],
            ["top-1 the same", p["top1_same"]],
            ["cosine to the exact vector (mean)", p["cosine_to_exact_mean"]],
            ["best cosine moved (mean / p95)", f"{p['best_cosine_moved_mean']} / {p['best_cosine_moved_p95']}"],
            ["CPU-s to embed the paragraphs: exact / route (ratio)",
             f"{p['exact_cpu_seconds']} / {p['route_cpu_seconds']} ({p['cpu_ratio']}x)"]]
    if acm:
        for level in ("paper", "context"):
            rows.append([f"ACM-CR {level} R@50: exact / route queries",
                         f"{acm['exact_queries'][level]['recall_at_50']} / {acm['route_queries'][level]['recall_at_50']}"])
        rows.append(["largest R@50 loss (rule: <= 0.01)", acm["r50_loss"]])
    print_table(rows, ["measure", payload["route"]],
                title=f"queries on {payload['route']}, documents exact ({p['texts']} real paragraphs; {payload['dataset']['acm']})")
    print(f"results: {path}")
