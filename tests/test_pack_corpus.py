"""The default-corpus builder on small real extracts of its three sources (tests/data/corpus/).

- paperlists/iclr/iclr2018.json: six ICLR 2018 records of papercopilot/paperlists (commit d3c8627), among
  them a withdrawn paper with an abstract, a withdrawn one without, a reject and LaTeX in abstracts;
- paperlists/acl/acl2021.json: two ACL 2021 records (commit a197245);
- mlanthology/data/papers/iclr-2018.json.gz: four records of rbnyng/mlanthology (commit 4cd408c), three of
  them the same papers as paperlists' accepted ones;
- mlanthology/data/papers/jmlr-2003.json.gz and data/legacy/neco-legacy.jsonl.gz: the first three JMLR
  2003 and the first two Neural Computation records of rbnyng/mlanthology (commit 4cd408c), for the
  journals supplement;
- anthology/data/xml/2021.acl.xml: four papers of acl-org/acl-anthology's 2021.acl.xml (CC BY 4.0; via the
  yhamidullah/acl-anthology fork, commit e56721e), with <tex-math>, <i> and <b> in abstracts.
"""

from __future__ import annotations

import json
import lzma
import shutil
import subprocess
from pathlib import Path

import pytest

from peerlint.index.ingest.corpus_sources import MIN_ABSTRACT_CHARS, PAPERLISTS, SourceRecord, Tree, choose_versions
from peerlint.index.ingest.load import load_papers, read_corpus
from peerlint.index.ingest.markup import clean_markup, clean_title
from peerlint.index.ingest.pack_corpus import build, group_same_papers, main, merge, write

DATA = Path(__file__).parent / "data" / "corpus"
SOURCES = [("paperlists", DATA / "paperlists"), ("mlanthology", DATA / "mlanthology"), ("anthology", DATA / "anthology")]


@pytest.fixture(scope="module")
def built():
    return build(SOURCES, warn=lambda message: pytest.fail(message))


@pytest.fixture(scope="module")
def by_id(built):
    return {r["id"]: r for r in built.records}


# --- cleaning ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("raw, clean", [
    ("robustness to $\\ell_2$ and $\\ell_\\infty$ attacks", "robustness to ℓ_2 and ℓ_∞ attacks"),
    ("we named as the <i>flat pattern</i> and the <b>DialoFlow</b> model", "we named as the flat pattern and the DialoFlow model"),
    ("H<sub>2</sub>O &amp; CO<sub>2</sub>", "H2O & CO2"),
    ("&amp;lt;i&amp;gt;double&amp;lt;/i&amp;gt; escaped", "double escaped"),
    ("an $\\alpha$-$\\beta$-$\\gamma$ strategy", "an α-β-γ strategy"),
    ("an 𝛼-𝛽-𝛾 strategy over 𝐱", "an α-β-γ strategy over x"),
    ("scales as $B \\propto \\epsilon N$ here", "scales as B propto ε N here"),
    ("\\emph{not} a \\textbf{bold} claim on G\\\"odel", "not a bold claim on Gödel"),
    ("it costs $5 to $10 per hour", "it costs $5 to $10 per hour"),  # dollars, not math
    ("performance/cost ratio.< <ETX xmlns:mml=\"http://www.w3.org/1998/Math/MathML\">&gt;</ETX>", "performance/cost ratio."),
    ("a < b and c > d", "a < b and c > d"),  # comparisons are not tags
    (None, ""),
])
def test_clean_markup(raw, clean):
    assert clean_markup(raw) == clean


