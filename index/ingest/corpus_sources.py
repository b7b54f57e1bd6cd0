"""The public repositories the default corpus is made from, read file version by file version.

Two sources, each a git directory (every version its history holds is read: a snapshot may lack its
newest large files while older, smaller versions of them are still there) or a plain folder (a checkout,
read as one version):

- papercopilot/paperlists: `VENUE/VENUEYEAR.json`, a list of records with OpenReview decisions and mean
  ratings where the venue has them;
- rbnyng/mlanthology: `data/papers/VENUE-YEAR.json.gz` ({"papers": [...]}) and
  `data/legacy/VENUE-legacy.jsonl.gz` (older years, one record a line).
  The same repository read for its journals (`JOURNALS`, every year) is the source of the journals
  supplement shipped beside the corpus (`pack_corpus --journals … --beside CORPUS`).

For each source, venue and year the version with the most records carrying an abstract is kept (then
the most records, then the newest commit), so a later version that dropped its abstracts never replaces
an earlier one that had them. Every record becomes a `SourceRecord` with its text already cleaned of
HTML and LaTeX (`markup.clean_markup`).
"""

from __future__ import annotations

import gzip
import json
import re
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .identity import doi_of_url, normalise_arxiv_id, normalise_doi, split_names
from .markup import clean_markup, clean_title
from .records import ANTHOLOGY_URL, anthology_venue

MIN_ABSTRACT_CHARS = 200  # shorter "abstracts" are titles repeated, "N/A" or a truncated first line

# source directory / file name -> (id prefix, venue as shown)
VENUES: dict[str, tuple[str, str]] = {
    "iclr": ("iclr", "ICLR"), "nips": ("neurips", "NeurIPS"), "neurips": ("neurips", "NeurIPS"),
    "icml": ("icml", "ICML"), "cvpr": ("cvpr", "CVPR"), "iccv": ("iccv", "ICCV"), "eccv": ("eccv", "ECCV"),
    "aaai": ("aaai", "AAAI"), "ijcai": ("ijcai", "IJCAI"), "kdd": ("kdd", "KDD"), "www": ("www", "WWW"),
    "sigir": ("sigir", "SIGIR"), "corl": ("corl", "CoRL"), "colm": ("colm", "COLM"),
    "aistats": ("aistats", "AISTATS"), "uai": ("uai", "UAI"), "colt": ("colt", "COLT"), "acl": ("acl", "ACL"),
    "emnlp": ("emnlp", "EMNLP"), "naacl": ("naacl", "NAACL"), "coling": ("coling", "COLING"),
}
FIRST_YEAR = 2013
JOURNALS_FIRST_YEAR = 1985
# the machine-learning journals of rbnyng/mlanthology, every year it holds: the supplement beside the
# conference corpus (`index/data/journals.jsonl.xz`)
JOURNALS: dict[str, tuple[str, str]] = {
    "jmlr": ("jmlr", "JMLR"), "tmlr": ("tmlr", "TMLR"), "mlj": ("mlj", "Machine Learning"),
    "jair": ("jair", "JAIR"), "neco": ("neco", "Neural Computation"), "ftml": ("ftml", "FnT ML"),
    "dmlr": ("dmlr", "DMLR"),
}
Slot = tuple[str, int, str]  # (venue key, year, file path)


class SourceError(ValueError):
    """A source cannot be read; the message names the path and the fix."""


@dataclass(frozen=True)
class FileVersion:
    """One version of one file: its path in the repository, the commit that holds it and its blob id."""

    path: str
    commit: str = ""  # newest commit found holding this blob; '' for a plain folder
    date: str = ""  # that commit's date, YYYY-MM-DD
    blob: str = ""


@dataclass(frozen=True)
class SourceRecord:
    """One paper as one source file states it, text cleaned, ready to merge."""

    source: str
    venue_key: str  # lower-case id prefix: "neurips"
    venue: str  # as shown: "NeurIPS"
    year: int
    local_id: str  # the source's own id of the paper (paperlists id, mlanthology bibtex key)
    title: str
    abstract: str
    status: str = ""
    authors: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    url: str = ""
    rating_avg: float | None = None
    citations: int | None = None
    date: str = ""
    doi: str = ""
    arxiv_id: str = ""
    openreview_id: str = ""

    @property
    def has_abstract(self) -> bool:
        return len(self.abstract) >= MIN_ABSTRACT_CHARS


