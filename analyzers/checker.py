"""The one composition root: what judging a draft needs, built the same way by `peerlint check`,
`peerlint diff` and the language server.

A `Checker` owns the index (opened lazily, its failure kept as the exact fix), the one `Retriever`
over it, the LLM backend, the engine with its judgment cache and every analyzer, and what two of
those analyzers judge with: the calibrated novelty score (`novelty`, on demand) and the revisions
model (`revisions`, handed to the engine with the project it compares). The server's `Service` keeps only what the
editor's session holds (open documents, parsed projects, published findings) and asks a Checker
for everything else.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Callable

from ..index.build import default_index_path
from ..index.embedding.embedder import Embedder
from ..locations import cache_root
from ..index.store import IndexError_, build_command, open_index
from ..retrieval.retriever import Retriever
from ..settings import Settings
from ..llm.select import make_llm
from ..types import text_hash
from .drafts.revisions import make_judge
from .engine import Engine, llm_failure
from .novelty.analyzer import NoveltyAnalyzer
from .novelty.check import NoveltyChecker
from .registry import engine_factories

log = logging.getLogger(__name__)


class Checker:
    """`cache_dir` holds the query vectors, the novelty model and, with `keep_judgments`, the judgment
    cache (the server keeps judgments across restarts; a one-shot `check` does not). `index_path`
    overrides the settings' index (`--index`)."""

    def __init__(self, settings: Settings, cache_dir: Path | None = None, index_path: Path | None = None,
                 keep_judgments: bool = True, warn: Callable[[str], None] | None = None):
        self.settings = settings
        self.cache_dir = cache_dir or cache_root()
        self._index_path = index_path
        self.warn = warn
        self.index_error: str | None = None
        self.llm_error: str | None = None
        self.llm_note: str | None = None  # the judge in use is not the one configured, and why
        self._retriever: Retriever | None = None
        self._llm = None
        self._novelty: NoveltyChecker | None = None
        self._revision_judge = None
        self._lock = threading.RLock()  # the index and what is built on it
        self._llm_lock = threading.RLock()  # the LM and the revisions judge: loading one (seconds) never holds up the index
        # *Check novelty* scores over the whole open index with the model trained once per index build
        analyzers = {**engine_factories(), NoveltyAnalyzer.name: lambda: NoveltyAnalyzer(self.novelty_checker)}
        self.engine = Engine(settings, cache_path=self.cache_dir / "judgments.sqlite" if keep_judgments else None,
                             analyzers=analyzers)

    # -- the index and its retriever ---------------------------------------------------------
    @property
    def index_path(self) -> Path:
        if self._index_path is not None:
            return self._index_path
        return Path(self.settings.index_path).expanduser() if self.settings.index_path else default_index_path()

    def retriever(self) -> Retriever | None:
        """The open index, or None with `index_error` set to the exact fix."""
        if self._retriever is not None:  # open: no lock to wait on (a code lens asks while the index is in use)
            return self._retriever
        with self._lock:
            if self._retriever is None and self.index_error is None:
                try:
                    index = open_index(self.index_path)
                    index.embed_queries(self.settings.query_embedding)
                    index.keep_query_vectors(self.cache_dir)  # a restart re-embeds nothing
                    self._retriever = Retriever(index, self.settings.search_mode, self.settings.published_before or None,
                                                warn=self.warn)
                    self.engine.retriever = self._retriever
                except IndexError_ as exc:
                    self.index_error = str(exc)
                except Exception as exc:  # a damaged file the store did not foresee
                    self.index_error = f"cannot open the index at {self.index_path} ({exc}): run `{build_command(self.index_path)}`"
            return self._retriever

    @property
    def opened_retriever(self) -> Retriever | None:
        """The retriever if the index is open already (never opens it)."""
        return self._retriever

    def reload_index(self) -> None:
        with self._lock:
            self._retriever = None
            self.index_error = None
            self.engine.retriever = None
        self.retriever()

    # -- the LLM -----------------------------------------------------------------------------
    def llm(self):
        with self._llm_lock:
            if self._llm is None:
                try:
                    self._llm = make_llm(self.settings.backend, self.settings.model or None,
                                         self.settings.ollama_host or None, cache_dir=self.cache_dir,
                                         timeout=max(1, self.settings.llm_timeout_s))
                    self.engine.llm = self._llm
                    self.llm_error = None
                    # not the judge asked for (a packaged model not installed, an Ollama model not pulled):
                    # said once, naming the fix and the judge that answers instead
                    self.llm_note = getattr(self._llm, "note", "") or None
                except Exception as exc:
                    self.llm_error = f"LLM backend unavailable ({exc}); the embedding checks keep working"
            return self._llm

    @property
    def opened_llm(self):
        """The LLM if it was made already (never makes it)."""
        return self._llm

    def use_llm(self, llm) -> None:
        """Judge with `llm` from now on (tests and benchmarks bring their own)."""
        with self._llm_lock:
            self._llm = llm
            self.engine.llm = llm

    def note_llm_health(self, failure: str | None = None) -> None:
        """`llm_error` says, in one stable message, that the LLM is down (the server shows it once)."""
        failure = failure or llm_failure(self._llm)
        if failure:
            self.llm_error = f"LLM checks unavailable: {failure}; the embedding checks keep working"
        elif self._llm is not None:
            self.llm_error = None

    # -- the judges that run on demand -------------------------------------------------------
    def novelty_checker(self) -> NoveltyChecker:
        """The calibrated novelty score over the open index (trained once per index build, then cached)."""
        with self._lock:
            retriever = self.retriever()
            if self._novelty is None or self._novelty.retriever is not retriever:
                self._novelty = NoveltyChecker(retriever, self.cache_dir)
            return self._novelty

    def revision_judge(self, ratings: str = "index"):
        """The shipped revisions model over the embedded LM, made once (None when no model is shipped).
        `ratings`: "index" rates sections with the index's embedder (the editor), "own" with a MiniLM of
        its own, no index needed (`peerlint diff`), "none" gives verdicts only (`peerlint check`)."""
        with self._llm_lock:
            if self._revision_judge is None:
                if ratings == "none":
                    self._revision_judge = make_judge(make_llm("embedded"))
                elif ratings == "own":
                    self._revision_judge = make_judge(make_llm("embedded"), embed=Embedder().encode)
                else:
                    retriever = self.retriever()
                    embed = (lambda texts: retriever.vectors(texts, [text_hash(t) for t in texts])) if retriever else None
                    self._revision_judge = make_judge(make_llm("embedded", cache_dir=self.cache_dir), embed,
                                                      retriever.index if retriever else None)
            return self._revision_judge

    # -- settings ----------------------------------------------------------------------------
    def configure(self, new: Settings) -> None:
        """Follow changed settings: the index reopened where it changed, the LLM remade where its
        settings did, the retriever and the engine told the rest."""
        old, self.settings = self.settings, new
        self.engine.settings = new
        index_changed = (new.index_path, new.query_embedding) != (old.index_path, old.query_embedding)
        llm_changed = ((new.backend, new.model, new.ollama_host, new.llm_timeout_s)
                       != (old.backend, old.model, old.ollama_host, old.llm_timeout_s))
        with self._lock:
            if self._retriever is not None:
                self._retriever.configure(new.search_mode, new.published_before or None)
        if index_changed:
            self.reload_index()
        if llm_changed:
            with self._llm_lock:
                self._llm = None
                self.engine.llm = None