# titles of the shipped corpus that cleaning left as BibTeX wrote them (JMLR 2018 and 2017, AISTATS 2023,
# COLT 2021 and 2018): peerlint showed "Rates\\{via Publicly Estimated Subspaces" in a suggestion
@pytest.mark.parametrize("raw, clean", [
    ("State-by-state Minimax Adaptive Estimation for Nonparametric Hidden {M}arkov Models",
     "State-by-state Minimax Adaptive Estimation for Nonparametric Hidden Markov Models"),
    ("Generalized P{ólya Urn for Time-Varying Pitman-Yor Processes", "Generalized Pólya Urn for Time-Varying Pitman-Yor Processes"),
    ("{PF}^2ES: Parallel Feasible Pareto Frontier Entropy Search", "PF^2ES: Parallel Feasible Pareto Frontier Entropy Search"),
    ("(Nearly) Dimension Independent Private ERM with AdaGrad Rates\\{via Publicly Estimated Subspaces",
     "(Nearly) Dimension Independent Private ERM with AdaGrad Rates via Publicly Estimated Subspaces"),
    ("Dimensionality Reduced $\\ell^{0}$-Sparse Subspace Clustering", "Dimensionality Reduced ℓ^0-Sparse Subspace Clustering"),
    ("What you can cram into a single $&!#* vector", "What you can cram into a single $&!#* vector"),
])
def test_clean_title(raw, clean):
    assert clean_title(raw) == clean


def test_a_suggested_paper_is_shown_without_bibtex_braces():
    from peerlint.index.papers import Hit, Paper
    from peerlint.retrieval.retriever import HitView

    paper = Paper("jmlr-v19-lehericy18a", "State-by-state Minimax Adaptive Estimation for Nonparametric Hidden {M}arkov Models",
                  "We introduce a new estimator ...", venue="JMLR", year=2018)
    view = HitView.of(Hit(paper, 0.71))
    assert view.label() == '"State-by-state Minimax Adaptive Estimation for Nonparametric Hidden Markov Models" (JMLR 2018)'


def test_a_rating_s_reference_passage_is_titled_without_bibtex_braces():
    """The published passages a rating was compared with are shown in its evidence, titles and all."""
    import numpy as np

    from peerlint.analyzers.drafts.scoring import DraftScorer
    from peerlint.index.papers import Hit, Paper

    class OneHit:
        def vectors(self, texts, hashes):
            return np.zeros((len(texts), 4), np.float32)

        def search(self, vec, text, k, flt=None):
            return [Hit(Paper("jmlr-v19-lehericy18a", "Nonparametric Hidden {M}arkov Models",
                              "We introduce a new estimator ...", venue="JMLR", year=2018), 0.71)]

    refs = DraftScorer(None, OneHit(), truncate=lambda text, n: text).references("A draft paragraph on hidden Markov models.")
    assert [r.title for r in refs] == ["Nonparametric Hidden Markov Models"]


# --- one record per paper ----------------------------------------------------------------------------------


def test_build_merges_sources_and_drops_records_without_abstracts(built, by_id):
    iclr = sorted(r["id"] for r in built.records if r["venue"] == "ICLR")
    assert iclr == ["fortunato2018iclr-noisy", "iclr2018-B11bwYgfM", "iclr2018-B16yEqkCZ", "iclr2018-B1Yy1BxCZ",
                    "iclr2018-BJij4yg0Z", "iclr2018-BkUHlMZ0b"]
    assert "iclr2018-BysrYlP0-" not in by_id  # withdrawn with a 12-character "abstract": dropped
    acl = sorted(r["id"] for r in built.records if r["venue"] == "ACL")
    assert acl == ["acl2021-2021.acl-long.11", "acl2021-2021.acl-long.3", "acl2021-2021.acl-long.54",
                   "acl2021-2021.acl-short.3"]
    assert all(len(r["abstract"]) >= MIN_ABSTRACT_CHARS for r in built.records)
    merge_counts = built.provenance["merge"]
    assert merge_counts["source_records"] == 16 and merge_counts["papers"] == 11
    assert merge_counts["dropped_without_abstract"] == 1 and built.provenance["total"] == 10
    assert built.provenance["counts"] == {"ACL": {"2021": 4}, "ICLR": {"2018": 6}}


