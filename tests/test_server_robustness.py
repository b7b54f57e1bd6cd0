"""The server under abuse: UTF-16 and CRLF positions, superseded work, malformed JSON-RPC."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from lsp_support import CACHE, CONFIG, diagnostics_for, open_file, start

PARAGRAPH = [
    "Predicting the rating of a textual review is a fast-growing application of natural language processing.",
    "Most existing approaches either rely on hand-crafted features or learn features with deep networks from flat",
    "text, ignoring the hierarchy in the data. We use a hierarchical bi-directional self-attention network for",
    "predicting and recommending paper review ratings 🙂, exploiting the hierarchical structure of paper reviews",
    "with sentence, intra-review and inter-review encoders 🚀🚀 at three levels.",
]


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient, index_path, tmp_path):
    lsp_client.root = tmp_path
    await start(lsp_client, tmp_path, {"indexPath": str(index_path), "debounceMs": 50})
    yield
    await lsp_client.shutdown_session()


async def test_emoji_and_crlf_ranges_are_utf16_exact(client: LanguageClient):
    lines = ["\\documentclass{article}", "\\begin{document}", "\\section{Method} 🙂 ok", "", *PARAGRAPH, "",
             "\\end{document}", ""]
    text = "\r\n".join(lines)
    path = client.root / "crlf.tex"
    path.write_bytes(text.encode("utf-8"))
    uri = open_file(client, path, text=text)
    diags = [d for d in await diagnostics_for(client, uri) if d.code == "close-prior-work"]
    assert diags, "the paraphrase should be flagged"
    rng = diags[0].range
    assert rng.start == lsp.Position(4, 0)
    last = PARAGRAPH[-1]
    assert rng.end == lsp.Position(8, utf16_len(last)), (rng.end, len(last), utf16_len(last))


async def test_superseded_edits_are_never_published(client: LanguageClient):
    path = client.root / "doc.tex"
    body = "\\documentclass{article}\n\\begin{document}\n\\section{Method}\n" + "\n".join(PARAGRAPH) + "\n\\end{document}\n"
    path.write_text(body)
    uri = open_file(client, path)
    await diagnostics_for(client, uri, version=1)
    for v in range(2, 12):  # a burst: each edit cancels the analysis the previous one scheduled
        client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(uri=uri, version=v),
            [lsp.TextDocumentContentChangePartial(range=lsp.Range(lsp.Position(3, 0), lsp.Position(3, 0)), text="a")]))
    await diagnostics_for(client, uri, version=11)
    published = [v for u, v in client.published_versions if u == uri]
    assert published[-1] == 11
    assert all(v in (1, 11) for v in published), published


def _frame(payload: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(payload) + payload


class _Reader:
    """JSON-RPC frames from a pipe, with a deadline so a silent server fails the test instead of hanging it."""

    def __init__(self, stream):
        self.fd = stream.fileno()
        self.buf = b""

    def _fill(self, deadline: float) -> None:
        import select
        import time

        left = deadline - time.monotonic()
        if left <= 0 or not select.select([self.fd], [], [], left)[0]:
            raise TimeoutError("the server sent nothing in time")
        chunk = os.read(self.fd, 65536)
        if not chunk:
            raise EOFError("server closed stdout")
        self.buf += chunk

    def message(self, timeout: float = 60.0) -> dict:
        import time

        deadline = time.monotonic() + timeout
        while b"\r\n\r\n" not in self.buf:
            self._fill(deadline)
        head, _, rest = self.buf.partition(b"\r\n\r\n")
        length = int(next(l.split(b":")[1] for l in head.split(b"\r\n") if l.lower().startswith(b"content-length")))
        while len(rest) < length:
            self._fill(deadline)
            head, _, rest = self.buf.partition(b"\r\n\r\n")
        self.buf = rest[length:]
        return json.loads(rest[:length])

    def reply(self, msg_id: int) -> dict:
        while True:
            m = self.message()
            if m.get("id") == msg_id and "method" not in m:
                return m


def test_malformed_messages_do_not_kill_the_server(tmp_path):
    env = {**os.environ, "PEERLINT_CACHE_DIR": CACHE, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "peerlint", "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env)
    try:
        proc.stdin.write(_frame(b"{this is not json"))
        proc.stdin.write(_frame(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {},
            "initializationOptions": {"indexPath": str(tmp_path / "none")}}}).encode()))
        proc.stdin.flush()
        reader = _Reader(proc.stdout)
        init = reader.reply(1)
        assert "capabilities" in init["result"]
        assert init["result"]["capabilities"]["textDocumentSync"]["change"] == 2  # incremental
        bad = {"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": {"nonsense": True}}
        proc.stdin.write(_frame(json.dumps(bad).encode()))
        proc.stdin.write(_frame(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "workspace/executeCommand",
                                            "params": {"command": "peerlint.status", "arguments": []}}).encode()))
        proc.stdin.flush()
        assert reader.reply(3)["result"]["index"]["ok"] is False  # still serving after both bad messages
        proc.stdin.write(_frame(json.dumps({"jsonrpc": "2.0", "id": 4, "method": "shutdown"}).encode()))
        proc.stdin.write(_frame(json.dumps({"jsonrpc": "2.0", "method": "exit"}).encode()))
        proc.stdin.flush()
        assert proc.wait(timeout=60) == 0
    finally:
        proc.kill()
