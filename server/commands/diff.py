"""`peerlint diff FILE [--rev REV]`: each changed paragraph of a project judged against its previous version.

One line per paragraph that is not unchanged (`file:line:col: better|worse|new|removed (p = 0.71): first
words…`; a removed paragraph's position is in the previous version), then the paper-level summary of
Between the Drafts: each section's quality before -> after (the scale of `check`'s section summaries).  `--json` gives the same as
objects, `--plot` a PNG of the per-section means.  The logic is analyzers/drafts/paper_diff.py.
"""

from __future__ import annotations

from typing import Sequence

import argparse
import json
import sys
from pathlib import Path

from ...errors import UserError
from ...tables import format_table
from .common import display_path, load_settings, project_file, warn
from ...llm.base import LLMError
from ...analyzers.checker import Checker
from ...analyzers.drafts.paper_diff import diff_project
from ...latex.parse import parse_options
from . import HELP

FIRST_WORDS = 8


def register(sub, argv: Sequence[str] | None = None) -> None:
    p = sub.add_parser("diff", help=HELP["diff"])
    p.add_argument("file", type=Path, help="a .tex file of the project, or its folder (its root file is used)")
    p.add_argument("--rev", default="HEAD", help="the git revision to compare with (default: HEAD)")
    p.add_argument("--root", type=Path, help="the project's root .tex (default: found from FILE, said when ambiguous)")
    p.add_argument("--settings", type=Path, help="JSON file of settings, as the editor would send them")
    p.add_argument("--json", action="store_true",
                   help="a JSON list: one object per changed paragraph (uri, range, verdict, probability, section, …), "
                        "then one per section with \"kind\": \"summary\"")
    p.add_argument("--plot", type=Path, metavar="FILE.png", help="write a PNG of each section's quality before and after")
    p.set_defaults(handler=run)


def make_judge(settings):
    """The shipped revisions model over the embedded LM (cached answers) and MiniLM for the quality scale."""
    judge = Checker(settings, keep_judgments=False).revision_judge(ratings="own")
    if judge is None:
        raise UserError("no revisions model is shipped (analyzers/drafts/data/revisions_model.npz): "
                        "run `peerlint bench drafts --suite revisions` to train it")
    return judge


def _position(p) -> dict:
    return {"line": p.line, "character": p.character}


def first_words(text: str, n: int = FIRST_WORDS) -> str:
    words = text.split()
    return " ".join(words[:n]) + ("…" if len(words) > n else "")


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def paragraph_objects(result) -> list[dict]:
    out = []
    for r in result.revisions:
        c, j = r.chunk, r.judgment
        out.append({"kind": "paragraph", "uri": c.uri, "file": display_path(c.uri),
                    "range": {"start": _position(c.range.start), "end": _position(c.range.end)},
                    "version": r.version, "verdict": r.verdict, "probability": r.probability,
                    "section": r.section, "alignment": r.aligned.kind, "similarity": round(r.aligned.similarity, 3),
                    "drivers": [{"feature": d.name, "change": d.change, "share": d.share} for d in j.drivers] if j else [],
                    "reason": j.reason() if j else "",
                    "text": first_words(c.text, 30)})
    return out


def summary_objects(result) -> list[dict]:
    return [{"kind": "summary", "section": s.section, "before": s.before, "after": s.after,
             "paragraphs_before": s.paragraphs_before, "paragraphs_after": s.paragraphs_after, "counts": s.counts}
            for s in result.sections + [result.total]]


def print_text(result) -> None:
    for r in result.revisions:
        c = r.chunk
        p = f" (p = {r.probability:.2f})" if r.probability is not None else ""
        where = f" [at {result.rev}]" if r.version == "previous" else ""
        print(f"{display_path(c.uri)}:{c.range.start.line + 1}:{c.range.start.character + 1}: "
              f"{r.verdict}{p}{where}: {first_words(c.text)}")
    rows = [[s.section, f"{s.paragraphs_before} -> {s.paragraphs_after}", _fmt(s.before), _fmt(s.after),
             _fmt(None if s.before is None or s.after is None else s.after - s.before),
             *(s.counts.get(k, 0) for k in ("better", "worse", "new", "removed"))]
            for s in result.sections + [result.total]]
    print(f"\nquality (1-10, the scale of `peerlint check`'s section summaries: 7 is the median published section "
          f"of its kind) before ({result.rev}) -> after (work tree)")
    print(format_table(rows, ["section", "paragraphs", "quality before", "after", "change", "better", "worse", "new",
                              "removed"]))


def plot(result, path: Path) -> None:
    """Per-section quality before and after, side by side (Between the Drafts, Fig. 4 by section)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sections = [s for s in result.sections if s.before is not None or s.after is not None]
    if not sections:
        raise UserError("nothing to plot: no section has a quality rating (the embedding model is missing?)")
    xs = range(len(sections))
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(sections)), 4))
    ax.bar([x - 0.2 for x in xs], [s.before or 0 for s in sections], 0.4, label=f"before ({result.rev})")
    ax.bar([x + 0.2 for x in xs], [s.after or 0 for s in sections], 0.4, label="after (work tree)")
    ax.set_xticks(list(xs), [s.section[:18] for s in sections], rotation=30, ha="right")
    ax.axhline(7, color="0.5", linestyle="--", linewidth=1, label="the median published section of its kind")
    ax.set_ylabel("quality (1-10)")
    ax.set_ylim(1, 10)
    ax.set_title(f"{result.root.name}: per-section quality before and after")
    ax.legend(loc="upper center", ncol=3, fontsize="small", frameon=False)
    fig.tight_layout()
    try:
        fig.savefig(path, dpi=120)
    except OSError as exc:
        raise UserError(f"cannot write the plot {path}: {exc}") from None
    finally:
        plt.close(fig)


def run(args: argparse.Namespace) -> int:
    file, root = project_file(args.file, args.root)
    settings = load_settings(args.settings)
    try:
        options = parse_options(settings)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    try:
        result = diff_project(file, make_judge(settings), args.rev, options, workspace=Path.cwd(), root=root)
    except LLMError as exc:
        raise UserError(f"revision judgments need the embedded language model: {exc} (see `peerlint doctor`)") from None
    if args.json:
        print(json.dumps(paragraph_objects(result) + summary_objects(result), ensure_ascii=False))
    else:
        print_text(result)
    if args.plot:
        plot(result, args.plot)
    sys.stdout.flush()
    for w in result.warnings:
        warn(w)
    counts = result.total.counts
    print(f"{len(result.revisions)} paragraph(s) changed ({', '.join(f'{v} {k}' for k, v in counts.items()) or 'none'}), "
          f"{result.unchanged} unchanged, {result.moved} moved; {result.message}"
          + (f"; plot: {args.plot}" if args.plot else ""), file=sys.stderr)
    return 0
