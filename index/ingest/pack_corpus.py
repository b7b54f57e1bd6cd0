"""Build the default corpus peerlint ships from the public repositories it comes from.

    python -m peerlint.index.ingest.pack_corpus \\
        --paperlists /path/to/paperlists.git --mlanthology /path/to/mlanthology.git \\
        --anthology /path/to/acl-anthology.git \\
        --previous ../shared/data/proceedings \\
        --out index/data/proceedings.jsonl.xz --provenance index/data/provenance.json

Each source is a git directory (every version in its history is read, and for each venue and year the
version with the most abstracts is kept) or a plain checkout. Records of one paper from two sources or
two files become one (`merge`); records left without an abstract of MIN_ABSTRACT_CHARS are dropped.
The output is compact JSON, one object a line, sorted by venue, year and id; `.xz` outputs are
compressed with xz preset 9e. `--previous` keeps an earlier shipped corpus's records unchanged under
their ids (a new record that duplicates one is dropped), so what benches, tests and caches know by id
stays. The same inputs give the same bytes, and the provenance file names each source's repository,
licence, HEAD and the commit of every file version used, with counts.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import lzma
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .corpus_sources import MIN_ABSTRACT_CHARS, SOURCES, Chosen, Slot, SourceError, SourceRecord, read_source, records_of
from .identity import normalise_title

# --- merging: one paper, one record --------------------------------------------------------------------


def _keys(record: SourceRecord) -> list[tuple[str, ...]]:
    keys: list[tuple[str, ...]] = []
    if record.doi:
        keys.append(("doi", record.doi))
    if record.arxiv_id:
        keys.append(("arxiv", record.arxiv_id))
    if record.openreview_id:
        keys.append(("openreview", record.openreview_id))
    if title := normalise_title(record.title):
        keys.append(("title", record.venue_key, str(record.year), title))
    return keys


def group_same_papers(records: Sequence[SourceRecord]) -> list[list[SourceRecord]]:
    """Records that share a DOI, an arXiv or OpenReview id, or a normalised title within one venue-year.

    An identifier that one source gives to two different records of its own (a proceedings volume's
    DOI, a copy-paste error) identifies nothing and is not used.
    """
    per_source = Counter((r.source, key) for r in records for key in _keys(r) if key[0] != "title")
    parent = list(range(len(records)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[tuple[str, ...], int] = {}
    for i, record in enumerate(records):
        for key in _keys(record):
            if key[0] != "title" and per_source[(record.source, key)] > 1:
                continue
            if key in owner:
                a, b = find(owner[key]), find(i)
                if a != b:
                    parent[max(a, b)] = min(a, b)
            else:
                owner[key] = i
    groups: dict[int, list[SourceRecord]] = {}
    for i, record in enumerate(records):
        groups.setdefault(find(i), []).append(record)
    return list(groups.values())


def _first(values: Iterable):
    return next((v for v in values if v not in (None, "", ())), None)


def merge(group: Sequence[SourceRecord], priority: Sequence[str]) -> dict:
    """One corpus record from the records of one paper; sources earlier in `priority` win each field.

    Decisions, ratings and keywords come from the OpenReview-derived source where it has them; the
    abstract is the longest cleaned one (sources truncate, never pad).
    """
    rank = {name: i for i, name in enumerate(priority)}
    ordered = sorted(group, key=lambda r: (rank.get(r.source, len(rank)), -len(r.abstract), r.local_id))
    head = ordered[0]
    abstract = max((r.abstract for r in ordered), key=len)
    record: dict = {
        "id": _paper_id(head),
        "title": head.title,
        "abstract": abstract,
        "venue": head.venue,
        "year": head.year,
        "status": _first(r.status for r in ordered) or "",
        "authors": list(_first(r.authors for r in ordered) or ()),
        "keywords": list(_first(r.keywords for r in ordered) or ()),
        "url": _first(r.url for r in ordered) or "",
        "rating_avg": _first(r.rating_avg for r in ordered),
        "citations": _first(r.citations for r in ordered),
    }
    for key in ("date", "doi", "arxiv_id"):
        if value := _first(getattr(r, key) for r in ordered):
            record[key] = value
    return record


def _paper_id(record: SourceRecord) -> str:
    """paperlists ids keep today's form (`iclr2017-B1-Hhnslg`); mlanthology keys are unique and readable as they are."""
    if record.source == "rbnyng/mlanthology" and record.local_id:
        return record.local_id
    local = record.local_id or hashlib.sha1(normalise_title(record.title).encode()).hexdigest()[:12]
    return f"{record.venue_key}{record.year}-{local}"


# --- the whole build -------------------------------------------------------------------------------------


@dataclass
class Built:
    records: list[dict]
    provenance: dict


