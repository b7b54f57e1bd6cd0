"""`peerlint bench index --scale` end to end at a small N: what it reports, and that a rerun reuses the build."""

from __future__ import annotations

import json

from peerlint.index.store import current_build
from peerlint.server.cli import build_parser


def _run(tmp_path, out):
    from peerlint.benchmarks.index.bench import run

    args = build_parser().parse_args(["bench", "index", "--scale", "--synthetic", "3000", "--queries", "40",
                                      "--work", str(tmp_path / "work"), "--out", str(out)])
    assert run(args) == 0
    [path] = list(out.glob("bench-index-scale-*.json"))
    return json.loads(path.read_text())


def test_scale_bench_reports_the_targets_and_a_rerun_reuses_the_build(tmp_path, capsys):
    first = _run(tmp_path, tmp_path / "one")
    search = first["search"]
    assert search["papers"] == search["vectors"] == 3000 and search["queries"] == 40
    assert search["recall_at_10"] >= 0.95  # near-real vectors at 3k: the f16 graph with re-rank finds them
    assert [b["expansion_search"] for b in search["expansion_sweep"]] == [64, 128, 192, 256]
    assert search["lexical"]["p50_ms"] > 0 and 0 < search["peak_rss_mb"] < 4096
    assert first["append"]["appended"] == 2000 and first["append"]["after"]["papers"] == 5000
    assert "near_real" in first["dataset"]["vectors"]
    assert current_build(tmp_path / "work").name == first["append"]["build"]

    second = _run(tmp_path, tmp_path / "two")  # the append left CURRENT on the grown index: pointed back, not rebuilt
    assert second["build"] == first["build"]
    assert second["search"]["papers"] == 3000 and second["search"]["recall_at_10"] == search["recall_at_10"]
    assert "reusing the 3,000-paper index" in capsys.readouterr().err
