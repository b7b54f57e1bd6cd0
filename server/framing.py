"""The stdio transport, hardened: one bad frame costs only itself, and the session rules of LSP hold.

pygls's loop matches exactly `Content-Length: N\\r\\n` and trusts N: a length that is too long or
too short leaves the rest of the stream read as header lines that never match again, so one bad
frame silences the session for good (`peerlint bench robustness` found it).  Here:
  * a header is found anywhere in a line, in any letter case (that is how the stream resynchronises);
  * a body that holds one complete JSON value followed by more bytes (a length too long) is served,
    and the extra bytes are read again as the start of the next frame;
  * a body that is not JSON gets JSON-RPC's Parse error (id null), a message that is not a valid
    request its Invalid Request or Invalid Params error, so a client never waits for an answer
    that cannot come;
  * before `initialize`, requests get ServerNotInitialized (-32002) and notifications other than
    `exit` are dropped; after `shutdown`, requests get InvalidRequest (the LSP specification).
"""

from __future__ import annotations

import json
import logging
import re
import threading
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Protocol

log = logging.getLogger("peerlint.server")

MAX_BODY = 64 * 2**20  # a larger Content-Length is read as garbage until the next header
_HEADER = re.compile(rb"content-length[ \t]*:[ \t]*(\d+)", re.I)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
SERVER_NOT_INITIALIZED = -32002


class AsyncByteReader(Protocol):
    def readline(self) -> Awaitable[bytes]: ...

    def readexactly(self, n: int) -> Awaitable[bytes]: ...


class FrameReader:
    """JSON-RPC frames from a byte stream; bytes given back with `unread` are read first."""

    def __init__(self, reader: AsyncByteReader):
        self.reader = reader
        self.pending = b""

    def unread(self, data: bytes) -> None:
        self.pending = data + self.pending

    async def _readline(self) -> bytes:
        if self.pending:
            at = self.pending.find(b"\n")
            if at >= 0:
                line, self.pending = self.pending[: at + 1], self.pending[at + 1:]
                return line
            line, self.pending = self.pending, b""
            return line + await self.reader.readline()
        return await self.reader.readline()

    async def _readexactly(self, n: int) -> bytes:
        head, self.pending = self.pending[:n], self.pending[n:]
        return head + (await self.reader.readexactly(n - len(head)) if n > len(head) else b"")

    async def next_body(self) -> bytes | None:
        """The next frame's body, or None at the end of the stream."""
        length: int | None = None
        while True:
            line = await self._readline()
            if not line:
                return None
            found = _HEADER.search(line)
            if found:
                if found.start() and line[: found.start()].strip():
                    log.warning("skipped %d bytes that were not a frame", found.start())
                length = int(found.group(1))
                if length > MAX_BODY:
                    log.warning("a frame of %d bytes is over the %d-byte limit; skipped", length, MAX_BODY)
                    length = None
                continue
            if not line.strip() and length is not None:
                body = await self._readexactly(length)
                return body if body or not length else None


@dataclass
class Decoded:
    """One frame read as JSON: `message` (pygls's structured object) or the error to answer with."""

    message: Any = None
    error: tuple[int, str] | None = None
    msg_id: Any = None  # the id to answer an error to (None: JSON-RPC's null id)


def _valid_id(value: Any) -> bool:
    return isinstance(value, (str, int)) and not isinstance(value, bool)


def decode(body: bytes, structure: Callable[[dict], Any], reader: FrameReader) -> Decoded:
    """Parse one body; the bytes after a complete JSON value are given back to `reader`."""
    text = body.decode("utf-8", "surrogateescape").lstrip()
    try:
        raw, end = json.JSONDecoder().raw_decode(text)
    except (ValueError, RecursionError):  # not JSON, or nested deeper than Python recurses
        rest = _HEADER.search(body)  # a length too short: the next frame may start inside this body
        if rest:
            reader.unread(body[rest.start():])
        return Decoded(error=(PARSE_ERROR, "Parse error: the message is not JSON"))
    extra = text[end:].encode("utf-8", "surrogateescape")
    if extra.strip():
        reader.unread(extra)
    if not isinstance(raw, dict) or raw.get("jsonrpc") != "2.0":
        return Decoded(error=(INVALID_REQUEST, "Invalid Request: expected a JSON-RPC 2.0 object"))
    has_id = "id" in raw
    if has_id and raw["id"] is not None and not _valid_id(raw["id"]):
        return Decoded(error=(INVALID_REQUEST, "Invalid Request: the id must be a string or a number"))
    if "method" in raw and not isinstance(raw["method"], str):
        return Decoded(error=(INVALID_REQUEST, "Invalid Request: the method must be a string"), msg_id=raw.get("id"))
    if "method" in raw and "params" not in raw:  # JSON-RPC lets a request omit its params
        raw = {**raw, "params": None}
    try:
        return Decoded(message=_structure_all(raw, structure))
    except Exception as exc:
        if has_id and "method" in raw:
            return Decoded(error=(INVALID_PARAMS, f"Invalid params for {raw['method']}: {type(exc).__name__}"), msg_id=raw["id"])
        log.warning("dropped a malformed message %s: %s", raw.get("method"), exc)
        return Decoded()


def _structure_all(raw: Any, structure: Callable[[dict], Any]) -> Any:
    """What `json.loads(..., object_hook=structure)` would give for `raw` (innermost objects first)."""
    if isinstance(raw, dict):
        return structure({k: _structure_all(v, structure) for k, v in raw.items()})
    if isinstance(raw, list):
        return [_structure_all(v, structure) for v in raw]
    return raw


@dataclass
class SessionGate:
    """LSP's lifecycle: what may pass before `initialize` and after `shutdown`."""

    initialized: bool = False
    shut_down: bool = False

    def refuse(self, method: str, is_request: bool) -> tuple[int, str] | None:
        """The error for a request that may not run now; ("", "") for a notification to drop; None to pass."""
        if method == "exit":
            return None
        if not self.initialized and method != "initialize":
            return (SERVER_NOT_INITIALIZED, "the server is not initialized yet") if is_request else (0, "")
        if self.shut_down:
            return (INVALID_REQUEST, "the server is shutting down") if is_request else (0, "")
        if method == "initialize":
            self.initialized = True
        elif method == "shutdown":
            self.shut_down = True
        return None


async def serve_frames(stop: threading.Event, reader: AsyncByteReader, protocol: Any,
                       on_error: Callable[[Exception, Any], None]) -> None:
    """pygls's message loop, with `FrameReader`, `decode` and `SessionGate` in front of `protocol.handle_message`."""
    frames = FrameReader(reader)
    gate = SessionGate()

    def answer_error(msg_id: Any, code: int, message: str) -> None:
        protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})

    while not stop.is_set():
        body = await frames.next_body()
        if body is None:
            break
        found = decode(body, protocol.structure_message, frames)
        if found.error is not None:
            log.warning("answered a bad frame with %s (%s)", found.error[0], found.error[1])
            answer_error(found.msg_id, *found.error)
            continue
        message = found.message
        method = getattr(message, "method", None)
        if isinstance(method, str):
            is_request = getattr(message, "id", None) is not None
            refused = gate.refuse(method, is_request)
            if refused is not None:
                if refused[0]:
                    answer_error(message.id, *refused)
                else:
                    log.info("dropped %s (%s)", method, "before initialize" if not gate.initialized else "after shutdown")
                continue
        try:
            protocol.handle_message(message)
        except Exception as exc:
            log.exception("unable to handle a message")
            on_error(exc, None)
