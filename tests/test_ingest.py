"""Corpus ingestion: the shipped proceedings, every input format, and every way an input can be broken."""

from __future__ import annotations

import gzip
import json
import logging
import lzma
import re
import shutil
from pathlib import Path

import bibtexparser
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from peerlint.index.ingest import load as ingest
from peerlint.index.ingest.load import CorpusError, default_corpus_path, default_corpus_paths, load_papers, read_corpus
from peerlint.index.ingest.records import anthology_venue, clean_text
from peerlint.index.papers import Paper

SHARED = Path(__file__).resolve().parents[2] / "shared"
PROCEEDINGS = SHARED / "data" / "proceedings"
LATEX = SHARED / "data" / "latex"
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason="../shared is not checked out beside the repository")


def collect(paths, **kwargs) -> tuple[list[Paper], list[str]]:
    warnings: list[str] = []
    return list(read_corpus(paths, warn=warnings.append, **kwargs)), warnings


# --- the shipped corpus --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shipped() -> list[Paper]:
    warnings: list[str] = []
    papers = load_papers([default_corpus_path()], warn=warnings.append)
    assert warnings == []
    return papers


NEW_CORPUS = default_corpus_path().with_name("provenance.json")
needs_new_corpus = pytest.mark.skipif(not NEW_CORPUS.is_file(),
                                      reason="the 2013-2025 default corpus (issue 35) and its provenance.json are not committed yet")


def test_shipped_corpus_keeps_metadata(shipped):
    """True of the 17,630-paper corpus and of the 2013-2025 one, which keeps these records' ids and fields."""
    papers = {p.id: p for p in shipped}
    attention = papers["neurips2017-9372"]
    assert attention.title == "Attention is All you Need"
    assert attention.venue == "NeurIPS" and attention.year == 2017 and attention.status == "Spotlight"
    assert "Łukasz Kaiser" in attention.authors and attention.citations and attention.citations > 1000
    rated = [p for p in shipped if p.venue == "ICLR" and p.year == 2017 and p.rating_avg is not None]
    assert len(rated) == 489
    assert {p.status for p in rated} == {"Oral", "Poster", "Workshop", "Reject"}
    assert any(p.keywords for p in rated)


@needs_shared
def test_shipped_corpus_keeps_every_record_of_the_corpus_it_replaced(shipped):
    """The 17,630 records of ../shared/data/proceedings stay under their ids (README of index/data)."""
    source = {}
    for path in sorted(PROCEEDINGS.glob("*.jsonl")):
        for line in path.open(encoding="utf-8"):
            record = json.loads(line)
            source[record["id"]] = record
    papers = {p.id: p for p in shipped}
    assert len(source) == 17_630 and not set(source) - set(papers)
    assert all(papers[i].title == clean_text(r["title"]) and papers[i].year == r["year"] for i, r in source.items())


@needs_new_corpus
def test_shipped_corpus_is_compressed_within_budget():
    path = default_corpus_path()
    assert path.name == "proceedings.jsonl.xz"
    assert path.stat().st_size < 100_000_000  # corpus and vectors together add at most 150 MB (issue 35)


@needs_new_corpus
def test_shipped_corpus_matches_its_provenance(shipped):
    provenance = json.loads(NEW_CORPUS.read_text(encoding="utf-8"))
    assert len(shipped) == provenance["total"] >= 150_000
    assert len({p.id for p in shipped}) == len(shipped)
    counts: dict[str, dict[str, int]] = {}
    early: dict[str, int] = {}  # before 2013: only the previous corpus's records, kept under their ids
    for paper in shipped:
        assert paper.title and len(paper.abstract) >= 200 and paper.year
        if paper.year < 2013:
            early[paper.venue] = early.get(paper.venue, 0) + 1
        per_venue = counts.setdefault(paper.venue, {})
        per_venue[str(paper.year)] = per_venue.get(str(paper.year), 0) + 1
    # provenance.json counts venues as the builder wrote them, before `anthology_venue` (read at load)
    assert counts == {anthology_venue(venue): years for venue, years in provenance["counts"].items()}
    assert max(p.year for p in shipped) >= 2025
    for venue in ("NeurIPS", "ICML", "ICLR", "CVPR", "ACL", "EMNLP"):
        assert max(int(y) for y in counts[venue]) >= 2023, venue
    assert {s["name"] for s in provenance["sources"]} == {"papercopilot/paperlists", "rbnyng/mlanthology",
                                                           "acl-org/acl-anthology"}
    assert set(early) <= {"NeurIPS", "AISTATS", "COLT"} and min(p.year for p in shipped) == 1987
    assert provenance["previous"]["records"] == 17_630


