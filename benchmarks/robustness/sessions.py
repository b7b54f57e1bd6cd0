"""Random editor sessions against the real `peerlint serve`: open, change (random UTF-16 ranges, some
past the line's end or inside a surrogate pair), hover, code actions and close, sent without waiting.
Checked: the server answers every request, every diagnostic range lies inside the text of the version
it was published for, versions are never published out of order, and the diagnostics of the final
version equal a fresh check of the final text (no stale findings)."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from pathlib import Path

from .cases import CaseResult, Crash
from .fuzz import PROSE, utf16_lines
from .stdio import Closed, RawServer, Silent
from ...server.diagnostics import to_diagnostic
from ...server.service import Service
from ...settings import Settings

PAPER = ("Predicting the rating of a textual review is a fast-growing application of natural language processing. "
         "Most existing approaches either rely on hand-crafted features or learn features with deep networks from flat "
         "text, ignoring the hierarchy in the data. We use a hierarchical bi-directional self-attention network for "
         "predicting and recommending paper review ratings, exploiting the hierarchical structure of paper reviews "
         "with sentence, intra-review and inter-review encoders at three levels.")
START = ("\\documentclass{article}\n\\begin{document}\n\\section{Introduction}\nWe study things \U0001F600 carefully.\r\n\r\n"
         "\\section{Method}\nOur method \\cite{k} works.\n\n\n" + PAPER + "\n\\end{document}\n")
INSERTS = PROSE + ("\\section{New}", "\\begin{itemize}\\item x", "}", "{", "$x$", "%", "\U0001F600", "\n", "")


def _inside(text: str, rng: dict) -> bool:
    widths = utf16_lines(text)
    s, e = rng["start"], rng["end"]
    ok = all(0 <= p["line"] < len(widths) and 0 <= p["character"] <= widths[p["line"]] for p in (s, e))
    return ok and (s["line"], s["character"]) <= (e["line"], e["character"])


def _random_position(rng: random.Random, text: str, lines: tuple[int, int] | None = None) -> dict:
    """A position in `text`, on a line of `lines` [first, last) when given; now and then past a
    line's end (and, without `lines`, one line past the text's end)."""
    widths = utf16_lines(text)
    if lines is not None and lines[0] < min(lines[1], len(widths)):
        line = rng.randrange(lines[0], min(lines[1], len(widths)))
    else:
        line = rng.randrange(len(widths) + (1 if rng.random() < 0.05 else 0))
    width = widths[line] if line < len(widths) else 0
    return {"line": line, "character": rng.randint(0, width + (3 if rng.random() < 0.1 else 0))}


def _editable(text: str) -> tuple[int, int] | None:
    """The lines edits go to: below the preamble and \\begin{document}, above the blank lines before the
    paraphrase of a published abstract, so the final check has a finding to agree on (unless an edit
    above changes how it parses)."""
    return (2, len(utf16_lines(text[: text.index(PAPER)])) - 2) if PAPER in text else None


def _ordered(a: dict, b: dict) -> tuple[dict, dict]:
    return (a, b) if (a["line"], a["character"]) <= (b["line"], b["character"]) else (b, a)


@dataclass
class SessionLog:
    texts: dict[int, str] = field(default_factory=dict)  # version -> the text the server holds
    published: list[tuple[int, list[dict]]] = field(default_factory=list)
    requests: int = 0


def _diag_key(d: dict) -> tuple:
    r = d["range"]
    return (d.get("code"), r["start"]["line"], r["start"]["character"], r["end"]["line"], r["end"]["character"], d["message"])


def fresh_check(workdir: Path, index: Path, path: Path, text: str) -> list[tuple]:
    """The diagnostics a new server would publish for `text` (in-process, with an empty judgment cache)."""

    uri = path.as_uri()
    service = Service(Settings(index_path=str(index)), workspace=workdir, cache_dir=workdir / "fresh-cache")
    service.opened(uri, text)
    state = service.analyze(uri, "fast")
    diags = [to_diagnostic(j) for j in state.judgments.get(uri, [])]
    return sorted(_diag_key({"code": d.code, "message": d.message, "range": _range_json(d.range)}) for d in diags)


def _range_json(r) -> dict:
    return {"start": {"line": r.start.line, "character": r.start.character},
            "end": {"line": r.end.line, "character": r.end.character}}


def random_session(workdir: Path, index: Path, seed: int, ops: int = 40) -> CaseResult:
    """One random session of `ops` operations; see the module docstring for what is checked."""
    from lsprotocol import types as lsp
    from pygls.workspace import TextDocument

    rng = random.Random(seed)
    path = workdir / f"session{seed}.tex"
    path.write_text(START)
    uri = path.as_uri()
    doc = TextDocument(uri, START, version=1)
    log = SessionLog({1: START})
    server = RawServer.start(workdir / "cache")
    started = time.monotonic()
    try:
        server.initialize(workdir, {"indexPath": str(index), "debounceMs": rng.choice([0, 20, 100])}, timeout=120)
        server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "latex", "version": 1, "text": START}})
        pending: list = []
        seen_diags: list[dict] = []
        for _ in range(ops):
            op = rng.random()
            if op < 0.55:
                above = _editable(doc.source)
                a = _random_position(rng, doc.source, above)
                b = dict(a, character=a["character"] + rng.randint(0, 6)) if rng.random() < 0.97 \
                    else _random_position(rng, doc.source, above)  # mostly typing-sized edits, now and then a wide one
                a, b = _ordered(a, b)
                typed = rng.choice(("e", "word ", "", "s")) if rng.random() < 0.7 else rng.choice(INSERTS)
                change = {"range": {"start": a, "end": b}, "text": typed}
                version = doc.version + 1
                doc.apply_change(lsp.TextDocumentContentChangePartial(
                    range=lsp.Range(lsp.Position(**a), lsp.Position(**b)), text=change["text"]))
                doc.version = version
                log.texts[version] = doc.source
                server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                         "contentChanges": [change]})
            elif op < 0.75:
                pending.append(server.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                                      "position": _random_position(rng, doc.source)}))
            elif op < 0.88:
                a, b = _ordered(_random_position(rng, doc.source), _random_position(rng, doc.source))
                diags = rng.sample(seen_diags, min(len(seen_diags), 2))
                pending.append(server.request("textDocument/codeAction", {
                    "textDocument": {"uri": uri}, "range": {"start": a, "end": b}, "context": {"diagnostics": diags}}))
            else:
                time.sleep(rng.choice([0.05, 0.3, 1.0]))  # pauses let some versions be published
            server.drain(0.0)
            seen_diags = [d for n in server.notifications if n["method"] == "textDocument/publishDiagnostics"
                          for d in n["params"]["diagnostics"]][-10:]
        for msg_id in pending:
            answer = server.reply(msg_id, 60)
            log.requests += 1
            if "error" in answer:
                raise AssertionError(f"request {msg_id} answered with an error: {answer['error']}")
        final = doc.version
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not any(
                n["method"] == "textDocument/publishDiagnostics" and n["params"].get("version") == final
                for n in server.notifications):
            server.drain(0.2)
    except (Silent, Closed, OSError) as exc:
        raise Crash(f"the server stopped answering: {exc}") from None
    finally:
        server.stop(10)
    for n in server.notifications:
        if n["method"] == "textDocument/publishDiagnostics" and n["params"]["uri"] == uri:
            log.published.append((n["params"].get("version"), n["params"]["diagnostics"]))
    versions = [v for v, _ in log.published]
    assert versions and versions[-1] == final, f"the final version {final} was not published last: {versions[-8:]}"
    assert versions == sorted(versions), f"versions published out of order: {versions}"
    outside = [(v, d["range"]) for v, ds in log.published for d in ds if not _inside(log.texts[v], d["range"])]
    assert not outside, f"ranges outside their document: {outside[:3]}"
    got = sorted(_diag_key(d) for d in log.published[-1][1])
    want = fresh_check(workdir, index, path, doc.source)
    assert got == want, f"final diagnostics differ from a fresh check: {got} vs {want}"
    return CaseResult("fuzz", f"LSP session (seed {seed})", True, seconds=time.monotonic() - started,
                      detail=f"{ops} operations, {final - 1} edits, {log.requests} requests answered, "
                             f"{len(log.published)} publications, final {len(got)} diagnostics = fresh check",
                      figures={"ops": ops, "edits": final - 1, "publications": len(log.published)})
