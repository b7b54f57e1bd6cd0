"""Revision judgments (issue 17): previous versions from git, paragraph alignment, the revisions
model, `peerlint diff`, on real data (examples/draft.tex in a temporary repository, arXivEdits)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from peerlint.analyzers.drafts import previous_version as pv
from peerlint.analyzers.drafts.alignment import align
from peerlint.analyzers.drafts.revision_features import changed_sentences, edit_window, normalise
from peerlint.analyzers.latex.parse import ParseOptions, parse_document

from conftest import EXAMPLES

DRAFT = EXAMPLES / "draft.tex"
# five real edits to examples/draft.tex: (old, new) substrings, each in a different paragraph
EDITS = (
    ("Writing a research paper is a long sequence of revisions.",
     "Writing a research paper is a long sequence of revisions, most of them small."),
    ("Automatic writing assistants cover the surface of the text well: spelling, grammar and style\n"
     "checkers are integrated into every editor.",
     "Automatic writing assistants covers the surface of text good: spelling, grammar and style\n"
     "checker are integrate into every editors."),
    ("We argue that retrieval is the natural basis for such a tool.",
     "We argue that retrieval is a natural basis for such a tool, because reviewers compare too."),
    ("Both lines of work score a document in isolation, without reference to\nother documents.",
     "Both line of work scores a document in isolation without reference to\nother document."),
    ("Mean reviewer ratings are noisy targets, because reviewers disagree and a single harsh review moves\nthe mean.",
     "Mean reviewer ratings are noisy targets: reviewers disagree, and one harsh review moves\nthe mean."),
)


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org"}
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout.strip()


def edited(text: str) -> str:
    for old, new in EDITS:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """examples/draft.tex committed, then edited in the work tree (five paragraphs)."""
    root = tmp_path / "paper"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "draft.tex").write_text(DRAFT.read_text())
    git(root, "add", "draft.tex")
    git(root, "commit", "-q", "-m", "v1")
    (root / "draft.tex").write_text(edited(DRAFT.read_text()))
    return root


# -- previous version: every bad input is a status and a message, never an exception ---------------

def test_previous_text_is_the_committed_file(repo):
    found = pv.previous_text(repo / "draft.tex")
    assert found.status == "ok" and found.text == DRAFT.read_text() and len(found.commit) == 40
    assert found.comparable and "HEAD" in found.message


def test_a_file_outside_any_repository_says_so(tmp_path):
    loose = tmp_path / "loose.tex"
    loose.write_text("Some text.")
    found = pv.previous_text(loose)
    assert found.status == "not-in-repo" and found.text is None and not found.comparable
    assert "not in a git repository" in found.message


def test_a_missing_revision_is_named_and_an_option_like_one_is_refused(repo):
    for rev in ("no-such-branch", "HEAD~5", "--output=/tmp/peerlint-owned"):
        found = pv.previous_text(repo / "draft.tex", rev)
        assert found.status == "bad-revision" and repr(rev) in found.message and "git log" in found.message
    assert not Path("/tmp/peerlint-owned").exists()


def test_detached_head_and_named_revisions_work(repo):
    first = git(repo, "rev-parse", "HEAD")
    git(repo, "commit", "-q", "-am", "v2")
    git(repo, "checkout", "-q", "--detach", first)
    assert pv.previous_text(repo / "draft.tex").text == DRAFT.read_text()  # HEAD is v1, detached
    assert pv.previous_text(repo / "draft.tex", "main").text == edited(DRAFT.read_text())


def test_a_new_file_and_a_repository_without_commits_are_all_new(repo, tmp_path):
    (repo / "appendix.tex").write_text("An appendix.")
    found = pv.previous_text(repo / "appendix.tex")
    assert found.status == "new" and found.comparable and "did not exist" in found.message
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q")
    (empty / "a.tex").write_text("Text.")
    assert pv.previous_text(empty / "a.tex").status == "new"
    assert pv.previous_text(empty / "a.tex", "v1").status == "no-commit"


def test_a_renamed_file_is_read_under_its_old_name(repo):
    git(repo, "mv", "draft.tex", "paper.tex")
    found = pv.previous_text(repo / "paper.tex")
    assert found.status == "ok" and found.text == DRAFT.read_text()
    assert found.old_path == repo / "draft.tex" and "renamed from draft.tex" in found.message


def test_a_shallow_clone_says_it_lacks_history(repo, tmp_path):
    git(repo, "commit", "-q", "-am", "v2")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo}", str(clone)], check=True)
    assert pv.previous_text(clone / "draft.tex").status == "ok"
    found = pv.previous_text(clone / "draft.tex", "HEAD~1")
    assert found.status == "bad-revision" and "shallow" in found.message and "--unshallow" in found.message


def test_binary_and_huge_previous_versions_are_not_compared(repo):
    (repo / "fig.tex").write_bytes(b"\x89PNG\0\0binary")
    git(repo, "add", "fig.tex")
    git(repo, "commit", "-q", "-m", "binary")
    (repo / "fig.tex").write_text("Now text.")
    assert pv.previous_text(repo / "fig.tex").status == "binary"
    history = pv.open_history(repo / "draft.tex")
    history.max_bytes = 1000
    found = history.previous(repo / "draft.tex")
    assert found.status == "too-large" and "MB" in found.message and found.text is None


def test_git_missing_or_slow_is_a_message(repo, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    assert pv.previous_text(repo / "draft.tex").status == "no-git"
    monkeypatch.undo()
    monkeypatch.setattr(pv, "GIT_TIMEOUT_S", 1e-6)
    found = pv.previous_text(repo / "draft.tex")
    assert found.status == "git-error" and "did not answer" in found.message


def test_git_never_sees_document_text(repo, monkeypatch):
    calls = []
    real = subprocess.run

    def spy(argv, **kw):
        calls.append((argv, kw))
        return real(argv, **kw)

    monkeypatch.setattr(pv.subprocess, "run", spy)
    history = pv.open_history(repo / "draft.tex")
    history.read(repo / "draft.tex")
    text = (repo / "draft.tex").read_text()
    assert calls and all(not kw.get("shell") and kw.get("timeout") for _, kw in calls)
    words = {w for w in text.split() if len(w) > 6}
    assert not any(w in arg for argv, _ in calls for arg in argv for w in words)


# -- alignment -------------------------------------------------------------------------------------

def _chunks(text: str):
    """Whole paragraphs (no 200-token pieces), as the diff reads them."""
    return [c for c in parse_document(text, "file:///draft.tex", ParseOptions(max_tokens=10**6))
            if c.kind in ("paragraph", "abstract")]


def test_five_edited_paragraphs_align_as_changed_and_the_rest_unchanged():
    old, new = _chunks(DRAFT.read_text()), _chunks(edited(DRAFT.read_text()))
    result = align(old, new)
    kinds = [a.kind for a in result]
    assert kinds.count("changed") == 5 and set(kinds) == {"unchanged", "changed"}
    assert sum(len(a.old) for a in result) == len(old) and sum(len(a.new) for a in result) == len(new)
    changed = [a for a in result if a.kind == "changed"]
    assert all(0.5 <= a.similarity < 1 for a in changed)
    assert [a.new[0].index for a in result] == sorted(a.new[0].index for a in result)  # the new draft's order


def test_moved_split_merged_new_and_removed():
    a, b, c, d, e, f, g = [c.text for c in _chunks(DRAFT.read_text())][2:9]
    cut = c.index(". ", len(c) // 3) + 1
    old = [a, b, c, d, f, g]
    new = [b, a, c[:cut], c[cut:].strip(), d.replace(" the ", " a ", 2),
           "An entirely new paragraph about something else, with different words throughout the sentence.", g]
    result = align([_chunk(t, i) for i, t in enumerate(old)], [_chunk(t, i) for i, t in enumerate(new)])
    by_kind = {x.kind: x for x in result}
    assert sorted(x.kind for x in result) == ["changed", "moved", "new", "removed", "split", "unchanged", "unchanged"]
    assert by_kind["split"].old_text == c and [x.text for x in by_kind["split"].new] == new[2:4]
    assert by_kind["changed"].old_text == d and by_kind["removed"].old_text == f and by_kind["new"].new_text == new[5]
    merged = align([_chunk(d, 0), _chunk(e, 1)], [_chunk(d + " " + e.replace(" the ", " a "), 0)])
    assert [x.kind for x in merged] == ["merged"] and len(merged[0].old) == 2


def test_a_paragraph_rewritten_beyond_recognition_is_new_and_its_old_text_removed():
    old = [_chunk("Retrieval makes the comparison with the literature explicit and auditable for authors.", 0)]
    new = [_chunk("Our experiments use four benchmarks and report the mean over five random seeds each.", 0)]
    assert [x.kind for x in align(old, new)] == ["new", "removed"]


def _chunk(text: str, index: int):
    from peerlint.analyzers.types import Chunk, Position, Range

    return Chunk(text, "file:///x.tex", "Introduction", tuple(range(len(text) + 1)),
                 Range(Position(index, 0), Position(index, len(text))), index=index)


# -- what the model reads ------------------------------------------------------------------------------

def test_arxivedits_text_reads_like_parser_text():
    assert normalise("dimensions ( e.g. , [MATH] ) , by [CITATION] in [REF] .") == \
        "dimensions (e.g., [math]), by [cite] in [ref]."


def test_edit_window_is_the_changed_span_in_context():
    w = edit_window("We propose a simple method for few-shot classification of images.",
                    "We propose a novel method for few-shot classification of images.")
    assert w.prefix == "We propose a" and w.before.startswith(" simple method") and w.after.startswith(" novel method")


def test_changed_sentences_leave_unchanged_sentences_out():
    before = "First sentence stays. Second one is here. Third one stays too."
    after = "First sentence stays. The second one is here now. Third one stays too. A fourth is added."
    assert changed_sentences(before, after) == [("Second one is here.", "The second one is here now."),
                                                 ("Third one stays too.", "Third one stays too. A fourth is added.")]
