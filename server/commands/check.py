"""`peerlint check FILE`: diagnose a LaTeX file (or its whole project) and print file:line:col findings."""

from __future__ import annotations

from typing import Sequence

import argparse
import json
import sys
from pathlib import Path

from ...errors import UserError
from ...tables import counted
from .common import display_path, index_arg, load_settings, project_file, warn
from ...llm.base import LLMError
from ...types import ProjectSource
from ...analyzers.drafts.paper_diff import revision_lenses
from ...analyzers.drafts.revision_check import compare, compared_with
from ...latex.parse import parse_options
from ...analyzers.checker import Checker
from ...analyzers.project_check import check_file
from . import HELP


def register(sub, argv: Sequence[str] | None = None) -> None:
    p = sub.add_parser("check", help=HELP["check"])
    p.add_argument("file", type=Path, help="a .tex file of the project, or its folder (its root file is used)")
    p.add_argument("--root", type=Path, help="the project's root .tex (default: found from FILE, said when ambiguous)")
    index_arg(p)
    p.add_argument("--settings", type=Path, help="JSON file of settings, as the editor would send them")
    p.add_argument("--rev", default="HEAD",
                   help="also judge each paragraph changed since this git revision, as `peerlint diff` does (default: "
                        "HEAD; nothing when the project is not in git or nothing changed); --rev '' skips it")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=run)


def revision_verdicts(file: Path, root: Path | None, checker, rev: str) -> list:
    """The verdict (`paper_diff.RevisionLens`, as the editor's lens shows it) on each paragraph edited
    since `rev`; none outside git.  The LM is loaded only when a paragraph changed; a bad revision or a
    missing LM is a warning, not a failure."""
    source = ProjectSource(file, root)  # no text at open: outside git there is nothing to compare with
    if not rev or compared_with(source, rev) is None:
        return []
    judge = checker.revision_judge(ratings="none")  # verdicts only, no per-section ratings
    if judge is None:
        return []
    try:
        found, against = compare(source, judge, rev, parse_options(checker.settings))
    except (UserError, LLMError) as exc:
        warn(f"no revision verdicts: {exc}")
        return []
    return revision_lenses(found, against)


def run(args: argparse.Namespace) -> int:
    file, root = project_file(args.file, args.root)
    checker = Checker(load_settings(args.settings), index_path=args.index, keep_judgments=False, warn=warn)
    retriever = checker.retriever()
    if retriever is None:
        raise UserError(checker.index_error)
    result = check_file(file, checker.engine, root=root)  # no workspace: the project is the root's folder
    for w in result.warnings:
        warn(w)
    rows = sorted(result.judgments, key=lambda j: (j.chunk.uri, j.chunk.range.start.line, j.chunk.range.start.character))
    revisions = revision_verdicts(file, root, checker, args.rev)
    if args.json:
        print(json.dumps([{"kind": "finding", "file": display_path(j.chunk.uri), "line": j.chunk.range.start.line + 1,
                           "col": j.chunk.range.start.character + 1, "severity": j.severity, "code": j.code,
                           "message": j.message, "score": j.score, "evidence": j.evidence} for j in rows]
                         + [{**s.to_json(), "file": display_path(s.uri), "line": s.range.start.line + 1}
                            for s in result.summaries]
                         + [{"kind": "revision", "file": display_path(r.uri), "line": r.range.start.line + 1,
                             "verdict": r.verdict, "probability": r.probability, "against": r.against, "message": r.title}
                            for r in revisions]))
    else:
        for j in rows:
            print(f"{display_path(j.chunk.uri)}:{j.chunk.range.start.line + 1}:{j.chunk.range.start.character + 1}: "
                  f"{j.severity} {j.code}: {j.message}")
        for s in result.summaries:
            print(f"{display_path(s.uri)}:{s.range.start.line + 1}: summary {s.line()}")
        for r in revisions:
            print(f"{display_path(r.uri)}:{r.range.start.line + 1}: {r.title}")
        print(tally(len(rows), len({j.chunk.uri for j in rows}), len({c.uri for c in result.chunks}),
                    len(result.chunks), len(retriever.index)), file=sys.stderr)
    return 0


def tally(findings: int, files_with: int, files: int, chunks: int, papers: int) -> str:
    """The closing line of `check`: "4 findings in 1 of 3 files; 132 chunks checked against 171,277 papers"."""
    where = counted(files, "file") if files_with in (0, files) else f"{files_with:,} of {counted(files, 'file')}"
    return (f"{counted(findings, 'finding') if findings else 'no findings'} in {where}; "
            f"{counted(chunks, 'chunk')} checked against {counted(papers, 'paper')}")
