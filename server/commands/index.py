"""`peerlint index build|info`: build (or incrementally update) the proceedings index, or show it."""

from __future__ import annotations

from typing import Sequence

import argparse
import errno
import json
import sys
import time
from pathlib import Path

from ...errors import UserError
from .common import index_arg, index_path, open_index_or_fail, warn
from ...index.embedding.embedder import Embedder, EmbeddingError, prepare_query_route, query_route
from ...index.build import build_index
from ...index.progress import Progress
from ...index.ingest.load import CorpusError, default_corpus_paths, load_papers
from ...analyzers.drafts.summaries import prepare_venue_style
from ...index.store import IndexError_, build_command, open_index
from ...index.distributed.ray_build import RayOptions, RayUnavailable, ray_build_index
from ...tables import counted
from . import HELP

VENUES_SHOWN = 20  # `index info`: the largest venues named, the rest counted


def register(sub, argv: Sequence[str] | None = None) -> None:
    index = sub.add_parser("index", help=HELP["index"])
    index.set_defaults(handler=lambda args: _usage(index))
    isub = index.add_subparsers(dest="index_command", metavar="ACTION")
    build = isub.add_parser("build", help="build (or incrementally update) an index from corpus files")
    build.add_argument("--corpus", nargs="+", type=Path, default=None,
                       help="JSONL/CSV/BibTeX files, dumps (arXiv, OpenAlex, S2) or folders (default: the shipped proceedings and journals)")
    index_arg(build)
    build.add_argument("--route", choices=("torch", "bf16", "onnx", "onnx-int8", "static"), default="torch",
                       help="embedding route (default: torch, whose exact ONNX twin is exported once after the "
                            "build so that queries need no torch; see `peerlint bench index`)")
    build.add_argument("--where", action="append", default=[], metavar="KEY=VALUE",
                       help="keep only papers with category=PREFIX, venue=NAME, since=DATE or until=DATE (repeatable)")
    build.add_argument("--limit", type=int, default=None, help="index only the first N papers (for trials)")
    build.add_argument("--max-tokens", type=int, default=200, help="chunk size in model tokens (default: 200)")
    build.add_argument("--embedder", default="minilm", choices=("minilm", "citation-minilm"),
                       help="the embedding model (default: minilm, all-MiniLM-L6-v2; citation-minilm: inCite's MiniLM "
                            "tuned for citations, `pip install --no-deps incite-app==0.1.3`; queries follow the index)")
    build.add_argument("--engine", choices=("local", "ray"), default="local",
                       help="local: this process (default); ray: a Ray Data pipeline over --workers embedding "
                            "actors, resumable by shard (needs `pip install 'peerlint[scale]'`)")
    build.add_argument("--address", default=None,
                       help="with --engine ray: the Ray cluster to join (default: start one on this machine)")
    build.add_argument("--workers", type=int, default=None,
                       help="with --engine ray: embedding actors (default: one per CPU Ray sees)")
    build.add_argument("--quiet", action="store_true", help="no progress bars")
    build.add_argument("--json", action="store_true", help="print the build report as JSON")
    build.set_defaults(handler=run_build)
    info = isub.add_parser("info", help="show what an index holds")
    index_arg(info)
    info.add_argument("--json", action="store_true")
    info.set_defaults(handler=run_info)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 0


def make_embedder(route: str, model: str = "minilm"):
    return Embedder(route=route, model=model)


def write_failure(root: Path, exc: OSError) -> str:
    """One line for a build that could not write: a full disk says the old index still answers and how to go on."""
    if exc.errno == errno.ENOSPC:
        return (f"the disk filled while writing the index at {root}; the previous index still answers: free some "
                f"space (or choose another --index) and run the same command again")
    return f"cannot write the index at {root} ({exc.strerror or exc}): choose another --index"


