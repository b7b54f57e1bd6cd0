"""Citation ground truths for `peerlint bench related`: reading them, and making them from ACM-CR.

A ground truth is JSONL, one query a line::

    {"id": "q1", "text": "citing text", "year": 2020, "cited": ["doi or id", "or a title", ...],
     "paper": "id of the citing paper (optional)"}

`paper` (default: `id`) is left out of the results, and its reference list never feeds the
co-citation graph (leave-one-out). `year` (optional) admits only papers of that year or earlier.

`acm_truths` turns ACM-CR's citing papers (Boudin, 2021: `citing.jsonl`, each with its
introduction / related-work paragraphs and the DOIs every sentence cites) into two files:
paper level (title + abstract -> every DOI the paper cites) and context level (one paragraph's
sentences joined -> the DOIs cited in it).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

ACM_DIR = Path(__file__).resolve().parents[3] / "shared" / "data" / "acm-cr"


@dataclass(frozen=True)
class Query:
    id: str
    text: str
    cited: tuple[str, ...]
    year: int | None = None
    paper: str = ""  # the citing paper: excluded from results and from the co-citation graph


@dataclass
class Truth:
    name: str
    queries: list[Query]
    problems: list[str] = field(default_factory=list)  # "file:line: reason" of skipped lines


def split_of(paper: str) -> str:
    """"dev" or "test" for a citing paper, stably by its id: thresholds are chosen on dev contexts
    and reported on test ones, never on the contexts they were chosen on."""
    return "dev" if hashlib.sha1(paper.encode("utf-8")).digest()[0] % 2 == 0 else "test"


def read_truth(path: Path | str) -> Truth:
    """Queries of a ground-truth JSONL; unreadable lines are skipped and reported, never fatal."""
    path = Path(path)
    queries: list[Query] = []
    problems: list[str] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read ground truth {path}: {exc}") from None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            problems.append(f"{path}:{n}: not JSON ({exc.msg})")
            continue
        if not isinstance(row, dict):
            problems.append(f"{path}:{n}: not a JSON object")
            continue
        cited = row.get("cited")
        if not isinstance(cited, list):
            problems.append(f"{path}:{n}: 'cited' must be a list of ids or titles")
            continue
        year = row.get("year")
        try:
            year = int(year) if year not in (None, "") else None
        except (TypeError, ValueError):
            problems.append(f"{path}:{n}: year {year!r} is not a number: year filter off for this query")
            year = None
        qid = str(row.get("id") or f"{path.name}:{n}")
        queries.append(Query(qid, str(row.get("text") or ""), tuple(str(c) for c in cited if str(c).strip()),
                             year, str(row.get("paper") or qid)))
    return Truth(path.stem, queries, problems)


def _citing(acm_dir: Path) -> list[dict]:
    path = acm_dir / "citing.jsonl"
    try:
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read ACM-CR citing papers at {path} ({exc}): pass --acm DIR or --truth FILE") from None


def acm_truths(acm_dir: Path = ACM_DIR) -> tuple[list[dict], list[dict], dict]:
    """Paper- and context-level rows from ACM-CR, and counts (contexts without a citation are dropped)."""
    papers: list[dict] = []
    contexts: list[dict] = []
    no_cites = sentences_total = 0
    for row in _citing(acm_dir):
        pid, year = row["id"], row.get("year")
        papers.append({"id": pid, "paper": pid, "year": year, "text": f"{row['title']}. {row['abstract']}",
                       "cited": list(dict.fromkeys(row.get("cited") or []))})
        for i, ctx in enumerate(row.get("contexts") or []):
            sentences = ctx.get("sentences") or []
            sentences_total += len(sentences)
            cited = list(dict.fromkeys(d for s in sentences for d in s.get("cites") or []))
            if not cited:
                no_cites += 1
                continue
            contexts.append({"id": f"{pid}#{i}", "paper": pid, "year": year, "section": ctx.get("section", ""),
                             "text": " ".join(s.get("text", "") for s in sentences), "cited": cited})
    counts = {"citing_papers": len(papers), "contexts": len(contexts), "contexts_without_citations": no_cites,
              "citing_sentences": sentences_total}
    return papers, contexts, counts


def write_jsonl(rows: Iterable[dict], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + f".tmp{os.getpid()}")
    tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    os.replace(tmp, path)
    return path


def write_acm_truths(out_dir: Path, acm_dir: Path = ACM_DIR) -> tuple[Path, Path, dict]:
    """`acm-cr-paper.jsonl` and `acm-cr-context.jsonl` under `out_dir`, and the counts."""
    papers, contexts, counts = acm_truths(acm_dir)
    return (write_jsonl(papers, out_dir / "acm-cr-paper.jsonl"), write_jsonl(contexts, out_dir / "acm-cr-context.jsonl"),
            counts)
