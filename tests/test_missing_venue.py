"""A target venue the index does not hold is said once (issue #32: an EMNLP draft silently lost its
venue-style percentile against an index without EMNLP papers)."""

from __future__ import annotations

import shutil

from conftest import REPO


def test_a_venue_the_index_lacks_is_said_once_and_one_it_holds_is_not(vector_index, tmp_path):
    from peerlint.analyzers.drafts.summaries import missing_venue
    from peerlint.analyzers.engine import Engine
    from peerlint.analyzers.project_check import check_file
    from peerlint.retrieval.retriever import Retriever
    from peerlint.settings import Settings

    real = REPO / "tests" / "data" / "real"
    shutil.copytree(real / "emnlp2020-spot-the-bot", tmp_path / "emnlp")
    shutil.copytree(real / "acl2019-highres", tmp_path / "acl")
    engine = Engine(Settings(), retriever=Retriever(vector_index))
    emnlp = check_file(tmp_path / "emnlp" / "emnlp2020.tex", engine)
    said = [w for w in emnlp.warnings if "holds no EMNLP papers" in w]
    assert len(said) == 1 and "ACL" in said[0] and "targetVenue" in said[0]
    assert emnlp.summaries and all(s.venue_style is None for s in emnlp.summaries)
    acl = check_file(tmp_path / "acl" / "acl2019.tex", engine)
    assert not [w for w in acl.warnings if "holds no" in w]
    assert any(s.venue_style is not None for s in acl.summaries)
    assert missing_venue(vector_index, "") == "" and missing_venue(vector_index, "acl") == ""


def test_a_workshop_the_index_holds_is_said_to_be_too_small_to_judge_style_against(tmp_path):
    """On the default corpus: SDP's 130 workshop papers are indexed but teach the venue head nothing, so
    an SDP target gets no style percentile; the user is told why and which venues do have one."""
    from pathlib import Path

    import pytest
    from peerlint.analyzers.drafts.summaries import missing_venue
    from peerlint.index.build import default_index_path
    from peerlint.index.store import open_index

    root = Path(default_index_path())
    if not (root / "CURRENT").exists():
        pytest.skip("the default index is not built here (make demo builds it)")
    index = open_index(root)
    said = missing_venue(index, "sdp")
    assert "too few SDP papers to learn its style from" in said and "NeurIPS" in said and "targetVenue" in said
    assert missing_venue(index, "neurips") == ""
    assert "holds no OSDI papers" in missing_venue(index, "OSDI")
