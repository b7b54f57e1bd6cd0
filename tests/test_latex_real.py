"""The parser on the real papers (tests/data/real): properties a reader can check against the PDF.

Each paper is parsed from the root file its README row names.  The checks are generic (no
chunk holds an author note, an empty slot left by a vanished macro, title-block text; every
chunk has its section; every letter maps back to the source) and specific: sentences and
headings of these papers whose right reading is known from the PDF.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from peerlint.latex import parse as L
from peerlint.latex.macros import match_brace
from peerlint.latex.parse import LineIndex
from peerlint.latex.project import ProjectParse, parse_project, read_file

REAL = Path(__file__).parent / "data" / "real"


def _roots() -> dict[str, Path]:
    """folder -> root file, from the corpus README's table."""
    rows = re.findall(r"^\| `([^`]+)` \|[^|]*\|[^|]*\| `([^`]+)` \|", (REAL / "README.md").read_text(), re.M)
    return {folder: REAL / folder / root for folder, root in rows}


ROOTS = _roots()


@pytest.fixture(scope="module")
def papers() -> dict[str, ProjectParse]:
    """Every paper parsed once, with internal failures raised rather than hidden."""
    strict, L._STRICT = L._STRICT, True
    try:
        out = {}
        for folder, root in ROOTS.items():
            t0 = time.perf_counter()
            out[folder] = parse_project(root)
            assert time.perf_counter() - t0 < 10, folder
        return out
    finally:
        L._STRICT = strict


def _joined(project: ProjectParse, skip_sections: str = "") -> str:
    return "\n".join(" ".join(c.text.split()) for c in project.chunks
                     if not (skip_sections and re.match(skip_sections, c.section)))


def _live(path: Path) -> str:
    """A source file without its comments (what LaTeX reads)."""
    return re.sub(r"(?<!\\)%[^\n]*", "", read_file(path))


def _arguments(source: str, command: str):
    """The braced argument after every `\\command` / `\\command[...]` in source."""
    for m in re.finditer(r"\\" + command + r"(?![a-zA-Z@])\s*(?:\[[^\]]*\])?\s*\{", source):
        yield source[m.end():match_brace(source, m.end() - 1)]


def _words(latex: str, n: int = 6) -> str:
    """The first n plain words of a LaTeX fragment (math and commands left out)."""
    return " ".join(re.sub(r"\$[^$]*\$|\\[a-zA-Z@]+|[{}~\[\]]", " ", latex).split()[:n])


def test_the_corpus_is_the_documented_one():
    assert len(ROOTS) >= 10
    assert all(root.is_file() for root in ROOTS.values()), ROOTS


def test_every_paper_parses_whole_with_exact_ranges(papers):
    for folder, project in papers.items():
        assert len(project.chunks) >= 40, folder
        assert not [w for w in project.warnings if "parse error" in w or "expansion stopped" in w], (folder, project.warnings)
        sources = {p.as_uri(): read_file(p) for p in project.files}
        for c in project.chunks:
            source = sources[c.uri]
            index = LineIndex(source)
            assert c.text and len(c.offsets) == len(c.text) + 1
            assert all(a <= b for a, b in zip(c.offsets, c.offsets[1:]))
            assert c.range.start == index.position(c.offsets[0]) and c.range.end == index.position(c.offsets[-1])
            for i, ch in enumerate(c.text):  # every letter is itself, or stands for a command or math
                if ch.isalpha():
                    assert source[c.offsets[i]] == ch or source[c.offsets[i]] in "\\$", (folder, c.text, i)


def test_copied_words_are_where_the_range_says(papers):
    """What a diagnostic quotes from a chunk is the text its range covers in the source."""
    for folder, project in papers.items():
        sources = {p.as_uri(): read_file(p) for p in project.files}
        checked = 0
        for c in project.chunks[::5]:
            source = sources[c.uri]
            for m in re.finditer(r"[A-Za-z]{4,}", c.text):
                i, j = m.span()
                if all(source[c.offsets[k]] == c.text[k] for k in range(i, j)):
                    quoted = source[c.offsets[i]:c.offsets[j - 1] + 1]  # markup inside a word (\textbf{High}light, Ef\-fi) aside
                    assert re.sub(r"\\(?:[a-zA-Z]+|-)|[{}]", "", quoted) == m.group(), (folder, m.group(), quoted)
                    checked += 1
        assert checked > 100, folder


