"""LaTeX source -> section-aware chunks of prose, each with an exact map back to the source.

Entry points: `parse_document` (one buffer), `parse_project` / `find_root` (multi-file projects,
in `project.py`), `LineIndex` / `offset_to_position` / `position_to_offset` (LSP positions:
zero-based lines, UTF-16 columns; `\\r\\n`, `\\r` and `\\n` each end a line).

What becomes prose
  * Paragraphs split at blank lines, `\\par`, sectioning commands and block environments;
    list environments (itemize, enumerate, description) stay in their paragraph, and a long
    paragraph is cut at sentence (or list-item) boundaries so that every chunk has at most
    `ParseOptions.max_tokens` tokens as counted by `ParseOptions.count_tokens`.
  * Chunk kinds: "paragraph", "abstract" (section "Abstract"; `abstract` environment or an
    `\\abstract{...}` command, also in the preamble), "title" (`\\title{}`), "section-title"
    (`\\part` ... `\\subparagraph`), "caption" (figure and table captions; the rest of a float
    is dropped) and "footnote".
  * `Chunk.section` is the title of the enclosing top-level heading (`\\section`, or
    `\\chapter`/`\\part`; a document without them uses its shallowest heading level), so
    prose under `\\subsection{}` or `\\paragraph{}` inside "Related Work" has section
    "Related Work".  Sub-level titles are still chunks of kind "section-title".  Untitled
    prose between the abstract and the first heading, and a teaser figure above the abstract,
    have section "Introduction"; a footnote
    of the abstract, a file `\\input` inside `\\begin{abstract}`, and untitled opening prose in a
    paper with no abstract environment (a systems paper's plain-text abstract) are in "Abstract".
  * Placeholder words keep sentences readable: inline and display math -> "[math]" (display math
    keeps the punctuation that ends it: "we obtain [math], and therefore"), `\\cite...` -> "[cite]"
    (keys go to `Chunk.cites`; in a project whose .bib has the key, `\\citet` and the other
    citations that are part of the sentence read as the authors' names, `citations.py`; in ACL's
    author-year styles `\\cite` too, with the year: "Smith et al. (2023)"),
    `\\ref`-like -> "[ref]", `\\url` -> "[url]", `\\verb` -> "[code]", commands configured as
    "dummy" -> "[dummy]"; `\\gls{key}` reads the acronym's short form; siunitx quantities read
    as printed (`\\SI{3.5}{\\giga\\byte}` -> "3.5 GB", `\\qty{5}{\\percent}` -> "5%").  Starred forms read like
    the unstarred ones (`\\gls*{x}`).  Comments,
    verbatim-like and `comment` environments, false conditional branches, `\\todo` and other
    notes, title blocks (authors, affiliations, ICML's `\\twocolumn[...]` apart from its
    title; acmart/IEEE/LNCS author commands; footnotes set under the title or saying who contributed
    what), code between `\\makeatletter` and `\\makeatother`, `*setup` commands, a paragraph or
    footnote that is only a number or a run-in label ("DMM:"), `\\vskip`-like dimensions and TeX
    parameters (`\\looseness-1`), tables, code
    (`\\verb`, listings, pythontex), the bibliography, a venue's checklist section and a dataset's
    datasheet (their questions are the venue's text; see `_CHECKLIST`) and the preamble (except `\\title` and `\\abstract`)
    are dropped.  `\\emph{...}` and unknown commands keep
    the text of their braced arguments; `~` is a space, `\\%` is "%", ``` `` ``` and `''` are
    '"', `--`/`---` are en/em dashes, accents are composed (`\\'e` -> "é").
  * The project's own macros are expanded (`macros.py`): `\\newcommand`, `\\renewcommand`,
    `\\providecommand`, `\\DeclareRobustCommand`, `\\def` with simple parameters,
    `\\newenvironment`, `\\DeclareMathOperator`, with arguments, optional arguments and their
    defaults, nested macros and `\\xspace`; a macro with an empty body, or one that drops its
    argument, drops it from the prose too, and author-note macros (`\\todo`-like) are left out.
    Expansion is bounded (`macros.MAX_EXPANSION_DEPTH`, `MAX_EXPANSIONS`): a recursive
    definition gives one warning.  Definitions apply to their whole file and the files read
    after it, and decide `\\ifX` conditionals (`blocks.py`).

Offsets: `Chunk.offsets[i]` is the source index of `text[i]`; characters that stand for
something else (a placeholder, an accent, the space that replaces a newline) map to the start
of what they replace, and `offsets[-1]` is one past the last source character of the chunk.

Magic comments (LaTeX comments, codes separated by commas; no codes means all, "*"):
    % peerlint: disable=CODE1,CODE2   on its own line: off from here until enable / end of file
    % peerlint: enable=CODE1          back on (no codes: everything back on)
    text % peerlint: disable-line=CODE       off for chunks touching this line
    % peerlint: disable-next-line=CODE       off for chunks touching the next line
They land in `Chunk.disabled`.  (`enable=X` cannot carve X out of a bare `disable`.)

The parser never raises on document text: if the pylatexenc walk fails on a block, that block
is read by a regex-only extractor instead (and logged); texts over `MAX_WALK_CHARS` are read
by that extractor only.

Speed: the source is cut into blocks at top-level blank lines (`blocks`); parsed blocks,
paragraph splits and finished chunks are cached by content, so after an edit only the touched
block goes through pylatexenc.  A 40-page paper (160k characters) takes ~0.5-0.8 s cold and
~40-60 ms per edit on a laptop-class CPU; pylatexenc is nearly all of the cold time.

Modules: `blocks` (block splitter, conditionals), `walker` (pylatexenc nodes -> paragraphs),
`macros` (the project's definitions), `citations` (`\\citet` as names), `text` (paragraph
builder with the offset map, regex fallback), `tables` (what is prose; user tables),
`positions` (LSP positions), `project` (multi-file projects), `roots` (which file is the root).
"""

