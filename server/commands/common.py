"""What several commands share: the --index option, opening the index, reading a settings file."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ...errors import UserError


def warn(message: str) -> None:
    print(f"peerlint: warning: {message}", file=sys.stderr)


def index_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--index", type=Path, default=None,
                   help="index directory (default: $PEERLINT_INDEX or ~/.local/share/peerlint/index)")


def load_settings(path: Path | None):
    from ..config import Settings

    settings = Settings()
    if path is not None:
        try:
            raw = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise UserError(f"cannot read settings from {path}: {exc}") from None
        settings = settings.updated(raw, warn)
    return settings


def index_path(path: Path | None) -> Path:
    from ...index.build import default_index_path

    return path or default_index_path()


def open_index_or_fail(path: Path | None):
    from ...index.embedding.embedder import cache_root
    from ...index.store import IndexError_, open_index

    try:
        index = open_index(index_path(path))
    except IndexError_ as exc:
        raise UserError(str(exc)) from None
    index.keep_query_vectors(cache_root() / "query-vectors.sqlite")
    return index


def display_path(uri: str) -> str:
    from urllib.parse import unquote, urlparse

    path = Path(unquote(urlparse(uri).path)) if uri.startswith("file:") else Path(uri)
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)
