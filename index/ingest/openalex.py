"""OpenAlex works as `Paper`s, from the API (cursor paging, an API key) or from a works dump.

One converter, `work_to_paper`, serves the API pages, the works snapshot (one work per line) and
saved API pages (`{"meta": …, "results": […]}` per line). Ids are OpenAlex short ids (`W2741809807`)
because `referenced_works` name works by them: the pulled corpus's reference lists then point at
its own papers, which SEC retrieval's co-citation stage reads.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..papers import Paper
from .api_client import ApiClient, FetchError, KeyRefused, QueryRejected
from .identity import normalise_arxiv_id, normalise_doi, normalise_title
from .records import BadRecord, clean_text, parse_date

DEFAULT_BASE = "https://api.openalex.org"
BASE_ENV = "PEERLINT_OPENALEX_API_BASE"
KEY_ENV = "OPENALEX_API_KEY"
MIN_INTERVAL_S = 0.11  # at most 10 requests a second, the API's per-second limit
PER_PAGE = 200  # the API's maximum
IDS_PER_REQUEST = 50  # OR-ed values in one filter (the API takes up to 100; 50 keeps URLs short)
TITLE_CANDIDATES = 25  # a search costs the same for 1 or 200 results; the ranking is boosted by citations
KEY_HELP = ("pass --api-key KEY or set $OPENALEX_API_KEY (a free key: https://openalex.org/rest-api)")
MAX_ABSTRACT_WORDS = 20_000  # an inverted index claiming more is damaged; its first words are kept
WORK_FIELDS = ("id,doi,title,display_name,publication_year,publication_date,primary_location,locations,"
               "authorships,abstract_inverted_index,referenced_works,cited_by_count,type")
_TAGS = re.compile(r"</?(?:i|b|em|strong|sub|sup|scp|span|p)(?:\s[^>]*)?>", re.IGNORECASE)


def short_id(value: object) -> str:
    """'https://openalex.org/W2741809807' -> 'W2741809807'; '' for anything else."""
    if not isinstance(value, str):
        return ""
    tail = value.rstrip("/").rsplit("/", 1)[-1]
    return tail.upper() if re.fullmatch(r"[WwSsAa]\d+", tail) else ""


def abstract_from_inverted_index(index: object) -> str:
    """The abstract text of `{word: [positions]}`: words sorted by position, gaps closed, nothing allocated
    per position (a position of 10**9 costs no memory), non-integer positions ignored, the first word of a
    repeated position kept."""
    if not isinstance(index, Mapping):
        return ""
    pairs: list[tuple[int, str]] = []
    for word, positions in index.items():
        if not isinstance(word, str) or not isinstance(positions, (list, tuple)):
            continue
        for pos in positions:
            if isinstance(pos, int) and not isinstance(pos, bool) and pos >= 0:
                pairs.append((pos, word))
        if len(pairs) > MAX_ABSTRACT_WORDS:
            break
    pairs.sort(key=lambda pair: pair[0])
    words, last = [], -1
    for pos, word in pairs[:MAX_ABSTRACT_WORDS]:
        if pos != last:
            words.append(word)
            last = pos
    return clean_text(" ".join(words))


def _get(mapping: object, *path: str) -> Any:
    for key in path:
        if not isinstance(mapping, Mapping):
            return None
        mapping = mapping.get(key)
    return mapping


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _str(value: object) -> str:
    return clean_text(_TAGS.sub("", value)) if isinstance(value, str) else ""


def work_to_paper(work: Mapping[str, Any]) -> Paper:
    """A `Paper` from one OpenAlex work object; fields of the wrong type are treated as missing."""
    paper_id = short_id(work.get("id"))
    if not paper_id:
        raise BadRecord(f"no OpenAlex work id (found {work.get('id')!r:.40})")
    title = _str(work.get("title")) or _str(work.get("display_name"))
    abstract = abstract_from_inverted_index(work.get("abstract_inverted_index"))
    if not title and not abstract:
        raise BadRecord("no title and no abstract")
    doi = normalise_doi(work.get("doi") if isinstance(work.get("doi"), str) else "")
    arxiv_id = normalise_arxiv_id(doi)
    locations = work.get("locations") if isinstance(work.get("locations"), list) else []
    for location in [work.get("primary_location"), *locations]:
        if arxiv_id:
            break
        for key in ("landing_page_url", "pdf_url"):
            url = _get(location, key)
            if isinstance(url, str) and "arxiv.org" in url:
                arxiv_id = normalise_arxiv_id(url)
                break
    try:
        date = parse_date(work.get("publication_date"))
    except BadRecord:
        date = ""
    year = work.get("publication_year")
    year = year if isinstance(year, int) and not isinstance(year, bool) else (int(date[:4]) if date else None)
    authorships = work.get("authorships") if isinstance(work.get("authorships"), list) else []
    references = work.get("referenced_works") if isinstance(work.get("referenced_works"), list) else []
    citations = work.get("cited_by_count")
    landing = _get(work.get("primary_location"), "landing_page_url")
    return Paper(
        id=paper_id,
        title=title,
        abstract=abstract,
        venue=_str(_get(work.get("primary_location"), "source", "display_name")),
        year=year,
        authors=tuple(name for a in authorships if (name := _str(_get(a, "author", "display_name")))),
        url=f"https://doi.org/{doi}" if doi else (landing if isinstance(landing, str) else f"https://openalex.org/{paper_id}"),
        citations=citations if isinstance(citations, int) and not isinstance(citations, bool) else None,
        date=date,
        references=tuple(dict.fromkeys(ref for r in references if (ref := short_id(r)))),
        doi=doi,
        arxiv_id=arxiv_id,
    )


def works_of_record(record: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The works of one dump line: the line itself, or the `results` of a saved API page."""
    results = record.get("results")
    if isinstance(results, list) and "id" not in record:
        return [w for w in results if isinstance(w, Mapping)]
    return [record]


