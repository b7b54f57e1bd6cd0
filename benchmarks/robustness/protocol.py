"""Protocol abuse over raw stdio against `peerlint serve`: each case sends what a broken or hostile
client might, checks the answer the JSON-RPC / LSP specifications define (or that it is ignored),
and then that the server still answers.  A server that died or went silent is restarted for the
next case, and that counts as a crash."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .cases import CaseResult, run_case
from .hosts import HangingHost
from .stdio import Closed, RawServer, Silent, frame

PARAGRAPH = ("Predicting the rating of a textual review is a fast-growing application of natural language "
             "processing. Most existing approaches either rely on hand-crafted features or learn features with deep "
             "networks from flat text, ignoring the hierarchy in the data.")
DOC = "\\documentclass{article}\n\\begin{document}\n\\section{Method}\n" + PARAGRAPH + "\n\nA second paragraph 🙂 here.\n\\end{document}\n"


@dataclass
class Session:
    """One server under abuse, restarted when a case kills it."""

    workdir: Path
    index: Path | None
    llm_host: str
    server: RawServer | None = None
    restarts: int = 0
    uri: str = ""
    version: int = 1
    text: str = DOC
    log: list[str] = field(default_factory=list)

    def options(self) -> dict:
        return {"indexPath": str(self.index or self.workdir / "no-index"), "debounceMs": 0,
                "backend": "ollama", "ollamaHost": self.llm_host, "llmTimeoutS": 5}

    def start(self, initialize: bool = True) -> RawServer:
        if self.server is not None:
            self.server.stop(5)
        self.server = RawServer.start(self.workdir / "cache")
        if initialize:
            self.server.initialize(self.workdir, self.options(), timeout=120)
            self.open()
        return self.server

    def open(self) -> None:
        path = self.workdir / "abuse.tex"
        path.write_text(DOC)
        self.uri, self.version, self.text = path.as_uri(), 1, DOC
        self.server.notify("textDocument/didOpen", {"textDocument": {"uri": self.uri, "languageId": "latex",
                                                                      "version": 1, "text": DOC}})

    def status(self, timeout: float = 5.0) -> dict:
        return self.server.call("workspace/executeCommand", {"command": "peerlint.status", "arguments": []}, timeout)

    def serving(self, timeout: float = 5.0) -> bool:
        try:
            return "result" in self.status(timeout)
        except (Silent, Closed, OSError, ValueError):
            return False


def _error_code(answer: dict) -> int | None:
    return (answer.get("error") or {}).get("code")


# -- the cases: each takes the session and raises AssertionError on a wrong answer ------------------

def before_initialize(s: Session) -> str:
    srv = s.start(initialize=False)
    answer = srv.call("workspace/executeCommand", {"command": "peerlint.status", "arguments": []}, 60)
    assert _error_code(answer) == -32002, answer
    srv.notify("textDocument/didOpen", {"textDocument": {"uri": (s.workdir / "early.tex").as_uri(),
                                                          "languageId": "latex", "version": 1, "text": "Early."}})
    srv.initialize(s.workdir, s.options(), timeout=120)
    s.open()
    return "request: ServerNotInitialized (-32002); notification dropped"


def unknown_methods(s: Session) -> str:
    answer = s.server.call("peerlint/noSuchMethod", {"x": 1})
    assert _error_code(answer) == -32601, answer
    s.server.notify("peerlint/noSuchNotification", {"x": 1})
    s.server.notify("$/noSuchNotification", {})
    return "request: MethodNotFound (-32601); notifications ignored"


def invalid_json(s: Session) -> str:
    s.server.send(b"{this is not json")
    answer = s.server.reply(None)
    assert _error_code(answer) == -32700, answer
    return "Parse error (-32700), id null"


def not_a_request(s: Session) -> str:
    for payload in (b"[1, 2, 3]", b'"a string"', b"null", json.dumps({"jsonrpc": "1.0", "id": 5, "method": "x"}).encode()):
        s.server.send(payload)
        answer = s.server.reply(None)
        assert _error_code(answer) == -32600, (payload, answer)
    s.server.send({"jsonrpc": "2.0", "id": {"an": "object"}, "method": "textDocument/hover", "params": {}})
    assert _error_code(s.server.reply(None)) == -32600
    return "batch, string, null, jsonrpc 1.0, an object id: Invalid Request (-32600)"


def invalid_params(s: Session) -> str:
    msg_id = s.server.request("textDocument/hover", {"nonsense": True})
    answer = s.server.reply(msg_id)
    assert _error_code(answer) == -32602, answer
    msg_id = s.server.request("textDocument/hover", {"textDocument": {"uri": s.uri}, "position": {"line": -1, "character": 0}})
    assert _error_code(s.server.reply(msg_id)) == -32602
    return "Invalid params (-32602) to the request's id"


def content_length_too_short(s: Session) -> str:
    body = json.dumps({"jsonrpc": "2.0", "id": "short", "method": "peerlint/noSuchMethod"}).encode()
    s.server.write(b"Content-Length: %d\r\n\r\n" % (len(body) - 7) + body)
    assert _error_code(s.server.reply(None)) == -32700
    return "Parse error for the cut body; the next message is read"


def content_length_too_long(s: Session) -> str:
    body = json.dumps({"jsonrpc": "2.0", "id": "long", "method": "peerlint/noSuchMethod"}).encode()
    s.server.write(b"Content-Length: %d\r\n\r\n" % (len(body) + 11) + body)
    follow = s.server.request("workspace/executeCommand", {"command": "peerlint.status", "arguments": []})
    assert _error_code(s.server.reply("long")) == -32601
    assert "result" in s.server.reply(follow)
    return "the message and the one whose bytes it swallowed are both served"


def odd_headers(s: Session) -> str:
    body = json.dumps({"jsonrpc": "2.0", "id": "lower", "method": "peerlint/noSuchMethod"}).encode()
    s.server.write(b"content-length:%d\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" % len(body) + body)
    assert _error_code(s.server.reply("lower")) == -32601
    s.server.write(b"\xff\xfe\x00 binary garbage between frames\r\n\r\n")
    s.server.write(b"Content-Length: 999999999999\r\n\r\n{}")
    return "lower-case header and Content-Type read; garbage and an over-limit length skipped"


def deep_json(s: Session) -> str:
    s.server.send(b"[" * 200_000 + b"]" * 200_000)
    assert _error_code(s.server.reply(None)) == -32700
    s.server.send({"jsonrpc": "2.0", "id": "big", "method": "peerlint/noSuchMethod", "params": {"x": "a" * 5_000_000}})
    assert _error_code(s.server.reply("big")) == -32601
    return "200,000-deep nesting: Parse error; a 5 MB message: answered"


def _change(s: Session, start: tuple[int, int], end: tuple[int, int], text: str) -> None:
    s.version += 1
    s.server.notify("textDocument/didChange", {
        "textDocument": {"uri": s.uri, "version": s.version},
        "contentChanges": [{"range": {"start": {"line": start[0], "character": start[1]},
                                      "end": {"line": end[0], "character": end[1]}}, "text": text}]})


def _published(s: Session, version: int, timeout: float = 60.0) -> list[dict]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for n in reversed(s.server.notifications):
            p = n.get("params") or {}
            if n["method"] == "textDocument/publishDiagnostics" and p.get("uri") == s.uri and p.get("version") == version:
                return p["diagnostics"]
        s.server.drain(0.2)
    raise AssertionError(f"no diagnostics for version {version} within {timeout:g} s")


def inside(text: str, rng: dict) -> bool:
    """Is an LSP range (UTF-16 units) inside `text`?"""
    lines = text.split("\n")

    def ok(p: dict) -> bool:
        return 0 <= p["line"] < len(lines) and 0 <= p["character"] <= len(lines[p["line"]].encode("utf-16-le")) // 2
    return ok(rng["start"]) and ok(rng["end"]) and (rng["start"]["line"], rng["start"]["character"]) <= (rng["end"]["line"], rng["end"]["character"])


def out_of_range_changes(s: Session) -> str:
    _change(s, (500, 0), (600, 3), "lost")  # lines past the end
    _change(s, (4, 5), (3, 0), "reversed")  # end before start
    _change(s, (3, 100_000), (3, 100_001), "")  # characters past the line's end
    s.version += 1
    s.server.notify("textDocument/didChange", {"textDocument": {"uri": s.uri, "version": s.version},
                                               "contentChanges": [{"text": DOC}]})  # a full resync
    diags = _published(s, s.version)
    assert all(inside(DOC, d["range"]) for d in diags), diags
    hover = s.server.call("textDocument/hover", {"textDocument": {"uri": s.uri}, "position": {"line": 10_000, "character": 0}})
    assert "result" in hover and hover["result"] is None, hover
    return f"ignored or clamped; after a full change, {len(diags)} diagnostics all inside the document"


def never_opened(s: Session) -> str:
    ghost = (s.workdir / "ghost.tex").as_uri()
    s.server.notify("textDocument/didChange", {"textDocument": {"uri": ghost, "version": 2},
                                               "contentChanges": [{"text": "Ghost text."}]})
    s.server.notify("textDocument/didClose", {"textDocument": {"uri": ghost}})
    answer = s.server.call("textDocument/hover", {"textDocument": {"uri": ghost}, "position": {"line": 0, "character": 0}})
    assert answer.get("result") is None and "error" not in answer, answer
    s.server.drain(0.5)
    assert not any((n.get("params") or {}).get("uri") == ghost for n in s.server.notifications)
    return "change/close of a document never opened: ignored; hover: null"


def cancel_running_command(s: Session) -> str:
    """*Check novelty* waits on an LLM host that never answers; cancelling it answers at once and
    every other request keeps being served while the worker finishes."""
    msg_id = s.server.request("workspace/executeCommand", {"command": "peerlint.checkNovelty",
                                                            "arguments": [{"uri": s.uri, "line": 3, "character": 5}]})
    s.server.drain(1.0)
    s.server.notify("$/cancelRequest", {"id": msg_id})
    started = time.monotonic()
    answer = s.server.reply(msg_id, 10)
    waited = time.monotonic() - started
    assert _error_code(answer) == -32800 or "result" in answer, answer
    assert s.serving(5), "status not answered while the cancelled command's worker runs"
    s.server.notify("$/cancelRequest", {"id": 987654})  # unknown id: ignored
    return f"answered {'RequestCancelled (-32800)' if 'error' in answer else 'its result'} in {waited * 1000:.0f} ms"


def shutdown_then_requests(s: Session) -> str:
    assert "result" in s.server.call("shutdown", None)
    answer = s.server.call("textDocument/hover", {"textDocument": {"uri": s.uri}, "position": {"line": 0, "character": 0}})
    assert _error_code(answer) == -32600, answer
    s.server.notify("exit")
    code = s.server.proc.wait(15)
    assert code == 0, f"exit status {code}"
    s.server = None
    return "after shutdown: InvalidRequest (-32600); exit: status 0 within 15 s"


def exit_without_shutdown(s: Session) -> str:
    srv = s.start()
    srv.notify("exit")
    code = srv.proc.wait(15)
    assert code == 1, f"exit status {code}"
    s.server = None
    return "exit without shutdown: status 1 (LSP)"


def stdin_closed(s: Session) -> str:
    srv = s.start()
    srv.proc.stdin.close()
    code = srv.proc.wait(15)
    s.server = None
    return f"stdin closed: the server left with status {code} within 15 s"


CASES: list[tuple[str, Callable[[Session], str]]] = [
    ("requests before initialize", before_initialize),
    ("unknown methods", unknown_methods),
    ("invalid JSON", invalid_json),
    ("not a JSON-RPC request", not_a_request),
    ("invalid params", invalid_params),
    ("Content-Length too short", content_length_too_short),
    ("Content-Length too long", content_length_too_long),
    ("odd headers and garbage", odd_headers),
    ("deep and large JSON", deep_json),
    ("out-of-range didChange", out_of_range_changes),
    ("documents never opened", never_opened),
    ("$/cancelRequest of a running command", cancel_running_command),
    ("requests after shutdown", shutdown_then_requests),
    ("exit without shutdown", exit_without_shutdown),
    ("stdin closed", stdin_closed),
]
_ENDS_SESSION = {shutdown_then_requests, exit_without_shutdown, stdin_closed}


def run_protocol_cases(workdir: Path, index: Path | None, names: list[str] | None = None) -> list[CaseResult]:
    """Every case (or those named) against one server, restarted after a case that kills it."""
    host = HangingHost()
    s = Session(workdir, index, host.url)
    results: list[CaseResult] = []
    try:
        for name, fn in CASES:
            if names and name not in names:
                continue
            if s.server is None or not s.server.alive():
                s.start()
            result = run_case("protocol", name, lambda: fn(s))
            if fn not in _ENDS_SESSION and not (s.server is not None and s.server.alive() and s.serving(10)):
                result.crashed, result.ok = True, False
                result.detail += "; the server stopped answering"
                s.start()
                result.recovered = s.serving(10)
            result.figures = {"server_rss_mb": s.server.rss_mb() if s.server is not None else None}
            results.append(result)
    finally:
        if s.server is not None:
            s.server.stop(5)
        host.close()
    return results
