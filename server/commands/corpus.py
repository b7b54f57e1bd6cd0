"""`peerlint corpus pull`: build a current, field-specific corpus file from OpenAlex, arXiv and a .bib.

The only command that uses the network, and only when run: the file it writes is then indexed
offline with `peerlint index build --corpus FILE`.
"""

from __future__ import annotations

from typing import Sequence

import argparse
import json
import os
import sys
from pathlib import Path

from ...errors import UserError
from .common import warn
from ...index.ingest.where import is_date
from ...index.ingest import pull
from . import HELP

EXIT_STOPPED = 3  # the pull stopped early (budget, rate limit, network) and can be resumed


def register(sub, argv: Sequence[str] | None = None) -> None:
    corpus = sub.add_parser("corpus", help=HELP["corpus"])
    corpus.set_defaults(handler=lambda args: _usage(corpus))
    csub = corpus.add_subparsers(dest="corpus_command", metavar="ACTION")
    pull = csub.add_parser(
        "pull", help="fetch works from OpenAlex, arXiv and a project's .bib into a JSONL corpus (uses the network)",
        description="Fetch works into a corpus file that `peerlint index build --corpus FILE` takes. Sends the "
                    "query (filters, DOIs, titles of the .bib's entries) and, to OpenAlex, the API key; nothing "
                    "else. OpenAlex spends a daily budget per key (keyless: 1,000 credits; a title look-up costs "
                    "10, a page of works 1): when it is spent the pull stops and says when to resume. Run it again "
                    "with the same arguments to resume a stopped pull. See docs/corpus-pull.md.")
    pull.add_argument("--out", type=Path, required=True, metavar="FILE.jsonl",
                      help="corpus file to write (.jsonl, .jsonl.gz or .jsonl.xz); works already in it are kept "
                           "and deduplicated against; the resume state goes beside it (FILE.pull-state.json)")
    source = pull.add_argument_group("what to pull (any mix)")
    source.add_argument("--from-bib", nargs="+", type=Path, default=[], metavar="FILE.bib",
                        help="the works a project's .bib cites (by DOI, arXiv id or title, via OpenAlex) and their "
                             "neighbourhood (--hops)")
    source.add_argument("--hops", type=int, choices=(0, 1, 2), default=1,
                        help="with --from-bib: 1 adds the works they cite and the most-cited works citing them, "
                             "2 also the works those cite (default: 1)")
    source.add_argument("--citing-per-work", type=int, default=25, metavar="N",
                        help="with --from-bib: the N most-cited works citing each cited work (default: 25)")
    source.add_argument("--topic", default="", metavar="TEXT", help="OpenAlex works whose title or abstract match TEXT")
    source.add_argument("--venue", default="", metavar="NAME",
                        help="OpenAlex works of one venue, e.g. 'Neural Information Processing Systems'")
    source.add_argument("--openalex", default="", metavar="FILTER",
                        help="a raw OpenAlex works filter, e.g. 'concepts.id:C154945302,type:article'")
    source.add_argument("--arxiv", nargs="+", default=[], metavar="CATEGORY",
                        help="arXiv submissions of these categories, e.g. cs.CL cs.LG (3 s between requests)")
    source.add_argument("--since", default="", metavar="DATE", help="published on or after DATE (OpenAlex, arXiv)")
    source.add_argument("--until", default="", metavar="DATE", help="published on or before DATE (OpenAlex, arXiv)")
    limits = pull.add_argument_group("limits and services")
    limits.add_argument("--max-works", type=int, default=5000, help="stop when the output holds N works (default: 5000)")
    limits.add_argument("--max-requests", type=int, default=2000,
                        help="HTTP requests this run may make, retries included (default: 2000)")
    limits.add_argument("--api-key", default=os.environ.get("OPENALEX_API_KEY", ""), metavar="KEY",
                        help="OpenAlex API key (default: $OPENALEX_API_KEY, which keeps it out of the process "
                             "list and shell history); sent as the api_key parameter, never printed or written "
                             "to the state file. Free at https://openalex.org/rest-api; without one OpenAlex "
                             "gives a small daily budget")
    limits.add_argument("--mailto", default=os.environ.get("PEERLINT_MAILTO", ""), metavar="EMAIL",
                        help="accepted for old scripts; it buys nothing since OpenAlex ended its polite pool "
                             "(February 2026): it is only a contact in the User-Agent. Use --api-key")
    limits.add_argument("--openalex-api-base", metavar="URL",
                        default=os.environ.get("PEERLINT_OPENALEX_API_BASE", "https://api.openalex.org"),
                        help="OpenAlex API base URL (default: $PEERLINT_OPENALEX_API_BASE or https://api.openalex.org)")
    limits.add_argument("--arxiv-api-base", metavar="URL",
                        default=os.environ.get("PEERLINT_ARXIV_API_BASE", "https://export.arxiv.org/api/query"),
                        help="arXiv API URL (default: $PEERLINT_ARXIV_API_BASE or https://export.arxiv.org/api/query)")
    limits.add_argument("--update", action="store_true",
                        help="fetch what is new since the last pull: finished OpenAlex and arXiv jobs ask again from "
                             "--update-overlap days before the newest date they hold, so works indexed late under "
                             "an older date are caught; works already held are deduplicated (the .bib "
                             "neighbourhood is not refreshed)")
    limits.add_argument("--update-overlap", type=int, default=None, metavar="DAYS",
                        help="with --update: days re-asked before the newest date held (default: 30)")
    limits.add_argument("--update-by", choices=("published", "created"), default="published",
                        help="with --update, OpenAlex jobs: 'published' re-asks by publication date (any key); "
                             "'created' asks for the works OpenAlex added since the last pull (from_created_date, "
                             "which catches late-indexed works of any date; OpenAlex opens it to Premium keys "
                             "only) (default: published)")
    limits.add_argument("--restart", action="store_true",
                        help="ignore the resume state and run every job from its start (the output is kept)")
    pull.add_argument("--quiet", action="store_true", help="no progress bars")
    pull.add_argument("--json", action="store_true", help="print the summary as JSON")
    pull.set_defaults(handler=run_pull)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 0


