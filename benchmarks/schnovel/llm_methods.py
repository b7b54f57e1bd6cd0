"""The LLM side of SchNovel (Lin et al., 2024): its pairwise prompting methods and answer parsing.

Every method answers "which of the two shown papers is more novel?" as a `Verdict` about the
*shown* order (first / second), so callers can ask both orders and measure position bias.
Where the prompt's answer is one short choice the verdict is read from the model's
log-probabilities over the choices (`LLM.score`); methods whose point is reasoning (CoT,
self-consistency, LLM discussion) generate text, and the closing sentence "The more novel and
impactful paper is Paper X" is parsed, with a looser fallback that is reported, not hidden.
Prompts live in `prompts/schnovel_*.txt`, one file per appendix section (read by `llm/prompt_files.py`).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Sequence

from ...llm.base import LLM, GenerateParams, LLMError
from ...analyzers.prompt_files import clip, load_prompt

ABSTRACT_CHARS = 1200  # two abstracts + instructions must fit the embedded model's 2,048 tokens
EXAMPLE_CHARS = 450
RESPONSE_CHARS = 600
CLOSING = "The more novel and impactful paper is Paper "


@dataclass(frozen=True)
class Shown:
    """A paper as a prompt shows it; the neighbourhood numbers are for RAG-Novelty only."""

    title: str
    abstract: str
    mean_year: float | None = None
    mean_similarity: float | None = None


@dataclass(frozen=True)
class Verdict:
    """The answer about one shown order: `choice` 0 = first shown is more novel, 1 = second, None = no answer.

    `how`: "score" (read from log-probabilities), "strict" (closing sentence found), "fallback"
    (looser pattern: counted as unparsed), "none" (nothing found), "error" (the backend failed).
    """

    choice: int | None
    how: str
    p_first: float | None = None
    text: str = ""


@dataclass(frozen=True)
class AskContext:
    """What some methods need besides the two papers."""

    category: str = "computer science"
    examples: tuple[tuple[Shown, Shown], ...] = ()  # two-shot: (newer, older) example pairs


def _papers(first: Shown, second: Shown, chars: int = ABSTRACT_CHARS) -> dict[str, str]:
    return {"first_title": first.title, "first_abstract": clip(first.abstract, chars),
            "second_title": second.title, "second_abstract": clip(second.abstract, chars)}


# -- parsing --------------------------------------------------------------------------------------

_LABEL = r"(?:paper\s*)?\[?\s*([XY12])\b"
_STRICT = re.compile(r"more\s+novel\s+and\s+impactful\s+paper\s+is\W*" + _LABEL, re.I)
_FALLBACKS = (
    re.compile(r"paper\s*([XY12])\s+(?:is|was|seems|appears)\s+(?:to\s+be\s+)?(?:the\s+|slightly\s+|much\s+)?more\s+novel", re.I),
    re.compile(r"more\s+novel\s+(?:paper\s+)?(?:is|would be)\W*" + _LABEL, re.I),
    re.compile(r"^\W*(?:answer\W*)?" + _LABEL + r"\W*$", re.I),
)
_SCORE = re.compile(r"paper\s*([XY12])\b[^\n]{0,60}?\b(\d{1,2}(?:\.\d)?)\s*/\s*10", re.I)


def _index(label: str) -> int:
    return 0 if label.upper() in ("X", "1") else 1


def parse_verdict(text: str) -> Verdict:
    """The closing sentence (strict), else a looser pattern or the higher "n/10" score (fallback)."""
    strict = _STRICT.findall(text)
    if strict:
        return Verdict(_index(strict[-1]), "strict", text=text)
    for pattern in _FALLBACKS:
        found = pattern.findall(text.strip())
        if found:
            return Verdict(_index(found[-1]), "fallback", text=text)
    scores: dict[int, float] = {}
    for label, value in _SCORE.findall(text):
        scores[_index(label)] = float(value)
    if len(scores) == 2 and scores[0] != scores[1]:
        return Verdict(0 if scores[0] > scores[1] else 1, "fallback", text=text)
    return Verdict(None, "none", text=text)


def _scored(llm: LLM, prompt: str, system: str, choices: Sequence[str]) -> Verdict:
    scores = llm.score(prompt, list(choices), system=system)
    p_first = scores.probs[0]
    return Verdict(0 if p_first >= scores.probs[1] else 1, "score", p_first)


# -- the methods ----------------------------------------------------------------------------------

def zero_shot(llm: LLM, first: Shown, second: Shown, ctx: AskContext) -> Verdict:
    p = load_prompt("schnovel_zero_shot")
    return _scored(llm, p.render("user", **_papers(first, second)), p.sections["system"], ("1", "2"))


def two_shot(llm: LLM, first: Shown, second: Shown, ctx: AskContext) -> Verdict:
    if len(ctx.examples) < 2:
        raise ValueError("two-shot needs two example pairs")
    p, system = load_prompt("schnovel_two_shot"), load_prompt("schnovel_zero_shot").sections["system"]
    (n1, o1), (n2, o2) = ctx.examples[:2]
    examples = "\n\n".join([p.render("example", answer="1", **_papers(n1, o1, EXAMPLE_CHARS)),
                            p.render("example", answer="2", **_papers(o2, n2, EXAMPLE_CHARS))])
    prompt = p.render("user", examples=examples, **_papers(first, second, EXAMPLE_CHARS * 2))
    return _scored(llm, prompt, system, ("1", "2"))


def self_reflection(llm: LLM, first: Shown, second: Shown, ctx: AskContext) -> Verdict:
    p = load_prompt("schnovel_self_reflection")
    return _scored(llm, p.render("user", **_papers(first, second)), p.sections["system"], (CLOSING + "X", CLOSING + "Y"))


def rag_novelty(llm: LLM, first: Shown, second: Shown, ctx: AskContext) -> Verdict:
    p = load_prompt("schnovel_rag_novelty")

    def fmt(x: float | None, digits: int) -> str:
        return "unknown" if x is None else f"{x:.{digits}f}"

    prompt = p.render("user", first_similarity=fmt(first.mean_similarity, 4), first_date=fmt(first.mean_year, 1),
                      second_similarity=fmt(second.mean_similarity, 4), second_date=fmt(second.mean_year, 1),
                      **_papers(first, second))
    return _scored(llm, prompt, p.sections["system"], (CLOSING + "X", CLOSING + "Y"))


def _generate(llm: LLM, prompt: str, system: str, max_tokens: int, temperature: float = 0.0, seed: int = 42) -> str:
    return llm.generate(prompt, GenerateParams(system=system, max_tokens=max_tokens, temperature=temperature, seed=seed))


def cot(llm: LLM, first: Shown, second: Shown, ctx: AskContext) -> Verdict:
    p = load_prompt("schnovel_cot")
    return parse_verdict(_generate(llm, p.render("user", **_papers(first, second)), p.sections["system"], 256))


def self_consistency(llm: LLM, first: Shown, second: Shown, ctx: AskContext, samples: int = 10) -> Verdict:
    """Majority of `samples` answers at T=0.7; a sample without a parsable answer does not vote.

    The verdict is "strict" only when every vote came from the closing sentence."""
    p = load_prompt("schnovel_self_consistency")
    prompt = p.render("user", **_papers(first, second))
    verdicts = [parse_verdict(_generate(llm, prompt, p.sections["system"], 200, 0.7, seed)) for seed in range(samples)]
    votes = Counter(v.choice for v in verdicts if v.choice is not None)
    if not votes or votes[0] == votes[1]:
        return Verdict(None, "none", text=f"votes {dict(votes)}")
    how = "strict" if all(v.how == "strict" for v in verdicts) else "fallback"
    return Verdict(max(votes, key=votes.__getitem__), how, votes[0] / (votes[0] + votes[1]), f"votes {dict(votes)}")


ROLES = ("professor", "PhD student", "editor of a prestigious journal")
CHAIR = "chair of the conference (the professor, the PhD student and the editor are its reviewers)"


def llm_discussion(llm: LLM, first: Shown, second: Shown, ctx: AskContext) -> Verdict:
    """Three reviewers answer, each revises after reading the other two, and the chair decides."""
    p = load_prompt("schnovel_llm_discussion")
    papers = p.render("user", **_papers(first, second))

    def system(role: str) -> str:
        return p.render("system", role=role, category=ctx.category)

    def others(answers: Sequence[str], skip: int | None) -> str:
        return "\n".join(f"Response {n}: {clip(a, RESPONSE_CHARS)}"
                         for n, a in enumerate((a for i, a in enumerate(answers) if i != skip), 1))

    first_round = [_generate(llm, papers, system(role), 200) for role in ROLES]
    second_round = [
        _generate(llm, papers + "\n\n" + p.render("revise", previous_response=clip(mine, RESPONSE_CHARS),
                                                  other_responses=others(first_round, i)), system(role), 200)
        for i, (role, mine) in enumerate(zip(ROLES, first_round))]
    chair = system(CHAIR)
    return parse_verdict(_generate(llm, papers + "\n\n" + p.render("decide", other_responses=others(second_round, None)),
                                   chair, 200))


Method = Callable[[LLM, Shown, Shown, AskContext], Verdict]
LLM_METHODS: dict[str, Method] = {
    "zero-shot": zero_shot, "two-shot": two_shot, "cot": cot, "self-reflection": self_reflection,
    "self-consistency": self_consistency, "llm-discussion": llm_discussion, "rag-novelty": rag_novelty,
}


def ask(method: str, llm: LLM, first: Shown, second: Shown, ctx: AskContext = AskContext()) -> Verdict:
    """Run one LLM method on one shown order; a backend failure is a counted "error", not a crash."""
    try:
        return LLM_METHODS[method](llm, first, second, ctx)
    except LLMError as exc:
        return Verdict(None, "error", text=str(exc))
