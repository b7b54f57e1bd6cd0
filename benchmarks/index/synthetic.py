"""Synthetic vectors and exact neighbours for the index's scale measurements (bench.py and scale.py).

Kept apart from both so the in-memory rows of `bench.py` and the on-disk index of `scale.py` draw
the same distribution and score recall the same way.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np


def latency_percentiles(samples_s: Sequence[float]) -> dict[str, float]:
    """p50, p99 and mean of latencies given in seconds, in milliseconds."""
    ms = np.asarray(samples_s, dtype=np.float64) * 1000
    return {"p50_ms": round(float(np.percentile(ms, 50)), 4), "p99_ms": round(float(np.percentile(ms, 99)), 4),
            "mean_ms": round(float(ms.mean()), 4)}


def clustered_vectors(n: int, dim: int, rng: np.random.Generator, n_clusters: int | None = None,
                      local_dims: int = 64) -> np.ndarray:
    """Unit vectors from a mixture of anisotropic Gaussians, shaped like sentence embeddings.

    Each cluster (about 1,000 points) has a centre and its own random `local_dims`-dimensional
    subspace with decaying variance, plus isotropic noise. At 100k the mean cosine to the nearest and
    10th-nearest neighbour is about 0.69 and 0.63, close to MiniLM abstracts (0.68 / 0.57 among the
    2,600 chunks of the test index): neighbours are well defined, unlike uniform noise in 384-d where
    no index can find them, but far from trivially separated.
    """
    n_clusters = n_clusters or max(8, n // 1000)
    centres = rng.standard_normal((n_clusters, dim)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    scales = (0.6 / np.sqrt(np.arange(1, local_dims + 1))).astype(np.float32)
    assign = rng.integers(0, n_clusters, size=n)
    out = np.empty((n, dim), dtype=np.float32)
    for c in range(n_clusters):
        rows = np.nonzero(assign == c)[0]
        if not len(rows):
            continue
        basis, _ = np.linalg.qr(rng.standard_normal((dim, local_dims)).astype(np.float32))
        local = rng.standard_normal((len(rows), local_dims)).astype(np.float32) * scales
        out[rows] = centres[c] + local @ basis.T + rng.normal(0, 0.025, (len(rows), dim)).astype(np.float32)
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out


def exact_top_k(base: np.ndarray, queries: np.ndarray, k: int = 10, block: int = 32768) -> tuple[np.ndarray, np.ndarray]:
    """Brute-force top-k by dot product, in blocks so 1M x 384 needs no second copy."""
    best_i = np.zeros((len(queries), 0), dtype=np.int64)
    best_s = np.zeros((len(queries), 0), dtype=np.float32)
    for start in range(0, len(base), block):
        sims = queries @ np.asarray(base[start : start + block], dtype=np.float32).T
        part = np.argpartition(-sims, min(k, sims.shape[1] - 1), axis=1)[:, :k]
        cand_i = np.concatenate([best_i, part + start], axis=1)
        cand_s = np.concatenate([best_s, np.take_along_axis(sims, part, axis=1)], axis=1)
        order = np.argsort(-cand_s, axis=1)[:, :k]
        best_i, best_s = np.take_along_axis(cand_i, order, axis=1), np.take_along_axis(cand_s, order, axis=1)
    return best_i, best_s
