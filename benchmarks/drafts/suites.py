"""The suites of `peerlint bench drafts`; each prints its tables and writes results/drafts-<suite>-*.json.

Scorers compared everywhere they can be: `llm` (the paper: expected 1–10 rating, prompts A.1–A.5),
`embedding` (the shipped/trained heads of analyzers/drafts/heads.py), `ensemble` (the mean of
the two 1–10 ratings, exactly what the editor computes).  LLM rows cover `--limit` items;
embedding rows cover the whole held-out data and, for a fair comparison, the LLM's items too.
revisions adds `fluency` (the embedded LM's log-likelihood of each sentence, all pairs) and the
revisions model (`revisions.py`: fitted on train.json, written for the editor), and names the scorer
to prefer for revision comparisons; diff runs `peerlint diff`'s machinery on a git repository of pairs.
acceptance adds label-free priors over all its papers: topicality (closeness to the previous
year's NeurIPS/ICML papers), fluency (one log-likelihood per abstract) and their `Blend`.
"""

from __future__ import annotations

import random
import re
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from statistics import mean

import numpy as np

from ...analyzers.drafts.analyzer import Rated
from ...analyzers.drafts.heads import (MIN_VENUE_SHARE, TOPICAL_NEIGHBOURS, LinearHead, VenueHead, head_labels,
                                      load_register_head, paper_matrix, percentile_of,
                                      save_register_head, style_head_for, venue_head_for)
from ...locations import cache_root
from ...analyzers.drafts.quality import QualityAnalyzer
from ...analyzers.drafts.summaries import ordinal, draft_nearness, sections_of
from ...analyzers.drafts.venue_calibration import (FAR_PERCENTILE, ReliabilityBin, calibrate, ece, reliability,
                                                   softmax)
from ...analyzers.drafts.venue_style import VenueStyleAnalyzer
from ...analyzers.drafts.text import prepare
from ...analyzers.drafts.fluency import POWERS, logliks, FluencyScore
from ...llm.base import LLMUnavailable
from ...analyzers.novelty.model import fit_pairwise_logistic
from ...index.ingest.identity import normalise_title
from ...index.papers import Paper
from ...settings import Settings
from ..harness.decisions import decision as conference_decision
from ..harness.decisions import with_decisions
from ..harness.holdout import Holdout, assert_no_leak, record_of
from ..harness.real_papers import REAL_OUT_OF_FIELD, real_papers
from ..index.synthetic import exact_top_k
from .context import (
    ACM_CR, ARXIVEDITS, Bench, BenchError, load_fortunes, load_out_of_field, log, stable_split,
)
from .metrics import PREVALENCES, auroc, flag_rates, spearman, win_rate
from .revisions import EDITED_PARAGRAPHS, EditPair, diff_suite, editor_latency, fit_and_measure, load_pairs
from ...analyzers.engine import Engine
from ...analyzers.ideas.comparators import Blend, Topicality, standardised_sum
from ...analyzers.project_check import read_project
from ...index.ingest.load import default_corpus_path, load_papers
from ...latex.parse import parse_document
from ...retrieval.retriever import Retriever
from ..harness.corpus_index import ensure_index
from ..lsp.draft import PARAGRAPHS_PER_PAGE, make_draft
from .scale_bench import run as run_scale


def _r(x, nd=3):
    return None if x is None else round(float(x), nd)


def _register(bench: Bench) -> LinearHead:
    head = load_register_head()
    if head is None:
        raise BenchError("no register head in analyzers/drafts/data/drafts_heads.npz: run "
                         "`peerlint bench drafts --suite informal` first (it trains and saves it)")
    return head


def _ensemble(llm: list[float | None], emb: np.ndarray) -> list[float]:
    """What the editor shows: the mean of both ratings, the embedding one alone when the LLM gave none."""
    return [e if s is None else (s + e) / 2 for s, e in zip(llm, emb)]


# -- consistency (Appendix C.1) --------------------------------------------------------------------

def consistency(bench: Bench) -> None:
    n = bench.args.limit or 100
    rng = random.Random(0)
    pool = [p for p in bench.papers if p.venue == "NeurIPS"] or bench.papers
    texts = [bench.first_chunk(p.text) for p in rng.sample(pool, min(n, len(pool)))]
    scorer = bench.scorer(cache=False)  # every run must reach the model: the answer cache would make this trivial
    runs = [[bench.rate(t, scorer=scorer).score for _ in range(5)] for t in texts]
    identical = [len(set(r)) == 1 for r in runs]
    spread = [max(r) - min(r) for r in runs if None not in r]
    same_best = [len({round(x) for x in r}) == 1 for r in runs if None not in r]
    head = load_register_head()
    emb_runs = [head.rating(bench.embed(texts)) for _ in range(5)] if head is not None else []
    emb_identical = float(np.mean(np.all(np.array(emb_runs) == emb_runs[0], axis=0))) if emb_runs else None
    rows = [["llm (expected rating)", len(texts), 5, 100 * float(np.mean(identical)), max(spread, default=0.0),
             100 * float(np.mean(same_best)) if same_best else None],
            ["embedding head", len(texts), 5, None if emb_identical is None else 100 * emb_identical, 0.0, None]]
    bench.report("consistency", {"inputs": f"{len(texts)} first chunks of random NeurIPS abstracts (seed 0)"},
                 [("consistency: identical scores in all 5 runs (paper: 91.5%)",
                   ["scorer", "chunks", "runs", "identical %", "max spread", "same rounded %"], rows)],
                 {"identical_pct": 100 * float(np.mean(identical)), "runs": runs, "paper_identical_pct": 91.5,
                  "embedding_identical_pct": None if emb_identical is None else 100 * emb_identical})


# -- informal (Appendix C.2) -----------------------------------------------------------------------

