"""Open dumps as corpora: the arXiv OAI snapshot, OpenAlex works, Semantic Scholar papers + abstracts.

Each file is told apart by its content, streamed, filtered with `--where`, and a work that two sources
hold becomes one paper.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from peerlint.index.ingest.identity import normalise_arxiv_id, normalise_doi, normalise_title
from peerlint.index.ingest.holdings import Holdings
from peerlint.index.ingest.latex_sources import CitedWork
from peerlint.index.papers import Paper
from peerlint.index.ingest.load import CorpusError, load_papers, read_corpus
from peerlint.index.ingest.openalex import abstract_from_inverted_index

ARXIV_RECORD = {
    "id": "1706.03762", "submitter": "Ashish Vaswani", "authors": "Ashish Vaswani, Noam Shazeer",
    "title": "Attention Is All\n  You Need", "comments": "15 pages", "journal-ref": None,
    "doi": None, "report-no": None, "categories": "cs.CL cs.LG", "license": None,
    "abstract": "  The dominant sequence transduction models are based on complex recurrent networks.\n",
    "versions": [{"version": "v1", "created": "Mon, 12 Jun 2017 17:57:34 GMT"},
                 {"version": "v7", "created": "Wed, 2 Aug 2023 00:41:18 GMT"}],
    "update_date": "2023-08-03",
    "authors_parsed": [["Vaswani", "Ashish", ""], ["Shazeer", "Noam", ""]],
}
OPENALEX_WORK = {
    "id": "https://openalex.org/W2963403868",
    "doi": "https://doi.org/10.48550/arXiv.1706.03762",
    "title": "Attention Is All You Need",
    "display_name": "Attention Is All You Need",
    "publication_year": 2017,
    "publication_date": "2017-06-12",
    "primary_location": {"landing_page_url": "https://arxiv.org/abs/1706.03762",
                         "source": {"id": "https://openalex.org/S4306400194", "display_name": "arXiv (Cornell University)"}},
    "authorships": [{"author": {"id": "https://openalex.org/A1", "display_name": "Ashish Vaswani"}}],
    "abstract_inverted_index": {"The": [0], "dominant": [1], "models": [2]},
    "referenced_works": ["https://openalex.org/W1", "https://openalex.org/W2"],
    "cited_by_count": 100000,
}


def write_jsonl(path: Path, records, opener=open) -> Path:
    with opener(path, "wt", encoding="utf-8") as sink:
        for record in records:
            sink.write((record if isinstance(record, str) else json.dumps(record)) + "\n")
    return path


def collect(paths, where=()):
    warnings: list[str] = []
    return list(read_corpus(paths, warn=warnings.append, where=where)), warnings


# --- identifiers -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("raw, doi, arxiv", [
    ("https://doi.org/10.18653/V1/P19-1001", "10.18653/v1/p19-1001", ""),
    ("doi:10.1000/xyz.", "10.1000/xyz", ""),
    ("10.48550/arXiv.2104.06237", "10.48550/arxiv.2104.06237", "2104.06237"),
    ("arXiv:2104.06237v3", "", "2104.06237"),
    ("https://arxiv.org/abs/hep-th/9901001v2", "", "hep-th/9901001"),
    ("arXiv preprint arXiv:1706.03762", "", "1706.03762"),
    ("Journal of Things 12(3):1234.5678", "", ""),  # a page range is no arXiv id
    ("", "", ""),
])
def test_identifiers_normalise(raw, doi, arxiv):
    assert normalise_doi(raw) == doi
    assert normalise_arxiv_id(raw) == arxiv


def test_titles_normalise_across_latex_and_accents():
    assert normalise_title("{BERT}: Pre-training of Deep {B}idirectional Transformers") == \
        normalise_title("BERT - pre-training of deep bidirectional transformers")
    assert normalise_title("Réseaux \\emph{de} neurones") == "reseaux de neurones"
    # ICML 2024's position track: "Position: A Roadmap to Pluralistic Alignment" is cited by its arXiv title
    assert normalise_title("Position: A Roadmap to Pluralistic Alignment") == normalise_title("A Roadmap to Pluralistic Alignment")
    assert normalise_title("Positional encodings: a study") == "positional encodings a study"


# --- inverted indexes ---------------------------------------------------------------------------------------------


def test_inverted_index_with_gaps_huge_positions_and_junk():
    index = {"end": [10**12], "Hello": [0], "world": [5], "again": [5], "bad": ["x", -1, True, 2.5], "n": None}
    assert abstract_from_inverted_index(index) == "Hello world end"
    assert abstract_from_inverted_index(None) == "" and abstract_from_inverted_index([1, 2]) == ""


# --- the arXiv snapshot ---------------------------------------------------------------------------------------------


def test_arxiv_snapshot_is_detected_and_dated_to_the_day(tmp_path):
    no_abstract = {**ARXIV_RECORD, "id": "2301.00001", "abstract": None, "title": "Only a title",
                   "versions": [], "update_date": "2023-01-05", "categories": "math.CO", "doi": "10.1234/X"}
    path = write_jsonl(tmp_path / "arxiv-metadata-oai-snapshot.jsonl", [
        ARXIV_RECORD, no_abstract, {**ARXIV_RECORD, "id": "", "title": "", "abstract": ""},
        '{"id": "2301.00002", "title": "cut off'])  # the last line is truncated
    papers, warnings = collect([path])
    assert [p.id for p in papers] == ["arXiv:1706.03762", "arXiv:2301.00001"]
    first = papers[0]
    assert first.title == "Attention Is All You Need" and first.abstract.startswith("The dominant")
    assert first.date == "2017-06-12" and first.year == 2017 and first.venue == "arXiv"
    assert first.authors == ("Ashish Vaswani", "Noam Shazeer") and first.categories == ("cs.CL", "cs.LG")
    assert first.arxiv_id == "1706.03762" and first.url == "https://arxiv.org/abs/1706.03762"
    assert papers[1].abstract == "" and papers[1].date == "2023-01-05" and papers[1].doi == "10.1234/x"
    assert len(warnings) == 2
    assert warnings[0].startswith(f"{path}:3: no arXiv id")
    assert warnings[1].startswith(f"{path}:4: invalid JSON")


def test_where_filters_while_streaming(tmp_path):
    records = [{**ARXIV_RECORD, "id": f"2{m:03d}.00001", "categories": cat,
                "versions": [{"version": "v1", "created": f"Mon, 2 {month} 2020 10:00:00 GMT"}]}
               for m, (cat, month) in enumerate([("cs.CL", "Jan"), ("cs.LG cs.CL", "Jun"), ("math.CO", "Jun"),
                                                 ("cs.CV", "Dec")])]
    path = write_jsonl(tmp_path / "snap.jsonl.gz", records, gzip.open)
    ids = lambda where: [p.id for p in collect([path], where)[0]]  # noqa: E731
    assert ids(["category=cs.CL"]) == ["arXiv:2000.00001", "arXiv:2001.00001"]
    assert ids(["category=cs"]) == ["arXiv:2000.00001", "arXiv:2001.00001", "arXiv:2003.00001"]
    assert ids(["category=cs", "since=2020-02", "until=2020-06-30"]) == ["arXiv:2001.00001"]
    assert ids(["venue=arxiv", "since=2020"]) == [f"arXiv:200{i}.00001" for i in range(4)]
    with pytest.raises(CorpusError, match="KEY=VALUE with KEY one of category, venue, since, until"):
        load_papers([path], where=["year>2020"])
    with pytest.raises(CorpusError, match="since takes one date, YYYY, YYYY-MM or YYYY-MM-DD"):
        load_papers([path], where=["since=2020-13"])
    with pytest.raises(CorpusError, match="that pass --where category=q-bio"):
        load_papers([path], warn=lambda m: None, where=["category=q-bio"])


# --- OpenAlex ------------------------------------------------------------------------------------------------------


def test_openalex_works_and_saved_api_pages(tmp_path):
    abstractless = {**OPENALEX_WORK, "id": "https://openalex.org/W3", "doi": None, "title": "No abstract here",
                    "abstract_inverted_index": None, "primary_location": None, "referenced_works": "junk"}
    page = {"meta": {"count": 2, "next_cursor": None}, "results": [abstractless, {"id": "https://openalex.org/W4"}]}
    path = write_jsonl(tmp_path / "works.jsonl", [OPENALEX_WORK, page])
    papers, warnings = collect([path])
    assert [p.id for p in papers] == ["W2963403868", "W3"]
    work = papers[0]
    assert work.abstract == "The dominant models" and work.venue == "arXiv (Cornell University)"
    assert work.references == ("W1", "W2") and work.citations == 100000 and work.date == "2017-06-12"
    assert work.arxiv_id == "1706.03762" and work.doi == "10.48550/arxiv.1706.03762"
    assert papers[1].abstract == "" and papers[1].venue == "" and papers[1].references == ()
    assert warnings == [f"{path}:2: work https://openalex.org/W4: no title and no abstract; skipped"]


# --- Semantic Scholar ------------------------------------------------------------------------------------------------


def test_semantic_scholar_papers_join_their_abstracts(tmp_path):
    papers_file = write_jsonl(tmp_path / "papers-part0.jsonl", [
        {"corpusid": 11, "externalids": {"DOI": "10.5555/ABC", "ArXiv": "2001.00001", "CorpusId": "11"},
         "title": "Joined paper", "authors": [{"authorId": "1", "name": "Ann Lee"}], "venue": "ACL", "year": 2020,
         "publicationdate": "2020-07-05", "citationcount": 4, "s2fieldsofstudy": [{"category": "Computer Science"}]},
        {"corpusid": 12, "externalids": {}, "title": "No abstract anywhere", "year": 2019},
        {"corpusid": 13, "externalids": {}, "title": None},
    ])
    abstracts_file = write_jsonl(tmp_path / "abstracts-part0.jsonl.gz", [
        {"corpusid": 11, "openaccessinfo": {}, "abstract": "The joined abstract."},
        {"corpusid": "x"},
    ], gzip.open)
    papers, warnings = collect([papers_file, abstracts_file])  # the abstracts file may come last
    assert [p.id for p in papers] == ["s2:11", "s2:12"]
    joined = papers[0]
    assert joined.abstract == "The joined abstract." and joined.doi == "10.5555/abc" and joined.arxiv_id == "2001.00001"
    assert joined.date == "2020-07-05" and joined.venue == "ACL" and joined.categories == ("Computer Science",)
    assert papers[1].abstract == ""
    assert any(w.startswith(f"{abstracts_file}:2: no corpusid") for w in warnings)
    assert any(w.startswith(f"{papers_file}:3: no title and no abstract") for w in warnings)
    alone, warnings = collect([abstracts_file])
    assert alone == [] and "pass the papers file too" in warnings[0]


# --- one work, two sources -------------------------------------------------------------------------------------------


def test_the_same_paper_from_two_sources_is_one_merged_paper(tmp_path):
    arxiv = write_jsonl(tmp_path / "arxiv.jsonl", [ARXIV_RECORD])
    published = {**OPENALEX_WORK, "doi": "https://doi.org/10.5555/nips.2017", "id": "https://openalex.org/W9",
                 "primary_location": {"source": {"display_name": "Neural Information Processing Systems"}},
                 "locations": [{"landing_page_url": "https://arxiv.org/abs/1706.03762v5"}]}
    openalex = write_jsonl(tmp_path / "openalex.jsonl", [published])
    proceedings = write_jsonl(tmp_path / "proceedings.jsonl", [
        {"id": "neurips2017-1", "title": "Attention is all you need!", "abstract": "Long abstract.", "venue": "NeurIPS",
         "year": 2017}])
    warnings: list[str] = []
    papers = load_papers([arxiv, openalex, proceedings], warn=warnings.append)
    assert len(papers) == 2  # arXiv + OpenAlex by arXiv id; NeurIPS proceedings keep their own record
    merged = papers[0]
    assert merged.id == "arXiv:1706.03762" and merged.doi == "10.5555/nips.2017"
    assert merged.venue == "Neural Information Processing Systems"  # a published venue beats the preprint server
    assert merged.date == "2017-06-12" and merged.references == ("W1", "W2") and merged.citations == 100000
    assert warnings == [f"{openalex}:1: 'W9' is 'arXiv:1706.03762' (same arxiv, first seen at {arxiv}:1); merged into it"]


def test_same_title_merges_across_files_but_not_within_one(tmp_path):
    one = write_jsonl(tmp_path / "one.jsonl", [
        {"id": "a", "title": "A sufficiently long shared title", "venue": "ICLR", "abstract": "x"},
        {"id": "b", "title": "A sufficiently long shared title", "venue": "ICLR", "abstract": "y"}])
    two = write_jsonl(tmp_path / "two.jsonl", [
        {"id": "c", "title": "A sufficiently long shared title!", "abstract": "z", "date": "2020-01-02"},
        {"id": "d", "title": "A sufficiently long shared title", "venue": "ICML", "abstract": "w"}])
    papers = load_papers([one, two], warn=lambda m: None)
    assert [p.id for p in papers] == ["a", "b", "d"]  # c (no venue) merged into a; d (another venue) kept apart
    assert papers[0].date == "2020-01-02"


# --- what cannot be read ------------------------------------------------------------------------------------------------


def test_unknown_layout_names_the_formats(tmp_path):
    path = write_jsonl(tmp_path / "other.jsonl", [{"name": "x", "size": 3}])
    with pytest.raises(CorpusError, match=r"keys: name, size.*arXiv OAI metadata snapshot.*OpenAlex works.*Semantic"):
        load_papers([path])
    folder = tmp_path / "dir"
    folder.mkdir()
    path.rename(folder / "other.jsonl")
    write_jsonl(folder / "good.jsonl", [ARXIV_RECORD])
    papers, warnings = collect([folder])
    assert [p.id for p in papers] == ["arXiv:1706.03762"]
    assert len(warnings) == 1 and "in no layout peerlint reads" in warnings[0] and warnings[0].endswith("skipped")


def test_dumps_under_their_own_names(tmp_path):
    snapshot = write_jsonl(tmp_path / "arxiv-metadata-oai-snapshot.json", [ARXIV_RECORD])  # Kaggle's name
    parts = tmp_path / "openalex" / "data" / "works" / "updated_date=2024-01-01"
    parts.mkdir(parents=True)
    write_jsonl(parts / "part_000.gz", [{**OPENALEX_WORK, "doi": None, "title": "Another work"}], gzip.open)
    (tmp_path / "openalex" / "package.json").write_text('{"name": "x", "version": "1"}', encoding="utf-8")
    (tmp_path / "openalex" / "notes.gz").write_bytes(gzip.compress(b"\x00\x01 not json"))
    papers, warnings = collect([snapshot, tmp_path / "openalex"])
    assert [p.id for p in papers] == ["arXiv:1706.03762", "W2963403868"] and warnings == []
    pretty = tmp_path / "pretty.json"
    pretty.write_text('{\n  "id": "x",\n  "title": "T"\n}\n', encoding="utf-8")
    with pytest.raises(CorpusError, match=r"pretty.json holds no JSON lines: pass a \.jsonl"):
        load_papers([pretty])


def test_titles_normalise_apostrophes_and_latex_accents():
    # a .bib's "Don't" and a venue's "Don’t"; BibTeX's {\'e} and Unicode é
    assert normalise_title("What They Don't Know?") == normalise_title("What They Don’t Know") == "what they dont know"
    assert normalise_title("Poincar{\\'e} Wasserstein Autoencoder") == normalise_title("Poincaré Wasserstein Autoencoder")
    assert normalise_title("Schr\\\"odinger bridges") == "schrodinger bridges"


def test_holdings_match_a_reworded_title_but_not_a_sibling_paper():
    """The surname + year step: a misspelt or shortened title is the same work; a first author's other
    paper of that year, or another edition of a yearly report, is not (both were counted as held, and the
    editor would have taken the sibling for a cited paper)."""
    held = [Paper(id="p1", title="Long-form factuality in large language models", abstract="", authors=("Jerry Wei",), year=2024),
            Paper(id="p2", title="Findings of the 2018 Conference on Machine Translation (WMT18)", abstract="",
                  authors=("Ondřej Bojar",), year=2018),
            Paper(id="p3", title="Retrieval Augmented Language Model Pre-Training", abstract="", authors=("Kelvin Guu",),
                  year=2020),
            Paper(id="p4", title="Categorical Reparameterization with Gumbel-Softmax", abstract="",
                  authors=("Eric Jang",), year=2017),
            Paper(id="p5", title="Large Language Models for Time Series: A Survey", abstract="",
                  authors=("Xiyuan Zhang",), year=2024)]
    holdings = Holdings(held)

    def find(title: str, author: str, year: int):
        match = holdings.find(CitedWork(key="k", title=title, authors=(author,), year=year))
        return match and (match.method, match.paper_id)

    assert find("Measuring short-form factuality in large language models", "Wei, Jason", 2024) is None
    assert find("Findings of the 2017 Conference on Machine Translation (WMT17)", "Bojar, Ondrej", 2017) is None
    assert find("Instruction Tuning for Large Language Models: A Survey", "Zhang, Shengyu", 2023) is None
    assert find("REALM: Retrieval-Augmented Language Model Pre-Training", "Guu, Kelvin", 2020) == ("author-year", "p3")
    assert find("Categorical Reparametrization with Gumble-Softmax", "Jang, Eric", 2016) == ("author-year", "p4")
