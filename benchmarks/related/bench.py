"""`peerlint bench related`: citation Recall@10..50 of SEC retrieval, one row per stage (SciPIP Table 5).

For every query of a ground truth (see `truth.py`: citing text -> the papers it cites), the
retriever returns 50 papers of the index, never the citing paper itself and, when the query has a
year, none published later. Recall@k is the share of the query's cited papers *that are in the
index* found among the first k, averaged over queries; cited ids the index lacks are counted and
reported, never scored. Rows: semantic only, then each stage added in turn (+entities,
+co-citation, +clustering, i.e. full SEC), and full SEC without each stage. Every row reports
its stage's gain: a cumulative row against the row above it, a SEC-minus row as full SEC minus
that row. Without --truth it builds the ACM-CR ground truths (paper and context level) from
../shared/data/acm-cr and runs both.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from ...errors import UserError

CUTOFFS = (10, 20, 30, 40, 50)
STAGES = ("semantic", "entities", "cocitation", "clustering")
ROWS = (  # (label, stages on)
    ("semantic-only", ("semantic",)),
    ("+entities", ("semantic", "entities")),
    ("+co-citation", ("semantic", "entities", "cocitation")),
    ("+clustering (SEC)", STAGES),
    ("SEC - entities", ("semantic", "cocitation", "clustering")),
    ("SEC - co-citation", ("semantic", "entities", "clustering")),
    ("SEC - clustering", ("semantic", "entities", "cocitation")),
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of this command (called while the CLI parser is built: keep imports light)."""
    parser.add_argument("--truth", nargs="+", type=Path, metavar="FILE",
                        help="ground-truth JSONL file(s): {id, text, year, cited: [ids or titles], paper?} "
                             "(default: the ACM-CR paper- and context-level truths, built from --acm)")
    parser.add_argument("--acm", type=Path, default=None, metavar="DIR",
                        help="ACM-CR directory with corpus.jsonl.gz and citing.jsonl (default: ../shared/data/acm-cr)")
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
                        help="rows to run: 'all', or a comma list naming the cumulative rows by the stage each adds "
                             "(semantic, entities, cocitation, clustering) and 'minus' for the SEC-minus-one rows")
    parser.add_argument("--k", default=",".join(map(str, CUTOFFS)), help="recall cutoffs (default: 10,20,30,40,50)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N queries of each ground truth")
    parser.add_argument("--out", type=Path, default=Path("results"), help="directory for the JSON results")


def run(args: argparse.Namespace) -> int:
    from . import truth as related_truth

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
    rows = _rows(args.stages)
    truths, corpus, references = _inputs(args, acm)
    index = _index(args, corpus)
    from ...analyzers.retrieval.related_work import CitationGraph, RelatedWork

    graph = CitationGraph.from_index(index)
    for path in references:
        try:
            graph = graph.merged(CitationGraph.from_file(path))
        except (OSError, ValueError) as exc:
            raise UserError(f"cannot read reference lists {path}: {exc}") from None
    retriever = RelatedWork(index, graph=graph)
    retriever.entities  # load (or extract, once) before timing anything
    from ..harness.results import print_table, write_result

    for truth_path in truths:
        try:
            truth = related_truth.read_truth(truth_path)
        except ValueError as exc:
            raise UserError(str(exc)) from None
        for problem in truth.problems:
            print(f"peerlint: warning: {problem}", file=sys.stderr)
        result = evaluate(retriever, truth, rows, cutoffs, args.limit)
        result["ground_truth"] = {"path": str(truth_path), "problems": truth.problems}
        result["index"] = {"path": str(index.root), "build": index.build.name, "papers": len(index)}
        result["cocitation_graph"] = retriever.graph_source()
        print_table(_table(result, cutoffs), ["row", *(f"R@{k}" for k in cutoffs), f"stage gain@{cutoffs[-1]}",
                                        f"R@{cutoffs[-1]} SciPIP-credit", "ms/query"],
                    title=f"{truth.name}: {result['counts']['scored']} queries scored of {result['counts']['queries']}; "
                          f"co-citation graph: {result['cocitation_graph']}")
        c = result["counts"]
        print(f"cited ids over all queries: {c['cited']} ({c['cited_in_index']} in the index, {c['cited_missing']} not: "
              f"{c['missing_ids']} distinct ids); skipped: {c['empty_text']} empty texts, "
              f"{c['no_cited_in_index']} queries citing nothing in the index\n"
              f"R@{cutoffs[-1]} SciPIP-credit: SciPIP's protocol, a near-duplicate (cosine >= "
              f"{result['config']['duplicate_similarity']}) of a cited paper counts as found")
        path = write_result(args.out, f"related-{truth.name}", result)
        print(f"results: {path}")
    return 0


def _rows(spec: str) -> list[tuple[str, tuple[str, ...]]]:
    if spec.strip() == "all":
        return list(ROWS)
    wanted = {s.strip() for s in spec.split(",") if s.strip()}
    unknown = wanted - {"semantic", "entities", "cocitation", "clustering", "minus"}
    if unknown:
        raise UserError(f"--stages: unknown {', '.join(sorted(unknown))}; use semantic, entities, cocitation, "
                        "clustering, minus or all")
    cumulative = [r for r in ROWS[:4] if r[1][-1] in wanted or (r[1] == ("semantic",) and "semantic" in wanted)]
    return cumulative + (list(ROWS[4:]) if "minus" in wanted else [])


def _inputs(args, acm: Path) -> tuple[list[Path], list[Path] | None, list[Path]]:
    """Ground-truth files, corpus files and reference-list files, ACM-CR's unless given."""
    from ...index.embedding.embedder import cache_root
    from . import truth as related_truth

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


