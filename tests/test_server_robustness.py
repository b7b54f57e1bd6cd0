"""The server under abuse: UTF-16 and CRLF positions, superseded work, malformed JSON-RPC."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from lsp_support import CACHE, CONFIG, diagnostics_for, open_file, start
from peerlint.benchmarks.robustness.stdio import RawServer

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


def test_malformed_messages_do_not_kill_the_server(tmp_path):
    srv = RawServer.start(Path(CACHE))
    try:
        srv.send(b"{this is not json")
        srv.request("initialize", {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {},
                                   "initializationOptions": {"indexPath": str(tmp_path / "none")}}, msg_id=1)
        init = srv.reply(1, timeout=60)
        assert "capabilities" in init["result"]
        assert init["result"]["capabilities"]["textDocumentSync"]["change"] == 2  # incremental
        srv.request("textDocument/hover", {"nonsense": True}, msg_id=2)
        srv.request("workspace/executeCommand", {"command": "peerlint.status", "arguments": []}, msg_id=3)
        assert srv.reply(3, timeout=60)["result"]["index"]["ok"] is False  # still serving after both bad messages
        srv.request("shutdown", msg_id=4)
        srv.notify("exit")
        assert srv.proc.wait(timeout=60) == 0
    finally:
        srv.proc.kill()


# What a model load does to the process's stdout: llama-cpp-python (verbose=False) points fd 1 at
# /dev/null until the model is loaded; a library may also print. Run as its own process, with the
# server's LSP channel given by `channel` (and `prelude` run first).
_LOAD_WHILE_ANSWERING = """
import os, sys
{prelude}
from llama_cpp._utils import suppress_stdout_stderr
from peerlint.server.lsp import private_stdout
out = {channel}
print("a library prints")
sys.stdout.flush()
with suppress_stdout_stderr(disable=False):
    out.write(b"Content-Length: 2\\r\\n\\r\\n{{}}")
    out.flush()
"""


def _run_load_while_answering(channel: str, prelude: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", _LOAD_WHILE_ANSWERING.format(channel=channel, prelude=prelude)],
                          capture_output=True, timeout=120)


def test_a_model_load_in_another_thread_cannot_swallow_a_message():
    """The flaky code-lens test's cause: a response written while the LLM worker loaded its model went
    to /dev/null, and the client waited for ever. On the server's private channel it arrives, and a
    library's print goes to the log instead of into the protocol stream."""
    plain = _run_load_while_answering("sys.stdout.buffer")
    assert plain.stdout == b"a library prints\n"  # the hazard: the message is gone, the print corrupts
    private = _run_load_while_answering("private_stdout()")
    assert private.returncode == 0, private.stderr.decode()
    assert private.stdout == b"Content-Length: 2\r\n\r\n{}"
    assert b"a library prints" in private.stderr
    closed = _run_load_while_answering("private_stdout()", prelude="os.close(2)")  # an editor gave no stderr
    assert closed.returncode == 0 and closed.stdout == b"Content-Length: 2\r\n\r\n{}"


def test_a_log_level_that_names_none_logs_at_info_and_says_so():
    from peerlint.server.lsp import log_level

    assert log_level(None) == (logging.INFO, None) and log_level(" debug ") == (logging.DEBUG, None)
    for garbage in ("", "verbose", "10", "Level 5", "\x00"):
        level, problem = log_level(garbage)
        if garbage == "":
            assert (level, problem) == (logging.INFO, None)  # set but empty: the default
        else:
            assert level == logging.INFO and "PEERLINT_LOG_LEVEL" in problem and "DEBUG, INFO" in problem
