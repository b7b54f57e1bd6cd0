"""The embedding-only tier: `close-prior-work` and `missing-related-work`.

`close-prior-work` reads the chunk's nearest indexed papers (the retriever's hybrid first stage;
its threshold is on the cosine similarity of MiniLM embeddings, `Hit.similarity`);
`missing-related-work` reads its SEC related work (`related_work.py`: the same first stage
re-ranked with shared entities and co-citations, near-duplicates stepped back), whose papers are
also what *Cite this paper* offers. Both honour the retriever's mode and published-before date.
Neither needs an LLM, so both publish while the user types.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Sequence

from .bibliography import key_for
from .related_work import RelatedHit, related_work_for
from .retriever import HitView, Retriever
from ..types import AnalysisContext, Chunk, Judgment

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
        related = self._related(retriever, prose, settings.related_work_k) if ctx.has_bibliography else {}
        out: list[Judgment] = []
        for chunk in prose:
            hits = [HitView.of(h) for h in neighbours[chunk.hash]]
            if not hits:
                continue
            evidence = {"hits": [h.to_json() for h in hits], "chunk_hash": chunk.hash}
            top = max(hits, key=lambda h: h.similarity)  # hybrid ranks by fused score; the threshold is on cosine
            if top.similarity >= settings.close_prior_work_threshold:
                out.append(Judgment(
                    chunk, "close-prior-work",
                    f"This paragraph reads very close to {top.label()}, similarity {top.similarity:.2f}: "
                    "say how your work differs, or cite it.",
                    score=top.similarity, severity=settings.severity_of("close-prior-work"), evidence=evidence))
            if chunk.hash in related:
                ranked = [(HitView.of(h), h) for h in related[chunk.hash]]
                near = [(v, h) for v, h in ranked if v.similarity >= settings.related_work_min_similarity]
                # a paragraph citing one of its top-k papers is not missing related work, whatever that
                # paper's cosine: the hybrid first stage ranks papers by words too (RocketQA, cited by the
                # example's Dense retrieval paragraph, is its first hit at cosine 0.58)
                cited = [v for v, _ in ranked if key_for(v.title, v.id, ctx.bib_titles)]
                if near and not cited:
                    names = "; ".join(v.label() for v, _ in near)
                    out.append(Judgment(
                        chunk, "missing-related-work",
                        f"This {chunk.section or 'related-work'} paragraph cites none of its nearest prior papers: {names}. "
                        "Cite them or say why they do not apply.",
                        score=near[0][0].similarity, severity=settings.severity_of("missing-related-work"),
                        evidence={**evidence, "uncited": [with_provenance(v, h) for v, h in near]}))
        return out

    @staticmethod
    def _related(retriever: Retriever, prose: Sequence[Chunk], k: int) -> dict[str, list[RelatedHit]]:
        """SEC related work of each related-work-section chunk."""
        return sec_related(retriever, [c for c in prose if RELATED_SECTIONS.search(c.section or "")], k)


def sec_related(retriever: Retriever, chunks: Sequence[Chunk], k: int) -> dict[str, list[RelatedHit]]:
    """SEC related work of each chunk over the retriever's first stage (mode) and published-before date
    (its vector comes from the retriever's cache)."""
    if not chunks:
        return {}
    sec = related_work_for(retriever.index)
    config = dataclasses.replace(sec.config, first_stage=retriever.mode_for())
    vectors = retriever.vectors([c.text for c in chunks], [c.hash for c in chunks])
    return {c.hash: sec.search_vector(v, c.text, k, retriever.filter(), config=config) for c, v in zip(chunks, vectors)}


def with_provenance(view: HitView, hit: RelatedHit) -> dict:
    """A hit's JSON for the diagnostic (what *Cite this paper* reads) plus which SEC stage found it."""
    return {**view.to_json(), "found_by": list(hit.found_by), "entities": list(hit.entities)}