from __future__ import annotations

import bisect
import logging
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Callable, Iterator

from pylatexenc.latexwalker import LatexWalkerError

from . import tables as T
from .blocks import split_blocks
from .positions import LineIndex, line_index, offset_to_position, position_to_offset, span_range
from .macros import Definitions
from .text import BibResource, Event, Include, Notice, Package, Para, crude_block
from .walker import walk_block
from ..sentences import sentence_starts
from ..types import Chunk, Offsets, Position

log = logging.getLogger(__name__)

# Tests set this to make internal failures loud instead of falling back.
_STRICT = False
# Beyond this many characters the pylatexenc walk is skipped (a 40-page paper is ~150k).
MAX_WALK_CHARS = 2_000_000


def estimate_tokens(s: str) -> int:
    """Word-piece estimate: words and punctuation marks, times 1.3."""
    return round(len(_TOKEN_ESTIMATE.findall(s)) * 1.3)


_TOKEN_ESTIMATE = re.compile(r"\w+|[^\w\s]")


@dataclass
class ParseOptions:
    """User-facing parser settings; `commands`/`environments` follow LTeX's tables."""

    commands: dict[str, str] = field(default_factory=dict)  # {"\\foo[]{}": "ignore"|"dummy"|"default"}
    environments: dict[str, str] = field(default_factory=dict)  # {"myenv": "ignore"|"default"}
    max_tokens: int = 200
    count_tokens: Callable[[str], int] = estimate_tokens
    # the same tokenizer's (start, end) of each token, when it has them: a long paragraph is then
    # tokenised once instead of once per candidate piece (`split_paragraph`)
    token_offsets: Callable[[str], list[tuple[int, int]]] | None = None
    macros: dict[str, str] = field(default_factory=dict)  # {"method": "FooNet"}: \method -> text

    def __post_init__(self) -> None:
        T.parse_user_commands(self.commands)  # raises ValueError naming the bad entry
        T.parse_user_environments(self.environments)
        if self.max_tokens < 1:
            raise ValueError(f"peerlint: max_tokens must be at least 1, not {self.max_tokens}.")

    def tables(self, definitions: Definitions | None = None) -> T.Tables:
        return T.build_tables(tuple(sorted(self.commands.items())), tuple(sorted(self.environments.items())),
                              tuple(sorted(self.macros.items())), definitions.key() if definitions else ((), (), (), (), (), ("", ())))


