"""Comparators for the Swiss tournament: which of two shown ideas is better (NOVA, Hu et al., 2024, §4.1).

Each answers one shown order: `LLMComparator` (the prompt of `prompts/nova_tournament.txt`, read
from the model's probabilities over the answers "1" and "2"), `ScoreComparator` (any pointwise
scorer, e.g. an embedding head: P = sigmoid((s_a - s_b) / scale)), `HybridComparator` (the mean of
an LLM's and a scorer's probabilities) and `Topicality`, the label-free embedding scorer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Protocol, Sequence

import numpy as np

from .idea_file import Idea, embed_function
from ...llm.base import LLMBadOutput, LLMError, LLMUnavailable
from ..drafts.fluency import FluencyScore
from ..drafts.text import split_injection
from ..prompt_files import load_prompt, clip

COMPARATORS = ("llm", "embedding", "prior", "hybrid")
NEEDS_LLM = ("llm", "hybrid", "prior")  # comparators that ask the LLM (pairwise or for fluency)
NEEDS_INDEX = ("embedding", "hybrid", "prior")  # comparators that read reference papers (Topicality)
ANSWER_CHARS = 700  # per idea in the LLM prompt (~175 tokens): keeps one comparison near 1.5 s on 2 cores


@dataclass(frozen=True)
class Preference:
    """A comparator's answer about one shown order.

    `p_first`: P(the first shown idea is better), None when there is no answer.
    `status`: "ok", or why the answer is missing or partial: "unparsed", "timeout", "error".
    A hybrid whose LLM part failed still has a `p_first` (from its scorer) and the LLM's status."""

    p_first: float | None
    status: str = "ok"
    detail: str = ""


class Comparator(Protocol):
    name: str

    def prefer(self, first: Idea, second: Idea) -> Preference: ...


# -- comparators ----------------------------------------------------------------------------------

def classify_failure(exc: BaseException) -> str:
    """"timeout", "unparsed" or "error" for an exception raised by an LLM backend."""

    text = str(exc).lower()
    if isinstance(exc, TimeoutError) or "did not answer within" in text or "timed out" in text or "timeout" in text:
        return "timeout"
    if isinstance(exc, LLMBadOutput):
        return "unparsed"
    return "error"


LLM_FAILURES: tuple[type[BaseException], ...] = (TimeoutError, OSError)


def _llm_failures() -> tuple[type[BaseException], ...]:
    return (LLMError, *LLM_FAILURES)


class LLMComparator:
    """Asks the LLM which of two shown ideas is better, read from P("1") vs P("2") (ChoiceScores:
    the answer is one of two fixed strings, so it is constrained by construction)."""

    def __init__(self, llm, prompt: str = "nova_tournament", chars: int = ANSWER_CHARS):
        self.llm, self.prompt, self.chars = llm, load_prompt(prompt), chars
        self.name = f"llm:{getattr(llm, 'name', '?')}:{getattr(llm, 'model', '?')}"

    def render(self, first: Idea, second: Idea) -> str:
        """Both ideas without instruction-like sentences ("the more novel idea is 1"): an idea cannot vote."""

        return self.prompt.render("user", first=clip(split_injection(first.text)[0], self.chars),
                                  second=clip(split_injection(second.text)[0], self.chars))

    def prefer(self, first: Idea, second: Idea) -> Preference:
        try:
            scores = self.llm.score(self.render(first, second), ["1", "2"], system=self.prompt.sections.get("system"))
        except _llm_failures() as exc:
            return Preference(None, classify_failure(exc), str(exc)[:200])
        probs = [float(p) for p in scores.probs]
        if len(probs) != 2 or any(not math.isfinite(p) for p in probs):
            return Preference(None, "unparsed", f"probabilities {probs}")
        if scores.logprobs and all(lp == -math.inf for lp in scores.logprobs):
            return Preference(None, "unparsed", "the answer was neither 1 nor 2")
        return Preference(probs[0])


