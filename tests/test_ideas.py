"""Ideas: reading files (.jsonl/.txt/.tex items with exact ranges), dedup, the Swiss tournament,
the NOVA novelty check (fake and embedded LLMs, on the session test index) and the CLI."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from typing import Sequence

import numpy as np
import pytest

from conftest import REPO
from llm_fixtures import closed_port, loopback, needs_model  # noqa: F401  (loopback: a pytest fixture)
from peerlint.analyzers.ideas.idea_file import Idea, dedup, read_ideas, tex_items
from peerlint.llm.base import ChoiceScores, GenerateParams, LLMBadOutput, LLMUnavailable, normalise_logprobs
from peerlint.analyzers.ideas.nova_check import check_idea
from peerlint.analyzers.ideas.comparators import HybridComparator, LLMComparator, Preference, ScoreComparator
from peerlint.analyzers.ideas.tournament import (auroc, default_comparator, rank_items, swiss_tournament,
                                           top_half_accuracy)

ENV = {**os.environ, "HF_HUB_OFFLINE": "1"}

TEX = r"""\documentclass{article}
\newcommand{\method}{FooNet}
\begin{document}
\section{Introduction}
Our contributions are:
\begin{itemize}
  \item We propose \method, a graph network for $x$-ray scans~\cite{a,b}. % why
  \item A benchmark of 10k scans,
  spanning two hospitals.
  % \item commented out
  \item[(c)] An analysis with nested points:
    \begin{enumerate}
      \item first nested
      \item second nested
    \end{enumerate}
  \item
\end{itemize}
\begin{verbatim}
\begin{itemize} \item not an item \end{itemize}
\end{verbatim}
\iffalse
\begin{itemize} \item hidden \end{itemize}
\fi
\end{document}
"""


# -- reading ideas --------------------------------------------------------------------------------

def test_tex_items_have_exact_source_ranges(tmp_path):
    path = tmp_path / "contrib.tex"
    path.write_text(TEX)
    found = read_ideas(path)
    texts = [i.text for i in found.ideas]
    assert texts == ["We propose FooNet, a graph network for [math]-ray scans [cite].",
                     "A benchmark of 10k scans, spanning two hospitals.",
                     "(c) An analysis with nested points: first nested second nested"]
    assert found.skipped == {"no text": 1}  # the empty \item
    lines = TEX.splitlines()
    for idea in found.ideas:
        src = TEX[idea.start:idea.end]
        assert src.startswith("\\item") and not src.endswith((" ", "\n")) and "%" not in src.splitlines()[-1]
        start, end = idea.range.start, idea.range.end
        assert lines[start.line][start.character:].startswith("\\item")
        assert idea.line == start.line + 1
        assert lines[end.line][:end.character] == (src.splitlines()[-1] if end.line != start.line
                                                   else lines[start.line][:end.character])
    assert TEX[found.ideas[0].start:found.ideas[0].end].endswith("scans~\\cite{a,b}.")
    assert TEX[found.ideas[2].start:found.ideas[2].end].endswith("\\end{enumerate}")
    # CRLF line ends: same items, ranges still exact
    crlf = TEX.replace("\n", "\r\n")
    items = tex_items(crlf)
    assert [i.text for i in items if i.text] == texts
    assert all(crlf[i.start:i.end].startswith("\\item") for i in items)
    assert tex_items("no lists at all") == [] and tex_items("") == []


def test_jsonl_and_text_files(tmp_path):
    jl = tmp_path / "ideas.jsonl"
    jl.write_text("\n".join([
        json.dumps({"id": "a", "text": "Sparse attention for long documents."}),
        json.dumps({"title": "Graph nets", "abstract": "We learn on graphs."}),
        json.dumps({"title": "Only a title"}),
        json.dumps({"text": "   "}),
        "{not json",
        json.dumps(42),
        json.dumps("A bare string idea."),
    ]) + "\n")
    found = read_ideas(jl)
    assert [i.id for i in found.ideas] == ["a", "ideas.jsonl:2", "ideas.jsonl:3", "ideas.jsonl:7"]
    assert found.ideas[1].text == "Graph nets. We learn on graphs." and found.ideas[1].title == "Graph nets"
    assert found.skipped == {"no text": 1, "malformed JSON line": 1, "not an object or a string": 1}
    txt = tmp_path / "ideas.txt"
    txt.write_text("First idea\nspans two lines.\n\n\n   \nSecond idea.\n")
    got = read_ideas(txt).ideas
    assert [(i.text, i.line) for i in got] == [("First idea spans two lines.", 1), ("Second idea.", 6)]
    assert read_ideas(tmp_path / "empty.txt", text="").ideas == []


def _toy_embed(texts: Sequence[str]) -> np.ndarray:
    """Bag of words over a tiny vocabulary: deterministic cosines for the dedup test."""
    vocab = ["graph", "attention", "sparse", "long", "documents", "nets", "vision", "speech", "fast"]
    out = np.array([[t.lower().count(w) for w in vocab] for t in texts], dtype=np.float32) + 1e-6
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def test_dedup_merges_at_cosine_0_8_and_counts():
    ideas = [Idea("a", "Sparse attention for long documents"), Idea("b", "graph nets for vision"),
             Idea("c", "sparse  ATTENTION for long documents"),  # same text: merged without embedding
             Idea("d", "Sparse attention for long documents, fast"),  # cosine 0.89 to a
             Idea("e", "speech"), Idea("f", "graph nets for speech")]  # cosine 0.75 to b: kept
    d = dedup(ideas, _toy_embed)
    assert [i.id for i in d.kept] == ["a", "b", "e", "f"] and d.merged == 2
    assert d.groups == {"a": ("c", "d")} and d.kept[0].merged == ("c", "d")
    assert d.vectors.shape == (4, 9)
    assert dedup([], _toy_embed).merged == 0


def test_dedup_with_minilm(vector_index):
    ideas = [Idea("a", "We propose a graph neural network for predicting molecular properties."),
             Idea("b", "We propose a graph neural network that predicts the properties of molecules."),
             Idea("c", "A corpus of Swahili speech recordings for automatic speech recognition.")]
    d = dedup(ideas, vector_index)
    assert [i.id for i in d.kept] == ["a", "c"] and d.merged == 1


# -- the tournament -------------------------------------------------------------------------------

class Planted:
    """A deterministic comparator that knows each idea's hidden quality; `bias` favours the first shown."""

    name = "planted"

    def __init__(self, quality: dict[str, float], bias: float = 0.0, sharpness: float = 3.0):
        self.quality, self.bias, self.sharpness, self.calls = quality, bias, sharpness, 0

    def prefer(self, first: Idea, second: Idea) -> Preference:
        self.calls += 1
        z = self.sharpness * (self.quality[first.id] - self.quality[second.id]) + self.bias
        return Preference(1 / (1 + math.exp(-z)))


