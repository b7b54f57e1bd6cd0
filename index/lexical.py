"""BM25 over every indexed paper's title and abstract: an SQLite FTS5 table inside `meta.sqlite`.

Why FTS5 and not a BM25 library: the standard library's sqlite3 ships it, the table lives in the
build's own metadata database (so the same atomic build writes it and swaps it in, never out of
step with the vectors), and it answers from disk without loading a corpus into memory. Chunks are
spans of the paper's title and abstract, so indexing those two columns covers every chunk's text
without counting a word twice.

One function, `terms`, turns text into words for both sides (the table is contentless and fed
those words; FTS5's tokenizer only splits them at spaces): lower case, accents stripped, LaTeX
math, commands and the parser's placeholders dropped, stopwords dropped, plurals folded with the
entity extractor's stemmer. So user text never reaches FTS5's query syntax: a query is its terms,
each quoted, ORed; quotes, NEAR, `*`, `-`, `:`, parentheses and AND/OR/NOT are words or nothing.

Speed: FTS5 scores every document that matches any term, so a paragraph's 50 terms OR-ed over
97k abstracts cost ~0.5 s. A query keeps its `MAX_TERMS` terms of the highest query-frequency x
IDF (document frequency from the table's own vocabulary). Measured on ACM-CR (dev): BM25 R@50 at
paper level 0.289 on the 97k-paper corpus against 0.318 with every term and 0.201 keeping the
rarest terms instead; on a 12k sub-corpus 0.512, above every term's 0.491 (docs/benchmarks/retrieval.md).

Postings: FTS5's `bm25()` still costs 130-150 ms a query at 97k papers, because it scores every
matching row in SQL. So the same build also writes the table's postings as arrays beside
`meta.sqlite` (`lexical-*`: vocabulary, per-term document ids and weighted term frequencies,
document lengths; memory-mapped), and a query sums its terms' BM25 contributions with numpy.
The table stays the source of truth: postings that are missing or do not match the table's row
count (an index written by another version, an append in progress) mean FTS5 answers instead.
"""

from __future__ import annotations

import json
import math
from array import array
import re
import sqlite3
import threading
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import numpy as np

from .entities import _content_stem
from .npy_reader import NpyReader

TABLE = "lexical"
TITLE_WEIGHT = 2.0  # BM25 weight of a title match relative to an abstract match (FTS5 column weights)
MAX_TERMS = 24  # a query keeps this many distinct terms: those of the highest query-frequency x IDF
POSTINGS = "lexical"  # the prefix of the postings files beside meta.sqlite
K1, B = 1.2, 0.75  # FTS5's own BM25 constants
MAX_POSTINGS = 400_000_000  # ~4M abstracts (12 bytes each while building); beyond, FTS5 alone answers


def postings_file(folder: Path, name: str) -> Path:
    """One of a build's postings files (`name`: docs.npy, tf.npy, indptr.npy, lengths.npy,
    vocabulary.json, info.json)."""
    return folder / f"{POSTINGS}-{name}"


_MATH = re.compile(r"\$\$.*?\$\$|\$[^$]*\$|\\\(.*?\\\)|\\\[.*?\\\]", re.S)
_COMMAND = re.compile(r"\\[A-Za-z@]+\*?|\\.")
_PLACEHOLDER = re.compile(r"\[(?:math|cite|ref|url|code|dummy)\]")  # what the LaTeX parser leaves in chunk text
_WORD = re.compile(r"[^\W_]+")  # letters and digits of any script
_ASCII_WORD = re.compile(r"[a-z0-9]+")  # the same in lower-case ASCII text, found faster
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")


def _uncombined(run: re.Match) -> str:
    return "".join(ch for ch in run.group() if not unicodedata.combining(ch))


def terms(text: str) -> list[str]:
    """The content words of a text, in order, as the table stores them."""
    text = _PLACEHOLDER.sub(" ", _COMMAND.sub(" ", _MATH.sub(" ", text or "")))
    text = text.lower()
    if text.isascii():  # most abstracts: no accents to strip
        words = _ASCII_WORD.findall(text)
    else:  # accents stripped: combining marks dropped from the decomposed non-ASCII runs
        words = _WORD.findall(_NON_ASCII.sub(_uncombined, unicodedata.normalize("NFKD", text)))
    return list(filter(None, map(_content_stem, words)))  # "" for stopwords, numbers, letters


def title_phrase(text: str) -> str | None:
    """The FTS5 query for the titles that hold the terms of `text` as one phrase (stems without stopwords,
    as the table stores them); None when it has no term."""
    words = terms(text)
    return f'title : "{" ".join(words)}"' if words else None  # terms hold no double quote: no FTS5 syntax


