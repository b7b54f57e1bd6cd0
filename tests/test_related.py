"""SEC related-work retrieval (SciPIP): entities, co-citation, clustering, the bench and its bad input.

Retrieval runs on the session's real test index (shipped abstracts); the clustering test builds a
six-paper index of real abstracts, one of them twice under two ids.
"""

from __future__ import annotations

import dataclasses

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from peerlint.retrieval.related_work import CitationGraph, RelatedWork, SECConfig
from peerlint.index import entities as ent
from peerlint.index.entities import EntityTable, extract_keyphrases, normalise, paper_entities
from peerlint.index.papers import Paper, SearchFilter

from conftest import SHARED

ACM = SHARED / "data" / "acm-cr"


# -- entities ---------------------------------------------------------------------------------

def test_normalise_meets_spelling_variants():
    assert normalise("Recommender-Systems") == normalise("recommender system") == "recommender system"
    assert normalise("Queries") == "query" and normalise("analysis") == "analysis" and normalise("  ") == ""


def test_keyphrases_are_frequent_content_phrases():
    text = ("Predictive number entry on mobile devices. We add number entry to the suggestion bar of a "
            "virtual keyboard. Number entry with the suggestion bar is faster than number entry without it.")
    phrases = extract_keyphrases(text, 4)
    assert phrases[0] == "number entry" and "suggestion bar" in phrases
    for phrase in phrases:
        words = phrase.split()
        assert 1 <= len(words) <= 3 and words[0] not in ent.STOPWORDS and words[-1] not in ent.STOPWORDS
    assert "number" not in phrases  # inside a phrase already chosen


def test_keyphrases_rank_by_score_then_length_then_first_place():
    # The title and abstract of Dense Passage Retrieval (EMNLP 2020) as the shipped corpus holds them.
    dpr = ("Dense Passage Retrieval for Open-Domain Question Answering. Open-domain question answering relies on "
           "efficient passage retrieval to select candidate contexts, where traditional sparse vector space models, "
           "such as TF-IDF or BM25, are the de facto method. In this work, we show that retrieval can be practically "
           "implemented using dense representations alone, where embeddings are learned from a small number of "
           "questions and passages by a simple dual-encoder framework. When evaluated on a wide range of open-domain "
           "QA datasets, our dense retriever outperforms a strong Lucene-BM25 system greatly by 9%-19% absolute in "
           "terms of top-20 passage retrieval accuracy, and helps our end-to-end QA system establish new "
           "state-of-the-art on multiple open-domain QA benchmarks.")
    assert extract_keyphrases(dpr) == ["open domain", "passage retrieval", "open domain question",
                                       "domain question answering", "open domain qa", "dense",
                                       "dense passage retrieval", "question answering rely"]
    # equal scores: the earlier phrase first; punctuation ends a phrase, so no "beta gamma"
    assert extract_keyphrases("alpha beta. gamma delta. alpha beta, gamma delta") == ["alpha beta", "gamma delta"]
    # a repeated pair (2 x 2.0) beats a trigram seen once (2.5)
    assert extract_keyphrases("Graph networks. Neural graph networks; neural models, deep models")[:2] == [
        "graph network", "neural graph network"]
    assert extract_keyphrases(dpr, 0) == [] and extract_keyphrases(dpr, 1) == ["open domain"]


@pytest.mark.parametrize("garbage", ["", "   ", "1234 5678. 42!", "the of and to with", "ÿ\x00\ufffd ∑∫ 🙂", "a" * 10_000])
def test_keyphrases_of_garbage_are_empty_or_sane(garbage):
    phrases = extract_keyphrases(garbage)
    assert isinstance(phrases, list) and len(phrases) <= ent.EXTRACTED_PER_PAPER
    assert all(p and not p.isdigit() for p in phrases)