def test_no_chunk_holds_an_author_note(papers):
    specific = {
        "neurips2019-verified-calibration": ["what does this mean?", "haven't introduced term", "orthogonalindependent?",
                                             "use mathbb", "probably should use"],
        "naacl2021-beam-dense-retrieval": ["Can we have more descriptive section"],
        "iclr2020-deepsphere": ["NEW", "FIX"],
    }
    for folder, project in papers.items():
        text = _joined(project)
        for phrase in specific.get(folder, []):
            assert phrase not in text.split() if phrase.isupper() else phrase not in text, (folder, phrase)
        for path in project.files:
            source = _live(path)
            for name in {*project.notes, "todo"}:
                for arg in _arguments(source, name):
                    words = _words(arg)
                    if len(words.split()) >= 3:
                        assert words not in text, (folder, name, words)
    assert {"mdeff", "lau", "banjac"} <= set(papers["arxiv2021-cryoem-orientation"].notes)
    assert {"tnote", "authnote"} <= set(papers["neurips2019-verified-calibration"].notes)
    assert {"jbgcomment", "pinaforecomment"} <= set(papers["naacl2021-beam-dense-retrieval"].notes)
    assert {"joey", "renjie", "ariella", "prakash", "will"} <= set(papers["icml2020-hyperbolic-flows"].notes)
    assert not {"highres", "tconv", "hotpot", "name", "Ourcal", "figref"} & {n for p in papers.values() for n in p.notes}


def test_false_conditionals_and_unread_files_stay_out(papers):
    sinkhorn = papers["neurips2020-online-sinkhorn"]
    titles = [c.text for c in sinkhorn.chunks if c.kind == "section-title"]
    assert "Acknowledgements" in titles  # \if\icml0 with \def\icml{0}: kept
    assert "Broader impact" not in titles  # \if\icml1: dropped
    assert not any(c.text in ("00", "01") or c.text.startswith("Recapitulation on batch-sizes") for c in sinkhorn.chunks)
    assert [c.text for c in sinkhorn.chunks if c.kind == "title"] == ["Online Sinkhorn: Optimal Transport distances from sample streams"]
    assert not any("icml_" in p.name for p in sinkhorn.files)
    # the NAACL paper's \ifcomment is false: its \pinaforecomment is the empty one
    assert "Can we have more descriptive" not in _joined(papers["naacl2021-beam-dense-retrieval"])
    # cryo-EM's TODO.tex is \input only in a comment
    assert not any("TODO" in p.name for p in papers["arxiv2021-cryoem-orientation"].files)


EMPTY_SLOT = re.compile(r"\b(?:the|a|an|of|by|with|using|from|our|is|are|introduce|propose|Let|let)\s+[,.;:)]"
                        r"|\(\s*\)|\(\s*[,;]|\b(?:We|we) introduce\s*,")


def test_no_empty_slot_where_a_macro_vanished(papers):
    """An empty slot is one where the source has a command between the word and the punctuation
    that came out as nothing ("We introduce \\ourcal{}, which" -> "We introduce , which");
    the same words typed by the author ("with ,  $\\gamma(a)=p$") are the author's."""
    for folder, project in papers.items():
        sources = {p.as_uri(): read_file(p) for p in project.files}
        for c in project.chunks:
            for m in EMPTY_SLOT.finditer(c.text):
                gap = sources[c.uri][c.offsets[m.start()]:c.offsets[m.end() - 1]]
                assert "\\" not in gap, (folder, m.group(), gap, c.text)
    calibration = _joined(papers["neurips2019-verified-calibration"])
    assert "To get the best of both worlds, we introduce the scaling-binning calibrator, which first fits" in calibration
    assert "we propose the scaling-binning calibrator (Figure [ref])" in calibration
    assert "If [math] is well chosen, our method requires" in calibration
    naacl = _joined(papers["naacl2021-beam-dense-retrieval"])
    assert "A complex question example from hotpotqa that requires finding an evidence chain" in naacl
    assert "We evaluate Beam Dense Retrieval (BeamDR) on hotpotqa Yang et al. (2018), a multi-hop" in naacl
    cryoem = _joined(papers["arxiv2021-cryoem-orientation"])
    assert "acquired 2D projection (Figure [ref]) is unknown" in cryoem  # \figref{...}
    cvpr = _joined(papers["cvprw2020-face-bias"])
    assert "As more of society becomes integrated with ML, topics related to bias" in cvpr  # \gls{ml}
    assert "Yin et al. proposed" in cvpr  # cvpr.sty's \etal ends in machinery: the parser's own is used


