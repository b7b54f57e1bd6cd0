"""Pointwise novelty: a text's place in time against the indexed literature, calibrated on pairs.

SchNovel (Lin et al., 2024) labels the later of two same-field papers as the more novel one, and
RAG-Novelty feeds an LLM the mean date and mean similarity of each paper's retrieved neighbours.
Here those signals become features of a single text (`features.FEATURES`), and a pairwise
logistic model without intercept, fitted on sampled pairs in both orders (so it cannot prefer a
position), weighs them.  `NoveltyModel.score` is the pointwise score s with
P(a judged more novel than b) = sigmoid(s_a - s_b); the editor shows how often a text would be
judged more novel than the newest indexed papers.  This module also holds the retrieval the SchNovel baselines share
(`Neighbours`: top-k at a cutoff, both papers excluded) and the embedding-head baseline.
"""

from __future__ import annotations

import logging
import pickle
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from ...index.papers import Hit, Paper, SearchFilter
from .features import FEATURES, Lexicon, Timeline, one_blas_thread
from ..npz_file import load_npz, save_npz
from .pairs import Field, sample_pairs

log = logging.getLogger(__name__)

MODEL_VERSION = 3


@dataclass(frozen=True)
class Neighbourhood:
    """A text's top-k papers published on or before `cutoff` (a year; None: the whole index)."""

    cutoff: int | None
    hits: tuple[Hit, ...]

    @property
    def years(self) -> np.ndarray:
        return np.array([h.paper.year for h in self.hits if h.paper.year is not None], dtype=float)

    @property
    def mean_year(self) -> float | None:
        years = self.years
        return float(years.mean()) if len(years) else None

    @property
    def mean_similarity(self) -> float:
        return float(np.mean([h.similarity for h in self.hits])) if self.hits else 0.0

    def without(self, paper_id: str, k: int) -> "Neighbourhood":
        """The same neighbourhood with one paper (a pair's partner) left out, cut to k."""
        return Neighbourhood(self.cutoff, tuple(h for h in self.hits if h.paper.id != paper_id)[:k])


def neighbourhood(index, vector: np.ndarray, cutoff: int | None, exclude: frozenset[str] = frozenset(),
                  k: int = 10) -> Neighbourhood:
    """Top-k papers by cosine similarity, on or before `cutoff` (year-granular), `exclude` left out."""
    flt = SearchFilter(year_max=cutoff, exclude_ids=exclude) if (cutoff is not None or exclude) else None
    return Neighbourhood(cutoff, tuple(index.search_vector(vector, k, flt)))


class Neighbours:
    """Paper vectors (the mean of their indexed chunks, or embedded when not indexed) and their
    neighbourhoods at a cutoff, cached per (paper, cutoff): a pair then only drops its partner."""

    def __init__(self, index, k: int = 10):
        self.index, self.k = index, k
        self.matrix = index.paper_matrix()
        self._embedded: dict[str, np.ndarray] = {}
        self._around: dict[tuple[str, int | None], Neighbourhood] = {}

    def vector(self, paper: Paper) -> np.ndarray:
        idx = self.index.id_to_idx.get(paper.id)
        if idx is not None:
            return self.matrix[idx]
        if paper.id not in self._embedded:
            self._embedded[paper.id] = np.asarray(self.index.embed([paper.text])[0], dtype=np.float32)
        return self._embedded[paper.id]

    def around(self, paper: Paper, cutoff: int | None, partner: str | None = None) -> Neighbourhood:
        key = (paper.id, cutoff)
        if key not in self._around:
            self._around[key] = neighbourhood(self.index, self.vector(paper), cutoff, frozenset([paper.id]), self.k + 1)
        return self._around[key].without(partner or "", self.k)


