"""LLM hosts that fail: one that accepts and never answers, and an Ollama look-alike that answers
its model list but then garbage, or cuts the answer mid-stream.  (A closed host is a free port.)"""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL = "smollm2:135m"


def closed_url() -> str:
    """The address of a port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


class HangingHost:
    """A TCP port that accepts connections and never answers: an LLM host that hangs."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.2)
        self.conns: list[socket.socket] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _run(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.conns.append(conn)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(2)
        for c in self.conns:
            c.close()
        self.sock.close()


class FakeOllama:
    """`mode` "garbage": /api/tags is right, every generation answers 200 with HTML; "midstream": a
    generation sends its headers and half a JSON line, then closes the connection."""

    def __init__(self, mode: str):
        self.mode = mode
        self.requests: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def _send(self, code: int, body: bytes, kind: str = "application/json") -> None:
                self.send_response(code)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                outer.requests.append(self.path)
                if self.path == "/api/tags":
                    self._send(200, json.dumps({"models": [{"name": MODEL, "model": MODEL}]}).encode())
                elif self.path == "/api/version":
                    self._send(200, b'{"version": "0.12.11"}')
                else:
                    self._send(200, b"Ollama is running", "text/plain")

            def do_POST(self) -> None:
                outer.requests.append(self.path)
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if outer.mode == "garbage":
                    self._send(200, b"<html><body>502 Bad Gateway (a proxy, not Ollama)</body></html>", "text/html")
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/x-ndjson")
                self.send_header("Content-Length", "4096")
                self.end_headers()
                self.wfile.write(b'{"model": "smollm2:135m", "message": {"role": "assistant", "content": "The pa')
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
