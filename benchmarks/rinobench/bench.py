"""`peerlint bench rinobench`: RINoBench (Schopf & Färber, LREC 2026) — 1–5 novelty judgments of research ideas.

Reads a split in the official layout (`--data test.json`), asks the LLM for a score and a
justification with the paper's zero-shot prompt, also reads the score from token probabilities,
has an LLM judge the justification against the gold one (unless `--no-judge`), and prints the nine
metrics beside two trivial baselines: a constant 3 and the majority class of the evaluated items.
On the official test set a constant 3 scores MAE 0.86 and macro-F1 9.6, a better MAE than any
LLM in the paper (best 0.93), so a model's row means little without them.

The gold data is not shipped; `benchmarks/data/rinobench_sample.json` is a hand-built demo in the
same layout (ideas written from real abstracts of the shipped corpus), NOT the official data.
"""

from __future__ import annotations

from ..harness.results import RESULTS_HELP, print_table, write_result

import argparse
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Callable, Sequence

from ...errors import UserError
from ...llm.base import LLMError
from .dataset import RinoDataError, read_rinobench, RinoItem
from .judge import Justification, Prediction, RinoLLM, TokenScore, budget_for
from .metrics import JustificationMetrics, ScoreMetrics, item_justification, justification_metrics, majority_class, score_metrics
from ...llm.select import make_llm

