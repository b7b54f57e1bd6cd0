"""RINoBench: every metric on hand-computed cases, the reader on good / variant / broken files,
the judge's parsing, scripted and broken LLMs end to end, and one run with the embedded model."""

from __future__ import annotations

import json
import lzma
from pathlib import Path
from typing import Callable, Sequence

import pytest

from llm_fixtures import needs_model
from peerlint.llm.base import GenerateParams, LLMBadOutput, LLMUnavailable, normalise_logprobs
from peerlint.benchmarks.rinobench.dataset import RinoDataError, collect, read_rinobench
from peerlint.benchmarks.rinobench.judge import (AspectCheck, AspectComparison, Budget, JudgedAspect, Justification,
                                                RinoLLM, Unparsed, parse_comparison, parse_fact_check,
                                                parse_prediction, predict_prompt, rubric_lines, token_score)
from peerlint.benchmarks.rinobench import bench as rinobench
from peerlint.benchmarks.rinobench.metrics import (additional_ratio, aspect_recall, hallucination_rate,
                                                   item_justification, justification_metrics, majority_class,
                                                   mean_absolute_error, score_metrics)

SAMPLE = rinobench.SAMPLE
OFFICIAL_RUBRIC = Path(__file__).resolve().parents[2] / "shared" / "data" / "rinobench" / "label_descriptions.json"
IDEA = {"objective": "I aim to do X.", "problem_statement": "X is hard.", "solution_approach": "I use Y for X."}
BUDGET = Budget(works_chars=4000, abstract_chars=600)


def record(score=3, **extra) -> dict:
    base = {"source": "https://openreview.net/forum?id=abc", "venueid": "ICLR.cc/2023/Conference",
            "research_idea": dict(IDEA), "novelty_score": score, "novelty_reasoning": "Y exists; X is new.",
            "related_works": [{"title": "Y", "abstract": "We propose Y.", "authors": ["A"], "url": "", "venue": "ICML",
                               "year": 2020}]}
    base.update(extra)
    return base


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# -- score metrics -----------------------------------------------------------------------------

def test_f1_and_mae_on_a_hand_computed_case():
    gold = [1, 2, 3, 3, 4, 5]
    pred = [1, 3, 3, None, 4, 4]  # item 4 unparsed: a miss of class 3, left out of MAE
    m = score_metrics(gold, pred)
    # class 1: tp1 -> 1; class 2: fn1 -> 0; class 3: tp1 fp1 fn1 -> 0.5; class 4: tp1 fp1 -> 2/3; class 5: fn1 -> 0
    assert m.per_class_f1 == pytest.approx({1: 1.0, 2: 0.0, 3: 0.5, 4: 2 / 3, 5: 0.0})
    assert m.labels == (1, 2, 3, 4, 5)
    assert m.macro_f1 == pytest.approx((1 + 0.5 + 2 / 3) / 5)
    assert m.mae == pytest.approx(2 / 5) and m.answered == 5 and m.n == 6


def test_macro_f1_averages_over_gold_union_predicted_classes_only():
    m = score_metrics([3, 3, 4], [3, 3, 3])
    assert m.labels == (3, 4) and m.per_class_f1[1] is None
    assert m.per_class_f1[3] == pytest.approx(0.8) and m.macro_f1 == pytest.approx(0.4)
    extra = score_metrics([3, 3], [3, 5])  # a predicted class absent from gold joins the average with F1 0
    assert extra.labels == (3, 5) and extra.macro_f1 == pytest.approx((2 / 3) / 2)


def test_macro_f1_matches_scikit_learn_as_the_official_evaluation_uses_it():
    sklearn = pytest.importorskip("sklearn.metrics")
    import random

    rng = random.Random(7)
    for _ in range(20):
        gold = [rng.choice([2, 3, 3, 4]) for _ in range(30)]
        pred = [rng.choice([1, 3, 4, 4, 5]) for _ in range(30)]
        ours = score_metrics(gold, pred)
        assert ours.macro_f1 == pytest.approx(sklearn.f1_score(gold, pred, average="macro"))
        assert ours.mae == pytest.approx(sklearn.mean_absolute_error(gold, pred))


