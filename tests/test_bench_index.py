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
