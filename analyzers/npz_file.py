"""Small learned models on disk: arrays and a JSON header in one .npz, written atomically and read
back only when the header's version matches, so a stale or damaged file means "refit", not a crash."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any, Callable, Mapping, TypeVar

import numpy as np

T = TypeVar("T")


def save_npz(path: Path, header: dict[str, Any], arrays: Mapping[str, Any], header_key: str = "meta") -> None:
    """Write to a temporary file and rename it over `path`: readers never see half a model."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npz")
    np.savez(tmp, **arrays, **{header_key: np.array(json.dumps(header))})
    tmp.replace(path)


def load_npz(path: Path, version: int, build: Callable[[dict[str, Any], Any], T],
             header_key: str = "meta") -> T | None:
    """`build(header, arrays)` for a file of this `version`; None when the file is missing, of another
    version, or unreadable (including a `build` that finds a key missing or a value malformed)."""
    try:
        with np.load(path) as data:
            header = json.loads(str(data[header_key]))
            if header.get("version") != version:
                return None
            return build(header, data)
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return None