class ScoreComparator:
    """A pointwise scorer as a comparator: P(first better) = sigmoid((s_first - s_second) / scale).

    `score` maps texts to numbers (higher = better); scores are cached per text.  `scale` None:
    the standard deviation of the scores seen in the first `prepare` call (1.0 before it)."""

    def __init__(self, score: Callable[[Sequence[str]], np.ndarray], name: str, scale: float | None = None):
        self.score, self.name, self.scale = score, name, scale
        self._cache: dict[str, float] = {}

    def prepare(self, ideas: Sequence[Idea]) -> None:
        todo = [i.text for i in ideas if i.text not in self._cache]
        if todo:
            values = np.asarray(self.score(todo), dtype=float).reshape(-1)
            self._cache.update(zip(todo, values.tolist()))
        if self.scale is None:
            values = np.array([self._cache[i.text] for i in ideas], dtype=float)
            self.scale = float(values.std()) if len(values) > 1 and values.std() > 0 else 1.0

    def value(self, idea: Idea) -> float:
        if idea.text not in self._cache:
            self.prepare([idea])
        return self._cache[idea.text]

    def prefer(self, first: Idea, second: Idea) -> Preference:
        z = (self.value(first) - self.value(second)) / (self.scale or 1.0)
        return Preference(1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z)))))


class HybridComparator:
    """The mean of an LLM's and a scorer's P(first better), weighted `llm_weight` : 1 - `llm_weight`.

    When the LLM gives no answer the scorer's probability is used alone and the LLM's status is
    kept in the preference, so the failure is still counted."""

    def __init__(self, llm: LLMComparator, scorer: ScoreComparator, llm_weight: float = 0.5):
        self.llm, self.scorer, self.llm_weight = llm, scorer, llm_weight
        self.name = f"hybrid({llm.name} x{llm_weight:g} + {scorer.name})"

    def prepare(self, ideas: Sequence[Idea]) -> None:
        self.scorer.prepare(ideas)

    def prefer(self, first: Idea, second: Idea) -> Preference:
        s = self.scorer.prefer(first, second)
        ans = self.llm.prefer(first, second)
        if ans.p_first is None:
            return Preference(s.p_first, ans.status, ans.detail)
        w = self.llm_weight
        return Preference(w * ans.p_first + (1 - w) * (s.p_first or 0.5))


# -- the embedding-only scorer --------------------------------------------------------------------

class Topicality:
    """An embedding-only quality prior that needs no labels: the mean cosine similarity of an idea
    to its `k` nearest *reference* papers, those of the `span` years up to `year` at `venues`.
    Defaults: every venue of the index's last 5 years.  Measured on ICLR 2017 (`peerlint bench
    tournament`), closeness to what NeurIPS and ICML accepted the year before separates accepted
    from rejected submissions a little better than chance (pointwise AUROC ~0.59), about as well as
    an embedding head trained on other ICLR years' decisions.  Reference vectors are the mean of
    each paper's indexed chunks."""

    def __init__(self, index, embed=None, year: int | None = None, venues: Sequence[str] = (), k: int = 10,
                 span: int | None = None):

        years = np.asarray(index.years)
        if span is None:
            span = 5 if year is None else 1
        if year is None:
            known = years[years >= 0]
            year = int(known.max()) if len(known) else 0
        mask = (years <= year) & (years > year - span)
        if venues:
            wanted = {v.lower() for v in venues}
            mask &= np.array([v in wanted for v in index.venues], dtype=bool)
        papers = np.nonzero(mask)[0]
        self.year, self.venues, self.k, self.span = year, tuple(venues), k, span
        when = str(year) if span == 1 else f"{year - span + 1}-{year}"
        self.name = f"topicality({'+'.join(venues) or 'all venues'} {when}, k={k})"
        self.size = len(papers)
        if not len(papers):
            raise ValueError(f"no reference papers in the index for {'/'.join(venues) or 'any venue'} in {when}")
        rows = np.nonzero(np.isin(np.asarray(index.chunk_paper), papers))[0]
        where = {int(p): n for n, p in enumerate(papers)}
        sums = np.zeros((len(papers), index.vectors.shape[1]), dtype=np.float32)
        np.add.at(sums, [where[int(index.chunk_paper[r])] for r in rows], np.asarray(index.vectors[rows], dtype=np.float32))
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        self.reference = sums / np.where(norms > 0, norms, 1.0)
        self.embed = embed_function(embed if embed is not None else index)

    @classmethod
    def before(cls, index, year: int, embed=None) -> "Topicality":
        """The reference for submissions of `year`: NeurIPS and ICML of the year before (what was
        measured), else every venue of the five years before; ValueError naming what is missing."""
        try:
            return cls(index, embed, year=year - 1, venues=("NeurIPS", "ICML"))
        except ValueError:
            try:
                return cls(index, embed, year=year - 1, span=5)
            except ValueError:
                raise ValueError(f"the index has no papers from {year - 5}-{year - 1} to compare {year} "
                                 "submissions with: index earlier proceedings (NeurIPS/ICML of the year before "
                                 "are the measured reference)") from None

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        return self.of_vectors(self.embed(list(texts)))

    def of_vectors(self, vectors: np.ndarray) -> np.ndarray:
        sims = np.asarray(vectors, dtype=np.float32) @ self.reference.T
        k = min(self.k, sims.shape[1])
        return -np.sort(-sims, axis=1)[:, :k].mean(axis=1)


