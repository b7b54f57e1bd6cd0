"""`peerlint bench embedders --train-adapter`: train MiniLM's query adapter on shipped data, measure it held out.

Trained on (all from what ships, none from a held-out split):
- title -> abstract of `--adapter-papers` papers of the shipped proceedings' venues *other than*
  HELD_APART (NeurIPS, ICML, AISTATS, COLT, ICLR), abstracts embedded without their titles;
- keywords -> abstract of those papers that list keywords (ICLR);
- ACM-CR *dev* citing papers (`split_of`): each citing paragraph -> each paper it cites, and each
  citing paper's title + abstract -> each paper it cites, the cited papers' vectors being the index's
  first chunk (what search compares against), each sampled `--adapter-acm-weight` times as often as
  a title pair (0.2: chosen on held-in validation; at 1 the 401 pairs are memorised).
A tenth of the title pairs is kept apart as held-in validation (same venues, unseen papers).

Measured in the same run, MiniLM against MiniLM + adapter (only queries move):
- title -> abstract on HELD_APART venues (R@1, MRR, R@10), which the adapter never saw;
- ACM-CR dense and hybrid R@10..50 and MRR (`benchmarks/related`) over the `--adapter-sample`
  sub-corpus, dev and *test* citing papers apart (test: never trained or tuned on);
- the editor's operating point (`precision.py`): threshold chosen on dev contexts, precision and
  recall on test ones, each embedding its own threshold.
Vectors of texts embedded here are cached (`<cache>/bench/adapter-vectors.sqlite`), so a rerun
embeds nothing again.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ...errors import UserError
from ...hashing import text_hash
from ...index.embedding.adapter import TrainConfig, adapter_path, info_nce, train
from ...index.embedding.cache import EmbeddingCache
from ...index.embedding.embedder import Embedder
from ...locations import cache_root
from ...index.ingest.load import CorpusError, load_papers
from ...retrieval.related_work import CitationGraph, RelatedWork
from ..harness.corpus_index import default_bench_index, ensure_index
from ..related import precision
from ..related.bench import sub_corpus, ADAPTED, FIRST, _titles, evaluate, resolve_cited
from ..related.truth import acm_truths, split_of, Truth, read_truth, write_acm_truths, ACM_DIR
from .pairs import HELD_APART, score_pairs

TRAIN_SEED = 1


def _log(message: str) -> None:
    print(f"bench embedders --train-adapter: {message}", file=sys.stderr, flush=True)


class CachedEmbedder:
    """The ONNX route of MiniLM (the same vectors as the index's torch route) behind a vector cache."""

    def __init__(self, path: Path):
        self.embedder = Embedder("onnx")
        self.model = self.embedder.model_id
        self.cache = EmbeddingCache(path)
        self.embedded = 0

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        hashes = [text_hash(t) for t in texts]
        have = self.cache.get_vectors(self.model, hashes)
        todo = list(dict.fromkeys(h for h in hashes if h not in have))
        if todo:
            text_of = dict(zip(hashes, texts))
            _log(f"embedding {len(todo)} texts (cached: {len(have)})")
            fresh = self.embedder.encode([text_of[h] for h in todo])
            new = dict(zip(todo, fresh))
            self.cache.put_vectors(self.model, new)
            have.update({h: v.astype(np.float16).astype(np.float32) for h, v in new.items()})
            self.embedded += len(todo)
        return np.stack([have[h] for h in hashes]) if hashes else np.zeros((0, 384), dtype=np.float32)


def proceedings_pairs(papers, held_apart: Sequence[str], size: int) -> tuple[list[str], list[str], list[str]]:
    """(query text, doc text, doc key) from papers of venues not held apart: title -> abstract for a
    fixed sample of `size`, and keywords -> abstract for those of them that list keywords."""
    apart = {v.lower() for v in held_apart}
    pool = [p for p in papers if p.venue.lower() not in apart and p.title and len(p.abstract) > 200]
    chosen = random.Random(TRAIN_SEED).sample(pool, min(size, len(pool)))
    pairs = [(p.title, p.abstract, p.id) for p in chosen]
    pairs += [(", ".join(p.keywords), p.abstract, p.id) for p in chosen if p.keywords]
    return [q for q, _, _ in pairs], [d for _, d, _ in pairs], [k for _, _, k in pairs]


def acm_rows(acm_dir: Path) -> tuple[list[dict], list[dict]]:
    try:
        paper_rows, context_rows, _ = acm_truths(acm_dir)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    return paper_rows, context_rows


def acm_dev_pairs(index, paper_rows: list[dict], context_rows: list[dict]) -> tuple[list[str], np.ndarray, list[str]]:
    """(query text, cited paper's first-chunk vector from the index, cited id) for dev citing papers only."""

    texts, rows, keys = [], [], []
    for r in paper_rows + context_rows:
        if split_of(r["paper"]) != "dev":
            continue
        for cited in r["cited"]:
            i = index.id_to_idx.get(cited)
            if i is not None:
                texts.append(r["text"])
                rows.append(int(index.chunk_ptr[i]))
                keys.append(cited)
    return texts, np.asarray(index.vectors[np.asarray(rows, dtype=np.int64)], dtype=np.float32), keys


def acm_index(acm_dir: Path, sample: int, paper_rows: list[dict], context_rows: list[dict]):
    """The sub-corpus index `peerlint bench related --sample N` searches (reused, built once if missing)."""

    corpus = [acm_dir / "corpus.jsonl.gz"]
    try:
        papers = load_papers(corpus, warn=lambda m: None)
    except CorpusError as exc:
        raise UserError(str(exc)) from None
    cited = {c for r in paper_rows + context_rows for c in r["cited"]}
    papers = sub_corpus(papers, cited, sample)
    base = default_bench_index(corpus)
    return ensure_index(papers, corpus, base.with_name(base.name + f"-sample{sample}"), label="bench embedders")


def acm_measure(index, adapter, acm_dir: Path) -> dict[str, Any]:
    """Dense and hybrid rows with and without the adapter on dev and test citing papers apart, and the
    editor's operating point (chosen on dev, read on test) with and without it."""

    paper_path, context_path, _ = write_acm_truths(cache_root() / "related-truth", acm_dir)
    rows = [FIRST[0], ADAPTED[0], FIRST[3], ADAPTED[1]]
    graph = CitationGraph.from_index(index).merged(CitationGraph.from_file(acm_dir / "citing.jsonl"))
    retriever = RelatedWork(index, graph=graph)
    out: dict[str, Any] = {}
    truths = {}
    for path in (paper_path, context_path):
        truth = read_truth(path)
        truths[truth.name] = truth
        for split in ("dev", "test"):
            part = Truth(truth.name, [q for q in truth.queries if split_of(q.paper) == split])
            result = evaluate(retriever, part, rows, adapter=adapter)
            out[f"{truth.name}/{split}"] = {"counts": result["counts"], "rows": result["rows"]}
    by_title = _titles(index)
    paper_truth, context_truth = truths["acm-cr-paper"], truths["acm-cr-context"]
    paper_cited = {q.id: resolve_cited(q.cited, index, by_title)[0] for q in paper_truth.queries}
    for label, a in (("minilm", None), ("minilm+adapter", adapter)):
        suggestions, wanted = precision.collect(retriever, context_truth, resolve_cited, by_title, paper_cited,
                                                adapter=a)
        out[f"precision/{label}"] = precision.calibrate(suggestions, wanted).to_json()
    return out


def run_adapter(args, papers, titles: list[str], abstracts: list[str]) -> dict[str, Any]:
    """Train, save and measure the adapter (see the module docstring); returns the JSON section."""

    started = time.perf_counter()
    embed = CachedEmbedder(cache_root() / "bench" / "adapter-vectors.sqlite")
    apart = [v for v in args.venues.split(",") if v]
    missing = {v.upper() for v in HELD_APART} - {v.upper() for v in apart}
    if missing:
        _log(f"warning: the adapter trains on venues outside --venues ({', '.join(sorted(missing))} included)")
    q_text, d_text, keys = proceedings_pairs(papers, apart, args.adapter_papers)
    q, d = embed(q_text), embed(d_text)
    order = np.random.default_rng(TRAIN_SEED).permutation(len(q))
    val = order[: len(q) // 10]
    fit = order[len(q) // 10 :]
    paper_rows, context_rows = acm_rows(ACM_DIR)
    index = acm_index(ACM_DIR, args.adapter_sample, paper_rows, context_rows) if args.adapter_sample else None
    sources = {"proceedings title/keywords -> abstract": len(fit)}
    tq, td, tk = q[fit], d[fit], [keys[i] for i in fit]
    weights = np.ones(len(fit))
    if index is not None:
        a_text, a_docs, a_keys = acm_dev_pairs(index, paper_rows, context_rows)
        if a_text and args.adapter_acm_weight > 0:
            sources["acm-cr dev citing text -> cited paper"] = len(a_text)
            tq, td, tk = np.vstack([tq, embed(a_text)]), np.vstack([td, a_docs]), tk + [f"acm:{k}" for k in a_keys]
            weights = np.concatenate([weights, np.full(len(a_text), args.adapter_acm_weight)])
    config = TrainConfig(rank=args.adapter_rank, epochs=args.adapter_epochs)
    note = (f"trained by `peerlint bench embedders --train-adapter` on {', '.join(f'{n} {s}' for s, n in sources.items())}; "
            f"venues held apart: {','.join(apart)}")
    t0 = time.process_time()
    adapter = train(tq, td, tk, embed.model, config, weights=weights, note=note)
    train_cpu = time.process_time() - t0
    identity_loss = info_nce(adapter.__class__.identity(embed.model, q.shape[1], config.rank), q[val], d[val],
                             [keys[i] for i in val])
    out_path = args.adapter_out or (cache_root() / "adapters" / adapter_path(embed.model).name)
    adapter.save(out_path)
    _log(f"trained in {train_cpu:.1f} CPU-s on {sources}; saved {out_path} ({out_path.stat().st_size / 1e3:.0f} kB)")
    hq, hd = embed(titles), embed(abstracts)
    result: dict[str, Any] = {
        "path": str(out_path), "bytes": out_path.stat().st_size, "model": embed.model, "config": config.__dict__,
        "trained_on": sources, "held_apart_venues": apart, "train_cpu_seconds": round(train_cpu, 1),
        "held_in_validation": {"pairs": len(val), "minilm": {**score_pairs(q[val], d[val]), "loss": round(identity_loss, 4)},
                               "minilm+adapter": {**score_pairs(adapter.apply(q[val]), d[val]),
                                                  "loss": round(info_nce(adapter, q[val], d[val], [keys[i] for i in val]), 4)}},
        "title_to_abstract_held_apart": {"minilm": score_pairs(hq, hd), "minilm+adapter": score_pairs(adapter.apply(hq), hd)},
    }
    _log(f"held-apart title->abstract {result['title_to_abstract_held_apart']}")
    if index is not None:
        result["acm"] = {"index": str(index.root), "papers": len(index), **acm_measure(index, adapter, ACM_DIR)}
    result["embedded_texts"] = embed.embedded
    result["seconds"] = round(time.perf_counter() - started, 1)
    return result


def table(result: dict[str, Any]) -> tuple[list[list], list[str]]:
    """One row per (measure, embedder): what docs/decisions.md quotes."""
    rows = []
    for label, key in (("title->abstract held-in val", "held_in_validation"),
                       ("title->abstract held apart", "title_to_abstract_held_apart")):
        for name in ("minilm", "minilm+adapter"):
            scores = result[key][name]
            rows.append([label, name, scores["r_at_1"], scores["mrr"], scores["r_at_10"], None])
    for key, block in (result.get("acm") or {}).items():
        if "/" not in key or key.startswith("precision/"):
            continue
        for row in block["rows"]:
            rows.append([f"{key} ({block['counts']['scored']} q)", row["row"], None, row["mrr"],
                         row["recall"].get("10"), row["recall"].get("50")])
    for name in ("minilm", "minilm+adapter"):
        cal = (result.get("acm") or {}).get(f"precision/{name}")
        if cal:
            point = cal["operating_point"].get("test") or {}
            chosen = cal["chosen"]
            rows.append([f"editor, chosen on dev {chosen and (chosen['k'], chosen['threshold'])}", name,
                         point.get("precision"), None, point.get("recall_strict"), point.get("shown")])
    return rows, ["measure", "embedder", "R@1 / test P", "MRR", "R@10 / test R", "R@50 / shown"]
