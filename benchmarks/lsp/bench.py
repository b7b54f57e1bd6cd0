"""`peerlint bench lsp`: the real server over stdio, timed the way a user feels it.

Drafts of N pages are assembled from shipped abstracts with their sentences shuffled across
papers (so they read like prose but are not copies of indexed text), laid out in sections with
math and citations. Measured per size, with a fresh judgment cache and a warm model:
  first   didOpen -> first diagnostics
  edit    one-word didChange -> diagnostics for that version (debounce set to 0 for this step,
          so the number is the server's own work; the debounce is added on top in real use)
  typing  50 edits/s for `--typing-seconds`: hover latency while typing (requests must not
          block; p50 / p99, and p50 in the first and last third to show it stays flat) and the lag
          from the last keystroke to its diagnostics (backlog)
  rss     peak resident memory of the server process, then again after *Check novelty* on one
          paragraph has loaded the embedded LM (the LLM is not loaded until such a feature runs)
and, with `--cold FILE.tex`, a cold start as an editor makes it: a new server process with an empty
cache, FILE opened right after `initialized`, timed from the process's start to its first diagnostics,
once with the models `make install` leaves in the cache and once with none.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path

from ..harness.results import RESULTS_HELP, print_table, write_result
from ...index.build import default_index_path
from ...latex.roots import find_root
from .session import measure_cold, measure_project, measure_size


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of this benchmark."""
    parser.add_argument("--index", type=Path, default=None,
                        help="index directory (default: $PEERLINT_INDEX or ~/.local/share/peerlint/index)")
    parser.add_argument("--pages", default="10,40", help="draft sizes in pages (default: 10,40)")
    parser.add_argument("--typing-seconds", type=float, default=10.0)
    parser.add_argument("--project", type=Path, action="append", default=[], metavar="FILE.tex",
                        help="also open this file of a real multi-file paper (repeatable): time to its own "
                             "findings, published first, and to the whole project's")
    parser.add_argument("--cold", type=Path, action="append", default=[], metavar="FILE.tex",
                        help="also time a cold server opening this file (repeatable): process start to its first "
                             "diagnostics, with installed models and with an empty cache")
    parser.add_argument("--query-embedding", choices=["exact", "int8"], default="int8",
                        help="the server's queryEmbedding setting (default: int8, the product's default)")
    parser.add_argument("--model", default="",
                        help="the server's `model` setting: the judge *Check novelty* loads (a packaged model, a .gguf "
                             "file or an Ollama model; default: the default judge)")
    parser.add_argument("--out", type=Path, default=None, help=RESULTS_HELP)


def _ms(value: float | None) -> str:
    return f"{value:.1f}" if value is not None else "-"


def run(args) -> int:
    index = args.index or default_index_path()
    pages = [int(p) for p in str(args.pages).split(",") if p.strip()]
    with tempfile.TemporaryDirectory(prefix="peerlint-bench-lsp-") as tmp:
        rows = [asyncio.run(measure_size(index, p, args.typing_seconds, Path(tmp), args.query_embedding,
                                                 args.model)) for p in pages]
        projects = [asyncio.run(measure_project(index, f.resolve(), find_root(f.resolve()), Path(tmp), args.query_embedding,
                                                      args.model))
                    for f in args.project]
        cold = [asyncio.run(measure_cold(index, f.resolve(), Path(tmp), args.query_embedding, installed))
                for f in args.cold for installed in (True, False)]
    headers = ["pages", "first screen ms", "whole draft ms", "re-diag ms (median)", "hover while typing p50 / p99 ms",
               "hover p50 first / last third ms", "last key → diag ms", "peak RSS MB", "with the LLM loaded MB"]
    print_table([[r["pages"], f"{r['first_screen_ms']:.0f}", f"{r['first_diagnostics_ms']:.0f}", f"{r['reanalyse_ms_median']:.0f}",
                  f"{_ms(r['typing_hover_ms_p50'])} / {_ms(r['typing_hover_ms_p99'])}",
                  f"{_ms(r['typing_hover_ms_p50_first_third'])} / {_ms(r['typing_hover_ms_p50_last_third'])}",
                  f"{r['last_keystroke_to_diagnostics_ms']:.0f}", f"{r['peak_rss_mb']:.0f}",
                  f"{r['peak_rss_llm_loaded_mb']:.0f}" if r["novelty_check_ms"] is not None else "-"] for r in rows], headers)
    if projects:
        print_table([[r["project"], r["opened"], f"{r['opened_file_diagnostics_ms']:.0f}",
                      f"{r['whole_project_diagnostics_ms']:.0f}", f"{r['peak_rss_mb']:.0f}"] for r in projects],
                    ["project", "opened", "opened file diag ms", "whole project diag ms", "peak RSS MB"])
    if cold:
        print_table([[r["opened"], r["cache"], f"{r['initialize_answered_ms']:.0f}", f"{r['start_to_first_diagnostics_ms']:.0f}"]
                     for r in cold], ["cold server opens", "cache", "initialize answered ms", "start → first diag ms"])
    path = write_result(args.out, "lsp", {"index": str(index), "query_embedding": args.query_embedding,
                                          "model": args.model or "(default judge)",
                                          "rows": rows, "projects": projects, "cold": cold,
                                          "dataset": "drafts assembled from shuffled shipped abstracts"
                                          + (" and real papers' LaTeX sources" if projects else "")})
    print(f"wrote {path}")
    return 0
