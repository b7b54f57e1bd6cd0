"""`peerlint ideas rank FILE` (Swiss tournament) and `peerlint ideas check FILE` (NOVA novelty check).

FILE: `.jsonl` (text, or title/abstract), `.json` (a list), `.tex` (the `\\item`s of its lists)
or plain text (ideas separated by blank lines); see `analyzers/ideas/idea_file.py`.  A table on stdout,
counts on stderr, `--json` for scripts.
"""

from __future__ import annotations

from typing import Sequence

import argparse
import json
import sys
from pathlib import Path

from ...errors import UserError
from ...llm.base import LLMError
from ...tables import format_table
from ...analyzers.ideas.idea_file import IdeasError, read_ideas
from ...llm.select import make_llm
from ...index.build import default_index_path
from ...index.store import IndexError_, open_index
from ...analyzers.ideas.comparators import NEEDS_INDEX, NEEDS_LLM
from ...analyzers.ideas.tournament import rank_items
from ...index.embedding.embedder import Embedder
from ...analyzers.ideas import nova_check
from ...retrieval.retriever import Retriever
from . import HELP


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", type=Path, help="ideas: .jsonl / .json / .tex (its \\items) / text with blank lines between ideas")
    p.add_argument("--index", type=Path, default=None,
                   help="index directory (default: $PEERLINT_INDEX or ~/.local/share/peerlint/index)")
    p.add_argument("--backend", choices=("auto", "embedded", "ollama"), default="auto", help="LLM backend (default: auto)")
    p.add_argument("--model", help="a packaged model (`peerlint models`), a .gguf file, or an Ollama model name")
    p.add_argument("--host", help="Ollama host (default: $OLLAMA_HOST or localhost)")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per LLM answer (default: 60)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of this command (called while the CLI parser is built: keep imports light)."""
    sub = parser.add_subparsers(dest="ideas_command", metavar="ACTION")
    rank = sub.add_parser("rank", help="rank ideas by a Swiss tournament of pairwise comparisons (NOVA §4.1)")
    _common(rank)
    rank.add_argument("--rounds", type=int, default=5, help="Swiss rounds (default: 5)")
    rank.add_argument("--comparator", choices=("auto", "hybrid", "llm", "embedding", "prior"), default="auto",
                      help="who compares two ideas: hybrid (LLM + embedding prior), llm, embedding (no LLM), or prior "
                           "(embedding prior + the LLM's fluency of each idea, no pairwise prompts); "
                           "auto (default): hybrid with an Ollama model, embedding with the embedded 135M model, "
                           "whose comparisons measured at chance (see `peerlint bench tournament`)")
    rank.add_argument("--seed", type=int, default=0, help="seed of the first round's draw (default: 0)")
    rank.add_argument("--no-dedup", action="store_true", help="keep near-duplicate ideas (cosine >= 0.8) apart")
    check = sub.add_parser("check", help="NOVA novelty check: is each idea already in an indexed paper?")
    _common(check)
    check.add_argument("--rounds", type=int, default=2, help="planned-retrieval rounds (default: 2; 0: the idea's own neighbours only)")
    check.add_argument("-k", type=int, default=10, help="papers judged per idea (default: 10)")
    check.add_argument("--floor", type=float, default=None,
                       help="papers less similar to the idea than this are not asked (default: 0.70)")
    check.add_argument("--same-above", type=float, default=None,
                       help="papers at least this similar count as the same idea without asking (default: 0.80; "
                            "a value above 1 turns this off)")
    check.add_argument("--judge", choices=("auto", "score", "json"), default="auto",
                       help="score: P(Yes) vs P(No); json: A.5 reasoning, schema-constrained (default: json on Ollama)")


def _read(path: Path):
    if not path.exists():
        raise UserError(f"no such file: {path}")
    try:
        found = read_ideas(path)
    except IdeasError as exc:
        raise UserError(str(exc)) from None
    for w in found.warnings[:20]:
        print(f"peerlint: warning: {w}", file=sys.stderr)
    if len(found.warnings) > 20:
        print(f"peerlint: warning: {len(found.warnings) - 20} more", file=sys.stderr)
    return found


def _llm(args, required: bool):
    try:
        return make_llm(args.backend, args.model, args.host, timeout=args.timeout)
    except LLMError as exc:
        if required:
            raise UserError(str(exc)) from None
        print(f"peerlint: warning: no LLM ({exc}); comparing by embeddings only", file=sys.stderr)
        return None


def _index(path: Path | None, required: bool):
    try:
        return open_index(path or default_index_path())
    except IndexError_ as exc:
        if required:
            raise UserError(str(exc)) from None
        print(f"peerlint: warning: {exc}; ranking without the embedding prior", file=sys.stderr)
        return None


def _skipped(found) -> str:
    """What `ideas check` says of the file's entries it could not read as ideas."""
    return f"{sum(found.skipped.values())} ideas skipped ({', '.join(found.skipped)})"


def _where(idea) -> str:
    return f"{idea.line}" if idea.line else idea.id