def parse_options(settings, embedder=None) -> ParseOptions:
    """The parser's options from user settings (`peerlint.settings.Settings`), counting tokens with
    `embedder`'s tokenizer where given (else an estimate); bad tables raise ValueError naming the entry."""
    opts = ParseOptions(commands=dict(settings.latex_commands), environments=dict(settings.latex_environments),
                        max_tokens=settings.max_tokens)
    if embedder is not None:
        opts.count_tokens, opts.token_offsets = embedder.count_tokens, getattr(embedder, "token_offsets", None)
    return opts


class TablesFor:
    """The tables for `options` and the definitions read so far, rebuilt only when those change."""

    def __init__(self, options: ParseOptions, scope: Definitions):
        self.options = options
        self.scope = scope
        self.version = -1
        self.tables: T.Tables | None = None

    def __call__(self) -> T.Tables:
        if self.tables is None or self.version != self.scope.version:
            self.tables = self.options.tables(self.scope)
            self.version = self.scope.version
        return self.tables


# --- magic comments -------------------------------------------------------------------------

_MAGIC = re.compile(
    r"%+[ \t]*peerlint[ \t]*:[ \t]*(disable-next-line|disable-line|disable|enable)(?![\w-])"
    r"[ \t]*(?:=[ \t]*([^\r\n%]*))?",
    re.I,
)


class MagicComments:
    """`% peerlint: ...` comments of one file, as source intervals with the codes they silence."""

    def __init__(self, source: str, index: LineIndex):
        self.intervals: list[tuple[int, int, frozenset[str]]] = []
        if "peerlint" not in source:
            return
        active: dict[str, int] = {}
        for m in _MAGIC.finditer(source):
            p = m.start()
            k = p
            while k > 0 and source[k - 1] == "\\":
                k -= 1
            if (p - k) % 2:  # an escaped \% is not a comment
                continue
            verb = m.group(1).lower()
            codes = frozenset(c for c in re.split(r"[\s,]+", m.group(2) or "") if c) or frozenset({"*"})
            if verb == "disable":
                for c in codes:
                    active.setdefault(c, p)
            elif verb == "enable":
                for c in (list(active) if "*" in codes else codes):
                    if c in active:
                        self.intervals.append((active.pop(c), p, frozenset({c})))
            else:
                line = index.position(p).line + (verb == "disable-next-line")
                if line < index.line_count():
                    a, b = index.line_span(line)
                    self.intervals.append((a, b + 1, codes))
        for c, a in active.items():
            self.intervals.append((a, len(source) + 1, frozenset({c})))

    def disabled(self, a: int, b: int) -> frozenset[str]:
        if not self.intervals:
            return frozenset()
        out: set[str] = set()
        for ia, ib, codes in self.intervals:
            if ia < max(b, a + 1) and a < ib:
                out |= codes
        return frozenset(out)


# --- block cache ----------------------------------------------------------------------------

class _Cache:
    """A thread-safe LRU map bounded by the total weight (characters) of what it holds."""

    def __init__(self, max_weight: int):
        self.max_weight = max_weight
        self.weight = 0
        self.items: OrderedDict = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key):
        with self.lock:
            item = self.items.get(key)
            if item is None:
                return None
            self.items.move_to_end(key)
            return item[0]

    def put(self, key, value, weight: int) -> None:
        with self.lock:
            old = self.items.pop(key, None)
            if old is not None:
                self.weight -= old[1]
            self.items[key] = (value, weight)
            self.weight += weight
            while self.weight > self.max_weight and len(self.items) > 1:
                _, (_, w) = self.items.popitem(last=False)
                self.weight -= w

    def clear(self) -> None:
        with self.lock:
            self.items.clear()
            self.weight = 0


# Parsed blocks and paragraph splits, keyed by their text: ~4M characters each, a few dozen
# 40-page papers, some tens of MB.
_BLOCKS = _Cache(4_000_000)
_PIECES = _Cache(4_000_000)


