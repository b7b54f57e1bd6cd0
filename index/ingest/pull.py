"""`peerlint corpus pull`: fetch works from OpenAlex, arXiv and a project's bibliography into a corpus file.

A pull runs the jobs of a `PullPlan` (an OpenAlex filter, an arXiv query, a .bib's neighbourhood) in
one `PullSession`, so the same work from two sources, or from a second pull into the same file, is
one record. A pull stopped by the request budget, a rate limit, OpenAlex's daily budget, a network
failure or Ctrl-C keeps what it fetched and resumes from the state file when run again. Only this
package's pull modules and `api_client.py` touch the network, and only when the user runs the command.
"""

from __future__ import annotations

import calendar
import contextlib
import datetime as dt
import time

from . import arxiv as arxiv_api
from .api_client import ApiClient, BudgetExhausted, FetchError, KeyRefused, QueryRejected, QuotaSpent, RateLimited
from .bib_pull import bib_job
from .openalex import PER_PAGE, search_value
from .pull_plan import UPDATE_OVERLAP_DAYS, ArxivJob, BibJob, OpenAlexJob, PullError, PullPlan, plan_jobs
from .pull_session import PullReport, PullSession
from .records import Warn

__all__ = ["ArxivJob", "BibJob", "FetchError", "KeyRefused", "OpenAlexJob", "PullError", "PullPlan", "PullReport",
           "QueryRejected", "UPDATE_OVERLAP_DAYS", "plan_jobs", "run_pull", "update_since"]


def run_pull(plan: PullPlan, warn: Warn, show_progress: bool = True, client: ApiClient | None = None,
             today: dt.date | None = None) -> PullReport:
    """Run every job of `plan` until done, full (`max_works`) or stopped; the output always holds what was fetched."""
    if not plan.jobs:
        raise PullError("nothing to pull: pass --topic, --venue, --openalex FILTER, --arxiv CATEGORY or --from-bib FILE")
    if any(isinstance(job, OpenAlexJob) or isinstance(job, BibJob) for job in plan.jobs) and not plan.api_key:
        warn("no OpenAlex API key (--api-key or $OPENALEX_API_KEY): OpenAlex gives keyless callers a small daily "
             "budget (1,000 credits; a title look-up costs 10, a page of works 1); a free key buys more")
    t0 = time.perf_counter()
    session = PullSession(plan, warn, show_progress, client)
    if today is not None:  # the tests' calendar; else the session's UTC today
        session.today = today
    try:
        for job in plan.jobs:
            if not session.room():
                break
            if isinstance(job, OpenAlexJob):
                _openalex_job(session, job)
            elif isinstance(job, ArxivJob):
                _arxiv_job(session, job)
            else:
                bib_job(session, job)
    except QuotaSpent as err:  # a spent daily budget: stop now, with the server's words and when to come back
        keyless = not plan.api_key and not err.url.startswith(plan.arxiv_base.split("?")[0])
        hint = "; an OpenAlex API key (--api-key or $OPENALEX_API_KEY) has a larger budget" if keyless else ""
        session.report.stopped = f"{err}; run the same command again then to resume{hint}"
    except (BudgetExhausted, RateLimited) as err:
        session.report.stopped = f"{err}; run the same command again to resume"
    except (QueryRejected, KeyRefused):
        raise  # the query or the key is wrong: a user error, not a stop to resume
    except FetchError as err:
        session.report.stopped = str(err)
    finally:  # also on Ctrl-C: what was fetched is written
        _finish(session, t0)
    return session.report


def _finish(session: PullSession, t0: float) -> None:
    session.checkpoint()
    report, stats = session.report, session.client.stats
    report.total = len(session.papers)
    report.capped = not session.room()
    report.complete = not report.stopped and all(
        session.state["jobs"].get(job.key, {}).get("done") for job in session.plan.jobs)
    report.requests, report.rate_limited, report.retried = stats.requests, stats.rate_limited, stats.retried
    report.budget_left = stats.budget_left
    report.waited_s, report.seconds = round(stats.waited_s, 1), round(time.perf_counter() - t0, 1)


def openalex_filter(session: PullSession, job: OpenAlexJob, state: dict) -> str:
    parts = [job.filter.strip()] if job.filter.strip() else []
    if job.topic:
        if words := search_value(job.topic):
            parts.append(f"title_and_abstract.search:{words}")
    if job.venue:
        if not state.get("source"):
            state["source"] = session.openalex.source_id(job.venue)
        parts.append(f"primary_location.source.id:{state['source']}")
    since = max(_full_date(job.since, start=True) if job.since else "", state.get("since", ""))
    if since:
        parts.append(f"from_publication_date:{since}")
    if state.get("created_since"):  # --update-by created: a Premium key's filter
        parts.append(f"from_created_date:{state['created_since']}")
    if job.until:
        parts.append(f"to_publication_date:{_full_date(job.until, start=False)}")
    return ",".join(parts)


