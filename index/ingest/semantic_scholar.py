"""Semantic Scholar dataset files as `Paper`s: `papers` records joined with `abstracts` on `corpusid`.

The two datasets come as separate (sharded) files, each far larger than memory, so the abstracts are
streamed once into a temporary SQLite table keyed by corpus id and the papers are then streamed past
it. Keys are read case-insensitively, so the API's camelCase (`corpusId`, `externalIds`) works too.
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..papers import Paper
from .identity import normalise_arxiv_id, normalise_doi
from .records import BadRecord, FileReport, Warn, clean_text, decoded_lines, parse_date


def lower_keys(record: Mapping[str, Any]) -> dict[str, Any]:
    return {str(k).lower(): v for k, v in record.items()}


def corpus_id(record: Mapping[str, Any]) -> int:
    value = record.get("corpusid")
    if isinstance(value, bool) or not isinstance(value, (int, str)) or not str(value).strip().isdigit():
        raise BadRecord(f"no corpusid (found {value!r:.40})")
    return int(value)


class AbstractStore:
    """Abstracts by corpus id, on disk: the `abstracts` dataset never has to fit in memory."""

    def __init__(self) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="peerlint-s2-")
        self._db = sqlite3.connect(Path(self._dir.name) / "abstracts.sqlite")
        self._db.execute("PRAGMA journal_mode=OFF")
        self._db.execute("PRAGMA synchronous=OFF")
        self._db.execute("CREATE TABLE abstracts (corpusid INTEGER PRIMARY KEY, abstract TEXT)")
        self.count = 0

    def add_file(self, path: Path, warn: Warn) -> None:
        report, batch = FileReport(path, warn), []
        for lineno, line in decoded_lines(path, warn):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                if not isinstance(record, dict):
                    raise BadRecord(f"expected a JSON object, found {type(record).__name__}")
                record = lower_keys(record)
                text = record.get("abstract")
                batch.append((corpus_id(record), clean_text(text) if isinstance(text, str) else ""))
            except json.JSONDecodeError as err:
                report.skip(lineno, f"invalid JSON ({err.msg} at column {err.colno})")
                continue
            except BadRecord as err:
                report.skip(lineno, str(err))
                continue
            if len(batch) >= 10_000:
                self._insert(batch)
        self._insert(batch)
        report.close()

    def _insert(self, batch: list[tuple[int, str]]) -> None:
        with self._db:
            self._db.executemany("INSERT OR IGNORE INTO abstracts VALUES (?, ?)", batch)
        self.count += len(batch)
        batch.clear()

    def get(self, cid: int) -> str:
        row = self._db.execute("SELECT abstract FROM abstracts WHERE corpusid = ?", (cid,)).fetchone()
        return row[0] if row else ""

    def close(self) -> None:
        self._db.close()
        self._dir.cleanup()


def papers_record_to_paper(record: Mapping[str, Any], abstracts: AbstractStore | None) -> Paper:
    """A `Paper` from one `papers` dataset record, its abstract looked up in `abstracts`."""
    record = lower_keys(record)
    cid = corpus_id(record)
    title = clean_text(record["title"]) if isinstance(record.get("title"), str) else ""
    abstract = abstracts.get(cid) if abstracts is not None else ""
    if not abstract and isinstance(record.get("abstract"), str):
        abstract = clean_text(record["abstract"])
    if not title and not abstract:
        raise BadRecord("no title and no abstract")
    external = record.get("externalids") if isinstance(record.get("externalids"), Mapping) else {}
    external = {str(k).lower(): v for k, v in external.items()}
    try:
        date = parse_date(record.get("publicationdate")) if isinstance(record.get("publicationdate"), str) else ""
    except BadRecord:
        date = ""
    year = record.get("year")
    venue = record.get("venue") if isinstance(record.get("venue"), str) else ""
    if not venue and isinstance(record.get("journal"), Mapping) and isinstance(record["journal"].get("name"), str):
        venue = record["journal"]["name"]
    authors = record.get("authors") if isinstance(record.get("authors"), list) else []
    fields = record.get("s2fieldsofstudy") if isinstance(record.get("s2fieldsofstudy"), list) else []
    citations = record.get("citationcount")
    arxiv = external.get("arxiv")
    doi = normalise_doi(external["doi"]) if isinstance(external.get("doi"), str) else ""
    url = record.get("url") if isinstance(record.get("url"), str) else ""
    return Paper(
        id=f"s2:{cid}",
        title=title,
        abstract=abstract,
        venue=clean_text(venue),
        year=year if isinstance(year, int) and not isinstance(year, bool) else (int(date[:4]) if date else None),
        authors=tuple(n for a in authors if isinstance(a, Mapping) and (n := clean_text(str(a.get("name") or "")))),
        url=url or (f"https://doi.org/{doi}" if doi else ""),
        citations=citations if isinstance(citations, int) and not isinstance(citations, bool) else None,
        date=date,
        doi=doi,
        arxiv_id=normalise_arxiv_id(f"arXiv:{arxiv}") if isinstance(arxiv, str) and arxiv else "",
        categories=tuple(dict.fromkeys(c for f in fields if isinstance(f, Mapping)
                                       and isinstance(c := f.get("category"), str) and c)),
    )
