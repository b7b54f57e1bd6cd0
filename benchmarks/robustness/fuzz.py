"""Fuzzing the parser with LaTeX-ish projects: random multi-file trees whose files \\input each other,
name .bib files and reach out of the project, checked against invariants computed independently
of the parser (LSP's own line rules, UTF-16 columns).  tests/test_robustness_fuzz.py draws the same
projects with hypothesis; the bench draws them from a seeded `random.Random`."""

from __future__ import annotations

import random
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from .cases import CaseResult
from ...latex.project import parse_project
from ...latex.wall import ProjectWall

FILES = ("main.tex", "a.tex", "b.tex", "sub/c.tex")
TOKENS: tuple[str, ...] = (
    "\\section{", "\\subsection*{", "\\begin{itemize}", "\\end{itemize}", "\\item ", "\\begin{figure}", "\\end{figure}",
    "\\caption{", "\\cite{k1,k2}", "\\citet{k1}", "\\footnote{", "\\begin{abstract}", "\\end{abstract}",
    "\\begin{document}", "\\end{document}", "\\documentclass{article}", "\\title{", "\\verb|x|", "\\verb", "\\url{",
    "\\emph{", "\\'", "\\\\", "\\%", "%", "% peerlint: disable=close-prior-work\n", "% !TeX root = ../main.tex\n",
    "$", "$$", "\\(", "\\)", "\\[", "\\]", "{", "}", "[", "]", "~", "``", "--", "&", "\n", "\n\n", "\r\n", "\r", " ",
    "word ", "Sentence one. ", "Another sentence follows here. ", "\U0001F600", "\u00e9", "\u2028", "\t",
    "\\iffalse", "\\fi", "\\begin{verbatim}", "\\end{verbatim}", "\\par", "\\def\\x{y}", "\\x",
    "\\newcommand{\\m}[1]{M#1m}", "\\m{a}", "\\newcommand{\\r}{\\r}", "\\r", "\\begin{equation}", "\\end{equation}",
    "\\ref{l}", "\\foo", "\\begin{tabular}{ll}", "\\end{tabular}", "\\href{u}{t}",
    "\\input{a}", "\\input{b}", "\\include{sub/c}", "\\subfile{a}", "\\import{sub/}{c}", "\\input{main}",
    "\\input{/etc/passwd}", "\\input{../../../../etc/hostname}", "\\input{missing}", "\\input{",
    "\\bibliography{refs}", "\\addbibresource{/etc/passwd}", "\\usepackage{local}",
)
PROSE = ("We study things. ", "The method works well \U0001F600 on data. ", "Results improve. ", "\n\n", "\r\n\r\n",
         "caf\u00e9 na\u00efve text ", "A long sentence that goes on and on about nothing in particular. ")
_EOL = re.compile(r"\r\n|\r|\n")


def draw_project(rng: random.Random, max_tokens: int = 40) -> dict[str, str]:
    """A random project: each file a soup of `TOKENS`; main.tex usually starts like a root."""
    files = {}
    for name in FILES:
        soup = "".join(rng.choice(TOKENS) if rng.random() < 0.6 else rng.choice(PROSE) for _ in range(rng.randint(0, max_tokens)))
        if name == "main.tex" and rng.random() < 0.7:
            soup = "\\documentclass{article}\n\\begin{document}\n" + soup
        files[name] = soup
    return files


def write_project(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8", "surrogatepass"))
    (root / "refs.bib").write_text("@article{k1, title={A Title}, author={Doe, Jane and Roe, R.}, year={2020}}\n")
    (root / "local.sty").write_text("\\newcommand{\\styled}{Styled}\n")
    return root / "main.tex"


@dataclass(frozen=True)
class Problem:
    uri: str
    what: str


def utf16_lines(text: str) -> list[int]:
    """Each line's length in UTF-16 code units, by LSP's rule (\\r\\n, \\r and \\n end a line)."""
    return [len(line.encode("utf-16-le")) // 2 for line in _EOL.split(text)]


def chunk_problems(sources: dict[str, str], chunks: Sequence, allowed: set[str] | None = None) -> list[Problem]:
    """What is wrong with `chunks` of documents `sources` (uri -> text): a chunk of an unknown or
    disallowed file, a range outside its document or reversed, offsets out of order or bounds."""
    out: list[Problem] = []
    lines = {uri: utf16_lines(text) for uri, text in sources.items()}
    for c in chunks:
        if c.uri not in sources or (allowed is not None and c.uri not in allowed):
            out.append(Problem(c.uri, "a chunk of a file outside the project"))
            continue
        text, widths = sources[c.uri], lines[c.uri]
        if not c.text or c.text != c.text.strip():
            out.append(Problem(c.uri, f"empty or unstripped text {c.text!r}"))
        if len(c.offsets) != len(c.text) + 1 or any(not 0 <= o <= len(text) for o in c.offsets) \
                or any(a > b for a, b in zip(c.offsets, c.offsets[1:])):
            out.append(Problem(c.uri, f"offsets out of order or bounds in {c.text[:40]!r}"))
        s, e = c.range.start, c.range.end
        for p in (s, e):
            if not (0 <= p.line < len(widths) and 0 <= p.character <= widths[p.line]):
                out.append(Problem(c.uri, f"position {p.line}:{p.character} outside the document ({c.text[:40]!r})"))
        if (s.line, s.character) > (e.line, e.character):
            out.append(Problem(c.uri, f"reversed range {s}..{e}"))
    return out


def fuzz_parser(workdir: Path, examples: int = 300, seed: int = 18, budget_s: float = 120.0) -> CaseResult:
    """`examples` random projects through `parse_project` (within `budget_s`): crashes and invariant breaks."""

    rng = random.Random(seed)
    crashes, problems, done, chunks_seen = 0, [], 0, 0
    started = time.monotonic()
    for i in range(examples):
        if time.monotonic() - started > budget_s:
            break
        root = workdir / f"p{i}"
        main = write_project(root, draw_project(rng))
        sources = {p.as_uri(): p.read_text(encoding="utf-8", errors="replace") for p in root.rglob("*.tex")}
        try:
            project = parse_project(main)
        except Exception as exc:  # parse_project promises never to raise on content
            crashes += 1
            problems.append(Problem(main.as_uri(), f"{type(exc).__name__}: {exc}"))
            continue
        wall = ProjectWall.around(main)
        allowed = {p.as_uri() for p in project.files if wall.allows(p)}
        problems += chunk_problems(sources, project.chunks, allowed)
        chunks_seen += len(project.chunks)
        done += 1
    return CaseResult("fuzz", "parser: random multi-file projects", crashes == 0 and not problems, crashed=crashes > 0,
                      seconds=time.monotonic() - started,
                      detail=f"{done + crashes} projects, {chunks_seen} chunks, {crashes} crashes, {len(problems)} invariant breaks"
                             + (f"; first: {problems[0].what}" if problems else ""),
                      figures={"projects": done + crashes, "chunks": chunks_seen, "crashes": crashes,
                               "invariant_breaks": len(problems)})
