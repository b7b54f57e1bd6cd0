"""A query-side adapter for the embedder: a residual low-rank map that only moves query vectors.

Queries (the editor's paragraphs, `peerlint search` text) and papers are embedded by the same
general-purpose model; a small map trained on scientific pairs (title -> abstract, keywords ->
abstract, citing paragraph -> cited paper) may bring queries closer to the papers they should find.
Only queries move: q' = normalise(q + (q D) U), so the index's chunk vectors, the shipped vectors
and the cache stay as they are, and with U = 0 it is exactly the identity.

The weights are a small .npz keyed by the base model id with a format version; a file for another
model or version is ignored with one log line (the caller then uses the plain vectors). One would
ship under `data/` only where held-out splits show a gain; none does (docs/decisions.md: measured, not shipped). `train`
fits D and U with an in-batch contrastive loss (InfoNCE) in numpy, on pairs the caller chooses;
`peerlint bench embedders --train-adapter` trains on shipped data and measures it on held-out data.
"""

from __future__ import annotations

import logging
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

log = logging.getLogger(__name__)

FORMAT = 1
DATA = Path(__file__).resolve().parent / "data"


def adapter_path(model_id: str, root: Path = DATA) -> Path:
    """Where the adapter of a base model lives: one file per model id (its route included)."""
    return root / f"query-adapter-{re.sub(r'[^A-Za-z0-9.-]+', '_', model_id)}.npz"


