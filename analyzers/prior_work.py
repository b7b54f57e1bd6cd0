"""The embedding-only tier: `close-prior-work` and `missing-related-work`.

Both read the chunk's nearest indexed papers (cosine similarity of MiniLM embeddings) and need
no LLM, so they publish while the user types.
"""

from __future__ import annotations

import re
from typing import Sequence

from .bibliography import key_for
from .retrieval import HitView, Retriever
from .types import AnalysisContext, Chunk, Judgment

PROSE_KINDS = ("paragraph", "abstract")
MIN_WORDS = 20  # shorter chunks match everything a little and nothing well
RELATED_SECTIONS = re.compile(r"related|background|prior|previous|literature|introduction|motivation", re.I)


def _words(text: str) -> int:
    return len(re.findall(r"[A-Za-z]{2,}", text))


class PriorWorkAnalyzer:
    """Flags prose that restates an indexed paper, and related-work prose that cites none of its neighbours."""

    name = "prior-work"
    tier = "fast"
    codes = ("close-prior-work", "missing-related-work")

    def analyze(self, chunks: Sequence[Chunk], ctx: AnalysisContext) -> list[Judgment]:
        settings = ctx.settings
        retriever: Retriever = ctx.retriever
        prose = [c for c in chunks if c.kind in PROSE_KINDS and _words(c.text) >= MIN_WORDS]
        if not prose or retriever is None:
            return []
        k = max(settings.hover_k, settings.related_work_k)
        neighbours = retriever.neighbours(prose, k)
        out: list[Judgment] = []
        for chunk in prose:
            hits = [HitView.of(h) for h in neighbours[chunk.hash]]
            if not hits:
                continue
            evidence = {"hits": [h.to_json() for h in hits], "chunk_hash": chunk.hash}
            top = hits[0]
            if top.similarity >= settings.close_prior_work_threshold:
                out.append(Judgment(
                    chunk, "close-prior-work",
                    f"This paragraph reads very close to {top.label()}, similarity {top.similarity:.2f}: "
                    "say how your work differs, or cite it.",
                    score=top.similarity, severity=settings.severity_of("close-prior-work"), evidence=evidence))
            if ctx.has_bibliography and RELATED_SECTIONS.search(chunk.section or ""):
                near = [h for h in hits[: settings.related_work_k] if h.similarity >= settings.related_work_min_similarity]
                cited = [h for h in near if key_for(h.title, h.id, ctx.bib_titles)]
                if near and not cited:
                    names = "; ".join(h.label() for h in near)
                    out.append(Judgment(
                        chunk, "missing-related-work",
                        f"This {chunk.section or 'related-work'} paragraph cites none of its nearest prior papers: {names}. "
                        "Cite them or say why they do not apply.",
                        score=near[0].similarity, severity=settings.severity_of("missing-related-work"),
                        evidence={**evidence, "uncited": [h.to_json() for h in near]}))
        return out

