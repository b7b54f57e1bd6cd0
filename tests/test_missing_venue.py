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
