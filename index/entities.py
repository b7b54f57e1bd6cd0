"""Entities of every indexed paper, extracted once per build, for SciPIP's entity retrieval.

SciPIP (Section 3.1) stores a paper-entity graph beside its embeddings. Here a paper's entities
are its author keywords when the corpus has them, else the phrases of a light keyphrase
extractor (stopword-split candidates of 1-3 words scored by frequency): no LLM, no new
dependency. Both sides are normalised the same way (lower case, hyphens as spaces, a crude
plural stemmer), so "Recommender-Systems" and "recommender system" meet.

Storage: ``entities.sqlite`` in the build directory, written by `build_index` before the build
goes live, or, for an index built before this module existed, computed on first use and put in
place with an atomic rename. A wrong version is recomputed the same way.
"""

from __future__ import annotations

import functools
import heapq
import json
import os
import re
import sqlite3
import sys
import threading
from collections import Counter
from pathlib import Path
from typing import Iterable, Iterator, Sequence

import numpy as np

from .papers import Paper
from .progress import Progress

VERSION = "2"  # bump when extraction or normalisation changes: stored tables are then recomputed
FILE = "entities.sqlite"
MAX_KEYWORD_WORDS = 6  # longer "keywords" are sentences, not entities
EXTRACTED_PER_PAPER = 8
MAX_NGRAM = 4  # longest phrase looked up in the vocabulary when linking a query's text

STOPWORDS = frozenset("""
a about above across after again against all almost along already also although always am among an and
another any anyone anything are around as at be became because become becomes been before being below
between both but by can cannot could did do does doing done down during each either else enough etc even
ever every few for from further had has have having he her here hers him his how however i if in into is
it its itself just least less many may me might more most much must my neither no nor not now of off
often on once one only onto or other others otherwise our ours out over own per perhaps quite rather
really same several shall she should since so some such than that the their theirs them then there
therefore these they this those though through thus to together too toward towards under until up upon
us very via was we well were what whatever when where whereas whether which while who whom whose why
will with within without would yet you your
able according achieve achieves achieved address addresses allow allows apply applied approach approaches
based better case cases challenge challenges compared consider considered demonstrate demonstrates
describe describes different due effective effectively existing experiment experiments explore explores
find findings first focus found furthermore given good high however important improve improved improves
including increase increasingly introduce introduces key large lead leads make makes method methods
moreover need needs new novel obtain obtained order paper papers particular particularly perform performance
performed present presents presented previous problem problems propose proposed proposes provide provides
recent recently related research respectively result results second set show showed shown shows significant
significantly simple specific state study studies studied suggest support task tasks three two type
types use used uses using various way ways whole work works""".split())

WORDS_REMEMBERED = 1 << 20  # distinct words whose stems are kept (~100 MB at most)
_SEGMENT = re.compile(r"[.,;:!?()\[\]{}\"“”‘’/|\n]+")
_TOKEN = re.compile(r"[a-z0-9]+")


@functools.lru_cache(maxsize=WORDS_REMEMBERED)
def _stem(word: str) -> str:
    """A plural-only stemmer: enough for keyword matching, and the same on both sides (remembered:
    a corpus repeats a few hundred thousand words tens of millions of times)."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("sses", "xes", "ches", "shes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _tokens(text: str) -> list[str]:
    return [_stem(t) for t in _TOKEN.findall(text.lower())]


def normalise(phrase: str) -> str:
    """The form entities are stored and matched in: 'Recommender-Systems' -> 'recommender system'."""
    return " ".join(_tokens(phrase))


def _segments(text: str) -> list[list[str]]:
    """Token lists of the text's punctuation-free stretches (phrases never cross punctuation)."""
    return [toks for seg in _SEGMENT.split(text.lower()) if (toks := _TOKEN.findall(seg))]


_PIECE = re.compile(f"({_TOKEN.pattern})|{_SEGMENT.pattern}")  # a word, or punctuation (read as "")
_BONUS = {1: 1.0, 2: 2.0, 3: 2.5}  # a phrase's score: its count times this, by its length in words


