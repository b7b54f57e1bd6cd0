"""`peerlint bench schnovel`: SchNovel (Lin et al., 2024) on any corpus, every method, both orders.

Sampling mode (`--sample N --out pairs.jsonl`) runs Algorithm 1; evaluation mode (`--pairs F
--method M`) asks every pair newer-first and older-first.  Retrieval (RAG-Novelty, date-knn,
peerlint) sees only papers published on or before the newer paper's year — the corpora are
year-granular — with both papers of the pair excluded (the paper's Section 4.1).

The learned methods (embedding-head, peerlint) never see the field they are scored on: for each
field of the evaluated pairs a model is trained on pairs sampled (Algorithm 1, another seed) from
the corpus's *other* fields (`--split field`), or, with `--split year`, on pairs entirely before
(or after) the evaluated pair's years.  Either way no training pair touches a venue-year, a paper
id or a normalised title that the fold is tested on (`harness/holdout.py`); the JSON records which
split produced each number and, per fold, what was kept out (`training.train_excludes`).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from ...analyzers.novelty.model import Neighbours, fit_head, fit_model, pair_features
from ...analyzers.novelty.features import FEATURES, Lexicon, Timeline
from .llm_methods import LLM_METHODS, AskContext, Shown, ask
from ...index.papers import Paper
from ..harness.corpus_index import ensure_index
from ..harness.holdout import Holdout, assert_no_leak, record_of
from ..harness.results import RESULTS_HELP, write_result
from ...analyzers.novelty.pairs import GAPS, FieldMap, Pair, PairsError, PairSet, parse_fields, read_pairs, sample_pairs, write_pairs
from .report import MethodResult, Outcome, plot, print_report, summarise

from ...errors import UserError
from ...index.ingest.load import CorpusError, default_corpus_path, load_papers
from ...llm.select import make_llm

POINTWISE = ("date-knn", "embedding-head", "peerlint")
METHODS = POINTWISE + tuple(LLM_METHODS)
RETRIEVAL = ("papers published on or before the newer paper's year (year-granular corpus), "
             "both papers of the pair excluded")


def _log(message: str) -> None:
    print(f"bench schnovel: {message}", file=sys.stderr, flush=True)


# -- the bench ---------------------------------------------------------------------------------

def training_pairs(pool: Sequence[Pair], tested: Sequence[Pair], papers: dict[str, Paper],
                   allowed: Callable[[Pair], bool]) -> tuple[list[Pair], dict]:
    """The pool's pairs a fold may train on: those its split `allowed` (another field, or the other
    side of the year cut) of which neither paper shares a venue-year, an id or a normalised title
    with a paper of the fold's `tested` pairs; and the `train_excludes` record of what was left out."""
    holdout = Holdout.of(papers[pid] for pid in sorted({i for p in tested for i in (p.newer, p.older)}))
    candidates = [p for p in pool if allowed(p)]
    dropped: Counter = Counter()
    train = []
    for p in candidates:
        why = holdout.reason(papers[p.newer]) or holdout.reason(papers[p.older])
        if why:
            dropped[why] += 1
        else:
            train.append(p)
    assert_no_leak([papers[i] for p in train for i in (p.newer, p.older)], holdout, "bench schnovel training pairs")
    return train, record_of(holdout, dropped, len(train), unit="training pairs", pool=len(pool),
                            outside_split=len(pool) - len(candidates))