def informal(bench: Bench) -> None:
    fortunes, source = load_fortunes()
    fortunes = [t for t in fortunes if not prepare(t).skipped]  # one-liners are too short to rate at all
    rng = random.Random(0)
    test_f = [t for t in fortunes if stable_split(t)]
    train_f = [t for t in fortunes if not stable_split(t)]
    test_papers = [p for p in bench.papers if stable_split(p.id)]
    # the held-out half's papers (by id and title) and the acceptance suite's venue-years stay out, so
    # the shipped head is zero-shot there and never saw a held-out abstract under another id
    decided = decision_groups(bench.papers)
    training = (Holdout.of((), decided) | Holdout.papers(test_papers)).split(
        p for p in bench.papers if not stable_split(p.id))
    train_papers = training.papers
    excludes = training.record(why="held-out half by id and title; the acceptance suite's decision venue-years")
    # train the register head on the training halves only, and save it for the editor
    sci_train = bench.vector_of(rng.sample(train_papers, min(4000, len(train_papers))))
    inf_train = bench.embed(train_f)
    X = np.vstack([sci_train, inf_train])
    y = np.concatenate([np.ones(len(sci_train)), np.zeros(len(inf_train))])
    head = LinearHead.train(X, y, reference=sci_train, model_id=bench.index.manifest.model_id,
                            info={"trained_on": f"{len(sci_train)} proceedings abstracts (train half) vs "
                                                f"{len(inf_train)} fortunes (train half)", "source": source,
                                  "train_excludes": excludes})
    save_register_head(head)
    sci_test = rng.sample(test_papers, min(len(test_f), len(test_papers)))
    sci_texts = [bench.first_chunk(p.text) for p in sci_test]
    emb_sci, emb_inf = head.rating(bench.embed(sci_texts)), head.rating(bench.embed(test_f))
    rows = [["embedding (held-out, all)", len(sci_texts), len(test_f), _r(auroc(emb_sci, emb_inf)),
             _r(np.mean(emb_sci)), _r(np.mean(emb_inf))]]
    k = min(bench.args.limit or 20, len(sci_texts), len(test_f))
    sci_llm = [bench.rate(t) for t in sci_texts[:k]]
    inf_llm = [bench.rate(t) for t in test_f[:k]]
    skipped = Counter(r.skipped for r in sci_llm + inf_llm if r.skipped)
    s_ok = [(r.score, e) for r, e in zip(sci_llm, emb_sci[:k]) if r.score is not None]
    i_ok = [(r.score, e) for r, e in zip(inf_llm, emb_inf[:k]) if r.score is not None]
    for name, pick in (("llm (A.1, RAG)", lambda s, e: s), ("embedding (LLM's items)", lambda s, e: e),
                       ("ensemble (LLM's items)", lambda s, e: (s + e) / 2)):
        a, b = [pick(*x) for x in s_ok], [pick(*x) for x in i_ok]
        rows.append([name, len(a), len(b), _r(auroc(a, b)), _r(np.mean(a) if a else None), _r(np.mean(b) if b else None)])
    weak = _operating_point(QualityAnalyzer(), emb_inf, emb_sci)
    hist = {"scientific": Counter(round(r.score) for r in sci_llm if r.score is not None),
            "informal": Counter(round(r.score) for r in inf_llm if r.score is not None)}
    bench.report("informal", {"scientific": "first 200-token chunks of held-out corpus abstracts",
                              "informal": source + f"; the {len(fortunes)} of 8+ words (shorter ones cannot be rated)"},
                 [("informal: scientific vs informal English, AUROC (target >= 0.99)",
                   ["scorer", "scientific", "informal", "AUROC", "mean sci", "mean informal"], rows),
                  (f"informal: weak-chunk at the shipped operating point (below the {ordinal(round(100 * Settings().weak_chunk_percentile))} "
                   "percentile of published prose, embedding scorer): informal texts should be flagged, held-out "
                   "abstracts not", OPERATING_HEADERS, [_operating_row("weak-chunk", weak)])],
                 {"rows": rows, "weak_chunk": weak, "llm_histogram": {k2: dict(sorted(v.items())) for k2, v in hist.items()},
                  "llm_skipped": dict(skipped), "head": head.info, "train_excludes": excludes})


# -- the editor's flags at their shipped operating points --------------------------------------------

OPERATING_HEADERS = ["flag", "should flag", "should not", "recall", "false flags"] + [f"precision @ {p:.0%} flag-worthy"
                                                                                    for p in PREVALENCES]


def _operating_point(analyzer, should: np.ndarray, should_not: np.ndarray) -> dict:
    """`analyzer.flag` (the editor's own rule, default settings) on embedding ratings 1-10 of texts that
    should and should not be flagged; the draft-median rule is left out (it needs a draft)."""
    from types import SimpleNamespace

    ctx = SimpleNamespace(settings=Settings())

    def flags(ratings: np.ndarray) -> list[bool]:
        return [bool(analyzer.flag(Rated(float(r), percentile_of(r), "embedding"), None, ctx)) for r in ratings]

    return flag_rates(flags(should), flags(should_not))


def _operating_row(name: str, r: dict) -> list:
    return [name, r["positives"], r["negatives"], _r(r["recall"]), _r(r["false_flag_rate"])] + [
        _r(r[f"precision@{p:g}"]) for p in PREVALENCES]


# -- revisions (Section 4.1) -----------------------------------------------------------------------

def lm_label(llm) -> str:
    """How a row names the LM behind it: "SmolLM2" for the packaged default, else its model's name."""
    model = Path(str(getattr(llm, "model", "?"))).name.removesuffix(".gguf")
    return "SmolLM2" if model.lower().startswith("smollm2") else model


def _fluency(bench: Bench, dev: list[EditPair]) -> tuple[dict, dict]:
    """Fluency rows: SmolLM2's log-likelihood of each raw sentence after a neutral prompt, per normalisation."""
    start = time.perf_counter()
    try:
        dev_ll = [logliks(bench.fluency_llm(), [getattr(p, side) for p in dev]) for side in ("after", "before")]
    except LLMUnavailable as exc:
        return {}, {"skipped": f"fluency rows skipped: {exc}"}
    lm = lm_label(bench.fluency_llm())
    scores = {f"fluency ({name}, {lm})": tuple(np.array([ll.per_token(pw) for ll in lls]) for lls in dev_ll)
              for name, pw in POWERS.items()}
    return scores, {"prompt": "analyzers/fluency.PROMPT", "fluency_seconds": round(time.perf_counter() - start, 1)}


def _eval_pairs(bench: Bench) -> tuple[list[EditPair], str]:
    path = Path(getattr(bench.args, "arxivedits", None) or ARXIVEDITS / "dev.json")
    return load_pairs(path), f"{path.name} ({path})"


def revisions(bench: Bench) -> None:
    train, (dev, dev_name) = load_pairs(ARXIVEDITS / "train.json"), _eval_pairs(bench)
    head = _register(bench)
    vb, va = bench.embed([p.before for p in dev]), bench.embed([p.after for p in dev])
    tb, ta = bench.embed([p.before for p in train]), bench.embed([p.after for p in train])
    w = fit_pairwise_logistic(ta - tb, l2=1.0)
    scores = {"length (longer = revised)": ([len(p.after) for p in dev], [len(p.before) for p in dev]),
              "embedding (register head)": (head.rating(va), head.rating(vb)),
              "revision head (trained on train.json)": (va @ w, vb @ w)}
    fluency_scores, fluency_info = _fluency(bench, dev)
    scores.update(fluency_scores)
    model_rows, model_info = [], {}
    if "skipped" not in fluency_info:
        model_scores, model_rows, model_info = fit_and_measure(bench, dev, dev_name,
                                                               save=not getattr(bench.args, "arxivedits", None))
        scores.update(model_scores)
    k = min(bench.args.limit or 10, len(dev))
    for label, retrieval in (("llm (A.1, RAG)", True), ("llm (A.2, no RAG)", False)):
        after = [bench.rate(p.after, retrieval=retrieval).score for p in dev[:k]]
        before = [bench.rate(p.before, retrieval=retrieval).score for p in dev[:k]]
        scores[label] = (after, before)
        if retrieval:
            scores["ensemble (RAG + register head)"] = (_ensemble(after, head.rating(va[:k])),
                                                         _ensemble(before, head.rating(vb[:k])))
    rows, per_intent = [], {}
    for name, (after, before) in scores.items():
        ok = [i for i, (a, b) in enumerate(zip(after, before)) if a is not None and b is not None]
        w_all = win_rate([after[i] for i in ok], [before[i] for i in ok])
        rows.append([name, w_all["n"], _r(w_all["win_rate"]), _r(w_all["mean_before"]), _r(w_all["mean_after"]),
                     _r(w_all["mean_diff"], 4)])
        groups = defaultdict(list)
        for i in ok:
            for intent in dev[i].intents:
                groups[intent].append(i)
        per_intent[name] = {g: win_rate([after[i] for i in idx], [before[i] for i in idx]) for g, idx in groups.items()}
    intents = sorted({g for d in per_intent.values() for g in d})
    names = list(scores)
    intent_rows = [[g] + [f"{_r(per_intent[n][g]['win_rate'], 2)} ({per_intent[n][g]['n']})" if g in per_intent[n] else "-"
                          for n in names] for g in intents]
    full = [r for r in rows if r[1] == len(dev)]
    best = max(full, key=lambda r: r[2])
    if model_info:  # the shipped model was chosen on train.json; the best row here is chosen on this file
        won = model_info["eval_win_rate"]
        preferred = (f"the editor uses `revisions model: {model_info['chosen']}` (chosen on train.json): win rate "
                     f"{won} over the {len(dev)} pairs of {dev_name} (target 0.65 {'met' if won >= 0.65 else 'not met'}); "
                     f"best row on this file: `{best[0]}` ({best[2]})")
    else:
        preferred = (f"prefer `{best[0]}` for revision comparisons: the best win rate over all {len(dev)} pairs of "
                     f"{dev_name} ({best[2]})")
    print(f"\n{preferred}" + (f"\n{fluency_info['skipped']}" if "skipped" in fluency_info else ""), flush=True)
    tables = [("revisions: revised > original (target win rate >= 0.65; paper v1 6.25 -> v4 6.38 RAG, 6.31 -> 6.25 no RAG)",
               ["scorer", "pairs", "win rate", "mean orig", "mean revised", "mean diff"], rows),
              ("revisions: win rate (pairs) per edit intention", ["intention"] + names, intent_rows)]
    if model_rows:
        tables.insert(1, ("revisions model: feature sets, chosen by train.json cross-validation only",
                          ["features", "n", "train CV win rate", f"win rate on {Path(dev_name.split()[0]).stem}"],
                          model_rows))
    bench.report("revisions", {"pairs": f"arXivEdits {dev_name}: {len(dev)} sentence pairs, revised vs original; "
                                        f"heads and the revisions model trained on train.json ({len(train)} pairs)",
                               "llm_pairs": k, "fluency": fluency_info, "revisions_model": model_info},
                 tables, {"rows": rows, "per_intention": per_intent, "preferred": preferred, "model_rows": model_rows})