def test_no_title_block_text(papers):
    for folder, project in papers.items():
        text = _joined(project, skip_sections=r"(?i)acknowledg|contributions")
        root = _live(ROOTS[folder])
        names = set()
        for command in ("author", "icmlauthor", "affiliation", "icmlaffiliation"):
            for arg in _arguments(root, command):
                names |= set(re.findall(r"[A-Z][a-zé]+(?: [A-Z]\.)? [A-Z][a-zA-Zé\-]+", arg))
        for name in names:
            assert name not in text, (folder, name)
        assert not re.search(r"\b0\.\d+in\b|(?<!\[math)\]\s*$", text), folder
    flows = _joined(papers["icml2020-hyperbolic-flows"])
    for gone in ("Avishek Joey Bose", "mcgill,mila", "McGill University", "Machine Learning, ICML", "joey.bose@"):
        assert gone not in flows
    for folder in ("icml2020-hyperbolic-flows", "icml2020-apg-samplers"):
        first = papers[folder].chunks[0]
        assert first.kind == "title" and not first.text.startswith("[")


def test_every_chunk_has_its_section(papers):
    for folder, project in papers.items():
        for c in project.chunks:
            if c.kind != "title":
                assert c.section, (folder, c.kind, c.text[:80])
    naacl = papers["naacl2021-beam-dense-retrieval"].chunks
    assert [c.section for c in naacl if c.uri.endswith("00-abstract.tex")] == ["Abstract"]  # \input in the abstract
    sinkhorn = papers["neurips2020-online-sinkhorn"].chunks
    assert {c.section for c in sinkhorn if c.uri.endswith("/abstract.tex")} == {"Abstract"}
    assert {c.section for c in sinkhorn if c.uri.endswith("/introduction.tex")} >= {"Introduction"}  # untitled opening


def test_section_titles_expand_their_macros(papers):
    def titles(folder: str) -> list[str]:
        return [c.text for c in papers[folder].chunks if c.kind == "section-title"]

    assert "The scaling-binning calibrator" in titles("neurips2019-verified-calibration")  # \section{\Ourcal{}}
    assert "HighRES" in titles("acl2019-highres")  # \section{\highres}
    assert "Highlight-based ROUGE Evaluation" in titles("acl2019-highres")  # \subsection{Highlight-based \rouge{} Evaluation}
    assert {"BeamDR: Beam Dense Retriever", "Finding Evidence Chains with BeamDR"} <= set(titles("naacl2021-beam-dense-retrieval"))
    assert {"Bias in ML", "Bias in FR", "Human bias in ML"} <= set(titles("cvprw2020-face-bias"))
    sections = {c.section for c in papers["neurips2019-verified-calibration"].chunks}
    assert "The scaling-binning calibrator" in sections
    for folder in papers:
        for t in titles(folder):
            assert t and t[0] not in ",.:;)" and "  " not in t, (folder, t)


def test_citations_in_the_sentence_read_as_names(papers):
    sphere = _joined(papers["iclr2020-deepsphere"])
    assert "Cohen et al." in sphere
    acl = _joined(papers["acl2019-highres"])
    assert "Clarke and Lapata (2010) proposed a question-answering based approach" in acl  # ACL style: \cite is \citet
    spot = _joined(papers["emnlp2020-spot-the-bot"])
    assert "Similar to Bojar et al. (2013), we define a win rate" in spot  # \newcite = \citet in emnlp2020.sty
    assert "we follow the approach by Dušek et al. (2018) where the ranking" in spot
    for folder, project in papers.items():  # every \citet whose key the .bib has reads as a name
        named = sum(c.text.count(" et al.") + c.text.count(" and ") for c in project.chunks)
        assert named > 0 or not project.bib_files, folder