def _ideas(n: int) -> list[Idea]:
    return [Idea(f"i{k}", f"idea number {k}") for k in range(n)]


def test_swiss_tournament_recovers_a_planted_order():
    ideas = _ideas(32)
    quality = {i.id: k / 31 for k, i in enumerate(ideas)}  # i31 best
    comp = Planted(quality)
    r = swiss_tournament(ideas, comp, rounds=5, seed=1)
    assert comp.calls == 5 * 16 * 2 and r.counts["comparisons"] == 80 and r.counts["answers"] == 160
    truth = [quality[i.id] for i in ideas]
    top = [ideas[i].id for i in r.order[:8]]
    assert auroc(r.score_vector(), [q >= 0.5 for q in truth]) > 0.9
    assert top_half_accuracy(r.order, [q >= 0.5 for q in truth]) >= 0.8
    assert "i31" in top[:4] and all(quality[t] > 0.5 for t in top)
    assert max(r.points) <= 5 and sum(r.points) == 5 * 16  # one point per match
    # deterministic for a seed, different draw for another
    assert swiss_tournament(ideas, Planted(quality), 5, seed=1).order == r.order
    first_round = lambda rk: {(m.a, m.b) for m in rk.matches if m.round == 1}
    assert first_round(swiss_tournament(ideas, Planted(quality), 5, seed=2)) != first_round(r)
    # pairing by current score: in round 2 winners meet winners
    for m in (m for m in r.matches if m.round == 2):
        won_a = any(x.winner == m.a for x in r.matches if x.round == 1)
        won_b = any(x.winner == m.b for x in r.matches if x.round == 1)
        assert won_a == won_b


