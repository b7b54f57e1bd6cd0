"""A whole project against its previous version: what `peerlint diff` prints and the editor shows.

Both versions are parsed as whole paragraphs (no 200-token pieces, whose borders move with every
edit), the current one from disk and the previous one from git through `GitHistory.read`, so a
multi-file project is compared file by file as its root includes them then and now.  Paragraphs
are aligned (`alignment.py`); each edited one gets the revisions model's verdict (`revisions.py`),
new and removed ones say so, and each section's quality before and after, on the scale of the
section summaries (`scale.py`, 1-10: 7 is the median published section of its kind), gives the
paper-level summary of Between the Drafts (Section 4.3, Fig. 4).
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, Sequence

from ...errors import UserError
from ...latex.parse import ParseOptions
from ...latex.project import Reader, parse_project, pick_root
from ...types import Chunk, Judgment, Range
from .alignment import Aligned, align
from .previous_version import NEW, PreviousText, open_history
from .summaries import judged

PROSE = ("paragraph", "abstract")
WHOLE_PARAGRAPHS = 10**9  # max_tokens that never cuts a paragraph


class Judge(Protocol):
    """What the diff needs from the revisions model (`revisions.RevisionJudge`)."""

    def judge(self, old: str, new: str): ...  # -> revisions.RevisionJudgment

    def quality(self, texts: Sequence[str], section: str = "") -> float | None: ...


@dataclass(frozen=True)
class ParagraphRevision:
    """One paragraph that is not unchanged: its verdict, and where to show it.

    `chunk` is the new paragraph (its first piece for a split), or the old one for "removed", whose
    `uri` and `range` then refer to the previous version (`version` says which)."""

    aligned: Aligned
    verdict: str  # better | worse | new | removed
    probability: float | None
    chunk: Chunk
    version: str  # "current" or "previous"
    judgment: object | None = None  # revisions.RevisionJudgment for edited paragraphs

    @property
    def section(self) -> str:
        return self.chunk.section or "(no section)"


@dataclass(frozen=True)
class SectionSummary:
    """A section's quality (1-10, `scale.py`) before and after, and the verdict counts."""

    section: str
    before: float | None
    after: float | None
    paragraphs_before: int
    paragraphs_after: int
    counts: dict[str, int]


def paragraphs_options(options: ParseOptions | None) -> ParseOptions:
    """The user's parser settings, with paragraphs kept whole."""
    return dataclasses.replace(options or ParseOptions(), max_tokens=WHOLE_PARAGRAPHS)


def prose(chunks: Sequence[Chunk]) -> list[Chunk]:
    return [c for c in chunks if c.kind in PROSE]


def previous_chunks(root: Path, rev: str, options: ParseOptions) -> tuple[list[Chunk], PreviousText, list[str]]:
    """The previous version's paragraphs, what git said, and the old parse's warnings.

    Raises UserError when there is nothing to compare with (no repository, no such revision, …);
    a root that is new since `rev` gives no old paragraphs (everything is new)."""
    history = open_history(root, rev)
    if isinstance(history, PreviousText):
        if history.status != NEW:
            raise UserError(history.message)
        return [], history, []
    found = history.previous(root)
    if found.status == NEW:
        return [], found, []
    if found.text is None:
        raise UserError(found.message)
    old = parse_project(found.old_path or root, options, read=history.read)
    return prose(old.chunks), found, [f"at {rev}: {w}" for w in old.warnings]


@dataclass
class ChunkDiff:
    """What `diff_chunks` finds: the judged paragraphs, the summaries and what stayed the same."""

    revisions: list[ParagraphRevision]
    sections: list[SectionSummary]
    total: SectionSummary
    unchanged: int
    moved: int


@dataclass
class PaperDiff(ChunkDiff):
    """A project's diff, with what it was compared with and what the parser and git said."""

    root: Path = Path(".")
    rev: str = "HEAD"
    commit: str = ""
    message: str = ""
    warnings: list[str] = field(default_factory=list)


def diff_chunks(old: Sequence[Chunk], new: Sequence[Chunk], judge: Judge) -> ChunkDiff:
    """Aligned, judged and summarised: the part of `diff_project` that needs no files.  A paragraph
    moved with its text intact is no revision (counted, not judged)."""
    aligned = align(old, new)
    revisions, before, after = [], defaultdict(list), defaultdict(list)
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    same = {"unchanged": 0, "moved": 0}
    for a in aligned:
        for c in a.old:
            before[c.section].append(c)
        for c in a.new:
            after[c.section].append(c)
        if a.kind in same:
            same[a.kind] += 1
            continue
        revision = _revision(a, judge)
        revisions.append(revision)
        counts[revision.chunk.section][revision.verdict] += 1
    order = list(dict.fromkeys([c.section for c in new] + [c.section for c in old]))
    sections = [_summary(s, s, before[s], after[s], counts[s], judge) for s in order]
    everything = _summary("(paper)", "", [c for s in order for c in before[s]], [c for s in order for c in after[s]],
                          {k: sum(counts[s].get(k, 0) for s in order) for k in ("better", "worse", "new", "removed")},
                          judge)  # no heading: the whole paper against all published sections
    return ChunkDiff(revisions, sections, everything, same["unchanged"], same["moved"])


def _revision(a: Aligned, judge: Judge) -> ParagraphRevision:
    if a.kind == "new":
        return ParagraphRevision(a, "new", None, a.new[0], "current")
    if a.kind == "removed":
        return ParagraphRevision(a, "removed", None, a.old[0], "previous")
    judgment = judge.judge(a.old_text, a.new_text)
    return ParagraphRevision(a, judgment.verdict, judgment.probability, a.new[0], "current", judgment)


