"""Where a LaTeX project starts: the root file for an edited file, and what the project names.

`pick_root(path)` answers which file to parse for `path`, and says why when it had to choose:
  1. `override` (the `--root` option) when given;
  2. a `% !TeX root = main.tex` magic comment near the top of `path`;
  3. `path` itself if it has `\\documentclass` (for `\\documentclass[main.tex]{subfiles}`, main.tex);
  4. else the `.tex` files with `\\documentclass` in the file's directory or its parents (up to
     `workspace`) that include `path`, directly or through other files; among several, the one
     a `.latexmkrc` / `latexmkrc` names in `@default_files`, else the first by directory
     (nearest first) and name, with a note naming the others;
  5. else `path`.
`find_root` is the same without the note.  The include tree here is read by a regex over the
source (`include_tree`): quick, blind to includes made by macros, enough to find roots and
the .bib files a project names before it is parsed.  Both stay inside the project's wall
(`wall.py`): a root named by a magic comment counts only when the edited file lies inside that
root's project, and no file outside a project is read to find what it includes.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator

from .wall import ProjectWall

Reader = Callable[[Path], str]


def read_file(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def norm_path(path: Path) -> Path:
    """Absolute and normalised, without resolving links (the editor's paths are kept)."""
    return Path(os.path.normpath(Path(path).expanduser().absolute()))


def try_read(path: Path, read: Reader) -> str | None:
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


def include_candidates(command: str, args: tuple[str, ...], here: Path, root_dir: Path) -> list[Path]:
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
            p = norm_path(base / nm)
            if p not in out:
                out.append(p)
    return out


def existing(cands: list[Path]) -> Path | None:
    return next((c for c in cands if c.is_file()), None)


def bib_candidates(command: str, names: tuple[str, ...], here: Path, root_dir: Path) -> list[list[Path]]:
    out = []
    for name in names:
        nm = name if name.endswith(".bib") or command != "bibliography" else name + ".bib"
        cands = [norm_path(root_dir / nm), norm_path(here / nm)]
        if not nm.endswith(".bib"):
            cands += [norm_path(root_dir / (nm + ".bib")), norm_path(here / (nm + ".bib"))]
        out.append(list(dict.fromkeys(cands)))
    return out


_ROOT_MAGIC = re.compile(r"^[ \t]*%+[ \t]*!\s*TeX\s+root\s*=\s*(.+?)\s*$", re.I | re.M)
_COMMENT = re.compile(r"%(?<!\\%)[^\r\n]*")  # the literal first: re scans for "%" fast (13x on a paper)
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


_BEGIN_DOCUMENT = re.compile(r"\\begin\s*\{document\}")


def _begins_document(text: str) -> bool:
    return _BEGIN_DOCUMENT.search(_strip_comments(text)) is not None


def _rooty(text: str) -> bool:
    """A file LaTeX can be run on: its `\\documentclass`, or its `\\begin{document}` after an
    `\\input{preamble}` that holds the class (a thesis's main.tex)."""
    return _documentclass(text) is not None or _begins_document(text)


def include_tree(root: Path, text: str, read: Reader, limit: int = 200,
                 wall: ProjectWall | None = None) -> Iterator[tuple[Path, str]]:
    """(path, text) of `root` and of the files it includes inside `wall` (default: the root's
    folder), found by a regex over the source (quick, but blind to includes made by macros)."""
    wall = wall or ProjectWall.around(root)
    yield root, text
    todo = [(root, text)]
    visited = {root}
    while todo and len(visited) < limit:
        path, body = todo.pop()
        for m in _INCLUDES.finditer(_strip_comments(body)):
            if m.group(1):
                cands = include_candidates(m.group(1), (m.group(2),), path.parent, root.parent)
            else:
                cands = include_candidates(m.group(3), (m.group(4), m.group(5)), path.parent, root.parent)
            for cand in cands:
                if cand in visited:
                    break
                if not wall.allows(cand):
                    continue
                child = try_read(cand, read)
                if child is not None:
                    visited.add(cand)
                    todo.append((cand, child))
                    yield cand, child
                    break


def _includes(root: Path, text: str, target: Path, read: Reader, wall: ProjectWall) -> bool:
    """Does `root` include `target`, directly or through other files inside `wall`?"""
    return any(path == target for path, _ in include_tree(root, text, read, wall=wall))


def bib_files(root: Path, text: str, read: Reader, wall: ProjectWall | None = None) -> list[Path]:
    """The .bib files inside `wall` the project names, before it is parsed (see `include_tree`)."""
    wall = wall or ProjectWall.around(root)
    out: list[Path] = []
    for path, body in include_tree(root, text, read, wall=wall):
        for m in _BIBLIOGRAPHY.finditer(_strip_comments(body)):
            names = tuple(x.strip() for x in m.group(2).split(",") if x.strip())
            for cands in bib_candidates(m.group(1), names, path.parent, root.parent):
                found = existing([c for c in cands if wall.allows(c)])
                if found is not None and found not in out:
                    out.append(found)
    return out


@dataclass(frozen=True)
class RootChoice:
    root: Path
    note: str = ""  # why this root, when the file has several (say it once to the user)


_DEFAULT_FILES = re.compile(r"@default_files\s*=\s*\(([^)]*)\)")
_QUOTED = re.compile(r"""["']([^"']+)["']""")


def latexmkrc_roots(folder: Path, read: Reader) -> list[Path]:
    """The files a `.latexmkrc` / `latexmkrc` in `folder` names in `@default_files`."""
    out: list[Path] = []
    for name in (".latexmkrc", "latexmkrc"):
        text = try_read(folder / name, read) if (folder / name).is_file() else None
        for m in _DEFAULT_FILES.finditer(_PERL_COMMENT.sub("", text or "")):
            for file in _QUOTED.findall(m.group(1)):
                cand = norm_path(folder / (file if file.endswith(".tex") else file + ".tex"))
                if cand not in out:
                    out.append(cand)
    return out


_PERL_COMMENT = re.compile(r"#[^\r\n]*")


def _named_roots(path: Path, text: str) -> list[Path]:
    """`% !TeX root = main.tex`, or `\\documentclass[main.tex]{subfiles}`: where the root the file names may be."""
    m = _ROOT_MAGIC.search(text[:5000])
    if m:
        name = m.group(1).strip().strip('"')
        return [norm_path(path.parent / name), norm_path(path.parent / (name + ".tex"))]
    dc = _documentclass(text)
    if dc and dc.group(2).strip() == "subfiles" and dc.group(1):
        return include_candidates("input", (dc.group(1).strip(),), path.parent, path.parent)
    return []


def _root_named_in(path: Path, text: str, read: Reader, workspace: Path | None,
                   extra_roots: Iterable[str | Path]) -> tuple[Path | None, str]:
    """The root the file names, if `path` lies inside that root's project; else None and why it was not used."""
    for cand in _named_roots(path, text):
        if not ProjectWall.around(cand, workspace, extra_roots).allows(path):
            wall = ProjectWall.around(path, workspace, extra_roots)
            return None, wall.refusal(f"{path.name}: the root file it names", cand)
        if cand.is_file() or try_read(cand, read) is not None:
            return cand, ""
    return None, ""


def _search_dirs(path: Path, workspace: Path | None) -> list[Path]:
    """The file's directory and its parents: up to `workspace`, or two levels without one."""
    dirs = [path.parent]
    stop = norm_path(workspace) if workspace is not None else None
    d = path.parent
    while d.parent != d and (stop is None and len(dirs) < 3 or stop is not None and d != stop and stop in d.parents):
        d = d.parent
        dirs.append(d)
    return dirs


def _including_roots(path: Path, workspace: Path | None, read: Reader, extra_roots: Iterable[str | Path]) -> list[Path]:
    """Every `.tex` with `\\documentclass` near `path` that includes it, nearest directory first, by name."""
    out = []
    for d in _search_dirs(path, workspace):
        try:
            cands = sorted(d.glob("*.tex"))[:200]
        except OSError:
            continue
        for cand in cands:
            cand = norm_path(cand)
            if cand == path:
                continue
            body = try_read(cand, read)
            if body and _rooty(body) and _includes(cand, body, path, read,
                                                           ProjectWall.around(cand, workspace, extra_roots)):
                out.append(cand)
    return out


def pick_root(path: Path, workspace: Path | None = None, read: Reader | None = None,
              override: Path | None = None, extra_roots: Iterable[str | Path] = (),
              preferred: Path | None = None) -> RootChoice:
    """The root .tex file to parse when `path` is edited (see the module docstring). `preferred` (the
    `rootFile` setting) wins among the roots that include `path`, and only there: a file of another
    project keeps its own root."""
    if override is not None:
        return RootChoice(norm_path(override))
    read = read or read_file
    path = norm_path(path)
    text = try_read(path, read) or ""
    extra_roots = tuple(extra_roots)
    named, refused = _root_named_in(path, text, read, workspace, extra_roots)
    if named is not None:
        return RootChoice(named)
    if _begins_document(text):
        return RootChoice(path, refused)
    roots = _including_roots(path, workspace, read, extra_roots)
    if not roots and _documentclass(text):  # a class and no body: its own root unless one includes it (preamble.tex)
        return RootChoice(path, refused)
    if not roots:  # a snippet outside any project: say so once, else its findings look like a paper's
        return RootChoice(path, refused or f"{path.name} has no \\documentclass and no root file includes it: "
                                           "checked on its own; open the paper's root file, or add a "
                                           "'% !TeX root = main.tex' line")
    if len(roots) == 1:
        return RootChoice(roots[0], refused)
    setting = norm_path(preferred) if preferred is not None else None
    named_by_rc = [r for d in dict.fromkeys(r.parent for r in roots) for r in latexmkrc_roots(d, read) if r in roots]
    if setting in roots:
        root, why = setting, "the rootFile setting"
    elif named_by_rc:
        root, why = named_by_rc[0], "named by latexmkrc"
    else:
        root, why = roots[0], "first by folder and name"
    others = ", ".join(r.name for r in roots if r != root)
    return RootChoice(root, f"{path.name} is included by {len(roots)} root files; using {root.name} ({why}; "
                            f"also {others}); choose with --root, the rootFile setting or a '% !TeX root = ...' line")


def find_root(path: Path, workspace: Path | None = None, read: Reader | None = None,
              extra_roots: Iterable[str | Path] = ()) -> Path:
    """The root .tex file to parse when `path` is edited (`pick_root` without its note)."""
    return pick_root(path, workspace, read, extra_roots=extra_roots).root


def root_in_folder(folder: Path, read: Reader | None = None) -> RootChoice | None:
    """The root file of the project in `folder` (for `peerlint check DIR`): its `.tex` files with
    `\\documentclass` or `\\begin{document}` that no other such file includes, else those one level
    down (a `paper/` folder); among several, the one that latexmkrc names, else the one that includes
    the most files (the paper rather than a template's example beside it), else the first by name,
    with a note naming the others. None when the folder holds no root."""
    read = read or read_file
    folder = norm_path(folder)
    for pattern in ("*.tex", "*/*.tex"):
        try:
            cands = sorted(folder.glob(pattern))[:200]
        except OSError:
            return None
        texts = {norm_path(c): try_read(c, read) or "" for c in cands}
        roots = [c for c, t in texts.items() if _rooty(t)]
        if roots:
            break
    else:
        return None
    if len(roots) > 1:  # a preamble.tex with the \documentclass that main.tex \inputs is not a root
        inside = {p for r in roots for p, _ in list(include_tree(r, texts[r], read))[1:]}
        roots = [r for r in roots if r not in inside] or roots
    if len(roots) == 1:
        return RootChoice(roots[0])
    named = [r for d in dict.fromkeys(r.parent for r in roots) for r in latexmkrc_roots(d, read) if r in roots]
    files = {r: sum(1 for _ in include_tree(r, texts[r], read)) for r in roots}
    most = [r for r in roots if files[r] == max(files.values())]
    if named:
        root, why = named[0], "named by latexmkrc"
    elif len(most) == 1:
        root, why = most[0], f"it includes the most files, {files[most[0]] - 1}"
    else:
        root, why = most[0], "first by name"
    others = ", ".join(r.name for r in roots if r != root)
    return RootChoice(root, f"{folder.name} holds {len(roots)} root files; using {root.name} ({why}; also {others}); "
                            "choose with --root or by naming the file")