def _content(token: str) -> bool:
    return len(token) > 1 and not token.isdigit() and token not in STOPWORDS


@functools.lru_cache(maxsize=WORDS_REMEMBERED)
def _content_stem(token: str) -> str:
    """A content word's stem; "" for a stopword, a number, a single letter or punctuation."""
    return _stem(token) if _content(token) else ""


def extract_keyphrases(text: str, n: int = EXTRACTED_PER_PAPER) -> list[str]:
    """The text's `n` best phrases: runs of content words cut at stopwords and punctuation, 1-3 words,
    by frequency.

    A phrase scores its count times a bonus for length (specific phrases beat single words), ties
    going to the longer phrase, then to the earlier; a phrase inside a phrase already chosen is
    skipped. The n-grams are counted by `Counter` over the whole text (those crossing a break, which
    hold "", are dropped when their turn comes) and walked in rank order lazily, since a handful of
    the best are all that is read: a build extracts the phrases of every paper without keywords.
    """
    if n <= 0:
        return []
    stems = list(map(_content_stem, _PIECE.findall(text.lower())))  # "" breaks a phrase
    ones = Counter(zip(stems))
    ranked = heapq.merge(_ranked(Counter(zip(stems, stems[1:], stems[2:])), 3),
                         _ranked(Counter(zip(stems, stems[1:])), 2), _ranked(ones, 1))
    chosen: list[tuple[str, ...]] = []
    inside: set[tuple[str, ...]] = set()  # every part of a chosen phrase
    for _, gram in ranked:
        if gram in inside:
            continue
        if len(gram) == 1 and (ones[gram] < 2 or _participle(gram[0])):
            continue  # a word seen once, or a verb form, says little about a paper
        chosen.append(gram)
        if len(chosen) == n:
            break
        inside.update(gram[i:j] for i in range(len(gram)) for j in range(i + 1, len(gram) + 1))
    return [" ".join(g) for g in chosen]


def _ranked(counts: Counter, length: int) -> Iterator[tuple[tuple[float, int], tuple[str, ...]]]:
    """((-score, -length), n-gram) of the n-grams of one length that hold no break, best first; a
    stable sort keeps equal counts in text order (a Counter keeps first occurrences in order)."""
    bonus = _BONUS[length]
    for gram in sorted(counts, key=counts.__getitem__, reverse=True):
        if "" not in gram:
            yield (-counts[gram] * bonus, -length), gram


def _participle(word: str) -> bool:
    return len(word) > 5 and word.endswith("ed") and not word.endswith("eed")


def paper_entities(paper: Paper) -> list[str]:
    """Normalised entities of a paper: its keywords when it has any, else extracted keyphrases."""
    keywords = [normalise(k) for k in paper.keywords]
    keywords = [k for k in keywords if k and len(k.split()) <= MAX_KEYWORD_WORDS]
    found = keywords or extract_keyphrases(paper.text)
    return list(dict.fromkeys(found))


