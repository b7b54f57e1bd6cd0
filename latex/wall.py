"""The project root is a wall: the files a document may make peerlint read, embed, send or write.

A LaTeX file names other files (`\\input`, `\\include`, `\\subfile`, `\\import`, `\\bibliography`,
`\\addbibresource`, a local `\\usepackage`, `% !TeX root = ...`).  A document received from a
co-author must not make peerlint read a file outside its project (`\\input{/etc/passwd}`), put it
into a chunk that is embedded, sent to an LLM host or shown, nor write outside it (the `.bib` that
*Cite this paper* appends to).  The project is the folder of the root `.tex`, or the workspace
folder when it holds the root, plus the folders the user allows in `peerlint.extraRoots`.  Paths
are resolved (symbolic links followed) before they are compared, so a link that points out of the
project counts as leaving it.  Graphics are never read, so they need no check.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

SETTING = "peerlint.extraRoots"


def resolved(path: Path | str) -> Path:
    """Absolute, normalised, every symbolic link followed (the file need not exist)."""
    return Path(os.path.realpath(os.path.expanduser(str(path))))


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


@dataclass(frozen=True)
class ProjectWall:
    """The folders (resolved) a project's files may lie in; `allows` is the one test every read and write passes."""

    roots: tuple[Path, ...]

    @classmethod
    def around(cls, root_file: Path, workspace: Path | None = None, extra_roots: Iterable[str | Path] = ()) -> "ProjectWall":
        """The wall of the project whose root file is `root_file`: its folder, or `workspace` when that
        holds it, plus `extra_roots` (relative ones count from that folder)."""
        base = resolved(Path(root_file).absolute().parent)
        if workspace is not None and _inside(base, resolved(workspace)):
            base = resolved(workspace)
        roots = [base] + [resolved(r if Path(r).expanduser().is_absolute() else base / r) for r in extra_roots if str(r).strip()]
        return cls(tuple(dict.fromkeys(roots)))

    def allows(self, path: Path | str) -> bool:
        """Is `path`, once its links are followed, inside one of the wall's folders?"""
        try:
            real = resolved(path)
        except (OSError, ValueError):  # a path the OS cannot even resolve (NUL byte, loop) is not inside
            return False
        return any(_inside(real, root) for root in self.roots)

    def refusal(self, where: str, path: Path | str) -> str:
        """The one warning for a path left unread: what named it, where it leads, and the setting that allows it."""
        return (f"{where} leads to {resolved(path)}, outside the project ({', '.join(str(r) for r in self.roots)}): "
                f"not read; add its folder to {SETTING} to allow it")
