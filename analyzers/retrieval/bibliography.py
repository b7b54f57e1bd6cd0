"""Read a project's .bib files and write well-formed entries for papers from the index.

Matching between the bibliography and the index is by normalised title (or DOI), because
users' keys are arbitrary and the index's ids are not BibTeX keys.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from ...index.papers import Paper

_ENTRY_START = re.compile(r"@(\w+)\s*[{(]\s*([^,\s]+)\s*,", re.MULTILINE)


@dataclass(frozen=True)
class BibEntry:
    key: str
    title: str
    doi: str = ""
    author: str = ""  # the raw BibTeX author (or editor) field, for "Rudinger et al." in prose


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
        entries.append(BibEntry(m.group(2), _field(body, "title"), _field(body, "doi").lower(), _field(body, "author") or _field(body, "editor")))
    return entries


def read_bib_files(paths: Iterable[Path]) -> list[BibEntry]:
    entries = []
    for path in paths:
        try:
            entries.extend(parse_bib(path.read_text(encoding="utf-8", errors="replace")))
        except OSError:
            continue
    return entries


def cited_index(entries: Iterable[BibEntry]) -> dict[str, str]:
    """normalised title or DOI -> bib key, for "is this paper already in the bibliography?"."""
    out: dict[str, str] = {}
    for e in entries:
        if e.title:
            out[normalise_title(e.title)] = e.key
        if e.doi:
            out[e.doi] = e.key
    return out


def key_for(title: str, paper_id: str, cited: dict[str, str]) -> str | None:
    """The bib key already used for this paper (matched by title, or by DOI ids), if any."""
    return cited.get(normalise_title(title)) or (cited.get(paper_id.lower()) if paper_id.startswith("10.") else None)


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