def test_constant_three_on_the_official_test_distribution_reproduces_the_paper_baseline():
    gold = [1] * 15 + [2] * 60 + [3] * 87 + [4] * 81 + [5] * 34  # Table 2, test split
    m = score_metrics(gold, [3] * len(gold))
    assert round(100 * m.macro_f1, 1) == 9.6 and round(m.mae, 2) == 0.86
    assert majority_class(gold) == 3


def test_majority_class_ties_and_no_answers():
    assert majority_class([2, 2, 3, 3, 4]) == 3  # tie: nearer the middle
    assert majority_class([2, 2, 4, 4]) == 2  # still tied: the lower
    assert majority_class([1, 1, 5]) == 1
    assert mean_absolute_error([3, 4], [None, None]) is None
    assert score_metrics([3, 4], [None, None]).macro_f1 == 0.0


# -- justification metrics -------------------------------------------------------------------

def comparison(supported: Sequence[bool], gold: int) -> AspectComparison:
    return AspectComparison(tuple(JudgedAspect(f"arg {i}", s) for i, s in enumerate(supported)),
                            tuple(f"gold {i}" for i in range(gold)))


def test_aspect_recall_is_equation_1():
    assert aspect_recall(comparison([True, True, False], gold=4)) == pytest.approx(0.5)
    assert aspect_recall(comparison([True, True, True], gold=2)) == 1.0  # capped at 1
    assert aspect_recall(comparison([True], gold=0)) == 0.0  # no gold argument: 0 by definition


def test_additional_ratio_and_hallucination_rate_are_equations_2_and_3():
    c = comparison([True, False, False, False], gold=2)
    assert c.additional == ("arg 1", "arg 2", "arg 3")
    grounded = (True, True, False)
    assert additional_ratio(c, grounded) == pytest.approx(2 / 2)
    assert hallucination_rate(c, grounded) == pytest.approx(1 / 4)  # over all predicted arguments
    no_gold = comparison([False, False], gold=0)
    assert additional_ratio(no_gold, (True, True)) == 2.0  # max(N_gold, 1) in the denominator: ratio can exceed 1
    assert hallucination_rate(comparison([], gold=3), ()) == 0.0
    with pytest.raises(ValueError):
        additional_ratio(c, (True,))


def test_item_metrics_are_none_where_the_judge_failed_and_means_count_only_answers():
    full = Justification(0.8, AspectCheck(comparison([True, False], 2), (False,)),
                         AspectCheck(comparison([True], 1), ()))
    partial = Justification(None, AspectCheck(comparison([True], 2), None), AspectCheck(None, None))
    a, b = item_justification(full), item_justification(partial)
    assert (a.alignment, a.known_recall, a.known_additional, a.known_hallucination) == (0.8, 0.5, 0.0, 0.5)
    assert (a.novelty_recall, a.novelty_additional, a.novelty_hallucination) == (1.0, 0.0, 0.0)
    assert (b.alignment, b.known_recall, b.known_additional, b.novelty_recall) == (None, 0.5, None, None)
    means = justification_metrics([a, b]).means
    assert means["known_recall"].value == 0.5 and means["known_recall"].count == 2
    assert means["alignment"].value == 0.8 and means["alignment"].count == 1
    assert means["novelty_recall"].count == 1


# -- the reader --------------------------------------------------------------------------------

def test_official_layout_as_a_json_list(tmp_path):
    data = read_rinobench(write(tmp_path, "test.json", json.dumps([record(2), record(5, source="s2")])))
    assert data.layout == "JSON list" and len(data.items) == 2 and not data.skipped
    item = data.items[0]
    assert item.idea.objective == "I aim to do X." and item.novelty_score == 2
    assert item.related_works[0].title == "Y" and item.related_works[0].year == 2020
    assert item.id == "https://openreview.net/forum?id=abc" and data.items[1].id == "s2"


