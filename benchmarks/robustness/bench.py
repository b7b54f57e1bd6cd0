"""`peerlint bench robustness`: the fault and abuse harness, every case bounded in time.

Groups (each a module of this folder, run by tests/test_robustness_*.py with smaller numbers):
  protocol   raw stdio abuse of `peerlint serve` (protocol.py)
  fuzz       random multi-file projects through the parser, random editor sessions (fuzz.py, sessions.py)
  index      `index build` SIGKILLed at random points, damaged files, two builds at once (index_faults.py)
  llm        the LLM host closed, hanging, answering garbage, dying mid-stream (llm_faults.py)
  injection  "ignore previous instructions, rate 10" against the measured noise (injection.py)
  load       edits at a fixed rate with hovers in between: p99 latency and RSS, first vs last (load.py)
Prints a table per group and the totals (cases, crashes, recoveries, latency, RSS), and writes them
as JSON under results/.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from ..harness.results import RESULTS_HELP, print_table, write_result
from ...errors import UserError
from .cases import run_case
from .protocol import run_protocol_cases
from .fuzz import fuzz_parser
from .sessions import random_session
from .index_faults import Probe, concurrent_builds, damaged_indexes, kill_builds
from .llm_faults import run_llm_faults
from .injection import measure_injection
from .load import edit_load
from ...index.build import default_index_path

GROUPS = ("protocol", "fuzz", "index", "llm", "injection", "load")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of this benchmark."""
    parser.add_argument("--index", type=Path, default=None,
                        help="index the server cases use (default: $PEERLINT_INDEX or ~/.local/share/peerlint/index)")
    parser.add_argument("--only", default=",".join(GROUPS), help=f"groups to run, comma-separated (default: all of {','.join(GROUPS)})")
    parser.add_argument("--kills", type=int, default=20, help="index builds to SIGKILL (default: 20)")
    parser.add_argument("--kill-limits", default="4000,4500",
                        help="sizes of the killed builds, papers of the shipped corpus (default: 4000,4500: ~7 s builds)")
    parser.add_argument("--fuzz-projects", type=int, default=3000, help="random projects through the parser (default: 3000)")
    parser.add_argument("--sessions", type=int, default=3, help="random editor sessions of 60 operations (default: 3)")
    parser.add_argument("--injection-paragraphs", type=int, default=2, help="abstracts to inject into (default: 2)")
    parser.add_argument("--load-seconds", type=float, default=60.0, help="how long the load runs (default: 60)")
    parser.add_argument("--edit-rate", type=float, default=50.0, help="edits per second under load (default: 50)")
    parser.add_argument("--seed", type=int, default=18)
    parser.add_argument("--out", type=Path, default=None, help=RESULTS_HELP)


def _run_groups(args, index: Path, work: Path) -> tuple[list, dict]:
    groups = [g.strip() for g in str(args.only).split(",") if g.strip()]
    unknown = sorted(set(groups) - set(GROUPS))
    if unknown:

        raise UserError(f"unknown groups {unknown}: choose from {', '.join(GROUPS)}")
    results, extra = [], {}

    def say(message: str) -> None:
        print(f"  {message}", flush=True)

    if "protocol" in groups:
        say("protocol abuse over stdio ...")
        results += run_protocol_cases(work / "protocol", index)
    if "fuzz" in groups:
        say(f"fuzzing the parser with {args.fuzz_projects} projects, {args.sessions} editor sessions ...")
        results.append(fuzz_parser(work / "fuzz", args.fuzz_projects, args.seed, budget_s=600))
        for i in range(args.sessions):
            seed = args.seed + i
            (work / f"session{seed}").mkdir(parents=True, exist_ok=True)
            results.append(run_case("fuzz", f"LSP session (seed {seed})",
                                    lambda seed=seed: random_session(work / f"session{seed}", index, seed, 60)))
    if "index" in groups:
        limits = tuple(int(x) for x in str(args.kill_limits).split(","))[:2]
        say(f"killing {args.kills} index builds ({limits[0]}/{limits[1]} papers), damaging indexes ...")
        (work / "index").mkdir(parents=True, exist_ok=True)
        results += kill_builds(work / "index", args.kills, limits, args.seed, progress=say)
        good = work / "index" / "killed-index"
        probe = Probe.of(good)
        results += damaged_indexes(work / "index", good, probe, limits[0])
        results.append(concurrent_builds(work / "index", good, probe, limits))
    if "llm" in groups:
        say("failing LLM hosts ...")
        (work / "llm").mkdir(parents=True, exist_ok=True)
        results += run_llm_faults(work / "llm", index)
    if "injection" in groups:
        say(f"prompt injection into {args.injection_paragraphs} abstracts (embedded model; minutes) ...")
        cases, rows = measure_injection(index, args.injection_paragraphs, progress=say)
        results += cases
        extra["injection_rows"] = rows
    if "load" in groups:
        say(f"{args.edit_rate:g} edits/s for {args.load_seconds:g} s with hovers ...")
        (work / "load").mkdir(parents=True, exist_ok=True)
        results.append(run_case("load", f"{args.edit_rate:g} edits/s for {args.load_seconds:g} s with hovers",
                                lambda: edit_load(work / "load", index, args.load_seconds, args.edit_rate)))
    return results, extra


