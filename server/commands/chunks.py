"""`peerlint chunks FILE`: the prose peerlint reads from a LaTeX project, chunk by chunk.

What every analyzer judges is this text (LTeX+ shows its annotated text for the same reason):
macros expanded, notes and title blocks left out, citations as names or "[cite]".  Each chunk
comes with its file, its range (1-based `line:col-line:col` in text, LSP's 0-based positions
in JSON), section, kind and cite keys.
"""

from __future__ import annotations

from typing import Sequence

import argparse
import json
from pathlib import Path

from .common import display_path, load_settings, project_file, warn
from ...analyzers.project_check import read_project
from . import HELP


def register(sub, argv: Sequence[str] | None = None) -> None:
    p = sub.add_parser("chunks", help=HELP["chunks"])
    p.add_argument("file", type=Path, help="a .tex file of the project, or its folder (its root file is used)")
    p.add_argument("--root", type=Path, help="the project's root .tex (default: found from FILE, said when ambiguous)")
    p.add_argument("--settings", type=Path, help="JSON file of settings, as the editor would send them")
    p.add_argument("--json", action="store_true", help="one JSON list of {uri, range, section, kind, cites, text}")
    p.set_defaults(handler=run)


def _position(p) -> dict:
    return {"line": p.line, "character": p.character}


def run(args: argparse.Namespace) -> int:
    file, root = project_file(args.file, args.root)
    found = read_project(file, load_settings(args.settings), root=root)  # the project: the root's folder
    for w in found.warnings:
        warn(w)
    project = found.project
    if args.json:
        print(json.dumps([{"uri": c.uri, "range": {"start": _position(c.range.start), "end": _position(c.range.end)},
                           "section": c.section, "kind": c.kind, "cites": list(c.cites), "text": c.text}
                          for c in project.chunks], ensure_ascii=False))
        return 0
    for c in project.chunks:
        start, end = c.range.start, c.range.end
        cites = f"  cites: {', '.join(c.cites)}" if c.cites else ""
        print(f"{display_path(c.uri)}:{start.line + 1}:{start.character + 1}-{end.line + 1}:{end.character + 1} "
              f"{c.kind} [{c.section}]{cites}")
        print(f"    {c.text}\n")
    return 0
