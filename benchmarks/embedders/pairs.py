"""The title -> abstract task both `bench.py` and the adapter's training use: its pool and its scoring."""

from __future__ import annotations

import random
from typing import Sequence

import numpy as np

# venues the query adapter never trains on: the title -> abstract task is measured on them
HELD_APART = ("CVPR", "ACL", "COLING", "NAACL", "UAI")


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
