"""Vectors of the shipped corpus, shipped with it, so the default index embeds nothing on a fresh machine.

Pyserini users expect prebuilt indexes; here the expensive part of a build is embedding ~25k
chunks (~14 minutes on two cores), so the package ships those chunk vectors and each paper's
chunk spans, keyed by the embedding model id and by text hash.  A build looks a paper's spans and a
chunk's vector up in this file first (`ShippedFirst`), then in its embedding cache: chunks whose text
is unchanged reuse the shipped vector, edited or added papers are embedded (and cached) as usual,
and another model (route) embeds everything, with one notice. The shipped rows are not copied into
the cache: the file ships with the package, and copying 274k rows cost a default build ~10 s.
The vectors are int8 with one scale each (format 2; format 1, float16, is still read), rounded to
`SHIPPED_LEVELS` levels and deflate-compressed; `peerlint bench index` measures the recall this costs
against float vectors on ACM-CR.

Regenerate after changing the corpus, the model or the chunking (from a built default index):
    python -m peerlint.index.embedding.prebuilt --index ~/.local/share/peerlint/index
"""

from __future__ import annotations

import argparse
import functools
import logging
import os
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, Sequence

import numpy as np

from ...hashing import text_hash
from ..ingest.load import SUPPLEMENTS as CORPUS_SUPPLEMENTS, default_corpus_path, load_papers
from .cache import EmbeddingCache
from .embedder import Embedder

log = logging.getLogger(__name__)


def vectors_for(corpus: Path) -> Path:
    """The shipped vectors file of a shipped corpus file: `NAME-vectors.npz` beside `NAME.jsonl.xz`."""
    return corpus.with_name(corpus.name.removesuffix(".jsonl.xz") + "-vectors.npz")


SHIPPED = vectors_for(default_corpus_path())
SUPPLEMENTS = tuple(vectors_for(default_corpus_path().with_name(name)) for name in CORPUS_SUPPLEMENTS)  # load.SUPPLEMENTS
FORMAT = 1  # float16 vectors
FORMAT_INT8 = 2  # int8 vectors and one float32 scale a vector (v ~ q * scale): half the bytes
SHIPPED_LEVELS = 63  # |q| <= 63 in the shipped int8 rows: 7 bits' worth, so the compressed file fits the repo budget
SUPPLEMENT_LEVELS = 15  # |q| <= 15 in the supplements' rows (journals-vectors.npz): 4 bits' worth
OFF_SWITCH = "PEERLINT_SHIPPED_VECTORS"  # "" turns seeding off (to measure embedding), paths (os.pathsep) replace the files


def shipped_paths() -> list[Path]:
    """The shipped vector files this process may seed from (the main file, then the supplements'), or the
    files the environment names instead; none where it turned them off."""
    value = os.environ.get(OFF_SWITCH)
    if value is None:
        return [SHIPPED, *SUPPLEMENTS]
    return [Path(v) for v in value.split(os.pathsep) if v]


class VectorCache(Protocol):
    """What a build reads spans and vectors from and fills: `EmbeddingCache`, or `ShippedFirst` in front of it."""

    def get_spans(self, hashes: Sequence[str], max_tokens: int) -> dict[str, list[tuple[int, int]]]: ...
    def put_spans(self, items: dict[str, list[tuple[int, int]]], max_tokens: int) -> None: ...
    def get_vectors(self, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]: ...
    def put_vectors(self, model: str, items: dict[str, np.ndarray]) -> None: ...


