"""Normalise corpora into `Paper` records: JSON lines (plain, .gz, .xz), CSV, BibTeX and .tex papers.

JSON-lines files are read in the layout their first record shows (`layouts.py`): proceedings, the
arXiv OAI snapshot, OpenAlex works, Semantic Scholar papers + abstracts. `read_corpus` streams papers
and reports every row it cannot use through `warn`, naming `file:line` and the reason; `load_papers`
collects them, drops duplicate ids (the first one wins), merges records of one work from different
sources (same DOI, arXiv id, or title; see `identity.py`), spills past `HOLD_IN_MEMORY` papers to a
temporary on-disk table (`paper_store.py`) and refuses an empty result. `where`
filters (`where.py`) apply while streaming. Errors the user can fix (a missing path, an unsupported
file or layout, nothing usable) raise `CorpusError` with a message that says what to do.
"""

from __future__ import annotations

import csv
import json
import logging
import math
import os
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path

from ..papers import Paper
from . import layouts
from .identity import PaperSet, normalise_arxiv_id, normalise_doi, split_names
from .latex_sources import read_bib, read_tex
from .records import (ANTHOLOGY_URL, MAX_ROW_WARNINGS, BadRecord, FileReport, Warn, anthology_venue, clean_text,
                      decoded_lines, parse_date)
from .semantic_scholar import AbstractStore
from .where import CorpusFilter, WhereError

log = logging.getLogger(__name__)

JSONL_SUFFIXES = (".jsonl", ".jsonl.gz", ".jsonl.xz")
CSV_SUFFIXES = (".csv", ".csv.gz", ".csv.xz")
BIB_SUFFIXES = (".bib",)
TEX_SUFFIXES = (".tex",)
# dumps come as .json (the arXiv snapshot) or bare .gz parts (OpenAlex, Semantic Scholar): their content decides
DUMP_SUFFIXES = (".json", ".json.gz", ".json.xz", ".gz", ".xz")
SUPPORTED = ("a .jsonl or .csv file (plain, .gz or .xz), a JSON-lines dump (.json, .gz), a .bib or .tex file, "
             "or a directory of them")
Located = Iterator[tuple[Paper, str]]
HOLD_IN_MEMORY = 200_000  # papers load_papers keeps as objects (~0.45 GB for the shipped 171,277); past it, all go to disk

_SKIPPED_DIRS = {"__pycache__", "node_modules"}


class CorpusError(Exception):
    """A corpus the user pointed at cannot be used; the message says how to fix it."""


def _log_warning(message: str) -> None:
    log.warning("%s", message)


def default_corpus_path() -> Path:
    """The shipped corpus (158,183 papers, 2013–2025 and the earlier records it kept; index/data/README.md)."""
    return Path(__file__).resolve().parents[1] / "data" / "proceedings.jsonl.xz"


SUPPLEMENTS = ("journals.jsonl.xz",)  # shipped beside the corpus: papers of sources it lacks (index/data/README.md)


def default_corpus_paths() -> list[Path]:
    """What the default index is built from: the shipped corpus, then the supplements shipped beside it
    (the machine-learning journals: JMLR, TMLR, ...)."""
    main = default_corpus_path()
    return [main, *(p for name in SUPPLEMENTS if (p := main.with_name(name)).is_file())]


def read_corpus(paths: Iterable[Path | str] | Path | str, warn: Warn = _log_warning,
                where: Sequence[str] = ()) -> Iterator[Paper]:
    """Stream the papers of every path: corpus files by type and layout, directories recursively.

    Every path (and every `--where` clause) is checked before the first paper is read, so a typo fails at once.
    """
    located = _read_located(_checked_paths(paths), warn, _filter(where))
    return (paper for paper, _where in located)


PROGRESS_EVERY = 1000  # records between two calls of load_papers' progress