@needs_new_corpus
def test_the_shipped_vectors_cover_every_shipped_paper_within_budget(shipped):
    """`index build` of the default corpus embeds nothing: every paper's text has its spans and chunk vectors
    in the shipped file (int8), and corpus and vectors together stay within issue 35's 150 MB."""
    import numpy as np

    from peerlint.index.embedding.embedder import Embedder
    from peerlint.index.embedding.prebuilt import SHIPPED, ShippedVectors
    from peerlint.hashing import text_hash

    vectors = ShippedVectors.load()
    assert vectors is not None and vectors.model == Embedder().model_id and vectors.max_tokens == 200
    assert vectors.vectors.dtype == np.int8 and len(vectors.vectors) == len(vectors.chunk_hashes)
    assert {text_hash(p.text) for p in shipped} <= set(vectors.content_hashes)
    assert SHIPPED.stat().st_size + default_corpus_path().stat().st_size <= 150_000_000 - _supplements_bytes()


def _supplements_bytes() -> int:
    from peerlint.index.embedding.prebuilt import SUPPLEMENTS

    return sum(p.stat().st_size for p in (*default_corpus_paths()[1:], *SUPPLEMENTS) if p.is_file())


@needs_new_corpus
def test_the_journals_supplement_has_its_vectors_and_shares_no_paper_with_the_corpus(shipped):
    """index/data/journals.jsonl.xz: the machine-learning journals, every paper with an abstract and its
    vectors in journals-vectors.npz (4-bit rows), none a paper the main corpus already holds."""
    from peerlint.hashing import text_hash
    from peerlint.index.embedding.prebuilt import SUPPLEMENTS, SUPPLEMENT_LEVELS, ShippedVectors
    from peerlint.index.ingest.identity import normalise_title

    paths = default_corpus_paths()
    assert [p.name for p in paths] == ["proceedings.jsonl.xz", "journals.jsonl.xz"]
    journals = load_papers(paths[1:], warn=lambda m: None)
    venues = {p.venue for p in journals}
    assert {"JMLR", "TMLR", "Neural Computation", "Machine Learning", "JAIR"} <= venues and len(journals) > 12_000
    assert not {normalise_title(p.title) for p in journals} & {normalise_title(p.title) for p in shipped}
    assert not {p.id for p in journals} & {p.id for p in shipped}
    vectors = ShippedVectors.load(SUPPLEMENTS[0])
    assert vectors is not None and {text_hash(p.text) for p in journals} <= set(vectors.content_hashes)
    assert int(np.abs(vectors.vectors).max()) == SUPPLEMENT_LEVELS


@needs_new_corpus
def test_new_corpus_takes_acl_2023_from_the_anthology(shipped):
    anthology = [p for p in shipped if p.venue == "ACL" and p.year == 2023]
    assert len(anthology) > 1000 and all(p.url.startswith("https://aclanthology.org/") for p in anthology)
    no_doi = [p.id for p in anthology if not p.doi.startswith("10.18653/v1/")]
    assert no_doi == ["acl2023-2023.acl-long.report"]  # the conference's report, which has no DOI


