"""Paragraphs of prose with a map from every character back to the source.

`TextBuilder` collects a paragraph: characters copied from the source keep their offset,
whitespace runs collapse to one space (mapped to the run's first character), and text that
stands for something else (a placeholder, an accent, a macro's text) maps to the start of
what it replaces.  While a user macro is expanded the builder is `pin`ned to the macro call:
all text of its body maps to the call, so a diagnostic on it lands on `\\method`.  `crude_block` is the regex-only extractor used when the pylatexenc walk fails.
"""

from __future__ import annotations

import operator
import re
from array import array
from dataclasses import dataclass, field
from itertools import islice

from . import tables as T


@dataclass
class Para:
    """One paragraph of prose; `base + offs[i]` .. `base + end(i)` is the source that produced
    `text[i]`."""

    kind: str  # paragraph | abstract | title | section-title | caption | footnote
    text: str
    offs: array  # array("i"): source offset of each character, relative to `base`
    ends: dict[int, int]  # text index -> source end where it is not offs[i] + 1
    cites: list[tuple[int, str]] = field(default_factory=list)  # (text index, key)
    breaks: list[int] = field(default_factory=list)  # preferred split points (list items)
    base: int = 0  # add to offs/ends for offsets into the whole file
    level: int = 0  # section-title: 2 part/chapter/section, 3 subsection ... 6 subparagraph
    memo: dict = field(default_factory=dict, repr=False, compare=False)  # shared by shifted copies

    def end(self, i: int) -> int:
        """Relative source end of text[i]."""
        return self.ends.get(i, self.offs[i] + 1)

    def shifted(self, base: int) -> "Para":
        """The same paragraph found `base` characters further into the file (lists are shared)."""
        if not base:
            return self
        return Para(self.kind, self.text, self.offs, self.ends, self.cites, self.breaks, self.base + base,
                    self.level, self.memo)


@dataclass(frozen=True)
class Include:
    command: str  # input | include | subfile | import | subimport ...
    args: tuple[str, ...]
    pos: int
    kind: str = "paragraph"  # "abstract" for a file included inside the abstract environment


@dataclass(frozen=True)
class BibResource:
    command: str
    names: tuple[str, ...]


@dataclass(frozen=True)
class Notice:
    """Something the user should hear about once (a macro that expands without end)."""

    message: str


@dataclass(frozen=True)
class Package:
    """`\\usepackage{a,b}` / `\\documentclass{c}`: a project-local .sty/.cls may define macros."""

    command: str
    names: tuple[str, ...]


Event = Para | Include | BibResource | Notice | Package


_ODD_SPACE = re.compile(r"\s{2,}|[^\S ]")  # whitespace other than a single space


class TextBuilder:
    """Accumulates one paragraph: text pieces plus, per character, the source offset it came from."""

    __slots__ = ("kind", "parts", "offs", "ends", "cites", "breaks", "n", "space", "pin")

    def __init__(self, kind: str):
        self.kind = kind
        self.parts: list[str] = []
        self.offs: list[int] = []
        self.ends: dict[int, int] = {}  # text index -> source end, where it is not offs[i] + 1
        self.cites: list[tuple[int, str]] = []
        self.breaks: list[int] = []
        self.n = 0
        self.space = True  # the last character is a space (or nothing yet)
        self.pin: tuple[int, int] | None = None  # while set, every character maps to this source range

    def text(self, s: str, pos: int) -> None:
        """Copy source characters s == source[pos:pos+len(s)], collapsing whitespace."""
        if self.pin is not None:
            self._pinned_text(s)
            return
        last = 0
        for m in _ODD_SPACE.finditer(s):
            a = m.start()
            if a > last:
                self._copy(s[last:a], pos + last)
            self.sp(pos + a)
            last = m.end()
        if last < len(s):
            self._copy(s[last:] if last else s, pos + last)

    def _copy(self, seg: str, a: int) -> None:
        if seg[0] == " " and self.space:
            seg = seg[1:]
            a += 1
            if not seg:
                return
        k = len(seg)
        self.parts.append(seg)
        self.offs.extend(range(a, a + k))
        self.n += k
        self.space = seg[-1] == " "

    def _pinned_text(self, s: str) -> None:
        """Text of a macro body: its words stand for the macro call (`pin`)."""
        a, b = self.pin
        if s[:1].isspace():
            self.sp(a, b)
        for i, word in enumerate(s.split()):
            if i:
                self.sp(a, b)
            self.synth(word, a, b)
        if s[-1:].isspace():
            self.sp(a, b)

    def sp(self, a: int, b: int | None = None) -> None:
        if self.pin is not None:
            a, b = self.pin
        if not self.space:
            self.parts.append(" ")
            self.offs.append(a)
            if b is not None and b != a + 1:
                self.ends[self.n] = b
            self.n += 1
            self.space = True

    def synth(self, s: str, a: int, b: int) -> None:
        """Text that stands for source[a:b] (a macro, a placeholder, an accent)."""
        if not s:
            return
        if self.pin is not None:
            a, b = self.pin
        if s.isspace():
            self.sp(a, b)
            return
        k = len(s)
        self.parts.append(s)
        self.offs.extend([a] * k)
        for i in range(self.n, self.n + k):
            self.ends[i] = b
        self.n += k
        self.space = s[-1].isspace()

    def finish(self) -> Para | None:
        if self.space and self.n:
            self.parts[-1] = self.parts[-1][:-1]
            self.offs.pop()
            self.n -= 1
            self.ends.pop(self.n, None)
        if not self.n:
            return None
        offs, ends = self.offs, self.ends
        # pylatexenc's tolerant recovery could in principle revisit text; keep the map monotone.
        if not all(map(operator.le, offs, islice(offs, 1, None))):
            prev = -1
            for i, o in enumerate(offs):
                if o < prev:
                    offs[i] = prev
                prev = offs[i]
        for i, e in list(ends.items()):
            if e < offs[i]:
                ends[i] = offs[i]
        # a compact array: cached paragraphs cost 4 bytes per character instead of ~36
        return Para(self.kind, "".join(self.parts), array("i", offs), ends, self.cites, self.breaks)


