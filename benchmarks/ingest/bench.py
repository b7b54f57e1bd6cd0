"""`peerlint bench ingest`: streaming ingest of a large arXiv-snapshot file, its speed and peak memory.

The arXiv OAI snapshot holds ~2.5M records; peerlint must read such a dump without holding the file.
The bench writes an arXiv-layout file of `--records` records recycled from the shipped abstracts (ids,
dates and categories made up, one category in eight cs.CL), then reads it three ways, each in a fresh
process so each peak RSS is its own: `stream` (read_corpus, counting), `load` (what `index build` does
before chunking: load_papers, deduplicating across records and spilling past 20,000 papers to disk, then
every paper read back in order for its content hash) and `load --where category=cs.CL`; with `--build N`,
also `index build --limit N` of the file into a fresh index under `--work` (the whole file is loaded,
the first N papers chunked, embedded and indexed), for the build's own peak.
"""

from __future__ import annotations

from ..harness.results import RESULTS_HELP, peak_rss_mb, print_table, write_result

import argparse
import json
import multiprocessing
import os
import time
from pathlib import Path
from ...errors import UserError
from ...hashing import text_hash
from ...server.cli import main
from ...locations import cache_root
from ...index.ingest.load import default_corpus_path, read_corpus, load_papers

CATEGORIES = ("cs.CL", "cs.LG", "cs.CV", "stat.ML", "math.OC", "cs.AI", "physics.comp-ph", "q-bio.NC")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
PER_MONTH = 90_000  # arXiv ids are YYMM.NNNNN


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of this command."""
    parser.add_argument("--records", type=int, default=1_000_000, help="records in the generated file (default: 1M)")
    parser.add_argument("--work", type=Path, default=None,
                        help="folder for the generated file (default: ~/.cache/peerlint/bench-ingest); reused when "
                             "it already holds a file of that size")
    parser.add_argument("--build", type=int, default=0, metavar="N",
                        help="also time `index build --limit N` of the file into a fresh index (default: 0, no build)")
    parser.add_argument("--route", choices=("torch", "bf16", "onnx", "onnx-int8", "static"), default="static",
                        help="embedding route of the --build run (default: static, `pip install 'peerlint[fast]'`)")
    parser.add_argument("--out", type=Path, default=None, help=RESULTS_HELP)


def run(args: argparse.Namespace) -> int:
    if args.records < 1 or args.build < 0:
        raise UserError("--records must be at least 1 and --build at least 0")
    work = args.work or _cache_dir()
    work.mkdir(parents=True, exist_ok=True)
    path = work / f"arxiv-snapshot-{args.records}.jsonl"
    t0 = time.perf_counter()
    if not path.exists():
        _generate(path, args.records)
    generated_s = time.perf_counter() - t0
    rows, runs = [], {}
    context = multiprocessing.get_context("spawn")  # a fresh interpreter: its peak RSS is the reading's alone
    plan: list[tuple[str, tuple[str, ...]]] = [("stream", ()), ("load", ()), ("load", ("category=cs.CL",))]
    if args.build:
        plan.append(("build", (str(work / f"index-{args.build}-{args.route}"), str(args.build), args.route)))
    for mode, where in plan:
        pool = context.Pool(1)
        try:
            result = pool.apply(_measure, (str(path), mode, where))
        finally:  # a worker let exit (not terminated) releases what the build's progress bars hold
            pool.close()
            pool.join()
        label = (f"index build --limit {args.build} --route {args.route}" if mode == "build"
                 else mode + (f" --where {' '.join(where)}" if where else ""))
        runs[label] = result
        rows.append([label, result["papers"], result["seconds"], result["papers_per_s"],
                     result["peak_rss_mb"]])
    print_table(rows, ["read", "papers", "seconds", "papers/s", "peak RSS MB"],
                title=f"Ingest of {args.records:,} arXiv-snapshot records ({path.stat().st_size / 1e9:.2f} GB)")
    payload = {"dataset": {"file": str(path), "records": args.records, "bytes": path.stat().st_size,
                           "generated_from": "index/data/proceedings.jsonl.xz (abstracts recycled)"},
               "generate_seconds": round(generated_s, 1), "runs": runs, "target": {"peak_rss_mb": 2048}}
    out = write_result(args.out, "ingest", payload)
    print(f"\nwrote {out}")
    return 0


def _cache_dir() -> Path:

    return cache_root() / "bench-ingest"


def _generate(path: Path, records: int) -> None:
    """An arXiv OAI snapshot file: the layout of Kaggle's arxiv-metadata-oai-snapshot.json, one record a line."""
    shipped = list(read_corpus([default_corpus_path()]))
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as sink:
        for i in range(records):
            paper = shipped[i % len(shipped)]
            month = i // PER_MONTH
            year, mon = 2007 + month // 12, month % 12
            authors = [name.rsplit(" ", 1) for name in paper.authors] or [["Anonymous"]]
            record = {
                "id": f"{year % 100:02d}{mon + 1:02d}.{i % PER_MONTH + 1:05d}", "submitter": None,
                "authors": ", ".join(paper.authors), "title": f"{paper.title} (part {i // len(shipped) + 1})",
                "comments": None, "journal-ref": None, "doi": None, "report-no": None,
                "categories": CATEGORIES[i % len(CATEGORIES)] + (" cs.LG" if i % 3 == 0 else ""),
                "license": None, "abstract": paper.abstract,
                "versions": [{"version": "v1", "created": f"Mon, {1 + i % 28} {MONTHS[mon]} {year} 10:00:00 GMT"}],
                "update_date": f"{year}-{mon + 1:02d}-{1 + i % 28:02d}",
                "authors_parsed": [[parts[-1], parts[0] if len(parts) > 1 else "", ""] for parts in authors],
            }
            sink.write(json.dumps(record) + "\n")
    os.replace(tmp, path)


def _measure(path: str, mode: str, where: tuple[str, ...]) -> dict:
    """One reading (or, for `build`, one `index build` with `where` = (index, limit, route)) in this fresh
    process: papers, seconds and this process's peak RSS."""

    t0 = time.perf_counter()
    warnings: list[str] = []
    extra: dict = {}
    if mode == "stream":
        papers = sum(1 for _ in read_corpus([path], warn=warnings.append, where=where))
    elif mode == "build":
        extra = _build(path, *where)
        papers = extra["papers"]
    else:
        loaded = load_papers([path], warn=warnings.append, where=where)
        content_hashes = [text_hash(p.text) for p in loaded]  # build_index's first pass over the papers
        papers = len(content_hashes)
    seconds = time.perf_counter() - t0
    return {"papers": papers, "seconds": round(seconds, 1), "papers_per_s": round(papers / seconds),
            "warnings": len(warnings), "peak_rss_mb": peak_rss_mb()} | extra


def _build(path: str, index: str, limit: str, route: str) -> dict:
    """`peerlint index build --limit` into a fresh `index` (its embedding cache too): the build report."""
    import contextlib
    import io
    import shutil


    shutil.rmtree(index, ignore_errors=True)
    report = io.StringIO()
    with contextlib.redirect_stdout(report):
        code = main(["index", "build", "--corpus", path, "--index", index, "--limit", limit, "--route", route,
                     "--quiet", "--json"])
    if code != 0:
        raise RuntimeError(f"index build exited with {code}")
    return {"build": json.loads(report.getvalue())} | {"papers": int(limit)}
