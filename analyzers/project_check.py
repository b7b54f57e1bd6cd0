"""One LaTeX project in, judgments out: the path from a file on disk to what `peerlint check` prints."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .retrieval.bibliography import BibEntry, read_bib_files
from .engine import Engine
from .latex.parse import ParseOptions
from .latex.project import parse_project, pick_root
from .types import Chunk, Judgment


@dataclass
class CheckResult:
    root: Path
    chunks: list[Chunk]
    judgments: list[Judgment]
    warnings: list[str] = field(default_factory=list)
    bib: list[BibEntry] | None = None


def parse_options(settings, count_tokens: Callable[[str], int] | None = None) -> ParseOptions:
    """The parser's options from user settings; bad tables raise ValueError naming the entry."""
    opts = ParseOptions(commands=dict(settings.latex_commands), environments=dict(settings.latex_environments),
                        max_tokens=settings.max_tokens)
    if count_tokens is not None:
        opts.count_tokens = count_tokens
    return opts


def read_bibliography(paths: list[Path]) -> list[BibEntry] | None:
    """Entries of every readable .bib, or None when the project has none (then no citation checks)."""
    existing = [p for p in paths if p.exists()]
    return read_bib_files(existing) if existing else None


def check_file(path: Path, engine: Engine, workspace: Path | None = None,
               read: Callable[[Path], str] | None = None, tier: str = "fast", root: Path | None = None) -> CheckResult:
    """`root` overrides the root file found from `path`; a choice among several roots is a warning."""
    choice = pick_root(Path(path), workspace, read, override=root)
    project = parse_project(choice.root, parse_options(engine.settings), read)
    bib = read_bibliography(project.bib_files)
    report = engine.run(project.chunks, tier, bib)
    notes = [choice.note] if choice.note else []
    return CheckResult(choice.root, project.chunks, report.judgments, notes + project.warnings + report.errors, bib)
