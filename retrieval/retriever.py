"""Chunk or text → nearest indexed papers: the one retriever every consumer goes through.

It runs the first stage of `hybrid.py` (dense, lexical or hybrid: `mode`, default hybrid) under
the user's `publishedBefore` restriction (`before`), and caches every vector and neighbour list by
text hash: fast-tier diagnostics and the hover embed a chunk once per text and search it once per
(text, k, filter, mode), however often the user types elsewhere. On an index built before lexical
search existed it answers densely and says so once, naming the rebuild command.
"""

from __future__ import annotations

import copy
import dataclasses
import logging
import threading
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..hashing import text_hash
from ..lru import LRU
from ..index.ingest.markup import clean_title
from ..index.papers import Hit, SearchFilter
from ..index.store import parse_before
from ..types import Chunk
from . import hybrid
from .hybrid import DEFAULT_MODE, Fusion

log = logging.getLogger(__name__)


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
        return cls(p.id, clean_title(p.title), p.venue, p.year, round(hit.similarity, 4), p.url, p.authors[:8])

    @classmethod
    def from_json(cls, data: dict) -> "HitView":
        """Back from `to_json` (extra keys, such as SEC's provenance, are ignored)."""
        return cls(str(data.get("id", "")), str(data.get("title", "")), str(data.get("venue") or ""), data.get("year"),
                   float(data.get("similarity") or 0.0), str(data.get("url") or ""), tuple(data.get("authors") or ()))

    def to_json(self) -> dict:
        return {"id": self.id, "title": self.title, "venue": self.venue, "year": self.year,
                "similarity": self.similarity, "url": self.url, "authors": list(self.authors)}

    def label(self) -> str:
        where = " ".join(str(x) for x in (self.venue, self.year) if x)
        return f'"{self.title}"' + (f" ({where})" if where else "")


def _before_key(before: str) -> str:
    """An ISO date that orders `before` values: '2017' is '2017-01-01' (papers of 2016 and earlier)."""
    year, date = parse_before(before)
    return date or f"{year:04d}-01-01"


class Retriever:
    """Thread-safe neighbour lookup for chunks and texts over one open `VectorIndex`.

    `mode` and `before` are the `searchMode` and `publishedBefore` settings; `configure` changes
    them in place (cached lists are keyed by both, so none goes stale)."""

    def __init__(self, index, mode: str = DEFAULT_MODE, before: str | None = None, cache_size: int = 20_000,
                 warn: Callable[[str], None] | None = None, fusion: Fusion = Fusion()):
        self.index = index
        self.fusion = fusion
        self.configure(mode, before)
        self._vectors = LRU(cache_size)
        self._neighbours = LRU(cache_size)
        self._lock = threading.Lock()
        self._warn = warn or log.warning
        self._warned = False
        self._embedded = [0]  # shared with `scoped` views, so the count is of all of them

    @property
    def embedded(self) -> int:
        """Chunks embedded so far, by this retriever and its scoped views: tests and the bench read it."""
        return self._embedded[0]

    def configure(self, mode: str = DEFAULT_MODE, before: str | None = None) -> None:
        """Set the search mode and the published-before date; a ValueError names a bad one. "auto" is
        no date here: the engine scopes each project's run to the date its draft gives (`scoped`)."""
        hybrid.check_mode(mode)
        if before == "auto":
            before = None
        if before:
            parse_before(before)
        self.mode, self.before = mode, (before or None)

    def scoped(self, before: str | None) -> "Retriever":
        """This retriever with the published-before date `before` ("" for none): itself when that is its
        own date, or for "auto" (no date resolved for this run), else a view sharing its caches (keyed
        by the date, so none goes stale) and lock, so one project's old draft does not date another's
        evidence."""
        if before == "auto" or (before or None) == self.before:
            return self
        view = copy.copy(self)
        view.configure(self.mode, before)
        return view

    @property
    def notice(self) -> str | None:
        """Why this retriever answers densely although asked for words too (an index too old), or None."""
        return self.index.lexical_problem if self.mode != "dense" else None

    def mode_for(self, mode: str | None = None) -> str:
        """The mode a search runs in: `mode` or the configured one, dense on an index without BM25."""
        mode = hybrid.check_mode(mode or self.mode)
        if mode != "dense" and not self.index.has_lexical:
            with self._lock:
                warn, self._warned = not self._warned, True
            if warn:
                self._warn(self.index.lexical_problem)
            return "dense"
        return mode

    def filter(self, flt: SearchFilter | None = None) -> SearchFilter | None:
        """`flt` restricted to papers published before `before` (the earlier date wins)."""
        if not self.before:
            return flt
        if flt is None:
            return SearchFilter(before=self.before)
        if flt.before and _before_key(flt.before) <= _before_key(self.before):
            return flt
        return dataclasses.replace(flt, before=self.before)

    def vectors(self, texts: Sequence[str], hashes: Sequence[str]) -> list[np.ndarray]:
        with self._lock:
            missing = [(t, h) for t, h in zip(texts, hashes) if h not in self._vectors]
        if missing:
            unique = dict((h, t) for t, h in missing)
            vecs = self.index.embed(list(unique.values()))
            with self._lock:
                for h, v in zip(unique, vecs):
                    self._vectors.put(h, v)
                self._embedded[0] += len(unique)
        with self._lock:
            return [self._vectors[h] for h in hashes]

    def neighbours(self, chunks: Sequence[Chunk], k: int, flt: SearchFilter | None = None,
                   mode: str | None = None) -> dict[str, list[Hit]]:
        """Top-k papers for each chunk, keyed by chunk hash."""
        mode, flt = self.mode_for(mode), self.filter(flt)
        key_of = {c.hash: (c.hash, k, flt, mode) for c in chunks}
        with self._lock:
            todo = [c for c in chunks if key_of[c.hash] not in self._neighbours]
        if todo:
            vecs = self.vectors([c.text for c in todo], [c.hash for c in todo])
            results = hybrid.search_many(self.index, np.stack(vecs), [c.text for c in todo], k, flt, mode, self.fusion)
            found = {c.hash: hits for c, hits in zip(todo, results)}
            with self._lock:
                for h, hits in found.items():
                    self._neighbours.put(key_of[h], hits)
        with self._lock:
            return {c.hash: self._neighbours[key_of[c.hash]] for c in chunks}

    def search(self, vector: np.ndarray, text: str, k: int, flt: SearchFilter | None = None,
               mode: str | None = None, fusion: Fusion | None = None) -> list[Hit]:
        """Top-k papers for a query given as its vector and its text (uncached)."""
        return hybrid.search(self.index, vector, text, k, self.filter(flt), self.mode_for(mode), fusion or self.fusion)

    def search_text(self, text: str, k: int, flt: SearchFilter | None = None, mode: str | None = None) -> list[Hit]:
        """Top-k papers for a text someone typed (its vector is cached by text hash); a paper's own title
        finds that paper first (`hybrid.title_first`)."""
        vector = self.vectors([text], [text_hash(text)])[0]
        return hybrid.title_first(self.index, vector, text, self.search(vector, text, k, flt, mode), k, self.filter(flt))


def retriever_of(retriever_or_index) -> Retriever:
    """A `Retriever` as given, or a default one over a bare index (for callers that hold only an index)."""
    return retriever_or_index if isinstance(retriever_or_index, Retriever) else Retriever(retriever_or_index)