STYLE_VENUES = {"ICLR": (2024, 2025), "NeurIPS": (2024, 2025), "ACL": (2023, 2024), "CVPR": (2024, 2025)}
_LANGUAGE_MODELS = re.compile(r"language model|\bLLMs?\b")


def style(bench: Bench) -> None:
    """The section summary's venue-style percentile on each venue's own latest papers (800 drawn, each
    left out of its own neighbours): placed among all of the venue's papers, a paper on a topic another
    venue shares (language models: COLM) reads unlike its venue; among the 100 of the venue's papers
    nearest in topic, as the summary now places it, it should not. The venue head is the editor's for
    that venue (`style_head_for`), trained on the index these papers are in."""
    index = bench.index
    X = paper_matrix(index)
    if venue_head_for(index, cache_root(), matrix=lambda: X) is None:
        raise BenchError("the index gives no venue head")
    rows, records = [], {}
    for venue, years in STYLE_VENUES.items():
        head = style_head_for(index, venue, cache_root(), matrix=lambda: X)  # the editor's head for this venue
        if head is None or head.venue_index(venue) is None:
            continue
        own = np.flatnonzero(np.array([v == venue.lower() for v in index.venues]))
        recent = own[np.isin(index.years[own], years)]
        if not len(recent):
            continue
        sample = np.random.default_rng(0).choice(recent, min(800, len(recent)), replace=False)
        column = head.venue_index(venue)
        everywhere = head.own[head.classes[column]].percentile(head.probs(X[sample])[:, column])
        found = exact_top_k(X[own], X[sample], TOPICAL_NEIGHBOURS + 1)[0]  # each paper is its own nearest: left out
        near = [own[n][own[n] != s][:TOPICAL_NEIGHBOURS] for n, s in zip(found, sample)]
        topical = head.topical_percentiles(X[sample], venue, [X[n] for n in near])
        lm = np.array([bool(_LANGUAGE_MODELS.search(f"{index.paper(int(j)).title} {index.paper(int(j)).abstract}"))
                       for j in sample])
        for topic, m in (("language models", lm), ("other topics", ~lm)):
            if m.any():
                row = [venue, f"{years[0]}–{years[1]}", topic, int(m.sum()), _r(np.median(everywhere[m])),
                       _r(np.mean(everywhere[m] < 0.1)), _r(np.median(topical[m])), _r(np.mean(topical[m] < 0.1))]
                rows.append(row)
                records[f"{venue} {topic}"] = dict(zip(("venue", "years", "topic", "papers", "all_median", "all_below_10th",
                                                        "topical_median", "topical_below_10th"), row))
    bench.report("style", {"venues": STYLE_VENUES, "per_venue": 800, "seed": 0, "neighbours": TOPICAL_NEIGHBOURS,
                           "topic": _LANGUAGE_MODELS.pattern},
                 [("style: the venue's own latest papers placed by P(venue | text) among all of its papers vs among the "
                   f"{TOPICAL_NEIGHBOURS} nearest in topic (a fair percentile: median 0.5, 0.1 below the 10th)",
                   ["venue", "years", "topic", "papers", "all: median", "all: below 10th", "topical: median",
                    "topical: below 10th"], rows)],
                 {"rows": rows, "records": records})


def scale(bench: Bench) -> None:
    """The section summary's quality scale on held-out published sections and their degraded versions."""

    run_scale(bench)


def diff(bench: Bench) -> None:
    """`peerlint diff` end to end on a git repository built from the evaluation pairs."""
    pairs, name = _eval_pairs(bench)
    diff_suite(bench, pairs[:bench.args.limit] if bench.args.limit else pairs, name)


# -- venue (Section 4.2) ---------------------------------------------------------------------------

def _venue_year(papers: list[Paper], min_papers: int = 30) -> tuple[int, list[str]]:
    """The year with the most venues of at least `min_papers` papers (latest on ties) and those venues."""
    counts = Counter((p.year, p.venue) for p in papers if p.year and p.venue)
    by_year = defaultdict(list)
    for (year, venue), c in counts.items():
        if c >= min_papers:
            by_year[year].append(venue)
    if not by_year:
        raise BenchError("the corpus has no year with two venues of 30+ papers: the venue suite needs that")
    year = max(by_year, key=lambda y: (len(by_year[y]), y))
    return year, sorted(by_year[year])


def main_venue_papers(papers: list[Paper]) -> list[Paper]:
    """The papers the editor's venue head learns from (`head_labels`: no workshop papers, no venue
    under its share of the corpus): the only venues it can name, so the only ones worth testing."""
    labels = head_labels([p.venue for p in papers], [p.status or "" for p in papers])
    return [p for p, label in zip(papers, labels) if label]


def _knn_vote(V: np.ndarray, labels: np.ndarray, Q: np.ndarray, k: int = 10) -> list[str]:
    return _knn_votes(V, labels, Q, k)[0]


def _knn_votes(V: np.ndarray, labels: np.ndarray, Q: np.ndarray, k: int = 10) -> tuple[list[str], np.ndarray]:
    """The kNN vote's venue for each query and its share of the k votes (its confidence)."""
    sims = Q @ V.T
    out, share = [], []
    for row in sims:
        top = np.argpartition(-row, k)[:k]
        votes = defaultdict(float)
        for j in top:
            votes[labels[j]] += 1.0 + 1e-6 * row[j]  # plain majority; similarity only breaks ties
        best = max(votes, key=votes.get)
        out.append(best)
        share.append(round(votes[best]) / k)
    return out, np.array(share)


@dataclass
class VenueSplit:
    """Who the venue heads learn from and who they are tested on (candidates: `venues`)."""

    venues: list[str]
    train: list[Paper]
    test: list[Paper]
    dataset: dict
    train_excludes: dict  # `Holdout` record: what was kept out of training, written into the JSON


