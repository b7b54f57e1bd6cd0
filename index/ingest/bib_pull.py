"""The neighbourhood of a project's bibliography, from OpenAlex: where a related-work section lives.

Layer 0 is the works the .bib cites, found by DOI (50 to a request), then arXiv id (as its DataCite
DOI, 10.48550/arXiv.ID), then exact normalised title (one request each). Hop 1 adds the works layer 0
cites, and the `citing_per_work` most-cited works citing each; hop 2 adds the works hop 1 cites. A
frontier is fetched most-referenced-first, so when `--max-works` cuts it, what is left out is what the
neighbourhood cites least. Each step is recorded in the job's state, so a stopped pull resumes there.
An entry or a batch the API refuses (HTTP 400) is skipped and reported, never the end of the pull.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from .api_client import QueryRejected
from .identity import normalise_doi
from .latex_sources import CitedWork, cited_works
from .openalex import IDS_PER_REQUEST, short_id, work_to_paper
from .pull_plan import BibJob, PullError
from .pull_session import PullSession
from .records import BadRecord

_UNSAFE_IN_FILTER = (",", "|", "!", "+")


@dataclass(frozen=True)
class BibResolution:
    """How the .bib's entries were found in OpenAlex: counts by method, and the keys not found."""

    entries: int
    by_doi: int
    by_arxiv: int
    by_title: int
    not_found: tuple[str, ...]
    rejected: tuple[str, ...] = ()  # keys of entries the API refused (HTTP 400) by DOI or title

    def as_dict(self) -> dict[str, object]:
        return {"entries": self.entries, "by_doi": self.by_doi, "by_arxiv": self.by_arxiv,
                "by_title": self.by_title, "not_found": list(self.not_found), "rejected": list(self.rejected)}


def bib_job(session: PullSession, job: BibJob) -> None:
    for path in job.bib_files:
        if not path.is_file():
            raise PullError(f"--from-bib {path} does not exist: pass the project's .bib file")
    works = cited_works(job.bib_files, session.warn)
    if not works:
        raise PullError(f"{', '.join(map(str, job.bib_files))} has no BibTeX entries to start from")
    state = session.job_state(job.key, seeds={}, how={}, layer={}, citing_done=[], hop_done=[], rejected={})
    try:
        if not state["done"]:
            with session.progress("bibliography"):
                _run(session, job, works, state)
    finally:
        session.report.bib = _resolution(works, state).as_dict()


def _run(session: PullSession, job: BibJob, works: Sequence[CitedWork], state: dict) -> None:
    _resolve_seeds(session, works, state)
    for hop in range(1, job.hops + 1):
        if hop in state["hop_done"] or not session.room():
            continue
        _expand(session, state, hop, job.citing_per_work if hop == 1 else 0)
        if session.room():  # a hop cut short by --max-works goes on when a larger limit is given
            state["hop_done"].append(hop)
    state["done"] = len(state["hop_done"]) == job.hops and all(w.key in state["seeds"] for w in works)


def _resolution(works: Sequence[CitedWork], state: dict) -> BibResolution:
    how = Counter(state["how"].get(w.key, "") for w in works if state["seeds"].get(w.key))
    missing = tuple(w.key for w in works if w.key in state["seeds"] and not state["seeds"][w.key])
    rejected = tuple(w.key for w in works if w.key in state["rejected"])
    return BibResolution(len(works), how["doi"], how["arxiv"], how["title"], missing, rejected)


def _hold(session: PullSession, state: dict, work: dict, layer: int) -> str:
    """Keep one OpenAlex work in layer `layer` (unless it is in an earlier one); returns the id held."""
    try:
        paper = work_to_paper(work)
    except BadRecord:
        session.report.skipped += 1
        return ""
    kept = session.add(paper, "bibliography" if layer == 0 else f"hop {layer}")
    if kept is None:
        return ""
    state["layer"].setdefault(kept.id, layer)
    return kept.id


def _resolve_seeds(session: PullSession, works: Sequence[CitedWork], state: dict) -> None:
    seeds, how = state["seeds"], state["how"]
    for kind, doi_of in (("doi", lambda w: w.doi), ("arxiv", lambda w: w.arxiv_id and f"10.48550/arxiv.{w.arxiv_id}")):
        wanted: dict[str, list[CitedWork]] = {}
        for w in works:
            doi = normalise_doi(doi_of(w))
            if doi and w.key not in seeds and not any(c in doi for c in _UNSAFE_IN_FILTER):
                wanted.setdefault(doi, []).append(w)

        def refused(doi: str, why: str) -> None:  # the entry goes on to its title
            for w in wanted.get(doi, []):
                _reject(session, state, w.key, f"bib entry {w.key!r} (DOI {doi})", why)

        for work in session.openalex.by_filter_values("doi", list(wanted), refused):
            held = _hold(session, state, work, 0)
            for w in wanted.get(normalise_doi(str(work.get("doi") or "")), []) if held else []:
                seeds[w.key], how[w.key] = held, kind
            session.maybe_checkpoint()
    for w in works:
        if w.key in seeds:
            continue
        if not w.title:
            seeds[w.key] = ""
            continue
        if not session.room():
            return
        try:
            work = session.openalex.search_title(w.title)
        except QueryRejected as err:
            if err.status != 400:
                raise
            _reject(session, state, w.key, f"bib entry {w.key!r} (title {w.title[:80]!r})", err.detail)
            work = None
        seeds[w.key] = _hold(session, state, work, 0) if work is not None else ""
        if seeds[w.key]:
            how[w.key] = "title"
        session.maybe_checkpoint()


def _reject(session: PullSession, state: dict, key: str, what: str, why: str) -> None:
    """Record that the API refused one entry; it is reported, and not asked again on resume."""
    state["rejected"][key] = f"{what}: {why}"[:300]
    session.reject(what, why)


def _expand(session: PullSession, state: dict, hop: int, citing_per_work: int) -> None:
    """Add hop `hop`: the works layer hop-1 cites (most cited within the neighbourhood first), and the
    `citing_per_work` most-cited works citing each work of layer hop-1."""
    previous = [pid for pid, layer in state["layer"].items() if layer == hop - 1]
    counts: Counter[str] = Counter()
    for pid in previous:
        paper = session.papers.get(pid)
        if paper is not None:
            counts.update(paper.references)
    frontier = [ref for ref, _n in counts.most_common()
                if session.papers.get(ref) is None and short_id(ref) and ref not in state["rejected"]]
    for i in range(0, len(frontier), IDS_PER_REQUEST):
        if not session.room():
            return
        batch = frontier[i: i + IDS_PER_REQUEST]
        refused = lambda wid, why: _reject(session, state, wid, f"referenced work {wid}", why)  # noqa: E731
        for work in session.openalex.by_filter_values("openalex", batch, refused):
            _hold(session, state, work, hop)
        session.maybe_checkpoint()
    if not citing_per_work:
        return
    for pid in previous:
        if pid in state["citing_done"] or not pid.startswith("W"):
            continue
        if not session.room():
            return
        try:
            works = session.openalex.page(f"cites:{pid}", per_page=citing_per_work, sort="cited_by_count:desc").works
        except QueryRejected as err:
            if err.status != 400:
                raise
            _reject(session, state, pid, f"the works citing {pid}", err.detail)
            works = []
        for work in works:
            _hold(session, state, work, hop)
        state["citing_done"].append(pid)
        session.maybe_checkpoint()
