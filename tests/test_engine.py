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


class AsksTheLLM:
    """An on-demand analyzer whose every chunk costs one LLM call, counting how often it is asked."""

    name = "asks"
    tier = "on-demand"
    codes = ("novelty",)

    def __init__(self, fail: bool = False):
        self.asked = 0
        self.fail = fail

    def analyze(self, chunks, ctx):
        self.asked += 1
        if self.fail:
            raise RuntimeError("analyzer bug")
        return [Judgment(c, "novelty", ctx.llm.generate(c.text), 0.5, "off") for c in chunks]


class Echo:
    name, model = "echo", "echo-1"

    def generate(self, prompt, params=None):
        return prompt[:10]


def test_the_on_demand_tier_answers_fresh_and_lets_a_cancel_through_its_retry():
    from peerlint.analyzers.novelty.cancel import CheckCancelled

    analyzer = AsksTheLLM()
    engine = Engine(Settings(analyzers=("prior-work",)), llm=Echo(), analyzers={"asks": lambda: analyzer})
    [chunk] = parse_document(DOC, "file:///d.tex")[:1]
    assert engine.run([chunk], "fast").judgments == []  # not a tier the engine runs unasked
    found = engine.run([chunk], "on-demand", names=("asks",)).judgments
    assert [j.message for j in found] == [chunk.text[:10]]  # enabled or not; severity "off" is still answered
    engine.run([chunk], "on-demand", names=("asks",))
    assert analyzer.asked == 2  # never from the judgment cache: the analyzer keeps its own answers
    polls: list[int] = []
    cancelled_once_asked = lambda: bool(polls.append(1)) or len(polls) > 1  # noqa: E731 (true from the LLM call on)
    with pytest.raises(CheckCancelled):
        engine.run([chunk], "on-demand", is_cancelled=cancelled_once_asked, names=("asks",))
    assert analyzer.asked == 3  # the cancel ended the run: no retry asked the LLM again
    broken = AsksTheLLM(fail=True)
    engine = Engine(Settings(), llm=Echo(), analyzers={"asks": lambda: broken})
    report = engine.run([chunk], "on-demand", names=("asks",))
    assert broken.asked == 1 and report.judgments == [] and "analyzer bug" in report.errors[0]  # a batch of one: asked once


class AgainstBefore:
    """A project-level analyzer: judges in `finish`, from what `ctx.project` holds."""

    name = "before"
    tier = "llm"
    codes = ("revision-weaker",)
    project_level = True

    def __init__(self):
        self.analyzed = 0

    def analyze(self, chunks, ctx):
        self.analyzed += 1
        return []

    def finish(self, judgments, chunks, ctx):
        before = ctx.project.at_open(ctx.project.path)
        return [Judgment(c, "revision-weaker", "changed", 0.7) for c in chunks if c.text not in before]


def test_a_project_level_analyzer_judges_in_finish_with_the_project_it_is_given(tmp_path):
    from peerlint.types import ProjectSource

    analyzer = AgainstBefore()
    engine = Engine(Settings(analyzers=("before",)), cache_path=tmp_path / "j.sqlite",
                    analyzers={"before": lambda: analyzer})
    edited = DOC.replace("novelty", "originality")
    source = ProjectSource(Path("d.tex"), at_open=lambda path: DOC)
    report = engine.run(parse_document(edited, "file:///d.tex"), "llm", project=source)
    assert [j.chunk.text[:6] for j in report.judgments] == ["Second"] and analyzer.analyzed == 0
    assert report.analyzed == {}  # no chunk was analysed (nor cached) one by one
    again = engine.run(parse_document(edited, "file:///d.tex"), "llm", project=source, is_cancelled=lambda: True)
    assert again.judgments == []  # cancelled: the project-level pass is not made


def test_every_analyzer_is_behind_the_engine():
    from peerlint.analyzers.registry import ANALYZERS

    engine = Engine(Settings())
    tiers = {a.name: engine.analyzer(a.name).tier for a in ANALYZERS}
    assert tiers == {"prior-work": "fast", "quality": "llm", "venue-style": "llm", "novelty": "on-demand",
                     "revisions": "llm"}
    assert getattr(engine.analyzer("revisions"), "project_level", False)


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
