"""`peerlint bench tournament`: NOVA's Swiss tournament on ICLR abstracts, accepted vs rejected.

NOVA (Hu et al., 2024, §4.1) ranks ideas with the Swiss tournament of Si et al. (2024), whose
Claude-3.5-Sonnet ranker separates accepted from rejected ICLR 2024 submissions with 71.4%
accuracy.  Here (suite "tournament"): a balanced sample of `--n` abstracts of one ICLR year
(accepted = Oral/Poster, rejected = Reject; the 2017 workshop track is left out as neither) is
ranked by `--rounds` Swiss rounds, the top half is predicted accepted, and we report that
accuracy and the AUROC of the final tournament scores, for each variant:

* random ranking: the expected accuracy of a random order (1,000 permutations, mean and sd);
* embedding-only: the tournament with `Topicality` (closeness to what NeurIPS and ICML accepted
  the year before; no labels) and with a logistic head on MiniLM embeddings trained on the
  other ICLR years' decisions (held-out year);
* prior: `Topicality` plus the LLM's fluency of each abstract (`Blend`, no labels, no pairwise
  prompts: one log-likelihood per abstract, ~2 s each, cached);
* llm: the NOVA/Si et al. pairwise prompt, both orders per comparison;
* hybrid: the mean of the LLM's and Topicality's probabilities.
The embedding variants are cheap, so they are also run on `--resamples` further balanced
samples (mean accuracy and AUROC) and on the whole year.  Decisions (`status`), ratings and
citations are read only to build the sample and score the result: no ranker sees them.

Suite "nova" measures the NOVA novelty check's similarity floor: abstracts that are in the index
(their own paper must be found: not novel), their first two sentences (a shorter restatement:
not novel), and abstracts of venues/years that are not in the index (mostly novel).
"""

from __future__ import annotations

from ..harness.results import RESULTS_HELP, print_table, write_result

import argparse
import functools
import random
import re
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from ...errors import UserError
from ...analyzers.drafts.fluency import FluencyScore
from ...analyzers.drafts.heads import fit_logistic
from ...llm.base import LLMUnavailable, LLMError
from ..harness.corpus_index import ensure_index
from ..harness.decisions import decision, with_decisions
from ..harness.holdout import Holdout, assert_no_leak
from ...analyzers.ideas.idea_file import Idea
from ...analyzers.ideas.tournament import auroc, top_half_accuracy, swiss_tournament
from ...analyzers.ideas.comparators import NEEDS_INDEX, Topicality, Blend, ScoreComparator, HybridComparator, LLMComparator
from ...analyzers.ideas.nova_check import judge_paper, planned_retrieval
from ...llm.select import make_llm
from ...index.ingest.load import CorpusError, default_corpus_path, load_papers
from ...index.store import IndexError_, open_index

