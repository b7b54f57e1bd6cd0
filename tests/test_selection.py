"""A selection's prose as one chunk: what *Check novelty* on a highlighted idea analyses."""

from pathlib import Path

from peerlint.latex.parse import parse_document, selection_chunk
from peerlint.types import Position

DRAFT = Path(__file__).resolve().parents[1] / "examples" / "draft.tex"


def _position(source: str, offset: int) -> Position:
    before = source[:offset]
    return Position(before.count("\n"), offset - (before.rfind("\n") + 1))


def test_selection_spanning_two_paragraphs_keeps_prose_and_maps_back_to_the_source():
    source = DRAFT.read_text()
    uri = DRAFT.as_uri()
    chunks = parse_document(source, uri)
    body = [c for c in chunks if c.kind == "paragraph" and len(c.text) > 200]
    first, second = body[0], body[1]
    start = first.offsets[len(first.text) // 2]
    end = second.offsets[40]
    chunk = selection_chunk(chunks, source, uri, _position(source, start), _position(source, end))
    assert chunk is not None and chunk.kind == "selection"
    assert chunk.text.startswith(first.text[len(first.text) // 2:].lstrip()[:30])
    assert chunk.text.endswith(second.text[:40].rstrip()[-20:])
    assert "\\" not in chunk.text  # markup stays out, as the parser left it out
    assert len(chunk.offsets) == len(chunk.text) + 1
    for i in (0, len(chunk.text) // 3, len(chunk.text) - 1):
        if chunk.text[i] != " ":
            assert source[chunk.offsets[i]] == chunk.text[i]
    assert (chunk.range.start.line, chunk.range.start.character) == (_position(source, chunk.offsets[0]).line,
                                                                     _position(source, chunk.offsets[0]).character)


def test_empty_or_markup_only_selection_gives_none():
    source = DRAFT.read_text()
    uri = DRAFT.as_uri()
    chunks = parse_document(source, uri)
    assert selection_chunk(chunks, source, uri, Position(0, 0), Position(0, 0)) is None
    assert selection_chunk(chunks, source, uri, Position(5, 0), Position(2, 0)) is None  # reversed
    assert selection_chunk(chunks, source, "file:///other.tex", Position(0, 0), Position(400, 0)) is None
