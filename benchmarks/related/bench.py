"""`peerlint bench related`: citation Recall@10..50 and MRR of the first stage and of SEC, one row each.

For every query of a ground truth (see `truth.py`: citing text -> the papers it cites), the
retriever returns 50 papers of the index, never the citing paper itself and, when the query has a
year, none published later. Recall@k is the share of the query's cited papers *that are in the
index* found among the first k, averaged over queries; MRR the mean reciprocal rank of the first
cited paper found in the 50 (0 when none is); cited ids the index lacks are counted and reported,
never scored.

Rows: the first stage every consumer shares (`retrieval/hybrid.py`): dense, lexical
(BM25), hybrid by reciprocal rank fusion and hybrid by the weighted score, each against dense;
dense and weighted hybrid with the query adapter (`index/embedding/adapter.py`, `--adapter FILE`:
measured, not shipped; n/a without one); then SciPIP's SEC over the dense first stage (SciPIP Table 5): semantic only, each stage added in
turn (+entities, +co-citation, +clustering, i.e. full SEC), full SEC without each stage; and full
SEC over the hybrid first stage, against SEC over dense. The rows the product uses carry
`"default": true` (the first stage of search, hover and close-prior-work) or name their use in
`"product"`. `--weights` adds a weighted-hybrid row per lexical weight: the sweep that chose
`LEXICAL_WEIGHT` (on ACM-CR, the dev data, only).

Without --truth it builds the ACM-CR ground truths (paper and context level) from
../shared/data/acm-cr and runs both. `--sample N` searches a sub-corpus of N papers (every paper
the truths cite plus a fixed random sample of the others) where embedding the whole corpus takes
too long; `--lexical-only` runs the lexical row alone on the whole corpus, with placeholder vectors
instead of embeddings.
"""

from __future__ import annotations

from ..harness.results import RESULTS_HELP, print_table, write_result

import argparse
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from ...retrieval.hybrid import DEFAULT_FUSION, DEFAULT_MODE, LEXICAL_WEIGHT
from ...errors import UserError
from ...index.embedding.adapter import QueryAdapter
from ...index.papers import SearchFilter
from ...retrieval import hybrid
from ...settings import Settings
from ..harness.corpus_index import default_bench_index, ensure_index
from . import truth as related_truth, precision
from ...locations import cache_root
from ...retrieval.related_work import CitationGraph, RelatedWork, SECConfig
from ...index.build import default_index_path
from ...index.store import IndexError_, open_index
from .cite_recovery import truth_from_latex
from ...index.ingest.load import CorpusError, load_papers
from .placeholder import PlaceholderEmbedder
from ...latex.bibliography import normalise_title

CUTOFFS = (10, 20, 30, 40, 50)
SAMPLE_SEED = 0  # the distractors of `--sample`
STAGES = ("semantic", "entities", "cocitation", "clustering")
FULL_SEC = "+clustering (SEC)"


@dataclass(frozen=True)
class Row:
    """One retriever measured: a first stage alone (no `stages`) or SEC over a first stage."""

    label: str
    stages: tuple[str, ...] = ()  # SEC stages on; () for a first-stage row
    mode: str = "dense"  # the first stage: dense | lexical | hybrid
    fusion: str = DEFAULT_FUSION
    weight: float = LEXICAL_WEIGHT
    against: str = ""  # the row its gain is measured against ("": the cumulative row above it, SEC rows)
    product: str = ""  # what in peerlint uses this retriever
    adapter: bool = False  # query vectors through the query adapter (`index/embedding/adapter.py`)

    @property
    def default(self) -> bool:
        return not self.stages and not self.adapter and (self.mode, self.fusion, self.weight) == (
            DEFAULT_MODE, DEFAULT_FUSION, LEXICAL_WEIGHT)


FIRST_STAGE_USE = "peerlint search, hover, close-prior-work, drafts references, NOVA"
FIRST = (
    Row("dense"),
    Row("lexical", mode="lexical", against="dense"),
    Row("hybrid-rrf", mode="hybrid", fusion="rrf", against="dense"),
    Row("hybrid-weighted", mode="hybrid", fusion="weighted", against="dense"),
)
ADAPTED = (
    Row("dense +adapter", against="dense", adapter=True),
    Row("hybrid-weighted +adapter", mode="hybrid", fusion="weighted", against="hybrid-weighted", adapter=True),
)
SEC_DENSE = (
    Row("semantic-only", ("semantic",)),
    Row("+entities", ("semantic", "entities")),
    Row("+co-citation", ("semantic", "entities", "cocitation")),
    Row(FULL_SEC, STAGES),
    Row("SEC - entities", ("semantic", "cocitation", "clustering"), against=FULL_SEC),
    Row("SEC - co-citation", ("semantic", "entities", "clustering"), against=FULL_SEC),
    Row("SEC - clustering", ("semantic", "entities", "cocitation"), against=FULL_SEC),
)
SEC_HYBRID = Row("SEC (hybrid)", STAGES, mode=DEFAULT_MODE, against=FULL_SEC,
                 product="missing-related-work, Cite this paper, Show related work")
