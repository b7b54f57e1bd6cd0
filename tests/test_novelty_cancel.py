"""A cancelled *Check novelty* stops on the server, not only in the editor.

The real server over stdio talks to a loopback Ollama that takes `DELAY` seconds per call, so a
whole check (justification, NOVA's search plan, one judgment per close paper) takes several calls.
Cancelling the request ($/cancelRequest) or its progress (window/workDoneProgress/cancel) must stop
the check after the call in flight: no further call for that paragraph, and the next check's first
call starts at most one call later.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcRequestCancelled
from pytest_lsp import LanguageClient

from llm_fixtures import loopback, needs_model  # noqa: F401  (loopback: a pytest fixture)
from lsp_support import CONFIG, diagnostics_for, line_of, open_file, start

DELAY = 2.5
ANSWER = '{"searches": [], "result": "No", "thinking": "The paper studies another question."}'
PARAGRAPHS = {
    "a": "We propose a hierarchical attention network that predicts the rating of a peer review from its "
         "text, modelling sentences and aspects separately, and show on two conference datasets that it "
         "outperforms flat encoders by a clear margin.",
    "b": "We study how the wording of an abstract influences citation counts, using a corpus of computational "
         "linguistics papers and a regression on lexical features, and find that concrete claims draw more "
         "citations than hedged ones.",
    "c": "We introduce a benchmark of argument mining tasks built from scientific reviews, with annotations of "
         "claims, evidence and requests, and report baselines from fine-tuned transformer encoders.",
}


@pytest.fixture
def nonces() -> dict[str, str]:
    """A fresh word per paragraph: the prompts differ from every earlier run, so no cached answer
    stands in for a call, and each loopback request says which paragraph it is about."""
    return {k: f"Zq{uuid.uuid4().hex[:10]}" for k in PARAGRAPHS}


@pytest.fixture
def project(tmp_path: Path, nonces) -> Path:
    root = tmp_path / "paper"
    root.mkdir()
    body = "\n\n".join(f"{nonces[k]} {text}" for k, text in PARAGRAPHS.items())
    (root / "draft.tex").write_text("\\documentclass{article}\n\\begin{document}\n\\section{Introduction}\n\n"
                                    f"{body}\n\n\\bibliography{{refs}}\n\\end{{document}}\n", encoding="utf-8")
    (root / "refs.bib").write_text("", encoding="utf-8")
    return root


@pytest.fixture
def calls(loopback, monkeypatch):  # noqa: F811
    """(time, request body) of every call the loopback gets."""
    from peerlint.benchmarks.harness import loopback as module

    seen: list[tuple[float, str]] = []
    read = module._Handler._read_json

    def recording(handler):
        body = read(handler)
        seen.append((time.monotonic(), str(body)))
        return body

    monkeypatch.setattr(module._Handler, "_read_json", recording)
    loopback.content_override = ANSWER
    return seen


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient, index_path, project, loopback):  # noqa: F811
    await start(lsp_client, project, {"indexPath": str(index_path), "backend": "ollama", "ollamaHost": loopback.host,
                                      "llmTimeoutS": 60})
    yield
    await lsp_client.shutdown_session()


def about(calls, nonce: str) -> list[float]:
    return [t for t, body in calls if nonce in body]


def where(uri: str, text: str, nonce: str) -> dict:
    return {"uri": uri, "line": line_of(text, nonce), "character": 0}


async def until(what: str, cond, timeout: float = 60.0):
    end = time.monotonic() + timeout
    while not (found := cond()):
        assert time.monotonic() < end, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)
    return found


@needs_model
async def test_cancel_stops_the_check_and_frees_the_llm_worker(client: LanguageClient, project, nonces, calls,
                                                               loopback):  # noqa: F811
    draft = project / "draft.tex"
    text = draft.read_text()
    uri = open_file(client, draft)
    await diagnostics_for(client, uri)
    # a first check, at full speed: the novelty model and the LLM connection are ready afterwards
    warm = await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        "peerlint.checkNovelty", [where(uri, text, nonces["c"])]))
    assert warm["ok"], warm
    whole = len(about(calls, nonces["c"]))
    assert whole >= 2, f"a check makes several LLM calls; this one made {whole}"
    loopback.delay = DELAY

    # $/cancelRequest while the first call about paragraph a is in flight
    params = lsp.ExecuteCommandParams("peerlint.checkNovelty", [where(uri, text, nonces["a"])])
    pending = asyncio.ensure_future(
        client.protocol.send_request_async(lsp.WORKSPACE_EXECUTE_COMMAND, params, msg_id="novelty-a"))
    await until("the first LLM call about paragraph a", lambda: about(calls, nonces["a"]))
    client.protocol.notify(lsp.CANCEL_REQUEST, lsp.CancelParams(id="novelty-a"))
    cancelled_at = time.monotonic()
    with pytest.raises(JsonRpcRequestCancelled):
        await pending
    answer = await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        "peerlint.checkNovelty", [where(uri, text, nonces["b"])]))
    answered_at = time.monotonic()
    assert answer["ok"], answer
    assert len(about(calls, nonces["a"])) == 1, "the cancelled check went on calling the LLM"
    first_b = about(calls, nonces["b"])[0]
    assert first_b - cancelled_at < DELAY + 1.5, "the next check waited for more than the call in flight"
    # without the cancel, paragraph a alone would have kept the worker this long after the cancel
    assert answered_at - cancelled_at < whole * DELAY + len(about(calls, nonces["b"])) * DELAY

    # window/workDoneProgress/cancel (the progress's own Cancel) stops it the same way
    before = len(about(calls, nonces["a"]))
    started = len(client.progress_reports)
    pending = asyncio.ensure_future(client.workspace_execute_command_async(params))
    await until("a new LLM call about paragraph a", lambda: len(about(calls, nonces["a"])) > before)
    token = list(client.progress_reports)[started]
    begin = client.progress_reports[token][0]
    assert begin.title == "peerlint: checking novelty" and begin.cancellable
    assert begin.message is None  # calibrated by the first check: this one does not say "calibrating"
    client.protocol.notify(lsp.WINDOW_WORK_DONE_PROGRESS_CANCEL, lsp.WorkDoneProgressCancelParams(token=token))
    result = await pending
    assert result == {"ok": False, "cancelled": True, "reason": "cancelled"}
    assert len(about(calls, nonces["a"])) == before + 1, "the cancelled check went on calling the LLM"
