"""`peerlint search TEXT`: the papers nearest to a text, as a table or JSON, through the editor's retriever."""

from __future__ import annotations

from typing import Sequence

import argparse
import json

from ...errors import UserError
from .common import index_arg, open_index_or_fail, warn
from ...index.ingest.markup import clean_title
from ...index.papers import SearchFilter
from ...retrieval.hybrid import DEFAULT_MODE, MODES
from ...retrieval.retriever import Retriever
from . import HELP


def register(sub, argv: Sequence[str] | None = None) -> None:
    p = sub.add_parser("search", help=HELP["search"])
    p.add_argument("text", help="the query text")
    p.add_argument("-k", type=int, default=10, help="how many papers (default: 10)")
    p.add_argument("--mode", choices=MODES, default=DEFAULT_MODE,
                   help=f"hybrid: embeddings and BM25 fused; dense: embeddings; lexical: BM25 (default: {DEFAULT_MODE})")
    p.add_argument("--venue", action="append", default=[], help="restrict to a venue (repeatable)")
    p.add_argument("--before", help="only papers published strictly before this year or ISO date")
    p.add_argument("--year-min", type=int)
    p.add_argument("--year-max", type=int)
    p.add_argument("--exclude", action="append", default=[], help="paper id to leave out (repeatable)")
    index_arg(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=run)


VENUE_WIDTH = 18  # the venue column fits its longest name in the results up to this ("Neural Computation")


def run(args: argparse.Namespace) -> int:
    if not args.text.strip():
        raise UserError('the query is empty: give the text to search for, e.g. peerlint search "dense passage retrieval"')
    if args.k < 1:
        raise UserError(f"-k must be at least 1 (got {args.k})")
    index = open_index_or_fail(args.index)
    flt = SearchFilter(venues=tuple(args.venue), year_min=args.year_min, year_max=args.year_max,
                       before=args.before, exclude_ids=frozenset(args.exclude))
    try:
        hits = Retriever(index, args.mode, warn=warn).search_text(args.text, args.k, flt)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    if args.json:
        print(json.dumps([{"id": h.paper.id, "title": clean_title(h.paper.title), "venue": h.paper.venue, "year": h.paper.year,
                           "similarity": round(h.similarity, 4), "score": round(h.score, 4), "url": h.paper.url}
                          for h in hits]))
        return 0
    if not hits:
        print("no papers match" + (" these filters" if args.venue or args.before or args.year_min or args.year_max
                                   or args.exclude else " the words of this query" if args.mode == "lexical" else ""))
        return 0
    print("\n".join(table(hits)))
    return 0


def table(hits) -> list[str]:
    """The ranked table: its venue column as wide as the longest venue listed, up to `VENUE_WIDTH`."""
    width = min(VENUE_WIDTH, max(len("venue"), *(len(h.paper.venue) for h in hits)))
    lines = [f"{'sim':>6} {'score':>7}  {'venue':<{width}} {'year':<5} title"]
    for h in hits:
        venue = h.paper.venue if len(h.paper.venue) <= width else h.paper.venue[:width - 1] + "…"
        lines.append(f"{h.similarity:6.3f} {h.score:7.3f}  {venue:<{width}} {str(h.paper.year or ''):<5} "
                     f"{clean_title(h.paper.title)}")
    return lines