ROWS = (*FIRST, *ADAPTED, *SEC_DENSE, SEC_HYBRID)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of this command."""
    parser.add_argument("--truth", nargs="+", type=Path, metavar="FILE",
                        help="ground-truth JSONL file(s): {id, text, year, cited: [ids or titles], paper?} "
                             "(default: the ACM-CR paper- and context-level truths, built from --acm)")
    parser.add_argument("--acm", type=Path, default=None, metavar="DIR",
                        help="ACM-CR directory with corpus.jsonl.gz and citing.jsonl (default: ../shared/data/acm-cr)")
    parser.add_argument("--from-latex", nargs="+", type=Path, default=None, metavar="DIR",
                        help="cite recovery: every paragraph of these LaTeX projects (folders or root .tex files) that "
                             "cites something is a query whose truth is the cited works the index holds, matched from "
                             "the project's .bib (default index: the default one, or --index)")
    parser.add_argument("--make-truth", type=Path, metavar="DIR",
                        help="only write the ACM-CR ground truths (acm-cr-paper.jsonl, acm-cr-context.jsonl) to DIR")
    parser.add_argument("--corpus", nargs="+", type=Path, default=None,
                        help="corpus the index is built from, if --index is not given (default with ACM-CR: its corpus)")
    parser.add_argument("--index", type=Path, default=None,
                        help="index to search (default: ~/.cache/peerlint/bench-index-<corpus hash>, built if missing)")
    parser.add_argument("--references", nargs="+", type=Path, default=[], metavar="FILE",
                        help="reference lists for co-citation: JSONL {id, references|cited: [ids], year?} "
                             "(default with ACM-CR: its citing papers, leave-one-out); `Paper.references` of the "
                             "index are always used")
    parser.add_argument("--stages", default="all", metavar="ROWS",
                        help="rows to run: 'all', or a comma list of 'first' (dense, lexical, hybrid-rrf, "
                             "hybrid-weighted), 'adapter' (dense and hybrid-weighted with the query adapter of "
                             "--adapter), the cumulative SEC rows by the stage each adds (semantic, entities, "
                             "cocitation, clustering), 'minus' for the SEC-minus-one rows and 'hybrid' for SEC over "
                             "the hybrid first stage")
    parser.add_argument("--weights", default="", metavar="W,…",
                        help="also a weighted-hybrid row per lexical weight (the sweep that tunes LEXICAL_WEIGHT)")
    parser.add_argument("--sample", type=int, default=None, metavar="N",
                        help="search a sub-corpus of N papers: every paper the ground truths cite plus a fixed random "
                             f"sample (seed {SAMPLE_SEED}) of the others (for machines where embedding the whole "
                             "corpus takes hours)")
    parser.add_argument("--lexical-only", action="store_true",
                        help="run the lexical row only, over an index built with placeholder vectors instead of "
                             "embeddings (the whole corpus in minutes on a CPU)")
    parser.add_argument("--adapter", type=Path, default=None, metavar="FILE",
                        help="query adapter for the '+adapter' rows (default: the one shipped for the index's model, "
                             "if any; `peerlint bench embedders --train-adapter` writes one)")
    parser.add_argument("--query-embedding", choices=["exact", "int8"], default="exact",
                        help="embed the queries as the editor's queryEmbedding setting would (default: exact; the "
                             "index's own vectors are the same either way)")
    parser.add_argument("--k", default=",".join(map(str, CUTOFFS)), help="recall cutoffs (default: 10,20,30,40,50)")
    parser.add_argument("--precision", action="store_true",
                        help="also sweep the editor's similarity threshold over the context-level truth: precision "
                             "and recall of what missing-related-work would show, chosen on dev citing papers, "
                             "reported on test ones")
    parser.add_argument("--limit", type=int, default=None, help="only the first N queries of each ground truth")
    parser.add_argument("--out", type=Path, default=None, help=RESULTS_HELP)


def run(args: argparse.Namespace) -> int:
    acm = args.acm or related_truth.ACM_DIR
    if args.make_truth:
        try:
            paper, context, counts = related_truth.write_acm_truths(args.make_truth, acm)
        except (ValueError, OSError) as exc:
            raise UserError(str(exc)) from None
        print(f"wrote {paper} ({counts['citing_papers']} queries) and {context} ({counts['contexts']} queries)")
        return 0
    try:
        cutoffs = tuple(sorted({int(x) for x in args.k.split(",") if x.strip()}))
        if not cutoffs or cutoffs[0] <= 0:
            raise ValueError
    except ValueError:
        raise UserError(f"--k expects positive numbers separated by commas, got {args.k!r}") from None
    rows = _rows(args.stages, args.weights, args.lexical_only)
    projects: list[dict] = []
    if args.from_latex:
        read, index, corpus_note, references, projects = _from_latex(args)
    else:
        truths, corpus, references = _inputs(args, acm)
        read = []
        for truth_path in truths:
            try:
                read.append((truth_path, related_truth.read_truth(truth_path)))
            except ValueError as exc:
                raise UserError(str(exc)) from None
        index, corpus_note = _index(args, corpus, {c for _, t in read for q in t.queries for c in q.cited})

    index.embed_queries(args.query_embedding)
    graph = CitationGraph.from_index(index)
    for path in references:
        try:
            graph = graph.merged(CitationGraph.from_file(path))
        except (OSError, ValueError) as exc:
            raise UserError(f"cannot read reference lists {path}: {exc}") from None
    retriever = RelatedWork(index, graph=graph)
    retriever.entities  # load (or extract, once) before timing anything

    for truth_path, truth in read:
        for problem in truth.problems:
            print(f"peerlint: warning: {problem}", file=sys.stderr)
        result = evaluate(retriever, truth, rows, cutoffs, args.limit, adapter=_adapter(args.adapter, index))
        result["ground_truth"] = {"path": str(truth_path), "problems": truth.problems,
                                  **({"projects": projects} if projects else {})}
        result["index"] = {"path": str(index.root), "build": index.build.name, "papers": len(index),
                           "model": index.manifest.model_id, "corpus": corpus_note,
                           "query_embedding": args.query_embedding}
        result["cocitation_graph"] = retriever.graph_source()
        print_table(_table(result, cutoffs), ["row", *(f"R@{k}" for k in cutoffs), "MRR", f"gain@{cutoffs[-1]}",
                                              f"R@{cutoffs[-1]} SciPIP-credit", "ms p50"],
                    title=f"{truth.name}: {result['counts']['scored']} queries scored of {result['counts']['queries']}; "
                          f"{len(index):,} papers ({corpus_note or 'the whole corpus'}); "
                          f"co-citation graph: {result['cocitation_graph']}")
        c = result["counts"]
        print(f"cited ids over all queries: {c['cited']} ({c['cited_in_index']} in the index, {c['cited_missing']} not: "
              f"{c['missing_ids']} distinct ids); skipped: {c['empty_text']} empty texts, "
              f"{c['no_cited_in_index']} queries citing nothing in the index\n"
              f"R@{cutoffs[-1]} SciPIP-credit: SciPIP's protocol, a near-duplicate (cosine >= "
              f"{result['config']['duplicate_similarity']}) of a cited paper counts as found; "
              f"* = the default first stage (hybrid-{DEFAULT_FUSION}, lexical weight {LEXICAL_WEIGHT})")
        path = write_result(args.out, f"related-{truth.name}", result)
        print(f"results: {path}")
        if args.precision and "context" in truth.name:
            _precision(retriever, truth, args, result, read)
    return 0


def _precision(retriever, truth, args, result: dict, read) -> None:
    """The threshold sweep of `--precision` (see precision.py), its table and its own JSON. The
    paper-level truth of the same run, if any, gives each citing paper's whole reference list."""
    by_title = _titles(retriever.index)
    paper_cited = {q.id: resolve_cited(q.cited, retriever.index, by_title)[0]
                   for _, other in read if other is not truth for q in other.queries}
    suggestions, wanted = precision.collect(retriever, truth, resolve_cited, by_title, paper_cited, args.limit)
    cal = precision.calibrate(suggestions, wanted)
    print_table(precision.table(cal), precision.HEADERS,
                title=f"{truth.name}: the editor's suggestions by depth and cosine threshold; P = the citing paper "
                      f"cites it, strict = the context does; * = chosen on dev: the most right suggestions with "
                      f"P's 90% lower bound >= {cal.target} ({cal.contexts['dev']} dev / {cal.contexts['test']} test contexts)")
    settings = Settings()
    out = {**cal.to_json(), "index": result["index"], "ground_truth": result["ground_truth"],
           "current_default": {"k": settings.related_work_k, "threshold": settings.related_work_min_similarity}}
    print(f"results: {write_result(args.out, f'related-precision-{truth.name}', out)}")


