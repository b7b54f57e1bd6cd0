"""Citations kept as words: `\\citet{rudinger2015script} frame ...` reads "Rudinger et al. frame ...".

A citation that is part of the sentence (natbib's `\\citet`/`\\citeauthor`, biblatex's
`\\textcite`, apacite's `\\citeA` ...) is rendered as the authors' short name from the project's
.bib, by natbib's rule: "Smith", "Smith and Jones", "Smith et al."; several keys are joined
("Smith et al. and Jones").  Parenthetical citations (`\\cite`, `\\citep`) and keys the .bib does
not have stay the neutral "[cite]".  The rendered text stands for the whole command, so a
diagnostic on it lands on `\\citet{...}`.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import Iterable

from pylatexenc.latex2text import LatexNodes2Text

from .bibliography import BibEntry, parse_bib

# command -> how its names are written: "" as is, "cap" capitalised, "poss" possessive
AUTHOR_CITES = {
    "citet": "", "citealt": "", "citeauthor": "", "citefullauthor": "", "textcite": "", "citeA": "",
    "shortciteA": "", "citeposs": "poss",
    "Citet": "cap", "Citealt": "cap", "Citeauthor": "cap", "Textcite": "cap", "Citeposs": "cap poss",
}

_TO_TEXT = LatexNodes2Text(math_mode="verbatim", strict_latex_spaces=True)


def _split_top(text: str, sep: re.Pattern) -> list[str]:
    """`text` split at `sep` outside braces (`{Barnes and Noble}` is one author)."""
    parts, depth, last = [], 0, 0
    for m in re.finditer(r"[{}]|" + sep.pattern, text, sep.flags):
        c = m.group()
        if c == "{":
            depth += 1
        elif c == "}":
            depth = max(0, depth - 1)
        elif depth == 0:
            parts.append(text[last:m.start()])
            last = m.end()
    parts.append(text[last:])
    return [p.strip() for p in parts if p.strip()]


_AND = re.compile(r"\s+and\s+", re.I)
_COMMA = re.compile(r",")
_SPACE = re.compile(r"\s+")


def _surname(person: str) -> str:
    """`Last, First` -> Last; `First von Last` -> von Last; `{DeepMind}` -> DeepMind."""
    parts = _split_top(person, _COMMA)
    if len(parts) > 1:
        last = parts[0]
    else:
        words = _split_top(person, _SPACE)
        i = next((k for k in range(1, len(words) - 1) if words[k][:1].islower()), len(words) - 1)
        last = " ".join(words[i:]) if words else ""
    return " ".join(_TO_TEXT.latex_to_text(last).split())


def short_name(authors: str) -> str:
    """natbib's short author list of a BibTeX author field ("" when there is none)."""
    people = _split_top(authors, _AND)
    others = bool(people) and people[-1].lower() == "others"
    people = [p for p in people if p.lower() != "others"]
    names = [n for n in (_surname(p) for p in people) if n]
    if not names:
        return ""
    if len(names) >= 3 or others:
        return f"{names[0]} et al."
    return " and ".join(names)


def cite_names(entries: Iterable[BibEntry]) -> dict[str, str]:
    """key -> short name, for every entry with an author."""
    out: dict[str, str] = {}
    for e in entries:
        name = short_name(e.author) if e.author else ""
        if name:
            out[e.key] = name
    return out


# ACL's styles (acl.sty 2023+, acl2019 ... naaclhlt2019, emnlp2020, eacl2021, coling2020, tacl, and the
# acl_natbib bibliography style) are natbib author-year with `\\cite` printing as `\\citet`: "Smith et al.
# (2023) show that ..." in the PDF.
_ACL_STYLE = re.compile(
    r"\\(?:usepackage|RequirePackage|bibliographystyle)\s*(?:\[[^\]]*\])?\s*\{[^{}]*"
    r"(?<![\w-])(?:acl|acl_natbib|(?:acl|naaclhlt|naacl|emnlp|eacl|coling|aacl|conll)\d{4}|tacl\d{4}v?\d*)(?![\w-])")
# commands that print "Names (Year)" in an author-year style
_WITH_YEAR = frozenset({"citet", "Citet", "textcite", "Textcite", "citeA", "shortciteA"})
_YEAR_ONLY = frozenset({"citeyear"})


def cite_style(root_text: str) -> str:
    """"acl" when the root loads one of ACL's author-year styles, else "" (names without years)."""
    head = root_text.split("\\begin{document}", 1)[0]
    return "acl" if _ACL_STYLE.search(re.sub(r"(?<!\\)%[^\n]*", "", head)) else ""


def render(command: str, keys: list[str], names: dict[str, str], years: dict[str, str] | None = None,
           style: str = "") -> str | None:
    """The words `command{keys}` stands for in prose, or None for the neutral placeholder.  In an ACL
    style (`style` "acl") `\\cite` is textual and a textual citation carries its year, as printed:
    "Smith et al. (2023)"; several keys are joined with "; "."""
    years = years or {}
    if style == "acl" and command in _YEAR_ONLY:
        found = [years[k] for k in keys if k in years]
        return ", ".join(found) if found else None
    kind = "" if style == "acl" and command == "cite" else AUTHOR_CITES.get(command)
    if kind is None or not names:
        return None
    found = [names[k] for k in keys if k in names]
    if not found:
        return None
    if style == "acl" and (command == "cite" or command in _WITH_YEAR):
        return "; ".join(f"{names[k]} ({years[k]})" if years.get(k) else names[k] for k in keys if k in names)
    style = kind
    text = found[0] if len(found) == 1 else ", ".join(found[:-1]) + " and " + found[-1]
    if "poss" in style:
        text += "'s"
    if "cap" in style:
        text = text[:1].upper() + text[1:]
    return text


_NAMES_CACHE: OrderedDict[tuple[str, ...], tuple[dict[str, str], dict[str, str]]] = OrderedDict()


def names_of_bib_texts(texts: list[str]) -> tuple[dict[str, str], dict[str, str]]:
    """(cite_names, key -> year) of .bib file texts, remembered for the last few projects (re-read on
    every parse)."""
    key = tuple(texts)
    names = _NAMES_CACHE.get(key)
    if names is None:
        found: dict[str, str] = {}
        years: dict[str, str] = {}
        for text in texts:
            entries = parse_bib(text)
            found.update(cite_names(entries))
            years.update({e.key: str(e.year) for e in entries if e.year})
        names = _NAMES_CACHE[key] = (found, years)
        while len(_NAMES_CACHE) > 8:
            _NAMES_CACHE.popitem(last=False)
    return names