@dataclass(frozen=True)
class ShippedVectors:
    model: str
    max_tokens: int
    content_hashes: list[str]  # per paper text
    spans: list[list[tuple[int, int]]]  # per paper text: its chunks' character spans
    chunk_hashes: list[str]
    vectors: np.ndarray  # one row per chunk hash: float16 (format 1) or int8 (format 2)
    scales: np.ndarray | None = None  # format 2: the float32 scale of each int8 row

    def row(self, i: int) -> np.ndarray:
        """Chunk `i`'s vector as float32, unit length as embedded (int8 rows are normalised)."""
        return self.rows(np.array([i]))[0]

    def rows(self, keys: np.ndarray) -> np.ndarray:
        """The vectors of chunks `keys` as float32 rows, unit length as embedded (int8 rows are normalised:
        rounding shrinks a row a little; the scale cancels out)."""
        v = self.vectors[np.asarray(keys, dtype=np.int64)].astype(np.float32)
        if self.scales is None:
            return v
        return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), np.float32(1e-12))

    @functools.cached_property
    def paper_row(self) -> dict[str, int]:
        """content hash -> its index in `content_hashes` / `spans`."""
        return {h: i for i, h in enumerate(self.content_hashes)}

    @functools.cached_property
    def chunk_row(self) -> dict[str, int]:
        """chunk hash -> its row of `vectors`."""
        return {h: i for i, h in enumerate(self.chunk_hashes)}

    @classmethod
    def load(cls, path: Path = SHIPPED) -> "ShippedVectors | None":
        """The shipped file, or None (with a log line) when it is missing or unreadable. Read once per process
        and file version (~274k compressed rows: seconds), then shared read-only by every build."""
        try:
            stat = Path(path).stat()
        except OSError:
            return None
        return _load_once(str(path), stat.st_mtime_ns, stat.st_size)

    @classmethod
    def read(cls, path: Path) -> "ShippedVectors | None":
        """`load` without the per-process cache."""
        try:
            with np.load(path, allow_pickle=False) as z:
                if int(z["format"]) not in (FORMAT, FORMAT_INT8):
                    log.warning("%s has format %s, expected %s or %s: ignored", path, int(z["format"]), FORMAT,
                                FORMAT_INT8)
                    return None
                bounds = z["span_bounds"]
                flat = z["spans"].tolist()
                spans = [[tuple(s) for s in flat[bounds[i]:bounds[i + 1]]] for i in range(len(bounds) - 1)]
                scales = z["scales"] if int(z["format"]) == FORMAT_INT8 else None
                return cls(str(z["model"]), int(z["max_tokens"]), _hex(z["content_hashes"]), spans,
                           _hex(z["chunk_hashes"]), z["vectors"], scales)
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
            log.warning("shipped vectors %s cannot be read (%s): embedding instead", path, exc)
            return None


@functools.lru_cache(maxsize=2)
def _load_once(path: str, mtime_ns: int, size: int) -> ShippedVectors | None:
    return ShippedVectors.read(Path(path))


def _raw(hashes: Sequence[str]) -> np.ndarray:
    """Hex hashes as rows of 16 bytes (numpy's "S16" would drop trailing zero bytes)."""
    return np.frombuffer(b"".join(bytes.fromhex(h) for h in hashes), dtype=np.uint8).reshape(-1, 16)


def _hex(rows: np.ndarray) -> list[str]:
    return [bytes(r).hex() for r in rows]


