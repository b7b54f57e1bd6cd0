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

from ..retrieval.related_work import RelatedHit, related_work_for
from ..sentences import split_sentences
from ..retrieval.retriever import HitView, Retriever
from ..types import PROSE_KINDS, AnalysisContext, Chunk, Judgment, Range

MIN_WORDS = 20  # shorter chunks match everything a little and nothing well
RELATED_SECTIONS = re.compile(r"related|background|prior|previous|literature|introduction|motivation", re.I)


COVER_DEPTH = 3  # a paragraph whose bibliography holds one of its top-3 papers is not missing related work

# a paper's own outline ("The paper is structured as follows. In Section 2 we ..."): no prior work to cite
_OUTLINE = re.compile(r"\b(?:(?:rest|remainder) of (?:this|the) (?:paper|article|thesis|work)|(?:is|are) (?:organi[sz]ed|"
                      r"structured|laid out) as follows|(?:end|conclude|close) (?:this|the) (?:paper|article))\b", re.I)
_POINTER = re.compile(r"\b(?:sections?|sec\.|sect\.|chapters?|appendix|appendices|part)\s*\[ref\]|§\s*\[ref\]", re.I)
_OPENS_WITH_POINTER = re.compile(r"^(?:in\s+(?:(?:sections?|§|chapter|appendix)\s*)?|(?:sections?|§|chapter|appendix)\s*)\[ref\][ ,]",
                                 re.I)


def is_outline(text: str) -> bool:
    """Whether a paragraph outlines the paper itself: it says so ("is organized as follows", "we end this
    paper"), most of its sentences point at its own sections, twice or more, and it cites nothing ("(§
    [ref])", "Section [ref]"), or it opens with one ("In [ref] we focus on ..."). A reference shows as "[ref]" in chunk text; figures
    and tables ("Fig. [ref]", a bare "[ref] shows") are not sections."""
    if _OUTLINE.search(text):
        return True
    sentences = split_sentences(text) or [text]
    pointing = sum(bool(_POINTER.search(s)) for s in sentences)
    if pointing * 2 > len(sentences) and len(_POINTER.findall(text)) >= 2 and "[cite]" not in text:
        return True
    return bool(_OPENS_WITH_POINTER.match(sentences[0].strip()))


