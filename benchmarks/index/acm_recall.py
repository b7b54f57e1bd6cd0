"""What an embedding route costs in citation recall: dense R@50 on an ACM-CR sub-corpus.

The issue's rule for a faster route is "R@50 loss <= 0.01 on ACM-CR". Embedding the whole 96.7k
corpus once per route takes hours on two cores, so every route here searches the same sub-corpus
(`benchmarks.related.bench.sub_corpus`: every cited paper the corpus holds plus a fixed random
sample of the others) by brute-force cosine over one vector per paper (title + abstract, truncated
at the model's 256 tokens), at paper level (title + abstract of each citing paper) and context level
(each citing paragraph).  Absolute numbers are higher than the full corpus's; the gap between
routes is what this measures.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
from ...index.embedding.gpu_embed import quantise, requantise
from ...index.embedding.prebuilt import SHIPPED_LEVELS, SUPPLEMENT_LEVELS
from ...index.ingest.load import CorpusError, load_papers
from ..related.bench import sub_corpus
from ..related.truth import acm_truths, split_of

K = 50


@dataclass(frozen=True)
class AcmQueries:
    """The sub-corpus and the queries every route is scored on."""

    ids: list[str]
    texts: list[str]
    query_texts: list[str]
    query_levels: list[str]  # "paper" or "context"
    wanted: list[set[str]]  # cited ids the sub-corpus holds, per query
    exclude: list[str]  # the citing paper, never a hit for its own queries


def load_acm(acm_dir: Path, size: int) -> AcmQueries | None:
    """ACM-CR's queries over a `size`-paper sub-corpus, or None where the data is not there."""

    try:
        paper_rows, context_rows, _ = acm_truths(acm_dir)
        papers = load_papers([acm_dir / "corpus.jsonl.gz"], warn=lambda m: None)
    except (ValueError, OSError, CorpusError):
        return None
    rows = [("paper", r) for r in paper_rows] + [("context", r) for r in context_rows]
    cited = {c for _, r in rows for c in r["cited"]}
    papers = sub_corpus(papers, cited, size)
    held = {p.id for p in papers}
    kept = [(level, r) for level, r in rows if held & set(r["cited"])]
    return AcmQueries([p.id for p in papers], [p.text for p in papers], [r["text"] for _, r in kept],
                      [level for level, _ in kept], [held & set(r["cited"]) for _, r in kept],
                      [r["paper"] for _, r in kept])


def recall_at_50(embed, data: AcmQueries) -> dict[str, Any]:
    """Mean R@50 and MRR per level for one route's `embed(texts) -> unit vectors`, and its seconds; under
    `int8_storage`, the same with the documents stored as the shipped vectors are (int8, a scale each),
    over all queries and over the dev split's (`truth.split_of`)."""

    t0 = time.perf_counter()
    docs = embed(data.texts)
    queries = embed(data.query_texts)
    seconds = round(time.perf_counter() - t0, 2)
    stored = stored_as_int8(docs)
    supplement = stored_as_int8(docs, SUPPLEMENT_LEVELS)
    dev = [split_of(pid) == "dev" for pid in data.exclude]
    return {**score(docs, queries, data), "embed_seconds": seconds,
            "int8_storage": {"levels": SHIPPED_LEVELS, "all": score(stored, queries, data),
                             "dev_float": score(docs, queries, data, dev), "dev": score(stored, queries, data, dev)},
            "supplement_storage": {"levels": SUPPLEMENT_LEVELS, "all": score(supplement, queries, data),
                                   "dev": score(supplement, queries, data, dev)}}


def stored_as_int8(vectors: np.ndarray, levels: int = SHIPPED_LEVELS) -> np.ndarray:
    """Vectors as the shipped file keeps them and a build reads them back: int8 from the embedder
    (`gpu_embed.quantise`), rounded again to `levels` (the main file's `SHIPPED_LEVELS`, the supplements'
    `SUPPLEMENT_LEVELS`) by `gpu_transfer.pack`, made unit length by `prebuilt.row`."""
    q = requantise(*quantise(vectors), levels)[0].astype(np.float32)
    return q / np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-12)


def score(docs: np.ndarray, queries: np.ndarray, data: AcmQueries, keep: Sequence[bool] | None = None) -> dict[str, Any]:
    """R@50 and MRR per level of the queries `keep` selects (all by default), from their vectors."""
    sims = queries @ docs.T
    position = {pid: i for i, pid in enumerate(data.ids)}
    for q, pid in enumerate(data.exclude):
        if pid in position:
            sims[q, position[pid]] = -2.0
    top = np.argsort(-sims, axis=1)[:, :K]
    out: dict[str, Any] = {"papers": len(data.ids)}
    for level in ("paper", "context"):
        recalls, rr = [], []
        for q in (i for i, lv in enumerate(data.query_levels) if lv == level and (keep is None or keep[i])):
            found = [data.ids[j] for j in top[q]]
            recalls.append(len(set(found) & data.wanted[q]) / len(data.wanted[q]))
            rr.append(next((1 / (r + 1) for r, pid in enumerate(found) if pid in data.wanted[q]), 0.0))
        out[level] = {"queries": len(recalls), "recall_at_50": round(float(np.mean(recalls)), 4) if recalls else None,
                      "mrr": round(float(np.mean(rr)), 4) if rr else None}
    return out


def loss_vs(reference: dict[str, Any] | None, mine: dict[str, Any] | None) -> float | None:
    """The largest R@50 drop from `reference` over both levels (negative: a gain)."""
    if not reference or not mine:
        return None
    drops = [reference[lv]["recall_at_50"] - mine[lv]["recall_at_50"] for lv in ("paper", "context")
             if reference[lv]["recall_at_50"] is not None and mine[lv]["recall_at_50"] is not None]
    return round(max(drops), 4) if drops else None


def describe(data: AcmQueries | None) -> str:
    if data is None:
        return "ACM-CR not found: no recall check"
    levels = data.query_levels
    return (f"ACM-CR sub-corpus of {len(data.ids):,} papers, {levels.count('paper')} paper-level and "
            f"{levels.count('context')} context-level queries")
