"""When two records are the same work: DOI, arXiv id and normalised title, and how they are merged.

Every source spells identifiers its own way (`https://doi.org/10.X`, `doi:10.X`, `arXiv:2104.06237v2`,
OpenAlex's `10.48550/arxiv.2104.06237` for the arXiv copy of a work), so the pull, the dump readers,
`load_papers` and the coverage bench all normalise through this one module.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from array import array
from collections.abc import Iterator, Sequence

from ..papers import Paper
from .paper_store import PaperStore, StoredPapers, pointed

_DOI = re.compile(r"10\.\d{4,9}/\S+", re.IGNORECASE)
_ARXIV_DOI = re.compile(r"^10\.48550/arxiv\.(.+)$", re.IGNORECASE)
_ARXIV_NEW = re.compile(r"(?<![\d.])(\d{4}\.\d{4,5})(?:v\d+)?(?![\d])")
_ARXIV_OLD = re.compile(r"([a-z\-]+(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?", re.IGNORECASE)
_ARXIV_HINT = re.compile(r"arxiv|^\s*\d{4}\.\d{4,5}(v\d+)?\s*$|^\s*[a-z\-]+(\.[A-Z]{2})?/\d{7}", re.IGNORECASE)
PREPRINT_VENUES = ("arxiv", "corr", "biorxiv", "medrxiv", "ssrn", "research square", "preprints", "openreview")
MIN_TITLE_CHARS = 20  # shorter titles ("Introduction", "Discussion") are too common to identify a work


def normalise_doi(value: str | None) -> str:
    """'https://doi.org/10.1000/ABC' -> '10.1000/abc'; '' when there is no DOI in `value`."""
    if not value:
        return ""
    match = _DOI.search(value.strip())
    if not match:
        return ""
    return match.group(0).rstrip(".,;)]}").lower()


_ACL_ANTHOLOGY = re.compile(r"(?:aclanthology\.org|aclweb\.org/anthology)/(?:anthology/)?([A-Z]\d{2}-\d{4}|\d{4}\.[a-z\-]+\.\d+)", re.IGNORECASE)


def doi_of_url(url: str | None) -> str:
    """The DOI a landing page URL stands for: doi.org links, and ACL Anthology pages (10.18653/v1/<id>)."""
    if not url:
        return ""
    if "doi.org/" in url:
        return normalise_doi(url)
    if match := _ACL_ANTHOLOGY.search(url):
        return f"10.18653/v1/{match.group(1).lower()}"
    return ""


def normalise_arxiv_id(value: str | None) -> str:
    """'arXiv:2104.06237v2', 'https://arxiv.org/abs/2104.06237' or '10.48550/arXiv.2104.06237' -> '2104.06237'.

    Bare strings are accepted only when they look like an arXiv id, so a journal's page range is never one.
    """
    if not value:
        return ""
    text = value.strip()
    if doi := _ARXIV_DOI.match(normalise_doi(text) or ""):
        text = doi.group(1)
    elif not _ARXIV_HINT.search(text):
        return ""
    if match := _ARXIV_NEW.search(text):
        return match.group(1)
    if match := _ARXIV_OLD.search(text):
        return match.group(1).lower()
    return ""


_LATEX_MARKUP = re.compile(r"\\[a-zA-Z]+|\\[\'\"`^~=.]|[{}$]")
_INNER_APOSTROPHE = re.compile(r"(?<=[A-Za-z])'(?=[A-Za-z])")
_POSITION_LABEL = re.compile(r"^\s*position\s*:\s*(?=\S)", re.IGNORECASE)
_NON_WORD = re.compile(r"[^a-z0-9]+")


def normalise_title(title: str | None) -> str:
    """Lower-case ASCII words of a title: accents (Unicode or LaTeX's `\\'e`), LaTeX commands, braces and
    punctuation dropped, an apostrophe inside a word too ("Don't" and "Don’t" are "dont"), and the
    "Position:" label of ICML's position-paper track (the arXiv version is titled without it)."""
    if not title:
        return ""
    text = _LATEX_MARKUP.sub("", title)
    if not text.isascii():
        text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    text = _POSITION_LABEL.sub("", _INNER_APOSTROPHE.sub("", text))
    return _NON_WORD.sub(" ", text.lower()).strip()


def surname(name: str) -> str:
    """The family name of 'First Last', 'Last, First' or 'F. van Last' as a lower-case ASCII word."""
    name = name.strip()
    if "," in name:
        family = name.split(",", 1)[0]
    else:
        parts = name.split()
        family = parts[-1] if parts else ""
        if family.lower().rstrip(".") in ("jr", "sr", "ii", "iii", "iv") and len(parts) > 1:
            family = parts[-2]
    return normalise_title(family).replace(" ", "")


def split_names(names: Sequence[str]) -> tuple[str, ...]:
    """The people an author field names. A field of one string is split: 'A; B', and paperlists' 'Kelvin
    Guu, Kenton Lee, Zora Tung' (its site-scraped venues join names with commas). Commas split only when
    every piece has two words or more, so 'Guu, Kelvin' and 'Smith, J., Doe, K.' stay as written, and a
    list of several names is never touched."""
    cleaned = tuple(name.strip() for name in names if name and name.strip())
    if len(cleaned) != 1:
        return cleaned
    (value,) = cleaned
    if ";" in value:
        return tuple(part.strip() for part in value.split(";") if part.strip())
    parts = tuple(part.strip() for part in value.split(",") if part.strip())
    if len(parts) >= 2 and all(len(part.split()) >= 2 for part in parts):
        return parts
    return cleaned


def is_preprint_venue(venue: str) -> bool:
    low = venue.lower()
    return any(word in low for word in PREPRINT_VENUES)


def identity_keys(paper: Paper) -> Iterator[str]:
    """The keys under which `paper` is the same work as another: 'doi:…', 'arxiv:…', 'title:…'."""
    doi = normalise_doi(paper.doi)
    if doi and not _ARXIV_DOI.match(doi):
        yield f"doi:{doi}"
    if arxiv := paper.arxiv_id or (normalise_arxiv_id(doi) if doi else ""):
        yield f"arxiv:{arxiv}"
    title = normalise_title(paper.title)
    if len(title) >= MIN_TITLE_CHARS:
        yield f"title:{title}"


def same_work(a: Paper, b: Paper, key: str) -> bool:
    """Whether two records sharing `key` are one work.

    DOI and arXiv id decide alone. A shared title is enough only when nothing contradicts it: no
    differing DOIs or arXiv ids, and the same venue unless one is a preprint server or unknown; so an
    ICLR submission and the ICML paper of the same title (17 pairs in the shipped corpus) stay two.
    """
    if not key.startswith("title:"):
        return True
    if a.doi and b.doi and normalise_doi(a.doi) != normalise_doi(b.doi):
        return False
    if a.arxiv_id and b.arxiv_id and a.arxiv_id != b.arxiv_id:
        return False
    venue_a, venue_b = a.venue.strip().lower(), b.venue.strip().lower()
    return (not venue_a or not venue_b or venue_a == venue_b
            or is_preprint_venue(venue_a) or is_preprint_venue(venue_b))


def merge(kept: Paper, other: Paper) -> Paper:
    """`kept` with the blanks filled from `other`: the first record wins every field it has.

    A day-precise date beats a year or month; a published venue beats a preprint server; the citation
    count is the larger; reference lists are united in order.
    """
    changes: dict[str, object] = {}
    for field in dataclasses.fields(Paper):
        mine, theirs = getattr(kept, field.name), getattr(other, field.name)
        if field.name in ("id", "references", "keywords", "categories"):
            continue
        if mine in ("", None, ()) and theirs not in ("", None, ()):
            changes[field.name] = theirs
    if len(other.date) > len(kept.date) and other.date[:4] == (kept.date[:4] or other.date[:4]):
        changes["date"] = other.date
    if kept.venue and other.venue and is_preprint_venue(kept.venue) and not is_preprint_venue(other.venue):
        changes["venue"] = other.venue
    if kept.citations is not None and other.citations is not None and other.citations > kept.citations:
        changes["citations"] = other.citations
    for name in ("references", "keywords", "categories"):
        mine, theirs = getattr(kept, name), getattr(other, name)
        if theirs and set(theirs) - set(mine):
            changes[name] = tuple(dict.fromkeys((*mine, *theirs)))
    return dataclasses.replace(kept, **changes) if changes else kept


class PaperSet:
    """Papers deduplicated by id, DOI, arXiv id and title as they arrive, with merges counted.

    `add` answers what happened to a record: 'new', 'merged' (it matched a kept paper and filled some of
    its blanks), 'duplicate' (it matched and added nothing) or 'duplicate-id'. The merged-away ids are
    kept as aliases, so `papers()` can point reference lists at the surviving ids.

    With `title_needs_other_source`, a title alone merges only records of different sources (files):
    one corpus file listing two works under one title means two works.

    After `spill()` the papers live on disk (paper_store.py) and only their ids, the hashes of their keys
    and their sources stay in memory: ~0.3 KB a paper instead of ~2.4 KB with its text.
    """

    def __init__(self, title_needs_other_source: bool = False) -> None:
        self.title_needs_other_source = title_needs_other_source
        self._sources: dict[object, int] = {}
        self._source_of = array("l")
        self._papers: list[Paper] | PaperStore = []
        self._by_id: dict[str, int] = {}
        self._by_key: dict[int, int] = {}  # hash(key): a million papers' keys as ints, not strings
        self.aliases: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self._papers)

    @property
    def spilled(self) -> bool:
        return isinstance(self._papers, PaperStore)

    def spill(self) -> None:
        """Move the papers kept so far, and every later one, to a temporary on-disk store."""
        if not self.spilled:
            store = PaperStore()
            store.extend(self._papers)
            self._papers = store

    def find(self, paper: Paper, source: object = None, keys: Sequence[str] | None = None) -> tuple[int, str] | None:
        """(position, key) of the kept paper `paper` is the same work as, if any (`keys`: its
        `identity_keys`, when the caller has them)."""
        source_no = self._sources.get(source, -1)
        for key in identity_keys(paper) if keys is None else keys:
            pos = self._by_key.get(hash(key))
            if pos is None or not same_work(self._papers[pos], paper, key):
                continue
            if key.startswith("title:") and self.title_needs_other_source and self._source_of[pos] == source_no:
                continue
            return pos, key
        return None

    def add(self, paper: Paper, source: object = None) -> tuple[str, Paper | None, str]:
        """Keep `paper` or merge it; returns (outcome, the kept paper it matched or None, the matching key)."""
        if (pos := self._by_id.get(paper.id)) is not None:
            return "duplicate-id", self._papers[pos], f"id:{paper.id}"
        keys = tuple(identity_keys(paper))
        found = self.find(paper, source, keys)
        if found is None:
            pos = len(self._papers)
            self._source_of.append(self._sources.setdefault(source, len(self._sources)))
            self._papers.append(paper)
            self._by_id[paper.id] = pos
            self._index(paper, pos, keys)
            return "new", None, ""
        pos, key = found
        before = self._papers[pos]
        merged = merge(before, paper)
        self.aliases[paper.id] = before.id
        self._by_id.setdefault(paper.id, pos)
        if merged is before:
            return "duplicate", before, key
        self._papers[pos] = merged
        self._index(merged, pos)
        return "merged", before, key

    def _index(self, paper: Paper, pos: int, keys: Sequence[str] | None = None) -> None:
        for key in identity_keys(paper) if keys is None else keys:
            self._by_key.setdefault(hash(key), pos)

    def get(self, paper_id: str) -> Paper | None:
        pos = self._by_id.get(paper_id)
        return None if pos is None else self._papers[pos]

    def position(self, paper_id: str) -> int | None:
        """Where the paper with this id (or merged into the one with it) is in `papers()`."""
        return self._by_id.get(paper_id)

    def papers(self) -> Sequence[Paper]:
        """The kept papers in arrival order, references to merged-away ids pointed at the kept ones: a list,
        or after `spill()` a view that reads them from disk in order."""
        if isinstance(self._papers, PaperStore):
            return StoredPapers(self._papers, self.aliases)
        return [pointed(paper, self.aliases) for paper in self._papers]
