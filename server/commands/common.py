"""What several commands share: the --index option, opening the index, reading a settings file."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ...errors import UserError
from ...settings import Settings
from ...locations import cache_root
from ..config import updated
from ...latex.roots import root_in_folder
from ...index.build import default_index_path
from ...index.store import IndexError_, open_index


def warn(message: str) -> None:
    print(f"peerlint: warning: {message}", file=sys.stderr)


def index_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--index", type=Path, default=None,
                   help="index directory (default: $PEERLINT_INDEX or ~/.local/share/peerlint/index)")


def load_settings(path: Path | None):
    settings = Settings()
    if path is not None:
        try:
            raw = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise UserError(f"cannot read settings from {path}: {exc}") from None
        settings = updated(settings, raw, warn)
    return settings


def project_file(file: Path, root: Path | None) -> tuple[Path, Path | None]:
    """FILE and --root of `check`, `chunks` and `diff`, checked: a folder stands for the project in
    it (its root file, said when several are possible), so `peerlint check paper/` works."""
    for path in (file, root):
        if path is not None and not path.exists():
            raise UserError(f"no such file: {path}")
    if not file.is_dir():
        return file, root
    choice = root_in_folder(file)
    if choice is None:
        raise UserError(f"{file} holds no .tex file with \\documentclass (nor does any folder right inside it); "
                        "name the file to check")
    if choice.note:
        warn(choice.note)
    return choice.root, root


def index_path(path: Path | None) -> Path:
    return path or default_index_path()


def open_index_or_fail(path: Path | None, query_embedding: str = "exact", read_ahead: bool = True):
    """The index at `path` (or the default), ready to search; its queries are embedded exactly unless
    `query_embedding` says "int8" (`check` follows the editor's setting, `search` stays exact).
    `read_ahead`: False where nothing will be searched (`index info`)."""
    try:
        index = open_index(index_path(path), read_ahead=read_ahead)
    except IndexError_ as exc:
        raise UserError(str(exc)) from None
    index.embed_queries(query_embedding)
    index.keep_query_vectors(cache_root())
    return index


def display_path(uri: str) -> str:
    from urllib.parse import unquote, urlparse

    path = Path(unquote(urlparse(uri).path)) if uri.startswith("file:") else Path(uri)
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)
