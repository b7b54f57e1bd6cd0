"""`peerlint bench lsp` end to end on a one-page draft: the real server over stdio, and the JSON keeps
the keys the issue names (today's per-row keys, plus hover p99, flatness and RSS with the LLM loaded)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_bench_lsp_one_page_and_a_one_file_paper(index_path, tmp_path):
    out = tmp_path / "results"
    done = subprocess.run([sys.executable, "-m", "peerlint", "bench", "lsp", "--index", str(index_path), "--pages", "1",
                           "--typing-seconds", "1.5", "--project", "examples/draft.tex", "--out", str(out)],
                          capture_output=True, text=True, timeout=900, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "with the LLM loaded MB" in done.stdout

    [path] = list(out.glob("lsp-*.json"))
    result = json.loads(path.read_text())
    assert result["query_embedding"] == "int8" and result["commit"]
    [row] = result["rows"]
    assert row["pages"] == 1
    assert 0 < row["first_screen_ms"] <= row["first_diagnostics_ms"]
    assert 0 < row["reanalyse_ms_median"] <= row["reanalyse_ms_max"]
    assert row["typing_edits"] > 20  # ~50 edits/s for 1.5 s, minus what awaiting hovers costs
    assert 0 < row["typing_hover_ms_p50"] <= row["typing_hover_ms_p99"] <= row["typing_hover_ms_max"] + 1e-9
    assert row["typing_hover_ms_p50_first_third"] > 0 and row["typing_hover_ms_p50_last_third"] > 0
    assert row["last_keystroke_to_diagnostics_ms"] >= 0
    # *Check novelty* loads the embedded LM: the server's memory after it is at least its memory before
    assert row["novelty_check_ms"] > 0
    assert 0 < row["novelty_check_cpu_s"] and result["model"] == "(default judge)"  # the judge it loaded, named
    assert 0 < row["peak_rss_mb"] <= row["peak_rss_llm_loaded_mb"]
    # a one-file paper opened as its own root: the whole is its last publication (this once waited forever)
    [project] = result["projects"]
    assert project["opened"] == "draft.tex"
    assert 0 < project["opened_file_diagnostics_ms"] <= project["whole_project_diagnostics_ms"]
