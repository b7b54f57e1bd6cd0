"""User definitions (`\\newcommand`, `\\def`, `\\newenvironment`, `\\newif` ...) read through pylatexenc.

A definition command is one pylatexenc macro whose arguments `DefinitionArgs` reads as raw
text (name, `[n]`, `[default]`, body), so a body with unbalanced environments or `#1` never
confuses the parse.  `read_definition` turns such a node into a `MacroDef`, `EnvDef`, `Alias`
or `Switch`; `Definitions` holds what a project has defined so far, in reading order.  The
walker expands a `MacroDef` by parsing `template(...)` (the body with its arguments replaced by
`\\peerlintarg<k>` markers) and walking the argument nodes themselves where a marker stands, so
argument text keeps its exact source offsets.

Author notes: a macro with a mandatory argument is a note, dropped with its arguments, when
its name says so (`\\todo`, `\\jbgcomment`, `\\authnote`), when its body calls a note command
or another note macro, or when it only colours its argument and its name is not a revision
mark (`\\mdeff{...}` in a person's colour is a note, `\\revised{...}` in blue is prose).  A
user's LTeX-style command table overrides all of this.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from pylatexenc import latexwalker
from pylatexenc.macrospec import MacroSpec, MacroStandardArgsParser, ParsedMacroArgs

# Expansion bounds: nesting depth, and macro expansions per block (an exponential definition
# reaches the second long before it is slow).
MAX_EXPANSION_DEPTH = 24
MAX_EXPANSIONS = 4000
# A body longer than this is not prose (package internals); it is not expanded.
MAX_BODY_CHARS = 4000

ARG_MARK = "peerlintarg"  # \peerlintarga ... \peerlintargi stand for #1 ... #9 in a template
ARG_NAMES = {ARG_MARK + chr(ord("a") + k): k for k in range(9)}
_ARG_REF = re.compile(r"##|#([1-9])")
_ARG_MARKER = re.compile(r"\\" + ARG_MARK + r"([a-i])\{\}")


@dataclass(frozen=True)
class MacroDef:
    name: str  # without the backslash
    nargs: int = 0
    default: str | None = None  # the first argument is optional, with this default
    body: str = ""

    @property
    def argspec(self) -> str:
        if self.default is not None and self.nargs:
            return "[" + "{" * (self.nargs - 1)
        return "{" * self.nargs

    @property
    def mandatory(self) -> int:
        return self.nargs - (self.default is not None and self.nargs > 0)


@dataclass(frozen=True)
class EnvDef:
    name: str
    nargs: int = 0
    default: str | None = None
    begin: str = ""
    end: str = ""

    @property
    def argspec(self) -> str:
        return MacroDef(self.name, self.nargs, self.default).argspec


@dataclass(frozen=True)
class Alias:
    """`\\let\\name\\target`."""

    name: str
    target: str


@dataclass(frozen=True)
class Acronym:
    """`\\newacronym{key}{short}{long}` (glossaries): `\\gls{key}` reads `short`."""

    key: str
    short: str
    long: str


@dataclass(frozen=True)
class Switch:
    """`\\newif\\ifname`: `\\nametrue` / `\\namefalse` set it, `\\ifname` tests it."""

    name: str


Definition = MacroDef | EnvDef | Alias | Switch | Acronym


@dataclass
class Definitions:
    """What a project has defined so far (macros, environments, `\\newif` switches), in reading order."""

    macros: dict[str, MacroDef] = field(default_factory=dict)
    envs: dict[str, EnvDef] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)  # `\\let\\a\\b`, `\\newcommand\\newcite{\\citet}`
    switches: dict[str, bool] = field(default_factory=dict)
    cite_names: dict[str, str] = field(default_factory=dict)  # bib key -> "Rudinger et al." (citations.py)
    cite_years: dict[str, str] = field(default_factory=dict)  # bib key -> "2015"
    cite_style: str = ""  # "acl": ACL's author-year styles (citations.cite_style)
    acronyms: dict[str, Acronym] = field(default_factory=dict)
    version: int = 0  # bumped by every change that can alter a parse

    def add(self, d: Definition, command: str) -> None:
        if isinstance(d, Switch):
            self.switches.setdefault(d.name, False)
            return
        if isinstance(d, Acronym):
            if self.acronyms.get(d.key) != d:
                self.acronyms[d.key] = d
                self.version += 1
            return
        if isinstance(d, MacroDef) and not d.nargs and _CONTROL_WORD.fullmatch(d.body.strip()):
            d = Alias(d.name, d.body.strip()[1:])  # \newcommand\newcite{\citet}: takes \citet's arguments
            command = "newcommand"  # resolved when used, unlike \let
        if isinstance(d, Alias):
            target = self.macros.get(d.target) if command == "let" else None
            if target is not None:
                d = replace(target, name=d.name)
            elif d.target in ("relax", "empty", "@empty"):
                d = MacroDef(d.name)
        table = self.envs if isinstance(d, EnvDef) else self.aliases if isinstance(d, Alias) else self.macros
        if command.startswith("provide") and (d.name in self.macros or d.name in self.aliases):
            return
        value = d.target if isinstance(d, Alias) else d
        if table.get(d.name) != value:
            if not isinstance(d, EnvDef):
                self.macros.pop(d.name, None)
                self.aliases.pop(d.name, None)
            table[d.name] = value
            self.version += 1

    def defines(self, name: str) -> bool:
        """Whether `\\name` has been defined so far (a macro, an alias or a `\\newif` switch's `\\ifname`)."""
        return name in self.macros or name in self.aliases or (name.startswith("if") and name[2:] in self.switches)

    def set_switch(self, name: str, value: bool) -> None:
        self.switches[name] = value

    def char_value(self, name: str) -> str | None:
        """The text of a zero-argument macro whose body is one plain character (`\\def\\icml{0}`)."""
        d = self.macros.get(name)
        if d is None or d.nargs:
            return None
        body = d.body.strip()
        return body if len(body) == 1 and body not in "\\{}%#" else None

    def key(self) -> tuple:
        """Everything that shapes the parser's tables, hashable (for their cache)."""
        return (tuple(sorted(self.macros.items())), tuple(sorted(self.envs.items())),
                tuple(sorted(self.aliases.items())), tuple(sorted(self.cite_names.items())),
                tuple(sorted(self.acronyms.items())),
                (self.cite_style, tuple(sorted(self.cite_years.items())) if self.cite_style else ()))


# --- reading definitions with pylatexenc ----------------------------------------------------

_CS = re.compile(r"\\(?:[a-zA-Z@]+|.)", re.S)
_CONTROL_WORD = re.compile(r"\\[a-zA-Z]+")
_SIMPLE_PARAMS = re.compile(r"(?:\s*#[1-9])*\s*")

# command name -> the shape of its arguments
DEFINITION_COMMANDS = {
    **dict.fromkeys(("newcommand", "renewcommand", "providecommand", "DeclareRobustCommand"), "command"),
    **dict.fromkeys(("newenvironment", "renewenvironment", "provideenvironment"), "environment"),
    "DeclareMathOperator": "operator",
    **dict.fromkeys(("def", "gdef", "edef", "xdef"), "def"),
    "let": "let",
    "newif": "newif",
    "newacronym": "acronym",
    "acro": "acro", "acrodef": "acro", "newacro": "acro",  # acronym package: \acro{key}[short]{long}
    "DeclareAcronym": "declare",  # acro: \DeclareAcronym{key}{short = ..., long = ...}
}


def match_brace(s: str, p: int, comments: bool = True) -> int:
    """Index of the `}` closing the `{` at p (len(s) if it is never closed); `\\{` does not count,
    nor (with `comments`) a brace in a `%` comment."""
    return _closing(s, p, "{", "}", comments)


def match_bracket(s: str, p: int) -> int:
    """Index of the `]` closing the `[` at p (len(s) if never closed); braced groups and
    comments inside are skipped (`[\\textbf{a]}]`)."""
    return _closing(s, p, "[", "]", True)


def _closing(s: str, p: int, opening: str, closing: str, comments: bool) -> int:
    depth, q, n = 0, p, len(s)
    while q < n:
        c = s[q]
        if c == "\\":
            q += 2
            continue
        if c == "%" and comments:  # a comment runs to the end of the line
            while q < n and s[q] not in "\r\n":
                q += 1
        elif c == "{" and opening != "{":
            q = _closing(s, q, "{", "}", comments)
        elif c == opening:
            depth += 1
        elif c == closing:
            depth -= 1
            if depth == 0:
                return q
        q += 1
    return n


class _Reader:
    """Reads the raw parts of a definition from position p of s."""

    def __init__(self, s: str, p: int):
        self.s, self.p = s, p

    def ws(self) -> None:
        s, n = self.s, len(self.s)
        while self.p < n and (s[self.p].isspace() or s[self.p] == "%"):
            if s[self.p] == "%":
                while self.p < n and s[self.p] not in "\r\n":
                    self.p += 1
            else:
                self.p += 1

    def char(self, c: str) -> bool:
        self.ws()
        if self.s.startswith(c, self.p):
            self.p += len(c)
            return True
        return False

    def cs(self) -> tuple[int, int] | None:
        self.ws()
        m = _CS.match(self.s, self.p)
        if m is None:
            return None
        self.p = m.end()
        return m.start(), m.end()

    def braced(self) -> tuple[int, int] | None:
        """A balanced `{...}`; a brace never closed is no argument (it would swallow the file)."""
        self.ws()
        if self.p >= len(self.s) or self.s[self.p] != "{":
            return None
        q = match_brace(self.s, self.p)
        if q >= len(self.s):
            return None
        span = (self.p + 1, q)
        self.p = min(q + 1, len(self.s))
        return span

    def name(self) -> tuple[int, int] | None:
        """`{\\name}` or `\\name`."""
        return self.braced() or self.cs()

    def bracket(self) -> tuple[int, int] | None:
        self.ws()
        if self.p >= len(self.s) or self.s[self.p] != "[":
            return None
        q = match_bracket(self.s, self.p)
        span = (self.p + 1, q)
        self.p = min(q + 1, len(self.s))
        return span


class DefinitionArgs(MacroStandardArgsParser):
    """pylatexenc arguments of a definition command, each read as raw text (a chars node)."""

    _SPECS = {"command": "*{[[{", "environment": "*{[[{{", "operator": "*{{", "def": "{{{", "let": "{{", "newif": "{",
              "acronym": "[{{{", "acro": "{[{", "declare": "{{"}

    def __init__(self, shape: str):
        super().__init__(argspec=self._SPECS[shape])
        self.shape = shape

    def parse_args(self, w, pos, parsing_state=None):
        r = _Reader(w.s, pos)
        parts = self._parts(r)
        if parts is None:  # not a definition we can read: consume nothing
            parts, r.p = [None] * len(self.argspec), pos
        nodes = [None if sp is None else w.make_node(latexwalker.LatexCharsNode, parsing_state=parsing_state,
                                                     chars=w.s[sp[0]:sp[1]], pos=sp[0], len=sp[1] - sp[0])
                 for sp in parts]
        return ParsedMacroArgs(argspec=self.argspec, argnlist=nodes), pos, r.p - pos

    def _parts(self, r: _Reader) -> list | None:
        shape = self.shape
        if shape == "def":
            name = r.cs()
            if name is None:
                return None
            start = r.p
            brace = r.s.find("{", start)
            if brace < 0 or brace - start > 200:
                return None
            r.p = brace
            return [name, (start, brace), r.braced()]
        if shape == "let":
            name = r.cs()
            r.char("=")
            return [name, r.cs()] if name else None
        if shape == "newif":
            return [r.cs()]
        if shape == "acronym":
            return [r.bracket(), r.braced(), r.braced(), r.braced()]
        if shape == "acro":
            return [r.braced(), r.bracket(), r.braced()]
        if shape == "declare":
            return [r.braced(), r.braced()]
        star = (r.p, r.p + 1) if r.char("*") else None
        name = r.name()
        if name is None:
            return None
        if shape == "operator":
            return [star, name, r.braced()]
        nargs, default = r.bracket(), r.bracket()
        bodies = [r.braced() or r.cs() for _ in range(2 if shape == "environment" else 1)]
        return [star, name, nargs, default, *bodies] if None not in bodies else None


def definition_specs() -> list[MacroSpec]:
    return [MacroSpec(name, args_parser=DefinitionArgs(shape)) for name, shape in DEFINITION_COMMANDS.items()]


def _cs_name(raw: str) -> str | None:
    m = _CS.fullmatch(raw.strip())
    return m.group()[1:] if m else None


def read_definition(node) -> Definition | None:
    """The definition a definition-command node makes, or None (unreadable or not simple)."""
    shape = DEFINITION_COMMANDS.get(getattr(node, "macroname", ""))
    d = node.nodeargd
    if shape is None or d is None or not d.argnlist:
        return None
    raw = [None if a is None else a.chars for a in d.argnlist]
    if shape == "acronym":
        key = (raw[1] or "").strip()
        return Acronym(key, raw[2] or key, raw[3] or raw[2] or key) if key else None
    if shape == "acro":  # \acro{CNN}[short]{long}: the key is the short form unless one is given
        key = (raw[0] or "").strip()
        return Acronym(key, (raw[1] or key).strip(), (raw[2] or key).strip()) if key else None
    if shape == "declare":
        key = (raw[0] or "").strip()
        fields = dict((k.strip().lower(), v.strip().strip("{}").strip()) for k, _, v in
                      (part.partition("=") for part in _split_keyvals(raw[1] or "")) if v)
        return Acronym(key, fields.get("short", key), fields.get("long", fields.get("short", key))) if key else None
    if shape == "newif":
        name = _cs_name(raw[0] or "")
        return Switch(name[2:]) if name and name.startswith("if") and len(name) > 2 else None
    if shape == "let":
        a, b = _cs_name(raw[0] or ""), _cs_name(raw[1] or "")
        return Alias(a, b) if a and b else None
    if shape == "def":
        name, params, body = _cs_name(raw[0] or ""), raw[1] or "", raw[2]
        if name is None or body is None or not _SIMPLE_PARAMS.fullmatch(params):
            return None
        return MacroDef(name, params.count("#"), None, body)
    if shape == "operator":
        name = _cs_name(raw[1] or "")
        return MacroDef(name, 0, None, raw[2] or "") if name else None
    nargs = int(raw[2].strip()) if raw[2] and raw[2].strip().isdigit() else 0
    default = raw[3] if nargs else None
    if shape == "environment":
        name = (raw[1] or "").strip()
        if not name or raw[4] is None:
            return None
        return EnvDef(name, min(nargs, 9), default, raw[4], raw[5] or "")
    name = _cs_name(raw[1] or "")
    if name is None or raw[4] is None:
        return None
    return MacroDef(name, min(nargs, 9), default, raw[4])


def _split_keyvals(text: str) -> list[str]:
    """`short = CNN, long = {Convolutional, Neural}` split at top-level commas."""
    parts, depth, last = [], 0, 0
    for i, c in enumerate(text):
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[last:i])
            last = i + 1
    parts.append(text[last:])
    return parts