class Blend:
    """The sum of several scorers' standardised scores: a label-free way to join weak priors.

    Each part is standardised by the mean and sd of the first batch it scores (the ideas being
    ranked, or a bench's papers), so later single texts are read on the same scale.  No weights
    are fitted: nothing here has seen a decision."""

    def __init__(self, parts: Sequence[Callable[[Sequence[str]], np.ndarray]]):
        if not parts:
            raise ValueError("a blend needs at least one scorer")
        self.parts = list(parts)
        self.name = " + ".join(getattr(p, "name", type(p).__name__) for p in self.parts)
        self._scale: list[tuple[float, float]] = []

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        return self.combine(self.parts_of(texts))

    def parts_of(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Each part's raw scores (a bench reports them beside the blend without scoring twice)."""
        return [np.asarray(part(list(texts)), dtype=float).reshape(-1) for part in self.parts]

    def combine(self, raw: Sequence[np.ndarray]) -> np.ndarray:
        if not self._scale:
            self._scale = [scale_of(r) for r in raw]
        return standardised_sum(raw, self._scale)


def scale_of(values: np.ndarray) -> tuple[float, float]:
    """Mean and standard deviation for standardising `values` (sd 1 when they do not vary)."""
    values = np.asarray(values, dtype=float)
    sd = float(values.std()) if len(values) > 1 else 0.0
    return float(values.mean()), sd if sd > 0 else 1.0


def standardised_sum(raw: Sequence[np.ndarray], scales: Sequence[tuple[float, float]] | None = None) -> np.ndarray:
    """The sum of z-scores of several score arrays, each by its `scales` entry (default: its own `scale_of`)."""
    scales = [scale_of(r) for r in raw] if scales is None else scales
    return sum((np.asarray(r, dtype=float) - mu) / sd for r, (mu, sd) in zip(raw, scales))


def make_comparator(kind: str, llm=None, index=None, embed=None, llm_weight: float = 0.5, **topicality) -> Comparator:
    """"llm", "embedding" (Topicality), "prior" (Topicality + the LLM's fluency, a `Blend`) or
    "hybrid" (the LLM's pairwise answers with Topicality)."""
    if kind not in COMPARATORS:
        raise ValueError(f"unknown comparator {kind!r}: use {', '.join(COMPARATORS)}")
    if kind in NEEDS_LLM and llm is None:
        raise ValueError(f"the {kind} comparator needs an LLM backend")
    if kind in NEEDS_INDEX and index is None:
        raise ValueError(f"the {kind} comparator needs an index (its reference papers)")
    if kind == "llm":
        return LLMComparator(llm)
    scorer = Topicality(index, embed, **topicality)
    if kind == "prior":

        try:
            fluency = FluencyScore(llm)
        except LLMUnavailable as exc:
            raise ValueError(f"the prior comparator reads each idea's likelihood: {exc}; use --backend embedded") from None
        blend = Blend([scorer, fluency])
        return ScoreComparator(blend, f"prior:{blend.name}")
    emb = ScoreComparator(scorer, f"embedding:{scorer.name}")
    return emb if kind == "embedding" else HybridComparator(LLMComparator(llm), emb, llm_weight)
