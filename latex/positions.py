"""LSP positions: zero-based line and UTF-16 column; `\\r\\n`, `\\r` and `\\n` each end a line."""

from __future__ import annotations

import re
import threading
from bisect import bisect_right

from ..types import Chunk, Position, Range


_EOL = re.compile(r"\r\n|\r|\n")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


class LineIndex:
    """Line starts of one text, for fast offset <-> LSP position conversion (UTF-16 columns)."""

    __slots__ = ("source", "starts", "astral")

    def __init__(self, source: str):
        self.source = source
        self.starts = [0]
        self.starts.extend(m.end() for m in _EOL.finditer(source))
        self.astral = _ASTRAL.search(source) is not None

    def line_count(self) -> int:
        return len(self.starts)

    def line_span(self, line: int) -> tuple[int, int]:
        """[start, end) of a line's content, without its line break."""
        start = self.starts[line]
        if line + 1 < len(self.starts):
            end = self.starts[line + 1] - 1
            if end > start and self.source[end] == "\n" and self.source[end - 1] == "\r":
                end -= 1
        else:
            end = len(self.source)
        return start, end

    def position(self, offset: int) -> Position:
        offset = min(max(offset, 0), len(self.source))
        line = bisect_right(self.starts, offset) - 1
        start = self.starts[line]
        col = offset - start
        if self.astral and col:
            col += len(_ASTRAL.findall(self.source, start, offset))
        return Position(line, col)

    def offset(self, position: Position) -> int:
        if position.line < 0:
            return 0
        if position.line >= len(self.starts):
            return len(self.source)
        start, end = self.line_span(position.line)
        want = max(position.character, 0)
        if not self.astral:
            return min(start + want, end)
        units, i = 0, start
        while i < end and units < want:
            units += 2 if ord(self.source[i]) > 0xFFFF else 1
            if units > want:  # inside a surrogate pair: stay before the character
                break
            i += 1
        return i

    def range(self, start: int, end: int) -> Range:
        return Range(self.position(start), self.position(end))


_INDEX_CACHE: list[tuple[str, LineIndex]] = []
_INDEX_LOCK = threading.Lock()


def line_index(source: str) -> LineIndex:
    """A (cached) LineIndex for `source`; the last few texts are remembered."""
    with _INDEX_LOCK:
        for s, idx in _INDEX_CACHE:
            if s is source or (len(s) == len(source) and s == source):
                return idx
    idx = LineIndex(source)
    with _INDEX_LOCK:
        _INDEX_CACHE.insert(0, (source, idx))
        del _INDEX_CACHE[8:]
    return idx


def offset_to_position(source: str, offset: int) -> Position:
    return line_index(source).position(offset)


def position_to_offset(source: str, position: Position) -> int:
    return line_index(source).offset(position)


def span_range(chunk: Chunk, start: int, end: int, index: LineIndex) -> Range:
    """Source range of `chunk.text[start:end]` (for a finding about part of a chunk)."""
    offs = chunk.offsets
    n = len(chunk.text)
    start = min(max(start, 0), n)
    end = min(max(end, start), n)
    a = offs[start] if start < n else offs[n]
    if end <= start:
        return index.range(a, a)
    j = end
    while j < n and offs[j] == offs[end - 1]:  # inside a placeholder: take all of it
        j += 1
    return index.range(a, max(a, offs[j]))
