"""Every analyzer peerlint knows, named once: the engine runs them, settings validate against them.

An entry with a class runs inside `Engine.run` (its `name`, `tier` and diagnostic `codes` are the
class's own); the novelty check has no class here because it runs on demand, from the editor's
*Check novelty* command, and only its name and code are listed; so has `revisions`, whose verdicts
depend on the previous version too and so cannot live in the engine's per-chunk cache.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .drafts.quality import QualityAnalyzer
from .drafts.venue_style import VenueStyleAnalyzer
from .prior_work import PriorWorkAnalyzer
from ..types import Analyzer


@dataclass(frozen=True)
class AnalyzerEntry:
    name: str
    codes: tuple[str, ...]
    factory: Callable[[], Analyzer] | None = None  # None: run on demand, not by the engine


def _entry(cls) -> AnalyzerEntry:
    return AnalyzerEntry(cls.name, tuple(cls.codes), cls)


ANALYZERS: tuple[AnalyzerEntry, ...] = (
    _entry(PriorWorkAnalyzer),
    _entry(QualityAnalyzer),
    _entry(VenueStyleAnalyzer),
    AnalyzerEntry("novelty", ("novelty",)),
    AnalyzerEntry("revisions", ("revision-weaker",)),  # against git's HEAD, beside the engine (server/service.py)
)
NAMES = tuple(a.name for a in ANALYZERS)
CODES = tuple(code for a in ANALYZERS for code in a.codes)


def engine_factories() -> dict[str, Callable[[], Analyzer]]:
    """name -> factory of the analyzers the engine runs."""
    return {a.name: a.factory for a in ANALYZERS if a.factory is not None}
