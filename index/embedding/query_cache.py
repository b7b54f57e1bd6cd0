"""Vectors of the user's own text, kept across processes, so checking a file again loads no model.

`peerlint check` of a real paper spends nearly all its time loading the embedding model and
embedding the draft's chunks; the second check of an unchanged paragraph should cost neither.
Vectors are stored exactly (float32) under (model id, text hash): a cached vector gives the
same neighbours, to the last digit, as a fresh one.  The file is pruned to the most recently
used rows, so it never grows without bound.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from ...hashing import text_hash

log = logging.getLogger(__name__)

MAX_ROWS = 100_000  # ~160 MB of 384-d float32 vectors
# the file under the cache directory; renamed when a route's vectors change (v2: int8 embeds one text
# per run, where v1's int8 vectors moved with their batch neighbours)
FILE_NAME = "query-vectors-v2.sqlite"


class PersistentEmbedder:
    """Wraps an `Embedder`: `encode` reads and fills a SQLite cache; everything else is the embedder's own."""

    def __init__(self, inner, path: Path, max_rows: int = MAX_ROWS):
        self.inner = inner
        self.path = path
        self.max_rows = max_rows
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = self._open(path)
        except (OSError, sqlite3.DatabaseError) as exc:
            log.warning("query vector cache %s cannot be used (%s); embedding without it", path, exc)

    @staticmethod
    def _open(path: Path) -> sqlite3.Connection:
        db = sqlite3.connect(path, check_same_thread=False, timeout=5)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("CREATE TABLE IF NOT EXISTS q (model TEXT, hash TEXT, v BLOB, used REAL, PRIMARY KEY (model, hash))")
        return db

    def __getattr__(self, name: str):
        return getattr(self.inner, name)

    def encode(self, texts: Sequence[str], progress: Callable[[int], None] | None = None) -> np.ndarray:
        hashes = [text_hash(t) for t in texts]
        found = self._get(hashes)
        todo = list(dict.fromkeys(h for h in hashes if h not in found))
        if todo:
            first = {h: i for i, h in reversed(list(enumerate(hashes)))}
            fresh = self.inner.encode([texts[first[h]] for h in todo], progress=progress)
            found.update(zip(todo, np.asarray(fresh, dtype=np.float32)))
            self._put({h: found[h] for h in todo})
        return np.stack([found[h] for h in hashes]) if hashes else np.zeros((0, 0), np.float32)

    def _get(self, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        if self._db is None or not hashes:
            return {}
        model, found = self.inner.model_id, {}
        unique = list(dict.fromkeys(hashes))
        try:
            with self._lock:
                for i in range(0, len(unique), 500):
                    part = unique[i:i + 500]
                    marks = ",".join("?" * len(part))
                    rows = self._db.execute(f"SELECT hash, v FROM q WHERE model = ? AND hash IN ({marks})",
                                            (model, *part)).fetchall()
                    found.update((h, np.frombuffer(v, dtype=np.float32)) for h, v in rows)
                    with self._db:
                        self._db.execute(f"UPDATE q SET used = ? WHERE model = ? AND hash IN ({marks})",
                                         (time.time(), model, *part))
        except sqlite3.Error as exc:
            log.warning("query vector cache %s: %s; embedding instead", self.path, exc)
            return {}
        return found

    def _put(self, vectors: dict[str, np.ndarray]) -> None:
        if self._db is None:
            return
        now, model = time.time(), self.inner.model_id
        try:
            with self._lock, self._db:
                self._db.executemany("INSERT OR REPLACE INTO q VALUES (?,?,?,?)",
                                     [(model, h, v.astype(np.float32).tobytes(), now) for h, v in vectors.items()])
                (rows,) = self._db.execute("SELECT COUNT(*) FROM q").fetchone()
                if rows > self.max_rows:
                    self._db.execute("DELETE FROM q WHERE rowid IN (SELECT rowid FROM q ORDER BY used LIMIT ?)",
                                     (rows - self.max_rows,))
        except sqlite3.Error as exc:
            log.warning("query vector cache %s: %s; vectors not kept", self.path, exc)