# --- expansion ------------------------------------------------------------------------------

_INTERNAL = re.compile(r"\\[a-zA-Z]*@[a-zA-Z@]|\{@[a-zA-Z]")  # \@onedot, \the@foo, \setkeys{@ACM@...}: package internals
# Where a storing macro puts its argument: a definition's body or a key list (`\gdef\@subtitle{#1}`,
# `\setkeys{@ACM@topmatter@}{#1}`, `\def\@acmSubmissionID{#1}`).
_STORE = re.compile(r"\\(?:[gex]?def|global\\def|let)\s*\\[a-zA-Z@]+\s*(?:#\d)*\s*\{[^{}]*\}"
                    r"|\\setkeys\*?\s*\{[^{}]*\}\s*\{[^{}]*\}|\\(?:@namedef|expandafter)[^{}]*\{[^{}]*\}\s*\{[^{}]*\}"
                    # an image and the length it is raised by (`\raisebox{-#1\@depth}{\includegraphics[...]{#2}}`)
                    r"|\\includegraphics\s*(?:\[[^\]]*\])?\s*\{[^{}]*\}|\\raisebox\s*\{[^{}]*\}")


# TeX's box and register arithmetic (`\setbox0=\hbox{#1}\dimen0\wd0\divide\dimen0 by 2`): a macro that
# measures or draws (a circled number), not one whose body reads as text.
_PRIMITIVE = re.compile(r"\\(?:setbox|dimen|count|skip|divide|multiply|advance|wd|ht|dp)(?![a-zA-Z@])")


