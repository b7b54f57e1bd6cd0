"""Normalise corpora into `Paper` records: proceedings JSONL (plain, .gz, .xz), CSV, BibTeX and .tex papers.

`read_corpus` streams papers and reports every row it cannot use through `warn`, naming `file:line`
and the reason; `load_papers` collects them, drops duplicate ids (the first one wins) and refuses an
empty result. Errors the user can fix (a missing path, an unsupported file, nothing usable) raise
`CorpusError` with a message that says what to do.
"""

from __future__ import annotations

import csv
import json
import logging
import math
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

from ..papers import Paper
from .records import MAX_ROW_WARNINGS, BadRecord, FileReport, Warn, decoded_lines, clean_text, parse_date

log = logging.getLogger(__name__)

JSONL_SUFFIXES = (".jsonl", ".jsonl.gz", ".jsonl.xz")
CSV_SUFFIXES = (".csv", ".csv.gz", ".csv.xz")
BIB_SUFFIXES = (".bib",)
TEX_SUFFIXES = (".tex",)
SUPPORTED = "a .jsonl or .csv file (plain, .gz or .xz), a .bib or .tex file, or a directory of them"

_SKIPPED_DIRS = {"__pycache__", "node_modules"}


class CorpusError(Exception):
    """A corpus the user pointed at cannot be used; the message says how to fix it."""


def _log_warning(message: str) -> None:
    log.warning("%s", message)


def default_corpus_path() -> Path:
    """The shipped proceedings corpus (17,630 papers, see index/data/README.md)."""
    return Path(__file__).resolve().parents[1] / "data" / "proceedings.jsonl.xz"


def read_corpus(paths: Iterable[Path | str] | Path | str, warn: Warn = _log_warning) -> Iterator[Paper]:
    """Stream the papers of every path: corpus files by type, directories recursively.

    Every path is checked before the first paper is read, so a typo fails at once.
    """
    located = _read_located(_checked_paths(paths), warn)
    return (paper for paper, _where in located)


def load_papers(paths: Iterable[Path | str] | Path | str, warn: Warn = _log_warning) -> list[Paper]:
    """All papers of `paths` with duplicate ids dropped (the first one wins, each drop is warned)."""
    checked = _checked_paths(paths)
    papers: list[Paper] = []
    seen: dict[str, str] = {}
    duplicates = 0
    for paper, where in _read_located(checked, warn):
        if paper.id in seen:
            duplicates += 1
            if duplicates <= MAX_ROW_WARNINGS:
                warn(f"{where}: duplicate id {paper.id!r} (first seen at {seen[paper.id]}); kept the first")
            continue
        seen[paper.id] = where
        papers.append(paper)
    if duplicates > MAX_ROW_WARNINGS:
        warn(f"{duplicates - MAX_ROW_WARNINGS} more duplicate ids dropped ({duplicates} in all)")
    if not papers:
        names = ", ".join(str(p) for p in checked)
        raise CorpusError(
            f"{names} contains no usable papers: every record needs a title or an abstract "
            f"(see the warnings above). Point peerlint at {SUPPORTED}, "
            f"or leave the corpus unset to use the shipped proceedings ({default_corpus_path().name})."
        )
    return papers


# --- dispatch -------------------------------------------------------------------------------------


def _checked_paths(paths: Iterable[Path | str] | Path | str) -> list[Path]:
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    checked = list(dict.fromkeys(Path(p) for p in paths))  # a path given twice is read once
    if not checked:
        raise CorpusError(f"no corpus path given: pass {SUPPORTED}")
    for path in checked:
        if not path.exists():
            raise CorpusError(f"corpus path {path} does not exist: check the spelling, or pass {SUPPORTED}")
        if path.is_file() and _reader_for(path) is None:
            raise CorpusError(f"{path} is not a corpus file peerlint reads: pass {SUPPORTED}")
    return checked


def _reader_for(path: Path) -> Callable[[Path, Warn], Iterator[tuple[Paper, str]]] | None:
    name = path.name.lower()
    if name.endswith(JSONL_SUFFIXES):
        return _read_jsonl
    if name.endswith(CSV_SUFFIXES):
        return _read_csv
    if name.endswith(BIB_SUFFIXES):
        from .latex_sources import read_bib  # LaTeX tooling is loaded only for the corpora that need it

        return read_bib
    if name.endswith(TEX_SUFFIXES):
        from .latex_sources import read_tex

        return lambda p, w: read_tex(p, p.name, w)
    return None


def _read_located(paths: list[Path], warn: Warn) -> Iterator[tuple[Paper, str]]:
    for path in paths:
        if path.is_dir():
            yield from _read_directory(path, warn)
        else:
            reader = _reader_for(path)
            assert reader is not None  # _checked_paths refused the others
            yield from reader(path, warn)


def _read_directory(top: Path, warn: Warn) -> Iterator[tuple[Paper, str]]:
    """Every corpus file under `top` (hidden folders skipped), in a stable order; .tex ids are relative paths."""
    for folder, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in _SKIPPED_DIRS)
        for filename in sorted(filenames):
            if filename.startswith("."):
                continue
            path = Path(folder) / filename
            if filename.lower().endswith(TEX_SUFFIXES):
                from .latex_sources import read_tex

                yield from read_tex(path, path.relative_to(top).as_posix(), warn)
            elif (reader := _reader_for(path)) is not None:
                yield from reader(path, warn)


