"""`peerlint bench index` end to end on a tiny configuration: the JSON has what the issue asks for."""

from __future__ import annotations

import json
import lzma

from peerlint.index.ingest.load import default_corpus_path
from peerlint.server.cli import build_parser


def test_bench_index_tiny(tmp_path, monkeypatch, capsys):
    from peerlint.benchmarks.index.bench import run

    corpus = tmp_path / "corpus.jsonl"
    with lzma.open(default_corpus_path(), "rt", encoding="utf-8") as src:
        corpus.write_text("".join(line for _, line in zip(range(100), src)))
    monkeypatch.setenv("PEERLINT_CACHE_DIR", str(tmp_path / "cache"))  # the kept corpus index goes here
    out = tmp_path / "results"
    args = build_parser().parse_args(["bench", "index", "--corpus", str(corpus), "--docs", "40", "--synthetic", "5000",
                                      "--queries", "50", "--routes", "torch,no-such-route", "--acm-sample", "0",
                                      "--out", str(out)])
    assert run(args) == 0

    [path] = list(out.glob("bench-index-*.json"))
    result = json.loads(path.read_text())
    assert {"command", "commit", "machine", "dataset", "baselines", "routes", "corpus_search", "synthetic",
            "peak_rss_mb"} <= set(result)
    assert result["dataset"]["corpus"] == [str(corpus)] and result["dataset"]["docs"] == 40
    assert result["machine"]["cpu_count"] >= 1 and result["commit"]
    assert result["baselines"]["loop"]["docs_per_s"] > 0 and result["baselines"]["batch32"]["docs_per_s"] > 0

    torch_route, missing = result["routes"]
    assert torch_route["route"] == "torch" and torch_route["available"]
    assert torch_route["ratio_vs_loop"] > 0 and torch_route["docs_per_s"] > 0 and torch_route["index_bytes"] > 0
    assert 0.5 <= torch_route["title_hit_at_10"] <= 1  # titles find their own paper among 40
    assert torch_route["overlap_at_10_vs_torch"] == 1.0
    assert torch_route["r50_loss_vs_torch"] is None and torch_route["acm"] is None  # --acm-sample 0
    assert isinstance(torch_route["meets_default_rule"], bool)
    assert torch_route["cold_query_seconds"] > 0 and torch_route["build_cpu_seconds"] > 0
    assert missing == {"route": "no-such-route", "available": False, "reason": missing["reason"]}
    assert "unknown embedding route" in missing["reason"]

    corpus_search = result["corpus_search"]
    assert corpus_search["papers"] == 100 and corpus_search["vectors"] >= 100
    assert 0 <= corpus_search["recall_at_10"] <= 1 and corpus_search["search"]["p50_ms"] > 0
    assert corpus_search["search"]["p99_ms"] >= corpus_search["search"]["p50_ms"]

    [synthetic] = result["synthetic"]  # --synthetic below 100k: measured once, at that size
    assert synthetic["vectors"] == 5000 and synthetic["hnsw_bytes"] > 0
    assert 0.9 <= synthetic["recall_at_10"] <= 1 and synthetic["search"]["p50_ms"] > 0
    assert result["peak_rss_mb"] > 0

    table = capsys.readouterr().out
    assert "build_index torch" in table and "unavailable" in table and "recall@10" in table and str(path) in table


def test_the_acm_check_scores_int8_stored_documents_beside_float_on_all_and_dev_queries():
    """The recall the shipped int8 vectors cost: documents quantised as the shipped file stores them,
    scored on the same queries; near-identical vectors keep their ranks, and dev counts only dev queries."""
    import numpy as np

    from peerlint.benchmarks.index.acm_recall import AcmQueries, recall_at_50, stored_as_int8
    from peerlint.benchmarks.related.truth import split_of

    rng = np.random.default_rng(7)
    docs = rng.standard_normal((400, 384)).astype(np.float32)
    docs /= np.linalg.norm(docs, axis=1, keepdims=True)
    stored = stored_as_int8(docs)
    assert stored.dtype == np.float32 and float(np.min((stored * docs).sum(1))) > 0.998
    coarse = stored_as_int8(docs, 15)  # the journals supplement's rows: 4 bits' worth, further from float
    assert 0.98 < float(np.min((coarse * docs).sum(1))) < float(np.min((stored * docs).sum(1)))
    citing = [f"paper-{i}" for i in range(40)]
    wanted = [{f"d{i}", f"d{i + 1}"} for i in range(40)]
    vectors = {f"doc {i}": docs[i] for i in range(400)}
    vectors |= {f"query {i}": docs[i] + docs[i + 1] for i in range(40)}  # close to the two papers it cites
    data = AcmQueries([f"d{i}" for i in range(400)], [f"doc {i}" for i in range(400)],
                      [f"query {i}" for i in range(40)], ["paper"] * 20 + ["context"] * 20, wanted, citing)
    result = recall_at_50(lambda texts: np.stack([vectors[t] / np.linalg.norm(vectors[t]) for t in texts]), data)
    storage = result["int8_storage"]
    assert result["paper"]["recall_at_50"] == storage["all"]["paper"]["recall_at_50"] == 1.0
    assert result["supplement_storage"]["levels"] == 15 and set(result["supplement_storage"]) == {"levels", "all", "dev"}
    assert storage["dev"]["paper"]["queries"] + storage["dev"]["context"]["queries"] == sum(
        split_of(p) == "dev" for p in citing) < 40
