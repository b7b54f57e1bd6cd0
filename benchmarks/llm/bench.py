"""`peerlint bench llm`: how close peerlint's LLM calls come to llama.cpp's own speed, same model, same run.

Raw llama.cpp is `llama_cpp.Llama` used plainly on the same GGUF: the whole prompt evaluated in one
`eval` (batches of n_batch tokens) after a reset, then greedy tokens one by one. peerlint is
`EmbeddedLLM` on the same prompts: `score` (rate 1-10 from the choices' log-probabilities: the
drafts quality prompt, A.2, on the paragraphs of a draft) cold (KV cache forgotten before each call)
and warm (what the editor does: consecutive calls reuse their shared prefix), and generation on the
suggestion prompt (the one peerlint generates prose for; a rating prompt is answered in one token by
a model that obeys "a single number only"). Both generation paths decode greedily and stop at the
model's end of turn: raw llama.cpp runs exactly as many tokens as peerlint's loop produced, and the
rates count the tokens actually generated (the first token, which follows the prompt, is not timed).
Prompt tokens/s counts every token of every prompt, reused or not: the rate a user's paragraphs
get through. Rows alternate raw and peerlint per prompt, so machine load hits both alike.
"""

from __future__ import annotations

from ..harness.results import RESULTS_HELP, peak_rss_mb, print_table, write_result

import argparse
import statistics
import sys
import time
from pathlib import Path

from ...errors import UserError
from ...analyzers.drafts.text import prepare
from ...analyzers.prompt_files import load_prompt
from ...llm.base import LLMUnavailable
from ...llm.embedded import EmbeddedLLM, llama_class
from ...analyzers.drafts.scoring import DraftScorer, SCALE
from ...latex.project import parse_project

DRAFT = Path(__file__).resolve().parents[2] / "examples" / "draft.tex"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of this command."""
    parser.add_argument("--draft", type=Path, default=DRAFT, help="LaTeX file whose paragraphs are rated (default: "
                                                                   "examples/draft.tex)")
    parser.add_argument("--prompts", type=int, default=12, help="paragraphs to rate (default: 12)")
    parser.add_argument("--generate", type=int, default=32, help="tokens to generate per prompt (default: 32)")
    parser.add_argument("--model", default=None, help="a packaged model's name (`peerlint models list`) or a GGUF "
                                                       "file (default: the embedded SmolLM2-135M)")
    parser.add_argument("--out", type=Path, default=None, help=RESULTS_HELP)


def _prompt_pairs(draft: Path, n: int) -> list[tuple[str, str]]:
    """(rating prompt, suggestion prompt) for each of the draft's first `n` paragraphs."""
    if not draft.is_file():
        raise UserError(f"no such draft: {draft}")
    chunks = [c for c in parse_project(draft).chunks if c.kind in ("paragraph", "abstract")]
    prompt_id = DraftScorer.prompt_id("quality", retrieval=False, title="x")
    out = []
    for c in chunks:
        prepared = prepare(c.text)
        if not prepared.skipped:
            suggest = load_prompt("drafts_suggest").render(
                "user", score=5.0, aspect="quality and clarity", venue="published proceedings",
                input=prepared.text, doc1="(none)")
            out.append((DraftScorer.render(prompt_id, prepared, (), c.section, c.index + 1), suggest))
        if len(out) == n:
            break
    if not out:
        raise UserError(f"{draft} has no paragraph to rate")
    return out


