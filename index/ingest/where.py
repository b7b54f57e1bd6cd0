"""`--where` filters applied while a corpus streams in, so a 2.5M-record dump never has to fit in memory.

    category=cs.CL,cs.LG   an arXiv category or prefix ('cs' keeps cs.*), any of the paper's categories
    venue=ACL,EMNLP        the venue, case-insensitive, exactly
    since=2023-01-01       published on or after (YYYY, YYYY-MM or YYYY-MM-DD)
    until=2023-12-31       published on or before

Several `--where` combine with AND; values after one `=`, separated by commas, with OR. A paper with
only a year counts as published some day of that year, so `since=2023-06` keeps papers of 2023;
a paper with no date and no year fails a date filter.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass
from typing import Sequence

from ..papers import Paper

KEYS = ("category", "venue", "since", "until")
_DATE = re.compile(r"\d{4}(-\d{2}(-\d{2})?)?")


def is_date(text: str) -> bool:
    """YYYY, YYYY-MM or YYYY-MM-DD, a real day: the dates `--where`, `--since` and `--until` take."""
    if not _DATE.fullmatch(text):
        return False
    parts = [int(p) for p in text.split("-")] + [1, 1]
    try:
        datetime.date(*parts[:3])
    except ValueError:
        return False
    return True


class WhereError(ValueError):
    """A `--where` the user wrote cannot be read; the message shows the accepted forms."""


@dataclass(frozen=True)
class CorpusFilter:
    categories: tuple[str, ...] = ()
    venues: tuple[str, ...] = ()  # lower-case
    since: str = ""
    until: str = ""

    @classmethod
    def parse(cls, clauses: Sequence[str]) -> "CorpusFilter":
        fields: dict[str, object] = {}
        for clause in clauses:
            key, sep, value = clause.partition("=")
            key, values = key.strip().lower(), [v.strip() for v in value.split(",") if v.strip()]
            if not sep or key not in KEYS or not values:
                raise WhereError(f"--where {clause!r}: write KEY=VALUE with KEY one of {', '.join(KEYS)} "
                                 "(e.g. --where category=cs.CL --where since=2023-01-01)")
            if key in ("since", "until"):
                if len(values) != 1 or not is_date(values[0]):
                    raise WhereError(f"--where {clause!r}: {key} takes one date, YYYY, YYYY-MM or YYYY-MM-DD")
                fields[key] = values[0]
            elif key == "category":
                fields["categories"] = (*fields.get("categories", ()), *values)  # type: ignore[misc]
            else:
                fields["venues"] = (*fields.get("venues", ()), *(v.lower() for v in values))  # type: ignore[misc]
        return cls(**fields)  # type: ignore[arg-type]

    def __bool__(self) -> bool:
        return bool(self.categories or self.venues or self.since or self.until)

    def keeps(self, paper: Paper) -> bool:
        if self.categories and not any(_in_category(c, want) for c in paper.categories for want in self.categories):
            return False
        if self.venues and paper.venue.lower() not in self.venues:
            return False
        if self.since or self.until:
            published = paper.date or (str(paper.year) if paper.year else "")
            if not published:
                return False
            # compare on the shorter precision: '2023' is neither before nor after '2023-06-01'
            if self.since and published[: len(self.since)] < self.since[: len(published)]:
                return False
            if self.until and published[: len(self.until)] > self.until[: len(published)]:
                return False
        return True


def _in_category(category: str, wanted: str) -> bool:
    category, wanted = category.lower(), wanted.lower()
    return category == wanted or category.startswith(wanted + ".") or category.startswith(wanted + "-")