def load_papers(paths: Iterable[Path | str] | Path | str, warn: Warn = _log_warning,
                where: Sequence[str] = (), hold: int = HOLD_IN_MEMORY,
                progress: Callable[[int], object] | None = None) -> Sequence[Paper]:
    """All papers of `paths` that pass `where`, one per work, in reading order; `progress` is told how
    many more records were read, every `PROGRESS_EVERY` of them and at the end.

    A repeated id is dropped (the first one wins, each drop is warned); a record of a work already
    read from another file, or with the same DOI or arXiv id, is merged into the first one (its blanks
    filled, its references united) and reported. Up to `hold` papers come back as a list; past that
    they are spilled to a temporary on-disk table as they are read (paper_store.py) and come back as
    a view reading them from there, so a 1M-record dump never sits in memory.
    """
    checked = _checked_paths(paths)
    keep = _filter(where)
    kept = PaperSet(title_needs_other_source=True)
    files: list[str] = []
    first_seen = array("q")  # per kept paper: file number << 32 | line; a million 'file:line' strings cost 0.1 GB
    duplicates = merged = 0

    def seen_at(paper_id: str) -> str:
        located = first_seen[kept.position(paper_id)]  # type: ignore[index]
        return f"{files[located >> 32]}:{located & 0xFFFFFFFF}"

    read = 0
    for paper, at in _read_located(checked, warn, keep):
        read += 1
        if progress is not None and read % PROGRESS_EVERY == 0:
            progress(PROGRESS_EVERY)
        source, _, line = at.rpartition(":")
        outcome, first, key = kept.add(paper, source=source)
        if outcome == "new":
            if len(kept) > hold:
                kept.spill()
            if not files or files[-1] != source:
                files.append(source)
            first_seen.append((len(files) - 1) << 32 | int(line))
        elif outcome == "duplicate-id":
            duplicates += 1
            if duplicates <= MAX_ROW_WARNINGS:
                warn(f"{at}: duplicate id {paper.id!r} (first seen at {seen_at(paper.id)}); kept the first")
        else:
            merged += 1
            if merged <= MAX_ROW_WARNINGS:
                assert first is not None
                warn(f"{at}: {paper.id!r} is {first.id!r} (same {key.partition(':')[0]}, first seen at "
                     f"{seen_at(first.id)}); merged into it")
    if progress is not None and read % PROGRESS_EVERY:
        progress(read % PROGRESS_EVERY)
    if duplicates > MAX_ROW_WARNINGS:
        warn(f"{duplicates - MAX_ROW_WARNINGS} more duplicate ids dropped ({duplicates} in all)")
    if merged > MAX_ROW_WARNINGS:
        warn(f"{merged - MAX_ROW_WARNINGS} more records merged into papers read before ({merged} in all)")
    if not len(kept):
        names = ", ".join(str(p) for p in checked)
        hint = f" that pass --where {' '.join(where)}" if keep else ""
        raise CorpusError(
            f"{names} contains no usable papers{hint}: every record needs a title or an abstract "
            f"(see the warnings above). Point peerlint at {SUPPORTED}, "
            f"or leave the corpus unset to use the shipped proceedings ({default_corpus_path().name})."
        )
    return kept.papers()


def _filter(where: Sequence[str]) -> CorpusFilter | None:
    try:
        keep = CorpusFilter.parse(where)
    except WhereError as err:
        raise CorpusError(str(err)) from None
    return keep or None


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
        kind = _kind(path) if path.is_file() else "directory"
        if kind is None:
            raise CorpusError(f"{path} is not a corpus file peerlint reads: pass {SUPPORTED}")
        if kind in ("jsonl", "dump"):
            try:  # an unknown layout fails before any reading
                if layouts.sniff(path, lambda message: None, strict=kind == "dump") is None:
                    raise CorpusError(f"{path} holds no JSON lines: pass {SUPPORTED}")
            except layouts.UnknownLayout as err:
                raise CorpusError(str(err)) from None
    return checked


def _kind(path: Path) -> str | None:
    name = path.name.lower()
    for kind, suffixes in (("jsonl", JSONL_SUFFIXES), ("csv", CSV_SUFFIXES), ("bib", BIB_SUFFIXES),
                           ("tex", TEX_SUFFIXES), ("dump", DUMP_SUFFIXES)):
        if name.endswith(suffixes):
            return kind
    return None


def _files(paths: list[Path]) -> Iterator[tuple[Path, str, bool]]:
    """(file, id of a .tex paper, given by name) for every corpus file: given files as they are, directories
    walked in a stable order (a folder's files before its subfolders, hidden folders skipped); .tex ids are
    paths relative to the directory given."""
    for path in paths:
        if not path.is_dir():
            yield path, path.name, True
            continue
        for folder, dirnames, filenames in os.walk(path):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in _SKIPPED_DIRS)
            for filename in sorted(filenames):
                found = Path(folder) / filename
                if not filename.startswith(".") and _kind(found) is not None:
                    yield found, found.relative_to(path).as_posix(), False