def _walk_cached(text: str, preamble: bool, tables: T.Tables) -> list[Event]:
    key = (text, preamble, id(tables))
    events = _BLOCKS.get(key)
    if events is None or events[0] is not tables:
        try:
            evs = walk_block(text, tables, preamble)
        except Exception as exc:  # pylatexenc or walker failure: fall back for this block only
            if _STRICT and not isinstance(exc, (RecursionError, LatexWalkerError)):
                raise
            log.warning("peerlint: LaTeX walker failed on a block; using the regex extractor", exc_info=True)
            evs = crude_block(text, preamble)
        events = (tables, evs)
        _BLOCKS.put(key, events, len(text) + 100)
    return events[1]


def _shift(ev: Event, base: int) -> Event:
    if isinstance(ev, Para):
        return ev.shifted(base)
    if isinstance(ev, Include):
        return Include(ev.command, ev.args, ev.pos + base, ev.kind)
    return ev


def file_events(source: str, tables: TablesFor, in_preamble: bool | None) -> Iterator[tuple[Event, bool]]:
    """(event, in_preamble) in source order, offsets into `source`.  The file's definitions go to
    `tables.scope` first; `tables` is asked per block (an included file may add definitions)."""
    if len(source) > MAX_WALK_CHARS:
        log.info("peerlint: %d characters is too long to parse fully; using the regex extractor", len(source))
        start = 0
        if in_preamble is not False:
            m = re.search(r"\\begin\s*\{document\}", source)
            if m:
                start = m.end()
            elif in_preamble:
                return
        for ev in crude_block(source[start:], False):
            yield _shift(ev, start), False
        return
    problems: list[str] = []
    masked, blocks = split_blocks(source, in_preamble, tables.scope, problems)
    for problem in problems:
        yield Notice(problem), bool(in_preamble)
    for blk in blocks:
        for ev in _walk_cached(masked[blk.start:blk.end], blk.preamble, tables()):
            yield _shift(ev, blk.start), blk.preamble


# --- paragraphs -> chunks -------------------------------------------------------------------

_PLACEHOLDER_RE = re.compile("|".join(re.escape(p) for p in T.PLACEHOLDERS))


_ALNUM = re.compile(r"[^\W_]")


def _has_words(text: str) -> bool:
    return _ALNUM.search(_PLACEHOLDER_RE.sub("", text)) is not None


_LETTER = re.compile(r"[^\W\d_]")
_LABEL_ONLY = re.compile(r"\W*[^\W\d_]+(?:[.'\u2019 -][^\W\d_]+)?\s*:[\W\s]*")


def _bears_a_sentence(text: str) -> bool:
    """A paragraph or footnote with letters besides the placeholders, and more than a run-in label:
    one that is only a number (`\\setstretch{0}`), "[math]", or a label before a table or a formula
    ("DMM:", "Then: [math]") says nothing the models can read."""
    rest = _PLACEHOLDER_RE.sub(" ", text)
    return _LETTER.search(rest) is not None and _LABEL_ONLY.fullmatch(rest) is None


