"""SchNovel pairs: Algorithm 1 of Lin et al. (2024, Appendix A.4) over any corpus, and a reader.

A pair is two papers of one field published `gap` years apart; the newer one is the label
("later published paper is more novel", Section 3.1).  A field is a venue, or a group of venues
the user names (`ml=NeurIPS,ICML,ICLR`).  The sampler draws `n` distinct pairs per
(field, start year, gap) cell with a generator seeded per cell, so adding a field or a year does
not reshuffle the pairs of the others.

The reader takes our JSONL (`field, start_year, gap, newer, older`), the paper's flat tuple
(`f, g, s, x, y, label`) and the official release's nested JSON
(`{"data": {year: {gap: [{"paper1": {...}, "paper2": {...}}]}}}`, papers inline).  Pairs that
cannot be asked honestly (unknown ids, different fields, equal or reversed years, no abstract)
are skipped and counted by reason, never fatal.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from ...index.papers import Paper

GAPS = tuple(range(2, 11))  # SchNovel's gaps run 2..10 (Algorithm 1 uses 2, 4, 6, 8, 10)


class PairsError(ValueError):
    """A pairs file or a field spec the user must fix; the message says how."""


@dataclass(frozen=True)
class Pair:
    """One question: which of `newer` and `older` (paper ids) is more novel?  `newer` is the label."""

    field: str
    start_year: int  # the newer paper's year (Algorithm 1's s)
    gap: int  # years between the two papers (Algorithm 1's g)
    newer: str
    older: str

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Field:
    """A field of study as the corpus can express it: a name and the venues that make it up."""

    name: str
    venues: tuple[str, ...]


@dataclass
class PairSet:
    """Pairs read from a file, the papers they name (inline papers included), and what was skipped."""

    pairs: list[Pair]
    papers: dict[str, Paper]
    skipped: Counter = field(default_factory=Counter)  # reason -> count
    layout: str = "peerlint"


def parse_fields(specs: Sequence[str]) -> list[Field]:
    """`["ml=NeurIPS,ICML", "CVPR"]` -> fields; a bare venue is a field of its own."""
    fields = []
    for spec in specs:
        for part in [spec] if "=" in spec else spec.split(","):
            name, _, venues = part.partition("=")
            names = tuple(v.strip() for v in (venues or name).split(",") if v.strip())
            if not name.strip() or not names:
                raise PairsError(f"bad field {spec!r}: write a venue (CVPR) or a group (ml=NeurIPS,ICML,ICLR)")
            fields.append(Field(name.strip(), names))
    return fields


class FieldMap:
    """Paper -> field name.  Without explicit fields every venue is its own field; a dotted
    venue such as the arXiv category `cs.LG` falls back to its archive (`cs`)."""

    def __init__(self, fields: Sequence[Field] = ()):
        self.explicit = bool(fields)
        self._of = {v.lower(): f.name for f in fields for v in f.venues}
        self._of.update({f.name.lower(): f.name for f in fields})

    def __call__(self, paper: Paper) -> str | None:
        venue = (paper.venue or "").strip()
        for key in (venue.lower(), venue.split(".")[0].lower()):
            if key in self._of:
                return self._of[key]
        if self.explicit or not venue:
            return None
        return venue.split(".")[0] if "." in venue else venue

    def same(self, a: str, b: str) -> bool:
        return a.lower() == b.lower()


def _usable(paper: Paper) -> bool:
    return paper.year is not None and bool(paper.abstract.strip())


def sample_pairs(papers: Iterable[Paper], total: int | None = None, per_cell: int | None = None,
                 fields: Sequence[Field] = (), start_years: Sequence[int] | None = None,
                 gaps: Sequence[int] = GAPS, seed: int = 0) -> list[Pair]:
    """Algorithm 1: `per_cell` pairs for every (field, start year, gap) the corpus can fill, or
    `total` pairs spread evenly over those cells (the remainder to seeded-random cells)."""
    if (total is None) == (per_cell is None):
        raise PairsError("give either a total number of pairs or a number per (field, start year, gap)")
    field_of = FieldMap(fields)
    ids: dict[tuple[str, int], list[str]] = defaultdict(list)
    for p in papers:
        f = field_of(p)
        if f is not None and _usable(p):
            ids[(f, p.year)].append(p.id)
    for key in ids:
        ids[key] = sorted(set(ids[key]))
    wanted = set(start_years) if start_years else None
    cells = sorted((f, s, g) for (f, s) in ids for g in sorted(set(gaps))
                   if (wanted is None or s in wanted) and g > 0 and (f, s - g) in ids)
    if not cells:
        return []
    counts = [per_cell or 0] * len(cells)
    if total is not None:
        counts = [total // len(cells)] * len(cells)
        for i in random.Random(f"{seed}:extra").sample(range(len(cells)), total % len(cells)):
            counts[i] += 1
    pairs: list[Pair] = []
    for (f, s, g), n in zip(cells, counts):
        rng = random.Random(f"{seed}:{f}:{s}:{g}")
        newer, older = ids[(f, s)], ids[(f, s - g)]
        for x, y in _distinct_pairs(rng, newer, older, n):
            pairs.append(Pair(f, s, g, x, y))
    return pairs


def _distinct_pairs(rng: random.Random, xs: list[str], ys: list[str], n: int) -> list[tuple[str, str]]:
    if n >= len(xs) * len(ys):
        every = [(x, y) for x in xs for y in ys]
        rng.shuffle(every)
        return every
    chosen: dict[tuple[str, str], None] = {}
    while len(chosen) < n:
        chosen.setdefault((rng.choice(xs), rng.choice(ys)))
    return list(chosen)


def write_pairs(pairs: Iterable[Pair], path: Path) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with open(path, "w", encoding="utf-8") as out:
        for pair in pairs:
            out.write(json.dumps(pair.to_json()) + "\n")
            n += 1
    return n


# -- reading -----------------------------------------------------------------------------------

def read_pairs(path: Path, papers: Mapping[str, Paper], fields: Sequence[Field] = ()) -> PairSet:
    """Pairs from any supported layout, checked against the corpus `papers`."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise PairsError(f"cannot read pairs from {path}: {exc}") from None
    result = PairSet([], dict(papers))
    records: list[object] = []
    stripped = text.lstrip()
    if stripped.startswith("{") and '"data"' in stripped[:2000]:
        try:
            doc = json.loads(text)
        except ValueError:
            doc = None
        if isinstance(doc, dict) and isinstance(doc.get("data"), dict):
            result.layout = "schnovel-nested"
            records = list(_nested_records(doc, Path(path).stem, result))
    if not records and result.layout != "schnovel-nested":
        records = _json_records(text, result)
    field_of = FieldMap(fields)
    for record in records:
        pair = _pair_from(record, result)
        if pair is not None:
            reason = _problem(pair, result.papers, field_of)
            if reason:
                result.skipped[reason] += 1
            else:
                result.pairs.append(pair)
    return result