def fit_pairwise_logistic(diffs: np.ndarray, l2: float = 1.0, iters: int = 30) -> np.ndarray:
    """w minimising the logistic loss of P(first newer) = sigmoid(w·d) over d and -d (both orders).

    Newton's method; the data are mirrored, so w has no intercept and no position preference.
    """
    X = np.vstack([diffs, -diffs]).astype(np.float64)
    y = np.concatenate([np.ones(len(diffs)), np.zeros(len(diffs))])
    w = np.zeros(X.shape[1])
    eye = np.eye(X.shape[1]) * l2
    with one_blas_thread():
        for _ in range(iters):
            p = sigmoid(X @ w)
            step = np.linalg.solve((X.T * (p * (1 - p))) @ X + eye, X.T @ (p - y) + l2 * w)
            w -= step
            if np.abs(step).max() < 1e-7:
                break
    return w


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-np.clip(x, -30, 30)))


@dataclass
class NoveltyModel:
    """Weights over the standardised FEATURES, and the scores of random indexed papers."""

    weights: np.ndarray
    scale: np.ndarray  # feature standard deviations on the training pairs
    reference: np.ndarray = field(default_factory=lambda: np.zeros(0))
    info: dict = field(default_factory=dict)  # what it was trained on

    def score(self, features: np.ndarray) -> float:
        return float((np.asarray(features) / self.scale) @ self.weights)

    def percentile(self, score: float) -> float | None:
        """P(judged more novel than a random indexed paper), from the reference sample."""
        if not len(self.reference):
            return None
        return float(np.mean(sigmoid(score - self.reference)))

    def save(self, path: Path) -> None:
        save_npz(path, {**self.info, "version": MODEL_VERSION},
                 {"weights": self.weights, "scale": self.scale, "reference": self.reference}, header_key="info")

    @classmethod
    def load(cls, path: Path) -> "NoveltyModel | None":
        return load_npz(path, MODEL_VERSION, lambda info, data: cls(data["weights"], data["scale"], data["reference"], info),
                        header_key="info")


def fit_head(newer: np.ndarray, older: np.ndarray, l2: float = 1.0) -> np.ndarray:
    """The embedding-head baseline: pairwise logistic regression on embedding differences (rows are pairs)."""
    return fit_pairwise_logistic(np.asarray(newer, np.float64) - np.asarray(older, np.float64), l2=l2)


def fit_model(newer: np.ndarray, older: np.ndarray) -> NoveltyModel:
    """Calibrate: rows are the FEATURES of each training pair's newer and older paper."""
    if len(newer) < 20:
        raise ValueError(f"need at least 20 training pairs to calibrate the novelty score, got {len(newer)}")
    scale = np.vstack([newer, older]).std(axis=0)
    scale = np.where(scale > 1e-9, scale, 1.0)
    weights = fit_pairwise_logistic((newer - older) / scale, l2=1.0)
    return NoveltyModel(weights, scale, info={"pairs": len(newer), "weights": dict(zip(FEATURES, map(float, weights)))})


def pair_features(timeline: Timeline, vectors: Neighbours,
                  pairs: Sequence[tuple[Paper, Paper, Sequence[str]]], batch: int = 64) -> list[tuple[np.ndarray, np.ndarray]]:
    """FEATURES of both papers of each (newer, older, field venues) pair: at the pair's cutoff (the
    newer year), in its field, each other left out.  Similarities are computed in batches, and the
    pairs are visited by field and cutoff, so each in-field ridge model is fitted once and then forgotten."""
    order = sorted(range(len(pairs)), key=lambda i: (sorted(v.lower() for v in pairs[i][2]), pairs[i][0].year or 0))
    out: list = [None] * len(pairs)
    with one_blas_thread():
        for start in range(0, len(order), batch):
            part = order[start:start + batch]
            vecs = np.stack([vectors.vector(p) for i in part for p in pairs[i][:2]])
            sims = timeline.similarities(vecs)
            for j, i in enumerate(part):
                newer, older, field_venues = pairs[i]
                at = [vectors.index.id_to_idx.get(p.id) for p in (newer, older)]
                rows = [r for r in at if r is not None]
                out[i] = tuple(timeline.features(vecs[2 * j + m], newer.year, field_venues, rows, sims[2 * j + m],
                                                 timeline.design_row(vecs[2 * j + m], p.text, at[m]))
                               for m, p in enumerate((newer, older)))
    return out


