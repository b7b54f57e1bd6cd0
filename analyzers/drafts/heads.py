"""Cheap, strong CPU scorers on sentence embeddings: the "beyond the paper" side of quality and style.

A 135M LLM barely separates scientific from informal prose (see `peerlint bench drafts`), while
MiniLM embeddings do so almost perfectly with a linear head.  Three heads, all plain numpy:

* `LinearHead` (binary logistic regression, Newton's method): scientific register (proceedings
  chunks vs informal English) for `weak-chunk`, and accepted-vs-rejected for the acceptance bench;
* `VenueHead` (linear discriminant analysis with a shrunk shared covariance, closed form): which
  venue a chunk reads like, trained at first use on the open index's own venue labels;
* both map a raw score to 1–10 through its percentile among reference texts (`Percentiles`), so
  "well below the venue's own papers" is a statement about a distribution, not a magic number.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from ..npz_file import load_npz, save_npz
from ...lru import LRU

log = logging.getLogger(__name__)

HEADS_FILE = Path(__file__).with_name("data") / "drafts_heads.npz"
VERSION = 1
VENUE_VERSION = 2  # 2: venues learnt from `head_labels` (no workshops, no venues under MIN_VENUE_SHARE)
MIN_VENUE_PAPERS = 20
MIN_VENUE_SHARE = 0.002  # a venue the head names holds this share of the index's papers (0.2%)


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(x, -30, 30)))


def fit_logistic(X: np.ndarray, y: np.ndarray, l2: float = 1.0, iters: int = 50,
                 balanced: bool = True) -> tuple[np.ndarray, float]:
    """(w, b) of an L2-regularised logistic regression (the intercept is not penalised).

    `balanced` weighs each class to half the total, so a 10:1 corpus does not buy a biased head.
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    Xb = np.hstack([X, np.ones((len(X), 1))])
    pos = max(y.sum(), 1.0)
    neg = max(len(y) - y.sum(), 1.0)
    sw = np.where(y > 0.5, len(y) / (2 * pos), len(y) / (2 * neg)) if balanced else np.ones(len(y))
    reg = np.full(Xb.shape[1], l2)
    reg[-1] = 1e-6
    w = np.zeros(Xb.shape[1])
    for _ in range(iters):
        p = sigmoid(Xb @ w)
        grad = Xb.T @ (sw * (p - y)) + reg * w
        hess = (Xb.T * (sw * p * (1 - p))) @ Xb + np.diag(reg)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w[:-1], float(w[-1])


@dataclass
class Percentiles:
    """A reference distribution kept as 101 quantiles: percentile(x) in [0, 1]."""

    quantiles: np.ndarray

    @classmethod
    def of(cls, values: Sequence[float]) -> "Percentiles":
        return cls(np.quantile(np.asarray(values, dtype=float), np.linspace(0, 1, 101)))

    def percentile(self, x: np.ndarray | float) -> np.ndarray:
        return np.interp(np.asarray(x, dtype=float), self.quantiles, np.linspace(0, 1, 101), left=0.0, right=1.0)

    def rating(self, x: np.ndarray | float) -> np.ndarray:
        """1–10 on the same scale as the LLM's ratings: 1 + 9 × percentile among the references."""
        return 1.0 + 9.0 * self.percentile(x)


def percentile_of(rating: float) -> float:
    """The percentile (0–1) an embedding head's 1–10 rating stands for: the inverse of `Percentiles.rating`."""
    return float((rating - 1.0) / 9.0)


@dataclass
class LinearHead:
    """A logistic head on normalised embeddings: logit = w·x + b."""

    w: np.ndarray
    b: float
    reference: Percentiles  # logits of the positive class's reference texts
    model_id: str = ""  # the embedding model the head was trained on; other vectors are meaningless here
    info: dict = field(default_factory=dict)

    @classmethod
    def train(cls, X: np.ndarray, y: np.ndarray, reference: np.ndarray | None = None, l2: float = 1.0,
              model_id: str = "", info: dict | None = None) -> "LinearHead":
        w, b = fit_logistic(X, y, l2)
        ref = np.asarray(reference if reference is not None else np.asarray(X)[np.asarray(y) > 0.5])
        return cls(w, b, Percentiles.of(ref @ w + b), model_id, dict(info or {}))

    def logit(self, X: np.ndarray) -> np.ndarray:
        return np.atleast_2d(np.asarray(X, dtype=np.float64)) @ self.w + self.b

    def prob(self, X: np.ndarray) -> np.ndarray:
        return sigmoid(self.logit(X))

    def rating(self, X: np.ndarray) -> np.ndarray:
        return self.reference.rating(self.logit(X))