def shipped_venue_split(papers: list[Paper], per_venue: int = 100, indexed: set[str] | None = None,
                        year: int | None = None, venues: list[str] | None = None,
                        min_papers: int = 30) -> VenueSplit:
    """One year's venues, `per_venue` abstracts each for the test; the other years of those venues
    (of those `indexed`, when given) train: the whole test venue-years, not only the sampled
    abstracts, are kept out, and so is any paper with a test paper's id or title.

    Only the venues the editor's head can name take part (`main_venue_papers`). `year` and `venues`
    fix the protocol (`--venue-year 2017 --venues AISTATS,COLT,CVPR,ICLR,ICML,NeurIPS` is the one
    the issue's figures used); by default, the year with the most such venues of `min_papers`+ papers."""
    main = main_venue_papers(papers)
    if venues:
        missing = [v for v in venues if not any(p.venue == v for p in main)]
        if missing:
            raise BenchError(f"venue suite: the corpus holds no main-conference papers of {', '.join(missing)} "
                             f"(workshops and venues under {MIN_VENUE_SHARE:.1%} of the corpus are left out)")
        main = [p for p in main if p.venue in venues]
    if year is None:
        year, found = _venue_year(main, min_papers)
    else:
        found = sorted(v for v, c in Counter(p.venue for p in main if p.year == year).items() if c >= min_papers)
    venues = sorted(venues) if venues else found
    thin = [v for v in venues if v not in found]
    if thin or len(venues) < 2:
        raise BenchError(f"venue suite: {year} holds fewer than {min_papers} papers of {', '.join(thin) or 'two venues'}; "
                         "choose another --venue-year or --venues")
    rng = random.Random(0)
    test = []
    for v in venues:
        pool = [p for p in main if p.year == year and p.venue == v]
        test.extend(rng.sample(pool, min(per_venue, len(pool))))
    holdout = Holdout.of(test, [(v, year) for v in venues])
    training = holdout.split(p for p in main if p.venue in venues and (indexed is None or p.id in indexed))
    assert_no_leak(training.papers, holdout, "bench drafts venue")
    return VenueSplit(venues, training.papers, test,
                      {"year": year, "test_per_venue": per_venue,
                       "train": f"{len(training.papers)} papers of these venues from other years; the test "
                                "venue-years and any paper with a test paper's id or title excluded; workshop "
                                "papers left out, as the editor's venue head leaves them"},
                      training.record())


def given_venue_split(shipped: list[Paper], given: list[Paper], per_venue_year: int = 100,
                      min_papers: int = 30) -> VenueSplit:
    """Train on the shipped corpus, test on another corpus's papers (later years, other venue-years):
    the candidates are the shipped suite's venues plus every venue of the given corpus the shipped one
    has `min_papers` papers of; up to `per_venue_year` test abstracts per venue and year.  Every
    venue-year the given corpus holds of those venues is kept out of training (the shipped corpus
    may hold the same venue-years: the default corpus now runs to 2025), and so is any shipped
    paper with a test paper's id or normalised title.  Like the shipped split, only the venues the
    editor's head can name take part (`main_venue_papers`)."""
    shipped = main_venue_papers(shipped)
    known = Counter(p.venue for p in shipped if p.venue)
    given_venues = sorted({p.venue for p in given if p.venue and known[p.venue] >= min_papers})
    if not given_venues:
        raise BenchError(f"none of the corpus's venues has {min_papers}+ papers in the shipped corpus, so a head "
                         "trained on it cannot name them; give a corpus of venues it holds (names as in "
                         "`peerlint index info`)")
    _, base = _venue_year(shipped)
    venues = sorted(set(base) | set(given_venues))
    rng = random.Random(0)
    by_venue_year = defaultdict(list)
    for p in given:
        if p.venue in given_venues:
            by_venue_year[(p.venue, p.year)].append(p)
    test = [p for key in sorted(by_venue_year, key=str)
            for p in rng.sample(by_venue_year[key], min(per_venue_year, len(by_venue_year[key])))]
    holdout = Holdout.of(test, by_venue_year)
    training = holdout.split(p for p in shipped if p.venue in venues)
    if not training.papers:
        raise BenchError("every shipped paper of these venues falls in the test venue-years: give a corpus of "
                         "other years than the shipped corpus holds")
    assert_no_leak(training.papers, holdout, "bench drafts venue --corpus")
    years = sorted({p.year for p in test if p.year})
    return VenueSplit(venues, training.papers, test,
                      {"years": years, "test_per_venue_year": per_venue_year, "test_venues": given_venues,
                       "train": f"{len(training.papers)} shipped papers of these venues; the test venue-years "
                                "and any paper with a test paper's id or title excluded"},
                      training.record())


def _venue_vectors(bench: Bench) -> tuple[VenueSplit, np.ndarray, np.ndarray]:
    """The split for this run and the train and test vectors: on the shipped corpus, its own index;
    on another corpus, the shipped corpus's vectors train (its bench index, built once) and the given
    corpus's test."""

    shipped_path = default_corpus_path()
    if [Path(s).resolve() for s in bench.sources] == [shipped_path.resolve()]:
        split = shipped_venue_split(bench.papers, indexed=set(bench.index.id_to_idx),
                                    year=getattr(bench.args, "venue_year", None),
                                    venues=getattr(bench.args, "venues", None))
        return split, bench.vector_of(split.train), bench.vector_of(split.test)
    shipped_papers = load_papers([shipped_path], warn=lambda m: None)
    split = given_venue_split(shipped_papers, bench.papers)
    index = ensure_index(shipped_papers, [shipped_path], None, "bench drafts")
    if index.manifest.model_id != bench.index.manifest.model_id:
        raise BenchError(f"the shipped corpus's index embeds with {index.manifest.model_id}, this corpus's with "
                         f"{bench.index.manifest.model_id}: build both with one model")
    shipped = Bench(bench.args, shipped_papers, index, [str(shipped_path)])
    return split, shipped.vector_of(split.train), bench.vector_of(split.test)


FAR_GRID = (0.01, 0.02, 0.05, 0.10)  # percentiles of the dev year's nearness tried as the "far" threshold


def _confidence_rows(name: str, conf: np.ndarray, correct: np.ndarray) -> tuple[list, list[ReliabilityBin]]:
    table = reliability(conf, correct)
    return [name, len(conf), _r(np.mean(correct)), _r(np.mean(conf)), _r(ece(table))], table


