"""The faster embedding routes stand in for the torch route: same texts, (nearly) the same vectors."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from peerlint.index.embedding.embedder import ROUTES, Embedder, EmbeddingError, query_route
from conftest import shipped_papers

ONNX = importlib.util.find_spec("onnxruntime") is not None and importlib.util.find_spec("onnx") is not None


@pytest.fixture(scope="module")
def texts() -> list[str]:
    """20 real abstracts of the shipped corpus, of mixed lengths (some past the model's 256 tokens)."""
    papers = shipped_papers()
    return [p.text for p in papers[::800][:20]]


@pytest.fixture(scope="module")
def reference(texts) -> np.ndarray:
    return Embedder("torch").encode(texts)


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(axis=1)


def test_unknown_route_names_the_choices():
    with pytest.raises(EmbeddingError, match="choose one of torch, bf16, onnx, onnx-int8, static"):
        Embedder("fp8")


def test_bf16_agrees_with_torch_and_is_its_own_vector_space(texts, reference):
    bf16 = Embedder("bf16")
    vectors = bf16.encode(texts)
    assert vectors.dtype == np.float32 and vectors.shape == reference.shape
    assert _cosines(vectors, reference).min() >= 0.999
    assert bf16.model_id == "all-MiniLM-L6-v2@bf16"  # never mixed with torch vectors in a cache


@pytest.mark.skipif(not ONNX, reason="needs onnxruntime and onnx (dependencies of peerlint)")
def test_onnx_routes_agree_with_torch_and_exact_one_shares_its_id(texts, reference, tmp_path, monkeypatch):
    monkeypatch.setenv("PEERLINT_CACHE_DIR", str(tmp_path))
    assert query_route("all-MiniLM-L6-v2@torch") == "torch"  # no export yet: the index's own route
    exact = Embedder("onnx")
    assert _cosines(exact.encode(texts), reference).min() >= 0.9999
    assert exact.model_id == Embedder("torch").model_id  # the shipped vectors serve it
    assert query_route("all-MiniLM-L6-v2@torch") == "onnx"
    assert query_route("all-MiniLM-L6-v2@bf16") == "bf16"
    int8 = Embedder("onnx-int8")
    assert _cosines(int8.encode(texts), reference).min() >= 0.97
    assert int8.model_id == "all-MiniLM-L6-v2@onnx-int8"
    assert query_route("all-MiniLM-L6-v2@torch", "int8") == "onnx-int8"  # the queryEmbedding setting
    assert query_route("all-MiniLM-L6-v2@bf16", "int8") == "bf16"  # another index keeps its own route
    # int8 quantises activations per run: a paragraph's vector must not move with what it is embedded beside
    alone = np.stack([int8.encode([t])[0] for t in texts[:4]])
    assert np.array_equal(int8.encode(texts)[:4], alone)
    assert np.array_equal(int8.encode(texts[:4][::-1])[::-1], alone)


def test_the_query_embedding_setting_picks_the_route_and_reopens_the_index(index_path, tmp_path):
    from peerlint.settings import Settings
    from peerlint.server.service import Service

    assert Settings().query_embedding == "int8"  # the default: no loss measured, half the CPU
    service = Service(Settings(index_path=str(index_path)), cache_dir=tmp_path)
    index = service.retriever().index
    assert index.query_embedding == "int8"
    assert index.embedder.inner.route == query_route(index.manifest.model_id, "int8")  # onnx-int8 once exported
    warnings: list[str] = []
    assert service.update_settings({"queryEmbedding": "fp16"}, warnings.append) is False
    assert warnings and "exact" in warnings[0] and "int8" in warnings[0]
    assert service.update_settings({"queryEmbedding": "exact"}, warnings.append) is True
    reopened = service.retriever().index
    assert reopened is not index and reopened.query_embedding == "exact"
    assert reopened.embedder.inner.route in ("onnx", "torch")


def test_every_route_is_offered_by_the_index_command():
    from peerlint.server.cli import build_parser

    parser = build_parser()
    for route in ROUTES:
        assert parser.parse_args(["index", "build", "--route", route]).route == route


def test_counting_and_splitting_need_no_transformers(texts):
    """`count_tokens` and `split_many` read the model's tokenizer.json with `tokenizers` and give the
    same counts and spans as the transformers tokenizer, so chunking loads neither transformers nor torch."""
    import subprocess
    import sys

    from peerlint.index.embedding.embedder import _spans

    embedder = Embedder()
    samples = list(texts) + ["", "Ünïcödé façade — naïve café $x^2$ \\cite{a}", "word " * 400]
    hf = embedder.tokenizer(samples, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
    assert [embedder.count_tokens(t) for t in samples] == [len(ids) for ids in hf["input_ids"]]
    assert embedder.split_many(samples, 60) == [_spans(t, [tuple(o) for o in offs], 60)
                                                for t, offs in zip(samples, hf["offset_mapping"])]
    probe = ("import sys; from peerlint.index.embedding.embedder import Embedder; e = Embedder(); "
             "e.count_tokens('a paragraph'); e.split_many(['a paragraph'] * 3, 2); "
             "print(any(m in sys.modules for m in ('torch', 'transformers')))")
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True).stdout.strip() == "False"