def _rows(spec: str, weights: str = "", lexical_only: bool = False) -> list[Row]:
    if lexical_only:
        return [FIRST[1]]
    try:
        sweep = [float(w) for w in weights.split(",") if w.strip()]
    except ValueError:
        raise UserError(f"--weights expects numbers separated by commas, got {weights!r}") from None
    extra = [Row(f"hybrid-weighted w={w:g}", mode="hybrid", fusion="weighted", weight=w, against="dense")
             for w in sweep if w != LEXICAL_WEIGHT]
    if spec.strip() == "all":
        return list(ROWS) + extra
    wanted = {s.strip() for s in spec.split(",") if s.strip()}
    unknown = wanted - {"first", "adapter", "semantic", "entities", "cocitation", "clustering", "minus", "hybrid"}
    if unknown:
        raise UserError(f"--stages: unknown {', '.join(sorted(unknown))}; use first, adapter, semantic, entities, "
                        "cocitation, clustering, minus, hybrid or all")
    cumulative = [r for r in SEC_DENSE[:4] if r.stages[-1] in wanted or (r.stages == ("semantic",) and "semantic" in wanted)]
    return ((list(FIRST) + extra if "first" in wanted else []) + (list(ADAPTED) if "adapter" in wanted else []) + cumulative
            + (list(SEC_DENSE[4:]) if "minus" in wanted else []) + ([SEC_HYBRID] if "hybrid" in wanted else []))