def test_merged_record_keeps_decision_rating_and_the_other_sources_fields(by_id):
    batch = by_id["iclr2018-B1Yy1BxCZ"]  # paperlists (decision, ratings) + mlanthology (same OpenReview id)
    assert batch["title"] == "Don't Decay the Learning Rate, Increase the Batch Size"
    assert batch["status"] == "Poster" and batch["rating_avg"] is not None
    assert "$" not in batch["abstract"] and "B ∝" not in batch["abstract"] and "ε" in batch["abstract"]
    only_mla = by_id["fortunato2018iclr-noisy"]
    assert only_mla["status"] == "Accept" and only_mla["rating_avg"] is None
    acl = by_id["acl2021-2021.acl-long.54"]  # paperlists + Anthology, same DOI
    assert acl["status"] == "Long" and acl["doi"] == "10.18653/v1/2021.acl-long.54" and acl["date"] == "2021-08"
    assert "α-β-γ" in acl["abstract"]
    dialoflow = by_id["acl2021-2021.acl-long.11"]  # Anthology only
    assert "flat pattern" in dialoflow["abstract"] and "<i>" not in dialoflow["abstract"]
    assert "(r=0.9)" in dialoflow["abstract"] and dialoflow["url"] == "https://aclanthology.org/2021.acl-long.11"


def test_withdrawn_papers_keep_an_honest_status(by_id):
    assert by_id["iclr2018-B11bwYgfM"]["status"] == "Withdraw"
    assert by_id["iclr2018-B16yEqkCZ"]["status"] == "Reject"


def test_same_paper_under_two_titles_is_one_record_when_an_identifier_agrees(built):
    records = [SourceRecord(source="papercopilot/paperlists", venue_key="acl", venue="ACL", year=2021,
                            local_id="2021.acl-short.3", title="Coreference Resolution without Span Representations",
                            abstract="x" * 300, doi="10.18653/v1/2021.acl-short.3"),
               SourceRecord(source="acl-org/acl-anthology", venue_key="acl", venue="ACL", year=2021,
                            local_id="2021.acl-short.3", title="Coreference resolution without span representations.",
                            abstract="y" * 400, doi="10.18653/v1/2021.acl-short.3"),
               SourceRecord(source="acl-org/acl-anthology", venue_key="acl", venue="ACL", year=2021, local_id="other",
                            title="Span-based coreference", abstract="z" * 300)]
    renamed = records[1].__class__(**{**records[1].__dict__, "title": "Start-to-End Coreference Without Spans"})
    groups = group_same_papers([records[0], renamed, records[2]])
    assert sorted(len(g) for g in groups) == [1, 2]  # the DOI joins the two titles; the third stays apart
    merged = merge(next(g for g in groups if len(g) == 2), ["papercopilot/paperlists", "acl-org/acl-anthology"])
    assert merged["title"] == records[0].title and merged["abstract"] == "y" * 400  # the longer abstract


def test_an_identifier_a_source_gives_to_two_papers_joins_nothing():
    shared = dict(source="rbnyng/mlanthology", venue_key="cvpr", venue="CVPR", year=2013, abstract="a" * 300,
                  doi="10.1109/cvpr.2013")  # a proceedings volume's DOI, not a paper's
    groups = group_same_papers([SourceRecord(local_id="a", title="First paper title here", **shared),
                                SourceRecord(local_id="b", title="Second paper title here", **shared)])
    assert len(groups) == 2


# --- versions, output, determinism ---------------------------------------------------------------------------


def test_git_history_keeps_the_version_with_abstracts(tmp_path):
    """paperlists replaced its ICLR files by versions without abstracts: the builder reads the older one."""
    work = tmp_path / "paperlists"
    (work / "iclr").mkdir(parents=True)
    git = ["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    shutil.copy(DATA / "paperlists" / "iclr" / "iclr2018.json", work / "iclr" / "iclr2018.json")
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "with abstracts", "--date", "2024-01-01T00:00:00"], check=True)
    first = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    stripped = [{k: v for k, v in r.items() if k != "abstract"} for r in json.loads((work / "iclr" / "iclr2018.json").read_text())]
    (work / "iclr" / "iclr2018.json").write_text(json.dumps(stripped))
    subprocess.run([*git, "commit", "-qam", "titles only"], check=True)
    tree = Tree(work / ".git")
    try:
        chosen = choose_versions(PAPERLISTS, tree, warn=lambda message: pytest.fail(message))
    finally:
        tree.close()
    (slot, pick), = chosen.items()
    assert slot == ("iclr", 2018, "iclr/iclr2018.json") and pick.version.commit == first
    assert sum(r.has_abstract for r in pick.records) == 5