def machinery(macros: dict[str, MacroDef], known: frozenset[str]) -> frozenset[str]:
    """Macros that are package machinery rather than text, and are not expanded: a very long body,
    one on TeX's box and register arithmetic, or one built on `@` internals (pylatexenc would read `\\@onedot` as `\\@` + "onedot").  A
    redefinition of a command the parser `known`s that calls machinery counts too: cvpr.sty's
    `\\etal` ends in `\\onedot`, and the parser's own `\\etal` ("et al.") is better."""
    seeds = {name for name, d in macros.items()
             if len(d.body) > MAX_BODY_CHARS or _INTERNAL.search(d.body) or _PRIMITIVE.search(d.body)}
    return frozenset(seeds) | (_callers(seeds, macros) & known)


def storing(macros: dict[str, MacroDef], among: frozenset[str]) -> frozenset[str]:
    """The machinery macros (of `among`) that only store their arguments for later, or draw them:
    acmart's `\\acmSubmissionID{XXX}` (`\\gdef\\@acmSubmissionID{#1}`), `\\settopmatter{printfolios=true}`
    (`\\setkeys`), an inline icon `\\inlinegraphics{images/ocaml.png}` (`\\includegraphics{#2}`).  What they store is typeset elsewhere, if at all (a running head, a title block),
    so the call is left out with its arguments rather than read as an unknown command's text."""
    out = set()
    for name in among:
        d = macros.get(name)
        if d is not None and d.nargs and "#" in d.body and "#" not in _STORE.sub("", d.body):
            out.add(name)
    return frozenset(out)


