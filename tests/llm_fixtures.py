"""Fixtures shared by test_llm_embedded / test_llm_ollama / test_llm_cache (import what you use)."""

from __future__ import annotations

import importlib.util
import socket
from typing import Sequence

import pytest

from peerlint.llm.base import ChoiceScores, GenerateParams, LLMUnavailable, normalise_logprobs

SCHEMA = {
    "type": "object",
    "properties": {
        "score": {"type": "integer", "minimum": 1, "maximum": 5},
        "reason": {"type": "string", "maxLength": 40},
    },
    "required": ["score", "reason"],
}
RATING_PROMPT = (
    "Rate the clarity of this sentence from 1 (unclear) to 5 (very clear). Answer with one digit.\n\n"
    "Sentence: We show that the proposed method reduces the error rate by half on three benchmarks."
)
SMALL = GenerateParams(max_tokens=24)


def _model_missing() -> str | None:
    if importlib.util.find_spec("llama_cpp") is None:
        return "llama-cpp-python is not installed"
    from peerlint.llm.embedded import find_gguf

    try:
        find_gguf()
    except LLMUnavailable as exc:
        return str(exc)
    return None


MISSING = _model_missing()
needs_model = pytest.mark.skipif(MISSING is not None, reason=f"embedded model unavailable: {MISSING}")


def closed_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def embedded():
    from peerlint.llm.embedded import EmbeddedLLM

    return EmbeddedLLM()


@pytest.fixture
def loopback():
    """A fresh loopback Ollama per test (the model itself is loaded once per process)."""
    from peerlint.benchmarks.harness.loopback import LoopbackOllama

    with LoopbackOllama() as server:
        yield server


class CountingLLM:
    """A pure-Python backend that counts its calls: answers depend on every parameter."""

    name = "fake"

    def __init__(self, model: str = "fake-1"):
        self.model = model
        self.calls = 0

    def generate(self, prompt: str, params: GenerateParams = GenerateParams()) -> str:
        self.calls += 1
        return f"{self.model}|{prompt}|{params.temperature}|{params.seed}|{params.system}|{self.calls}"

    def score(self, prompt: str, choices: Sequence[str], system: str | None = None) -> ChoiceScores:
        self.calls += 1
        return normalise_logprobs(choices, [float("-inf")] + [-float(i) for i in range(1, len(choices))])
