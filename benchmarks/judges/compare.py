"""The judge, chosen by measurement (issue #34, item 2): every judgment bench's number, per model, in one file.

The benches write one run file per model (`peerlint bench llm|lsp|rinobench|drafts|schnovel|tournament
--model M`); `summary` reads those run files, recognises each one's bench and model (from what the
file itself records: the model's path, the `llm` field, the predictor), and writes one JSON whose
rows are measures and whose columns are the packaged models, each value with its sample size, a 95 %
interval where the measure is a proportion of independent items (Wilson) or an AUROC (Hanley &
McNeil), and the run file and command it came from. `revision-latency` times the editor's revision
verdicts (`benchmarks.drafts.revisions.editor_latency`) with a given LM, and records which.

    python -m peerlint.benchmarks.judges.compare revision-latency --model M [--out DIR]
    python -m peerlint.benchmarks.judges.compare summary RUN.json ... --out results/latest/judges.json [--markdown]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ...llm.models import MODELS
from ..drafts.revisions import editor_latency
from ..harness.results import REPO, print_table, write_result

Z95 = 1.959964


def model_key(recorded: str) -> str | None:
    """The packaged model a run file names (a packaged name, a GGUF path or stem, `embedded:STEM`,
    `llm:embedded:STEM`); None for anything else (an Ollama model, a user's own file)."""
    text = str(recorded)
    for prefix in ("llm:", "embedded:"):
        text = text[len(prefix):] if text.startswith(prefix) else text
    stem = Path(text).name.removesuffix(".gguf").lower()
    for model in MODELS.values():
        single = Path(model.parts[0].file).stem.lower() if not model.joined else None
        if stem == model.name or stem.startswith(f"{model.name}-") or stem == single:
            return model.name
    return None


def wilson(successes: float, n: int) -> tuple[float, float] | None:
    if n <= 0:
        return None
    p = successes / n
    centre = (p + Z95 ** 2 / (2 * n)) / (1 + Z95 ** 2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95 ** 2 / (4 * n * n)) / (1 + Z95 ** 2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def hanley_mcneil(auc: float, n_pos: int, n_neg: int) -> tuple[float, float] | None:
    """95 % interval of an AUROC from its standard error (Hanley & McNeil, 1982)."""
    if n_pos < 1 or n_neg < 1:
        return None
    q1, q2 = auc / (2 - auc), 2 * auc * auc / (1 + auc)
    se = math.sqrt(max(auc * (1 - auc) + (n_pos - 1) * (q1 - auc * auc) + (n_neg - 1) * (q2 - auc * auc), 0.0)
                   / (n_pos * n_neg))
    return max(0.0, auc - Z95 * se), min(1.0, auc + Z95 * se)


@dataclass(frozen=True)
class Value:
    value: float
    n: int | None = None  # the sample the number is over (items, pairs, comparisons)
    interval: tuple[float, float] | None = None


def _row(rows: list, name: str) -> list | None:
    return next((r for r in rows if r[0] == name), None)


def _proportion(value: float | None, n: int) -> Value | None:
    return None if value is None else Value(value, n, wilson(value * n, n))


# -- what each bench's run file gives: (bench, the model it names, its measures) ---------------------------
def _llm(d: dict) -> dict[str, Value]:
    rows = {r["path"]: r for r in d["prompt_eval"]}
    return {"prompt_tps_raw": Value(rows["llama.cpp raw: prompt eval"]["tokens_per_s"], d["dataset"]["prompt_tokens"]),
            "prompt_tps_warm": Value(rows["peerlint score, warm (prefix reuse)"]["tokens_per_s"], d["dataset"]["prompt_tokens"]),
            "generate_tps": Value(d["generation"]["peerlint_tokens_per_s"], d["generation"].get("timed_tokens")),
            "reused_tokens": Value(d["warm_reused_tokens"], d["dataset"]["prompt_tokens"])}


def _lsp(d: dict) -> dict[str, Value]:
    row = d["rows"][0]
    if row.get("novelty_check_ms") is None:
        return {}
    out = {"novelty_check_s": Value(row["novelty_check_ms"] / 1000, 1),
           "server_rss_mb": Value(row["peak_rss_llm_loaded_mb"], 1)}
    if row.get("novelty_check_cpu_s") is not None:
        out["novelty_check_cpu_s"] = Value(row["novelty_check_cpu_s"], 1)
    return out


def _rinobench(d: dict) -> dict[str, Value]:
    out = {}
    for row in d["rows"]:
        s = row["scores"]
        if row["name"].endswith(" token-prob"):
            out["rino_mae_tokenprob"] = Value(s["mae"], s["n"])
            out["rino_f1_tokenprob"] = Value(s["macro_f1"], s["n"])
        elif row["name"].endswith(" JSON"):
            out["rino_answered_json"] = Value(s["answered"], s["n"])
            if s.get("mae") is not None:
                out["rino_mae_json"] = Value(s["mae"], s["answered"])
    return out


def _revisions(d: dict) -> dict[str, Value]:
    out = {}
    for key, name in (("rev_win_rag", "llm (A.1, RAG)"), ("rev_win_norag", "llm (A.2, no RAG)")):
        row = _row(d["rows"], name)
        if row and row[2] is not None:
            out[key] = _proportion(row[2], row[1])
    return out


def _acceptance(d: dict) -> dict[str, Value]:
    out = {}
    half = lambda n: (n // 2, n - n // 2)  # noqa: E731  (the LLM's items are balanced: k accepted, k rejected)
    for key, name in (("acc_auroc_llm", "llm (A.1, RAG)"), ("acc_auroc_llm_prior", "llm + prior (sum of z-scores, label-free)")):
        row = _row(d["rows"], name)
        if row and row[2] is not None:
            out[key] = Value(row[2], row[1], hanley_mcneil(row[2], *half(row[1])))
    return out


def _venue(d: dict) -> dict[str, Value]:
    row = _row(d.get("llm_rows", []), "llm (A.5, RAG per venue)")
    return {"venue_acc_llm": _proportion(row[2], row[1])} if row and row[2] is not None else {}


def _schnovel(d: dict) -> dict[str, Value]:
    out = {}
    for m in d["methods"]:
        if m["method"] in ("zero-shot", "rag-novelty", "two-shot"):
            # both orders of each pair are asked: 2 x pairs answers, not independent; the interval is over pairs
            out[f"schnovel_{m['method']}"] = Value(m["mean"], m["pairs"], wilson(m["mean"] * m["pairs"], m["pairs"]))
            out[f"schnovel_{m['method']}_bias"] = Value(m["position_bias"], m["pairs"])
    return out


def _tournament(d: dict) -> dict[str, Value]:
    for row in d["rows"]:
        if row["variant"].startswith("llm: "):
            n = row["n"]
            return {"tournament_auroc": Value(row["auroc"], n, hanley_mcneil(row["auroc"], n // 2, n - n // 2)),
                    "tournament_pairs": _proportion(row.get("mixed_pair_accuracy"), row["comparisons"])
                    if row.get("mixed_pair_accuracy") is not None else None}
    return {}


def _nova(d: dict) -> dict[str, Value]:
    rows = [r for r in d["rows"] if r["rule"] == "LLM on all 10 (no guard)"]
    ideas, right = sum(r["ideas"] for r in rows), sum(r["correct"] for r in rows)
    out = {"nova_llm_acc": _proportion(right / ideas, ideas)} if ideas else {}
    bands = {b["band"]: b for b in d["bands"]}
    near, far = bands.get("0.9-1.0"), bands.get("0.0-0.6")
    if near and far and near["p_yes_mean"] is not None and far["p_yes_mean"] is not None:
        out["nova_same_gap"] = Value(near["p_yes_mean"] - far["p_yes_mean"], near["papers"] + far["papers"])
    return out


def _revision_latency(d: dict) -> dict[str, Value]:
    name = next((k for k in d["seconds"] if k.startswith("save,")), None)
    return {"revision_save_s": Value(d["seconds"][name], d["sentences"].get(name))} if name else {}


def _drafts_model(d: dict) -> str:
    return d["llm"]


READERS: dict[str, tuple[Callable[[dict], str], Callable[[dict], dict[str, Value]]]] = {
    "llm": (lambda d: d["model"]["path"], _llm),
    "lsp": (lambda d: d.get("model", ""), _lsp),
    "rinobench": (lambda d: d["predictor"]["model"], _rinobench),
    "drafts-revisions": (_drafts_model, _revisions),
    "drafts-acceptance": (_drafts_model, _acceptance),
    "drafts-venue": (_drafts_model, _venue),
    "bench-schnovel": (lambda d: next(m["llm"] for m in d["methods"] if "llm" in m), _schnovel),
    "tournament": (lambda d: next(r["variant"][len("llm: "):] for r in d["rows"] if r["variant"].startswith("llm: ")),
                   _tournament),
    "tournament-nova": (lambda d: d["llm"], _nova),
    "judges-revision-latency": (lambda d: d["model"], _revision_latency),
}

# measure key -> (what the docs table says, the better direction, decimals shown)
MEASURES: dict[str, tuple[str, str, int]] = {
    "prompt_tps_raw": ("prompt evaluation, raw llama.cpp (tokens/s)", "higher", 1),
    "prompt_tps_warm": ("prompt evaluation, peerlint warm (tokens/s)", "higher", 1),
    "generate_tps": ("generation, peerlint (tokens/s)", "higher", 1),
    "reused_tokens": ("prompt tokens reused from the KV cache", "higher", 0),
    "novelty_check_s": ("Check novelty, one paragraph (s)", "lower", 1),
    "novelty_check_cpu_s": ("Check novelty, server CPU seconds", "lower", 1),
    "server_rss_mb": ("server RSS with the judge loaded (MB)", "lower", 0),
    "revision_save_s": ("revision verdicts after a save (s)", "lower", 1),
    "rino_mae_tokenprob": ("RINoBench MAE, token probabilities", "lower", 3),
    "rino_f1_tokenprob": ("RINoBench macro-F1, token probabilities", "higher", 3),
    "rino_answered_json": ("RINoBench answers parsed, JSON", "higher", 0),
    "rev_win_rag": ("revisions win rate, A.1 with RAG", "higher", 3),
    "rev_win_norag": ("revisions win rate, A.2 without RAG", "higher", 3),
    "acc_auroc_llm": ("acceptance AUROC, A.1 with RAG", "higher", 3),
    "acc_auroc_llm_prior": ("acceptance AUROC, LLM + label-free prior", "higher", 3),
    "venue_acc_llm": ("venue accuracy, A.5 (3 venues)", "higher", 3),
    "schnovel_zero-shot": ("SchNovel accuracy, zero-shot", "higher", 3),
    "schnovel_zero-shot_bias": ("SchNovel position bias, zero-shot", "lower", 3),
    "schnovel_rag-novelty": ("SchNovel accuracy, RAG-Novelty", "higher", 3),
    "schnovel_rag-novelty_bias": ("SchNovel position bias, RAG-Novelty", "lower", 3),
    "tournament_auroc": ("tournament AUROC, accepted vs rejected", "higher", 3),
    "tournament_pairs": ("tournament mixed-pair accuracy", "higher", 3),
    "nova_llm_acc": ("NOVA check, LLM on all 10 neighbours: ideas right", "higher", 3),
    "nova_same_gap": ("NOVA p(same) at similarity >= 0.9 minus at < 0.6", "higher", 3),
}


def read_run(path: Path) -> tuple[str, str, dict[str, Value], dict] | None:
    """(bench, packaged model, measures, the run's record) of one run file; None for a file no reader knows."""
    data = json.loads(path.read_text(encoding="utf-8"))
    reader = READERS.get(data.get("bench", ""))
    if reader is None:
        return None
    model = model_key(reader[0](data))
    if model is None:
        return None
    return data["bench"], model, {k: v for k, v in reader[1](data).items() if v is not None}, data


def summarise(paths: list[Path], archive_name: Callable[[Path], str] = lambda p: p.name) -> dict[str, Any]:
    """The comparison: one row per measure, one value per model; the latest run file wins a tie."""
    found: dict[tuple[str, str], tuple[Value, str, list[str], str]] = {}
    for path in sorted(paths, key=lambda p: json.loads(p.read_text(encoding="utf-8")).get("created_at", "")):
        run = read_run(path)
        if run is None:
            print(f"judges: {path}: not a judge run (no reader for its bench, or no packaged model)", file=sys.stderr)
            continue
        bench, model, values, data = run
        for key, value in values.items():
            found[(key, model)] = (value, archive_name(path), data.get("command", []), bench)
    rows = []
    for key, (label, better, decimals) in MEASURES.items():
        cells = {m: found[(key, m)] for m in MODELS if (key, m) in found}
        if not cells:
            continue
        rows.append({"measure": key, "label": label, "better": better, "decimals": decimals,
                     "values": {m: round(v.value, 4) for m, (v, *_rest) in cells.items()},
                     "n": {m: v.n for m, (v, *_rest) in cells.items()},
                     "ci95": {m: [round(x, 3) for x in v.interval] for m, (v, *_rest) in cells.items() if v.interval},
                     "run": {m: r for m, (_v, r, _c, _b) in cells.items()},
                     "command": {m: " ".join(["peerlint", *c[1:]]) if c else "" for m, (_v, _r, c, _b) in cells.items()},
                     "bench": next(iter(cells.values()))[3]})
    return {"models": {m.name: {"title": m.title, "bytes": m.size, "packages": len(m.parts), "sha256": m.sha256}
                       for m in MODELS.values()},
            "rows": rows}


def fmt(value: float, decimals: int = 3) -> str:
    """A table cell's number as the docs show it."""
    return f"{value:.{decimals}f}"


def markdown(summary: dict[str, Any]) -> str:
    """The docs table: one row per measure, each model's value with its 95 % interval, the sample sizes."""
    names = list(summary["models"])
    lines = ["| measure | " + " | ".join(names) + " | sample |", "|---|" + "---|" * (len(names) + 1)]
    for row in summary["rows"]:
        cells = []
        for m in names:
            v = row["values"].get(m)
            ci = row["ci95"].get(m)
            cells.append("-" if v is None else (fmt(v, row["decimals"]) + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")))
        n = sorted({x for x in row["n"].values() if x is not None})
        lines.append(f"| {row['label']} | " + " | ".join(cells) + f" | {', '.join(map(str, n)) or '-'} |")
    return "\n".join(lines)


def expected(summary: dict[str, Any], page: str, results: str) -> str:
    """results/expected/*.yaml for tests/test_docs.py: every value of the docs table, where the JSON has it."""
    out = [f"# Expected results (see schnovel.yaml for how they are checked): {page}'s comparison table,",
           "# written by `python -m peerlint.benchmarks.judges.compare summary ... --expected`.",
           "benchmark: the judge comparison (issue 34)", f"page: {page}",
           "command: python -m peerlint.benchmarks.judges.compare summary RUNS --out results/latest/judges.json",
           "checks:"]
    for row in summary["rows"]:
        out += ["  - table: measure", f"    row: {json.dumps(row['label'])}", f"    results: {results}", "    values:"]
        for m, v in row["values"].items():
            path = f"rows[measure={row['measure']}].values[{json.dumps(m)}]"
            out.append(f"      - {{column: {json.dumps(m)}, path: {json.dumps(path)}, expect: \"{fmt(v, row['decimals'])}\"}}")
    return "\n".join(out) + "\n"


# -- the revision verdicts' latency with a given LM -----------------------------------------------------
def revision_latency(model: str, pages: int, out: Path | None) -> Path:
    """`editor_latency` with `model` as the embedded LM the revision judge loads (it takes the default
    model: `$PEERLINT_MODEL` for a packaged name, `$PEERLINT_GGUF` for a file)."""
    os.environ["PEERLINT_MODEL" if model in MODELS else "PEERLINT_GGUF"] = model

    rows, seconds = editor_latency(pages)
    print_table(rows, ["save", "s", "sentences scored", "revision-weaker findings"],
                title=f"revision verdicts with {model} ({pages}-page draft)")
    return write_result(out, "judges-revision-latency", {
        "model": model, "pages": pages, "rows": rows, "seconds": seconds,
        "sentences": {r[0]: r[2] for r in rows},
        "note": "the revisions model's weights were fitted on SmolLM2-135M's fluency: with another LM the "
                "verdicts are timed, not meaningful"})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m peerlint.benchmarks.judges.compare", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    lat = sub.add_parser("revision-latency", help="time the editor's revision verdicts with one LM")
    lat.add_argument("--model", required=True, help="a packaged model's name or a .gguf file")
    lat.add_argument("--pages", type=int, default=20)
    lat.add_argument("--out", type=Path, default=None)
    summ = sub.add_parser("summary", help="one comparison JSON from the benches' run files")
    summ.add_argument("runs", nargs="+", type=Path)
    summ.add_argument("--out", type=Path, required=True)
    summ.add_argument("--markdown", action="store_true", help="also print the docs table")
    summ.add_argument("--expected", type=Path, help="also write the docs test's expected-results YAML here")
    args = parser.parse_args(argv)
    if args.command == "revision-latency":
        print(f"wrote {revision_latency(args.model, args.pages, args.out)}")
        return 0

    def archived(p: Path) -> str:
        try:
            return str(p.resolve().relative_to(REPO))
        except ValueError:
            return p.name

    summary = summarise(args.runs, archived)
    record = {"bench": "judges", "command": ["python", "-m", "peerlint.benchmarks.judges.compare", "summary",
                                             *[archived(p) for p in args.runs]], **summary}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    if args.markdown:
        print(markdown(summary))
    if args.expected:
        args.expected.write_text(expected(summary, "docs/benchmarks/judges.md", args.out.name), encoding="utf-8")
        print(f"wrote {args.expected}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