def _callers(seeds: set[str], macros: dict[str, MacroDef], among: set[str] | None = None) -> frozenset[str]:
    """`seeds` and every macro (of `among`, default all) whose body calls one of them, transitively."""
    found = set(seeds)
    calls = {name: set(_CALLED.findall(macros[name].body)) for name in (among if among is not None else macros)}
    changed = True
    while changed:
        changed = False
        for name, called in calls.items():
            if name not in found and called & found:
                found.add(name)
                changed = True
    return frozenset(found)


def template(body: str, nargs: int, default: str | None, present: list[bool]) -> str:
    """`body` with `#k` replaced: a marker for an argument that was given, the default for an
    optional one that was not, nothing for a missing mandatory one."""
    if "#" not in body:
        return body

    def sub(m: re.Match) -> str:
        if m.group(1) is None:
            return "#"
        k = int(m.group(1)) - 1
        if k >= nargs:
            return ""
        if k < len(present) and present[k]:
            return "\\" + ARG_MARK + chr(ord("a") + k) + "{}"
        return default if (k == 0 and default is not None) else ""

    return _ARG_REF.sub(sub, body)


def resolve_markers(raw: str, args: list[str]) -> str:
    """Raw text of a template with its argument markers replaced by the arguments' raw text."""
    return _ARG_MARKER.sub(lambda m: args[ord(m.group(1)) - ord("a")] if ord(m.group(1)) - ord("a") < len(args) else "", raw)