def venue_calibration(bench: Bench, split: VenueSplit, V: np.ndarray, Q: np.ndarray, head: VenueHead) -> tuple[list, dict]:
    """"Reads most like", calibrated (issue #34): the temperature is fitted on a dev year of the training
    papers (held out from the calibration head like the test year is from every head), then applied to
    the head trained on all training papers, as the editor does; reliability and ECE on the test papers,
    before and after, beside the majority venue and the kNN vote. Then nearness: held-out in-field test
    papers against out-of-field ACM-CR abstracts (fields no indexed venue covers), split in halves."""
    train_labels = [p.venue for p in split.train]
    train_years = [p.year or -1 for p in split.train]
    test_years = sorted({p.year for p in split.test if p.year})
    cal = calibrate(V, train_labels, train_years, exclude_years=test_years, model_id=bench.index.manifest.model_id)
    classes = np.array(head.classes)
    truth = np.array([p.venue for p in split.test])
    logits = head.logits(Q)
    raw, calibrated = softmax(logits), softmax(logits, cal.temperature)
    right = classes[raw.argmax(axis=1)] == truth
    majority = Counter(train_labels).most_common(1)[0]
    knn, share = _knn_votes(V, np.array(train_labels), Q)
    rows, tables = [], {}
    for name, conf, correct in (
            (f"majority venue ({majority[0]}, training share)", np.full(len(truth), majority[1] / len(train_labels)),
             truth == majority[0]),
            ("kNN vote (k=10, vote share)", share, np.array(knn) == truth),
            ("LDA venue head, raw (T = 1)", raw.max(axis=1), right),
            (f"LDA venue head, calibrated (T = {cal.temperature:.2f})", calibrated.max(axis=1), right)):
        row, table = _confidence_rows(name, conf, correct)
        rows.append(row)
        tables[name] = table
    raw_table, cal_table = list(tables.values())[2:]
    reliability_rows = [a.row() + b.row()[1:] for a, b in zip(raw_table, cal_table)]
    # nearness: in-field = the test papers (held out of every fit), out-of-field = ACM-CR abstracts
    outside = load_out_of_field(set(bench.index.venues) | set(train_labels))
    O = bench.abstract_vectors([x.text for x in outside])
    dev_half = np.array([stable_split(x.id) for x in outside])
    _, near_in = cal.nearest(Q)
    _, near_out = cal.nearest(O)
    p_in, p_out = calibrated.max(axis=1), softmax(head.logits(O), cal.temperature).max(axis=1)
    train_vectors = V / np.maximum(np.linalg.norm(V, axis=1, keepdims=True), 1e-12)

    def knn_sim(X):
        return np.sort(X @ train_vectors.T, axis=1)[:, -10:].mean(axis=1)

    k_in, k_out = knn_sim(Q), knn_sim(O)
    separation = [[name, len(a), int((~dev_half).sum()), _r(auroc(a, b[dev_half])), _r(auroc(a, b[~dev_half]))]
                  for name, a, b in (("similarity to the nearest venue centroid", near_in, near_out),
                                     ("mean similarity to the 10 nearest training papers", k_in, k_out),
                                     ("max calibrated venue probability", p_in, p_out))]
    dev_mask = np.isin(np.array(train_years), [cal.info["dev_year"]]) & np.isin(np.array(train_labels), classes)
    _, near_dev = cal.nearest(V[dev_mask])
    rates = {}
    for q in FAR_GRID:
        t = float(np.quantile(near_dev, q))
        rates[q] = (t, float(np.mean(near_dev < t)), float(np.mean(near_in < t)), float(np.mean(near_out[dev_half] < t)),
                    float(np.mean(near_out[~dev_half] < t)))
    chosen = max(FAR_GRID, key=lambda q: rates[q][3] - rates[q][1])  # dev only: out-of-field hits less false alarms
    thresholds = [[f"{q:.0%}" + (" (chosen on dev)" if q == chosen else "") + (" (shipped)" if q == FAR_PERCENTILE else "")]
                  + [_r(x) for x in rates[q]] for q in FAR_GRID]
    fields = Counter(x.field for x in outside)
    real_rows, real = _real_drafts(bench, cal)
    payload = {"calibration": {**cal.info, "temperature": round(cal.temperature, 4), "far_below": round(cal.far_below, 4),
                               "typical": round(cal.typical, 4), "test_years": test_years},
               "confidence_rows": rows,
               "reliability": {name: [b.row() for b in table] for name, table in tables.items()},
               "reliability_rows": reliability_rows,
               "out_of_field": {"source": f"ACM-CR {ACM_CR.name}: {len(outside)} abstracts, "
                                          + ", ".join(f"{n} {f}" for f, n in sorted(fields.items())),
                                "venues": sorted({x.venue for x in outside}), "dev": int(dev_half.sum()),
                                "test": int((~dev_half).sum()), "in_field_test": len(Q)},
               "separation_rows": separation, "threshold_rows": thresholds, "far_percentile_chosen": chosen,
               "far_percentile_shipped": FAR_PERCENTILE, "real_drafts": real, "real_rows": real_rows}
    tables_out = [
        (f"venue: confidence of the top venue on the test papers (calibration fitted on {cal.info['dev_year']}, "
         "held out of the calibration head)", ["method", "papers", "accuracy", "mean confidence", "ECE"], rows),
        ("venue: reliability of the LDA venue head, raw vs calibrated (10 confidence bins)",
         ["bin", "raw count", "raw mean conf", "raw accuracy", "cal count", "cal mean conf", "cal accuracy"],
         reliability_rows),
        ("venue: in-field test papers vs out-of-field abstracts, AUROC (in-field scores higher)",
         ["signal", "in-field", "out-of-field test", "AUROC dev half", "AUROC test half"], separation),
        ("venue: 'reads unlike every indexed venue' below a percentile of the dev year's centroid similarity",
         ["percentile", "threshold", "false alarms dev year", "false alarms test papers", "hits out-of-field dev",
          "hits out-of-field test"], thresholds),
        (f"venue: whole drafts of tests/data/real, 'reads unlike every indexed venue' at the shipped threshold "
         f"({cal.far_below:.3f})", ["drafts", "papers", "said far", "rate", "similarity range"], real_rows)]
    return tables_out, payload


def _real_drafts(bench: Bench, cal) -> tuple[list, dict]:
    """The editor's whole-draft rule (`summaries.draft_nearness`) on the real papers of tests/data/real:
    the systems, PL and astrophysics ones should be said far, the ML/NLP/CV ones not."""

    found = {}
    for folder, root in real_papers():
        project = read_project(root, Settings(), None, None, embedder=bench.index.embedder).project
        chunks = [c for g in sections_of(project.chunks) for c in g]
        if chunks:
            near = draft_nearness(cal, bench.embed([c.text for c in chunks]))
            found[folder] = {"out_of_field": folder in REAL_OUT_OF_FIELD, "far": near.far, "nearest": near.nearest,
                             "similarity": round(near.similarity, 3)}
    rows = []
    for label, outside in (("out of field (systems, PL, astrophysics)", True), ("in field (ML, NLP, CV)", False)):
        group = [v for v in found.values() if v["out_of_field"] == outside]
        if group:
            sims = [v["similarity"] for v in group]
            rows.append([label, len(group), sum(v["far"] for v in group), _r(np.mean([v["far"] for v in group])),
                         f"{min(sims):.2f}–{max(sims):.2f}"])
    return rows, found


