"""Protocol abuse over raw stdio (issue 18, item 3a): the real `peerlint serve` answers or ignores
every case as the JSON-RPC and LSP specifications say, and keeps serving.  The cases live in
benchmarks/robustness/protocol.py so `peerlint bench robustness` runs exactly these."""

from __future__ import annotations

import asyncio
import json

import pytest

from lsp_support import ByteSource
from peerlint.benchmarks.robustness.protocol import CASES, run_protocol_cases
from peerlint.server.framing import FrameReader, SessionGate, decode


def test_every_abuse_case_gets_its_defined_answer_and_the_server_keeps_serving(tmp_path, index_path):
    results = run_protocol_cases(tmp_path, index_path)
    assert [r.name for r in results] == [name for name, _ in CASES]
    failed = [(r.name, r.detail) for r in results if not r.ok or r.crashed]
    assert not failed, failed
    assert all(r.seconds < 60 for r in results), [(r.name, r.seconds) for r in results]


# -- the frame reader and the session gate on their own ----------------------------------------------

def _frames(data: bytes) -> list[tuple]:
    """(kind, id) of every frame in `data`, as the server would see them."""
    reader = FrameReader(ByteSource(data))
    out = []

    async def read_all():
        while (body := await reader.next_body()) is not None:
            found = decode(body, lambda d: d, reader)
            out.append(("error", found.error[0]) if found.error else ("message", found.message.get("id")))
    asyncio.run(read_all())
    return out


def _msg(msg_id, length_delta: int = 0, header: bytes = b"Content-Length: ") -> bytes:
    body = json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": "m"}).encode()
    return header + b"%d\r\n\r\n" % (len(body) + length_delta) + body


@pytest.mark.parametrize("delta", [-9, -1, 1, 9])
def test_a_wrong_length_costs_at_most_its_own_message(delta):
    seen = _frames(_msg(1) + _msg(2, delta) + _msg(3) + _msg(4))
    assert ("message", 1) in seen and ("message", 3) in seen and ("message", 4) in seen
    if delta > 0:  # too long: the message itself is whole, so it is served too
        assert ("message", 2) in seen


def test_headers_in_any_case_with_content_type_and_garbage_between():
    data = (_msg(1, header=b"content-length:") + b"\x00\xffjunk\r\n" + _msg(2) +
            b"Content-Length: 7\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" + b'{"a":1}' + _msg(3))
    assert _frames(data) == [("message", 1), ("message", 2), ("error", -32600), ("message", 3)]


def test_the_gate_follows_the_lifecycle():
    gate = SessionGate()
    assert gate.refuse("textDocument/hover", True)[0] == -32002
    assert gate.refuse("textDocument/didOpen", False) == (0, "")
    assert gate.refuse("exit", False) is None
    assert gate.refuse("initialize", True) is None and gate.initialized
    assert gate.refuse("textDocument/hover", True) is None
    assert gate.refuse("shutdown", True) is None
    assert gate.refuse("textDocument/hover", True)[0] == -32600
    assert gate.refuse("exit", False) is None