def test_variants_jsonl_flat_string_idea_aliases_and_rows(tmp_path):
    flat = {k: v for k, v in record(4).items() if k != "research_idea"} | IDEA
    as_string = record("3", research_idea=json.dumps(IDEA))
    alias = {k: v for k, v in record(1.0).items() if k != "novelty_reasoning"} | {"novelty_score_justification": "old"}
    lines = "\n".join(json.dumps(r) for r in (flat, as_string, alias)) + "\n{broken\n"
    data = read_rinobench(write(tmp_path, "test.jsonl", lines))
    assert data.layout == "JSON Lines"
    assert [i.novelty_score for i in data.items] == [4, 3, 1] and data.items[2].novelty_reasoning == "old"
    assert [(s.position, s.reason) for s in data.skipped] == [(4, "line is not JSON")]
    rows = read_rinobench(write(tmp_path, "rows.json", json.dumps({"rows": [{"row_idx": 0, "row": record(2)}]})))
    assert rows.items[0].novelty_score == 2 and "rows" in rows.layout


def test_unusable_records_are_skipped_with_reasons_and_empty_works_dropped(tmp_path):
    works = [{"title": "", "abstract": None}, "not a work", {"title": "Kept", "abstract": None}]
    records = [record(3.5), record(6), record(3, novelty_reasoning="  "), record(3, research_idea={"objective": "o"}),
               record(3, research_idea="just a sentence"), record(True), [1, 2], record(3, related_works=works)]
    data = read_rinobench(write(tmp_path, "mixed.json", json.dumps(records)))
    assert len(data.items) == 1 and data.dropped_works == 2
    assert data.items[0].related_works[0].title == "Kept" and data.items[0].related_works[0].abstract == ""
    reasons = [s.reason for s in data.skipped]
    assert reasons[0] == "novelty_score 3.5 is not a whole number"
    assert reasons[1] == "novelty_score 6 is outside the 1-5 rubric"
    assert reasons[2] == "no novelty_reasoning"
    assert reasons[3] == "research idea lacks problem_statement, solution_approach"
    assert reasons[4].startswith("research_idea is plain text") and "not a number" in reasons[5]
    assert reasons[6] == "a list, not an object" and [s.position for s in data.skipped] == [1, 2, 3, 4, 5, 6, 7]