def _full_date(date: str, start: bool) -> str:
    """OpenAlex's date filters want YYYY-MM-DD: '2023' is 2023-01-01 as a start and 2023-12-31 as an end."""
    parts = date.split("-")
    if len(parts) == 3:
        return date
    year, month = int(parts[0]), int(parts[1]) if len(parts) == 2 else (1 if start else 12)
    day = 1 if start else calendar.monthrange(year, month)[1]
    return f"{year:04d}-{month:02d}-{day:02d}"


def _job_state(session: PullSession, key: str, created: bool = False, **initial: object) -> dict:
    """The job's state; with --update, a finished job starts again from `overlap_days` before the newest
    date it holds (a date in the future counts as today): works indexed late under an older date, which
    a filter from the newest date would miss for good, are asked again, and those held are deduplicated.
    With `created` (OpenAlex, --update-by created), the window is on the day the works entered OpenAlex,
    from `overlap_days` before the day the job last finished."""
    state = session.job_state(key, **initial)
    if not (session.plan.update and state["done"]):
        return state
    overlap = session.plan.overlap_days
    state.pop("since", None), state.pop("created_since", None)  # the window of an earlier update
    if created and state.get("pulled_on"):
        state.update(initial, done=False, created_since=update_since(state["pulled_on"], session.today, overlap))
    elif state.get("newest"):
        state.update(initial, done=False, since=update_since(state["newest"], session.today, overlap))
    return state


def _finished(session: PullSession, state: dict) -> None:
    state["done"] = True
    state["pulled_on"] = session.today.isoformat()


def update_since(newest: str, today: dt.date, overlap_days: int) -> str:
    """The first day an --update asks for: `overlap_days` before the newest date held, capped at today."""
    try:
        held = dt.date.fromisoformat(_full_date(newest, start=True))
    except ValueError:
        return ""
    return (min(held, today) - dt.timedelta(days=max(0, overlap_days))).isoformat()


def _newest(state: dict, papers) -> None:
    state["newest"] = max([state.get("newest", ""), *(p.date for p in papers if p is not None)])


def _openalex_job(session: PullSession, job: OpenAlexJob) -> None:
    state = _job_state(session, job.key, session.plan.update_by == "created", cursor="*", fetched=0)
    if state["done"]:
        return
    flt = openalex_filter(session, job, state)
    with contextlib.ExitStack() as stack:
        bar = False
        while session.room() and not state["done"]:
            page = session.openalex.page(flt, cursor=state["cursor"] or "*", per_page=PER_PAGE)
            if not bar:  # the bar's total is known from the first page
                bar = stack.enter_context(session.progress("openalex", page.count)) or True
            _newest(state, session.add_works(page.works))
            if session.room():  # a page cut short by --max-works is asked again by a resumed, larger pull
                state["fetched"] += len(page.works)
                # the last page is known without asking for the empty one after it: it is short, or the
                # count is reached (a state from an older version starts `fetched` at 0 and ends by the page)
                last = page.last or (page.count is not None and state["fetched"] >= page.count)
                state["cursor"] = None if last else page.next_cursor
                if not state["cursor"]:
                    _finished(session, state)
            session.maybe_checkpoint()


def _arxiv_job(session: PullSession, job: ArxivJob) -> None:
    state = _job_state(session, job.key, start=0, empty_pages=0)
    query = arxiv_api.search_query(job.categories, max(job.since, state.get("since", "")), job.until)
    with contextlib.ExitStack() as stack:
        bar = False
        while session.room() and not state["done"]:
            feed = session.arxiv.page(query, state["start"])
            if not bar:
                left = None if feed.total is None else feed.total - state["start"]
                bar = stack.enter_context(session.progress("arxiv", left)) or True
            _newest(state, [session.add(paper, "arxiv") for paper in feed.papers])
            if not session.room():
                break
            state["start"] += feed.entries
            # the API sometimes answers an empty page mid-way: three in a row is taken as the end
            state["empty_pages"] = 0 if feed.entries else state["empty_pages"] + 1
            if (feed.total is not None and state["start"] >= feed.total) or state["empty_pages"] >= 3:
                _finished(session, state)
            session.maybe_checkpoint()


