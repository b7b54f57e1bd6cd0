"""Cuts LaTeX source into blocks: the unit the parser caches, so an edit re-parses one block.

`split_blocks` cuts at blank lines that lie outside every matched group and environment, and at
`\\begin{document}` / `\\end{document}` (text after the latter is ignored).  Verbatim-like
environments, `comment` environments and `\\iffalse ... \\fi` are blanked out (replaced by
spaces in a masked copy of the same length, so offsets stay exact).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass, field

from . import tables as T


@dataclass(frozen=True)
class Block:
    start: int
    end: int
    preamble: bool


_TOKENS = re.compile(
    r"(?=[\\%{}\r\n])(?:"  # the lookahead lets the regex engine skip plain text quickly
    r"(?P<esc>\\[^a-zA-Z@\r\n])"
    r"|(?P<begin>\\begin[ \t]*\{(?P<bname>[^{}\\\r\n]*)\})"
    r"|(?P<end>\\end[ \t]*\{(?P<ename>[^{}\\\r\n]*)\})"
    r"|(?P<verb>\\(?:verb|lstinline)(?![a-zA-Z@])\*?)"
    r"|(?P<url>\\(?:url|nolinkurl|path|href)(?![a-zA-Z@])[ \t]*\{[^{}\r\n]*\})"
    r"|(?P<iffalse>\\iffalse(?![a-zA-Z@]))"
    r"|(?P<comment>%[^\r\n]*)"
    r"|(?P<open>\{)"
    r"|(?P<close>\})"
    r"|(?P<blank>(?:\r\n|\r(?!\n)|\n)[ \t\f\v]*(?:\r\n|\r(?!\n)|\n)(?:[ \t\f\v]*(?:\r\n|\r(?!\n)|\n))*)"
    r")"
)
_IF_FI = re.compile(r"\\(if[a-zA-Z@]*|fi)(?![a-zA-Z@])")


def _line_end(s: str, p: int) -> int:
    a, b = s.find("\n", p), s.find("\r", p)
    cands = [x for x in (a, b) if x >= 0]
    return min(cands) if cands else len(s)


def _verbatim_end(s: str, name: str, p: int) -> int:
    """End of `\\end{name}` after p (or the end of the text): a verbatim environment's extent."""
    e = re.compile(r"\\end[ \t]*\{" + re.escape(name) + r"\}").search(s, p)
    return e.end() if e else len(s)


def _verb_end(s: str, p: int) -> int | None:
    """End of the `\\verb|...|` argument starting at p, or None if there is none on this line."""
    if p < len(s) and not s[p].isalpha() and not s[p].isspace():
        close = s.find(s[p], p + 1)
        if 0 <= close <= _line_end(s, p):
            return close + 1
    return None


def _fi_end(s: str, p: int) -> int:
    """End of the `\\fi` closing a conditional opened just before p (nested ones counted)."""
    depth = 1
    while True:
        f = _IF_FI.search(s, p)
        if f is None:
            return len(s)
        p = f.end()
        depth += 1 if f.group(1) != "fi" else -1
        if depth == 0:
            return p


@dataclass
class _Scan:
    """What one pass over the tokens finds: masked regions, blank lines and open groups."""

    masks: list[tuple[int, int]] = field(default_factory=list)
    braces: list[int] = field(default_factory=list)  # positions of `{` still open
    envs: list[tuple[str, int]] = field(default_factory=list)  # environments still open
    crossed: list[tuple[int, int]] = field(default_factory=list)  # envs closed by an outer \end: (begin, that end)
    blanks: list[tuple[int, int, int, int]] = field(default_factory=list)  # start, end, open braces, open envs
    doc_begin: tuple[int, int] | None = None
    doc_end: tuple[int, int] | None = None

    def begin(self, name: str, a: int, b: int) -> None:
        if name == "document":
            if self.doc_begin is None:
                self.doc_begin = (a, b)
        elif name not in T.WRAPPER_ENVIRONMENTS:
            self.envs.append((name, a))

    def end(self, name: str, a: int, b: int) -> None:
        if name == "document":
            if self.doc_begin is not None and self.doc_end is None:
                self.doc_end = (a, b)
        elif name not in T.WRAPPER_ENVIRONMENTS:
            for k in range(len(self.envs) - 1, -1, -1):
                if self.envs[k][0] == name:
                    self.crossed.extend((p, a) for _, p in self.envs[k + 1:])
                    del self.envs[k:]
                    break


