"""Hybrid retrieval on the real test index: BM25 beside MiniLM, fused; filters; bad input; old indexes.

The session index (`conftest.vector_index`) holds ~2,400 real shipped abstracts, NAACL 2021 among
them, so the *Dense retrieval* paragraph of examples/draft.tex can look for the RocketQA paper it
cites, which MiniLM alone ranks below three unrelated papers (issue 22).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import sqlite3
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from peerlint.retrieval import hybrid
from peerlint.retrieval.retriever import Retriever
from peerlint.index import lexical
from peerlint.index.papers import SearchFilter
from peerlint.index.store import open_index

from conftest import EXAMPLES

ROCKETQA = "RocketQA: An Optimized Training Approach to Dense Passage Retrieval"
FTS_SYNTAX = ['"unbalanced quote', "NEAR(dual encoders, 2)", "retriev*", "-passages", "title:retrieval",
              "(unbalanced (parentheses", "dual AND encoders OR NOT passages", '"', "*", ":", "-", "()", "NEAR",
              "AND", "a:b -c* NEAR/3 \"d\"", "^start", "{title abstract}: x", "+plus", "'single'"]
MATHS = ["", "   \n\t", "$x^2$", "\\alpha", "$\\sum_{i=1}^n x_i$ \\[ E = mc^2 \\]", "[math] [cite]", "42 7 1999"]


@pytest.fixture(scope="module")
def retriever(vector_index) -> Retriever:
    return Retriever(vector_index)


def _ids(hits) -> list[str]:
    return [h.paper.id for h in hits]


def _dense_retrieval_chunk():
    from peerlint.latex.parse import parse_document

    source = (EXAMPLES / "draft.tex").read_text()
    return next(c for c in parse_document(source, (EXAMPLES / "draft.tex").as_uri()) if "Dual encoders" in c.text)


# -- the paragraph ------------------------------------------------------------------------

def test_dense_retrieval_paragraph_retrieves_rocketqa_in_its_top_3(retriever):
    chunk = _dense_retrieval_chunk()
    assert retriever.mode == "hybrid"  # the default every consumer gets
    hits = retriever.neighbours([chunk], 3)[chunk.hash]
    assert any(h.paper.title.startswith(ROCKETQA) for h in hits), [h.paper.title for h in hits]


def test_similarity_stays_the_dense_cosine_and_score_is_the_fused_one(retriever, vector_index):
    chunk = _dense_retrieval_chunk()
    vector = retriever.vectors([chunk.text], [chunk.hash])[0]
    hits = retriever.search(vector, chunk.text, 20)
    exact = vector_index.best_chunks(vector, [vector_index.id_to_idx[h.paper.id] for h in hits])
    for h in hits:
        sim, key = exact[vector_index.id_to_idx[h.paper.id]]
        assert h.similarity == pytest.approx(sim, abs=1e-6)
        assert (h.chunk_start, h.chunk_end) == tuple(vector_index.chunk_spans[key])
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert any(h.score > h.similarity for h in hits)  # the BM25 share moved them
    dense = retriever.search(vector, chunk.text, 20, mode="dense")
    assert all(h.score == h.similarity for h in dense)
    assert [h.similarity for h in dense] == sorted((h.similarity for h in dense), reverse=True)


# -- lexical search ----------------------------------------------------------------------------

def test_lexical_finds_a_paper_by_a_rare_title_word(retriever, vector_index):
    df = Counter(t for i in range(len(vector_index)) for t in set(lexical.terms(vector_index.paper(i).text)))
    target, word = next((i, w) for i in range(len(vector_index))
                        for w in lexical.terms(vector_index.paper(i).title) if df[w] == 1 and len(w) >= 8 and w.isalpha())
    hits = retriever.search_text(word, 5, mode="lexical")
    assert _ids(hits) == [vector_index.ids[target]]  # one paper holds the word: BM25 returns exactly it
    assert hits[0].score > 0 and -1 <= hits[0].similarity <= 1
    assert vector_index.ids[target] in _ids(retriever.search_text(word, 3))  # and hybrid keeps it on top


@pytest.mark.parametrize("flt", [
    SearchFilter(venues=("coling",)),
    SearchFilter(year_min=2021),
    SearchFilter(before="2018"),
    SearchFilter(venues=("ICLR",), year_max=2017),
], ids=["venue", "year-min", "before", "venue+year"])
def test_filters_apply_to_lexical_hits_exactly(vector_index, flt):
    text = "neural networks for translation, parsing and question answering with attention"
    everything = vector_index.lexical_search(text, len(vector_index))
    mask = vector_index.allowed_mask(flt)
    expected = [p for p, _ in everything if mask[p]][:25]
    got = vector_index.lexical_search(text, 25, flt)
    assert [p for p, _ in got] == expected and len(got) == 25  # the filtered top-k, never starved by the filter
    first = vector_index.ids[expected[0]]
    excluded = vector_index.lexical_search(text, 25, dataclasses.replace(flt, exclude_ids=frozenset({first})))
    assert first not in [vector_index.ids[p] for p, _ in excluded]


def test_filters_hold_in_every_mode_and_published_before_is_applied(vector_index):
    chunk = _dense_retrieval_chunk()
    for mode in hybrid.MODES:
        hits = Retriever(vector_index, mode, before="2021").neighbours([chunk], 10)[chunk.hash]
        assert hits and all(h.paper.year < 2021 for h in hits), mode
        assert not any(h.paper.title.startswith(ROCKETQA) for h in hits)  # NAACL 2021: after the date
    r = Retriever(vector_index, before="2021")
    assert r.filter(SearchFilter(before="2017")).before == "2017"  # the earlier date wins
    assert r.filter(SearchFilter(before="2022-05-01", venues=("ACL",))) == SearchFilter(venues=("ACL",), before="2021")
    with pytest.raises(ValueError, match="year or an ISO date"):
        Retriever(vector_index, before="last spring")
    with pytest.raises(ValueError, match="dense, lexical, hybrid"):
        Retriever(vector_index, "bm25")


# -- bad input ----------------------------------------------------------------------------------

@pytest.mark.parametrize("query", FTS_SYNTAX)
def test_fts_query_syntax_in_user_text_never_raises(retriever, query):
    for mode in hybrid.MODES:
        assert isinstance(retriever.search_text(query, 5, mode=mode), list)


def test_fts_operators_are_plain_words(retriever):
    plain = _ids(retriever.search_text("dual encoders passages retrieval", 10, mode="lexical"))
    assert plain
    assert _ids(retriever.search_text('"dual" AND (encoders OR NOT passages*) NEAR retrieval:', 10, mode="lexical")) \
        == _ids(retriever.search_text("dual encoders passages retrieval near", 10, mode="lexical"))
    assert lexical.terms('NEAR "x" AND y* -z title:w') == ["near", "title"]  # 'and' is a stopword, 1-letter words carry nothing


@given(st.text(max_size=60) | st.lists(st.sampled_from(["Poincaré", "naïve", "ＡＢＣ", "ﬁne-tuning", "Ελληνικά", "中文",
                                                     "x\u0301", "İstanbul", "Đặng", "under_score", "GPT-4o", " ", "$x$",
                                                     "\\emph{word}", "[cite]", "models", "the"]), max_size=10).map(" ".join))
@settings(max_examples=300, deadline=None)
def test_terms_are_the_words_of_any_script_with_accents_dropped(text):
    """`terms`' fast route for ASCII text and its run-by-run accent stripping give what one pass over the
    whole decomposed text gives: words of letters and digits of any script, combining marks dropped."""
    import unicodedata

    cleaned = lexical._PLACEHOLDER.sub(" ", lexical._COMMAND.sub(" ", lexical._MATH.sub(" ", text))).lower()
    decomposed = "".join(ch for ch in unicodedata.normalize("NFKD", cleaned) if not unicodedata.combining(ch))
    expected = [w for w in map(lexical._content_stem, lexical._WORD.findall(decomposed)) if w]
    assert lexical.terms(text) == expected


@pytest.mark.parametrize("query", MATHS)
def test_empty_or_pure_math_queries_are_dense_only(retriever, query):
    assert retriever.search_text(query, 5, mode="lexical") == []
    dense = retriever.search_text(query, 5, mode="dense")
    assert _ids(retriever.search_text(query, 5)) == _ids(dense) and len(dense) == 5


def test_non_english_text(retriever):
    assert _ids(retriever.search_text("tránsformer", 10, mode="lexical")) == \
        _ids(retriever.search_text("transformer", 10, mode="lexical")) != []  # accents fold as they do in the index
    for text in ("Réseaux de neurones pour la traduction automatique", "Maschinelle Übersetzung mit Aufmerksamkeit",
                 "神经网络机器翻译", "Нейронный машинный перевод", "ترجمة آلية عصبية"):
        for mode in hybrid.MODES:
            hits = retriever.search_text(text, 5, mode=mode)
            assert isinstance(hits, list) and (mode == "lexical" or len(hits) == 5)


# -- an index built before lexical search existed -----------------------------------------------

@pytest.fixture()
def old_index(index_path, tmp_path) -> Path:
    """A copy of the session index as version 1 wrote it: no BM25 table, manifest version 1."""
    build = (index_path / "CURRENT").read_text().strip()
    root = tmp_path / "old"
    shutil.copytree(index_path / "builds" / build, root / "builds" / build)
    (root / "CURRENT").write_text(build)
    with sqlite3.connect(root / "builds" / build / "meta.sqlite") as db:
        db.execute(f"DROP TABLE {lexical.TABLE}")
    manifest = root / "builds" / build / "manifest.json"
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "version": 1}))
    return root


def test_old_index_falls_back_to_dense_with_one_warning(old_index, vector_index):
    index = open_index(old_index, vector_index.embedder)
    assert not index.has_lexical and "peerlint index build" in index.lexical_problem
    warnings: list[str] = []
    r = Retriever(index, warn=warnings.append)
    chunk = _dense_retrieval_chunk()
    hybrid_hits = r.neighbours([chunk], 5)[chunk.hash]
    assert _ids(hybrid_hits) == _ids(index.search(chunk.text, 5))
    assert r.search_text("dual encoders", 3, mode="lexical")  # dense answers, not nothing
    assert r.notice == index.lexical_problem and len(warnings) == 1 and "peerlint index build" in warnings[0]
    assert index.lexical_search("dual encoders", 5) == [] and index.lexical_scores("dual encoders") == {}
    assert Retriever(index, "dense").notice is None


def test_cli_search_on_an_old_index_warns_once_and_answers(old_index, capsys):
    from peerlint.server.cli import main

    assert main(["search", "dual encoders for passage retrieval", "-k", "3", "--json", "--index", str(old_index)]) == 0
    out, err = capsys.readouterr()
    assert len(json.loads(out)) == 3
    assert err.count("peerlint index build") == 1 and "Traceback" not in err


# -- fusion, settings, bench ------------------------------------------------------------------------

def test_fusion_arithmetic():
    assert hybrid.rrf_scores([[1, 2], [2, 3]], k=60) == pytest.approx({1: 1 / 61, 2: 1 / 62 + 1 / 61, 3: 1 / 62})
    cos, bm25 = {1: 0.5, 2: 0.4, 3: 0.3}, {2: 10.0, 3: 5.0}
    assert hybrid.weighted_scores(cos, bm25, "dense") == cos
    assert hybrid.weighted_scores(cos, bm25, "lexical") == {1: 0.0, 2: 1.0, 3: 0.5}
    assert hybrid.weighted_scores(cos, bm25, "hybrid", 0.2) == pytest.approx({1: 0.5, 2: 0.6, 3: 0.4})
    with pytest.raises(ValueError, match="weighted, rrf"):
        hybrid.Fusion("max")


def test_settings_validate_search_mode_and_published_before():
    from peerlint.server.config import updated
    from peerlint.settings import Settings

    warnings: list[str] = []
    s = updated(Settings(), {"searchMode": "lexical", "publishedBefore": "2019-06-01"}, warnings.append)
    assert (s.search_mode, s.published_before, warnings) == ("lexical", "2019-06-01", [])
    kept = updated(s, {"searchMode": "bm25", "publishedBefore": "2019-13-01"}, warnings.append)
    assert (kept.search_mode, kept.published_before) == ("lexical", "2019-06-01") and len(warnings) == 2
    assert updated(Settings(), {"published_before": 2018}, warnings.append).published_before == "2018"
    assert Settings().search_mode == hybrid.DEFAULT_MODE and Settings().published_before == "auto"


def test_service_applies_the_settings_to_its_retriever(index_path, tmp_path):
    from peerlint.server.service import Service

    service = Service(cache_dir=tmp_path)
    assert service.update_settings({"indexPath": str(index_path), "searchMode": "dense", "publishedBefore": "2020"},
                                   lambda m: None)
    r = service.retriever()
    assert (r.mode, r.before) == ("dense", "2020")
    service.update_settings({"searchMode": "hybrid", "publishedBefore": ""}, lambda m: None)
    assert service.retriever() is r and (r.mode, r.before) == ("hybrid", None)


def test_bench_rows_mark_the_default_and_report_mrr(index_path, vector_index, tmp_path, capsys):
    from peerlint.server.cli import main

    chunk = _dense_retrieval_chunk()
    rocketqa = next(vector_index.paper(i) for i in range(len(vector_index))
                    if vector_index.paper(i).title.startswith(ROCKETQA))
    truth = tmp_path / "truth.jsonl"
    truth.write_text(json.dumps({"id": "q", "text": chunk.text, "year": 2021, "cited": [rocketqa.id]}) + "\n")
    assert main(["bench", "related", "--truth", str(truth), "--index", str(index_path), "--stages", "first,hybrid",
                 "--weights", "0,0.3", "--out", str(tmp_path / "out")]) == 0
    [result] = [json.loads(p.read_text()) for p in (tmp_path / "out").glob("related-truth-*.json")]
    rows = {r["row"]: r for r in result["rows"]}
    assert {"dense", "lexical", "hybrid-rrf", "hybrid-weighted", "SEC (hybrid)", "hybrid-weighted w=0",
            "hybrid-weighted w=0.3"} == set(rows)
    assert [r["row"] for r in result["rows"] if r["default"]] == [f"hybrid-{hybrid.DEFAULT_FUSION}"]
    assert rows["hybrid-weighted w=0"]["recall"] == rows["dense"]["recall"]  # weight 0 is dense search
    assert rows["lexical"]["mrr"] == 1.0 and rows[f"hybrid-{hybrid.DEFAULT_FUSION}"]["mrr"] >= 1 / 3
    assert rows["dense"]["mrr"] < 1 / 3  # MiniLM alone ranks it below three other papers
    assert "* = the default first stage" in capsys.readouterr().out


def test_dense_retrieval_paragraph_is_no_longer_told_to_cite_unrelated_papers(vector_index, tmp_path):
    """The issue's `make demo` finding: dense SEC sent the paragraph to autoencoder and spoken-language papers.
    With the hybrid first stage its top papers include the RocketQA paper it cites, so no finding."""
    from peerlint.analyzers.engine import Engine
    from peerlint.analyzers.project_check import check_file
    from peerlint.settings import Settings

    shutil.copytree(EXAMPLES, tmp_path / "paper")
    found = {}
    for mode in ("hybrid", "dense"):
        # the pre-calibration operating point, where dense retrieval's autoencoder papers were shown
        settings = Settings(search_mode=mode, related_work_min_similarity=0.6, related_work_k=3)
        retriever = Retriever(vector_index, mode)
        result = check_file(tmp_path / "paper" / "draft.tex", Engine(settings, retriever=retriever), workspace=tmp_path)
        found[mode] = [j for j in result.judgments if j.code == "missing-related-work" and "Dual encoders" in j.chunk.text]
    assert found["hybrid"] == []
    assert found["dense"] and not any(h["title"].startswith(ROCKETQA) for h in found["dense"][0].evidence["uncited"])


# -- BM25 from the build's postings arrays ------------------------------------------------------

def test_postings_answer_as_fts5_does_and_fall_back_when_they_do_not_match(tmp_path):
    """The build writes its BM25 postings beside meta.sqlite; queries read them (numpy) and rank as FTS5
    does; postings that do not describe the table (another row count, damaged files) are not used."""
    from peerlint.benchmarks.related.placeholder import PlaceholderEmbedder
    from peerlint.index.build import build_index
    from peerlint.index.store import current_build

    from conftest import sample_papers

    papers = sample_papers()[:600]
    build_index(papers, tmp_path / "idx", embedder=PlaceholderEmbedder(), show_progress=False)
    index = open_index(tmp_path / "idx", PlaceholderEmbedder())
    assert index._lexical.postings is not None and index._lexical.postings.papers == 600
    queries = [p.abstract for p in papers[::60]] + ["dual encoders", '"NEAR(a* -b) OR', "$x^2$", ""]
    fts = lexical.Lexical.__new__(lexical.Lexical)
    fts.db, fts.papers, fts._lock, fts.postings = index._lexical.db, 600, index._lexical._lock, None
    fts.db.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{lexical.TABLE}_vocab USING fts5vocab(main, "
                   f"{lexical.TABLE}, row)")
    for q in queries:
        mine = index.lexical_search(q, 10)
        theirs = fts.query(q).top(10) if fts.query(q) is not None else []
        assert (mine == []) == (theirs == []), q
        if theirs:
            shared = {p for p, _ in mine} & {p for p, _ in theirs}
            assert mine[0][0] == theirs[0][0] and len(shared) >= 0.8 * len(theirs), q
    assert index.lexical_scores("dual encoders", SearchFilter(venues=frozenset({"no such venue"}))) == {}
    build = current_build(tmp_path / "idx")
    info = build / f"{lexical.POSTINGS}-info.json"
    info.write_text(json.dumps({**json.loads(info.read_text()), "papers": 599}))  # another table's postings
    assert open_index(tmp_path / "idx", PlaceholderEmbedder())._lexical.postings is None
    info.write_text("{not json")
    reopened = open_index(tmp_path / "idx", PlaceholderEmbedder())
    assert reopened._lexical.postings is None and reopened.lexical_search(papers[0].abstract, 3)[0][0] == 0


def test_an_append_extends_the_postings(tmp_path):
    """Adding papers to an index appends to its BM25 table and merges the postings: the new build's
    postings describe all its papers and rank as a fresh build's do."""
    from peerlint.benchmarks.related.placeholder import PlaceholderEmbedder
    from peerlint.index.build import build_index

    from conftest import sample_papers

    papers = sample_papers()[:400]
    build_index(papers[:300], tmp_path / "grown", embedder=PlaceholderEmbedder(), show_progress=False)
    assert build_index(papers, tmp_path / "grown", embedder=PlaceholderEmbedder(), show_progress=False).appended == 100
    build_index(papers, tmp_path / "fresh", embedder=PlaceholderEmbedder(), show_progress=False)
    grown = open_index(tmp_path / "grown", PlaceholderEmbedder())
    fresh = open_index(tmp_path / "fresh", PlaceholderEmbedder())
    assert grown.build.name != fresh.build.name and grown._lexical.postings is not None
    assert grown._lexical.postings.papers == 400
    for q in [papers[350].abstract, papers[10].title, "dual encoders for passage retrieval"]:
        assert grown.lexical_search(q, 10) == fresh.lexical_search(q, 10)


