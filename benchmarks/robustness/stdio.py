"""A raw JSON-RPC client for `peerlint serve` over stdio: exact bytes in, frames out, every wait bounded.

The abuse cases need what a well-behaved client library will not do (a wrong Content-Length,
invalid JSON, requests before `initialize`), and every read has a deadline so a server that
stops answering fails a case instead of hanging the harness.
"""

from __future__ import annotations

import itertools
import json
import os
import select
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class Silent(Exception):
    """The server sent nothing (or not the awaited reply) before the deadline."""


class Closed(Exception):
    """The server closed its stdout (it exited)."""


def _key(msg_id: Any) -> str:
    return json.dumps(msg_id)


def frame(payload: dict | bytes) -> bytes:
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


@dataclass
class RawServer:
    """One `peerlint serve` process; notifications it sends are kept in `notifications`."""

    proc: subprocess.Popen
    buf: bytes = b""
    notifications: list[dict] = field(default_factory=list)
    responses: dict[Any, dict] = field(default_factory=dict)  # answers read while waiting for another
    ids: Any = field(default_factory=lambda: itertools.count(1000))

    @classmethod
    def start(cls, cache_dir: Path, extra_env: dict[str, str] | None = None) -> "RawServer":
        env = {**os.environ, "PEERLINT_CACHE_DIR": str(cache_dir), "HF_HUB_OFFLINE": "1", **(extra_env or {})}
        proc = subprocess.Popen([sys.executable, "-m", "peerlint", "serve"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        return cls(proc)

    # -- writing ------------------------------------------------------------------------------
    def write(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, payload: dict | bytes) -> None:
        self.write(frame(payload))

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, **({} if params is None else {"params": params})})

    def request(self, method: str, params: Any = None, msg_id: Any = None) -> Any:
        msg_id = next(self.ids) if msg_id is None else msg_id
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, **({} if params is None else {"params": params})})
        return msg_id

    # -- reading ------------------------------------------------------------------------------
    def _fill(self, deadline: float) -> None:
        left = max(0.0, deadline - time.monotonic())
        fd = self.proc.stdout.fileno()
        if not select.select([fd], [], [], left)[0]:
            raise Silent("the server sent nothing in time")
        chunk = os.read(fd, 65536)
        if not chunk:
            raise Closed("the server closed stdout")
        self.buf += chunk

    def message(self, timeout: float = 10.0) -> dict:
        deadline = time.monotonic() + timeout
        while b"\r\n\r\n" not in self.buf:
            self._fill(deadline)
        head, _, rest = self.buf.partition(b"\r\n\r\n")
        length = int(next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")))
        while len(rest) < length:
            self._fill(deadline)
            head, _, rest = self.buf.partition(b"\r\n\r\n")
        self.buf = rest[length:]
        return json.loads(rest[:length])

    def reply(self, msg_id: Any, timeout: float = 10.0) -> dict:
        """The response to `msg_id`; server requests met on the way get an empty answer, as an editor would."""
        deadline = time.monotonic() + timeout
        while True:
            if _key(msg_id) in self.responses:
                return self.responses.pop(_key(msg_id))
            m = self.message(max(0.0, deadline - time.monotonic()))
            if "method" in m:
                if "id" in m:  # a request from the server (configuration, progress): answer it
                    self.send({"jsonrpc": "2.0", "id": m["id"], "result": [None] if m["method"] == "workspace/configuration" else None})
                else:
                    self.notifications.append(m)
                continue
            self.responses[_key(m.get("id"))] = m

    def call(self, method: str, params: Any = None, timeout: float = 10.0) -> dict:
        return self.reply(self.request(method, params), timeout)

    def drain(self, seconds: float) -> None:
        """Read whatever arrives for `seconds` (notifications and answers are kept)."""
        deadline = time.monotonic() + seconds
        try:
            while True:
                m = self.message(max(0.0, deadline - time.monotonic()))
                if "method" not in m:
                    self.responses[_key(m.get("id"))] = m
                elif "id" not in m:
                    self.notifications.append(m)
        except Silent:
            return

    # -- the session --------------------------------------------------------------------------
    def initialize(self, root: Path, options: dict | None = None, timeout: float = 60.0) -> dict:
        caps = {"window": {"workDoneProgress": False}, "workspace": {"configuration": False}}
        answer = self.call("initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": caps,
                                          "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
                                          "initializationOptions": options or {}}, timeout)
        self.notify("initialized", {})
        return answer

    def alive(self) -> bool:
        return self.proc.poll() is None

    def rss_mb(self) -> float | None:
        try:
            import psutil

            return round(psutil.Process(self.proc.pid).memory_info().rss / 2**20, 1)
        except Exception:
            return None

    def stop(self, timeout: float = 10.0) -> int | None:
        """shutdown + exit when it still answers; killed after `timeout`. Returns the exit status."""
        try:
            if self.alive():
                self.call("shutdown", None, timeout)
                self.notify("exit")
            return self.proc.wait(timeout)
        except (Silent, Closed, OSError, subprocess.TimeoutExpired, ValueError):
            return None
        finally:
            if self.alive():
                self.proc.kill()
                self.proc.wait(5)
            for stream in (self.proc.stdin, self.proc.stdout):
                try:
                    stream.close()
                except OSError:
                    pass