BLOCK_ROWS = 16_384  # rows of a paper matrix converted to float64 at a time


def _blocks(X: np.ndarray, rows: np.ndarray):
    """(offset into rows, X[rows] for a block of them in float64), block by block."""
    for lo in range(0, len(rows), BLOCK_ROWS):
        yield lo, np.asarray(X[rows[lo:lo + BLOCK_ROWS]], dtype=np.float64)


def class_means(X: np.ndarray, rows: np.ndarray, of: np.ndarray, classes: int) -> np.ndarray:
    """The mean of X's `rows` per class (`of`: each row's class number), summed a block at a time."""
    sums = np.zeros((classes, X.shape[1]))
    for lo, block in _blocks(X, rows):
        sums += np.eye(classes)[of[lo:lo + len(block)]].T @ block
    return sums / np.maximum(np.bincount(of, minlength=classes), 1)[:, None]


@dataclass
class VenueHead:
    """Shrinkage LDA over venues: class means, a shared covariance, uniform priors."""

    classes: tuple[str, ...]
    W: np.ndarray  # (dim, classes)
    b: np.ndarray  # (classes,)
    own: dict[str, Percentiles] = field(default_factory=dict)  # P(venue | own papers) per venue
    model_id: str = ""
    info: dict = field(default_factory=dict)

    @classmethod
    def train(cls, X: np.ndarray, labels: Sequence[str], shrink: float = 0.3, min_count: int = 20,
              model_id: str = "", rows: np.ndarray | None = None) -> "VenueHead":
        """`rows`: the rows of X (and labels) to learn from, a mask or indices (default all). X is read
        a block of rows at a time in float64, never copied whole: 158k papers fit in ~0.3 GB beside X."""
        labels = np.asarray([str(v) for v in labels])
        rows = np.arange(len(labels)) if rows is None else np.flatnonzero(rows) if np.asarray(rows).dtype == bool \
            else np.asarray(rows)
        names, counts = np.unique(labels[rows], return_counts=True)
        classes = tuple(str(n) for n, c in zip(names, counts) if c >= min_count and n)
        if len(classes) < 2:
            raise ValueError(f"a venue head needs two venues with at least {min_count} papers each, got {len(classes)}")
        rows = rows[np.isin(labels[rows], classes)]
        of = np.searchsorted(np.array(classes), labels[rows])
        means = class_means(X, rows, of, len(classes))
        cov = np.zeros((X.shape[1], X.shape[1]))
        for lo, block in _blocks(X, rows):
            centred = block - means[of[lo:lo + len(block)]]
            cov += centred.T @ centred
        return cls._from_scatter(X, rows, of, classes, means, cov, shrink, model_id)

    @classmethod
    def _from_scatter(cls, X: np.ndarray, rows: np.ndarray, of: np.ndarray, classes: tuple[str, ...],
                      means: np.ndarray, within: np.ndarray, shrink: float, model_id: str) -> "VenueHead":
        """The head of class `means` and within-class scatter `within` over X's `rows` (`of`: each row's
        class number): the shrunk shared covariance, the discriminants, and each venue's own papers'
        probabilities of it (one more pass over the rows)."""
        cov = within / max(len(rows) - len(classes), 1)
        cov = (1 - shrink) * cov + shrink * np.eye(len(cov)) * np.trace(cov) / len(cov)
        W = np.linalg.solve(cov, means.T)
        head = cls(classes, W, -0.5 * np.sum(means.T * W, axis=0), model_id=model_id,
                   info={"papers": int(len(rows)), "shrink": shrink})
        own = np.empty(len(rows))  # each paper's probability of its own venue
        for lo, block in _blocks(X, rows):
            own[lo:lo + len(block)] = head.probs(block)[np.arange(len(block)), of[lo:lo + len(block)]]
        head.own = {c: Percentiles.of(own[of == i]) for i, c in enumerate(classes)}
        return head

    @classmethod
    def train_by_years(cls, X: np.ndarray, labels: Sequence[str], years: Sequence[int],
                       selections: dict, shrink: float = 0.3, min_count: int = 20,
                       model_id: str = "") -> dict:
        """`train(rows=isin(years, chosen))` for each entry of `selections` (a name: the year values it
        learns from, -1 for undated papers), from one pass over X instead of two a head: per year the sum of
        x xᵀ and per venue and year the sum of x, from which each head's class means and within-class
        covariance follow; then one pass a head for its papers' own-venue probabilities. A selection with
        fewer than two venues of `min_count` papers gets no head."""
        labels, years = np.asarray([str(v) for v in labels]), year_array(years)
        rows = np.flatnonzero(labels != "")
        names, li = np.unique(labels[rows], return_inverse=True)
        values, yi = np.unique(years[rows], return_inverse=True)
        d = X.shape[1]
        sums = np.zeros((len(values), len(names), d))
        counts = np.zeros((len(values), len(names)))
        scatter = np.zeros((len(values), d, d))
        for lo, block in _blocks(X, rows):
            l, y = li[lo:lo + len(block)], yi[lo:lo + len(block)]
            for j in np.unique(y):
                of = y == j
                part, onehot = block[of], np.eye(len(names))[l[of]]
                scatter[j] += part.T @ part
                sums[j] += onehot.T @ part
                counts[j] += onehot.sum(axis=0)
        heads = {}
        for key, chosen in selections.items():
            picked = np.isin(values, list(chosen))
            n = counts[picked].sum(axis=0)
            keep = n >= min_count
            if keep.sum() < 2:
                continue
            classes = tuple(str(c) for c in names[keep])
            means = sums[picked].sum(axis=0)[keep] / n[keep][:, None]
            total = scatter[picked].sum(axis=0)
            mine = rows[np.isin(years[rows], list(chosen)) & np.isin(labels[rows], classes)]
            dropped = rows[np.isin(years[rows], list(chosen)) & ~np.isin(labels[rows], classes)]
            for _, block in _blocks(X, dropped):  # the few papers of venues too small here: out of the sums
                total -= block.T @ block
            within = total - (means * n[keep][:, None]).T @ means
            heads[key] = cls._from_scatter(X, mine, np.searchsorted(np.array(classes), labels[mine]), classes,
                                           means, within, shrink, model_id)
        return heads

    def logits(self, X: np.ndarray) -> np.ndarray:
        return np.atleast_2d(np.asarray(X, dtype=np.float64)) @ self.W + self.b

    def probs(self, X: np.ndarray) -> np.ndarray:
        z = self.logits(X)
        z = np.exp(z - z.max(axis=1, keepdims=True))
        return z / z.sum(axis=1, keepdims=True)

    def predict(self, X: np.ndarray) -> list[str]:
        return [self.classes[i] for i in np.argmax(self.logits(X), axis=1)]

    def topical_percentiles(self, X: np.ndarray, venue: str, neighbours: Sequence[np.ndarray]) -> np.ndarray:
        """Per row of X, the share of the venue's papers nearest it on topic (`neighbours[i]`: their
        vectors) that read less like the venue than it does. Among all of the venue's papers a text on a
        topic that another venue also covers reads unlike it: ICLR's own 2024–25 language-model papers sit
        at a median 25th percentile of ICLR there (COLM takes their probability), the others at the 50th.
        Rows with fewer than `MIN_TOPICAL` neighbours fall back to all of the venue's papers."""
        i = self.venue_index(venue)
        if i is None:
            raise KeyError(venue)
        p = self.probs(X)[:, i]
        out = self.own[self.classes[i]].percentile(p)
        for r, near in enumerate(neighbours):
            if len(near) >= MIN_TOPICAL:
                q = self.probs(near)[:, i]
                out[r] = (np.sum(q < p[r]) + 0.5 * np.sum(q == p[r])) / len(q)
        return out

    def venue_index(self, venue: str) -> int | None:
        lowered = [c.lower() for c in self.classes]
        return lowered.index(venue.lower()) if venue.lower() in lowered else None

    def rating(self, X: np.ndarray, venue: str) -> np.ndarray:
        """1–10: percentile of P(venue | text) among the venue's own indexed papers."""
        i = self.venue_index(venue)
        if i is None:
            raise KeyError(venue)
        return self.own[self.classes[i]].rating(self.probs(X)[:, i])

    def save(self, path: Path) -> None:
        save_npz(path, {"classes": self.classes, "model_id": self.model_id, "info": self.info, "version": VENUE_VERSION},
                 {"W": self.W, "b": self.b, "own": np.stack([self.own[c].quantiles for c in self.classes])})

    @classmethod
    def load(cls, path: Path) -> "VenueHead | None":
        def build(meta, data) -> "VenueHead":
            classes = tuple(meta["classes"])
            own = {c: Percentiles(q) for c, q in zip(classes, data["own"])}
            return cls(classes, data["W"], data["b"], own, meta["model_id"], meta["info"])

        return load_npz(path, VENUE_VERSION, build)