def test_both_orders_cancel_a_position_bias():
    ideas = _ideas(16)
    quality = {i.id: k / 15 for k, i in enumerate(ideas)}
    biased = Planted(quality, bias=2.5, sharpness=2.0)  # the first shown idea wins nearly every single ask
    one = swiss_tournament(ideas, biased, 5, seed=0, both_orders=False)
    both = swiss_tournament(ideas, Planted(quality, bias=2.5, sharpness=2.0), 5, seed=0)
    labels = [quality[i.id] >= 0.5 for i in ideas]
    assert auroc(both.score_vector(), labels) > auroc(one.score_vector(), labels)
    assert auroc(both.score_vector(), labels) > 0.85
    assert both.counts["inconsistent_orders"] > 0  # the bias is visible in the counts


def test_byes_ties_and_degenerate_sizes():
    ideas = _ideas(7)
    r = swiss_tournament(ideas, Planted({i.id: 0.0 for i in ideas}), rounds=5, seed=3)  # every match a tie
    byes = [m.a for m in r.matches if m.outcome == "bye"]
    assert len(byes) == 5 and len(set(byes)) == 5  # one bye per round, never twice to one idea
    assert r.counts["ties"] == r.counts["comparisons"] == 15 and r.counts["decided"] == 0
    assert set(r.points) == {2.5} and set(r.ranks) == {1} and r.counts["tied_ideas"] == 7
    for rnd in range(1, 6):
        seen = [x for m in r.matches if m.round == rnd for x in (m.a, m.b) if x is not None]
        assert sorted(seen) == list(range(7))  # everyone plays or sits out exactly once a round
    assert swiss_tournament([], Planted({}), 5).order == ()
    solo = swiss_tournament(_ideas(1), Planted({"i0": 0}), 5)
    assert solo.order == (0,) and solo.counts["comparisons"] == 0
    two = swiss_tournament(_ideas(2), Planted({"i0": 0, "i1": 1}), 5)
    assert two.counts["rematches"] == 4 and two.order[0] == 1


class FlakyLLM:
    """Answers a tournament or NOVA prompt badly: timeouts, unparsable JSON, answers off the list."""

    name, model = "fake", "flaky"

    def __init__(self, modes: Sequence[str]):
        self.modes, self.calls = list(modes), 0

    def _mode(self) -> str:
        mode = self.modes[self.calls % len(self.modes)]
        self.calls += 1
        return mode

    def score(self, prompt: str, choices: Sequence[str], system: str | None = None) -> ChoiceScores:
        mode = self._mode()
        if mode == "timeout":
            raise LLMUnavailable("Ollama at http://127.0.0.1:1 did not answer within 1 s: raise the LLM timeout")
        if mode == "builtin-timeout":
            raise TimeoutError("timed out")
        if mode == "off-list":  # e.g. a backend without log-probabilities whose text matched no choice
            return normalise_logprobs(choices, [-math.inf] * len(choices))
        if mode == "yes":
            return normalise_logprobs(choices, [0.0] + [-5.0] * (len(choices) - 1))
        return normalise_logprobs(choices, [-1.0, -0.5][: len(choices)])

    def generate(self, prompt: str, params: GenerateParams = GenerateParams()) -> str:
        mode = self._mode()
        if mode in ("timeout", "builtin-timeout"):
            raise LLMUnavailable("Ollama at http://127.0.0.1:1 did not answer within 1 s")
        if mode == "garbage":
            raise LLMBadOutput("the model returned text that is not JSON for a JSON request")
        if params.json_schema and "searches" in params.json_schema.get("properties", {}):
            return json.dumps({"searches": [{"description": "graph neural networks", "keywords": ["molecules"]},
                                            {"description": 7}]})
        return json.dumps({"thinking": "same", "result": "Maybe"})


def test_garbage_and_timeouts_are_counted_never_guessed():
    ideas = _ideas(6)
    llm = FlakyLLM(["timeout", "off-list", "ok", "builtin-timeout", "ok", "ok"])
    r = swiss_tournament(ideas, LLMComparator(llm), rounds=3, seed=0)
    c = r.counts
    assert c["answers"] == 18 and c["timeout"] == 6 and c["unparsed"] == 3
    assert c["decided"] + c["ties"] + c["no_answers"] == c["comparisons"] == 9
    for m in r.matches:
        if all(p.p_first is None for p in m.orders):
            assert m.outcome == "no-answer" and m.winner is None
    assert sum(r.points) == 9
    # a hybrid keeps scoring through LLM failures with its scorer, and still counts them
    scorer = ScoreComparator(lambda texts: np.array([float(t.split()[-1]) for t in texts]), "by-number")
    h = swiss_tournament(ideas, HybridComparator(LLMComparator(FlakyLLM(["timeout"])), scorer), rounds=3, seed=0)
    assert h.counts["timeout"] == 18 and h.counts["no_answers"] == 0 and h.order[0] == 5


