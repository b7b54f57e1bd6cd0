"""Load (issue 18, item 3f): 50 edits/s with a hover after every second edit, against the real
server: hovers stay fast, memory stays flat from the first seconds to the last, and the final
version's diagnostics equal a fresh check (nothing stale).  `peerlint bench robustness` runs the
same case for 60 s (benchmarks/robustness/load.py)."""

from __future__ import annotations

from peerlint.benchmarks.robustness.load import edit_load


def test_typing_with_hovers_stays_fast_flat_and_fresh(tmp_path, index_path):
    result = edit_load(tmp_path, index_path, seconds=8, rate=50, window=3)
    f = result.figures
    assert result.ok, result.detail
    assert f["edit_rate"] >= 30 and f["hovers"] >= 100, f  # the load really was applied
    assert f["hover_p99_ms"] < 1000, f
    assert f["rss_drift_mb"] < 100, f
