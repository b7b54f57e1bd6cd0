"""Per-section summaries of quality and venue style: one line a section instead of a diagnostic a
paragraph (issue 17: "summaries rather than noise").

Both come from the embedding heads the `quality` and `venue-style` analyzers use with the `auto`
scorer, so a summary costs no LLM call and is ready with the fast tier:
- quality: the section on the quality scale (`scale.py`): its paragraphs scored by a head trained on
  published vs degraded paragraphs, compared with published sections of its kind (introductions
  with introductions), 1–10 with the kind's median published section at 7;
- venue style: where the section's mean vector falls among the target venue's own indexed papers on
  its topic (the 100 nearest it) by P(venue | text) of the venue head (Between the Drafts' style
  aspect, peerlint's own scorer);
- reads like: the venue the venue head finds most likely for the section, its probability calibrated
  on a held-out year (`venue_calibration`). A draft whose mean vector (all its judged paragraphs) is
  less similar to every indexed venue's centroid than all but 5% of held-out in-field abstracts reads
  unlike every indexed venue: its sections are told so instead of being given one. The test is on the
  whole draft, not each section: a proof or an experiments section of an ML paper is often far from
  every venue's abstracts on its own (issue #34: 9 of 14 NeurIPS sections would have been).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ...index.ingest.corpus_sources import JOURNALS
from ...index.papers import SearchFilter
from ...locations import cache_root
from ...lru import LRU
from .analyzer import compatible, venue_style_head
from .heads import MIN_TOPICAL, TOPICAL_NEIGHBOURS, VenueHead, paper_matrix, prepare_venue_heads, venue_head_for
from .scale import ScaleRating, section_kind, shipped_scale
from .venue_calibration import VenueCalibration, venue_calibration_for
from .text import prepare
from .venue_guess import STYLES
from ...types import PROSE_KINDS, Chunk, Range

MIN_WORDS = 20  # shorter paragraphs say little about a section's register
NOT_JUDGED = re.compile(r"acknowledg|funding|author contributions", re.I)  # thanks, not prose to judge


@dataclass(frozen=True)
class SectionSummary:
    """One section's quality and venue-style figures, placed at its first paragraph."""

    section: str
    uri: str
    range: Range
    paragraphs: int
    quality: float | None  # 1–10
    venue: str  # the target venue ("" when none is set or guessed)
    venue_style: float | None  # 0–1: share of the venue's own papers on the topic that read less like it
    reads_like: str  # the venue the section reads most like ("" without a venue head)
    reads_like_probability: float | None  # calibrated when the index has a calibration
    quality_scale: ScaleRating | None = None  # what the quality was compared with
    far: bool = False  # the draft reads unlike every indexed venue: reads_like is not said
    nearest: str = ""  # the venue whose centroid is nearest to the whole draft
    similarity: float | None = None  # cosine of the draft's mean vector to that centroid
    typical: float | None = None  # what 9 in 10 held-out in-field abstracts reach
    style_compared: int = 0  # the venue's papers nearest the section that venue_style is among (0: all of them)
    style_upto: int | None = None  # venue_style's head learnt from papers up to this year (the venue's newest)

    def to_json(self) -> dict:
        r = self.range
        return {"kind": "summary", "section": self.section, "uri": self.uri,
                "range": {"start": {"line": r.start.line, "character": r.start.character},
                          "end": {"line": r.end.line, "character": r.end.character}},
                "paragraphs": self.paragraphs,
                "quality": None if self.quality is None else round(self.quality, 2),
                **_scale_json(self.quality_scale),
                "venue": display_venue(self.venue) if self.venue else "",
                "venue_style": None if self.venue_style is None else round(self.venue_style, 3),
                "venue_style_compared": self.style_compared, "venue_style_upto": self.style_upto,
                "reads_like": display_venue(self.reads_like) if self.reads_like else "",
                "reads_like_probability": None if self.reads_like_probability is None
                else round(self.reads_like_probability, 3),
                "reads_unlike_indexed_venues": self.far, "nearest_venue": display_venue(self.nearest) if self.nearest else "",
                "nearest_similarity": None if self.similarity is None else round(self.similarity, 3),
                "typical_similarity": None if self.typical is None else round(self.typical, 3)}

    def line(self) -> str:
        """What the editor's code lens and `peerlint check` show."""
        parts = []
        if self.quality_scale is not None:
            parts.append(f"quality {self.quality_scale.phrase()}")
        if self.venue and self.venue_style is not None:
            among = f"the {self.style_compared} of its papers nearest in topic" if self.style_compared else "its papers"
            upto = (f" (judged on papers up to {self.style_upto}, its newest indexed year)"
                    if self.style_upto is not None else "")
            parts.append(f"{display_venue(self.venue)} style: {ordinal(round(100 * self.venue_style))} percentile "
                         f"of {among}{upto}")
        if self.far:
            parts.append(reads_unlike(self.nearest, self.similarity, self.typical))
        elif self.reads_like:
            p = "" if self.reads_like_probability is None else f" ({self.reads_like_probability:.0%})"
            parts.append(f"reads most like {display_venue(self.reads_like)}{p}")
        return f"{self.section or 'Untitled'}: " + ("; ".join(parts) if parts else "no rating (no embedding heads)")


