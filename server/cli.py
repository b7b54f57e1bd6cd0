"""The `peerlint` command line: serve, index, search, check, bench, doctor.

Every command a script might parse takes `--json`. Errors a user can cause print one line
starting with `peerlint: error:` and the fix, and exit with status 2; no tracebacks.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path
from typing import Sequence

from .. import __version__

EXIT_USAGE = 2


class UserError(Exception):
    """Anything the user can fix; main() prints it without a traceback."""


def _index_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--index", type=Path, default=None,
                   help="index directory (default: $PEERLINT_INDEX or ~/.local/share/peerlint/index)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="peerlint",
        description="A LaTeX writing assistant for researchers: compares a draft with published proceedings.")
    parser.add_argument("--version", action="version", version=f"peerlint {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages to stderr")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    serve = sub.add_parser("serve", help="run the language server (stdio by default)")
    serve.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio, e.g. 127.0.0.1:2087")
    serve.add_argument("--log-file", type=Path, help="also write the server log to this file")

    index = sub.add_parser("index", help="build or inspect the proceedings index")
    isub = index.add_subparsers(dest="index_command", metavar="ACTION")
    build = isub.add_parser("build", help="build (or incrementally update) an index from corpus files")
    build.add_argument("--corpus", nargs="+", type=Path, default=None,
                       help="JSONL/CSV/BibTeX files or directories of .tex papers (default: the shipped proceedings)")
    _index_arg(build)
    build.add_argument("--route", choices=("torch", "onnx-int8", "static"), default="torch",
                       help="embedding route (default: torch; see `peerlint bench index`)")
    build.add_argument("--limit", type=int, default=None, help="index only the first N papers (for trials)")
    build.add_argument("--max-tokens", type=int, default=200, help="chunk size in model tokens (default: 200)")
    build.add_argument("--quiet", action="store_true", help="no progress bars")
    build.add_argument("--json", action="store_true", help="print the build report as JSON")
    info = isub.add_parser("info", help="show what an index holds")
    _index_arg(info)
    info.add_argument("--json", action="store_true")

    search = sub.add_parser("search", help="papers nearest to a text")
    search.add_argument("text", help="the query text")
    search.add_argument("-k", type=int, default=10, help="how many papers (default: 10)")
    search.add_argument("--venue", action="append", default=[], help="restrict to a venue (repeatable)")
    search.add_argument("--before", help="only papers published strictly before this year or ISO date")
    search.add_argument("--year-min", type=int)
    search.add_argument("--year-max", type=int)
    search.add_argument("--exclude", action="append", default=[], help="paper id to leave out (repeatable)")
    _index_arg(search)
    search.add_argument("--json", action="store_true")

    check = sub.add_parser("check", help="diagnose a LaTeX file (or its whole project) and print file:line:col findings")
    check.add_argument("file", type=Path)
    _index_arg(check)
    check.add_argument("--settings", type=Path, help="JSON file of settings, as the editor would send them")
    check.add_argument("--json", action="store_true")

    doctor = sub.add_parser("doctor", help="check every component and say how to fix what is missing")
    _index_arg(doctor)
    doctor.add_argument("--json", action="store_true")

    bench = sub.add_parser("bench", help="reproduce the measurements behind peerlint's judgments")
    bsub = bench.add_subparsers(dest="bench_command", metavar="BENCH")
    bidx = bsub.add_parser("index", help="build speed, index size, search latency and recall vs exact")
    bidx.add_argument("--corpus", nargs="+", type=Path, default=None, help="corpus (default: the shipped proceedings)")
    bidx.add_argument("--docs", type=int, default=2000, help="documents for the speed comparison (default: 2000)")
    bidx.add_argument("--routes", default="torch,onnx-int8,static", help="embedding routes to compare")
    bidx.add_argument("--synthetic", type=int, default=1_000_000, help="synthetic vectors for the scale test (0: skip)")
    bidx.add_argument("--queries", type=int, default=1000, help="search queries per measurement")
    bidx.add_argument("--out", type=Path, default=Path("results"), help="directory for the JSON result")
    blsp = bsub.add_parser("lsp", help="language-server latency: first diagnostics, re-diagnose, sustained typing, RSS")
    _index_arg(blsp)
    blsp.add_argument("--pages", default="10,40", help="draft sizes in pages (default: 10,40)")
    blsp.add_argument("--typing-seconds", type=float, default=10.0)
    blsp.add_argument("--out", type=Path, default=Path("results"))
    bsn = bsub.add_parser("schnovel", help="SchNovel: which of two papers of a field is more novel (Lin et al., 2024)",
                          description="Sample SchNovel pairs from a corpus (--sample N --out F), or evaluate methods "
                                      "on pairs (--pairs F --method M), both orders, with a table, JSON and a plot.")
    bsn.add_argument("--corpus", nargs="+", type=Path, default=None, help="corpus files (default: the shipped proceedings)")
    bsn.add_argument("--field", action="append", default=[], metavar="SPEC",
                     help="a venue, or a group name=VENUE,VENUE (repeatable; default: every venue is a field)")
    bsn.add_argument("--sample", type=int, metavar="N", help="sample N pairs spread evenly over (field, start year, gap)")
    bsn.add_argument("--per-cell", type=int, metavar="n", help="sample n pairs per (field, start year, gap) instead")
    bsn.add_argument("--start-years", metavar="YEARS", help="start years, e.g. 2010-2017 or 2013,2015 (default: all)")
    bsn.add_argument("--gaps", metavar="GAPS", help="year gaps (default: 2-10)")
    bsn.add_argument("--seed", type=int, default=0, help="sampling seed (default: 0)")
    bsn.add_argument("--out", type=Path, help="where sampled pairs are written (JSONL)")
    bsn.add_argument("--pairs", type=Path, help="pairs to evaluate: peerlint JSONL or the official SchNovel layout")
    bsn.add_argument("--method", action="append", default=[], metavar="M",
                     help="method(s), repeatable or comma-separated: date-knn, embedding-head, peerlint, zero-shot, "
                          "two-shot, cot, self-reflection, self-consistency, llm-discussion, rag-novelty, or all")
    bsn.add_argument("--backend", choices=("auto", "embedded", "ollama"), default="auto", help="LLM backend (default: auto)")
    bsn.add_argument("--model", help="Ollama model name, or a .gguf file for the embedded backend")
    bsn.add_argument("--host", help="Ollama host (default: $OLLAMA_HOST or localhost)")
    bsn.add_argument("--limit", type=int, help="evaluate only the first N pairs")
    bsn.add_argument("--llm-limit", action="append", default=[], metavar="[METHOD=]N",
                     help="first N pairs for the LLM methods, or for one of them (repeatable; default: --limit)")
    bsn.add_argument("--k", type=int, default=10, help="neighbours retrieved per paper (default: 10)")
    bsn.add_argument("--index", type=Path, default=None,
                     help="index of the corpus, built if missing (default: ~/.cache/peerlint/bench-index-<corpus hash>)")
    bsn.add_argument("--train-pairs", type=int, default=4000, help="pairs sampled to train the learned methods")
    bsn.add_argument("--split", choices=("field", "year"), default="field",
                     help="what the learned methods never see: the evaluated pair's field (default) or its years")
    bsn.add_argument("--results", type=Path, default=Path("results"), help="directory for the JSON and the plot")
    bsn.add_argument("--plot", action=argparse.BooleanOptionalAction, default=True, help="write a PNG (default: yes)")
    bdr = bsub.add_parser("drafts", help="Between the Drafts: quality and venue-style ratings (Chen et al., 2025)")
    bdr.add_argument("--suite", choices=("consistency", "informal", "revisions", "venue", "acceptance", "latency", "all"),
                     default="all", help="which measurement (default: all)")
    bdr.add_argument("--corpus", nargs="+", type=Path, default=None, help="corpus files (default: the shipped proceedings)")
    bdr.add_argument("--backend", choices=("auto", "embedded", "ollama"), default="auto", help="LLM backend (default: auto)")
    bdr.add_argument("--model", help="Ollama model name, or a .gguf file for the embedded backend")
    bdr.add_argument("--limit", type=int, help="items rated by the LLM per suite (per class / venue); default per suite")
    bdr.add_argument("--index", type=Path, default=None,
                     help="index of the corpus, built if missing (default: ~/.cache/peerlint/bench-index-<corpus hash>)")
    bdr.add_argument("--out", type=Path, default=Path("results"), help="directory for the JSON results")
    from ..benchmarks import related_bench, rinobench, tournament_bench

    related_bench.add_arguments(bsub.add_parser(
        "related", help="SciPIP related-work retrieval: citation Recall@10..50 per retrieval stage"))
    tournament_bench.add_arguments(bsub.add_parser(
        "tournament", help="NOVA Swiss tournament on ICLR abstracts: accepted vs rejected (NOVA, Hu et al.)"))
    rinobench.add_arguments(bsub.add_parser(
        "rinobench", help="RINoBench: 1-5 novelty judgments of research ideas, nine metrics (Schopf & Färber)"))
    from . import ideas_cmd

    ideas_cmd.add_arguments(sub.add_parser("ideas", help="rank candidate ideas (Swiss tournament) or check their novelty (NOVA)"))
    return parser


def _settings(path: Path | None):
    from .config import Settings

    settings = Settings()
    if path is not None:
        try:
            raw = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise UserError(f"cannot read settings from {path}: {exc}") from None
        settings = settings.updated(raw, lambda m: print(f"peerlint: warning: {m}", file=sys.stderr))
    return settings


def _index_path(path: Path | None) -> Path:
    from ..index.build import default_index_path

    return path or default_index_path()


def _open(path: Path | None):
    from ..index.store import IndexError_, open_index

    try:
        return open_index(_index_path(path))
    except IndexError_ as exc:
        raise UserError(str(exc)) from None


def cmd_index_build(args) -> int:
    from ..index.build import build_index
    from ..index.embed import Embedder
    from ..index.ingest import CorpusError, default_corpus_path, load_papers

    sources = args.corpus or [default_corpus_path()]
    try:
        papers = load_papers(sources, warn=lambda m: print(f"peerlint: warning: {m}", file=sys.stderr))
    except CorpusError as exc:
        raise UserError(str(exc)) from None
    if args.limit:
        papers = papers[: args.limit]
    root = _index_path(args.index)
    if not args.quiet and not args.json:
        print(f"indexing {len(papers)} papers into {root}", file=sys.stderr)
    from ..index.embed import EmbeddingError

    try:
        report = build_index(papers, root, Embedder(route=args.route), [str(s) for s in sources],
                             max_tokens=args.max_tokens, show_progress=not args.quiet)
    except EmbeddingError as exc:
        raise UserError(str(exc)) from None
    except OSError as exc:
        raise UserError(f"cannot write the index at {root} ({exc.strerror or exc}): choose another --index") from None
    if args.json:
        print(json.dumps(report.__dict__))
    else:
        print(f"index ready at {report.path}: {report.papers} papers, {report.chunks} chunks "
              f"({report.embedded} embedded, {report.cached} from cache) in {report.seconds:.1f} s")
    return 0


def cmd_index_info(args) -> int:
    stats = _open(args.index).stats()
    if args.json:
        print(json.dumps(stats))
        return 0
    print(f"index:   {stats['path']} (build {stats['build']})")
    print(f"model:   {stats['model']}")
    print(f"papers:  {stats['papers']}  chunks: {stats['chunks']}  years: {stats['years']}")
    print(f"size:    {stats['bytes_on_disk'] / 1e6:.1f} MB  built: {stats['built_at']}")
    print("venues:  " + ", ".join(f"{v or '?'} {n}" for v, n in sorted(stats["venues"].items())))
    return 0


def cmd_search(args) -> int:
    from ..index.papers import SearchFilter

    index = _open(args.index)
    flt = SearchFilter(venues=tuple(args.venue), year_min=args.year_min, year_max=args.year_max,
                       before=args.before, exclude_ids=frozenset(args.exclude))
    try:
        hits = index.search(args.text, args.k, flt)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    if args.json:
        print(json.dumps([{"id": h.paper.id, "title": h.paper.title, "venue": h.paper.venue, "year": h.paper.year,
                           "similarity": round(h.similarity, 4), "url": h.paper.url} for h in hits]))
        return 0
    if not hits:
        print("no papers match these filters")
        return 0
    print(f"{'sim':>6}  {'venue':<8} {'year':<5} title")
    for h in hits:
        print(f"{h.similarity:6.3f}  {h.paper.venue[:8]:<8} {str(h.paper.year or ''):<5} {h.paper.title}")
    return 0


def cmd_check(args) -> int:
    from ..analyzers.engine import Engine
    from ..analyzers.project_check import check_file
    from ..analyzers.retrieval import Retriever

    if not args.file.exists():
        raise UserError(f"no such file: {args.file}")
    settings = _settings(args.settings)
    index = _open(args.index or (Path(settings.index_path) if settings.index_path else None))
    engine = Engine(settings, retriever=Retriever(index))
    result = check_file(args.file, engine, workspace=Path.cwd())
    for w in result.warnings:
        print(f"peerlint: warning: {w}", file=sys.stderr)
    rows = sorted(result.judgments, key=lambda j: (j.chunk.uri, j.chunk.range.start.line, j.chunk.range.start.character))
    if args.json:
        print(json.dumps([{"file": _display_path(j.chunk.uri), "line": j.chunk.range.start.line + 1,
                           "col": j.chunk.range.start.character + 1, "severity": j.severity, "code": j.code,
                           "message": j.message, "score": j.score, "evidence": j.evidence} for j in rows]))
    else:
        for j in rows:
            print(f"{_display_path(j.chunk.uri)}:{j.chunk.range.start.line + 1}:{j.chunk.range.start.character + 1}: "
                  f"{j.severity} {j.code}: {j.message}")
        print(f"{len(rows)} finding(s) in {len({j.chunk.uri for j in rows})} file(s); "
              f"{len(result.chunks)} chunks checked against {len(index)} papers", file=sys.stderr)
    return 0


def _display_path(uri: str) -> str:
    from urllib.parse import unquote, urlparse

    path = Path(unquote(urlparse(uri).path)) if uri.startswith("file:") else Path(uri)
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def cmd_serve(args) -> int:
    from .lsp import serve

    return serve(tcp=args.tcp, log_file=args.log_file)


def cmd_doctor(args) -> int:
    from .doctor import run_doctor

    return run_doctor(_index_path(args.index), as_json=args.json)


def cmd_bench(args) -> int:
    if args.bench_command == "index":
        from ..benchmarks.index_bench import run
    elif args.bench_command == "lsp":
        from ..benchmarks.lsp_bench import run
    elif args.bench_command == "schnovel":
        from ..benchmarks.schnovel import run
    elif args.bench_command == "drafts":
        from ..benchmarks.drafts import run
    elif args.bench_command == "related":
        from ..benchmarks.related_bench import run
    elif args.bench_command == "tournament":
        from ..benchmarks.tournament_bench import run
    elif args.bench_command == "rinobench":
        from ..benchmarks.rinobench import run
    else:
        raise UserError("choose a benchmark: `peerlint bench index`, `lsp`, `schnovel`, `drafts`, `related`, "
                        "`tournament` or `rinobench` (see --help)")
    return run(args)


def cmd_ideas(args) -> int:
    from .ideas_cmd import run

    return run(args)


COMMANDS = {"ideas": cmd_ideas, "serve": cmd_serve, "search": cmd_search, "check": cmd_check, "doctor": cmd_doctor, "bench": cmd_bench}


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                        format="peerlint: %(levelname)s: %(message)s")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    if args.command == "index":
        handler = {"build": cmd_index_build, "info": cmd_index_info}.get(args.index_command)
        if handler is None:
            parser.parse_args(["index", "--help"])
    else:
        handler = COMMANDS[args.command]
    try:
        return handler(args)
    except UserError as exc:
        print(f"peerlint: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("peerlint: interrupted", file=sys.stderr)
        return 130
