"""One language-server session of `peerlint bench lsp`: a real `peerlint serve` driven over stdio.

Kept apart from bench.py because lsprotocol takes a second to import, and the CLI imports every
benchmark's bench.py to build `--help`.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

from .draft import PARAGRAPHS_PER_PAGE, make_draft
from ...index.store import IndexError_, current_build
from ...locations import cache_root


class _Client(LanguageClient):
    def __init__(self):
        super().__init__("peerlint-bench", "0")
        self.published: dict[tuple[str, int | None], float] = {}  # when each (uri, version) was first published
        self.last_published: dict[tuple[str, int | None], float] = {}  # ... and last
        self.event = asyncio.Event()

        @self.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def _diags(ls, params: lsp.PublishDiagnosticsParams):
            now = time.perf_counter()
            ls.published.setdefault((params.uri, params.version), now)
            ls.last_published[(params.uri, params.version)] = now
            ls.event.set()

        @self.feature(lsp.WINDOW_SHOW_MESSAGE)
        def _msg(ls, params):
            print(f"server: {params.message}", file=sys.stderr)

        @self.feature(lsp.WINDOW_LOG_MESSAGE)
        def _log(ls, params):
            pass


async def _wait(client: _Client, uri: str, version: int | None, timeout: float = 600.0) -> float:
    deadline = time.perf_counter() + timeout
    while (uri, version) not in client.published:
        client.event.clear()
        await asyncio.wait_for(client.event.wait(), max(0.01, deadline - time.perf_counter()))
    return client.published[(uri, version)]


async def _settled(client: _Client, uri: str, version: int | None) -> float:
    """When `uri`'s analysis was last published, once the server lists it as analysed no more (its
    first screen may be published before the rest: `peerlint.status`'s `analysing`)."""
    while True:
        status = await client.workspace_execute_command_async(lsp.ExecuteCommandParams("peerlint.status", []))
        if uri not in (status or {}).get("analysing", []):
            return client.last_published[(uri, version)]
        await asyncio.sleep(0.005)


def _rss_sampler(pid: int, peak: list[float], stop: list[bool]):
    import psutil

    proc = psutil.Process(pid)
    while not stop[0]:
        try:
            rss = proc.memory_info().rss + sum(c.memory_info().rss for c in proc.children(recursive=True))
            peak[0] = max(peak[0], rss)
        except psutil.Error:
            return
        time.sleep(0.05)


async def _session(index: Path, root: Path, workdir: Path, query_embedding: str,
                   model: str = "") -> tuple[_Client, list[float], list[bool]]:
    """A started server on `root` with empty caches (exported and trained models shared), its model warmed with
    a small document outside `root` as an editor session would have; RSS sampled from the start."""
    import threading

    cache = Path(tempfile.mkdtemp(prefix="peerlint-bench-cache-", dir=workdir))

    for kept in ("models", "novelty"):  # set-up, not cache: exported models (the ONNX query route) and
        if (cache_root() / kept).is_dir():  # the novelty model trained once per index build (~30 s)
            (cache / kept).symlink_to(cache_root() / kept, target_is_directory=True)
    _share_venue_style(index, cache)
    client = _Client()
    env = {**os.environ, "PEERLINT_CACHE_DIR": str(cache), "HF_HUB_OFFLINE": "1"}
    await client.start_io(sys.executable, "-m", "peerlint", "serve", env=env)
    peak, stop = [0.0], [False]
    sampler = threading.Thread(target=_rss_sampler, args=(client._server.pid, peak, stop), daemon=True)
    sampler.start()
    await client.initialize_async(lsp.InitializeParams(
        capabilities=lsp.ClientCapabilities(), root_uri=root.as_uri(),
        initialization_options={"indexPath": str(index), "debounceMs": 0, "queryEmbedding": query_embedding,
                                **({"model": model} if model else {})}))
    client.initialized(lsp.InitializedParams())
    warm = Path(tempfile.mkdtemp(prefix="warm-", dir=workdir)) / "warm.tex"
    warm.write_text(make_draft(1, seed=99))
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(warm.as_uri(), "latex", 1, warm.read_text())))
    await _wait(client, warm.as_uri(), 1)
    return client, peak, stop


