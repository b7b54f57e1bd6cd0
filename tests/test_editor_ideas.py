"""The editor side of issue 7: *Show related work* (SEC), *Check novelty* on a selection (NOVA),
and ranking a contributions list (Swiss tournament), called on the service as the server does."""

from pathlib import Path

import pytest
from llm_fixtures import needs_model

from peerlint.settings import Settings
from peerlint.server.service import Service

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
DRAFT = EXAMPLES / "draft.tex"


@pytest.fixture()
def service(index_path, tmp_path):
    svc = Service(Settings(index_path=str(index_path), backend="embedded"), cache_dir=tmp_path / "cache")
    svc.analyze(DRAFT.as_uri())
    return svc


def _line(prefix: str) -> int:
    return next(i for i, l in enumerate(DRAFT.read_text().splitlines()) if l.startswith(prefix))


def test_show_related_work_uses_sec_and_says_which_stage_found_each_paper(service):
    chunk = service.chunk_at(DRAFT.as_uri(), _line("Citation recommenders use the local context"), 3)
    assert chunk is not None and chunk.section == "Related Work"
    papers = service.related(chunk, 10)
    assert 1 <= len(papers) <= 10
    assert all({"id", "title", "venue", "year", "similarity", "found_by"} <= set(p) for p in papers)
    first_stages = {"semantic", "lexical", "hybrid"}  # the first stage follows the searchMode setting (default hybrid)
    assert all(set(p["found_by"]) <= first_stages | {"entities", "cocitation"} and p["found_by"] for p in papers)
    assert any("hybrid" in p["found_by"] for p in papers)
    assert len({p["id"] for p in papers}) == len(papers)
    assert any("citation" in p["title"].lower() or "related work" in p["title"].lower() for p in papers)


@needs_model
def test_check_novelty_of_a_selection_adds_the_nova_verdict_with_its_papers(service):
    uri = DRAFT.as_uri()
    line = _line("Predicting the rating of a textual review")
    text = DRAFT.read_text().splitlines()
    result = service.check_novelty(uri, line, 0, (line + 1, len(text[line + 1])))
    assert result["ok"] is True
    nova = result["evidence"]["nova"]
    assert nova["verdict"] in {"novel", "not novel", "undetermined"}
    assert nova["papers"] and all({"title", "similarity", "status"} <= set(p) for p in nova["papers"])
    assert "NOVA check: " in result["message"]
    if nova["verdict"] == "not novel":
        assert nova["offending"] and nova["offending"][0]["title"] in result["message"]
    state = service.project_of(uri)
    [judgment] = [j for j in state.judgments[uri] if j.code == "novelty"]
    assert judgment.chunk.kind == "selection" and judgment.range is None  # lands on the selection itself
    assert (judgment.chunk.range.start.line, judgment.chunk.range.end.line) == (line, line + 1)


CONTRIBUTIONS = r"""\documentclass{article}
\begin{document}
\section{Introduction}
Our contributions are:
\begin{itemize}
  \item A dense retrieval model for scientific citation recommendation trained on citing sentences.
  \item A new benchmark of arXiv revision pairs annotated with edit intentions.
  \item A dense retrieval model for citation recommendation trained on citing sentences of papers.
  \item An analysis of reviewer ratings at ICLR.
\end{itemize}
Some closing prose that is not a list item at all.
\end{document}
"""


def test_rank_contributions_ranks_the_items_of_the_list_at_the_cursor(index_path, tmp_path):
    tex = tmp_path / "paper.tex"
    tex.write_text(CONTRIBUTIONS)
    svc = Service(Settings(index_path=str(index_path), backend="embedded"), cache_dir=tmp_path / "cache")
    uri = tex.as_uri()
    svc.analyze(uri)
    line = CONTRIBUTIONS.splitlines().index(next(l for l in CONTRIBUTIONS.splitlines() if "benchmark of arXiv" in l))
    calls = []
    result = svc.rank_contributions(uri, line, 10, progress=lambda done, total: calls.append((done, total)))
    assert result["ok"] is True
    ranked = result["ranking"]
    assert result["merged"] == 1 and len(ranked) == 3  # the two near-identical retrieval items are one idea
    assert ranked[0]["rank"] == 1 and [r["rank"] for r in ranked] == sorted(r["rank"] for r in ranked)
    assert calls and calls[-1][0] == calls[-1][1]  # progress reached its total
    assert all(r["range"]["start"]["line"] >= 5 for r in ranked)
    assert result["message"].startswith("Contributions ranked by ")
    outside = svc.rank_contributions(uri, CONTRIBUTIONS.splitlines().index("Some closing prose that is not a list item at all."), 3)
    assert outside["ok"] is False and "itemize" in outside["reason"]