@pytest.mark.parametrize("content,message", [
    (None, "no such file"),
    ("", "is not JSON"),
    ("this is not json", "is not JSON"),
    ('{"meta": 1}', "no list of records"),
    ('[{"novelty_score": 9}]', "holds no usable RINoBench item (first problem, record 1"),
    ("[]", "holds no usable RINoBench item"),
])
def test_missing_or_malformed_files_raise_an_error_that_names_the_fix(tmp_path, content, message):
    path = tmp_path / "test.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(RinoDataError, match=message.replace("(", r"\(")):
        read_rinobench(path)


def test_directories_and_binary_files_are_user_errors(tmp_path):
    with pytest.raises(RinoDataError, match="is a directory"):
        read_rinobench(tmp_path)
    parquet = tmp_path / "test.parquet"
    parquet.write_bytes(b"PAR1\xff\xfe\x00\x81")
    with pytest.raises(RinoDataError, match="not UTF-8"):
        read_rinobench(parquet)


def test_shipped_sample_is_labelled_and_built_from_real_corpus_abstracts():
    doc = json.loads(SAMPLE.read_text())
    assert doc["_note"].startswith("NOT the official RINoBench data")
    data = read_rinobench(SAMPLE)
    assert len(data.items) == 8 and not data.skipped and data.dropped_works == 0
    assert sorted({i.novelty_score for i in data.items}) == [1, 2, 3, 4, 5]
    assert majority_class([i.novelty_score for i in data.items]) == 3
    from peerlint.index.ingest.load import default_corpus_path

    with lzma.open(default_corpus_path(), "rt", encoding="utf-8") as f:
        corpus = {(p["title"], " ".join(p["abstract"].split())) for p in map(json.loads, f)}
    for item in data.items:
        assert item.related_works and all((w.title, w.abstract) in corpus for w in item.related_works)


def test_rubric_is_the_official_label_descriptions():
    lines = rubric_lines()
    assert [line.split(":")[0] for line in lines] == ["1", "2", "3", "4", "5"]
    if OFFICIAL_RUBRIC.exists():
        assert list(lines) == json.loads(OFFICIAL_RUBRIC.read_text())


# -- the judge's parsing -----------------------------------------------------------------------

def test_prediction_parsing_accepts_only_valid_answers():
    assert parse_prediction('{"novelty_reasoning": " New  idea. ", "novelty_score": 4}') == (4, "New idea.")
    assert parse_prediction('{"novelty_reasoning": "r", "novelty_score": 2.0}') == (2, "r")
    for bad in ("The idea is novel (4/5).", '{"novelty_reasoning": "r", "novelty_score": 7}',
                '{"novelty_reasoning": "r", "novelty_score": "3"}', '{"novelty_reasoning": "r", "novelty_score": true}',
                '{"novelty_score": 3}', '{"novelty_reasoning": "", "novelty_score": 3}', "[3]", ""):
        with pytest.raises(Unparsed):
            parse_prediction(bad)


def test_comparison_and_fact_check_parsing():
    c = parse_comparison('{"predicted_aspects": [{"aspect": "uses Y", "supported_in_gold": true}, '
                         '{"aspect": " ", "supported_in_gold": false}], "gold_aspects": ["Y exists", ""]}')
    assert c == AspectComparison((JudgedAspect("uses Y", True),), ("Y exists",))
    for bad in ('{"predicted_aspects": [{"aspect": "a", "supported_in_gold": "yes"}], "gold_aspects": []}',
                '{"predicted_aspects": {}, "gold_aspects": []}', '{"predicted_aspects": [], "gold_aspects": [1]}'):
        with pytest.raises(Unparsed):
            parse_comparison(bad)
    assert parse_fact_check('{"checked_claims": [{"supported": true}, {"supported": false}]}', 2) == (True, False)
    with pytest.raises(Unparsed):
        parse_fact_check('{"checked_claims": [{"supported": true}]}', 2)


def test_token_score_is_the_rounded_expected_value_and_uniform_means_no_answer():
    assert token_score([0, 0, 1, 0, 0]) == (3, 3.0)
    assert token_score([0, 0.5, 0.5, 0, 0]) == (3, 2.5)  # half rounds up
    assert token_score([0.7, 0.3, 0, 0, 0]) == (1, pytest.approx(1.3))
    assert token_score([0.2] * 5) is None and token_score([float("nan")] * 5) is None


def test_prompt_shows_rubric_idea_and_cuts_related_works_to_the_budget(tmp_path):
    works = [{"title": f"Work {n}", "abstract": "word " * 400} for n in range(10)]
    item = collect([(1, record(3, related_works=works))], "x", "JSON list").items[0]
    system, prompt, shown = predict_prompt(item, Budget(works_chars=1500, abstract_chars=300))
    assert "experienced in judging the novelty" in system
    assert "3: The idea somewhat novel" in prompt and "Solution approach: I use Y for X." in prompt
    assert shown == 4 and "[4] Title: Work 3" in prompt and "Work 4" not in prompt
    assert '"novelty_score": <1|2|3|4|5>' in prompt


# -- LLMs that answer, fail, or ramble ---------------------------------------------------------

class ScriptedLLM:
    """Answers by prompt kind; `predict` may be a function of the call number (to return garbage or raise)."""

    name, model = "fake", "scripted"

    def __init__(self, predict: Callable[[int], str], score_probs=(0, 0, 0, 1, 0), alignment=7, down_from=None,
                 known='{"predicted_aspects": [{"aspect": "Y exists", "supported_in_gold": true}, '
                       '{"aspect": "Z exists", "supported_in_gold": false}], "gold_aspects": ["Y exists"]}',
                 novelty='{"predicted_aspects": [], "gold_aspects": ["X is new"]}',
                 fact='{"checked_claims": [{"supported": false}]}'):
        self.predict, self.score_probs, self.alignment = predict, score_probs, alignment
        self.known, self.novelty, self.fact = known, novelty, fact
        self.down_from = down_from  # from this prediction on, every call times out
        self.calls: list[str] = []

    def _maybe_down(self) -> None:
        if self.down_from is not None and self.calls.count("predict") >= self.down_from:
            raise LLMUnavailable("Ollama at http://127.0.0.1:1 did not answer within 60 s")

    def generate(self, prompt: str, params: GenerateParams = GenerateParams()) -> str:
        if "related work.\n" in prompt.split("Task:")[0]:
            self.calls.append("known")
            return self.known
        if "novelty reasoning in research ideas" in prompt:
            self.calls.append("novelty")
            return self.novelty
        if "fact-check" in prompt:
            self.calls.append("fact")
            assert params.json_schema["properties"]["checked_claims"]["minItems"] == 1
            return self.fact
        self.calls.append("predict")
        self._maybe_down()
        return self.predict(self.calls.count("predict"))

    def score(self, prompt: str, choices: Sequence[str], system: str | None = None):
        if len(choices) == 11:
            self.calls.append("alignment")
            return normalise_logprobs(choices, [0.0 if c == str(self.alignment) else float("-inf") for c in choices])
        self.calls.append("token")
        self._maybe_down()
        return normalise_logprobs(choices, [0.0 if p == 1 else float("-inf") for p in self.score_probs])


def sample_items(scores=(3, 4, 2)):
    return collect([(n, record(s)) for n, s in enumerate(scores, 1)], "x", "JSON list").items


def test_scripted_llm_gives_exact_metrics_for_every_row():
    llm = ScriptedLLM(lambda n: '{"novelty_reasoning": "Y exists, so X is incremental.", "novelty_score": 4}')
    p = RinoLLM(llm, BUDGET)
    items = sample_items()
    outcomes = rinobench.evaluate(items, p, p)
    rows = rinobench.rows_for(items, outcomes, "scripted")
    assert [r.name for r in rows] == ["constant-3", "majority-class (3)", "scripted JSON", "scripted token-prob"]
    model = rows[2]
    assert model.unparsed == model.errors == 0
    assert model.scores.mae == pytest.approx((1 + 0 + 2) / 3)
    assert model.scores.per_class_f1[4] == pytest.approx(2 / (2 + 2 + 0))  # tp1, fp2 (gold 3 and 2)
    means = model.justification.means
    assert means["alignment"].value == pytest.approx(0.7)
    assert means["known_recall"].value == 1.0 and means["novelty_recall"].value == 0.0  # 1 of 1; nothing predicted
    assert means["known_additional"].value == 0.0 and means["known_hallucination"].value == pytest.approx(0.5)
    assert rows[3].scores.mae == rows[2].scores.mae  # token scores all put on "4"
    assert llm.calls[:7] == ["predict", "token", "alignment", "known", "fact", "novelty", "predict"]
    table = rinobench.table_rows(rows)
    assert table[2][4] == pytest.approx(100 * model.scores.macro_f1, abs=0.05) and table[2][11] == 0.7


def test_garbage_timeouts_and_a_dead_backend_are_counted_never_guessed():
    def answers(n: int) -> str:
        if n == 1:
            return "Sure! I would rate this a 4."
        if n == 2:
            raise LLMBadOutput("the embedded model's JSON answer was cut off at max_tokens=320: raise max_tokens")
        return '{"novelty_reasoning": "fine", "novelty_score": 9}'

    llm = ScriptedLLM(answers, score_probs=(0, 0, 0, 0, 0), down_from=4)
    p = RinoLLM(llm, BUDGET)
    items = sample_items((3, 4, 2, 5, 1, 2, 3, 3))
    outcomes = rinobench.evaluate(items, p, p)
    kinds = [o.prediction.failure.kind for o in outcomes]
    assert kinds == ["unparsed"] * 3 + ["error"] * 5
    assert "not asked" in outcomes[-1].prediction.failure.detail and p.unavailable
    assert all(o.justification is None for o in outcomes)
    model = rinobench.rows_for(items, outcomes, "broken")[2]
    assert (model.unparsed, model.errors, model.scores.answered, model.scores.mae) == (3, 5, 0, None)
    assert model.scores.macro_f1 == 0.0 and model.justification is None
    # calls stop after three unavailable answers in a row (item 4's two, item 5's prediction);
    # a uniform answer over the digits reads as no token score
    assert llm.calls.count("predict") == 5 and llm.calls.count("token") == 4
    assert [o.token.failure.kind for o in outcomes] == ["unparsed"] * 3 + ["error"] * 5


def test_judge_garbage_is_counted_per_step():
    llm = ScriptedLLM(lambda n: '{"novelty_reasoning": "r", "novelty_score": 3}', known="not json at all",
                      fact='{"checked_claims": []}',
                      novelty='{"predicted_aspects": [{"aspect": "new", "supported_in_gold": false}], "gold_aspects": []}')
    p = RinoLLM(llm, BUDGET)
    j = p.judge(sample_items((3,))[0], "r")
    assert j.known.comparison is None and j.known.failure.kind == "unparsed"
    assert j.novelty.comparison is not None and j.novelty.grounded is None and j.novelty.failure.kind == "unparsed"
    m = item_justification(j)
    assert m.known_recall is None and m.novelty_recall == 0.0 and m.novelty_hallucination is None


# -- the command -------------------------------------------------------------------------------

def test_cli_prints_baselines_beside_the_model_and_writes_json(tmp_path, monkeypatch, capsys):
    from peerlint.server.cli import main

    llm = ScriptedLLM(lambda n: '{"novelty_reasoning": "Known parts exist.", "novelty_score": 3}')
    monkeypatch.setattr(rinobench, "_llm", lambda backend, model, host: llm)
    assert main(["bench", "rinobench", "--data", str(SAMPLE), "--limit", "3", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    for row in ("constant-3", "majority-class", "scripted JSON", "scripted token-prob"):
        assert row in out
    assert "majority class = most frequent gold score of the evaluated items" in out
    result = json.loads(next(tmp_path.glob("rinobench-*.json")).read_text())
    assert result["dataset"]["evaluated"] == 3 and result["dataset"]["is_shipped_sample"]
    assert [r["name"] for r in result["rows"]][:2] == ["constant-3", "majority-class (2)"]  # gold 1, 2, 2
    assert result["items"][0]["prediction"]["score"] == 3 and result["commit"]


@pytest.mark.parametrize("argv,message", [
    ([], "give the RINoBench split with --data FILE"),
    (["--data", "/nonexistent/test.json"], "no such file: /nonexistent/test.json"),
])
def test_cli_user_errors_are_one_line(argv, message, capsys):
    from peerlint.server.cli import main

    assert main(["bench", "rinobench", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [err[0]] and err[0].startswith("peerlint: error: ") and message in err[0]


@needs_model
def test_embedded_model_gives_a_defined_answer_on_a_sample_item():
    from peerlint.llm.select import make_llm

    llm = make_llm("embedded", cache=False)
    item = read_rinobench(SAMPLE).items[0]
    small = Budget(works_chars=1200, abstract_chars=500, predict_tokens=160)  # two works: a shorter, cheaper prompt
    outcome = rinobench.evaluate([item], RinoLLM(llm, small), None)[0]
    assert (outcome.prediction.score in (1, 2, 3, 4, 5)) != (outcome.prediction.failure is not None)
    assert (outcome.prediction.works_shown, outcome.prediction.works_total) == (2, 4)
    assert sum(outcome.token.probs) == pytest.approx(1.0) and outcome.token.score in (1, 2, 3, 4, 5)