def test_rank_items_skips_empty_ideas_and_merges_duplicates():
    ideas = [Idea("a", "graph nets"), Idea("b", ""), Idea("c", "Graph   nets"), Idea("d", "speech"), Idea("e", "vision")]
    scorer = ScoreComparator(lambda texts: np.array([len(t) for t in texts], dtype=float), "length")
    r = rank_items(ideas, None, _toy_embed, rounds=3, comparator=scorer)
    assert r.skipped == {"no text": 1} and r.merged == 1 and len(r.ideas) == 3
    assert r.ideas[r.order[0]].id == "a" and r.ideas[r.order[0]].merged == ("c",)
    assert json.loads(json.dumps(r.to_json()))["ranking"][0]["id"] == "a"


def test_default_comparator_follows_the_measurement():
    class Ollama:
        name = "ollama"

    class Embedded:
        name = "embedded"

    assert default_comparator(Ollama(), object()) == "hybrid"
    assert default_comparator(Embedded(), object()) == "embedding"  # SmolLM2-135M measured at chance
    assert default_comparator(None, object()) == "embedding" and default_comparator(Embedded(), None) == "llm"
    with pytest.raises(ValueError):
        default_comparator(None, None)


def test_blend_sums_standardised_scores_on_the_first_batch_scale():
    from peerlint.analyzers.ideas.comparators import Blend

    lengths = lambda ts: [float(len(t)) for t in ts]  # noqa: E731
    words = lambda ts: [10.0 * len(t.split()) for t in ts]  # noqa: E731
    blend = Blend([lengths, words])
    texts = ["a b", "aaaa bbbb cccc", "a"]
    got = blend(texts)
    want = sum((np.array(f(texts)) - np.mean(f(texts))) / np.std(f(texts)) for f in (lengths, words))
    assert got == pytest.approx(want) and got.argmax() == 1 and got.argmin() == 2
    # a later lone text is read on the first batch's scale, not standardised against itself (that would be 0)
    assert blend(["aaaa bbbb cccc"])[0] == pytest.approx(got[1])
    with pytest.raises(ValueError):
        Blend([])


def test_standardised_sum_is_a_sum_of_z_scores_and_survives_constant_scores():
    from peerlint.analyzers.ideas.comparators import standardised_sum

    a, b = np.array([1.0, 2.0, 6.0]), np.array([30.0, 10.0, 20.0])
    want = (a - a.mean()) / a.std() + (b - b.mean()) / b.std()
    assert standardised_sum([a, b]) == pytest.approx(want)
    flat = standardised_sum([np.array([4.0, 4.0, 4.0]), a])  # sd 0: that part adds nothing, no division by 0
    assert np.isfinite(flat).all() and flat == pytest.approx((a - a.mean()) / a.std())


def test_cli_comparator_choices_match_the_comparators():
    """The parser holds its own list (it keeps imports light): it must name exactly the comparators."""
    from peerlint.analyzers.ideas.comparators import COMPARATORS, NEEDS_INDEX, NEEDS_LLM
    from peerlint.server.cli import build_parser

    parser = build_parser()
    ideas = next(a for a in parser._subparsers._group_actions[0].choices["ideas"]._actions
                 if a.dest == "ideas_command")
    rank = next(a for a in ideas.choices["rank"]._actions if a.dest == "comparator")
    assert set(rank.choices) == {"auto", *COMPARATORS}
    assert set(NEEDS_LLM) | set(NEEDS_INDEX) == set(COMPARATORS)


