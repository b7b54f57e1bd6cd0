"""Where a text sits in time against the indexed literature: the features of the novelty score.

SchNovel's premise (Lin et al., 2024, Section 3) is that of two papers of one field, the later one
is the more novel; RAG-Novelty (Section 4) makes the dates of a paper's retrieved neighbours
evidence of when it was written.  These features sharpen that evidence, all computed at a
cutoff year Y (only papers published on or before Y, chosen papers left out):

* `knn_year`, `wknn_year`: mean year of the 10 nearest papers, and a similarity-weighted mean over
  the 30 nearest (relative to Y): the paper's RAG-Novelty "average contextual date";
* `profile_year`, `field_profile_year`: for each of the years Y-10..Y, how close the text comes to
  that year's papers (mean of the 5 best similarities), turned into a soft arg-max year — unlike
  the neighbours' mean year it does not grow with the corpus's yearly volume;
* `contemporary`: how much closer the text comes to year-Y papers than to the whole literature;
* `field_is_latest`, `field_year`: ridge models fitted on the field's own indexed papers (their
  dates, as the retrieval uses them): "published in Y rather than Y-10..Y-2", and the year.
  Papers left out of the query are left out of the fit too (an exact rank-2 downdate);
* `density`: mean similarity of the 10 nearest papers (a crowded neighbourhood).

The ridge models read the sentence embedding and, when the timeline has a `Lexicon`, the text's
words too (TF-IDF reduced by SVD over the indexed texts): a field's vocabulary drifts with its
topics ("kernel" to "deep" to "transformer") in ways a sentence embedding blurs, and the two views
together date a paper better than either alone.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from ...lru import LRU

FEATURES = ("knn_year", "wknn_year", "profile_year", "field_profile_year", "contemporary",
            "field_is_latest", "field_year", "density")
WINDOW = 10  # SchNovel's largest gap
TOP_PER_YEAR = 5
RIDGE = {"is_latest": 10.0, "year": 3.0}
LEXICAL_DIM = 256
GRAMS_KEPT = 96  # per-(venue, year) Gram matrices kept (float32, 1.6 MB each at 641 dimensions): a field's ten-year window several times over
SIMILARITY_BLOCK = 16_384  # float16 paper vectors widened to float32 this many at a time (24 MB)
RIDGES_KEPT = 16  # fitted ridge models kept (callers ask in (field, cutoff) order)


def one_blas_thread():
    """Small solves and matrix-vector products run several times slower on a threaded BLAS when the
    cores are busy (an editor, a build); one thread is never slower for these sizes."""
    try:
        from threadpoolctl import threadpool_limits  # installed with scikit-learn (sentence-transformers)
    except ImportError:  # pragma: no cover
        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")


@dataclass
class Lexicon:
    """The words of the indexed texts (TF-IDF, then SVD to `LEXICAL_DIM`), fitted once per index build;
    `rows` are the indexed papers' unit vectors in that space, `vectors` maps any other text there."""

    tfidf: object  # sklearn TfidfVectorizer
    svd: object  # sklearn TruncatedSVD
    rows: np.ndarray  # float32; read from a memory-mapped file once cached (`model.load_or_fit_lexicon`)

    @classmethod
    def fit(cls, texts: Iterable[str], dim: int = LEXICAL_DIM, seed: int = 0) -> "Lexicon":
        from sklearn.decomposition import TruncatedSVD
        from sklearn.feature_extraction.text import TfidfVectorizer

        tfidf = TfidfVectorizer(min_df=3, max_df=0.5, sublinear_tf=True, stop_words="english", dtype=np.float32)
        counts = tfidf.fit_transform(texts)
        svd = TruncatedSVD(min(dim, counts.shape[1] - 1), random_state=seed)
        with one_blas_thread():
            return cls(tfidf, svd, _unit(svd.fit_transform(counts)))

    @classmethod
    def of(cls, index) -> "Lexicon":
        return cls.fit(index.texts())

    def vectors(self, texts: Sequence[str]) -> np.ndarray:
        return _unit(self.svd.transform(self.tfidf.transform(list(texts))))


