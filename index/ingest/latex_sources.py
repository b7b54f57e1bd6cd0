"""The LaTeX side of corpus ingestion: BibTeX entries with abstracts and .tex papers, as `Paper` records.

Kept apart from `ingest` so that reading the usual JSONL corpora never loads pylatexenc or bibtexparser.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import bibtexparser
from bibtexparser.bibdatabase import UndefinedString
from bibtexparser.bparser import BibTexParser
from pylatexenc import latex2text, latexwalker, macrospec

from .identity import normalise_arxiv_id, normalise_doi
from .records import BadRecord, FileReport, Warn, clean_text, parse_date, read_text
from ..papers import Paper


class _RedefinedStrings(logging.Filter):
    """A project's .bib files often each define the same @string macros (the CVPR templates' `pami`,
    `ijcv`, ...); bibtexparser warns once per redefinition, though BibTeX takes the last definition."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Overwriting existing string")


logging.getLogger("bibtexparser.bparser").addFilter(_RedefinedStrings())


def _latex_contexts() -> tuple[macrospec.LatexContextDb, latex2text.LatexNodes2Text]:
    walker_db = latexwalker.get_default_latex_context_db()
    walker_db.add_context_category("peerlint", prepend=True, macros=[
        macrospec.MacroSpec("title", "[{"),
        macrospec.MacroSpec("thanks", "{"),
    ])
    text_db = latex2text.get_default_latex_context_db()
    dropped = ["cite", "citep", "citet", "citealp", "citeauthor", "citeyear", "footnote", "thanks", "label", "ref",
               "title", "author", "date"]  # pylatexenc's own \title handler fails on a \title without argument
    text_db.add_context_category("peerlint", prepend=True, macros=[
        *(latex2text.MacroTextSpec(name, simplify_repl="") for name in dropped),
        latex2text.MacroTextSpec("LaTeX", simplify_repl="LaTeX"),
        latex2text.MacroTextSpec("TeX", simplify_repl="TeX"),
    ])
    return walker_db, latex2text.LatexNodes2Text(latex_context=text_db, math_mode="text")


_WALKER_DB, _TO_TEXT = _latex_contexts()
# pylatexenc is tolerant but not bulletproof: one odd entry or file must not stop a corpus
_LATEX_ERRORS = (latexwalker.LatexWalkerError, RecursionError, AttributeError, IndexError, TypeError)
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([.,;:!?)\]])")


def _latex_to_text(latex: str) -> str:
    return _SPACE_BEFORE_PUNCT.sub(r"\1", clean_text(_TO_TEXT.latex_to_text(latex)))


def _nodes_text(nodes: list) -> str:
    return _SPACE_BEFORE_PUNCT.sub(r"\1", clean_text(_TO_TEXT.nodelist_to_text(nodes)))


# --- BibTeX -------------------------------------------------------------------------------------------------

_BIB_START = re.compile(r"^[ \t]*@[ \t]*(\w+)[ \t]*[{(][ \t]*([^,\s]*)", re.MULTILINE)
_DOI_PREFIX = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", re.IGNORECASE)


@dataclass(frozen=True)
class CitedWork:
    """What a .bib entry says about the work it cites: enough to find that work in an index or an API."""

    key: str
    title: str = ""
    doi: str = ""
    arxiv_id: str = ""
    authors: tuple[str, ...] = ()
    year: int | None = None


def bib_parser() -> BibTexParser:
    """A parser that keeps @string definitions across files: pass one to `bib_entries` for each .bib of a
    project, in \\bibliography order, as BibTeX reads them."""
    parser = BibTexParser(common_strings=True, ignore_nonstandard_types=False, interpolate_strings=True)
    parser.expect_multiple_parse = True
    return parser


def bib_entries(path: Path, warn: Warn, report: FileReport | None = None,
                parser: BibTexParser | None = None) -> Iterator[tuple[Mapping[str, str], int]]:
    """(bibtexparser entry, line) for each entry; one broken entry is warned and skipped, never the file.

    A caller that skips entries of its own passes its `report`, so one file has one count of skipped rows.
    An undefined @string reads as its own name (`booktitle = emnlp` gives 'emnlp'), as BibTeX warns and goes on.
    """
    text = read_text(path, warn)
    parser = parser or bib_parser()
    own_report = report is None
    report = report or FileReport(path, warn)
    starts = list(_BIB_START.finditer(text))
    for i, match in enumerate(starts):
        kind, key = match.group(1).lower(), match.group(2).rstrip(",")
        if kind in ("comment", "preamble"):
            continue
        chunk = text[match.start(): starts[i + 1].start() if i + 1 < len(starts) else len(text)]
        line = text.count("\n", 0, match.start()) + 1
        before = len(parser.bib_database.entries)
        for _attempt in range(20):
            try:
                bibtexparser.loads(chunk, parser=parser)
                break
            except UndefinedString as err:
                name = str(err.args[0]) if err.args else ""
                parser.bib_database.strings[name] = name
        if kind == "string":
            continue
        entries = parser.bib_database.entries[before:]
        if not entries:
            report.skip(line, f"cannot parse BibTeX entry {key!r} ({_bib_problem(chunk)})")
            continue
        yield entries[0], line
    if own_report:
        report.close()
    if not starts:
        warn(f"{path}: no BibTeX entries found")


