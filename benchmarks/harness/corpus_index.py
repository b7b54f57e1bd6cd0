"""The index a bench runs against: one per corpus content, built once and reused by every bench."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Sequence

from ...index.papers import Paper
from ...locations import cache_root
from ...index.build import build_index
from ...index.store import IndexError_, open_index


def corpus_key(sources: Sequence[Path]) -> str:
    """A short content hash of the corpus files (directories: every file under them)."""
    digest = hashlib.blake2b(digest_size=5)
    for source in sources:
        files = sorted(p for p in Path(source).rglob("*") if p.is_file()) if Path(source).is_dir() else [Path(source)]
        for f in files:
            digest.update(hashlib.blake2b(f.read_bytes(), digest_size=16).digest())
    return digest.hexdigest()


def default_bench_index(sources: Sequence[Path]) -> Path:

    return cache_root() / f"bench-index-{corpus_key(sources)}"


def ensure_index(papers: Sequence[Paper], sources: Sequence[Path], root: Path | None, label: str = "bench",
                 embedder=None):
    """Reuse the index at `root` when it holds exactly these papers; else build it (incrementally).
    `embedder`: another than the default (a bench's placeholder vectors), for building and for queries."""
    root = root or default_bench_index(sources)
    wanted = {p.id for p in papers}
    try:
        index = open_index(root, embedder)
        if set(index.ids) == wanted and index.has_lexical:
            return index
        why = "holds other papers" if set(index.ids) != wanted else "predates lexical search"
        print(f"{label}: index at {root} {why}: rebuilding it", file=sys.stderr, flush=True)
    except IndexError_:
        print(f"{label}: building an index of {len(papers)} papers at {root} (once per corpus)",
              file=sys.stderr, flush=True)
    build_index(papers, root, embedder, sources=[str(s) for s in sources], show_progress=sys.stderr.isatty())
    return open_index(root, embedder)