def _read_located(paths: list[Path], warn: Warn, keep: CorpusFilter | None = None) -> Located:
    """(paper, 'file:line') for every usable record of `paths` that `keep` keeps.

    JSON-lines files are sniffed first, so that Semantic Scholar abstracts files can be loaded into
    their join table before any papers file is read, wherever they sit in the list.
    """
    files: list[tuple[Path, str, str | None]] = []
    for path, tex_id, named in _files(paths):
        layout, kind = None, _kind(path)
        if kind in ("jsonl", "dump"):
            try:
                layout = layouts.sniff(path, lambda message: None, strict=kind == "dump" and not named)
            except layouts.UnknownLayout as err:
                if kind == "jsonl":  # a stray .jsonl in a directory; a named one failed in _checked_paths
                    warn(f"{err}; skipped")
                continue
            if layout is None:  # a .json or .gz in a directory that is not JSON lines: not a corpus file
                continue
        files.append((path, tex_id, layout))
    abstracts = [path for path, _, layout in files if layout == layouts.S2_ABSTRACTS]
    store = None
    if abstracts:
        if any(layout == layouts.S2_PAPERS for _, _, layout in files):
            store = AbstractStore()
            for path in abstracts:
                store.add_file(path, warn)
        else:
            for path in abstracts:
                warn(f"{path}: a Semantic Scholar abstracts file is joined to its papers file on corpusid; "
                     "pass the papers file too; skipped")
    try:
        for path, tex_id, layout in files:
            if layout == layouts.S2_ABSTRACTS:
                continue
            for paper, at in _read_file(path, tex_id, layout, warn, store):
                if keep is None or keep.keeps(paper):
                    yield paper, at
    finally:
        if store is not None:
            store.close()


def _read_file(path: Path, tex_id: str, layout: str | None, warn: Warn, store) -> Located:
    kind = _kind(path)
    if kind in ("jsonl", "dump"):
        if layout in (None, layouts.PROCEEDINGS):
            return _read_jsonl(path, warn, _proceedings)
        return _read_jsonl(path, warn, layouts.converter_for(layout, store))
    if kind == "csv":
        return _read_csv(path, warn)
    return read_bib(path, warn) if kind == "bib" else read_tex(path, tex_id, warn)


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
    venue, url = _text_field(record, "venue"), _text_field(record, "url")
    if url.startswith(ANTHOLOGY_URL):  # the shipped corpus predates `anthology_venue` in its builder
        venue = anthology_venue(venue)
    return Paper(
        id=_text_field(record, "id") or fallback_id,
        title=title,
        abstract=abstract,
        venue=venue,
        year=year,
        status=_text_field(record, "status"),
        authors=split_names(_names(record.get("authors"), "authors")),  # "A B, C D" as one string: two people
        keywords=_names(record.get("keywords"), "keywords"),
        url=url,
        rating_avg=_number(record.get("rating_avg"), "rating_avg", float),
        citations=_number(record.get("citations"), "citations", int),
        date=date,
        references=_names(record.get("references"), "references"),
        doi=normalise_doi(_text_field(record, "doi")),
        arxiv_id=normalise_arxiv_id(arxiv) if (arxiv := _text_field(record, "arxiv_id")) else "",
        categories=_names(record.get("categories"), "categories"),
    )


def _proceedings(record: Mapping[str, object], fallback_id: str) -> list[Paper]:
    return [_paper_from_record(record, fallback_id)]


# --- JSONL and CSV ------------------------------------------------------------------------------------


def _read_jsonl(path: Path, warn: Warn, convert: layouts.Converter) -> Located:
    """One record a line, converted by the file's layout; a bad line costs only itself."""
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
            papers = convert(record, f"{path.name}:{lineno}")
        except BadRecord as err:
            report.skip(lineno, str(err))
            continue
        for paper in papers:
            if isinstance(paper, BadRecord):
                report.skip(lineno, str(paper))
            else:
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