def read_bib(path: Path, warn: Warn) -> Iterator[tuple[Paper, str]]:
    """Entries with an abstract; id = DOI when present, else the citation key. Broken entries are warned and skipped."""
    report = FileReport(path, warn)
    for entry, line in bib_entries(path, warn, report):
        key = entry.get("ID", "")
        try:
            paper = _paper_from_bib(entry)
        except BadRecord as err:
            report.skip(line, f"entry {key!r}: {err}")
            continue
        except _LATEX_ERRORS as err:
            report.skip(line, f"entry {key!r}: cannot convert its LaTeX ({type(err).__name__}: {err})")
            continue
        yield paper, f"{path}:{line}"
    report.close()


def cited_works(paths: Sequence[Path], warn: Warn) -> list[CitedWork]:
    """Every entry of the .bib files of one project as a `CitedWork`, abstract or not: the DOI, the arXiv
    id (from `eprint`, `arxiv`, `journal`, `url`, `note` or `howpublished`), the title, surnames and year."""
    parser = bib_parser()
    entries = [entry for path in paths for entry, _line in bib_entries(path, warn, parser=parser)]
    works = []
    for entry in entries:
        def text(name: str) -> str:
            try:
                return _latex_to_text(entry.get(name, ""))
            except _LATEX_ERRORS:
                return clean_text(re.sub(r"[{}\\]", "", entry.get(name, "")))

        arxiv = ""
        for name in ("eprint", "arxivid", "arxiv", "journal", "booktitle", "url", "note", "howpublished", "doi"):
            if arxiv := normalise_arxiv_id(entry.get(name, "")):
                break
        if not arxiv and entry.get("archiveprefix", "").lower() == "arxiv":
            arxiv = normalise_arxiv_id(f"arXiv:{entry.get('eprint', '')}")
        found_year = re.search(r"\d{4}", entry.get("year", "") or entry.get("date", ""))
        works.append(CitedWork(
            key=entry.get("ID", ""),
            title=text("title"),
            doi=normalise_doi(entry.get("doi", "")) or normalise_doi(entry.get("url", "") if "doi.org" in
                                                                      entry.get("url", "") else ""),
            arxiv_id=arxiv,
            authors=tuple(n for n in (_bib_person_safe(p) for p in _split_bib_names(entry.get("author", ""))) if n),
            year=int(found_year.group()) if found_year else None,
        ))
    return works


def _bib_person_safe(name: str) -> str:
    try:
        return _bib_person(name)
    except _LATEX_ERRORS:
        return clean_text(re.sub(r"[{}\\]", "", name))


def _bib_problem(chunk: str) -> str:
    depth = 0
    for char in re.sub(r"\\[{}]", "", chunk):
        depth += {"{": 1, "}": -1}.get(char, 0)
    if depth:
        return "unbalanced braces"
    if not re.match(r"\s*@\s*\w+\s*[{(]\s*[^,\s{}()]+\s*,", chunk):
        return "no citation key followed by a comma"
    return "check the commas, quotes and braces of its fields"


def _paper_from_bib(entry: Mapping[str, str]) -> Paper:
    abstract = _latex_to_text(entry.get("abstract", ""))
    if not abstract:
        raise BadRecord("no abstract")
    year: int | None = None
    if raw_year := entry.get("year", "").strip():
        found = re.search(r"\d{4}", raw_year)
        if not found:
            raise BadRecord(f"year {raw_year!r:.40} is not a year")
        year = int(found.group())
    date = parse_date(entry.get("date"))
    doi = _DOI_PREFIX.sub("", entry.get("doi", "").strip())
    url = entry.get("url", "").strip() or (f"https://doi.org/{doi}" if doi else "")
    return Paper(
        id=doi or entry["ID"],
        title=_latex_to_text(entry.get("title", "")),
        abstract=abstract,
        venue=_latex_to_text(entry.get("booktitle") or entry.get("journal") or ""),
        year=year if year is not None else (int(date[:4]) if date else None),
        authors=tuple(n for n in (_bib_person(p) for p in _split_bib_names(entry.get("author", ""))) if n),
        keywords=tuple(k for k in (_latex_to_text(k) for k in re.split(r"[,;]", entry.get("keywords", ""))) if k),
        url=clean_text(url),
        date=date,
    )


