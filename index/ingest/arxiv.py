"""arXiv as `Paper`s: the API's Atom feed (by category and date range) and the OAI metadata snapshot.

The API's terms ask for one request every three seconds on one connection, so `ArxivApi` spaces its
requests by `MIN_INTERVAL_S`; pages are `PAGE_SIZE` entries sorted by submission date, so a stopped
pull resumes at its offset. Ids are `arXiv:<id>` without version; the date is the first version's.
"""

from __future__ import annotations

import email.utils
import re
import sys
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..papers import Paper
from .api_client import ApiClient, FetchError, QueryRejected
from .identity import normalise_arxiv_id, normalise_doi
from .records import BadRecord, clean_text, parse_date

DEFAULT_BASE = "https://export.arxiv.org/api/query"
BASE_ENV = "PEERLINT_ARXIV_API_BASE"
MIN_INTERVAL_S = 3.0  # https://info.arxiv.org/help/api/tou.html
PAGE_SIZE = 200
VENUE = "arXiv"
_NS = {"atom": "http://www.w3.org/2005/Atom", "arxiv": "http://arxiv.org/schemas/atom",
       "opensearch": "http://a9.com/-/spec/opensearch/1.1/"}


def paper_id(arxiv_id: str) -> str:
    return f"arXiv:{arxiv_id}"


# --- the OAI metadata snapshot (one JSON object a line) -------------------------------------------------------


def _rfc2822_date(value: object) -> str:
    """'Mon, 2 Apr 2007 19:18:42 GMT' -> '2007-04-02'; '' when it does not parse."""
    if not isinstance(value, str) or not value.strip():
        return ""
    try:
        return email.utils.parsedate_to_datetime(value).date().isoformat()
    except (TypeError, ValueError, IndexError):
        return ""


def _snapshot_authors(record: Mapping[str, Any]) -> tuple[str, ...]:
    parsed = record.get("authors_parsed")
    names = []
    if isinstance(parsed, list):
        for parts in parsed:
            if isinstance(parts, list) and parts and all(isinstance(p, str) for p in parts):
                last, first, suffix = (list(parts) + ["", ""])[:3]
                if name := clean_text(" ".join(p for p in (first, last, suffix) if p.strip())):
                    names.append(name)
        return tuple(names)
    raw = record.get("authors")
    if isinstance(raw, str):
        return tuple(n for n in (clean_text(x) for x in re.split(r",\s*|\s+and\s+", raw)) if n)
    return ()


def snapshot_record_to_paper(record: Mapping[str, Any]) -> Paper:
    """A `Paper` from one line of the arXiv OAI metadata snapshot (Kaggle's arxiv-metadata-oai-snapshot)."""
    raw_id = record.get("id")
    if not isinstance(raw_id, str) or not raw_id.strip():
        raise BadRecord(f"no arXiv id (found {raw_id!r:.40})")
    arxiv_id = normalise_arxiv_id(f"arXiv:{raw_id.strip()}") or raw_id.strip()
    title = clean_text(record["title"]) if isinstance(record.get("title"), str) else ""
    abstract = clean_text(record["abstract"]) if isinstance(record.get("abstract"), str) else ""
    if not title and not abstract:
        raise BadRecord("no title and no abstract")
    versions = record.get("versions") if isinstance(record.get("versions"), list) else []
    dates = sorted(d for v in versions if (d := _rfc2822_date(_get(v, "created"))))
    date = dates[0] if dates else ""
    if not date:
        try:
            date = parse_date(record.get("update_date")) if isinstance(record.get("update_date"), str) else ""
        except BadRecord:
            date = ""
    categories = record.get("categories")
    return Paper(
        id=paper_id(arxiv_id),
        title=title,
        abstract=abstract,
        venue=VENUE,
        year=int(date[:4]) if date else None,
        authors=_snapshot_authors(record),
        url=f"https://arxiv.org/abs/{arxiv_id}",
        date=date,
        doi=normalise_doi(record["doi"]) if isinstance(record.get("doi"), str) else "",
        arxiv_id=arxiv_id,
        categories=tuple(map(sys.intern, categories.split())) if isinstance(categories, str) else (),
    )


def _get(mapping: object, key: str) -> Any:
    return mapping.get(key) if isinstance(mapping, Mapping) else None


# --- the API's Atom feed ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Feed:
    papers: list[Paper]
    total: int | None  # opensearch:totalResults
    entries: int  # entries on this page, papers or not


def category(value: str) -> str:
    """'cs.CL' or 'cat:cs.CL' -> 'cs.CL': the `cat:` field name is written by `search_query`, never twice."""
    value = value.strip()
    return value[4:].strip() if value.lower().startswith("cat:") else value


