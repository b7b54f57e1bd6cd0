"""Read a project's .bib files and write well-formed entries for papers from the index.

Matching between the bibliography and the index goes by the work, not the key (users' keys are
arbitrary and the index's ids are not BibTeX keys): DOI, arXiv id, normalised title, then first
author + year with a close title (`index/ingest/holdings.py`), so the journal version, the arXiv
preprint or a retitled version of a suggested paper counts as already cited.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from ..index.ingest.holdings import Holdings
from ..index.ingest.identity import doi_of_url, normalise_arxiv_id, normalise_doi
from ..index.papers import Paper

_ENTRY_START = re.compile(r"@(\w+)\s*[{(]\s*([^,\s]+)\s*,", re.MULTILINE)


@dataclass(frozen=True)
class BibEntry:
    key: str
    title: str
    doi: str = ""
    author: str = ""  # the raw BibTeX author (or editor) field, for "Rudinger et al." in prose
    year: int | None = None
    arxiv_id: str = ""

    @property
    def authors(self) -> tuple[str, ...]:
        return tuple(a.strip() for a in re.split(r"\s+and\s+", self.author) if a.strip())


def normalise_title(title: str) -> str:
    text = unicodedata.normalize("NFKD", title)
    text = re.sub(r"\\[a-zA-Z]+|[{}]", "", text)
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


def _field(body: str, name: str) -> str:
    """Value of `name = {...}` or `name = "..."` in one entry body, braces balanced."""
    m = re.search(rf"\b{name}\s*=\s*", body, re.IGNORECASE)
    if not m:
        return ""
    i = m.end()
    if i >= len(body):
        return ""
    if body[i] == "{":
        depth, j = 0, i
        while j < len(body):
            if body[j] == "{":
                depth += 1
            elif body[j] == "}":
                depth -= 1
                if depth == 0:
                    return body[i + 1 : j]
            j += 1
        return body[i + 1 :]
    if body[i] == '"':
        j = body.find('"', i + 1)
        return body[i + 1 : j if j > 0 else None]
    return re.match(r"[^,}\s]*", body[i:]).group(0)


def parse_bib(text: str) -> list[BibEntry]:
    """Tolerant reader: a broken entry costs only itself."""
    entries = []
    starts = list(_ENTRY_START.finditer(text))
    for n, m in enumerate(starts):
        if m.group(1).lower() in {"string", "preamble", "comment"}:
            continue
        body = text[m.end() : starts[n + 1].start() if n + 1 < len(starts) else len(text)]
        year = re.search(r"\d{4}", _field(body, "year") or _field(body, "date"))
        arxiv = next((a for a in (normalise_arxiv_id(_field(body, f)) for f in _ARXIV_FIELDS) if a), "")
        entries.append(BibEntry(m.group(2), _field(body, "title"), _field(body, "doi").lower(),
                                _field(body, "author") or _field(body, "editor"),
                                int(year.group()) if year else None, arxiv))
    return entries


_ARXIV_FIELDS = ("eprint", "arxivid", "arxiv", "journal", "volume", "url", "note", "howpublished")


def read_bib_files(paths: Iterable[Path]) -> list[BibEntry]:
    entries = []
    for path in paths:
        try:
            entries.extend(parse_bib(path.read_text(encoding="utf-8", errors="replace")))
        except OSError:
            continue
    return entries


@dataclass(frozen=True)
class _Asked:
    """A paper from the index, seen as a cited work is."""

    title: str
    doi: str
    arxiv_id: str
    authors: tuple[str, ...]
    year: int | None


class Bibliography:
    """A project's bibliography, asked "is this paper already cited, in any version?"."""

    def __init__(self, entries: Iterable[BibEntry]):
        self.entries = list(entries)
        self._holdings = Holdings(
            Paper(id=e.key, title=e.title, abstract="", venue="", year=e.year, authors=e.authors,
                  doi=normalise_doi(e.doi), arxiv_id=e.arxiv_id) for e in self.entries)

    def key_for(self, title: str, paper_id: str, authors: Iterable[str] = (), year: int | None = None,
                url: str = "") -> str | None:
        """The key the .bib already uses for this work (matched by DOI, arXiv id, title, or first author,
        year and a close title), if any."""
        asked = _Asked(title, normalise_doi(paper_id) or doi_of_url(url),
                       normalise_arxiv_id(paper_id) or normalise_arxiv_id(url), tuple(authors), year)
        match = self._holdings.find(asked)
        return match.paper_id if match else None

    def __len__(self) -> int:
        return len(self.entries)


def make_key(paper: Paper, taken: Iterable[str]) -> str:
    """`surnameYEARfirstword`, made unique against keys already in the .bib."""
    taken = set(taken)
    name = paper.authors[0] if paper.authors else ""
    surname = name.split(",")[0] if "," in name else (name.split() or [""])[-1]
    surname = re.sub(r"[^a-z]", "", unicodedata.normalize("NFKD", surname).lower()) or "anon"
    stop = {"a", "an", "the", "on", "of", "for", "and", "in", "to", "with"}
    words = [w for w in re.findall(r"[a-z0-9]+", paper.title.lower()) if w not in stop]
    base = f"{surname}{paper.year or ''}{words[0] if words else ''}"
    key, n = base, 1
    while key in taken:
        key = f"{base}{chr(ord('a') + n - 1)}" if n <= 26 else f"{base}{n}"
        n += 1
    return key


def _escape(value: str) -> str:
    value = value.replace("\\", "\\textbackslash{}")
    for ch in "&%$#_":
        value = value.replace(ch, "\\" + ch)
    depth = 0
    balanced = []
    for ch in value:
        if ch == "{":
            depth += 1
        elif ch == "}":
            if depth == 0:
                continue
            depth -= 1
        balanced.append(ch)
    return "".join(balanced) + "}" * depth


def bibtex_entry(paper: Paper, key: str) -> str:
    """A complete, brace-balanced entry from index metadata."""
    is_journal = bool(re.search(r"journal|transactions|letters", paper.venue, re.IGNORECASE))
    kind = "article" if is_journal else "inproceedings"
    fields = [("title", "{" + _escape(paper.title) + "}")]
    if paper.authors:
        fields.append(("author", _escape(" and ".join(paper.authors))))
    if paper.venue:
        fields.append(("journal" if is_journal else "booktitle", _escape(paper.venue)))
    if paper.year:
        fields.append(("year", str(paper.year)))
    if paper.id.startswith("10."):
        fields.append(("doi", paper.id))
    if paper.url:
        fields.append(("url", paper.url.replace("%", "\\%")))
    body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields)
    return f"@{kind}{{{key},\n{body}\n}}\n"