def head_labels(venues: Sequence[str], statuses: Sequence[str]) -> list[str]:
    """The venue each paper teaches the venue heads, "" for a paper they leave out.

    Left out: workshop papers (their status names a workshop), and every paper of a venue left with
    fewer than `MIN_VENUE_PAPERS` or `MIN_VENUE_SHARE` of the index's papers. The heads give every
    venue the same prior, so a 130-paper workshop would otherwise be named as readily as NeurIPS."""
    labels = ["" if "workshop" in (status or "").lower() else str(venue or "")
              for venue, status in zip(venues, statuses)]
    counts = Counter(labels)
    least = max(MIN_VENUE_PAPERS, int(np.ceil(MIN_VENUE_SHARE * len(labels))))
    return [v if v and counts[v] >= least else "" for v in labels]


_HEAD_LABELS = LRU(4)  # (index folder, build) -> its head labels: a build never changes


def index_head_labels(index) -> list[str]:
    """`head_labels` of an open index (`VectorIndex`), read once per build (its statuses are a scan of
    the metadata table, which the build's head, its calibration and the style heads all need)."""
    key = (str(index.root), index.build.name)
    return list(_HEAD_LABELS.get_or(key, lambda: tuple(head_labels(index.venues, index.statuses()))))


TOPICAL_NEIGHBOURS = 100  # the venue's papers nearest a section that its style percentile is taken among
MIN_TOPICAL = 20  # fewer found (a small venue behind a filtered graph search): all of the venue's papers


