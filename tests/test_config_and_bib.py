"""Settings validation and the BibTeX side of *Cite this paper*."""

from __future__ import annotations

import bibtexparser
from hypothesis import given, settings as hsettings, strategies as st

from peerlint.latex.bibliography import Bibliography, bibtex_entry, make_key, parse_bib
from peerlint.index.papers import Paper
from peerlint.server.code_actions import cite_edit
from peerlint.server.config import updated
from peerlint.settings import Settings

from lsp_support import apply_text_edits


def test_settings_accept_camel_and_snake_case_and_nested_sections():
    warnings: list[str] = []
    s = updated(Settings(), {"peerlint": {"indexPath": "/x", "debounce_ms": 120, "severity": {"novelty": "hint"}}},
                           warnings.append)
    assert (s.index_path, s.debounce_ms, s.severity["novelty"]) == ("/x", 120, "hint")
    assert s.severity["close-prior-work"] == "warning"  # untouched codes keep their default
    assert warnings == []


def test_bad_settings_are_reported_and_old_values_kept():
    warnings: list[str] = []
    s = updated(Settings(), {"debounceMs": "fast", "backend": "gpt5", "closePriorWorkThreshold": 3,
                            "severity": {"close-prior-work": "loud"}, "analyzers": ["nope"], "colour": "red",
                            "latexCommands": {"\\foo{}": "explode"}}, warnings.append)
    assert s == Settings()
    text = "\n".join(warnings)
    for key in ("debounceMs", "backend", "closePriorWorkThreshold", "severity", "analyzers", "colour", "latexCommands"):
        assert key in text
    assert updated(Settings(), "not a dict", warnings.append) == Settings()


PAPER = Paper(id="coling2020-1", title="Dual Attention Model for Citation Recommendation", abstract="",
              venue="COLING", year=2020, authors=("Yang Zhang", "Qiang Ma"), url="https://aclanthology.org/x%20y")


def test_bibtex_entry_is_well_formed_and_parsable():
    entry = bibtex_entry(PAPER, "zhang2020dual")
    db = bibtexparser.loads(entry)
    assert db.entries[0]["ID"] == "zhang2020dual"
    assert db.entries[0]["title"].strip("{}") == PAPER.title and db.entries[0]["year"] == "2020"


@hsettings(max_examples=60, deadline=None)
@given(st.text(max_size=80), st.lists(st.text(max_size=30), max_size=3))
def test_bibtex_entry_braces_balance_for_any_metadata(title, authors):
    entry = bibtex_entry(Paper(id="x", title=title, abstract="", authors=tuple(authors), venue="A & B_C"), "k")
    depth = 0
    for i, ch in enumerate(entry):
        if ch in "{}" and (i == 0 or entry[i - 1] != "\\"):
            depth += 1 if ch == "{" else -1
            assert depth >= 0
    assert depth == 0


def test_keys_are_unique_and_existing_entries_reused():
    taken = {"zhang2020dual", "zhang2020duala"}
    assert make_key(PAPER, taken) == "zhang2020dualb"
    bib = "@inproceedings{mykey,\n  title = {Dual {A}ttention Model for Citation Recommendation},\n  year = 2020\n}\n"
    assert Bibliography(parse_bib(bib)).key_for(PAPER.title, PAPER.id) == "mykey"


def test_cite_edit_inserts_before_the_final_period_and_appends_entry(tmp_path):
    doc = "\\section{Intro}\nCitation recommendation helps writers.\n\nNext.\n"
    end = doc.index("writers.") + len("writers.")
    bib = tmp_path / "refs.bib"
    existing = "@misc{a, title={Other}}\n"
    edit, key = cite_edit("file:///d.tex", 3, doc, end, PAPER, bib, existing)
    tex_edit, bib_edit = edit.document_changes
    assert apply_text_edits(doc, tex_edit.edits) == doc.replace("writers.", f"writers~\\cite{{{key}}}.")
    new_bib = apply_text_edits(existing, bib_edit.edits)
    assert new_bib.startswith(existing) and len(bibtexparser.loads(new_bib).entries) == 2
    # the paper already in the .bib: only the \cite is inserted, with the existing key
    edit2, key2 = cite_edit("file:///d.tex", 3, doc, end, PAPER, bib, new_bib)
    assert key2 == key and len(edit2.document_changes) == 1


def test_cite_edit_creates_a_missing_bib(tmp_path):
    doc = "Text about citations.\n"
    edit, key = cite_edit("file:///d.tex", None, doc, len(doc) - 1, PAPER, tmp_path / "references.bib", None)
    kinds = [type(c).__name__ for c in edit.document_changes]
    assert kinds == ["TextDocumentEdit", "CreateFile", "TextDocumentEdit"]


def test_a_suggested_paper_held_in_another_version_counts_as_cited():
    """Journal vs conference, arXiv vs proceedings, a retitled version: the .bib already cites the work."""
    bib = r"""
@article{devlin2018bert,
  title = {{BERT}: Pre-training of Deep Bidirectional Transformers for Language Understanding},
  author = {Devlin, Jacob and Chang, Ming-Wei and Lee, Kenton and Toutanova, Kristina},
  journal = {arXiv preprint arXiv:1810.04805},
  year = {2018}
}
@inproceedings{qu2021rocketqa,
  title = {RocketQA: An Optimized Training Approach to Dense Passage Retrieval for Open-Domain QA},
  author = {Qu, Yingqi and Ding, Yuchen},
  booktitle = {NAACL}, year = 2021, doi = {10.18653/v1/2021.naacl-main.466}
}
@misc{karpukhin2020dense,
  title = {Dense Passage Retrieval for Open-Domain Question Answering},
  author = {Vladimir Karpukhin and Barlas O{\u{g}}uz}, year = {2020},
  eprint = {2004.04906}, archivePrefix = {arXiv}
}
"""
    cited = Bibliography(parse_bib(bib))
    # the NAACL 2019 version, found by its arXiv link
    assert cited.key_for("BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding",
                         "N19-1423", url="https://arxiv.org/abs/1810.04805") == "devlin2018bert"
    # by DOI, whatever the title says
    assert cited.key_for("RocketQA", "10.18653/v1/2021.naacl-main.466") == "qu2021rocketqa"
    # the EMNLP version: a changed title, same first author, a year later
    assert cited.key_for("Dense Passage Retrieval for Open Domain Question Answering Systems", "2020.emnlp-main.550",
                         ("Karpukhin, Vladimir",), 2021) == "karpukhin2020dense"
    # another first author or a different work is not the same work
    assert cited.key_for("Dense Passage Retrieval for Open-Domain Question Answering Systems", "x", ("Lee, Kenton",),
                         2020) is None
    assert cited.key_for("Deep Bidirectional Transformers for Vision", "y", ("Devlin, Jacob",), 2018) is None
