"""Cite recovery: a citation ground truth from any LaTeX project, so a user can measure retrieval on
their own paper.

Every paragraph that cites something becomes a query: its text as the parser gives it (the `\\cite`
commands are gone from it; `\\citet` leaves the authors' names, as a reader sees them), and as its
truth the works it cites that the index holds, matched from the project's `.bib` by DOI, arXiv id,
normalised title, or first author + year with a close title (`index/ingest/holdings.py`). Cited
works the index lacks are counted, never scored: the bench measures retrieval, not coverage
(`peerlint bench coverage` measures that).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from .truth import Query, Truth
from ...errors import UserError
from ...index.ingest.holdings import Holdings
from ...index.ingest.latex_sources import cited_works
from ...latex.project import parse_project
from ..coverage.bench import project_name, root_of


@dataclass
class ProjectTruth:
    """What one project contributed: its queries and how many of its citations could be scored."""

    name: str
    root: Path
    paragraphs_citing: int = 0  # paragraphs with at least one \cite
    citations: int = 0  # (paragraph, cited key) pairs
    in_bib: int = 0  # of those, keys the .bib defines
    in_index: int = 0  # of those, works the index holds

    def to_json(self) -> dict:
        return {"name": self.name, "root": str(self.root), "paragraphs_citing": self.paragraphs_citing,
                "citations": self.citations, "in_bib": self.in_bib, "in_index": self.in_index}


def project_queries(root: Path, holdings, name: str) -> tuple[list[Query], ProjectTruth]:
    """The cite-recovery queries of the project whose root file is `root`."""

    project = parse_project(root)
    works = {w.key: w for w in cited_works(project.bib_files, lambda m: print(f"peerlint: warning: {m}",
                                                                                file=sys.stderr))}
    paragraphs: dict[tuple[str, int], list] = {}
    for chunk in project.chunks:
        if chunk.kind in ("paragraph", "abstract"):
            paragraphs.setdefault((chunk.uri, chunk.paragraph if chunk.paragraph >= 0 else chunk.index), []).append(chunk)
    stats = ProjectTruth(name, root)
    queries = []
    for (uri, para), chunks in paragraphs.items():
        keys = list(dict.fromkeys(k for c in chunks for k in c.cites))
        if not keys:
            continue
        stats.paragraphs_citing += 1
        stats.citations += len(keys)
        cited = []
        for key in keys:
            if (work := works.get(key)) is None:
                continue
            stats.in_bib += 1
            if (match := holdings.find(work)) is not None:
                cited.append(match.paper_id)
        stats.in_index += len(cited)
        text = " ".join(c.text for c in chunks)
        queries.append(Query(f"{name}:{Path(uri).name}:{chunks[0].range.start.line + 1}", text,
                             tuple(dict.fromkeys(cited)), None, name))
    return queries, stats


def truth_from_latex(paths: list[Path], index) -> tuple[Truth, list[ProjectTruth]]:
    """One ground truth over every project given (folders or root .tex files), against `index`."""

    roots = [root for path in paths if (root := root_of(path)) is not None]
    if not roots:
        raise UserError("--from-latex: no LaTeX project among the paths given: pass project folders or root .tex files")
    holdings = Holdings(index.paper(i) for i in range(len(index)))
    queries: list[Query] = []
    projects = []
    for root in roots:
        got, stats = project_queries(root, holdings, project_name(root))
        queries += got
        projects.append(stats)
    return Truth("cite-recovery", queries), projects
