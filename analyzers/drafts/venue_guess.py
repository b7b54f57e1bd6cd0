"""Guess the target venue, and the draft's date, from a LaTeX preamble, for when the user has not
configured them.

Venue templates announce themselves in their style file names (`\\usepackage[review]{acl}`,
`\\usepackage{iclr2024_conference}`, `\\usepackage{neurips_2023}`, `\\documentclass{aistats2020}` …);
the chunks carry no preamble, so the service reads the root file and asks here. A style with a
year also dates the draft: a paper written for ACL 2019 could not cite what appeared after it was
submitted, so evidence for an old paper is limited to what existed then (`draft_date`).
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass
from pathlib import PurePosixPath

# style or class name (year and suffixes stripped) -> venue name as the shipped corpus spells it
STYLES = {
    "acl": "ACL", "acl_natbib": "ACL", "naacl": "NAACL", "emnlp": "EMNLP", "eacl": "EACL", "coling": "COLING",
    "iclr": "ICLR", "neurips": "NeurIPS", "nips": "NeurIPS", "icml": "ICML", "cvpr": "CVPR", "iccv": "ICCV",
    "eccv": "ECCV", "aistats": "AISTATS", "colt": "COLT", "uai": "UAI", "aaai": "AAAI", "ijcai": "IJCAI",
    "jmlr": "JMLR", "tmlr": "TMLR", "kdd": "KDD", "sigir": "SIGIR", "colm": "COLM", "corl": "CoRL", "lrec": "LREC",
    "tacl": "TACL", "tacl2021v1": "TACL",
    # venues of other fields, whose templates say so: an index of ML/NLP proceedings rarely holds them, and
    # the draft is told that once (`summaries.missing_venue`) rather than compared with a venue it is not for
    "usenix": "USENIX", "osdi": "OSDI", "sosp": "SOSP", "vldb": "VLDB", "pvldb": "VLDB",
}
_COMMAND = re.compile(r"\\(?:documentclass|usepackage|RequirePackage)\s*(?:\[[^\]]*\])?\s*\{([^}]*)\}")
_COMMENT = re.compile(r"%(?<!\\%)[^\r\n]*")
_NAME = re.compile(r"^([a-z]+?)(?:[_-]?(?:19|20)?\d{2})?(?:[_-][a-z0-9_-]+)?$")


def preamble(tex: str) -> str:
    """Everything before \\begin{document}, without comments."""
    head = tex.split("\\begin{document}", 1)[0]
    return _COMMENT.sub("", head)


def style_venue(name: str) -> str:
    """'iclr2024_conference' -> 'ICLR', 'neurips_2023' -> 'NeurIPS', 'style/naacl2021' -> 'NAACL', 'article' -> ''."""
    name = PurePosixPath(name.strip().lower()).name
    if name in STYLES:
        return STYLES[name]
    match = _NAME.match(name)
    return STYLES.get(match.group(1), "") if match else ""


def guess_venue(tex: str) -> str:
    """The venue named by the first venue style the preamble loads ("" when none)."""
    for match in _COMMAND.finditer(preamble(tex)):
        for name in match.group(1).split(","):
            venue = style_venue(name)
            if venue:
                return venue
    return ""


# venue -> (year offset, month, day) of its usual submission deadline: what a paper for that venue
# could have read. Approximate (deadlines move by weeks from year to year); journals have none.
DEADLINES = {
    "ICLR": (-1, 10, 1), "ICML": (0, 2, 1), "NeurIPS": (0, 5, 15), "ACL": (0, 2, 1), "NAACL": (-1, 12, 1),
    "EMNLP": (0, 6, 1), "EACL": (-1, 10, 1), "COLING": (0, 7, 1), "CVPR": (-1, 11, 15), "ICCV": (0, 3, 15),
    "ECCV": (0, 3, 5), "AISTATS": (-1, 10, 10), "COLT": (0, 2, 1), "UAI": (0, 2, 20), "AAAI": (-1, 9, 1),
    "IJCAI": (0, 1, 20), "KDD": (0, 2, 10), "SIGIR": (0, 1, 25), "COLM": (0, 3, 25), "CoRL": (0, 6, 1),
    "LREC": (-1, 12, 1),
}
_YEAR = re.compile(r"(?<!\d)((?:19|20)\d{2}|\d{2})(?!\d)")
RECENT = datetime.timedelta(days=548)  # a template this recent may be reused for the next round: no date


@dataclass(frozen=True)
class DraftDate:
    """When a draft was written, read from its venue style: evidence is what was published `before`."""
    venue: str
    year: int
    before: str  # ISO date: the venue's usual deadline that year
    style: str  # the style (or root file) name it was read from

    def note(self) -> str:
        return (f"evidence limited to papers published before {self.before}: the draft uses the {self.style} style "
                f"({self.venue} {self.year}); set publishedBefore to another date, or to \"\" for all papers")


def _style_year(name: str) -> int | None:
    match = _YEAR.search(PurePosixPath(name.strip().lower()).name)
    if match is None:
        return None
    year = int(match.group(1))
    return year + 2000 if year < 100 else year


def draft_date(tex: str, root_name: str = "", today: datetime.date | None = None) -> DraftDate | None:
    """The date of a draft for a past venue (ACL 2019: before 2019-02-01), from the first venue style
    with a year the preamble loads, else the root file's name (`emnlp2020.tex`). None for a template
    of the last eighteen months (authors reuse last year's style for this year's paper), a venue
    without a deadline, or no year at all."""
    today = today or datetime.date.today()
    names = [n for m in _COMMAND.finditer(preamble(tex)) for n in m.group(1).split(",")] + [PurePosixPath(root_name).stem]
    for name in names:
        venue, year = style_venue(name), _style_year(name)
        if not venue or year is None or venue not in DEADLINES or not 1980 <= year <= today.year + 1:
            continue
        offset, month, day = DEADLINES[venue]
        deadline = datetime.date(year + offset, month, day)
        if today - deadline < RECENT:
            return None
        return DraftDate(venue, year, deadline.isoformat(), PurePosixPath(name.strip()).name)
    return None


def evidence_before(setting: str, date: DraftDate | None) -> str:
    """The `publishedBefore` a run uses: the setting, or for "auto" the draft's own date ("" for all)."""
    if setting != "auto":
        return setting
    return date.before if date is not None else ""
