"""`peerlint bench embedders --full-acm`: the embedders on the WHOLE ACM-CR corpus (96,692 papers), dense.

Embedding the whole corpus takes hours per model on two cores, so the embedding and the nearest-neighbour
search run once on a GPU machine (`index/embedding/gpu_embed.py search`), and this module does the rest
here: it writes the documents and queries that script reads (`export`), then scores the top-50 lists it
returns (`score_top`), per level (paper: the citing paper's title + abstract; context: each citing
paragraph) and per split of citing papers (`split_of`: dev, test), with R@10, R@50 and MRR — the same
protocol as `acm_recall.py` (one vector per paper, title + abstract truncated at 256 tokens, the citing
paper never a hit for its own queries) on the full corpus instead of a sub-corpus.
"""

from __future__ import annotations

import json
import lzma
from pathlib import Path
from typing import Any

import numpy as np

from ..index.acm_recall import AcmQueries
from ..related.truth import split_of


def export(data: AcmQueries, out: Path) -> tuple[Path, Path]:
    """docs.jsonl.xz and queries.jsonl.xz for `gpu_embed.py search`."""
    out.mkdir(parents=True, exist_ok=True)
    position = {pid: i for i, pid in enumerate(data.ids)}
    docs, queries = out / "acm-docs.jsonl.xz", out / "acm-queries.jsonl.xz"
    with lzma.open(docs, "wt", encoding="utf-8", preset=6) as handle:
        for text in data.texts:
            handle.write(json.dumps({"text": text}) + "\n")
    with lzma.open(queries, "wt", encoding="utf-8", preset=6) as handle:
        for text, pid in zip(data.query_texts, data.exclude):
            handle.write(json.dumps({"text": text, "exclude": position.get(pid, -1)}) + "\n")
    return docs, queries


def score_top(top: np.ndarray, data: AcmQueries, cutoffs: tuple[int, ...] = (10, 50)) -> dict[str, Any]:
    """R@k and MRR per level and split of citing papers, from each query's top document rows."""

    out: dict[str, Any] = {"papers": len(data.ids)}
    for level in ("paper", "context"):
        for split in ("dev", "test", "all"):
            rows = [q for q, lv in enumerate(data.query_levels) if lv == level
                    and (split == "all" or split_of(data.exclude[q]) == split)]
            if not rows:
                continue
            entry: dict[str, Any] = {"queries": len(rows)}
            for k in cutoffs:
                entry[f"recall_at_{k}"] = round(float(np.mean(
                    [len({data.ids[j] for j in top[q][:k]} & data.wanted[q]) / len(data.wanted[q]) for q in rows])), 4)
            entry["mrr"] = round(float(np.mean([next((1 / (r + 1) for r, j in enumerate(top[q])
                                                      if data.ids[j] in data.wanted[q]), 0.0) for q in rows])), 4)
            out[f"{level}/{split}"] = entry
    return out