def test_fluency_score_needs_a_backend_that_scores_text(tmp_path):
    from peerlint.analyzers.drafts.fluency import FluencyScore
    from peerlint.llm.cache import CachedLLM

    class NoLoglik:
        name = "ollama"

    with pytest.raises(LLMUnavailable, match="likelihood"):
        FluencyScore(NoLoglik())
    # the cache always has a `loglik` (it forwards): the backend behind it is what is asked, at once
    with pytest.raises(LLMUnavailable, match="ollama backend cannot score"):
        FluencyScore(CachedLLM(NoLoglik(), cache_dir=tmp_path))
    from peerlint.analyzers.ideas.comparators import make_comparator

    with pytest.raises(ValueError, match="needs an LLM"):
        make_comparator("prior", None, object())


@needs_model
def test_prior_comparator_prefers_fluent_on_topic_text(vector_index):
    """The prior ranks a real abstract above the same words shuffled: fluency decides, topicality ties."""
    import random as _random

    from peerlint.analyzers.ideas.comparators import make_comparator
    from peerlint.llm.embedded import EmbeddedLLM

    paper = vector_index.paper(0)
    words = paper.abstract.split()
    shuffled = words[:]
    _random.Random(0).shuffle(shuffled)
    ideas = [Idea("real", paper.abstract), Idea("shuffled", " ".join(shuffled)), Idea("off", "Buy two, get one free!")]
    comp = make_comparator("prior", EmbeddedLLM(), vector_index)
    assert comp.name.startswith("prior:topicality(") and "fluency(embedded:" in comp.name
    comp.prepare(ideas)
    assert comp.value(ideas[0]) > comp.value(ideas[1]) and comp.value(ideas[0]) > comp.value(ideas[2])
    assert comp.prefer(ideas[0], ideas[1]).p_first > 0.5


# -- the NOVA check -------------------------------------------------------------------------------

def test_nova_guard_and_named_offending_papers(vector_index):
    paper = next(vector_index.paper(i) for i in range(len(vector_index)) if vector_index.paper(i).venue == "ICLR")
    yes = FlakyLLM(["yes"])  # a model that says "Yes" to everything
    v = check_idea(f"{paper.title}. {paper.abstract}", vector_index, yes, rounds=0)
    assert v.novel is False and v.offending[0].id == paper.id and v.offending[0].similarity > 0.95
    assert v.offending[0].venue == "ICLR" and v.offending[0].year == 2017 and v.offending[0].title == paper.title
    assert v.counts["papers"] == 10 and v.counts["duplicate"] >= 1 and "Not novel" in v.message()
    far = check_idea("A recipe for sourdough bread with rye flour, baked in a cast-iron pot for forty minutes.",
                     vector_index, FlakyLLM(["yes"]), rounds=0)
    assert far.novel is True and far.counts["asked"] == 0 and far.counts["below_floor"] == 10  # the floor guard
    unguarded = check_idea("A recipe for sourdough bread with rye flour, baked in a cast-iron pot for forty minutes.",
                           vector_index, FlakyLLM(["yes"]), rounds=0, floor=0.0, same_above=None)
    assert unguarded.novel is False and unguarded.counts["yes"] == 10  # what the guard prevents
    empty = check_idea("  ", vector_index, yes)
    assert empty.novel is None and empty.counts["empty"] == 1 and empty.label == "undetermined"


def test_nova_timeouts_and_garbage_are_undetermined(vector_index):
    llm = FlakyLLM(["garbage", "timeout", "ok"])  # plans: garbage, timeout; judgments: timeouts, off-list answers
    v = check_idea("Graph neural networks that predict the properties of molecules from their structure.",
                   vector_index, llm, rounds=2, floor=0.0, same_above=None, judge="json")
    c = v.counts
    assert v.novel is None and v.offending == () and "Undetermined" in v.message()
    assert c["plan_rounds"] == 2 and c["plan_unparsed"] == 1 and c["plan_timeout"] == 1
    assert c["asked"] == 10 and c["unparsed"] + c["timeout"] == 10 and c["yes"] == 0
    planned = check_idea("Graph neural networks for molecules.", vector_index, FlakyLLM(["ok"]), rounds=1,
                         floor=0.0, same_above=None, judge="json")
    assert len(planned.queries) == 2 and planned.queries[1] == "graph neural networks molecules"
    assert len({j.paper.id for j in planned.judgments}) == 10
    assert json.loads(json.dumps(planned.to_json()))["verdict"] == "undetermined"