@needs_new_corpus
def test_no_anthology_venue_is_shown_by_its_lower_case_id(shipped):
    """The Anthology's metadata names some workshops only by their id ("sdp", "insights"): they read as
    SDP and INSIGHTS, like the workshops without an acronym, and are still found by any case."""
    anthology = [p for p in shipped if p.url.startswith("https://aclanthology.org/")]
    assert len(anthology) > 40_000
    assert not {p.venue for p in anthology if p.venue.islower()}
    assert sum(p.venue == "SDP" for p in anthology) == 130
    assert {p.venue for p in anthology if p.id.startswith("conll")} == {"CoNLL"}  # mixed case kept


def test_an_anthology_record_with_a_lower_case_venue_reads_upper_cased_and_no_other(tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [
        {"id": "sdp2020-2020.sdp-1.10", "title": "DeepPaperComposer", "abstract": "We present DeepPaperComposer.",
         "venue": "sdp", "year": 2020, "url": "https://aclanthology.org/2020.sdp-1.10"},
        {"id": "x1", "title": "A preprint", "abstract": "Its venue is its server's name.", "venue": "arxiv",
         "year": 2024, "url": "https://arxiv.org/abs/2401.00001"},
    ]), encoding="utf-8")
    assert [p.venue for p in load_papers([path])] == ["SDP", "arxiv"]
    assert [anthology_venue(v) for v in ("sdp", "SemEval", "*SEM", "NLP+CSS", "")] == ["SDP", "SemEval", "*SEM",
                                                                                      "NLP+CSS", ""]


# --- JSONL -----------------------------------------------------------------------------------------------------


