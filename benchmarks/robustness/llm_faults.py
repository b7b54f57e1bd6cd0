"""The LLM host fails: closed, hanging (accepts, never answers), answering garbage, dying mid-stream.
Against the real server with the LLM tier on (`quality`, scored by the LLM) and a short
`llmTimeoutS`: the fast tier's diagnostics still arrive, hovers stay fast, *Check novelty* answers
within its bound, and the LLM failure is shown once however many edits follow."""

from __future__ import annotations

import time
from pathlib import Path

from .cases import CaseResult, run_case
from .hosts import FakeOllama, HangingHost, closed_url
from .stdio import RawServer

PARAPHRASE = ("Predicting the rating of a textual review is a fast-growing application of natural language processing. "
              "Most existing approaches either rely on hand-crafted features or learn features with deep networks from flat "
              "text, ignoring the hierarchy in the data. We use a hierarchical bi-directional self-attention network for "
              "predicting and recommending paper review ratings, exploiting the hierarchical structure of paper reviews "
              "with sentence, intra-review and inter-review encoders at three levels.")
OTHERS = ["We describe the data we collected from three venues and how we cleaned it before training.",
          "The model is trained with a standard cross-entropy objective and early stopping on a held-out split.",
          "Results show consistent gains over strong baselines on every venue we tried, with small variance."]
DOC = ("\\documentclass{article}\n\\begin{document}\n\\section{Method}\n" + PARAPHRASE + "\n\n"
       + "\n\n".join(OTHERS) + "\n\\end{document}\n")
TIMEOUT_S = 3


def _wait_diagnostics(srv: RawServer, uri: str, version: int, limit: float) -> list[dict]:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        for n in reversed(srv.notifications):
            p = n.get("params") or {}
            if n["method"] == "textDocument/publishDiagnostics" and p.get("uri") == uri and p.get("version") == version:
                return p["diagnostics"]
        srv.drain(0.2)
    raise AssertionError(f"no diagnostics for version {version} within {limit:g} s")


def _llm_messages(srv: RawServer) -> list[str]:
    return [n["params"]["message"] for n in srv.notifications
            if n["method"] == "window/showMessage" and "LLM" in n["params"]["message"]]


def llm_host_fault(workdir: Path, index: Path, mode: str) -> CaseResult:
    host = HangingHost() if mode == "hanging" else FakeOllama(mode) if mode in ("garbage", "midstream") else None
    url = host.url if host is not None else closed_url()
    srv = RawServer.start(workdir / f"cache-{mode}")
    figures: dict = {}
    try:
        srv.initialize(workdir, {"indexPath": str(index), "backend": "ollama", "ollamaHost": url, "debounceMs": 0,
                                 "analyzers": ["prior-work", "quality"], "draftsScorer": "llm",
                                 "llmTimeoutS": TIMEOUT_S}, timeout=120)
        path = workdir / f"llm-{mode}.tex"
        path.write_text(DOC)
        uri = path.as_uri()
        started = time.monotonic()
        srv.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "latex", "version": 1, "text": DOC}})
        diags = _wait_diagnostics(srv, uri, 1, 120)
        figures["fast_diagnostics_s"] = round(time.monotonic() - started, 2)
        assert any(d["code"] == "close-prior-work" for d in diags), f"the fast tier lost its finding: {diags}"
        hovers = []
        for line in (3, 5, 7, 3, 9):
            t = time.monotonic()
            answer = srv.call("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": line, "character": 3}}, 10)
            hovers.append(time.monotonic() - t)
            assert "error" not in answer, answer
        figures["hover_max_ms"] = round(max(hovers) * 1000, 1)
        t = time.monotonic()
        novelty = srv.call("workspace/executeCommand", {"command": "peerlint.checkNovelty",
                                                         "arguments": [{"uri": uri, "line": 3, "character": 5}]}, 120)
        figures["check_novelty_s"] = round(time.monotonic() - t, 2)
        assert "result" in novelty, novelty
        for version in (2, 3):  # two more edits: the fast tier answers each, the LLM failure is not repeated
            srv.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [
                {"range": {"start": {"line": 5, "character": 0}, "end": {"line": 5, "character": 2}}, "text": "We"}]})
            diags = _wait_diagnostics(srv, uri, version, 120)
            assert any(d["code"] == "close-prior-work" for d in diags)
        srv.drain(TIMEOUT_S + 2.0)  # let the last LLM run end
        said = _llm_messages(srv)
        figures["llm_messages"] = len(said)
        assert len(said) == 1, f"the LLM failure was reported {len(said)} times: {said}"
        # a hover that waited on the failing host would take its whole timeout; a busy machine's slow hover does not
        assert figures["hover_max_ms"] < TIMEOUT_S * 1000, figures
        return CaseResult("llm", f"LLM host {mode}", True, figures=figures,
                          detail=f"fast diagnostics in {figures['fast_diagnostics_s']} s, hovers ≤ {figures['hover_max_ms']} ms, "
                                 f"Check novelty answered in {figures['check_novelty_s']} s, reported once: {said[0][:120]}")
    finally:
        srv.stop(10)
        if host is not None:
            host.close()


MODES = ("closed", "hanging", "garbage", "midstream")


def run_llm_faults(workdir: Path, index: Path, modes: tuple[str, ...] = MODES) -> list[CaseResult]:
    return [run_case("llm", f"LLM host {m}", lambda m=m: llm_host_fault(workdir, index, m)) for m in modes]
