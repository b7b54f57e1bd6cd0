"""`peerlint bench coverage --from-latex DIR…`: how many of a LaTeX project's cited works the index holds.

No retriever can suggest a paper the index does not hold, so this is the ceiling on related-work
suggestions for that project. For each project: the root .tex (the one with \\documentclass and
\\begin{document} whose project cites the most keys), every \\cite-like key of the files it reads
(tables and captions included), the keys its .bib files resolve, and of those, the works the corpus
holds by DOI, arXiv id, normalised title or surname + year (`index/ingest/holdings.py`), counted as held
only when the corpus dates it no later than the project's year (the newest year among its .bib entries):
a preprint cited before its venue version appeared was not in an index when the paper was written, so it
is counted apart ("held, dated later"). The corpus is `--corpus`,
else the papers of the index (`--index`, default the user's), else the shipped proceedings; no vectors
are read, so it runs in seconds, before and after a `peerlint corpus pull`. When papers of
`tests/data/real` from fields the shipped corpus does not cover (systems, PL, physics: the venue bench's
out-of-field list) are among the projects, an "in field" row sums the others beside "all".
"""

from __future__ import annotations

from ..harness.results import RESULTS_HELP, peak_rss_mb, print_table, write_result
from ..harness.real_papers import REAL_OUT_OF_FIELD

import argparse
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import UserError
from ...index.ingest.holdings import METHODS, Holdings
from ...index.ingest.load import CorpusError, default_corpus_paths, load_papers
from ...index.build import default_index_path
from ...index.store import IndexError_, open_index
from ...latex.project import parse_project
from ...index.ingest.latex_sources import cited_works