def _from_latex(args):
    """Cite recovery (`cite_recovery.py`): the truth made from the projects, the index it is made
    against (--index, else the default index), and the reference lists for co-citation."""
    try:
        index = open_index(args.index or default_index_path())
    except IndexError_ as exc:
        raise UserError(str(exc)) from None
    truth, projects = truth_from_latex(list(args.from_latex), index)
    path = related_truth.write_jsonl(
        ({"id": q.id, "paper": q.paper, "text": q.text, "cited": list(q.cited)} for q in truth.queries),
        cache_root() / "related-truth" / "cite-recovery.jsonl")
    for p in projects:
        print(f"cite recovery: {p.name}: {p.paragraphs_citing} paragraphs cite {p.citations} works, {p.in_bib} in "
              f"its .bib, {p.in_index} in the index", file=sys.stderr)
    return [(path, truth)], index, "", list(args.references), [p.to_json() for p in projects]


def _inputs(args, acm: Path) -> tuple[list[Path], list[Path] | None, list[Path]]:
    """Ground-truth files, corpus files and reference-list files, ACM-CR's unless given."""

    if args.truth:
        missing = [str(p) for p in args.truth if not p.is_file()]
        if missing:
            raise UserError(f"no such ground truth: {', '.join(missing)}")
        if args.index is None and args.corpus is None:
            raise UserError("with --truth, say what to search: --index DIR or --corpus FILE…")
        return list(args.truth), args.corpus, list(args.references)
    try:
        paper, context, _ = related_truth.write_acm_truths(cache_root() / "related-truth", acm)
    except (ValueError, OSError) as exc:
        raise UserError(str(exc)) from None
    print(f"ground truths: {paper}, {context}", file=sys.stderr)
    return [paper, context], args.corpus or [acm / "corpus.jsonl.gz"], list(args.references) or [acm / "citing.jsonl"]


def _index(args, corpus: list[Path] | None, cited: set[str]):
    """The index to search and a note on what corpus it holds ("" for the corpus as given)."""
    if args.index is not None and corpus is None:
        try:
            return open_index(args.index), ""
        except IndexError_ as exc:
            raise UserError(str(exc)) from None

    try:
        papers = load_papers(corpus, warn=lambda m: print(f"peerlint: warning: {m}", file=sys.stderr))
    except CorpusError as exc:
        raise UserError(str(exc)) from None
    note, root, embedder = "", args.index, None
    if args.sample:
        papers = sub_corpus(papers, cited, args.sample)
        held = sum(p.id in cited for p in papers)
        note = (f"sub-corpus: the {held:,} cited papers the corpus holds + {len(papers) - held:,} random others "
                f"(seed {SAMPLE_SEED})")
        root = root or default_bench_index(corpus).with_name(default_bench_index(corpus).name + f"-sample{args.sample}")
    if args.lexical_only:
        embedder = PlaceholderEmbedder()
        note = (note + "; " if note else "") + "placeholder vectors: only the lexical row is meaningful"
        root = root or default_bench_index(corpus).with_name(default_bench_index(corpus).name + "-lexical")
    return ensure_index(papers, corpus, root, label="bench related", embedder=embedder), note