# --- the API ---------------------------------------------------------------------------------------------------


_SEARCH_SYNTAX = re.compile(r"[,|:!<>?*\"\u201c-\u201f~^()\[\]{}\\/+]")
_OPERATORS = re.compile(r"\b(AND|OR|NOT)\b")


def search_value(text: str) -> str:
    """Free text (a title, a topic) as the words of a `*.search` filter value that the API accepts and
    reads as plain words.

    The API (ourresearch/openalex-elastic-api, core/search.py and core/fields.py) answers HTTP 400 to an
    unquoted `?` or `*` in a stemmed `.search` field ("Wildcards (* or ?) require the exact (no-stem)
    field"), to a leading wildcard and to a word starting with `!`; `,` `|` split filters and values; a
    `"`, `~` or an upper-case AND/OR/NOT turns the value into a Lucene query_string, where brackets and
    slashes are syntax (the API folds curly quotes to '"' first). None of these carry meaning in a title
    (the analyzer drops punctuation), so they become spaces, HTML tags and LaTeX markup are dropped, and
    the operators are lower-cased.
    """
    text = re.sub(r"\\[a-zA-Z]+\*?|[{}$]", " ", _TAGS.sub("", text))
    return _OPERATORS.sub(lambda m: m.group(1).lower(), " ".join(_SEARCH_SYNTAX.sub(" ", text).split()))


@dataclass(frozen=True)
class Page:
    works: list[Mapping[str, Any]]
    next_cursor: str | None
    count: int | None  # how many works match the query in all, as the API reports it
    per_page: int  # the page size the API used (meta.per_page), else the one asked for

    @property
    def last(self) -> bool:
        """No page follows: the API sets next_cursor on the last non-empty page too, so a short page ends it."""
        return not self.next_cursor or len(self.works) < self.per_page


