"""`peerlint bench coverage`: a real LaTeX project's citations looked up in a corpus, by each method."""

from __future__ import annotations

import json
from pathlib import Path

from peerlint.server.cli import main

REAL = Path(__file__).resolve().parent / "data" / "real"


def test_coverage_of_a_real_project_by_each_method(tmp_path, capsys):
    corpus = tmp_path / "corpus.jsonl"
    rows = [
        {"id": "doi-one", "title": "Some other title", "doi": "10.1109/MCSE.2007.55"},  # matplotlib, by DOI
        {"id": "arXiv:1801.10130", "title": "Renamed spherical paper"},  # cohen2018sphericalcnn, by arXiv id
        {"id": "x1", "title": "Spherical convolutions and their application in molecular modelling"},  # by title
        {"id": "x2", "title": "Learning Spherical Convolution for Fast Features from 360° Imagery (extended)",
         "authors": ["Yu-Chuan Su", "Kristen Grauman"], "year": 2018},  # su2017sphericalcnn, author + year
        {"id": "x3", "title": "Learning spherical convolution for fast features", "authors": ["Someone Else"],
         "year": 2017},  # same words, another first author: no match
    ]
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "results"
    assert main(["bench", "coverage", "--from-latex", str(REAL / "iclr2020-deepsphere"), str(REAL / "README.md"),
                 "--corpus", str(corpus), "--out", str(out), "--missing"]) == 0
    printed = capsys.readouterr()
    assert "README.md is neither a folder nor a .tex file; skipped" in printed.err
    assert "iclr2020-deepsphere: missing numpy: The NumPy array" in printed.out
    (result,) = [json.loads(p.read_text()) for p in out.glob("coverage-*.json")]
    (project,) = result["projects"]
    assert project["root"].endswith("iclr2020-deepsphere/main.tex")
    assert project["cited"] == 31 and project["in_bib"] == 30 and project["unresolved_keys"] == ["driscoll1994Fouriersphere"]
    assert project["held"] == {"doi": 1, "arxiv": 1, "title": 1, "author-year": 1}
    assert abs(project["coverage"] - 4 / 30) < 1e-9
    assert result["dataset"]["papers"] == 5 and result["commit"] and result["command"]
    assert result["in_field"] is None  # no paper from outside the corpus's fields among the projects


def test_papers_outside_the_corpus_fields_are_summed_apart(tmp_path, capsys):
    """A systems paper beside an ML one: `all` sums both, `in field` only the ML one, and says whom it left out."""
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "x1", "title": "Spherical convolutions and their application in molecular "
                                  "modelling"}) + "\n", encoding="utf-8")
    out = tmp_path / "results"
    assert main(["bench", "coverage", "--from-latex", str(REAL / "iclr2020-deepsphere"), str(REAL / "usenix2023-logpedia"),
                 "--corpus", str(corpus), "--out", str(out)]) == 0
    assert "in field (1)" in capsys.readouterr().out
    (result,) = [json.loads(p.read_text()) for p in out.glob("coverage-*.json")]
    ml = next(p for p in result["projects"] if p["name"] == "iclr2020-deepsphere")
    assert result["in_field"]["left_out"] == ["usenix2023-logpedia"] and result["in_field"]["projects"] == 1
    assert result["in_field"]["in_bib"] == ml["in_bib"] == 30 and result["in_field"]["held_total"] == 1
    assert result["total"]["in_bib"] > 30 and abs(result["in_field"]["coverage"] - 1 / 30) < 1e-9


def _project_coverage(tmp_path: Path, project: str, rows: list[dict]) -> dict:
    """`bench coverage` of one real project against a corpus of `rows`: that project's JSON result."""
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "results"
    assert main(["bench", "coverage", "--from-latex", str(REAL / project), "--corpus", str(corpus),
                 "--out", str(out)]) == 0
    (result,) = [json.loads(p.read_text()) for p in out.glob("coverage-*.json")]
    (found,) = result["projects"]
    return found


def test_a_work_the_corpus_dates_after_the_project_is_not_counted_as_held(tmp_path):
    """DeepSphere's newest .bib entry is of 2020: a match dated 2030 was not in any index when it was written."""
    project = _project_coverage(tmp_path, "iclr2020-deepsphere", [
        {"id": "x1", "title": "Spherical convolutions and their application in molecular modelling", "year": 2030},
        {"id": "doi-one", "title": "Some other title", "doi": "10.1109/MCSE.2007.55", "year": 2007}])
    assert project["year"] == 2020
    assert project["held"] == {"doi": 1} and project["held_later"] == 1
    assert abs(project["coverage"] - 1 / 30) < 1e-9


def test_of_two_papers_with_one_title_the_one_before_the_project_is_held(tmp_path):
    """'Hyperbolic Neural Networks++' (ICLR 2021) normalises like 'Hyperbolic Neural Networks' (NeurIPS 2018);
    a 2020 paper citing the title means the earlier one, whichever the corpus lists first."""
    title = "Spherical convolutions and their application in molecular modelling"
    project = _project_coverage(tmp_path, "iclr2020-deepsphere", [
        {"id": "later", "title": title + " ++", "year": 2030}, {"id": "earlier", "title": title, "year": 2017}])
    assert project["held"] == {"title": 1} and project["held_later"] == 0


def test_authors_joined_by_commas_in_one_string_are_found_by_surname_and_year(tmp_path):
    """The shipped corpus's record of REALM (ICML 2020, from paperlists) lists its five authors as one
    string; the paper is titled without 'REALM:', so only the first author's surname and year find it."""
    realm = {"id": "icml2020-site_5344cd3c6f", "title": "Retrieval Augmented Language Model Pre-Training",
             "abstract": "Language model pre-training has been shown to capture a surprising amount of world knowledge.",
             "venue": "ICML", "year": 2020,
             "authors": ["Kelvin Guu, Kenton Lee, Zora Tung, Panupong Pasupat, Mingwei Chang"]}
    project = _project_coverage(tmp_path, "naacl2021-beam-dense-retrieval", [realm])
    assert project["held"] == {"author-year": 1}


def test_run_from_a_paper_folder_it_writes_to_the_cache_and_skips_style_commands(tmp_path, capsys, monkeypatch):
    """Run where a writer runs it (their paper's folder): no results/ appears there, and DataComp's
    `\\setcitestyle{numbers}` is not a cited key named "numbers"."""
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "x", "title": "Learning transferable visual models from natural language "
                                  "supervision"}) + "\n", encoding="utf-8")
    paper = tmp_path / "paper"
    paper.mkdir()
    monkeypatch.chdir(paper)
    monkeypatch.setenv("PEERLINT_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["bench", "coverage", "--from-latex", str(REAL / "neurips2023-datacomp"), "--corpus", str(corpus),
                 "--missing"]) == 0
    assert not (paper / "results").exists() and not list(paper.iterdir())
    (path,) = (tmp_path / "cache" / "results").glob("coverage-*.json")
    assert str(path) in capsys.readouterr().out  # said where
    (project,) = json.loads(path.read_text())["projects"]
    assert "numbers" not in project["unresolved_keys"] and project["cited"] > 100
