"""`peerlint bench drafts`: Between the Drafts (Chen, Weber & Dietrich, 2025) on any corpus.

Suites (`--suite`): consistency (Appendix C.1), informal (C.2, with Debian's fortune cookies in
place of Amazon reviews), revisions (Section 4.1, on the arXivEdits revision pairs; trains the
revisions model the editor ships), diff (`peerlint diff` on a git repository of those pairs), venue
(Section 4.2, every candidate venue as the reference database, plus a kNN-vote baseline; with
`--corpus`, heads trained on the shipped corpus name the given corpus's venues and years),
acceptance (reviewer decisions and ratings where the corpus has them), latency (a whole draft
scored, and the editor's revision judgments after a save) and scale (the section summary's quality
scale on held-out published sections and their degraded versions; `--rebuild` retrains it).  informal and venue also measure the
editor's `weak-chunk` and `off-venue-style` flags at their shipped operating points.  Each compares the paper's
LLM rating with peerlint's embedding heads and their ensemble; LLM work is capped by `--limit`
because a 135M model on two cores rates about one chunk every 5–12 s.
"""

from __future__ import annotations

from ..harness.results import RESULTS_HELP

import argparse
import sys
import time
from pathlib import Path
from ..harness.corpus_index import ensure_index
from ...index.ingest.load import default_corpus_path, load_papers
from . import suites as drafts_suites
from .context import Bench, BenchError, log
from .scale_data import check_projects
from ...errors import UserError

SUITES = ("consistency", "informal", "revisions", "diff", "venue", "style", "acceptance", "latency", "scale")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `peerlint bench drafts`."""
    parser.add_argument("--suite", choices=SUITES + ("all",),
                        default="all", help="which measurement (default: all)")
    parser.add_argument("--corpus", nargs="+", type=Path, default=None, help="corpus files (default: the shipped proceedings); venue: heads trained on the shipped corpus "
                             "are tested on these files' venues and years")
    parser.add_argument("--venue-year", type=int, default=None,
                        help="venue, shipped corpus: the test year (default: the year with the most main "
                             "venues); acceptance: score only this year's venue-years (default: every one)")
    parser.add_argument("--venues", type=lambda s: [v.strip() for v in s.split(",") if v.strip()], default=None,
                        help="venue, shipped corpus: the candidate venues, comma-separated (default: every main "
                             "venue of the test year with 30+ papers)")
    parser.add_argument("--backend", choices=("auto", "embedded", "ollama"), default="auto", help="LLM backend (default: auto)")
    parser.add_argument("--model", help="a packaged model (`peerlint models`), a .gguf file, or an Ollama model name")
    parser.add_argument("--fluency-model", default=None,
                        help="revisions / acceptance: the LM behind the fluency features (a packaged model or a .gguf "
                             "file; default: --model), or `none` to leave the fluency rows out; fix it (or none) to "
                             "compare judges on their ratings alone")
    parser.add_argument("--limit", type=int, help="items rated by the LLM per suite (per class / venue); default per suite")
    parser.add_argument("--index", type=Path, default=None,
                        help="index of the corpus, built if missing (default: ~/.cache/peerlint/bench-index-<corpus hash>)")
    parser.add_argument("--arxivedits", type=Path, default=None,
                        help="revisions / diff: an arXivEdits-layout JSON file to measure on (default: the shared dev.json; "
                             "the model is always trained on train.json)")
    parser.add_argument("--rebuild", action="store_true",
                        help="scale: retrain the section quality scale (analyzers/drafts/data/quality_scale.npz) from "
                             "benchmarks/drafts/data/published_sections.jsonl.xz before measuring it")
    parser.add_argument("--from-latex", nargs="+", type=Path, default=None, metavar="DIR",
                        help="scale: LaTeX projects (folders or root .tex files) whose sections are scored as published "
                             "and degraded, in place of tests/data/real (your own papers, or papers the scale never saw); "
                             "written as drafts-scale-from-latex")
    parser.add_argument("--out", type=Path, default=None, help=RESULTS_HELP)


def run(args) -> int:
    if args.from_latex:
        try:  # before the bench's index is built: a mistyped path is said in a second, not minutes
            check_projects(args.from_latex)
        except ValueError as exc:
            raise UserError(f"--from-latex: {exc}") from None
    sources = [Path(p) for p in (args.corpus or [default_corpus_path()])]
    papers = load_papers(sources, warn=lambda m: None)
    if not papers:
        raise BenchError(f"no papers in {', '.join(map(str, sources))}")
    index = ensure_index(papers, sources, args.index, "bench drafts")
    bench = Bench(args, papers, index, [str(s) for s in sources])

    suites = SUITES if args.suite == "all" else (args.suite,)
    for suite in suites:
        start = time.perf_counter()
        log(f"suite {suite} (limit {args.limit})")
        try:
            getattr(drafts_suites, suite)(bench)
        except BenchError as exc:
            print(f"peerlint: error: {exc}", file=sys.stderr)
            return 2
        log(f"suite {suite} took {time.perf_counter() - start:.0f} s")
    return 0
