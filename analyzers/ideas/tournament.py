"""The Swiss tournament that ranks ideas by pairwise comparisons (NOVA, Hu et al., 2024, §4.1).

NOVA follows Si et al. (2024): every idea plays `rounds` (5) rounds; each round pairs ideas of
equal or nearest current score, a win is worth one point.  Here:

* Pairing: ideas sorted by current score, equal scores in a fixed order drawn from `seed`
  (round 1 is therefore a seeded random draw); each idea meets the highest-placed idea below
  it that it has not met yet (a rematch only when nothing else is left).  With an odd count
  the lowest-placed idea that has had no bye yet sits the round out: a bye scores 0.5, the
  value of an even match, so it neither lifts nor sinks an idea.
* Both orders: the comparator is asked (a, b) and (b, a) and P(a better) is the mean of
  P(first) and 1 - P(first of the swapped order), which cancels a constant position bias.
  a wins above 0.5 + `tie_margin`, b below 0.5 - `tie_margin`, else it is a tie (0.5 each).
* No answer (unparsed output, a timeout, a backend error) in both orders: the match is a
  "no-answer", scored 0.5 each and counted; an answer is never guessed.  With one order
  answered, that order decides and the other is counted.
* Final order: points, then Buchholz (the sum of the opponents' points, the usual Swiss
  tie-break), then the soft score (the sum of P(win) over the matches), then the seeded order.
  `Ranking.ranks` is the competition rank by points alone ("1, 2, 2, 4"), so ties stay visible.

The comparators (LLM, pointwise scorer, hybrid) are in `comparators.py`.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from .comparators import Comparator, Preference, make_comparator
from .idea_file import Idea, dedup

ROUNDS = 5
BYE_POINTS = 0.5


@dataclass(frozen=True)
class Match:
    """One pairing of one round; `b` is None for a bye."""

    round: int
    a: int  # index into Ranking.ideas
    b: int | None
    winner: int | None  # a, b, or None (tie, no answer, bye)
    p_a: float | None  # P(a better), both orders averaged
    outcome: str  # "win" | "tie" | "no-answer" | "bye"
    orders: tuple[Preference, ...] = ()
    rematch: bool = False


@dataclass(frozen=True)
class Ranking:
    """A finished tournament.  Index-aligned tuples are per idea; `order` is best first."""

    ideas: tuple[Idea, ...]
    points: tuple[float, ...]
    buchholz: tuple[float, ...]
    soft: tuple[float, ...]
    order: tuple[int, ...]
    ranks: tuple[int, ...]  # competition rank by points (1 = best; equal points, equal rank)
    matches: tuple[Match, ...]
    rounds: int
    comparator: str
    seed: int
    counts: dict[str, int] = field(default_factory=dict)
    merged: int = 0  # near-duplicates folded before the tournament (see ideas.dedup)
    skipped: dict[str, int] = field(default_factory=dict)  # ideas dropped before it (no text, ...)

    def ranked(self) -> list[tuple[int, Idea, float]]:
        """(rank, idea, points), best first."""
        return [(self.ranks[i], self.ideas[i], self.points[i]) for i in self.order]

    def score_vector(self) -> np.ndarray:
        """A strictly ordered score per idea for AUROC-style metrics: points, with the tie-breaks
        as fractions below one point (ideas still tied after them share a value)."""
        n = len(self.ideas)
        if n == 0:
            return np.zeros(0)
        b = np.asarray(self.buchholz, dtype=float)
        s = np.asarray(self.soft, dtype=float)
        bmax = max(float(np.abs(b).max()), 1.0) * 2
        smax = max(float(np.abs(s).max()), 1.0) * 2
        return np.asarray(self.points, dtype=float) + 0.1 * (b / bmax + 0.5) + 0.001 * (s / smax + 0.5)

    def to_json(self) -> dict:
        return {
            "comparator": self.comparator, "rounds": self.rounds, "seed": self.seed, "counts": self.counts,
            "merged": self.merged, "skipped": self.skipped,
            "ranking": [{"rank": self.ranks[i], "points": self.points[i], "buchholz": self.buchholz[i],
                         "soft": round(self.soft[i], 4), **self.ideas[i].to_json()} for i in self.order],
            "matches": [{"round": m.round, "a": self.ideas[m.a].id,
                         "b": None if m.b is None else self.ideas[m.b].id,
                         "winner": None if m.winner is None else self.ideas[m.winner].id,
                         "p_a": None if m.p_a is None else round(m.p_a, 4), "outcome": m.outcome,
                         "orders": [{"p_first": None if p.p_first is None else round(p.p_first, 4),
                                     "status": p.status} for p in m.orders]} for m in self.matches],
        }


# -- the tournament -------------------------------------------------------------------------------

def _pair(order: list[int], met: list[set[int]], byes: Counter) -> tuple[list[tuple[int, int, bool]], int | None]:
    """Pairs for one round from the current placing `order` (best first)."""
    pool = list(order)
    bye = None
    if len(pool) % 2:
        bye = next((i for i in reversed(pool) if not byes[i]), pool[-1])
        pool.remove(bye)
    pairs: list[tuple[int, int, bool]] = []
    while pool:
        a = pool.pop(0)
        j = next((k for k, b in enumerate(pool) if b not in met[a]), None)
        rematch = j is None
        b = pool.pop(0 if rematch else j)
        pairs.append((a, b, rematch))
    return pairs, bye


def _decide(a: int, b: int, ab: Preference, ba: Preference, tie_margin: float) -> tuple[int | None, float | None, str]:
    votes = []
    if ab.p_first is not None:
        votes.append(ab.p_first)
    if ba.p_first is not None:
        votes.append(1.0 - ba.p_first)
    if not votes:
        return None, None, "no-answer"
    p_a = sum(votes) / len(votes)
    if p_a > 0.5 + tie_margin:
        return a, p_a, "win"
    if p_a < 0.5 - tie_margin:
        return b, p_a, "win"
    return None, p_a, "tie"


@dataclass
class _Standings:
    """The running table of a Swiss tournament: points, soft points, who met whom, and the counts."""

    n: int
    points: list[float] = field(default_factory=list)
    soft: list[float] = field(default_factory=list)
    met: list[set[int]] = field(default_factory=list)
    opponents: list[list[int]] = field(default_factory=list)
    byes: Counter = field(default_factory=Counter)
    matches: list[Match] = field(default_factory=list)
    counts: Counter = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self.points, self.soft = [0.0] * self.n, [0.0] * self.n
        self.met = [set() for _ in range(self.n)]
        self.opponents = [[] for _ in range(self.n)]

    def count_answers(self, answers: tuple[Preference, ...]) -> None:
        for p in answers:
            self.counts["answers"] += 1
            if p.status != "ok":
                self.counts[p.status] += 1
        if len(answers) == 2 and answers[0].p_first is not None and answers[1].p_first is not None:
            self.counts["order_pairs"] += 1
            if (answers[0].p_first > 0.5) == (answers[1].p_first > 0.5):
                self.counts["inconsistent_orders"] += 1  # the same shown position won both times

    def record(self, r: int, a: int, b: int, rematch: bool, answers: tuple[Preference, ...],
               decided: tuple[int | None, float | None, str]) -> None:
        winner, p_a, outcome = decided
        self.counts["comparisons"] += 1
        self.counts[outcome.replace("-", "_") + "s" if outcome != "win" else "decided"] += 1
        if rematch:
            self.counts["rematches"] += 1
        if winner is None:
            self.points[a] += 0.5
            self.points[b] += 0.5
        else:
            self.points[winner] += 1.0
        share = 0.5 if p_a is None else p_a
        self.soft[a] += share
        self.soft[b] += 1.0 - share
        self.met[a].add(b)
        self.met[b].add(a)
        self.opponents[a].append(b)
        self.opponents[b].append(a)
        self.matches.append(Match(r, a, b, winner, p_a, outcome, answers, rematch))

    def bye(self, r: int, i: int) -> None:
        self.byes[i] += 1
        self.points[i] += BYE_POINTS
        self.soft[i] += BYE_POINTS
        self.counts["byes"] += 1
        self.matches.append(Match(r, i, None, None, None, "bye"))


def swiss_tournament(ideas: Sequence[Idea], comparator: Comparator, rounds: int = ROUNDS, seed: int = 0,
                     both_orders: bool = True, tie_margin: float = 0.0,
                     progress: Callable[[int, int], None] | None = None) -> Ranking:
    """Rank `ideas` by `rounds` Swiss rounds of pairwise comparisons (see the module doc)."""
    ideas = tuple(ideas)
    n = len(ideas)
    if rounds < 0:
        raise ValueError("rounds must be 0 or more")
    if hasattr(comparator, "prepare"):
        comparator.prepare(ideas)
    rng = random.Random(seed)
    seeded = list(range(n))
    rng.shuffle(seeded)
    seed_rank = {i: r for r, i in enumerate(seeded)}
    table = _Standings(n)
    total = rounds * (n // 2) * (2 if both_orders else 1)
    asked = 0
    for r in range(1, rounds + 1 if n >= 2 else 1):
        order = sorted(range(n), key=lambda i: (-table.points[i], seed_rank[i]))
        pairs, bye = _pair(order, table.met, table.byes)
        for a, b, rematch in pairs:
            ab = comparator.prefer(ideas[a], ideas[b])
            ba = comparator.prefer(ideas[b], ideas[a]) if both_orders else Preference(None, "not asked")
            asked += 2 if both_orders else 1
            if progress:
                progress(asked, total)
            answers = (ab, ba) if both_orders else (ab,)
            table.count_answers(answers)
            table.record(r, a, b, rematch, answers, _decide(a, b, ab, ba, tie_margin))
        if bye is not None:
            table.bye(r, bye)
    return _ranking(ideas, table, seed_rank, rounds, getattr(comparator, "name", type(comparator).__name__), seed)


def _ranking(ideas: tuple[Idea, ...], table: _Standings, seed_rank: dict[int, int], rounds: int, name: str,
             seed: int) -> Ranking:
    """Final order: points, then Buchholz (opponents' points), then soft points, then the seeded draw."""
    n, points = len(ideas), table.points
    buchholz = [sum(points[o] for o in table.opponents[i]) for i in range(n)]
    order = sorted(range(n), key=lambda i: (-points[i], -buchholz[i], -table.soft[i], seed_rank[i]))
    ranks = [0] * n
    for pos, i in enumerate(order):
        ranks[i] = ranks[order[pos - 1]] if pos and points[order[pos - 1]] == points[i] else pos + 1
    counts = table.counts
    counts["tied_ideas"] = sum(1 for i in range(n) if sum(1 for j in range(n) if points[j] == points[i]) > 1)
    for key in ("comparisons", "decided", "ties", "no_answers", "byes", "unparsed", "timeout", "error", "rematches"):
        counts.setdefault(key, 0)
    return Ranking(ideas, tuple(points), tuple(buchholz), tuple(table.soft), tuple(order), tuple(ranks),
                   tuple(table.matches), rounds, name, seed, dict(counts))


# -- metrics used by the bench and the tests ------------------------------------------------------

def auroc(scores: Sequence[float], labels: Sequence[bool]) -> float | None:
    """P(a random positive scores above a random negative), ties counted half; None without both classes."""
    s = np.asarray(scores, dtype=float)
    y = np.asarray(labels, dtype=bool)
    pos, neg = s[y], s[~y]
    if not len(pos) or not len(neg):
        return None
    greater = (pos[:, None] > neg[None, :]).mean()
    equal = (pos[:, None] == neg[None, :]).mean()
    return float(greater + 0.5 * equal)


def top_half_accuracy(order: Sequence[int], labels: Sequence[bool]) -> float:
    """The top half of `order` (best first) predicted positive, the rest negative: the share right.
    With an odd count the middle item is predicted negative."""
    n = len(order)
    if not n:
        return 0.0
    top = set(order[: n // 2])
    return sum(1 for i in range(n) if (i in top) == bool(labels[i])) / n


def rank_items(ideas: Sequence[Idea], llm=None, embedder=None, rounds: int = ROUNDS, *, index=None,
               comparator: str | Comparator = "auto", seed: int = 0, dedup_threshold: float | None = 0.8,
               progress: Callable[[int, int], None] | None = None) -> Ranking:
    """Rank ideas (e.g. the `\\item`s of a contributions list) with the Swiss tournament.

    Ideas without text are dropped and counted; near-duplicates (cosine >= `dedup_threshold`)
    are merged first when an `embedder` (or `index`) is given.  `comparator`: "auto" (see
    `default_comparator`), "hybrid", "llm", "embedding", or any `Comparator`."""

    kept = [i for i in ideas if i.text.strip()]
    skipped = {"no text": len(ideas) - len(kept)} if len(kept) < len(ideas) else {}
    merged = 0
    embed_from = embedder if embedder is not None else index
    if dedup_threshold is not None and embed_from is not None and kept:
        d = dedup(kept, embed_from, dedup_threshold)
        kept, merged = list(d.kept), d.merged
    if isinstance(comparator, str):
        kind = default_comparator(llm, index) if comparator == "auto" else comparator
        comp = make_comparator(kind, llm, index, embedder)
    else:
        comp = comparator
    ranking = swiss_tournament(kept, comp, rounds, seed, progress=progress)
    return Ranking(**{**ranking.__dict__, "merged": merged, "skipped": skipped})


def default_comparator(llm, index) -> str:
    """What `comparator="auto"` (and `peerlint ideas rank`) uses.

    "hybrid" when the LLM is served by Ollama (a model large enough to read two abstracts; its
    preference is combined with the embedding prior, which keeps a position-biased model in
    check), "embedding" with the embedded SmolLM2-135M: on ICLR 2017 its comparisons are pure
    position bias (the shown-first idea wins in both orders of every comparison, P(first) 0.83)
    and the tournament it drives is at chance, while the hybrid it forms is no better than the
    embedding prior alone (docs/benchmarks/nova.md) at twice the cost in minutes; "llm" only
    without an index."""
    if index is None:
        if llm is None:
            raise ValueError("ranking needs an LLM backend or an index (for the embedding prior)")
        return "llm"
    return "hybrid" if llm is not None and getattr(llm, "name", "") == "ollama" else "embedding"
