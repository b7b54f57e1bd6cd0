"""`peerlint bench embedders`: its scoring, its held-apart pool, and a tiny real run with MiniLM."""

from __future__ import annotations

import json

import numpy as np
import pytest

from peerlint.benchmarks.embedders.bench import run, score_pairs, title_to_abstract
from peerlint.benchmarks.embedders.candidates import Unavailable, load
from conftest import shipped_papers
from peerlint.server.cli import build_parser


def test_score_pairs_ranks_each_query_against_its_own_document():
    docs = np.eye(3, dtype=np.float32)
    queries = np.array([[1, 0, 0], [0.9, 0.1, 0], [0, 0, 1]], dtype=np.float32)  # query 1 finds doc 0 first
    assert score_pairs(queries, docs) == {"r_at_1": pytest.approx(2 / 3, abs=1e-4), "r_at_10": 1.0,
                                          "mrr": pytest.approx((1 + 0.5 + 1) / 3, abs=1e-4)}


def test_pool_holds_only_the_held_apart_venues():
    papers = shipped_papers()
    titles, abstracts = title_to_abstract(papers, ["ACL", "UAI"], 50)
    by_title = {p.title: p for p in papers}
    assert len(titles) == 50 and {by_title[t].venue for t in titles} <= {"ACL", "UAI"}
    assert all(len(a) > 200 for a in abstracts)


def test_unknown_embedder_names_the_choices():
    with pytest.raises(Unavailable, match="choose from minilm"):
        load("bogus")


def test_tiny_run_writes_the_table_and_json(tmp_path, capsys):
    args = build_parser().parse_args(["bench", "embedders", "--embedders", "minilm,bogus", "--papers", "20",
                                      "--acm-sample", "0", "--out", str(tmp_path)])
    assert run(args) == 0
    [path] = tmp_path.glob("bench-embedders-*.json")
    result = json.loads(path.read_text())
    minilm, bogus = result["embedders"]
    assert minilm["available"] and minilm["dim"] == 384 and minilm["cpu_s_per_abstract"] > 0
    assert 0.8 <= minilm["title_to_abstract"]["r_at_1"] <= 1  # a title finds its abstract among 20
    assert not bogus["available"] and "unknown embedder" in bogus["reason"]
    assert "minilm" in capsys.readouterr().out


def test_candidates_sharing_a_models_vectors_report_the_cost_of_making_them():
    """nomic-256 is nomic's vectors cut to 256: whichever of the two runs second reads the cache and
    would report ~0 CPU-s; both report what the first paid, and other candidates keep their own."""
    from peerlint.benchmarks.embedders.bench import charge_shared_vectors

    rows = [{"embedder": "nomic-256", "vectors_of": "nomic", "cpu_s_per_abstract": 0.79, "wall_s_per_abstract": 0.4},
            {"embedder": "minilm", "cpu_s_per_abstract": 0.08, "wall_s_per_abstract": 0.04},
            {"embedder": "nomic", "vectors_of": "nomic", "cpu_s_per_abstract": 0.001, "wall_s_per_abstract": 0.001}]
    charge_shared_vectors(rows)
    assert [r["cpu_s_per_abstract"] for r in rows] == [0.79, 0.08, 0.79]
    assert rows[2]["wall_s_per_abstract"] == 0.4
