"""Synthetic vectors and exact neighbours for the index's scale measurements (bench.py and scale.py).

Kept apart from both so the in-memory rows of `bench.py` and the on-disk index of `scale.py` draw
the same distribution and score recall the same way.
"""

from __future__ import annotations
from ...index.embedding.prebuilt import SHIPPED
from ..harness.results import print_table, write_result

import functools
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


# Noise of near_real_vectors, set so a small HNSW finds the synthetic neighbours no more easily than the real
# ones (recall@10 at low beams, equal size: see compare_with_real); its nearest-neighbour cosines are then a
# little lower than MiniLM's (0.56 against 0.70): if anything, a harder test than real abstracts.
NEAR_REAL_NOISE = 0.8
NEIGHBOURS = 10  # real neighbours each synthetic vector is drawn between


REAL_SAMPLE = 26_715  # real vectors the synthetic sets are drawn around: the size the noise was calibrated at
# (the corpus before 2013-2025 shipped this many); all 274k of today's file would cost an exact 274k x 274k
# neighbour search per process, hours on two cores


def real_vectors(sample: int = REAL_SAMPLE) -> np.ndarray:
    """`sample` of the shipped corpus's MiniLM chunk vectors (float32, unit length; a fixed random draw):
    what the synthetic sets imitate."""
    with np.load(SHIPPED) as z:
        rows = z["vectors"]
        if len(rows) > sample:
            rows = rows[np.sort(np.random.default_rng(0).choice(len(rows), sample, replace=False))]
        real = rows.astype(np.float32)
    return real / np.linalg.norm(real, axis=1, keepdims=True)


def real_neighbours(real: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Each real vector's k nearest other real vectors (indices) and the cosine to its k-th."""
    parts = [exact_top_k(real, real[lo : lo + 2048], k + 1, block=8192) for lo in range(0, len(real), 2048)]
    return np.concatenate([i for i, _ in parts])[:, 1:], np.concatenate([s for _, s in parts])[:, -1]


def near_real_vectors(n: int, rng: np.random.Generator, real: np.ndarray, neighbours: np.ndarray,
                      kth_cos: np.ndarray, noise: float = NEAR_REAL_NOISE, mix: int = 3) -> np.ndarray:
    """n unit vectors drawn around real MiniLM vectors: the honest stand-in for a big corpus.

    Each point is a random real vector moved towards `mix` of its real nearest neighbours (random convex
    weights; the anchor keeps at least half), plus isotropic noise whose length is `noise` times the
    anchor's distance to its k-th neighbour, so it follows the real local geometry and density: points
    lie on the simplices between real neighbours, not in clusters of copies (which would make search
    trivial) nor in uniform noise (which no index can search).
    """
    dim = real.shape[1]
    out = np.empty((n, dim), dtype=np.float32)
    for lo in range(0, n, 65536):
        m = min(65536, n - lo)
        anchor = rng.integers(0, len(real), size=m)
        pick = neighbours[anchor[:, None], rng.integers(0, neighbours.shape[1], size=(m, mix))]
        w = rng.dirichlet(np.ones(mix + 1), size=m).astype(np.float32)
        w[:, 0] = np.maximum(w[:, 0], 0.5)
        w /= w.sum(axis=1, keepdims=True)
        x = w[:, :1] * real[anchor] + np.einsum("mj,mjd->md", w[:, 1:], real[pick])
        radius = np.sqrt(np.maximum(2 - 2 * kth_cos[anchor], 0)).astype(np.float32)
        x += rng.standard_normal((m, dim), dtype=np.float32) * (noise * radius / np.sqrt(dim))[:, None]
        out[lo : lo + m] = x / np.linalg.norm(x, axis=1, keepdims=True)
    return out


@functools.lru_cache(maxsize=1)
def _real_model() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    real = real_vectors()
    return (real, *real_neighbours(real, NEIGHBOURS))


def near_real(n: int, rng: np.random.Generator) -> np.ndarray:
    """`near_real_vectors` around all the shipped vectors (their neighbour lists computed once a process)."""
    return near_real_vectors(n, rng, *_real_model())


def compare_with_real(queries: int = 1000, noise: Sequence[float] = (0.5, NEAR_REAL_NOISE),
                      seed: int = 0) -> list[dict]:
    """Real MiniLM vectors against the synthetic sets at the same size, as HNSW sees them.

    The shipped vectors less `queries` held out are the base; each synthetic set is drawn around that base
    (so no query's own vector is in it) at the same size. Per set: mean cosine of the 1st and 10th exact
    neighbour, local intrinsic dimension (MLE over 20 neighbours, median) and recall@10 of small f16 graphs
    with narrow beams, where a harder set shows (at the index's own settings every set is near 1 at this size).
    """
    from usearch.index import Index

    rng = np.random.default_rng(seed)
    real = real_vectors()
    perm = rng.permutation(len(real))
    base_real, query_real = real[perm[queries:]], real[perm[:queries]]
    neighbours, kth_cos = real_neighbours(base_real, NEIGHBOURS)
    n = len(base_real)
    sets = [("real MiniLM (shipped corpus)", base_real, query_real)]
    for level in noise:
        drawn = near_real_vectors(n + queries, rng, base_real, neighbours, kth_cos, noise=level)
        sets.append((f"near_real, noise {level}", drawn[:n], drawn[n:]))
    drawn = clustered_vectors(n + queries, real.shape[1], rng)
    sets.append(("clustered_vectors (before)", drawn[:n], drawn[n:]))
    out = []
    for name, base, query in sets:
        truth, sims = exact_top_k(base, query, 20)
        dist = np.sqrt(np.maximum(2 - 2 * sims, 1e-12))
        lid = -1 / np.mean(np.log(dist[:, :-1] / dist[:, -1:]), axis=1)
        row = {"set": name, "vectors": n, "queries": queries, "nn1_cos": round(float(sims[:, 0].mean()), 3),
               "nn10_cos": round(float(sims[:, 9].mean()), 3), "lid": round(float(np.median(lid)), 1)}
        for m, ef in ((8, 10), (8, 16), (16, 16)):
            graph = Index(ndim=base.shape[1], metric="cos", dtype="f16", connectivity=m, expansion_add=2 * ef,
                          expansion_search=ef)
            graph.add(np.arange(n, dtype=np.uint64), base)
            found = graph.search(query, 10).keys
            row[f"recall_at_10_m{m}_ef{ef}"] = round(float(np.mean([len(set(f.tolist()) & set(t[:10].tolist())) / 10
                                                                    for f, t in zip(found, truth)])), 3)
        out.append(row)
    return out


if __name__ == "__main__":  # python -m peerlint.benchmarks.index.synthetic: is the stand-in fair?

    rows = compare_with_real()
    keys = [k for k in rows[0] if k not in ("set", "vectors", "queries")]
    print_table([[r["set"], *(r[k] for k in keys)] for r in rows], ["set", *keys],
                title=f"{rows[0]['vectors']:,} vectors, {rows[0]['queries']} held-out queries each")
    print(f"results: {write_result('results', 'bench-index-synthetic', {'dataset': 'shipped MiniLM chunk vectors (index/data/proceedings-vectors.npz)', 'sets': rows})}")