def test_command_is_deterministic_and_its_output_reads_back(tmp_path, capsys):
    outputs = []
    for name in ("one", "two"):
        out, provenance = tmp_path / f"{name}.jsonl.xz", tmp_path / f"{name}.json"
        assert main(["--paperlists", str(DATA / "paperlists"), "--mlanthology", str(DATA / "mlanthology"),
                     "--anthology", str(DATA / "anthology"), "--out", str(out), "--provenance", str(provenance)]) == 0
        outputs.append((out.read_bytes(), provenance.read_bytes()))
    assert outputs[0] == outputs[1]
    printed = capsys.readouterr().out
    assert "ICLR" in printed and "10 records" in printed
    lines = lzma.decompress(outputs[0][0]).decode("utf-8").splitlines()
    keys = [(json.loads(line)["venue"].lower(), json.loads(line)["year"], json.loads(line)["id"]) for line in lines]
    assert keys == sorted(keys)
    warnings: list[str] = []
    papers = list(read_corpus([tmp_path / "one.jsonl.xz"], warn=warnings.append))
    assert warnings == [] and len(papers) == 10
    provenance = json.loads(outputs[0][1])
    assert [s["name"] for s in provenance["sources"]] == ["papercopilot/paperlists", "rbnyng/mlanthology",
                                                          "acl-org/acl-anthology"]
    assert provenance["sources"][2]["licence"].startswith("CC BY 4.0")