def run_pull(args: argparse.Namespace) -> int:
    for name in ("max_works", "max_requests", "citing_per_work"):
        if getattr(args, name) < 1:
            raise UserError(f"--{name.replace('_', '-')} must be at least 1")
    for name in ("openalex_api_base", "arxiv_api_base"):
        if not getattr(args, name).lower().startswith(("http://", "https://")):
            raise UserError(f"--{name.replace('_', '-')} {getattr(args, name)!r}: give an http:// or https:// URL")
    overlap = pull.UPDATE_OVERLAP_DAYS if args.update_overlap is None else args.update_overlap
    if overlap < 0:
        raise UserError("--update-overlap must be 0 or more days")
    if any(c.isspace() for c in args.api_key.strip()):
        raise UserError("--api-key holds a space: pass the key alone (or set $OPENALEX_API_KEY)")
    for name in ("since", "until"):
        if getattr(args, name) and not is_date(getattr(args, name)):
            raise UserError(f"--{name} {getattr(args, name)!r}: write a date as YYYY, YYYY-MM or YYYY-MM-DD")
    jobs = pull.plan_jobs(args.openalex, args.topic, args.venue, args.since, args.until, args.arxiv,
                          args.from_bib, args.hops, args.citing_per_work)
    plan = pull.PullPlan(args.out, jobs, args.max_works, args.max_requests, args.mailto.strip(),
                         args.openalex_api_base, args.arxiv_api_base, args.restart, args.update,
                         api_key=args.api_key.strip(), overlap_days=overlap, update_by=args.update_by)
    try:
        report = pull.run_pull(plan, warn, show_progress=not (args.quiet or args.json))
    except pull.PullError as err:
        raise UserError(str(err)) from None
    except (pull.QueryRejected, pull.KeyRefused) as err:
        raise UserError(f"{err} (what was fetched before is kept in {args.out})") from None
    except OSError as err:
        raise UserError(f"cannot write {args.out} or its state file ({err.strerror or err}): "
                        "choose another --out") from None
    if args.json:
        print(json.dumps({k: str(v) if isinstance(v, Path) else v for k, v in report.__dict__.items()}))
    else:
        print(summary(report))
    if report.stopped:
        if not args.json:
            print(f"peerlint: stopped: {report.stopped} (state in {report.state}).", file=sys.stderr)
        return EXIT_STOPPED
    return 0


def summary(report) -> str:
    added = sum(report.added.values())
    by_source = ", ".join(f"{n:,} {source}" for source, n in report.added.items()) or "none"
    lines = [f"{report.out}: {report.total:,} works ({report.before:,} before, {added:,} added: {by_source}; "
             f"{report.without_abstract:,} of them without an abstract)",
             f"deduplicated: {report.merged:,} merged into works already held, {report.duplicates:,} already held"]
    if report.bib:
        bib = report.bib
        found = bib["by_doi"] + bib["by_arxiv"] + bib["by_title"]
        lines.append(f"bibliography: {found} of {bib['entries']} entries found ({bib['by_doi']} by DOI, "
                     f"{bib['by_arxiv']} by arXiv id, {bib['by_title']} by title)"
                     + (f"; not found: {', '.join(bib['not_found'][:10])}" + (" …" if len(bib['not_found']) > 10 else "")
                        if bib["not_found"] else ""))
    if report.rejected:
        lines.append(f"refused by the API and skipped: {len(report.rejected)} ("
                     + "; ".join(report.rejected[:3]) + (" …" if len(report.rejected) > 3 else "") + ")")
    lines.append(f"requests: {report.requests:,} ({report.rate_limited} answered 429, {report.retried} retried, "
                 f"{report.waited_s:.0f} s waiting) in {report.seconds:.0f} s"
                 + (f"; OpenAlex budget left today: {report.budget_left} credits" if report.budget_left else "")
                 + ("" if report.complete or report.stopped or not report.capped else
                    f"; capped at --max-works {report.max_works:,}: raise it and run again to go on"))
    if report.total:  # nothing to index yet when the first request already failed
        lines.append(f"index it with: peerlint index build --corpus {report.out}")
    return "\n".join(lines)
