"""One-time heavy embedding on a GPU machine: the shipped corpus's chunk vectors, or a whole-corpus retrieval check.

Runs as a plain script (`python3 gpu_embed.py …`) on a machine that has torch, transformers, tokenizers and
safetensors but not peerlint or its dependencies, so it imports nothing from peerlint. It computes what
`Embedder("torch")` computes (BERT, mean pooling over the attention mask, unit vectors, 256 tokens), in
float32 with TF32 off, from a folder holding `config.json`, `tokenizer.json` and `model.safetensors`
(`python -m peerlint.index.embedding.prebuilt weights` writes one, float16 for the transfer).

    python3 gpu_embed.py vectors --model DIR --texts CHUNKS.jsonl.xz --out VECTORS.npz
        one int8 vector per line's "text" (symmetric, one float32 scale per vector), in input order
    python3 gpu_embed.py search --model DIR [--model DIR2 …] --docs D.jsonl.xz --queries Q.jsonl.xz --out TOP.npz
        each model's top-k document rows per query ("exclude": a document row never returned for it)

Nothing here is used by the editor or a default build: it only makes the files they read.
"""

from __future__ import annotations

import argparse
import json
import lzma
import sys
import time
from pathlib import Path

import numpy as np


def read_lines(path: Path) -> list[dict]:
    opener = lzma.open if path.suffix == ".xz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


class GpuEncoder:
    def __init__(self, folder: Path, device: str = "cuda", batch: int = 512):
        import torch
        from safetensors.torch import load_file
        from tokenizers import Tokenizer
        from transformers import BertConfig, BertModel

        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        self.torch = torch
        config = BertConfig.from_pretrained(str(folder))
        self.model = BertModel(config, add_pooling_layer=False)
        state = {k: v.float() for k, v in load_file(str(folder / "model.safetensors")).items()}
        missing, unexpected = self.model.load_state_dict(state, strict=False)
        missing = [m for m in missing if not m.endswith("position_ids")]
        if missing or [u for u in unexpected if not u.startswith("pooler.")]:
            raise SystemExit(f"{folder}: missing {missing}, unexpected {unexpected}")
        self.model = self.model.to(device).eval().float()
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(256)
        self.tokenizer.no_padding()
        self.device, self.batch = device, batch

    def encode(self, texts: list[str]) -> np.ndarray:
        torch = self.torch
        encodings = self.tokenizer.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        out = np.zeros((len(texts), self.model.config.hidden_size), dtype=np.float32)
        with torch.inference_mode():
            for lo in range(0, len(order), self.batch):
                rows = order[lo:lo + self.batch]
                width = max(len(encodings[i].ids) for i in rows)
                ids = np.zeros((len(rows), width), dtype=np.int64)
                mask = np.zeros((len(rows), width), dtype=np.int64)
                for r, i in enumerate(rows):
                    n = len(encodings[i].ids)
                    ids[r, :n] = encodings[i].ids
                    mask[r, :n] = 1
                ids_t = torch.from_numpy(ids).to(self.device)
                mask_t = torch.from_numpy(mask).to(self.device)
                hidden = self.model(input_ids=ids_t, attention_mask=mask_t,
                                    token_type_ids=torch.zeros_like(ids_t)).last_hidden_state
                m = mask_t.unsqueeze(-1).float()
                pooled = (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)
                pooled = torch.nn.functional.normalize(pooled, dim=1)
                out[rows] = pooled.cpu().numpy()
        return out


def quantise(vectors: np.ndarray, levels: int = 127) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 per vector: v ~ q * scale, scale = max|v| / levels, |q| <= levels (<= 127).

    Fewer levels keep the int8 layout (readers need not know) but leave fewer distinct byte values,
    which a compressed file stores in fewer bits."""
    vectors = np.asarray(vectors, dtype=np.float32)
    scale = np.maximum(np.abs(vectors).max(axis=1), 1e-12) / float(levels)
    q = np.clip(np.rint(vectors / scale[:, None]), -levels, levels).astype(np.int8)
    return q, scale.astype(np.float32)


def requantise(q: np.ndarray, scales: np.ndarray, levels: int) -> tuple[np.ndarray, np.ndarray]:
    """int8 rows (v ~ q * scale) quantised again to `levels`, as the shipped file stores them."""
    return quantise(q.astype(np.float32) * np.asarray(scales, dtype=np.float32)[:, None], levels)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gpu_embed.py")
    sub = parser.add_subparsers(dest="cmd", required=True)
    vec = sub.add_parser("vectors")
    vec.add_argument("--model", type=Path, required=True)
    vec.add_argument("--texts", type=Path, required=True)
    vec.add_argument("--out", type=Path, required=True)
    vec.add_argument("--check", type=int, default=0, help="also return float16 vectors of the first N texts")
    vec.add_argument("--shard", type=int, default=0,
                     help="write OUT-0.npz, OUT-1.npz, … of at most this many vectors each (a transfer's file limit)")
    srch = sub.add_parser("search")
    srch.add_argument("--model", type=Path, action="append", required=True)
    srch.add_argument("--docs", type=Path, action="append", required=True, help="in order; may repeat")
    srch.add_argument("--queries", type=Path, required=True)
    srch.add_argument("--out", type=Path, required=True)
    srch.add_argument("-k", type=int, default=50)
    args = parser.parse_args(argv)
    import torch

    if args.cmd == "vectors":
        texts = [row["text"] for row in read_lines(args.texts)]
        t0 = time.time()
        vectors = GpuEncoder(args.model).encode(texts)
        q, scale = quantise(vectors)
        if args.check:
            np.savez(args.out.with_name(args.out.stem + "-check.npz"), check=vectors[:args.check].astype(np.float16))
        step = args.shard or len(q) or 1
        for i, lo in enumerate(range(0, max(len(q), 1), step)):
            name = args.out if not args.shard else args.out.with_name(f"{args.out.stem}-{i}.npz")
            np.savez(name, vectors=q[lo:lo + step], scales=scale[lo:lo + step])
        print(f"{len(texts)} texts embedded in {time.time() - t0:.1f} s on {torch.cuda.get_device_name()}")
        return 0
    docs = [row["text"] for path in args.docs for row in read_lines(path)]
    queries = read_lines(args.queries)
    results = {}
    for folder in args.model:
        t0 = time.time()
        enc = GpuEncoder(folder)
        d = torch.from_numpy(enc.encode(docs)).cuda()
        qv = torch.from_numpy(enc.encode([q["text"] for q in queries])).cuda()
        sims = qv @ d.T
        for r, q in enumerate(queries):
            if q.get("exclude", -1) >= 0:
                sims[r, q["exclude"]] = -2.0
        top = torch.topk(sims, args.k, dim=1).indices.cpu().numpy().astype(np.int32)
        results[folder.name] = top
        print(f"{folder.name}: {len(docs)} docs, {len(queries)} queries in {time.time() - t0:.1f} s")
    np.savez(args.out, **results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