def _split_bib_names(value: str) -> list[str]:
    """Split on ' and ' outside braces, as BibTeX does ({Barnes and Noble} stays one name)."""
    names, depth, start = [], 0, 0
    for match in re.finditer(r"[{}]|\s+and\s+", value, re.IGNORECASE):
        token = match.group()
        if token == "{":
            depth += 1
        elif token == "}":
            depth = max(depth - 1, 0)
        elif depth == 0:
            names.append(value[start:match.start()])
            start = match.end()
    names.append(value[start:])
    return [n for n in names if n.strip() and n.strip().lower() != "others"]


def _bib_person(name: str) -> str:
    """'Last, First' and 'Last, Jr, First' become 'First Last' and 'First Last Jr', like the proceedings."""
    parts = [p.strip() for p in name.split(",")]
    if len(parts) == 2:
        name = f"{parts[1]} {parts[0]}"
    elif len(parts) >= 3:
        name = f"{parts[2]} {parts[0]} {parts[1]}"
    return _latex_to_text(name)


# --- .tex papers ---------------------------------------------------------------------------------------------

_DOCUMENTCLASS = re.compile(r"^[^%\n]*\\documentclass", re.MULTILINE)
_COMMENT = re.compile(r"(?<!\\)%.*")
_INPUT = re.compile(r"\\(?:input|include)\s*\{([^}]+)\}")


def read_tex(path: Path, paper_id: str, warn: Warn) -> Iterator[tuple[Paper, str]]:
    """One paper from a main .tex file: its \\title and abstract environment, \\input files followed.

    Files without \\documentclass are parts of another paper and are skipped without a word.
    """
    text = read_text(path, warn)
    if not _DOCUMENTCLASS.search(text):
        return
    source = _inline_inputs(text, path.parent, warn, depth=0)
    try:
        title, abstract = _title_and_abstract(source)
    except _LATEX_ERRORS as err:
        warn(f"{path}:1: cannot parse the LaTeX ({type(err).__name__}: {err}); skipped")
        return
    if not title and not abstract:
        warn(f"{path}:1: no \\title and no abstract environment; skipped")
        return
    yield Paper(id=paper_id, title=title, abstract=abstract), f"{path}:1"


def _title_and_abstract(source: str) -> tuple[str, str]:
    walker = latexwalker.LatexWalker(source, latex_context=_WALKER_DB, tolerant_parsing=True)
    nodes, _, _ = walker.get_latex_nodes()
    title = abstract = ""
    for node in _walk(nodes):
        if not title and node.isNodeType(latexwalker.LatexMacroNode) and node.macroname == "title" \
                and node.nodeargd and node.nodeargd.argnlist and node.nodeargd.argnlist[-1] is not None:
            title = _nodes_text([node.nodeargd.argnlist[-1]])
        elif not abstract and node.isNodeType(latexwalker.LatexEnvironmentNode) and node.environmentname == "abstract":
            abstract = _nodes_text(node.nodelist)
    return title, abstract


def _inline_inputs(text: str, base: Path, warn: Warn, depth: int) -> str:
    """Comments removed and \\input / \\include files pasted in (5 levels deep at most)."""
    text = _COMMENT.sub("", text)
    if depth >= 5:
        return text

    def paste(match: re.Match[str]) -> str:
        name = match.group(1).strip()
        for candidate in (base / name, base / f"{name}.tex"):
            if candidate.is_file():
                return _inline_inputs(read_text(candidate, warn), base, warn, depth + 1)
        return ""

    return _INPUT.sub(paste, text)


def _walk(nodes: list | None) -> Iterator[latexwalker.LatexNode]:
    for node in nodes or []:
        if node is None:
            continue
        yield node
        if getattr(node, "nodelist", None):
            yield from _walk(node.nodelist)
        if node.isNodeType(latexwalker.LatexMacroNode) and node.nodeargd and node.nodeargd.argnlist:
            yield from _walk([arg for arg in node.nodeargd.argnlist if arg is not None])