def _json_records(text: str, result: PairSet) -> list[object]:
    stripped = text.strip()
    if stripped.startswith("["):
        try:
            return list(json.loads(stripped))
        except ValueError:
            result.skipped["malformed line"] += 1
            return []
    records = []
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except ValueError:
            result.skipped["malformed line"] += 1
    return records


def _inline_paper(record: Mapping, fallback_field: str) -> Paper:
    title, abstract = str(record.get("title") or "").strip(), str(record.get("abstract") or "").strip()
    pid = str(record.get("id") or "schnovel-" + hashlib.blake2b(f"{title}\n{abstract}".encode(), digest_size=8).hexdigest())
    year = record.get("year")
    if year is None and record.get("unix_timestamp") is not None:
        from datetime import datetime, timezone

        year = datetime.fromtimestamp(float(record["unix_timestamp"]), tz=timezone.utc).year
    venue = str(record.get("categories") or record.get("category") or fallback_field).split()[0]
    return Paper(pid, title, abstract, venue=venue, year=int(year) if year is not None else None)


def _title_key(title: str) -> str:
    return " ".join("".join(c for c in title.lower() if c.isalnum() or c.isspace()).split())


def _nested_records(doc: dict, default_field: str, result: PairSet) -> Iterable[dict]:
    """The official release: papers inline; paper1 is x (the label) unless the dates say otherwise.

    An inline paper whose title is a corpus paper's becomes that paper, so retrieval can leave it
    out (an unnoticed copy in the corpus would hand its own date to the neighbours)."""
    category = str(doc.get("category") or doc.get("field") or default_field)
    by_title = {_title_key(p.title): p for p in result.papers.values() if p.title}
    for year, by_gap in doc["data"].items():
        for gap, items in (by_gap or {}).items():
            for item in items or []:
                try:
                    x, y = _inline_paper(item["paper1"], category), _inline_paper(item["paper2"], category)
                except (KeyError, TypeError, ValueError):
                    result.skipped["malformed line"] += 1
                    continue
                x, y = (by_title.get(_title_key(p.title), p) for p in (x, y))
                result.papers.setdefault(x.id, x)
                result.papers.setdefault(y.id, y)
                if x.year is not None and y.year is not None and y.year > x.year:
                    x, y = y, x
                yield {"f": category, "s": year, "g": gap, "x": x.id, "y": y.id, "label": x.id, "inline": True}


def _pair_from(record: object, result: PairSet) -> Pair | None:
    try:
        if not isinstance(record, dict):
            raise TypeError
        if "newer" in record:
            return Pair(str(record["field"]), int(record["start_year"]), int(record["gap"]),
                        str(record["newer"]), str(record["older"]))
        result.layout = "schnovel-nested" if record.get("inline") else "schnovel"
        x, y, label = str(record["x"]), str(record["y"]), str(record.get("label", record["x"]))
        newer, older = (x, y) if label == x else (y, x)
        return Pair(str(record["f"]), int(record["s"]), int(record["g"]), newer, older)
    except (KeyError, TypeError, ValueError):
        result.skipped["malformed line"] += 1
        return None


def _problem(pair: Pair, papers: Mapping[str, Paper], field_of: FieldMap) -> str | None:
    """Why this pair cannot be asked, or None."""
    a, b = papers.get(pair.newer), papers.get(pair.older)
    if a is None or b is None:
        return "unknown id"
    if pair.newer == pair.older:
        return "same paper twice"
    if not a.abstract.strip() or not b.abstract.strip():
        return "empty abstract"
    if a.year is None or b.year is None:
        return "missing year"
    if a.year == b.year:
        return "equal years"
    if a.year < b.year:
        return "newer paper is older"
    fa, fb = field_of(a), field_of(b)
    if fa is None or fb is None or not field_of.same(fa, fb):
        return "different fields"
    return None