def _summary(section: str, heading: str, before: list[Chunk], after: list[Chunk], counts: dict[str, int],
             judge: Judge) -> SectionSummary:
    """`heading`: what the quality scale reads the section's kind from."""
    return SectionSummary(section or "(no section)", _quality(judge, before, heading), _quality(judge, after, heading),
                          len(before), len(after), {k: v for k, v in counts.items() if v})


def _quality(judge: Judge, chunks: Sequence[Chunk], heading: str) -> float | None:
    """The quality of the paragraphs among `chunks` that a section summary judges (`summaries.judged`:
    no "TODO", no acknowledgements); None when there are none."""
    return judge.quality([c.text for c in chunks if judged(c)], heading)


def diff_project(path: Path, judge: Judge, rev: str = "HEAD", options: ParseOptions | None = None,
                 workspace: Path | None = None, root: Path | None = None, read: Reader | None = None,
                 previous: Reader | None = None) -> PaperDiff:
    """The project `path` belongs to, now against `rev`; UserError when there is nothing to compare with.
    `read` gives the current text of a file (an editor's unsaved buffers); the disk by default.
    `previous`, given, gives each file's previous text in place of git (the editor's text at open,
    outside git), and `rev` only names it."""
    choice = pick_root(Path(path), workspace, read, override=root)
    options = paragraphs_options(options)
    current = parse_project(choice.root, options, read)
    if previous is None:
        old, found, old_warnings = previous_chunks(choice.root, rev, options)
        commit, message = found.commit, found.message
    else:
        then = parse_project(choice.root, options, previous)
        old, commit, message = prose(then.chunks), "", f"compared with {rev}"
        old_warnings = [f"in {rev}: {w}" for w in then.warnings]
    notes = [choice.note] if choice.note else []
    return PaperDiff(**vars(diff_chunks(old, prose(current.chunks), judge)), root=choice.root, rev=rev,
                     commit=commit, message=message, warnings=notes + current.warnings + old_warnings)


WEAKER_CODE = "revision-weaker"
# on arXivEdits dev, where every revision is the authors' improvement, P(worse) >= 0.60 flags 2.5% of
# them (0.55: 8%): the editor's information diagnostic stays rare on ordinary edits
WEAKER_MIN_PROBABILITY = 0.6


def verdict_message(verdict: str, probability: float, against: str, reason: str) -> str:
    """One wording for a verdict, in the diagnostic and the code lens alike."""
    reads = "weaker" if verdict == "worse" else verdict
    return f"revision reads {reads} than {against} (p = {probability:.2f}){': ' + reason if reason else ''}"


@dataclass(frozen=True)
class RevisionLens:
    """An edited paragraph's verdict, better or worse, as the editor's code lens shows it; `revision`
    keeps both versions for the hover."""

    uri: str
    range: Range
    verdict: str
    probability: float
    title: str
    against: str
    revision: ParagraphRevision


def revision_lenses(found: ChunkDiff, against: str) -> list[RevisionLens]:
    """One lens per edited paragraph of the current version (new and removed ones have no verdict)."""
    return [RevisionLens(r.chunk.uri, r.chunk.range, r.verdict, r.probability,
                         verdict_message(r.verdict, r.probability, against, r.judgment.reason()), against, r)
            for r in found.revisions if r.judgment is not None and r.version == "current"]


def explanation(r: ParagraphRevision, against: str, judge: Judge | None) -> tuple[str, float | None, float | None]:
    """What the hover says of a verdict: both versions' quality ratings (given `judge`), what drove it and
    the previous text; and the two ratings."""
    old, new = r.aligned.old_text, r.aligned.new_text
    before, after = ((_quality(judge, r.aligned.old, r.section), _quality(judge, r.aligned.new, r.section))
                     if judge is not None else (None, None))
    rated = f"quality {before:.1f} -> {after:.1f}; " if before is not None and after is not None else ""
    drivers = "; ".join(d.words() for d in r.judgment.drivers if d.change) if r.judgment is not None else ""
    return (f"{rated}{drivers}. Previous version ({against}): {old[:300]}{'…' if len(old) > 300 else ''}",
            before, after)


def weaker_judgments(found: ChunkDiff, against: str, min_probability: float | None = None,
                     judge: Judge | None = None, chunks: Sequence[Chunk] = ()) -> list[Judgment]:
    """`revision-weaker` findings for the editor: edited paragraphs that read worse than `against`
    (HEAD, a revision, or "the saved text"), with the drivers, the previous text and (given `judge`)
    both versions' quality ratings as evidence.  Given the editor's `chunks` (200-token pieces), each
    finding is tied to the first piece of its paragraph and spans the whole paragraph."""
    bar = WEAKER_MIN_PROBABILITY if min_probability is None else min_probability
    out = []
    for r in found.revisions:
        j = r.judgment
        if j is None or r.verdict != "worse" or j.probability < bar:
            continue
        old, new = r.aligned.old_text, r.aligned.new_text
        said, before, after = explanation(r, against, judge)
        piece = next((c for c in chunks if c.uri == r.chunk.uri and c.offsets[0] >= r.chunk.offsets[0]
                      and c.offsets[0] < r.chunk.offsets[-1]), r.chunk)
        out.append(Judgment(piece, WEAKER_CODE, verdict_message(r.verdict, j.probability, against, j.reason()),
                            score=j.probability, severity="information",
                            evidence={"against": against, "p_better": j.p_better, "sentences": j.sentences,
                                      "before": before, "after": after, "explanation": said,
                                      "drivers": [{"feature": d.name, "change": d.change, "share": d.share}
                                                  for d in j.drivers],
                                      "previous": old[:600], "current_words": len(new.split())},
                            range=r.chunk.range))
    return out
