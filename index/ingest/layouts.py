"""Which JSON-lines layout a file is in, told from its first record, and how each becomes `Paper`s.

Dumps keep their own suffix (`arxiv-metadata-oai-snapshot.json`, `part_000.gz`) or are renamed, so
the layout is read from the content, never the name: the first JSON object's keys decide.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from ..papers import Paper
from .arxiv import snapshot_record_to_paper
from .openalex import work_to_paper, works_of_record
from .records import BadRecord, Warn, decoded_lines
from .semantic_scholar import papers_record_to_paper

PROCEEDINGS, ARXIV, OPENALEX, S2_PAPERS, S2_ABSTRACTS = (
    "proceedings", "arxiv-snapshot", "openalex", "s2-papers", "s2-abstracts")
DESCRIPTION = ("proceedings JSONL (id, title, abstract, venue, year, …), the arXiv OAI metadata snapshot "
               "(id, title, abstract, categories, authors_parsed, versions), OpenAlex works (snapshot lines or "
               "saved API pages), or Semantic Scholar papers and abstracts files (joined on corpusid)")
PROCEEDINGS_KEYS = frozenset({"id", "title", "abstract", "venue", "year", "status", "authors", "keywords", "url",
                              "rating_avg", "citations", "date", "references", "doi", "arxiv_id", "categories"})
SNIFF_LINES = 50  # lines read to find the first JSON object


class UnknownLayout(ValueError):
    """The first record's keys match no layout; the message lists them and the layouts peerlint reads."""


def layout_of_record(record: Mapping[str, Any]) -> str | None:
    keys = {str(k).lower() for k in record}
    if "corpusid" in keys:
        return S2_PAPERS if "title" in keys or "externalids" in keys else S2_ABSTRACTS
    if "abstract_inverted_index" in keys or "primary_location" in keys or "authorships" in keys \
            or (isinstance(record.get("id"), str) and record["id"].startswith("https://openalex.org/")) \
            or ("results" in keys and "meta" in keys):
        return OPENALEX
    if "authors_parsed" in keys or "journal-ref" in keys or ("versions" in keys and "categories" in keys):
        return ARXIV
    if not keys or keys & PROCEEDINGS_KEYS:
        return PROCEEDINGS
    return None


def sniff(path: Path, warn: Warn, strict: bool = False) -> str | None:
    """The layout of a JSON-lines file. When none of its first lines parses: proceedings (its reader then
    names each bad line), or None with `strict`, for files whose name does not promise JSON lines."""
    seen = 0
    for _, line in decoded_lines(path, warn):
        if not line.strip():
            continue
        seen += 1
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            record = None
        if isinstance(record, dict):
            layout = layout_of_record(record)
            if layout is None:
                keys = ", ".join(sorted(map(str, record))[:12])
                raise UnknownLayout(f"{path}: its records (keys: {keys}) are in no layout peerlint reads; "
                                    f"convert them to one of: {DESCRIPTION}")
            return layout
        if seen >= SNIFF_LINES:
            break
    return None if strict else PROCEEDINGS


Converter = Callable[[Mapping[str, Any], str], Iterable["Paper | BadRecord"]]


def converter_for(layout: str, s2_abstracts=None) -> Converter:
    """record, fallback id -> papers (or the BadRecord of each unusable work within the record)."""
    if layout == ARXIV:
        return lambda record, _fallback: [snapshot_record_to_paper(record)]
    if layout == OPENALEX:
        def openalex(record: Mapping[str, Any], _fallback: str) -> list[Paper | BadRecord]:
            works = works_of_record(record)
            if len(works) == 1:
                return [work_to_paper(works[0])]
            out: list[Paper | BadRecord] = []
            for work in works:  # a saved API page: one bad work costs only itself
                try:
                    out.append(work_to_paper(work))
                except BadRecord as err:
                    out.append(BadRecord(f"work {work.get('id')!s:.40}: {err}"))
            return out

        return openalex
    if layout == S2_PAPERS:
        return lambda record, _fallback: [papers_record_to_paper(record, s2_abstracts)]
    raise ValueError(f"no converter for layout {layout!r}")