def _gather(ptr: np.ndarray, values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Concatenated CSR rows, without a Python loop over them."""
    rows = np.asarray(rows, dtype=np.int64)
    if len(rows) == 0:
        return values[:0]
    starts = ptr[rows]
    lens = ptr[rows + 1] - starts
    total = int(lens.sum())
    if total == 0:
        return values[:0]
    offsets = np.repeat(starts - np.cumsum(lens) + lens, lens) + np.arange(total)
    return values[offsets]


class EntityTable:
    """Entity postings of one build: entity -> papers, paper -> entities (CSR arrays), and df."""

    def __init__(self, texts: Sequence[str], paper_ptr: np.ndarray, paper_ent: np.ndarray, longest: int | None = None):
        self.texts = list(texts)
        self.id_of = dict(zip(self.texts, range(len(self.texts))))
        self.paper_ptr = np.asarray(paper_ptr, dtype=np.int64)
        self.paper_ent = np.asarray(paper_ent, dtype=np.int32)
        order = np.argsort(self.paper_ent, kind="stable")
        papers_of_row = np.repeat(np.arange(len(self.paper_ptr) - 1, dtype=np.int32), np.diff(self.paper_ptr))
        self.post_papers = papers_of_row[order]
        self.post_ptr = np.zeros(len(self.texts) + 1, dtype=np.int64)
        np.cumsum(np.bincount(self.paper_ent, minlength=len(self.texts)), out=self.post_ptr[1:])
        self.df = np.diff(self.post_ptr)
        self._longest = longest or max((t.count(" ") + 1 for t in self.texts), default=1)  # words

    @classmethod
    def from_lists(cls, per_paper: Sequence[Sequence[str]]) -> "EntityTable":
        id_of: dict[str, int] = {}
        ptr = np.zeros(len(per_paper) + 1, dtype=np.int64)
        flat: list[int] = []
        for i, ents in enumerate(per_paper):
            for e in ents:
                flat.append(id_of.setdefault(e, len(id_of)))
            ptr[i + 1] = len(flat)
        return cls(list(id_of), ptr, np.array(flat, dtype=np.int32))

    @property
    def papers(self) -> int:
        return len(self.paper_ptr) - 1

    def entities_of(self, paper_idx: int) -> np.ndarray:
        return self.paper_ent[self.paper_ptr[paper_idx] : self.paper_ptr[paper_idx + 1]]

    def papers_of(self, entity_ids: Iterable[int]) -> np.ndarray:
        return _gather(self.post_ptr, self.post_papers, np.fromiter(entity_ids, dtype=np.int64))

    def entities_of_papers(self, paper_idxs: Iterable[int]) -> np.ndarray:
        return _gather(self.paper_ptr, self.paper_ent, np.fromiter(paper_idxs, dtype=np.int64))

    def link(self, text: str, extracted: int = EXTRACTED_PER_PAPER) -> list[int]:
        """Entity ids a free text mentions: its extracted keyphrases, and every vocabulary phrase of
        two or more words in it (single vocabulary words are linked only when extracted: a word an
        extractor once picked from some abstract is too often just a word)."""
        found: dict[int, None] = {}
        for phrase in extract_keyphrases(text, extracted):
            if phrase in self.id_of:
                found[self.id_of[phrase]] = None
        longest = min(MAX_NGRAM, self._longest)
        for seg in _segments(text):
            toks = [_stem(t) for t in seg]
            for size in range(2, longest + 1):
                for i in range(len(toks) - size + 1):
                    if not (_content(seg[i]) and _content(seg[i + size - 1])):
                        continue  # a phrase neither starts nor ends with a stopword
                    eid = self.id_of.get(" ".join(toks[i : i + size]))
                    if eid is not None:
                        found[eid] = None
        return list(found)


# -- storage -------------------------------------------------------------------------------
def write_entities(build: Path, papers: Sequence[Paper] | None = None, per_paper: Sequence[Sequence[str]] | None = None,
                   show_progress: bool = False, position: int = 0) -> EntityTable:
    """Extract (unless given) and store the entities of a build's papers; atomic (temp file + rename).
    `position` is the progress bar's line, when another bar runs beside it."""
    if per_paper is None:
        per_paper = _extract_all(papers or (), show_progress, position)
    table = EntityTable.from_lists(per_paper)
    tmp = build / f"{FILE}.tmp{os.getpid()}-{threading.get_ident()}"
    tmp.unlink(missing_ok=True)
    db = sqlite3.connect(tmp)
    try:
        with db:
            db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
            db.execute("CREATE TABLE entity (id INTEGER PRIMARY KEY, text TEXT NOT NULL, df INTEGER NOT NULL)")
            # paper -> entity ids as two little-endian arrays: a 100k-paper index loads in milliseconds
            db.execute("CREATE TABLE postings (name TEXT PRIMARY KEY, data BLOB NOT NULL)")
            db.executemany("INSERT INTO meta VALUES (?,?)", [("version", VERSION), ("papers", str(table.papers)),
                                                            ("longest", str(table._longest))])
            db.executemany("INSERT INTO entity VALUES (?,?,?)",
                           [(i, t, int(d)) for i, (t, d) in enumerate(zip(table.texts, table.df))])
            db.executemany("INSERT INTO postings VALUES (?,?)",
                           [("paper_ptr", table.paper_ptr.astype("<i8").tobytes()),
                            ("paper_ent", table.paper_ent.astype("<i4").tobytes())])
            if not any("\n" in t for t in table.texts):  # the texts again, one blob: read 5x faster than rows
                db.execute("INSERT INTO postings VALUES (?,?)", ("texts", "\n".join(table.texts).encode()))
    finally:
        db.close()
    with open(tmp, "rb") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, build / FILE)
    return table


