"""What a bench trains on never holds what it tests on: its test venue-years, papers and titles.

Issue #35: the default corpus now holds later years and more venues, so a bench that trains on
"the shipped corpus" and tests on some venues and years could train on its own test papers, or on
the rest of their venue-year.  Every bench that trains on a corpus (`bench drafts --suite venue`,
`--suite acceptance`, `bench tournament`'s embedding head, `bench schnovel`'s learned methods)
builds a `Holdout` from its test papers, drops from training every paper that shares a venue and
year with one of them, or its id, or its normalised title (the same paper under another id: a
resubmission, a second source), and writes `Holdout.record` into its result JSON under
`train_excludes`.  `leaks` is the check that nothing got through; the benches assert it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from ...index.ingest.identity import normalise_title
from ...index.papers import Paper

REASONS = ("venue-year", "id", "title")


def venue_year(paper: Paper) -> tuple[str, int | None]:
    """The key a venue-year is compared by: venue lower-cased and stripped, and the year."""
    return (paper.venue or "").strip().lower(), paper.year


@dataclass(frozen=True)
class Holdout:
    """The venue-years, ids and normalised titles a bench tests on: none of them may train it."""

    venue_years: frozenset[tuple[str, int | None]] = frozenset()
    ids: frozenset[str] = frozenset()
    titles: frozenset[str] = frozenset()
    names: tuple[str, ...] = ()  # the venue-years as "ICLR 2017", for the record

    @classmethod
    def of(cls, test: Iterable[Paper], venue_years: Iterable[tuple[str, int | None]] = ()) -> "Holdout":
        """The holdout of these test papers: their venue-years (plus any `venue_years` named
        explicitly, e.g. a whole test venue-year of which only a sample is tested), ids and titles."""
        test = list(test)
        shown = {venue_year(p): f"{p.venue.strip()} {p.year}" for p in test if (p.venue or "").strip()}
        shown.update({((v or "").strip().lower(), y): f"{(v or '').strip()} {y}" for v, y in venue_years})
        return cls(frozenset(shown), frozenset(p.id for p in test),
                   frozenset(t for t in (normalise_title(p.title) for p in test) if t),
                   tuple(sorted(set(shown.values()))))

    @classmethod
    def papers(cls, test: Iterable[Paper]) -> "Holdout":
        """Only these papers (by id and normalised title), not their venue-years: for a split whose
        test side spans every venue-year by design (a hash half of the corpus)."""
        test = list(test)
        return cls(ids=frozenset(p.id for p in test),
                   titles=frozenset(t for t in (normalise_title(p.title) for p in test) if t))

    def __or__(self, other: "Holdout") -> "Holdout":
        return Holdout(self.venue_years | other.venue_years, self.ids | other.ids, self.titles | other.titles,
                       tuple(sorted(set(self.names) | set(other.names))))

    def reason(self, paper: Paper) -> str | None:
        """Why `paper` may not train (the first of REASONS that applies), or None."""
        if (paper.venue or "").strip() and venue_year(paper) in self.venue_years:
            return "venue-year"
        if paper.id in self.ids:
            return "id"
        if self.titles and normalise_title(paper.title) in self.titles:
            return "title"
        return None

    def allows(self, paper: Paper) -> bool:
        return self.reason(paper) is None

    def split(self, candidates: Iterable[Paper]) -> "Training":
        """The candidates that may train, and how many were dropped for which reason."""
        kept, dropped = [], Counter()
        for p in candidates:
            why = self.reason(p)
            if why is None:
                kept.append(p)
            else:
                dropped[why] += 1
        return Training(kept, self, dropped)


@dataclass
class Training:
    """The papers a bench trains on after its `Holdout`, and the record of what was left out."""

    papers: list[Paper]
    holdout: Holdout
    dropped: Counter = field(default_factory=Counter)

    def record(self, **extra) -> dict:
        """The `train_excludes` entry of a result JSON."""
        return record_of(self.holdout, self.dropped, len(self.papers), **extra)


def record_of(holdout: Holdout, dropped: Counter | dict, trained_on: int, **extra) -> dict:
    """`train_excludes`: the excluded venue-years, how many test ids and titles, and what each rule dropped."""
    return {"venue_years": list(holdout.names), "ids": len(holdout.ids), "titles": len(holdout.titles),
            "dropped": {r: int(dropped.get(r, 0)) for r in REASONS}, "trained_on": int(trained_on), **extra}


def leaks(train: Iterable[Paper], test: Sequence[Paper] | Holdout) -> list[str]:
    """Every training paper that shares a venue-year, an id or a normalised title with the test side,
    as "id (reason)"; empty when the split is honest."""
    holdout = test if isinstance(test, Holdout) else Holdout.of(test)
    return [f"{p.id} ({why})" for p in train if (why := holdout.reason(p))]


class LeakError(AssertionError):
    """A bench was about to train on its own test venue-years, papers or titles (a bug, not a user error)."""


def assert_no_leak(train: Iterable[Paper], test: Sequence[Paper] | Holdout, what: str) -> None:
    found = leaks(train, test)
    if found:
        raise LeakError(f"{what}: {len(found)} training papers share a test venue-year, id or title, "
                        f"e.g. {', '.join(found[:5])}")