def _scale_json(rating: ScaleRating | None) -> dict:
    if rating is None:
        return {}
    return {"quality_compared_with": {"kind": rating.kind, "sections": rating.compared,
                                      "percentile": round(rating.percentile, 3),
                                      "middle_half": [round(rating.middle[0], 2), round(rating.middle[1], 2)]}}


def reads_unlike(nearest: str, similarity: float | None, typical: float | None) -> str:
    """What a section far from every indexed venue is told instead of a venue."""
    figures = f"similarity {similarity:.2f}" if similarity is not None else ""
    figures += f"; typical in-field ≥ {typical:.2f}" if typical is not None else ""
    return f"the draft reads unlike every venue peerlint indexes (nearest: {display_venue(nearest)}" + (
        f", {figures})" if figures else ")")


MIXED_CASE = ("CoNLL", "CoRL", "COLM", "ArabicNLP", "TextGraphs", "SIGUL", "NoDaLiDa")  # venues not written in capitals


def display_venue(name: str) -> str:
    """'naacl' (as the index keeps venues) -> 'NAACL', 'conll' -> 'CoNLL'."""
    known = {v.lower(): v for v in (*STYLES.values(), *MIXED_CASE, *(name for _, name in JOURNALS.values()))}
    return known.get(name.lower(), name if not name.islower() else name.upper())


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 11th, 22nd …"""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def judged(c: Chunk) -> bool:
    """Whether a section's quality reads this chunk: prose of `MIN_WORDS` or more, not thanks."""
    return (c.kind in PROSE_KINDS and c.words >= MIN_WORDS and not NOT_JUDGED.search(c.section or "")
            and not prepare(c.text).skipped)


def sections_of(chunks: Sequence[Chunk]) -> list[list[Chunk]]:
    """The judged chunks of each section, sections in reading order (a section's name once)."""
    groups: dict[str, list[Chunk]] = {}
    for c in chunks:
        if judged(c):
            groups.setdefault(c.section, []).append(c)
    return list(groups.values())


def styled_venues(index) -> tuple[str, ...]:
    """The venues a section's style can be placed among: the venue head's (main venues with enough
    papers, `heads.head_labels`); none when the index's vectors are not the model's."""
    head = venue_head_for(index, cache_root()) if compatible(index.manifest.model_id, index) else None
    return head.classes if head is not None else ()


def venue_style(index) -> tuple[VenueHead | None, VenueCalibration | None]:
    """This build's venue head and its calibration, from the cache or learnt now with the index's paper
    matrix computed at most once; (None, None) when the index's vectors are not the model's."""
    if not compatible(index.manifest.model_id, index):
        return None, None
    matrix = functools.cache(lambda: paper_matrix(index))
    head = venue_head_for(index, cache_root(), matrix)
    return head, venue_calibration_for(index, cache_root(), matrix) if head is not None else None


def prepare_venue_style(index) -> str:
    """Learn this build's venue head and its calibration now (seconds) and cache them, so that the
    editor's first look at a draft does not; what was learnt, in words ("" when the index's vectors
    are not the model's or its venues are too few to learn from)."""
    if not compatible(index.manifest.model_id, index):
        return ""
    matrix = functools.cache(lambda: paper_matrix(index))
    head, lagging = prepare_venue_heads(index, cache_root(), matrix)  # with the style heads of lagging venues
    if head is None:
        return ""
    calibration = venue_calibration_for(index, cache_root(), matrix)
    held_out = calibration.info.get("dev", "") if calibration is not None else ""
    lagging = f"; {len(lagging)} venues lagging the others judged on papers up to their newest year" if lagging else ""
    return (f"venue style learnt from {head.info.get('papers', 0):,} papers of {len(head.classes)} venues"
            + (f", calibrated on {held_out}" if held_out else "") + lagging)


SUPPLEMENT_JOURNALS = frozenset(name.lower() for _, name in JOURNALS.values())  # the journals supplement's venues


def reads_like_candidates(classes: Sequence[str], venue: str) -> np.ndarray:
    """Which venues "reads most like" may name: for a draft whose style or `targetVenue` is a conference,
    the conferences (the journals of the supplement, JMLR, TMLR, ..., take generic ML prose from every
    conference, and the editor's question there is which conference it reads like); for a journal draft
    or one with no venue, every venue the head knows."""
    every = np.ones(len(classes), dtype=bool)
    if not venue or venue.lower() in SUPPLEMENT_JOURNALS:
        return every
    conferences = np.array([str(c).lower() not in SUPPLEMENT_JOURNALS for c in classes], dtype=bool)
    return conferences if conferences.any() else every