class OpenAlex:
    """The few calls a pull needs; every request goes through the pull's `ApiClient` and its budget."""

    def __init__(self, client: ApiClient, base: str = DEFAULT_BASE, api_key: str = "") -> None:
        self.client, self.base, self._key = client, base.rstrip("/"), api_key

    def __repr__(self) -> str:  # never the key
        return f"OpenAlex({self.base!r}, key={'set' if self._key else 'none'})"

    def _get(self, path: str, **params: object) -> Mapping[str, Any]:
        try:  # the key goes as `api_key`, the parameter the API's proxy reads (openalex-api-proxy, src/index.ts)
            data = self.client.get_json(f"{self.base}/{path}", {**params, "api_key": self._key},
                                        min_interval=MIN_INTERVAL_S)
        except KeyRefused as err:
            if self._key:
                raise KeyRefused(f"OpenAlex refused the API key (HTTP {err.status}: {err.detail}); check it, or "
                                 f"{KEY_HELP}", err.status, err.detail) from None
            raise KeyRefused(f"OpenAlex asks for an API key (HTTP {err.status}: {err.detail}); {KEY_HELP}",
                             err.status, err.detail) from None
        if not isinstance(data, Mapping):
            raise FetchError(f"{self.base}/{path} answered {type(data).__name__}, not a JSON object: "
                             "is the API base URL right?")
        return data

    def page(self, filter: str, cursor: str = "*", per_page: int = PER_PAGE, sort: str = "") -> Page:
        data = self._get("works", filter=filter, cursor=cursor, sort=sort, select=WORK_FIELDS,
                         **{"per-page": per_page})
        results = data.get("results")
        if not isinstance(results, list):
            raise FetchError(f"{self.base}/works answered without a 'results' list: is the API base URL right?")
        meta = data.get("meta") if isinstance(data.get("meta"), Mapping) else {}
        next_cursor = meta.get("next_cursor") if isinstance(meta.get("next_cursor"), str) else None
        count = meta.get("count") if _is_int(meta.get("count")) else None
        used = meta.get("per_page") if _is_int(meta.get("per_page")) and meta["per_page"] > 0 else per_page
        return Page([w for w in results if isinstance(w, Mapping)], next_cursor or None, count, used)

    def by_filter_values(self, key: str, values: Sequence[str],
                         rejected: Callable[[str, str], None] | None = None) -> Iterator[Mapping[str, Any]]:
        """Works whose `key` is any of `values` (e.g. openalex ids, DOIs), IDS_PER_REQUEST to a request.

        A batch the API answers with HTTP 400 is halved until the value it refuses is alone; that value
        goes to `rejected(value, the server's message)` and the others are fetched (without `rejected`,
        the 400 is raised)."""
        pending = [list(values[i: i + IDS_PER_REQUEST]) for i in range(0, len(values), IDS_PER_REQUEST)]
        while pending:
            part = pending.pop(0)
            try:
                works = list(self._all_pages(f"{key}:{'|'.join(part)}", len(part)))
            except QueryRejected as err:
                if rejected is None or err.status != 400:
                    raise
                if len(part) == 1:
                    rejected(part[0], err.detail)
                else:
                    pending[:0] = [part[: len(part) // 2], part[len(part) // 2:]]
                continue
            yield from works

    def _all_pages(self, flt: str, per_page: int) -> Iterator[Mapping[str, Any]]:
        """Every work of one filter: one request unless the API pages smaller than asked."""
        cursor: str | None = "*"
        seen = 0
        while cursor:
            page = self.page(flt, cursor=cursor, per_page=per_page)
            yield from page.works
            seen += len(page.works)
            done = page.last or (page.count is not None and seen >= page.count)
            cursor = None if done else page.next_cursor

    def search_title(self, title: str) -> Mapping[str, Any] | None:
        """The work whose normalised title equals `title`'s, among the API's TITLE_CANDIDATES best title
        matches (one request, whatever the page size); the best-ranked of equal titles wins."""
        words = search_value(title)
        wanted = normalise_title(title)
        if not words or not wanted:
            return None
        for work in self.page(f"title.search:{words}", per_page=TITLE_CANDIDATES).works:
            if normalise_title(_str(work.get("title")) or _str(work.get("display_name"))) == wanted:
                return work
        return None

    def source_id(self, name: str) -> str:
        """The OpenAlex source id (S…) of a venue name, e.g. 'Neural Information Processing Systems'."""
        data = self._get("sources", search=name, **{"per-page": 5})
        results = data.get("results") if isinstance(data.get("results"), list) else []
        wanted = name.strip().lower()
        ranked = sorted(results, key=lambda s: (str(_get(s, "display_name")).lower() != wanted))
        for source in ranked:
            if sid := short_id(_get(source, "id")):
                return sid
        raise FetchError(f"OpenAlex knows no venue named {name!r}: try its full name "
                         "(e.g. 'Neural Information Processing Systems') or pass --openalex "
                         "'primary_location.source.id:S…'")
