"""Every analyzer peerlint knows, named once: the engine runs them, settings validate against them.

Each entry is one module behind the one analyzer interface (`peerlint.types.Analyzer`); its `name`,
`tier` and diagnostic `codes` are the class's own. `prior-work` runs while the user types,
`quality` and `venue-style` on the background tier; `revisions` too, as a project-level analyzer
(its verdicts depend on the previous version, so it judges in `finish`, never cached per chunk);
`novelty` on the on-demand tier, when the editor's *Check novelty* asks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .drafts.quality import QualityAnalyzer
from .drafts.revision_check import RevisionsAnalyzer
from .drafts.venue_style import VenueStyleAnalyzer
from .novelty.analyzer import NoveltyAnalyzer
from .prior_work import PriorWorkAnalyzer
from ..types import Analyzer


@dataclass(frozen=True)
class AnalyzerEntry:
    name: str
    codes: tuple[str, ...]
    factory: Callable[[], Analyzer]


def _entry(cls) -> AnalyzerEntry:
    return AnalyzerEntry(cls.name, tuple(cls.codes), cls)


ANALYZERS: tuple[AnalyzerEntry, ...] = (
    _entry(PriorWorkAnalyzer),
    _entry(QualityAnalyzer),
    _entry(VenueStyleAnalyzer),
    _entry(NoveltyAnalyzer),
    _entry(RevisionsAnalyzer),
)
NAMES = tuple(a.name for a in ANALYZERS)
CODES = tuple(code for a in ANALYZERS for code in a.codes)


def engine_factories() -> dict[str, Callable[[], Analyzer]]:
    """name -> factory of every analyzer (the engine runs them all)."""
    return {a.name: a.factory for a in ANALYZERS}
