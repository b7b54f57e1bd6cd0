"""LaTeX as researchers write it: the project's own macros, environments and conditionals,
author notes, title blocks and spacing commands, as the parser turns them into prose."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

from peerlint.latex import parse as L
from peerlint.latex.parse import LineIndex, parse_document
from peerlint.latex.project import parse_project


@pytest.fixture(autouse=True)
def strict(monkeypatch):
    """Internal failures raise instead of quietly falling back to the regex extractor."""
    monkeypatch.setattr(L, "_STRICT", True)


def doc(preamble: str, body: str) -> str:
    return f"\\documentclass{{article}}\n{preamble}\n\\begin{{document}}\n{body}\n\\end{{document}}\n"


def texts(source: str) -> list[str]:
    return [c.text for c in parse_document(source, "file:///m.tex")]


def check_offsets(source: str, chunks) -> None:
    index = LineIndex(source)
    for c in chunks:
        assert len(c.offsets) == len(c.text) + 1
        assert all(a <= b for a, b in zip(c.offsets, c.offsets[1:]))
        assert c.range.start == index.position(c.offsets[0]) and c.range.end == index.position(c.offsets[-1])


def test_text_macros_with_arguments_defaults_nesting_and_xspace():
    pre = r"""\newcommand{\ourcal}[0]{the scaling-binning calibrator}