def _hard_split(text: str, a: int, b: int, count: Callable[[str], int], limit: int) -> list[tuple[int, int]]:
    """Cut text[a:b] into pieces of at most `limit` tokens, preferring clause and word breaks."""
    out = []
    while a < b:
        end, total = _window(text, a, b, count, limit)
        if end == b and total <= limit:
            out.append((a, b))
            break
        guess = a + max(1, int((end - a) * limit / max(total, 1) * 0.9))
        cut = guess
        for sep in ("; ", ", ", " "):
            k = text.rfind(sep, a + 1, guess)
            if k > a + (guess - a) // 3:
                cut = k + len(sep)
                break
        while cut - a > 1 and count(text[a:cut]) > limit:
            cut = a + max(1, (cut - a) * 3 // 4)
            k = text.rfind(" ", a + 1, cut)
            if k > a:
                cut = k + 1
        out.append((a, cut))
        a = cut
    return out


def _window(text: str, a: int, b: int, count: Callable[[str], int], limit: int) -> tuple[int, int]:
    """An end (b at most) of a window from `a` that holds more than `limit` tokens, and its token count.
    The next cut is looked for inside it, so a long run without a sentence end (a 100k-word line) is not
    counted again from every cut to its end: linear in the run's length instead of quadratic."""
    size = max(256, 16 * limit)
    while True:
        end = min(b, a + size)
        total = count(text[a:end])
        if total > limit or end == b:
            return end, total
        size *= 2


def span_counter(text: str, count: Callable[[str], int],
                 offsets: Callable[[str], list[tuple[int, int]]] | None) -> Callable[[int, int], int]:
    """count(text[a:b]) as a function of (a, b). With the tokenizer's offsets of the whole text, a
    span whose ends touch whitespace is counted from them: word-piece tokenizers never cut across
    whitespace and normalise character by character, so its tokens are exactly those it holds."""
    if offsets is None:
        return lambda a, b: count(text[a:b])
    spans = offsets(text)
    starts, ends = [s for s, _ in spans], [e for _, e in spans]
    n = len(text)

    def clean(x: int) -> bool:
        return x <= 0 or x >= n or text[x - 1].isspace() or text[x].isspace()

    def counted(a: int, b: int) -> int:
        if clean(a) and clean(b):
            return max(0, bisect.bisect_right(ends, b) - bisect.bisect_left(starts, a))
        return count(text[a:b])

    return counted


def split_paragraph(text: str, breaks: list[int], count: Callable[[str], int], limit: int,
                    offsets: Callable[[str], list[tuple[int, int]]] | None = None) -> list[tuple[int, int]]:
    """[start, end) pieces of `text`, each at most `limit` tokens, cut at sentence boundaries."""
    n = len(text)
    span = span_counter(text, count, offsets)
    if span(0, n) <= limit:
        return [(0, n)]
    bounds = sorted({0, n, *sentence_starts(text), *(x for x in breaks if 0 < x < n)})
    pieces: list[tuple[int, int]] = []
    start = None
    end = 0
    for a, b in zip(bounds, bounds[1:]):
        if start is not None and span(start, b) <= limit:
            end = b
            continue
        if start is not None:
            pieces.append((start, end))
        if span(a, b) <= limit:
            start, end = a, b
        else:
            hard = _hard_split(text, a, b, count, limit)
            pieces.extend(hard[:-1])
            start, end = hard[-1]
    if start is not None:
        pieces.append((start, end))
    out = []
    for a, b in pieces:
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if a < b:
            out.append((a, b))
    return out


def _pieces(para: Para, options: ParseOptions) -> list[tuple[int, int]]:
    key = (para.text, tuple(para.breaks), options.max_tokens, options.count_tokens)
    pieces = _PIECES.get(key)
    if pieces is None:
        pieces = split_paragraph(para.text, para.breaks, options.count_tokens, options.max_tokens, options.token_offsets)
        _PIECES.put(key, pieces, len(para.text) + 100)
    return pieces


# A venue's checklist section ("NeurIPS Paper Checklist", AAAI's "Reproducibility Checklist") and a
# dataset's datasheet ("Datasheet", "Datasheet for DataComp", NeurIPS Datasets & Benchmarks): their
# questions and guidelines are the venue's (or Gebru et al.'s) text and their short answers ("No.")
# point back into the paper, so each is left out up to the next heading of its level or above.
_CHECKLIST = re.compile(r"(?:[\w-]+\s+){0,3}check-?list|(?:[\w-]+\s+){0,2}data-?sheets?(?:\s+for\s+[\w\s:&-]+)?", re.I)


def _section_name(text: str) -> str:
    return " ".join(text.split()).rstrip(".:").strip()


@dataclass
class ChunkState:
    """What carries over from one paragraph to the next, also across \\input-ed files."""

    section: str = ""
    level: int | None = None  # depth of the heading that named `section`
    counters: dict[str, int] = field(default_factory=dict)
    last_kind: str = ""  # kind of the previous paragraph (a footnote of the abstract is in the abstract)
    after_abstract: bool = False  # prose after the abstract, before any heading, is the introduction
    checklist_level: int | None = None  # heading depth of the venue checklist / datasheet being left out (`_CHECKLIST`)

    @property
    def checklist(self) -> bool:
        return self.checklist_level is not None


class ChunkMaker:
    """Turns the Paras of one file into Chunks (ranges, sections, cites, magic comments)."""

    def __init__(self, source: str, uri: str, options: ParseOptions, state: ChunkState, kind: str = "paragraph"):
        self.source = source
        self.uri = uri
        self.options = options
        self.state = state
        self.kind = kind  # what this file's plain paragraphs are: "abstract" for one \input in an abstract
        self.index = line_index(source)
        self.magic = MagicComments(source, self.index)

    def add(self, para: Para, out: list[Chunk]) -> None:
        kind = self.kind if para.kind == "paragraph" else para.kind
        section = self._section(para, kind)
        if self.state.checklist or (kind == "footnote" and self._author_note(para)):
            return
        self.state.last_kind = kind
        first = self.state.counters.get(self.uri, 0)
        # Same paragraph at the same place with the same surroundings: the same chunks.  This
        # spares rebuilding the chunks before an edit (after it, offsets have moved anyway).
        key = (para.base, self.index.position(para.base), self.uri, section, kind, first, self.options.max_tokens,
               self.options.count_tokens, self.magic.intervals)
        memo = para.memo.get("chunks")
        if memo is not None and memo[0] == key:
            chunks = memo[1]
        else:
            chunks = self._chunks(para, section, kind, first)
            para.memo["chunks"] = (key, chunks)
        out.extend(chunks)
        self.state.counters[self.uri] = first + len(chunks)

    def _section(self, para: Para, kind: str) -> str:
        """The enclosing top-level heading; the abstract's own; "Introduction" for the untitled
        prose between the abstract and the first heading (as many papers open), and for a
        figure set above the abstract (CVPR's teaser)."""
        state = self.state
        if kind == "section-title":
            if state.checklist_level is not None and para.level <= state.checklist_level:
                state.checklist_level = None
            if state.level is None or para.level <= state.level:  # a \subsection keeps its \section
                state.section = _section_name(para.text)
                state.level = para.level
            if state.checklist_level is None and _CHECKLIST.fullmatch(_section_name(para.text)):
                state.checklist_level = para.level
            return state.section
        if kind == "abstract":
            state.after_abstract = True
            return "Abstract"
        if kind == "title":
            return ""
        if kind == "footnote" and state.last_kind == "abstract":
            return "Abstract"
        if not state.section and (state.after_abstract or kind == "caption"):  # a teaser figure above the abstract too
            return "Introduction"
        if not state.section and kind == "paragraph":  # untitled opening prose with no abstract environment: the abstract
            return "Abstract"
        return state.section

    def _author_note(self, para: Para) -> bool:
        """A footnote of the title block: one set before any prose, heading or abstract (the
        affiliations under the title), or one saying who contributed what (`T.AUTHOR_NOTE`)."""
        state = self.state
        if not state.section and not state.after_abstract and state.last_kind in ("", "title"):
            return True
        return T.AUTHOR_NOTE.search(para.text) is not None

    def _chunks(self, para: Para, section: str, kind: str, first: int) -> list[Chunk]:
        out: list[Chunk] = []
        base = para.base
        for text, rel, cites in self._pieces_of(para):
            start, end = rel[0] + base, rel[-1] + base
            out.append(Chunk(
                text=text, uri=self.uri, section=section, offsets=Offsets(rel, base),
                range=self.index.range(start, end), kind=kind, index=first + len(out), cites=cites, paragraph=first,
                disabled=self.magic.disabled(start, end),
            ))
        return out

    def _pieces_of(self, para: Para) -> list[tuple[str, tuple[int, ...], tuple[str, ...]]]:
        """Text, offsets relative to the paragraph and cites of each piece with words: the same at
        every parse while the paragraph keeps its text, wherever it moved (kept in its memo)."""
        key = (self.options.max_tokens, self.options.count_tokens)
        memo = para.memo.get("pieces")
        if memo is not None and memo[0] == key:
            return memo[1]
        out = []
        for i0, i1 in _pieces(para, self.options):
            text = para.text[i0:i1]
            if _has_words(text) if para.kind not in _PROSE_KINDS else _bears_a_sentence(text):
                rel = tuple(para.offs[i0:i1]) + (para.end(i1 - 1),)
                cites = tuple(dict.fromkeys(k for i, k in para.cites if i0 <= i < i1)) if para.cites else ()
                out.append((text, rel, cites))
        para.memo["pieces"] = (key, out)
        return out


# kinds whose chunk must bear a sentence (titles, headings, captions and abstracts are kept as written)
_PROSE_KINDS = frozenset({"paragraph", "footnote"})


# --- entry point ----------------------------------------------------------------------------

def parse_document(text: str, uri: str, options: ParseOptions | None = None,
                   in_preamble: bool | None = None) -> list[Chunk]:
    """Chunks of prose in one LaTeX buffer.  Never raises on any `text`.

    in_preamble: None = a buffer containing `\\begin{document}` has a preamble (only its
    `\\title`/`\\abstract` are read); True = everything before `\\begin{document}` (or all of
    it) is preamble; False = no preamble (an \\input-ed file).
    """
    options = options or ParseOptions()

    def chunks_of(events) -> list[Chunk]:
        maker = ChunkMaker(text, uri, options, ChunkState())
        out: list[Chunk] = []
        for ev in events:
            if isinstance(ev, Para):
                maker.add(ev, out)
        return out

    def reported(events):
        said = set()
        for ev in events:
            if isinstance(ev, Notice) and ev.message not in said:
                said.add(ev.message)
                log.warning("peerlint: %s: %s", uri, ev.message)
            yield ev

    try:
        tables = TablesFor(options, Definitions())
        return chunks_of(reported(ev for ev, _ in file_events(text, tables, in_preamble)))
    except Exception:
        if _STRICT:
            raise
        log.warning("peerlint: LaTeX parse failed; using the regex extractor", exc_info=True)
    try:
        return chunks_of(crude_block(text, False))
    except Exception:
        if _STRICT:
            raise
        log.error("peerlint: even the regex extractor failed on %s", uri, exc_info=True)
        return []


def selection_chunk(chunks: list[Chunk], source: str, uri: str, start: Position, end: Position) -> Chunk | None:
    """The prose of a selection as one chunk: the selected characters of every chunk it touches.

    Markup inside the selection is left out exactly as the parser left it out; the offsets map
    back to the source, so a diagnostic on the result lands on the selection.  None when the
    selection holds no words.
    """
    index = line_index(source)
    a, b = index.offset(start), index.offset(end)
    if b <= a:
        return None
    text: list[str] = []
    offsets: list[int] = []
    last_end = a
    for chunk in sorted((c for c in chunks if c.uri == uri), key=lambda c: c.offsets[0]):
        keep = [i for i in range(len(chunk.text)) if a <= chunk.offsets[i] < b]
        if not keep:
            continue
        if text:
            text.append(" ")
            offsets.append(chunk.offsets[keep[0]])
        text.extend(chunk.text[i] for i in keep)
        offsets.extend(chunk.offsets[i] for i in keep)
        last_end = chunk.offsets[keep[-1] + 1]
    joined = "".join(text)
    lead = len(joined) - len(joined.lstrip())
    body = joined.strip()
    if not body or not _has_words(body):
        return None
    offsets = offsets[lead:lead + len(body)] + [last_end if lead + len(body) == len(joined) else offsets[lead + len(body)]]
    return Chunk(text=body, uri=uri, section="", offsets=tuple(offsets), range=index.range(offsets[0], offsets[-1]),
                 kind="selection")


__all__ = [
    "BibResource", "Chunk", "ChunkMaker", "ChunkState", "Include", "LineIndex", "MagicComments", "Notice",
    "Package", "ParseOptions", "TablesFor", "estimate_tokens", "selection_chunk", "file_events", "line_index",
    "offset_to_position", "parse_document", "position_to_offset", "span_range",
    "split_paragraph",
]
