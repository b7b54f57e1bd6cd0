"""Load: edits at a fixed rate with hovers in between, for a bounded time, against the real server.
Every 5 s the typist pauses for 0.6 s (so analyses run between bursts and hovers meet them).
The server is measured warm (after its first diagnostics).
Measured: hover latency (p50/p99) and the server's RSS in the first and the last `window` seconds,
and at the end that the final version's diagnostics arrive and equal a fresh check (no stale ones)."""

from __future__ import annotations

import time
from pathlib import Path

from .cases import CaseResult, percentile
from .sessions import PAPER, fresh_check, _diag_key
from .stdio import RawServer

FILLER = ("We describe the data we collected from three venues and how we cleaned it before training the model.",
          "The model is trained with a standard objective and early stopping on a held-out split of the data.",
          "Results show consistent gains over strong baselines on every venue we tried, with small variance.")


def _document(paragraphs: int) -> str:
    body = [PAPER] + [FILLER[i % len(FILLER)] + f" Paragraph {i} adds its own detail." for i in range(paragraphs - 1)]
    return "\\documentclass{article}\n\\begin{document}\n\\section{Method}\n" + "\n\n".join(body) + "\n\\end{document}\n"


def edit_load(workdir: Path, index: Path, seconds: float = 60.0, rate: float = 50.0, window: float = 10.0,
              paragraphs: int = 12) -> CaseResult:
    text = _document(paragraphs)
    path = workdir / "load.tex"
    path.write_text(text)
    uri = path.as_uri()
    srv = RawServer.start(workdir / "cache-load")
    try:
        srv.initialize(workdir, {"indexPath": str(index), "debounceMs": 300}, timeout=120)
        srv.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "latex", "version": 1, "text": text}})
        warm = time.monotonic() + 120  # measure a warm server: the model loaded, the first diagnostics out
        while time.monotonic() < warm and not any(n["method"] == "textDocument/publishDiagnostics" for n in srv.notifications):
            srv.drain(0.2)
        version, lines = 1, text.split("\n")
        target = 5  # the line of the second paragraph: a word is typed and deleted there, over and over
        hovers: list[tuple[float, float]] = []  # (time since start, latency s)
        rss: list[tuple[float, float]] = []
        started = time.monotonic()
        next_tick, next_rss, typed = started, started, False
        while (now := time.monotonic()) - started < seconds:
            elapsed = now - started
            if elapsed % 5.0 > 4.4:  # the pause
                time.sleep(0.05)
                srv.drain(0.0)
                continue
            if now >= next_rss:
                rss.append((elapsed, srv.rss_mb() or 0.0))
                next_rss += 1.0
            version += 1
            col = len(lines[target])
            change = ({"range": {"start": {"line": target, "character": col}, "end": {"line": target, "character": col}}, "text": "x"}
                      if not typed else
                      {"range": {"start": {"line": target, "character": col}, "end": {"line": target, "character": col + 1}}, "text": ""})
            lines[target] = lines[target] + "x" if not typed else lines[target]
            if typed:
                lines[target] = lines[target][:-1]
            typed = not typed
            srv.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]})
            if version % 2 == 0:
                t = time.monotonic()
                srv.call("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 3 + 2 * (version % paragraphs), "character": 4}}, 30)
                hovers.append((t - started, time.monotonic() - t))
            srv.drain(0.0)
            next_tick += 1.0 / rate
            time.sleep(max(0.0, next_tick - time.monotonic()))
        last_edit = time.monotonic()
        final = version
        deadline = last_edit + 120
        while time.monotonic() < deadline and not any(
                n["method"] == "textDocument/publishDiagnostics" and n["params"].get("version") == final for n in srv.notifications):
            srv.drain(0.2)
        lag = time.monotonic() - last_edit
        published = [n["params"] for n in srv.notifications if n["method"] == "textDocument/publishDiagnostics"]
        rss_end = srv.rss_mb()
    finally:
        srv.stop(10)
    final_text = "\n".join(lines)
    assert published and published[-1]["version"] == final, f"the last version ({final}) was not published last"
    got = sorted(_diag_key(d) for d in published[-1]["diagnostics"])
    want = fresh_check(workdir, index, path, final_text)
    assert got == want, f"final diagnostics differ from a fresh check: {got} vs {want}"
    first = [l for t, l in hovers if t < window]
    last = [l for t, l in hovers if t >= seconds - window]
    rss_first = [m for t, m in rss if t < window]
    rss_last = [m for t, m in rss if t >= seconds - window]
    figures = {
        "seconds": seconds, "edits": final - 1, "edit_rate": round((final - 1) / seconds, 1), "hovers": len(hovers),
        "hover_p50_ms": round(1000 * percentile([l for _, l in hovers], 0.5), 1),
        "hover_p99_ms": round(1000 * percentile([l for _, l in hovers], 0.99), 1),
        "hover_p99_first_ms": round(1000 * (percentile(first, 0.99) or 0), 1),
        "hover_p99_last_ms": round(1000 * (percentile(last, 0.99) or 0), 1),
        "rss_first_mb": round(sum(rss_first) / max(1, len(rss_first)), 1),
        "rss_last_mb": round(sum(rss_last) / max(1, len(rss_last)), 1),
        "rss_end_mb": rss_end, "publications": len(published),
        "last_edit_to_diagnostics_s": round(lag, 2), "final_diagnostics": len(got),
    }
    figures["rss_drift_mb"] = round(figures["rss_last_mb"] - figures["rss_first_mb"], 1)
    return CaseResult("load", f"{rate:g} edits/s for {seconds:g} s with hovers", True, figures=figures,
                      detail=f"{figures['edits']} edits ({figures['edit_rate']}/s), {len(hovers)} hovers: p99 "
                             f"{figures['hover_p99_first_ms']} ms first {window:g} s, {figures['hover_p99_last_ms']} ms last; "
                             f"RSS {figures['rss_first_mb']} -> {figures['rss_last_mb']} MB; final diagnostics "
                             f"{lag:.1f} s after the last edit, equal to a fresh check")