def _extract_all(papers: Sequence[Paper], show_progress: bool, position: int = 0) -> list[list[str]]:
    out: list[list[str]] = []
    with Progress("entities", total=len(papers), unit="paper", show=show_progress, position=position) as bar:
        for i, paper in enumerate(papers):
            out.append(paper_entities(paper))
            if i % 1000 == 999:
                bar.update(1000)
        bar.update(len(papers) % 1000)
    return out


def read_entities(build: Path, papers: int) -> EntityTable | None:
    """The stored table, or None when it is absent, of another version or of another paper count."""
    path = build / FILE
    if not path.exists():
        return None
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
            if meta.get("version") != VERSION or meta.get("papers") != str(papers):
                return None
            arrays = dict(db.execute("SELECT name, data FROM postings").fetchall())
            if "texts" in arrays:
                texts = arrays["texts"].decode().split("\n") if arrays["texts"] else []
            else:  # written before the blob was
                texts = [t for (t,) in db.execute("SELECT text FROM entity ORDER BY id")]
        finally:
            db.close()
        ptr = np.frombuffer(arrays["paper_ptr"], dtype="<i8")
        ents = np.frombuffer(arrays["paper_ent"], dtype="<i4")
    except (sqlite3.DatabaseError, KeyError, ValueError):
        return None
    if len(ptr) != papers + 1 or ptr[-1] != len(ents) or (len(ents) and ents.max() >= len(texts)):
        return None  # inconsistent: recomputed by the caller
    longest = meta.get("longest", "")
    return EntityTable(texts, ptr, ents, int(longest) if longest.isdigit() else None)


_loaded: dict[str, EntityTable] = {}
_lock = threading.Lock()


def entity_table(index) -> EntityTable:
    """The entity table of an open `VectorIndex`: read once per process, computed once per build."""
    key = str(index.build)
    with _lock:
        if key in _loaded:
            return _loaded[key]
        table = read_entities(index.build, len(index))
        if table is None:
            table = _compute_for(index)
        _loaded[key] = table
        return table


def _compute_for(index) -> EntityTable:
    """An index built before entities existed: extract them now (progress on stderr) and store them."""
    n = len(index)
    print(f"peerlint: extracting entities of {n:,} indexed papers (once per index build)", file=sys.stderr, flush=True)
    db = sqlite3.connect(f"file:{index.build / 'meta.sqlite'}?mode=ro", uri=True)
    try:
        rows = db.execute("SELECT title, abstract, keywords FROM papers ORDER BY idx").fetchall()
    finally:
        db.close()
    papers = [Paper(id="", title=title or "", abstract=abstract or "", keywords=tuple(json.loads(kw or "[]")))
              for title, abstract, kw in rows]
    per_paper = _extract_all(papers, show_progress=sys.stderr.isatty())
    try:
        return write_entities(index.build, per_paper=per_paper)
    except OSError as exc:  # a read-only index still gets entities, just not stored
        print(f"peerlint: warning: cannot store entities in {index.build} ({exc.strerror or exc}); "
              "they will be extracted again next time", file=sys.stderr)
        return EntityTable.from_lists(per_paper)
