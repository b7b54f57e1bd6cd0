"""Rank statistics the drafts bench reports, in numpy (no scikit-learn / scipy dependency)."""

from __future__ import annotations

from typing import Sequence

import numpy as np


def ranks(values: Sequence[float]) -> np.ndarray:
    """1-based ranks with ties given their average rank."""
    x = np.asarray(values, dtype=float)
    order = np.argsort(x, kind="mergesort")
    r = np.empty(len(x))
    r[order] = np.arange(1, len(x) + 1)
    _, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    sums = np.bincount(inverse, weights=r)
    return sums[inverse] / counts[inverse]


def auroc(positive: Sequence[float], negative: Sequence[float]) -> float | None:
    """P(a random positive scores above a random negative), ties counting half (Mann–Whitney U)."""
    p, n = len(positive), len(negative)
    if p == 0 or n == 0:
        return None
    r = ranks(np.concatenate([np.asarray(positive, float), np.asarray(negative, float)]))
    return float((r[:p].sum() - p * (p + 1) / 2) / (p * n))


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Pearson correlation of the (tie-averaged) ranks; None when either side is constant."""
    if len(x) < 3:
        return None
    rx, ry = ranks(x), ranks(y)
    rx, ry = rx - rx.mean(), ry - ry.mean()
    denom = np.sqrt((rx ** 2).sum() * (ry ** 2).sum())
    return float((rx * ry).sum() / denom) if denom > 0 else None


def win_rate(after: Sequence[float], before: Sequence[float]) -> dict:
    """Paired comparison: share of pairs where `after` scores higher (ties count half) and the mean gain."""
    a, b = np.asarray(after, float), np.asarray(before, float)
    if len(a) == 0:
        return {"n": 0, "win_rate": None, "wins": 0, "ties": 0, "losses": 0, "mean_before": None,
                "mean_after": None, "mean_diff": None}
    d = a - b
    wins, ties = int((d > 1e-9).sum()), int((np.abs(d) <= 1e-9).sum())
    return {"n": int(len(d)), "win_rate": float((wins + 0.5 * ties) / len(d)), "wins": wins, "ties": ties,
            "losses": int(len(d) - wins - ties), "mean_before": float(b.mean()), "mean_after": float(a.mean()),
            "mean_diff": float(d.mean())}


PREVALENCES = (0.5, 0.1)  # shares of truly flag-worthy paragraphs the precision is stated at


def flag_rates(flagged_positive: Sequence[bool], flagged_negative: Sequence[bool]) -> dict:
    """A flag rule on texts that should be flagged (positive) and texts that should not: recall, the false
    flag rate, and the precision a draft would see were `p` of its paragraphs flag-worthy, for each `p`
    in PREVALENCES (a random rule at the same rate has precision `p`: the trivial baseline)."""
    tpr = float(np.mean(flagged_positive)) if len(flagged_positive) else None
    fpr = float(np.mean(flagged_negative)) if len(flagged_negative) else None
    out = {"positives": len(flagged_positive), "negatives": len(flagged_negative), "recall": tpr, "false_flag_rate": fpr}
    for p in PREVALENCES:
        hit = None if tpr is None or fpr is None else p * tpr + (1 - p) * fpr
        out[f"precision@{p:g}"] = None if not hit else p * tpr / hit
    return out
