"""`weak-chunk`: a paragraph whose quality rating is well below the draft's own median, or below
the reference distribution of published prose (Between the Drafts, Chen, Weber & Dietrich, 2025:
chunk-level quality scores, Section 4.3, prompts A.1/A.4; the embedding scorer is peerlint's own).
"""

from __future__ import annotations

import numpy as np

from .analyzer import DraftsAnalyzer, Rated, below_median, compatible
from ...types import AnalysisContext


class QualityAnalyzer(DraftsAnalyzer):
    """Rates every prose chunk for quality and clarity; flags the weakest."""

    name = "quality"
    aspect = "quality"
    code = "weak-chunk"
    codes = ("weak-chunk",)

    def embedding_rating(self, vectors: np.ndarray, venue: str, ctx: AnalysisContext) -> np.ndarray | None:
        head = self._register
        if head is None or not compatible(head.model_id, ctx.retriever.index):
            return None
        return head.rating(vectors)

    def flag(self, rated: Rated, draft_median: float | None, ctx: AnalysisContext) -> str:
        s = ctx.settings
        if rated.percentile is not None and rated.percentile < s.weak_chunk_percentile:
            return "reference"
        if below_median(rated.rating, draft_median, s.weak_chunk_drop):
            return "median"
        return ""

    def message(self, rated: Rated, why: str, venue: str) -> str:
        where = (f"below {rated.percentile:.0%} of published paragraphs" if why == "reference" and rated.percentile is not None
                 else "well below the rest of this draft")
        return (f"Quality {rated.rating:.1f}/10 ({rated.scorer}): this paragraph reads {where}. "
                "Hover for the reference passages and a suggestion.")