def test_keywords_win_over_extraction():
    with_keywords = Paper("a", "Spam removal", "Spam spam spam search engines.", keywords=("Web Search", "", "Spam"))
    assert paper_entities(with_keywords) == ["web search", "spam"]
    without = Paper("b", "Spam removal", "Spam removal helps search engines. Spam removal is cheap.")
    assert paper_entities(without)[0] == "spam removal"
    long_keyword = Paper("c", "T", "x", keywords=("one two three four five six seven eight",))
    assert paper_entities(long_keyword) == extract_keyphrases(long_keyword.text)  # a sentence is no keyword


def test_entity_table_postings_and_linking():
    table = EntityTable.from_lists([["suggestion bar", "keyboard"], ["keyboard"], [], ["suggestion bar", "typing"]])
    bar = table.id_of["suggestion bar"]
    assert sorted(table.papers_of([bar]).tolist()) == [0, 3] and table.df[bar] == 2
    assert [table.texts[e] for e in table.entities_of(0)] == ["suggestion bar", "keyboard"]
    assert table.entities_of(2).tolist() == [] and table.entities_of_papers([]).tolist() == []
    linked = {table.texts[e] for e in table.link("Typing with a Suggestion-Bar on a phone.")}
    assert "suggestion bar" in linked  # a vocabulary phrase of two words is linked wherever it appears
    assert "typing" not in linked  # a single vocabulary word only when the extractor picks it
    assert {table.texts[e] for e in table.link("Keyboard layouts: keyboard speed and keyboard errors.")} == {"keyboard"}


def test_entities_are_stored_with_the_build_and_reread(vector_index):
    build = vector_index.build
    assert (build / ent.FILE).exists()  # written by build_index before the build went live
    table = ent.read_entities(build, len(vector_index))
    assert table is not None and table.papers == len(vector_index) and len(table.texts) > 1000
    assert ent.read_entities(build, len(vector_index) + 1) is None  # another paper count: not this build's


def test_entities_stored_before_their_texts_blob_read_the_same(vector_index, tmp_path):
    """Tables written before the texts were kept as one blob (and 'longest' in meta) still read, alike."""
    build = tmp_path / "build"
    build.mkdir()
    shutil.copy(vector_index.build / ent.FILE, build / ent.FILE)
    now = ent.read_entities(build, len(vector_index))
    with sqlite3.connect(build / ent.FILE) as db:
        assert db.execute("SELECT COUNT(*) FROM postings WHERE name = 'texts'").fetchone()[0] == 1
        db.execute("DELETE FROM postings WHERE name = 'texts'")
        db.execute("DELETE FROM meta WHERE key = 'longest'")
    before = ent.read_entities(build, len(vector_index))
    assert before.texts == now.texts and before.id_of == now.id_of and before._longest == now._longest > 1
    assert before.paper_ent.tolist() == now.paper_ent.tolist()