_PATH_MACRO = re.compile(r"\\([a-zA-Z@]+)(?:[ \t]*\{\})?")


def expand_in_path(raw: str, macros: dict[str, MacroDef]) -> str:
    """A file argument with the project's argument-less macros replaced by their bodies, as TeX
    expands them: `\\def\\pathToRuns{runs}` then `\\input{\\pathToRuns/best.tex}` reads runs/best.tex.
    Nested macros expand too (bounded by `MAX_EXPANSION_DEPTH`); any other command is left as is."""
    for _ in range(MAX_EXPANSION_DEPTH):
        if "\\" not in raw:
            break

        def body(m: re.Match) -> str:
            d = macros.get(m.group(1))
            return d.body.strip() if d is not None and not d.nargs else m.group()

        expanded = _PATH_MACRO.sub(body, raw)
        if expanded == raw:
            break
        raw = expanded
    return raw


# --- author notes ---------------------------------------------------------------------------

NOTE_COMMANDS = frozenset("todo marginpar marginnote fxnote fxwarning fxerror fxfatal fixme FIXME".split())
_NOTE_NAME = re.compile(r"todo|fixme|comment$|(?<!foot)(?<!de)note$", re.I)
_COLOR_CALL = re.compile(r"\\(?:textcolor|color|colorbox|fcolorbox|hl|sethlcolor|sout|xout)(?![a-zA-Z@])")
_REVISION_NAME = re.compile(r"^(?:new|rev|chang|edit|add|mod|updat|highlight|hl|emph|import|key|bold|red|blue|green|colou?r)", re.I)
_CALLED = re.compile(r"\\([a-zA-Z@]+)")
_CALLED_NOTE = re.compile(r"\\(?:" + "|".join(NOTE_COMMANDS) + r")(?![a-zA-Z@])")


