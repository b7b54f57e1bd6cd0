"""The first stage every consumer shares: dense (MiniLM cosine), lexical (BM25) or both, fused.

Dense and lexical retrieval see different things: MiniLM matched *encoder* in a paragraph about
dual encoders and found autoencoders, where BM25 matches *passages*, *hard negatives* and
*cross-encoders* (issue 22). Hybrid search takes the top `CANDIDATES` of each and fuses them:

- ``weighted`` (the default): score = cosine + `LEXICAL_WEIGHT` x BM25 share, the share being a
  paper's BM25 as a fraction of the best candidate's. Both lists' candidates get both signals
  exactly (the cosine of their best chunk from the stored vectors, BM25 from the FTS table).
  At weight 0 it is dense search; its scale stays the cosine's, so SEC's entity and co-citation
  weights, tuned on a cosine base, keep their meaning on top of it.
- ``rrf``: reciprocal rank fusion (Cormack et al., 2009), score = sum over the two lists of
  1 / (`RRF_K` + rank). Measured beside the weighted one in `peerlint bench related`.

Whatever ranks a hit, `Hit.similarity` is the dense cosine of its best chunk (the thresholds of
close-prior-work and missing-related-work are calibrated on it) and `Hit.score` the fused score.
A query without content words (empty, pure math) has no lexical list: hybrid is then dense.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from ..index.papers import Hit, SearchFilter
from ..settings import Settings

MODES = ("dense", "lexical", "hybrid")
FUSIONS = ("weighted", "rrf")
DEFAULT_MODE = Settings.search_mode  # the default is a setting's: one place says it
DEFAULT_FUSION = "weighted"
# The rule: the fusion and its lexical weight are chosen on ACM-CR's dev truths only (its 20 citing
# papers as paper-level and paragraph-level queries, `peerlint bench related --sample 12000 --weights
# …`), by the mean of R@10..R@50 over both truths; of weights that tie, the smallest, as the least
# change to the dense ranking the similarity thresholds were calibrated on. The sweep and the
# numbers behind the default: docs/benchmarks/retrieval.md.
LEXICAL_WEIGHT = 0.1
RRF_K = 60  # Cormack et al.'s constant
CANDIDATES = 100  # each list's depth before fusion
TITLE_QUERY_WORDS = 30  # a query this short may be a paper's title (`title_first`); paragraphs are longer


@dataclass(frozen=True)
class Fusion:
    """How hybrid search fuses its two lists."""

    method: str = DEFAULT_FUSION
    weight: float = LEXICAL_WEIGHT  # of the BM25 share, in the weighted method
    candidates: int = CANDIDATES

    def __post_init__(self) -> None:
        if self.method not in FUSIONS:
            raise ValueError(f"unknown fusion {self.method!r}: choose one of {', '.join(FUSIONS)}")


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise ValueError(f"unknown search mode {mode!r}: choose one of {', '.join(MODES)}")
    return mode


def shares(values: Mapping[int, float]) -> dict[int, float]:
    """Each value as a share of the largest (all 0 when the largest is not positive)."""
    top = max(values.values(), default=0.0)
    return {key: (float(v) / top if top > 0 else 0.0) for key, v in values.items()}


def weighted_scores(cosines: Mapping[int, float], bm25: Mapping[int, float], mode: str,
                    weight: float = LEXICAL_WEIGHT) -> dict[int, float]:
    """The weighted fusion of every paper in `cosines`: cosine (dense), BM25 share (lexical), or
    cosine + weight x BM25 share (hybrid); a paper without a BM25 score has share 0."""
    share = shares({p: bm25.get(p, 0.0) for p in cosines})
    if mode == "dense":
        return {p: float(c) for p, c in cosines.items()}
    if mode == "lexical":
        return share
    return {p: float(c) + weight * share[p] for p, c in cosines.items()}


def rrf_scores(lists: Sequence[Sequence[int]], k: int = RRF_K) -> dict[int, float]:
    """Reciprocal rank fusion of ranked lists of paper indices."""
    out: dict[int, float] = {}
    for ranked in lists:
        for rank, p in enumerate(ranked, 1):
            out[p] = out.get(p, 0.0) + 1.0 / (k + rank)
    return out


def search(index, vector: np.ndarray, text: str, k: int, flt: SearchFilter | None = None,
           mode: str = DEFAULT_MODE, fusion: Fusion = Fusion()) -> list[Hit]:
    """Top-k papers for a query given as its vector and its text; an index without the BM25 table
    answers every mode densely (the caller, `Retriever`, tells the user once)."""
    return search_many(index, np.asarray(vector, dtype=np.float32).reshape(1, -1), [text], k, flt, mode, fusion)[0]


def search_many(index, vectors: np.ndarray, texts: Sequence[str], k: int, flt: SearchFilter | None = None,
                mode: str = DEFAULT_MODE, fusion: Fusion = Fusion()) -> list[list[Hit]]:
    """`search` for each (vector, text) pair, the dense candidates of all of them from one batched
    graph search (a draft's paragraphs are searched together)."""
    check_mode(mode)
    if k <= 0 or not len(texts):
        return [[] for _ in texts]
    if mode == "dense" or not index.has_lexical:
        return _dense_hits(index, vectors, k, flt)
    if mode == "lexical":
        return [_lexical_hits(index, v, t, k, flt) for v, t in zip(vectors, texts)]
    bm25 = [index.lexical_scores(t, flt) for t in texts]
    out: list[list[Hit]] = [[] for _ in texts]
    worded = [i for i, b in enumerate(bm25) if b]
    wordless = [i for i, b in enumerate(bm25) if not b]  # empty or pure math: dense alone
    for i, hits in zip(wordless, _dense_hits(index, vectors[wordless], k, flt)):
        out[i] = hits
    depth = max(k, fusion.candidates)
    for i, ranked in zip(worded, index.dense_ranked_many(vectors[worded], depth, flt)):
        out[i] = _fused(index, vectors[i], [p for p, _, _ in ranked], bm25[i], k, depth, mode, fusion)
    return out


def title_first(index, vector: np.ndarray, text: str, hits: list[Hit], k: int, flt: SearchFilter | None = None) -> list[Hit]:
    """`hits` with the papers titled `text` (`VectorIndex.titled`) first, whatever their scores: a short
    title such as "Attention is All you Need" reads like many abstracts to MiniLM and BM25 alike. For a
    query someone types (`peerlint search`); a draft's paragraphs are not titles."""
    if len(text.split()) > TITLE_QUERY_WORDS or not index.has_lexical:
        return hits
    titled = index.titled(text, flt)
    if not titled:
        return hits
    ids = {index.ids[p] for p in titled}
    kept = {h.paper.id: h for h in hits if h.paper.id in ids}
    best = index.best_chunks(vector, [p for p in titled if index.ids[p] not in kept])
    first = [kept.get(index.ids[p]) or index.hit(p, *best[p]) for p in titled if index.ids[p] in kept or p in best]
    return (first + [h for h in hits if h.paper.id not in ids])[:k]


def _dense_hits(index, vectors: np.ndarray, k: int, flt: SearchFilter | None) -> list[list[Hit]]:
    return [[index.hit(p, sim, key) for p, sim, key in ranked] for ranked in index.dense_ranked_many(vectors, k, flt)]


def _lexical_hits(index, vector: np.ndarray, text: str, k: int, flt: SearchFilter | None) -> list[Hit]:
    lexical = index.lexical_search(text, k, flt)
    best = index.best_chunks(vector, [p for p, _ in lexical])
    return [index.hit(p, *best[p], score=s) for p, s in lexical if p in best]


def _fused(index, vector: np.ndarray, dense: list[int], bm25, k: int, depth: int, mode: str,
           fusion: Fusion) -> list[Hit]:
    """The top-k of the dense and BM25 candidates of one query, fused by `fusion`."""
    lexical_ids = [p for p, _ in bm25.top(depth)]
    pool = list(dict.fromkeys(dense + lexical_ids))
    best = index.best_chunks(vector, pool)
    if fusion.method == "rrf":
        score = rrf_scores([dense, lexical_ids])
    else:
        score = weighted_scores({p: best[p][0] for p in pool if p in best}, bm25, mode, fusion.weight)
    ranked = sorted((p for p in pool if p in best), key=lambda p: (-score[p], p))[:k]
    return [index.hit(p, best[p][0], best[p][1], score[p]) for p in ranked]