class PriorWorkAnalyzer:
    """Flags prose that restates an indexed paper, and related-work prose that cites none of its neighbours.

    `analyze` judges each chunk alone (so the engine caches it by the chunk's text); `finish` then
    reads the whole document's findings: one finding per paragraph, however many chunks it has, and a
    paper suggested once per section, in its first paragraph.
    """

    name = "prior-work"
    tier = "fast"
    codes = ("close-prior-work", "missing-related-work")

    def analyze(self, chunks: Sequence[Chunk], ctx: AnalysisContext) -> list[Judgment]:
        settings = ctx.settings
        retriever: Retriever = ctx.retriever
        prose = [c for c in chunks if c.kind in PROSE_KINDS and c.words >= MIN_WORDS]
        if not prose or retriever is None:
            return []
        neighbours = retriever.neighbours(prose, max(settings.hover_k, settings.related_work_k))
        depth = max(COVER_DEPTH, settings.related_work_k)
        related = self._related(retriever, prose, depth) if ctx.has_bibliography else {}
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
                out.extend(self._missing(chunk, related[chunk.hash], ctx, evidence))
        return out

    @staticmethod
    def _missing(chunk: Chunk, related: list[RelatedHit], ctx: AnalysisContext, evidence: dict) -> list[Judgment]:
        """The chunk's suggestions: its top `related_work_k` papers at or above the calibrated similarity
        that the bibliography lacks in every version. `covered` marks a chunk whose bibliography holds
        one of its top papers (whatever that paper's cosine: the hybrid first stage ranks by words too;
        RocketQA, cited by the example's Dense retrieval paragraph, is its first hit at cosine 0.58):
        `finish` then silences its whole paragraph."""
        settings = ctx.settings
        ranked = [(HitView.of(h), h) for h in related]
        held = {v.id for v, _ in ranked if ctx.bibliography.key_for(v.title, v.id, v.authors, v.year, v.url)}
        near = [(v, h) for v, h in ranked[:settings.related_work_k]
                if v.similarity >= settings.related_work_min_similarity and v.id not in held]
        if not near and not held:
            return []
        return [Judgment(chunk, "missing-related-work", "", score=near[0][0].similarity if near else 0.0,
                         severity=settings.severity_of("missing-related-work"),
                         evidence={**evidence, "covered": bool(held),
                                   "uncited": [with_provenance(v, h) for v, h in near]})]

    def finish(self, judgments: Sequence[Judgment], chunks: Sequence[Chunk], ctx: AnalysisContext) -> list[Judgment]:
        """The document-level pass over every finding of this analyzer, cached or fresh."""
        settings = ctx.settings
        order = {(c.uri, c.index): n for n, c in enumerate(chunks)}
        by_paragraph: dict[tuple[str, int, str], list[Judgment]] = {}
        for j in sorted(judgments, key=lambda j: order.get((j.chunk.uri, j.chunk.index), len(order))):
            key = (j.chunk.uri, j.chunk.paragraph if j.chunk.paragraph >= 0 else j.chunk.index, j.code)
            by_paragraph.setdefault(key, []).append(j)
        out: list[Judgment] = []
        suggested: dict[str, set[str]] = {}  # section -> papers already suggested in it
        for (_, _, code), group in by_paragraph.items():
            if code == "missing-related-work":
                merged = _merge_missing(group, settings, suggested.setdefault(group[0].chunk.section, set()))
                out.extend([merged] if merged else [])
            elif code == "close-prior-work":
                out.append(_spanning(max(group, key=lambda j: j.score or 0.0), group))
            else:
                out.extend(group)
        return out

    @staticmethod
    def _related(retriever: Retriever, prose: Sequence[Chunk], k: int) -> dict[str, list[RelatedHit]]:
        """SEC related work of each related-work-section chunk that is not the paper's own outline."""
        return sec_related(retriever, [c for c in prose if RELATED_SECTIONS.search(c.section or "")
                                       and not is_outline(c.text)], k)


def _spanning(judgment: Judgment, group: Sequence[Judgment]) -> Judgment:
    """`judgment` over the whole paragraph its group's chunks make up."""
    if len(group) == 1:
        return judgment
    first = min(group, key=lambda j: (j.chunk.range.start.line, j.chunk.range.start.character))
    last = max(group, key=lambda j: (j.chunk.range.end.line, j.chunk.range.end.character))
    return dataclasses.replace(judgment, range=Range(first.chunk.range.start, last.chunk.range.end))


def _merge_missing(group: Sequence[Judgment], settings, already: set[str]) -> Judgment | None:
    """One `missing-related-work` finding for a paragraph: none when any of its chunks is covered,
    else its chunks' suggestions, best first, without papers an earlier paragraph of the section got."""
    if any(j.evidence.get("covered") for j in group):
        return None
    best: dict[str, dict] = {}
    for j in group:
        for paper in j.evidence.get("uncited", ()):
            if paper["id"] not in best or paper["similarity"] > best[paper["id"]]["similarity"]:
                best[paper["id"]] = paper
    fresh = sorted((p for p in best.values() if p["id"] not in already), key=lambda p: -p["similarity"])
    fresh = fresh[:settings.related_work_k]
    if not fresh:
        return None
    already.update(p["id"] for p in fresh)
    head = group[0]
    names = "; ".join(HitView.from_json(p).label() for p in fresh)
    message = (f"This {head.chunk.section or 'related-work'} paragraph cites none of its nearest prior papers: "
               f"{names}. Cite them or say why they do not apply.")
    judgment = dataclasses.replace(head, message=message, score=fresh[0]["similarity"],
                                   evidence={**head.evidence, "uncited": fresh})
    return _spanning(judgment, group)


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