VARIANTS = ("random", "embedding", "embedding-head", "prior", "llm", "hybrid")
DEFAULT_VARIANTS = ("random", "embedding", "embedding-head", "llm")  # + hybrid: another ~320 LLM answers


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of this command."""
    parser.add_argument("--suite", choices=("tournament", "nova", "all"), default="tournament",
                        help="tournament: accepted vs rejected (default); nova: the novelty check's similarity floor")
    parser.add_argument("--n", type=int, default=64, help="abstracts in the balanced sample (default: 64)")
    parser.add_argument("--rounds", type=int, default=5, help="Swiss rounds (default: 5, as NOVA)")
    parser.add_argument("--year", type=int, default=2017, help="ICLR year to evaluate (default: 2017)")
    parser.add_argument("--venue", default="ICLR", help="venue whose decisions are evaluated (default: ICLR)")
    parser.add_argument("--variants", default=",".join(DEFAULT_VARIANTS),
                        help=f"comma-separated, from {', '.join(VARIANTS)}, or all (default: {','.join(DEFAULT_VARIANTS)}; "
                             "64 abstracts x 5 rounds x 2 orders = 320 LLM answers, about 10 minutes on 2 cores)")
    parser.add_argument("--backend", choices=("auto", "embedded", "ollama"), default="auto", help="LLM backend (default: auto)")
    parser.add_argument("--model", help="a packaged model (`peerlint models`), a .gguf file, or an Ollama model name")
    parser.add_argument("--host", help="Ollama host (default: $OLLAMA_HOST or localhost)")
    parser.add_argument("--limit", type=int, help="abstracts for the LLM variants (a balanced part of the sample; default: all)")
    parser.add_argument("--llm-weight", type=float, default=0.5, help="the LLM's weight in the hybrid (default: 0.5)")
    parser.add_argument("--resamples", type=int, default=20, help="extra balanced samples for the embedding variants (default: 20)")
    parser.add_argument("--seed", type=int, default=0, help="sampling and pairing seed (default: 0)")
    parser.add_argument("--nova-n", type=int, default=12, help="nova suite: ideas per group (default: 12)")
    parser.add_argument("--corpus", nargs="+", type=Path, default=None, help="corpus files (default: the shipped proceedings)")
    parser.add_argument("--index", type=Path, default=None,
                        help="index of the corpus, built if missing (default: ~/.cache/peerlint/bench-index-<corpus hash>)")
    parser.add_argument("--out", type=Path, default=None, help=RESULTS_HELP)


def _label(status: str) -> bool | None:
    """Accepted or rejected; a workshop-track paper is left out (neither outcome)."""
    verdict = decision(status)
    return None if verdict in (None, "workshop") else verdict == "accept"


def balanced_sample(papers, n: int, seed: int) -> list[tuple[Any, bool]]:
    """n/2 accepted and n/2 rejected papers (fewer when a class is short), shuffled."""
    rng = random.Random(seed)
    acc = [p for p in papers if _label(p.status) is True]
    rej = [p for p in papers if _label(p.status) is False]
    half = min(n // 2, len(acc), len(rej))
    chosen = [(p, True) for p in rng.sample(acc, half)] + [(p, False) for p in rng.sample(rej, half)]
    rng.shuffle(chosen)
    return chosen


def _ideas(sample):
    return [Idea(p.id, f"{p.title}. {p.abstract}" if p.title else p.abstract, p.title) for p, _ in sample]


def _evaluate(ranking, labels: Sequence[bool]) -> dict[str, Any]:
    idx = {idea.id: n for n, idea in enumerate(ranking.ideas)}
    lab = [labels[idx[i.id]] for i in ranking.ideas] if len(idx) == len(labels) else list(labels)
    mixed = right = 0
    for m in ranking.matches:
        if m.b is None or lab[m.a] == lab[m.b]:
            continue
        mixed += 1
        acc_first = m.a if lab[m.a] else m.b
        if m.winner == acc_first:
            right += 1
        elif m.winner is None:
            right += 0.5
    return {"accuracy": round(top_half_accuracy(ranking.order, lab), 4),
            "auroc": round(auroc(ranking.score_vector(), lab) or 0.0, 4),
            "auroc_points": round(auroc(ranking.points, lab) or 0.0, 4),
            "mixed_pair_accuracy": round(right / mixed, 4) if mixed else None, "mixed_pairs": mixed,
            "counts": ranking.counts}


def _random_baseline(labels: Sequence[bool], repeats: int = 1000, seed: int = 0) -> dict[str, float]:
    import numpy as np


    rng = random.Random(seed)
    accs = []
    for _ in range(repeats):
        order = list(range(len(labels)))
        rng.shuffle(order)
        accs.append(top_half_accuracy(order, labels))
    return {"accuracy": round(float(np.mean(accs)), 4), "sd": round(float(np.std(accs)), 4), "auroc": 0.5}


class HeadScorer:
    """A logistic head on MiniLM embeddings, trained on the other years' decisions of the venue: the
    test venue-year is kept out, and so is any paper with the id or normalised title of one of its
    papers (a rejected submission resubmitted the next year); `train_excludes` records it."""

    def __init__(self, index, papers, year: int, venue: str, l2: float = 10.0, embed=None):
        import numpy as np


        test = [p for p in papers if p.venue.lower() == venue.lower() and p.year == year]
        holdout = Holdout.of(test, [(venue, year)])
        training = holdout.split(p for p in with_decisions(papers) if p.venue.lower() == venue.lower()
                                 and _label(p.status) is not None)
        assert_no_leak(training.papers, holdout, f"bench tournament embedding-head ({venue} {year})")
        train = [(p, _label(p.status)) for p in training.papers]
        self.train_excludes = training.record()
        self.train_ids = frozenset(p.id for p in training.papers)
        ys = [y for _, y in train]
        if len(train) < 10 or all(ys) or not any(ys):
            raise ValueError(f"too few other-year decisions of {venue} to train a head ({len(train)})")
        self.embed = embed or index.embed
        vecs = self.embed([f"{p.title}. {p.abstract}" for p, _ in train])
        self.w, self.b = fit_logistic(vecs, np.array(ys, dtype=float), l2=l2)
        years = sorted({p.year for p, _ in train})
        self.name = f"head({venue} {','.join(map(str, years))} decisions: {sum(ys)} acc / {len(ys) - sum(ys)} rej)"

    def __call__(self, texts):
        return self.embed(list(texts)) @ self.w + self.b


class CachedEmbed:
    """index.embed with a per-text cache: the bench embeds each abstract once, and papers that are
    in the index are not embedded at all: their vector is the mean of their indexed chunks (the
    same text, cut at sentence ends into chunks of at most 200 tokens)."""

    def __init__(self, index):
        self.index, self.cache = index, {}

    def prefill(self, papers) -> None:
        import numpy as np

        chunk_paper = np.asarray(self.index.chunk_paper)
        order = np.argsort(chunk_paper, kind="stable")
        starts = np.searchsorted(chunk_paper[order], np.arange(len(self.index.ids) + 1))
        for p in papers:
            idx = self.index.id_to_idx.get(p.id)
            text = f"{p.title}. {p.abstract}" if p.title else p.abstract
            if idx is None or text in self.cache:
                continue
            rows = order[starts[idx]:starts[idx + 1]]
            if len(rows):
                v = np.asarray(self.index.vectors[rows], dtype=np.float32).mean(axis=0)
                self.cache[text] = v / max(float(np.linalg.norm(v)), 1e-12)

    def __call__(self, texts):
        import numpy as np

        todo = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if todo:
            self.cache.update(zip(todo, self.index.embed(todo)))
        return np.stack([self.cache[t] for t in texts]) if texts else np.zeros((0, 384), dtype=np.float32)


def _wanted_variants(spec: str) -> list[str]:
    wanted = [v.strip() for v in spec.split(",") if v.strip()]
    wanted = list(VARIANTS) if wanted == ["all"] else wanted
    unknown = [v for v in wanted if v not in VARIANTS]
    if unknown:
        raise UserError(f"unknown variant(s) {', '.join(unknown)}: choose from {', '.join(VARIANTS)}")
    return wanted


def _tournament_suite(args, index, papers, llm_factory) -> dict[str, Any]:
    wanted = _wanted_variants(args.variants)
    year_papers = with_decisions(p for p in papers if p.venue.lower() == args.venue.lower() and p.year == args.year)
    sample = balanced_sample(year_papers, args.n, args.seed)
    if len(sample) < 4:
        raise UserError(f"{args.venue} {args.year} has too few accepted and rejected abstracts: choose another --year")
    labels = [y for _, y in sample]
    ideas = _ideas(sample)
    rows: list[dict[str, Any]] = []
    out: dict[str, Any] = {"dataset": {"venue": args.venue, "year": args.year, "n": len(sample),
                                       "accepted": sum(labels), "rejected": len(labels) - sum(labels),
                                       "labels": "accepted = oral/poster/spotlight/accept/talk/top-N%; rejected = reject; "
                                                 "workshop left out", "seed": args.seed, "ids": [i.id for i in ideas]},
                           "rounds": args.rounds}
    if "random" in wanted:
        rnd = _random_baseline(labels, seed=args.seed)
        rows.append({"variant": "random ranking", "n": len(sample), **rnd, "comparisons": 0, "seconds": 0.0})
    scorers: dict[str, Any] = {}
    embed = CachedEmbed(index)
    embed.prefill([p for p in papers if p.venue.lower() == args.venue.lower()])
    if any(v in wanted for v in NEEDS_INDEX):  # the variants that read Topicality
        try:
            scorers["embedding"] = Topicality.before(index, args.year, embed)
        except ValueError as exc:
            raise UserError(str(exc)) from None
    if "embedding-head" in wanted:
        try:
            scorers["embedding-head"] = HeadScorer(index, papers, args.year, args.venue, embed=embed)
        except ValueError as exc:
            print(f"tournament: embedding-head skipped: {exc}", file=sys.stderr)
    out["train_excludes"] = _train_excludes(scorers, args)
    full = balanced_sample(year_papers, 10**6, args.seed)  # the whole year, balanced
    if "prior" in wanted:
        scorers["prior"] = _prior_scorer(scorers["embedding"], _ideas(full), llm_factory)
    for key in ("embedding", "embedding-head", "prior"):
        if key in wanted and key in scorers:
            rows.append(_score_row(key, scorers[key], args, sample, year_papers, full))
    llm_variants = [v for v in ("llm", "hybrid") if v in wanted]
    if llm_variants:
        llm = llm_factory()
        out["llm"] = f"{llm.name}:{llm.model}"
        rows += _llm_rows(llm, llm_variants, args, sample, scorers)
    out["rows"] = rows
    return out


def _train_excludes(scorers: dict[str, Any], args) -> dict[str, Any]:
    """What each variant kept out of what it learned from: the head's `Holdout` record; Topicality's
    reference years (the year before, so never the test venue-year)."""
    out: dict[str, Any] = {}
    if "embedding-head" in scorers:
        out["embedding-head"] = scorers["embedding-head"].train_excludes
    if "embedding" in scorers:
        top = scorers["embedding"]
        assert top.year < args.year, "Topicality's reference must end before the test year"
        out["embedding"] = {"reference": top.name, "reference_years": [top.year - top.span + 1, top.year],
                            "test_year_excluded": True}
    return out


def _prior_scorer(topicality, full_ideas, llm_factory):
    """The label-free prior (topicality + the LLM's fluency), scaled on the whole year."""
    def fluency_progress(done: int, all_: int) -> None:
        if done % 50 == 0 or done == all_:
            print(f"tournament: prior: fluency of {done}/{all_} abstracts", file=sys.stderr, flush=True)

    try:
        fluency = FluencyScore(llm_factory(), progress=fluency_progress)
    except LLMUnavailable as exc:
        raise UserError(f"the prior variant reads the LLM's fluency: {exc}; use --backend embedded") from None
    prior = Blend([topicality, fluency])
    prior([i.text for i in full_ideas])  # the whole year sets the scale
    return prior


def _score_row(key: str, scorer, args, sample, year_papers, full) -> dict[str, Any]:
    """A score-based variant: the tournament on the sample, then on resamples and the whole year (cheap, less noisy)."""
    import numpy as np


    labels, ideas = [y for _, y in sample], _ideas(sample)
    full_ideas, full_labels = _ideas(full), [y for _, y in full]
    t = time.time()
    kind = "prior" if key == "prior" else "embedding-only"
    comp = ScoreComparator(scorer, f"{kind}:{scorer.name}")
    ranking = swiss_tournament(ideas, comp, args.rounds, args.seed)
    ev = _evaluate(ranking, labels)
    pointwise = auroc(np.asarray(scorer([i.text for i in ideas])), labels)
    accs, aucs = [], []
    for r in range(1, args.resamples + 1):
        s2 = balanced_sample(year_papers, args.n, args.seed + r)
        l2 = [y for _, y in s2]
        rk = swiss_tournament(_ideas(s2), ScoreComparator(scorer, "x"), args.rounds, args.seed + r)
        accs.append(top_half_accuracy(rk.order, l2))
        aucs.append(auroc(rk.score_vector(), l2))
    rk = swiss_tournament(full_ideas, ScoreComparator(scorer, "x"), args.rounds, args.seed)
    return {"variant": f"{kind}: {scorer.name}", "n": len(sample), "accuracy": ev["accuracy"],
            "auroc": ev["auroc"], "mixed_pair_accuracy": ev["mixed_pair_accuracy"],
            "comparisons": ev["counts"]["comparisons"], "pointwise_auroc": round(pointwise or 0, 4),
            "resamples": {"samples": args.resamples, "accuracy_mean": round(float(np.mean(accs)), 4) if accs else None,
                          "accuracy_sd": round(float(np.std(accs)), 4) if accs else None,
                          "auroc_mean": round(float(np.mean(aucs)), 4) if aucs else None},
            "whole_year": {"n": len(full), "accuracy": round(top_half_accuracy(rk.order, full_labels), 4),
                           "auroc": round(auroc(rk.score_vector(), full_labels) or 0, 4)},
            "seconds": round(time.time() - t, 1), "counts": ev["counts"]}


def _llm_rows(llm, llm_variants: list[str], args, sample, scorers: dict[str, Any]) -> list[dict[str, Any]]:
    """The LLM and hybrid variants on at most --limit papers, with the embedding row on the same papers beside them."""
    import numpy as np


    rows: list[dict[str, Any]] = []
    sub = sample
    if args.limit and args.limit < len(sample):
        acc = [s for s in sample if s[1]][: args.limit // 2]
        rej = [s for s in sample if not s[1]][: args.limit // 2]
        sub = [s for s in sample if s in acc or s in rej]
    sub_labels = [y for _, y in sub]
    sub_ideas = _ideas(sub)
    if len(sub) < len(sample) and "embedding" in scorers:  # the fair comparison for the LLM rows
        scorer = scorers["embedding"]
        ranking = swiss_tournament(sub_ideas, ScoreComparator(scorer, "x"), args.rounds, args.seed)
        ev = _evaluate(ranking, sub_labels)
        rows.append({"variant": f"embedding-only on the LLM's {len(sub)}: {scorer.name}", "n": len(sub),
                     "accuracy": ev["accuracy"], "auroc": ev["auroc"], "mixed_pair_accuracy": ev["mixed_pair_accuracy"],
                     "comparisons": ev["counts"]["comparisons"], "seconds": 0.0, "counts": ev["counts"]})
    for key in llm_variants:
        t = time.time()
        base = LLMComparator(llm)
        comp = base if key == "llm" else HybridComparator(
            base, ScoreComparator(scorers["embedding"], f"embedding:{scorers['embedding'].name}"), args.llm_weight)
        total = args.rounds * (len(sub) // 2) * 2

        def progress(done: int, all_: int, key=key, t=t) -> None:
            if done % 20 == 0 or done == all_:
                print(f"tournament: {key}: {done}/{all_} LLM answers, {time.time() - t:.0f} s",
                      file=sys.stderr, flush=True)

        ranking = swiss_tournament(sub_ideas, comp, args.rounds, args.seed, progress=progress)
        ev = _evaluate(ranking, sub_labels)
        c = ev["counts"]
        rows.append({"variant": f"{key}: {comp.name}", "n": len(sub), "accuracy": ev["accuracy"], "auroc": ev["auroc"],
                     "mixed_pair_accuracy": ev["mixed_pair_accuracy"], "comparisons": c["comparisons"],
                     "llm_answers": total, "inconsistent_orders": round(c.get("inconsistent_orders", 0) /
                                                                        max(c.get("order_pairs", 1), 1), 4),
                     "unparsed": c.get("unparsed", 0), "timeouts": c.get("timeout", 0), "errors": c.get("error", 0),
                     "seconds": round(time.time() - t, 1), "counts": c})
        if key == "llm":
            # the same matches, read back: how often each shown position won (position bias)
            firsts = [p.p_first for m in ranking.matches for p in m.orders if p.p_first is not None]
            rows[-1]["p_first_mean"] = round(float(np.mean(firsts)), 4) if firsts else None
    return rows


def _nova_suite(args, index, papers, llm_factory) -> dict[str, Any]:
    """In-index abstracts, their first two sentences, and out-of-index abstracts, at several floors."""
    import numpy as np


    rng = random.Random(args.seed)
    inside_ids = set(index.ids)
    in_keys = {(p.venue, p.year) for p in papers if p.id in inside_ids}
    inside = [p for p in papers if p.id in inside_ids and p.abstract]
    outside = [p for p in papers if (p.venue, p.year) not in in_keys and p.abstract and p.year and p.year >= 2016]
    if not outside:
        outside = [p for p in papers if p.id not in inside_ids and p.abstract]
    groups = {
        "in-index abstract": [f"{p.title}. {p.abstract}" for p in rng.sample(inside, min(args.nova_n, len(inside)))],
        "in-index first two sentences": [],
        "out-of-index abstract": [f"{p.title}. {p.abstract}" for p in rng.sample(outside, min(args.nova_n, len(outside)))],
    }
    for p in rng.sample(inside, min(args.nova_n, len(inside))):
        sentences = re.split(r"(?<=[.!?])\s+", p.abstract)
        groups["in-index first two sentences"].append(" ".join(sentences[:2]))
    expected = {"in-index abstract": False, "in-index first two sentences": False, "out-of-index abstract": True}
    llm = llm_factory()
    records = []
    t = time.time()
    for group, texts in groups.items():
        for text in texts:
            counts: dict[str, int] = {}
            ranked, queries = planned_retrieval(text, index, None, 0, 0, 10, None, counts)
            for hit, sim, _q in ranked:
                status, same, p_yes, _ = judge_paper(llm, text, hit, "score")
                records.append({"group": group, "sim": round(sim, 4), "status": status, "p_yes": p_yes})
            print(f"nova: {group}: {len(records)} judgments, {time.time() - t:.0f} s", file=sys.stderr, flush=True)
    rows = _nova_rule_rows(groups, records, expected)
    sims = np.array([r["sim"] for r in records])
    pys = np.array([r["p_yes"] if r["p_yes"] is not None else np.nan for r in records])
    bands = []
    for lo, hi in ((0.0, 0.6), (0.6, 0.7), (0.7, 0.8), (0.8, 0.9), (0.9, 1.01)):
        m = (sims >= lo) & (sims < hi)
        bands.append({"band": f"{lo:.1f}-{min(hi, 1.0):.1f}", "papers": int(m.sum()),
                      "p_yes_mean": round(float(np.nanmean(pys[m])), 4) if m.any() else None,
                      "said_yes": int(np.nansum(pys[m] > 0.5)) if m.any() else 0})
    return {"llm": f"{llm.name}:{llm.model}", "groups": {g: len(v) for g, v in groups.items()}, "rows": rows,
            "bands": bands, "seconds": round(time.time() - t, 1), "judgments": len(records)}


NOVA_RULES = [("LLM on all 10 (no guard)", 0.0, None), ("LLM above floor 0.6", 0.6, None),
              ("LLM above floor 0.7", 0.7, None), ("similarity alone >= 0.8", 0.8, 0.8),
              ("similarity alone >= 0.9", 0.9, 0.9), ("guard: LLM in [0.6, 0.8), same >= 0.8", 0.6, 0.8),
              ("guard: LLM in [0.7, 0.8), same >= 0.8 (default)", 0.7, 0.8),
              ("guard: LLM in [0.7, 0.9), same >= 0.9", 0.7, 0.9)]


def _nova_rule_rows(groups: dict[str, list[str]], records: list[dict[str, Any]],
                    expected: dict[str, bool]) -> list[dict[str, Any]]:
    """Accuracy of each decision rule (LLM floor, similarity guard) per group, from the same judgments."""
    rows = []
    per_idea = 10
    for group in groups:
        recs = [r for r in records if r["group"] == group]
        ideas = [recs[i:i + per_idea] for i in range(0, len(recs), per_idea)]
        for rule, floor, same in NOVA_RULES:
            verdicts: list[bool | None] = []
            for idea in ideas:
                dup = same is not None and any(r["sim"] >= same for r in idea)
                asked = [r for r in idea if r["sim"] >= floor and (same is None or r["sim"] < same)]
                yes = any(r["p_yes"] is not None and r["p_yes"] > 0.5 for r in asked)
                missing = any(r["p_yes"] is None for r in asked)
                verdicts.append(False if (dup or yes) else (None if missing else True))
            right = sum(1 for v in verdicts if v == expected[group])
            rows.append({"group": group, "expected": "novel" if expected[group] else "not novel", "rule": rule,
                         "floor": floor, "same_above": same, "ideas": len(ideas), "correct": right,
                         "undetermined": sum(1 for v in verdicts if v is None),
                         "accuracy": round(right / len(ideas), 4) if ideas else None})
    return rows


def run(args: argparse.Namespace) -> int:
    if args.n < 4 or args.rounds < 1:
        raise UserError("--n must be at least 4 and --rounds at least 1")
    sources = args.corpus or [default_corpus_path()]
    try:
        papers = load_papers(sources, warn=lambda m: print(f"peerlint: warning: {m}", file=sys.stderr))
    except CorpusError as exc:
        raise UserError(str(exc)) from None
    index = ensure_index(papers, sources, args.index, "tournament") if args.suite != "nova" or not args.index else None
    if index is None:
        try:
            index = open_index(args.index)
        except IndexError_ as exc:
            raise UserError(str(exc)) from None

    @functools.cache
    def llm_factory():
        """One backend for every variant, made on first use (the embedding variants need none)."""
        try:
            return make_llm(args.backend, args.model, args.host)
        except LLMError as exc:
            raise UserError(str(exc)) from None

    if args.suite in ("tournament", "all"):
        result = _tournament_suite(args, index, papers, llm_factory)
        table = [[r["variant"], r["n"], r.get("comparisons"), r["accuracy"], r.get("auroc"), r.get("mixed_pair_accuracy"),
                  (r.get("resamples") or {}).get("accuracy_mean"), (r.get("whole_year") or {}).get("accuracy"),
                  r.get("inconsistent_orders"), r.get("unparsed"), r.get("timeouts"), r.get("seconds")]
                 for r in result["rows"]]
        print_table(table, ["variant", "n", "comparisons", "accuracy", "AUROC", "mixed-pair acc", "acc (resamples)",
                            "acc (whole year)", "order flips", "unparsed", "timeouts", "s"],
                    f"Swiss tournament, {args.venue} {args.year}: top half predicted accepted "
                    f"({args.rounds} rounds; NOVA's reference ranker: 71.4% on ICLR 2024 with Claude-3.5-Sonnet)")
        path = write_result(args.out, "tournament", result)
        print(f"results: {path}")
    if args.suite in ("nova", "all"):
        if args.suite == "nova" and args.index is None:
            print("nova: checking against the bench index of the whole corpus: pass --index of a smaller index "
                  "(e.g. the test index) to have out-of-index venues", file=sys.stderr)
        result = _nova_suite(args, index, papers, llm_factory)
        print_table([[r["group"], r["expected"], r["rule"], r["ideas"], r["accuracy"]] for r in result["rows"]],
                    ["ideas", "expected", "rule", "n", "verdict accuracy"],
                    "NOVA check: verdicts by similarity floor")
        print_table([[b["band"], b["papers"], b["p_yes_mean"], b["said_yes"]] for b in result["bands"]],
                    ["similarity", "papers", "mean P(yes)", "said yes"], "A.5 answers by similarity to the idea")
        path = write_result(args.out, "tournament-nova", result)
        print(f"results: {path}")
    return 0
