"""The persistent LLM answer cache: hits skip the backend, keys follow every parameter, bad files heal."""

from __future__ import annotations

import logging
import math
import sqlite3
import threading

from llm_fixtures import CountingLLM, needs_model
from llm_fixtures import embedded  # noqa: F401  (pytest fixtures)

from peerlint.llm.base import GenerateParams
from peerlint.llm.cache import CACHE_FILE, AnswerCache, CachedLLM
from peerlint.locations import cache_root


def test_hit_skips_the_backend(tmp_path):
    inner = CountingLLM()
    llm = CachedLLM(inner, cache_dir=tmp_path)
    first = llm.generate("hello", GenerateParams(max_tokens=8))
    again = llm.generate("hello", GenerateParams(max_tokens=8))
    assert again == first and inner.calls == 1
    s1 = llm.score("rate", ["1", "2", "3"])
    s2 = llm.score("rate", ["1", "2", "3"])
    assert s1 == s2 and inner.calls == 2
    assert s2.logprobs[0] == -math.inf  # -inf survives the JSON round trip
    assert (llm.name, llm.model) == ("fake", "fake-1")


def test_answers_persist_across_processes(tmp_path):
    CachedLLM(CountingLLM(), cache_dir=tmp_path).generate("persist me")
    inner = CountingLLM()
    assert CachedLLM(inner, cache_dir=tmp_path).generate("persist me").endswith("|1")
    assert inner.calls == 0


def test_keys_differ_by_parameters_and_model(tmp_path):
    inner = CountingLLM()
    llm = CachedLLM(inner, cache_dir=tmp_path)
    variants = [
        GenerateParams(),
        GenerateParams(temperature=0.7),
        GenerateParams(seed=7),
        GenerateParams(system="be terse"),
        GenerateParams(max_tokens=9),
        GenerateParams(json_schema={"type": "object"}),
    ]
    for params in variants:
        llm.generate("same prompt", params)
    assert inner.calls == len(variants)
    other = CountingLLM(model="fake-2")
    CachedLLM(other, cache_dir=tmp_path).generate("same prompt")
    assert other.calls == 1
    llm.score("p", ["1", "2"])
    llm.score("p", ["1", "2"], system="judge")
    llm.score("p", ["1", "2", "3"])
    assert inner.calls == len(variants) + 3


def test_corrupt_file_is_moved_aside(tmp_path, caplog):
    path = tmp_path / CACHE_FILE
    path.write_bytes(b"this is not an sqlite database" * 100)
    with caplog.at_level(logging.WARNING):
        cache = AnswerCache(path)
    assert "unreadable" in caplog.text
    assert list(tmp_path.glob(f"{CACHE_FILE}.corrupt-*"))
    cache.put("k", {"v": 1})
    assert cache.get("k") == {"v": 1}


def test_corruption_after_opening_degrades_to_a_miss(tmp_path, caplog):
    path = tmp_path / CACHE_FILE
    cache = AnswerCache(path)
    cache.put("k", "v")
    cache.close()
    for extra in tmp_path.glob(f"{CACHE_FILE}-*"):
        extra.unlink()
    path.write_bytes(b"\0garbage" * 4096)
    results = []
    with caplog.at_level(logging.WARNING):
        worker = threading.Thread(target=lambda: results.append(cache.get("k")))  # a fresh connection
        worker.start()
        worker.join()
    assert results == [None]
    assert "unreadable" in caplog.text
    cache.put("k2", "v2")
    assert cache.get("k2") == "v2"


def test_many_threads(tmp_path):
    cache = AnswerCache(tmp_path / CACHE_FILE)
    errors = []

    def work(n: int) -> None:
        try:
            for i in range(40):
                cache.put(f"{n}-{i}", [n, i])
                assert cache.get(f"{n}-{i}") == [n, i]
        except Exception as exc:  # pragma: no cover - the assertion below reports it
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(cache) == 8 * 40
    mode = sqlite3.connect(tmp_path / CACHE_FILE).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_cache_dir_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("PEERLINT_CACHE_DIR", str(tmp_path / "elsewhere"))
    assert cache_root() == tmp_path / "elsewhere"
    CachedLLM(CountingLLM()).generate("x")
    assert (tmp_path / "elsewhere" / CACHE_FILE).exists()


def test_every_layer_caches_under_xdg_cache_home(tmp_path, monkeypatch):
    """The exported query models, the judges and the LLM answers all go to one folder: with
    $XDG_CACHE_HOME set, the LLM's cache went there and the embedder's exports to ~/.cache."""
    from peerlint.llm.models import models_dir

    monkeypatch.delenv("PEERLINT_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "peerlint"
    assert models_dir(None) == tmp_path / "xdg" / "peerlint" / "models"
    CachedLLM(CountingLLM()).generate("x")
    assert (tmp_path / "xdg" / "peerlint" / CACHE_FILE).exists()


@needs_model
def test_real_backend_round_trip(tmp_path, embedded):
    calls = []

    class Spy:
        name, model = embedded.name, embedded.model

        def generate(self, prompt, params=GenerateParams()):
            calls.append("generate")
            return embedded.generate(prompt, params)

        def score(self, prompt, choices, system=None):
            calls.append("score")
            return embedded.score(prompt, choices, system)

    llm = CachedLLM(Spy(), cache_dir=tmp_path)
    params = GenerateParams(max_tokens=8)
    assert llm.generate("Say hi.", params) == llm.generate("Say hi.", params)
    assert llm.score("Pick 1 or 2.", ["1", "2"]) == llm.score("Pick 1 or 2.", ["1", "2"])
    assert calls == ["generate", "score"]