def venue(bench: Bench) -> None:
    """Section 4.2: which venue does an abstract come from?  On the shipped corpus, one year held out;
    with `--corpus`, heads trained on the shipped corpus name the given corpus's venues and years.
    Then how far to trust the answer (`venue_calibration`): reliability and ECE before and after
    temperature scaling, and the "reads unlike every indexed venue" threshold on out-of-field texts."""
    split, V, Q = _venue_vectors(bench)
    venues, test = split.venues, split.test
    labels, truth = np.array([p.venue for p in split.train]), [p.venue for p in test]
    knn = _knn_vote(V, labels, Q)
    head = VenueHead.train(V, labels, model_id=bench.index.manifest.model_id)
    preds = {"kNN vote (k=10)": knn, "embedding (LDA venue head)": head.predict(Q)}
    present = sorted(set(truth))  # the LLM compares three candidates: the tested venues first
    trio = [v for v in ("NeurIPS", "ICLR", "ICML") if v in present]
    trio = trio if len(trio) >= 2 else (present + [v for v in venues if v not in present])[:3]
    k = bench.args.limit or 3
    llm_items = [p for v in trio for p in [q for q in test if q.venue == v][:k]]
    llm_scores = {}
    rag_excluded = held_out_ids(bench, split.test)
    for p in llm_items:
        text = bench.first_chunk(p.text)
        llm_scores[p.id] = {c: bench.rate(text, "style", venue=c, exclude_ids=rag_excluded).score for c in trio}
    sub = {"kNN vote (k=10)": _knn_vote(V, labels, bench.vector_of(llm_items)) if llm_items else [],
           "embedding (LDA venue head)": VenueHead.train(V[np.isin(labels, trio)], labels[np.isin(labels, trio)]
                                                         ).predict(bench.vector_of(llm_items)) if llm_items else [],
           "llm (A.5, RAG per venue)": [max(trio, key=lambda c: -1 if llm_scores[p.id][c] is None else llm_scores[p.id][c])
                                        for p in llm_items]}
    rows = []
    for name, pred in preds.items():
        acc = float(np.mean([a == b for a, b in zip(pred, truth)]))
        rows.append([name, f"{len(venues)} venues", len(test), _r(acc)] + [
            _r(np.mean([a == b for a, b in zip(pred, truth) if b == v])) if v in truth else None for v in venues])
    sub_truth = [p.venue for p in llm_items]
    sub_rows = [[name, len(pred), _r(np.mean([a == b for a, b in zip(pred, sub_truth)]) if pred else None)]
                for name, pred in sub.items()]
    def mean_score(v: str, c: str) -> float | None:  # None when the LLM gave no score (unavailable, unparsed)
        scores = [s for s in (llm_scores[p.id][c] for p in llm_items if p.venue == v) if s is not None]
        return _r(mean(scores), 2) if scores else None

    matrix = [[v] + [mean_score(v, c) for c in trio] for v in trio]
    style = {t: _operating_point(VenueStyleAnalyzer(), head.rating(Q[[v != t for v in truth]], t),
                                 head.rating(Q[[v == t for v in truth]], t))
             for t in venues if t in truth and t in head.classes and len(set(truth)) > 1}
    def topical(t: str, rows: list[bool]) -> np.ndarray:  # the summary's rule: among the target's 100 nearest papers
        Qs, Vt = Q[rows], V[labels == t]
        return 1.0 + 9.0 * head.topical_percentiles(Qs, t, [Vt[n] for n in exact_top_k(Vt, Qs, TOPICAL_NEIGHBOURS)[0]])

    style_topical = {t: _operating_point(VenueStyleAnalyzer(), topical(t, [v != t for v in truth]),
                                         topical(t, [v == t for v in truth]))
                     for t in style}
    calibration_tables, calibration = venue_calibration(bench, split, V, Q, head)
    lag_rows, lag = lagging_venues(split, V, Q)
    years = sorted({p.year for p in test if p.year})
    by_year = [[str(y), sum(p.year == y for p in test)] + [
        _r(np.mean([a == b for a, b, p in zip(pred, truth, test) if p.year == y])) for pred in preds.values()]
        for y in years]
    bench.report("venue", {**split.dataset, "venues": venues, "llm_venues": trio, "llm_per_venue": k},
                 [(f"venue: true venue predicted, {', '.join(map(str, years))} abstracts",
                   ["method", "candidates", "papers", "accuracy"] + venues, rows),
                  ("venue: accuracy per year", ["year", "papers"] + list(preds), by_year),
                  (f"venue: off-venue-style at the shipped operating point (below the {ordinal(round(100 * Settings().off_venue_percentile))} "
                   "percentile of the target's own papers, embedding scorer): the test abstracts of other venues should be "
                   "flagged, the target's own not", ["target"] + OPERATING_HEADERS[1:],
                   [_operating_row(t, r) for t, r in style.items()]),
                  (f"venue: the same, the percentile taken among the target's {TOPICAL_NEIGHBOURS} training papers nearest each "
                   "abstract (the section summary's rule)", ["target"] + OPERATING_HEADERS[1:],
                   [_operating_row(t, r) for t, r in style_topical.items()]),
                  (f"venue: on the LLM's {len(llm_items)} papers, candidates {', '.join(trio)}",
                   ["method", "papers", "accuracy"], sub_rows),
                  ("venue: mean LLM style score, true venue (rows) vs reference venue (columns)", ["true venue"] + trio, matrix)]
                 + ([(f"venue: a venue whose newest papers lag the others' by `lag` years: its own {split.dataset.get('year')} "
                      f"papers and the other venues' flagged below the {ordinal(round(100 * Settings().off_venue_percentile))} "
                      "percentile (summary's rule), heads learnt forward in time only (years before the test year); "
                      "one head over every paper vs the style head (every venue up to the target's newest year)",
                      ["target", "lag", "newest year", "own flagged: one head", "own: style head",
                       "others flagged: one head", "others: style head"], lag_rows)] if lag_rows else [])
                 + calibration_tables,
                 {**calibration, "rows": rows, "by_year": by_year, "off_venue_style": style, "off_venue_style_topical": style_topical, "lagging_venues": lag, "lagging_rows": lag_rows, "llm_rows": sub_rows, "llm_matrix": matrix, "llm_scores": llm_scores,
                  "train_excludes": {**split.train_excludes, "llm_rag_excludes_ids": len(rag_excluded),
                                    "calibration_head_excludes_years": calibration["calibration"]["excluded_years"]}})


LAGS = (0, 1, 2)  # years the target venue's newest training papers lag the other venues' in `lagging_venues`
                  # (at least: a venue without papers in the years before has the lag it has)


def lagging_venues(split: VenueSplit, V: np.ndarray, Q: np.ndarray) -> tuple[list, dict]:
    """The style percentile when the target venue's newest indexed year lags the others' (`heads.style_cuts`):
    forward in time (heads learn only from the years before the test year Y), each target venue's papers
    stop `lag` years before the others' (at its newest year up to Y - 1 - lag); one head over all of that
    (the editor before style heads) against a head over every venue's papers up to the target's newest
    year (the editor's style head).
    Per target and lag: the share of its own test papers and of the other venues' test papers flagged
    below the off-venue percentile, by the section summary's rule (the 100 nearest of its training papers)."""
    year = split.dataset.get("year")
    if year is None:
        return [], {}
    labels = np.array([p.venue for p in split.train])
    years = np.array([p.year if p.year is not None else -1 for p in split.train])
    truth = np.array([p.venue for p in split.test])
    cutoff = Settings().off_venue_percentile
    rows, out = [], {}
    for target in sorted(set(truth) & set(labels)):
        own, other = Q[truth == target], Q[truth != target]
        done = set()
        for lag in LAGS:
            mine_up_to = (labels == target) & (years >= 0) & (years <= year - 1 - lag)
            cut = int(years[mine_up_to].max()) if mine_up_to.sum() >= 20 else None
            if cut is None or cut in done:
                continue
            done.add(cut)  # the target's newest training year (COLING has none in 2023-24): its lag is what it is
            lag = year - 1 - cut
            one = (years >= 0) & (years < year) & ((labels != target) | (years <= cut))
            aligned = (years >= 0) & (years <= cut)
            found = {}
            for name, rows_of in (("one head", one), ("style head", aligned)):
                head = VenueHead.train(V, labels, rows=rows_of)
                mine = np.flatnonzero(rows_of & (labels == target))
                def flagged(X: np.ndarray) -> float:
                    near = exact_top_k(V[mine], X, TOPICAL_NEIGHBOURS)[0]
                    return float(np.mean(head.topical_percentiles(X, target, [V[mine[n]] for n in near]) < cutoff))
                found[name] = {"own": flagged(own), "other": flagged(other)}
            out[f"{target}/{lag}"] = {"target": target, "lag": lag, "cut": cut, **found}
            rows.append([target, lag, str(cut), _r(found["one head"]["own"]), _r(found["style head"]["own"]),
                         _r(found["one head"]["other"]), _r(found["style head"]["other"])])
    for lag in sorted({r["lag"] for r in out.values()}):
        got = [r for r in out.values() if r["lag"] == lag]
        if got:
            rows.append([f"mean of {len(got)}", lag, "", *(_r(np.mean([r[h][k] for r in got]))
                                                          for k in ("own", "other") for h in ("one head", "style head"))])
    return rows, out