@dataclass(frozen=True)
class QueryAdapter:
    """q -> normalise(q + (q @ down) @ up) for query vectors of `model`."""

    model: str
    down: np.ndarray  # (dim, rank)
    up: np.ndarray  # (rank, dim)
    note: str = ""  # what it was trained on, one line
    format: int = FORMAT

    @property
    def dim(self) -> int:
        return int(self.down.shape[0])

    @classmethod
    def identity(cls, model: str, dim: int, rank: int = 32, seed: int = 0) -> "QueryAdapter":
        """The starting point of training: a random `down`, a zero `up` (LoRA's initialisation)."""
        down = np.random.default_rng(seed).normal(0, 1 / np.sqrt(dim), (dim, rank)).astype(np.float32)
        return cls(model, down, np.zeros((rank, dim), dtype=np.float32))

    def apply(self, vectors: np.ndarray) -> np.ndarray:
        """Adapted unit vectors, one row per query row (a single vector gives a single vector)."""
        q = np.asarray(vectors, dtype=np.float32)
        single = q.ndim == 1
        q = q.reshape(-1, self.dim)
        z = q + (q @ self.down) @ self.up
        z /= np.maximum(np.linalg.norm(z, axis=1, keepdims=True), 1e-12)
        return z[0] if single else z

    def save(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npz")
        np.savez_compressed(tmp, format=np.int32(self.format), model=np.str_(self.model), note=np.str_(self.note),
                            down=self.down.astype(np.float16), up=self.up.astype(np.float16))
        tmp.replace(path)
        return path

    @classmethod
    def load(cls, model: str, path: Path | None = None) -> "QueryAdapter | None":
        """The adapter for query vectors of `model`, or None (with a log line when a file is there but
        is for another model or format, or unreadable): the caller then leaves its vectors as they are."""
        path = path or adapter_path(model)
        try:
            with np.load(path, allow_pickle=False) as z:
                fmt, trained_for = int(z["format"]), str(z["model"])
                if fmt != FORMAT or trained_for != model:
                    log.warning("query adapter %s is for %s (format %s), not %s (format %s): not applied",
                                path, trained_for, fmt, model, FORMAT)
                    return None
                down, up = z["down"].astype(np.float32), z["up"].astype(np.float32)
                note = str(z["note"])
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
            log.warning("query adapter %s cannot be read (%s): not applied", path, exc)
            return None
        if down.ndim != 2 or up.shape != (down.shape[1], down.shape[0]):
            log.warning("query adapter %s has shapes %s and %s: not applied", path, down.shape, up.shape)
            return None
        return cls(model, down, up, note, fmt)


@dataclass(frozen=True)
class TrainConfig:
    rank: int = 32
    epochs: int = 5
    batch: int = 256
    lr: float = 2e-3
    temperature: float = 0.05
    decay: float = 1e-3  # L2 pull of the update towards zero: the identity is the prior
    seed: int = 0


def info_nce(adapter: QueryAdapter, queries: np.ndarray, docs: np.ndarray, keys: Sequence[str] | None = None,
             temperature: float = TrainConfig.temperature) -> float:
    """Mean in-batch contrastive loss of the adapted queries against their docs (row i's answer is doc i;
    rows sharing a doc key are not each other's negatives)."""
    loss, _, _ = _loss_and_grads(adapter.down, adapter.up, queries, docs, _same(keys, len(queries)), temperature)
    return loss


def _same(keys: Sequence[str] | None, n: int) -> np.ndarray:
    if keys is None:
        return np.eye(n, dtype=bool)
    k = np.asarray(keys)
    return k[:, None] == k[None, :]


def _loss_and_grads(down, up, q, p, same, tau):
    h = q @ down
    z = q + h @ up
    norm = np.maximum(np.linalg.norm(z, axis=1, keepdims=True), 1e-12)
    qa = z / norm
    logits = (qa @ p.T) / tau
    logits = np.where(same & ~np.eye(len(q), dtype=bool), -np.inf, logits)
    logits -= logits.max(axis=1, keepdims=True)
    probs = np.exp(logits)
    probs /= probs.sum(axis=1, keepdims=True)
    n = len(q)
    loss = float(-np.mean(np.log(np.maximum(probs[np.arange(n), np.arange(n)], 1e-30))))
    d_logits = probs
    d_logits[np.arange(n), np.arange(n)] -= 1.0
    d_logits /= n
    d_qa = d_logits @ p / tau
    d_z = (d_qa - qa * np.sum(d_qa * qa, axis=1, keepdims=True)) / norm
    return loss, q.T @ (d_z @ up.T), h.T @ d_z


def train(queries: np.ndarray, docs: np.ndarray, keys: Sequence[str], model: str, config: TrainConfig = TrainConfig(),
          weights: np.ndarray | None = None, note: str = "") -> QueryAdapter:
    """Fit a `QueryAdapter` on (query vector, doc vector) pairs with Adam; `keys` name each pair's doc
    (pairs of one doc are never each other's negatives); `weights` sample pairs unevenly (a small
    source, such as citation pairs, is not drowned by a large one)."""
    q, p = np.asarray(queries, dtype=np.float32), np.asarray(docs, dtype=np.float32)
    if q.shape != p.shape or q.ndim != 2 or len(q) < 2:
        raise ValueError(f"train needs matching (n, dim) query and doc arrays, n >= 2; got {q.shape} and {p.shape}")
    keys = np.asarray(list(keys))
    start = QueryAdapter.identity(model, q.shape[1], config.rank, config.seed)
    params = [start.down.copy(), start.up.copy()]
    moments = [(np.zeros_like(x), np.zeros_like(x)) for x in params]
    rng = np.random.default_rng(config.seed)
    prob = None if weights is None else np.asarray(weights, dtype=np.float64) / np.sum(weights)
    for step in range(1, config.epochs * max(1, len(q) // config.batch) + 1):
        idx = rng.choice(len(q), size=min(config.batch, len(q)), replace=False, p=prob)
        _, g_down, g_up = _loss_and_grads(params[0], params[1], q[idx], p[idx], _same(keys[idx], len(idx)),
                                          config.temperature)
        for x, g, (m, v) in zip(params, (g_down, g_up), moments):
            g = g + config.decay * x
            m *= 0.9
            m += 0.1 * g
            v *= 0.999
            v += 0.001 * g * g
            x -= config.lr * (m / (1 - 0.9 ** step)) / (np.sqrt(v / (1 - 0.999 ** step)) + 1e-8)
    return QueryAdapter(model, params[0].astype(np.float32), params[1].astype(np.float32), note)