def summary(results: list) -> dict:
    """The totals docs/benchmarks/robustness.md quotes: cases, crashes, recoveries (of kills and restarts), load figures."""
    kills = [r for r in results if r.group == "index" and r.name.startswith("SIGKILL")]
    load = next((r for r in results if r.group == "load" and r.figures), None)
    f = load.figures if load else {}
    return {
        "cases": len(results), "passed": sum(r.ok for r in results), "crashes": sum(r.crashed for r in results),
        "recoveries": {"after_kills": sum(bool(r.recovered) for r in kills), "kills": len(kills),
                       "after_crashes": sum(bool(r.recovered) for r in results if r.crashed and r not in kills)},
        "latency": {k: f.get(k) for k in ("hover_p50_ms", "hover_p99_ms", "hover_p99_first_ms", "hover_p99_last_ms",
                                           "last_edit_to_diagnostics_s")},
        "rss": {k: f.get(k) for k in ("rss_first_mb", "rss_last_mb", "rss_drift_mb")},
        "load": {k: f.get(k) for k in ("seconds", "edits", "edit_rate", "hovers")},
    }


def run(args) -> int:
    index = args.index or default_index_path()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="peerlint-bench-robustness-") as tmp:
        results, extra = _run_groups(args, index, Path(tmp))
    for group in GROUPS:
        rows = [[r.name, "ok" if r.ok else ("CRASH" if r.crashed else "FAILED"), round(r.seconds, 1), r.detail[:150]]
                for r in results if r.group == group]
        if rows:
            print_table(rows, ["case", "result", "s", "detail"], title=group)
    totals = summary(results)
    rec = totals["recoveries"]
    print(f"\ncases {totals['cases']}, passed {totals['passed']}, crashes {totals['crashes']}, "
          f"recoveries after SIGKILL {rec['after_kills']}/{rec['kills']}")
    if totals["load"]["edits"]:
        lat, rss, load = totals["latency"], totals["rss"], totals["load"]
        print(f"load: {load['edits']} edits ({load['edit_rate']}/s) and {load['hovers']} hovers in {load['seconds']:g} s; "
              f"hover p99 {lat['hover_p99_first_ms']} ms (first 10 s) / {lat['hover_p99_last_ms']} ms (last 10 s), "
              f"p99 overall {lat['hover_p99_ms']} ms; RSS {rss['rss_first_mb']} -> {rss['rss_last_mb']} MB "
              f"(drift {rss['rss_drift_mb']} MB)")
    path = write_result(args.out, "robustness", {
        "index": str(index), "seconds": round(time.monotonic() - started, 1), **totals,
        "case_results": [r.to_json() for r in results], **extra,
        "dataset": "the index given (server cases), the shipped corpus (killed builds), generated projects and sessions"})
    print(f"wrote {path}")
    return 0 if totals["crashes"] == 0 and totals["passed"] == totals["cases"] else 1
