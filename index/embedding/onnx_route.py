"""The ``onnx-int8`` embedding route without optimum: MiniLM exported with ``torch.onnx``, its
transformer ops fused and its weights dynamically quantised to int8 by onnxruntime, then run with sentence-transformers' own pooling
(mean over tokens, L2-normalised) so its vectors stand in for the torch route's.

optimum-onnx (what sentence-transformers' ``backend="onnx"`` needs) pins transformers < 4.58,
which would downgrade the rest of the stack, so this route needs only ``onnxruntime`` and ``onnx``.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Sequence

import numpy as np

ONNX_FILE = "model_fused_qint8.onnx"


def export_int8(model_path: Path, target: Path) -> Path:
    """Export the model at `model_path` to `target`/ONNX_FILE (about a minute, once)."""
    import onnx
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers import optimizer
    from transformers import AutoModel, AutoTokenizer

    tmp = target.with_name(target.name + f".tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    model = AutoModel.from_pretrained(str(model_path), attn_implementation="eager").eval()
    tokenizer = AutoTokenizer.from_pretrained(str(model_path))
    sample = tokenizer(["an example sentence", "and a second, longer example sentence"], padding=True,
                       return_tensors="pt")

    class LastHidden(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    names = ["input_ids", "attention_mask", "token_type_ids"]
    with torch.no_grad():
        torch.onnx.export(LastHidden(model), tuple(sample[n] for n in names), str(tmp / "model.onnx"),
                          input_names=names, output_names=["last_hidden_state"],
                          dynamic_axes={n: {0: "batch", 1: "tokens"} for n in [*names, "last_hidden_state"]},
                          opset_version=17, dynamo=False)
    # Fuse attention, GELU and LayerNorm first (alone ~1.9x faster than the plain export, exact),
    # then quantise MatMul weights per channel: per-tensor int8 drops the cosine to the torch
    # vectors to ~0.93, per channel keeps it at ~0.995.
    config = model.config
    fused = optimizer.optimize_model(str(tmp / "model.onnx"), model_type="bert", num_heads=config.num_attention_heads,
                                     hidden_size=config.hidden_size)
    fused.save_model_to_file(str(tmp / "model_fused.onnx"))
    quantize_dynamic(str(tmp / "model_fused.onnx"), str(tmp / ONNX_FILE), weight_type=QuantType.QInt8,
                     per_channel=True, op_types_to_quantize=["MatMul"],
                     extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})  # fused ops lack shape info
    (tmp / "model_fused.onnx").unlink()
    (tmp / "model.onnx").unlink()
    tokenizer.save_pretrained(str(tmp))
    shutil.copy(model_path / "sentence_bert_config.json", tmp / "sentence_bert_config.json")
    shutil.rmtree(target, ignore_errors=True)
    os.replace(tmp, target)
    return target


class OnnxEncoder:
    """The slice of SentenceTransformer.encode that `Embedder.encode` uses, on onnxruntime."""

    def __init__(self, path: Path, threads: int | None = None):
        import onnxruntime as ort
        from transformers import AutoTokenizer

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or os.cpu_count() or 1
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(path / ONNX_FILE), options, providers=["CPUExecutionProvider"])
        self.tokenizer = AutoTokenizer.from_pretrained(str(path))
        self.max_length = json.loads((path / "sentence_bert_config.json").read_text()).get("max_seq_length", 256)
        self.inputs = {i.name for i in self.session.get_inputs()}

    def encode(self, texts: Sequence[str], batch_size: int = 32, normalize_embeddings: bool = True,
               show_progress_bar: bool = False) -> np.ndarray:
        out = []
        for start in range(0, len(texts), batch_size):
            enc = self.tokenizer(list(texts[start : start + batch_size]), padding=True, truncation=True,
                                 max_length=self.max_length, return_tensors="np")
            feed = {k: v.astype(np.int64) for k, v in enc.items() if k in self.inputs}
            hidden = self.session.run(None, feed)[0]
            mask = enc["attention_mask"][..., None].astype(np.float32)
            pooled = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
            if normalize_embeddings:
                pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
            out.append(pooled.astype(np.float32))
        return np.concatenate(out) if out else np.zeros((0, 384), np.float32)
