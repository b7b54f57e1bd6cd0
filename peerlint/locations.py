"""Where peerlint keeps what it makes on a user's machine: one answer for every layer.

The cache (exported query models, verified judges, trained heads, LLM answers, judgments, the server
log) is `$PEERLINT_CACHE_DIR`, else `$XDG_CACHE_HOME/peerlint`, else `~/.cache/peerlint`: everything
in it can be made again.
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