def paper_matrix(index) -> np.ndarray:
    """One normalised vector per indexed paper: the mean of its chunk vectors (`VectorIndex.paper_matrix`)."""
    return index.paper_matrix()


ALIGN_SHARE = 0.05  # a venue's style head stops at its newest year when later papers are this share of the head's


def year_array(years: Sequence[int]) -> np.ndarray:
    """Years as an int array, -1 for unknown (None)."""
    years = np.asarray(years)
    return np.array([-1 if y is None else int(y) for y in years]) if years.dtype == object else years.astype(int)


def style_cuts(labels: Sequence[str], years: Sequence[int], share: float = ALIGN_SHARE) -> dict[str, int]:
    """The last year each lagging venue's style head learns from: the venue's newest year, for each venue
    whose head papers of later years (other venues' newer proceedings) are at least `share` of the head's
    papers; a venue not in the answer is read from the whole head (as recent as the rest, or undated).

    A venue indexed only up to an older year than the others loses its new-topic papers to them: P(venue
    | text) of its own new papers falls, and its authors are told their text reads unlike it. A head over
    every venue's papers up to that year compares like with like (`peerlint bench drafts --suite venue`,
    the table of lagging venues)."""
    labels, years = np.char.lower(np.asarray(labels).astype(str)), year_array(years)
    dated = (labels != "") & (years >= 0)
    if not dated.any():
        return {}
    dated_years = np.sort(years[dated])
    least = share * max(int(np.sum(labels != "")), 1)
    cuts = {}
    for venue in np.unique(labels[dated]):
        cut = int(years[dated & (labels == venue)].max())
        later = len(dated_years) - int(np.searchsorted(dated_years, cut, side="right"))
        if later >= least:
            cuts[str(venue)] = cut
    return cuts


def style_head_for(index, venue: str, cache_dir: Path | None,
                   matrix: Callable[[], np.ndarray] | None = None) -> VenueHead | None:
    """The head a venue's style percentile is read from: the build's venue head, or, for a venue whose
    newest indexed year lags the others' (`style_cuts`), a head over every venue's papers up to that year,
    trained once (about a second) and cached beside the build's; the build's head again when fewer than
    two venues hold papers up to then."""
    cut = style_cuts(index_head_labels(index), index.years).get(venue.lower())
    head = venue_head_for(index, cache_dir, matrix, upto=cut) if cut is not None else None
    if head is None or head.venue_index(venue) is None:  # up to then, too few venues to learn from: the whole head
        return venue_head_for(index, cache_dir, matrix)
    return head


