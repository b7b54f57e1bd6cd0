"""Shards of a distributed build: which papers each holds, and its finished chunks on disk.

Why shard files: a build of millions of papers runs for hours on many workers, so it must survive
a killed worker or driver. Papers are cut into fixed shards in corpus order; each finished shard
(its chunk spans and vectors) is written once, atomically (temporary file + rename), under a work
folder keyed by the model, the chunk size and every paper's id and text. A rerun of the same build
finds the same folder and skips the shards already there; a shard written twice (a retried task)
replaces itself with the same content; a shard of another corpus cannot be read into this one,
because each file carries the digest of its papers and is checked against it.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

SHARD_PAPERS = 256  # papers per shard: ~1 minute of one worker's embedding, the unit of resume


@dataclass(frozen=True)
class Shard:
    """Papers [lo, hi) of the corpus, and the digest of their ids and texts."""

    number: int
    lo: int
    hi: int
    digest: str


@dataclass(frozen=True)
class ShardChunks:
    """A finished shard: its chunks as (paper within the shard, start, end) and their vectors, in order."""

    shard: Shard
    paper: np.ndarray  # int32, relative to shard.lo
    start: np.ndarray  # int64 character offsets into the paper's text
    end: np.ndarray
    vectors: np.ndarray  # float32, normalised, one row per chunk


def plan_shards(ids: Sequence[str], content_hashes: Sequence[str], size: int = SHARD_PAPERS) -> list[Shard]:
    shards = []
    for number, lo in enumerate(range(0, len(ids), size)):
        hi = min(len(ids), lo + size)
        h = hashlib.sha1()
        for pid, chash in zip(ids[lo:hi], content_hashes[lo:hi]):
            h.update(f"{pid}\0{chash}\n".encode())
        shards.append(Shard(number, lo, hi, h.hexdigest()[:16]))
    return shards


def work_dir(root: Path, model_id: str, max_tokens: int, shards: Sequence[Shard]) -> Path:
    """The folder of one build's shards: the same corpus, model and chunk size find the same folder."""
    h = hashlib.sha1(f"{model_id}\0{max_tokens}".encode())
    for s in shards:
        h.update(s.digest.encode())
    return Path(root) / "distributed" / h.hexdigest()[:16]


def shard_path(work: Path, shard: Shard) -> Path:
    return work / f"shard-{shard.number:06d}.npz"


def write_shard(work: Path, chunks: ShardChunks) -> Path:
    """Write a finished shard atomically; writing it again replaces it whole."""
    work.mkdir(parents=True, exist_ok=True)
    path = shard_path(work, chunks.shard)
    tmp = path.with_name(f"{path.stem}.tmp{os.getpid()}.npz")
    np.savez(tmp, digest=np.array(chunks.shard.digest), lo=chunks.shard.lo, hi=chunks.shard.hi,
             paper=chunks.paper.astype(np.int32), start=chunks.start.astype(np.int64),
             end=chunks.end.astype(np.int64), vectors=chunks.vectors.astype(np.float32))
    with open(tmp, "rb") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    return path


def read_shard(work: Path, shard: Shard) -> ShardChunks | None:
    """The shard's chunks, or None when it is not finished, damaged or of other papers (then it is redone)."""
    path = shard_path(work, shard)
    try:
        with np.load(path) as f:
            if str(f["digest"]) != shard.digest or int(f["lo"]) != shard.lo or int(f["hi"]) != shard.hi:
                return None
            chunks = ShardChunks(shard, f["paper"], f["start"], f["end"], f["vectors"])
    except (OSError, ValueError, KeyError, EOFError):
        return None
    n = len(chunks.paper)
    if not (len(chunks.start) == len(chunks.end) == len(chunks.vectors) == n) or \
            (n and (chunks.paper.min() < 0 or chunks.paper.max() >= shard.hi - shard.lo or np.any(np.diff(chunks.paper) < 0))):
        return None
    return chunks


def finished(work: Path, shards: Sequence[Shard]) -> set[int]:
    """Numbers of the shards whose files are complete and belong to these papers."""
    return {s.number for s in shards if read_shard(work, s) is not None}