def build(sources: Sequence[tuple[str, Path]], warn=print, fetched_from: dict[str, str] | None = None) -> Built:
    """Read every source, keep the best version of each venue-year, merge, drop records without abstracts."""
    priority = [SOURCES[name].name for name, _ in sources]
    chosen_by_source: list[tuple[str, dict[Slot, Chosen], str]] = []
    for name, root in sources:
        chosen, head = read_source(SOURCES[name], root, warn)
        chosen_by_source.append((name, chosen, head))
    records = [r for _, chosen, _ in chosen_by_source for r in records_of(chosen)]
    groups = group_same_papers(records)
    merged = [merge(group, priority) for group in groups]
    kept = [r for r in merged if len(r["abstract"]) >= MIN_ABSTRACT_CHARS]
    kept.sort(key=lambda r: (r["venue"].lower(), r["year"], r["id"], r["title"]))
    _unique_ids(kept)
    ambiguous = _drop_shared_identifiers(kept)
    provenance = {
        "corpus": "peerlint default corpus: main venues of ML, NLP, CV, IR and AI with abstracts",
        "min_abstract_chars": MIN_ABSTRACT_CHARS,
        "sources": [_source_provenance(name, chosen, head, (fetched_from or {}).get(name, ""))
                    for name, chosen, head in chosen_by_source],
        "merge": {"source_records": len(records), "papers": len(merged), "merged_away": len(records) - len(merged),
                  "dropped_without_abstract": len(merged) - len(kept),
                  "shared_identifiers_dropped": ambiguous,
                  "keys": "DOI, arXiv id, OpenReview id, normalised title within one venue-year",
                  "withdrawn": "kept, with the source's status (Withdraw, Desk Reject)"},
        "total": len(kept),
        "counts": _counts(kept),
    }
    return Built(kept, provenance)


def read_previous(path: Path) -> list[dict]:
    """The records of a previously shipped corpus: a folder of `*.jsonl` files (read in name order), or
    one `.jsonl` / `.jsonl.xz` file. The constant `source` field of the old folder layout is dropped."""
    files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path] if path.is_file() else []
    if not files:
        raise SourceError(f"{path}: no *.jsonl files to keep as the previous corpus")
    records = []
    for file in files:
        opener = lzma.open if file.name.endswith(".xz") else open
        with opener(file, "rt", encoding="utf-8") as handle:
            for n, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise SourceError(f"{file}:{n}: not a JSON record ({exc.msg})") from exc
                record.pop("source", None)
                records.append(record)
    return records


def keep_previous(built: Built, previous: Sequence[dict], where: str) -> Built:
    """`built` plus every record of `previous`, unchanged and under its old id, so that what users, benches
    and caches know by id stays; a new record that is one of them (same id or same normalised title) is
    dropped in its favour."""
    ids = {r["id"] for r in previous}
    titles = {normalise_title(r["title"]) for r in previous}
    fresh = [r for r in built.records if r["id"] not in ids and normalise_title(r["title"]) not in titles]
    records = [*previous, *fresh]
    records.sort(key=lambda r: (r["venue"].lower(), int(r.get("year") or 0), r["id"], r["title"]))
    provenance = dict(built.provenance)
    provenance["previous"] = {"path": where, "records": len(previous),
                              "new_records_dropped_as_duplicates": len(built.records) - len(fresh),
                              "rule": "previous records kept unchanged; a new record with the same id or "
                                      "normalised title is dropped"}
    provenance["total"] = len(records)
    provenance["counts"] = _counts(records)
    return Built(records, provenance)


def drop_held(built: Built, held: Sequence[dict], where: str) -> Built:
    """`built` without the papers `held` (another corpus) has: same DOI, arXiv id or normalised title. A
    supplement written beside the shipped corpus holds only what that corpus lacks."""
    keys = {(k, r[k]) for r in held for k in ("doi", "arxiv_id") if r.get(k)}
    titles = {normalise_title(r["title"]) for r in held}
    fresh = [r for r in built.records
             if normalise_title(r["title"]) not in titles and not any((k, r.get(k)) in keys for k in ("doi", "arxiv_id"))]
    provenance = dict(built.provenance)
    provenance["corpus"] = f"peerlint supplement: the papers of these sources that {Path(where).name} lacks"
    provenance["beside"] = {"path": where, "records": len(held), "dropped_as_held": len(built.records) - len(fresh),
                            "rule": "a record whose DOI, arXiv id or normalised title that corpus holds is dropped"}
    provenance["total"] = len(fresh)
    provenance["counts"] = _counts(fresh)
    return Built(fresh, provenance)


def _counts(records: Iterable[dict]) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {}
    for r in records:
        venue = counts.setdefault(r["venue"], {})
        venue[str(r["year"])] = venue.get(str(r["year"]), 0) + 1
    return {venue: dict(sorted(years.items())) for venue, years in sorted(counts.items())}


def _drop_shared_identifiers(records: list[dict]) -> dict[str, int]:
    """Remove a DOI or arXiv id that two different papers carry (a source's error): readers merge on them."""
    counts = Counter((key, r[key]) for r in records for key in ("doi", "arxiv_id") if r.get(key))
    dropped = {"doi": 0, "arxiv_id": 0}
    for record in records:
        for key in ("doi", "arxiv_id"):
            if record.get(key) and counts[(key, record[key])] > 1:
                del record[key]
                dropped[key] += 1
    return dropped