@needs_model
def test_nova_check_with_the_embedded_model(vector_index):
    from peerlint.llm.embedded import EmbeddedLLM

    llm = EmbeddedLLM()
    paper = next(vector_index.paper(i) for i in range(len(vector_index)) if vector_index.paper(i).venue == "NAACL")
    v = check_idea(f"{paper.title}. {paper.abstract}", vector_index, llm, rounds=1, floor=0.6)
    assert v.novel is False and paper.id in {h.id for h in v.offending}
    c = v.counts
    assert c["plan_rounds"] == 1 and c["papers"] == 10
    assert c["asked"] == c["yes"] + c["no"] + c["unparsed"] + c["timeout"] + c["error"]
    assert c["timeout"] == c["error"] == 0 and v.judge == "score"
    assert all(j.p_yes is not None and 0 < j.p_yes < 1 for j in v.judgments if j.status == "ok")


@needs_model
def test_nova_check_through_ollama_uses_json_schemas(vector_index, loopback):  # noqa: F811
    """The Ollama path: the plan and the A.5 judgment are decoded with `format=` their JSON schema."""
    from peerlint.llm.ollama_backend import OllamaLLM

    llm = OllamaLLM(host=loopback.host)
    v = check_idea("Graph neural networks that predict the properties of molecules.", vector_index, llm,
                   rounds=1, k=2, floor=0.0, same_above=None)
    assert v.judge == "json" and v.counts["asked"] == 2 and v.counts["plan_rounds"] == 1
    assert v.counts["yes"] + v.counts["no"] + v.counts["unparsed"] == 2 and v.counts["timeout"] == v.counts["error"] == 0
    assert all(j.same in (True, False) for j in v.judgments if j.status == "ok")


@needs_model
def test_tournament_with_the_embedded_model_parses_every_answer():
    from peerlint.llm.embedded import EmbeddedLLM

    ideas = [Idea("a", "We propose a graph network for molecules and beat ten baselines."),
             Idea("b", "We study sparse attention for long documents."),
             Idea("c", "A dataset of Swahili speech."), Idea("d", "We fine-tune BERT on reviews.")]
    r = swiss_tournament(ideas, LLMComparator(EmbeddedLLM()), rounds=1, seed=0)
    assert r.counts["answers"] == 4 and r.counts["unparsed"] == r.counts["timeout"] == r.counts["error"] == 0
    assert all(0 < p.p_first < 1 for m in r.matches for p in m.orders)


# -- the CLI --------------------------------------------------------------------------------------

def peerlint(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "peerlint", *args], capture_output=True, text=True, cwd=REPO,
                          env=ENV, timeout=300)


def test_cli_rank_tex_items(index_path, tmp_path):
    path = tmp_path / "contrib.tex"
    path.write_text(TEX)
    out = peerlint("ideas", "rank", str(path), "--index", str(index_path), "--comparator", "embedding", "--json")
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert len(got["ranking"]) == 3 and got["skipped"] == {"no text": 1} and got["counts"]["byes"] == 5
    assert {r["range"]["start"]["line"] for r in got["ranking"]} == {6, 7, 10}
    table = peerlint("ideas", "rank", str(path), "--index", str(index_path), "--comparator", "embedding")
    assert table.returncode == 0 and table.stdout.splitlines()[0].split() == ["rank", "points", "buchholz", "line", "idea"]
    assert "1 skipped (no text)" in table.stderr


