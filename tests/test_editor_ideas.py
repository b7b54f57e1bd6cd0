"""The editor side of issue 7: *Show related work* (SEC), *Check novelty* on a selection (NOVA),
and ranking a contributions list (Swiss tournament), called on the service as the server does."""

from pathlib import Path

import pytest

from peerlint.server.config import Settings
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
    assert all(set(p["found_by"]) <= {"semantic", "entities", "cocitation"} and p["found_by"] for p in papers)
    assert len({p["id"] for p in papers}) == len(papers)
    assert any("citation" in p["title"].lower() or "related work" in p["title"].lower() for p in papers)
