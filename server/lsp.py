"""The pygls language server: thin handlers over `Service` (docs/architecture.md: from didOpen to a diagnostic).

Scheduling: an open or save analyses at once (a file opened in a project not yet read has its
first screen, or itself, judged and published first, the rest after; `peerlint.status` lists the
files still being analysed); a change waits `debounceMs` of quiet (TexLab's
300 ms), and a newer change cancels the wait, so fast typing never builds a backlog. Analysis
runs on a worker thread and never blocks requests. The LLM tier runs after the fast tier on its
own worker, reports `$/progress`, and is superseded by the next edit. *Check novelty* stops when
the client cancels its request or its progress: it polls before each LLM call, so the LLM worker is
free again within one call.
"""

from __future__ import annotations

import asyncio
import faulthandler
import logging
import os
import signal
import sys
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, BinaryIO

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from .. import __version__
from ..latex.positions import LineIndex
from ..analyzers.novelty.cancel import CheckCancelled
from .code_actions import cite_action, cite_edit, cite_targets, disable_actions, edit_inside, paper_from_hit
from .diagnostics import hover_markdown, to_diagnostic
from .framing import serve_frames
from .service import ProjectState, Service, uri_to_path
from ..locations import cache_root

log = logging.getLogger("peerlint.server")

# One file peerlint checks at most: a paper is ~100 KB; 5 MB of paragraphs to embed would hold the
# analysis worker for minutes (hovers and every other file waiting behind it).
MAX_FILE_BYTES = 1_000_000
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

COMMANDS = ("peerlint.cite", "peerlint.checkNovelty", "peerlint.relatedWork", "peerlint.reindex", "peerlint.status")


def private_stdout() -> BinaryIO:
    """The LSP channel on a private copy of file descriptor 1, with fd 1 itself pointed at stderr.

    Anything else that writes to fd 1 would corrupt the stream, and llama-cpp-python points fd 1 at
    /dev/null while it loads a model (`verbose=False`): a response written by the event loop in that
    window was lost, and the editor waited for it for ever. Now a library's prints land in the log
    and its redirections of fd 1 touch nothing the client reads."""
    sys.stdout.flush()
    try:
        os.write(2, b"")  # fd 2 open for writing (a process started without stderr may hold a read-only file there)
    except OSError:  # started without a stderr: stray output goes nowhere rather than into the stream
        devnull = os.open(os.devnull, os.O_WRONLY)
        if devnull != 2:
            os.dup2(devnull, 2)
            os.close(devnull)
    channel = os.dup(1)
    os.dup2(2, 1)
    return open(channel, "wb", closefd=True)


class PeerlintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("peerlint", __version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental)
        self.service = Service()
        self.fast_worker = ThreadPoolExecutor(1, thread_name_prefix="peerlint-fast")
        self.llm_worker = ThreadPoolExecutor(1, thread_name_prefix="peerlint-llm")
        self.pending: dict[str, asyncio.Task] = {}
        self.llm_pending: dict[str, asyncio.Task] = {}
        self.generation: dict[str, int] = {}
        self.warned: set[str] = set()
        self.log_handler: logging.FileHandler | None = None

    def start_io(self, stdin=None, stdout=None) -> int:
        """pygls's stdio server with the hardened frame loop of `framing.py`; returns the exit status
        (1 for `exit` without `shutdown`, as LSP asks)."""
        from pygls.io_ import StdinAsyncReader, StdoutWriter

        self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or private_stdout()))
        reader = StdinAsyncReader(stdin or sys.stdin.buffer, self.thread_pool)
        status = 0
        try:
            asyncio.run(serve_frames(self._stop_event, reader, self.protocol, self.report_server_error))
        except BrokenPipeError:
            log.error("the client closed the connection; shutting down")
        except SystemExit as exc:  # the `exit` notification
            status = exc.code if isinstance(exc.code, int) else 0
        except KeyboardInterrupt:
            pass
        finally:
            self.shutdown()
        return status

    def report_server_error(self, error: Exception, source) -> None:
        """Malformed client messages go to the log, not a popup: the editor's bug is not the user's."""
        log.error("protocol error (%s): %s", getattr(source, "__name__", source), error)
        try:
            self.window_log_message(lsp.LogMessageParams(type=lsp.MessageType.Error, message=f"peerlint: {error}"))
        except Exception:
            pass

    # -- helpers ----------------------------------------------------------------------------
    def buffer_text(self, uri: str) -> str | None:
        """The editor's unsaved text for `uri`, if the editor has it open."""
        try:
            docs = self.workspace.text_documents
        except Exception:
            return None
        for key in (uri, uri_to_path(uri).as_uri()):
            if key in docs:
                return docs[key].source
        return None

    def version_of(self, uri: str) -> int | None:
        try:
            doc = self.workspace.text_documents.get(uri)
        except Exception:
            return None
        return doc.version if doc is not None else None

    def warn_once(self, key: str, message: str, kind=lsp.MessageType.Warning) -> None:
        if key in self.warned:
            return
        self.warned.add(key)
        log.warning("%s", message)
        self.window_show_message(lsp.ShowMessageParams(type=kind, message=f"peerlint: {message}"))

    def publish_file(self, uri: str, judgments: list) -> None:
        self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(
            uri=uri, version=self.version_of(uri), diagnostics=[to_diagnostic(j) for j in judgments if j.chunk.uri == uri]))

    def publish(self, state: ProjectState) -> None:
        for uri, judgments in state.judgments.items():
            self.publish_file(uri, judgments)
        if self.service.index_error:
            self.warn_once("index", self.service.index_error)
        if self.service.llm_error:  # once per session, however many runs find the LLM down
            self.warn_once("llm", self.service.llm_error)
        if self.service.llm_note:  # the judge is not the configured one: which one it is, and the fix
            self.warn_once("llm-judge", self.service.llm_note)
        for w in state.warnings:
            self.warn_once(w, w, lsp.MessageType.Info)

    # -- scheduling ---------------------------------------------------------------------------
    def schedule(self, uri: str, delay: float) -> None:
        old = self.pending.pop(uri, None)
        if old is not None:
            old.cancel()
        self.generation[uri] = self.generation.get(uri, 0) + 1  # supersedes running LLM work too
        self.pending[uri] = asyncio.ensure_future(self._fast(uri, delay, self.generation[uri]))

    def too_large(self, uri: str) -> bool:
        """An open file over `MAX_FILE_BYTES` is not checked; the user is told once, and why."""
        text = self.buffer_text(uri) or ""
        size = len(text.encode("utf-8", "replace")) if len(text) > MAX_FILE_BYTES // 4 else 0
        if size <= MAX_FILE_BYTES:
            return False
        self.warn_once(f"large:{uri}", f"{uri_to_path(uri).name} is {size / 1e6:.1f} MB, over the "
                       f"{MAX_FILE_BYTES / 1e6:g} MB peerlint checks in one file (a paper is about 0.1 MB), so it "
                       "is not checked; split it into files joined with \\input")
        self.publish_file(uri, [])
        return True

    async def _fast(self, uri: str, delay: float, generation: int) -> None:
        if delay:
            await asyncio.sleep(delay)
        if self.too_large(uri):
            return
        loop = asyncio.get_running_loop()
        try:
            early = await loop.run_in_executor(self.fast_worker, self.service.first_look, uri)
            if early is not None and self.generation.get(uri) == generation:
                self.publish_file(uri, early)
            state = await loop.run_in_executor(self.fast_worker, self.service.analyze, uri, "fast")
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("analysis of %s failed", uri)
            self.warn_once(f"fail:{type(exc).__name__}", f"analysis failed ({exc}); see the log", lsp.MessageType.Error)
            return
        if self.generation.get(uri) != generation:
            return  # a newer edit is already on its way
        self.publish(state)
        if self.service.engine.analyzers("llm"):
            self.llm_pending[uri] = asyncio.ensure_future(self._llm(uri, generation))

    async def _llm(self, uri: str, generation: int) -> None:
        def cancelled() -> bool:
            return self.generation.get(uri) != generation

        token = str(uuid.uuid4())
        progress = await self.begin_progress(token, "peerlint: LLM checks")
        loop = asyncio.get_running_loop()
        try:
            state = await loop.run_in_executor(self.llm_worker, lambda: self.service.analyze(uri, "llm", cancelled))
            if not cancelled():
                self.publish(state)
            log.info("LLM checks of %s: %s", uri_to_path(uri).name, "superseded" if cancelled() else "published")
        except Exception as exc:
            log.exception("LLM analysis of %s failed", uri)
            self.warn_once("llm-fail", f"LLM checks failed ({exc}); the embedding checks keep working")
        finally:
            if progress:
                self.work_done_progress.end(token, lsp.WorkDoneProgressEnd(message="done"))

    async def begin_progress(self, token: str, title: str, stop: threading.Event | None = None,
                             message: str | None = None) -> bool:
        """Begin a work-done progress; with `stop`, the progress is cancellable and its Cancel sets `stop`;
        `message`: what the client shows beside the title (why this one takes long)."""
        caps = self.client_capabilities.window
        if not (caps and caps.work_done_progress):
            return False
        try:
            await self.work_done_progress.create_async(token)
        except Exception:
            return False
        if stop is not None:  # pygls cancels this future on window/workDoneProgress/cancel
            self.work_done_progress.tokens[token].add_done_callback(lambda f: f.cancelled() and stop.set())
        self.work_done_progress.begin(token, lsp.WorkDoneProgressBegin(title=title, cancellable=stop is not None,
                                                                       message=message))
        return True

    def on_request_cancelled(self, stop: threading.Event) -> None:
        """Set `stop` when the client cancels the request being handled ($/cancelRequest). pygls then
        answers the request itself (RequestCancelled) but leaves the command's own work running;
        `protocol.msg_id` is the request's id and `_request_futures` holds its future (pygls 2.1)."""
        future = self.protocol._request_futures.get(self.protocol.msg_id)
        if future is not None:
            future.add_done_callback(lambda f: f.cancelled() and stop.set())

    async def run_with_progress(self, title: str, fn, *args, reports: bool = False, cancellable: bool = False,
                                message: str | None = None):
        """`fn(*args)` on the LLM worker under a work-done progress; `reports`: `fn` also gets a
        (done, total) callback that updates the progress from the worker thread; `cancellable`: `fn`
        also gets an `is_cancelled()` that turns true when the client cancels the request or the
        progress, and raises `CheckCancelled` once it sees it (then the LLM worker is free again)."""
        token = str(uuid.uuid4())
        stop = threading.Event()
        if cancellable:
            self.on_request_cancelled(stop)
        progress = await self.begin_progress(token, title, stop if cancellable else None, message)
        loop = asyncio.get_running_loop()

        def report(done: int, total: int) -> None:
            if progress:
                loop.call_soon_threadsafe(self.work_done_progress.report, token, lsp.WorkDoneProgressReport(
                    message=f"{done}/{total}", percentage=int(100 * done / max(total, 1))))

        extra = ((report,) if reports else ()) + ((stop.is_set,) if cancellable else ())
        try:
            return await loop.run_in_executor(self.llm_worker, fn, *args, *extra)
        except CheckCancelled:
            log.info("%s: cancelled by the client; stopped after the LLM call in flight", title)
            return {"ok": False, "cancelled": True, "reason": "cancelled"}
        finally:
            if progress:
                self.work_done_progress.end(token, lsp.WorkDoneProgressEnd(message="done"))

    async def pull_configuration(self) -> None:
        caps = self.client_capabilities.workspace
        if not (caps and caps.configuration):
            return
        try:
            result = await self.workspace_configuration_async(
                lsp.ConfigurationParams(items=[lsp.ConfigurationItem(section="peerlint")]))
        except Exception as exc:
            log.warning("workspace/configuration failed: %s", exc)
            return
        if result and result[0] is not None:
            self.apply_settings(result[0])

    def apply_settings(self, raw: Any) -> bool:
        changed = self.service.update_settings(raw, lambda m: self.warn_once(m, m))
        self.use_log_file(self.service.settings.log_file)
        return changed

    def use_log_file(self, name: str) -> None:
        """The `logFile` setting: the log also goes to that file from now on (stderr and the default
        file keep it too); a file that cannot be opened is reported once."""
        path = Path(name).expanduser() if name else None
        current = self.log_handler
        if (current.baseFilename if current else None) == (str(path.resolve()) if path else None):
            return
        if current is not None:
            logging.getLogger().removeHandler(current)
            current.close()
            self.log_handler = None
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            handler = logging.FileHandler(path, encoding="utf-8")
        except OSError as exc:
            self.warn_once(f"log:{path}", f"cannot write the log to {path} ({exc}); logFile is ignored")
            return
        handler.setFormatter(logging.Formatter(LOG_FORMAT))
        logging.getLogger().addHandler(handler)
        self.log_handler = handler
        log.info("peerlint %s (pid %d) logs to %s", __version__, os.getpid(), path)

    def plan_cite(self, uri: str, line: int, character: int, hit: dict):
        """The edit that cites `hit` at the end of the paragraph at (line, character), its key and .bib."""
        chunk = self.service.chunk_at(uri, line, character)
        state = self.service.project_of(uri)
        if chunk is None or state is None:
            return None
        bib_path = next((p for p in state.bib_files if p.exists()), None) or (
            state.bib_files[0] if state.bib_files else state.root.parent / "references.bib")
        if state.wall is None or not state.wall.allows(bib_path):
            log.warning("cite: %s is outside the project; no edit offered", bib_path)
            return None
        bib_text = self.buffer_text(bib_path.as_uri())
        if bib_text is None and bib_path.exists():
            bib_text = bib_path.read_text(encoding="utf-8", errors="replace")
        edit, key = cite_edit(uri, self.version_of(uri), self.service.document_text(uri), chunk.offsets[-1],
                              paper_from_hit(hit), bib_path, bib_text)
        if not edit_inside(edit, state.wall):
            log.warning("cite: %s is outside the project; no edit offered", bib_path)
            return None
        return edit, key, bib_path

    def reanalyse_open(self) -> None:
        for uri in list(self.workspace.text_documents):
            self.schedule(uri, 0)


