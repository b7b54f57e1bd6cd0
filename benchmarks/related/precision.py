"""The operating point of `missing-related-work` and *Cite this paper*: precision before recall.

The editor shows a paragraph's SEC top `related_work_k` papers (hybrid first stage) whose cosine
similarity reaches `related_work_min_similarity`. This sweeps both over ACM-CR citation contexts,
split by citing paper into dev and test (`truth.split_of`): the pair is chosen on dev (the most
correct suggestions among pairs whose precision reaches the target with 90% confidence — the
Wilson lower bound, since a few dozen dev contexts make a point estimate optimistic) and test
reports what that choice gives on citing papers it never saw. A suggestion is *correct* when the citing paper
cites it (its reference list: paragraphs of an introduction share their citations arbitrarily, so
a paper the authors cite one paragraph later is still a right suggestion); *strict* precision,
the context itself cites it, is reported beside it.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from ...index.papers import SearchFilter
from ...retrieval.hybrid import DEFAULT_MODE
from .truth import split_of

THRESHOLDS = tuple(round(0.50 + 0.05 * i, 2) for i in range(7))  # 0.50 … 0.80
DEPTHS = (1, 2, 3)
TARGET_PRECISION = 0.6
CONFIDENCE_Z = 1.2816  # one-sided 90%


def wilson_lower(correct: int, n: int, z: float = CONFIDENCE_Z) -> float:
    """Lower confidence bound of a proportion (Wilson score interval)."""
    if n == 0:
        return 0.0
    p = correct / n
    centre = p + z * z / (2 * n)
    margin = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - margin) / (1 + z * z / n)


@dataclass(frozen=True)
class Suggestion:
    """One paper the editor would show for one context, before any threshold."""

    query: str
    split: str
    rank: int  # 0 for the first of the context's suggestions
    similarity: float
    in_context: bool  # the context cites it
    in_paper: bool  # the citing paper cites it somewhere


@dataclass
class Point:
    """Precision and recall of the top-k suggestions at or above one threshold, on one split."""

    k: int
    threshold: float
    shown: int = 0
    correct: int = 0
    correct_lenient: int = 0
    contexts_with_suggestion: int = 0
    recall: float = 0.0  # mean over contexts of: cited papers shown / cited papers in the index

    @property
    def precision(self) -> float | None:
        return round(self.correct_lenient / self.shown, 4) if self.shown else None

    @property
    def precision_strict(self) -> float | None:
        return round(self.correct / self.shown, 4) if self.shown else None

    def to_json(self) -> dict:
        return {"k": self.k, "threshold": self.threshold, "shown": self.shown, "precision": self.precision,
                "precision_lower_90": round(wilson_lower(self.correct_lenient, self.shown), 4),
                "precision_strict": self.precision_strict, "recall_strict": round(self.recall, 4),
                "contexts_with_suggestion": self.contexts_with_suggestion}


@dataclass
class Calibration:
    target: float
    dev: list[Point] = field(default_factory=list)
    test: list[Point] = field(default_factory=list)
    chosen: tuple[int, float] | None = None  # (k, threshold) picked on dev; None if no pair reaches the target
    contexts: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict:
        at = {s: next((p.to_json() for p in pts if (p.k, p.threshold) == self.chosen), None)
              for s, pts in (("dev", self.dev), ("test", self.test))}
        return {"target_precision": self.target,
                "chosen": {"k": self.chosen[0], "threshold": self.chosen[1]} if self.chosen else None,
                "operating_point": at, "contexts": self.contexts,
                "dev": [p.to_json() for p in self.dev], "test": [p.to_json() for p in self.test]}


def sweep(suggestions: list[Suggestion], wanted_count: dict[str, int], split: str) -> list[Point]:
    """One Point per (k, threshold) over the contexts of `split` (`wanted_count`: cited papers in the index)."""
    queries = [q for q in wanted_count if q.startswith(split + ":")]
    mine = [s for s in suggestions if s.split == split]
    out = []
    for k, t in ((k, t) for k in DEPTHS for t in THRESHOLDS):
        p = Point(k, t)
        shown = [s for s in mine if s.rank < k and s.similarity >= t]
        p.shown = len(shown)
        p.correct = sum(s.in_context for s in shown)
        p.correct_lenient = sum(s.in_paper for s in shown)
        per_query = {q: 0 for q in queries}
        for s in shown:
            per_query[s.query] += s.in_context
        p.contexts_with_suggestion = len({s.query for s in shown})
        p.recall = statistics.fmean(per_query[q] / wanted_count[q] for q in queries) if queries else 0.0
        out.append(p)
    return out


def calibrate(suggestions: list[Suggestion], wanted_count: dict[str, int],
              target: float = TARGET_PRECISION) -> Calibration:
    cal = Calibration(target, sweep(suggestions, wanted_count, "dev"), sweep(suggestions, wanted_count, "test"))
    good = [p for p in cal.dev if wilson_lower(p.correct_lenient, p.shown) >= target]
    best = max(good, key=lambda p: (p.correct_lenient, p.threshold), default=None)
    cal.chosen = (best.k, best.threshold) if best else None
    cal.contexts = {s: sum(q.startswith(s + ":") for q in wanted_count) for s in ("dev", "test")}
    return cal


def table(cal: Calibration) -> list[list]:
    rows = []
    for d, t in zip(cal.dev, cal.test):
        mark = " *" if (d.k, d.threshold) == cal.chosen else ""
        rows.append([f"top {d.k}, cosine >= {d.threshold:.2f}{mark}", d.precision,
                     round(wilson_lower(d.correct_lenient, d.shown), 3), d.precision_strict,
                     round(d.recall, 3), d.shown, t.precision, t.precision_strict, round(t.recall, 3), t.shown])
    return rows


HEADERS = ["shown", "dev P", "dev P low90", "dev P strict", "dev R strict", "dev n", "test P", "test P strict", "test R strict",
           "test n"]


def collect(retriever, truth, resolve, by_title: dict[str, str], paper_cited: dict[str, set[str]],
            limit: int | None = None, adapter=None) -> tuple[list[Suggestion], dict[str, int]]:
    """The product's top suggestions (SEC over the default first stage) for every context of
    `truth`, unthresholded, and the number of cited papers the index holds per context.
    `paper_cited`: each citing paper's whole reference list (index ids); without it, what its
    contexts cite. `adapter`: a query adapter the context vectors go through."""
    import dataclasses


    index = retriever.index
    config = dataclasses.replace(retriever.config, first_stage=DEFAULT_MODE)
    queries = truth.queries[:limit] if limit else truth.queries
    by_paper: dict[str, set[str]] = {}
    resolved = {}
    for q in queries:
        resolved[q.id] = resolve(q.cited, index, by_title)[0]
        by_paper.setdefault(q.paper, set(paper_cited.get(q.paper, ()))).update(resolved[q.id])
    suggestions: list[Suggestion] = []
    wanted_count: dict[str, int] = {}
    for q in queries:
        wanted = resolved[q.id]
        if not wanted or not q.text.strip():
            continue
        key = f"{split_of(q.paper)}:{q.id}"
        wanted_count[key] = len(wanted)
        flt = SearchFilter(year_max=q.year, exclude_ids=frozenset({q.paper, q.id}))
        vector = index.embed([q.text])[0]
        hits = retriever.search_vector(adapter.apply(vector) if adapter else vector, q.text, max(DEPTHS), flt,
                                       exclude_citers={q.paper}, config=config)
        suggestions += [Suggestion(key, split_of(q.paper), rank, float(h.similarity), h.paper.id in wanted,
                                   h.paper.id in by_paper[q.paper]) for rank, h in enumerate(hits)]
    return suggestions, wanted_count
