"""RINoBench items (Schopf & Färber, 2025/LREC 2026) read from the layouts its data comes in.

The official split (`test.json` on GitHub, the Hugging Face dataset `TimSchopf/RINoBench`) is a
list of records: `research_idea` {objective, problem_statement, solution_approach},
`novelty_score` (1–5), `novelty_reasoning`, `related_works` [{title, abstract, authors, url, venue,
year}], plus `source` and `venueid`.  The reader also takes JSON Lines, an object holding one split
(`{"test": [...]}`, or the datasets-server's `{"rows": [{"row": {...}}]}`), idea fields at the
top level instead of nested, an idea stored as a JSON string, and `novelty_score_justification`
(the name the dataset's own processing code uses) for the reasoning.  A record that is still
unusable is skipped and counted with its reason; a file that yields no item at all is an error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

IDEA_FIELDS = ("objective", "problem_statement", "solution_approach")
SCORES = (1, 2, 3, 4, 5)
SPLIT_KEYS = ("test", "train", "data", "items", "rows")
REASONING_KEYS = ("novelty_reasoning", "novelty_score_justification")


class RinoDataError(ValueError):
    """The file cannot be read as RINoBench data; the message names the fix."""


@dataclass(frozen=True)
class ResearchIdea:
    objective: str
    problem_statement: str
    solution_approach: str

    def render(self) -> str:
        """The idea as prompts show it (the paper's Figure 6 passes these three aspects)."""
        return (f"Objective: {self.objective}\nProblem statement: {self.problem_statement}\n"
                f"Solution approach: {self.solution_approach}")


@dataclass(frozen=True)
class RelatedWork:
    title: str
    abstract: str
    year: int | None = None
    venue: str = ""
    url: str = ""


@dataclass(frozen=True)
class RinoItem:
    """One research idea with its gold judgment; `id` is the record's `source` or its position."""

    id: str
    idea: ResearchIdea
    novelty_score: int
    novelty_reasoning: str
    related_works: tuple[RelatedWork, ...]


@dataclass(frozen=True)
class Skipped:
    position: int  # 1-based record number (line number for JSON Lines)
    reason: str


@dataclass(frozen=True)
class RinoData:
    """What a file gave: the usable items, what was skipped and why, and the layout recognised."""

    path: str
    layout: str
    items: tuple[RinoItem, ...]
    skipped: tuple[Skipped, ...] = ()
    dropped_works: int = 0  # related-work entries without a title or abstract, left out of their item


class _Bad(ValueError):
    """One record is unusable (becomes a `Skipped`)."""


def _text(value: Any, what: str, required: bool = True) -> str:
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise _Bad(f"no {what}")
        return ""
    if not isinstance(value, str):
        raise _Bad(f"{what} is {type(value).__name__}, not text")
    return " ".join(value.split())


def _idea(record: dict[str, Any]) -> ResearchIdea:
    raw = record.get("research_idea")
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            raise _Bad("research_idea is plain text, not an object with "
                       + ", ".join(IDEA_FIELDS)) from None
    if raw is None:
        raw = record  # flat layout: the three aspects at the top level
    if not isinstance(raw, dict):
        raise _Bad(f"research_idea is {type(raw).__name__}, not an object")
    missing = [f for f in IDEA_FIELDS if not (isinstance(raw.get(f), str) and raw.get(f).strip())]
    if missing:
        raise _Bad("research idea lacks " + ", ".join(missing))
    return ResearchIdea(*(_text(raw[f], f) for f in IDEA_FIELDS))


def _score(value: Any) -> int:
    if isinstance(value, bool):
        raise _Bad(f"novelty_score {value!r} is not a number")
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise _Bad(f"novelty_score {value!r} is not a number") from None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int):
        raise _Bad(f"novelty_score {value!r} is not a whole number" if value is not None else "no novelty_score")
    if value not in SCORES:
        raise _Bad(f"novelty_score {value} is outside the 1-5 rubric")
    return value


def _year(value: Any) -> int | None:
    try:
        return int(value) if value not in (None, "") else None
    except (TypeError, ValueError):
        return None