# -- a paper's own title ------------------------------------------------------------------------------


def test_a_papers_title_finds_that_paper_first(retriever, vector_index):
    """Typed as a query, every indexed title finds its paper first; without the title match 38 of the
    test index's titles did not, "Attention is All you Need" among them (MiniLM and BM25 rank papers
    about attention above it: its one content word is "attention")."""
    titles: dict[str, list[str]] = {}
    for i in range(len(vector_index)):
        paper = vector_index.paper(i)
        titles.setdefault(lexical_key(paper.title), []).append(paper.id)
    missed = [ids for i in range(len(vector_index))
              if (paper := vector_index.paper(i)) and _ids(retriever.search_text(paper.title, 3))[0]
              not in (ids := titles[lexical_key(paper.title)])]
    assert missed == []
    attention = "Attention is All you Need"
    vector = retriever.vectors([attention], ["attention-title"])[0]
    plain = retriever.search(vector, attention, 10)
    assert [h.paper.title for h in plain[:1]] != [attention]  # what the title match is for
    shouted = retriever.search_text("ATTENTION IS ALL YOU NEED.", 3)
    assert shouted[0].paper.title == attention and 0 < shouted[0].similarity < plain[0].similarity  # its own cosine
    assert attention not in [h.paper.title for h in retriever.search_text(attention, 3, SearchFilter(before="2017"))]
    assert attention not in [h.paper.title for h in retriever.search_text(attention, 3, SearchFilter(venues=("ACL",)))]
    long = attention + " " + " ".join(["and the transformer it introduced"] * 6)  # over 30 words: not a title
    assert hybrid.title_first(vector_index, vector, long, plain, 10) == plain
    for hostile in FTS_SYNTAX + MATHS:
        retriever.search_text(hostile or "x", 3)  # any text: an answer, never an FTS5 syntax error


def lexical_key(title: str) -> str:
    from peerlint.index.ingest.identity import normalise_title

    return normalise_title(title)
