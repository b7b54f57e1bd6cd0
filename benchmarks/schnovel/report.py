"""SchNovel scoring: accuracy by order, field and gap, position bias, exact McNemar, table and plot.

Accuracy follows the paper (Section 6.1, Table 2): every pair is asked newer-first and
older-first; the headline is their mean, and |newer-first - older-first| is the position bias.
A question the method could not answer counts as wrong, and is reported as unparsed.
"""

from __future__ import annotations

import math
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from ..harness.results import print_table
from ...analyzers.novelty.pairs import Pair


@dataclass(frozen=True)
class Outcome:
    """One pair asked one way by one method."""

    pair: int  # index into the evaluated pairs
    newer_first: bool
    correct: bool
    how: str  # see analyzers.novelty.llm_methods.Verdict: score | strict | fallback | none | error | pointwise | tie


@dataclass
class MethodResult:
    name: str
    outcomes: list[Outcome]
    seconds: float  # answering the pairs (both orders)
    setup_seconds: float = 0.0  # training / calibration, index work excluded
    notes: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def pairs(self) -> int:
        return len({o.pair for o in self.outcomes})


@dataclass(frozen=True)
class Accuracy:
    newer_first: float | None
    older_first: float | None
    n: int  # pairs

    @property
    def mean(self) -> float | None:
        parts = [x for x in (self.newer_first, self.older_first) if x is not None]
        return sum(parts) / len(parts) if parts else None

    @property
    def bias(self) -> float | None:
        if self.newer_first is None or self.older_first is None:
            return None
        return abs(self.newer_first - self.older_first)

    def to_json(self) -> dict:
        r = lambda x: None if x is None else round(x, 4)  # noqa: E731
        return {"pairs": self.n, "newer_first": r(self.newer_first), "older_first": r(self.older_first),
                "mean": r(self.mean), "position_bias": r(self.bias)}


def accuracy(outcomes: Iterable[Outcome]) -> Accuracy:
    by = {True: [], False: []}
    pairs = set()
    for o in outcomes:
        by[o.newer_first].append(o.correct)
        pairs.add(o.pair)
    rate = lambda xs: sum(xs) / len(xs) if xs else None  # noqa: E731
    return Accuracy(rate(by[True]), rate(by[False]), len(pairs))


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar test: b, c = the discordant counts (A right/B wrong, A wrong/B right)."""
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2**n
    return min(1.0, 2 * tail)


def discordant(a: MethodResult, b: MethodResult) -> tuple[int, int]:
    """Discordant counts over the questions (pair, order) both methods answered."""
    right_b = {(o.pair, o.newer_first): o.correct for o in b.outcomes}
    n_ab = n_ba = 0
    for o in a.outcomes:
        other = right_b.get((o.pair, o.newer_first))
        if other is None:
            continue
        n_ab += o.correct and not other
        n_ba += other and not o.correct
    return n_ab, n_ba


def summarise(results: Sequence[MethodResult], pairs: Sequence[Pair]) -> list[dict]:
    """One JSON record per method, best first, each with a McNemar p-value against the next one."""
    ranked = sorted(results, key=lambda r: -(accuracy(r.outcomes).mean or 0.0))
    records = []
    for i, res in enumerate(ranked):
        overall = accuracy(res.outcomes)
        by_field: dict[str, list[Outcome]] = defaultdict(list)
        by_gap: dict[int, list[Outcome]] = defaultdict(list)
        for o in res.outcomes:
            by_field[pairs[o.pair].field].append(o)
            by_gap[pairs[o.pair].gap].append(o)
        hows = defaultdict(int)
        for o in res.outcomes:
            hows[o.how] += 1
        record = {
            "method": res.name, **overall.to_json(), "questions": len(res.outcomes),
            "answers": dict(hows), "unparsed": sum(v for k, v in hows.items() if k in ("fallback", "none", "error")),
            "seconds": round(res.seconds, 2), "setup_seconds": round(res.setup_seconds, 2),
            "seconds_per_1000_pairs": round((res.seconds / max(res.pairs, 1)) * 1000 + res.setup_seconds, 1),
            "by_field": {f: accuracy(v).to_json() for f, v in sorted(by_field.items())},
            "by_gap": {str(g): accuracy(v).to_json() for g, v in sorted(by_gap.items())},
            "notes": res.notes, **res.extra,
            "correct": {"newer_first": _bits(res, True), "older_first": _bits(res, False)},
        }
        if i + 1 < len(ranked):
            b, c = discordant(res, ranked[i + 1])
            record["mcnemar_vs_next"] = {"method": ranked[i + 1].name, "b": b, "c": c, "p": mcnemar_exact(b, c)}
        records.append(record)
    return records


def _bits(res: MethodResult, newer_first: bool) -> str:
    """Per-pair correctness as a compact string (1 right, 0 wrong, - not asked), in pair order."""
    got = {o.pair: o.correct for o in res.outcomes if o.newer_first == newer_first}
    if not got:
        return ""
    return "".join("-" if i not in got else "1" if got[i] else "0" for i in range(max(got) + 1))


def print_report(records: Sequence[dict]) -> None:
    rows = []
    for r in records:
        test = r.get("mcnemar_vs_next")
        rows.append([r["method"], r["pairs"], r["newer_first"], r["older_first"], r["mean"], r["position_bias"],
                     r["unparsed"], f"{test['p']:.2g} vs {test['method']}" if test else "-",
                     r["seconds_per_1000_pairs"]])
    print_table(rows, ["method", "pairs", "newer-first", "older-first", "mean", "bias", "unparsed",
                       "McNemar p", "s/1000 pairs"], title="SchNovel accuracy (both orders)")
    for key, label in (("by_field", "field"), ("by_gap", "gap")):
        columns = sorted({c for r in records for c in r[key]}, key=lambda c: (len(c), c) if key == "by_gap" else c)
        print_table([[r["method"]] + [r[key].get(c, {}).get("mean") for c in columns] for r in records],
                    ["method"] + [f"{label} {c}" if key == "by_gap" else c for c in columns],
                    title=f"mean accuracy by {label} (pairs: " + ", ".join(
                        f"{c}={records[0][key].get(c, {}).get('pairs', 0)}" for c in columns) + ")")
        print_table([[r["method"]] + [_orders(r[key].get(c)) for c in columns] for r in records],
                    ["method"] + [str(c) for c in columns], title=f"newer-first / older-first by {label}")


def _orders(acc: dict | None) -> str:
    if not acc or acc.get("newer_first") is None:
        return "-"
    return f"{acc['newer_first']:.2f}/{acc['older_first']:.2f}"


def plot(records: Sequence[dict], path: Path, title: str) -> Path | None:
    """Mean accuracy by gap, one line per method; None (with a hint) when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("peerlint: warning: no plot: `pip install matplotlib` (or `pip install peerlint[bench]`)", file=sys.stderr)
        return None
    fig, ax = plt.subplots(figsize=(7.5, 4.5), dpi=120)
    all_gaps = sorted({int(g) for r in records for g in r["by_gap"]})
    for r in records:
        gaps = sorted(r["by_gap"], key=int)
        ys = [r["by_gap"][g]["mean"] for g in gaps]
        ax.plot([int(g) for g in gaps], ys, marker="o", label=f"{r['method']} ({r['mean']:.2f}, {r['pairs']} pairs)")
    ax.set_xticks(all_gaps)
    ax.axhline(0.5, color="grey", lw=0.8, ls=":")
    ax.set_xlabel("gap between the two papers (years)")
    ax.set_ylabel("accuracy, mean of both orders")
    ax.set_ylim(0.3, 1.0)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path
