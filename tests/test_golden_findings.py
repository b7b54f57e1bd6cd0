"""Behaviour held still: `peerlint check --json` finds the same things on `examples/` and on every
paper of tests/data/real/ as it did when tests/data/golden/findings.json was recorded.

A refactoring must not change a finding's code, place or message. The index is frozen too
(tests/data/golden/papers.jsonl.xz: 347 shipped abstracts, the 119 the findings cite plus every
tenth of the test corpus), so that a new shipped corpus does not move the answers. The settings
are the defaults (the `prior-work` analyzer, the fast tier) with `publishedBefore: ""`, so the
draft-date guess does not take part, no section summaries and no revision verdicts (`--rev ''`):
no LLM runs. About two minutes on two cores.

An intended change of behaviour re-records the file:
`PEERLINT_GOLDEN_WRITE=1 python -m pytest tests/test_golden_findings.py`, and says why in its commit.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
GOLDEN = REPO / "tests" / "data" / "golden"
SETTINGS = {"publishedBefore": "", "sectionSummaries": False}


def projects() -> list[Path]:
    return [REPO / "examples" / "draft.tex"] + sorted(p for p in (REPO / "tests" / "data" / "real").iterdir()
                                                    if p.is_dir())


@pytest.fixture(scope="module")
def golden_index() -> Path:
    from peerlint.index.build import build_index
    from peerlint.locations import cache_root
    from peerlint.index.ingest.load import load_papers

    root = cache_root() / "golden-index"
    build_index(load_papers([GOLDEN / "papers.jsonl.xz"], warn=lambda m: None), root,
                sources=["tests/data/golden/papers.jsonl.xz"], show_progress=False)
    return root


def findings(project: Path, index: Path, settings: Path) -> list[dict]:
    """What `peerlint check --json` prints for `project`: each finding's code, place and message."""
    from peerlint.server.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["check", "--json", "--rev", "", "--index", str(index), "--settings", str(settings),
                     str(project)]) == 0
    return [{"file": str(Path(r["file"]).resolve().relative_to(REPO)), "line": r["line"], "col": r["col"],
             "code": r["code"], "message": r["message"]} for r in json.loads(out.getvalue()) if r["kind"] == "finding"]


def test_check_finds_what_it_found_before(golden_index, tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps(SETTINGS))
    now = {str(p.relative_to(REPO)): findings(p, golden_index, settings) for p in projects()}
    path = GOLDEN / "findings.json"
    if os.environ.get("PEERLINT_GOLDEN_WRITE"):
        path.write_text(json.dumps(now, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    before = json.loads(path.read_text(encoding="utf-8"))
    assert sum(map(len, before.values())) >= 20, "the golden file holds real findings"
    assert sorted(now) == sorted(before)
    changed = {name: {"before": before[name], "now": now[name]} for name in before if before[name] != now[name]}
    assert changed == {}
