"""What a `peerlint corpus pull` asks for: its jobs and limits, as plain data the CLI builds."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from . import arxiv as arxiv_api
from . import openalex as openalex_api


class PullError(Exception):
    """A pull the user asked for cannot start (nothing to pull, an unwritable output); the message names the fix."""


@dataclass(frozen=True)
class OpenAlexJob:
    filter: str = ""  # raw OpenAlex filter, combined with the fields below by AND
    topic: str = ""
    venue: str = ""
    since: str = ""
    until: str = ""

    @property
    def key(self) -> str:
        return "openalex " + json.dumps([self.filter, self.topic, self.venue, self.since, self.until])


@dataclass(frozen=True)
class ArxivJob:
    categories: tuple[str, ...]
    since: str = ""
    until: str = ""

    @property
    def query(self) -> str:
        return arxiv_api.search_query(self.categories, self.since, self.until)

    @property
    def key(self) -> str:
        return f"arxiv {self.query}"


@dataclass(frozen=True)
class BibJob:
    bib_files: tuple[Path, ...]
    hops: int = 1
    citing_per_work: int = 25

    @property
    def key(self) -> str:
        return "bib " + json.dumps([str(p.resolve()) for p in self.bib_files] + [self.hops])


UPDATE_OVERLAP_DAYS = 30


@dataclass(frozen=True)
class PullPlan:
    out: Path
    jobs: tuple[OpenAlexJob | ArxivJob | BibJob, ...]
    max_works: int = 5000
    max_requests: int = 2000
    mailto: str = ""  # only a contact in the User-Agent: OpenAlex has had no polite pool since February 2026
    openalex_base: str = openalex_api.DEFAULT_BASE
    arxiv_base: str = arxiv_api.DEFAULT_BASE
    restart: bool = False  # ignore the state file: every job starts again (the output is still deduplicated)
    # finished OpenAlex and arXiv jobs fetch again what is dated from `overlap_days` before their newest
    # work (capped at today) on, so works indexed after the last pull with an older date are caught too
    update: bool = False
    api_key: str = field(default="", repr=False)  # OpenAlex's; never printed, never written to the state file
    overlap_days: int = UPDATE_OVERLAP_DAYS
    # "published": the window is on publication dates (any key); "created": on the day a work entered
    # OpenAlex (from_created_date, reliable for late-indexed works, but only for Premium keys)
    update_by: str = "published"


def plan_jobs(openalex: str = "", topic: str = "", venue: str = "", since: str = "", until: str = "",
              arxiv_categories: Sequence[str] = (), bib_files: Sequence[Path] = (), hops: int = 1,
              citing_per_work: int = 25) -> tuple[OpenAlexJob | ArxivJob | BibJob, ...]:
    """The jobs a command line asks for: bibliography first (the most specific), then OpenAlex, then arXiv."""
    jobs: list[OpenAlexJob | ArxivJob | BibJob] = []
    if bib_files:
        jobs.append(BibJob(tuple(bib_files), hops, citing_per_work))
    if openalex or topic or venue:
        jobs.append(OpenAlexJob(openalex, topic, venue, since, until))
    if arxiv_categories:
        jobs.append(ArxivJob(tuple(arxiv_api.category(c) for c in arxiv_categories), since, until))
    return tuple(jobs)