def test_no_tex_parameter_code_or_checklist_reads_as_prose(papers):
    """`\\looseness-1`, `\\counterwithin{theorem}{section}`, inline TikZ, pythontex code and a venue's
    checklist are in the source, not in the PDF's prose."""
    leak = re.compile(r"-1$|\\b(?:theoremsection|equationsection)\\b|baseline=|\\w\\.main\\(\\)|^import \\w|answer these questions")
    for folder, project in papers.items():
        for c in project.chunks:
            assert not leak.search(c.text), (folder, c.text[-120:])
            assert not re.fullmatch(r"(?i)(?:[\\w-]+ ){0,3}checklist", c.section), (folder, c.section)
    hyper = papers["neurips2022-hyper-representations"]
    assert "Model Zoo Details" in [c.text for c in hyper.chunks if c.kind == "section-title"]  # the appendix after it
    assert not any(c.uri.endswith("/checklist.tex") for c in hyper.chunks)
    assert "Our results demonstrate its capability to out-perform previous hyper-representation learning and " \
           "conventional baselines." in _joined(hyper)


def test_second_corpus_reads_as_its_pdf(papers):
    cvpr = papers["cvpr2025-provenance-dinohash"].chunks
    teaser = next(c for c in cvpr if c.kind == "caption")
    assert teaser.text.startswith("System Overview. We combine") and teaser.section == "Introduction"
    assert "Supplementary Material" not in [c.text for c in cvpr]  # \maketitlesupplementary
    assert any(c.text.startswith("The model provider is responsible for") for c in cvpr)  # \circled{1} (TikZ) gone
    rnn = papers["iclr2023-rnn-extrapolation"]
    assert not any(c.text.startswith("[Proof sketch") for c in rnn.chunks)  # sproof's option, read by \proof
    assert "The result follows from the symmetric role of [math] and [math] in the loss [math]." in _joined(rnn)
    assert not any("todos.tex" in p.name for p in rnn.files)  # \input only in a comment
    values = _joined(papers["emnlp2025-value-profiles"])
    assert "future work include: [ref]) qualitative analyses extracting values from data; [ref]) fairness" in values
    jmlr = papers["jmlr-orff"].chunks
    assert jmlr[0].kind == "title" and jmlr[1].kind == "abstract"  # \editor{John Doe} is title-block text
    assert not any("import " in c.text or "LinearOperator(" in c.text for c in jmlr)
    aaai = papers["aaai2025-defer-to-human"]
    assert [c.text for c in aaai.chunks if c.kind == "title"] == ["When to Accept Automated Predictions and When to Defer to Human Judgment?"]
    assert "My Publication Title" not in _joined(aaai)  # \iffalse examples of the template


# --- bad input: a bounded result and one warning each, never a crash or a hang --------------

def _doc(preamble: str, body: str) -> str:
    return f"\\documentclass{{article}}\n{preamble}\n\\begin{{document}}\n{body}\n\\end{{document}}\n"


BAD = {
    "recursive macro": ({"main.tex": _doc(r"\newcommand{\loop}{more \loop}", "A \\loop{} b.\n\nC \\loop.")}, "expansion stopped"),
    "exponential macro": ({"main.tex": _doc("\\newcommand{\\a}{xy}" + "".join(
        f"\\newcommand{{\\{chr(98 + k)}}}{{\\{chr(97 + k)}\\{chr(97 + k)}}}" for k in range(24)), "Huge \\y{} end.")},
        "expansion stopped"),
    "input cycle": ({"main.tex": _doc("", "Main.\n\\input{a}"), "a.tex": "A text.\n\\input{main}\n"}, "cycle"),
    "unbalanced braces": ({"main.tex": _doc(r"\newcommand{\x}{unclosed", "Text {with an open group.\n\nMore text.")},
                          "never closed"),
    "makeatletter internals": ({"main.tex": _doc(
        "\\makeatletter\n\\def\\@maketitle{\\@title\\par}\n\\renewcommand\\section{\\@startsection{section}{1}{\\z@}{-1ex}{1ex}{\\bf}}\n"
        "\\newcommand{\\eg}{\\emph{e.g}\\@onedot}\n\\makeatother", "\\section{Intro}\nSee \\eg this and that."
    )}, None),
    "catcode tricks": ({"main.tex": _doc("\\catcode`\\@=11\n\\catcode`\\|=\\active\n\\def|{bar}\n\\let\\x=\\relax",
                                         "Text with | and \\x plain words.")}, None),
    "a root that includes nothing": ({"main.tex": _doc("", "\\input{missing}")}, "not found"),
    "an empty root": ({"main.tex": _doc("", "")}, "no prose"),
}


