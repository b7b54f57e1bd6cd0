"""Chunk vectors and chunk spans keyed by content, so a rebuild embeds (and tokenizes) only new text.

Keys are (model id, text hash) for vectors and (text hash, max tokens) for spans: the same
text always gets the same vector from the same model, whichever corpus or build it came from.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Sequence

import numpy as np

from .embedder import DIM


class EmbeddingCache:
    """Chunk vectors keyed by (model, text hash), so a rebuild embeds only new text."""

    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)  # a fresh cache folder has no sub-folders yet
        try:
            self.db = self._connect()
        except sqlite3.DatabaseError:
            if not path.exists():
                raise
            path.replace(path.with_suffix(".corrupt"))
            self.db = self._connect()

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("CREATE TABLE IF NOT EXISTS vec (model TEXT, hash TEXT, v BLOB, PRIMARY KEY (model, hash))")
        db.execute("CREATE TABLE IF NOT EXISTS spans (hash TEXT, max_tokens INTEGER, spans TEXT, PRIMARY KEY (hash, max_tokens))")
        return db

    def get_vectors(self, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        unique = list(dict.fromkeys(hashes))
        for i in range(0, len(unique), 500):
            part = unique[i : i + 500]
            rows = self.db.execute(
                f"SELECT hash, v FROM vec WHERE model = ? AND hash IN ({','.join('?' * len(part))})", (model, *part)
            ).fetchall()
            for h, blob in rows:
                vec = np.frombuffer(blob, dtype=np.float16)
                if vec.shape == (DIM,):
                    found[h] = vec.astype(np.float32)
        return found

    def put_vectors(self, model: str, items: dict[str, np.ndarray]) -> None:
        with self.db:
            self.db.executemany(
                "INSERT OR REPLACE INTO vec VALUES (?,?,?)",
                [(model, h, v.astype(np.float16).tobytes()) for h, v in items.items()],
            )

    def get_spans(self, hashes: Sequence[str], max_tokens: int) -> dict[str, list[tuple[int, int]]]:
        found: dict[str, list[tuple[int, int]]] = {}
        unique = list(dict.fromkeys(hashes))
        for i in range(0, len(unique), 500):
            part = unique[i : i + 500]
            rows = self.db.execute(
                f"SELECT hash, spans FROM spans WHERE max_tokens = ? AND hash IN ({','.join('?' * len(part))})",
                (max_tokens, *part),
            ).fetchall()
            found.update({h: [tuple(s) for s in json.loads(js)] for h, js in rows})
        return found

    def put_spans(self, items: dict[str, list[tuple[int, int]]], max_tokens: int) -> None:
        with self.db:
            self.db.executemany(
                "INSERT OR REPLACE INTO spans VALUES (?,?,?)",
                [(h, max_tokens, json.dumps(s)) for h, s in items.items()],
            )

    def close(self) -> None:
        self.db.close()