\newcommand{\Ourcal}{The \ourcal{}}
\newcommand{\textft}[1]{\texttt{#1}}
\newcommand{\blank}{[\textft{blank}]}
\newcommand{\method}{FooNet\xspace}
\newcommand{\pair}[2][left]{(#1, #2)}
\providecommand{\method}{Ignored}
\renewcommand{\blank}{[\textft{BLANK}]}
\def\twice#1{#1 and #1}
\DeclareMathOperator*{\argmax}{arg\,max}"""
    body = r"""We introduce \ourcal, which first fits a function. Let \blank{} be a placeholder.
\method is fast and \method. Pairs \pair{x} and \pair[up]{y}; \twice{this}; the \argmax{} rule."""
    (c,) = texts(doc(pre, body))
    assert c == ("We introduce the scaling-binning calibrator, which first fits a function. Let [BLANK] be a "
                 "placeholder. FooNet is fast and FooNet. Pairs (left, x) and (up, y); this and this; the arg max rule.")


def test_dropping_macros_and_author_notes_leave_no_trace():
    pre = r"""\newcommand{\pl}[1]{}
\newcommand{\hide}[2]{#2}
\newcommand{\mdeff}[1]{{\color[rgb]{.8,.3,.2}{#1}}}
\newcommand{\joey}[1]{\textcolor{blue}{Joey: #1}}
\newcommand{\revised}[1]{\textcolor{blue}{#1}}
\newcommand{\pinaforecomment}[3]{\colorbox{#1}{#2: #3}}
\newcommand{\jbg}[1]{\pinaforecomment{red}{JBG}{#1}}
\newcommand{\bob}[1]{\todo[color=green]{BOB: #1}}"""
    body = r"""It is well-studied.\pl{have to sum to 1, right?} We \hide{secret}{show} it.\mdeff{Rephrase this?}
\joey{check} Results \revised{improve} here.\jbg{cite more} \bob{really?} \todo{fix}Done."""
    (c,) = texts(doc(pre, body))
    assert c == "It is well-studied. We show it. Results improve here. Done."


def test_offsets_of_expanded_text_and_of_arguments():
    pre = r"\newcommand{\method}{FooNet\xspace}" "\n" r"\newcommand{\bold}[1]{\textbf{#1}}"
    source = doc(pre, r"Our \method works \bold{very well} today.")
    (c,) = parse_document(source, "file:///m.tex")
    check_offsets(source, [c])
    assert c.text == "Our FooNet works very well today."
    i = c.text.index("FooNet")
    call = source.index(r"Our \method") + 4
    assert c.offsets[i] == call and c.offsets[i + 5] == call  # the body's words stand for the call
    j = c.text.index("very well")
    assert source[c.offsets[j]:c.offsets[j + 8] + 1] == "very well"  # arguments keep their place
    assert source[c.offsets[0]:c.offsets[-1]] == r"Our \method works \bold{very well} today."


def test_section_titles_expand_macros():
    pre = r"\newcommand{\ourcal}{scaling-binning calibrator}\newcommand{\Ourcal}{Scaling-binning calibrator}"
    chunks = parse_document(doc(pre, "\\section{Intro}\nText.\n\n\\section{\\Ourcal{}}\nThe \\ourcal{} works."), "file:///m.tex")
    assert [(c.kind, c.text, c.section) for c in chunks] == [
        ("section-title", "Intro", "Intro"), ("paragraph", "Text.", "Intro"),
        ("section-title", "Scaling-binning calibrator", "Scaling-binning calibrator"),
        ("paragraph", "The scaling-binning calibrator works.", "Scaling-binning calibrator")]


def test_environments_aliases_and_macros_standing_for_commands():
    pre = r"""\newenvironment{remarkbox}[1][Note]{\textbf{#1:} }{ End.}
\newcommand\newcite{\citet}
\let\oldsection\section
\let\nothing\relax"""
    body = r"""\begin{remarkbox}[Remark] Boxed text.\end{remarkbox}

As \newcite{smith2020} show\nothing, it works.

\oldsection{Method}"""
    chunks = parse_document(doc(pre, body), "file:///m.tex")
    assert [c.text for c in chunks] == ["Remark: Boxed text. End.", "As [cite] show, it works.", "Method"]
    assert chunks[1].cites == ("smith2020",)
    assert chunks[2].kind == "section-title"


def test_conditionals_defined_in_the_project():
    pre = r"""\newif\ifcomment
\commenttrue
\commentfalse
\newif\ifdraft
\drafttrue
\def\icml{0}"""
    body = r"""A \ifcomment NOTE \else kept \fi B. \ifdraft draft \else final \fi C.
\if\icml1 ICML only \else neutral \fi D. \iffalse hidden \else shown \fi E. \iftrue yes \fi F.

\iffalse
\section{Old}
Old text.
\fi
\ifcomment
Whole paragraph of comments.

Another one.
\fi
Last."""
    assert texts(doc(pre, body)) == ["A kept B. draft C. neutral D. shown E. yes F.", "Last."]


def test_recursive_and_exponential_definitions_are_bounded(caplog):
    pre = "\\newcommand{\\loop}{a \\loop}\n\\newcommand{\\x}[1]{\\x{#1 #1}}\n\\newcommand{\\a}{ab}\n" + "".join(
        f"\\newcommand{{\\{chr(ord('b') + k)}}}{{\\{chr(ord('a') + k)}\\{chr(ord('a') + k)}}}\n" for k in range(20))
    body = "Start \\loop{} end.\n\nAgain \\loop.\n\nAnd \\x{y}.\n\nHuge \\u{} done."
    t0 = time.perf_counter()
    with caplog.at_level(logging.WARNING):
        chunks = parse_document(doc(pre, body), "file:///m.tex")
    assert time.perf_counter() - t0 < 5
    assert [c.text.split()[0] for c in chunks] == ["Start", "Again", "And", "Huge"]
    warned = [r.getMessage() for r in caplog.records if "expansion stopped" in r.getMessage()]
    assert len([w for w in warned if "\\loop" in w]) == 1  # one warning, though used twice
    assert any("\\x:" in w for w in warned) and any("\\u:" in w for w in warned)  # named as written


def test_project_definitions_come_from_included_files_and_local_packages(tmp_path):
    files = {
        "main.tex": "\\documentclass{article}\n\\usepackage{style/lab}\n\\input{macros}\n\\newcommand{\\latexfile}[1]{\\input{sections/#1}}\n"
                    "\\begin{document}\n\\latexfile{intro}\n\\end{document}\n",
        "macros.tex": "\\newcommand{\\method}{FooNet\\xspace}\n\\newif\\ifcomment\\commentfalse\n",
        "style/lab.sty": "\\ifcomment\\newcommand{\\note}[1]{\\textbf{#1}}\\else\\newcommand{\\note}[1]{}\\fi\n"
                         "\\newcommand{\\lab}{the Lab}\n\\def\\@internal{\\relax}\n",
        "sections/intro.tex": "\\section{Intro}\n\\method by \\lab{} works.\\note{hidden remark}\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    project = parse_project(tmp_path / "main.tex")
    assert [c.text for c in project.chunks] == ["Intro", "FooNet by the Lab works."]
    assert project.packages == [tmp_path / "style" / "lab.sty"]
    assert project.files == [tmp_path / "main.tex", tmp_path / "macros.tex", tmp_path / "sections" / "intro.tex"]
    assert project.warnings == []


def _letters(k: int) -> str:
    return "".join(chr(ord("a") + int(d)) for d in str(k))


def test_a_10k_line_package_and_makeatletter_internals_stay_fast(tmp_path):
    sty = "\\makeatletter\n" + "".join(
        f"\\def\\@int{_letters(k)}#1{{\\@ifnextchar[{{\\@x}}{{\\@y}}}}\n\\newcommand{{\\cmd{_letters(k)}}}[2][d]{{\\textbf{{#1}} #2}}\n"
        for k in range(5000)) + "\\makeatother\n"
    (tmp_path / "big.sty").write_text(sty)
    (tmp_path / "main.tex").write_text(doc("\\usepackage{big}", "Use \\cmdh{text} and \\cmdbc[x]{y}."))
    t0 = time.perf_counter()
    project = parse_project(tmp_path / "main.tex")
    assert time.perf_counter() - t0 < 10
    assert [c.text for c in project.chunks] == ["Use d text and x y."]


# --- text that is not prose -----------------------------------------------------------------

def test_todo_notes_comment_environments_and_iffalse_stay_out():
    body = r"""Kept one.\todo[inline,color=red]{Fix this claim} Kept two.\marginpar{margin note}
\begin{comment}
A commented-out paragraph.
\end{comment}
\iffalse
\section{Dropped}
An old draft.
\fi
Kept three."""
    assert texts(doc("\\usepackage{todonotes,comment}", body)) == ["Kept one. Kept two.", "Kept three."]


ICML_HEAD = r"""\twocolumn[
\icmltitle{Optimizing Data Usage via Differentiable Rewards}

% a comment with a ] bracket
\icmlsetsymbol{equal}{*}

\begin{icmlauthorlist}
\icmlauthor{Xinyi Wang}{equal,cmu}
\icmlauthor{Hieu Pham}{equal,cmu,goo}
\end{icmlauthorlist}

\icmlaffiliation{cmu}{Carnegie Mellon University}
\icmlcorrespondingauthor{Xinyi Wang}{xinyiw1@cs.cmu.edu}
\icmlkeywords{Machine Learning, ICML}

\vskip 0.3in
]
\printAffiliationsAndNotice{\icmlEqualContribution}

\begin{abstract}
We optimize data usage.\footnote{Code is online.}
\end{abstract}

Untitled opening paragraph.

\section{Method}
Text \vskip -0.1in continues \vspace{2mm} here \hskip 1em plus 1fil and ends."""


def test_icml_title_block_gives_the_title_only():
    chunks = parse_document(doc("\\usepackage{icml2020}", ICML_HEAD), "file:///icml.tex")
    assert [(c.kind, c.section, c.text) for c in chunks] == [
        ("title", "", "Optimizing Data Usage via Differentiable Rewards"),
        ("abstract", "Abstract", "We optimize data usage."),
        ("footnote", "Abstract", "Code is online."),
        ("paragraph", "Introduction", "Untitled opening paragraph."),
        ("section-title", "Method", "Method"),
        ("paragraph", "Method", "Text continues here and ends."),
    ]


def test_neurips_acl_title_blocks_and_thanks():
    pre = r"""\title{Verified Calibration\thanks{Funded by a grant.}}
\author{Ananya Kumar \\ Stanford University \\ \texttt{ananya@cs.stanford.edu} \And
  Tengyu Ma \\ Stanford \AND Percy Liang\thanks{Equal.}}
\affiliation{Stanford}
\date{}"""
    chunks = parse_document(doc(pre, "\\maketitle\n\\begin{abstract}Abstract text.\\end{abstract}"), "file:///n.tex")
    assert [(c.kind, c.text) for c in chunks] == [("title", "Verified Calibration"), ("abstract", "Abstract text.")]


def test_abstract_read_through_input_is_the_abstract(tmp_path):
    (tmp_path / "main.tex").write_text(doc("", "\\begin{abstract}\n\\input{abstract}\n\\end{abstract}\n\\input{intro}\n"))
    (tmp_path / "abstract.tex").write_text("We study things.\n\nSecond abstract paragraph.\n")
    (tmp_path / "intro.tex").write_text("Opening words.\n\n\\section{Background}\nMore.\n")
    chunks = parse_project(tmp_path / "main.tex").chunks
    assert [(c.kind, c.section, c.text) for c in chunks] == [
        ("abstract", "Abstract", "We study things."), ("abstract", "Abstract", "Second abstract paragraph."),
        ("paragraph", "Introduction", "Opening words."), ("section-title", "Background", "Background"),
        ("paragraph", "Background", "More.")]


# --- citations as words ---------------------------------------------------------------------

BIB = r"""@inproceedings{rudinger2015script,
  author = {Rudinger, Rachel and Rastogi, Pushpendra and Ferraro, Francis and Van Durme, Benjamin},
  title = {Script Induction as Language Modeling}, year = {2015}}
@article{smith2020, author = {John Smith and M{\"u}ller, Karl}, title = {Two}, year = 2020}
@misc{deepmind, author = {{DeepMind}}, title = {A Report}}
@book{vdb, editor = {Ludwig van Beethoven}, title = {Edited}}
"""


def test_author_citations_read_as_names_and_map_to_the_command(tmp_path):
    (tmp_path / "refs.bib").write_text(BIB)
    body = r"""\citet{rudinger2015script} frame narrative cloze as generation. \Citet{vdb} and
\citeauthor{smith2020,deepmind} agree, as \textcite{missing} and others \citep{smith2020} do; \citeposs{deepmind} report.

\bibliography{refs}"""
    (tmp_path / "main.tex").write_text(doc("\\usepackage{natbib}", body))
    (c,) = parse_project(tmp_path / "main.tex").chunks
    assert c.text == ("Rudinger et al. frame narrative cloze as generation. Van Beethoven and Smith and Müller and "
                      "DeepMind agree, as [cite] and others [cite] do; DeepMind's report.")
    assert c.cites == ("rudinger2015script", "vdb", "smith2020", "deepmind", "missing")
    source = (tmp_path / "main.tex").read_text()
    check_offsets(source, [c])
    name = "Rudinger et al."
    assert {c.offsets[i] for i in range(len(name))} == {source.index(r"\citet")}
    assert c.offsets[len(name)] == source.index(r"\citet") + len(r"\citet{rudinger2015script}")
    # without the project's .bib the same sentence keeps the neutral placeholder
    assert parse_document(source, "file:///m.tex")[0].text.startswith("[cite] frame narrative cloze")


# --- project roots and `peerlint chunks` ----------------------------------------------------

def _tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


TWO_ROOTS = {
    "icml_main.tex": doc("\\newcommand{\\method}{ICML-Net}", "\\input{related_work}"),
    "iclr2020_conference.tex": doc("\\newcommand{\\method}{ICLR-Net}", "\\input{related_work}"),
    "related_work.tex": "\\section{Related Work}\nUnlike \\method, prior work is slow.\n",
}


def test_several_roots_claiming_a_file_give_one_deterministic_choice_said_once(tmp_path):
    from peerlint.latex.project import find_root, pick_root

    _tree(tmp_path, TWO_ROOTS)
    choice = pick_root(tmp_path / "related_work.tex", tmp_path)
    assert choice.root == tmp_path / "iclr2020_conference.tex"  # first by name, whatever the disk order
    assert "included by 2 root files" in choice.note and "icml_main.tex" in choice.note and "--root" in choice.note
    assert find_root(tmp_path / "related_work.tex", tmp_path) == choice.root
    (tmp_path / ".latexmkrc").write_text("# build the ICML version\n@default_files = ('icml_main.tex');\n")
    choice = pick_root(tmp_path / "related_work.tex", tmp_path)
    assert choice.root == tmp_path / "icml_main.tex" and "latexmkrc" in choice.note
    override = pick_root(tmp_path / "related_work.tex", tmp_path, override=tmp_path / "iclr2020_conference.tex")
    assert override.root == tmp_path / "iclr2020_conference.tex" and override.note == ""
    (tmp_path / "related_work.tex").write_text("% !TEX root = iclr2020_conference.tex\n" + TWO_ROOTS["related_work.tex"])
    assert pick_root(tmp_path / "related_work.tex", tmp_path) == override  # the file's own word wins, silently


def test_the_root_file_setting_chooses_among_the_roots_that_include_the_file(tmp_path):
    import dataclasses

    from peerlint.analyzers.project_check import read_project
    from peerlint.server.config import updated
    from peerlint.settings import Settings

    _tree(tmp_path, TWO_ROOTS)
    (tmp_path / "other.tex").write_text(doc("", "Another project's text, with nothing included."))
    settings = dataclasses.replace(Settings(), root_file="icml_main.tex")
    found = read_project(tmp_path / "related_work.tex", settings, tmp_path)
    assert found.choice.root == tmp_path / "icml_main.tex" and "the rootFile setting" in found.choice.note
    assert any(c.text == "Unlike ICML-Net, prior work is slow." for c in found.project.chunks)
    # a root file of its own keeps itself; a setting naming a root that does not include the file is not used
    assert read_project(tmp_path / "other.tex", settings, tmp_path).choice.root == tmp_path / "other.tex"
    elsewhere = dataclasses.replace(Settings(), root_file="other.tex")
    assert read_project(tmp_path / "related_work.tex", elsewhere, tmp_path).choice.root == tmp_path / "iclr2020_conference.tex"
    assert updated(Settings(), {"rootFile": "icml_main.tex"}, print).root_file == "icml_main.tex"


def _peerlint(*args: str, cwd: Path):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "peerlint", *args], capture_output=True, text=True, cwd=cwd, timeout=120)


def test_chunks_command_prints_what_is_judged(tmp_path):
    import json

    _tree(tmp_path, TWO_ROOTS)
    out = _peerlint("chunks", "related_work.tex", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert [set(r) for r in rows] == [{"uri", "range", "section", "kind", "cites", "text"}] * 2
    assert rows[1]["text"] == "Unlike ICLR-Net, prior work is slow." and rows[1]["section"] == "Related Work"
    assert rows[1]["range"] == {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 35}}
    assert rows[1]["uri"] == (tmp_path / "related_work.tex").as_uri()
    assert out.stderr.count("included by 2 root files") == 1
    chosen = _peerlint("chunks", "related_work.tex", "--root", "icml_main.tex", cwd=tmp_path)
    assert chosen.returncode == 0 and chosen.stderr == ""
    assert chosen.stdout.splitlines()[3:5] == ["related_work.tex:2:1-2:36 paragraph [Related Work]",
                                               "    Unlike ICML-Net, prior work is slow."]
    missing = _peerlint("chunks", "related_work.tex", "--root", "nope.tex", cwd=tmp_path)
    assert missing.returncode == 2 and missing.stderr.startswith("peerlint: error: no such file: nope.tex")


def test_a_folder_stands_for_the_project_in_it(tmp_path):
    """`peerlint chunks DIR` (and check, diff): the folder's root file; among several, the one that
    includes the most files, said once; a folder with no root is an error naming what is missing."""
    import json

    _tree(tmp_path, {"paper/main.tex": doc("", "\\input{body}"), "paper/body.tex": "\\section{Intro}\nWe study folders.\n",
                     "paper/template_example.tex": doc("", "An example of the style.")})
    direct = _peerlint("chunks", "paper/main.tex", "--json", cwd=tmp_path)
    for folder in ("paper", "."):  # the folder itself, or one level above it
        out = _peerlint("chunks", folder, "--json", cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout) == json.loads(direct.stdout) != []
        assert out.stderr.count("holds 2 root files; using main.tex (it includes the most files, 1; also template_example.tex)") == 1
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.tex").write_text("no documentclass here")
    empty = _peerlint("chunks", "notes", cwd=tmp_path)
    assert empty.returncode == 2 and "holds no .tex file with \\documentclass" in empty.stderr


def test_glossary_acronyms_read_as_their_short_form():
    pre = r"""\usepackage[acronym]{glossaries}
\newacronym{ml}{ML}{machine learning}
\newacronym[plural=CNNs]{cnn}{CNN}{convolutional neural network}
\newacronym{mtcnn}{MTCNN}{\emph{multi-task \gls{cnn}}}"""
    body = r"""\section{Bias in \gls{ml}}
\Gls{ml} uses \glspl{cnn}; \acrlong{ml} (\acrshort{ml}) and \acrfull{mtcnn}\glsunset{ml} or \gls{unknown}."""
    assert texts(doc(pre, body)) == ["Bias in ML", "ML uses CNNs; machine learning (ML) and multi-task CNN (MTCNN) or unknown."]


# --- habits seen in a second corpus (NeurIPS 2022, CVPR 2025, ICLR 2023, EMNLP 2025, JMLR) -----


def test_tex_parameters_counter_commands_and_inline_tikz_leave_no_trace():
    pre = r"""\newcommand*\circled[1]{\tikz[baseline=(char.base)]{\node[shape=circle,draw,inner sep=.4pt] (char) {#1};}}
\newcounter{futurework}
\newcommand{\nextitem}{\stepcounter{futurework}\thefuturework)}"""
    body = r"""Our results hold.\looseness-1 More text\tolerance=1000 here \emergencystretch 3em now.
\counterwithin{theorem}{section} \numberwithin{equation}{section} \addcontentsline{toc}{section}{Appendix}
\circled{1} The provider \tikz \draw (0,0) -- (1,1); acts. \hypertarget{anchor}{Visible} text.
Future work: \nextitem{} one; \nextitem{} two.
After \editor{John Doe} the end. \hskip foo bar."""
    assert texts(doc(pre, body)) == [
        "Our results hold. More text here now. The provider acts. Visible text. "
        "Future work: [ref]) one; [ref]) two. After the end. foo bar."]


def test_pythontex_code_and_printed_values_are_code():
    body = r"""Value \py{2+3} computed.\pyc{print('hidden')} Done.
\begin{pycode}[session][fontsize=\small]
import not_mercer
not_mercer.main()  # {unbalanced
\end{pycode}
After."""
    assert texts(doc("\\usepackage{pythontex}", body)) == ["Value [code] computed. Done.", "After."]


def test_an_option_read_by_a_user_environment_s_begin_code_is_not_prose():
    pre = r"\newenvironment{sproof}{\renewcommand{\proofname}{Proof Sketch}\proof}{\endproof}"
    body = "\\begin{sproof}[Proof sketch (see Appendix \\ref{a}).]\nThe result follows.\n\\end{sproof}"
    assert texts(doc(pre, body)) == ["The result follows."]


def test_cvpr_teaser_and_supplementary_title():
    body = r"""\maketitle
\begin{strip}\centering\includegraphics{banner.pdf}
\captionof{figure}{\textbf{System Overview.} We combine hashing and encryption.}
\end{strip}
\begin{abstract}We detect provenance.\end{abstract}
\section{Introduction}
Opening.
\clearpage
\maketitlesupplementary
\section{Benchmarks}
More."""
    chunks = parse_document(doc("\\usepackage{cvpr}", body), "file:///c.tex")
    assert [(c.kind, c.section, c.text) for c in chunks] == [
        ("caption", "Introduction", "System Overview. We combine hashing and encryption."),
        ("abstract", "Abstract", "We detect provenance."), ("section-title", "Introduction", "Introduction"),
        ("paragraph", "Introduction", "Opening."), ("section-title", "Benchmarks", "Benchmarks"),
        ("paragraph", "Benchmarks", "More.")]


CHECKLIST_2022 = r"""\section*{Checklist}
The checklist follows the references. For each question, change the default \answerTODO{} to \answerYes{}.
\begin{enumerate}
\item For all authors...
\begin{enumerate}
  \item Do the main claims made in the abstract and introduction accurately reflect the paper's contributions?
    \answerYes{See Section~\ref{sec:a}.}
\end{enumerate}
\end{enumerate}"""
CHECKLIST_2024 = r"""\section*{NeurIPS Paper Checklist}
\begin{enumerate}
\item {\bf Claims}
    \item[] Question: Do the main claims made in the abstract and introduction accurately reflect the paper's contributions and scope?
    \item[] Answer: \answerYes{}
    \item[] Justification: Section 3 proves it.
    \item[] Guidelines:
    \begin{itemize}
        \item The answer NA means that the abstract and introduction do not include the claims made in the paper.
    \end{itemize}
\end{enumerate}"""


@pytest.mark.parametrize("checklist", [CHECKLIST_2022, CHECKLIST_2024], ids=["neurips2022", "neurips2024"])
def test_a_venue_checklist_is_not_the_paper_s_prose(checklist):
    pre = r"\newcommand{\answerYes}[1][]{\textcolor{blue}{[Yes] #1}}\newcommand{\answerTODO}[1][]{\textcolor{red}{[TODO]}}"
    body = f"\\section{{Results}}\nIt works.\n\n{checklist}\n\n\\appendix\n\\section{{Proofs}}\nThe proof.\n"
    chunks = parse_document(doc(pre, body), "file:///n.tex")
    assert [(c.section, c.text) for c in chunks] == [
        ("Results", "Results"), ("Results", "It works."), ("Proofs", "Proofs"), ("Proofs", "The proof.")]
    ending = parse_document(doc(pre, f"\\section{{Results}}\nIt works.\n\n{checklist}\n"), "file:///n.tex")
    assert [c.text for c in ending] == ["Results", "It works."]  # a checklist at the very end runs to it
    kept = parse_document(doc("", "\\section{A checklist for practitioners of deep learning}\nKeep me."), "file:///k.tex")
    assert [c.text for c in kept][-1] == "Keep me."


def test_siunitx_quantities_read_as_printed():
    body = r"""We gain \SI{5}{\percent} with \num{1000} samples of \SI{3.5}{\giga\byte} in \qty[mode=text]{10}{\milli\second},
\SIrange{1}{2}{\hour}, \si{\kilo\gram\per\second\squared}, \numrange{3}{4}, \ang{30} and \qty{1.2+-0.1}{GB}."""
    source = doc("\\usepackage{siunitx}", body)
    (c,) = parse_document(source, "file:///s.tex")
    check_offsets(source, [c])
    assert c.text == ("We gain 5% with 1000 samples of 3.5 GB in 10 ms, 1 h to 2 h, kg/s\u00b2, 3 to 4, 30\u00b0 and "
                      "1.2\u00b10.1 GB.")


def test_ifdefined_ifcsname_and_ifx_undefined_follow_the_project_s_definitions():
    pre = r"""%\def\showcomments{}
\def\camera{}
\ifdefined\camera \newcommand{\venue}{NeurIPS}\else\newcommand{\venue}{arXiv}\fi"""
    body = r"""\ifdefined\showcomments Hidden comment. \fi Kept \venue.
\ifcsname camera\endcsname Camera ready. \else Preprint. \fi
\ifx\showcomments\undefined No comments. \else Comments. \fi
\ifdefined\citet Known command. \fi"""
    assert texts(doc(pre, body)) == ["Kept NeurIPS. Camera ready. No comments. Known command."]


# --- issue #32 ------------------------------------------------------------------------------

def test_a_macro_in_an_input_path_is_expanded(tmp_path, strict):
    """A NeurIPS 2024 camera-ready: `\\def\\pathToRuns{...}` then `\\input{\\pathToRuns/best_Adam.tex}`."""
    (tmp_path / "runs" / "adam").mkdir(parents=True)
    (tmp_path / "runs" / "adam" / "best_Adam.tex").write_text("Adam converges fastest on every run we made.\n")
    (tmp_path / "main.tex").write_text(doc(r"\def\pathToRuns{runs}\newcommand{\optdir}{\pathToRuns/adam}",
                                           "\\section{Results}\n\\input{\\optdir/best_Adam.tex}\n"))
    project = parse_project(tmp_path / "main.tex")
    assert not project.warnings
    assert [c.text for c in project.chunks] == ["Results", "Adam converges fastest on every run we made."]


def test_starred_forms_read_like_the_unstarred_ones(strict):
    pre = r"\newacronym{ssm}{SSM}{state space model}\newacronym{ru}{RU}{railway undertaking}"
    body = (r"\section{\gls*{ssm} models} \glspl*{ru} compete; \Gls*{ssm} and \acrlong*{ssm} too, "
            r"see \cref*{x} and \footnote*{A note here.} done.")
    assert texts(doc(pre, body)) == ["SSM models", "RUs compete; SSM and state space model too, see [ref] and done.",
                                     "A note here."]


def test_makeatletter_code_in_the_body_is_not_prose(strict):
    body = ("\\section{Conclusion}\nWe conclude here.\n\n\\makeatletter\n\\def\\toptitlebar{\\hrule height4\\p@\\vskip .25in}\n"
            "\\toptitlebar\\centering{\\LARGE\\bf Appendix\\par}\\bottomtitlebar\n\n"
            "\\printcontents[sections]{l}{1}{\\setcounter{tocdepth}{2}}\n\\makeatother\nStill prose.\n")
    assert texts(doc("", body)) == ["Conclusion", "We conclude here.", "Still prose."]


def test_author_blocks_of_the_common_classes_are_left_out(strict):
    acm = doc(r"\documentclass{acmart}", r"\title{T}\author{Ann Lee}\authornote{Both authors contributed equally to this research.}"
              r"\affiliation{\institution{MIT}\city{Cambridge}\country{USA}}\email{a@b.c}\renewcommand{\shortauthors}{Lee}"
              "\n\\maketitle\n\\section{Intro}\nText of the paper.\n")
    ieee = doc("", r"\author{\IEEEauthorblockN{Ann Lee}\IEEEauthorblockA{MIT}}\maketitle"
               "\n\\section{Intro}\nText of the paper.\n")
    lncs = doc("", r"\titlerunning{Short}\author{Ann Lee\inst{1}\orcidID{0000}}\authorrunning{A. Lee}\institute{MIT}"
               "\n\\maketitle\n\\section{Intro}\nText of the paper.\n")
    neurips = doc("", "\\maketitle\n\\footnotetext{Equal contribution. Work done while at Google.}\n"
                  "\\begin{abstract}\nThe abstract.\n\\end{abstract}\n\\section{Intro}\nText\\footnote{Code is public.} here.\n")
    for source in (acm, ieee, lncs):
        assert texts(source)[-2:] == ["Intro", "Text of the paper."], source
    assert texts(neurips) == ["The abstract.", "Intro", "Text here.", "Code is public."]
    # a document without headings or abstract keeps the footnote of its prose
    assert texts(doc("", "Some text\\footnote{A note on it.} here.")) == ["Some text here.", "A note on it."]


def test_acl_styles_print_cite_as_names_and_year(tmp_path):
    (tmp_path / "refs.bib").write_text("@article{smith23, author={Smith, Ann and Jones, Bo and Li, Cy}, title={X}, year={2023}}\n"
                                       "@article{lee21, author={Lee, Dee}, title={Y}, year={2021}}\n")
    body = ("\\section{Intro}\n\\cite{smith23} show that; \\citet{lee21} agrees \\citep{smith23}; "
            "in \\citeyear{lee21} \\citeauthor{smith23} wrote it.\n\\bibliography{refs}\n")
    (tmp_path / "acl.tex").write_text(doc("\\usepackage[review]{acl}", body))
    (tmp_path / "plain.tex").write_text(doc("\\usepackage{natbib}", body))
    acl = [c.text for c in parse_project(tmp_path / "acl.tex").chunks]
    plain = [c.text for c in parse_project(tmp_path / "plain.tex").chunks]
    assert acl[1] == "Smith et al. (2023) show that; Lee (2021) agrees [cite]; in 2021 Smith et al. wrote it."
    assert plain[1] == "[cite] show that; Lee agrees [cite]; in [cite] Smith et al. wrote it."


def test_chunks_does_not_say_the_evidence_date_check_does():
    """An EMNLP 2020 draft: "evidence limited to papers published before 2020-06-01" concerns what is
    judged against the index; `peerlint chunks` only reads the project and no longer prints it."""
    from peerlint.analyzers.project_check import read_project
    from peerlint.settings import Settings

    paper = Path(__file__).parent / "data" / "real" / "emnlp2020-spot-the-bot"
    found = read_project(paper / "emnlp2020.tex", Settings())
    assert any("evidence limited to papers published before" in w for w in found.judging_warnings)
    assert not any("evidence limited" in w for w in found.warnings)
    out = _peerlint("chunks", str(paper), cwd=paper)
    assert out.returncode == 0 and "Spot The Bot" in out.stdout
    assert "evidence limited" not in out.stderr


def test_a_warning_is_said_once_per_cause(tmp_path, strict):
    """A file \\input three times, and a missing one twice: one warning each (issue #32: 242 warnings, 16 distinct)."""
    (tmp_path / "part.tex").write_text("Some prose of the part.\n")
    (tmp_path / "main.tex").write_text(doc("", "\\section{A}\n" + "\\input{part}\n" * 3 + "\\input{gone}\n" * 2))
    warnings = parse_project(tmp_path / "main.tex").warnings
    assert len(warnings) == len(set(warnings)) == 2, warnings
