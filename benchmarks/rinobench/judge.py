"""RINoBench's LLM side: the novelty predictor (1–5 score and justification) and the justification judge.

Predictor: the paper's zero-shot prompt (Appendix A, Figure 6) with the official rubric, answered
as JSON under a schema ({"novelty_reasoning", "novelty_score"}; the reasoning comes first, as in
the paper's output format).  The same prompt, asking for the digit alone, is also scored over
"1".."5" with `LLM.score`; that expected value, rounded, is a second prediction (`TokenScore`).

Judge (Section 4.2.2, following the official src/eval): alignment is G-Eval's probability-weighted
0–10 score divided by 10; known- and novelty-aspect arguments are extracted from the predicted and
gold justifications, each predicted one marked as supported by the gold or not; the unsupported
ones are fact-checked against the idea and its related works.  Every LLM answer is decoded under a
JSON schema and validated here; an answer that does not validate, or a backend failure, is counted
with its reason and never replaced by a guess.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Sequence

from ...llm.base import LLM, GenerateParams, LLMBadOutput, LLMError, LLMUnavailable
from ...analyzers.prompt_files import clip, load_prompt
from .dataset import SCORES, RinoItem

SCORE_CHOICES = tuple(str(s) for s in SCORES)
ALIGNMENT_CHOICES = tuple(str(s) for s in range(11))
MAX_ASPECTS = 6
UNIFORM_SPREAD = 1e-6  # choice probabilities closer than this carry no answer


@dataclass(frozen=True)
class Budget:
    """How much related work a prompt may show, and answer lengths.

    The embedded model has a 2,048-token context and its tokenizer reads ~4.8 characters of
    English a token: instructions, idea and 4,000 characters of related work stay near 1,500
    tokens.  Ollama's default context differs by version; raise `works_chars` there with care.
    """

    works_chars: int
    abstract_chars: int
    predict_tokens: int = 320
    judge_tokens: int = 320


BUDGETS = {"embedded": Budget(works_chars=4000, abstract_chars=600),
           "ollama": Budget(works_chars=12000, abstract_chars=1500, predict_tokens=512, judge_tokens=768)}
FACT_CHECK_TOKENS = (24, 12)  # a verdict list: fixed part + tokens per claim


def budget_for(backend_name: str) -> Budget:
    return BUDGETS.get(backend_name, BUDGETS["ollama"])


# -- outcomes ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Failure:
    """Why an LLM step gave no answer: "unparsed" (answered, but not valid) or "error" (backend failed)."""

    kind: str
    detail: str


@dataclass(frozen=True)
class Prediction:
    """The generated judgment; `score` is None exactly when `failure` is set."""

    score: int | None
    reasoning: str = ""
    failure: Failure | None = None
    works_shown: int = 0
    works_total: int = 0


@dataclass(frozen=True)
class TokenScore:
    """The score read from probabilities over "1".."5": `score` is the expected value rounded."""

    score: int | None
    expected: float | None = None
    probs: tuple[float, ...] = ()
    failure: Failure | None = None


@dataclass(frozen=True)
class JudgedAspect:
    text: str
    supported_in_gold: bool


@dataclass(frozen=True)
class AspectComparison:
    """One extraction (known or novelty aspects): the predicted arguments, judged against the gold ones."""

    predicted: tuple[JudgedAspect, ...]
    gold: tuple[str, ...]

    @property
    def additional(self) -> tuple[str, ...]:
        """Predicted arguments the gold justification does not support: what gets fact-checked."""
        return tuple(a.text for a in self.predicted if not a.supported_in_gold)


@dataclass(frozen=True)
class AspectCheck:
    """An extraction and the fact-check of its additional arguments (None when that step failed)."""

    comparison: AspectComparison | None
    grounded: tuple[bool, ...] | None  # one per `comparison.additional`
    failure: Failure | None = None


@dataclass(frozen=True)
class Justification:
    """Everything the judge found about one predicted justification."""

    alignment: float | None
    known: AspectCheck
    novelty: AspectCheck
    alignment_failure: Failure | None = None

    @property
    def failures(self) -> tuple[Failure, ...]:
        return tuple(f for f in (self.alignment_failure, self.known.failure, self.novelty.failure) if f)


# -- prompts -----------------------------------------------------------------------------------

def rubric_lines() -> tuple[str, ...]:
    """The official label descriptions, "score: description", one per score."""
    lines = tuple(line.strip() for line in load_prompt("rinobench_rubric").sections["labels"].splitlines() if line.strip())
    if tuple(line.split(":", 1)[0] for line in lines) != SCORE_CHOICES:
        raise ValueError("prompts/rinobench_rubric.txt must hold one line per score 1..5")
    return lines


def render_works(item: RinoItem, budget: Budget) -> tuple[str, int]:
    """The related works as "[n] Title / Abstract" entries, as many as fit the budget, and how many."""
    parts, used = [], 0
    for n, work in enumerate(item.related_works, 1):
        entry = f"[{n}] Title: {work.title}\nAbstract: {clip(work.abstract, budget.abstract_chars)}"
        if parts and used + len(entry) > budget.works_chars:
            break
        parts.append(entry)
        used += len(entry) + 2
    return ("\n\n".join(parts) if parts else "(none)"), len(parts)


def predict_prompt(item: RinoItem, budget: Budget) -> tuple[str, str, int]:
    """(system, user prompt, related works shown)."""
    p = load_prompt("rinobench_predict")
    works, shown = render_works(item, budget)
    rubric = "\n".join(f"     - {line}" for line in rubric_lines())
    return p.sections["system"], p.render("user", rubric=rubric, research_idea=item.idea.render(),
                                          related_works=works), shown


PREDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"novelty_reasoning": {"type": "string"}, "novelty_score": {"type": "integer", "enum": list(SCORES)}},
    "required": ["novelty_reasoning", "novelty_score"],
}

_ASPECT_LIST = {"type": "array", "maxItems": MAX_ASPECTS}
COMPARISON_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "predicted_aspects": {**_ASPECT_LIST, "items": {
            "type": "object", "properties": {"aspect": {"type": "string"}, "supported_in_gold": {"type": "boolean"}},
            "required": ["aspect", "supported_in_gold"]}},
        "gold_aspects": {**_ASPECT_LIST, "items": {"type": "string"}},
    },
    "required": ["predicted_aspects", "gold_aspects"],
}


def fact_check_schema(n: int) -> dict[str, Any]:
    """Exactly `n` verdicts: the grammar (or Ollama's format) cannot answer for fewer or more claims."""
    return {"type": "object", "properties": {"checked_claims": {
        "type": "array", "minItems": n, "maxItems": n,
        "items": {"type": "object", "properties": {"supported": {"type": "boolean"}}, "required": ["supported"]}}},
        "required": ["checked_claims"]}


# -- parsing (pure: tests feed it any text) -----------------------------------------------------

class Unparsed(ValueError):
    """An answer that does not validate; the message says what is wrong."""


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        raise Unparsed(f"not JSON: {' '.join(text.split())[:60]!r}") from None
    if not isinstance(value, dict):
        raise Unparsed(f"JSON {type(value).__name__}, not an object")
    return value


def parse_prediction(text: str) -> tuple[int, str]:
    """(score, reasoning) from the predictor's JSON; `Unparsed` unless both are valid."""
    value = _json_object(text)
    score, reasoning = value.get("novelty_score"), value.get("novelty_reasoning")
    if isinstance(score, float) and score.is_integer():
        score = int(score)
    if isinstance(score, bool) or not isinstance(score, int) or score not in SCORES:
        raise Unparsed(f"novelty_score {score!r} is not an integer 1-5")
    if not isinstance(reasoning, str) or not reasoning.strip():
        raise Unparsed("no novelty_reasoning text")
    return score, " ".join(reasoning.split())


def parse_comparison(text: str) -> AspectComparison:
    """The extraction JSON as an `AspectComparison`; blank aspects are left out."""
    value = _json_object(text)
    predicted, gold = value.get("predicted_aspects"), value.get("gold_aspects")
    if not isinstance(predicted, list) or not isinstance(gold, list):
        raise Unparsed("predicted_aspects and gold_aspects must be lists")
    judged = []
    for entry in predicted:
        if not (isinstance(entry, dict) and isinstance(entry.get("aspect"), str)
                and isinstance(entry.get("supported_in_gold"), bool)):
            raise Unparsed(f"predicted aspect {entry!r} lacks aspect text or a true/false supported_in_gold")
        if entry["aspect"].strip():
            judged.append(JudgedAspect(" ".join(entry["aspect"].split()), entry["supported_in_gold"]))
    if not all(isinstance(g, str) for g in gold):
        raise Unparsed("gold_aspects must be strings")
    return AspectComparison(tuple(judged), tuple(" ".join(g.split()) for g in gold if g.strip()))


def parse_fact_check(text: str, n: int) -> tuple[bool, ...]:
    """One true/false per claim; `Unparsed` when the count or a type is wrong."""
    checked = _json_object(text).get("checked_claims")
    if not isinstance(checked, list):
        raise Unparsed("checked_claims must be a list")
    verdicts = [c.get("supported") if isinstance(c, dict) else None for c in checked]
    if len(verdicts) != n or not all(isinstance(v, bool) for v in verdicts):
        raise Unparsed(f"expected {n} true/false verdicts, got {verdicts!r}")
    return tuple(verdicts)


def token_score(probs: Sequence[float]) -> tuple[int, float] | None:
    """(rounded expected value, expected value) of a distribution over 1..5; None if it says nothing."""
    if len(probs) != len(SCORES) or not all(math.isfinite(p) for p in probs) or sum(probs) <= 0:
        return None
    if max(probs) - min(probs) < UNIFORM_SPREAD:
        return None
    expected = sum(s * p for s, p in zip(SCORES, probs)) / sum(probs)
    return int(math.floor(expected + 0.5)), expected


# -- calling the LLM ---------------------------------------------------------------------------

def _failure(exc: Exception) -> Failure:
    return Failure("unparsed" if isinstance(exc, (Unparsed, LLMBadOutput)) else "error", str(exc))


def _generate(llm: LLM, prompt: str, schema: dict[str, Any], max_tokens: int, system: str | None = None) -> str:
    return llm.generate(prompt, GenerateParams(system=system, json_schema=schema, max_tokens=max_tokens))


class RinoLLM:
    """One LLM asked for RINoBench predictions and, as the judge, for justification checks.

    `unavailable` is set once the backend is known to be down; later calls are not made.
    """

    def __init__(self, llm: LLM, budget: Budget, give_up_after: int = 3):
        self.llm, self.budget, self.give_up_after = llm, budget, give_up_after
        self._down_streak = 0
        self.unavailable: str | None = None

    def _note(self, exc: Exception | None) -> None:
        """Stop calling a backend after `give_up_after` unavailable answers in a row (e.g. Ollama down)."""
        self._down_streak = self._down_streak + 1 if isinstance(exc, LLMUnavailable) else 0
        if self._down_streak >= self.give_up_after:
            self.unavailable = str(exc)

    def _skipped(self) -> Failure:
        return Failure("error", f"not asked: the backend is unavailable ({self.unavailable})")

    def predict(self, item: RinoItem) -> Prediction:
        system, prompt, shown = predict_prompt(item, self.budget)
        total = len(item.related_works)
        if self.unavailable:
            return Prediction(None, failure=self._skipped(), works_shown=shown, works_total=total)
        try:
            score, reasoning = parse_prediction(_generate(self.llm, prompt, PREDICT_SCHEMA, self.budget.predict_tokens, system))
        except (Unparsed, LLMError) as exc:
            self._note(exc)
            return Prediction(None, failure=_failure(exc), works_shown=shown, works_total=total)
        self._note(None)
        return Prediction(score, reasoning, works_shown=shown, works_total=total)

    def token_score(self, item: RinoItem) -> TokenScore:
        if self.unavailable:
            return TokenScore(None, failure=self._skipped())
        system, prompt, _ = predict_prompt(item, self.budget)
        try:
            scores = self.llm.score(prompt + "\n\n" + load_prompt("rinobench_predict").sections["score"],
                                    list(SCORE_CHOICES), system=system)
        except LLMError as exc:
            self._note(exc)
            return TokenScore(None, failure=_failure(exc))
        self._note(None)
        read = token_score(scores.probs)
        if read is None:
            return TokenScore(None, probs=tuple(scores.probs),
                              failure=Failure("unparsed", "no probability mass on any digit 1-5"))
        return TokenScore(read[0], read[1], tuple(scores.probs))

    # -- the judge -------------------------------------------------------------------------
    def alignment(self, predicted: str, gold: str) -> tuple[float | None, Failure | None]:
        if self.unavailable:
            return None, self._skipped()
        try:
            scores = self.llm.score(load_prompt("rinobench_alignment").render("user", predicted=predicted, gold=gold),
                                    list(ALIGNMENT_CHOICES))
        except LLMError as exc:
            self._note(exc)
            return None, _failure(exc)
        self._note(None)
        if max(scores.probs) - min(scores.probs) < UNIFORM_SPREAD:
            return None, Failure("unparsed", "no probability mass on any score 0-10")
        return scores.expected() / 10.0, None

    def aspects(self, kind: str, item: RinoItem, predicted: str) -> AspectCheck:
        """`kind` "known" or "novelty": extract and judge the arguments, then fact-check the additional ones."""
        if self.unavailable:
            return AspectCheck(None, None, self._skipped())
        prompt = load_prompt(f"rinobench_{kind}_aspects").render("user", predicted=predicted, gold=item.novelty_reasoning)
        try:
            comparison = parse_comparison(_generate(self.llm, prompt, COMPARISON_SCHEMA, self.budget.judge_tokens))
        except (Unparsed, LLMError) as exc:
            self._note(exc)
            return AspectCheck(None, None, _failure(exc))
        self._note(None)
        claims = comparison.additional
        if not claims:
            return AspectCheck(comparison, ())
        works, _ = render_works(item, self.budget)
        prompt = load_prompt("rinobench_fact_check").render(
            "user", research_idea=item.idea.render(), related_works=works,
            claims="\n".join(f"{n}. {claim}" for n, claim in enumerate(claims, 1)))
        try:
            grounded = parse_fact_check(_generate(self.llm, prompt, fact_check_schema(len(claims)),
                                                  FACT_CHECK_TOKENS[0] + FACT_CHECK_TOKENS[1] * len(claims)), len(claims))
        except (Unparsed, LLMError) as exc:
            self._note(exc)
            return AspectCheck(comparison, None, _failure(exc))
        self._note(None)
        return AspectCheck(comparison, grounded)

    def judge(self, item: RinoItem, predicted: str) -> Justification:
        alignment, failure = self.alignment(predicted, item.novelty_reasoning)
        return Justification(alignment, self.aspects("known", item, predicted), self.aspects("novelty", item, predicted),
                             failure)