def _index(args, corpus: list[Path] | None):
    from ...index.store import IndexError_, open_index

    if args.index is not None and corpus is None:
        try:
            return open_index(args.index)
        except IndexError_ as exc:
            raise UserError(str(exc)) from None
    from ...index.ingest.load import CorpusError, load_papers
    from ..harness.corpus_index import ensure_index

    try:
        papers = load_papers(corpus, warn=lambda m: print(f"peerlint: warning: {m}", file=sys.stderr))
    except CorpusError as exc:
        raise UserError(str(exc)) from None
    return ensure_index(papers, corpus, args.index, label="bench related")


def evaluate(retriever, truth, rows, cutoffs=CUTOFFS, limit: int | None = None) -> dict:
    """Recall@k of every row over the truth's queries, with counts of what could not be scored."""
    from ...analyzers.retrieval.related_work import SECConfig
    from ...index.papers import SearchFilter
    from ...analyzers.retrieval.bibliography import normalise_title

    index = retriever.index
    by_title = _titles(index)
    queries = truth.queries[:limit] if limit else truth.queries
    counts = {"queries": len(queries), "scored": 0, "empty_text": 0, "no_cited_in_index": 0,
              "cited": 0, "cited_in_index": 0, "cited_missing": 0, "cited_by_title": 0}
    missing: set[str] = set()
    per_row = {label: {k: [] for k in cutoffs} for label, _ in rows}
    latency = {label: [] for label, _ in rows}
    credited = {label: [] for label, _ in rows}  # SciPIP's protocol: a near-duplicate of a cited paper counts
    configs = {label: SECConfig().only(stages) for label, stages in rows}
    cocitation_off = not len(retriever.graph)
    depth = max(cutoffs)
    for q in queries:
        counts["cited"] += len(q.cited)
        wanted: set[str] = set()
        for ref in q.cited:
            if ref in index.id_to_idx:
                wanted.add(ref)
            elif normalise_title(ref) in by_title:
                wanted.add(by_title[normalise_title(ref)])
                counts["cited_by_title"] += 1
            else:
                missing.add(ref)
                counts["cited_missing"] += 1
        counts["cited_in_index"] += len(wanted)
        if not q.text.strip():
            counts["empty_text"] += 1
            continue
        if not wanted:
            counts["no_cited_in_index"] += 1
            continue
        counts["scored"] += 1
        flt = SearchFilter(year_max=q.year, exclude_ids=frozenset({q.paper, q.id}))
        vector = index.embed([q.text])[0]
        for label, stages in rows:
            if "cocitation" in stages and cocitation_off:
                continue
            t0 = time.perf_counter()
            hits = retriever.search_vector(vector, q.text, depth, flt, exclude_citers={q.paper}, config=configs[label])
            latency[label].append(time.perf_counter() - t0)
            ids = [h.paper.id for h in hits]
            for k in cutoffs:
                per_row[label][k].append(len(wanted & set(ids[:k])) / len(wanted))
            credited[label].append(_cluster_credit(retriever, sorted(wanted), ids, configs[label]))
    table = []
    recall_of: dict[tuple[str, ...], dict[str, float | None]] = {}
    previous = None  # the last cumulative row that ran: what the next one adds a stage to
    for label, stages in rows:
        skipped = "cocitation" in stages and cocitation_off
        recall = {str(k): (None if skipped or not per_row[label][k] else round(statistics.fmean(per_row[label][k]), 4))
                  for k in cutoffs}
        recall_of[tuple(stages)] = recall
        minus = label.startswith("SEC -")  # the stage's gain: full SEC minus this row
        base = recall_of.get(STAGES) if minus else previous
        gain = {k: (round((base[k] - v) if minus else (v - base[k]), 4) if v is not None and base and base[k] is not None
                    else None) for k, v in recall.items()}
        if not minus and not skipped:
            previous = recall
        ms = latency[label]
        table.append({"row": label, "stages": list(stages), "recall": recall,
                      f"recall_at_{depth}_cluster_credit": round(statistics.fmean(credited[label]), 4)
                      if credited[label] else None,
                      "gain": gain if base is not None and not skipped else None,
                      "gain_of": (f"{label[6:]}: full SEC minus this row" if minus else "this row minus the row above")
                      if base else "",
                      "note": "n/a: no reference lists for co-citation" if skipped else "",
                      "ms_per_query": {"median": round(1000 * statistics.median(ms), 1) if ms else None,
                                       "p95": round(1000 * sorted(ms)[int(0.95 * (len(ms) - 1))], 1) if ms else None}})
    counts["missing_ids"] = len(missing)
    return {"rows": table, "counts": counts, "cutoffs": list(cutoffs),
            "config": {k: v for k, v in SECConfig().__dict__.items()},
            "missing_examples": sorted(missing)[:20]}


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

    from ...analyzers.retrieval.bibliography import normalise_title

    db = sqlite3.connect(f"file:{index.build / 'meta.sqlite'}?mode=ro", uri=True)
    try:
        return {normalise_title(t): pid for pid, t in db.execute("SELECT id, title FROM papers") if t}
    finally:
        db.close()


def _table(result: dict, cutoffs) -> list[list]:
    out = []
    last = str(cutoffs[-1])
    for row in result["rows"]:
        if row["note"]:
            out.append([row["row"], *["n/a"] * len(cutoffs), "n/a", "n/a", None])
            continue
        gain = row["gain"][last] if row["gain"] else None
        out.append([row["row"], *(row["recall"][str(k)] for k in cutoffs), gain,
                    row[f"recall_at_{last}_cluster_credit"], row["ms_per_query"]["median"]])
    return out
