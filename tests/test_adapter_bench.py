"""The adapter's benches: `bench embedders --train-adapter` trains, saves and measures in one run, and
`bench related`'s '+adapter' rows move only the query vectors (n/a without an adapter)."""

from __future__ import annotations

import json

import numpy as np

from peerlint.benchmarks.embedders.adapter import proceedings_pairs
from peerlint.benchmarks.embedders.pairs import HELD_APART
from peerlint.benchmarks.related.bench import ADAPTED, FIRST, _rows, evaluate
from peerlint.benchmarks.related.truth import Query, Truth
from peerlint.index.embedding.adapter import QueryAdapter
from conftest import shipped_papers


def test_train_adapter_run_writes_a_small_keyed_file_and_both_rows(tmp_path, capsys):
    from peerlint.server.cli import main

    out = tmp_path / "a.npz"
    assert main(["bench", "embedders", "--train-adapter", "--papers", "30", "--adapter-papers", "60",
                 "--adapter-sample", "0", "--adapter-epochs", "2", "--adapter-out", str(out),
                 "--out", str(tmp_path / "results")]) == 0
    [path] = (tmp_path / "results").glob("bench-embedders-adapter-*.json")
    result = json.loads(path.read_text())["adapter"]
    assert result["model"] == "all-MiniLM-L6-v2@torch" and result["bytes"] < 5_000_000
    assert QueryAdapter.load(result["model"], out) is not None
    assert set(result["title_to_abstract_held_apart"]) == {"minilm", "minilm+adapter"}
    pairs = len(proceedings_pairs(shipped_papers(), HELD_APART, 60)[0])
    assert pairs >= 60 and result["held_in_validation"]["pairs"] == pairs // 10  # titles, and keywords of ICLR
    assert result["trained_on"] == {"proceedings title/keywords -> abstract": pairs - pairs // 10}
    assert "title->abstract held apart" in capsys.readouterr().out


def test_adapter_rows_move_only_queries(vector_index):
    from peerlint.retrieval.related_work import RelatedWork

    assert _rows("adapter") == list(ADAPTED) and not any(r.default for r in ADAPTED)
    paper = vector_index.paper(0)
    truth = Truth("t", [Query("q", paper.abstract[:400], (paper.id,))])
    retriever = RelatedWork(vector_index)
    rows = [FIRST[0], ADAPTED[0]]
    without = {r["row"]: r for r in evaluate(retriever, truth, rows)["rows"]}
    assert without["dense +adapter"]["note"].startswith("n/a: no query adapter")
    identity = QueryAdapter.identity(vector_index.manifest.model_id, 384)
    same = {r["row"]: r for r in evaluate(retriever, truth, rows, adapter=identity)["rows"]}
    assert same["dense +adapter"]["recall"] == same["dense"]["recall"] and same["dense"]["mrr"] == 1.0
    rng = np.random.default_rng(0)
    scrambler = QueryAdapter(identity.model, rng.normal(size=(384, 64)).astype(np.float32),
                             rng.normal(size=(64, 384)).astype(np.float32) * 3)
    moved = {r["row"]: r for r in evaluate(retriever, truth, rows, adapter=scrambler)["rows"]}
    assert moved["dense +adapter"]["mrr"] < moved["dense"]["mrr"] == 1.0
