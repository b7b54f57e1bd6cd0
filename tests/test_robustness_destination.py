"""What leaves the machine (issue 18, item 2): prompts go only to the configured backend,
`peerlint doctor` says where and whether that is this machine, and `backend: "embedded"` keeps
everything here (not even a probe reaches an Ollama address)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from peerlint.llm.base import LLMError
from peerlint.llm.select import is_loopback, make_llm, prompt_destination
from peerlint.benchmarks.robustness.hosts import HangingHost

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("host, local", [
    ("", True), ("127.0.0.1", True), ("http://localhost:11434", True), ("[::1]:11434", True), ("0.0.0.0", True),
    ("http://gpu-box:11434", False), ("10.0.0.7", False), ("https://ollama.example.org", False),
])
def test_loopback_addresses_are_told_from_others(host, local, monkeypatch):
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    assert is_loopback(host) is local


def test_embedded_sends_nothing_anywhere(monkeypatch):
    listener = HangingHost()  # counts the connections made to it (in `conns`) and answers none
    try:
        monkeypatch.setenv("OLLAMA_HOST", listener.url)
        dest = prompt_destination("embedded", host=listener.url)
        assert dest.host is None and dest.local and "nothing leaves" in dest.describe()
        llm = make_llm("embedded", host=listener.url, cache=False)
        assert llm.name == "embedded"
        assert len(listener.conns) == 0
        forced = prompt_destination("ollama", host="http://gpu-box:11434")  # forcing never probes
        assert forced.host == "http://gpu-box:11434" and not forced.local and 'backend "embedded"' in forced.describe()
        assert len(listener.conns) == 0
        prompt_destination("auto", host=listener.url, probe_timeout=0.5)  # auto looks once, at the configured host only
        assert len(listener.conns) >= 1
    finally:
        listener.close()
    with pytest.raises(LLMError, match="unknown LLM backend"):
        prompt_destination("cloud")


def test_doctor_shows_where_prompts_go(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
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
