"""`off-venue-style`: a paragraph whose style score for the target venue is well below what the
venue's own papers get (Between the Drafts, Chen, Weber & Dietrich, 2025, Section 4.2, prompt
A.5, references retrieved from the target venue only; the embedding scorer is peerlint's own).

The target venue comes from the settings, else from the draft's `\\documentclass`/`\\usepackage`
(the service fills it in, see `venue_guess`).
"""

from __future__ import annotations

import numpy as np

from .analyzer import DraftsAnalyzer, Rated, below_median, venue_style_head
from ...types import AnalysisContext


class VenueStyleAnalyzer(DraftsAnalyzer):
    """Rates every prose chunk for resemblance to the target venue; flags the least alike."""

    name = "venue-style"
    aspect = "style"
    code = "off-venue-style"
    codes = ("off-venue-style",)

    def embedding_rating(self, vectors: np.ndarray, venue: str, ctx: AnalysisContext) -> np.ndarray | None:
        head = venue_style_head(ctx.retriever.index, venue)
        if head is None or head.venue_index(venue) is None:
            return None
        return head.rating(vectors, venue)

    def flag(self, rated: Rated, draft_median: float | None, ctx: AnalysisContext) -> str:
        if rated.percentile is not None:
            return "venue" if rated.percentile < ctx.settings.off_venue_percentile else ""
        # LLM only: no venue distribution to compare with, so the draft's own median is the reference
        return "median" if below_median(rated.rating, draft_median, ctx.settings.weak_chunk_drop) else ""

    def message(self, rated: Rated, why: str, venue: str) -> str:
        if why == "venue":
            return (f"Style {rated.rating:.1f}/10 for {venue} ({rated.scorer}): only {rated.percentile:.0%} of {venue}'s "
                    f"own indexed papers read less like {venue}. Hover for {venue} passages and a suggestion.")
        return f"Style {rated.rating:.1f}/10 for {venue} ({rated.scorer}): well below the rest of this draft."
