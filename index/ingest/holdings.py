"""Whether a set of papers holds a cited work: by DOI, arXiv id, normalised title, then first-author
surname + year. The coverage bench asks it of a corpus and a `.bib`; the editor asks it of a `.bib` and
a suggested paper (is a journal or arXiv version of it already cited?).

The surname + year step alone would match any 'Wang 2017' of 17k papers, so it also asks for a close
title: 90% of the characters in order (a typo such as 'Gumble-Softmax'), or 60% of the distinct words
shared (Jaccard >= 0.6) where one title's words are all in the other (REALM's paper titled without
"REALM:", a word added in the venue version); the same numbers in both; and a year off by at most one
(preprint and proceedings years differ). It catches titles that changed between versions, were
abbreviated or misspelt, and not a sibling paper of the same first author: "Measuring Short-form
Factuality …" is not "Long-form Factuality …", nor the 2017 WMT findings the 2018 ones.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Protocol

from ..papers import Paper
from .identity import doi_of_url, normalise_arxiv_id, normalise_doi, normalise_title, surname

METHODS = ("doi", "arxiv", "title", "author-year")
MIN_SHARED_WORDS = 0.6
MIN_SAME_CHARACTERS = 0.9


class Work(Protocol):
    """What is asked about: a `latex_sources.CitedWork`, or a suggested paper seen the same way."""

    title: str
    doi: str
    arxiv_id: str
    authors: tuple[str, ...]
    year: int | None


@dataclass(frozen=True)
class Match:
    method: str  # one of METHODS
    paper_id: str


class Holdings:
    """Lookup tables over a corpus's papers, built once per bench run."""

    def __init__(self, papers: Iterable[Paper]) -> None:
        self.by_doi: dict[str, str] = {}
        self.by_arxiv: dict[str, str] = {}
        self.by_title: dict[str, list[str]] = {}  # "Hyperbolic Neural Networks" and "…++" normalise alike
        self.by_author_year: dict[tuple[str, int], list[tuple[str, str]]] = {}
        self.years: dict[str, int] = {}  # paper id -> year, where the corpus says
        self.size = 0
        for paper in papers:
            self.size += 1
            if paper.year:
                self.years[paper.id] = paper.year
            # an index keeps no DOI field, so the id and the URL are read for one too
            for doi in (normalise_doi(paper.doi), normalise_doi(paper.id), doi_of_url(paper.url)):
                if doi:
                    self.by_doi.setdefault(doi, paper.id)
            for arxiv in (paper.arxiv_id, normalise_arxiv_id(paper.id), normalise_arxiv_id(paper.url),
                          normalise_arxiv_id(paper.doi)):
                if arxiv:
                    self.by_arxiv.setdefault(arxiv, paper.id)
            if title := normalise_title(paper.title):
                self.by_title.setdefault(title, []).append(paper.id)
            if paper.authors and paper.year:
                key = (surname(paper.authors[0]), paper.year)
                self.by_author_year.setdefault(key, []).append((normalise_title(paper.title), paper.id))

    def find(self, work: Work) -> Match | None:
        if work.doi and (pid := self.by_doi.get(work.doi)):
            return Match("doi", pid)
        if work.arxiv_id and (pid := self.by_arxiv.get(work.arxiv_id)):
            return Match("arxiv", pid)
        if (title := normalise_title(work.title)) and (pids := self.by_title.get(title)):
            return Match("title", self._nearest_in_time(pids, work.year))
        if work.authors and work.year and title:
            family = surname(work.authors[0])
            best: tuple[float, str] | None = None
            for year in (work.year, work.year - 1, work.year + 1):
                for their_title, pid in self.by_author_year.get((family, year), ()):
                    closeness = _closeness(title, their_title)
                    if closeness is not None and (best is None or closeness > best[0]):
                        best = (closeness, pid)
            if best is not None:
                return Match("author-year", best[1])
        return None

    def _nearest_in_time(self, pids: list[str], year: int | None) -> str:
        """Of papers with one title, the one a citation of `year` means: the latest not after it, else
        the earliest (a preprint cited a year before its venue version)."""
        if len(pids) == 1 or year is None:
            return pids[0]
        dated = sorted(pids, key=lambda pid: self.years.get(pid, 0))
        before = [pid for pid in dated if self.years.get(pid, 0) <= year]
        return before[-1] if before else dated[0]


def _closeness(title: str, other: str) -> float | None:
    """How alike two normalised titles are, or None when they are not alike enough to be one work."""
    if re.findall(r"\d+", title) != re.findall(r"\d+", other):  # WMT17 is not WMT18, nor GPT-2 GPT-3
        return None
    same = SequenceMatcher(None, title, other).ratio()
    if same >= MIN_SAME_CHARACTERS:
        return same
    words, their_words = set(title.split()), set(other.split())
    shared = len(words & their_words) / max(len(words | their_words), 1)
    if shared >= MIN_SHARED_WORDS and (words <= their_words or their_words <= words):
        return shared
    return None