server = PeerlintServer()


@server.feature(lsp.INITIALIZE)
def initialize(ls: PeerlintServer, params: lsp.InitializeParams) -> None:
    folders = params.workspace_folders or []
    root = folders[0].uri if folders else (params.root_uri or None)
    if root:
        ls.service.workspace = uri_to_path(root)
    ls.apply_settings(params.initialization_options)


@server.feature(lsp.INITIALIZED)
async def initialized(ls: PeerlintServer, params: lsp.InitializedParams) -> None:
    await ls.pull_configuration()
    loop = asyncio.get_running_loop()
    retriever = await loop.run_in_executor(ls.fast_worker, ls.service.retriever)
    if retriever is None:
        ls.warn_once("index", ls.service.index_error or "no index")
    else:  # load the embedding model now, not on the first keystroke
        await loop.run_in_executor(ls.fast_worker, retriever.index.embed, ["warm-up"])


@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: PeerlintServer, params: lsp.DidOpenTextDocumentParams) -> None:
    ls.service.opened(params.text_document.uri, params.text_document.text)
    ls.schedule(params.text_document.uri, 0)


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: PeerlintServer, params: lsp.DidChangeTextDocumentParams) -> None:
    if ls.version_of(params.text_document.uri) is not None:  # a change to a document never opened is ignored
        ls.service.changed(params.text_document.uri, ls.buffer_text(params.text_document.uri))  # pygls applied the edit
        ls.schedule(params.text_document.uri, ls.service.settings.debounce_ms / 1000)