def write_table(db: sqlite3.Connection, rows: Iterable[tuple[int, str, str]]) -> None:
    """Create and fill the BM25 table from (paper idx, title, abstract) rows, in the caller's transaction,
    and the postings arrays beside the database (when it is a file)."""
    db.execute(f"CREATE VIRTUAL TABLE {TABLE} USING fts5(title, abstract, content='', "
               "tokenize='unicode61 remove_diacritics 0')")
    postings = PostingsWriter()
    db.executemany(f"INSERT INTO {TABLE}(rowid, title, abstract) VALUES (?,?,?)", _tokenised(rows, postings))
    db.execute(f"INSERT INTO {TABLE}({TABLE}) VALUES ('optimize')")
    folder = database_folder(db)
    if folder is not None:
        postings.write(folder)


def append_rows(db: sqlite3.Connection, previous: Path, rows: Iterable[tuple[int, str, str]]) -> None:
    """Add (paper idx, title, abstract) rows to a copied table, in the caller's transaction, and write
    the postings of the previous build (`previous`) merged with theirs beside the database; without
    usable previous postings none are written and FTS5 answers the new build."""
    old_info = postings_file(previous, "info.json")
    try:
        old = Postings(previous) if old_info.exists() else None
    except (OSError, ValueError, KeyError, TypeError):
        old = None
    postings = PostingsWriter()
    if old is not None:
        postings.seed(old)
    db.executemany(f"INSERT INTO {TABLE}(rowid, title, abstract) VALUES (?,?,?)", _tokenised(rows, postings))
    folder = database_folder(db)
    if folder is not None:
        if old is None:
            postings.full = True  # only the new rows: not postings of the whole table
        postings.write(folder)


def _tokenised(rows: Iterable[tuple[int, str, str]], postings: "PostingsWriter") -> Iterator[tuple[int, str, str]]:
    """The table's rows as words (what FTS5 stores), each paper also added to `postings`."""
    for idx, title, abstract in rows:
        title_terms, abstract_terms = terms(title), terms(abstract)
        postings.add(idx, title_terms, abstract_terms)
        yield idx, " ".join(title_terms), " ".join(abstract_terms)


def database_folder(db: sqlite3.Connection) -> Path | None:
    """The folder of the connection's main database file (None in memory)."""
    row = next((r for r in db.execute("PRAGMA database_list") if r[1] == "main"), None)
    return Path(row[2]).parent if row and row[2] else None


class PostingsWriter:
    """Collects (term, paper, weighted tf) while the table is filled; writes them as term-sorted arrays.
    Past `MAX_POSTINGS` it gives up (12 bytes a posting while building) and FTS5 answers that index."""

    def __init__(self) -> None:
        self.term_ids: dict[str, int] = {}
        self.terms, self.docs, self.tfs = array("i"), array("i"), array("f")
        self.lengths: dict[int, float] = {}
        self.full = False

    def add(self, idx: int, title_terms: list[str], abstract_terms: list[str]) -> None:
        if self.full:
            return
        tf = Counter({t: TITLE_WEIGHT * n for t, n in Counter(title_terms).items()})
        tf.update(abstract_terms)
        self.lengths[idx] = TITLE_WEIGHT * len(title_terms) + len(abstract_terms)
        self.terms.extend(self.term_ids.setdefault(t, len(self.term_ids)) for t in tf)
        self.docs.extend([idx] * len(tf))
        self.tfs.extend(tf.values())
        if len(self.docs) > MAX_POSTINGS:
            self.full = True
            self.terms, self.docs, self.tfs = array("i"), array("i"), array("f")

    def seed(self, old: "Postings") -> None:
        """Start from a previous build's postings (an append adds papers after them)."""
        vocabulary = sorted(old.vocabulary, key=old.vocabulary.get)
        self.term_ids = {t: i for i, t in enumerate(vocabulary)}
        counts = np.diff(old.indptr)
        self.terms = array("i", np.repeat(np.arange(len(vocabulary), dtype=np.int32), counts).tobytes())
        self.docs = array("i", np.asarray(old.docs, dtype=np.int32).tobytes())
        self.tfs = array("f", np.asarray(old.tf, dtype=np.float32).tobytes())
        self.lengths = dict(enumerate(old.lengths.tolist()))

    def write(self, folder: Path) -> None:
        """The arrays as `lexical-*` files in `folder` (the build's), the info file last: it is what
        `Postings.open` checks, so a half-written set is never read."""
        info = postings_file(folder, "info.json")
        info.unlink(missing_ok=True)
        if self.full:
            return
        term = np.frombuffer(self.terms, dtype=np.int32)
        counts = np.bincount(term, minlength=len(self.term_ids))
        indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        _bucket_by_term(term, np.frombuffer(self.docs, dtype=np.int32), np.frombuffer(self.tfs, dtype=np.float32),
                        indptr, folder)
        n = max(self.lengths, default=-1) + 1
        lengths = np.zeros(n, dtype=np.float32)
        lengths[list(self.lengths)] = list(self.lengths.values())
        np.save(postings_file(folder, "indptr.npy"), indptr)
        np.save(postings_file(folder, "lengths.npy"), lengths)
        postings_file(folder, "vocabulary.json").write_text(json.dumps(list(self.term_ids)), encoding="utf-8")
        info.write_text(json.dumps({"papers": int(n), "k1": K1, "b": B, "title_weight": TITLE_WEIGHT}))