def sub_corpus(papers, keep: set[str], size: int, seed: int = SAMPLE_SEED) -> list:
    """Every paper whose id is in `keep` plus a fixed random sample of the others, `size` papers in all
    (corpus order kept): a corpus a 2-core machine embeds in minutes, where the whole one takes hours."""
    import random

    kept = [i for i, p in enumerate(papers) if p.id in keep]
    others = [i for i, p in enumerate(papers) if p.id not in keep]
    chosen = set(kept) | set(random.Random(seed).sample(others, max(0, min(len(others), size - len(kept)))))
    return [p for i, p in enumerate(papers) if i in chosen]


def _adapter(path: Path | None, index):
    """The query adapter of the '+adapter' rows: `path`'s, else the one shipped for the index's model, or None."""

    if path is not None and not path.is_file():
        raise UserError(f"no such query adapter: {path}")
    return QueryAdapter.load(index.manifest.model_id, path)


def evaluate(retriever, truth, rows, cutoffs=CUTOFFS, limit: int | None = None, adapter=None) -> dict:
    """Recall@k and MRR of every row over the truth's queries, with counts of what could not be scored.
    `adapter` moves the query vectors of the rows marked `adapter` (without one they are not run)."""
    index = retriever.index
    by_title = _titles(index)
    queries = truth.queries[:limit] if limit else truth.queries
    counts = {"queries": len(queries), "scored": 0, "empty_text": 0, "no_cited_in_index": 0,
              "cited": 0, "cited_in_index": 0, "cited_missing": 0, "cited_by_title": 0}
    missing: set[str] = set()
    per_row = {r.label: {k: [] for k in cutoffs} for r in rows}
    reciprocal = {r.label: [] for r in rows}
    latency = {r.label: [] for r in rows}
    credited = {r.label: [] for r in rows}  # SciPIP's protocol: a near-duplicate of a cited paper counts
    configs = {r.label: SECConfig(first_stage=r.mode, lexical_weight=r.weight).only(r.stages or ("semantic",))
               for r in rows}
    notes = {r.label: ("n/a: no reference lists for co-citation" if "cocitation" in r.stages and not len(retriever.graph)
                       else "n/a: the index has no BM25 table: rebuild it" if r.mode != "dense" and not index.has_lexical
                       else f"n/a: no query adapter for {index.manifest.model_id}" if r.adapter and adapter is None
                       else "") for r in rows}
    depth = max(cutoffs)
    for q in queries:
        counts["cited"] += len(q.cited)
        wanted, absent, titled = resolve_cited(q.cited, index, by_title)
        missing.update(absent)
        counts["cited_missing"] += len(absent)
        counts["cited_by_title"] += titled
        counts["cited_in_index"] += len(wanted)
        if not q.text.strip():
            counts["empty_text"] += 1
            continue
        if not wanted:
            counts["no_cited_in_index"] += 1
            continue
        counts["scored"] += 1
        flt = SearchFilter(year_max=q.year, exclude_ids=frozenset({q.paper, q.id}))
        plain = index.embed([q.text])[0]
        for row in rows:
            if notes[row.label]:
                continue
            t0 = time.perf_counter()
            vector = adapter.apply(plain) if row.adapter else plain
            if row.stages:
                hits = retriever.search_vector(vector, q.text, depth, flt, exclude_citers={q.paper},
                                               config=configs[row.label])
            else:
                hits = hybrid.search(index, vector, q.text, depth, flt, row.mode, hybrid.Fusion(row.fusion, row.weight))
            latency[row.label].append(time.perf_counter() - t0)
            ids = [h.paper.id for h in hits]
            for k in cutoffs:
                per_row[row.label][k].append(len(wanted & set(ids[:k])) / len(wanted))
            reciprocal[row.label].append(next((1.0 / rank for rank, i in enumerate(ids, 1) if i in wanted), 0.0))
            credited[row.label].append(_cluster_credit(retriever, sorted(wanted), ids, configs[row.label]))
    table = []
    recall_of: dict[str, dict[str, float | None]] = {}
    previous = None  # the last cumulative SEC row that ran: what the next one adds a stage to
    for row in rows:
        skipped = bool(notes[row.label])
        recall = {str(k): (None if skipped or not per_row[row.label][k] else
                           round(statistics.fmean(per_row[row.label][k]), 4)) for k in cutoffs}
        recall_of[row.label] = recall
        minus = row.label.startswith("SEC -")  # the stage's gain: full SEC minus this row
        cumulative = bool(row.stages) and not row.against
        base = recall_of.get(row.against) if row.against else previous if cumulative else None
        gain = {k: (round((base[k] - v) if minus else (v - base[k]), 4) if v is not None and base and base[k] is not None
                    else None) for k, v in recall.items()}
        if cumulative and not skipped:
            previous = recall
        ms = sorted(latency[row.label])
        table.append({"row": row.label, "stages": list(row.stages),
                      "first_stage": {"mode": row.mode, "fusion": row.fusion if row.mode == "hybrid" else None,
                                      "lexical_weight": row.weight if row.mode == "hybrid" else None},
                      "default": row.default, "product": FIRST_STAGE_USE if row.default else row.product,
                      "recall": recall,
                      "mrr": round(statistics.fmean(reciprocal[row.label]), 4) if reciprocal[row.label] else None,
                      f"recall_at_{depth}_cluster_credit": round(statistics.fmean(credited[row.label]), 4)
                      if credited[row.label] else None,
                      "gain": gain if base is not None and not skipped else None,
                      "gain_of": ("" if base is None else f"{row.against}: full SEC minus this row" if minus
                                  else f"this row minus {row.against}" if row.against else "this row minus the row above"),
                      "note": notes[row.label],
                      "ms_per_query": {"median": round(1000 * statistics.median(ms), 1) if ms else None,
                                       "p95": round(1000 * ms[int(0.95 * (len(ms) - 1))], 1) if ms else None,
                                       "p99": round(1000 * ms[int(0.99 * (len(ms) - 1))], 1) if ms else None}})
    counts["missing_ids"] = len(missing)
    return {"rows": table, "counts": counts, "cutoffs": list(cutoffs),
            "config": {k: v for k, v in SECConfig().__dict__.items()},
            "missing_examples": sorted(missing)[:20]}