def run_build(args: argparse.Namespace) -> int:
    sources = args.corpus or default_corpus_paths()
    try:
        with Progress("reading", total=None, unit=" records", show=not (args.quiet or args.json)) as bar:
            papers = load_papers(sources, warn=warn, where=args.where, progress=bar.update)
    except CorpusError as exc:
        raise UserError(str(exc)) from None
    if args.limit:
        papers = papers[: args.limit]
    if args.workers is not None and args.workers < 1:
        raise UserError("--workers must be at least 1")
    root = index_path(args.index)
    if not args.quiet and not args.json:
        print(f"indexing {len(papers)} papers into {root}", file=sys.stderr)
    if args.engine == "ray" and args.embedder != "minilm":
        raise UserError("--engine ray embeds with minilm only: drop --embedder or use --engine local")
    try:
        if args.engine == "ray":
            try:
                report = ray_build_index(papers, root, make_embedder(args.route), [str(s) for s in sources],
                                         RayOptions(address=args.address, workers=args.workers),
                                         max_tokens=args.max_tokens, show_progress=not args.quiet)
            except RayUnavailable as exc:
                raise UserError(str(exc)) from None
        else:
            report = build_index(papers, root, make_embedder(args.route, args.embedder), [str(s) for s in sources],
                                 max_tokens=args.max_tokens, show_progress=not args.quiet)
    except EmbeddingError as exc:
        raise UserError(str(exc)) from None
    except OSError as exc:
        raise UserError(write_failure(root, exc)) from None
    if report.notice:
        warn(report.notice)
    _prepare_query_route(args)
    _prepare_venue_style(report.path, quiet=args.quiet or args.json)
    if args.json:
        print(json.dumps(report.__dict__))
    else:
        print(f"index ready at {report.path}: {report.papers} papers, {report.chunks} chunks "
              f"({report.embedded} embedded, {report.cached} from cache"
              + (f"; {report.appended} papers appended to the previous build" if report.appended else "")
              + f") in {report.seconds:.1f} s")
    return 0


def _prepare_query_route(args: argparse.Namespace) -> None:
    """Once per cache: the torch model's exact ONNX export, so `search`, `check` and the editor embed
    their text without loading torch (a cold `peerlint search` in ~1.5 s instead of ~6 CPU-seconds)."""
    model_id = Embedder(args.route, model=getattr(args, "embedder", "minilm")).model_id
    if args.route != "torch" or query_route(model_id) == "onnx":
        return
    if not args.quiet and not args.json:
        print("exporting the embedding model to ONNX for fast queries (once, about a minute)", file=sys.stderr)
    prepare_query_route(model_id)


def _prepare_venue_style(root: Path, quiet: bool) -> None:
    """The new build's venue head, its calibration and the style heads of venues that lag the others,
    learnt once here rather than on the editor's first look (~6 s and ~0.7 GB at 171k papers); a failure
    costs only that, never the build."""
    started = time.perf_counter()
    try:
        index = open_index(root, read_ahead=False)
        try:
            said = prepare_venue_style(index)
        finally:
            index.close()
    except (IndexError_, OSError, ValueError) as exc:
        warn(f"the venue style was not learnt now ({exc}); the editor learns it on its first look")
        return
    if said and not quiet:
        print(f"{said} in {time.perf_counter() - started:.1f} s", file=sys.stderr)


def run_info(args: argparse.Namespace) -> int:
    stats = open_index_or_fail(args.index, read_ahead=False).stats()
    if args.json:
        print(json.dumps(stats))
        return 0
    print(f"index:   {stats['path']} (build {stats['build']})")
    print(f"model:   {stats['model']}")
    years = "–".join(str(y) for y in stats["years"]) if stats["years"] else "unknown"
    print(f"papers:  {stats['papers']:,}  chunks: {stats['chunks']:,}  years: {years}")
    print(f"size:    {stats['bytes_on_disk'] / 1e6:.1f} MB  built: {stats['built_at']}")
    print("search:  " + ("dense + lexical (BM25)" if stats["lexical"] else
                         f"dense only: built before lexical search existed, rebuild with `{build_command(args.index)}`"))
    print("venues:  " + venue_summary(stats["venues"], stats.get("venue_names", {})))
    return 0


def venue_summary(counts: dict[str, int], names: dict[str, str], shown: int = VENUES_SHOWN) -> str:
    """The largest venues first, as their papers write them; the rest counted, `--json` naming them all."""
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    text = ", ".join(f"{names.get(v) or v or '?'} {n:,}" for v, n in ranked[:shown])
    rest = ranked[shown:]
    if rest:
        papers = sum(n for _, n in rest)
        text += (f", and {counted(len(rest), 'more venue')} with {counted(papers, 'paper')} "
                 "(`peerlint index info --json` lists every one)")
    return text