def text_features(timeline: Timeline, vector: np.ndarray, exclude: Sequence[int] = (),
                  sims: np.ndarray | None = None, design: np.ndarray | None = None) -> tuple[np.ndarray, dict]:
    """A lone text: its field is the venues of its nearest papers, the cutoff their newest year
    (a draft is compared with the newest indexed work of its field); `design`: `timeline.design_row`."""
    with one_blas_thread():
        sims = timeline.similarities(vector)[0] if sims is None else sims
        field_venues = timeline.field_of(vector, exclude, sims=sims)
        cutoff = timeline.latest_year(field_venues)
        return (timeline.features(vector, cutoff, field_venues, exclude, sims, design),
                {"field": list(field_venues), "cutoff": cutoff})


def with_reference(model: NoveltyModel, timeline: Timeline, n: int = 300, seed: int = 0) -> NoveltyModel:
    """Score up to `n` of the newest papers of every venue (each venue's last indexed year) the way a
    lone text is scored: a text's percentile then says how it compares with the newest published work."""
    newest = {v: timeline.latest_year((v,)) for v in set(timeline.venues.tolist())}
    pool = np.array([i for i, (v, y) in enumerate(zip(timeline.venues, timeline.years)) if y == newest[v]])
    chosen = np.random.default_rng(seed).choice(pool, size=min(n, len(pool)), replace=False) if len(pool) else []
    sims = timeline.similarities(timeline.P[chosen]) if len(chosen) else []
    # visited by field, so each in-field ridge model is fitted once (the order does not change the scores)
    fields = [timeline.field_of(timeline.P[i], [int(i)], sims=row) for i, row in zip(chosen, sims)]
    order = sorted(range(len(chosen)), key=lambda j: fields[j])
    model.reference = np.sort([model.score(text_features(timeline, timeline.P[chosen[j]], [int(chosen[j])], sims[j],
                                                         timeline.design_rows([chosen[j]])[0])[0]) for j in order])
    return model


def train_from_index(index, n_pairs: int = 3000, seed: int = 0, lexicon: Lexicon | None = None) -> NoveltyModel:
    """Calibrate on pairs sampled (Algorithm 1) from the index itself: fields are venues, or the
    whole index as one field when its venues hold too few years apart."""

    # light records from the index's arrays: the sampler needs id, venue and year, not 17k abstracts in memory
    papers = [Paper(pid, "", "indexed", venue=str(v), year=int(y) if y >= 0 else None)
              for pid, v, y in zip(index.ids, index.venues, index.years)]
    venues = tuple(sorted({p.venue for p in papers if p.venue}))
    pairs, scope = sample_pairs(papers, total=n_pairs, seed=seed), "same venue"
    if len(pairs) < 200:
        pairs = sample_pairs(papers, total=n_pairs, fields=[Field("all", venues)], seed=seed)
        scope = "whole index (its venues hold too few years apart)"
    by_id = {p.id: p for p in papers}
    vectors = Neighbours(index)
    timeline = Timeline.of(index, vectors.matrix, lexicon)
    feats = pair_features(timeline, vectors, [(by_id[p.newer], by_id[p.older],
                                               venues if scope != "same venue" else (by_id[p.newer].venue,)) for p in pairs])
    model = fit_model(np.array([f[0] for f in feats]), np.array([f[1] for f in feats]))
    model.info.update({"scope": scope, "index_build": index.build.name})
    return with_reference(model, timeline, seed=seed)


