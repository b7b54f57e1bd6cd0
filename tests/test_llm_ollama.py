"""The Ollama backend against the loopback Ollama server (answered by the embedded model)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import threading
import time

import httpx
import ollama
import pytest
from llm_fixtures import RATING_PROMPT, SCHEMA, SMALL, closed_port, needs_model
from llm_fixtures import embedded, loopback  # noqa: F401  (pytest fixtures)

from peerlint.llm.base import GenerateParams, LLMBadOutput, LLMUnavailable
from peerlint.llm.ollama_backend import DEFAULT_MODEL, OllamaLLM, probe
from peerlint.llm.select import describe_backends, make_llm

FIVE = ["1", "2", "3", "4", "5"]
TEN = [str(i) for i in range(1, 11)]


# -- no model needed -------------------------------------------------------------------------


def test_unreachable_host_fails_fast_after_retries():
    llm = OllamaLLM(host=f"127.0.0.1:{closed_port()}", retries=3, backoff=0.2)
    started = time.monotonic()
    with pytest.raises(LLMUnavailable, match="not reachable .* after 3 tries"):
        llm.generate("hi", SMALL)
    assert 0.5 < time.monotonic() - started < 5  # two back-offs (0.2 s, 0.4 s), no hang


def test_a_server_that_is_not_ollama():
    import http.server

    class Hello(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.send_header("Content-Length", "5")
            self.end_headers()
            self.wfile.write(b"hello")

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hello)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with pytest.raises(LLMUnavailable, match="does not answer like Ollama"):
            OllamaLLM(host=f"127.0.0.1:{server.server_address[1]}").generate("hi", SMALL)
    finally:
        server.shutdown()
        server.server_close()


def test_probe_of_a_closed_port():
    found = probe(f"127.0.0.1:{closed_port()}", timeout=0.5)
    assert not found.reachable and found.error


def test_unknown_backend_name():
    with pytest.raises(Exception, match="use one of"):
        make_llm("openai")


# -- the loopback server ---------------------------------------------------------------------


@needs_model
def test_version_tags_show(loopback):
    assert httpx.get(f"{loopback.host}/api/version").json()["version"]
    assert httpx.get(loopback.host + "/").text == "Ollama is running"
    client = ollama.Client(host=loopback.host)
    assert [m.model for m in client.list().models] == [DEFAULT_MODEL]
    shown = client.show(DEFAULT_MODEL)
    assert "im_start" in shown.template and shown.details.format == "gguf"


@needs_model
def test_generate_and_chat_streaming_and_not(loopback):
    client = ollama.Client(host=loopback.host)
    options = {"temperature": 0, "seed": 1, "num_predict": 12}
    whole = client.generate(model=DEFAULT_MODEL, prompt="Say hello.", options=options)
    assert whole.done and whole.response and whole.context
    parts = list(client.generate(model=DEFAULT_MODEL, prompt="Say hello.", options=options, stream=True))
    assert len(parts) > 2 and parts[-1].done and "".join(p.response for p in parts) == whole.response

    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Say hello."}]
    chat = client.chat(model=DEFAULT_MODEL, messages=messages, options=options)
    assert chat.done and chat.message.role == "assistant" and chat.message.content
    chunks = list(client.chat(model=DEFAULT_MODEL, messages=messages, options=options, stream=True))
    assert len(chunks) > 2 and chunks[-1].done and chunks[-1].done_reason in ("stop", "length")
    assert "".join(c.message.content for c in chunks) == chat.message.content


@needs_model
def test_stream_is_the_default_when_absent(loopback):
    body = {"model": DEFAULT_MODEL, "messages": [{"role": "user", "content": "Hi"}], "options": {"num_predict": 5}}
    response = httpx.post(f"{loopback.host}/api/chat", json=body, timeout=30)
    lines = [json.loads(line) for line in response.text.splitlines() if line]
    assert response.headers["content-type"] == "application/x-ndjson"
    assert len(lines) > 1 and lines[-1]["done"] and not lines[0]["done"]


@needs_model
def test_logprobs_layout(loopback):
    client = ollama.Client(host=loopback.host)
    response = client.chat(
        model=DEFAULT_MODEL, messages=[{"role": "user", "content": RATING_PROMPT}], logprobs=True, top_logprobs=5,
        options={"temperature": 0, "num_predict": 3},
    )
    assert response.logprobs and len(response.logprobs) <= 3
    first = response.logprobs[0]
    assert first.logprob <= 0 and len(first.top_logprobs) == 5
    assert first.top_logprobs[0].logprob >= first.top_logprobs[-1].logprob
    assert first.token == first.top_logprobs[0].token  # greedy picks the most likely token
    assert sum(math.exp(t.logprob) for t in first.top_logprobs) <= 1.0 + 1e-6


@needs_model
def test_backend_matches_embedded(loopback, embedded):
    llm = OllamaLLM(host=loopback.host)
    prompt = "Name one planet of the solar system."
    assert llm.generate(prompt, SMALL) == embedded.generate(prompt, SMALL)
    for choices in (FIVE, TEN):
        remote, local = llm.score(RATING_PROMPT, choices), embedded.score(RATING_PROMPT, choices)
        assert remote.best == local.best
        assert math.isclose(sum(remote.probs), 1.0, abs_tol=1e-9)
        assert remote.probs == pytest.approx(local.probs, abs=0.02)


@needs_model
def test_json_schema_generate(loopback):
    text = OllamaLLM(host=loopback.host).generate(
        RATING_PROMPT + " Reply as JSON.", GenerateParams(json_schema=SCHEMA, max_tokens=96)
    )
    assert set(SCHEMA["required"]) <= set(json.loads(text))


@needs_model
def test_garbage_for_a_json_request_is_a_clear_error(loopback):
    loopback.content_override = "Sure! The score is four."
    with pytest.raises(LLMBadOutput, match="not JSON"):
        OllamaLLM(host=loopback.host).generate("rate", GenerateParams(json_schema=SCHEMA, max_tokens=32))


@needs_model
def test_score_without_logprobs_falls_back_to_the_text(loopback):
    loopback.content_override = "10"
    scores = OllamaLLM(host=loopback.host).score(RATING_PROMPT, TEN)
    assert scores.best == "10" and scores.confidence == 1.0


@needs_model
def test_missing_model_names_the_pull(loopback):
    with pytest.raises(LLMUnavailable, match=r"model 'llama9:70b' not found on .*: run `ollama pull llama9:70b`"):
        OllamaLLM(model="llama9:70b", host=loopback.host).generate("hi", SMALL)


@needs_model
def test_retries_5xx_then_gives_up(loopback):
    llm = OllamaLLM(host=loopback.host, backoff=0.05)
    loopback.fail_next = [503, 500]
    assert llm.generate("Say hi.", SMALL)
    assert len(loopback.requests) == 3
    loopback.fail_next = [503, 503, 503]
    with pytest.raises(LLMUnavailable, match="failed 3 times"):
        llm.generate("Say hi.", SMALL)


@needs_model
def test_slow_server_times_out_without_retrying(loopback):
    loopback.delay = 2.0
    started = time.monotonic()
    with pytest.raises(LLMUnavailable, match="did not answer within"):
        OllamaLLM(host=loopback.host, timeout=0.5).generate("hi", SMALL)
    assert time.monotonic() - started < 2.0


@needs_model
def test_server_stopped_between_calls(loopback):
    llm = OllamaLLM(host=loopback.host, backoff=0.1)
    assert llm.generate("Say hi.", SMALL)
    loopback.stop()
    started = time.monotonic()
    with pytest.raises(LLMUnavailable, match="not reachable"):
        llm.generate("Say hi.", SMALL)
    assert time.monotonic() - started < 5


@needs_model
def test_server_stopped_while_answering(loopback):
    loopback.delay = 1.0
    llm = OllamaLLM(host=loopback.host, backoff=0.1)
    threading.Timer(0.3, loopback.stop).start()
    started = time.monotonic()
    with pytest.raises(LLMUnavailable, match="not reachable"):
        llm.generate("Say hi.", SMALL)
    assert time.monotonic() - started < 5


@needs_model
def test_connection_cut_mid_stream(loopback):
    loopback.drop_after_chunks = 2
    pieces = []
    with pytest.raises(LLMUnavailable, match="mid-response"):
        for piece in OllamaLLM(host=loopback.host).stream_generate("Count from one to twenty.", SMALL):
            pieces.append(piece)
    assert len(pieces) <= 2


@needs_model
def test_server_stopped_mid_stream(loopback):
    loopback.chunk_delay = 0.1
    llm = OllamaLLM(host=loopback.host)
    stream = llm.stream_generate("Count from one to twenty.", GenerateParams(max_tokens=40))
    assert next(stream) is not None
    stopper = threading.Thread(target=loopback.stop)
    stopper.start()
    started = time.monotonic()
    with pytest.raises(LLMUnavailable, match="mid-response"):
        for _ in stream:
            pass
    stopper.join()
    assert time.monotonic() - started < 5
    assert loopback.engine.lock.acquire(timeout=5)  # the cut-off request let go of the model
    loopback.engine.lock.release()


@needs_model
def test_make_llm_auto(loopback, tmp_path):
    chosen = make_llm("auto", host=loopback.host, cache_dir=tmp_path)
    assert chosen.name == "ollama" and chosen.host == loopback.host
    assert make_llm("auto", model="absent:7b", host=loopback.host, cache_dir=tmp_path).name == "embedded"
    assert make_llm("auto", host=f"127.0.0.1:{closed_port()}", cache=False).name == "embedded"
    assert make_llm("ollama", host=f"127.0.0.1:{closed_port()}", cache=False).name == "ollama"
    assert make_llm("embedded", host=loopback.host, cache=False).name == "embedded"


@needs_model
def test_describe_backends(loopback):
    ollama_up, embedded_ok = describe_backends(host=loopback.host)
    assert ollama_up.available and ollama_up.version and ollama_up.model == DEFAULT_MODEL
    assert embedded_ok.available and embedded_ok.model_path.endswith(".gguf")
    down = describe_backends(host=f"127.0.0.1:{closed_port()}")[0]
    assert not down.available and "ollama serve" in down.detail
    missing = describe_backends(model="absent:7b", host=loopback.host)[0]
    assert not missing.available and "ollama pull absent:7b" in missing.detail


@needs_model
def test_command_line_entry_point():
    proc = subprocess.Popen(
        [sys.executable, "-m", "peerlint.benchmarks.harness.loopback", "--port", "0"],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        line = proc.stdout.readline()
        host = line.split(" at ")[1].split()[0]
        assert httpx.get(f"{host}/api/tags", timeout=5).json()["models"][0]["name"] == DEFAULT_MODEL
    finally:
        proc.terminate()
        proc.wait(timeout=10)
