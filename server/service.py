"""Everything the language server does, as plain methods that tests call without a server.

`server/lsp.py` only translates LSP messages to these calls and back, and hands down the text of
every document the editor opens or changes (`opened`, `changed`, `closed`). State kept here is the
editor session's: the settings, the open documents, the last parse of each project and what was
published. The index, the retriever, the LLM and the engine belong to the `Checker`
(analyzers/checker.py), built as `peerlint check` builds it.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Sequence
from urllib.parse import unquote, urlparse

from ..analyzers.checker import Checker
from ..analyzers.drafts.paper_diff import explanation
from ..analyzers.drafts.summaries import SectionSummary, summarise
from ..analyzers.drafts.venue_guess import DraftDate, evidence_before
from ..analyzers.engine import ON_DEMAND
from ..analyzers.ideas.idea_file import list_items_at
from ..analyzers.ideas.tournament import rank_items
from ..analyzers.prior_work import sec_related, with_provenance
from ..analyzers.project_check import judged_with, prepare
from ..index.build import build_index
from ..locations import cache_root
from ..index.ingest.load import default_corpus_paths, load_papers
from ..latex.bibliography import BibEntry
from ..latex.parse import LineIndex, line_index, selection_chunk
from ..latex.wall import ProjectWall
from ..retrieval.retriever import HitView, Retriever
from ..settings import Settings
from ..types import Chunk, Judgment, Position, ProjectSource
from .config import updated

log = logging.getLogger("peerlint.server")


def uri_to_path(uri: str) -> Path:
    return Path(unquote(urlparse(uri).path)) if uri.startswith("file:") else Path(uri)


SCREEN_CHARS = 5000  # what a 100-column, 50-row window shows of soft-wrapped prose
LONG_FILE = 60  # chunks: a file this long (~15 pages) gets its first screen judged before the rest


def first_screen(chunks: Sequence[Chunk]) -> list[Chunk]:
    """The leading chunks of a file that fit one screen (`SCREEN_CHARS` of their text), at least one:
    what the user sees on opening it, judged before anything else."""
    out, used = [], 0
    for chunk in chunks:
        used += len(chunk.text)
        if out and used > SCREEN_CHARS:
            break
        out.append(chunk)
    return out


@dataclass
class ProjectState:
    """The last parse of one project (root file and everything it includes)."""

    root: Path
    files: list[str]  # URIs, root first
    chunks: list[Chunk]
    bib: list[BibEntry] | None
    bib_files: list[Path]
    judgments: dict[str, list[Judgment]] = field(default_factory=dict)  # uri -> fast + llm findings
    warnings: list[str] = field(default_factory=list)
    venue_guess: str = ""  # from the root file's \documentclass / \usepackage (used when target_venue is unset)
    date: DraftDate | None = None  # from a past venue's style: evidence limited to before it (publishedBefore "auto")
    summaries: list[SectionSummary] = field(default_factory=list)
    summaries_key: tuple = ()  # the chunks and venue the summaries were made from
    wall: ProjectWall | None = None  # where the project's files may be read and written (None: nowhere)


class Service:
    def __init__(self, settings: Settings | None = None, workspace: Path | None = None, cache_dir: Path | None = None):
        self.settings = settings or Settings()
        self.workspace = workspace
        self.cache_dir = cache_dir or cache_root()
        self.checker = Checker(self.settings, self.cache_dir)
        self._buffers: dict[Path, str] = {}  # the editor's text of each open document, as it sent it
        self._at_open: dict[Path, str] = {}  # each opened file's text then: the previous version outside git
        self._lock = threading.RLock()
        self.projects: dict[Path, ProjectState] = {}

    # -- what the checker owns, as the server asks for it ---------------------------------------
    @property
    def engine(self):
        return self.checker.engine

    @property
    def index_path(self) -> Path:
        return self.checker.index_path

    @property
    def index_error(self) -> str | None:
        return self.checker.index_error

    @property
    def llm_error(self) -> str | None:
        return self.checker.llm_error

    @property
    def llm_note(self) -> str | None:
        return self.checker.llm_note

    def retriever(self) -> Retriever | None:
        return self.checker.retriever()

    def reload_index(self) -> None:
        self.checker.reload_index()

    def llm(self):
        return self.checker.llm()

    def note_llm_health(self, failure: str | None = None) -> None:
        self.checker.note_llm_health(failure)

    def revision_judge(self):
        return self.checker.revision_judge()

    def update_settings(self, raw, warn: Callable[[str], None]) -> bool:
        """Apply editor settings; True when a change can alter findings (then callers re-analyse)."""
        new = updated(self.settings, raw, warn)
        if new == self.settings:
            return False
        affects_findings = replace(new, debounce_ms=0, log_file="") != replace(self.settings, debounce_ms=0, log_file="")
        self.settings = new
        self.checker.configure(new)
        return affects_findings

    # -- the documents the editor holds ----------------------------------------------------------
    def opened(self, uri: str, text: str) -> None:
        """The editor opened `uri` with `text`: judged as it is, and kept as the previous version
        outside git (`revision-weaker` compares with the text at open)."""
        with self._lock:
            self._buffers[uri_to_path(uri)] = text
            self._at_open[uri_to_path(uri)] = text

    def changed(self, uri: str, text: str) -> None:
        """The editor's whole text of `uri` after an edit."""
        with self._lock:
            self._buffers[uri_to_path(uri)] = text

    def closed(self, uri: str) -> None:
        """Closed in the editor: the file on disk is its text again."""
        with self._lock:
            self._buffers.pop(uri_to_path(uri), None)

    def buffer(self, path: Path) -> str | None:
        with self._lock:
            return self._buffers.get(Path(path))

    # -- reading the project ---------------------------------------------------------------
    def _read(self, path: Path) -> str:
        text = self.buffer(path)
        return text if text is not None else path.read_text(encoding="utf-8", errors="replace")

    def parse(self, uri: str) -> ProjectState:
        ready = prepare(uri_to_path(uri), self.settings, self.workspace, self._read, retriever=self.retriever())
        found = ready.found
        root, project = found.choice.root, found.project
        files = [p.as_uri() for p in project.files] or [uri]
        state = ProjectState(root, files, project.chunks, ready.bib, project.bib_files, warnings=ready.warnings,
                             venue_guess=found.venue_guess, date=found.date, wall=found.wall)
        with self._lock:
            old = self.projects.get(root)
            if old is not None:
                state.judgments = {u: old.judgments.get(u, []) for u in old.files}  # shown until replaced
            self.projects[root] = state
        return state

    def project_of(self, uri: str) -> ProjectState | None:
        path = uri_to_path(uri)
        with self._lock:
            for state in self.projects.values():
                if uri in state.files or state.root == path:
                    return state
        return None

    # -- analysis --------------------------------------------------------------------------
    def _run_settings(self, state: ProjectState) -> Settings:
        return judged_with(self.settings, state.venue_guess, state.date)

    def first_look(self, uri: str) -> list[Judgment] | None:
        """What to publish first for a file just opened in a project not yet read: the findings of its
        first screen (`first_screen`) when the file is long, else of the file alone when
        the project holds more, so the user sees the text in front of them judged in a fraction of the
        project's time. The chunks are cached, so the whole-project run that follows does not judge
        them again. None when the project is known already, is this short file alone, or there is
        no index."""
        if self.project_of(uri) is not None or self.retriever() is None:
            return None
        state = self.parse(uri)
        here = [c for c in state.chunks if c.uri == uri]
        if len(here) > LONG_FILE:
            here = first_screen(here)
        elif len(here) == len(state.chunks):
            return None
        found = self.engine.run(here, "fast", state.bib, settings=self._run_settings(state)).judgments
        state.judgments[uri] = found  # what hovers and code actions see until the whole is judged
        return found

    def analyze(self, uri: str, tier: str = "fast", is_cancelled: Callable[[], bool] = lambda: False) -> ProjectState:
        """Parse the project holding `uri` and run one tier; results grouped per file."""
        state = self.parse(uri) if tier == "fast" or self.project_of(uri) is None else self.project_of(uri)
        if tier == "fast" and self.retriever() is None:
            by_uri: dict[str, list[Judgment]] = {u: [] for u in state.files}
            state.judgments = by_uri
            return state
        if tier == "llm":
            self.llm()
        report = self.engine.run(state.chunks, tier, state.bib, is_cancelled, self._run_settings(state),
                                 self.source(state))
        if tier == "llm":
            self.note_llm_health(report.llm_unavailable)
        state.warnings.extend(report.errors)
        opened = self.checker.opened_retriever
        notice = opened.notice if opened is not None else None
        if notice and notice not in state.warnings:  # an index too old for lexical search: shown once
            state.warnings.append(notice)
        by_uri = {u: [j for j in state.judgments.get(u, []) if self._tier_of(j.code) != tier] for u in state.files}
        for j in report.judgments:
            by_uri.setdefault(j.chunk.uri, []).append(j)
        state.judgments = by_uri
        return state

    def summaries(self, uri: str) -> list[SectionSummary]:
        """The section summaries placed in `uri` (code lenses): from the last parse, never parsing anew."""
        state = self.project_of(uri)
        if state is None or not self.settings.section_summaries:
            return []
        venue = self.settings.target_venue or state.venue_guess
        key = (tuple(c.hash for c in state.chunks), tuple(c.section for c in state.chunks), venue)
        if state.summaries_key != key:
            state.summaries = summarise(state.chunks, self.retriever(), venue)
            state.summaries_key = key
        return [s for s in state.summaries if s.uri == uri]

    def _text_at_open(self, path: Path) -> str:
        with self._lock:
            text = self._at_open.get(Path(path))
        return text if text is not None else Path(path).read_text(encoding="utf-8", errors="replace")

    def source(self, state: ProjectState) -> ProjectSource:
        """The project as the editor holds it, for the analyzers that judge it whole: its buffers, the
        text at open (the previous version outside git) and the revisions model rating with the index."""
        return ProjectSource(state.root, state.root, self.workspace, self._read, self._text_at_open,
                             self.revision_judge)

    def revision_lenses(self, uri: str) -> list:
        """The last verdicts on `uri`'s edited paragraphs (`paper_diff.RevisionLens`), for code lenses."""
        state = self.project_of(uri)
        if state is None or "revisions" not in self.settings.analyzers:
            return []
        return [lens for lens in self.engine.analyzer("revisions").lenses(state.root) if lens.uri == uri]

    def _tier_of(self, code: str) -> str:
        for analyzer in self.engine.analyzers("fast"):
            if code in analyzer.codes:
                return "fast"
        return "llm"

    # -- queries from the editor -------------------------------------------------------------
    def chunk_at(self, uri: str, line: int, character: int) -> Chunk | None:
        state = self.project_of(uri)
        if state is None:
            return None
        pos = (line, character)
        for chunk in state.chunks:
            r = chunk.range
            if chunk.uri == uri and (r.start.line, r.start.character) <= pos <= (r.end.line, r.end.character):
                return chunk
        return None

    def selection(self, uri: str, line: int, character: int, end: tuple[int, int]) -> Chunk | None:
        """The prose of a selection as one chunk (None when it holds no words)."""
        state = self.project_of(uri)
        if state is None:
            return None
        return selection_chunk(state.chunks, self.document_text(uri), uri, Position(line, character), Position(*end))

    def retriever_for(self, chunk: Chunk):
        """The retriever for `chunk`'s project: limited to the draft's own date when it has one and
        `publishedBefore` is "auto" (None without an index)."""
        retriever = self.retriever()
        state = self.project_of(chunk.uri)
        if retriever is None or state is None:
            return retriever
        return retriever.scoped(evidence_before(self.settings.published_before, state.date))

    def nearest(self, chunk: Chunk, k: int | None = None) -> list[HitView]:
        retriever = self.retriever_for(chunk)
        if retriever is None:
            return []
        k = k or self.settings.hover_k
        return [HitView.of(h) for h in retriever.neighbours([chunk], k)[chunk.hash]]

    def related(self, chunk: Chunk, k: int = 10) -> list[dict]:
        """*Show related work*: SciPIP SEC retrieval (semantic + shared entities + co-citation,
        near-duplicates stepped back), each paper with the stages that found it."""
        retriever = self.retriever_for(chunk)
        if retriever is None:
            return []
        return [with_provenance(HitView.of(h), h) for h in sec_related(retriever, [chunk], k)[chunk.hash]]

    def hover(self, uri: str, line: int, character: int) -> tuple[Chunk, list[dict], list[Judgment]] | None:
        chunk = self.chunk_at(uri, line, character)
        if chunk is None:
            return None
        state = self.project_of(uri)
        found = [j for j in state.judgments.get(uri, []) if j.chunk.hash == chunk.hash and j.chunk.range == chunk.range]
        found += self._revision_notes(uri, chunk, found)
        hits = next((j.evidence["hits"] for j in found if j.evidence.get("hits")), None)
        if hits is None:
            hits = [h.to_json() for h in self.nearest(chunk)]
        return chunk, hits, found

    def _revision_notes(self, uri: str, chunk: Chunk, found: list[Judgment]) -> list[Judgment]:
        """The verdict on the edited paragraph holding `chunk`, for the hover (not a diagnostic): both
        versions' ratings, what drove it, the previous text; none where `revision-weaker` already says it."""
        if any(j.code == "revision-weaker" for j in found):
            return []
        line = chunk.range.start.line
        for lens in self.revision_lenses(uri):
            if lens.range.start.line <= line <= lens.range.end.line:
                said, before, after = explanation(lens.revision, lens.against, self.revision_judge())
                return [Judgment(chunk, "revision", lens.title, score=lens.probability, severity="hint",
                                 evidence={"explanation": said, "before": before, "after": after,
                                           "against": lens.against, "verdict": lens.verdict})]
        return []

    def line_text(self, uri: str, line: int) -> str:
        text = self.document_text(uri)
        idx = LineIndex(text)
        if line >= idx.line_count():
            return ""
        a, b = idx.line_span(line)
        return text[a:b]

    def document_text(self, uri: str) -> str:
        """The editor's buffer, else the file on disk if a project peerlint read holds it; a request
        naming any other file reads nothing (the wall holds for requests too)."""
        path = uri_to_path(uri)
        text = self.buffer(path)
        if text is not None:
            return text
        with self._lock:
            known = any(s.wall is not None and s.wall.allows(path) for s in self.projects.values())
        return self._read(path) if known else ""

    def wall_of(self, uri: str) -> ProjectWall | None:
        """The wall of the project holding `uri`: every edit an action proposes stays inside it."""
        state = self.project_of(uri)
        return state.wall if state is not None else None

    def status(self) -> dict:
        retriever, llm = self.checker.opened_retriever, self.checker.opened_llm
        return {
            "index": {"path": str(self.index_path), "ok": retriever is not None, "error": self.index_error,
                      "papers": len(retriever.index) if retriever else 0},
            "llm": {"backend": getattr(llm, "name", None), "model": getattr(llm, "model", None),
                    "error": self.llm_error, "configured": self.settings.backend, "note": self.llm_note,
                    "judge": getattr(llm, "judge", None)},
            "analyzed": dict(self.engine.calls), "embedded": retriever.embedded if retriever else 0,
            "projects": [str(p) for p in self.projects],
            "analyzers": list(self.settings.analyzers),
        }

    # -- commands ---------------------------------------------------------------------------
    def novelty_calibrated(self) -> bool:
        """False when the next novelty check first fits this index's novelty model (minutes, once)."""
        return self.retriever() is None or self.checker.novelty_checker().calibrated()

    def check_novelty(self, uri: str, line: int, character: int, end: tuple[int, int] | None = None,
                      is_cancelled: Callable[[], bool] = lambda: False) -> dict:
        """Calibrated novelty of the selection (from line:character to `end`), else of the paragraph at
        the cursor, else of the abstract, with an LLM justification; a `novelty` diagnostic.
        `is_cancelled` is polled before each LLM call: once true, `CheckCancelled` ends the check."""
        chunk = self.selection(uri, line, character, end) if end is not None else None
        chunk = chunk or self.chunk_at(uri, line, character)
        if chunk is None:
            state = self.project_of(uri)
            chunk = next((c for c in (state.chunks if state else []) if c.kind == "abstract"), None)
        if chunk is None:
            return {"ok": False, "reason": "put the cursor in a paragraph of prose (or give the draft an abstract)"}
        if self.retriever() is None:
            return {"ok": False, "reason": self.index_error}
        self.llm()
        state = self.project_of(chunk.uri)
        settings = self._run_settings(state) if state is not None else self.settings
        report = self.engine.run([chunk], ON_DEMAND, state.bib if state else None, is_cancelled, settings,
                                 names=("novelty",))
        self.note_llm_health()
        if not report.judgments:
            return {"ok": False, "reason": "; ".join(report.errors) or "the novelty check gave no answer"}
        judgment = report.judgments[0]
        if state is not None:
            kept = [j for j in state.judgments.get(chunk.uri, []) if not (j.code == "novelty" and j.chunk.hash == chunk.hash)]
            state.judgments[chunk.uri] = kept + [judgment]
        return {"ok": True, "score": judgment.score, "message": judgment.message, "evidence": judgment.evidence}

    def rank_contributions(self, uri: str, line: int, character: int,
                           progress: Callable[[int, int], None] | None = None) -> dict:
        """Rank the `\\item`s of the list at the cursor with NOVA's Swiss tournament (5 rounds)."""
        source = self.document_text(uri)
        items = list_items_at(source, line_index(source).offset(Position(line, character)), uri)
        if len(items) < 2:
            return {"ok": False, "reason": "put the cursor in an itemize/enumerate list of at least two \\items"}
        retriever = self.retriever()
        if retriever is None:
            return {"ok": False, "reason": self.index_error}
        ranking = rank_items(items, self.llm(), retriever.index.embedder, index=retriever.index, progress=progress)
        out = ranking.to_json()
        out.pop("matches", None)
        lines = [f"{r['rank']}. ({r['points']:g} pts) {' '.join(r['text'].split())[:90]}" for r in out["ranking"]]
        return {"ok": True, **out, "message": f"Contributions ranked by {ranking.comparator}, {ranking.rounds} rounds:\n"
                + "\n".join(lines)}

    def rebuild_index(self) -> dict:
        """Rebuild from the corpus the current index was built from (the shipped one by default)."""
        sources: list = default_corpus_paths()
        opened = self.checker.opened_retriever
        if opened is not None and opened.index.manifest.sources:
            sources = [Path(s) for s in opened.index.manifest.sources]
        papers = load_papers(sources, warn=lambda m: log.warning("%s", m))
        report = build_index(papers, self.index_path, sources=[str(s) for s in sources], show_progress=False)
        self.reload_index()
        return report.__dict__
