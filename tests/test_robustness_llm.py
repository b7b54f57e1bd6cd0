"""The LLM host fails (issue 18, item 3d): closed, hanging, garbage, dying mid-stream.  The fast tier
keeps working, the LLM tier reports once, no request waits past its timeout, and nothing answered
while the LLM was down is cached past the outage.  The server cases are
benchmarks/robustness/llm_faults.py (the bench runs all four modes)."""

from __future__ import annotations

import time

import pytest

from peerlint.analyzers.engine import Engine
from peerlint.llm.base import GenerateParams, LLMUnavailable
from peerlint.llm.ollama_backend import OllamaLLM
from peerlint.types import Judgment
from peerlint.benchmarks.robustness.hosts import FakeOllama, HangingHost, closed_url
from peerlint.benchmarks.robustness.llm_faults import llm_host_fault
from peerlint.settings import Settings

from test_latex import parse_document

SMALL = GenerateParams(max_tokens=8)


@pytest.mark.parametrize("mode", ["hanging"])  # the bench runs all four modes
def test_the_server_survives_a_failing_llm_host(tmp_path, index_path, mode):
    result = llm_host_fault(tmp_path, index_path, mode)
    assert result.ok, result.detail
    assert result.figures["llm_messages"] == 1


def test_a_hanging_host_costs_one_timeout_then_fails_fast():
    host = HangingHost()
    try:
        llm = OllamaLLM(host=host.url, timeout=1.0, cooldown=30)
        started = time.monotonic()
        messages = set()
        for _ in range(5):
            with pytest.raises(LLMUnavailable) as caught:
                llm.generate("hi", SMALL)
            messages.add(str(caught.value))
        assert time.monotonic() - started < 3.0  # one timeout of 1 s, not five
        assert len(messages) == 1 and llm.failure in messages  # one stable message to report once
    finally:
        host.close()


@pytest.mark.parametrize("mode", ["closed", "garbage", "midstream"])
def test_other_failures_trip_the_same_cool_off(mode):
    host = FakeOllama(mode) if mode != "closed" else None
    try:
        llm = OllamaLLM(host=host.url if host else closed_url(), timeout=2.0, backoff=0.05)
        with pytest.raises(LLMUnavailable):
            llm.generate("hi", SMALL)
        seen = len(host.requests) if host else 0
        with pytest.raises(LLMUnavailable):
            llm.generate("hi", SMALL)
        assert (len(host.requests) if host else 0) == seen  # the second call did not reach the host
        assert llm.failure
    finally:
        if host:
            host.close()


class _FlakyLLM:
    name, model = "fake", "fake"

    def __init__(self):
        self.failure = "the host is down"


class _LLMTierAnalyzer:
    name, tier, codes = "fake-llm", "llm", ("weak-chunk",)

    def __init__(self):
        self.calls = 0

    def analyze(self, chunks, ctx):
        self.calls += 1
        return [Judgment(c, "weak-chunk", "rated without the LLM", 0.1) for c in chunks]


def test_findings_made_while_the_llm_is_down_are_not_cached(tmp_path):
    analyzer = _LLMTierAnalyzer()
    llm = _FlakyLLM()
    engine = Engine(Settings(analyzers=("fake-llm",)), llm=llm, cache_path=tmp_path / "j.sqlite",
                    analyzers={"fake-llm": lambda: analyzer})
    chunks = parse_document("A paragraph of prose for the test.\n", "file:///t.tex")
    down = engine.run(chunks, "llm")
    assert down.llm_unavailable == "the host is down" and analyzer.calls == 1
    engine.run(chunks, "llm")
    assert analyzer.calls == 2  # asked again: nothing was cached during the outage
    llm.failure = None
    up = engine.run(chunks, "llm")
    assert up.llm_unavailable is None and analyzer.calls == 3
    engine.run(chunks, "llm")
    assert analyzer.calls == 3  # answers given with the LLM up are cached as before
