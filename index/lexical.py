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
rarest terms instead; on a 12k sub-corpus 0.512, above every term's 0.491 (README "Retrieval").
"""

from __future__ import annotations

import math
import re
import sqlite3
import threading
import unicodedata
from collections import Counter

from .entities import STOPWORDS, _stem

TABLE = "lexical"
TITLE_WEIGHT = 2.0  # BM25 weight of a title match relative to an abstract match (FTS5 column weights)
MAX_TERMS = 24  # a query keeps this many distinct terms: those of the highest query-frequency x IDF

_MATH = re.compile(r"\$\$.*?\$\$|\$[^$]*\$|\\\(.*?\\\)|\\\[.*?\\\]", re.S)
_COMMAND = re.compile(r"\\[A-Za-z@]+\*?|\\.")
_PLACEHOLDER = re.compile(r"\[(?:math|cite|ref|url|code|dummy)\]")  # what the LaTeX parser leaves in chunk text
_WORD = re.compile(r"[^\W_]+")  # letters and digits of any script


def terms(text: str) -> list[str]:
    """The content words of a text, in order, as the table stores them."""
    text = _PLACEHOLDER.sub(" ", _COMMAND.sub(" ", _MATH.sub(" ", text or "")))
    text = "".join(ch for ch in unicodedata.normalize("NFKD", text.lower()) if not unicodedata.combining(ch))
    return [_stem(w) for w in _WORD.findall(text) if len(w) > 1 and not w.isdigit() and w not in STOPWORDS]


def write_table(db: sqlite3.Connection, rows: Iterable[tuple[int, str, str]]) -> None:
    """Create and fill the BM25 table from (paper idx, title, abstract) rows, in the caller's transaction."""
    db.execute(f"CREATE VIRTUAL TABLE {TABLE} USING fts5(title, abstract, content='', "
               "tokenize='unicode61 remove_diacritics 0')")
    db.executemany(f"INSERT INTO {TABLE}(rowid, title, abstract) VALUES (?,?,?)",
                   ((idx, " ".join(terms(title)), " ".join(terms(abstract))) for idx, title, abstract in rows))
    db.execute(f"INSERT INTO {TABLE}({TABLE}) VALUES ('optimize')")


def has_table(db: sqlite3.Connection) -> bool:
    return db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (TABLE,)).fetchone() is not None


class Lexical:
    """BM25 queries over one open metadata database (read-only, shared by threads)."""

    def __init__(self, db: sqlite3.Connection, papers: int):
        self.db, self.papers = db, max(1, papers)
        self._lock = threading.Lock()
        with self._lock:  # a temp table: the database itself stays read-only
            db.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{TABLE}_vocab USING fts5vocab(main, {TABLE}, row)")

    def match_expression(self, text: str) -> str | None:
        """An FTS5 MATCH string ORing the text's `MAX_TERMS` best indexed terms; None when none is indexed."""
        tf = Counter(terms(text))
        wanted = list(tf)
        if not wanted:
            return None
        df: dict[str, int] = {}
        for i in range(0, len(wanted), 500):
            part = wanted[i : i + 500]
            with self._lock:
                df.update(self.db.execute(f"SELECT term, doc FROM temp.{TABLE}_vocab WHERE term IN "
                                          f"({','.join('?' * len(part))})", part).fetchall())
        weight = {t: tf[t] * math.log(self.papers / df[t]) for t in wanted if df.get(t)}
        kept = sorted(weight, key=lambda t: -weight[t])[:MAX_TERMS]  # stable: ties keep the text's order
        return " OR ".join(f'"{t}"' for t in kept) if kept else None  # terms hold no double quote

    def scores(self, match: str) -> dict[int, float]:
        """BM25 score (higher is better) of every paper that matches the expression.

        One pass over the matches: FTS5 scores all of them for any ranking anyway, and asking for given
        rowids (`rowid IN (...)`) costs more than this whole pass."""
        with self._lock:
            rows = self.db.execute(f"SELECT rowid, bm25({TABLE}, {TITLE_WEIGHT}, 1.0) FROM {TABLE} WHERE {TABLE} MATCH ?",
                                   (match,)).fetchall()
        return {int(r[0]): -float(r[1]) for r in rows}  # FTS5's bm25() is negated: lower is better