class Bench:
    """The evaluated pairs with everything the methods share: vectors, neighbourhoods, training pools."""

    def __init__(self, pairs: PairSet, corpus: Sequence[Paper], index, fields, k: int = 10, seed: int = 0,
                 train_pairs: int = 4000, split: str = "field"):
        self.pairs, self.papers = pairs.pairs, pairs.papers
        self.corpus, self.fields, self.seed, self.split = corpus, fields, seed, split
        self.neighbours = Neighbours(index, k)
        self.timeline = Timeline.of(index, self.neighbours.matrix, Lexicon.of(index))
        self._features: dict[tuple[str, str], tuple] = {}
        self.train_pairs = train_pairs
        self._pool: list[Pair] | None = None
        self._models: dict[tuple, object] = {}
        self._cut: int | None = None
        self._fold_names: list[str] | None = None
        self._by_cell: dict[tuple, list[Paper]] | None = None
        self._excludes: dict[str, dict] = {}  # fold -> `Holdout` record of its training pairs

    def newer(self, i: int) -> Paper:
        return self.papers[self.pairs[i].newer]

    def older(self, i: int) -> Paper:
        return self.papers[self.pairs[i].older]

    # -- pointwise methods: a score per paper at the pair's cutoff; higher = more novel
    def run_pointwise(self, name: str, limit: int | None) -> MethodResult:
        todo = range(min(limit or len(self.pairs), len(self.pairs)))
        setup = time.perf_counter()
        scorers = self._scorers(name, todo)
        setup = time.perf_counter() - setup
        t0 = time.perf_counter()
        if name == "peerlint":
            self.features([self.pairs[i] for i in todo])  # batched similarities; counted as answering time
        outcomes = []
        for i in todo:
            s_new, s_old = scorers[i](self.newer(i), self.older(i))
            for newer_first in (True, False):
                first, second = (s_new, s_old) if newer_first else (s_old, s_new)
                choice = 0 if first >= second else 1  # a tie goes to the first shown: position bias shows it
                correct = choice == (0 if newer_first else 1)
                outcomes.append(Outcome(i, newer_first, correct, "tie" if first == second else "pointwise"))
        notes = {"date-knn": "mean year of the k nearest papers decides",
                 "embedding-head": "pairwise logistic regression on embedding differences",
                 "peerlint": "calibrated pointwise score over " + ", ".join(FEATURES)
                              + " (field ridges on embedding and TF-IDF/SVD words)"}[name]
        extra = {"training": self._training_report(name)} if name != "date-knn" else {}
        return MethodResult(name, outcomes, time.perf_counter() - t0, setup, notes, extra)

    def _scorers(self, name: str, todo) -> dict[int, Callable[[Paper, Paper], tuple[float, float]]]:
        nb = self.neighbours
        if name == "date-knn":
            def date_knn(a: Paper, b: Paper) -> tuple[float, float]:
                ya, yb = nb.around(a, a.year, b.id).mean_year, nb.around(b, a.year, a.id).mean_year
                return (ya if ya is not None else -1e9), (yb if yb is not None else -1e9)
            return {i: date_knn for i in todo}
        out = {}
        for i in todo:
            model = self._model(name, i)
            if name == "embedding-head":
                out[i] = lambda a, b, w=model: (float(nb.vector(a) @ w), float(nb.vector(b) @ w))
            else:
                out[i] = lambda a, b, m=model, pair=self.pairs[i]: tuple(m.score(f) for f in self.features([pair])[0])
        return out

    def field_venues(self, pair: Pair) -> tuple[str, ...]:
        for f in self.fields:
            if f.name.lower() == pair.field.lower():
                return f.venues
        return (pair.field,)

    def features(self, pairs: Sequence[Pair]) -> list[tuple]:
        """peerlint's FEATURES for both papers of each pair (evaluated or training), computed once."""
        todo = list({(p.newer, p.older): p for p in pairs if (p.newer, p.older) not in self._features}.values())
        found = pair_features(self.timeline, self.neighbours,
                              [(self.papers[p.newer], self.papers[p.older], self.field_venues(p)) for p in todo])
        self._features.update({(p.newer, p.older): f for p, f in zip(todo, found)})
        return [self._features[(p.newer, p.older)] for p in pairs]

    # -- learned methods: one model per held-out fold
    def pool(self) -> list[Pair]:
        if self._pool is None:
            self._pool = sample_pairs(self.corpus, total=self.train_pairs, fields=self.fields, seed=self.seed + 1)
        return self._pool

    def fold(self, i: int) -> tuple[str, Callable[[Pair], bool]]:
        """The fold of evaluated pair i and which training pairs it may use: with `--split field`,
        none of the held-out field; with `--split year`, none from the other side of the median year
        (pairs ending after it but starting before it are grouped by their start year).  `training_pairs` then drops any
        pair touching a venue-year, id or title of the fold's evaluated pairs."""
        pair, field_of = self.pairs[i], FieldMap(self.fields)
        if self.split == "field":
            held = pair.field.lower()
            return f"without field {pair.field}", lambda p: (p.field.lower() != held
                                                             and (field_of(self.papers[p.newer]) or "").lower() != held)
        if self._cut is None:
            self._cut = int(np.median([self.newer(j).year for j in range(len(self.pairs))]))
        cut = self._cut
        if self.newer(i).year < cut:
            return f"on years >= {cut} (tested on earlier pairs)", lambda p: self.papers[p.older].year >= cut
        # a pair ending after the cut may start before it: one fold per start year, so that only that
        # year's venue-years (not every year before the cut) leave the training pairs
        start = self.older(i).year
        return (f"on years < {cut} (tested on pairs ending later{f', from {start}' if start < cut else ''})",
                lambda p: self.papers[p.newer].year < cut)

    def _model(self, name: str, i: int):
        fold, allowed = self.fold(i)
        key = (name, fold)
        if key not in self._models:
            if self._fold_names is None:
                self._fold_names = [self.fold(j)[0] for j in range(len(self.pairs))]
            tested = [self.pairs[j] for j, f in enumerate(self._fold_names) if f == fold]
            train, excludes = training_pairs(self.pool(), tested, self.papers, allowed)
            if len(train) < 50:
                raise PairsError(f"{name}: only {len(train)} training pairs {fold} once the tested venue-years are "
                                 "left out; give a corpus with more fields or years (--corpus) or raise --train-pairs")
            _log(f"{name}: training on {len(train)} pairs {fold}")
            nb = self.neighbours
            if name == "embedding-head":
                self._models[key] = fit_head(np.stack([nb.vector(self.papers[p.newer]) for p in train]),
                                             np.stack([nb.vector(self.papers[p.older]) for p in train]))
            else:
                feats = self.features(train)
                self._models[key] = fit_model(np.array([f[0] for f in feats]), np.array([f[1] for f in feats]))
            self._models[(name, fold, "n")] = len(train)
            self._excludes[fold] = excludes
        return self._models[key]

    def _training_report(self, name: str) -> dict:
        folds = {k[1]: self._models[(name, k[1], "n")] for k in self._models if k[0] == name and len(k) == 2}
        report: dict = {"split": self.split, "train_pairs_per_fold": folds, "pool_seed": self.seed + 1,
                        "train_excludes": {f: self._excludes[f] for f in folds if f in self._excludes}}
        if name == "peerlint":
            report["weights"] = {k[1]: m.info["weights"] for k, m in self._models.items() if k[0] == name and len(k) == 2}
        return report

    # -- LLM methods
    def shown(self, paper: Paper, cutoff: int, partner: str, with_context: bool) -> Shown:
        if not with_context:
            return Shown(paper.title, paper.abstract)
        around = self.neighbours.around(paper, cutoff, partner)
        return Shown(paper.title, paper.abstract, around.mean_year, around.mean_similarity)

    def examples(self, i: int) -> tuple[tuple[Shown, Shown], ...]:
        """Two-shot: two random (newer, older) pairs from the same field and years, the query left out."""
        pair, field_of = self.pairs[i], FieldMap(self.fields)
        if self._by_cell is None:
            self._by_cell = defaultdict(list)
            for p in self.corpus:
                if p.abstract.strip():
                    self._by_cell[(field_of(p), p.year)].append(p)
        rng = random.Random(f"{self.seed}:two-shot:{i}")
        field = field_of(self.newer(i))
        query = Holdout.papers([self.newer(i), self.older(i)])
        pick = {y: [p for p in self._by_cell.get((field, y), []) if query.allows(p)]
                for y in (self.newer(i).year, self.older(i).year)}
        if any(len(v) < 2 for v in pick.values()):
            return ()
        news, olds = rng.sample(pick[self.newer(i).year], 2), rng.sample(pick[self.older(i).year], 2)
        return tuple((Shown(n.title, n.abstract), Shown(o.title, o.abstract)) for n, o in zip(news, olds))

    def run_llm(self, name: str, llm, limit: int | None) -> MethodResult:
        n = min(limit or len(self.pairs), len(self.pairs))
        t0 = time.perf_counter()
        outcomes = []
        for i in range(n):
            newer, older = self.newer(i), self.older(i)
            ctx = AskContext(category=f"the research published at {self.pairs[i].field}",
                             examples=self.examples(i) if name == "two-shot" else ())
            a = self.shown(newer, newer.year, older.id, name == "rag-novelty")
            b = self.shown(older, newer.year, newer.id, name == "rag-novelty")
            for newer_first in (True, False):
                first, second = (a, b) if newer_first else (b, a)
                if name == "two-shot" and not ctx.examples:
                    verdict_how, choice = "error", None
                else:
                    verdict = ask(name, llm, first, second, ctx)
                    verdict_how, choice = verdict.how, verdict.choice
                outcomes.append(Outcome(i, newer_first, choice == (0 if newer_first else 1), verdict_how))
            if (i + 1) % 10 == 0 or i + 1 == n:
                spent = time.perf_counter() - t0
                _log(f"{name}: {i + 1}/{n} pairs, {spent:.0f} s, about {spent / (i + 1) * (n - i - 1):.0f} s left")
        model = f"{getattr(llm, 'name', '?')}:{getattr(llm, 'model', '?')}"
        extra = {"llm": model}
        if name == "two-shot":  # shown, not trained on: the method's own definition, recorded beside the heads'
            extra["examples"] = ("two (newer, older) pairs of the query's field and years, the query's two papers "
                                 "excluded by id and normalised title (in-context examples, no training)")
        return MethodResult(name, outcomes, time.perf_counter() - t0, notes=f"LLM {model}", extra=extra)