def run(args: argparse.Namespace) -> int:
    if args.prompts < 1 or args.generate < 1:
        raise UserError("--prompts and --generate must be at least 1")
    pairs = _prompt_pairs(args.draft, args.prompts)
    prompts = [rate for rate, _ in pairs]
    try:
        llm = EmbeddedLLM(args.model, fallback=False)  # the model asked for, or an error: never another one
        engine = llm.engine
    except LLMUnavailable as exc:
        raise UserError(str(exc)) from None

    raw = llama_class()(model_path=str(llm.model_path), n_ctx=engine.n_ctx, n_threads=engine.llm.n_threads,
                          n_threads_batch=engine.llm.n_threads, seed=42, verbose=False)
    choices = list(SCALE)
    timing = {name: [] for name in ("raw_prompt", "raw_generate", "cold_score", "warm_score", "generate")}
    tokens = {"prompt": 0, "generated": 0}
    reused_before = engine.reused_tokens
    print(f"bench llm: {len(prompts)} prompts, {llm.model}, {engine.llm.n_threads} threads", file=sys.stderr, flush=True)
    warm_up = llm._prompt(prompts[0], None)[:32]
    raw.eval(warm_up)
    llm.score(prompts[0][:200], choices)
    for text, suggest in pairs:
        ids = llm._prompt(text, None)
        tokens["prompt"] += len(ids)
        t0 = time.perf_counter()
        raw.reset()
        raw.eval(ids)
        timing["raw_prompt"].append(time.perf_counter() - t0)
        engine.llm.n_tokens = 0  # cold: nothing to reuse
        t0 = time.perf_counter()
        llm.score(text, choices)
        timing["cold_score"].append(time.perf_counter() - t0)
        engine.llm.n_tokens = 0
        gen_ids = llm._prompt(suggest, None)
        seconds, steps = _peerlint_generation(engine, gen_ids, args.generate)
        timing["generate"].append(seconds)
        raw.reset()
        raw.eval(gen_ids)
        timing["raw_generate"].append(_raw_greedy(raw, engine.n_vocab, steps))
        tokens["generated"] += max(steps - 1, 0)
    warm_reused = engine.reused_tokens
    for text in prompts:  # warm: consecutive calls, as the editor makes them
        t0 = time.perf_counter()
        llm.score(text, choices)
        timing["warm_score"].append(time.perf_counter() - t0)
    warm_reused = engine.reused_tokens - warm_reused
    raw_rate = tokens["prompt"] / sum(timing["raw_prompt"])
    rows = [
        ("llama.cpp raw: prompt eval", raw_rate, 1.0, statistics.median(timing["raw_prompt"])),
        ("peerlint score, cold", tokens["prompt"] / sum(timing["cold_score"]),
         tokens["prompt"] / sum(timing["cold_score"]) / raw_rate, statistics.median(timing["cold_score"])),
        ("peerlint score, warm (prefix reuse)", tokens["prompt"] / sum(timing["warm_score"]),
         tokens["prompt"] / sum(timing["warm_score"]) / raw_rate, statistics.median(timing["warm_score"])),
    ]
    if not tokens["generated"]:
        raise UserError(f"{llm.model} ended every suggestion after its first token: nothing to time; "
                        "check its chat template (`peerlint doctor`) or raise --generate")
    gen_raw = tokens["generated"] / sum(timing["raw_generate"])
    gen_ours = tokens["generated"] / sum(timing["generate"])
    print_table([[r[0], round(r[1], 1), round(r[2], 3), round(1000 * r[3], 1)] for r in rows],
                ["path", "prompt tokens/s", "ratio vs raw", "ms per prompt (median)"],
                title=f"prompt evaluation: {tokens['prompt']} prompt tokens over {len(prompts)} prompts; warm reused "
                      f"{warm_reused} of them from the KV cache")
    print_table([["llama.cpp raw: greedy tokens", round(gen_raw, 1), 1.0],
                 ["peerlint generate (sampler, UTF-8 decoding)", round(gen_ours, 1), round(gen_ours / gen_raw, 3)]],
                ["path", "tokens/s", "ratio vs raw"],
                title=f"generation (suggestion prompt, greedy, up to {args.generate} tokens, to the end of turn): "
                      f"{tokens['generated']} tokens after the first over {len(pairs)} prompts")
    payload = {
        "dataset": {"draft": str(args.draft), "prompts": len(prompts), "prompt_tokens": tokens["prompt"],
                    "prompt": "drafts quality A.2 (retrieval-free), one paragraph each"},
        "model": {"path": str(llm.model_path), "packaged": llm.packaged, "n_ctx": engine.n_ctx,
                  "threads": engine.llm.n_threads},
        "prompt_eval": [{"path": r[0], "tokens_per_s": round(r[1], 1), "ratio_vs_raw": round(r[2], 3),
                         "ms_median": round(1000 * r[3], 1)} for r in rows],
        "warm_reused_tokens": warm_reused,
        "generation": {"raw_tokens_per_s": round(gen_raw, 1), "peerlint_tokens_per_s": round(gen_ours, 1),
                       "ratio_vs_raw": round(gen_ours / gen_raw, 3), "max_tokens": args.generate,
                       "timed_tokens": tokens["generated"], "prompt": "drafts_suggest, one paragraph each"},
        "peak_rss_mb": peak_rss_mb(),
        "reused_before_run": reused_before,
    }
    print(f"results: {write_result(args.out, 'llm', payload)}")
    return 0


def _raw_greedy(raw, n_vocab: int, n: int) -> float:
    """Seconds for n - 1 greedy tokens after the first, plain llama.cpp (argmax of the last logits;
    the caller passes the count peerlint's loop produced on the same prompt)."""
    import numpy as np

    start = 0.0
    for i in range(n):
        if i == 1:
            start = time.perf_counter()
        logits = np.ctypeslib.as_array(raw._ctx.get_logits_ith(-1), shape=(n_vocab,))
        raw.eval([int(np.argmax(logits))])
    return time.perf_counter() - start


def _peerlint_generation(engine, ids: list[int], n: int) -> tuple[float, int]:
    """Seconds for the tokens after the first of peerlint's own decoding loop (`Engine.complete`, which
    stops at the end of turn), and how many tokens it produced in all (at most n)."""
    start, steps = time.perf_counter(), 0
    for _ in engine.complete(ids, n, temperature=0.0):
        steps += 1
        if steps == 1:
            start = time.perf_counter()
        if steps == n:
            break
    return (time.perf_counter() - start if steps > 1 else 0.0), steps
