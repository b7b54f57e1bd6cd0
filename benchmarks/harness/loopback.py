"""A loopback Ollama server answered by the embedded model, for tests and offline demos.

It speaks the part of the documented Ollama API that peerlint and the `ollama` client use:
`GET /`, `GET /api/version`, `GET /api/tags`, `POST /api/show`, `POST /api/generate` and
`POST /api/chat`, streamed as NDJSON (Ollama's default when "stream" is absent) or as one
JSON object; `format` "json" or a JSON schema (grammar-constrained); `options` temperature,
seed and num_predict; `logprobs` / `top_logprobs` in Ollama's layout
(`[{"token", "logprob", "bytes", "top_logprobs": [{"token", "logprob", "bytes"}]}]`); a final
assistant message continues that message (prefill).  Unknown models get Ollama's 404.

Faults for tests, settable while running: `content_override` (answer this text instead of the
model's), `drop_after_chunks` (cut the connection after N streamed chunks), `fail_next` (status
codes for the next requests), `delay` (seconds before answering), `chunk_delay` (seconds
between streamed chunks).

    python -m peerlint.benchmarks.harness.loopback --port 11434
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import logging
import os
import re
import socket
import threading
import time
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator, Sequence

from ...llm.base import LLMError
from ...llm.embedded import Engine, find_gguf, get_engine
from ...llm.ollama_backend import DEFAULT_MODEL, full_model_name

log = logging.getLogger(__name__)

VERSION = "0.12.11-peerlint-loopback"
DEFAULT_PREDICT = 512  # Ollama's -1 ("until the context is full") capped, so demos stay snappy


def _now() -> str:
    return datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")


class LoopbackOllama:
    """Start/stop a local Ollama-compatible server on 127.0.0.1 (an ephemeral port by default)."""

    def __init__(self, models: Sequence[str] = (DEFAULT_MODEL,), port: int = 0,
                 model_path: str | os.PathLike[str] | None = None, n_ctx: int = 2048):
        self.models = [full_model_name(m) for m in models]
        self.port = port
        self.model_path = find_gguf(model_path)
        self.n_ctx = n_ctx
        self.content_override: str | None = None
        self.drop_after_chunks: int | None = None
        self.fail_next: list[int] = []
        self.delay = 0.0
        self.chunk_delay = 0.0
        self.requests: list[tuple[str, str]] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._live: set[socket.socket] = set()
        self._live_lock = threading.Lock()

    @property
    def host(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def engine(self) -> Engine:
        return get_engine(self.model_path, self.n_ctx)

    def start(self) -> "LoopbackOllama":
        server = ThreadingHTTPServer(("127.0.0.1", self.port), _Handler)
        server.daemon_threads = True
        server.loopback = self  # type: ignore[attr-defined]
        self._server, self.port = server, server.server_address[1]
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"loopback-ollama:{self.port}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening and cut every open connection, as a crashing server would."""
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        with self._live_lock:
            for sock in list(self._live):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> "LoopbackOllama":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- helpers for the handler ---------------------------------------------------------------

    def knows(self, model: str | None) -> bool:
        return bool(model) and full_model_name(model) in self.models

    def model_entry(self, name: str) -> dict[str, Any]:
        stat = self.model_path.stat()
        quant = re.search(r"(?i)\b(I?Q\d\w*|BF16|F16|F32)$", self.model_path.stem)
        digest = hashlib.sha256(f"{self.model_path}:{stat.st_size}:{stat.st_mtime_ns}".encode()).hexdigest()
        return {
            "name": name, "model": name, "size": stat.st_size, "digest": digest,
            "modified_at": datetime.fromtimestamp(stat.st_mtime, timezone.utc).isoformat().replace("+00:00", "Z"),
            "details": {"parent_model": "", "format": "gguf", "family": "llama", "families": ["llama"],
                        "parameter_size": "135M", "quantization_level": quant.group(0) if quant else "unknown"},
        }


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "ollama-loopback"

    @property
    def loop(self) -> LoopbackOllama:
        return self.server.loopback  # type: ignore[attr-defined]

    def setup(self) -> None:
        super().setup()
        with self.loop._live_lock:
            self.loop._live.add(self.connection)

    def finish(self) -> None:
        with self.loop._live_lock:
            self.loop._live.discard(self.connection)
        with contextlib.suppress(OSError):
            super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("loopback %s: " + format, self.address_string(), *args)

    # -- plumbing ------------------------------------------------------------------------------

    def _send_json(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _read_json(self) -> dict[str, Any] | None:
        """Read the whole body first, so an early answer never leaves bytes on a kept-alive connection."""
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
            return body if isinstance(body, dict) else None
        except ValueError:
            return None

    def _guard(self, method: str) -> bool:
        """Record the request and apply the configured faults; False when already answered."""
        self.loop.requests.append((method, self.path))
        if self.loop.delay:
            time.sleep(self.loop.delay)
        if self.loop.fail_next:
            status = self.loop.fail_next.pop(0)
            self._send_json(status, {"error": f"loopback: injected failure {status}"})
            return False
        return True

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        if not self._guard("GET"):
            return
        if self.path == "/":
            data = b"Ollama is running"
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        elif self.path == "/api/version":
            self._send_json(200, {"version": VERSION})
        elif self.path == "/api/tags":
            self._send_json(200, {"models": [self.loop.model_entry(m) for m in self.loop.models]})
        else:
            self._send_json(404, {"error": "404 page not found"})

    def do_POST(self) -> None:
        body = self._read_json()
        if not self._guard("POST"):
            return
        routes = {"/api/chat": self._chat, "/api/generate": self._generate, "/api/show": self._show}
        route = routes.get(self.path)
        if route is None:
            self._send_json(404, {"error": "404 page not found"})
            return
        if body is None:
            self._send_json(400, {"error": "invalid JSON body"})
            return
        model = body.get("model") or body.get("name")
        if not self.loop.knows(model):
            self._send_json(404, {"error": f"model '{model}' not found"})
            return
        try:
            route(body, model)
        except OSError as exc:  # the client, or stop(), cut the connection
            log.debug("loopback: connection lost: %s", exc)
            self.close_connection = True
        except LLMError as exc:
            self._send_json(500, {"error": str(exc)})

    # -- endpoints -----------------------------------------------------------------------------

    def _show(self, body: dict[str, Any], model: str) -> None:
        engine = self.loop.engine
        info = {k: v for k, v in engine.metadata.items() if not k.startswith("tokenizer.")}
        self._send_json(200, {
            "modelfile": f"# loopback\nFROM {self.loop.model_path}\n", "parameters": "",
            "template": engine.template, "details": self.loop.model_entry(model)["details"],
            "model_info": info, "capabilities": ["completion"], "modified_at": _now(),
        })

    def _chat(self, body: dict[str, Any], model: str) -> None:
        messages = body.get("messages") or []
        if not messages:
            self._send_json(200, {"model": model, "created_at": _now(), "done": True, "done_reason": "load",
                                  "message": {"role": "assistant", "content": ""}})
            return
        prompt = self.loop.engine.render([{"role": m.get("role", "user"), "content": m.get("content") or ""}
                                          for m in messages])
        self._answer(body, model, prompt, lambda text: {"message": {"role": "assistant", "content": text}})

    def _generate(self, body: dict[str, Any], model: str) -> None:
        if not body.get("prompt"):
            self._send_json(200, {"model": model, "created_at": _now(), "response": "", "done": True,
                                  "done_reason": "load"})
            return
        if body.get("raw"):
            prompt = body["prompt"]
        else:
            system = [{"role": "system", "content": body["system"]}] if body.get("system") else []
            prompt = self.loop.engine.render(system + [{"role": "user", "content": body["prompt"]}])
        self._answer(body, model, prompt, lambda text: {"response": text}, with_context=True)

    def _answer(self, body: dict[str, Any], model: str, prompt: str, shape: Any, with_context: bool = False) -> None:
        engine = self.loop.engine
        options = body.get("options") or {}
        num_predict = int(options.get("num_predict", -1))
        if num_predict < 0:
            num_predict = DEFAULT_PREDICT
        tokens = engine.tokenize_prompt(prompt)
        if len(tokens) >= engine.n_ctx:
            self._send_json(400, {"error": f"prompt is {len(tokens)} tokens, the context is {engine.n_ctx}"})
            return
        fmt = body.get("format") or None
        want_lp = bool(body.get("logprobs"))
        top_n = int(body.get("top_logprobs") or 0) if want_lp else None
        seed = options.get("seed")
        completion = engine.complete(
            tokens, num_predict, float(options.get("temperature", 0.8)),
            int(seed) if seed is not None else int.from_bytes(os.urandom(4), "little"),
            json_format=fmt, top_logprobs=top_n,
        )
        started = time.monotonic_ns()
        stream = body.get("stream", True)
        if stream:
            self.send_response(200)
            self.send_header("Content-Type", "application/x-ndjson")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
        texts: list[str] = []
        logprobs: list[dict[str, Any]] = []
        generated: list[int] = []
        chunks = 0
        with contextlib.closing(self._pieces(completion, engine)) as pieces:
            for text, token, entry in pieces:
                texts.append(text)
                if token is not None:
                    generated.append(token)
                if entry is not None:
                    logprobs.append(entry)
                if stream:
                    part = {"model": model, "created_at": _now(), **shape(text), "done": False}
                    if entry is not None:
                        part["logprobs"] = [entry]
                    self._chunk(part)
                    chunks += 1
                    if self.loop.chunk_delay:
                        time.sleep(self.loop.chunk_delay)
                    if self.loop.drop_after_chunks is not None and chunks >= self.loop.drop_after_chunks:
                        self.close_connection = True
                        self.connection.shutdown(socket.SHUT_RDWR)
                        return
        elapsed = time.monotonic_ns() - started
        final = {
            "model": model, "created_at": _now(), **shape("" if stream else "".join(texts)), "done": True,
            "done_reason": completion.done_reason if self.loop.content_override is None else "stop",
            "total_duration": elapsed, "load_duration": 0, "prompt_eval_count": len(tokens),
            "prompt_eval_duration": 0, "eval_count": len(texts), "eval_duration": elapsed,
        }
        if with_context:
            final["context"] = tokens + generated
        if want_lp and not stream:
            final["logprobs"] = logprobs
        if stream:
            self._chunk(final)
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        else:
            self._send_json(200, final)

    def _pieces(self, completion: Any, engine: Engine) -> Iterator[tuple[str, int | None, dict[str, Any] | None]]:
        """(text, token id, logprob entry) per generated token, or the injected override text."""
        if self.loop.content_override is not None:
            text = self.loop.content_override
            for i in range(0, len(text), 8):
                yield text[i:i + 8], None, None
            return
        for step in completion:
            entry = None
            if step.logprob is not None:
                entry = {"token": step.piece.decode("utf-8", "replace"), "logprob": step.logprob,
                         "bytes": list(step.piece)}
                if step.top:
                    entry["top_logprobs"] = [
                        {"token": engine.piece(t).decode("utf-8", "replace"), "logprob": lp,
                         "bytes": list(engine.piece(t))} for t, lp in step.top
                    ]
            yield step.text, step.token, entry

    def _chunk(self, part: dict[str, Any]) -> None:
        data = json.dumps(part).encode() + b"\n"
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m peerlint.benchmarks.harness.loopback", description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--model", action="append", help=f"model name to serve (default {DEFAULT_MODEL})")
    parser.add_argument("--gguf", help="GGUF file to answer with (default: the embedded model)")
    args = parser.parse_args(argv)
    server = LoopbackOllama(models=args.model or [DEFAULT_MODEL], port=args.port, model_path=args.gguf).start()
    print(f"loopback Ollama serving {', '.join(server.models)} at {server.host} (Ctrl-C stops)", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
