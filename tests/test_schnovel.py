"""SchNovel: the pair sampler and reader, the methods, the statistics, the CLI, and the editor's check."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from dataclasses import asdict

import pytest

from conftest import EXAMPLES, REPO, sample_papers
from llm_fixtures import needs_model
from peerlint.llm.base import ChoiceScores, GenerateParams, normalise_logprobs
from peerlint.benchmarks.schnovel.llm_methods import Shown, ask, parse_verdict
from peerlint.analyzers.novelty.pairs import Field, Pair, parse_fields, read_pairs, sample_pairs, write_pairs
from peerlint.benchmarks.schnovel.report import mcnemar_exact, summarise
from peerlint.index.papers import Paper

ENV = {**os.environ, "HF_HUB_OFFLINE": "1"}
TEST_FIELD = [Field("all", ("ICLR", "ACL", "NAACL", "COLING", "NeurIPS"))]  # the test index: 2017 vs 2020/21


@pytest.fixture(scope="module")
def corpus() -> list[Paper]:
    from conftest import shipped_papers

    return shipped_papers()


# -- sampler ---------------------------------------------------------------------------------------

def test_sampler_follows_algorithm_1(corpus):
    by_id = {p.id: p for p in corpus}
    pairs = sample_pairs(corpus, total=600, seed=3)
    assert len(pairs) == 600
    for pair in pairs:
        newer, older = by_id[pair.newer], by_id[pair.older]
        assert 2 <= pair.gap <= 10 and newer.year - older.year == pair.gap and pair.start_year == newer.year
        assert newer.venue == older.venue == pair.field and newer.abstract and older.abstract
    assert len(set(pairs)) == len(pairs)
    assert {p.field for p in pairs} >= {"NeurIPS", "ICML", "CVPR", "AISTATS", "COLT", "ICLR"}
    assert sample_pairs(corpus, total=600, seed=3) == pairs  # seeded
    assert sample_pairs(corpus, total=600, seed=4) != pairs
    # n per (field, start year, gap), restricted start years and gaps, venue groups
    cells = Counter((p.field, p.start_year, p.gap) for p in sample_pairs(
        corpus, per_cell=2, start_years=[2016, 2017], gaps=[2, 4], fields=parse_fields(["ml=NeurIPS,ICML", "CVPR"])))
    assert set(cells.values()) == {2} and {c[1] for c in cells} == {2016, 2017} and {c[2] for c in cells} == {2, 4}
    assert {c[0] for c in cells} == {"ml", "CVPR"} and ("ml", 2017, 4) in cells


def test_bad_pairs_are_reported_and_skipped(tmp_path):
    papers = {p.id: p for p in [
        Paper("a17", "A", "Deep nets.", "NeurIPS", 2017), Paper("b12", "B", "Kernels.", "NeurIPS", 2012),
        Paper("c12", "C", "Vision.", "CVPR", 2012), Paper("d17", "D", "More nets.", "NeurIPS", 2017),
        Paper("e12", "E", "  ", "NeurIPS", 2012)]}
    lines = [Pair("NeurIPS", 2017, 5, "a17", "b12").to_json(),  # good
             Pair("NeurIPS", 2017, 5, "a17", "zzz").to_json(),  # unknown id
             Pair("NeurIPS", 2017, 5, "a17", "c12").to_json(),  # different fields
             Pair("NeurIPS", 2017, 0, "a17", "d17").to_json(),  # equal years
             Pair("NeurIPS", 2017, 5, "a17", "e12").to_json(),  # empty abstract
             Pair("NeurIPS", 2012, 5, "b12", "a17").to_json(),  # label says newer, years say older
             {"f": "NeurIPS", "g": 5, "s": 2017, "x": "d17", "y": "b12", "label": "d17"}]  # the paper's flat layout
    path = tmp_path / "pairs.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\nnot json\n")
    got = read_pairs(path, papers)
    assert [(p.newer, p.older) for p in got.pairs] == [("a17", "b12"), ("d17", "b12")]
    assert got.skipped == Counter({"unknown id": 1, "different fields": 1, "equal years": 1, "empty abstract": 1,
                                   "newer paper is older": 1, "malformed line": 1})
    # the official release: papers inline, nested by year and gap
    nested = {"data": {"2019": {"2": [{"paper1": {"title": "New", "abstract": "Transformers.", "unix_timestamp": 1.56e9},
                                       "paper2": {"title": "Old", "abstract": "Perceptrons.", "unix_timestamp": 1.49e9}},
                                      {"paper1": {"title": "Broken"}}]}}}
    (tmp_path / "cs.json").write_text(json.dumps(nested))
    official = read_pairs(tmp_path / "cs.json", {})
    assert official.layout == "schnovel-nested" and len(official.pairs) == 1
    assert official.papers[official.pairs[0].newer].title == "New" and official.pairs[0].field == "cs"
    assert official.skipped["malformed line"] == 1
    out = tmp_path / "round.jsonl"
    write_pairs(got.pairs, out)
    assert read_pairs(out, papers).pairs == got.pairs


# -- statistics and parsing ----------------------------------------------------------------------

def test_mcnemar_exact_matches_the_binomial():
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(10, 0) == pytest.approx(2 / 1024)
    assert mcnemar_exact(3, 1) == pytest.approx(0.625)
    assert mcnemar_exact(12, 2) == pytest.approx(2 * 106 / 2**14)
    assert mcnemar_exact(2, 12) == mcnemar_exact(12, 2) and mcnemar_exact(5, 5) == 1.0


def test_answer_parsing_strict_fallback_and_garbage():
    assert parse_verdict("...so. The more novel and impactful paper is Paper Y.") .choice == 1
    assert parse_verdict("The more novel and impactful paper is [Paper X]").how == "strict"
    loose = parse_verdict("Overall, Paper 2 is more novel than the other.")
    assert (loose.choice, loose.how) == (1, "fallback")
    scores = parse_verdict("Paper X: score 4/10 (old idea). Paper Y: score 8/10 (new).")
    assert (scores.choice, scores.how) == (1, "fallback")
    assert parse_verdict("\u00e9\u00e9 lorem ipsum 42 {[}").how == "none"
    assert parse_verdict("").choice is None


class GarbageLLM:
    """Answers nothing usable: text without a verdict, uniform choice scores."""

    name, model = "fake", "garbage"

    def generate(self, prompt: str, params: GenerateParams = GenerateParams()) -> str:
        return "Lorem ipsum dolor sit amet, 3.14 <|im_end|> ###"

    def score(self, prompt, choices, system=None) -> ChoiceScores:
        return normalise_logprobs(choices, [0.0] * len(choices))


def test_garbage_llm_answers_are_counted_unparsed_not_guessed():
    a, b = Shown("New", "Transformers for everything.", 2016.5, 0.6), Shown("Old", "A perceptron.", 1990.2, 0.4)
    for method in ("cot", "self-consistency", "llm-discussion"):
        verdict = ask(method, GarbageLLM(), a, b)
        assert verdict.choice is None and verdict.how == "none"
    pairs = [Pair("f", 2017, 5, "a", "b")]
    from peerlint.benchmarks.schnovel.report import MethodResult, Outcome

    res = MethodResult("cot", [Outcome(0, True, False, "none"), Outcome(0, False, False, "none")], 1.0)
    [record] = summarise([res], pairs)
    assert record["unparsed"] == 2 and record["mean"] == 0.0 and record["answers"] == {"none": 2}


@pytest.mark.parametrize("with_lexicon", [False, True])
def test_leaving_papers_out_of_the_field_models_is_exact(with_lexicon):
    """The in-field ridge models drop a pair's own papers by a rank-2 downdate: same as refitting,
    on the embedding alone or on embedding and lexical vector together."""
    import numpy as np

    from peerlint.analyzers.novelty.features import RIDGE, Lexicon, Timeline

    rng = np.random.default_rng(0)
    P = rng.normal(size=(400, 12)).astype(np.float32)
    P /= np.linalg.norm(P, axis=1, keepdims=True)
    years = rng.integers(2005, 2016, size=400)
    words = [f"w{i}" for i in range(40)]
    texts = [" ".join(rng.choice(words, size=12)) + f" topic{y}" for y in years]
    lexicon = Lexicon.fit(texts, dim=6) if with_lexicon else None
    timeline = Timeline(P, years, ["NeurIPS"] * 400, lexicon)
    D = timeline.design_rows(np.arange(400))
    assert D.shape == (400, 18 if with_lexicon else 12)
    if with_lexicon:
        assert np.allclose(timeline.design_row(P[5], texts[5]), D[5], atol=1e-5)
    fit = timeline._ridge("year", ("neurips",), 2015)
    drop = [int(i) for i in fit.idx[:2]]
    rows = fit.idx
    keep = np.array([i for i in rows if i not in drop])
    X = np.hstack([D[keep].astype(np.float64), np.ones((len(keep), 1))])
    penalty = np.diag(np.r_[np.full(D.shape[1], RIDGE["year"]), 1e-6])
    refit = np.linalg.solve(X.T @ X + penalty, X.T @ (years[keep] - 2015.0))
    assert np.allclose(timeline._weights(fit, drop), refit, atol=1e-8)
    features = timeline.features(P[drop[0]], 2015, ("NeurIPS",), drop, design=D[drop[0]])
    assert features.shape == (8,) and np.isfinite(features).all()


def test_the_lexicon_cache_maps_its_rows_and_rewrites_an_old_cache(vector_index, tmp_path):
    """The lexicon's rows (one per paper) are read from a mapped file, not held by every server; a
    cache written before, with the rows inside the pickle, is rewritten that way, same numbers."""
    import pickle

    import numpy as np
    from peerlint.analyzers.novelty.model import load_or_fit_lexicon

    first = load_or_fit_lexicon(vector_index, tmp_path)
    [pkl] = (tmp_path / "novelty").glob("lexicon-*.pkl")
    [rows] = (tmp_path / "novelty").glob("lexicon-*.rows.npy")
    assert isinstance(first.rows, np.memmap) and first.rows.shape[0] == len(vector_index)
    assert len(pickle.loads(pkl.read_bytes()).rows) == 0  # the rows are not in the pickle
    again = load_or_fit_lexicon(vector_index, tmp_path)
    assert isinstance(again.rows, np.memmap) and np.array_equal(again.rows, first.rows)
    text = vector_index.paper(3).text
    assert np.allclose(again.vectors([text]), first.vectors([text]))

    old = type(first)(first.tfidf, first.svd, np.array(first.rows))  # the previous format: rows pickled
    pkl.write_bytes(pickle.dumps(old))
    rows.unlink()
    migrated = load_or_fit_lexicon(vector_index, tmp_path)
    assert isinstance(migrated.rows, np.memmap) and np.array_equal(migrated.rows, old.rows) and rows.exists()

    rows.write_bytes(rows.read_bytes()[:200])  # a damaged rows file: fitted again, not a crash
    refit = load_or_fit_lexicon(vector_index, tmp_path)
    assert refit.rows.shape[0] == len(vector_index) and np.allclose(refit.rows, first.rows, atol=1e-5)


def test_a_timeline_of_float16_paper_vectors_gives_the_float32_features(vector_index):
    """The editor's timeline keeps the paper vectors in float16 (half its memory); on real indexed
    papers its features are those of the float32 timeline to the fourth decimal."""
    import numpy as np
    from peerlint.analyzers.novelty.features import Timeline

    full, half = vector_index.paper_matrix(), vector_index.paper_matrix(dtype=np.float16)
    assert half.dtype == np.float16 and np.abs(full - half).max() < 1e-3
    wide, narrow = Timeline.of(vector_index, full), Timeline.of(vector_index, half)
    assert narrow.similarities(full[:3]).dtype == np.float32
    assert np.abs(wide.similarities(full[:3]) - narrow.similarities(full[:3])).max() < 2e-3
    cutoff = int(np.max(vector_index.years))
    for i in (0, 7, 42):
        a = wide.features(full[i], cutoff, ("ACL", "NAACL"), [i])
        b = narrow.features(full[i], cutoff, ("ACL", "NAACL"), [i])
        assert np.allclose(a, b, atol=1e-3), (a, b)


# -- methods on real papers ------------------------------------------------------------------------

def test_date_knn_beats_chance_on_real_pairs(vector_index, tmp_path):
    from peerlint.benchmarks.schnovel.bench import Bench

    papers = sample_papers()
    path = tmp_path / "pairs.jsonl"
    write_pairs(sample_pairs(papers, total=60, fields=TEST_FIELD, seed=1), path)
    pairs = read_pairs(path, {p.id: p for p in papers}, TEST_FIELD)
    assert len(pairs.pairs) == 60 and not pairs.skipped
    bench = Bench(pairs, papers, vector_index, TEST_FIELD)
    result = bench.run_pointwise("date-knn", None)
    [record] = summarise([result], pairs.pairs)
    assert record["mean"] > 0.5 and record["pairs"] == 60 and record["questions"] == 120


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "peerlint", "bench", "schnovel", *args], capture_output=True,
                          text=True, cwd=REPO, env=ENV, timeout=300)


@needs_model
def test_cli_samples_then_evaluates_with_json_and_plot(index_path, tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({k: list(v) if isinstance(v, tuple) else v for k, v in asdict(p).items()}) + "\n"
                              for p in sample_papers()))
    pairs = tmp_path / "pairs.jsonl"
    field = ["--field", "all=ICLR,ACL,NAACL,COLING,NeurIPS"]
    sampled = cli("--corpus", str(corpus), *field, "--sample", "3", "--out", str(pairs))
    assert sampled.returncode == 0, sampled.stderr
    assert len(pairs.read_text().splitlines()) == 3 and "wrote 3 pairs" in sampled.stdout
    run = cli("--corpus", str(corpus), *field, "--pairs", str(pairs), "--method", "date-knn,zero-shot",
              "--limit", "6", "--backend", "embedded", "--index", str(index_path), "--results", str(tmp_path / "res"))
    assert run.returncode == 0, run.stderr
    assert "SchNovel accuracy (both orders)" in run.stdout and "on or before the newer paper's year" in run.stdout
    [result] = (tmp_path / "res").glob("bench-schnovel-*.json")
    assert result.with_suffix(".png").stat().st_size > 1000
    data = json.loads(result.read_text())
    assert {m["method"] for m in data["methods"]} == {"date-knn", "zero-shot"}
    assert all(m["pairs"] == 3 and m["questions"] == 6 for m in data["methods"])
    assert data["methods"][0]["mcnemar_vs_next"]["p"] <= 1.0 and data["commit"]
    bad = cli("--pairs", str(pairs), "--method", "nonsense", "--corpus", str(corpus))
    assert bad.returncode == 2 and "unknown method" in bad.stderr and "Traceback" not in bad.stderr


# -- the editor's check ----------------------------------------------------------------------------

@needs_model
def test_check_novelty_gives_score_neighbours_and_justification(index_path, tmp_path):
    from peerlint.settings import Settings
    from peerlint.server.service import Service

    service = Service(Settings(index_path=str(index_path), backend="embedded"), cache_dir=tmp_path / "cache")
    draft = (EXAMPLES / "draft.tex").as_uri()
    service.analyze(draft)
    lines = (EXAMPLES / "draft.tex").read_text().splitlines()
    line = next(i for i, l in enumerate(lines) if l.startswith("Predicting the rating of a textual review"))
    result = service.check_novelty(draft, line, 3)
    assert result["ok"] is True and 0.0 <= result["score"] <= 1.0
    hits = result["evidence"]["hits"]
    assert hits[0]["title"].startswith("Hierarchical Bi-Directional Self-Attention") and {"venue", "year", "similarity"} <= set(hits[0])
    assert len(result["evidence"]["justification"].split()) >= 5 and result["message"].startswith("Novelty ")
    again = service.check_novelty(draft, line, 3)  # cached per chunk text
    assert again == result
    state = service.project_of(draft)
    assert [j.code for j in state.judgments[draft] if j.code == "novelty"] == ["novelty"]


def test_a_novelty_model_not_yet_fitted_for_an_index_build_is_known_before_the_check(vector_index, tmp_path):
    """The server says "calibrating, once" in the progress of the first check on a new index build,
    since that check fits the lexicon and the model (minutes on the default index) before it answers."""
    from peerlint.analyzers.novelty.model import calibrated, load_or_train

    assert not calibrated(vector_index, tmp_path)
    load_or_train(vector_index, tmp_path)
    assert calibrated(vector_index, tmp_path)
    [rows] = (tmp_path / "novelty").glob("lexicon-*.rows.npy")
    [model] = (tmp_path / "novelty").glob("model-*.npz")
    whole = model.read_bytes()
    model.write_bytes(whole[: len(whole) // 2])  # a model cut short is fitted again: not calibrated
    assert not calibrated(vector_index, tmp_path)
    model.write_bytes(whole)
    assert calibrated(vector_index, tmp_path)
    rows.write_bytes(rows.read_bytes()[:40])  # rows cut inside their header
    assert not calibrated(vector_index, tmp_path)
    rows.unlink()  # a cache missing a part is fitted again on the next check
    assert not calibrated(vector_index, tmp_path)


class _Says:
    """An LLM that answers `text` to every prompt."""

    name = model = "says"

    def __init__(self, text):
        self.text = text

    def generate(self, prompt, params=None):
        return self.text


def test_a_justification_that_says_too_little_gives_way_to_the_evidence():
    """SmolLM2 sometimes answers the novelty prompt with "Shorten the first sentence.": the editor shows
    what the retrieved papers say instead, and the note says why; a real paragraph is kept as it came."""
    from peerlint.analyzers.novelty.check import justify
    from peerlint.analyzers.novelty.model import Neighbourhood
    from peerlint.index.papers import Hit, Paper
    from peerlint.retrieval.retriever import HitView

    hits = (Hit(Paper("p1", "Hierarchical Attention Networks for Document Classification", "We rate reviews.",
                      venue="NAACL", year=2016), 0.71),
            Hit(Paper("p2", "Review Rating Prediction", "We predict ratings.", venue="ACL", year=2014), 0.64))
    views, nb = [HitView.of(h) for h in hits], Neighbourhood(None, hits)
    text, note = justify(_Says("Shorten the first sentence."), "We rate reviews hierarchically.", views, nb, 0.4, 40)
    assert "Hierarchical Attention Networks for Document Classification" in text and "NAACL 2016" in text
    assert "2015" in text and "0.71" in text and "said too little" in note and "Shorten" in note
    good = ("The passage applies hierarchical attention to review rating, which the NAACL 2016 paper already "
            "does for documents; its contribution is the venue-level aggregation.")
    assert justify(_Says(good), "We rate reviews hierarchically.", views, nb, 0.4, 40) == (good, "")