# -- the command -------------------------------------------------------------------------------

def parse_methods(specs: Sequence[str]) -> list[str]:
    names = [m.strip() for spec in specs for m in spec.split(",") if m.strip()]
    if "all" in names:
        return list(METHODS)
    unknown = [m for m in names if m not in METHODS]
    if unknown:
        raise PairsError(f"unknown method(s) {', '.join(unknown)}: choose from {', '.join(METHODS)} or all")
    return list(dict.fromkeys(names))


def parse_limits(specs: Sequence[str]) -> dict[str, int]:
    """`["100", "cot=10"]` -> {"": 100, "cot": 10}."""
    out = {}
    for spec in specs:
        name, _, n = spec.rpartition("=")
        if name and name not in LLM_METHODS:
            raise PairsError(f"--llm-limit {spec}: {name} is not an LLM method ({', '.join(LLM_METHODS)})")
        try:
            out[name] = int(n)
        except ValueError:
            raise PairsError(f"--llm-limit expects N or METHOD=N, got {spec!r}") from None
    return out


def _int_list(text: str | None) -> list[int] | None:
    if not text:
        return None
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi) + 1) if hi else [int(lo)])
    return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of this benchmark."""
    parser.add_argument("--corpus", nargs="+", type=Path, default=None, help="corpus files (default: the shipped proceedings)")
    parser.add_argument("--field", action="append", default=[], metavar="SPEC",
                        help="a venue, or a group name=VENUE,VENUE (repeatable; default: every venue is a field)")
    parser.add_argument("--sample", type=int, metavar="N", help="sample N pairs spread evenly over (field, start year, gap)")
    parser.add_argument("--per-cell", type=int, metavar="n", help="sample n pairs per (field, start year, gap) instead")
    parser.add_argument("--start-years", metavar="YEARS", help="start years, e.g. 2010-2017 or 2013,2015 (default: all)")
    parser.add_argument("--gaps", metavar="GAPS", help="year gaps (default: 2-10)")
    parser.add_argument("--seed", type=int, default=0, help="sampling seed (default: 0)")
    parser.add_argument("--out", type=Path, help="where sampled pairs are written (JSONL)")
    parser.add_argument("--pairs", type=Path, help="pairs to evaluate: peerlint JSONL or the official SchNovel layout")
    parser.add_argument("--method", action="append", default=[], metavar="M",
                        help="method(s), repeatable or comma-separated: date-knn, embedding-head, peerlint, zero-shot, "
                             "two-shot, cot, self-reflection, self-consistency, llm-discussion, rag-novelty, or all")
    parser.add_argument("--backend", choices=("auto", "embedded", "ollama"), default="auto", help="LLM backend (default: auto)")
    parser.add_argument("--model", help="a packaged model (`peerlint models`), a .gguf file, or an Ollama model name")
    parser.add_argument("--host", help="Ollama host (default: $OLLAMA_HOST or localhost)")
    parser.add_argument("--limit", type=int, help="evaluate only the first N pairs")
    parser.add_argument("--llm-limit", action="append", default=[], metavar="[METHOD=]N",
                        help="first N pairs for the LLM methods, or for one of them (repeatable; default: --limit)")
    parser.add_argument("--k", type=int, default=10, help="neighbours retrieved per paper (default: 10)")
    parser.add_argument("--index", type=Path, default=None,
                        help="index of the corpus, built if missing (default: ~/.cache/peerlint/bench-index-<corpus hash>)")
    parser.add_argument("--train-pairs", type=int, default=4000, help="pairs sampled to train the learned methods")
    parser.add_argument("--split", choices=("field", "year"), default="field",
                        help="what the learned methods never see: the evaluated pair's field (default) or its years")
    parser.add_argument("--results", type=Path, default=None, help=RESULTS_HELP)
    parser.add_argument("--plot", action=argparse.BooleanOptionalAction, default=True, help="write a PNG (default: yes)")


def run(args) -> int:
    try:
        return _run(args, default_corpus_path, load_papers)
    except (PairsError, CorpusError, ValueError) as exc:
        raise UserError(str(exc)) from None


def _run(args, default_corpus_path, load_papers) -> int:
    sources = [Path(s) for s in (args.corpus or [default_corpus_path()])]
    fields = parse_fields(args.field)
    corpus = load_papers(sources, warn=lambda m: print(f"peerlint: warning: {m}", file=sys.stderr))
    by_id = {p.id: p for p in corpus}
    if args.sample is not None or args.per_cell is not None:
        if args.out is None:
            raise PairsError("sampling writes pairs to a file: add --out pairs.jsonl")
        pairs = sample_pairs(corpus, total=args.sample, per_cell=args.per_cell, fields=fields,
                             start_years=_int_list(args.start_years), gaps=_int_list(args.gaps) or GAPS, seed=args.seed)
        n = write_pairs(pairs, args.out)
        cells = {(p.field, p.start_year, p.gap) for p in pairs}
        per_field = defaultdict(int)
        for p in pairs:
            per_field[p.field] += 1
        print(f"wrote {n} pairs ({len(cells)} field/start-year/gap cells, seed {args.seed}) to {args.out}: "
              + ", ".join(f"{f} {c}" for f, c in sorted(per_field.items())))
        if not args.method:
            return 0
        args.pairs = args.out
    if args.pairs is None or not args.method:
        raise PairsError("give --sample N --out FILE to sample pairs, or --pairs FILE --method M to evaluate")
    methods = parse_methods(args.method)
    llm_limits = parse_limits(args.llm_limit)
    pairset = read_pairs(args.pairs, by_id, fields)
    if pairset.skipped:
        _log("skipped " + ", ".join(f"{n} ({why})" for why, n in pairset.skipped.most_common()))
        if pairset.skipped.get("different fields") and not fields:
            _log("pairs sampled with --field groups must be read with the same --field options")
    if not pairset.pairs:
        raise PairsError(f"no usable pairs in {args.pairs}")
    index = ensure_index(corpus, sources, args.index, "bench schnovel")
    bench = Bench(pairset, corpus, index, fields, k=args.k, seed=args.seed, train_pairs=args.train_pairs,
                  split=args.split)
    llm = None
    results = []
    for name in methods:
        if name in POINTWISE:
            results.append(bench.run_pointwise(name, args.limit))
        else:
            if llm is None:
                llm = make_llm(args.backend, args.model, args.host)
            results.append(bench.run_llm(name, llm, llm_limits.get(name, llm_limits.get("", args.limit))))
        _log(f"{name}: done in {results[-1].seconds + results[-1].setup_seconds:.1f} s")
    records = summarise(results, pairset.pairs)
    payload = {
        "dataset": {"pairs_file": str(args.pairs), "layout": pairset.layout, "pairs": len(pairset.pairs),
                    "skipped": dict(pairset.skipped), "corpus": [str(s) for s in sources], "corpus_papers": len(corpus),
                    "fields": [f.__dict__ for f in fields] or "every venue is a field"},
        "retrieval": {"k": args.k, "restriction": RETRIEVAL, "index": str(index.root), "index_papers": len(index)},
        "split": args.split, "limit": args.limit, "llm_limit": {k or "*": v for k, v in llm_limits.items()} or args.limit,
        "methods": records,
    }
    path = write_result(args.results, "bench-schnovel", payload)
    print(f"peerlint bench schnovel — {len(pairset.pairs)} pairs from {args.pairs}; retrieval: {RETRIEVAL}; "
          f"learned methods: held-out {args.split}s")
    print_report(records)
    if args.plot:
        png = plot(records, path.with_suffix(".png"),
                   f"SchNovel on {', '.join(s.name for s in sources)}: accuracy by gap (both orders)")
        if png:
            print(f"plot: {png}")
    print(f"results: {path}")
    return 0
