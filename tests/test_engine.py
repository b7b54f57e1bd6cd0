"""Engine behaviour without a server: caching by chunk text, isolation of failures, magic comments."""

from __future__ import annotations

from pathlib import Path

import pytest

from peerlint.analyzers.engine import Engine
from peerlint.latex.parse import parse_document
from peerlint.types import Judgment
from peerlint.settings import Settings

from conftest import EXAMPLES

DOC = r"""\documentclass{article}
\begin{document}
\section{Introduction}
First paragraph talks about retrieval of scientific abstracts with sentence embeddings.

Second paragraph explains why reviewers care about the novelty of a submitted paper.

Third paragraph describes the evaluation on conference proceedings from several venues.
\end{document}
"""


class Counting:
    """Flags every chunk; records which chunk texts it was asked about."""

    name = "counting"
    tier = "fast"
    codes = ("close-prior-work",)

    def __init__(self, fail_on: str | None = None):
        self.seen: list[str] = []
        self.fail_on = fail_on

    def analyze(self, chunks, ctx):
        out = []
        for c in chunks:
            if self.fail_on and self.fail_on in c.text:
                raise RuntimeError("analyzer bug")
            self.seen.append(c.text)
            out.append(Judgment(c, "close-prior-work", f"seen: {c.text[:20]}", 0.9, "warning", {"n": len(c.text)}))
        return out


def engine_with(analyzer, tmp_path: Path | None = None) -> Engine:
    settings = Settings(analyzers=("prior-work",))
    return Engine(settings, cache_path=(tmp_path / "j.sqlite") if tmp_path else None,
                  analyzers={"prior-work": lambda: analyzer})


def test_one_word_edit_reanalyses_exactly_one_chunk():
    analyzer = Counting()
    engine = engine_with(analyzer)
    chunks = parse_document(DOC, "file:///d.tex")
    first = engine.run(chunks)
    assert first.analyzed["counting"] == len(chunks) >= 4
    edited = parse_document(DOC.replace("novelty", "originality"), "file:///d.tex")
    second = engine.run(edited)
    assert second.analyzed["counting"] == 1
    assert analyzer.seen[-1].startswith("Second paragraph") and "originality" in analyzer.seen[-1]
    assert len(second.judgments) == len(first.judgments)


def test_cached_judgments_follow_moved_text():
    engine = engine_with(Counting())
    engine.run(parse_document(DOC, "file:///d.tex"))
    moved = parse_document(DOC.replace("\\section{Introduction}\n", "\\section{Introduction}\n\n\n\n"), "file:///d.tex")
    report = engine.run(moved)
    assert report.analyzed["counting"] == 0
    third = next(j for j in report.judgments if j.chunk.text.startswith("Third"))
    assert third.chunk.range.start.line == 10  # the new position, not the cached one


def test_judgments_persist_across_restarts(tmp_path):
    chunks = parse_document(DOC, "file:///d.tex")
    engine_with(Counting(), tmp_path).run(chunks)
    fresh = Counting()
    report = engine_with(fresh, tmp_path).run(chunks)
    assert fresh.seen == [] and len(report.judgments) == len(chunks)


def test_a_failing_chunk_costs_only_itself():
    analyzer = Counting(fail_on="Second paragraph")
    engine = engine_with(analyzer)
    report = engine.run(parse_document(DOC, "file:///d.tex"))
    texts = [j.chunk.text for j in report.judgments]
    assert any(t.startswith("Third") for t in texts) and not any(t.startswith("Second") for t in texts)
    assert len(report.errors) == 1 and "line 6" in report.errors[0]
    analyzer.fail_on = None  # the failure was not cached: fixed code analyses the chunk again
    assert any(j.chunk.text.startswith("Second") for j in engine.run(parse_document(DOC, "file:///d.tex")).judgments)


def test_magic_comments_and_severity_off_hide_findings():
    doc = DOC.replace("Second paragraph", "% peerlint: disable-next-line=close-prior-work\nSecond paragraph")
    engine = engine_with(Counting())
    texts = [j.chunk.text for j in engine.run(parse_document(doc, "file:///d.tex")).judgments]
    assert not any(t.startswith("Second") for t in texts) and any(t.startswith("Third") for t in texts)
    engine.settings = Settings(analyzers=("prior-work",), severity={**Settings().severity, "close-prior-work": "off"})
    assert engine.run(parse_document(doc, "file:///d.tex")).judgments == []


def test_example_draft_parses_into_sections():
    chunks = parse_document((EXAMPLES / "draft.tex").read_text(), "file:///draft.tex")
    sections = {c.section for c in chunks}
    assert any("Related" in s for s in sections) and "Abstract" in sections
    assert all("\\cite" not in c.text and "$" not in c.text for c in chunks)