@needs_shared
def test_reading_reports_progress_by_the_thousand_records(tmp_path):
    """`index build` shows a count while the corpus is read (~16 s for the shipped one, silent before)."""
    files = [PROCEEDINGS / "acl-2021.jsonl", PROCEEDINGS / "coling-2020.jsonl"]
    records = sum(1 for f in files for line in f.read_text(encoding="utf-8").splitlines() if line.strip())
    told: list[int] = []
    papers = load_papers(files, progress=told.append)
    assert told[:1] == [ingest.PROGRESS_EVERY] and sum(told) == records and len(papers) <= records
    assert len(told) == -(-records // ingest.PROGRESS_EVERY)



def test_a_read_that_fails_leaves_no_bar_above_its_error(tmp_path, capsys):
    """`index build --corpus MISSING` printed "reading: 0 records" above the error; now the line is wiped."""
    from peerlint.index.progress import Progress

    with pytest.raises(CorpusError, match="does not exist"):
        with Progress("reading", total=None, unit=" records") as bar:
            load_papers([tmp_path / "missing.jsonl"], progress=bar.update)
    failed = capsys.readouterr().err
    assert not failed.endswith("\n") and not failed.rpartition("\r")[2].strip(), repr(failed)
    with Progress("reading", total=None, unit=" records") as bar:
        bar.update(3)
    assert capsys.readouterr().err.rstrip("\n").rpartition("\r")[2].startswith("reading: 3 records")


def test_jsonl_skips_malformed_rows_and_names_them(tmp_path):
    path = tmp_path / "venue-2020.jsonl"
    lines = [
        json.dumps({"id": "ok1", "title": "  Spaced\n title ", "abstract": "An\tabstract  with  gaps.", "venue": "V",
                    "year": 2020, "status": "Poster", "authors": ["A  B", ""], "keywords": ["k"], "url": None,
                    "rating_avg": 6.5, "citations": 3, "source": "ignored"}),
        '{"id": "broken", "title": ',
        json.dumps({"id": "badyear", "title": "T", "abstract": "A", "year": "abc"}),
        json.dumps({"id": "notext", "venue": "V", "year": 2020}),
        "",
        json.dumps({"id": "ok2", "abstract": "Only an abstract.", "year": "2019", "date": "2019-05-02",
                    "references": ["ok1"], "authors": "C D; E F"}),
        json.dumps(["not", "an", "object"]),
        json.dumps({"id": "badauthors", "title": "T", "authors": [1.5]}),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    papers, warnings = collect([path])
    assert [p.id for p in papers] == ["ok1", "ok2"]
    first, second = papers
    assert first.title == "Spaced title" and first.abstract == "An abstract with gaps."
    assert first.authors == ("A B",) and first.rating_avg == 6.5 and first.citations == 3 and first.url == ""
    assert second.year == 2019 and second.date == "2019-05-02" and second.references == ("ok1",)
    assert second.authors == ("C D", "E F") and second.title == ""
    assert len(warnings) == 5
    assert warnings[0].startswith(f"{path}:2: invalid JSON")
    assert warnings[1].startswith(f"{path}:3: year 'abc' is not an integer")
    assert warnings[2].startswith(f"{path}:4: no title and no abstract")
    assert warnings[3].startswith(f"{path}:7: expected a JSON object")
    assert warnings[4].startswith(f"{path}:8: authors must hold strings")


@pytest.mark.parametrize("authors, read", [
    (["Kelvin Guu, Kenton Lee, Zora Tung"], ("Kelvin Guu", "Kenton Lee", "Zora Tung")),  # paperlists' CVPR/ICML/NeurIPS
    (["Ilia Sucholutsky,Matthias Schonlau"], ("Ilia Sucholutsky", "Matthias Schonlau")),  # its AAAI 2021
    ("Kelvin Guu, Kenton Lee", ("Kelvin Guu", "Kenton Lee")),
    (["Guu, Kelvin"], ("Guu, Kelvin",)),  # one person, family name first
    (["Smith, J., Doe, K."], ("Smith, J., Doe, K.",)),  # ambiguous: kept as written
    (["García Márquez, Gabriel José", "Ann Lee"], ("García Márquez, Gabriel José", "Ann Lee")),  # a list is a list
])
def test_an_author_field_of_one_string_is_split_into_its_people(tmp_path, authors, read):
    path = tmp_path / "venue.jsonl"
    path.write_text(json.dumps({"id": "p", "title": "T", "abstract": "A", "authors": authors}) + "\n", encoding="utf-8")
    papers, warnings = collect([path])
    assert warnings == [] and papers[0].authors == read


@pytest.mark.parametrize("suffix, opener", [(".jsonl.gz", gzip.open), (".jsonl.xz", lzma.open)])
def test_compressed_jsonl(tmp_path, suffix, opener):
    path = tmp_path / f"corpus{suffix}"
    with opener(path, "wt", encoding="utf-8") as sink:
        sink.write(json.dumps({"id": "z", "title": "Zipped", "abstract": "Text", "year": 1999}) + "\n{oops\n")
    papers, warnings = collect([path])
    assert [(p.id, p.title, p.year) for p in papers] == [("z", "Zipped", 1999)]
    assert len(warnings) == 1 and warnings[0].startswith(f"{path}:2:")


def test_truncated_archive_keeps_what_was_read(tmp_path):
    whole = tmp_path / "whole.jsonl.xz"
    with lzma.open(whole, "wt", encoding="utf-8") as sink:
        for i in range(2000):
            sink.write(json.dumps({"id": str(i), "title": f"Paper {i}", "abstract": "x" * i}) + "\n")
    cut = tmp_path / "cut.jsonl.xz"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    papers, warnings = collect([cut])
    assert 0 < len(papers) < 2000
    assert len(warnings) == 1 and "cannot read the file" in warnings[0]


def test_row_warnings_are_capped_per_file(tmp_path):
    path = tmp_path / "noisy.jsonl"
    path.write_text("{bad\n" * 50 + json.dumps({"id": "fine", "title": "T"}) + "\n", encoding="utf-8")
    papers, warnings = collect([path])
    assert [p.id for p in papers] == ["fine"]
    assert len(warnings) == ingest.MAX_ROW_WARNINGS + 1
    assert warnings[-1] == f"{path}: 30 more rows skipped (50 in all)"


def test_latin1_file_is_read_with_a_warning(tmp_path):
    path = tmp_path / "legacy.jsonl"
    good = json.dumps({"id": "u", "title": "Déjà vu", "abstract": "UTF-8 line"}, ensure_ascii=False)
    latin = json.dumps({"id": "l", "title": "Café “naïve”", "abstract": "Ökonometrie"}, ensure_ascii=False)
    path.write_bytes(good.encode("utf-8") + b"\n" + latin.encode("cp1252") + b"\n")
    papers, warnings = collect([path])
    assert [(p.id, p.title) for p in papers] == [("u", "Déjà vu"), ("l", "Café “naïve”")]
    assert papers[1].abstract == "Ökonometrie"
    assert len(warnings) == 1 and warnings[0].startswith(f"{path}:2: not valid UTF-8")


def test_default_warn_goes_to_the_log(tmp_path, caplog):
    path = tmp_path / "one.jsonl"
    path.write_text('{"id": "a", "title": "T"}\nnot json\n', encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="peerlint.index.ingest.load"):
        assert len(list(read_corpus([path]))) == 1
    assert f"{path}:2: invalid JSON" in caplog.text


# --- CSV ---------------------------------------------------------------------------------------------------------


def test_csv_with_a_bad_row(tmp_path):
    path = tmp_path / "papers.csv"
    path.write_text(
        "\ufeffid,Title,abstract,venue,year,authors,keywords,rating_avg\n"
        'c1,"A title, with a comma","An abstract",ACL,2021,Ann Lee; Bo Chen,retrieval; ranking,\n'
        "c2,Too,many,fields,in,this,row,here,!\n"
        "c3,T,A,V,20x1,,,\n"
        "\n"
        'c4,"A title that spans\ntwo lines",Abstract,V,,,,7.5\n',
        encoding="utf-8",
    )
    papers, warnings = collect([path])
    assert [p.id for p in papers] == ["c1", "c4"]
    assert papers[0].title == "A title, with a comma" and papers[0].year == 2021
    assert papers[0].authors == ("Ann Lee", "Bo Chen") and papers[0].keywords == ("retrieval", "ranking")
    assert papers[0].rating_avg is None and papers[1].rating_avg == 7.5
    assert papers[1].title == "A title that spans two lines"
    assert warnings == [
        f"{path}:3: 9 fields where the header has 8; skipped",
        f"{path}:4: year '20x1' is not an integer; skipped",
    ]


def test_csv_without_text_columns_is_skipped(tmp_path):
    path = tmp_path / "wrong.csv"
    path.write_text("name,size\nx,1\n", encoding="utf-8")
    papers, warnings = collect([path])
    assert papers == [] and len(warnings) == 1 and "no 'title' or 'abstract' column" in warnings[0]


# --- BibTeX ------------------------------------------------------------------------------------------------------

BIB = r"""% A comment line before the entries.
@string{acl = {Proceedings of ACL}}

@inproceedings{muller2021bert,
  title     = {A {BERT} Study of $k$-means},
  author    = {M{\"u}ller, Hans and Smith, Jr, John and {Barnes and Noble} and others},
  booktitle = acl,
  year      = {2021},
  doi       = {https://doi.org/10.18653/v1/XYZ},
  keywords  = {retrieval, ranking},
  abstract  = {We study \emph{things} \cite{other}. It is 95\% better.}
}

@article{noabstract2000,
  title   = {A paper without an abstract},
  journal = {Journal of Examples},
  year    = 2000
}

@article{broken2001,
  title    = {Unbalanced {brace,
  abstract = {text}
}

@misc{plain2019,
  title    = {Plain entry},
  author   = {Jane Roe},
  abstract = {An abstract.},
  year     = {2019}
}
"""


def test_bibtex_entries(tmp_path):
    path = tmp_path / "refs.bib"
    path.write_text(BIB, encoding="utf-8")
    papers, warnings = collect([path])
    assert [p.id for p in papers] == ["10.18653/v1/XYZ", "plain2019"]
    first = papers[0]
    assert first.title == "A BERT Study of k-means"
    assert first.abstract == "We study things. It is 95% better."
    assert first.authors == ("Hans Müller", "John Smith Jr", "Barnes and Noble")
    assert first.venue == "Proceedings of ACL" and first.year == 2021
    assert first.keywords == ("retrieval", "ranking") and first.url == "https://doi.org/10.18653/v1/XYZ"
    assert papers[1].authors == ("Jane Roe",) and papers[1].venue == ""
    assert warnings == [
        f"{path}:14: entry 'noabstract2000': no abstract; skipped",
        f"{path}:20: cannot parse BibTeX entry 'broken2001' (unbalanced braces); skipped",
    ]


def test_a_bib_that_redefines_its_string_macros_reads_quietly(tmp_path, caplog):
    """Real CVPR-template .bib files define `pami`, `ijcv`, ... in each file (tests/data/real's CVPR
    papers): bibtexparser warned once per redefinition, some thirty lines before any result."""
    path = tmp_path / "refs.bib"
    path.write_text('@string{pami = "IEEE TPAMI"}\n@string{pami = "IEEE Trans. PAMI"}\n'
                    '@article{he2016, title = {Deep Residual Learning}, journal = pami, year = {2016},\n'
                    '  abstract = {Deeper networks are harder to train.}}\n', encoding="utf-8")
    with caplog.at_level(logging.DEBUG - 5):
        papers, warnings = collect([path])
    assert [(p.id, p.venue) for p in papers] == [("he2016", "IEEE Trans. PAMI")] and warnings == []
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


# --- .tex papers and directories ---------------------------------------------------------------------------------


@needs_shared
def test_directory_mix_with_a_real_tex_paper(tmp_path):
    root = tmp_path / "corpus"
    (root / "acl").mkdir(parents=True)
    shutil.copy(LATEX / "acl-org" / "acl_latex.tex", root / "acl" / "acl_latex.tex")
    (root / "acl" / "part.tex").write_text("\\section{An input-ed part}\nNo documentclass here.\n", encoding="utf-8")
    (root / "notes.txt").write_text("not a corpus file", encoding="utf-8")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "skip.jsonl").write_text(json.dumps({"id": "hidden", "title": "T"}) + "\n", encoding="utf-8")
    (root / "nested" / "deeper").mkdir(parents=True)
    (root / "nested" / "deeper" / "rows.jsonl").write_text(
        json.dumps({"id": "j1", "title": "JSON paper", "abstract": "A"}) + "\n", encoding="utf-8")
    (root / "nested" / "table.csv").write_text("id,title,abstract\nc1,CSV paper,B\n", encoding="utf-8")
    (root / "refs.bib").write_text(BIB, encoding="utf-8")
    papers, warnings = collect([root])
    ids = [p.id for p in papers]
    # a folder's own files come before its subfolders
    assert ids == ["10.18653/v1/XYZ", "plain2019", "acl/acl_latex.tex", "c1", "j1"]
    acl = papers[2]
    assert acl.title == "Instructions for *ACL Proceedings"
    assert acl.abstract.startswith("This document is a supplement to the general instructions for *ACL authors.")
    assert "LaTeX style files" in acl.abstract and "\\" not in acl.abstract and "\n" not in acl.abstract
    assert len(warnings) == 2  # the two bad BibTeX entries; the .tex part and the .txt file are silent


@needs_shared
def test_shared_templates_as_a_corpus():
    papers = load_papers([LATEX], warn=lambda message: None)
    titles = {p.id: p.title for p in papers}
    assert titles["ICLR/iclr2021_conference.tex"] == "Formatting Instructions for ICLR 2021 Conference Submissions"
    assert titles["acl-org/acl_latex.tex"] == "Instructions for *ACL Proceedings"
    assert all(p.abstract for p in papers)


def test_tex_abstract_in_an_input_file_and_a_commented_title(tmp_path):
    (tmp_path / "sections").mkdir()
    (tmp_path / "sections" / "abstract.tex").write_text(
        "\\begin{abstract}\nWe show that $x^2$ grows~fast \\cite{a}, see Table~\\ref{t}.\n\\end{abstract}\n",
        encoding="utf-8")
    main = tmp_path / "main.tex"
    main.write_text(
        "\\documentclass{article}\n% \\title{Commented out}\n"
        "\\title[Short]{A \\emph{Real} Title\\thanks{Funded.} \\\\ on Two Lines}\n"
        "\\begin{document}\\maketitle\n\\input{sections/abstract}\n\\end{document}\n",
        encoding="utf-8")
    papers, warnings = collect([main])
    assert warnings == []
    expected = Paper(id="main.tex", title="A Real Title on Two Lines", abstract="We show that x^2 grows fast, see Table.")
    assert papers == [expected]


def test_tex_without_title_or_abstract_is_warned(tmp_path):
    path = tmp_path / "empty.tex"
    path.write_text("\\documentclass{article}\n\\begin{document}Body only.\\end{document}\n", encoding="utf-8")
    papers, warnings = collect([path])
    assert papers == [] and warnings == [f"{path}:1: no \\title and no abstract environment; skipped"]


# --- errors the user can cause -------------------------------------------------------------------------------------


def test_missing_path_names_the_fix(tmp_path):
    with pytest.raises(CorpusError, match=r"does not exist: check the spelling, or pass a \.jsonl"):
        read_corpus([tmp_path / "nope.jsonl"])
    with pytest.raises(CorpusError, match="does not exist"):
        load_papers([tmp_path / "nope"])


def test_unsupported_file_names_the_fix(tmp_path):
    path = tmp_path / "papers.xlsx"
    path.write_bytes(b"PK")
    with pytest.raises(CorpusError, match=r"not a corpus file peerlint reads: pass a \.jsonl"):
        load_papers([path])


def test_empty_file_raises_with_a_helpful_message(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text("", encoding="utf-8")
    warnings: list[str] = []
    with pytest.raises(CorpusError, match="contains no usable papers") as raised:
        load_papers([path], warn=warnings.append)
    assert str(path) in str(raised.value) and "shipped proceedings" in str(raised.value)
    assert warnings == [f"{path}: the file is empty"]


def test_corpus_of_only_bad_rows_raises(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("id,title,abstract\n1,,\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="contains no usable papers"):
        load_papers([path], warn=lambda message: None)


def test_duplicate_ids_keep_the_first(tmp_path):
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    one.write_text(json.dumps({"id": "same", "title": "First"}) + "\n", encoding="utf-8")
    two.write_text(json.dumps({"id": "other", "title": "Other"}) + "\n"
                   + json.dumps({"id": "same", "title": "Second"}) + "\n", encoding="utf-8")
    warnings: list[str] = []
    papers = load_papers([one, two, str(one)], warn=warnings.append)
    assert [(p.id, p.title) for p in papers] == [("same", "First"), ("other", "Other")]
    assert warnings == [f"{two}:2: duplicate id 'same' (first seen at {one}:1); kept the first"]


# --- never crash ----------------------------------------------------------------------------------------------------

_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
_records = st.dictionaries(
    st.sampled_from(["id", "title", "abstract", "venue", "year", "status", "authors", "keywords", "url",
                     "rating_avg", "citations", "date", "references"]),
    _values,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.one_of(_records.map(json.dumps), st.binary(max_size=40).map(lambda b: b"x" + b)),
                      min_size=1, max_size=8))
def test_any_jsonl_line_is_either_a_paper_or_a_warning(tmp_path, lines):
    path = tmp_path / "fuzz.jsonl"
    encoded = [line.encode("utf-8") if isinstance(line, str) else line for line in lines]
    rows = b"\n".join(line.replace(b"\n", b" ").replace(b"\r", b" ") for line in encoded) + b"\n"
    path.write_bytes(rows)
    papers, warnings = collect([path])
    row_warnings = [w for w in warnings if re.match(re.escape(str(path)) + r":\d+: (?!not valid UTF-8)", w)]
    nonblank = sum(1 for line in rows.split(b"\n") if line.strip())
    assert len(papers) + len(row_warnings) == nonblank
    for paper in papers:
        assert paper.title or paper.abstract
        assert paper.title == " ".join(paper.title.split())
        assert paper.year is None or isinstance(paper.year, int)


# --- the example draft ------------------------------------------------------------------------------------------------


def test_example_project_reads_as_one_paper():
    papers, warnings = collect([EXAMPLES])
    assert [p.id for p in papers] == ["draft.tex"]  # sections/appendix.tex is an \input-ed part
    assert papers[0].title == "Nearest Neighbours as Reviewers: Retrieval-Augmented Scoring of Scientific Drafts"
    assert papers[0].abstract.startswith("Authors revise a paper many times before submission")
    assert warnings and all(w.endswith("no abstract; skipped") for w in warnings)  # refs.bib has no abstracts


def test_example_draft_cites_omits_and_paraphrases_shipped_papers(shipped):
    draft = (EXAMPLES / "draft.tex").read_text(encoding="utf-8")
    cited = set(re.findall(r"\\cite[pt]?\{([^}]*)\}", draft))
    entries = {e["ID"]: e for e in bibtexparser.loads((EXAMPLES / "refs.bib").read_text(encoding="utf-8")).entries}
    assert {key for keys in cited for key in keys.split(",")} == set(entries)
    assert 8 <= len(entries) <= 12
    assert "\\input{sections/appendix}" in draft and any(ord(ch) > 0xFFFF for ch in draft)

    def squash(title: str) -> str:
        return re.sub(r"[^a-z0-9]", "", title.lower())

    corpus = {squash(p.title): p for p in shipped}
    in_corpus = [e for e in entries.values() if squash(e["title"]) in corpus]
    assert len(in_corpus) >= 6
    for entry in in_corpus:
        paper = corpus[squash(entry["title"])]
        assert int(entry["year"]) == paper.year and entry["url"] == paper.url
    omitted_and_paraphrased = [
        "acl2021-2021.acl-long.473", "acl2021-2021.acl-long.166", "coling2020-2020.coling-main.555"]
    by_id = {p.id: p for p in shipped}
    cited_titles = {squash(e["title"]) for e in entries.values()}
    for paper_id in omitted_and_paraphrased:
        assert paper_id in draft  # named in a LaTeX comment
        assert squash(by_id[paper_id].title) not in cited_titles


def test_default_corpus_paths_leave_out_a_supplement_that_is_not_there(tmp_path, monkeypatch):
    """An install without the journals file (deleted, or a trimmed package) builds from the corpus alone,
    and one with it reads both, corpus first (an existing index appends rather than rebuilds)."""
    from peerlint.index.ingest import load

    main = tmp_path / "proceedings.jsonl.xz"
    main.write_bytes(b"")
    monkeypatch.setattr(load, "default_corpus_path", lambda: main)
    assert load.default_corpus_paths() == [main]
    (tmp_path / "journals.jsonl.xz").write_bytes(b"")
    assert load.default_corpus_paths() == [main, tmp_path / "journals.jsonl.xz"]


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=40)
       | st.lists(st.sampled_from(["a", " ", "  ", "\t", "\n", "\u00a0", "\u3000", "e\u0301", "\u00e9", "\x07",
                                   "\u2028", "\ufb01", "Ａ", "ü"]), max_size=12).map("".join))
@settings(max_examples=400, deadline=None)
def test_clean_text_returns_clean_text_unchanged_and_cleans_the_rest(text):
    """`clean_text` skips its three passes for text that is clean already; the answer is the passes' own."""
    import unicodedata

    from peerlint.index.ingest.records import _CONTROL

    passes = " ".join(unicodedata.normalize("NFC", _CONTROL.sub("", text)).split())
    assert clean_text(text) == passes
    assert clean_text(passes) == passes
