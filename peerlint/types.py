"""Data passed between the parser, the analyzers and the server (docs/architecture.md: the data flow)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence

from .hashing import text_hash


@dataclass(frozen=True)
class Position:
    """An LSP position: zero-based line and UTF-16 code-unit column."""

    line: int
    character: int


@dataclass(frozen=True)
class Range:
    start: Position
    end: Position


class Offsets(Sequence[int]):
    """A chunk's source offsets as `base + rel[i]`: a paragraph that only moved (text typed above
    it) gets a new base and shares `rel`, so re-parsing after an edit does not rebuild a tuple of
    every character's offset for every later paragraph (a 40-page draft: ~200k per keystroke)."""

    __slots__ = ("rel", "base")

    def __init__(self, rel: tuple[int, ...], base: int = 0):
        self.rel, self.base = rel, base

    def __len__(self) -> int:
        return len(self.rel)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return tuple(o + self.base for o in self.rel[i])
        return self.rel[i] + self.base

    def __iter__(self):
        base = self.base
        return (o + base for o in self.rel)

    def __eq__(self, other) -> bool:
        if isinstance(other, Offsets) and other.rel is self.rel:
            return other.base == self.base
        return isinstance(other, Sequence) and len(other) == len(self) and tuple(self) == tuple(other)

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"Offsets({tuple(self)!r})"


PROSE_KINDS = ("paragraph", "abstract")  # the chunk kinds that are the author's running prose
_WORD = re.compile(r"[A-Za-z]{2,}")


@dataclass(frozen=True)
class Chunk:
    """A span of prose from a LaTeX document, with a map from text offsets back to the source.

    `offsets[i]` is the source character offset (Python str index into the file text) of
    `text[i]`; `offsets[len(text)]` is one past the last source character.  The parser owns
    this map; nothing else converts offsets.
    """

    text: str
    uri: str
    section: str
    offsets: Sequence[int]  # a tuple, or `Offsets` from the parser
    range: Range
    kind: str = "paragraph"  # paragraph | abstract | title | section-title | selection
    index: int = 0
    cites: tuple[str, ...] = ()
    paragraph: int = -1  # the `index` of its paragraph's first chunk: a long paragraph's chunks share it
    disabled: frozenset[str] = frozenset()  # codes silenced for this chunk by magic comments

    @property
    def words(self) -> int:
        """Words of two letters or more: whether a chunk holds enough prose to be judged."""
        return len(_WORD.findall(self.text))

    @property
    def hash(self) -> str:
        """The key for every cache: same text, same answer."""
        return text_hash(self.text)


@dataclass(frozen=True)
class Judgment:
    """One finding about one chunk; becomes one LSP diagnostic."""

    chunk: Chunk
    code: str
    message: str
    score: float | None = None
    severity: str = "information"  # error | warning | information | hint
    evidence: dict[str, Any] = field(default_factory=dict)  # JSON-serialisable, rides in Diagnostic.data
    range: Range | None = None  # defaults to the chunk's range


@dataclass(frozen=True)
class ProjectSource:
    """The project a run judges, as its caller holds it: what an analyzer that judges the project as a
    whole (revisions) reads besides the chunks. `path` is the edited file, `root` the root file when
    the caller knows it; `read` gives a file's current text (the editor's buffers; the disk when None);
    `at_open`, outside git, each file's text when the editor opened it (the previous version there);
    `revision_judge()` the model that compares two versions (made on first use; None when none ships)."""

    path: Path
    root: Path | None = None
    workspace: Path | None = None
    read: Callable[[Path], str] | None = None
    at_open: Callable[[Path], str] | None = None
    revision_judge: Callable[[], Any] | None = None


@dataclass
class AnalysisContext:
    """What an analyzer may use besides the chunks: the whole document and shared services."""

    chunks: Sequence[Chunk]
    retriever: Any | None = None  # peerlint.retrieval.retriever.Retriever over the open index
    llm: Any | None = None  # peerlint.llm.base.LLM
    settings: Any | None = None  # peerlint.settings.Settings
    bibliography: Any | None = None  # peerlint.latex.bibliography.Bibliography, when a .bib was read
    project: ProjectSource | None = None  # the project as a whole, for `finish` (None: the chunks only)

    @property
    def has_bibliography(self) -> bool:
        return self.bibliography is not None


class Analyzer(Protocol):
    """One analyzer per module; `tier` is "fast" (embedding only, while the user types), "llm" (the
    background worker) or "on-demand" (run when the user asks, on the chunk asked about).

    Optional: `finish(judgments, chunks, ctx) -> judgments`, the project-level pass over all of the
    analyzer's findings of a run (cached or fresh), and `project_level = True` for an analyzer whose
    whole work is that pass (it judges the project against something other than its chunks: its
    previous version), so the engine does not call `analyze` chunk by chunk for it."""

    name: str
    tier: str
    codes: tuple[str, ...]

    def analyze(self, chunks: Sequence[Chunk], ctx: AnalysisContext) -> list[Judgment]: ...
