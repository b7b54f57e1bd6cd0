"""Fuzzing (issue 18, item 3b): hypothesis over multi-file projects through the parser, over raw
bytes through the server's frame reader, and random editor sessions against the real server.
0 crashes, every chunk and diagnostic range inside its document, the final diagnostics equal to a
fresh check of the final text.  The generators and checks are benchmarks/robustness/{fuzz,sessions}.py,
which `peerlint bench robustness` runs with more examples."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from peerlint.latex.project import parse_project
from peerlint.latex.wall import ProjectWall
from peerlint.benchmarks.robustness.fuzz import FILES, PROSE, TOKENS, chunk_problems, fuzz_parser, write_project
from peerlint.benchmarks.robustness.sessions import random_session
from lsp_support import ByteSource
from peerlint.server.framing import FrameReader, decode

_soup = st.lists(st.one_of(st.sampled_from(TOKENS), st.sampled_from(PROSE), st.text(max_size=8)), max_size=30).map("".join)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.fixed_dictionaries({name: _soup for name in FILES}), st.booleans())
def test_random_projects_parse_within_their_documents_and_walls(files, rooted):
    if rooted:
        files = {**files, "main.tex": "\\documentclass{article}\n\\begin{document}\n" + files["main.tex"]}
    with tempfile.TemporaryDirectory() as tmp:
        main = write_project(Path(tmp), files)
        sources = {p.as_uri(): p.read_text(encoding="utf-8", errors="replace") for p in Path(tmp).rglob("*.tex")}
        project = parse_project(main)
        wall = ProjectWall.around(main)
        assert all(wall.allows(p) for p in project.files)
        problems = chunk_problems(sources, project.chunks, {p.as_uri() for p in project.files})
        assert not problems, problems[:3]


def test_the_bench_parser_fuzz_is_clean(tmp_path):
    result = fuzz_parser(tmp_path, examples=200, seed=7, budget_s=60)
    assert result.ok and not result.crashed, result.detail
    assert result.figures["projects"] == 200 and result.figures["chunks"] > 100


_frame_parts = st.lists(st.one_of(
    st.binary(max_size=30), st.sampled_from([b"Content-Length: ", b"content-length:", b"\r\n", b"\r\n\r\n", b"{", b"}",
                                             b'{"jsonrpc": "2.0", "id": 1, "method": "m"}', b"[", b"0", b"999", b"\xff"]),
    st.integers(0, 80).map(lambda n: b"%d" % n)), max_size=40).map(b"".join)


@settings(max_examples=300, deadline=None)
@given(_frame_parts)
def test_any_byte_stream_is_read_without_an_exception(data):
    reader = FrameReader(ByteSource(data))

    async def read_all() -> int:
        count = 0
        while (body := await reader.next_body()) is not None and count < 1000:
            found = decode(body, lambda d: d, reader)
            assert found.error is not None or found.message is not None or found.msg_id is None
            count += 1
        return count
    assert asyncio.run(asyncio.wait_for(read_all(), 10)) < 1000


@pytest.mark.parametrize("seed", [1, 2])
def test_random_editor_sessions_end_with_a_fresh_checks_diagnostics(tmp_path, index_path, seed):
    result = random_session(tmp_path, index_path, seed, ops=40)
    assert result.ok, result.detail
