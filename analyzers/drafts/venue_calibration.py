"""How far to trust "reads most like": the venue head's probabilities calibrated on a held-out year,
and a nearness threshold below which a text reads unlike every indexed venue (issue #34).

The LDA venue head (`heads.VenueHead`) is trained on every indexed paper, so its probabilities on a
new text are over-confident ("UAI, 0.99" for a NAACL abstract). `calibrate` measures that on a year
the head did not see: it trains a head on the other years, fits one temperature T on the held-out
year (logits / T, minimum negative log-likelihood: Guo et al., 2017) and records the year's
similarities to the venue centroids; the shipped head's logits are divided by the same T. A section
whose mean vector is less similar to its nearest venue centroid than all but `FAR_PERCENTILE` of the
held-out year's papers is said to read unlike every indexed venue instead of being given one.

Nothing here depends on a corpus's venue list: `venue_calibration_for` computes the calibration from
whatever index is open (a few seconds) and caches it beside the venue head, keyed by the index build.
`peerlint bench drafts --suite venue` measures it on test years kept out of both fits.
"""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from ..npz_file import load_npz, save_npz
from .heads import VenueHead, class_means, index_head_labels, paper_matrix

log = logging.getLogger(__name__)

VERSION = 2  # 2: fitted on `head_labels`
FAR_PERCENTILE = 0.05  # "far": less similar to every venue than 95% of held-out in-field papers (bench: chosen on dev)
TYPICAL_PERCENTILE = 0.10  # "typical in-field >= x": what 90% of held-out in-field papers reach
MIN_DEV_PAPERS = 30  # a dev venue-year counts with this many papers