class ShippedFirst:
    """A build's embedding cache with the shipped files in front of it: spans and vectors are looked up in
    the shipped files first (in order), the rest in the cache; what is new goes to the cache."""

    def __init__(self, cache: VectorCache, *shipped: ShippedVectors):
        self.cache, self.files = cache, shipped
        self.vectors_found = 0  # how many vectors came from the shipped files

    def get_spans(self, hashes: Sequence[str], max_tokens: int) -> dict[str, list[tuple[int, int]]]:
        found: dict[str, list[tuple[int, int]]] = {}
        for file in self.files:
            at = file.paper_row
            found |= {h: file.spans[at[h]] for h in hashes if h in at and h not in found}
        rest = [h for h in hashes if h not in found]
        return found | (self.cache.get_spans(rest, max_tokens) if rest else {})

    def put_spans(self, items: dict[str, list[tuple[int, int]]], max_tokens: int) -> None:
        self.cache.put_spans(items, max_tokens)

    def get_vectors(self, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        for file in self.files:
            at = file.chunk_row
            known = list(dict.fromkeys(h for h in hashes if h in at and h not in found))
            if known:
                found |= dict(zip(known, file.rows(np.array([at[h] for h in known], dtype=np.int64))))
        self.vectors_found += len(found)
        rest = [h for h in hashes if h not in found]
        return found | (self.cache.get_vectors(model, rest) if rest else {})

    def put_vectors(self, model: str, items: dict[str, np.ndarray]) -> None:
        self.cache.put_vectors(model, items)


def shipped_first(cache: VectorCache, model: str, max_tokens: int, path: Path | None = None) -> tuple[VectorCache, str]:
    """The lookup a build of `model` chunks at `max_tokens` should use, and one line for the user (or "").

    `path` (one file) defaults to `shipped_paths()`. Without a readable shipped file, or when the environment
    turned them off, or for another chunking, the cache alone (nothing to say); for another model, the cache
    alone and a notice that every chunk is embedded."""
    loaded = [ShippedVectors.load(p) for p in ([path] if path else shipped_paths())]
    files = [f for f in loaded if f is not None and f.max_tokens == max_tokens]
    if not files:
        return cache, ""
    if files[0].model != model:
        return cache, f"the shipped vectors are for {files[0].model}, not {model}: embedding every chunk"
    return ShippedFirst(cache, *[f for f in files if f.model == model]), ""


def export(cache: VectorCache, model: str, max_tokens: int, content_hashes: Sequence[str], chunk_hashes: Sequence[str],
           out: Path) -> int:
    """Write the shipped file from a built index's cache; returns the number of chunk vectors written."""
    spans = cache.get_spans(content_hashes, max_tokens)
    vectors = cache.get_vectors(model, chunk_hashes)
    missing = [h for h in chunk_hashes if h not in vectors]
    if missing or len(spans) < len(set(content_hashes)):
        raise ValueError(f"the cache lacks {len(missing)} vectors and {len(set(content_hashes)) - len(spans)} span "
                         "lists: build the default index first")
    papers = list(dict.fromkeys(content_hashes))
    chunks = list(dict.fromkeys(chunk_hashes))
    bounds = np.cumsum([0] + [len(spans[h]) for h in papers])
    flat = np.asarray([s for h in papers for s in spans[h]], dtype=np.int32).reshape(-1, 2)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp.npz")
    np.savez_compressed(tmp, format=np.int32(FORMAT), model=np.str_(model), max_tokens=np.int32(max_tokens),
                        content_hashes=_raw(papers),
                        span_bounds=bounds.astype(np.int32), spans=flat,
                        chunk_hashes=_raw(chunks),
                        vectors=np.stack([vectors[h] for h in chunks]).astype(np.float16))
    tmp.replace(out)
    return len(chunks)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m peerlint.index.embedding.prebuilt",
                                     description="Write the shipped corpus's chunk vectors from a built default index.")
    parser.add_argument("--index", type=Path, required=True, help="a built index of the shipped corpus")
    parser.add_argument("--out", type=Path, default=SHIPPED)
    parser.add_argument("--max-tokens", type=int, default=200)
    args = parser.parse_args(argv)
    papers = load_papers([default_corpus_path()], warn=lambda m: None)
    content = [text_hash(p.text) for p in papers]
    cache = EmbeddingCache(args.index / "embeddings.sqlite")
    model = Embedder().model_id
    try:  # the chunks the build embedded are in its cache; those it took from the current file, there
        lookup, _ = shipped_first(cache, model, args.max_tokens)
        spans = lookup.get_spans(content, args.max_tokens)
        chunks = [text_hash(p.text[a:b]) for p, h in zip(papers, content) for a, b in spans.get(h, [])]
        n = export(lookup, model, args.max_tokens, content, chunks, args.out)
    except ValueError as exc:
        print(f"peerlint: error: {exc}", file=sys.stderr)
        return 2
    finally:
        cache.close()
    print(f"wrote {n} chunk vectors of {len(papers)} papers to {args.out} ({args.out.stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