def resolve_cited(refs, index, by_title: dict[str, str]) -> tuple[set[str], list[str], int]:
    """The index ids of a query's cited works (by id, else by normalised title), the refs the index
    lacks, and how many were found by title."""
    wanted: set[str] = set()
    absent: list[str] = []
    titled = 0
    for ref in refs:
        if ref in index.id_to_idx:
            wanted.add(ref)
        elif normalise_title(ref) in by_title:
            wanted.add(by_title[normalise_title(ref)])
            titled += 1
        else:
            absent.append(ref)
    return wanted, absent, titled


def _cluster_credit(retriever, wanted: list[str], ids: list[str], cfg) -> float:
    """Recall as SciPIP scores it (Section 4.4): a cited paper is found when a retrieved paper is
    it or one of its near-duplicates (cosine >= the clustering threshold)."""
    index = retriever.index
    if not ids:
        return 0.0
    cited = retriever.paper_vectors([index.id_to_idx[w] for w in wanted])
    got = retriever.paper_vectors([index.id_to_idx[i] for i in ids])
    return float(((cited @ got.T) >= cfg.duplicate_similarity).any(axis=1).mean())


def _titles(index) -> dict[str, str]:
    import sqlite3


    db = sqlite3.connect(f"file:{index.build / 'meta.sqlite'}?mode=ro", uri=True)
    try:
        return {normalise_title(t): pid for pid, t in db.execute("SELECT id, title FROM papers") if t}
    finally:
        db.close()


def _table(result: dict, cutoffs) -> list[list]:
    out = []
    last = str(cutoffs[-1])
    for row in result["rows"]:
        label = row["row"] + (" *" if row["default"] else "")
        if row["note"]:
            out.append([label, *["n/a"] * len(cutoffs), "n/a", "n/a", "n/a", None])
            continue
        gain = row["gain"][last] if row["gain"] else None
        out.append([label, *(row["recall"][str(k)] for k in cutoffs), row["mrr"], gain,
                    row[f"recall_at_{last}_cluster_credit"], row["ms_per_query"]["median"]])
    return out