def softmax(logits: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    z = np.atleast_2d(np.asarray(logits, dtype=np.float64)) / temperature
    z = np.exp(z - z.max(axis=1, keepdims=True))
    return z / z.sum(axis=1, keepdims=True)


def nll(logits: np.ndarray, truth: np.ndarray, temperature: float = 1.0) -> float:
    """Mean negative log-likelihood of the true classes (`truth`: column indices)."""
    p = softmax(logits, temperature)[np.arange(len(truth)), truth]
    return float(-np.mean(np.log(np.clip(p, 1e-12, 1.0))))


def fit_temperature(logits: np.ndarray, truth: np.ndarray, lo: float = 0.05, hi: float = 50.0) -> float:
    """The T in [lo, hi] that minimises the NLL of softmax(logits / T): golden-section search on log T
    (the NLL is convex in 1/T, so unimodal in log T)."""
    if len(truth) == 0:
        return 1.0
    a, b = np.log(lo), np.log(hi)
    g = (np.sqrt(5) - 1) / 2
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = nll(logits, truth, np.exp(c)), nll(logits, truth, np.exp(d))
    for _ in range(60):
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = nll(logits, truth, np.exp(c))
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = nll(logits, truth, np.exp(d))
    return float(np.exp((a + b) / 2))


@dataclass(frozen=True)
class ReliabilityBin:
    """Predictions whose confidence (top probability) falls in [lo, hi)."""

    lo: float
    hi: float
    count: int
    confidence: float | None  # mean top probability
    accuracy: float | None  # share of them whose top venue is the true one

    def row(self) -> list:
        r = (lambda x: None if x is None else round(x, 3))
        return [f"{self.lo:.1f}–{self.hi:.1f}", self.count, r(self.confidence), r(self.accuracy)]


def reliability(confidence: Sequence[float], correct: Sequence[bool], bins: int = 10) -> list[ReliabilityBin]:
    """Equal-width confidence bins (the last one closed): count, mean confidence, accuracy."""
    conf, ok = np.asarray(confidence, dtype=float), np.asarray(correct, dtype=bool)
    edges = np.linspace(0.0, 1.0, bins + 1)
    which = np.clip(np.digitize(conf, edges[1:-1]), 0, bins - 1)
    out = []
    for i in range(bins):
        m = which == i
        n = int(m.sum())
        out.append(ReliabilityBin(float(edges[i]), float(edges[i + 1]), n,
                                  float(conf[m].mean()) if n else None, float(ok[m].mean()) if n else None))
    return out


def ece(table: Sequence[ReliabilityBin]) -> float:
    """Expected calibration error: the count-weighted mean |accuracy - confidence| over the bins."""
    total = sum(b.count for b in table)
    return float(sum(b.count * abs(b.accuracy - b.confidence) for b in table if b.count) / total) if total else 0.0


def centroids(X: np.ndarray, labels: Sequence[str], classes: Sequence[str],
              rows: np.ndarray | None = None) -> np.ndarray:
    """One unit vector per class: the normalised mean of its rows of X (of `rows`, a mask, when given)."""
    labels = np.asarray(labels)
    rows = np.flatnonzero(np.isin(labels, classes) & (True if rows is None else np.asarray(rows, dtype=bool)))
    number = {c: i for i, c in enumerate(classes)}
    C = class_means(X, rows, np.array([number[v] for v in labels[rows]], dtype=np.int64), len(classes))
    return C / np.maximum(np.linalg.norm(C, axis=1, keepdims=True), 1e-12)


def nearest_centroid(C: np.ndarray, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each row of X (unit vectors): the index of its most similar centroid and that cosine."""
    X = np.atleast_2d(np.asarray(X, dtype=np.float64))
    X = X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-12)
    sims = X @ C.T
    best = np.argmax(sims, axis=1)
    return best, sims[np.arange(len(X)), best]


def dev_year(labels: Sequence[str], years: Sequence[int], exclude: Sequence[int] = (),
             min_papers: int = MIN_DEV_PAPERS) -> tuple[int, list[str]] | None:
    """The year (not in `exclude`) with the most venues of `min_papers`+ papers, the latest on ties,
    and those venues; None when no year has two."""
    counts = Counter((int(y), str(v)) for v, y in zip(labels, years) if v and y is not None and int(y) > 0
                     and int(y) not in set(exclude))
    by_year: dict[int, list[str]] = {}
    for (y, v), c in counts.items():
        if c >= min_papers:
            by_year.setdefault(y, []).append(v)
    by_year = {y: vs for y, vs in by_year.items() if len(vs) >= 2}
    if not by_year:
        return None
    year = max(by_year, key=lambda y: (len(by_year[y]), y))
    return year, sorted(by_year[year])


@dataclass
class VenueCalibration:
    """One temperature for the venue head's logits and the nearness a section needs to be given a venue."""

    temperature: float
    classes: tuple[str, ...]
    centroids: np.ndarray  # (classes, dim) unit vectors of the calibration head's training papers
    far_below: float  # nearest-centroid cosine under which a text reads unlike every indexed venue
    typical: float  # what TYPICAL_PERCENTILE of held-out in-field papers stay above
    info: dict = field(default_factory=dict)  # dev year, papers, NLL and ECE before/after, train_excludes

    def probs(self, head: VenueHead, X: np.ndarray) -> np.ndarray:
        """The head's calibrated probabilities."""
        return softmax(head.logits(X), self.temperature)

    def nearest(self, X: np.ndarray) -> tuple[list[str], np.ndarray]:
        best, sims = nearest_centroid(self.centroids, X)
        return [self.classes[i] for i in best], sims

    def far(self, similarity: float) -> bool:
        return similarity < self.far_below

    def save(self, path: Path) -> None:
        save_npz(path, {"version": VERSION, "temperature": self.temperature, "classes": list(self.classes),
                        "far_below": self.far_below, "typical": self.typical, "info": self.info},
                 {"centroids": self.centroids.astype(np.float32)})

    @classmethod
    def load(cls, path: Path) -> "VenueCalibration | None":
        return load_npz(path, VERSION, lambda meta, data: cls(
            float(meta["temperature"]), tuple(meta["classes"]), np.asarray(data["centroids"], dtype=np.float64),
            float(meta["far_below"]), float(meta["typical"]), meta["info"]))


def calibrate(X: np.ndarray, labels: Sequence[str], years: Sequence[int], dev: int | None = None,
              exclude_years: Sequence[int] = (), far_percentile: float = FAR_PERCENTILE,
              model_id: str = "") -> VenueCalibration:
    """Fit the calibration on one held-out year (`dev`, else `dev_year`): a head trained on the papers of
    the other years (never `exclude_years`: a bench's test years) scores the dev year's papers of its
    venues. Raises ValueError when the corpus has no such year."""
    labels = np.asarray([str(v) for v in labels])
    years = np.asarray([-1 if y is None else int(y) for y in years])
    if dev is None:
        found = dev_year(labels, years, exclude=exclude_years)
        if found is None:
            raise ValueError("no year has two venues of 30+ papers to calibrate the venue head on")
        dev = found[0]
    excluded = (years == dev) | np.isin(years, list(exclude_years))
    return fit_calibration(X, labels, years == dev, ~excluded, far_percentile, model_id,
                           {"dev": f"the year {dev}", "dev_year": int(dev),
                            "excluded_years": sorted({int(dev), *map(int, exclude_years)})})


def calibrate_on_half(X: np.ndarray, labels: Sequence[str], ids: Sequence[str],
                      far_percentile: float = FAR_PERCENTILE, model_id: str = "") -> VenueCalibration:
    """The fallback for an index whose venues share no year (each venue one year): half of the papers,
    by a hash of their ids, held out instead of a year."""
    half = np.array([stable_half(i) for i in ids], dtype=bool)
    return fit_calibration(X, labels, half, ~half, far_percentile, model_id,
                           {"dev": "half of the papers (hash of the id)", "dev_year": None, "excluded_years": []})


def stable_half(key: str) -> bool:
    return int(hashlib.blake2b(str(key).encode(), digest_size=4).hexdigest(), 16) % 2 == 1


def fit_calibration(X: np.ndarray, labels: Sequence[str], dev: np.ndarray, train: np.ndarray,
                    far_percentile: float, model_id: str, info: dict) -> VenueCalibration:
    """A head trained on the `train` rows scores the `dev` rows of its venues; T minimises their NLL;
    the far threshold is `far_percentile` of their nearest-centroid cosines. ValueError when the dev
    rows hold fewer than two papers of the head's venues."""
    labels = np.asarray([str(v) for v in labels])
    head = VenueHead.train(X, labels, model_id=model_id, rows=train)
    classes = np.array(head.classes)
    on_dev = dev & np.isin(labels, classes)
    if on_dev.sum() < 2:
        raise ValueError("the held-out papers hold fewer than two papers of the head's venues")
    Xd, truth = X[on_dev], np.searchsorted(classes, labels[on_dev])
    logits = head.logits(Xd)
    T = fit_temperature(logits, truth)
    C = centroids(X, labels, head.classes, rows=train)
    _, sims = nearest_centroid(C, Xd)
    before, after = softmax(logits), softmax(logits, T)
    correct = before.argmax(axis=1) == truth
    info = {**info, "dev_papers": int(on_dev.sum()), "trained_on": int(train.sum()), "venues": len(head.classes),
            "nll_before": round(nll(logits, truth), 4), "nll_after": round(nll(logits, truth, T), 4),
            "ece_before": round(ece(reliability(before.max(axis=1), correct)), 4),
            "ece_after": round(ece(reliability(after.max(axis=1), correct)), 4),
            "accuracy": round(float(correct.mean()), 4), "far_percentile": far_percentile, "model_id": model_id}
    return VenueCalibration(T, head.classes, C, float(np.quantile(sims, far_percentile)),
                            float(np.quantile(sims, TYPICAL_PERCENTILE)), info)


def venue_calibration_for(index, cache_dir: Path | None,
                          matrix: Callable[[], np.ndarray] | None = None) -> VenueCalibration | None:
    """The calibration of this index build's venue head: computed once (seconds) and cached beside the
    head; None when the index has no year to hold out (then "reads like" stays uncalibrated). `matrix`
    as for `venue_head_for`."""
    path = (cache_dir / "drafts" / f"venue-calibration-{index.build.name}.npz") if cache_dir else None
    if path is not None and path.exists():
        found = VenueCalibration.load(path)
        if found is not None:
            return found
    X, labels = matrix() if matrix is not None else paper_matrix(index), index_head_labels(index)
    try:
        calibration = calibrate(X, labels, list(index.years), model_id=index.manifest.model_id)
    except ValueError:
        try:
            calibration = calibrate_on_half(X, labels, index.ids, model_id=index.manifest.model_id)
        except ValueError as exc:
            log.info("no venue calibration for %s: %s", index.root, exc)
            return None
    if path is not None:
        try:
            calibration.save(path)
        except OSError as exc:
            log.warning("cannot cache the venue calibration at %s: %s", path, exc)
    return calibration
