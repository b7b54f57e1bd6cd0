"""Chunk → nearest indexed papers, with every vector and neighbour list cached by text hash.

Both fast-tier diagnostics and the hover read from here, so a chunk is embedded once per text
and searched once per (text, k, filter), however often the user types elsewhere.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ...index.papers import Hit, SearchFilter
from ..types import Chunk


@dataclass(frozen=True)
class HitView:
    """What a diagnostic carries about a retrieved paper: JSON-ready, enough to cite it."""

    id: str
    title: str
    venue: str
    year: int | None
    similarity: float
    url: str
    authors: tuple[str, ...]

    @classmethod
    def of(cls, hit: Hit) -> "HitView":
        p = hit.paper
        return cls(p.id, p.title, p.venue, p.year, round(hit.similarity, 4), p.url, p.authors[:8])

    def to_json(self) -> dict:
        return {"id": self.id, "title": self.title, "venue": self.venue, "year": self.year,
                "similarity": self.similarity, "url": self.url, "authors": list(self.authors)}

    def label(self) -> str:
        where = " ".join(str(x) for x in (self.venue, self.year) if x)
        return f'"{self.title}"' + (f" ({where})" if where else "")


class _LRU(OrderedDict):
    def __init__(self, size: int):
        super().__init__()
        self.size = size

    def put(self, key, value):
        self[key] = value
        self.move_to_end(key)
        while len(self) > self.size:
            self.popitem(last=False)


class Retriever:
    """Thread-safe neighbour lookup for chunks over one open `VectorIndex`."""

    def __init__(self, index, cache_size: int = 20_000):
        self.index = index
        self._vectors = _LRU(cache_size)
        self._neighbours = _LRU(cache_size)
        self._lock = threading.Lock()
        self.embedded = 0  # chunks embedded so far: tests and the bench read it

    def vectors(self, texts: Sequence[str], hashes: Sequence[str]) -> list[np.ndarray]:
        with self._lock:
            missing = [(t, h) for t, h in zip(texts, hashes) if h not in self._vectors]
        if missing:
            unique = dict((h, t) for t, h in missing)
            vecs = self.index.embed(list(unique.values()))
            with self._lock:
                for h, v in zip(unique, vecs):
                    self._vectors.put(h, v)
                self.embedded += len(unique)
        with self._lock:
            return [self._vectors[h] for h in hashes]

    def neighbours(self, chunks: Sequence[Chunk], k: int, flt: SearchFilter | None = None) -> dict[str, list[Hit]]:
        """Top-k papers for each chunk, keyed by chunk hash."""
        key_of = {c.hash: (c.hash, k, flt) for c in chunks}
        with self._lock:
            todo = [c for c in chunks if key_of[c.hash] not in self._neighbours]
        if todo:
            vecs = self.vectors([c.text for c in todo], [c.hash for c in todo])
            found = {c.hash: self.index.search_vector(v, k, flt) for c, v in zip(todo, vecs)}
            with self._lock:
                for h, hits in found.items():
                    self._neighbours.put(key_of[h], hits)
        with self._lock:
            return {c.hash: self._neighbours[key_of[c.hash]] for c in chunks}

    def search_text(self, text: str, k: int, flt: SearchFilter | None = None) -> list[Hit]:
        return self.index.search(text, k, flt)