def _unit(rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms > 0, norms, 1.0)


@dataclass
class _Ridge:
    """A ridge fit kept as the Cholesky factor of X^T X + L and X^T y, so any two training rows can be
    left out exactly."""

    kind: str
    cutoff: int
    idx: np.ndarray  # the papers in the fit, sorted
    factor: tuple  # scipy.linalg.cho_factor of X^T X + L
    b: np.ndarray
    w: np.ndarray  # the weights with every row in
    scale: float  # std of the fitted values, so scores from different fits are comparable

    def target(self, years: np.ndarray) -> np.ndarray:
        """What the fit predicts for papers of these years."""
        if self.kind == "is_latest":
            return (np.asarray(years) == self.cutoff).astype(np.float64)
        return (np.asarray(years) - self.cutoff).astype(np.float64)

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        from scipy.linalg import cho_solve  # imported only when a novelty score is fitted: the CLI starts without scipy

        return cho_solve(self.factor, rhs)

    def holds(self, i: int) -> bool:
        j = int(np.searchsorted(self.idx, i))
        return j < len(self.idx) and int(self.idx[j]) == i


class Timeline:
    """Unit vectors, years and venues of every indexed paper, for exact per-year similarity profiles;
    the ridge models read `design` rows: the embedding, and the lexical vector when there is a lexicon."""

    def __init__(self, matrix: np.ndarray, years: np.ndarray, venues: Sequence[str], lexicon: Lexicon | None = None):
        self.P = np.asarray(matrix)  # float32, or float16 (half the bytes: the editor's timeline)
        if self.P.dtype not in (np.float16, np.float32):
            self.P = self.P.astype(np.float32)
        self.lexicon = lexicon
        # the design rows are put together as they are read: the lexical rows (a mapped file once cached)
        # are read only for the fields a fit needs, and the paper vectors are not held a second time
        self.width = self.P.shape[1] + (lexicon.rows.shape[1] if lexicon is not None else 0)
        self.years = np.asarray(years, dtype=np.int64)
        self.venues = np.array([str(v).lower() for v in venues], dtype=object)
        self._by_year = {int(y): np.nonzero(self.years == y)[0] for y in np.unique(self.years) if y >= 0}
        self._venue_mask: dict[tuple[str, ...], np.ndarray] = {}
        # Each fit is a sum of per-(venue, year) Gram matrices of the design rows (with an intercept
        # column): a paper enters one Gram once, not every window of ten years it falls in, and
        # only the most recently used Grams and fits stay in memory (each is (d+1)^2 floats).
        self._grams = LRU(GRAMS_KEPT)
        self._ridges = LRU(RIDGES_KEPT)

    @classmethod
    def of(cls, index, matrix: np.ndarray, lexicon: Lexicon | None = None) -> "Timeline":
        return cls(matrix, index.years, index.venues, lexicon)

    def design_row(self, vector: np.ndarray, text: str | None = None, row: int | None = None) -> np.ndarray:
        """What the ridge models read for a text: an indexed paper's design row, else its embedding
        (and, with a lexicon, its words)."""
        if row is not None:
            return self.design_rows([row])[0]
        v = np.asarray(vector, dtype=np.float32).ravel()
        if self.lexicon is None:
            return v
        return np.concatenate([v, self.lexicon.vectors([text or ""])[0]]) / np.float32(np.sqrt(2))

    def design_rows(self, rows) -> np.ndarray:
        """The design rows of these indexed papers (float32): the embedding, and with a lexicon its
        lexical vector, the two scaled by 1/sqrt(2) so that the row stays a unit vector."""
        vectors = np.asarray(self.P[rows], dtype=np.float32)
        if self.lexicon is None:
            return vectors
        return np.hstack([vectors, np.asarray(self.lexicon.rows[rows], dtype=np.float32)]) / np.float32(np.sqrt(2))

    def venue_mask(self, field: Sequence[str]) -> np.ndarray:
        key = tuple(sorted(v.lower() for v in field))
        if key not in self._venue_mask:
            self._venue_mask[key] = np.isin(self.venues, list(key))
        return self._venue_mask[key]

    def latest_year(self, field: Sequence[str] | None = None) -> int:
        years = self.years[self.venue_mask(field)] if field else self.years
        years = years[years >= 0]
        return int(years.max()) if len(years) else 0

    def similarities(self, vectors: np.ndarray) -> np.ndarray:
        """Cosine similarity of each vector (a row) to every paper, as one matrix product: on a busy
        machine a threaded BLAS runs one matrix-vector product several times slower than this."""
        V = np.asarray(vectors, dtype=np.float32).reshape(-1, self.P.shape[1])
        if self.P.dtype == np.float32:
            return V @ self.P.T
        out = np.empty((len(V), len(self.P)), dtype=np.float32)
        for lo in range(0, len(self.P), SIMILARITY_BLOCK):  # float16 rows widened a block at a time
            out[:, lo:lo + SIMILARITY_BLOCK] = V @ self.P[lo:lo + SIMILARITY_BLOCK].astype(np.float32).T
        return out

    def field_of(self, vector: np.ndarray, exclude: Sequence[int] = (), k: int = 10,
                 sims: np.ndarray | None = None) -> tuple[str, ...]:
        """A lone text's field: the venues at least two of its k nearest papers come from (else the nearest one's)."""
        sims = (self.similarities(vector)[0] if sims is None else sims).copy()
        sims[list(exclude)] = -np.inf
        top = np.argpartition(-sims, min(k, len(sims) - 1))[:k]
        top = top[np.argsort(-sims[top])]
        venues, counts = np.unique(self.venues[top].astype(str), return_counts=True)
        common = tuple(str(v) for v, c in zip(venues, counts) if c >= 2)
        return common or ((str(self.venues[top[0]]),) if len(top) else ())

    # -- features ------------------------------------------------------------------------------
    def features(self, vector: np.ndarray, cutoff: int, field: Sequence[str] = (),
                 exclude: Sequence[int] = (), sims: np.ndarray | None = None,
                 design: np.ndarray | None = None) -> np.ndarray:
        """FEATURES for one text at `cutoff`, `exclude` (paper rows) left out of everything;
        `sims`: its row of `similarities`, when the caller batched them; `design`: its `design_row`."""
        v = np.asarray(vector, dtype=np.float32)
        x = self.design_row(v) if design is None else design
        sims = self.similarities(v)[0] if sims is None else sims
        allowed = (self.years >= 0) & (self.years <= cutoff)
        allowed[list(exclude)] = False
        cand = np.nonzero(allowed)[0]
        if len(cand) == 0:
            return np.zeros(len(FEATURES))
        s = sims[cand]
        k30 = min(30, len(cand))
        top = cand[np.argpartition(-s, k30 - 1)[:k30]]
        top = top[np.argsort(-sims[top])]
        top10 = top[:10]
        w = np.exp((sims[top] - sims[top].max()) / 0.05)
        infield = allowed & self.venue_mask(field) if field else np.zeros_like(allowed)
        best = _top_mean(s, TOP_PER_YEAR)
        profile = self._profile(sims, allowed, cutoff)
        field_profile = self._profile(sims, infield, cutoff) if field else {}
        latest = self._ridge_score("is_latest", x, field, cutoff, exclude)
        year = self._ridge_score("year", x, field, cutoff, exclude)
        return np.array([
            self.years[top10].mean() - cutoff,
            float((self.years[top] * w).sum() / w.sum()) - cutoff,
            _soft_argmax(profile, cutoff),
            _soft_argmax(field_profile, cutoff),
            (profile[cutoff] - best) if cutoff in profile else 0.0,
            latest,
            year,
            float(sims[top10].mean()),
        ])

    def _profile(self, sims: np.ndarray, allowed: np.ndarray, cutoff: int) -> dict[int, float]:
        out = {}
        for y in range(cutoff - WINDOW, cutoff + 1):
            rows = self._by_year.get(y)
            if rows is None:
                continue
            rows = rows[allowed[rows]]
            if len(rows) >= TOP_PER_YEAR:
                out[y] = _top_mean(sims[rows], TOP_PER_YEAR)
        return out

    # -- in-field ridge models -----------------------------------------------------------------
    def _ridge_score(self, kind: str, v: np.ndarray, field: Sequence[str], cutoff: int, exclude: Sequence[int]) -> float:
        if not field:
            return 0.0
        fit = self._ridge(kind, tuple(sorted(f.lower() for f in field)), cutoff)
        if fit is None:
            return 0.0
        w = self._weights(fit, exclude)
        return float((np.append(v, 1.0) @ w) / fit.scale)

    def _gram(self, venue: str, year: int) -> np.ndarray:
        """[X 1]^T [X 1] over the design rows of one venue's papers of one year: the last row and column
        hold the column sums and, in the corner, the number of papers."""
        def make():
            rows = np.nonzero((self.venues == venue) & (self.years == year))[0]
            X = np.hstack([self.design_rows(rows).astype(np.float64), np.ones((len(rows), 1))])
            return (X.T @ X).astype(np.float32)  # kept in half the bytes; sums of them are float64
        return self._grams.get_or((venue, year), make)

    def _ridge(self, kind: str, field: tuple[str, ...], cutoff: int) -> _Ridge | None:
        return self._ridges.get_or((kind, field, cutoff), lambda: self._fit_ridge(kind, field, cutoff))

    def _fit_ridge(self, kind: str, field: tuple[str, ...], cutoff: int) -> _Ridge | None:
        from scipy.linalg import cho_factor, cho_solve  # as in _Ridge.solve

        rows = self.venue_mask(field) & (self.years <= cutoff) & (self.years >= cutoff - WINDOW)
        if kind == "is_latest":
            rows &= self.years != cutoff - 1  # the nearest pairs SchNovel asks are 2 years apart
        idx = np.nonzero(rows)[0]
        if len(idx) < 20 or len(np.unique(self.years[idx] == cutoff if kind == "is_latest" else self.years[idx])) < 2:
            return None
        d = self.width + 1
        A, b = np.zeros((d, d)), np.zeros(d)
        for venue, year in sorted({(str(v), int(y)) for v, y in zip(self.venues[idx], self.years[idx])}):
            gram = self._gram(venue, year)
            A += gram
            b += gram[:, -1] * (float(year == cutoff) if kind == "is_latest" else float(year - cutoff))
        penalty = np.full(d, RIDGE[kind])
        penalty[-1] = 1e-6  # the intercept is not shrunk
        factor = cho_factor(A + np.diag(penalty))
        w = cho_solve(factor, b)
        n = A[-1, -1]
        mean = A[-1] @ w / n  # of the fitted values X w, from the Gram alone
        scale = float(np.sqrt(max(w @ A @ w / n - mean * mean, 0.0))) or 1.0
        return _Ridge(kind, cutoff, idx, factor, b, w, scale)

    def _weights(self, fit: _Ridge, leave_out: Sequence[int]) -> np.ndarray:
        """Ridge weights without the `leave_out` rows (Woodbury: a rank-1 or rank-2 downdate)."""
        drop = [int(i) for i in leave_out if fit.holds(int(i))]
        if not drop:
            return fit.w
        R = np.hstack([self.design_rows(drop).astype(np.float64), np.ones((len(drop), 1))])
        b = fit.b - R.T @ fit.target(self.years[drop])
        Gb, GR = fit.solve(b), fit.solve(R.T)
        return Gb + GR @ np.linalg.solve(np.eye(len(drop)) - R @ GR, R @ Gb)


def _top_mean(values: np.ndarray, k: int) -> float:
    k = min(k, len(values))
    return float(np.partition(values, len(values) - k)[-k:].mean())


def _soft_argmax(profile: dict[int, float], cutoff: int, temperature: float = 0.02) -> float:
    """The year the text resembles most, softened; relative to the cutoff (0 = the newest year)."""
    if not profile:
        return 0.0
    ys = np.array(list(profile), dtype=float)
    ps = np.array(list(profile.values()))
    w = np.exp((ps - ps.max()) / temperature)
    return float((ys * w).sum() / w.sum()) - cutoff