@server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: PeerlintServer, params: lsp.DidCloseTextDocumentParams) -> None:
    ls.service.closed(params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: PeerlintServer, params: lsp.DidSaveTextDocumentParams) -> None:
    if ls.version_of(params.text_document.uri) is not None:
        ls.schedule(params.text_document.uri, 0)


@server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def did_change_configuration(ls: PeerlintServer, params: lsp.DidChangeConfigurationParams) -> None:
    settings = params.settings
    changed = ls.apply_settings(settings) if isinstance(settings, dict) and settings else False
    if not settings:
        before = ls.service.settings
        await ls.pull_configuration()
        changed = before != ls.service.settings
    if changed:
        ls.reanalyse_open()


@server.feature(lsp.TEXT_DOCUMENT_HOVER)
def hover(ls: PeerlintServer, params: lsp.HoverParams) -> lsp.Hover | None:
    found = ls.service.hover(params.text_document.uri, params.position.line, params.position.character)
    if found is None:
        return None
    chunk, hits, judgments = found
    text = hover_markdown(hits, [{"code": j.code, "message": j.message, "score": j.score, "evidence": j.evidence}
                                 for j in judgments])
    if not text:
        return None
    r = chunk.range
    return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=text),
                     range=lsp.Range(lsp.Position(r.start.line, r.start.character), lsp.Position(r.end.line, r.end.character)))


async def labels(ls: PeerlintServer, uri: str) -> list[tuple[int, str, dict]]:
    """(line, text, data) of one label a section (quality, venue style, the venue it reads like) and,
    with `revisions`, one per edited paragraph (its verdict against the previous version)."""
    if ls.version_of(uri) is None:
        return []
    loop = asyncio.get_running_loop()
    summaries = await loop.run_in_executor(ls.fast_worker, ls.service.summaries, uri)
    found = [(s.range.start.line, s.line(), s.to_json()) for s in summaries]
    found += [(r.range.start.line, r.title, {"kind": "revision", "verdict": r.verdict, "probability": r.probability})
              for r in ls.service.revision_lenses(uri)]
    return found


