"""One LaTeX project in, judgments out: the path from a file on disk to what `peerlint check` prints.

`read_project` is the one way from an edited file to its parsed project, for the CLI and the
server alike: which root, which wall (the root's folder, or the workspace folder holding it, plus
`extraRoots`), and the chunks of every file inside it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .drafts.summaries import SectionSummary, missing_venue, summarise
from .drafts.venue_guess import DraftDate, draft_date, evidence_before, guess_venue
from ..latex.bibliography import BibEntry, read_bib_files
from .engine import Engine
from ..latex.parse import parse_options
from ..latex.project import ProjectParse, RootChoice, parse_project, pick_root
from ..latex.wall import ProjectWall
from ..types import Chunk, Judgment


@dataclass
class CheckResult:
    root: Path
    chunks: list[Chunk]
    judgments: list[Judgment]
    warnings: list[str] = field(default_factory=list)
    bib: list[BibEntry] | None = None
    summaries: list[SectionSummary] = field(default_factory=list)


@dataclass
class ProjectRead:
    """A parsed project with the root chosen for the edited file and the wall its files stayed in."""

    choice: RootChoice
    wall: ProjectWall
    project: ProjectParse
    venue_guess: str = ""  # from the root file's \documentclass / \usepackage (used when targetVenue is unset)
    date: DraftDate | None = None  # from a past venue's style: evidence before it (publishedBefore "auto")
    date_note: str = ""  # said once where the date limits the evidence

    @property
    def warnings(self) -> list[str]:
        """What reading the project found (the root chosen among several, the parser's warnings)."""
        return ([self.choice.note] if self.choice.note else []) + self.project.warnings

    @property
    def judging_warnings(self) -> list[str]:
        """`warnings`, and the date that limits the evidence: said where findings are judged against the
        index (`check`, the editor), not by commands that only read the project (`chunks`)."""
        return ([self.choice.note] if self.choice.note else []) + ([self.date_note] if self.date_note else []) \
            + self.project.warnings


def judged_with(settings, venue_guess: str, date: DraftDate | None):
    """The settings a project is judged with, by `peerlint check` and the server alike: its guessed
    venue and its draft's date filled in where the user set none."""
    return dataclasses.replace(settings, target_venue=settings.target_venue or venue_guess,
                               published_before=evidence_before(settings.published_before, date))


def read_project(path: Path, settings, workspace: Path | None = None, read: Callable[[Path], str] | None = None,
                 root: Path | None = None, embedder=None) -> ProjectRead:
    """The project `path` belongs to (`root` overrides the root found), read inside its wall."""
    extra = tuple(settings.extra_roots)
    preferred = None
    if getattr(settings, "root_file", ""):
        preferred = Path(settings.root_file).expanduser()
        preferred = preferred if preferred.is_absolute() else (workspace or Path.cwd()) / preferred
    choice = pick_root(Path(path), workspace, read, override=root, extra_roots=extra, preferred=preferred)
    wall = ProjectWall.around(choice.root, workspace, extra)
    project = parse_project(choice.root, parse_options(settings, embedder), read, wall)
    root_text = _text_of(choice.root, read)
    date = draft_date(root_text, choice.root.name)
    note = date.note() if date is not None and settings.published_before == "auto" else ""
    return ProjectRead(choice, wall, project, guess_venue(root_text), date, note)


def read_bibliography(paths: list[Path]) -> list[BibEntry] | None:
    """Entries of every readable .bib, or None when the project has none (then no citation checks)."""
    existing = [p for p in paths if p.exists()]
    return read_bib_files(existing) if existing else None


@dataclass
class PreparedProject:
    """A project read and ready to judge: its `.bib` entries, the settings it is judged with, and what
    to tell the user (`judging_warnings`, and a target venue the index does not hold)."""

    found: ProjectRead
    bib: list[BibEntry] | None
    settings: object  # peerlint.settings.Settings, with `judged_with`'s venue and date
    warnings: list[str]


def prepare(path: Path, settings, workspace: Path | None = None, read: Callable[[Path], str] | None = None,
            root: Path | None = None, retriever=None) -> PreparedProject:
    """`read_project`, then what judging it needs, the same for `peerlint check` and the server.
    Chunks are cut by the embedding model's own token count (the retriever's index's), so that
    `peerlint check` and the editor judge the same paragraphs."""
    found = read_project(path, settings, workspace, read, root,
                         embedder=retriever.index.embedder if retriever is not None else None)
    bib = read_bibliography(found.project.bib_files)
    judged = judged_with(settings, found.venue_guess, found.date)
    venue_note = missing_venue(retriever.index, judged.target_venue) if retriever is not None else ""
    return PreparedProject(found, bib, judged, found.judging_warnings + ([venue_note] if venue_note else []))


def check_file(path: Path, engine: Engine, workspace: Path | None = None,
               read: Callable[[Path], str] | None = None, tier: str = "fast", root: Path | None = None) -> CheckResult:
    """`root` overrides the root file found from `path`; a choice among several roots is a warning."""
    ready = prepare(path, engine.settings, workspace, read, root, engine.retriever)
    found, settings = ready.found, ready.settings
    report = engine.run(found.project.chunks, tier, ready.bib, settings=settings)
    summaries = summarise(found.project.chunks, engine.retriever, settings.target_venue) if settings.section_summaries else []
    return CheckResult(found.choice.root, found.project.chunks, report.judgments, ready.warnings + report.errors,
                       ready.bib, summaries)


def _text_of(path: Path, read: Callable[[Path], str] | None) -> str:
    try:
        return read(path) if read is not None else path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