def missing_venue(index, venue: str) -> str:
    """What to say, once, when the target venue is not one the venue head learnt: its style percentile and
    its `off-venue-style` findings need the venue's own papers, so they are left out ("" when it is one)."""
    if not venue or index is None:
        return ""
    styled = styled_venues(index)
    if venue.lower() in {v.lower() for v in styled}:
        return ""
    name = display_venue(venue)
    held, counts = np.unique(np.asarray(index.venues).astype(str), return_counts=True)
    size = dict(zip(held, counts))
    styled = sorted(styled, key=lambda v: (-size.get(v, 0), v))  # the largest first
    some = ", ".join(display_venue(v) for v in styled[:12]) + (", ..." if len(styled) > 12 else "")
    fix = f"set targetVenue to one it holds ({some})" if styled else "set targetVenue"
    if venue.lower() in {str(v).lower() for v in held}:
        return (f"the index holds too few {name} papers to learn its style from (a workshop, or under 0.2% of the "
                f"index), so there is no {name} style percentile and no off-venue-style finding; {fix}")
    return (f"the index holds no {name} papers, so there is no {name} style percentile and no off-venue-style "
            f"finding; {fix} or add {name} papers to the index")


@dataclass(frozen=True)
class Nearness:
    """How close a draft's mean vector is to the nearest indexed venue, and whether that is too far."""

    far: bool = False
    nearest: str = ""
    similarity: float | None = None
    typical: float | None = None


def draft_nearness(calibration, vectors: np.ndarray) -> Nearness:
    """The nearness of the mean of a draft's judged paragraph vectors (empty Nearness without a calibration)."""
    if calibration is None or len(vectors) == 0:
        return Nearness()
    whole = np.asarray(vectors, dtype=np.float64).mean(axis=0)
    names, sims = calibration.nearest(whole[None, :])
    return Nearness(calibration.far(float(sims[0])), names[0], float(sims[0]), calibration.typical)


_NEIGHBOURS = LRU(512)  # (index build, venue, a section's chunk hashes) -> the venue's papers nearest it


def summarise(chunks: Sequence[Chunk], retriever, venue: str = "") -> list[SectionSummary]:
    """The summary of every section of `chunks` (empty without a retriever)."""
    if retriever is None:
        return []
    groups = sections_of(chunks)
    if not groups:
        return []
    index = retriever.index
    flat = [c for g in groups for c in g]
    vectors = np.asarray(retriever.vectors([c.text for c in flat], [c.hash for c in flat]), dtype=np.float32)
    scale = shipped_scale()
    scale = scale if scale is not None and compatible(scale.model_id, index) else None
    venue_head, calibration = venue_style(index)
    style_head = venue_style_head(index, venue) if venue_head is not None and venue else None
    column = style_head.venue_index(venue) if style_head is not None else None
    candidates = reads_like_candidates(venue_head.classes, venue) if venue_head is not None else None
    near = draft_nearness(calibration, vectors)
    bounds = np.cumsum([0] + [len(g) for g in groups])
    means = np.stack([vectors[a:b].mean(axis=0) for a, b in zip(bounds, bounds[1:])])
    means /= np.maximum(np.linalg.norm(means, axis=1, keepdims=True), 1e-12)
    topical: list[list[int]] = [[] for _ in groups]
    if column is not None:  # the venue's papers nearest each section: searched for the sections that changed, at once
        keys = [(str(index.build), style_head.classes[column], tuple(c.hash for c in g)) for g in groups]
        todo = [n for n, key in enumerate(keys) if key not in _NEIGHBOURS]
        if todo:
            found = index.dense_ranked_many(means[todo], TOPICAL_NEIGHBOURS,
                                            SearchFilter(venues=(style_head.classes[column],)))
            for n, hits in zip(todo, found):
                _NEIGHBOURS.put(keys[n], [p for p, _, _ in hits])
        topical = [_NEIGHBOURS.get_or(key, list) for key in keys]
    out = []
    for n, group in enumerate(groups):
        vecs, mean = vectors[bounds[n]:bounds[n + 1]], means[n]
        first = group[0]
        rated = (scale.rate_section(vecs, [c.text for c in group], section_kind(first.section, first.kind))
                 if scale is not None else None)
        style = reads = p_reads = None
        compared = 0
        if venue_head is not None:
            probs = venue_head.probs(mean[None, :])[0]
            best = int(np.argmax(np.where(candidates, probs, -np.inf)))
            reads, p_reads = venue_head.classes[best], float(probs[best])
            if calibration is not None:
                p_reads = float(calibration.probs(venue_head, mean[None, :])[0, best])
            if column is not None:
                name = style_head.classes[column]
                style = float(style_head.topical_percentiles(mean[None, :], name, [index.paper_vectors(topical[n])])[0])
                compared = len(topical[n]) if len(topical[n]) >= MIN_TOPICAL else 0
        out.append(SectionSummary(first.section, first.uri, first.range, len(group),
                                  None if rated is None else rated.rating,
                                  style_head.classes[column] if column is not None else venue, style, reads or "",
                                  p_reads, rated, near.far, near.nearest, near.similarity, near.typical, compared,
                                  style_head.info.get("upto") if column is not None else None))
    return out