def _unique_ids(records: list[dict]) -> None:
    seen: Counter[str] = Counter()
    for record in records:
        seen[record["id"]] += 1
        if seen[record["id"]] > 1:
            record["id"] = f"{record['id']}-{seen[record['id']]}"


def _source_provenance(name: str, chosen: dict[Slot, Chosen], head: str, fetched_from: str) -> dict:
    source = SOURCES[name]
    files = []
    for (venue_key, year, _), pick in sorted(chosen.items()):
        files.append({"venue": venue_key, "year": year, "path": pick.version.path, "commit": pick.version.commit,
                      "commit_date": pick.version.date, "blob": pick.version.blob, "records": len(pick.records),
                      "with_abstract": sum(r.has_abstract for r in pick.records)})
    described = {"name": source.name, "repository": source.repository, "licence": source.licence, "head": head}
    if fetched_from:
        described["fetched_from"] = fetched_from  # a fork or mirror holding the same history
    return {**described, "files": files}


def write(built: Built, out: Path, provenance: Path | None) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in built.records)
    data = text.encode("utf-8")
    if out.name.endswith(".xz"):
        data = lzma.compress(data, preset=9 | lzma.PRESET_EXTREME)
    out.write_bytes(data)
    if provenance is not None:
        provenance.parent.mkdir(parents=True, exist_ok=True)
        provenance.write_text(json.dumps(built.provenance, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def count_table(counts: dict[str, dict[str, int]]) -> str:
    """Venue x year counts as a fixed-width table, a total per row and per column."""
    years = sorted({y for per in counts.values() for y in per})
    lines = ["venue    " + "".join(f"{y:>7}" for y in years) + "   total"]
    for venue in sorted(counts):
        per = counts[venue]
        lines.append(f"{venue:<9}" + "".join(f"{per.get(y, 0) or '.':>7}" for y in years) + f"{sum(per.values()):>8}")
    column = [sum(per.get(y, 0) for per in counts.values()) for y in years]
    lines.append("total    " + "".join(f"{n:>7}" for n in column) + f"{sum(column):>8}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m peerlint.index.ingest.pack_corpus",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--paperlists", type=Path, help="papercopilot/paperlists: git directory or checkout")
    parser.add_argument("--mlanthology", type=Path, help="rbnyng/mlanthology: git directory or checkout")
    parser.add_argument("--anthology", type=Path, help="acl-org/acl-anthology (or a fork): git directory or checkout")
    parser.add_argument("--journals", type=Path, help="rbnyng/mlanthology read for its journals (JMLR, TMLR, "
                        "Machine Learning, JAIR, Neural Computation, FnT ML, DMLR), every year")
    parser.add_argument("--out", type=Path, required=True, help="output, e.g. index/data/proceedings.jsonl.xz "
                        "(.xz: compressed; .jsonl: plain)")
    parser.add_argument("--provenance", type=Path, help="where to write the provenance JSON")
    parser.add_argument("--fetched-from", action="append", default=[], metavar="SOURCE=WHERE",
                        help="record that a source was read from a fork or mirror, e.g. "
                             "anthology=https://github.com/yhamidullah/acl-anthology (repeatable)")
    parser.add_argument("--previous", type=Path, metavar="PATH",
                        help="a previously shipped corpus (a folder of *.jsonl, or one .jsonl/.jsonl.xz) whose records "
                             "are kept unchanged under their ids; new records that duplicate one are dropped")
    parser.add_argument("--beside", type=Path, metavar="PATH",
                        help="a corpus (.jsonl or .jsonl.xz) this one supplements: records it holds are dropped")
    args = parser.parse_args(argv)
    sources = [(name, path) for name, path in (("paperlists", args.paperlists), ("mlanthology", args.mlanthology),
                                                    ("anthology", args.anthology), ("journals", args.journals))
               if path is not None]
    if not sources:
        parser.error("name at least one source: --paperlists, --mlanthology, --anthology, --journals")
    fetched_from = dict(item.split("=", 1) for item in args.fetched_from if "=" in item)
    if unknown := sorted(set(fetched_from) - {name for name, _ in sources}):
        parser.error(f"--fetched-from names {', '.join(unknown)}, which is not a source given here")
    try:
        built = build(sources, warn=lambda message: print(f"peerlint: warning: {message}", file=sys.stderr),
                      fetched_from=fetched_from)
        if args.previous is not None:
            built = keep_previous(built, read_previous(args.previous), args.previous.as_posix())
        if args.beside is not None:
            built = drop_held(built, read_previous(args.beside), args.beside.as_posix())
    except SourceError as err:
        print(f"peerlint: error: {err}", file=sys.stderr)
        return 2
    write(built, args.out, args.provenance)
    print(count_table(built.provenance["counts"]))
    print(f"{args.out}: {len(built.records)} records, {args.out.stat().st_size / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