def prepare_venue_heads(index, cache_dir: Path | None,
                        matrix: Callable[[], np.ndarray] | None = None) -> tuple[VenueHead | None, dict[str, int]]:
    """The build's venue head and the style heads of the venues that lag the others (`style_cuts`),
    learnt together (`learnt_heads`); with each lagging venue whose style head could be learnt and the
    year it is judged up to."""
    cuts = style_cuts(index_head_labels(index), index.years)
    heads = learnt_heads(index, cache_dir, {None, *cuts.values()}, matrix)
    lagging = {venue: cut for venue, cut in cuts.items()
               if heads.get(cut) is not None and heads[cut].venue_index(venue) is not None}
    return heads.get(None), lagging


def learnt_heads(index, cache_dir: Path | None, keys, matrix: Callable[[], np.ndarray] | None = None) -> dict:
    """The build's venue heads for `keys` (None: every paper; a year: the papers up to it), read from the
    cache beside the build or, where missing, learnt in one pass over the paper matrix
    (`VenueHead.train_by_years`) and cached; None for a key with fewer than two venues to learn from."""
    heads = {key: _cached_head(_head_path(index, cache_dir, key)) for key in keys}
    missing = [key for key, head in heads.items() if head is None]
    if missing:
        labels, years = index_head_labels(index), year_array(index.years)
        values = {int(v) for v in np.unique(years)}
        selections = {key: values if key is None else {v for v in values if 0 <= v <= key} for key in missing}
        X = matrix() if matrix is not None else paper_matrix(index)
        for key, head in VenueHead.train_by_years(X, labels, years, selections,
                                                  model_id=index.manifest.model_id).items():
            if key is not None:
                head.info["upto"] = int(key)
            _save_head(head, _head_path(index, cache_dir, key))
            heads[key] = head
        for key in missing:
            if heads[key] is None:
                log.info("no venue head for %s%s: fewer than two venues to learn from", index.root,
                         "" if key is None else f" up to {key}")
    return heads


def _head_path(index, cache_dir: Path | None, upto: int | None) -> Path | None:
    suffix = "" if upto is None else f"-to{upto}"
    return (cache_dir / "drafts" / f"venue-head-{index.build.name}{suffix}.npz") if cache_dir else None


def _cached_head(path: Path | None) -> VenueHead | None:
    return VenueHead.load(path) if path is not None and path.exists() else None


def _save_head(head: VenueHead, path: Path | None) -> None:
    if path is None:
        return
    try:
        head.save(path)
    except OSError as exc:
        log.warning("cannot cache the venue head at %s: %s", path, exc)


def venue_head_for(index, cache_dir: Path | None, matrix: Callable[[], np.ndarray] | None = None,
                   upto: int | None = None) -> VenueHead | None:
    """The venue head of this index build, trained once (seconds) and cached beside it (`learnt_heads`).
    `matrix`: gives the index's `paper_matrix` when the head must be trained (~2 s at 171k papers: a
    caller that also calibrates passes one that computes it once). `upto`: learn only from papers of that
    year and before (a style head, `style_head_for`); its `info["upto"]` says so."""
    return learnt_heads(index, cache_dir, [upto], matrix)[upto]


def save_register_head(head: LinearHead, path: Path = HEADS_FILE) -> None:
    """Written by `peerlint bench drafts --suite informal`; shipped so the editor needs no informal corpus.
    `head.info["train_excludes"]` states what its training kept out (the acceptance suite's venue-years,
    the held-out half's titles); a head without it predates that rule."""
    save_npz(path, {"model_id": head.model_id, "info": head.info, "version": VERSION},
             {"w": head.w, "b": np.array(head.b), "reference": head.reference.quantiles})


def load_register_head(path: Path = HEADS_FILE) -> LinearHead | None:
    return load_npz(path, VERSION, lambda meta, data: LinearHead(
        data["w"], float(data["b"]), Percentiles(data["reference"]), meta["model_id"], meta["info"]))
