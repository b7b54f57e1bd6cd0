"""Benchmark drafts: LaTeX of N pages from shipped abstracts, sentences shuffled across papers.

They read like prose but copy no indexed text; `bench lsp` and `bench drafts --suite latency`
both time the server or the engine on them.
"""

from __future__ import annotations

import random
from ...index.ingest.load import default_corpus_path, load_papers

PARAGRAPHS_PER_PAGE = 3


def make_draft(pages: int, seed: int = 0) -> str:
    """A LaTeX draft of about `pages` pages built from shuffled real sentences."""
    import re


    rng = random.Random(seed)
    papers = load_papers([default_corpus_path()], warn=lambda m: None)
    sentences = [s for p in rng.sample(papers, 600) for s in re.split(r"(?<=[.!?])\s+", p.abstract) if len(s) > 40]
    rng.shuffle(sentences)
    out = ["\\documentclass{article}", "\\usepackage{amsmath}", "\\title{A Benchmark Draft}", "\\begin{document}",
           "\\maketitle", "\\begin{abstract}", " ".join(sentences[:5]), "\\end{abstract}"]
    n = pages * PARAGRAPHS_PER_PAGE
    for i in range(n):
        if i % 6 == 0:
            out.append(f"\\section{{Section {i // 6 + 1}}}")
        body = " ".join(sentences[(5 + i * 6) % len(sentences): (5 + i * 6) % len(sentences) + 6])
        out.append(body + f" We write $x_{{{i}}} = \\sum_j w_j$ and cite \\cite{{ref{i}}}.\n")
    out.append("\\end{document}")
    return "\n".join(out) + "\n"