def held_out_ids(bench: Bench, test: list[Paper]) -> frozenset[str]:
    """Ids of the bench index's papers in the test papers' venue-years (and the test papers'
    own ids): what the LLM's retrieved references may not be, as the heads may not train on them."""
    holdout = Holdout.of(test)
    return frozenset(p.id for p in bench.papers if not holdout.allows(p)) | holdout.ids


# -- acceptance -------------------------------------------------------------------------------------

def decision(status: str) -> int | None:
    """1 accepted, 0 not accepted to the conference (rejected or sent to its workshop track), else None."""
    verdict = conference_decision(status)
    return None if verdict is None else int(verdict == "accept")


PRIOR_ROW = "prior: topicality + fluency (Blend, label-free)"
HEAD_AND_PRIOR_ROW = "acceptance head + prior (sum of z-scores)"


def _label_free(bench: Bench, papers: list[Paper], X: np.ndarray, year: int) -> tuple[dict[str, np.ndarray], dict]:
    """Scores no decision has shaped: topicality, fluency (all papers; ~2 s each cold, then cached) and both."""

    texts = [p.text for p in papers]
    by_text = dict(zip(texts, X))

    def embed(ts):
        return np.stack([by_text[t] if t in by_text else bench.embed([t])[0] for t in ts])

    info: dict = {}
    try:
        topical = Topicality.before(bench.index, year, embed)
    except ValueError as exc:
        return {}, {"skipped": f"label-free rows skipped: {exc}"}
    info["topicality"] = {"name": topical.name, "reference_papers": topical.size}
    topicality_row = f"topicality ({topical.name}, label-free)"

    def progress(done: int, total: int) -> None:
        if done % 50 == 0 or done == total:
            log(f"acceptance: fluency of {done}/{total} abstracts")

    try:
        fluency = FluencyScore(bench.fluency_llm(), progress=progress)
    except LLMUnavailable as exc:
        info["fluency"] = f"skipped: {exc}"
        return {topicality_row: np.asarray(topical(texts), float)}, info
    start = time.perf_counter()
    blend = Blend([topical, fluency])
    raw = blend.parts_of(texts)  # each part scores every text once; the three rows read the same numbers
    out = {topicality_row: raw[0], f"fluency ({lm_label(bench.fluency_llm())} mean token log-likelihood, label-free)": raw[1],
           PRIOR_ROW: blend.combine(raw)}
    info["fluency"] = {"prompt": "analyzers/fluency.ABSTRACT_PROMPT", "texts": len(texts),
                       "seconds": round(time.perf_counter() - start, 1)}
    return out, info


def decision_groups(papers, indexed=None, min_papers: int = 100) -> dict[tuple[str, int], list[Paper]]:
    """The acceptance suite's test groups: whole venue-years with 100+ decided papers of both outcomes
    (mixing years would let a head learn the year).  The informal suite keeps them out of the
    register head it ships, so that head is zero-shot here."""
    labelled = defaultdict(list)  # (venue, year) -> papers with a decision
    for p in with_decisions(papers):
        if p.status and decision(p.status) is not None and (indexed is None or p.id in indexed):
            labelled[(p.venue, p.year)].append(p)
    return {g: ps for g, ps in sorted(labelled.items(), key=lambda kv: str(kv[0]))
            if len(ps) >= min_papers and len({decision(p.status) for p in ps}) == 2}


def scored_folds(every: dict, year: int | None) -> tuple[dict, list[Paper], list, list[dict]]:
    """The acceptance suite's scored groups (every venue-year, or only `year`'s), the pool of papers the
    folds index (the scored groups' papers first, in order, then the other groups'), and the leave-one-
    venue-year-out folds of the scored groups only: each trains on every other group."""
    groups = {g: ps for g, ps in every.items() if year is None or g[1] == year}
    if not groups:
        raise BenchError(f"no venue-year of {year} has 100+ accepted and rejected papers; the corpus has "
                         f"{', '.join(f'{v} {yr}' for v, yr in every)}")
    pool = [p for ps in groups.values() for p in ps] + [p for g, ps in every.items() if g not in groups for p in ps]
    folds, records = venue_year_folds(pool, groups) if len(every) >= 2 else ([], [])
    return groups, pool, folds, records


def venue_year_folds(papers: list[Paper], groups) -> tuple[list[tuple[np.ndarray, np.ndarray]], list[dict]]:
    """Leave one venue-year out: for each group, its papers are the test fold and the papers of the
    other groups train, less any with a test paper's venue-year, id or normalised title (the same
    paper resubmitted the next year); with the `train_excludes` record of each fold."""
    folds, records = [], []
    for g in groups:
        test = np.array([i for i, p in enumerate(papers) if (p.venue, p.year) == g])
        holdout = Holdout.of([papers[i] for i in test], [g])
        train = np.array([i for i, p in enumerate(papers) if (p.venue, p.year) != g and holdout.allows(p)], dtype=int)
        assert_no_leak([papers[i] for i in train], holdout, f"bench drafts acceptance ({g[0]} {g[1]})")
        dropped = Counter(holdout.reason(p) for p in papers if (p.venue, p.year) != g and not holdout.allows(p))
        folds.append((test, train))
        records.append(record_of(holdout, dropped, len(train), test=f"{g[0]} {g[1]}"))
    return folds, records


def _register_zero_shot(head: LinearHead, groups) -> dict:
    """Whether the shipped register head's own record says it kept these venue-years out of training."""
    kept_out = set((head.info.get("train_excludes") or {}).get("venue_years") or [])
    wanted = [f"{v} {y}" for v, y in groups]
    return {"trained_on": head.info.get("trained_on"), "excluded_test_venue_years": all(w in kept_out for w in wanted),
            "note": None if all(w in kept_out for w in wanted) else
            "the register head records no exclusion of these venue-years: it was trained on a hash half of every "
            "venue-year of the corpus it was built from, so these whenever that corpus held them (on scientific vs "
            "informal text, not on decisions); `--suite informal` keeps them out when it regenerates the head"}