@dataclass
class Chosen:
    """The version kept for one (venue key, year) of one source, with its records."""

    version: FileVersion
    records: list[SourceRecord] = field(default_factory=list)

    @property
    def score(self) -> tuple[int, int, str, str]:
        return (sum(r.has_abstract for r in self.records), len(self.records), self.version.date, self.version.commit)


# --- reading a repository: every version of its files --------------------------------------------------


class Tree:
    """The files of a source: a git directory (all versions in its history) or a plain folder."""

    def __init__(self, root: Path) -> None:
        self.root = root
        if not root.is_dir():
            raise SourceError(f"{root}: no such directory; pass the source's git directory or a checkout of it")
        self.git = (root / "objects").is_dir() and (root / "HEAD").is_file()
        self._cat: subprocess.Popen[bytes] | None = None

    def head(self) -> str:
        if self.git:
            return self._run("rev-parse", "HEAD").strip()
        if (self.root / ".git").exists():
            done = subprocess.run(["git", "-C", str(self.root), "rev-parse", "HEAD"], capture_output=True, text=True)
            return done.stdout.strip()
        return ""

    def versions(self, wanted: Callable[[str], bool]) -> list[FileVersion]:
        """Every distinct version of every wanted path, newest first; missing blobs are left out."""
        if not self.git:
            return [FileVersion(p.relative_to(self.root).as_posix()) for p in sorted(self.root.rglob("*"))
                    if p.is_file() and wanted(p.relative_to(self.root).as_posix())]
        found: dict[tuple[str, str], FileVersion] = {}
        commit = date = ""
        log = self._run("log", "--all", "--raw", "--no-abbrev", "--no-renames", "--format=C %H %cs")
        for line in log.splitlines():
            if line.startswith("C "):
                _, commit, date = line.split()
            elif line.startswith(":") and "\t" in line:
                meta, path = line.split("\t", 1)
                blob = meta.split()[3]
                if wanted(path) and set(blob) != {"0"} and (path, blob) not in found:
                    found[(path, blob)] = FileVersion(path, commit, date, blob)  # the newest commit that wrote it
        present = self._present([v.blob for v in found.values()])
        return sorted((v for v in found.values() if v.blob in present),
                      key=lambda v: (v.path, v.date, v.commit), reverse=True)

    def _present(self, blobs: list[str]) -> set[str]:
        """The blobs the snapshot holds (large files may be listed in trees but absent)."""
        done = subprocess.run(["git", "--git-dir", str(self.root), "cat-file", "--batch-check"],
                              input="\n".join(blobs) + "\n", capture_output=True, text=True)
        return {parts[0] for line in done.stdout.splitlines() if len(parts := line.split()) == 3 and parts[1] == "blob"}

    def head_files(self, prefix: str) -> dict[str, bytes]:
        """The files under `prefix` as the newest version holds them (small lookup tables)."""
        if not self.git:
            base = self.root / prefix
            return {p.relative_to(self.root).as_posix(): p.read_bytes() for p in sorted(base.rglob("*")) if p.is_file()} \
                if base.is_dir() else {}
        files = {}
        for entry in self._run("ls-tree", "-r", "HEAD", "--", prefix).splitlines():
            meta, path = entry.split("\t", 1)
            if (data := self.read(FileVersion(path, blob=meta.split()[2]))) is not None:
                files[path] = data
        return files

    def read(self, version: FileVersion) -> bytes | None:
        """The bytes of one version, or None where the snapshot lacks them."""
        if not self.git:
            return (self.root / version.path).read_bytes()
        if self._cat is None:
            self._cat = subprocess.Popen(["git", "-C", str(self.root), "cat-file", "--batch"],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self._cat.stdin and self._cat.stdout
        self._cat.stdin.write(version.blob.encode() + b"\n")
        self._cat.stdin.flush()
        header = self._cat.stdout.readline().split()
        if len(header) < 3 or header[1] == b"missing":
            return None
        data = self._cat.stdout.read(int(header[2]))
        self._cat.stdout.read(1)
        return data

    def close(self) -> None:
        if self._cat is not None:
            assert self._cat.stdin
            self._cat.stdin.close()
            self._cat.wait()
            self._cat = None

    def _run(self, *args: str) -> str:
        done = subprocess.run(["git", "--git-dir", str(self.root), *args], capture_output=True, text=True)
        if done.returncode != 0:
            raise SourceError(f"{self.root}: git {args[0]} failed ({done.stderr.strip()[:200]}); "
                              "pass a git directory (e.g. repo.git) or a plain checkout")
        return done.stdout


# --- the two sources ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Source:
    """How to find and read one repository's files."""

    name: str
    repository: str
    licence: str
    matches: Callable[[str], tuple[str, int | None] | None]  # path -> (venue dir, year or None for multi-year)
    parse: Callable[[bytes, str, dict], list[dict]]  # raw bytes, path, context -> raw records
    convert: Callable[[dict, str, int], SourceRecord | None]  # raw record, venue dir, year
    quick_score: Callable[[bytes], int] | None = None  # pick one version per file on raw bytes, before parsing
    context: Callable[["Tree"], dict] = lambda tree: {}  # lookup tables the parser needs, read once
    first_year: int = FIRST_YEAR  # records of earlier years are skipped


_PAPERLISTS_PATH = re.compile(r"^([a-z]+)/([a-z]+)(\d{4})\.json$")
_MLA_PAPERS = re.compile(r"^data/papers/([a-z]+)-(\d{4})\.json\.gz$")
_MLA_LEGACY = re.compile(r"^data/legacy/([a-z]+)-legacy\.jsonl\.gz$")
_OPENREVIEW = re.compile(r"openreview\.net/(?:forum|pdf)\?id=([A-Za-z0-9_\-]+)")


def _paperlists_match(path: str) -> tuple[str, int | None] | None:
    match = _PAPERLISTS_PATH.match(path)
    if match and match.group(1) == match.group(2) and match.group(1) in VENUES and int(match.group(3)) >= FIRST_YEAR:
        return match.group(1), int(match.group(3))
    return None


def _mla_match(path: str, venues: dict[str, tuple[str, str]] = VENUES,
               first_year: int = FIRST_YEAR) -> tuple[str, int | None] | None:
    if (match := _MLA_PAPERS.match(path)) and match.group(1) in venues and int(match.group(2)) >= first_year:
        return match.group(1), int(match.group(2))
    if (match := _MLA_LEGACY.match(path)) and match.group(1) in venues:
        return match.group(1), None
    return None


def _mla_journal_match(path: str) -> tuple[str, int | None] | None:
    return _mla_match(path, JOURNALS, JOURNALS_FIRST_YEAR)


def _json_list(data: bytes, path: str, context: dict) -> list[dict]:
    records = json.loads(data)
    if not isinstance(records, list):
        raise SourceError(f"{path}: expected a JSON list of records")
    return [r for r in records if isinstance(r, dict)]


def _mla_parse(data: bytes, path: str, context: dict) -> list[dict]:
    text = gzip.decompress(data).decode("utf-8")
    if path.endswith(".jsonl.gz"):
        return [json.loads(line) for line in text.split("\n") if line.strip()]
    papers = json.loads(text).get("papers", [])
    return [r for r in papers if isinstance(r, dict)]


def _split(value: object) -> tuple[str, ...]:
    if isinstance(value, list):
        items = [str(v) for v in value]
    elif isinstance(value, str):
        items = value.split(";")
    else:
        return ()
    return tuple(cleaned for item in items if (cleaned := clean_markup(item)))


def _doi(value: object) -> str:
    """A DOI field, whitespace inside it removed: paperlists writes Springer's as '.../978-3-031-19830-4 _27'."""
    return normalise_doi(re.sub(r"\s+", "", value)) if isinstance(value, str) else ""


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


_UNDECIDED = {"active", "submitted", "under review", "pending"}


def _paperlists_convert(raw: dict, venue_dir: str, year: int) -> SourceRecord | None:
    key, venue = VENUES[venue_dir]
    title = clean_title(raw.get("title"))
    if not title:
        return None
    status = clean_markup(raw.get("status"))
    if status.lower() in _UNDECIDED:
        status = ""  # a snapshot taken before the decisions: another source's status is better than this
    track = clean_markup(raw.get("track"))
    if track and track.lower() != "main" and status:
        status = f"{status} ({track})"
    site = str(raw.get("site") or "")
    rating = _number(raw.get("rating_avg")) if str(raw.get("rating") or "").strip() else None
    citations = _number(raw.get("gs_citation"))
    openreview = _OPENREVIEW.search(site)
    return SourceRecord(
        source="papercopilot/paperlists", venue_key=key, venue=venue, year=year,
        local_id=str(raw.get("id") or "").strip(), title=title, abstract=clean_markup(raw.get("abstract")),
        status=status, authors=split_names(_split(raw.get("author"))), keywords=_split(raw.get("keywords")), url=site,
        rating_avg=round(rating, 4) if rating else None,
        citations=int(citations) if citations is not None and citations >= 0 else None,
        doi=_doi(raw.get("doi")) or doi_of_url(site),
        arxiv_id=normalise_arxiv_id(str(raw.get("arxiv") or "")),
        openreview_id=openreview.group(1) if openreview else "",
    )


def _mla_convert(raw: dict, venue_dir: str, year: int) -> SourceRecord | None:
    key, venue = VENUES.get(venue_dir) or JOURNALS[venue_dir]
    title = clean_title(raw.get("title"))
    if not title:
        return None
    authors = []
    for person in raw.get("authors") or []:
        if isinstance(person, dict):
            name = clean_markup(f"{person.get('given') or ''} {person.get('family') or ''}")
            if name:
                authors.append(name)
    pdf = str(raw.get("pdf_url") or "")
    status = "Accept (Datasets & Benchmarks)" if "Datasets_and_Benchmarks" in pdf else "Accept"
    openreview_url = str(raw.get("openreview_url") or "")
    url = str(raw.get("venue_url") or "") or openreview_url or pdf
    openreview = _OPENREVIEW.search(openreview_url) or _OPENREVIEW.search(url)
    return SourceRecord(
        source="rbnyng/mlanthology", venue_key=key, venue=venue, year=year,
        local_id=str(raw.get("bibtex_key") or "").strip(), title=title, abstract=clean_markup(raw.get("abstract")),
        status=status, authors=tuple(authors), url=url,
        doi=_doi(raw.get("doi")) or doi_of_url(url),
        arxiv_id=normalise_arxiv_id(str(raw.get("arxiv_id") or raw.get("arxiv") or "")),
        openreview_id=openreview.group(1) if openreview else "",
    )


# --- the ACL Anthology: data/xml/*.xml ------------------------------------------------------------------

_ANTHOLOGY_NEW = re.compile(r"^data/xml/(\d{4})\.([a-z0-9\-]+)\.xml$")
_ANTHOLOGY_OLD = re.compile(r"^data/xml/([PDNECKLQJW])(\d{2})\.xml$")
ANTHOLOGY_VENUES = {
    "acl": "ACL", "emnlp": "EMNLP", "naacl": "NAACL", "eacl": "EACL", "aacl": "AACL", "tacl": "TACL", "cl": "CL",
    "conll": "CoNLL", "coling": "COLING", "lrec": "LREC", "ijcnlp": "IJCNLP",
}
_OLD_LETTERS = {"P": "acl", "D": "emnlp", "N": "naacl", "E": "eacl", "C": "coling", "K": "conll", "L": "lrec",
                "Q": "tacl", "J": "cl", "W": "ws"}
_MAIN_FILES = {"acl", "emnlp", "naacl", "eacl", "aacl", "findings", "tacl", "cl", "conll", "coling", "lrec", "ijcnlp"}
_MONTHS = {m: i for i, m in enumerate(("january", "february", "march", "april", "may", "june", "july", "august",
                                       "september", "october", "november", "december"), 1)}


def _anthology_match(path: str) -> tuple[str, int | None] | None:
    if match := _ANTHOLOGY_NEW.match(path):
        year = int(match.group(1))
        return (match.group(2), year) if year >= FIRST_YEAR else None
    if match := _ANTHOLOGY_OLD.match(path):
        year = 2000 + int(match.group(2))
        return (_OLD_LETTERS[match.group(1)], year) if FIRST_YEAR <= year < 2020 else None
    return None


def _xml_text(element) -> str:
    """Text of an Anthology element; <tex-math> is kept as $...$ so clean_markup renders it."""
    if element is None:
        return ""
    parts = [element.text or ""]
    for child in element:
        inner = _xml_text(child)
        parts.append(f"${inner}$" if child.tag == "tex-math" else inner)
        parts.append(child.tail or "")
    return "".join(parts)


def _volume_status(volume_id: str, booktitle: str, journal: bool, workshop_file: bool) -> str | None:
    """Long, Short, Findings, Workshop, ...; None for tutorial abstracts (not papers)."""
    if journal:
        return "Journal"
    text = f"{volume_id} {booktitle}".lower()
    if "tutorial" in text:
        return None
    for needle, status in (("findings", "Findings"), ("student research", "Student Research Workshop"),
                           ("srw", "Student Research Workshop"), ("demo", "System Demonstrations"),
                           ("industry", "Industry"), ("long and short", "Main"), ("short", "Short"),
                           ("long", "Long"), ("workshop", "Workshop")):
        if needle in text:
            return status
    return "Main"  # a conference of its own (SIGDIAL, RANLP, *SEM) or a main volume


def _anthology_context(tree: "Tree") -> dict:
    """Venue acronyms (data/yaml/venues/ID.yaml: `acronym: WMT`) for the workshops' and smaller events' files."""
    names = {}
    for path, data in tree.head_files("data/yaml/venues").items():
        if match := re.search(rb"^acronym:\s*['\"]?(.+?)['\"]?\s*$", data, re.MULTILINE):
            names[path.rsplit("/", 1)[-1].removesuffix(".yaml")] = match.group(1).decode("utf-8", "replace")
    return {"acronyms": names}


def _anthology_parse(data: bytes, path: str, context: dict) -> list[dict]:
    from xml.etree import ElementTree

    root = ElementTree.fromstring(data)
    matched = _anthology_match(path)
    assert matched is not None
    collection_venue = matched[0]
    main_file = collection_venue in _MAIN_FILES
    acronyms = context.get("acronyms", {})
    records = []
    for volume in root.iter("volume"):
        meta = volume.find("meta")
        booktitle = _xml_text(meta.find("booktitle")) if meta is not None else ""
        if main_file:
            venue_key = volume.get("id", "") if collection_venue == "findings" else collection_venue
            venue_key = venue_key.split("-")[0]  # findings volumes: "acl", "emnlp", "acl-ijcnlp"
            if venue_key not in ANTHOLOGY_VENUES:
                continue
            venue = ANTHOLOGY_VENUES[venue_key]
        else:
            tags = [v.text.strip() for v in (meta.findall("venue") if meta is not None else []) if v.text]
            venue_key = next((t for t in tags if t not in ("ws", "findings")), "")
            if not venue_key and collection_venue != "ws":
                venue_key = collection_venue
            if not venue_key or venue_key in ANTHOLOGY_VENUES:
                continue  # a main venue's volume filed elsewhere is read from that venue's own file
            venue = anthology_venue(acronyms.get(venue_key) or venue_key)
        status = _volume_status("findings" if collection_venue == "findings" else volume.get("id", ""), booktitle,
                                collection_venue in ("tacl", "cl"), not main_file)
        if status is None:
            continue
        year_text = (meta.findtext("year") if meta is not None else None) or str(matched[1])
        month = _MONTHS.get(((meta.findtext("month") if meta is not None else "") or "").strip().lower().split("-")[0])
        for paper in volume.findall("paper"):
            anthology_id = (paper.findtext("url") or "").strip()
            if not anthology_id or "/" in anthology_id:
                continue
            authors = [" ".join(filter(None, (_xml_text(a.find("first")).strip(), _xml_text(a.find("last")).strip())))
                       for a in paper.findall("author")]
            records.append({
                "venue_key": venue_key, "venue": venue, "year": year_text[:4], "month": month, "status": status,
                "id": anthology_id, "title": _xml_text(paper.find("title")),
                "abstract": _xml_text(paper.find("abstract")), "authors": authors,
                "doi": paper.findtext("doi") or "",
            })
    return records


def _anthology_quick_score(data: bytes) -> int:
    """Abstracts in one version of a file; -1 for the pre-2019 layout (no <collection> root), read as nothing."""
    return data.count(b"<abstract>") if b"<collection" in data[:1000] else -1


def _anthology_convert(raw: dict, venue_dir: str, year: int) -> SourceRecord | None:
    title = clean_markup(raw["title"])
    if not title:
        return None
    key = raw["venue_key"]
    url = f"{ANTHOLOGY_URL}{raw['id']}"
    return SourceRecord(
        source="acl-org/acl-anthology", venue_key=key, venue=raw["venue"], year=year,
        local_id=raw["id"], title=title, abstract=clean_markup(raw["abstract"]), status=raw["status"],
        authors=tuple(a for name in raw["authors"] if (a := clean_markup(name))), url=url,
        date=f"{year}-{raw['month']:02d}" if raw.get("month") else "",
        doi=normalise_doi(raw["doi"]) or doi_of_url(url),
    )


PAPERLISTS = Source(
    name="papercopilot/paperlists", repository="https://github.com/papercopilot/paperlists",
    licence="no licence file; facts (titles, abstracts, decisions) collected from the venues' public pages",
    matches=_paperlists_match, parse=_json_list, convert=_paperlists_convert,
)
MLANTHOLOGY = Source(
    name="rbnyng/mlanthology", repository="https://github.com/rbnyng/mlanthology",
    licence="Apache-2.0 (repository); metadata from DBLP (CC0), OpenReview, PMLR, CVF, NeurIPS proceedings",
    matches=_mla_match, parse=_mla_parse, convert=_mla_convert,
)
ANTHOLOGY = Source(
    name="acl-org/acl-anthology", repository="https://github.com/acl-org/acl-anthology",
    licence="CC BY 4.0 (metadata and abstracts)",
    matches=_anthology_match, parse=_anthology_parse, convert=_anthology_convert,
    quick_score=_anthology_quick_score, context=_anthology_context,
)
MLANTHOLOGY_JOURNALS = Source(
    name="rbnyng/mlanthology (journals)", repository="https://github.com/rbnyng/mlanthology",
    licence=MLANTHOLOGY.licence, matches=_mla_journal_match, parse=_mla_parse, convert=_mla_convert,
    first_year=JOURNALS_FIRST_YEAR,
)
SOURCES = {"paperlists": PAPERLISTS, "mlanthology": MLANTHOLOGY, "anthology": ANTHOLOGY,
           "journals": MLANTHOLOGY_JOURNALS}


def _year_of(raw: dict) -> int | None:
    try:
        return int(str(raw.get("year"))[:4])
    except ValueError:
        return None


def choose_versions(source: Source, tree: Tree, warn: Callable[[str], None] = print) -> dict[Slot, Chosen]:
    """The best version of each (venue key, year, file) this source holds, with its converted records.

    Sources with a `quick_score` (a count taken on the raw bytes) have one version per file chosen by it
    before anything is parsed: the Anthology's history holds thousands of versions of multi-MB XML files.
    """
    context = source.context(tree)
    versions = tree.versions(lambda path: source.matches(path) is not None)
    if source.quick_score is not None:
        versions = _best_by_quick_score(source, tree, versions)
    best: dict[Slot, Chosen] = {}
    for version in versions:
        matched = source.matches(version.path)
        assert matched is not None
        venue_dir, file_year = matched
        data = tree.read(version)
        if data is None:
            continue
        try:
            raws = source.parse(data, version.path, context)
        except (ValueError, SyntaxError, OSError, EOFError) as err:  # SyntaxError: xml ParseError
            warn(f"{source.name}:{version.path}@{version.commit[:10]}: cannot parse ({err}); version skipped")
            continue
        by_slot: dict[tuple[str, int], list[SourceRecord]] = {}
        for raw in raws:
            year = file_year if file_year is not None else _year_of(raw)
            if year is None or year < source.first_year:
                continue
            if (record := source.convert(raw, venue_dir, year)) is not None:
                by_slot.setdefault((record.venue_key, record.year), []).append(record)
        for (venue_key, year), records in by_slot.items():
            candidate = Chosen(version, records)
            slot = (venue_key, year, version.path)
            if slot not in best or candidate.score > best[slot].score:
                best[slot] = candidate
    return best


def _best_by_quick_score(source: Source, tree: Tree, versions: list[FileVersion]) -> list[FileVersion]:
    assert source.quick_score is not None
    best: dict[str, tuple[tuple[int, str, str], FileVersion]] = {}
    for version in versions:
        data = tree.read(version)
        if data is None:
            continue
        score = (source.quick_score(data), version.date, version.commit)
        if version.path not in best or score > best[version.path][0]:
            best[version.path] = (score, version)
    return [best[path][1] for path in sorted(best)]


def read_source(source: Source, root: Path, warn: Callable[[str], None] = print) -> tuple[dict[Slot, Chosen], str]:
    """(chosen versions, HEAD commit) of one source repository."""
    tree = Tree(root)
    try:
        return choose_versions(source, tree, warn), tree.head()
    finally:
        tree.close()


def records_of(chosen: dict[Slot, Chosen]) -> Iterator[SourceRecord]:
    for slot in sorted(chosen):
        yield from chosen[slot].records