def _share_venue_style(index: Path, cache: Path) -> None:
    """Set-up too: the venue head and calibration `index build` learns for this build (not the judgments)."""
    try:
        build = current_build(index).name
    except IndexError_:
        return
    for name in (f"venue-head-{build}.npz", f"venue-calibration-{build}.npz"):
        if (cache_root() / "drafts" / name).is_file():
            (cache / "drafts").mkdir(exist_ok=True)
            (cache / "drafts" / name).symlink_to(cache_root() / "drafts" / name)


async def _close(client: _Client, stop: list[bool]) -> None:
    stop[0] = True
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()


async def measure_project(index: Path, opened: Path, root_file: Path, workdir: Path, query_embedding: str,
                          model: str = "") -> dict:
    """A real multi-file paper: open one of its files, time its own findings (published first) and
    the whole project's (the root file's publication)."""
    client, peak, stop = await _session(index, opened.parent, workdir, query_embedding, model)
    t0 = time.perf_counter()
    text = opened.read_text(encoding="utf-8", errors="replace")
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(opened.as_uri(), "latex", 1, text)))
    first = await _wait(client, opened.as_uri(), 1) - t0
    if root_file == opened:  # a one-file paper: the whole is its last publication (after an early screen)
        whole = await _settled(client, opened.as_uri(), 1) - t0
    else:  # the root is not open: published (version None) when the whole project has been judged
        whole = await _wait(client, root_file.as_uri(), None) - t0
    await _close(client, stop)
    return {"project": str(root_file.parent), "opened": opened.name, "opened_file_diagnostics_ms": first * 1000,
            "whole_project_diagnostics_ms": whole * 1000, "peak_rss_mb": peak[0] / 2**20}


async def measure_size(index: Path, pages: int, typing_seconds: float, workdir: Path, query_embedding: str,
                       model: str = "") -> dict:
    root = workdir / f"draft{pages}"
    root.mkdir(exist_ok=True)
    client, peak, stop = await _session(index, root, workdir, query_embedding, model)
    path = root / "main.tex"
    text = make_draft(pages)
    path.write_text(text)
    uri = path.as_uri()
    t0 = time.perf_counter()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(uri, "latex", 1, text)))
    screen = await _wait(client, uri, 1) - t0
    first = await _settled(client, uri, 1) - t0

    lines = text.splitlines()
    target = next(i for i, l in enumerate(lines) if l and not l.startswith("\\") and len(l) > 200)
    edits = await _one_word_edits(client, uri, lines, target)
    version, hovers = await _typing(client, uri, lines, target, typing_seconds)
    last_key = time.perf_counter()
    backlog = await _wait(client, uri, version) - last_key
    without_llm = peak[0]
    cpu_before = _cpu_seconds(client._server.pid)
    novelty_ms = await _novelty_check(client, uri, target)
    novelty_cpu = _cpu_seconds(client._server.pid) - cpu_before
    await asyncio.sleep(0.3)  # one more RSS sample after the LLM's answers
    await _close(client, stop)
    third = len(hovers) // 3
    return {"pages": pages, "chunks_approx": pages * PARAGRAPHS_PER_PAGE, "first_screen_ms": screen * 1000,
            "first_diagnostics_ms": first * 1000,
            "reanalyse_ms_median": statistics.median(edits) * 1000, "reanalyse_ms_max": max(edits) * 1000,
            "typing_edits": version - 6, "typing_hover_ms_p50": statistics.median(hovers) * 1000 if hovers else None,
            "typing_hover_ms_max": max(hovers) * 1000 if hovers else None,
            "typing_hover_ms_p99": _percentile(hovers, 99),
            "typing_hover_ms_p50_first_third": _percentile(hovers[:third], 50) if third else None,
            "typing_hover_ms_p50_last_third": _percentile(hovers[-third:], 50) if third else None,
            "last_keystroke_to_diagnostics_ms": backlog * 1000, "debounce_ms_while_typing": 300,
            "peak_rss_mb": without_llm / 2**20, "novelty_check_ms": novelty_ms,
            "novelty_check_cpu_s": novelty_cpu if novelty_ms is not None else None,
            "peak_rss_llm_loaded_mb": peak[0] / 2**20}


