"""Multi-file LaTeX projects: parse the root and every file it \\input/\\include/\\subfile/\\imports.

`parse_project(root)` walks the root and every file it includes, in reading order; each chunk's
`uri` and offsets refer to the file its text is in.  The project's macros, conditionals and
author names (from its .bib) carry from file to file; the project's argument-less macros expand in file
arguments (`\\def\\pathToRuns{runs}` then `\\input{\\pathToRuns/best.tex}`).  Missing files and cycles become
warnings, and so does a file outside the project's wall (`wall.py`): it is never read.  Which file is the root: `roots.py` (`find_root` and `pick_root` are re-exported here).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from .blocks import split_blocks
from .citations import cite_style, names_of_bib_texts
from .macros import Definitions
from .parse import ChunkMaker, ChunkState, ParseOptions, TablesFor, file_events, parse_document
from .roots import (Reader, RootChoice, bib_candidates, bib_files, existing, find_root, include_candidates, norm_path,
                    pick_root, read_file, try_read)
from .text import BibResource, Include, Notice, Package, Para
from .wall import ProjectWall
from ..types import Chunk

log = logging.getLogger(__name__)

MAX_DEPTH = 32


@dataclass
class ProjectParse:
    chunks: list[Chunk]
    files: list[Path] = field(default_factory=list)  # every file read, root first, in reading order
    warnings: list[str] = field(default_factory=list)
    bib_files: list[Path] = field(default_factory=list)
    packages: list[Path] = field(default_factory=list)  # the project's own .sty/.cls, read for definitions
    notes: list[str] = field(default_factory=list)  # the project's macros read as author notes (left out)


class _ProjectWalk:
    """One pass over a project: files in reading order, the chunk state and the tables they share."""

    def __init__(self, root: Path, options: ParseOptions, read: Reader, wall: ProjectWall):
        self.root_dir = root.parent
        self.options = options
        self.read = read
        self.wall = wall
        self.result = ProjectParse(chunks=[])
        self.state = ChunkState()
        self.scope = Definitions()  # the project's macros, read in reading order
        self.tables = TablesFor(options, self.scope)
        self.active: set[Path] = set()  # files being read (an include of one of them is a cycle)
        self.seen: set[Path] = set()

    def visit(self, path: Path, text: str, in_preamble: bool | None, depth: int, kind: str = "paragraph") -> None:
        result = self.result
        self.seen.add(path)
        self.active.add(path)
        result.files.append(path)
        try:
            maker = ChunkMaker(text, path.as_uri(), self.options, self.state, kind)
            for ev, pre in file_events(text, self.tables, in_preamble):
                if isinstance(ev, Para):
                    maker.add(ev, result.chunks)
                elif isinstance(ev, BibResource):
                    self.bib_resource(path, ev)
                elif isinstance(ev, Include):
                    self.include(path, ev, pre, depth)
                elif isinstance(ev, Package):
                    self.package(path, ev)
                elif isinstance(ev, Notice):
                    self.warn(f"{path.name}: {ev.message}")
        except Exception:
            log.warning("peerlint: failed to parse %s; using the single-file parser", path, exc_info=True)
            result.warnings.append(f"{path.name}: parse error, read without \\input resolution")
            result.chunks.extend(parse_document(text, path.as_uri(), self.options, in_preamble))
        finally:
            self.active.discard(path)

    def warn(self, message: str) -> None:
        if message not in self.result.warnings:
            self.result.warnings.append(message)

    def refused(self, where: str, cands: list[Path]) -> bool:
        """Warn once, naming the path and the setting, when what `where` names lies outside the wall:
        every candidate is outside, or one outside exists and none inside does (a link out)."""
        outside = [c for c in cands if not self.wall.allows(c)]
        if not outside or len(outside) < len(cands) and (
                any(c.is_file() for c in cands if c not in outside) or not any(c.exists() for c in outside)):
            return False
        self.warn(self.wall.refusal(where, next((c for c in outside if c.exists()), outside[0])))
        return True

    def package(self, path: Path, ev: Package) -> None:
        """A .sty/.cls of the project itself: its definitions count (it has no prose)."""
        ext = ".cls" if ev.command == "documentclass" else ".sty"
        for name in ev.names:
            cands = list(dict.fromkeys((norm_path(self.root_dir / (name + ext)), norm_path(path.parent / (name + ext)))))
            if self.refused(f"{path.name}: \\{ev.command}{{{name}}}", cands):
                continue
            for cand in filter(self.wall.allows, cands):
                if cand in self.seen:
                    break
                text = try_read(cand, self.read) if cand.is_file() else None
                if text is not None:
                    self.seen.add(cand)
                    self.result.packages.append(cand)
                    split_blocks(text, True, self.scope)
                    break

    def bib_resource(self, path: Path, ev: BibResource) -> None:
        for name, cands in zip(ev.names, bib_candidates(ev.command, ev.names, path.parent, self.root_dir)):
            found = existing([c for c in cands if self.wall.allows(c)])
            if found is None and self.refused(f"{path.name}: \\{ev.command}{{{name}}}", cands):
                continue
            if found is None:
                self.warn(f"{path.name}: bibliography file {cands[0].name} not found")
            elif found not in self.result.bib_files:
                self.result.bib_files.append(found)

    def include(self, parent: Path, ev: Include, pre: bool, depth: int) -> None:
        cands = include_candidates(ev.command, ev.args, parent.parent, self.root_dir)
        if not cands:
            return
        for cand in cands:
            if cand in self.active:
                self.warn(f"{parent.name}: \\{ev.command}{{{ev.args[-1]}}} includes itself (cycle); skipped")
                return
            if cand in self.seen:
                self.warn(f"{parent.name}: {cand.name} is included more than once; read once")
                return
        if depth >= MAX_DEPTH:
            self.warn(f"{parent.name}: includes nested deeper than {MAX_DEPTH}; {ev.args[-1]} skipped")
            return
        for cand in filter(self.wall.allows, cands):
            child = try_read(cand, self.read)
            if child is not None:
                self.visit(cand, child, True if pre else None, depth + 1, ev.kind)
                return
        if self.refused(f"{parent.name}: \\{ev.command}{{{'}{'.join(ev.args)}}}", cands):
            return
        self.warn(f"{parent.name}: \\{ev.command}{{{ev.args[-1]}}} not found (looked for {cands[0]})")


def parse_project(root: Path, options: ParseOptions | None = None, read: Reader | None = None,
                  wall: ProjectWall | None = None) -> ProjectParse:
    """Chunks of every file reachable from `root` inside `wall` (default: the root's folder), in
    reading order.  Never raises on content."""
    root = norm_path(root)
    walk = _ProjectWalk(root, options or ParseOptions(), read or read_file, wall or ProjectWall.around(root))
    text = try_read(root, walk.read)
    if text is None:
        walk.result.warnings.append(f"cannot read the root file {root}")
    else:
        # the .bib is named at the end; its author names are needed from the first \citet on
        bibs = [try_read(p, walk.read) for p in bib_files(root, text, walk.read, walk.wall)]
        walk.scope.cite_names, walk.scope.cite_years = names_of_bib_texts([b for b in bibs if b])
        walk.scope.cite_style = cite_style(text)
        walk.visit(root, text, None, 0)
        walk.result.notes = sorted(walk.tables().notes)
        if not walk.result.chunks and not walk.result.warnings:
            walk.warn(f"no prose in {root.name} or the files it includes; is it the project's root file?")
    return walk.result




__all__ = ["ProjectParse", "ProjectWall", "Reader", "RootChoice", "find_root", "parse_project", "pick_root", "read_file"]