@pytest.mark.parametrize("case", sorted(BAD), ids=sorted(BAD))
def test_bad_input_is_bounded_with_one_warning(case, tmp_path, monkeypatch):
    monkeypatch.setattr(L, "_STRICT", True)
    files, warning = BAD[case]
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    t0 = time.perf_counter()
    project = parse_project(tmp_path / "main.tex")
    assert time.perf_counter() - t0 < 5
    for c in project.chunks:
        assert c.text and len(c.offsets) == len(c.text) + 1
    if warning is None:
        assert project.warnings == [] and project.chunks
    else:
        assert len(project.warnings) == 1 and warning in project.warnings[0], project.warnings
    if case == "makeatletter internals":
        assert [c.text for c in project.chunks] == ["Intro", "See e.g. this and that."]


def test_counting_from_one_tokenisation_cuts_the_same_pieces(papers):
    """A long paragraph is tokenised once and its candidate pieces counted from the offsets: the
    pieces must be exactly those that tokenising each candidate gives, on every real paper's text
    (paragraphs joined three at a time, so that many are cut), at the default limit and a small one."""
    from peerlint.index.embedding.embedder import Embedder

    tokens = Embedder("torch")  # its tokenizer only: no model is loaded
    texts = [c.text for p in papers.values() for c in p.chunks]
    long = [" ".join(texts[i : i + 3]) for i in range(0, len(texts), 3)]
    cut = 0
    for limit in (200, 40):
        for text in long:
            slow = L.split_paragraph(text, [], tokens.count_tokens, limit)
            assert L.split_paragraph(text, [], tokens.count_tokens, limit, tokens.token_offsets) == slow
            cut += len(slow) > 1
    assert cut > len(long)  # most were cut at one limit or both: the comparison covered the cutting


# --- issue #32: papers of 2023-2025 as their authors wrote them ------------------------------

_PLACEHOLDER = re.compile(r"\[(?:math|cite|ref|url|code|dummy)\]")
_RESIDUE = re.compile(r"\\[a-zA-Z@]|(?<![\w)\]}])\*[A-Za-z]|@[A-Za-z]+@|[A-Za-z]+@[A-Za-z]+=")
_LABEL = re.compile(r"\W*[^\W\d_]+(?:[.' -][^\W\d_]+)?\s*:[\W\s]*")


def test_every_chunk_bears_a_sentence_under_a_section(papers):
    """No paragraph or footnote is only a label ("DMM:"), a number, "[math]", or a word before a formula."""
    assert len(papers) >= 30
    for folder, project in papers.items():
        for c in project.chunks:
            if c.kind in ("paragraph", "footnote"):
                rest = _PLACEHOLDER.sub(" ", c.text)
                assert re.search(r"[^\W\d_]", rest) and not _LABEL.fullmatch(rest), (folder, c.text)
            assert c.kind == "title" or c.section, (folder, c.kind, c.text[:80])


def test_no_unexpanded_command_starred_name_or_package_internal(papers):
    for folder, project in papers.items():
        for c in project.chunks:
            assert not _RESIDUE.search(c.text), (folder, c.text[:160])


def test_no_chunk_from_a_datasheet_checklist_or_author_note(papers):
    from peerlint.latex.tables import AUTHOR_NOTE

    for folder, project in papers.items():
        for c in project.chunks:
            assert not re.search(r"(?i)check-?list$|datasheet", c.section), (folder, c.section)
            assert not AUTHOR_NOTE.search(c.text), (folder, c.text[:120])


def test_a_datasheet_and_the_affiliation_footnote_are_left_out():
    """NeurIPS 2023 D&B DataComp: its datasheet (118 question-and-answer chunks, 17 of them "No." or
    "Any other comments?") and the affiliation footnote set before \\maketitle were read as prose."""
    project = parse_project(ROOTS["neurips2023-datacomp"])
    text = _joined(project)
    for gone in ("For what purpose was the dataset created", "Any other comments", "Equal contribution, randomly ordered",
                 "Juelich Supercomputing Center"):
        assert gone not in text
    assert not [c for c in project.chunks if c.text == "No."]
    sections = {c.section for c in project.chunks}
    assert {"Introduction", "Baseline details", "Contributions"} <= sections and "Datasheet" not in sections
    assert project.chunks[1].kind == "abstract"  # right after the title: nothing from the author block