_CITE = re.compile(r"\\([a-zA-Z]*cite[a-zA-Z]*)\*?\s*(?:\[[^\]]*\]\s*){0,2}\{([^}]*)\}")
# cite-named commands that set the style, not cite (natbib's `\\setcitestyle{numbers}`, `\\citestyle{plain}`)
_NOT_A_CITE = re.compile(r"set[a-zA-Z]*|[a-zA-Z]*style[a-zA-Z]*")
_COMMENT = re.compile(r"(?<!\\)%[^\n]*")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of this command."""
    parser.add_argument("--from-latex", nargs="+", type=Path, required=True, metavar="DIR",
                        help="LaTeX project folders (or root .tex files) whose citations to look up")
    parser.add_argument("--corpus", nargs="+", type=Path, default=None, metavar="FILE",
                        help="corpus files to look in (default: the papers of --index)")
    parser.add_argument("--index", type=Path, default=None,
                        help="index whose papers to look in (default: $PEERLINT_INDEX or ~/.local/share/peerlint/index; "
                             "the shipped proceedings when there is none)")
    parser.add_argument("--missing", action="store_true", help="list the cited works the corpus does not hold")
    parser.add_argument("--out", type=Path, default=None, help=RESULTS_HELP)


@dataclass
class ProjectCoverage:
    name: str
    root: str
    cited: int = 0  # distinct \cite keys
    in_bib: int = 0  # of those, resolved by the project's .bib files
    with_doi: int = 0
    with_arxiv: int = 0
    held: dict[str, int] = field(default_factory=dict)  # method -> works found
    year: int | None = None  # the project's year: the newest year its .bib entries give
    held_later: int = 0  # found, but the corpus dates them after `year`: an index at writing time lacked them
    missing: list[dict[str, str]] = field(default_factory=list)
    unresolved_keys: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def held_total(self) -> int:
        return sum(self.held.values())

    @property
    def coverage(self) -> float | None:
        return self.held_total / self.in_bib if self.in_bib else None


def run(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    projects = [root for path in args.from_latex if (root := root_of(path)) is not None]
    if not projects:
        raise UserError("--from-latex: no LaTeX project among the paths given: pass project folders or root .tex files")
    papers, corpus_label = _corpus(args)
    holdings = Holdings(papers)
    print(f"coverage: {holdings.size:,} papers in {corpus_label}", file=sys.stderr, flush=True)
    results = [_coverage(root, holdings) for root in projects]
    rows = [[r.name, str(r.year or "-"), r.cited, r.in_bib, r.with_doi, r.with_arxiv, *(r.held.get(m, 0) for m in METHODS),
             r.held_total, r.held_later, _percent(r.coverage)] for r in results]
    totals = _summed("all", results)
    outside = [r.name for r in results if r.name in REAL_OUT_OF_FIELD]
    in_field = _summed(f"in field ({len(results) - len(outside)})", [r for r in results if r.name not in outside]) \
        if outside else None
    for t in (totals, in_field):
        if t is not None:
            rows.append([t.name, None, t.cited, t.in_bib, t.with_doi, t.with_arxiv, *(t.held.get(m, 0) for m in METHODS),
                         t.held_total, t.held_later, _percent(t.coverage)])
    print_table(rows, ["project", "year", "cited", "in .bib", "DOI", "arXiv", *(f"by {m}" for m in METHODS), "held",
                       "held, dated later", "coverage"],
                title=f"Cited works held by {corpus_label} (held: dated no later than the project's newest .bib year)")
    if args.missing:
        for r in results:
            for work in r.missing:
                print(f"{r.name}: missing {work['key']}: {work['title']}")
    payload = {
        "dataset": {"projects": [str(p) for p in args.from_latex], "corpus": corpus_label, "papers": holdings.size},
        "projects": [{**{k: v for k, v in r.__dict__.items()}, "held_total": r.held_total, "coverage": r.coverage}
                     for r in results],
        "total": _total_json(totals),
        "in_field": None if in_field is None else {
            **_total_json(in_field), "projects": len(results) - len(outside), "left_out": outside,
            "why": "papers of tests/data/real from fields the shipped corpus does not cover (systems, PL, "
                   "physics), as the venue bench's out-of-field check names them"},
        "rule": "a cited work counts as held when the corpus holds it dated no later than the project's year (the "
                "newest year among its .bib entries); held but dated later is counted apart, not as held",
        "seconds": round(time.perf_counter() - started, 1), "peak_rss_mb": peak_rss_mb(),
    }
    path = write_result(args.out, "coverage", payload)
    print(f"\nwrote {path}")
    return 0


def _summed(name: str, results: list[ProjectCoverage]) -> ProjectCoverage:
    total = ProjectCoverage(name, "")
    for r in results:
        total.cited += r.cited
        total.in_bib += r.in_bib
        total.with_doi += r.with_doi
        total.with_arxiv += r.with_arxiv
        total.held_later += r.held_later
        for method, n in r.held.items():
            total.held[method] = total.held.get(method, 0) + n
    return total


def _total_json(t: ProjectCoverage) -> dict:
    return {"cited": t.cited, "in_bib": t.in_bib, "held": t.held, "held_total": t.held_total,
            "held_later": t.held_later, "coverage": t.coverage}


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _corpus(args: argparse.Namespace):
    """The papers to look in, and a label saying where they came from."""
    def warn(message: str) -> None:
        print(f"peerlint: warning: {message}", file=sys.stderr)

    if args.corpus:
        try:
            return load_papers(args.corpus, warn=warn), ", ".join(map(str, args.corpus))
        except CorpusError as err:
            raise UserError(str(err)) from None

    root = args.index or default_index_path()
    try:
        index = open_index(root)
    except IndexError_ as err:
        if args.index:
            raise UserError(str(err)) from None
        shipped = default_corpus_paths()
        names = ", ".join(p.name for p in shipped)
        print(f"coverage: no index at {root}; looking in the shipped corpus {names}", file=sys.stderr)
        return load_papers(shipped, warn=warn), ", ".join(map(str, shipped))
    return [index.paper(i) for i in range(len(index))], f"the index at {root}"


def root_of(path: Path) -> Path | None:
    """The root .tex of a project folder (or the .tex file given); None, with a note, for other files."""
    if path.is_file():
        if path.suffix.lower() == ".tex":
            return path
        print(f"coverage: {path} is neither a folder nor a .tex file; skipped", file=sys.stderr)
        return None
    if not path.is_dir():
        raise UserError(f"--from-latex {path} does not exist: pass a LaTeX project folder or its root .tex file")
    candidates = []
    for tex in sorted(path.rglob("*.tex")):
        if any(part.startswith(".") for part in tex.relative_to(path).parts):
            continue
        text = tex.read_text(encoding="utf-8", errors="replace")
        if "\\begin{document}" in _COMMENT.sub("", text):  # its class may come from \input{preamble} (a thesis)
            candidates.append(tex)
    if not candidates:
        raise UserError(f"{path} has no .tex file with \\begin{{document}}: pass the root .tex file")
    if len(candidates) == 1:
        return candidates[0]
    return max(candidates, key=lambda tex: (len(_cited_keys(tex)[0]), -len(tex.parts)))


def _cited_keys(root: Path) -> tuple[list[str], list[Path], list[str]]:
    """Distinct cite keys in reading order, the .bib files, and the parser's warnings.

    The project parser finds the files and .bib files; the keys are read from each file's text as well
    as from its chunks, because the parser keeps no text of tables, where citations also appear."""
    project = parse_project(root)
    keys = [k for chunk in project.chunks for k in chunk.cites]
    for path in project.files:
        text = _COMMENT.sub("", path.read_text(encoding="utf-8", errors="replace"))
        keys += [k.strip() for m in _CITE.finditer(text) if not _NOT_A_CITE.fullmatch(m.group(1))
                 for k in m.group(2).split(",")]
    return list(dict.fromkeys(k for k in keys if k and k != "*")), project.bib_files, project.warnings


def project_name(root: Path) -> str:
    """A project's name for tables: its folder, or the folder above a generic `paper/` or `src/`."""
    return root.parent.name if root.parent.name not in ("paper", "src", "tex", "latex") else root.parent.parent.name


def _coverage(root: Path, holdings) -> ProjectCoverage:
    name = project_name(root)
    keys, bibs, warnings = _cited_keys(root)
    result = ProjectCoverage(name, str(root), cited=len(keys), warnings=list(warnings))
    works = {w.key: w for w in cited_works(bibs, result.warnings.append)}
    result.year = max((w.year for w in works.values() if w.year), default=None)
    for key in keys:
        work = works.get(key)
        if work is None:
            result.unresolved_keys.append(key)
            continue
        result.in_bib += 1
        result.with_doi += bool(work.doi)
        result.with_arxiv += bool(work.arxiv_id)
        match = holdings.find(work)
        if match is not None and result.year and holdings.years.get(match.paper_id, 0) > result.year:
            result.held_later += 1  # e.g. a preprint cited before its venue version: not held when written
            match = None
        if match is None:
            result.missing.append({"key": key, "title": work.title, "doi": work.doi, "arxiv_id": work.arxiv_id})
        else:
            result.held[match.method] = result.held.get(match.method, 0) + 1
    return result
