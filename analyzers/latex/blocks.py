"""Cuts LaTeX source into blocks: the unit the parser caches, so an edit re-parses one block.

`split_blocks` cuts at blank lines that lie outside every matched group and environment, and at
`\\begin{document}` / `\\end{document}` (text after the latter is ignored).  Verbatim-like
environments, `comment` environments and `\\iffalse ... \\fi` are blanked out (replaced by
spaces in a masked copy of the same length, so offsets stay exact).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass

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


def split_blocks(source: str, in_preamble: bool | None = None) -> tuple[str, list[Block]]:
    """Return (masked source, blocks).  The masked source has the same length as `source`;
    verbatim-like regions are replaced by spaces so that offsets stay exact.

    A blank line splits blocks when no *matched* brace pair or environment is open there:
    an unclosed `{` or `\\begin{x}` (common while typing) does not glue the rest of the
    document into one block.
    """
    s = source
    n = len(s)
    masks: list[tuple[int, int]] = []
    braces: list[int] = []  # positions of open `{`
    envs: list[tuple[str, int]] = []  # open environments
    crossed: list[tuple[int, int]] = []  # environments closed by an outer \end: (begin, that end)
    blanks: list[tuple[int, int, int, int]] = []  # start, end, open braces, open envs
    doc_begin = doc_end = None
    skip = 0
    for m in _TOKENS.finditer(s):
        a = m.start()
        if a < skip:
            continue
        kind = m.lastgroup
        if kind == "open":
            braces.append(a)
        elif kind == "close":
            if braces:
                braces.pop()
        elif kind == "blank":
            blanks.append((a, m.end(), len(braces), len(envs)))
        elif kind == "begin":
            name = m.group("bname").strip()
            if name in T.VERBATIM_ENVIRONMENTS:
                e = re.compile(r"\\end[ \t]*\{" + re.escape(name) + r"\}").search(s, m.end())
                skip = e.end() if e else n
                masks.append((a, skip))
            elif name == "document":
                if doc_begin is None:
                    doc_begin = (a, m.end())
            elif name not in T.WRAPPER_ENVIRONMENTS:
                envs.append((name, a))
        elif kind == "end":
            name = m.group("ename").strip()
            if name == "document":
                if doc_begin is not None and doc_end is None:
                    doc_end = (a, m.end())
            elif name not in T.WRAPPER_ENVIRONMENTS:
                for k in range(len(envs) - 1, -1, -1):
                    if envs[k][0] == name:
                        crossed.extend((p, a) for _, p in envs[k + 1:])
                        del envs[k:]
                        break
        elif kind == "verb":
            p = m.end()
            if p < n and not s[p].isalpha() and not s[p].isspace():
                close = s.find(s[p], p + 1)
                if 0 <= close <= _line_end(s, p):
                    skip = close + 1
        elif kind == "iffalse":
            depth, p, stop = 1, m.end(), n
            while True:
                f = _IF_FI.search(s, p)
                if f is None:
                    break
                p = f.end()
                depth += 1 if f.group(1) != "fi" else -1
                if depth == 0:
                    stop = p
                    break
            masks.append((a, stop))
            skip = stop
        # esc, comment, url: nothing to do
    unmatched_braces = braces  # never closed
    unmatched_envs = sorted(p for _, p in envs)  # never closed

    preamble = (doc_begin is not None) if in_preamble is None else in_preamble
    cuts: list[tuple[int, int, str]] = []  # start, end, what happens after
    for a, b, nb, ne in blanks:
        # open matched braces/environments here = open ones minus those never closed before a
        ne -= bisect_left(unmatched_envs, a)
        if crossed:
            ne -= sum(1 for p, q in crossed if p < a < q)
        if nb - bisect_left(unmatched_braces, a) <= 0 and ne <= 0:
            cuts.append((a, b, ""))
    if doc_begin is not None and in_preamble is not False:
        cuts.append((doc_begin[0], doc_begin[1], "body"))
    elif doc_begin is not None:
        cuts.append((doc_begin[0], doc_begin[1], ""))
    if doc_end is not None:
        cuts.append((doc_end[0], doc_end[1], "stop"))
    cuts.sort()

    blocks: list[Block] = []
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

    if masks:
        parts, last = [], 0
        for a, b in masks:
            parts.append(s[last:a])
            parts.append(" " * (b - a))
            last = b
        parts.append(s[last:])
        s = "".join(parts)
    return s, blocks