def test_command_names_a_missing_source(tmp_path, capsys):
    assert main(["--paperlists", str(tmp_path / "nowhere"), "--out", str(tmp_path / "x.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("peerlint: error:") and "nowhere" in err and "Traceback" not in err


SHARED_DOI = Path(__file__).parent / "data" / "corpus-shared-doi"  # two ECCV 2022 papers, both sources (see SOURCES.md)


def test_a_volume_doi_two_papers_carry_is_left_out_so_readers_keep_them_apart(tmp_path):
    """mlanthology gives both papers the proceedings volume's DOI; paperlists writes theirs with a space."""
    only_volume_doi = build([("mlanthology", SHARED_DOI / "mlanthology")], warn=lambda message: pytest.fail(message))
    assert len(only_volume_doi.records) == 2 and all("doi" not in r for r in only_volume_doi.records)
    assert only_volume_doi.provenance["merge"]["shared_identifiers_dropped"] == {"doi": 2, "arxiv_id": 0}
    both = build([("paperlists", SHARED_DOI / "paperlists"), ("mlanthology", SHARED_DOI / "mlanthology")],
                 warn=lambda message: pytest.fail(message))
    assert sorted(r["doi"] for r in both.records) == ["10.1007/978-3-031-19830-4_22", "10.1007/978-3-031-19830-4_27"]
    out = tmp_path / "eccv.jsonl"
    write(both, out, None)
    warnings: list[str] = []
    assert len(load_papers([out], warn=warnings.append)) == 2 and warnings == []


def test_previous_corpus_records_stay_under_their_ids_and_win_over_duplicates(built, tmp_path, capsys):
    """`--previous`: the records an earlier version shipped are kept byte for byte, under their ids; a new
    record of the same paper (same normalised title, here re-cased and re-punctuated) is dropped."""
    twin = built.records[0]
    old = [{"id": "iclr2018-OLD", "title": twin["title"].upper() + "!", "abstract": "An older abstract. " * 12,
            "venue": twin["venue"], "year": twin["year"], "status": "", "authors": [], "keywords": [], "url": "",
            "rating_avg": None, "citations": None, "source": "papercopilot/paperlists"},
           {"id": "nips2016-7", "title": "A paper only the previous corpus has", "abstract": "Old. " * 60,
            "venue": "NeurIPS", "year": 2016, "status": "", "authors": ["A. Author"], "keywords": [], "url": "",
            "rating_avg": None, "citations": 3}]
    folder = tmp_path / "previous"
    folder.mkdir()
    (folder / "iclr-2018.jsonl").write_text(json.dumps(old[0]) + "\n", encoding="utf-8")
    (folder / "nips-2016.jsonl").write_text("\n" + json.dumps(old[1]) + "\n", encoding="utf-8")
    out, provenance = tmp_path / "corpus.jsonl", tmp_path / "provenance.json"
    assert main(["--paperlists", str(DATA / "paperlists"), "--mlanthology", str(DATA / "mlanthology"),
                 "--anthology", str(DATA / "anthology"), "--previous", str(folder),
                 "--out", str(out), "--provenance", str(provenance)]) == 0
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    by_id = {r["id"]: r for r in records}
    assert len(records) == len(built.records) - 1 + 2
    assert twin["id"] not in by_id and by_id["iclr2018-OLD"]["abstract"] == old[0]["abstract"]
    assert "source" not in by_id["iclr2018-OLD"] and by_id["nips2016-7"] == old[1]
    keys = [(r["venue"].lower(), r["year"], r["id"]) for r in records]
    assert keys == sorted(keys)
    described = json.loads(provenance.read_text(encoding="utf-8"))
    assert described["previous"]["records"] == 2 and described["previous"]["new_records_dropped_as_duplicates"] == 1
    assert described["total"] == len(records) and described["counts"]["NeurIPS"]["2016"] == 1
    assert main(["--paperlists", str(DATA / "paperlists"), "--previous", str(tmp_path / "empty"),
                 "--out", str(tmp_path / "x.jsonl")]) == 2
    assert "no *.jsonl files" in capsys.readouterr().err


def test_journals_supplement_reads_every_year_and_drops_what_the_corpus_holds(tmp_path):
    """`--journals … --beside CORPUS`: the journals of rbnyng/mlanthology, every year (Neural Computation's
    1989 too), without the papers the corpus beside it already holds (here by normalised title); the
    conference source never reads the journal files."""
    journals = build([("journals", DATA / "mlanthology")], warn=lambda message: pytest.fail(message))
    assert {(r["venue"], r["year"]) for r in journals.records} == {("JMLR", 2003), ("Neural Computation", 1989)}
    ids = sorted(r["id"] for r in journals.records)  # mlanthology's bibtex keys, as for its conference papers
    assert len(ids) == 5 and "christensen2003jmlr-designing" in ids and sum("1989neco-" in i for i in ids) == 2
    conferences = build([("mlanthology", DATA / "mlanthology")], warn=lambda message: pytest.fail(message))
    assert {r["venue"] for r in conferences.records} == {"ICLR"}
    held = dict(journals.records[0], id="elsewhere-1", title=journals.records[0]["title"].upper() + ".")
    beside = tmp_path / "corpus.jsonl"
    beside.write_text(json.dumps(held) + "\n", encoding="utf-8")
    out, provenance = tmp_path / "journals.jsonl", tmp_path / "journals-provenance.json"
    assert main(["--journals", str(DATA / "mlanthology"), "--beside", str(beside),
                 "--out", str(out), "--provenance", str(provenance)]) == 0
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(records) == 4 and journals.records[0]["title"] not in {r["title"] for r in records}
    described = json.loads(provenance.read_text(encoding="utf-8"))
    assert described["beside"]["dropped_as_held"] == 1 and described["total"] == 4
    assert described["sources"][0]["name"] == "rbnyng/mlanthology (journals)"
    assert [p.venue for p in load_papers([out])].count("Neural Computation") == 2
