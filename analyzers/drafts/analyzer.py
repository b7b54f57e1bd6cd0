"""What `quality` (weak-chunk) and `venue-style` (off-venue-style) share: rate every prose chunk of
the draft with the chosen scorer, compare with the draft's median and the venue's reference
distribution, and explain each flagged chunk with one LLM suggestion.

Scorers (Settings.drafts_scorer): "llm" is the paper's method (`scoring.DraftScorer`),
"embedding" the calibrated heads of `heads`, "ensemble" the mean of both 1–10 ratings;
"auto" is what `peerlint bench drafts` measured best (PREFERRED below).  Ratings are cached per
(chunk text, aspect, venue, scorer, model), so the median over an edited draft costs only the
edited chunks.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from statistics import median
from typing import Sequence

import numpy as np

from ...locations import cache_root
from ...lru import LRU
from .heads import LinearHead, VenueHead, load_register_head, percentile_of, style_head_for
from .scoring import ChunkScore, DraftScorer
from .text import prepare
from ...types import PROSE_KINDS, AnalysisContext, Chunk, Judgment

log = logging.getLogger(__name__)

MAX_CACHED = 50_000  # chunk ratings kept in memory per analyzer
# What `auto` means: per measure, the scorer that does better on `peerlint bench drafts`'s held-out
# texts, and at equal quality the cheaper one. The embedding heads beat the embedded SmolLM2-135M on
# informal text and on venue, neither separates ICLR decisions, and the LLM costs seconds a chunk
# where the heads keep a cold draft under a minute; the numbers: docs/benchmarks/drafts.md.
# Fluency helps revision comparisons (bench revisions), which the per-chunk diagnostics do not make.
PREFERRED = {"quality": "embedding", "style": "embedding"}


@dataclass(frozen=True)
class Rated:
    """One chunk's rating by the chosen scorer; `percentile` is among the venue's reference texts."""

    rating: float | None
    percentile: float | None
    scorer: str
    llm: ChunkScore | None = None
    skipped: str = ""


def compatible(model_id: str, index) -> bool:
    """Heads trained on one embedding model are meaningless on another (static vectors differ too)."""
    have = getattr(getattr(index, "manifest", None), "model_id", "")
    return bool(model_id) and have.split("@")[0] == model_id.split("@")[0] and not have.endswith("@static")


_STYLE_HEADS = LRU(64)  # (index build, venue) -> the head its style percentile is read from


def venue_style_head(index, venue: str) -> VenueHead | None:
    """The head a venue's style is read from (`heads.style_head_for`): the build's venue head, or one that
    stops at the venue's newest year when the venue lags the others; None when the index's vectors are
    not the model's or there is no venue."""
    if not venue or not compatible(index.manifest.model_id, index):
        return None
    return _STYLE_HEADS.get_or((str(index.build), venue.lower()), lambda: style_head_for(index, venue, cache_root()))