def _copy_index(index_path: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "idx"
    shutil.copytree(index_path, dest, ignore=shutil.ignore_patterns("embeddings.sqlite*"))
    return dest


@pytest.mark.parametrize("damage", ["absent", "garbage", "old version", "truncated postings"])
def test_an_index_without_usable_entities_extracts_them_once(index_path, tmp_path, capsys, damage):
    from peerlint.index.store import open_index

    root = _copy_index(index_path, tmp_path)
    index = open_index(root)
    stored = index.build / ent.FILE
    if damage == "absent":
        stored.unlink()
    elif damage == "garbage":
        stored.write_bytes(b"not a database" * 50)
    elif damage == "old version":
        with sqlite3.connect(stored) as db:
            db.execute("UPDATE meta SET value = '0' WHERE key = 'version'")
    else:
        with sqlite3.connect(stored) as db:
            db.execute("UPDATE postings SET data = substr(data, 1, 80) WHERE name = 'paper_ent'")
    table = ent.entity_table(index)
    assert "extracting entities" in capsys.readouterr().err
    assert table.papers == len(index) and ent.read_entities(index.build, len(index)) is not None
    assert not list(index.build.glob(f"{ent.FILE}.tmp*"))  # the atomic write left no temp file
    assert ent.entity_table(index) is table  # once per process


# -- retrieval on the test index --------------------------------------------------------------

@pytest.fixture(scope="module")
def sec(vector_index) -> RelatedWork:
    return RelatedWork(vector_index, graph=CitationGraph({}, "none"))


def test_semantic_only_is_the_index_ranking(sec, vector_index):
    text = "Sentence embeddings for retrieving scientific abstracts and recommending citations."
    hits = sec.search(text, 10, config=SECConfig().only(["semantic"]))
    plain = vector_index.search(text, 10)
    assert [h.paper.id for h in hits] == [h.paper.id for h in plain]
    assert all(h.found_by == ("semantic",) and h.score == pytest.approx(h.similarity, abs=1e-3) for h in hits)


def test_entities_bring_papers_the_query_names(sec, vector_index):
    table = sec.entities
    # a rare two-word entity of some paper, named in a query that is otherwise about something else
    pidx, phrase = next((p, table.texts[e]) for p in range(len(vector_index)) for e in table.entities_of(p)
                        if table.texts[e].count(" ") == 1 and 2 <= table.df[e] <= 5)
    text = f"We study {phrase} in a new setting, with a user study on reading behaviour and eye movements."
    hits = sec.search(text, 50, config=SECConfig().only(["semantic", "entities"]))
    by_entity = [h for h in hits if "entities" in h.found_by]
    assert by_entity and all(h.entities for h in by_entity)
    assert any(phrase in h.entities for h in by_entity)
    assert all(h.score >= h.similarity - 1e-6 for h in hits)


def test_filters_hold_in_every_stage(vector_index):
    years = {vector_index.paper(i).year for i in range(len(vector_index))}
    cut = sorted(y for y in years if y)[0]  # the oldest year: only its papers may come back
    ids = vector_index.ids
    graph = CitationGraph({"citer": ids[:40]}, "test lists")
    sec = RelatedWork(vector_index, graph=graph)
    excluded = ids[0]
    flt = SearchFilter(year_max=cut, exclude_ids=frozenset({excluded}))
    hits = sec.search(vector_index.paper(0).text, 30, flt)
    assert hits and all(h.paper.year <= cut and h.paper.id != excluded for h in hits)


def test_cocitation_is_leave_one_out(vector_index):
    query_paper = vector_index.paper(5)
    far = vector_index.paper(len(vector_index) - 1)  # cited together with the query's nearest paper
    nearest = vector_index.search(query_paper.text, 2, SearchFilter(exclude_ids=frozenset({query_paper.id})))[0].paper
    graph = CitationGraph({"other-paper": [nearest.id, far.id, "10.0/not-indexed"], "query-paper": [nearest.id, far.id]},
                          "test lists")
    sec = RelatedWork(vector_index, graph=graph)
    flt = SearchFilter(exclude_ids=frozenset({query_paper.id}))
    cfg = SECConfig(cocite_weight=1.0).only(["semantic", "cocitation"])
    assert {h.paper.id: h.cocited for h in sec.search(query_paper.text, 10, flt, config=cfg)}[far.id] == 2
    hits = sec.search(query_paper.text, 10, flt, exclude_citers={"query-paper"}, config=cfg)
    found = {h.paper.id: h for h in hits}
    assert far.id in found and "cocitation" in found[far.id].found_by and found[far.id].cocited == 1
    alone = sec.search(query_paper.text, 10, flt, exclude_citers={"other-paper", "query-paper"}, config=cfg)
    assert far.id not in {h.paper.id for h in alone}  # never from the query's own (or excluded) lists
    assert sec.graph_source() == "test lists"
    assert RelatedWork(vector_index, graph=CitationGraph({}, "x")).graph_source() == "n/a"


def test_degenerate_queries(sec):
    assert sec.search("", 10) == [] and sec.search("   \n", 10) == []
    assert sec.search("retrieval of abstracts", 0) == []
    hits = sec.search("🙂 ∑ 42", 5)
    assert len(hits) == 5  # nothing to extract: semantic neighbours still come back


def test_stage_names_are_checked():
    with pytest.raises(ValueError, match="unknown stage"):
        SECConfig().only(["semantic", "bm25"])


def test_clustering_steps_back_a_duplicate(tmp_path):
    from peerlint.index.build import build_index
    from conftest import shipped_papers
    from peerlint.index.store import open_index

    real = [p for p in shipped_papers() if (p.venue, p.year) == ("ICLR", 2017)][:5]
    copy = Paper("copy-of-0", real[0].title, real[0].abstract, venue="arXiv", year=2017)
    build_index(real + [copy], tmp_path / "idx", sources=["test"], show_progress=False)
    index = open_index(tmp_path / "idx")
    sec = RelatedWork(index, graph=CitationGraph({}, "none"))
    plain = sec.search(real[0].text, 6, config=SECConfig().only(["semantic"]))
    assert {h.paper.id for h in plain[:2]} == {real[0].id, "copy-of-0"}
    clustered = sec.search(real[0].text, 6, config=SECConfig().only(["semantic", "clustering"]))
    assert {h.paper.id for h in clustered} == {h.paper.id for h in plain}  # stepped back, not dropped
    last = clustered[-1]
    assert last.duplicate_of == clustered[0].paper.id and {last.paper.id, clustered[0].paper.id} == {real[0].id, "copy-of-0"}
    assert all(not h.duplicate_of for h in clustered[:-1])


# -- citation graph input ---------------------------------------------------------------------

def test_reference_lists_file_with_bad_lines(tmp_path):
    path = tmp_path / "refs.jsonl"
    path.write_text('{"id": "p1", "references": ["a", "b"], "year": 2019}\n\n{"id": "p2", "cited": ["b", "c", "b"]}\n')
    graph = CitationGraph.from_file(path)
    assert len(graph) == 2 and graph.cocited("b") == {"a": 1, "c": 1}
    assert graph.cocited("b", frozenset({"p2"})) == {"a": 1} and graph.cocited("b", year_max=2018) == {"c": 1}
    path.write_text('{"id": "p1", "references": "a, b"}\n')
    with pytest.raises(ValueError, match="refs.jsonl:1"):
        CitationGraph.from_file(path)


# -- the bench ---------------------------------------------------------------------------------

def _bench(*argv) -> int:
    from peerlint.server.cli import main

    return main(["bench", "related", *map(str, argv)])


def test_bench_counts_bad_ground_truth_and_never_crashes(index_path, vector_index, tmp_path, capsys):
    a, b = vector_index.paper(3), vector_index.paper(7)
    rows = [
        {"id": "q-ok", "text": a.text, "year": a.year, "cited": [b.id, "10.9999/not-in-index"]},
        {"id": "q-title", "text": b.abstract, "cited": [a.title.upper() + "  "], "paper": b.id},
        {"id": "q-empty", "text": "   ", "cited": [a.id]},
        {"id": "q-nothing-indexed", "text": "A text about retrieval.", "cited": ["10.9999/x", "Some Unknown Title"]},
        {"id": "q-no-cites", "text": "Another text.", "cited": []},
        {"id": "q-bad-year", "text": a.text, "year": "soon", "cited": [b.id]},
    ]
    truth = tmp_path / "truth.jsonl"
    truth.write_text("\n".join(json.dumps(r) for r in rows) + "\nnot json\n[1, 2]\n{\"id\": \"x\", \"cited\": \"a\"}\n")
    assert _bench("--truth", truth, "--index", index_path, "--out", tmp_path / "out", "--k", "5,10") == 0
    captured = capsys.readouterr()
    assert "truth.jsonl:7: not JSON" in captured.err and "truth.jsonl:9: 'cited' must be a list" in captured.err
    assert "n/a" in captured.out  # no reference lists: the co-citation rows are not run
    [result_file] = (tmp_path / "out").glob("related-truth-*.json")
    result = json.loads(result_file.read_text())
    c = result["counts"]
    assert c["queries"] == 6 and c["scored"] == 3 and c["empty_text"] == 1 and c["no_cited_in_index"] == 2
    assert c["cited_by_title"] == 1 and c["missing_ids"] == 3 and c["cited_missing"] == 3
    assert result["cocitation_graph"] == "n/a" and len(result["ground_truth"]["problems"]) == 4
    rows_by_name = {r["row"]: r for r in result["rows"]}
    assert rows_by_name["+co-citation"]["recall"]["10"] is None and rows_by_name["+co-citation"]["note"]
    assert 0 <= rows_by_name["semantic-only"]["recall"]["10"] <= 1
    assert rows_by_name["semantic-only"]["gain"] is None and "gain" in rows_by_name["+entities"]


@pytest.mark.parametrize("argv, message", [
    (["--k", "ten"], "--k expects positive numbers"),
    (["--k", "0,10"], "--k expects positive numbers"),
    (["--stages", "semantic,bm25"], "--stages: unknown bm25"),
    (["--truth", "/nonexistent/truth.jsonl", "--index", "/tmp"], "no such ground truth"),
])
def test_bench_user_errors(argv, message, capsys, tmp_path):
    truth = tmp_path / "t.jsonl"
    truth.write_text("")
    assert _bench(*(argv if "--truth" in argv else ["--truth", truth, "--index", tmp_path, *argv])) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_bench_needs_an_index_or_corpus_with_a_truth(tmp_path, capsys):
    truth = tmp_path / "t.jsonl"
    truth.write_text('{"id": "a", "text": "x", "cited": []}\n')
    assert _bench("--truth", truth) == 2 and "--index DIR or --corpus" in capsys.readouterr().err


@pytest.mark.skipif(not (ACM / "citing.jsonl").exists(), reason="ACM-CR is not beside the repository")
def test_acm_truths(tmp_path, capsys):
    assert _bench("--make-truth", tmp_path) == 0
    paper = [json.loads(line) for line in (tmp_path / "acm-cr-paper.jsonl").read_text().splitlines()]
    context = [json.loads(line) for line in (tmp_path / "acm-cr-context.jsonl").read_text().splitlines()]
    assert len(paper) == 20 and len(context) == 128
    assert all(r["paper"] == r["id"] and r["year"] == 2020 and r["cited"] and ". " in r["text"] for r in paper)
    assert all(r["id"].startswith(r["paper"] + "#") and r["cited"] and r["text"] for r in context)
    assert len({d for r in context for d in r["cited"]}) == 407  # the unique DOIs cited in ACM-CR's contexts


# -- the editor path ---------------------------------------------------------------------------

def test_missing_related_work_offers_sec_papers_with_provenance(vector_index, tmp_path):
    from peerlint.analyzers.engine import Engine
    from peerlint.analyzers.prior_work import RELATED_SECTIONS
    from peerlint.analyzers.project_check import check_file
    from peerlint.retrieval.related_work import related_work_for
    from peerlint.retrieval.retriever import Retriever
    from peerlint.settings import Settings

    from conftest import EXAMPLES

    shutil.copytree(EXAMPLES, tmp_path / "paper")
    retriever = Retriever(vector_index)
    # below the calibrated operating point, so that the example's Introduction has suggestions to check
    settings = dataclasses.replace(Settings(), related_work_min_similarity=0.6, related_work_k=3)
    result = check_file(tmp_path / "paper" / "draft.tex", Engine(settings, retriever=retriever), workspace=tmp_path)
    missing = [j for j in result.judgments if j.code == "missing-related-work"]
    assert missing and all(j.message.startswith("This ") and "cites none of its nearest prior papers" in j.message
                           for j in missing)
    for j in missing:
        uncited = j.evidence["uncited"]
        assert 1 <= len(uncited) <= settings.related_work_k
        assert all(h["found_by"] and h["similarity"] >= settings.related_work_min_similarity for h in uncited)
        assert all({"id", "title", "venue", "year", "url", "authors"} <= set(h) for h in uncited)  # what citing needs
    related = [c for c in result.chunks if RELATED_SECTIONS.search(c.section or "") and len(c.text) > 200]
    assert related_work_for(vector_index) is related_work_for(vector_index)  # one per index, shared by every run
    # at the calibrated default only suggestions above its similarity show (with the 2013-2025 corpus in the
    # test index, one of the example's paragraphs still has one)
    result = check_file(tmp_path / "paper" / "draft.tex", Engine(Settings(), retriever=retriever), workspace=tmp_path)
    shown = [j for j in result.judgments if j.code == "missing-related-work"]
    assert all(h["similarity"] >= Settings().related_work_min_similarity for j in shown for h in j.evidence["uncited"])
    assert len(shown) <= len(missing) and related


def test_one_finding_per_paragraph_and_a_paper_once_per_section(vector_index, tmp_path):
    """A paragraph split into two chunks gets one finding over both; a paper suggested in one paragraph
    of a section is not suggested again in the next."""
    from peerlint.analyzers.engine import Engine
    from peerlint.analyzers.project_check import check_file
    from peerlint.retrieval.retriever import Retriever
    from peerlint.settings import Settings

    from conftest import EXAMPLES

    shutil.copytree(EXAMPLES, tmp_path / "paper")
    # short chunks, so that several of the example's paragraphs are cut in two
    settings = dataclasses.replace(Settings(), related_work_min_similarity=0.0, related_work_k=3, max_tokens=80)
    result = check_file(tmp_path / "paper" / "draft.tex", Engine(settings, retriever=Retriever(vector_index)),
                        workspace=tmp_path)
    missing = [j for j in result.judgments if j.code == "missing-related-work"]
    paragraphs = [(j.chunk.uri, j.chunk.paragraph) for j in missing]
    assert missing and len(paragraphs) == len(set(paragraphs))
    split = [c for c in result.chunks if c.paragraph != c.index]  # the second chunk of a long paragraph
    spanning = [j for j in missing if any(c.paragraph == j.chunk.paragraph for c in split)]
    assert spanning and all(j.range.end.line >= c.range.end.line for j in spanning for c in split
                            if c.paragraph == j.chunk.paragraph)
    for section in {j.chunk.section for j in missing}:
        ids = [h["id"] for j in missing if j.chunk.section == section for h in j.evidence["uncited"]]
        assert len(ids) == len(set(ids)), section
    assert all(not j.evidence["covered"] for j in missing)


def test_a_covered_chunk_silences_its_whole_paragraph():
    from peerlint.analyzers.prior_work import PriorWorkAnalyzer
    from peerlint.types import AnalysisContext, Chunk, Judgment, Position, Range
    from peerlint.settings import Settings

    def chunk(index: int, paragraph: int, section: str = "Related Work") -> Chunk:
        r = Range(Position(index, 0), Position(index, 10))
        return Chunk(f"text {index}", "file:///d.tex", section, tuple(range(7)), r, index=index, paragraph=paragraph)

    def finding(c: Chunk, covered: bool, *ids: str) -> Judgment:
        hits = [{"id": i, "title": f"Paper {i}", "venue": "ACL", "year": 2020, "similarity": 0.8, "url": "",
                 "authors": []} for i in ids]
        return Judgment(c, "missing-related-work", "", 0.8, "information", {"covered": covered, "uncited": hits})

    chunks = [chunk(0, 0), chunk(1, 0), chunk(2, 2), chunk(3, 3), chunk(4, 4, "Method")]
    out = PriorWorkAnalyzer().finish([finding(chunks[0], False, "a"), finding(chunks[1], True),
                                      finding(chunks[2], False, "a", "b"), finding(chunks[3], False, "a"),
                                      finding(chunks[4], False, "a")], chunks,
                                     AnalysisContext(chunks, settings=Settings()))
    assert [(j.chunk.index, [h["id"] for h in j.evidence["uncited"]]) for j in out] == [(2, ["a", "b"]), (4, ["a"])]
    assert all("cites none of its nearest prior papers" in j.message for j in out)


def test_cite_recovery_makes_a_truth_from_a_latex_project(index_path, vector_index, tmp_path, capsys):
    """`bench related --from-latex`: each citing paragraph is a query whose truth is what its .bib entries
    resolve to in the index (here: papers by their titles, one in another case; an arXiv preprint the index
    lacks and a key no .bib defines are counted, not scored)."""
    from peerlint.server.cli import main

    paper = vector_index.paper(7)
    other = vector_index.paper(8)
    project = tmp_path / "mypaper"
    project.mkdir()
    (project / "main.tex").write_text(
        "\\documentclass{article}\n\\begin{document}\n\\section{Related Work}\n"
        f"{paper.abstract[:400]} \\cite{{first,gone}}.\n\n"
        "A paragraph that cites nothing at all, however long it may be, is not a query.\n\n"
        f"{other.abstract[:300]} \\citep{{second}} and \\cite{{undefined}}.\n"
        "\\bibliography{refs}\n\\end{document}\n", encoding="utf-8")
    (project / "refs.bib").write_text(
        f"@inproceedings{{first, title = {{{paper.title.upper()}}}, year = {{{paper.year}}}}}\n"
        "@article{gone, title = {A Paper No Index Holds About Something Else}, journal = {arXiv preprint "
        "arXiv:2101.00001}, year = 2021}\n"
        f"@inproceedings{{second, title = {{{other.title}}}}}\n", encoding="utf-8")
    out = tmp_path / "out"
    assert main(["bench", "related", "--from-latex", str(project), "--index", str(index_path), "--stages", "first",
                 "--out", str(out)]) == 0
    [result] = [json.loads(p.read_text()) for p in out.glob("related-cite-recovery-*.json")]
    [stats] = result["ground_truth"]["projects"]
    assert stats | {"root": ""} == {"name": "mypaper", "root": "", "paragraphs_citing": 2, "citations": 4,
                                    "in_bib": 3, "in_index": 2}
    assert result["counts"]["scored"] == 2 and result["counts"]["cited_in_index"] == 2
    rows = {r["row"]: r for r in result["rows"]}
    assert rows["dense"]["recall"]["10"] == 1.0  # each paragraph is its cited paper's own abstract
    assert "cite recovery: mypaper: 2 paragraphs cite 4 works, 3 in its .bib, 2 in the index" in capsys.readouterr().err


def test_an_old_draft_is_judged_against_what_existed_then(vector_index, tmp_path):
    """ACL 2019's style dates the draft: with publishedBefore "auto" every paper of its evidence
    predates ACL 2019's deadline, said once; "" gives all papers back, newer ones included."""
    from peerlint.analyzers.engine import Engine
    from peerlint.analyzers.project_check import check_file
    from peerlint.retrieval.retriever import Retriever
    from peerlint.settings import Settings

    from conftest import REPO

    shutil.copytree(REPO / "tests" / "data" / "real" / "acl2019-highres", tmp_path / "paper")
    loose = dataclasses.replace(Settings(), related_work_min_similarity=0.0, related_work_k=5)
    retriever = Retriever(vector_index)

    def years(settings):
        result = check_file(tmp_path / "paper" / "acl2019.tex", Engine(settings, retriever=retriever))
        hits = [h for j in result.judgments for h in j.evidence.get("hits", [])]
        assert hits
        return [h["year"] for h in hits], result.warnings

    dated, warnings = years(loose)
    assert max(dated) <= 2018
    assert [w for w in warnings if "published before 2019-02-01" in w and "acl2019" in w] == [warnings[0]]
    undated, warnings = years(dataclasses.replace(loose, published_before=""))
    assert max(undated) > 2018 and not any("published before" in w for w in warnings)
    assert retriever.before is None  # the shared retriever keeps no project's date
    assert retriever.scoped("auto") is retriever and retriever.scoped("") is retriever
    view = retriever.scoped("2019-02-01")
    assert view.before == "2019-02-01" and view.scoped("2019-02-01") is view and view._vectors is retriever._vectors


def test_draft_dates_come_from_past_venue_styles():
    import datetime

    from peerlint.analyzers.drafts.venue_guess import draft_date, evidence_before

    today = datetime.date(2026, 11, 24)
    acl = draft_date("\\documentclass{article}\n\\usepackage[hyperref]{acl2019}\n", "paper.tex", today)
    assert (acl.venue, acl.year, acl.before, acl.style) == ("ACL", 2019, "2019-02-01", "acl2019")
    assert draft_date("\\usepackage{iclr2020_conference,times}", "", today).before == "2019-10-01"  # deadline the year before
    assert draft_date("\\usepackage[hyperref]{style/naacl2021}", "", today).venue == "NAACL"
    assert draft_date("\\documentclass{article}", "emnlp2020.tex", today).before == "2020-06-01"  # from the root's name
    assert draft_date("% \\usepackage{acl2019}\n\\usepackage{neurips_2026}", "", today) is None  # this year's: no date
    assert draft_date("\\usepackage{cvpr}\n\\usepackage{jmlr2e}", "main.tex", today) is None  # no year; a journal
    # the venues of the shipped corpus that ACL's and NeurIPS' lists leave out: a COLM 2024 paper
    # (justinchiu-test/position-embeddings) was shown an ICML 2025 paper before COLM had a style here
    colm = draft_date("\\usepackage[submission]{colm2024_conference}", "colm2024_conference.tex", today)
    assert (colm.venue, colm.before) == ("COLM", "2024-03-25")
    assert draft_date("\\usepackage{corl_2023}", "", today).venue == "CoRL"
    assert draft_date("\\usepackage{lrec2022}", "", today).before == "2021-12-01"
    assert draft_date("\\documentclass[11pt]{article}\n\\usepackage{tacl2021v1}", "", today) is None  # a journal
    assert evidence_before("auto", acl) == "2019-02-01" and evidence_before("auto", None) == ""
    assert evidence_before("2017", acl) == "2017" and evidence_before("", acl) == ""


REAL = Path(__file__).parent / "data" / "real"


def _paragraphs(project: str, needle: str) -> list[str]:
    from peerlint.latex.parse import parse_document

    texts = []
    for tex in sorted((REAL / project).rglob("*.tex")):
        texts += [c.text for c in parse_document(tex.read_text(errors="replace"), tex.resolve().as_uri())
                  if needle in c.text]
    return texts


@pytest.mark.parametrize("project, needle", [
    ("jmlr-orff", "The paper is structured as follows."),
    ("jmlr-orff", "In [ref] we focus on Ridge regression"),
    ("jmlr-orff", "Eventually we end this paper by some numerical experiments"),
    ("usenix2024-networked-enclaves", "Next, we provide background (§ [ref])"),
    ("emnlp2025-value-profiles", "We conclude by discussing related work (§ [ref])"),
])
def test_a_papers_own_outline_asks_for_no_citations(project, needle):
    """An introduction's outline paragraph ("In Section 5 we focus on ...") points at the paper itself:
    `missing-related-work` leaves it alone (the JMLR paper was told to cite a ridge-regression paper there)."""
    from peerlint.analyzers.prior_work import is_outline

    [text] = _paragraphs(project, needle)
    assert is_outline(text)


@pytest.mark.parametrize("project, needle", [
    ("iclr2020-deepsphere", "lack of equivariance can penalize performance"),  # cites, points at sections twice
    ("neurips2020-online-sinkhorn", "does not leverage the specific structure of the OT problem"),
    ("acmart2025-megatron", "shows layout performance in practice"),  # "[ref] shows": a figure
    ("cvprw2020-face-bias", "We expect the human bias to skew"),
])
def test_related_work_that_mentions_a_section_is_still_related_work(project, needle):
    from peerlint.analyzers.prior_work import is_outline

    texts = _paragraphs(project, needle)
    assert texts and not any(is_outline(t) for t in texts)