@server.feature(lsp.TEXT_DOCUMENT_CODE_LENS)
async def code_lens(ls: PeerlintServer, params: lsp.CodeLensParams) -> list[lsp.CodeLens]:
    """The labels as code lenses above their lines (no command: a label)."""
    return [lsp.CodeLens(range=lsp.Range(lsp.Position(line, 0), lsp.Position(line, 0)),
                         command=lsp.Command(title=f"peerlint: {title}", command=""), data=data)
            for line, title, data in await labels(ls, params.text_document.uri)]


@server.feature(lsp.TEXT_DOCUMENT_INLAY_HINT)
async def inlay_hint(ls: PeerlintServer, params: lsp.InlayHintParams) -> list[lsp.InlayHint]:
    """The labels as inlay hints at the end of their lines, for clients that show no code lenses (Helix,
    for one); a client that shows both would see every label twice, so it gets none here."""
    if ls.client_capabilities.text_document is not None and ls.client_capabilities.text_document.code_lens is not None:
        return []
    uri = params.text_document.uri
    text = LineIndex(ls.buffer_text(uri) or "")
    first, last = params.range.start.line, params.range.end.line
    hints = []
    for line, title, data in await labels(ls, uri):
        if first <= line <= last and line < text.line_count():
            end = text.position(text.line_span(line)[1])  # the line's end, in UTF-16 columns
            hints.append(lsp.InlayHint(position=lsp.Position(end.line, end.character), label=f"peerlint: {title}",
                                       padding_left=True, data=data))
    return hints


@server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION,
                lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix, lsp.CodeActionKind.Source]))
