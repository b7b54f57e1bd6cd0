"""Ideas as `peerlint ideas` and the editor see them: read from a file, embedded, deduplicated.

An ideas FILE is one of
  * `.jsonl` (or `.json`, a list): one object per idea with `text`, or `title` and/or
    `abstract` (embedded as "title. abstract", as the index embeds papers), optional `id`;
    a bare JSON string is an idea too;
  * `.tex`: every `\\item` of the outermost itemize/enumerate/description lists, with its exact
    source range (from `\\item` to the end of its last character of prose, trailing comments
    and blank space left out) and its prose text as the project's LaTeX parser reads it
    (`[cite]`, `[math]` placeholders, comments dropped);
  * anything else (`.txt`, `.md`): ideas separated by blank lines.
Ideas with no text are skipped and counted, never an error; so are malformed JSON lines.

Dedup follows NOVA (Hu et al., 2024, §4.1 "Diversity"): two ideas whose all-MiniLM-L6-v2
embeddings have cosine similarity >= 0.8 are the same idea.  The first one (in file order) is
kept and the later ones are merged into it, listed in `Idea.merged`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ...types import Range
from ...latex import tables as T
from ...latex.blocks import split_blocks
from ...latex.parse import parse_document
from ...latex.positions import line_index

DUPLICATE_COSINE = 0.8  # NOVA §4.1: "the duplication threshold is set to be 0.8"


@dataclass(frozen=True)
class Idea:
    """One idea (or abstract, or contribution item) to rank or check."""

    id: str
    text: str  # what is embedded and shown to the LLM
    title: str = ""
    source: str = ""  # the file it was read from
    line: int = 0  # 1-based line where it starts (0: unknown)
    start: int | None = None  # source character offsets [start, end) (`.tex` items)
    end: int | None = None
    range: Range | None = None  # the same span as an LSP range (UTF-16 columns)
    merged: tuple[str, ...] = ()  # ids of near-duplicates folded into this idea

    @property
    def label(self) -> str:
        text = self.title or self.text
        text = " ".join(text.split())
        return text if len(text) <= 70 else text[:69].rstrip() + "…"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "title": self.title, "text": self.text, "line": self.line}
        if self.source:
            out["source"] = self.source
        if self.start is not None:
            out["start"], out["end"] = self.start, self.end
        if self.range is not None:
            out["range"] = {"start": {"line": self.range.start.line, "character": self.range.start.character},
                            "end": {"line": self.range.end.line, "character": self.range.end.character}}
        if self.merged:
            out["merged"] = list(self.merged)
        return out


@dataclass
class IdeaFile:
    """What a file held: the ideas, and what was skipped and why (reason -> count)."""

    ideas: list[Idea]
    skipped: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def skip(self, reason: str, where: str = "") -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1
        if where:
            self.warnings.append(f"{where}: {reason}")

    def add(self, idea: "Idea | None", where: str) -> None:
        """Keep `idea`, or count it as having no text."""
        if idea is None or not idea.text:
            self.skip("no text", where)
        else:
            self.ideas.append(idea)


class IdeasError(ValueError):
    """A file that cannot be read at all; the message names the fix."""


def _clean(text: Any) -> str:
    return " ".join(str(text).split()) if text is not None else ""


def read_ideas(path: str | Path, text: str | None = None) -> IdeaFile:
    """The ideas of one file (`text` given: that buffer instead of the file's content)."""
    path = Path(path)
    if text is None:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise IdeasError(f"cannot read {path} ({exc.strerror or exc}): check the path") from None
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        return _read_jsonl(path, text)
    if suffix == ".json":
        return _read_json(path, text)
    if suffix == ".tex":
        return _read_tex(path, text)
    return _read_paragraphs(path, text)


def _from_object(obj: Any, default_id: str, path: Path, line: int) -> Idea | None:
    if isinstance(obj, str):
        return Idea(default_id, _clean(obj), "", str(path), line) if _clean(obj) else None
    if not isinstance(obj, dict):
        return None
    title, abstract = _clean(obj.get("title")), _clean(obj.get("abstract"))
    body = _clean(obj.get("text") or obj.get("idea") or "")
    if not body:
        body = f"{title}. {abstract}" if title and abstract else (abstract or title)
    if not body:
        return None
    return Idea(_clean(obj.get("id")) or default_id, body, title, str(path), line)


def _read_jsonl(path: Path, text: str) -> IdeaFile:
    out = IdeaFile([])
    for n, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except ValueError:
            out.skip("malformed JSON line", f"{path}:{n}")
            continue
        if not isinstance(obj, (dict, str)):
            out.skip("not an object or a string", f"{path}:{n}")
            continue
        out.add(_from_object(obj, f"{path.name}:{n}", path, n), f"{path}:{n}")
    return out


def _read_json(path: Path, text: str) -> IdeaFile:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise IdeasError(f"{path} is not JSON ({exc}): use one JSON object per line in a .jsonl file") from None
    if isinstance(data, dict) and isinstance(data.get("ideas"), list):
        data = data["ideas"]
    if not isinstance(data, list):
        raise IdeasError(f"{path} holds no list of ideas: write a JSON list, or one object per line (.jsonl)")
    out = IdeaFile([])
    for n, obj in enumerate(data, 1):
        out.add(_from_object(obj, f"{path.name}#{n}", path, 0), f"{path}#{n}")
    return out


def _read_paragraphs(path: Path, text: str) -> IdeaFile:
    out = IdeaFile([])
    block: list[str] = []
    first = 0
    for n, raw in enumerate(text.splitlines() + [""], 1):
        if raw.strip():
            if not block:
                first = n
            block.append(raw)
        elif block:
            body = _clean(" ".join(block))
            out.ideas.append(Idea(f"{path.name}:{first}", body, "", str(path), first))
            block = []
    return out


# -- LaTeX lists ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class ItemSpan:
    """One `\\item` in the source: [start, end) from the `\\item` to the end of its content."""

    start: int
    end: int
    environment: str


def item_spans(source: str) -> list[ItemSpan]:
    """Every `\\item` of the outermost list environments, in source order (nested lists stay in
    their item).  Blocks come from the parser's own splitter; pylatexenc with the parser's tables
    finds the lists, so verbatim, `\\iffalse` and comment environments hide their items."""
    from pylatexenc.latexwalker import LatexEnvironmentNode, LatexGroupNode, LatexMacroNode, LatexWalker


    tables = T.build_tables((), (), ())
    masked, blocks = split_blocks(source)
    spans: list[ItemSpan] = []

    def visit(nodes, base: int, text: str) -> None:
        for node in nodes or ():
            if isinstance(node, LatexEnvironmentNode) and node.environmentname in T.LIST_ENVIRONMENTS:
                close = text.rfind("\\end", node.pos, node.pos + node.len)
                stop = close if close > node.pos else node.pos + node.len
                marks = [x.pos for x in node.nodelist if isinstance(x, LatexMacroNode) and x.macroname == "item"]
                for a, b in zip(marks, marks[1:] + [stop]):
                    spans.append(ItemSpan(base + a, base + _trim_end(text, a, b), node.environmentname))
            elif isinstance(node, LatexEnvironmentNode) or isinstance(node, LatexGroupNode):
                visit(node.nodelist, base, text)
            elif isinstance(node, LatexMacroNode) and node.nodeargd is not None:
                visit([x for x in (node.nodeargd.argnlist or []) if x is not None], base, text)

    for blk in blocks:
        if blk.preamble:
            continue
        text = masked[blk.start:blk.end]
        if "\\item" not in text:
            continue
        try:
            nodes, _, _ = LatexWalker(text, latex_context=tables.context, tolerant_parsing=True).get_latex_nodes(pos=0)
        except Exception:  # pylatexenc on broken LaTeX: this block has no items we can trust
            continue
        visit(nodes, blk.start, text)
    return sorted(spans, key=lambda s: s.start)


def _trim_end(text: str, a: int, b: int) -> int:
    """`b` moved back over trailing blank space and whole-line comments."""
    while b > a:
        while b > a and text[b - 1].isspace():
            b -= 1
        line_start = max(text.rfind("\n", a, b), text.rfind("\r", a, b)) + 1
        line = text[max(line_start, a):b]
        cut = _comment_start(line)
        if cut is None:
            return b
        b = max(line_start, a) + cut
    return b


def _comment_start(line: str) -> int | None:
    """Index of an unescaped `%` in `line`, or None."""
    i = line.find("%")
    while i >= 0:
        k = i
        while k > 0 and line[k - 1] == "\\":
            k -= 1
        if (i - k) % 2 == 0:
            return i
        i = line.find("%", i + 1)
    return None


def tex_items(source: str, uri: str = "") -> list[Idea]:
    """The `\\item`s of a LaTeX buffer as ideas: text from the parser's chunks, exact source ranges."""

    spans = item_spans(source)
    if not spans:
        return []
    chunks = parse_document(source, uri or "file:///ideas.tex")
    index = line_index(source)
    ideas: list[Idea] = []
    for n, span in enumerate(spans, 1):
        parts: list[str] = []
        for chunk in chunks:
            if chunk.offsets[-1] <= span.start or chunk.offsets[0] >= span.end:
                continue
            picked = "".join(ch for ch, off in zip(chunk.text, chunk.offsets) if span.start <= off < span.end)
            if picked.strip():
                parts.append(picked)
        body = _clean(" ".join(parts))
        pos = index.position(span.start)
        ideas.append(Idea(f"item{n}", body, "", uri, pos.line + 1, span.start, span.end, index.range(span.start, span.end)))
    return ideas


def list_items_at(source: str, offset: int, uri: str = "") -> list[Idea]:
    """The `\\item`s of the list that `offset` is in (from its `\\begin` to its last item's end).

    Consecutive items belong to one list unless an `\\end{` lies between them."""
    groups: list[list[Idea]] = []
    for item in tex_items(source, uri):
        if groups and "\\end{" not in source[groups[-1][-1].end:item.start]:
            groups[-1].append(item)
        else:
            groups.append([item])
    for group in groups:
        begin = source.rfind("\\begin{", 0, group[0].start)
        if (begin if begin >= 0 else group[0].start) <= offset <= group[-1].end:
            return group
    return []


def _read_tex(path: Path, text: str) -> IdeaFile:
    out = IdeaFile([])
    items = tex_items(text, str(path))
    if not items:
        out.warnings.append(f"{path}: no \\item in an itemize, enumerate or description list")
    for idea in items:
        out.add(idea, f"{path}:{idea.line}")
    return out


# -- embeddings and dedup -------------------------------------------------------------------------

Embed = Callable[[Sequence[str]], np.ndarray]


def embed_function(embedder: Any) -> Embed:
    """A texts -> L2-normalised vectors function from an `Embedder`, a `VectorIndex`, a `Retriever`
    or a plain callable."""
    if embedder is None:
        raise ValueError("an embedder is needed (peerlint.index.embedding.embedder.Embedder, an open index, or a callable)")
    if hasattr(embedder, "encode"):
        fn = embedder.encode
    elif hasattr(embedder, "embed"):
        fn = embedder.embed
    elif callable(embedder):
        fn = embedder
    elif hasattr(embedder, "index") and hasattr(embedder.index, "embed"):  # a Retriever
        fn = embedder.index.embed
    else:
        raise ValueError(f"cannot embed texts with {type(embedder).__name__}")

    def embed(texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        vecs = np.asarray(fn(list(texts)), dtype=np.float32)
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        return vecs / np.where(norms > 0, norms, 1.0)

    return embed


@dataclass(frozen=True)
class Dedup:
    """Ideas after merging near-duplicates: `kept` in input order, `merged` how many were folded."""

    kept: tuple[Idea, ...]
    merged: int
    groups: dict[str, tuple[str, ...]]  # kept id -> ids merged into it
    vectors: np.ndarray  # rows aligned with `kept`
    threshold: float


def dedup(ideas: Sequence[Idea], embed: Embed | Any, threshold: float = DUPLICATE_COSINE) -> Dedup:
    """Keep the first of every group of ideas with cosine >= `threshold` to a kept one.

    Identical texts (whitespace and case aside) are merged without asking the embedder."""
    fn = embed if callable(embed) and not hasattr(embed, "encode") and not hasattr(embed, "embed") \
        else embed_function(embed)
    ideas = list(ideas)
    if not ideas:
        return Dedup((), 0, {}, np.zeros((0, 0), dtype=np.float32), threshold)
    keys = [" ".join(i.text.lower().split()) for i in ideas]
    first_of: dict[str, int] = {}
    for n, key in enumerate(keys):
        first_of.setdefault(key, n)
    unique = sorted(set(first_of.values()))
    vecs = fn([ideas[n].text for n in unique])
    vec_of = dict(zip(unique, vecs))
    kept: list[int] = []
    into: dict[int, int] = {}
    for n, idea in enumerate(ideas):
        target = first_of[keys[n]]
        if target != n:
            into[n] = into.get(target, target)
            continue
        if kept:
            sims = np.stack([vec_of[k] for k in kept]) @ vec_of[n]
            best = int(np.argmax(sims))
            if sims[best] >= threshold:
                into[n] = kept[best]
                continue
        kept.append(n)
    groups: dict[str, list[str]] = {ideas[k].id: [] for k in kept}
    for n, k in into.items():
        groups[ideas[k].id].append(ideas[n].id)
    out = tuple(replace(ideas[k], merged=ideas[k].merged + tuple(groups[ideas[k].id])) for k in kept)
    return Dedup(out, len(into), {k: tuple(v) for k, v in groups.items() if v},
                 np.stack([vec_of[k] for k in kept]).astype(np.float32), threshold)