def search_query(categories: Sequence[str], since: str = "", until: str = "") -> str:
    """`(cat:cs.CL OR cat:cs.LG) AND submittedDate:[202401010000 TO 202412312359]` for the API."""
    names = [c for c in map(category, categories) if c]
    cats = " OR ".join(f"cat:{c}" for c in names)
    query = f"({cats})" if len(names) > 1 else cats
    if since or until:
        start = (since.replace("-", "") + "0101")[:8] if since else "19910101"
        end = _end_of(until) if until else "99991231"
        query += f" AND submittedDate:[{start}0000 TO {end}2359]"
    return query


def _end_of(date: str) -> str:
    """The last day a YYYY, YYYY-MM or YYYY-MM-DD covers, as YYYYMMDD (a day-31 month is harmless to arXiv)."""
    parts = date.split("-")
    return parts[0] + (parts[1] if len(parts) > 1 else "12") + (parts[2] if len(parts) > 2 else "31")


def error_of(xml_text: str) -> str:
    """The message of the API's error entry (id …/api/errors#…, the summary says why); '' when there is none."""
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError:
        return ""
    for entry in root.findall("atom:entry", _NS):
        entry_id = entry.findtext("atom:id", default="", namespaces=_NS)
        if "/api/errors" in entry_id:
            return clean_text(entry.findtext("atom:summary", default="", namespaces=_NS)) or entry_id.rsplit("#", 1)[-1]
    return ""


def _rejected(message: str, status: int = 400) -> QueryRejected:
    return QueryRejected(f"arXiv rejected the query: {message}; check the categories (e.g. cs.CL) and the dates",
                         status, message)


def parse_feed(xml_text: str) -> Feed:
    """Papers of one Atom page; an API error entry (id …/api/errors#…) becomes a `QueryRejected`."""
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError as err:
        raise FetchError(f"arXiv answered a feed that does not parse ({err}); run again to resume") from None
    if root.tag != f"{{{_NS['atom']}}}feed":
        raise FetchError(f"arXiv answered <{root.tag}> instead of an Atom feed: is the API base URL right?")
    if message := error_of(xml_text):
        raise _rejected(message)
    total_text = root.findtext("opensearch:totalResults", default="", namespaces=_NS).strip()
    entries = root.findall("atom:entry", _NS)
    papers = []
    for entry in entries:
        try:
            papers.append(entry_to_paper(entry))
        except BadRecord:
            continue
    return Feed(papers, int(total_text) if total_text.isdigit() else None, len(entries))


def entry_to_paper(entry: ET.Element) -> Paper:
    arxiv_id = normalise_arxiv_id(entry.findtext("atom:id", default="", namespaces=_NS))
    if not arxiv_id:
        raise BadRecord("entry without an arXiv id")
    title = clean_text(entry.findtext("atom:title", default="", namespaces=_NS))
    abstract = clean_text(entry.findtext("atom:summary", default="", namespaces=_NS))
    if not title and not abstract:
        raise BadRecord("no title and no abstract")
    try:
        date = parse_date(entry.findtext("atom:published", default="", namespaces=_NS).strip())
    except BadRecord:
        date = ""
    primary = entry.find("arxiv:primary_category", _NS)
    categories = [primary.get("term", "")] if primary is not None else []
    categories += [c.get("term", "") for c in entry.findall("atom:category", _NS)]
    return Paper(
        id=paper_id(arxiv_id),
        title=title,
        abstract=abstract,
        venue=VENUE,
        year=int(date[:4]) if date else None,
        authors=tuple(n for a in entry.findall("atom:author", _NS)
                      if (n := clean_text(a.findtext("atom:name", default="", namespaces=_NS)))),
        url=f"https://arxiv.org/abs/{arxiv_id}",
        date=date,
        doi=normalise_doi(entry.findtext("arxiv:doi", default="", namespaces=_NS)),
        arxiv_id=arxiv_id,
        categories=tuple(dict.fromkeys(c for c in categories if c)),
    )


class ArxivApi:
    def __init__(self, client: ApiClient, base: str = DEFAULT_BASE) -> None:
        self.client, self.base = client, base

    def page(self, query: str, start: int, size: int | None = None) -> Feed:
        try:
            text = self.client.get_text(self.base, {"search_query": query, "start": start,
                                                    "max_results": size or PAGE_SIZE, "sortBy": "submittedDate",
                                                    "sortOrder": "ascending"}, min_interval=MIN_INTERVAL_S)
        except QueryRejected as err:  # HTTP 400 with an Atom error entry: its summary, not the XML
            message = error_of(err.body.decode("utf-8", errors="replace"))
            if message:
                raise _rejected(message, err.status) from None
            raise
        return parse_feed(text)
