"""Papers held on disk once a corpus outgrows memory: the spill table behind `load_papers`.

Why: a million arXiv records held as `Paper` objects cost ~2.4 GB, mostly their text. Deduplication
only needs each paper's identity keys in memory (identity.py keeps them); the papers themselves go to
a private SQLite database that SQLite puts in its temporary folder (`SQLITE_TMPDIR`, else `TMPDIR`,
else /var/tmp) and unlinks as soon as it is open, so even a killed build leaves nothing behind. The build then
reads them back in order, a page at a time, through `StoredPapers`, a read-only `Sequence[Paper]`.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import overload

from ..papers import Paper

PAGE = 1024  # rows written or read at a time
_FIELDS = tuple(f.name for f in dataclasses.fields(Paper))
_TUPLES = tuple(i for i, f in enumerate(dataclasses.fields(Paper)) if f.default == ())  # JSON lists back to tuples


def _encode(paper: Paper) -> str:
    return json.dumps([getattr(paper, name) for name in _FIELDS], ensure_ascii=False)


def _decode(record: str) -> Paper:
    values = json.loads(record)
    for i in _TUPLES:
        values[i] = tuple(values[i])
    return Paper(*values)


class PaperStore:
    """Papers by position, appended and replaced (a merge) while a corpus is read; the newest page is
    buffered in memory, so a run of appends costs one INSERT per page."""

    def __init__(self) -> None:
        # "": a private on-disk database that SQLite deletes on close; its cache is capped, the rest is on disk
        self._db = sqlite3.connect("", check_same_thread=False)
        self._db.execute("PRAGMA cache_size=-16000")  # 16 MB of pages
        self._db.execute("CREATE TABLE papers (pos INTEGER PRIMARY KEY, record TEXT NOT NULL)")
        self._lock = threading.Lock()  # the build may read from another thread than the one that loaded
        self._written = 0
        self._pending: list[Paper] = []

    def __len__(self) -> int:
        return self._written + len(self._pending)

    def append(self, paper: Paper) -> None:
        self._pending.append(paper)
        if len(self._pending) >= PAGE:
            self.flush()

    def extend(self, papers: Sequence[Paper]) -> None:
        for paper in papers:
            self.append(paper)

    def flush(self) -> None:
        with self._lock, self._db:
            self._db.executemany("INSERT INTO papers VALUES (?,?)",
                                 ((self._written + i, _encode(p)) for i, p in enumerate(self._pending)))
        self._written += len(self._pending)
        self._pending.clear()

    def __getitem__(self, pos: int) -> Paper:
        if pos >= self._written:
            return self._pending[pos - self._written]
        with self._lock:
            row = self._db.execute("SELECT record FROM papers WHERE pos = ?", (pos,)).fetchone()
        return _decode(row[0])

    def __setitem__(self, pos: int, paper: Paper) -> None:
        if pos >= self._written:
            self._pending[pos - self._written] = paper
            return
        with self._lock, self._db:
            self._db.execute("UPDATE papers SET record = ? WHERE pos = ?", (_encode(paper), pos))

    def read(self, lo: int, hi: int) -> Iterator[Paper]:
        """Papers lo..hi-1 in order, one page of them decoded at a time."""
        self.flush()
        for start in range(lo, hi, PAGE):
            with self._lock:
                rows = self._db.execute("SELECT record FROM papers WHERE pos >= ? AND pos < ? ORDER BY pos",
                                        (start, min(hi, start + PAGE))).fetchall()
            yield from (_decode(record) for (record,) in rows)

    def page_bytes(self) -> int:
        """Bytes of the on-disk table (what the store holds outside the process's memory)."""
        self.flush()
        with self._lock:
            pages, size = (self._db.execute(f"PRAGMA {name}").fetchone()[0] for name in ("page_count", "page_size"))
        return pages * size

    def close(self) -> None:
        with self._lock:
            self._db.close()


class StoredPapers(Sequence[Paper]):
    """A read-only run of a `PaperStore` as a `Sequence[Paper]`, references to merged-away ids pointed at the
    ids kept (`aliases`). Slices are views, so `papers[:limit]` or `papers[kept:]` copies nothing; walking
    positions in order reads a page a query, a jump reads one row."""

    def __init__(self, store: PaperStore, aliases: Mapping[str, str], lo: int = 0, hi: int | None = None) -> None:
        self.store, self.aliases = store, aliases
        self.lo, self.hi = lo, len(store) if hi is None else hi
        self._page: tuple[int, list[Paper]] = (self.lo, [])  # (first position, papers) last read

    def __len__(self) -> int:
        return self.hi - self.lo

    def __iter__(self) -> Iterator[Paper]:
        return (pointed(p, self.aliases) for p in self.store.read(self.lo, self.hi))

    @overload
    def __getitem__(self, index: int) -> Paper: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Paper]: ...

    def __getitem__(self, index: int | slice) -> Paper | Sequence[Paper]:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step != 1:
                return [self[i] for i in range(start, stop, step)]
            return StoredPapers(self.store, self.aliases, self.lo + start, self.lo + max(start, stop))
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("paper index out of range")
        pos = self.lo + index
        first, page = self._page
        if first <= pos < first + len(page):
            return pointed(page[pos - first], self.aliases)
        if pos != first + len(page):  # a jump: one row, so that random picks decode no pages
            self._page = (pos, [self.store[pos]])
        else:  # the next position of an in-order walk: the page that follows
            self._page = (pos, list(self.store.read(pos, min(pos + PAGE, self.hi))))
        return pointed(self._page[1][0], self.aliases)


def pointed(paper: Paper, aliases: Mapping[str, str]) -> Paper:
    """`paper` with references to merged-away ids pointed at the ids kept (each once, in order)."""
    if not aliases or not paper.references or not any(ref in aliases for ref in paper.references):
        return paper
    return dataclasses.replace(paper, references=tuple(dict.fromkeys(aliases.get(r, r) for r in paper.references)))
