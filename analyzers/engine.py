"""Run the enabled analyzers over chunks, re-running only chunks whose text changed.

The CLI's `check` and the language server both go through `Engine.run`, so an editor shows
exactly what `peerlint check` prints. Judgments are cached per (analyzer, chunk text, context
fingerprint) in memory and in SQLite, so an edit re-analyses one chunk and a restart none.

Three tiers: "fast" and "llm" run the enabled analyzers over a project; "on-demand" runs the one
the user asked for (the editor's *Check novelty*) on the chunk asked about, enabled or not, fresh
(its analyzer keeps its own answers), with every LLM call first asking whether the user cancelled.
After the chunks, each analyzer's `finish` judges the project as a whole.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from .novelty.cancel import CheckCancelled, cancellable
from .registry import engine_factories
from ..latex.bibliography import BibEntry, Bibliography
from ..types import AnalysisContext, Analyzer, Chunk, Judgment, ProjectSource

log = logging.getLogger(__name__)

ON_DEMAND = "on-demand"

@dataclass
class RunReport:
    judgments: list[Judgment]
    analyzed: Counter = field(default_factory=Counter)  # analyzer name -> chunks actually analysed
    errors: list[str] = field(default_factory=list)
    failed_hashes: set[str] = field(default_factory=set)  # chunks whose analysis raised: not cached
    llm_unavailable: str | None = None  # the LLM backend was down during this run (its findings are not cached)


def llm_failure(llm) -> str | None:
    """Why the LLM backend is down now (`OllamaLLM.failure`), or None when it answers."""
    return getattr(llm, "failure", None) if llm is not None else None


class JudgmentCache:
    """(analyzer, chunk hash, fingerprint) -> judgments without their chunk; persisted when given a path."""

    def __init__(self, path: Path | None = None):
        self._mem: dict[tuple[str, str, str], list[dict]] = {}
        self._lock = threading.Lock()
        self._db = None
        if path is not None:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                self._db = self._open(path)
            except sqlite3.DatabaseError:
                log.warning("judgment cache %s is damaged; starting a new one", path)
                path.replace(path.with_suffix(".corrupt"))
                self._db = self._open(path)
            except OSError as exc:
                log.warning("judgment cache %s cannot be opened (%s); caching in memory only", path, exc)

    @staticmethod
    def _open(path: Path) -> sqlite3.Connection:
        db = sqlite3.connect(path, check_same_thread=False)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("CREATE TABLE IF NOT EXISTS j (analyzer TEXT, hash TEXT, fp TEXT, body TEXT, PRIMARY KEY (analyzer, hash, fp))")
        return db

    def get(self, key: tuple[str, str, str]) -> list[dict] | None:
        with self._lock:
            if key in self._mem:
                return self._mem[key]
            if self._db is None:
                return None
            row = self._db.execute("SELECT body FROM j WHERE analyzer=? AND hash=? AND fp=?", key).fetchone()
            if row is None:
                return None
            self._mem[key] = json.loads(row[0])
            return self._mem[key]

    def put_many(self, items: dict[tuple[str, str, str], list[dict]]) -> None:
        with self._lock:
            self._mem.update(items)
            if self._db is not None:
                with self._db:
                    self._db.executemany("INSERT OR REPLACE INTO j VALUES (?,?,?,?)",
                                         [(*k, json.dumps(v)) for k, v in items.items()])


def _strip(j: Judgment) -> dict:
    return {"code": j.code, "message": j.message, "score": j.score, "severity": j.severity, "evidence": j.evidence}


def _bind(body: dict, chunk: Chunk) -> Judgment:
    return Judgment(chunk, body["code"], body["message"], body["score"], body["severity"], body["evidence"])


def project_level(analyzer: Analyzer) -> bool:
    """True for an analyzer whose whole work is its `finish` (it reads more than the chunks)."""
    return bool(getattr(analyzer, "project_level", False))


def _finished(analyzers: Sequence[Analyzer], judgments: list[Judgment], ctx: AnalysisContext,
              is_cancelled: Callable[[], bool]) -> list[Judgment]:
    """Each analyzer's project-level pass (`finish`, where it has one) over all its findings, cached or
    fresh: what depends on other chunks (one finding per paragraph) or on more than the chunks (the
    previous version) is never cached per chunk. A project-level analyzer's pass is skipped once the
    run is cancelled."""
    out = list(judgments)
    for analyzer in analyzers:
        finish = getattr(analyzer, "finish", None)
        mine = [j for j in out if j.code in analyzer.codes]
        if finish and (mine or (project_level(analyzer) and not is_cancelled())):
            out = [j for j in out if j.code not in analyzer.codes] + finish(mine, ctx.chunks, ctx)
    return out


class Engine:
    """Owns the analyzers and their cache; `retriever` and `llm` are supplied lazily by the caller."""

    def __init__(self, settings, retriever=None, llm=None, cache_path: Path | None = None,
                 analyzers: dict[str, Callable[[], Analyzer]] | None = None):
        self.settings = settings
        self.retriever = retriever
        self.llm = llm
        self.cache = JudgmentCache(cache_path)
        self._factories = analyzers or engine_factories()
        self._instances: dict[str, Analyzer] = {}
        self.calls: Counter = Counter()  # analyzer name -> chunks analysed since start

    def analyzers(self, tier: str, names: Sequence[str] | None = None) -> list[Analyzer]:
        """The analyzers of `tier` among `names` (default: the enabled ones), made on first use."""
        out = []
        for name in self.settings.analyzers if names is None else names:
            analyzer = self.analyzer(name)
            if analyzer is not None and analyzer.tier == tier:
                out.append(analyzer)
        return out

    def analyzer(self, name: str) -> Analyzer | None:
        """The analyzer called `name`, made on first use (None: no such analyzer)."""
        if name not in self._factories:
            return None
        if name not in self._instances:
            self._instances[name] = self._factories[name]()
        return self._instances[name]

    def fingerprint(self, analyzer: Analyzer, bib: Sequence[BibEntry], settings=None) -> str:
        """What besides the chunk text changes an analyzer's answer: settings, bibliography, model."""
        s = settings or self.settings
        parts = [analyzer.name, repr((s.close_prior_work_threshold, s.related_work_min_similarity, s.related_work_k,
                                      s.hover_k, sorted(s.severity.items()), s.target_venue, s.model, s.backend,
                                      s.drafts_scorer, s.weak_chunk_percentile, s.weak_chunk_drop,
                                      s.off_venue_percentile, s.suggestion_tokens, s.max_suggestions,
                                      s.search_mode, s.published_before, s.query_embedding)),
                 repr(sorted((e.key, e.title, e.doi, e.arxiv_id, e.author, e.year or 0) for e in bib))]
        return hashlib.blake2b("\x1f".join(parts).encode(), digest_size=12).hexdigest()

    def run(self, chunks: Sequence[Chunk], tier: str = "fast", bib: Sequence[BibEntry] | None = None,
            is_cancelled: Callable[[], bool] = lambda: False, settings=None, project: ProjectSource | None = None,
            names: Sequence[str] | None = None) -> RunReport:
        """`settings` overrides the engine's for this run (the service fills in a guessed target venue);
        `project` is what a project-level `finish` reads besides the chunks; `names` the analyzers to run
        (default: the enabled ones of `tier`; the on-demand tier runs the one asked for)."""
        report = RunReport([])
        settings = settings or self.settings
        on_demand = tier == ON_DEMAND
        retriever = self.retriever.scoped(settings.published_before) if self.retriever is not None else None
        ctx = AnalysisContext(chunks=chunks, retriever=retriever,
                              llm=cancellable(self.llm, is_cancelled) if on_demand else self.llm, settings=settings,
                              bibliography=Bibliography(bib) if bib is not None else None, project=project)
        analyzers = self.analyzers(tier, names)
        for analyzer in analyzers:
            if project_level(analyzer):
                continue
            fp = self.fingerprint(analyzer, bib or (), settings)
            todo: list[Chunk] = []
            for chunk in chunks:
                cached = None if on_demand else self.cache.get((analyzer.name, chunk.hash, fp))
                if cached is None:
                    todo.append(chunk)
                else:
                    report.judgments.extend(_bind(b, chunk) for b in cached)
            if not todo or is_cancelled():
                continue
            fresh = self._analyze_isolated(analyzer, todo, ctx, report)
            down = llm_failure(ctx.llm) if analyzer.tier == "llm" else None
            if down:  # what an analyzer answered without its LLM must not outlive the outage
                report.llm_unavailable = down
                report.failed_hashes.update(c.hash for c in todo)
            report.analyzed[analyzer.name] += len(todo)
            self.calls[analyzer.name] += len(todo)
            if on_demand:  # asked for and answered: the analyzer keeps its own answers, none is filtered
                report.judgments.extend(fresh)
                continue
            by_hash: dict[str, list[dict]] = {c.hash: [] for c in todo if c.hash not in report.failed_hashes}
            first = {}  # chunks with the same text share one cache entry: store one chunk's findings, not all
            for c in todo:
                first.setdefault(c.hash, c)
            for j in fresh:
                if j.chunk.hash not in report.failed_hashes and first.get(j.chunk.hash, j.chunk) is j.chunk:
                    by_hash.setdefault(j.chunk.hash, []).append(_strip(j))
            self.cache.put_many({(analyzer.name, h, fp): v for h, v in by_hash.items()})
            report.judgments.extend(fresh)
        if not on_demand:
            report.judgments = [j for j in _finished(analyzers, report.judgments, ctx, is_cancelled)
                                if self._shown(j)]
        return report

    def _analyze_isolated(self, analyzer: Analyzer, todo: list[Chunk], ctx: AnalysisContext,
                          report: RunReport) -> list[Judgment]:
        """An exception costs only the chunk that caused it: retry one by one, log the culprits. A
        cancelled check (`CheckCancelled`) ends the run instead, and a batch of one is not asked twice
        (an on-demand check costs seconds of LLM)."""
        if len(todo) > 1:
            try:
                return analyzer.analyze(todo, ctx)
            except CheckCancelled:
                raise
            except Exception:
                log.exception("analyzer %s failed on a batch of %d chunks; retrying one by one", analyzer.name, len(todo))
        out: list[Judgment] = []
        for chunk in todo:
            try:
                out.extend(analyzer.analyze([chunk], ctx))
            except CheckCancelled:
                raise
            except Exception as exc:
                report.failed_hashes.add(chunk.hash)
                report.errors.append(f"{analyzer.name} failed on {chunk.uri} line {chunk.range.start.line + 1}: {exc!r}")
                log.exception("analyzer %s failed on chunk at %s:%d", analyzer.name, chunk.uri, chunk.range.start.line + 1)
        return out

    def _shown(self, j: Judgment) -> bool:
        if "*" in j.chunk.disabled or j.code in j.chunk.disabled:
            return False
        return self.settings.severity_of(j.code) != "off"