def acceptance(bench: Bench) -> None:
    """Accepted vs rejected from the abstract alone. Every venue-year with decisions is a group; with
    `--venue-year Y` only Y's groups are scored (ICLR 2017 is the issue's protocol), while the trained
    rows still learn from every other group."""
    every = decision_groups(bench.papers, set(bench.index.id_to_idx))
    if not every:
        raise BenchError("the corpus has no venue-year with 100+ accepted and rejected papers for the acceptance suite")
    groups, pool, folds, fold_records = scored_folds(every, getattr(bench.args, "venue_year", None))
    papers = [p for ps in groups.values() for p in ps]  # the scored papers: the pool's first len(papers)
    X = bench.vector_of(papers)
    head = _register(bench)
    reg = head.rating(X)
    # trained rows: never on the test venue-year, so they need decisions of two venue-years or more
    cv_logit, cv_rating = np.full(len(papers), np.nan), np.full(len(papers), np.nan)
    # the folds index the pool; its first len(papers) are the scored papers
    X = np.vstack([X, bench.vector_of(pool[len(papers):])]) if len(pool) > len(papers) else X
    y = np.array([decision(p.status) for p in pool])
    rated = np.array([p.rating_avg if p.rating_avg is not None else np.nan for p in pool])
    for test, train in folds:
        if len(train) < 20 or len(set(y[train])) < 2:
            continue
        cv_logit[test] = LinearHead.train(X[train], y[train], l2=2.0).logit(X[test])
        ok = train[~np.isnan(rated[train])]
        if len(ok) >= 20:
            A = np.hstack([X[ok], np.ones((len(ok), 1))])
            coef = np.linalg.solve(A.T @ A + 2.0 * np.eye(A.shape[1]), A.T @ rated[ok])
            cv_rating[test] = np.hstack([X[test], np.ones((len(test), 1))]) @ coef
    n = len(papers)
    X, y, rated = X[:n], y[:n], rated[:n]
    has = ~np.isnan(rated)
    rows = [["embedding (register head, zero-shot)", len(papers), _r(auroc(reg[y == 1], reg[y == 0])),
             _r(spearman(reg[has], rated[has]))]]
    for name, v in (("acceptance head (leave one venue-year out)", cv_logit),
                    ("rating regression (ridge, leave one venue-year out)", cv_rating)):
        m = ~np.isnan(v)
        rows.append([name, int(m.sum()), _r(auroc(v[m & (y == 1)], v[m & (y == 0)])) if m.any() else None,
                     _r(spearman(v[m & has], rated[m & has])) if (m & has).sum() > 2 else None])
    train_excludes = {"scheme": "leave one venue-year out: each group's papers are scored by heads trained on the "
                                "other groups, less any paper with a test venue-year, id or normalised title",
                      "folds": fold_records}
    if len(every) < 2:
        train_excludes["skipped"] = ("the trained rows need decisions of two venue-years or more: training on the "
                                     "test venue-year itself is not done")
    years = {yr for _, yr in groups}
    free, free_info = _label_free(bench, papers, X, min(years)) if len(years) == 1 else \
        ({}, {"skipped": "label-free rows need one year (their reference is the year before)"})
    if PRIOR_ROW in free and not np.isnan(cv_logit).any():  # fixed equal weights: nothing fitted on the scored year
        free[HEAD_AND_PRIOR_ROW] = standardised_sum([cv_logit, free[PRIOR_ROW]])
    for name, v in free.items():
        rows.append([name, len(papers), _r(auroc(v[y == 1], v[y == 0])), _r(spearman(v[has], rated[has]))])
    k = bench.args.limit or 10
    rng = random.Random(0)
    pick = rng.sample(list(np.nonzero(y == 1)[0]), min(k, int((y == 1).sum()))) + \
        rng.sample(list(np.nonzero(y == 0)[0]), min(k, int((y == 0).sum())))
    rag_excluded = held_out_ids(bench, papers)
    llm = [bench.rate(bench.first_chunk(papers[i].text), exclude_ids=rag_excluded).score for i in pick]
    ok = [j for j, s in enumerate(llm) if s is not None]
    idx = [pick[j] for j in ok]
    on_items = [("llm (A.1, RAG)", [llm[j] for j in ok]), ("embedding (LLM's items)", list(reg[idx])),
                ("ensemble (LLM's items)", _ensemble([llm[j] for j in ok], reg[idx])),
                ("acceptance head (LLM's items)", list(cv_logit[idx]))]
    prior = free.get(PRIOR_ROW)
    if prior is not None and len(idx) > 1:

        llm_items, prior_items = np.array([llm[j] for j in ok], float), prior[idx]
        on_items += [("prior (LLM's items)", list(prior_items)),
                     ("llm + prior (sum of z-scores, label-free)", list(standardised_sum([llm_items, prior_items])))]
    for name, vals in on_items:
        v, yy, rr = np.array(vals, float), y[idx], rated[idx]
        m = ~np.isnan(v)
        rows.append([name, int(m.sum()), _r(auroc(v[m & (yy == 1)], v[m & (yy == 0)])) if m.any() else None,
                     _r(spearman(v[m & ~np.isnan(rr)], rr[m & ~np.isnan(rr)])) if (m & ~np.isnan(rr)).sum() > 2 else None])
    bench.report("acceptance", {"groups": sorted(f"{v} {yr}" for v, yr in groups), "papers": len(papers),
                                "trained_rows_learn_from": sorted(f"{v} {yr}" for v, yr in every if (v, yr) not in groups)
                                or "the other scored groups",
                                "accepted": int(y.sum()), "rejected": int((y == 0).sum()),
                                "labels": "accepted = poster/oral/spotlight/accept/talk; rejected = reject/workshop",
                                "label_free": free_info},
                 [("acceptance: accepted vs rejected AUROC (target >= 0.65) and Spearman with mean rating",
                   ["scorer", "papers", "AUROC", "Spearman"], rows)],
                 {"rows": rows, "train_excludes": {**train_excludes, "llm_rag_excludes_ids": len(rag_excluded),
                                                   "register_head": _register_zero_shot(head, groups),
                                                   "topicality": free_info.get("topicality")}})


# -- latency (the editor's target: a 10-page draft scored in < 60 s cold, < 1 s unchanged) ------------

def latency(bench: Bench) -> None:
    import time


    pages = 20  # make_draft writes 3 paragraphs a page; 20 of its pages ~ the 60 paragraphs of a real 10-page paper
    chunks = parse_document(make_draft(pages), "file:///draft.tex")
    venue = "NeurIPS" if "neurips" in set(bench.index.venues) else str(bench.index.venues[0])
    settings = Settings(analyzers=("quality", "venue-style"), target_venue=venue)
    llm = bench.llm(cache=False)  # cold means cold: no answer cached by an earlier run
    timed = {"generate_s": 0.0, "suggestions": 0}
    generate = llm.generate

    def counted(*a, **k):
        start = time.perf_counter()
        try:
            return generate(*a, **k)
        finally:
            timed["generate_s"] += time.perf_counter() - start
            timed["suggestions"] += 1

    llm.generate = counted
    bench.index.embed(["warm-up"])  # the server loads the embedding model at start-up, not per draft
    engine = Engine(settings, retriever=Retriever(bench.index), llm=llm)
    start = time.perf_counter()
    cold = engine.run(chunks, "llm")
    cold_s = time.perf_counter() - start
    start = time.perf_counter()
    warm = engine.run(chunks, "llm")
    warm_s = time.perf_counter() - start
    llm.generate = generate
    try:
        revision_rows, revision_seconds = editor_latency(pages)
    except BenchError as exc:  # the first table stands without them
        log(f"latency: no revision rows: {exc}")
        revision_rows, revision_seconds = [[str(exc), None, None, None]], {}
    flagged = Counter(j.code for j in cold.judgments)
    rows = [["cold (nothing cached)", len(chunks), round(cold_s, 2), round(cold_s - timed["generate_s"], 2),
             timed["suggestions"], round(timed["generate_s"], 1), dict(flagged)],
            ["unchanged (cached)", len(chunks), round(warm_s, 3), round(warm_s, 3), 0, 0.0, dict(Counter(j.code for j in warm.judgments))]]
    bench.report("latency", {"draft": f"benchmarks.lsp.draft.make_draft({pages}) ({pages * PARAGRAPHS_PER_PAGE} paragraphs "
                                      f"of shuffled real sentences), target venue {venue}", "scorer": "auto"},
                 [("latency: quality + venue-style over a whole draft (target < 60 s cold, < 1 s unchanged)",
                   ["run", "chunks", "total s", "scoring s", "suggestions", "suggestion s", "flagged"], rows),
                  (f"latency: the editor's revision judgments against HEAD, the same draft in git (target < 2 s "
                   f"after a save with {EDITED_PARAGRAPHS} paragraphs edited)",
                   ["save", "s", "sentences scored", "revision-weaker findings"], revision_rows)],
                 {"rows": rows, "revision_rows": revision_rows, "revision_seconds": revision_seconds, "cold_s": cold_s, "warm_s": warm_s, "scoring_s": cold_s - timed["generate_s"],
                  "suggestions": timed["suggestions"], "suggestion_s": timed["generate_s"]})
