"""The editor's *Check novelty*: the calibrated score of a paragraph, its nearest papers, and why.

The score comes from `novelty.NoveltyModel` (trained once per index build, cached on disk); the
one-paragraph justification from the LLM, given the paragraph, its neighbours and the score
(`prompts/novelty_justification.txt`).  Reports are kept per chunk text and LLM, so asking again
about an unchanged paragraph costs nothing.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from ...index.papers import Hit
from .model import Neighbourhood, NoveltyModel, calibrated, load_or_train, text_features
from .features import Timeline
from ...retrieval.retriever import HitView
from ...types import Chunk, Judgment
from ...llm.base import GenerateParams, LLMError
from ..drafts.text import split_injection
from ..prompt_files import clip, load_prompt

JUSTIFICATION_TOKENS = 100
MIN_JUSTIFICATION_WORDS = 8  # fewer is no justification: a small model's "Shorten the first sentence."


@dataclass(frozen=True)
class NoveltyReport:
    """What the editor shows for one text."""

    score: float | None  # P(judged more novel than one of the newest indexed papers); None when uncalibrated
    raw: float  # the model's pointwise score s
    hits: tuple[HitView, ...]  # best first
    mean_year: float | None
    density: float  # mean similarity of the neighbours
    justification: str
    note: str = ""  # why there is no justification, when there is none
    field: tuple[str, ...] = ()  # the venue(s) it was compared with
    cutoff: int | None = None


def assess(text: str, vector: np.ndarray, hits: Sequence[Hit], model: NoveltyModel, timeline: Timeline,
           llm=None, max_tokens: int = JUSTIFICATION_TOKENS) -> NoveltyReport:
    """Score a text against the index and, given an LLM, justify the score in one paragraph."""
    features, where = text_features(timeline, vector, design=timeline.design_row(vector, text))
    raw = model.score(features)
    score = model.percentile(raw)
    nb = Neighbourhood(None, tuple(hits))
    views = tuple(HitView.of(h) for h in hits)
    justification, note = ("", "no LLM backend: no justification") if llm is None else \
        justify(llm, text, views, nb, score, max_tokens)
    return NoveltyReport(score, raw, views, nb.mean_year, nb.mean_similarity, justification, note,
                         tuple(where["field"]), where["cutoff"])


def justify(llm, text: str, views: Sequence[HitView], nb: Neighbourhood, score: float | None,
            max_tokens: int) -> tuple[str, str]:


    text = split_injection(text)[0]  # a justification of the text, not of what it tells the model to say
    prompt = load_prompt("novelty_justification")
    neighbours = "\n".join(f"- {v.title} ({' '.join(str(x) for x in (v.venue, v.year) if x)}, similarity {v.similarity:.2f})"
                           for v in views[:5])
    user = prompt.render("user", text=clip(text, 1500), neighbours=neighbours or "- none",
                         mean_year=f"{nb.mean_year:.1f}" if nb.mean_year is not None else "unknown",
                         mean_similarity=f"{nb.mean_similarity:.2f}",
                         score="unknown" if score is None else f"{score:.2f}")
    try:
        out = llm.generate(user, GenerateParams(system=prompt.sections["system"], max_tokens=max_tokens))
    except LLMError as exc:
        return "", f"the LLM could not justify the score ({exc})"
    answer = tidy_paragraph(out)
    if len(answer.split()) >= MIN_JUSTIFICATION_WORDS:
        return answer, ""
    return evidence_summary(views, nb), f"the LLM's answer said too little ({answer or 'nothing'!r}): the evidence instead"


def evidence_summary(views: Sequence[HitView], nb: Neighbourhood) -> str:
    """What the retrieved evidence says, in words, where the LLM gave no usable justification."""
    if not views:
        return "No indexed paper is close to this passage, so nothing in the index repeats it."
    top = views[0]
    where = " ".join(str(x) for x in (top.venue, top.year) if x)
    close = "closely repeats" if top.similarity >= 0.85 else "is nearest to" if top.similarity >= 0.6 else "is only loosely related to"
    year = f" published on average in {nb.mean_year:.0f}" if nb.mean_year is not None else ""
    return (f"The passage {close} \"{top.title}\" ({where}, similarity {top.similarity:.2f}); its {len(views)} "
            f"nearest papers were{year}, with mean similarity {nb.mean_similarity:.2f}.")


def tidy_paragraph(text: str) -> str:
    """One paragraph: whitespace collapsed, repeated sentences (small models loop) and a cut-off tail dropped."""
    kept: list[str] = []
    for sentence in re.split(r"(?<=[.!?])\s+", " ".join(text.split())):
        if sentence and sentence.lower() not in {k.lower() for k in kept}:
            kept.append(sentence)
    if len(kept) > 1 and not kept[-1].endswith((".", "!", "?")):
        kept.pop()
    return " ".join(kept)


def novelty_judgment(chunk: Chunk, report: NoveltyReport, severity: str, close: float = 0.85) -> Judgment:
    """The `novelty` diagnostic: score, nearest prior papers and the justification, all in evidence."""
    if not report.hits:
        return Judgment(chunk, "novelty", "Novelty: no indexed paper is close to this text.", None, severity,
                        {"hits": [], "justification": report.justification})
    nearest = "; ".join(f"{h.label()} at {h.similarity:.2f}" for h in report.hits[:3])
    field = "/".join(report.field) or "the index"
    message = (f"Novelty {report.score:.2f}: judged more novel than {report.score:.0%} of the newest indexed papers "
               f"({field}, up to {report.cutoff}). " if report.score is not None else "Novelty uncalibrated. ")
    if report.mean_year is not None:
        message += f"Its {len(report.hits)} nearest papers average year {report.mean_year:.1f}, similarity {report.density:.2f}. "
    message += f"Closest: {nearest}."
    top = report.hits[0]
    if top.similarity >= close:
        message += f" It reads very close to {top.label()} ({top.similarity:.2f}): say what is new, or cite it."
    if report.justification:
        message += f"\n{report.justification}"
    evidence = {"hits": [h.to_json() for h in report.hits], "score": report.score, "raw_score": round(report.raw, 4),
                "mean_year": None if report.mean_year is None else round(report.mean_year, 2),
                "density": round(report.density, 4), "field": list(report.field), "cutoff": report.cutoff,
                "justification": report.justification, "note": report.note, "chunk_hash": chunk.hash}
    return Judgment(chunk, "novelty", message, report.score, severity, evidence)


class NoveltyChecker:
    """One calibrated model and timeline per open index, one report per (chunk text, LLM)."""

    def __init__(self, retriever, cache_dir: Path, k: int = 10):
        self.retriever, self.cache_dir, self.k = retriever, Path(cache_dir), k
        self._model: NoveltyModel | None = None
        self._timeline: Timeline | None = None
        self._reports: dict[tuple[str, str], NoveltyReport] = {}
        self._lock = threading.Lock()

    def calibrated(self) -> bool:
        """Whether the first check will be quick: the model is loaded or cached for this index build."""
        return self._model is not None or calibrated(self.retriever.index, self.cache_dir)

    def ready(self) -> tuple[NoveltyModel, Timeline]:
        with self._lock:
            if self._model is None:
                index = self.retriever.index
                self._model, lexicon = load_or_train(index, self.cache_dir)
                # the paper vectors in float16: half the memory of a server that has checked novelty once
                self._timeline = Timeline.of(index, index.paper_matrix(dtype=np.float16), lexicon)
            return self._model, self._timeline

    def check(self, chunk: Chunk, llm=None, severity: str = "information", close: float = 0.85) -> Judgment:
        """`close`: the similarity above which the paragraph is said to restate its nearest paper."""
        key = (chunk.hash, f"{getattr(llm, 'name', '')}:{getattr(llm, 'model', '')}")
        report = self._reports.get(key)
        if report is None:
            model, timeline = self.ready()
            vector = self.retriever.vectors([chunk.text], [chunk.hash])[0]
            hits = self.retriever.neighbours([chunk], self.k)[chunk.hash]
            report = assess(chunk.text, vector, hits, model, timeline, llm)
            with self._lock:
                if len(self._reports) > 512:
                    self._reports.clear()
                self._reports[key] = report
        return novelty_judgment(chunk, report, severity, close)
