"""`revisions` (`revision-weaker`): each edited paragraph judged against its previous version.

A project-level analyzer: a verdict depends on the previous version as well as on the text, so it
is made in the engine's `finish` hook on the background tier, never cached per chunk. The previous
version is git's `revisionBase` (HEAD), or, for a draft in no repository, the text the editor opened
(`ProjectSource.at_open`); the judge is the caller's (`ProjectSource.revision_judge`: the editor
rates sections with the index's embedder). Only P(worse) >= 0.60 becomes a finding
(`paper_diff.weaker_judgments`); every edited paragraph's verdict, better or worse, is kept per
project for the editor's code lenses and hovers (`lenses`).
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Sequence

from ...errors import UserError
from ...latex.parse import ParseOptions, parse_options
from ...latex.project import Reader
from ...llm.base import LLMError
from ...types import AnalysisContext, Chunk, Judgment, ProjectSource
from .paper_diff import WEAKER_CODE, Judge, PaperDiff, RevisionLens, diff_project, revision_lenses, weaker_judgments
from .previous_version import outside_git

log = logging.getLogger(__name__)

AT_OPEN = "the text at open"  # what revision-weaker compares with outside git


def compared_with(source: ProjectSource, rev: str) -> tuple[str, Reader | None] | None:
    """What the project is compared with: `rev` in git (no reader: git reads it); outside git the text
    at open where the caller kept it, else nothing (None)."""
    if outside_git(source.root or source.path):
        return (AT_OPEN, source.at_open) if source.at_open is not None else None
    return rev, None


def compare(source: ProjectSource, judge: Judge, rev: str, options: ParseOptions) -> tuple[PaperDiff, str] | None:
    """The project now against its previous version, and the name of that version (None: there is none).
    UserError for a revision git does not have; LLMError when the judge's LM cannot answer."""
    against = compared_with(source, rev)
    if against is None:
        return None
    rev, previous = against
    return diff_project(source.path, judge, rev, options, source.workspace, source.root, source.read, previous), rev


class RevisionsAnalyzer:
    name = "revisions"
    tier = "llm"
    codes = (WEAKER_CODE,)
    project_level = True  # judged in `finish`, against the previous version

    def __init__(self):
        self._lenses: dict[Path, list[RevisionLens]] = {}
        self._lock = threading.Lock()

    def analyze(self, chunks: Sequence[Chunk], ctx: AnalysisContext) -> list[Judgment]:
        return []  # nothing to say of a chunk alone

    def lenses(self, root: Path) -> list[RevisionLens]:
        """Every edited paragraph's verdict from the last run over the project rooted at `root`."""
        with self._lock:
            return list(self._lenses.get(Path(root), []))

    def _keep(self, root: Path, lenses: list[RevisionLens]) -> None:
        with self._lock:
            self._lenses[Path(root)] = lenses

    def finish(self, judgments: Sequence[Judgment], chunks: Sequence[Chunk], ctx: AnalysisContext) -> list[Judgment]:
        source = ctx.project
        if source is None or source.revision_judge is None:
            return []
        root = source.root or source.path
        self._keep(root, [])
        judge = source.revision_judge()
        if judge is None:
            return []
        try:
            compared = compare(source, judge, ctx.settings.revision_base, parse_options(ctx.settings))
            if compared is None:
                return []
            found, rev = compared
            if not found.revisions:  # nothing edited yet (the file just opened): load the LM for the first edit
                judge.warm()
        except (UserError, LLMError) as exc:  # no such revision, no embedded LM: nothing to say
            log.info("no revision judgments for %s: %s", root, exc)
            return []
        except Exception:  # a bug here must not cost the background tier's other findings
            log.exception("revision judgments for %s failed", root)
            return []
        lenses = revision_lenses(found, rev)
        log.info("revisions of %s against %s: %d edited paragraph(s) judged", root, rev, len(lenses))
        self._keep(root, lenses)
        return weaker_judgments(found, rev, judge=judge, chunks=chunks)
