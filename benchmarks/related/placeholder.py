"""Placeholder vectors for `peerlint bench related --lexical-only`: an index of the whole corpus
without embedding it (97k ACM-CR abstracts take over an hour on a 2-core CPU; BM25 needs none).

Each paper is one chunk with a random unit vector (seeded by its text hash, so rebuilds agree and
no two papers look like near-duplicates to SEC's clustering). The model id keeps these vectors
apart from real ones in the embedding cache; only lexical rows may be read from such an index.
"""

from __future__ import annotations

import hashlib
from typing import Callable, Sequence

import numpy as np

from ...index.embedding.embedder import DIM, Span


class PlaceholderEmbedder:
    """The parts of `Embedder` that `build_index` and a bench's queries use."""

    model_id = "placeholder@bench"

    def split_many(self, texts: Sequence[str], max_tokens: int = 200) -> list[list[Span]]:
        return [[Span(0, len(t))] for t in texts]

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def encode(self, texts: Sequence[str], progress: Callable[[int], None] | None = None) -> np.ndarray:
        out = np.empty((len(texts), DIM), dtype=np.float32)
        for i, text in enumerate(texts):
            seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
            v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
            out[i] = v / np.linalg.norm(v)
        if progress is not None:
            progress(len(texts))
        return out