def _works(value: Any) -> tuple[tuple[RelatedWork, ...], int]:
    """The usable related works and how many entries were dropped."""
    if value is None:
        return (), 0
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise _Bad("related_works is text, not a list") from None
    if not isinstance(value, list):
        raise _Bad(f"related_works is {type(value).__name__}, not a list")
    works, dropped = [], 0
    for entry in value:
        if not isinstance(entry, dict):
            dropped += 1
            continue
        title = entry.get("title") if isinstance(entry.get("title"), str) else ""
        abstract = entry.get("abstract") if isinstance(entry.get("abstract"), str) else ""
        if not title.strip() and not abstract.strip():
            dropped += 1
            continue
        venue = entry.get("venue") if isinstance(entry.get("venue"), str) else ""
        url = entry.get("url") if isinstance(entry.get("url"), str) else ""
        works.append(RelatedWork(" ".join(title.split()), " ".join(abstract.split()), _year(entry.get("year")),
                                 venue, url))
    return tuple(works), dropped


def parse_item(record: Any, position: int) -> tuple[RinoItem, int]:
    """One record as a `RinoItem` and the number of related works dropped; `_Bad` if unusable."""
    if isinstance(record, dict) and isinstance(record.get("row"), dict):
        record = record["row"]  # datasets-server rows
    if not isinstance(record, dict):
        raise _Bad(f"a {type(record).__name__}, not an object")
    reasoning = next((record[k] for k in REASONING_KEYS if k in record), None)
    works, dropped = _works(record.get("related_works"))
    source = record.get("source")
    item = RinoItem(
        id=source if isinstance(source, str) and source.strip() else f"item-{position}",
        idea=_idea(record),
        novelty_score=_score(record.get("novelty_score")),
        novelty_reasoning=_text(reasoning, "novelty_reasoning"),
        related_works=works,
    )
    return item, dropped


def _records(text: str, path: Path) -> tuple[str, list[tuple[int, Any]], list[Skipped]]:
    """(layout, [(position, record)], lines that are not JSON) for a JSON document or JSON Lines."""
    try:
        whole = json.loads(text)
    except ValueError:
        whole = None
        lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
        if len(lines) < 2:
            raise RinoDataError(
                f"{path} is not JSON: give the RINoBench split as a JSON list of records or as JSON Lines") from None
        records, bad = [], []
        for n, line in lines:
            try:
                records.append((n, json.loads(line)))
            except ValueError:
                bad.append(Skipped(n, "line is not JSON"))
        return "JSON Lines", records, bad
    if isinstance(whole, list):
        return "JSON list", list(enumerate(whole, 1)), []
    if isinstance(whole, dict):
        for key in SPLIT_KEYS:
            if isinstance(whole.get(key), list):
                return f"JSON object, split {key!r}", list(enumerate(whole[key], 1)), []
        if "novelty_score" in whole:
            return "one JSON record", [(1, whole)], []
    raise RinoDataError(
        f"{path} holds JSON but no list of records: expected a list, JSON Lines, or an object with one of "
        + ", ".join(repr(k) for k in SPLIT_KEYS))


def read_rinobench(path: str | Path) -> RinoData:
    """Read a RINoBench split; `RinoDataError` when the file is missing, unreadable or holds no item."""
    path = Path(path)
    if not path.exists():
        raise RinoDataError(f"no such file: {path} (download test.json of RINoBench, or use the shipped sample)")
    if path.is_dir():
        raise RinoDataError(f"{path} is a directory: give the split's file, e.g. {path / 'test.json'}")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise RinoDataError(f"{path} is not UTF-8 text: is it the Parquet file? Export the split to JSON") from None
    except OSError as exc:
        raise RinoDataError(f"cannot read {path} ({exc.strerror or exc})") from None
    layout, records, skipped = _records(text, path)
    return collect(records, str(path), layout, skipped)


def collect(records: Iterable[tuple[int, Any]], path: str, layout: str, skipped: list[Skipped] | None = None) -> RinoData:
    """Parse numbered records into `RinoData`, counting what is skipped; error if nothing is usable."""
    items, skipped, dropped = [], list(skipped or []), 0
    for position, record in records:
        try:
            item, lost = parse_item(record, position)
        except _Bad as exc:
            skipped.append(Skipped(position, str(exc)))
            continue
        items.append(item)
        dropped += lost
    if not items:
        first = f" (first problem, record {skipped[0].position}: {skipped[0].reason})" if skipped else ""
        raise RinoDataError(f"{path} holds no usable RINoBench item{first}: each record needs research_idea "
                            "(objective, problem_statement, solution_approach), novelty_score 1-5 and "
                            "novelty_reasoning")
    return RinoData(path, layout, tuple(items), tuple(sorted(skipped, key=lambda s: s.position)), dropped)