def _bucket_by_term(term: np.ndarray, docs: np.ndarray, tfs: np.ndarray, indptr: np.ndarray, folder: Path,
                    block: int = 1 << 24) -> None:
    """Write docs and tfs grouped by term (`indptr`'s order) straight into the memory-mapped files.

    Papers are added in increasing idx, so each term's postings arrive in doc order: a counting sort block
    by block keeps that order and needs a block's worth of scratch, not a full sort's (3M abstracts hold
    ~300M postings; a lexsort of them took 2.4 GB of indices alone)."""
    from numpy.lib.format import open_memmap

    out_docs = open_memmap(postings_file(folder, "docs.npy"), mode="w+", dtype=np.int32, shape=(len(term),))
    out_tf = open_memmap(postings_file(folder, "tf.npy"), mode="w+", dtype=np.float32, shape=(len(term),))
    cursor = indptr[:-1].copy()
    for lo in range(0, len(term), block):
        part = term[lo : lo + block]
        order = np.argsort(part, kind="stable")
        ranked = part[order]
        pos = cursor[ranked] + np.arange(len(ranked)) - np.searchsorted(ranked, ranked, side="left")
        out_docs[pos] = docs[lo : lo + block][order]
        out_tf[pos] = tfs[lo : lo + block][order]
        cursor += np.bincount(part, minlength=len(cursor))
    out_docs.flush()
    out_tf.flush()
    del out_docs, out_tf


class Postings:
    """The postings arrays of one build, memory-mapped: BM25 of a query in a few milliseconds."""

    def __init__(self, folder: Path):
        def path(name: str) -> Path:
            return postings_file(folder, name)

        info = json.loads(path("info.json").read_text(encoding="utf-8"))
        self.papers = int(info["papers"])
        self.vocabulary = {t: i for i, t in enumerate(json.loads(path("vocabulary.json").read_text(encoding="utf-8")))}
        self.docs = np.load(path("docs.npy"), mmap_mode="r")  # for appends (`PostingsWriter.seed`)
        self.tf = np.load(path("tf.npy"), mmap_mode="r")
        self._docs, self._tf = NpyReader(path("docs.npy")), NpyReader(path("tf.npy"))  # what queries read (npy_reader.py)
        self.indptr = np.load(path("indptr.npy"))
        lengths = np.load(path("lengths.npy"))
        self.lengths = lengths
        self.norm = (K1 * (1 - B + B * lengths / max(float(lengths.mean()) if len(lengths) else 1.0, 1e-9))).astype(np.float32)

    @classmethod
    def open(cls, folder: Path, papers: int) -> "Postings | None":
        """The postings in `folder` if they describe a table of `papers` rows, else None (FTS5 answers)."""
        try:
            postings = cls(folder)
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return postings if postings.papers == papers else None

    def df(self, term: str) -> int:
        i = self.vocabulary.get(term)
        return 0 if i is None else int(self.indptr[i + 1] - self.indptr[i])

    def scores(self, kept: list[str]) -> np.ndarray:
        """BM25 of every paper for the kept terms (0 where none occurs)."""
        out = np.zeros(self.papers, dtype=np.float32)
        for term in kept:
            i = self.vocabulary[term]
            a, b = int(self.indptr[i]), int(self.indptr[i + 1])
            docs, tf = self._docs.slice(a, b), self._tf.slice(a, b)
            idf = math.log((self.papers - (b - a) + 0.5) / ((b - a) + 0.5) + 1.0)
            out[docs] += idf * tf * (K1 + 1) / (tf + self.norm[docs])
        return out


