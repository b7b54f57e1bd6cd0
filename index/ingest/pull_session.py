"""The state one pull carries: the works held (deduplicated), the budget, the checkpoints, the report.

The output is rewritten atomically at checkpoints (every `CHECKPOINT_S` seconds and when the pull
ends or stops) and the state file beside it (`<out>.pull-state.json`: each job's cursor, offset or
frontier) is written right after, so the state never runs ahead of the file and a stopped pull
resumes where it was.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import gzip
import json
import lzma
import os
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..papers import Paper
from ..progress import Progress
from . import arxiv as arxiv_api
from . import openalex as openalex_api
from .api_client import ApiClient
from .identity import PaperSet
from .load import CorpusError, read_corpus
from .pull_plan import PullError, PullPlan
from .records import BadRecord, Warn

STATE_VERSION = 1
CHECKPOINT_S = 30.0
WRITABLE = (".jsonl", ".jsonl.gz", ".jsonl.xz")


@dataclass
class PullReport:
    out: Path
    state: Path
    before: int  # works the output held when the pull started
    total: int = 0
    added: dict[str, int] = field(default_factory=dict)  # new works by source
    merged: int = 0  # works that filled blanks of one already held
    duplicates: int = 0  # works already held, nothing to add
    without_abstract: int = 0  # of the new works
    skipped: int = 0  # API records that were not usable works
    rejected: list[str] = field(default_factory=list)  # entries the API refused (HTTP 400), skipped: what and why
    bib: dict[str, object] = field(default_factory=dict)  # see bib_pull.BibResolution
    requests: int = 0
    budget_left: str = ""  # OpenAlex's X-RateLimit-Remaining after the last request (credits left today)
    rate_limited: int = 0
    retried: int = 0
    waited_s: float = 0.0
    seconds: float = 0.0
    max_works: int = 0
    capped: bool = False  # the output holds --max-works works; a larger limit goes on from here
    complete: bool = False  # every job ran to its end
    stopped: str = ""  # why the pull ended early (budget, rate limit, network); it resumes when run again


def state_path(out: Path) -> Path:
    return out.with_name(out.name + ".pull-state.json")


class PullSession:
    """What the jobs share: the client and its budget, the works held, the state, the checkpoints."""

    def __init__(self, plan: PullPlan, warn: Warn, show_progress: bool = True,
                 client: ApiClient | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.plan, self.warn, self.show, self._clock = plan, warn, show_progress, clock
        agent = f"peerlint corpus pull (mailto:{plan.mailto})" if plan.mailto else ""
        self.client = client or ApiClient(plan.max_requests, user_agent=agent)
        self.openalex = openalex_api.OpenAlex(self.client, plan.openalex_base, plan.api_key)
        self.arxiv = arxiv_api.ArxivApi(self.client, plan.arxiv_base)
        self.papers = PaperSet()
        self.today = dt.datetime.now(dt.timezone.utc).date()  # --update's overlap window ends here
        self.state_file = state_path(plan.out)
        self.state: dict = {"version": STATE_VERSION, "jobs": {}}
        self._last_checkpoint = clock()
        self._bar: Progress | None = None
        before = self._load_existing()
        self.report = PullReport(plan.out, self.state_file, before, max_works=plan.max_works)

    # --- the works -----------------------------------------------------------------------------------------

    def room(self) -> int:
        return max(0, self.plan.max_works - len(self.papers))

    def add(self, paper: Paper, source: str) -> Paper | None:
        """Hold `paper` (or merge it into the work held); returns the paper held, or None when full."""
        found = self.papers.find(paper)
        if found is None and not self.room():
            return None
        outcome, first, _key = self.papers.add(paper)
        if outcome == "new":
            if self._bar is not None:
                self._bar.update()
            self.report.added[source] = self.report.added.get(source, 0) + 1
            self.report.without_abstract += not paper.abstract
            return paper
        if outcome == "merged":
            self.report.merged += 1
        else:
            self.report.duplicates += 1
        assert first is not None
        return self.papers.get(first.id)

    def reject(self, what: str, why: str) -> None:
        """An entry the API refused (HTTP 400): skipped and reported, the pull goes on."""
        line = f"{what}: {why}"[:300]
        self.report.rejected.append(line)
        self.warn(f"OpenAlex refused {line}; skipped")

    def add_works(self, works: Iterable[dict], source: str = "openalex") -> list[Paper | None]:
        """Hold each OpenAlex work; returns what `add` answered for each usable one."""
        held = []
        for work in works:
            try:
                held.append(self.add(openalex_api.work_to_paper(work), source))
            except BadRecord:
                self.report.skipped += 1
        return held

    # --- files ---------------------------------------------------------------------------------------------

    def _load_existing(self) -> int:
        out = self.plan.out
        if not out.name.lower().endswith(WRITABLE):
            raise PullError(f"--out {out}: name the corpus file .jsonl, .jsonl.gz or .jsonl.xz")
        if not out.parent.is_dir():
            raise PullError(f"--out {out}: the folder {out.parent} does not exist; create it first")
        if out.exists():
            try:
                for paper in read_corpus([out], warn=self.warn):
                    self.papers.add(paper)
            except CorpusError as err:
                raise PullError(f"--out {out} exists and is not a corpus peerlint wrote ({err}); "
                                "choose another --out") from None
        if self.state_file.exists() and not self.plan.restart:
            try:
                state = json.loads(self.state_file.read_text(encoding="utf-8"))
            except (OSError, ValueError) as err:
                self.warn(f"{self.state_file}: unreadable ({err}); starting every job again")
            else:
                if isinstance(state, dict) and state.get("version") == STATE_VERSION and isinstance(state.get("jobs"), dict):
                    self.state = state
                else:
                    found = state.get("version") if isinstance(state, dict) else type(state).__name__
                    self.warn(f"{self.state_file}: a resume state of another format (version {found!r}, this "
                              f"peerlint writes {STATE_VERSION}); starting every job again, the {len(self.papers)} "
                              f"works in {out} are kept")
        return len(self.papers)

    def job_state(self, key: str, **initial: object) -> dict:
        """The job's resume state; fields a previous version did not write start at `initial`, and a job
        whose fields have the wrong types starts again (its works stay in the output)."""
        defaults = {"done": False, **initial}
        state = self.state["jobs"].get(key)
        if isinstance(state, dict) and all(type(state.get(k, v)) is type(v) or (v is None or state.get(k) is None)
                                           for k, v in defaults.items()):
            for k, v in defaults.items():
                state.setdefault(k, v)
            return state
        if state is not None:
            self.warn(f"{self.state_file}: the state of job {key[:60]!r} is damaged; that job starts again "
                      "(the works already in the output are kept)")
        self.state["jobs"][key] = defaults
        return defaults

    def maybe_checkpoint(self) -> None:
        if self._clock() - self._last_checkpoint >= CHECKPOINT_S:
            self.checkpoint()

    def checkpoint(self) -> None:
        """Write the output, then the state that describes it, each atomically."""
        out = self.plan.out
        tmp = out.with_name(f".{out.name}.tmp{os.getpid()}")
        with open_binary_writer(tmp, out.name) as sink:
            for paper in self.papers.papers():
                sink.write((json.dumps(paper_record(paper), ensure_ascii=False) + "\n").encode("utf-8"))
        os.replace(tmp, out)
        tmp_state = self.state_file.with_name(f".{self.state_file.name}.tmp{os.getpid()}")
        tmp_state.write_text(json.dumps(self.state, indent=1), encoding="utf-8")
        os.replace(tmp_state, self.state_file)
        self._last_checkpoint = self._clock()

    @contextlib.contextmanager
    def progress(self, desc: str, total: int | None = None) -> Iterator[None]:
        """A progress bar on stderr for one job, advanced by every new work `add` holds."""
        total = max(0, min(total if total is not None else self.room(), self.room()))
        with Progress(desc, total=total, unit="work", show=self.show) as bar:
            self._bar = bar
            try:
                yield
            finally:
                self._bar = None


def open_binary_writer(path: Path, name: str):
    """A binary sink compressed as `name`'s suffix says, so the output reads back like any corpus file."""
    low = name.lower()
    if low.endswith(".gz"):
        return gzip.open(path, "wb")
    if low.endswith(".xz"):
        return lzma.open(path, "wb")
    return open(path, "wb")


def paper_record(paper: Paper) -> dict:
    """The proceedings JSONL record of a paper: what `index build --corpus` reads back (empty fields left out)."""
    record = {"id": paper.id, "title": paper.title, "abstract": paper.abstract, "venue": paper.venue,
              "year": paper.year, "date": paper.date, "authors": list(paper.authors), "url": paper.url,
              "doi": paper.doi, "arxiv_id": paper.arxiv_id, "citations": paper.citations,
              "categories": list(paper.categories), "references": list(paper.references),
              "status": paper.status, "keywords": list(paper.keywords), "rating_avg": paper.rating_avg}
    return {k: v for k, v in record.items() if v not in ("", None, [])}