def _cache_paths(index, cache_dir: Path) -> tuple[Path, Path, Path]:
    """Where the lexicon (its pickle and its rows) and the calibrated model of this index build are kept."""
    folder = Path(cache_dir) / "novelty"
    lexicon = folder / f"lexicon-{index.build.name}-v{MODEL_VERSION}.pkl"
    return lexicon, lexicon.with_suffix(".rows.npy"), folder / f"model-{index.build.name}.npz"


def _rows_fit(rows: np.ndarray, index) -> bool:
    """Lexicon rows that belong to this index build: one float32 row per paper."""
    return len(rows) == len(index) and rows.dtype == np.float32


def calibrated(index, cache_dir: Path) -> bool:
    """Whether this index build's novelty lexicon and model are cached: if not, the first novelty check
    fits them (about two minutes on two cores for the default index; docs/benchmarks/latency.md)."""
    lexicon, rows_path, model = _cache_paths(index, cache_dir)
    try:  # headers only: a cache cut short or written for another build is fitted again, so it says so
        rows = np.load(rows_path, mmap_mode="r")
        return lexicon.stat().st_size > 0 and _rows_fit(rows, index) and zipfile.is_zipfile(model)
    except (OSError, ValueError, EOFError, TypeError):  # TypeError: rows saved as a 0-d array
        return False


def load_or_fit_lexicon(index, cache_dir: Path) -> Lexicon:
    """The lexicon of this index build, fitted once and kept next to the other caches: its TF-IDF and SVD
    pickled, its rows (one per paper, ~150 MB on the default index) in a `.npy` file read memory-mapped,
    so a server holds only the rows the field models read. A cache whose rows sit inside the pickle
    (written before) is rewritten that way."""
    path, rows_path, _ = _cache_paths(index, cache_dir)
    try:
        with path.open("rb") as fh:
            lexicon = pickle.load(fh)
        if isinstance(lexicon, Lexicon) and len(lexicon.rows) == 0:
            lexicon.rows = np.load(rows_path, mmap_mode="r")
        if isinstance(lexicon, Lexicon) and _rows_fit(lexicon.rows, index):
            return lexicon if isinstance(lexicon.rows, np.memmap) else _keep_lexicon(lexicon, path, rows_path)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, ValueError, TypeError):
        pass
    return _keep_lexicon(Lexicon.of(index), path, rows_path)


def _keep_lexicon(lexicon: Lexicon, path: Path, rows_path: Path) -> Lexicon:
    """Write the lexicon (rows first, each file renamed into place whole) and give it back with its rows
    mapped from the file; as it is, with a warning, when the cache cannot be written."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp_rows = rows_path.with_suffix(".tmp.npy")
        np.save(tmp_rows, np.asarray(lexicon.rows, dtype=np.float32))
        tmp_rows.replace(rows_path)
        tmp = path.with_suffix(".tmp")
        with tmp.open("wb") as fh:
            pickle.dump(Lexicon(lexicon.tfidf, lexicon.svd, np.zeros((0, lexicon.rows.shape[1]), np.float32)), fh)
        tmp.replace(path)
        return Lexicon(lexicon.tfidf, lexicon.svd, np.load(rows_path, mmap_mode="r"))
    except OSError as exc:
        log.warning("cannot cache the novelty lexicon at %s (%s)", path, exc)
        return lexicon


def load_or_train(index, cache_dir: Path) -> tuple[NoveltyModel, Lexicon]:
    """The model for this index build and the lexicon it reads, trained once and kept next to the other caches."""
    path = _cache_paths(index, cache_dir)[2]
    lexicon = load_or_fit_lexicon(index, cache_dir)
    model = NoveltyModel.load(path)
    if model is None:
        log.info("calibrating the novelty score on pairs sampled from %s", index.root)
        model = train_from_index(index, lexicon=lexicon)
        try:
            model.save(path)
        except OSError as exc:
            log.warning("cannot cache the novelty model at %s (%s)", path, exc)
    return model, lexicon
