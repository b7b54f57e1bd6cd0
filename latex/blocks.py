"""Cuts LaTeX source into blocks: the unit the parser caches, so an edit re-parses one block.

`split_blocks` cuts at blank lines that lie outside every matched group and environment, and at
`\\begin{document}` / `\\end{document}` (text after the latter is ignored).  Verbatim-like
environments, `comment` environments and the branches of conditionals that are false are
blanked out (replaced by spaces in a masked copy of the same length, so offsets stay exact), and so is the
code between `\\makeatletter` and `\\makeatother` (its definitions still count).

The same pass reads the file's definitions into a `Definitions` (the caller's, shared by the
files of a project): definitions apply to the whole file and to the files read after it, and
decide conditionals: `\\iffalse`, `\\iftrue`, `\\newif\\ifX` switches set by `\\Xtrue` /
`\\Xfalse`, `\\if\\X1` where `\\def\\X{0}`, and `\\ifdefined\\X` / `\\ifcsname X\\endcsname` /
`\\ifx\\X\\undefined` (defined: by the project so far, or a command the parser knows; a switch
like `\\ifdefined\\showcomments` whose `\\def` is commented out is false).  A conditional it
cannot decide is left alone.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass, field

from . import tables as T
from .macros import DEFINITION_COMMANDS, DefinitionReader, Definitions, match_bracket


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
    r"|(?P<bracket>\\twocolumn[ \t]*\[)"
    r"|(?P<url>\\(?:url|nolinkurl|path|href)(?![a-zA-Z@])[ \t]*\{[^{}\r\n]*\})"
    r"|(?P<atletter>\\makeatletter(?![a-zA-Z@]))"
    r"|(?P<define>\\(?:" + "|".join(DEFINITION_COMMANDS) + r")(?![a-zA-Z@]))"
    r"|(?P<cond>\\if[a-zA-Z@]*(?![a-zA-Z@]))"
    r"|(?P<switch>\\(?P<sname>[a-zA-Z@]+)(?P<svalue>true|false)(?![a-zA-Z@]))"
    r"|(?P<comment>%[^\r\n]*)"
    r"|(?P<open>\{)"
    r"|(?P<close>\})"
    r"|(?P<blank>(?:\r\n|\r(?!\n)|\n)[ \t\f\v]*(?:\r\n|\r(?!\n)|\n)(?:[ \t\f\v]*(?:\r\n|\r(?!\n)|\n))*)"
    r")"
)
# what opens and closes conditionals; `\\newif\\ifX` and `\\ifthenelse{...}`-like commands open none
_IF_ELSE_FI = re.compile(r"%[^\r\n]*|\\newif\s*\\if[a-zA-Z@]*|\\(if[a-zA-Z@]*|else|fi)(?![a-zA-Z@])(?!\s*\{)")
_TEX_TOKEN = re.compile(r"\s*(\\[a-zA-Z@]+|\\.|[^\s\\{}%])")


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


def _branches(s: str, p: int) -> tuple[tuple[int, int] | None, tuple[int, int]]:
    """(`\\else` span or None, `\\fi` span) of a conditional whose test ends at p, nested ones
    counted; a conditional never closed runs to the end of the text."""
    depth, else_span = 1, None
    for m in _IF_ELSE_FI.finditer(s, p):
        word = m.group(1)
        if word is None:
            continue
        if word == "fi":
            depth -= 1
            if depth == 0:
                return else_span, (m.start(), m.end())
        elif word == "else":
            if depth == 1 and else_span is None:
                else_span = (m.start(), m.end())
        else:
            depth += 1
    return else_span, (len(s), len(s))


def _char_of(token: str, scope: Definitions) -> str | None:
    if token.startswith("\\"):
        return scope.char_value(token[1:])
    return token


_CSNAME = re.compile(r"\s*([a-zA-Z@]+)\s*\\endcsname")


def _tested_name(s: str, p: int, csname: bool) -> tuple[str, int] | None:
    """(command name, end) of what `\\ifdefined` / `\\ifcsname` tests at p."""
    m = _CSNAME.match(s, p) if csname else _TEX_TOKEN.match(s, p)
    if m is None or not (csname or m.group(1).startswith("\\")):
        return None
    return m.group(1).lstrip("\\"), m.end()


def _defined(name: str, scope: Definitions) -> bool:
    """Whether the project defines `name` so far, or it is a command the parser knows; a name
    defined nowhere in the project (`\\ifdefined\\showcomments` with its `\\def` commented out) is not."""
    return scope.defines(name) or name in T.BUILTIN_COMMANDS or name in T.TEXT_COMMANDS


def _decide(s: str, m: re.Match, scope: Definitions) -> tuple[bool | None, int]:
    """(value or None if unknown, end of the test) of the conditional token m."""
    name = m.group()[3:]
    if name == "false":
        return False, m.end()
    if name == "true":
        return True, m.end()
    if name in scope.switches:
        return scope.switches[name], m.end()
    if name in ("defined", "csname"):  # \ifdefined\X, \ifcsname X\endcsname
        target = _tested_name(s, m.end(), name == "csname")
        if target is not None:
            return _defined(target[0], scope), target[1]
    if name == "x":  # \ifx\X\undefined (or \relax): true when \X is not defined
        a = _TEX_TOKEN.match(s, m.end())
        b = _TEX_TOKEN.match(s, a.end()) if a else None
        if a and b and a.group(1).startswith("\\") and b.group(1) in ("\\undefined", "\\@undefined", "\\relax"):
            return not _defined(a.group(1)[1:], scope), b.end()
    if name == "":  # \if<token><token>: compares two characters
        a = _TEX_TOKEN.match(s, m.end())
        b = _TEX_TOKEN.match(s, a.end()) if a else None
        if a and b:
            x, y = _char_of(a.group(1), scope), _char_of(b.group(1), scope)
            if x is not None and y is not None:
                return x == y, b.end()
    return None, m.end()


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
    glued: list[tuple[int, int]] = field(default_factory=list)  # bracket arguments: no cut inside
    later: list[tuple[int, int]] = field(default_factory=list)  # masks ahead (`\\else...\\fi` of a true test), innermost last

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


def _scan(s: str, scope: Definitions) -> _Scan:
    scan = _Scan()
    reader = DefinitionReader(s)
    skip = 0
    for m in _TOKENS.finditer(s):
        a = m.start()
        while scan.later and a >= scan.later[-1][0]:
            scan.masks.append(scan.later.pop())
            skip = max(skip, scan.masks[-1][1])
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
        elif kind == "bracket":
            scan.glued.append((a, match_bracket(s, m.end() - 1) + 1))
        elif kind == "atletter":
            scan.masks.append((a, _atletter_end(s, m.end())))
        elif kind == "define":
            definition, command, skip = reader.read(a)
            if definition is not None:
                scope.add(definition, command)
        elif kind == "switch":
            if m.group("sname") in scope.switches:
                scope.set_switch(m.group("sname"), m.group("svalue") == "true")
        elif kind == "cond":
            skip = max(skip, _conditional(s, m, scope, scan))
        # esc, comment, url: nothing to do
    scan.masks.extend(reversed(scan.later))  # a true branch whose \\else runs to the end
    return scan


_MAKEATOTHER = re.compile(r"\\makeatother(?![a-zA-Z@])")
_BLANK_LINE = re.compile(r"(?:\r\n|\r|\n)[ \t]*(?:\r\n|\r|\n)")


def _atletter_end(s: str, p: int) -> int:
    """End of the `\\makeatletter` block starting before p: its `\\makeatother`, or (never closed) the
    next blank line.  Code between them is package-level (`\\@...` internals, a title bar redrawn,
    `\\printcontents`), never prose: the walker does not see it, while its definitions are still read."""
    m = _MAKEATOTHER.search(s, p)
    if m is not None:
        return m.end()
    b = _BLANK_LINE.search(s, p)
    return b.start() if b else len(s)


def _conditional(s: str, m: re.Match, scope: Definitions, scan: _Scan) -> int:
    """Masks the branch a decidable conditional does not take; returns where scanning resumes."""
    value, test_end = _decide(s, m, scope)
    if value is None:
        return 0
    else_span, fi_span = _branches(s, test_end)
    if value:
        scan.masks.append((m.start(), test_end))
        scan.later.append((else_span[0], fi_span[1]) if else_span else fi_span)
        return test_end
    stop = else_span[1] if else_span else fi_span[1]
    scan.masks.append((m.start(), stop))
    if else_span:
        scan.later.append(fi_span)
    return stop


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
        if nb - bisect_left(unmatched_braces, a) <= 0 and ne <= 0 and not any(p < a < q for p, q in scan.glued):
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
    for a, b in sorted(masks):  # a `\\makeatletter` block holds other masked regions
        a = max(a, last)
        if b <= a:
            continue
        parts.append(s[last:a])
        parts.append(" " * (b - a))
        last = b
    parts.append(s[last:])
    return "".join(parts)


def _unclosed(s: str, scan: _Scan, problems: list[str]) -> None:
    def line(p: int) -> int:
        return s.count("\n", 0, p) + 1

    if scan.braces:
        problems.append(f"line {line(scan.braces[0])}: '{{' is never closed")
    if scan.envs:
        name, p = min(scan.envs, key=lambda e: e[1])
        problems.append(f"line {line(p)}: \\begin{{{name}}} is never ended")


def split_blocks(source: str, in_preamble: bool | None = None, scope: Definitions | None = None,
                 problems: list[str] | None = None) -> tuple[str, list[Block]]:
    """Return (masked source, blocks).  The masked source has the same length as `source`;
    verbatim-like regions are replaced by spaces so that offsets stay exact.

    A blank line splits blocks when no *matched* brace pair or environment is open there:
    an unclosed `{` or `\\begin{x}` (common while typing) does not glue the rest of the
    document into one block.  `scope` receives the file's definitions (see the module docstring);
    `problems` the first brace and the first environment that are never closed.
    """
    scan = _scan(source, scope if scope is not None else Definitions())
    if problems is not None:
        _unclosed(source, scan, problems)
    preamble = (scan.doc_begin is not None) if in_preamble is None else in_preamble
    blocks = _blocks(source, _cuts(scan, in_preamble), preamble)
    return _masked(source, scan.masks), blocks