class LexicalScores(Mapping):
    """BM25 scores of the papers that match a query (paper idx -> score, higher is better), kept as an
    array so that a corpus-wide result costs no Python dict."""

    def __init__(self, scores: np.ndarray):
        self.array = scores
        self._matched: np.ndarray | None = None

    @classmethod
    def from_dict(cls, scores: Mapping[int, float], papers: int) -> "LexicalScores":
        array = np.zeros(papers, dtype=np.float32)
        if scores:
            array[np.fromiter(scores.keys(), dtype=np.int64)] = np.fromiter(scores.values(), dtype=np.float32)
        return cls(array)

    @property
    def matched(self) -> np.ndarray:
        if self._matched is None:
            self._matched = np.flatnonzero(self.array > 0)
        return self._matched

    def masked(self, mask: np.ndarray | None) -> "LexicalScores":
        return self if mask is None else LexicalScores(np.where(mask[: len(self.array)], self.array, 0.0))

    def top(self, k: int) -> list[tuple[int, float]]:
        """The k best (paper idx, score), best first, ties by paper idx."""
        if k <= 0:
            return []
        matched = self._candidates(k)
        if not len(matched):
            return []
        values = self.array[matched]
        if len(matched) > k:  # every paper tied with the k-th stays, so ties at the cut go by paper idx too
            keep = values >= np.partition(values, len(values) - k)[len(values) - k]
            matched, values = matched[keep], values[keep]
        order = np.lexsort((matched, -values))[:k]
        return [(int(matched[i]), float(values[i])) for i in order]

    def _candidates(self, k: int, stride: int = 64) -> np.ndarray:
        """Papers that hold the top k for certain, without sorting every match (2M+ of them at 3M papers).

        The k-th best score of every `stride`-th paper is at most the k-th best of all, so every paper
        scoring at least that is a superset of the top k, ties included: ~stride x k papers."""
        if len(self.array) < 16 * stride * k:
            return self.matched
        sample = self.array[::stride]
        if np.count_nonzero(sample) < k:
            return self.matched
        floor = np.partition(sample, len(sample) - k)[len(sample) - k]
        return np.flatnonzero(self.array >= floor)

    def __getitem__(self, idx: int) -> float:
        if 0 <= idx < len(self.array) and self.array[idx] > 0:
            return float(self.array[idx])
        raise KeyError(idx)

    def __iter__(self) -> Iterator[int]:
        return (int(i) for i in self.matched)

    def __len__(self) -> int:
        return len(self.matched)


def has_table(db: sqlite3.Connection) -> bool:
    return db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (TABLE,)).fetchone() is not None


class Lexical:
    """BM25 queries over one open metadata database (read-only, shared by threads): from the build's
    postings arrays when they match the table, else from FTS5."""

    def __init__(self, db: sqlite3.Connection, papers: int):
        self.db, self.papers = db, max(1, papers)
        self._lock = threading.Lock()
        folder = database_folder(db)
        self.postings = Postings.open(folder, papers) if folder is not None else None
        if self.postings is None:
            with self._lock:  # a temp table: the database itself stays read-only
                db.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{TABLE}_vocab USING fts5vocab(main, {TABLE}, row)")

    def kept_terms(self, text: str) -> list[str]:
        """The text's `MAX_TERMS` indexed terms of the highest query-frequency x IDF."""
        tf = Counter(terms(text))
        wanted = list(tf)
        if not wanted:
            return []
        df: dict[str, int] = {}
        if self.postings is not None:
            df = {t: self.postings.df(t) for t in wanted}
        else:
            for i in range(0, len(wanted), 500):
                part = wanted[i : i + 500]
                with self._lock:
                    df.update(self.db.execute(f"SELECT term, doc FROM temp.{TABLE}_vocab WHERE term IN "
                                              f"({','.join('?' * len(part))})", part).fetchall())
        weight = {t: tf[t] * math.log(self.papers / df[t]) for t in wanted if df.get(t)}
        return sorted(weight, key=lambda t: -weight[t])[:MAX_TERMS]  # stable: ties keep the text's order

    def query(self, text: str) -> LexicalScores | None:
        """BM25 of every paper for the words of `text`; None when none of them is indexed."""
        kept = self.kept_terms(text)
        if not kept:
            return None
        if self.postings is not None:
            return LexicalScores(self.postings.scores(kept))
        match = " OR ".join(f'"{t}"' for t in kept)  # terms hold no double quote: FTS5 syntax cannot get in
        return LexicalScores.from_dict(self.scores(match), self.papers)

    def scores(self, match: str) -> dict[int, float]:
        """BM25 score (higher is better) of every paper that matches the FTS5 expression.

        One pass over the matches: FTS5 scores all of them for any ranking anyway, and asking for given
        rowids (`rowid IN (...)`) costs more than this whole pass."""
        with self._lock:
            rows = self.db.execute(f"SELECT rowid, bm25({TABLE}, {TITLE_WEIGHT}, 1.0) FROM {TABLE} WHERE {TABLE} MATCH ?",
                                   (match,)).fetchall()
        return {int(r[0]): -float(r[1]) for r in rows}  # FTS5's bm25() is negated: lower is better