def _scan(s: str) -> _Scan:
    scan = _Scan()
    skip = 0
    for m in _TOKENS.finditer(s):
        a = m.start()
        if a < skip:
            continue
        kind = m.lastgroup
        if kind == "open":
            scan.braces.append(a)
        elif kind == "close":
            if scan.braces:
                scan.braces.pop()
        elif kind == "blank":
            scan.blanks.append((a, m.end(), len(scan.braces), len(scan.envs)))
        elif kind == "begin":
            name = m.group("bname").strip()
            if name in T.VERBATIM_ENVIRONMENTS:
                skip = _verbatim_end(s, name, m.end())
                scan.masks.append((a, skip))
            else:
                scan.begin(name, a, m.end())
        elif kind == "end":
            scan.end(m.group("ename").strip(), a, m.end())
        elif kind == "verb":
            skip = _verb_end(s, m.end()) or skip
        elif kind == "iffalse":
            skip = _fi_end(s, m.end())
            scan.masks.append((a, skip))
        # esc, comment, url: nothing to do
    return scan


def _cuts(scan: _Scan, in_preamble: bool | None) -> list[tuple[int, int, str]]:
    """(start, end, what happens after) of every cut: free blank lines and the document's edges."""
    unmatched_braces = scan.braces  # never closed
    unmatched_envs = sorted(p for _, p in scan.envs)  # never closed
    cuts: list[tuple[int, int, str]] = []
    for a, b, nb, ne in scan.blanks:
        # open matched braces/environments here = open ones minus those never closed before a
        ne -= bisect_left(unmatched_envs, a)
        if scan.crossed:
            ne -= sum(1 for p, q in scan.crossed if p < a < q)
        if nb - bisect_left(unmatched_braces, a) <= 0 and ne <= 0:
            cuts.append((a, b, ""))
    if scan.doc_begin is not None:
        cuts.append((*scan.doc_begin, "body" if in_preamble is not False else ""))
    if scan.doc_end is not None:
        cuts.append((*scan.doc_end, "stop"))
    cuts.sort()
    return cuts


def _blocks(s: str, cuts: list[tuple[int, int, str]], preamble: bool) -> list[Block]:
    blocks: list[Block] = []
    n = len(s)
    start = 0
    for a, b, then in cuts:
        if a < start:
            continue
        if a > start and not s[start:a].isspace():
            blocks.append(Block(start, a, preamble))
        start = b
        if then == "body":
            preamble = False
        elif then == "stop":
            start = n
            break
    if start < n and not s[start:].isspace():
        blocks.append(Block(start, n, preamble))
    return blocks


def _masked(s: str, masks: list[tuple[int, int]]) -> str:
    """`s` with every masked region replaced by as many spaces."""
    if not masks:
        return s
    parts, last = [], 0
    for a, b in masks:
        parts.append(s[last:a])
        parts.append(" " * (b - a))
        last = b
    parts.append(s[last:])
    return "".join(parts)


def split_blocks(source: str, in_preamble: bool | None = None) -> tuple[str, list[Block]]:
    """Return (masked source, blocks).  The masked source has the same length as `source`;
    verbatim-like regions are replaced by spaces so that offsets stay exact.

    A blank line splits blocks when no *matched* brace pair or environment is open there:
    an unclosed `{` or `\\begin{x}` (common while typing) does not glue the rest of the
    document into one block.
    """
    scan = _scan(source)
    preamble = (scan.doc_begin is not None) if in_preamble is None else in_preamble
    blocks = _blocks(source, _cuts(scan, in_preamble), preamble)
    return _masked(source, scan.masks), blocks