# --- the regex fallback -----------------------------------------------------------------------

_BLANK = r"(?:\r\n|\r|\n)[ \t]*(?:\r\n|\r|\n)"
_CRUDE = re.compile(
    r"(?=[%$\\{}~\r\n])(?:"  # lookahead: lets the regex engine skip plain text quickly
    r"(?P<comment>%[^\r\n]*)"
    # math ends at its delimiter, a blank line or the end of the text
    r"|(?P<dmath>\$\$(?:(?!" + _BLANK + r")[^$])*(?:\$\$|\$|(?=" + _BLANK + r")|$)"
    r"|\\\[(?:(?!" + _BLANK + r"|\\\]).)*(?:\\\]|(?=" + _BLANK + r")|$))"
    r"|(?P<imath>\$(?:\\.|(?!" + _BLANK + r")[^$\\])*(?:\$|(?=" + _BLANK + r")|$)"
    r"|\\\((?:(?!" + _BLANK + r"|\\\)).)*(?:\\\)|(?=" + _BLANK + r")|$))"
    r"|(?P<cite>\\[a-zA-Z]*cite[a-zA-Z]*\*?(?:\s*\[[^\]]*\])*\s*\{(?P<keys>[^{}]*)\})"
    r"|(?P<drop>\\(?:[a-zA-Z]*ref|label|url|href|begin|end|includegraphics|input|include|"
    r"bibliography\w*|usepackage|documentclass|verb)\*?\s*(?:\[[^\]]*\])?\s*\{[^{}]*\})"
    r"|(?P<esc>\\[%&$#_{}])"
    r"|(?P<macro>\\(?:[a-zA-Z@]+\*?|.|$))"
    r"|(?P<brace>[{}])"
    r"|(?P<tilde>~)"
    r"|(?P<par>(?:\r\n|\r(?!\n)|\n)[ \t]*(?:\r\n|\r(?!\n)|\n)\s*)"
    r")",
    re.S,
)
_CRUDE_TITLE = re.compile(r"\\title\s*(?:\[[^\]]*\])?\s*\{([^{}]*)\}")


def crude_block(text: str, preamble: bool) -> list[Event]:
    """Regex-only prose extraction: used when the walker fails, never raises on str input."""
    events: list[Event] = []
    if preamble:
        for m in _CRUDE_TITLE.finditer(text):
            b = TextBuilder("title")
            b.text(m.group(1), m.start(1))
            para = b.finish()
            if para is not None:
                events.append(para)
        return events
    b = TextBuilder("paragraph")
    last = 0
    for m in _CRUDE.finditer(text):
        b.text(text[last:m.start()], last)
        last = m.end()
        kind = m.lastgroup
        a, e = m.start(), m.end()
        if kind == "imath":
            b.synth(T.MATH, a, e)
        elif kind == "cite":
            for key in m.group("keys").split(","):
                if key.strip():
                    b.cites.append((b.n, key.strip()))
            b.synth(T.CITE, a, e)
        elif kind == "esc":
            b.synth(text[a + 1], a, e)
        elif kind in ("dmath", "drop", "tilde"):
            b.sp(a, e)
        elif kind == "par":
            para = b.finish()
            if para is not None:
                events.append(para)
            b = TextBuilder("paragraph")
    b.text(text[last:], last)
    para = b.finish()
    if para is not None:
        events.append(para)
    return events