def test_package_macros_that_only_store_and_tex_box_arithmetic_read_as_nothing():
    """SOSP 2023 draft with its own acmart.cls: `\\settopmatter{printfolios=true}` read
    "@ACM@topmatter@printfolios=true", `\\acmSubmissionID{XXX}` "XXX", and a circled-number macro on
    `\\setbox0=\\hbox{#1}\\dimen0\\wd0...` "0=1000 by 2"; its abstract is plain text before the first heading."""
    project = parse_project(ROOTS["sosp2023-approximate-lsm"])
    text = _joined(project)
    assert "@ACM@" not in text and "XXX" not in text and "by 2)" not in text
    assert "examine FPs in the table (1). Starting" in text
    first = project.chunks[1]
    assert first.section == "Abstract" and first.text.startswith("Thanks to the advance of device scaling technologies")


def test_settings_commands_and_makeatletter_code_are_not_prose():
    """ICDAR 2024 (LNCS): `\\floatsetup[table]{capposition=top}` in the body read "[table]capposition=top"."""
    text = _joined(parse_project(ROOTS["icdar2024-distildoc"]))
    assert "capposition" not in text and "[table]" not in text
    assert text.startswith("DistilDoc: Knowledge Distillation for Visually-Rich Document Applications")


def test_glossary_entries_loaded_from_a_file_read_as_printed():
    """IEEE 2025: acronyms in a file read with `\\loadglsentries{acronyms}` read "qlora" and "sttsc"."""
    text = _joined(parse_project(ROOTS["ieee2025-lladerm"]))
    assert "classification accuracy of 45.2% with QLoRA and 44.5% with LoRA" in text
    assert "inconsistencies in the STT/SC dataset" in text
    assert "Fernandes" not in text and "Florianópolis" not in text  # IEEE author blocks


def test_display_math_keeps_its_sentence_whole(papers):
    rnn = _joined(papers["iclr2023-rnn-extrapolation"])
    assert "this model is defined by the update rule: [math], where [math], [math] and [math] are configurable" in rnn
    cryoem = _joined(papers["arxiv2021-cryoem-orientation"])
    assert "[math] is acquired through [math], where [math] is the unknown 3D density map" in cryoem


def test_a_thesis_whose_class_is_in_its_preamble_file_is_read_from_main():
    """A 2024 PhD thesis: main.tex `\\input{preamble}` (which holds `\\documentclass`) and then
    `\\begin{document}`; the folder's root was preamble.tex, read as four chunks of settings
    ("L[1]>m#1 C[1]>m#1")."""
    from peerlint.latex.roots import pick_root, root_in_folder

    folder = REAL / "thesis2024-xray-spectroscopy"
    choice = root_in_folder(folder)
    assert choice.root == folder / "main.tex" and not choice.note
    assert pick_root(folder / "chapters" / "01" / "introduction.tex").root == folder / "main.tex"
    project = parse_project(choice.root)
    sections = {c.section for c in project.chunks}
    assert {"ACKNOWLEDGEMENT", "Introduction", "Current Status", "Objectives of the Study"} <= sections
    assert len(project.chunks) > 100 and not any(">m#1" in c.text for c in project.chunks)


def test_integer_parameters_and_inline_icons_are_not_prose():
    """A 2025 PLDI draft: `\\hbadness=10000` before `\\bibliography{main}` read "main" (10000 taken as a
    length in units of `\\bibliography`), and `\\refTheories{zoo_parabs/algo.v}` (an `\\ifx` test and an
    icon drawn by `\\includegraphics`) read "zoo_parabs/algo.vimages/rocq.png"."""
    project = parse_project(ROOTS["pldi2025-parallel-abstractions"])
    text = _joined(project)
    assert "images/" not in text and "\\relax" not in text and "main" not in {c.text for c in project.chunks}
    assert "as picture/icon links, for example and ." in text
