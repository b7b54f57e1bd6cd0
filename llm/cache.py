"""A persistent answer cache in front of any LLM backend, so an unchanged chunk costs nothing.

Keys are the SHA-256 of a canonical JSON of (operation, backend, model, prompt, parameters):
change the temperature, the seed, the schema or the model and the key changes with it.
Values are JSON.  SQLite in WAL mode, one connection per thread; a file that SQLite cannot
read is moved aside (``llm.sqlite.corrupt-<time>``) with a warning and a fresh one started.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, Sequence

from ..locations import cache_root
from .base import LLM, ChoiceScores, GenerateParams, LLMUnavailable, LLMWrapper, LogLik

log = logging.getLogger(__name__)

CACHE_FILE = "llm.sqlite"
KEY_VERSION = 1  # bump when a backend changes how it computes answers (e.g. score's method)
SCHEMA = "CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, value TEXT NOT NULL, created REAL NOT NULL)"


def cache_key(**parts: Any) -> str:
    canonical = json.dumps(parts, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class AnswerCache:
    """key -> JSON value in SQLite; every failure degrades to a cache miss, never an exception."""

    def __init__(self, path: str | os.PathLike[str] | None = None):
        self.path = Path(path) if path is not None else cache_root() / CACHE_FILE
        self._local = threading.local()
        self._lock = threading.Lock()  # guards opening / moving the file aside
        self._generation = 0  # bumped when the file is replaced, so threads reconnect
        self._broken = False
        self._open_checked()

    # -- connections -------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=10.0, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute(SCHEMA)
        conn.commit()
        return conn

    def _open_checked(self) -> None:
        with self._lock:
            try:
                conn = self._connect()
                conn.execute("SELECT count(*) FROM answers").fetchone()
                conn.close()
            except sqlite3.DatabaseError as exc:
                self._move_aside(exc)
            except OSError as exc:
                log.warning("LLM cache disabled: cannot create %s (%s); set PEERLINT_CACHE_DIR", self.path, exc)
                self._broken = True

    def _move_aside(self, exc: Exception) -> None:
        """Called with `_lock` held: rename the unreadable file and its WAL files, start fresh."""
        aside = self.path.with_name(f"{self.path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
        log.warning("LLM cache %s is unreadable (%s); moved it to %s and started a fresh one", self.path, exc, aside)
        try:
            if self.path.exists():
                os.replace(self.path, aside)
            for suffix in ("-wal", "-shm"):
                extra = self.path.with_name(self.path.name + suffix)
                if extra.exists():
                    os.replace(extra, aside.with_name(aside.name + suffix))
            self._generation += 1
            conn = self._connect()
            conn.close()
        except (OSError, sqlite3.DatabaseError) as again:
            log.warning("LLM cache disabled: could not recreate %s (%s)", self.path, again)
            self._broken = True

    def _conn(self) -> sqlite3.Connection | None:
        if self._broken:
            return None
        local = self._local
        if getattr(local, "generation", None) != self._generation:
            if getattr(local, "conn", None) is not None:
                local.conn.close()
            local.conn = self._connect()
            local.generation = self._generation
        return local.conn

    def _recover(self, exc: sqlite3.DatabaseError) -> None:
        with self._lock:
            if not self._broken:
                self._move_aside(exc)

    # -- public --------------------------------------------------------------------------------

    def get(self, key: str) -> Any | None:
        try:
            conn = self._conn()
            if conn is None:
                return None
            row = conn.execute("SELECT value FROM answers WHERE key = ?", (key,)).fetchone()
            return json.loads(row[0]) if row else None
        except sqlite3.OperationalError as exc:  # locked for too long, disk full: just a miss
            log.warning("LLM cache read failed (%s); treating as a miss", exc)
            return None
        except (sqlite3.DatabaseError, ValueError) as exc:
            self._recover(exc if isinstance(exc, sqlite3.DatabaseError) else sqlite3.DatabaseError(str(exc)))
            return None

    def put(self, key: str, value: Any) -> None:
        try:
            conn = self._conn()
            if conn is None:
                return
            with conn:
                conn.execute(
                    "INSERT OR REPLACE INTO answers (key, value, created) VALUES (?, ?, ?)",
                    (key, json.dumps(value), time.time()),
                )
        except sqlite3.OperationalError as exc:
            log.warning("LLM cache write failed (%s); answer not cached", exc)
        except sqlite3.DatabaseError as exc:
            self._recover(exc)

    def __len__(self) -> int:
        conn = self._conn()
        return conn.execute("SELECT count(*) FROM answers").fetchone()[0] if conn else 0

    def close(self) -> None:
        """Close this thread's connection (others close when their threads end)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
            self._local.generation = None


class CachedLLM(LLMWrapper):
    """The `LLM` protocol around any backend; answers come from the cache when the key matches."""

    def __init__(self, inner: LLM, cache: AnswerCache | None = None, cache_dir: str | os.PathLike[str] | None = None):
        super().__init__(inner)
        self.cache = cache or AnswerCache(Path(cache_dir) / CACHE_FILE if cache_dir is not None else None)

    def _key(self, op: str, prompt: str, **params: Any) -> str:
        return cache_key(v=KEY_VERSION, op=op, backend=self.inner.name, model=self.inner.model, prompt=prompt, params=params)

    def generate(self, prompt: str, params: GenerateParams = GenerateParams()) -> str:
        key = self._key("generate", prompt, **asdict(params))
        hit = self.cache.get(key)
        if isinstance(hit, str):
            return hit
        text = self.inner.generate(prompt, params)
        self.cache.put(key, text)
        return text

    def score(self, prompt: str, choices: Sequence[str], system: str | None = None) -> ChoiceScores:
        key = self._key("score", prompt, choices=list(choices), system=system)
        hit = self.cache.get(key)
        if isinstance(hit, dict) and hit.get("choices") == list(choices):
            return ChoiceScores(tuple(hit["choices"]), tuple(hit["probs"]), tuple(hit["logprobs"]))
        scores = self.inner.score(prompt, choices, system)
        self.cache.put(
            key, {"choices": list(scores.choices), "probs": list(scores.probs), "logprobs": list(scores.logprobs)}
        )
        return scores

    def loglik(self, prompt: str, text: str) -> LogLik:
        """The backend's text log-likelihood; backends without prompt scoring (Ollama) raise LLMUnavailable."""
        inner = getattr(self.inner, "loglik", None)
        if inner is None:
            raise LLMUnavailable(f"the {self.inner.name} backend cannot score a given text's likelihood: use --backend embedded")
        key = self._key("loglik", prompt, text=text)
        hit = self.cache.get(key)
        if isinstance(hit, dict) and "total" in hit:
            return LogLik(float(hit["total"]), int(hit["n_tokens"]))
        result = inner(prompt, text)
        self.cache.put(key, asdict(result))
        return result
