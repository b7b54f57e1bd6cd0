"""What leaves the machine (issue 18, item 2): prompts go only to the configured backend,
`peerlint doctor` says where and whether that is this machine, and `backend: "embedded"` keeps
everything here (not even a probe reaches an Ollama address)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from peerlint.analyzers.llm.base import LLMError
from peerlint.analyzers.llm.select import is_loopback, make_llm, prompt_destination

REPO = Path(__file__).resolve().parents[1]


class _Listener:
    """A TCP port that counts the connections made to it (and answers none)."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.accepted = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    @property
    def host(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _run(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(2)
        self.sock.close()


@pytest.mark.parametrize("host, local", [
    ("", True), ("127.0.0.1", True), ("http://localhost:11434", True), ("[::1]:11434", True), ("0.0.0.0", True),
    ("http://gpu-box:11434", False), ("10.0.0.7", False), ("https://ollama.example.org", False),
])
def test_loopback_addresses_are_told_from_others(host, local, monkeypatch):
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    assert is_loopback(host) is local


def test_embedded_sends_nothing_anywhere(monkeypatch):
    listener = _Listener()
    try:
        monkeypatch.setenv("OLLAMA_HOST", listener.host)
        dest = prompt_destination("embedded", host=listener.host)
        assert dest.host is None and dest.local and "nothing leaves" in dest.describe()
        llm = make_llm("embedded", host=listener.host, cache=False)
        assert llm.name == "embedded"
        assert listener.accepted == 0
        forced = prompt_destination("ollama", host="http://gpu-box:11434")  # forcing never probes
        assert forced.host == "http://gpu-box:11434" and not forced.local and 'backend "embedded"' in forced.describe()
        assert listener.accepted == 0
        prompt_destination("auto", host=listener.host, probe_timeout=0.5)  # auto looks once, at the configured host only
        assert listener.accepted >= 1
    finally:
        listener.close()
    with pytest.raises(LLMError, match="unknown LLM backend"):
        prompt_destination("cloud")


def test_doctor_shows_where_prompts_go(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO.parent)}
    env.pop("OLLAMA_HOST", None)
    settings = tmp_path / "s.json"
    settings.write_text(json.dumps({"backend": "ollama", "ollamaHost": "http://gpu-box:11434"}))
    out = subprocess.run([sys.executable, "-m", "peerlint", "doctor", "--json", "--settings", str(settings),
                          "--index", str(tmp_path / "none")], capture_output=True, text=True, env=env, timeout=120)
    prompts = json.loads(out.stdout)["prompts"]
    assert prompts["host"] == "http://gpu-box:11434" and prompts["local"] is False and prompts["configured"] == "ollama"
    settings.write_text(json.dumps({"backend": "embedded"}))
    text = subprocess.run([sys.executable, "-m", "peerlint", "doctor", "--settings", str(settings), "--index",
                           str(tmp_path / "none")], capture_output=True, text=True, env=env, timeout=120).stdout
    assert "prompts go to: the embedded model in this process: nothing leaves this machine" in text