class DraftsAnalyzer:
    """Base of `QualityAnalyzer` and `VenueStyleAnalyzer`; subclasses set aspect, code and wording."""

    tier = "llm"
    name = ""
    aspect = ""
    code = ""
    codes: tuple[str, ...] = ()

    def __init__(self):
        self._ratings: dict[tuple, Rated] = {}
        self._lock = threading.Lock()
        self._venue_names: dict = {}  # index build -> its venue names
        self._register: LinearHead | None = load_register_head()

    # -- what subclasses decide ------------------------------------------------------------
    def venue(self, ctx: AnalysisContext) -> str:
        return ctx.settings.target_venue

    def embedding_rating(self, vectors: np.ndarray, venue: str, ctx: AnalysisContext) -> np.ndarray | None:
        raise NotImplementedError

    def flag(self, rated: Rated, draft_median: float | None, ctx: AnalysisContext) -> str:
        """Why the chunk is flagged ("" when it is not)."""
        raise NotImplementedError

    def message(self, rated: Rated, why: str, venue: str) -> str:
        raise NotImplementedError

    # -- shared machinery ------------------------------------------------------------------
    def scorer(self, ctx: AnalysisContext) -> str:
        chosen = ctx.settings.drafts_scorer
        return PREFERRED[self.aspect] if chosen == "auto" else chosen

    def indexed(self, venue: str, index) -> bool:
        key = str(index.build)
        if key not in self._venue_names:
            self._venue_names[key] = frozenset(str(v) for v in index.venues)
        return venue.lower() in self._venue_names[key]

    def analyze(self, chunks: Sequence[Chunk], ctx: AnalysisContext) -> list[Judgment]:
        todo = {c.hash for c in chunks if c.kind in PROSE_KINDS}
        prose = [c for c in ctx.chunks if c.kind in PROSE_KINDS] or [c for c in chunks if c.kind in PROSE_KINDS]
        if not todo or ctx.retriever is None:
            return []
        venue = self.venue(ctx)
        if self.aspect == "style" and (not venue or not self.indexed(venue, ctx.retriever.index)):
            return []  # no target venue configured or guessed, or none of its papers indexed: nothing to compare with
        rated = self.rate(prose, venue, ctx)
        values = [r.rating for r in rated.values() if r.rating is not None]
        draft_median = median(values) if len(values) >= 3 else None
        flagged = []
        for chunk in chunks:
            r = rated.get(chunk.hash)
            if chunk.hash not in todo or r is None or r.rating is None:
                continue
            why = self.flag(r, draft_median, ctx)
            if why:
                flagged.append((chunk, r, why))
        # an LLM suggestion costs seconds: only the worst few of a run get one (a cold draft stays fast)
        worst = {id(c) for c, r, _ in sorted(flagged, key=lambda f: f[1].rating)[: ctx.settings.max_suggestions]}
        return [self.judgment(c, r, why, venue, draft_median, ctx, suggest=id(c) in worst) for c, r, why in flagged]

    def rate(self, prose: Sequence[Chunk], venue: str, ctx: AnalysisContext) -> dict[str, Rated]:
        """Ratings of every distinct prose chunk, from the cache where possible."""
        scorer = self.scorer(ctx)
        model = getattr(ctx.llm, "model", "")
        build = str(ctx.retriever.index.build)
        key = lambda c: (c.hash, self.aspect, venue, scorer, model, build)  # noqa: E731
        with self._lock:
            if len(self._ratings) > MAX_CACHED:  # a long session: keep memory bounded, the draft re-rates cheaply
                self._ratings.clear()
            missing = list({c.hash: c for c in prose if key(c) not in self._ratings}.values())
        if missing:
            fresh = self._rate_missing(missing, venue, scorer, ctx)
            if getattr(ctx.llm, "failure", None):  # rated while the LLM was down: good for this run only
                with self._lock:
                    return {c.hash: fresh.get(c.hash) or self._ratings[key(c)] for c in prose}
            with self._lock:
                self._ratings.update({key(c): fresh[c.hash] for c in missing})
        with self._lock:
            return {c.hash: self._ratings[key(c)] for c in prose}

    def _rate_missing(self, chunks: list[Chunk], venue: str, scorer: str, ctx: AnalysisContext) -> dict[str, Rated]:
        vectors = ctx.retriever.vectors([c.text for c in chunks], [c.hash for c in chunks])
        emb = self.embedding_rating(np.asarray(vectors), venue, ctx) if scorer != "llm" else None
        if emb is None and scorer != "llm":
            log.info("%s: no embedding head for this index/venue; using the LLM", self.name)
            scorer = "llm"
        out: dict[str, Rated] = {}
        llm = DraftScorer(ctx.llm, ctx.retriever) if scorer in ("llm", "ensemble") and ctx.llm is not None else None
        for i, chunk in enumerate(chunks):
            unrateable = prepare(chunk.text).skipped  # the same rules for every scorer: no verdicts on formulas
            if unrateable:
                out[chunk.hash] = Rated(None, None, scorer, skipped=unrateable)
                continue
            pct = percentile_of(emb[i]) if emb is not None else None
            if llm is None:
                out[chunk.hash] = Rated(float(emb[i]), pct, "embedding") if emb is not None else \
                    Rated(None, None, scorer, skipped="no LLM backend is available")
                continue
            result = llm.score(chunk.text, self.aspect, venue=venue if self.aspect == "style" else "",
                               title=chunk.section, chunk_no=chunk.index + 1)
            if emb is None:
                out[chunk.hash] = Rated(result.score, None, "llm", result, result.skipped)
            elif result.score is None or result.low_confidence:
                out[chunk.hash] = Rated(float(emb[i]), pct, "embedding (the LLM gave no confident rating)", result)
            else:
                out[chunk.hash] = Rated((result.score + float(emb[i])) / 2.0, pct, "ensemble", result)
        return out

    def judgment(self, chunk: Chunk, r: Rated, why: str, venue: str, draft_median: float | None,
                 ctx: AnalysisContext, suggest: bool = True) -> Judgment:
        refs = r.llm.references if r.llm is not None else ()
        if not refs:
            refs = DraftScorer(ctx.llm, ctx.retriever).references(chunk.text, venue if self.aspect == "style" else "")
        evidence = {
            "scorer": r.scorer, "aspect": self.aspect, "venue": venue, "score": round(r.rating, 3),
            "percentile": None if r.percentile is None else round(r.percentile, 3),
            "draft_median": None if draft_median is None else round(draft_median, 3), "why": why,
            "references": [ref.to_json() for ref in refs],
            "distribution": list(r.llm.to_evidence()["distribution"]) if r.llm is not None else [],
            "llm": r.llm.to_evidence() if r.llm is not None else None,
        }
        suggestion = self.suggestion(chunk, r, refs, venue, ctx) if suggest else ""
        if suggestion:
            evidence["explanation"] = suggestion
        return Judgment(chunk, self.code, self.message(r, why, venue), score=round(r.rating, 3),
                        severity=ctx.settings.severity_of(self.code), evidence=evidence)

    def suggestion(self, chunk: Chunk, r: Rated, refs, venue: str, ctx: AnalysisContext) -> str:
        if ctx.llm is None:
            return ""
        result = r.llm or ChunkScore(self.aspect, r.rating, references=tuple(refs))
        if not result.references:
            result = ChunkScore(self.aspect, r.rating, references=tuple(refs))
        return DraftScorer(ctx.llm, ctx.retriever).suggest(chunk.text, result, venue, ctx.settings.suggestion_tokens)


def below_median(rating: float, draft_median: float | None, drop: float) -> bool:
    return draft_median is not None and rating < draft_median - drop * 9.0
