"""Where peerlint keeps what it makes on a user's machine: one answer for every layer.

The cache (exported query models, verified judges, trained heads, LLM answers, judgments, the server
log) is `$PEERLINT_CACHE_DIR`, else `$XDG_CACHE_HOME/peerlint`, else `~/.cache/peerlint`: everything
in it can be made again. What is made for one index build (the novelty lexicon and model, venue heads
and their calibration) carries the build's name in its file name, one folder below the root, so that
`forget_build` can delete it when the index drops that build.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """`$PEERLINT_CACHE_DIR`, else `$XDG_CACHE_HOME/peerlint`, else `~/.cache/peerlint`."""
    if env := os.environ.get("PEERLINT_CACHE_DIR"):
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "peerlint"


def forget_build(name: str, root: Path | None = None) -> list[Path]:
    """Delete the cache files made for index build `name` (a folder name such as `20261129T203700-cfeb5a`,
    which no other build shares): an index calls this for each old build it deletes. A file that cannot
    be deleted is left where it is."""
    root = cache_root() if root is None else root
    gone = []
    if not name or "/" in name or "*" in name:
        return gone
    try:
        found = sorted(root.glob(f"*/*{name}*"))
    except OSError:
        return gone
    for path in found:
        try:
            if path.is_file():
                path.unlink()
                gone.append(path)
        except OSError:
            pass
    return gone
