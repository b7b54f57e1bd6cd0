"""The files a one-time GPU embedding of the shipped corpus reads and writes, made and read here.

The shipped corpus's chunk vectors (`prebuilt.py`) are computed once, on a GPU machine that has torch but
not peerlint (`gpu_embed.py`); what travels there is small: float16 weights, and the chunk texts in parts.

    python -m peerlint.index.embedding.gpu_transfer weights --model citation-minilm --out DIR
    python -m peerlint.index.embedding.gpu_transfer chunks --corpus FILE --out DIR [--parts N]
    python -m peerlint.index.embedding.gpu_transfer embed --chunks DIR --out DIR [--reuse OLD.npz]
    python -m peerlint.index.embedding.gpu_transfer pack --chunks DIR --vectors V1.npz V2.npz … [--reuse OLD.npz] [--out FILE]

`chunks` splits every paper's text exactly as `index build` does (the model's word pieces, <= 200 a
chunk, at sentence ends where possible) and writes each distinct chunk once; `pack` joins the int8
vectors the GPU returned, in that order, into the shipped file (format 2: int8 and one scale a vector).
`embed` is the same job without a GPU: the exact ONNX route on this machine's cores (the same numbers as
torch), resumable, one shard of BLOCK chunks at a time, each shard naming its chunks; with `--reuse`, the
chunks an earlier shipped file holds are not embedded again, and `pack --reuse` takes them from it.
"""

from __future__ import annotations

import argparse
import json
import lzma
import sys
from pathlib import Path
from typing import Sequence

import numpy as np

from ...hashing import text_hash
from .embedder import DEFAULT_MODEL, Embedder, model_dir, model_key
from .gpu_embed import quantise, requantise  # the GPU script's own (it imports torch only when it runs)
from ..ingest.load import load_papers
from .prebuilt import FORMAT_INT8, SHIPPED, SHIPPED_LEVELS, ShippedVectors, _raw

MAX_TOKENS = 200
BLOCK = 8192  # chunks an `embed` shard holds


def write_weights(model: str, out: Path) -> Path:
    """config, tokenizer and float16 weights of `model`, for `gpu_embed.py --model out`."""
    import shutil

    from safetensors.numpy import load_file, save_file

    src = model_dir(model)
    out.mkdir(parents=True, exist_ok=True)
    state = load_file(str(src / "model.safetensors"))
    save_file({k: v.astype(np.float16) for k, v in state.items() if not k.endswith("position_ids")},
              str(out / "model.safetensors"))
    for name in ("config.json", "tokenizer.json"):
        shutil.copy(src / name, out / name)
    return out