# --- records ----------------------------------------------------------------------------------------




def _text_field(record: Mapping[str, object], key: str) -> str:
    value = record.get(key)
    if value is None:
        return ""
    if key == "id" and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise BadRecord(f"{key} must be a string, not {type(value).__name__} {value!r:.40}")
    return clean_text(value)


def _year(value: object) -> int | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    raise BadRecord(f"year {value!r:.40} is not an integer")


def _number(value: object, key: str, kind: type[int] | type[float]) -> int | float | None:
    """A float (rating_avg) or an int (citations) from a number or a numeric string; NaN and blanks are None."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise BadRecord(f"{key} {value!r:.40} is not a number")
    try:
        number = float(value)
    except ValueError:
        raise BadRecord(f"{key} {value!r:.40} is not a number") from None
    if not math.isfinite(number):
        return None
    if kind is int:
        if not number.is_integer():
            raise BadRecord(f"{key} {value!r:.40} is not an integer")
        return int(number)
    return number


def _names(value: object, key: str) -> tuple[str, ...]:
    """A list of names (strings, numbers or {"name": …} objects), or one string separated by ';'."""
    if value is None:
        return ()
    if isinstance(value, str):
        value = value.split(";")
    if not isinstance(value, (list, tuple)):
        raise BadRecord(f"{key} must be a list, not {type(value).__name__}")
    names = []
    for item in value:
        if isinstance(item, Mapping) and isinstance(item.get("name"), str):
            item = item["name"]
        elif isinstance(item, int) and not isinstance(item, bool):
            item = str(item)
        if not isinstance(item, str):
            raise BadRecord(f"{key} must hold strings, not {type(item).__name__} {item!r:.40}")
        if cleaned := clean_text(item):
            names.append(cleaned)
    return tuple(names)


def _paper_from_record(record: Mapping[str, object], fallback_id: str) -> Paper:
    """A `Paper` from one proceedings-schema record (JSON object or CSV row); unknown keys are ignored."""
    title, abstract = _text_field(record, "title"), _text_field(record, "abstract")
    if not title and not abstract:
        raise BadRecord("no title and no abstract")
    date = parse_date(record.get("date"))
    year = _year(record.get("year"))
    if year is None and date:
        year = int(date[:4])
    return Paper(
        id=_text_field(record, "id") or fallback_id,
        title=title,
        abstract=abstract,
        venue=_text_field(record, "venue"),
        year=year,
        status=_text_field(record, "status"),
        authors=_names(record.get("authors"), "authors"),
        keywords=_names(record.get("keywords"), "keywords"),
        url=_text_field(record, "url"),
        rating_avg=_number(record.get("rating_avg"), "rating_avg", float),
        citations=_number(record.get("citations"), "citations", int),
        date=date,
        references=_names(record.get("references"), "references"),
    )


# --- JSONL and CSV ------------------------------------------------------------------------------------


def _read_jsonl(path: Path, warn: Warn) -> Iterator[tuple[Paper, str]]:
    report, nonblank = FileReport(path, warn), 0
    for lineno, line in decoded_lines(path, warn):
        if not line.strip():
            continue
        nonblank += 1
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            report.skip(lineno, f"invalid JSON ({err.msg} at column {err.colno})")
            continue
        if not isinstance(record, dict):
            report.skip(lineno, f"expected a JSON object, found {type(record).__name__}")
            continue
        try:
            paper = _paper_from_record(record, fallback_id=f"{path.name}:{lineno}")
        except BadRecord as err:
            report.skip(lineno, str(err))
            continue
        yield paper, f"{path}:{lineno}"
    report.close()
    if not nonblank:
        warn(f"{path}: the file is empty")


def _read_csv(path: Path, warn: Warn) -> Iterator[tuple[Paper, str]]:
    """A header row with proceedings column names; authors, keywords and references separated by ';'."""
    report = FileReport(path, warn)
    reader = csv.reader(text for _, text in decoded_lines(path, warn))
    try:
        header = next(reader)
    except StopIteration:
        warn(f"{path}: the file is empty")
        return
    except csv.Error as err:
        warn(f"{path}:1: unreadable CSV header ({err}); file skipped")
        return
    columns = [clean_text(name).lower() for name in header]
    if "title" not in columns and "abstract" not in columns:
        warn(f"{path}:1: the CSV header has no 'title' or 'abstract' column (found {', '.join(columns)!r:.80}); "
             "name the columns id,title,abstract,venue,year,… ; file skipped")
        return
    while True:
        start = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as err:
            report.skip(start, f"malformed CSV ({err})")
            continue
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(columns):
            report.skip(start, f"{len(row)} fields where the header has {len(columns)}")
            continue
        try:
            paper = _paper_from_record(dict(zip(columns, row)), fallback_id=f"{path.name}:{start}")
        except BadRecord as err:
            report.skip(start, str(err))
            continue
        yield paper, f"{path}:{start}"
    report.close()