SAMPLE = Path(__file__).with_name("data") / "rinobench_sample.json"
PAPER_REFERENCE = {  # the official test set (277 items), Table 3 and eval JSONs of the official repository
    "constant-3": {"macro_f1": 0.0956, "mae": 0.863, "note": "computed from Table 2's class counts"},
    "best LLM MAE": {"model": "GPT-5 / o3", "mae": 0.93, "macro_f1": 0.172},
    "judge": "GPT-4.1",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of this command."""
    parser.add_argument("--data", type=Path, metavar="FILE",
                        help=f"RINoBench split: JSON list, JSON Lines or {{'test': [...]}} (demo: {SAMPLE})")
    parser.add_argument("--backend", choices=("auto", "embedded", "ollama"), default="auto",
                        help="LLM backend (default: auto)")
    parser.add_argument("--model", help="a packaged model (`peerlint models`), a .gguf file, or an Ollama model name")
    parser.add_argument("--judge-model", help="model for the justification judge (default: --model)")
    parser.add_argument("--host", help="Ollama host (default: $OLLAMA_HOST or localhost)")
    parser.add_argument("--limit", type=int, help="evaluate only the first N items")
    parser.add_argument("--works-chars", type=int,
                        help="characters of related work per prompt (default: 4000 embedded, 12000 Ollama)")
    parser.add_argument("--no-judge", action="store_true", help="skip the LLM-judged justification metrics")
    parser.add_argument("--out", type=Path, default=None, help=RESULTS_HELP)


def _log(message: str) -> None:
    print(f"bench rinobench: {message}", file=sys.stderr, flush=True)


# -- evaluation --------------------------------------------------------------------------------

@dataclass(frozen=True)
class ItemOutcome:
    """Everything measured on one item (the JSON keeps these per item)."""

    id: str
    gold: int
    prediction: Prediction
    token: TokenScore
    justification: Justification | None = None  # when judged
    seconds: float = 0.0


def evaluate(items: Sequence[RinoItem], predictor: RinoLLM, judge: RinoLLM | None = None,
             progress: Callable[[str], None] = lambda m: None) -> list[ItemOutcome]:
    """Predict every item both ways; judge each parsed justification with `judge` (None: no judging)."""
    outcomes = []
    for n, item in enumerate(items, 1):
        start = time.perf_counter()
        prediction = predictor.predict(item)
        token = predictor.token_score(item)
        judged = judge.judge(item, prediction.reasoning) if judge is not None and prediction.score is not None else None
        outcomes.append(ItemOutcome(item.id, item.novelty_score, prediction, token, judged, time.perf_counter() - start))
        progress(f"{n}/{len(items)} {item.id}: gold {item.novelty_score}, predicted "
                 f"{prediction.score if prediction.score is not None else prediction.failure.kind}, "
                 f"token {token.score if token.score is not None else '-'} ({time.perf_counter() - start:.1f} s)")
    return outcomes


@dataclass(frozen=True)
class Row:
    name: str
    scores: ScoreMetrics
    unparsed: int = 0
    errors: int = 0
    justification: JustificationMetrics | None = None
    note: str = ""


def rows_for(items: Sequence[RinoItem], outcomes: Sequence[ItemOutcome] | None, model: str = "model") -> list[Row]:
    """The table: constant 3, majority class of these items, then the model's two readings."""
    gold = [i.novelty_score for i in items]
    majority = majority_class(gold)
    rows = [Row("constant-3", score_metrics(gold, [3] * len(gold)), note="always 3"),
            Row(f"majority-class ({majority})", score_metrics(gold, [majority] * len(gold)),
                note=f"most frequent gold score of the {len(gold)} evaluated items")]
    if outcomes is None:
        return rows
    preds = [o.prediction for o in outcomes]
    judged = [item_justification(o.justification) for o in outcomes if o.justification is not None]
    rows.append(Row(f"{model} JSON", score_metrics(gold, [p.score for p in preds]),
                    sum(p.failure is not None and p.failure.kind == "unparsed" for p in preds),
                    sum(p.failure is not None and p.failure.kind == "error" for p in preds),
                    justification_metrics(judged) if judged else None,
                    "generated score under the JSON schema (the paper's protocol)"))
    tokens = [o.token for o in outcomes]
    rows.append(Row(f"{model} token-prob", score_metrics(gold, [t.score for t in tokens]),
                    sum(t.failure is not None and t.failure.kind == "unparsed" for t in tokens),
                    sum(t.failure is not None and t.failure.kind == "error" for t in tokens),
                    note="expected value over '1'..'5' from token probabilities, rounded"))
    return rows


HEADERS = ("method", "n", "unparsed", "LLM err", "macro-F1", "F1 1", "F1 2", "F1 3", "F1 4", "F1 5", "MAE",
           "ALI", "KA rec", "NA rec", "KA add", "NA add", "KA hall", "NA hall")


def _pct(x: float | None) -> float | None:
    return None if x is None else round(100 * x, 1)


def table_rows(rows: Sequence[Row]) -> list[list[Any]]:
    """F1, recalls, ratios and hallucination rates in % (as the paper's Table 3); MAE and ALI as numbers."""
    out = []
    for r in rows:
        s = r.scores
        j = r.justification.means if r.justification is not None else {}

        def jm(name: str, pct: bool = True) -> float | None:
            m = j.get(name)
            if m is None or m.value is None:
                return None
            return _pct(m.value) if pct else round(m.value, 3)

        out.append([r.name, s.n, r.unparsed, r.errors, _pct(s.macro_f1), *(_pct(s.per_class_f1[c]) for c in (1, 2, 3, 4, 5)),
                    None if s.mae is None else round(s.mae, 3), jm("alignment", pct=False),
                    jm("known_recall"), jm("novelty_recall"), jm("known_additional"), jm("novelty_additional"),
                    jm("known_hallucination"), jm("novelty_hallucination")])
    return out


# -- the command -------------------------------------------------------------------------------

def _llm(backend: str, model: str | None, host: str | None):
    try:
        return make_llm(backend, model, host)
    except LLMError as exc:
        raise UserError(str(exc)) from None


def _outcome_json(o: ItemOutcome) -> dict[str, Any]:
    record = {"id": o.id, "gold": o.gold, "prediction": asdict(o.prediction), "token_score": asdict(o.token),
              "seconds": round(o.seconds, 2)}
    if o.justification is not None:
        record["justification"] = asdict(o.justification)
        record["justification_metrics"] = asdict(item_justification(o.justification))
    return record


def _notes(items, outcomes, rows, budget, llm, judge, predictor) -> list[str]:
    """What a reader needs beside the table: baselines' meaning, truncation, failures, the paper's numbers."""
    shown = [o.prediction.works_shown for o in outcomes]
    total = [o.prediction.works_total for o in outcomes]
    cut = sum(s < t for s, t in zip(shown, total))
    notes = [f"majority class = most frequent gold score of the evaluated items ({rows[1].name})",
             f"related works shown: {sum(shown)} of {sum(total)} ({cut} of {len(items)} prompts truncated to "
             f"{budget.works_chars} characters for {llm.name}:{llm.model})",
             "unparsed = answer not valid under the schema (never guessed); LLM err = timeout or backend failure; "
             "both count as misses in F1 and are left out of MAE",
             "paper, official test set: constant 3 MAE 0.86 / macro-F1 9.6; best LLMs MAE 0.93, macro-F1 17.2 "
             "(GPT-5), judged by GPT-4.1"]
    if judge is not None:
        failures = [f for o in outcomes if o.justification is not None for f in o.justification.failures]
        notes.append(f"judge {judge.llm.name}:{judge.llm.model}: {len(failures)} failed judge steps "
                     f"({sum(f.kind == 'unparsed' for f in failures)} unparsed) over "
                     f"{sum(o.justification is not None for o in outcomes)} judged items; the justification "
                     "metrics are only as good as this judge (the paper's is GPT-4.1)")
    if predictor.unavailable:
        notes.append(f"the backend became unavailable; later items were not asked: {predictor.unavailable}")
    return notes


def run(args: argparse.Namespace) -> int:
    if args.data is None:
        raise UserError(f"give the RINoBench split with --data FILE (the official test.json, or the demo {SAMPLE})")
    if args.limit is not None and args.limit < 1:
        raise UserError("--limit must be at least 1")
    try:
        data = read_rinobench(args.data)
    except RinoDataError as exc:
        raise UserError(str(exc)) from None
    items = list(data.items[: args.limit] if args.limit else data.items)
    _log(f"{data.path} ({data.layout}): {len(data.items)} items, {len(data.skipped)} skipped, "
         f"{data.dropped_works} related works without title or abstract dropped; evaluating {len(items)}")
    for s in data.skipped[:5]:
        _log(f"skipped record {s.position}: {s.reason}")

    llm = _llm(args.backend, args.model, args.host)
    budget = budget_for(llm.name)
    if args.works_chars:
        budget = replace(budget, works_chars=args.works_chars)
    predictor = RinoLLM(llm, budget)
    judge = None
    if not args.no_judge:
        judge = RinoLLM(_llm(args.backend, args.judge_model, args.host), budget) if args.judge_model else predictor
    _log(f"predictor {llm.name}:{llm.model}; judge "
         f"{'off (--no-judge)' if judge is None else f'{judge.llm.name}:{judge.llm.model}'}; "
         f"related work per prompt: {budget.works_chars} characters, abstracts cut to {budget.abstract_chars}")
    start = time.perf_counter()
    outcomes = evaluate(items, predictor, judge, progress=_log)
    seconds = time.perf_counter() - start

    rows = rows_for(items, outcomes, llm.model)
    print_table(table_rows(rows), HEADERS,
                f"RINoBench on {len(items)} items of {data.path} — F1, recall, ratios, hallucination in %; "
                "ALI 0-1; MAE over answered items")
    notes = _notes(items, outcomes, rows, budget, llm, judge, predictor)
    for note in notes:
        print(f"  {note}")

    path = write_result(args.out, "rinobench", {
        "dataset": {"path": data.path, "layout": data.layout, "items": len(data.items), "evaluated": len(items),
                    "skipped": [asdict(s) for s in data.skipped], "dropped_related_works": data.dropped_works,
                    "is_shipped_sample": SAMPLE.resolve() == Path(args.data).resolve()},
        "predictor": {"backend": llm.name, "model": llm.model}, "budget": asdict(budget),
        "judge": None if judge is None else {"backend": judge.llm.name, "model": judge.llm.model},
        "rows": [{"name": r.name, "note": r.note, "unparsed": r.unparsed, "errors": r.errors,
                  "scores": asdict(r.scores), "justification": None if r.justification is None else asdict(r.justification)}
                 for r in rows],
        "notes": notes, "paper_reference": PAPER_REFERENCE, "seconds": round(seconds, 1),
        "items": [_outcome_json(o) for o in outcomes],
    })
    _log(f"wrote {path}")
    return 0