async def measure_cold(index: Path, opened: Path, workdir: Path, query_embedding: str, installed: bool) -> dict:
    """A cold server as an editor starts it: a new process, an empty cache and no warm-up, the file
    opened right after `initialized`. `installed`: the cache holds what `make install` and `index build`
    leave in it (the exported query model, the packaged judge, the build's venue style), as on a user's
    machine; else it is empty, so the server exports the query model itself. Times from the process's start."""
    cache = Path(tempfile.mkdtemp(prefix="peerlint-bench-cold-", dir=workdir))
    if installed and (cache_root() / "models").is_dir():
        (cache / "models").symlink_to(cache_root() / "models", target_is_directory=True)
    if installed:
        _share_venue_style(index, cache)
    client = _Client()
    env = {**os.environ, "PEERLINT_CACHE_DIR": str(cache), "HF_HUB_OFFLINE": "1"}
    t0 = time.perf_counter()
    await client.start_io(sys.executable, "-m", "peerlint", "serve", env=env)
    await client.initialize_async(lsp.InitializeParams(
        capabilities=lsp.ClientCapabilities(), root_uri=opened.parent.as_uri(),
        initialization_options={"peerlint": {"indexPath": str(index), "queryEmbedding": query_embedding}}))
    answered = time.perf_counter() - t0
    client.initialized(lsp.InitializedParams())
    text = opened.read_text(encoding="utf-8", errors="replace")
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(opened.as_uri(), "latex", 1, text)))
    first = await _wait(client, opened.as_uri(), 1) - t0
    await _close(client, [False])
    return {"opened": str(opened), "cache": "installed models" if installed else "empty",
            "initialize_answered_ms": answered * 1000, "start_to_first_diagnostics_ms": first * 1000}


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of the server so far: unlike wall time, barely moved by other processes'
    load, so a busy machine's run still says what the work costs (about wall x threads at rest)."""
    import psutil

    times = psutil.Process(pid).cpu_times()
    return times.user + times.system


def _percentile(seconds: list[float], q: float) -> float | None:
    """The q-th percentile of durations in seconds, in milliseconds (None for none)."""
    return float(np.percentile(np.asarray(seconds) * 1000, q)) if seconds else None


async def _novelty_check(client, uri: str, line: int) -> float | None:
    """*Check novelty* on one paragraph: the first LLM feature a user runs, which loads the embedded LM
    (the peak RSS after it is the server's with the LLM loaded). Its time in ms, None if it failed."""
    t0 = time.perf_counter()
    try:
        await asyncio.wait_for(client.workspace_execute_command_async(lsp.ExecuteCommandParams(
            command="peerlint.checkNovelty", arguments=[{"uri": uri, "line": line, "character": 0}])), 600)
    except Exception as exc:  # a timeout or an error answer: reported as missing, the rest of the row stands
        print(f"bench lsp: novelty check failed: {exc}", file=sys.stderr)
        return None
    return (time.perf_counter() - t0) * 1000


async def _one_word_edits(client, uri: str, lines: list[str], target: int) -> list[float]:
    """Five one-word insertions, each timed from the change to its diagnostics (debounce 0)."""
    edits = []
    for v in range(2, 7):
        col = lines[target].index(" ") + 1
        t0 = time.perf_counter()
        client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(uri=uri, version=v),
            [lsp.TextDocumentContentChangePartial(range=lsp.Range(lsp.Position(target, col), lsp.Position(target, col)),
                                                  text=f"w{v} ")]))
        edits.append((await _wait(client, uri, v)) - t0)
        lines[target] = lines[target][:col] + f"w{v} " + lines[target][col:]
    return edits


async def _typing(client, uri: str, lines: list[str], target: int, seconds: float) -> tuple[int, list[float]]:
    """Sustained typing (one character every 20 ms, 300 ms debounce) with a hover every tenth edit."""
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings={"peerlint": {"debounceMs": 300}}))
    await asyncio.sleep(0.2)
    version, hovers = 6, []
    end = time.perf_counter() + seconds
    line = target + 2 if target + 2 < len(lines) else target
    while time.perf_counter() < end:
        version += 1
        client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
            [lsp.TextDocumentContentChangePartial(range=lsp.Range(lsp.Position(line, 0), lsp.Position(line, 0)), text="a")]))
        if version % 10 == 0:
            h0 = time.perf_counter()
            await client.text_document_hover_async(lsp.HoverParams(lsp.TextDocumentIdentifier(uri), lsp.Position(target, 3)))
            hovers.append(time.perf_counter() - h0)
        await asyncio.sleep(0.02)
    return version, hovers
