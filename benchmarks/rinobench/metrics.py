"""RINoBench's nine metrics (Schopf & Färber, Section 4.2) as pure functions, and the trivial baselines.

Score metrics follow the official src/eval/eval.py (scikit-learn): macro-F1 averages the per-class
F1 over the classes present in gold ∪ predicted (`f1_score(average="macro")`), MAE is the mean
|gold − predicted|.  An item without a parsed prediction is not guessed: it counts as a miss of its
gold class in F1 (lowering that class's recall, adding no class), and MAE is taken over the answered
items only, reported with how many those are.

Justification metrics, per item (Equations 1–3, as the official code computes them):
recall = min(1, N_supported / N_gold), 0 when the gold has no argument of the kind;
additional ratio = N_additional / max(N_gold, 1), N_additional = predicted arguments the gold does
not support but the fact-check grounds in the idea and related works;
hallucination rate = N_hallucinated / N_predicted (0 when nothing is predicted), N_hallucinated =
unsupported-by-gold arguments the fact-check does not ground.  They are averaged over the items
where the judge answered, and each mean carries its count.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from statistics import mean
from typing import Sequence

from .dataset import SCORES
from .judge import AspectCheck, AspectComparison, Justification


# -- score metrics -----------------------------------------------------------------------------

@dataclass(frozen=True)
class ScoreMetrics:
    n: int
    answered: int
    macro_f1: float  # 0..1; the table shows it in % as the paper does
    per_class_f1: dict[int, float | None]  # None: the class is in neither gold nor predictions
    labels: tuple[int, ...]  # the classes the macro average is over
    mae: float | None  # over answered items; None when none is answered


def class_f1(gold: Sequence[int], predicted: Sequence[int | None], label: int) -> float | None:
    """F1 of one class; None when the class occurs in neither list (scikit-learn would warn and drop it)."""
    tp = sum(1 for g, p in zip(gold, predicted) if g == label and p == label)
    fp = sum(1 for g, p in zip(gold, predicted) if g != label and p == label)
    fn = sum(1 for g, p in zip(gold, predicted) if g == label and p != label)
    return 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else None


def mean_absolute_error(gold: Sequence[int], predicted: Sequence[int | None]) -> float | None:
    pairs = [(g, p) for g, p in zip(gold, predicted) if p is not None]
    return sum(abs(g - p) for g, p in pairs) / len(pairs) if pairs else None


def score_metrics(gold: Sequence[int], predicted: Sequence[int | None]) -> ScoreMetrics:
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold scores but {len(predicted)} predictions")
    labels = tuple(sorted(set(gold) | {p for p in predicted if p is not None}))
    per_class = {s: class_f1(gold, predicted, s) for s in SCORES}
    macro = mean(per_class[s] or 0.0 for s in labels) if labels else 0.0
    return ScoreMetrics(len(gold), sum(p is not None for p in predicted), macro, per_class, labels,
                        mean_absolute_error(gold, predicted))


def majority_class(gold: Sequence[int]) -> int:
    """The most frequent gold score of the evaluated items; ties go to the one nearer 3, then the lower."""
    counts = Counter(gold)
    return min(counts, key=lambda s: (-counts[s], abs(s - 3), s))


# -- justification metrics ---------------------------------------------------------------------

def aspect_recall(c: AspectComparison) -> float:
    """Equation 1."""
    if not c.gold:
        return 0.0
    return min(1.0, sum(a.supported_in_gold for a in c.predicted) / len(c.gold))


def additional_ratio(c: AspectComparison, grounded: Sequence[bool]) -> float:
    """Equation 2; `grounded` holds the fact-check verdict of each of `c.additional`."""
    _check(c, grounded)
    return sum(grounded) / max(len(c.gold), 1)


def hallucination_rate(c: AspectComparison, grounded: Sequence[bool]) -> float:
    """Equation 3: arguments supported by the gold count as grounded, as in the official code."""
    _check(c, grounded)
    return sum(not g for g in grounded) / len(c.predicted) if c.predicted else 0.0


def _check(c: AspectComparison, grounded: Sequence[bool]) -> None:
    if len(grounded) != len(c.additional):
        raise ValueError(f"{len(grounded)} fact-check verdicts for {len(c.additional)} additional arguments")


@dataclass(frozen=True)
class ItemJustification:
    """The seven justification metrics of one item; None where the judge gave no answer."""

    alignment: float | None
    known_recall: float | None
    novelty_recall: float | None
    known_additional: float | None
    novelty_additional: float | None
    known_hallucination: float | None
    novelty_hallucination: float | None


JUSTIFICATION_FIELDS = ("alignment", "known_recall", "novelty_recall", "known_additional", "novelty_additional",
                        "known_hallucination", "novelty_hallucination")


def _aspect_metrics(check: AspectCheck) -> tuple[float | None, float | None, float | None]:
    if check.comparison is None:
        return None, None, None
    recall = aspect_recall(check.comparison)
    if check.grounded is None:
        return recall, None, None
    return (recall, additional_ratio(check.comparison, check.grounded),
            hallucination_rate(check.comparison, check.grounded))


def item_justification(j: Justification) -> ItemJustification:
    kr, ka, kh = _aspect_metrics(j.known)
    nr, na, nh = _aspect_metrics(j.novelty)
    return ItemJustification(j.alignment, kr, nr, ka, na, kh, nh)


@dataclass(frozen=True)
class MeanMetric:
    value: float | None  # mean over the items where the metric is defined
    count: int  # how many items that is


@dataclass(frozen=True)
class JustificationMetrics:
    means: dict[str, MeanMetric] = field(default_factory=dict)  # keyed by JUSTIFICATION_FIELDS
    judged: int = 0  # items whose justification went to the judge


def justification_metrics(items: Sequence[ItemJustification]) -> JustificationMetrics:
    means = {}
    for name in JUSTIFICATION_FIELDS:
        values = [getattr(i, name) for i in items if getattr(i, name) is not None]
        means[name] = MeanMetric(mean(values) if values else None, len(values))
    return JustificationMetrics(means, len(items))
