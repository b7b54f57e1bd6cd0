"""Rate a chunk 1–10 for quality or venue style, as Between the Drafts does (Chen, Weber & Dietrich, 2025).

The model sees the chunk and the two most similar passages retrieved from the proceedings index
(Appendix B.3; each truncated to 200 tokens, Appendix B.5) in the prompts of Appendix A
(`prompts/drafts_A*.txt`).  The score is the *expected* rating under the model's probabilities
over "1".."10" (not a sampled token), so it is deterministic and comes with a confidence and a
distribution.  When the input itself is in the corpus its own paper is excluded by id, and any
near-verbatim match is dropped too, as the paper drops the most similar reference (Section 4.1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import mean
from typing import Callable, Sequence

import numpy as np

from ...index.ingest.markup import clean_title
from ...index.papers import Hit, SearchFilter
from .text import PreparedText, delimited, prepare
from ...llm.base import ChoiceScores, GenerateParams, LLMError
from ..prompt_files import load_prompt
from ...types import text_hash

SCALE = tuple(str(i) for i in range(1, 11))
ASPECTS = ("quality", "style")
PROMPT_FOR = {  # (aspect, with retrieval, with a title line) -> Appendix A prompt
    ("quality", True, False): "A1", ("quality", False, False): "A2", ("quality", False, True): "A2",
    ("style", False, False): "A3", ("style", False, True): "A3",
    ("quality", True, True): "A4", ("style", True, True): "A5", ("style", True, False): "A5",
}
REF_TOKENS = 200  # Appendix B.5
TOP_K = 2  # Appendix B.3
SELF_MATCH = 0.97  # a retrieved passage this similar is the input itself (or a copy of it)
LOW_CONFIDENCE = 0.2  # the most likely rating has less probability than this
UNIFORM_SPREAD = 1e-6  # max - min probability below this: the model gave no rating at all


@dataclass(frozen=True)
class Reference:
    """A retrieved "gold standard" passage, as the prompt showed it."""

    id: str
    title: str
    venue: str
    year: int | None
    similarity: float
    text: str

    def to_json(self) -> dict:
        return {"id": self.id, "title": self.title, "venue": self.venue, "year": self.year,
                "similarity": round(self.similarity, 4), "text": self.text}


@dataclass(frozen=True)
class ChunkScore:
    """One rating; `score` is None when the chunk was skipped (see `skipped`)."""

    aspect: str
    score: float | None
    confidence: float = 0.0  # probability of the most likely rating
    distribution: tuple[float, ...] = ()  # P("1") .. P("10")
    references: tuple[Reference, ...] = ()
    prompt: str = ""  # which Appendix A prompt ("A1".."A5")
    skipped: str = ""
    removed: tuple[str, ...] = ()  # instruction-like sentences kept out of the prompt

    @property
    def low_confidence(self) -> bool:
        return self.score is not None and self.confidence < LOW_CONFIDENCE

    def to_evidence(self) -> dict:
        return {"score": None if self.score is None else round(self.score, 3), "aspect": self.aspect,
                "confidence": round(self.confidence, 3), "low_confidence": self.low_confidence,
                "distribution": [round(p, 4) for p in self.distribution], "prompt": self.prompt,
                "references": [r.to_json() for r in self.references], "skipped": self.skipped,
                "removed": list(self.removed)}


def expected_score(scores: ChoiceScores) -> tuple[float | None, float, tuple[float, ...]]:
    """(expected rating, confidence, distribution) from scores over "1".."10"; None when uninformative.

    Probabilities are renormalised over the ten ratings; a uniform or non-finite answer (the
    model put no mass on any number, or a backend parsed no number) gives None.
    """
    by_choice = dict(zip(scores.choices, scores.probs))
    probs = np.array([float(by_choice.get(c, 0.0)) for c in SCALE], dtype=float)
    if not np.all(np.isfinite(probs)) or probs.sum() <= 0:
        return None, 0.0, tuple(0.0 for _ in SCALE)
    probs = probs / probs.sum()
    dist = tuple(float(p) for p in probs)
    if probs.max() - probs.min() < UNIFORM_SPREAD:
        return None, float(probs.max()), dist
    return float(probs @ np.arange(1, 11)), float(probs.max()), dist


def hit_text(hit: Hit) -> str:
    """The retrieved chunk of a hit (its whole text when the index stored no span)."""
    text = hit.paper.text
    return text[hit.chunk_start:hit.chunk_end] if hit.chunk_end > hit.chunk_start else text


class DraftScorer:
    """Prompts built from Appendix A, references from the index, ratings from `llm.score`.

    `retriever` may be None: then only the retrieval-free prompts (A.2/A.3) can be used.
    `truncate(text, n)` cuts a reference to n tokens; by default the index's own tokenizer.
    """

    def __init__(self, llm, retriever=None, truncate: Callable[[str, int], str] | None = None,
                 k: int = TOP_K, ref_tokens: int = REF_TOKENS, self_match: float = SELF_MATCH):
        self.llm, self.retriever, self.k, self.ref_tokens, self.self_match = llm, retriever, k, ref_tokens, self_match
        self._truncate = truncate

    # -- references ------------------------------------------------------------------------
    def truncate(self, text: str, n: int) -> str:
        if self._truncate is not None:
            return self._truncate(text, n)
        if self.retriever is not None:
            tok = self.retriever.index.embedder.tokenizer
            offsets = tok(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)["offset_mapping"]
            return text if len(offsets) <= n else text[: offsets[n - 1][1]]
        words = text.split()
        return " ".join(words[: int(n * 0.75)])

    def references(self, text: str, venue: str = "", exclude_ids: frozenset[str] = frozenset()) -> tuple[Reference, ...]:
        """Top-k passages from the retriever's first stage (from `venue` when given), the input's own paper
        left out; a passage above `self_match` cosine similarity is the input itself and skipped."""
        if self.retriever is None or not text.strip():
            return ()
        vec = self.retriever.vectors([text], [text_hash(text)])[0]
        flt = SearchFilter(venues=(venue,) if venue else (), exclude_ids=frozenset(exclude_ids))
        hits = self.retriever.search(vec, text, self.k + 2, flt if (venue or exclude_ids) else None)
        kept = [h for h in hits if h.similarity < self.self_match][: self.k]
        return tuple(Reference(h.paper.id, clean_title(h.paper.title), h.paper.venue, h.paper.year, float(h.similarity),
                               self.truncate(hit_text(h), self.ref_tokens)) for h in kept)

    # -- prompts ---------------------------------------------------------------------------
    @staticmethod
    def prompt_id(aspect: str, retrieval: bool, title: str = "") -> str:
        if aspect not in ASPECTS:
            raise ValueError(f"unknown aspect {aspect!r}: use one of {', '.join(ASPECTS)}")
        return PROMPT_FOR[(aspect, retrieval, bool(title))]

    @staticmethod
    def render(prompt_id: str, prepared: PreparedText, refs: Sequence[Reference], title: str = "",
               chunk_no: int = 1) -> str:
        docs = [delimited(r.text) for r in refs] + ["(no reference retrieved)"] * 2
        return load_prompt(f"drafts_{prompt_id}").render(
            "user", input=delimited(prepared.text), doc1=docs[0], doc2=docs[1],
            title=title.replace("\n", " ")[:200] or "the draft", chunk_no=chunk_no)

    # -- scoring ---------------------------------------------------------------------------
    def score(self, text: str, aspect: str = "quality", *, venue: str = "", retrieval: bool = True,
              title: str = "", chunk_no: int = 1, exclude_ids: frozenset[str] = frozenset()) -> ChunkScore:
        """Rate one chunk; never raises for bad input or a bad answer (see `ChunkScore.skipped`)."""
        prepared = prepare(text)
        if prepared.skipped:
            return ChunkScore(aspect, None, skipped=prepared.skipped, removed=prepared.removed)
        refs = self.references(prepared.text, venue, exclude_ids) if retrieval else ()
        use_refs = retrieval and bool(refs)
        pid = self.prompt_id(aspect, use_refs, title)
        prompt = self.render(pid, prepared, refs, title, chunk_no)
        try:
            answer = self.llm.score(prompt, list(SCALE))
        except LLMError as exc:
            return ChunkScore(aspect, None, references=refs, prompt=pid, skipped=f"the LLM failed: {exc}",
                              removed=prepared.removed)
        value, confidence, dist = expected_score(answer)
        skipped = "" if value is not None else "the model gave no rating (no probability on any of 1..10)"
        return ChunkScore(aspect, value, confidence, dist, refs, pid, skipped, prepared.removed)

    def suggest(self, text: str, result: ChunkScore, venue: str = "", max_tokens: int = 80) -> str:
        """One concrete, short suggestion for a flagged chunk ("" when the model gives none)."""
        prepared = prepare(text)
        ref = result.references[0].text if result.references else "(none)"
        aspect = "quality and clarity" if result.aspect == "quality" else f"writing style for {venue or 'the venue'}"
        prompt = load_prompt("drafts_suggest").render(
            "user", score=result.score or 0.0, aspect=aspect, venue=venue or "published proceedings",
            input=prepared.text, doc1=ref)
        try:
            answer = self.llm.generate(prompt, GenerateParams(max_tokens=max_tokens, temperature=0.0, seed=42))
        except LLMError:
            return ""
        return tidy_suggestion(answer)


def tidy_suggestion(answer: str) -> str:
    """The first sentence or two of a generated suggestion, without list markers or quotes."""
    text = " ".join(answer.replace("**", "").split()).lstrip("-*0123456789. ").strip('" ')
    if not text:
        return ""
    end = max(text.rfind(". ", 0, 240), text.rfind(".", 0, 240))
    return text[: end + 1] if end > 40 else text[:240]


@dataclass
class Aggregate:
    """Chunk scores averaged per section and per paper (Appendix B.5, step 3)."""

    paper: float | None
    sections: dict[str, float] = field(default_factory=dict)
    rated: int = 0
    skipped: int = 0


def aggregate(scores: Sequence[tuple[str, ChunkScore]]) -> Aggregate:
    """Mean over the rated chunks of a paper, and per section (pairs of section name and score)."""
    rated = [(s, c.score) for s, c in scores if c.score is not None and not math.isnan(c.score)]
    by_section: dict[str, list[float]] = {}
    for section, value in rated:
        by_section.setdefault(section, []).append(value)
    return Aggregate(mean(v for _, v in rated) if rated else None,
                     {s: mean(v) for s, v in by_section.items()}, len(rated), len(scores) - len(rated))