def write_chunks(corpus: Sequence[Path], out: Path, parts: int, model: str = DEFAULT_MODEL) -> dict:
    papers = load_papers(list(corpus), warn=lambda m: print(m, file=sys.stderr))
    texts = [p.text for p in papers]
    content = list(dict.fromkeys(text_hash(t) for t in texts))
    by_hash = {text_hash(t): t for t in texts}
    embedder = Embedder(model=model)
    cuts = embedder.split_many([by_hash[h] for h in content], MAX_TOKENS)
    spans = [[(s.start, s.end) for s in cut] for cut in cuts]
    chunk_texts: dict[str, str] = {}
    for h, sp in zip(content, spans):
        for a, b in sp:
            chunk_texts.setdefault(text_hash(by_hash[h][a:b]), by_hash[h][a:b])
    hashes = list(chunk_texts)
    out.mkdir(parents=True, exist_ok=True)
    per = -(-len(hashes) // parts)
    for i in range(parts):
        with lzma.open(out / f"chunks-{i}.jsonl.xz", "wt", encoding="utf-8", preset=6) as handle:
            for h in hashes[i * per:(i + 1) * per]:
                handle.write(json.dumps({"text": chunk_texts[h]}) + "\n")
    index = {"model": embedder.model_id, "max_tokens": MAX_TOKENS,
             "content_hashes": content, "spans": spans, "chunk_hashes": hashes, "parts": parts}
    (out / "chunks-index.json").write_text(json.dumps(index))
    return {"papers": len(papers), "texts": len(content), "chunks": len(hashes), "parts": parts}


def _reused(path: Path | None, model: str):
    """An earlier shipped file made with the same model (None without one); its rows are read on demand."""

    if path is None:
        return None
    old = ShippedVectors.load(path)
    if old is None:
        raise ValueError(f"{path}: not a shipped vectors file")
    if old.model != model:
        raise ValueError(f"{path} holds {old.model} vectors, the chunks are for {model}")
    return old


def _parts(chunks: Path, index: dict) -> list[str]:
    texts = [json.loads(line)["text"] for i in range(index["parts"])
             for line in lzma.open(chunks / f"chunks-{i}.jsonl.xz", "rt", encoding="utf-8")]
    if len(texts) != len(index["chunk_hashes"]):
        raise ValueError(f"{chunks}: {len(texts)} chunk texts for {len(index['chunk_hashes'])} hashes")
    return texts


def embed(chunks: Path, out: Path, reuse: Path | None = None, threads: int | None = None,
          progress=lambda message: print(message, file=sys.stderr, flush=True)) -> int:
    """Embed on this machine's CPU every chunk `reuse` lacks, into `out/shard-KKK.npz`; shards already
    written are kept (so a stopped run resumes). Returns the number of chunks embedded now."""
    import os
    import time

    index = json.loads((chunks / "chunks-index.json").read_text())
    old = _reused(reuse, index["model"])
    known = set(old.chunk_hashes) if old is not None else set()
    todo = [(h, t) for h, t in zip(index["chunk_hashes"], _parts(chunks, index)) if h not in known]
    embedder = Embedder("onnx", model=model_key(index["model"]), batch_size=64, threads=threads)
    if embedder.model_id != index["model"]:
        raise ValueError(f"the onnx route computes {embedder.model_id}, the chunks are for {index['model']}")
    out.mkdir(parents=True, exist_ok=True)
    start, done = time.monotonic(), 0
    for k, lo in enumerate(range(0, len(todo), BLOCK)):
        shard = out / f"shard-{k:03d}.npz"
        if shard.exists():
            continue
        block = todo[lo:lo + BLOCK]
        q, scales = quantise(embedder.encode([t for _, t in block]))
        tmp = shard.with_suffix(".tmp.npz")
        np.savez(tmp, vectors=q, scales=scales, hashes=np.array([h for h, _ in block]))
        os.replace(tmp, shard)
        done += len(block)
        rate = done / max(time.monotonic() - start, 1e-9)
        progress(f"{shard.name}: {lo + len(block):,} of {len(todo):,} chunks ({rate:.0f}/s, "
                 f"~{(len(todo) - lo - len(block)) / rate / 60:.0f} min left)")
    return done


def pack(chunks: Path, vectors: Sequence[Path], out: Path, reuse: Path | None = None, levels: int | None = None) -> int:
    """The shipped file (format 2) from vector files: GPU parts (rows in chunk order, no names) joined in
    the order given, or `embed` shards (rows named by `hashes`), plus the rows of `reuse` by hash; rows are
    rounded to `levels` (default `SHIPPED_LEVELS`) and the file is compressed."""

    index = json.loads((chunks / "chunks-index.json").read_text())
    hashes = index["chunk_hashes"]
    loaded = [np.load(v) for v in vectors]
    if all("hashes" in z for z in loaded):
        by_hash = {h: (q, s) for z in loaded for h, q, s in zip(z["hashes"].tolist(), z["vectors"], z["scales"])}
        old = _reused(reuse, index["model"])
        for i, h in enumerate(old.chunk_hashes if old is not None else ()):
            if h not in by_hash:  # only the rows the shards lack are read and quantised
                by_hash[h] = tuple(a[0] for a in quantise(old.row(i)[None, :]))
        if missing := [h for h in hashes if h not in by_hash]:
            raise ValueError(f"{len(missing)} of {len(hashes)} chunks have no vector: a shard is missing")
        q = np.stack([by_hash[h][0] for h in hashes])
        scales = np.asarray([by_hash[h][1] for h in hashes], dtype=np.float32)
    else:
        q = np.concatenate([z["vectors"] for z in loaded])
        scales = np.concatenate([z["scales"] for z in loaded])
    if len(q) != len(hashes):
        raise ValueError(f"{len(q)} vectors for {len(hashes)} chunks: a part is missing")
    levels = levels or SHIPPED_LEVELS
    if levels < 127:
        q, scales = requantise(q, scales, levels)
    bounds = np.cumsum([0] + [len(s) for s in index["spans"]])
    flat = np.asarray([s for sp in index["spans"] for s in sp], dtype=np.int32).reshape(-1, 2)
    tmp = out.with_suffix(".tmp.npz")
    np.savez_compressed(tmp, format=np.int32(FORMAT_INT8), model=np.str_(index["model"]),
             max_tokens=np.int32(index["max_tokens"]), content_hashes=_raw(index["content_hashes"]),
             span_bounds=bounds.astype(np.int32), spans=flat, chunk_hashes=_raw(index["chunk_hashes"]),
             vectors=q.astype(np.int8), scales=scales.astype(np.float32))
    tmp.replace(out)
    return len(q)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m peerlint.index.embedding.gpu_transfer", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("weights", help="float16 weights of a packaged model for gpu_embed.py")
    w.add_argument("--model", default=DEFAULT_MODEL)
    w.add_argument("--out", type=Path, required=True)
    c = sub.add_parser("chunks", help="the corpus's distinct chunk texts, in parts")
    c.add_argument("--corpus", type=Path, nargs="+", required=True)
    c.add_argument("--out", type=Path, required=True)
    c.add_argument("--parts", type=int, default=2)
    c.add_argument("--model", default=DEFAULT_MODEL)
    p = sub.add_parser("pack", help="join the GPU's vectors into the shipped file")
    p.add_argument("--chunks", type=Path, required=True)
    p.add_argument("--vectors", type=Path, nargs="+", required=True)
    p.add_argument("--out", type=Path, default=SHIPPED)
    p.add_argument("--reuse", type=Path, help="an earlier shipped file whose rows fill the chunks the shards lack")
    p.add_argument("--levels", type=int, choices=range(7, 128), metavar="7..127",
                   help="round each int8 row to this many levels a side (default: the shipped file's)")
    e = sub.add_parser("embed", help="embed the chunks on this machine's CPU (resumable shards)")
    e.add_argument("--chunks", type=Path, required=True)
    e.add_argument("--out", type=Path, required=True)
    e.add_argument("--reuse", type=Path, help="an earlier shipped file: its chunks are not embedded again")
    e.add_argument("--threads", type=int)
    args = parser.parse_args(argv)
    if args.cmd == "weights":
        print(write_weights(args.model, args.out))
    elif args.cmd == "chunks":
        print(write_chunks(args.corpus, args.out, args.parts, args.model))
    elif args.cmd == "embed":
        print(f"{embed(args.chunks, args.out, args.reuse, args.threads)} chunks embedded into {args.out}")
    else:
        print(f"{pack(args.chunks, args.vectors, args.out, args.reuse, args.levels)} chunk vectors written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