def code_action(ls: PeerlintServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    uri = params.text_document.uri
    version = ls.version_of(uri)
    actions: list[lsp.CodeAction] = []
    for diag in params.context.diagnostics:
        if diag.source != "peerlint" or not diag.code:
            continue
        for hit in cite_targets(diag):
            planned = ls.plan_cite(uri, diag.range.start.line, diag.range.start.character, hit)
            if planned is not None:
                actions.append(cite_action(hit, planned[0], diag))
        actions.extend(disable_actions(uri, version, diag))
    wall = ls.service.wall_of(uri)
    actions = [a for a in actions if edit_inside(a.edit, wall)]
    where = {"uri": uri, "line": params.range.start.line, "character": params.range.start.character}
    if ls.service.chunk_at(uri, where["line"], where["character"]) is not None:
        actions.append(lsp.CodeAction(title="peerlint: check novelty of this paragraph", kind=lsp.CodeActionKind.Source,
                                      command=lsp.Command(title="Check novelty", command="peerlint.checkNovelty", arguments=[where])))
        actions.append(lsp.CodeAction(title="peerlint: show related work", kind=lsp.CodeActionKind.Source,
                                      command=lsp.Command(title="Show related work", command="peerlint.relatedWork", arguments=[where])))
    return actions


def _where(args: tuple) -> dict:
    if not args or not isinstance(args[0], dict) or "uri" not in args[0]:
        raise ValueError("expected one argument {uri, line, character} (checkNovelty also takes end: {line, character})")
    return args[0]


@server.command("peerlint.cite")
async def cmd_cite(ls: PeerlintServer, *args) -> dict:
    where = _where(args)
    planned = ls.plan_cite(where["uri"], int(where["line"]), int(where["character"]), where["paper"])
    if planned is None:
        return {"applied": False, "reason": "the paragraph has changed; run the action again"}
    edit, key, bib_path = planned
    result = await ls.workspace_apply_edit_async(lsp.ApplyWorkspaceEditParams(edit=edit, label=f"Cite {key}"))
    return {"applied": bool(result and result.applied), "key": key, "bib": str(bib_path)}


@server.command("peerlint.relatedWork")
async def cmd_related(ls: PeerlintServer, *args) -> list[dict]:
    where = _where(args)
    chunk = ls.service.chunk_at(where["uri"], int(where["line"]), int(where["character"]))
    if chunk is None:
        return []
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(ls.fast_worker, ls.service.related, chunk, 10)


@server.command("peerlint.checkNovelty")
async def cmd_novelty(ls: PeerlintServer, *args) -> dict:
    where = _where(args)
    end = where.get("end")
    end = (int(end["line"]), int(end["character"])) if isinstance(end, dict) else None
    calibrated = await asyncio.get_running_loop().run_in_executor(None, ls.service.novelty_calibrated)
    why = None if calibrated else "first check on this index: calibrating the score once, about 2 minutes"
    result = await ls.run_with_progress("peerlint: checking novelty", ls.service.check_novelty, where["uri"],
                                        int(where["line"]), int(where["character"]), end, cancellable=True,
                                        message=why)
    state = ls.service.project_of(where["uri"])
    if state is not None:
        ls.publish(state)
    return result


@server.command("peerlint.rankContributions")
async def cmd_rank_contributions(ls: PeerlintServer, *args) -> dict:
    where = _where(args)
    return await ls.run_with_progress("peerlint: ranking contributions", ls.service.rank_contributions,
                                      where["uri"], int(where["line"]), int(where["character"]), reports=True)


@server.command("peerlint.reindex")
async def cmd_reindex(ls: PeerlintServer, *args) -> dict:
    report = await ls.run_with_progress("peerlint: rebuilding the index", ls.service.rebuild_index)
    ls.warned.discard("index")
    ls.reanalyse_open()
    return report


@server.command("peerlint.status")
def cmd_status(ls: PeerlintServer, *args) -> dict:
    return {**ls.service.status(), "analysing": sorted(u for u, task in ls.pending.items() if not task.done())}


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


def log_level(value: str | None) -> tuple[int, str | None]:
    """The level `$PEERLINT_LOG_LEVEL` names (INFO when unset), and what to tell the user when it
    names none: the server then logs at INFO rather than refuse to start."""
    name = (value or "INFO").strip().upper()
    if name in LOG_LEVELS:
        return logging.getLevelName(name), None
    return logging.INFO, f"PEERLINT_LOG_LEVEL={value!r} is not one of {', '.join(LOG_LEVELS)}: logging at INFO"


def _setup_logging(log_file: Path | None) -> None:
    handlers: list[logging.Handler] = [logging.StreamHandler()]  # stderr: editors show it as the server log
    if log_file:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(log_file, encoding="utf-8"))
    level, problem = log_level(os.environ.get("PEERLINT_LOG_LEVEL"))
    logging.basicConfig(level=level, handlers=handlers, force=True, format=LOG_FORMAT)
    # pygls logs every message it sends at INFO: only a DEBUG log (a trace of the session) keeps that
    logging.getLogger("pygls").setLevel(logging.DEBUG if level <= logging.DEBUG else logging.WARNING)
    if problem:
        log.warning("%s", problem)


_STACKS_TO: list = []  # the open file the stacks go to (kept open for the process's life)


def _stacks_on_signal(log_file: Path) -> None:
    """`kill -USR1 <pid>` appends every thread's stack to the server log: what a server that stopped
    answering is doing (the tests send it when a request hangs, and show the log)."""
    if not hasattr(signal, "SIGUSR1"):  # Windows
        return
    try:
        out = open(log_file, "a", encoding="utf-8")  # noqa: SIM115 - open for the life of the process
    except OSError:
        out = sys.stderr
    _STACKS_TO.append(out)

    def dump(_signum, _frame) -> None:
        # A Python-level handler: it runs in the main thread with the GIL held, so the list of threads
        # cannot change under it (faulthandler.register dumps from the C handler, which can crash a
        # server whose worker threads start and end at that moment).
        out.flush()
        faulthandler.dump_traceback(file=out, all_threads=True)
        out.flush()

    try:
        signal.signal(signal.SIGUSR1, dump)
    except ValueError:  # not the main thread (a server started inside another program): no dumps
        _STACKS_TO.remove(out)
        if out is not sys.stderr:
            out.close()


def serve(tcp: str | None = None, log_file: Path | None = None) -> int:
    log_file = log_file or cache_root() / "server.log"
    _setup_logging(log_file)
    _stacks_on_signal(log_file)
    if tcp:
        host, _, port = tcp.rpartition(":")
        server.start_tcp(host or "127.0.0.1", int(port))
        return 0
    status = server.start_io()
    # Leave now: a worker thread still inside an LLM call or an index build (a cancelled command)
    # must not keep the process alive after `exit`, and interpreter exit would join it.
    logging.shutdown()
    os._exit(status)