def note_macros(macros: dict[str, MacroDef]) -> frozenset[str]:
    """Names of the user macros that are author notes (see the module docstring)."""
    cands = {name for name, d in macros.items() if d.mandatory >= 1}
    notes = {name for name in cands
             if _NOTE_NAME.search(name) or _CALLED_NOTE.search(macros[name].body)
             or (_COLOR_CALL.search(macros[name].body) and "#" in macros[name].body and not _REVISION_NAME.match(name))}
    return _callers(notes, macros, cands) - set(NOTE_COMMANDS)


class DefinitionReader:
    """Reads the definition command at a position of one text with pylatexenc (walker made once)."""

    _context = None

    def __init__(self, s: str):
        self.s = s
        self.walker = None

    @classmethod
    def context(cls):
        if cls._context is None:
            from pylatexenc.macrospec import LatexContextDb

            db = LatexContextDb()
            db.add_context_category("definitions", macros=definition_specs())
            cls._context = db
        return cls._context

    def read(self, pos: int) -> tuple[Definition | None, str, int]:
        """(definition or None, command name, end of the command)."""
        if self.walker is None:
            self.walker = latexwalker.LatexWalker(self.s, latex_context=self.context(), tolerant_parsing=True)
        try:
            nodes, _, _ = self.walker.get_latex_nodes(pos=pos, read_max_nodes=1)
        except latexwalker.LatexWalkerError:
            return None, "", pos + 1
        node = nodes[0] if nodes else None
        if node is None or not isinstance(node, latexwalker.LatexMacroNode):
            return None, "", pos + 1
        return read_definition(node), node.macroname, max(node.pos + node.len, pos + 1)