def cmd_rank(args) -> int:
    if args.rounds < 1:
        raise UserError("--rounds must be at least 1")
    found = _read(args.file)
    index = _index(args.index, args.comparator in NEEDS_INDEX)
    llm = None if args.comparator == "embedding" else _llm(args, args.comparator in NEEDS_LLM)
    if args.comparator == "auto" and index is not None and getattr(llm, "name", "") != "ollama":
        llm = None  # auto: the embedded model adds nothing measurable to the embedding prior
    embedder = index
    if embedder is None and not args.no_dedup:
        embedder = Embedder()
    total = args.rounds * (len(found.ideas) // 2) * 2
    shown = {"last": -1}

    def progress(done: int, all_: int) -> None:
        if sys.stderr.isatty() and llm is not None and done * 10 // max(all_, 1) != shown["last"]:
            shown["last"] = done * 10 // max(all_, 1)
            print(f"\rcomparing: {done}/{all_}", end="", file=sys.stderr, flush=True)

    try:
        ranking = rank_items(found.ideas, llm, embedder, args.rounds, index=index, comparator=args.comparator,
                             seed=args.seed, dedup_threshold=None if args.no_dedup else 0.8, progress=progress)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    if sys.stderr.isatty() and llm is not None and total:
        print("", file=sys.stderr)
    skipped = dict(found.skipped)
    for k, v in ranking.skipped.items():
        skipped[k] = skipped.get(k, 0) + v
    if args.json:
        print(json.dumps({**ranking.to_json(), "skipped": skipped, "file": str(args.file)}))
        return 0
    if not ranking.ideas:
        print("no ideas to rank")
    else:

        rows = [[rank, points, ranking.buchholz[ranking.ideas.index(idea)], _where(idea),
                 idea.label + (f" (+{len(idea.merged)} merged)" if idea.merged else "")]
                for rank, idea, points in ranking.ranked()]
        print(format_table(rows, ["rank", "points", "buchholz", "line", "idea"]))
    c = ranking.counts
    print(f"{len(ranking.ideas)} ideas ranked by {ranking.comparator}, {ranking.rounds} rounds: "
          f"{c['comparisons']} comparisons ({c['decided']} decided, {c['ties']} ties, {c['no_answers']} without an answer: "
          f"{c['unparsed']} unparsed, {c['timeout']} timeouts, {c['error']} errors), {c['byes']} byes; "
          f"{ranking.merged} near-duplicates merged; "
          + (", ".join(f"{v} skipped ({k})" for k, v in skipped.items()) or "none skipped"), file=sys.stderr)
    return 0


def cmd_check(args) -> int:
    if args.rounds < 0 or args.k < 1:
        raise UserError("--rounds must be 0 or more and -k at least 1")
    found = _read(args.file)
    if not found.ideas:  # nothing to check: answer before opening the index or loading a model
        if args.json:
            print(json.dumps({"file": str(args.file), "skipped": found.skipped, "ideas": []}))
        else:
            print("no ideas to check")
            if found.skipped:
                print(_skipped(found), file=sys.stderr)
        return 0
    index = _index(args.index, True)
    llm = _llm(args, args.backend != "auto")
    floor = nova_check.DEFAULT_FLOOR if args.floor is None else args.floor
    same = nova_check.SAME_ABOVE if args.same_above is None else (None if args.same_above > 1 else args.same_above)
    retriever = Retriever(index)
    verdicts = []
    for n, idea in enumerate(found.ideas, 1):
        if sys.stderr.isatty():
            print(f"\rchecking: {n}/{len(found.ideas)}", end="", file=sys.stderr, flush=True)
        verdicts.append((idea, nova_check.check_idea(idea.text, retriever, llm, rounds=args.rounds, k=args.k,
                                                     floor=floor, same_above=same, judge=args.judge)))
    if sys.stderr.isatty():
        print("", file=sys.stderr)
    if args.json:
        print(json.dumps({"file": str(args.file), "skipped": found.skipped,
                          "ideas": [{**idea.to_json(), **v.to_json()} for idea, v in verdicts]}))
        return 0

    rows = []
    for idea, v in verdicts:
        closest = max((j.paper.similarity for j in v.judgments), default=None)
        papers = "; ".join(h.label() + f" {h.similarity:.2f}" for h in v.offending[:2])
        more = f" +{len(v.offending) - 2}" if len(v.offending) > 2 else ""
        rows.append([_where(idea), v.label, closest, idea.label[:40], papers + more])
    print(format_table(rows, ["line", "verdict", "closest", "idea", "already in"]))
    tally = dict.fromkeys(("asked", "yes", "duplicate", "below_floor", "unparsed", "timeout", "error", "plan_unparsed",
                           "plan_timeout"), 0)
    for _, v in verdicts:
        for key in tally:
            tally[key] += v.counts.get(key, 0)
    labels = [v.label for _, v in verdicts]
    print(f"{labels.count('novel')} novel, {labels.count('not novel')} not novel, {labels.count('undetermined')} "
          f"undetermined; papers: {tally['asked']} judged by {'the LLM' if llm else 'no LLM'} ({tally['yes']} yes), "
          f"{tally['duplicate']} at similarity >= {same if same is not None else '-'}, {tally['below_floor']} below "
          f"{floor:.2f}; {tally['unparsed']} unparsed, {tally['timeout']} timeouts, {tally['error']} errors; "
          f"plans: {tally['plan_unparsed']} unparsed, {tally['plan_timeout']} timeouts"
          + (f"; {_skipped(found)}" if found.skipped else ""),
          file=sys.stderr)
    return 0


def run(args: argparse.Namespace) -> int:
    if args.ideas_command == "rank":
        return cmd_rank(args)
    if args.ideas_command == "check":
        return cmd_check(args)
    raise UserError("choose an action: `peerlint ideas rank FILE` or `peerlint ideas check FILE` (see --help)")


def register(sub, argv: Sequence[str] | None = None) -> None:
    p = sub.add_parser("ideas", help=HELP["ideas"])
    add_arguments(p)
    p.set_defaults(handler=run)
