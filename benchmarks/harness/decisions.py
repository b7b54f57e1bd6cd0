"""Which papers of a venue-year carry a conference decision that accept/reject benches may read.

The 2013-2025 corpus merges OpenReview-derived lists (paperlists: Poster, Oral, Spotlight, Talk,
Reject, Workshop) with the ML Anthology, which records only that a paper appeared ("Accept"). In a
venue-year whose rejections are recorded, a bare "Accept" is such an Anthology-only paper: ICLR 2017's
57 are its workshop track, not conference acceptances. They are left out of decision benches there.

`decision` reads a status as the conference's verdict: accepted in any form (poster, oral, spotlight,
talk, ICLR 2023's "Top-5%" / "Top-25%"), rejected, or sent to the workshop track (ICLR 2017-18's
"Workshop": not a conference acceptance); anything else (withdrawn, empty) is no decision.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable, TypeVar

P = TypeVar("P")

ACCEPTED = ("poster", "oral", "spotlight", "accept", "talk", "top-")


def decision(status: str | None) -> str | None:
    """"accept", "reject", "workshop" (a workshop-track paper: not a conference acceptance) or None."""
    s = (status or "").lower()
    if "reject" in s:
        return "reject"
    if "workshop" in s:
        return "workshop"
    return "accept" if any(a in s for a in ACCEPTED) else None


def with_decisions(papers: Iterable[P]) -> list[P]:
    """`papers` less those whose status is a bare "Accept" in a venue-year that records rejections."""
    papers = list(papers)
    rejecting = defaultdict(bool)
    for p in papers:
        rejecting[(p.venue, p.year)] |= "reject" in (p.status or "").lower()
    return [p for p in papers if not (rejecting[(p.venue, p.year)] and (p.status or "").strip().lower() == "accept")]
