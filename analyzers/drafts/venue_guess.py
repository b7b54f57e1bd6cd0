"""Guess the target venue from a LaTeX preamble, for when the user has not configured one.

Venue templates announce themselves in their style file names (`\\usepackage[review]{acl}`,
`\\usepackage{iclr2024_conference}`, `\\usepackage{neurips_2023}`, `\\documentclass{aistats2020}` …);
the chunks carry no preamble, so the service reads the root file and asks here.
"""

from __future__ import annotations

import re

# style or class name (year and suffixes stripped) -> venue name as the shipped corpus spells it
STYLES = {
    "acl": "ACL", "acl_natbib": "ACL", "naacl": "NAACL", "emnlp": "EMNLP", "eacl": "EACL", "coling": "COLING",
    "iclr": "ICLR", "neurips": "NeurIPS", "nips": "NeurIPS", "icml": "ICML", "cvpr": "CVPR", "iccv": "ICCV",
    "eccv": "ECCV", "aistats": "AISTATS", "colt": "COLT", "uai": "UAI", "aaai": "AAAI", "ijcai": "IJCAI",
    "jmlr": "JMLR", "tmlr": "TMLR", "kdd": "KDD", "sigir": "SIGIR",
}
_COMMAND = re.compile(r"\\(?:documentclass|usepackage|RequirePackage)\s*(?:\[[^\]]*\])?\s*\{([^}]*)\}")
_NAME = re.compile(r"^([a-z]+?)(?:_?(?:19|20)?\d{2})?(?:_[a-z_]+)?$")


def preamble(tex: str) -> str:
    """Everything before \\begin{document}, without comments."""
    head = tex.split("\\begin{document}", 1)[0]
    return "\n".join(re.sub(r"(?<!\\)%.*", "", line) for line in head.splitlines())


def style_venue(name: str) -> str:
    """'iclr2024_conference' -> 'ICLR', 'neurips_2023' -> 'NeurIPS', 'article' -> ''."""
    name = name.strip().lower()
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
