"""Multi-file LaTeX projects: find the root file, follow \\input/\\include/\\subfile/\\import.

`find_root(path)` answers which file to parse for `path`:
  1. a `% !TeX root = main.tex` magic comment near the top of `path`;
  2. `path` itself if it has `\\documentclass` (for `\\documentclass[main.tex]{subfiles}`, main.tex);
  3. else a `.tex` file with `\\documentclass` in the file's directory or its parents (up to
     `workspace`) that includes `path`, directly or through other files;
  4. else `path`.
`parse_project(root)` walks the root and every file it includes, in reading order; each chunk's
`uri` and offsets refer to the file its text is in.  Missing files and cycles become warnings.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from .blocks import split_blocks
from .citations import names_of_bib_texts
from .macros import Definitions
from .parse import ChunkMaker, ChunkState, ParseOptions, TablesFor, file_events, parse_document
from .text import BibResource, Include, Notice, Package, Para
from ..types import Chunk

log = logging.getLogger(__name__)

Reader = Callable[[Path], str]
MAX_DEPTH = 32


@dataclass
class ProjectParse:
    chunks: list[Chunk]
    files: list[Path] = field(default_factory=list)  # every file read, root first, in reading order
    warnings: list[str] = field(default_factory=list)
    bib_files: list[Path] = field(default_factory=list)
    packages: list[Path] = field(default_factory=list)  # the project's own .sty/.cls, read for definitions


def read_file(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def _norm(path: Path) -> Path:
    return Path(os.path.normpath(Path(path).expanduser().absolute()))


def _try_read(path: Path, read: Reader) -> str | None:
    try:
        text = read(path)
    except Exception:
        return None
    return text if isinstance(text, str) else None


def _tex_names(name: str, command: str) -> list[str]:
    name = name.strip().strip('"').strip()
    if not name:
        return []
    if name.endswith(".tex"):
        return [name]
    return [name + ".tex"] if command in ("include", "includefrom", "subincludefrom") else [name + ".tex", name]


def _include_candidates(command: str, args: tuple[str, ...], here: Path, root_dir: Path) -> list[Path]:
    """Where LaTeX (and the import/subfiles packages) would look for an included file."""
    if not args:
        return []
    if command in ("import", "subimport", "inputfrom", "subinputfrom", "includefrom", "subincludefrom") and len(args) >= 2:
        folder, name = args[-2].strip(), args[-1]
        bases = [here / folder, root_dir / folder] if command.startswith("sub") else [root_dir / folder, here / folder]
    else:
        name = args[-1]
        bases = [root_dir, here]
    out: list[Path] = []
    for base in bases:
        for nm in _tex_names(name, command):
            p = _norm(base / nm)
            if p not in out:
                out.append(p)
    return out


def _existing(cands: list[Path]) -> Path | None:
    return next((c for c in cands if c.is_file()), None)


def _bib_candidates(command: str, names: tuple[str, ...], here: Path, root_dir: Path) -> list[list[Path]]:
    out = []
    for name in names:
        nm = name if name.endswith(".bib") or command != "bibliography" else name + ".bib"
        cands = [_norm(root_dir / nm), _norm(here / nm)]
        if not nm.endswith(".bib"):
            cands += [_norm(root_dir / (nm + ".bib")), _norm(here / (nm + ".bib"))]
        out.append(list(dict.fromkeys(cands)))
    return out


class _ProjectWalk:
    """One pass over a project: files in reading order, the chunk state and the tables they share."""

    def __init__(self, root: Path, options: ParseOptions, read: Reader):
        self.root_dir = root.parent
        self.options = options
        self.read = read
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

    def package(self, path: Path, ev: Package) -> None:
        """A .sty/.cls of the project itself: its definitions count (it has no prose)."""
        ext = ".cls" if ev.command == "documentclass" else ".sty"
        for name in ev.names:
            for cand in dict.fromkeys((_norm(self.root_dir / (name + ext)), _norm(path.parent / (name + ext)))):
                if cand in self.seen:
                    break
                text = _try_read(cand, self.read) if cand.is_file() else None
                if text is not None:
                    self.seen.add(cand)
                    self.result.packages.append(cand)
                    split_blocks(text, True, self.scope)
                    break

    def bib_resource(self, path: Path, ev: BibResource) -> None:
        for cands in _bib_candidates(ev.command, ev.names, path.parent, self.root_dir):
            found = _existing(cands)
            if found is None:
                self.result.warnings.append(f"{path.name}: bibliography file {cands[0].name} not found")
            elif found not in self.result.bib_files:
                self.result.bib_files.append(found)

    def include(self, parent: Path, ev: Include, pre: bool, depth: int) -> None:
        warnings = self.result.warnings
        cands = _include_candidates(ev.command, ev.args, parent.parent, self.root_dir)
        if not cands:
            return
        for cand in cands:
            if cand in self.active:
                warnings.append(f"{parent.name}: \\{ev.command}{{{ev.args[-1]}}} includes itself (cycle); skipped")
                return
            if cand in self.seen:
                warnings.append(f"{parent.name}: {cand.name} is included more than once; read once")
                return
        if depth >= MAX_DEPTH:
            warnings.append(f"{parent.name}: includes nested deeper than {MAX_DEPTH}; {ev.args[-1]} skipped")
            return
        for cand in cands:
            child = _try_read(cand, self.read)
            if child is not None:
                self.visit(cand, child, True if pre else None, depth + 1, ev.kind)
                return
        warnings.append(f"{parent.name}: \\{ev.command}{{{ev.args[-1]}}} not found (looked for {cands[0]})")


def parse_project(root: Path, options: ParseOptions | None = None, read: Reader | None = None) -> ProjectParse:
    """Chunks of every file reachable from `root`, in reading order.  Never raises on content."""
    root = _norm(root)
    walk = _ProjectWalk(root, options or ParseOptions(), read or read_file)
    text = _try_read(root, walk.read)
    if text is None:
        walk.result.warnings.append(f"cannot read the root file {root}")
    else:
        # the .bib is named at the end; its author names are needed from the first \citet on
        bibs = [_try_read(p, walk.read) for p in _bib_files(root, text, walk.read)]
        walk.scope.cite_names = names_of_bib_texts([b for b in bibs if b])
        walk.visit(root, text, None, 0)
    return walk.result


# --- root resolution ------------------------------------------------------------------------

_ROOT_MAGIC = re.compile(r"^[ \t]*%+[ \t]*!\s*TeX\s+root\s*=\s*(.+?)\s*$", re.I | re.M)
_COMMENT = re.compile(r"(?<!\\)%[^\r\n]*")
_DOCUMENTCLASS = re.compile(r"\\documentclass\s*(?:\[([^\]]*)\])?\s*\{([^}]*)\}")
_BIBLIOGRAPHY = re.compile(r"\\(bibliography|addbibresource|addglobalbib|addsectionbib)\s*(?:\[[^\]]*\])?\s*\{([^{}]*)\}")
_INCLUDES = re.compile(
    r"\\(input|include|subfile)\s*\{([^{}]*)\}"
    r"|\\(import|subimport|inputfrom|subinputfrom|includefrom|subincludefrom)\*?\s*\{([^{}]*)\}\s*\{([^{}]*)\}"
)


def _strip_comments(text: str) -> str:
    return _COMMENT.sub("", text)


def _documentclass(text: str) -> re.Match | None:
    return _DOCUMENTCLASS.search(_strip_comments(text[:200_000]))


def _include_tree(root: Path, text: str, read: Reader, limit: int = 200) -> Iterator[tuple[Path, str]]:
    """(path, text) of `root` and of the files it includes, found by a regex over the source
    (quick, but blind to includes made by macros)."""
    yield root, text
    todo = [(root, text)]
    visited = {root}
    while todo and len(visited) < limit:
        path, body = todo.pop()
        for m in _INCLUDES.finditer(_strip_comments(body)):
            if m.group(1):
                cands = _include_candidates(m.group(1), (m.group(2),), path.parent, root.parent)
            else:
                cands = _include_candidates(m.group(3), (m.group(4), m.group(5)), path.parent, root.parent)
            for cand in cands:
                if cand in visited:
                    break
                child = _try_read(cand, read)
                if child is not None:
                    visited.add(cand)
                    todo.append((cand, child))
                    yield cand, child
                    break


def _includes(root: Path, text: str, target: Path, read: Reader) -> bool:
    """Does `root` include `target`, directly or through other files?"""
    return any(path == target for path, _ in _include_tree(root, text, read))


def _bib_files(root: Path, text: str, read: Reader) -> list[Path]:
    """The .bib files the project names, before it is parsed (see `_include_tree`)."""
    out: list[Path] = []
    for path, body in _include_tree(root, text, read):
        for m in _BIBLIOGRAPHY.finditer(_strip_comments(body)):
            names = tuple(x.strip() for x in m.group(2).split(",") if x.strip())
            for cands in _bib_candidates(m.group(1), names, path.parent, root.parent):
                found = _existing(cands)
                if found is not None and found not in out:
                    out.append(found)
    return out


def find_root(path: Path, workspace: Path | None = None, read: Reader | None = None) -> Path:
    """The root .tex file to parse when `path` is edited (see the module docstring)."""
    read = read or read_file
    path = _norm(path)
    text = _try_read(path, read) or ""
    m = _ROOT_MAGIC.search(text[:5000])
    if m:
        name = m.group(1).strip().strip('"')
        for cand in (_norm(path.parent / name), _norm(path.parent / (name + ".tex"))):
            if cand.is_file() or _try_read(cand, read) is not None:
                return cand
    dc = _documentclass(text)
    if dc:
        if dc.group(2).strip() == "subfiles" and dc.group(1):
            for cand in _include_candidates("input", (dc.group(1).strip(),), path.parent, path.parent):
                if cand.is_file():
                    return cand
        return path
    dirs = [path.parent]
    stop = _norm(workspace) if workspace is not None else None
    d = path.parent
    while d.parent != d and (stop is None and len(dirs) < 3 or stop is not None and d != stop and stop in d.parents):
        d = d.parent
        dirs.append(d)
    for d in dirs:
        try:
            cands = sorted(d.glob("*.tex"))[:200]
        except OSError:
            continue
        for cand in cands:
            cand = _norm(cand)
            if cand == path:
                continue
            body = _try_read(cand, read)
            if body and _documentclass(body) and _includes(cand, body, path, read):
                return cand
    return path