def test_cli_check_with_an_unreachable_llm_never_crashes(index_path, tmp_path):
    from peerlint.index.store import open_index

    paper = open_index(index_path).paper(3)
    path = tmp_path / "ideas.jsonl"
    path.write_text(json.dumps({"title": paper.title, "abstract": paper.abstract}) + "\n"
                    + json.dumps({"text": ""}) + "\n" + json.dumps({"text": "Sourdough bread with rye flour."}) + "\n")
    host = f"http://127.0.0.1:{closed_port()}"
    out = peerlint("ideas", "check", str(path), "--index", str(index_path), "--backend", "ollama", "--host", host,
                   "--rounds", "1", "--json")
    assert out.returncode == 0, out.stderr
    ideas = json.loads(out.stdout)["ideas"]
    assert [i["verdict"] for i in ideas] == ["not novel", "novel"]  # the guard decides both
    assert ideas[0]["offending"][0]["id"] == paper.id and ideas[0]["counts"]["plan_error"] == 1
    table = peerlint("ideas", "check", str(path), "--index", str(index_path), "--backend", "ollama", "--host", host,
                     "--rounds", "0", "--floor", "0", "--same-above", "2")
    assert table.returncode == 0 and "undetermined" in table.stdout and "errors" in table.stderr
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n")
    # no idea: answered before the index opens or a model loads (a missing index is no error then)
    nothing = peerlint("ideas", "check", str(empty), "--index", str(tmp_path / "no-index"), "--backend", "ollama",
                       "--host", host)
    assert nothing.returncode == 0 and nothing.stdout == "no ideas to check\n", nothing.stderr  # was a KeyError
    assert nothing.stderr == ""
    as_json = peerlint("ideas", "check", str(empty), "--index", str(tmp_path / "no-index"), "--json")
    assert as_json.returncode == 0 and json.loads(as_json.stdout)["ideas"] == [], as_json.stderr
    missing = peerlint("ideas", "rank", str(tmp_path / "nope.txt"))
    assert missing.returncode == 2 and missing.stderr.startswith("peerlint: error:")
    # the prior comparator reads likelihoods, which Ollama's API cannot give: a clear error, no traceback
    prior = peerlint("ideas", "rank", str(path), "--index", str(index_path), "--comparator", "prior",
                     "--backend", "ollama", "--host", host)
    assert prior.returncode == 2 and "prior comparator reads each idea's likelihood" in prior.stderr
    assert "use --backend embedded" in prior.stderr and "Traceback" not in prior.stderr


# -- the tournament bench -------------------------------------------------------------------------

def test_bench_tournament_rows_json_and_missing_reference(tmp_path, monkeypatch, capsys):
    """A small real corpus: 16 + 16 ICLR 2017 decisions and 40 NeurIPS 2016 abstracts as the reference."""
    from peerlint.llm.base import LogLik
    from conftest import shipped_papers
    from peerlint.server.cli import main

    class Fluent:
        name, model = "fake", "loglik"

        def loglik(self, prompt: str, text: str) -> LogLik:
            return LogLik(-float(len(set(text.split()))), len(text.split()))

    papers = shipped_papers()
    iclr = [p for p in papers if p.venue == "ICLR" and p.year == 2017]
    chosen = ([p for p in iclr if p.status in ("Poster", "Oral")][:16] + [p for p in iclr if p.status == "Reject"][:16]
              + [p for p in iclr if p.status == "Workshop"][:2]
              + [p for p in papers if p.venue == "NeurIPS" and p.year == 2016][:40])
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(json.dumps({"id": p.id, "title": p.title, "abstract": p.abstract, "venue": p.venue,
                                            "year": p.year, "status": p.status}) for p in chosen) + "\n")
    monkeypatch.setenv("PEERLINT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr("peerlint.benchmarks.tournament.bench.make_llm", lambda *a, **k: Fluent())
    common = ["--corpus", str(corpus), "--index", str(tmp_path / "index"), "--out", str(tmp_path / "results")]
    assert main(["bench", "tournament", "--n", "16", "--resamples", "2", "--variants", "random,embedding,prior",
                 *common]) == 0
    [path] = list((tmp_path / "results").glob("tournament-*.json"))
    record = json.loads(path.read_text())
    assert record["dataset"]["accepted"] == record["dataset"]["rejected"] == 8 and record["commit"]
    rows = {r["variant"].split(":")[0]: r for r in record["rows"]}
    assert set(rows) == {"random ranking", "embedding-only", "prior"}
    assert rows["prior"]["variant"].endswith("fluency(fake:loglik)")
    assert rows["prior"]["whole_year"]["n"] == 32  # workshop papers are neither accepted nor rejected
    for r in record["rows"]:
        assert 0.0 <= r["accuracy"] <= 1.0
    # no reference papers before 2014 in this corpus: a clear error, exit 2, no traceback
    assert main(["bench", "tournament", "--year", "2014", *common]) == 2
    assert "has too few accepted and rejected" in capsys.readouterr().err
    monkeypatch.setattr("peerlint.benchmarks.tournament.bench.balanced_sample",
                        lambda papers, n, seed: [(p, i % 2 == 0) for i, p in enumerate(chosen[:8])])
    assert main(["bench", "tournament", "--year", "2013", "--variants", "embedding", *common]) == 2
    assert "no papers from 2008-2012" in capsys.readouterr().err
