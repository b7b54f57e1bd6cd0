"""Judgments become LSP diagnostics, and diagnostics' payloads become hovers and edits.

As in vale-ls, the raw finding rides in `Diagnostic.data`; hovers and code actions read it back
and never recompute what the analyzer already knew.
"""

from __future__ import annotations

from lsprotocol import types as lsp

from ..types import Judgment, Range

SOURCE = "peerlint"
SEVERITY = {
    "error": lsp.DiagnosticSeverity.Error,
    "warning": lsp.DiagnosticSeverity.Warning,
    "information": lsp.DiagnosticSeverity.Information,
    "hint": lsp.DiagnosticSeverity.Hint,
}
DOCS = "https://github.com/peerlint/peerlint#diagnostics"


def to_lsp_range(r: Range) -> lsp.Range:
    return lsp.Range(lsp.Position(r.start.line, r.start.character), lsp.Position(r.end.line, r.end.character))


def to_diagnostic(j: Judgment) -> lsp.Diagnostic:
    rng = j.range or j.chunk.range
    return lsp.Diagnostic(
        range=to_lsp_range(rng),
        message=j.message,
        severity=SEVERITY.get(j.severity, lsp.DiagnosticSeverity.Information),
        code=j.code,
        code_description=lsp.CodeDescription(href=f"{DOCS}-{j.code}"),
        source=SOURCE,
        data={"code": j.code, "score": j.score, "chunk_hash": j.chunk.hash, "section": j.chunk.section,
              "evidence": j.evidence},
    )


def hover_markdown(hits: list[dict], judgments: list[dict]) -> str:
    """Findings first (what to act on), then the retrieved papers behind them."""
    lines: list[str] = []
    for d in judgments:
        score = f" (score {d['score']:.2f})" if isinstance(d.get("score"), (int, float)) else ""
        lines.append(f"**peerlint `{d['code']}`**{score}: {d['message']}")
        detail = (d.get("evidence") or {}).get("explanation")
        if detail:
            lines.append(f"> {detail}")
        lines.extend(_rating_lines(d.get("evidence") or {}))
    if hits:
        if lines:
            lines.append("")
        lines.append("**Nearest indexed papers**")
        lines.append("")
        lines.append("| sim | venue | year | title |")
        lines.append("|---:|---|---|---|")
        for h in hits:
            title = h["title"].replace("|", "\\|")
            title = f"[{title}]({h['url']})" if h.get("url") else title
            lines.append(f"| {h['similarity']:.2f} | {h.get('venue') or ''} | {h.get('year') or ''} | {title} |")
    return "\n".join(lines)


def _rating_lines(evidence: dict) -> list[str]:
    """A quality/style rating's distribution over 1..10 and the reference passages it was compared with."""
    lines = []
    dist = evidence.get("distribution") or []
    if dist:
        lines.append("Rating distribution: " + " ".join(f"{i}:{p:.2f}" for i, p in enumerate(dist, 1) if p >= 0.01))
    for i, ref in enumerate(evidence.get("references") or [], 1):
        where = " ".join(str(x) for x in (ref.get("venue"), ref.get("year")) if x)
        lines.append(f"Reference {i}: *{ref.get('title', '')}* ({where}, similarity {ref.get('similarity', 0):.2f})")
    return lines
