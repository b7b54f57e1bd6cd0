"""`novelty`: the editor's *Check novelty*, one analyzer on the engine's on-demand tier.

Of the text the user asks about (a selection, the paragraph at the cursor, the abstract): the
calibrated novelty score with its nearest papers and an LLM's justification (`check.NoveltyChecker`),
and NOVA's verdict on it (`ideas/nova_check.py`, one planned-retrieval round: each costs seconds on a
CPU model). The engine runs it when asked, enabled or not, with every LLM call first asking whether
the user cancelled; it keeps its own answers per text and LLM, so asking again costs nothing.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Callable, Sequence

from ...locations import cache_root
from ...types import AnalysisContext, Chunk, Judgment
from ..ideas.nova_check import check_idea
from .check import NoveltyChecker

MAX_VERDICTS = 256  # NOVA verdicts kept in memory


def _llm_key(llm) -> str:
    return f"{getattr(llm, 'name', '')}:{getattr(llm, 'model', '')}"


class NoveltyAnalyzer:
    """`checker()` gives the calibrated score over the open index (the composition root's, trained once
    per index build); without one, the analyzer makes its own over the run's retriever."""

    name = "novelty"
    tier = "on-demand"  # engine.ON_DEMAND
    codes = ("novelty",)

    def __init__(self, checker: Callable[[], NoveltyChecker] | None = None):
        self._checker = checker
        self._own: NoveltyChecker | None = None
        self._nova: dict[tuple[str, str], object] = {}
        self._lock = threading.Lock()

    def checker(self, ctx: AnalysisContext) -> NoveltyChecker:
        if self._checker is not None:
            return self._checker()
        with self._lock:
            if self._own is None or self._own.retriever.index is not ctx.retriever.index:
                self._own = NoveltyChecker(ctx.retriever, cache_root())
            return self._own

    def analyze(self, chunks: Sequence[Chunk], ctx: AnalysisContext) -> list[Judgment]:
        if ctx.retriever is None:
            return []
        settings = ctx.settings
        out = []
        for chunk in chunks:
            judgment = self.checker(ctx).check(chunk, ctx.llm, settings.severity_of("novelty"),
                                               settings.close_prior_work_threshold)
            verdict = self.nova_verdict(chunk, ctx)
            out.append(replace(judgment, message=f"{judgment.message}\nNOVA check: {verdict.message()}",
                               evidence={**judgment.evidence, "nova": verdict.to_json()}))
        return out

    def nova_verdict(self, chunk: Chunk, ctx: AnalysisContext):
        """NOVA's check of the text against the run's retriever (the draft's own date), cached per
        text and model like the rest of the check."""
        key = (chunk.hash, _llm_key(ctx.llm))
        with self._lock:
            found = self._nova.get(key)
        if found is None:
            found = check_idea(chunk.text, ctx.retriever, ctx.llm, rounds=1)
            with self._lock:
                if len(self._nova) > MAX_VERDICTS:
                    self._nova.clear()
                self._nova[key] = found
        return found
