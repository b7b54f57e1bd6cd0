"""Records that cross the index boundary: a corpus `Paper` and a retrieval `Hit`."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)  # slots: a million papers of a dump held at once cost ~0.3 GB less
class Paper:
    """One document of a corpus, normalised from JSONL, CSV, BibTeX or a .tex file."""

    id: str
    title: str
    abstract: str
    venue: str = ""
    year: int | None = None
    status: str = ""
    authors: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    url: str = ""
    rating_avg: float | None = None
    citations: int | None = None
    date: str = ""  # ISO date when known; year-granular corpora leave it empty
    references: tuple[str, ...] = ()  # ids of cited papers, in the corpus's own id space (OpenAlex W-ids for pulls)
    doi: str = ""  # lower-case, no https://doi.org/ prefix; DOI, arXiv id and title are how sources are merged
    arxiv_id: str = ""  # without version, e.g. "2104.06237" or "hep-th/9901001"
    categories: tuple[str, ...] = ()  # subject classes of the source (arXiv categories), for `--where category=`

    @property
    def text(self) -> str:
        """The text that gets embedded: title and abstract, as the papers we follow do."""
        return f"{self.title}. {self.abstract}".strip() if self.title else self.abstract


@dataclass(frozen=True)
class Hit:
    """A retrieved paper: the best-matching chunk of it and its cosine similarity to the query.

    `similarity` is always the dense cosine (thresholds are calibrated on it), whatever ranked the
    hit; `score` is what ranked it: the cosine (dense), BM25 (lexical) or the fused score (hybrid)."""

    paper: Paper
    similarity: float
    chunk_start: int = 0
    chunk_end: int = 0
    score: float = 0.0


@dataclass(frozen=True)
class SearchFilter:
    """Query-time restrictions; every field is optional and they combine with AND."""

    venues: tuple[str, ...] = ()
    year_min: int | None = None
    year_max: int | None = None
    before: str | None = None  # ISO date or year: only papers published strictly before it
    exclude_ids: frozenset[str] = field(default_factory=frozenset)
