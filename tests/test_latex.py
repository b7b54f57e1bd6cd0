"""The LaTeX parser on real conference templates, on edge cases and on arbitrary text."""

from __future__ import annotations

import random
import re
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from peerlint.latex import parse as L
from peerlint.latex.parse import LineIndex, ParseOptions, estimate_tokens, offset_to_position, parse_document, position_to_offset
from peerlint.latex.project import find_root, parse_project
from peerlint.types import Position

DATA = Path(__file__).parents[1].parent / "shared" / "data" / "latex"
ACL = DATA / "acl-org" / "acl_latex.tex"
ICLR = DATA / "ICLR" / "iclr2021_conference.tex"
needs_data = pytest.mark.skipif(not ACL.exists(), reason="../shared/data/latex is not beside the repository")


@pytest.fixture
def strict(monkeypatch):
    """Internal failures raise instead of quietly falling back to the regex extractor."""
    monkeypatch.setattr(L, "_STRICT", True)


def check_invariants(source: str, chunks) -> None:
    index = LineIndex(source)
    for c in chunks:
        assert c.text and c.text == c.text.strip()
        assert len(c.offsets) == len(c.text) + 1
        assert all(0 <= o <= len(source) for o in c.offsets)
        assert all(a <= b for a, b in zip(c.offsets, c.offsets[1:]))
        assert c.range.start == index.position(c.offsets[0])
        assert c.range.end == index.position(c.offsets[-1])
        for p in (c.range.start, c.range.end):
            assert 0 <= p.line < index.line_count()
            a, b = index.line_span(p.line)
            assert 0 <= p.character <= len(source[a:b].encode("utf-16-le")) // 2


def texts(chunks, kind=None):
    return [c.text for c in chunks if kind is None or c.kind == kind]


# --- real templates -------------------------------------------------------------------------

@needs_data
def test_acl_template_structure(strict):
    source = ACL.read_text()
    chunks = parse_document(source, ACL.as_uri())
    check_invariants(source, chunks)
    assert texts(chunks, "title") == ["Instructions for *ACL Proceedings"]
    (abstract,) = [c for c in chunks if c.kind == "abstract"]
    assert abstract.section == "Abstract"
    assert abstract.text.startswith("This document is a supplement to the general instructions for *ACL authors. "
                                    "It contains instructions for using the LaTeX style files")
    titles = texts(chunks, "section-title")
    for t in ("Introduction", "Engines", "Preamble", "Document Body", "Footnotes", "Citations",
              "BibTeX Files", "Limitations", "Acknowledgments", "Example Appendix"):
        assert t in titles
    engines = [c for c in chunks if c.kind == "paragraph" and c.text.startswith("To produce a PDF file")]
    assert engines and engines[0].section == "Engines"
    assert [c.index for c in chunks] == list(range(len(chunks)))
    assert chunks[0].hash != chunks[1].hash


@needs_data
@pytest.mark.parametrize("path", [ACL, ICLR], ids=["acl", "iclr"])
def test_templates_have_no_markup_in_prose(strict, path):
    source = path.read_text()
    chunks = parse_document(source, path.as_uri())
    assert len(chunks) > 40
    for c in chunks:
        for bad in ("$", "\\cite", "%", "\\begin", "\\end", "{", "}", "documentclass", "\\ref", "tabular"):
            assert bad not in c.text, (bad, c.text)
    # verbatim blocks, tables and equations are gone, captions are their own chunks
    joined = "\n".join(texts(chunks))
    assert "usepackage" not in joined and "A = \\pi" not in joined and "Dendrite" not in joined
    assert any(c.kind == "caption" for c in chunks)


@needs_data
def test_cite_keys_are_collected_per_chunk(strict):
    acl = parse_document(ACL.read_text(), ACL.as_uri())
    cited = [c for c in acl if c.cites]
    assert [c.cites for c in cited] == [("Gusfield:97",)]
    assert "[cite]" in cited[0].text
    assert not any("Ando2005" in c.cites for c in acl)  # \nocite is not prose
    iclr = parse_document(ICLR.read_text(), ICLR.as_uri())
    assert ("Hinton06", "Bengio+chapter2007") in [c.cites for c in iclr]
    assert ("goodfellow2016deep",) in [c.cites for c in iclr]


@needs_data
@pytest.mark.parametrize("path", [ACL, ICLR], ids=["acl", "iclr"])
def test_offsets_point_at_the_source_letters(strict, path):
    source = path.read_text()
    exact = other = 0
    for c in parse_document(source, path.as_uri()):
        for i, ch in enumerate(c.text):
            if not ch.isalpha():
                continue
            if source[c.offsets[i]] == ch:
                exact += 1
            else:  # letters that stand for a command or for math: they map to its start
                assert source[c.offsets[i]] in "\\$", (c.text, i)
                other += 1
    assert exact > 15 * other > 0  # display math reads "[math]" too (it keeps its sentence whole)


@needs_data
def test_ranges_match_hand_checked_lines(strict):
    source = ACL.read_text()
    chunks = parse_document(source, ACL.as_uri())
    (intro,) = [c for c in chunks if c.text.startswith("These instructions are for authors")]
    # acl_latex.tex line 117 (1-based): "These instructions are for authors submitting papers ..."
    assert intro.range.start == Position(116, 0)
    i = intro.text.index("They are not self-contained")
    assert offset_to_position(source, intro.offsets[i]) == Position(116, 87)
    assert position_to_offset(source, Position(116, 87)) == intro.offsets[i]
    (abstract,) = [c for c in chunks if c.kind == "abstract"]
    assert abstract.range.start == Position(109, 0)
    assert abstract.range.end == Position(111, 113)  # line 112 ends with "... accepted papers."


@needs_data
def test_iclr_template_as_a_project(strict):
    project = parse_project(ICLR)
    assert project.files == [ICLR, ICLR.parent / "math_commands.tex"]  # \input in the preamble
    assert project.bib_files == [ICLR.parent / "iclr2021_conference.bib"]
    assert project.warnings == []
    single = parse_document(ICLR.read_text(), ICLR.as_uri())
    # the project has its .bib: \citet{Hinton06} reads as the authors' names, not a placeholder
    assert [c.text for c in project.chunks] == [c.text.replace('See [cite] for', 'See Hinton et al. for') for c in single]
    assert any('(as in "See Hinton et al. for more information.")' in c.text for c in project.chunks)
    assert project.chunks[0].text == "Formatting Instructions for ICLR 2021 Conference Submissions"


# --- positions ------------------------------------------------------------------------------

def test_emoji_and_crlf_give_utf16_columns(strict):
    source = "Intro \U0001F600 text.\r\nNext \U0001F600 line here.\r\n\r\nSecond \U0001F600\U0001F600 para.\rLast line."
    chunks = parse_document(source, "file:///e.tex")
    check_invariants(source, chunks)
    first, second = chunks
    assert first.text == "Intro \U0001F600 text. Next \U0001F600 line here."
    assert first.range.start == Position(0, 0)
    assert first.range.end == Position(1, 18)  # "Next " 5 + emoji 2 + " line here." 11
    i = first.text.index("line")
    assert offset_to_position(source, first.offsets[i]) == Position(1, 8)
    assert position_to_offset(source, Position(1, 8)) == source.index("line")
    assert second.text == "Second \U0001F600\U0001F600 para. Last line."
    assert second.range.start == Position(3, 0)
    assert second.range.end == Position(4, 10)  # a lone \r ends a line too
    assert offset_to_position(source, source.index("para")) == Position(3, 12)
    # beyond the end of a line clamps to its end; a column inside a surrogate pair stays before it
    assert position_to_offset(source, Position(0, 999)) == source.index("\r\n")
    assert position_to_offset(source, Position(0, 7)) == source.index("\U0001F600")
    assert position_to_offset(source, Position(99, 0)) == len(source)


def test_span_range_covers_part_of_a_chunk(strict):
    source = "Intro.\n\nWe see $x$ here and \\cite{k} there.\n"
    (_, c) = parse_document(source, "file:///s.tex")
    index = L.line_index(source)
    i = c.text.index("[math]")
    r = L.span_range(c, i, i + len("[math]"), index)
    assert (r.start, r.end) == (Position(2, 7), Position(2, 10))  # all of "$x$"
    j = c.text.index("here")
    r = L.span_range(c, j, j + 4, index)
    assert source[index.offset(r.start):index.offset(r.end)] == "here"


def _reference_position(source: str, offset: int) -> Position:
    lines = re.split(r"\r\n|\r|\n", source[:offset])
    return Position(len(lines) - 1, len(lines[-1].encode("utf-16-le")) // 2)


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab \r\n\t\u00e9\U0001F600\U00010348\u2028")), max_size=60))
def test_positions_match_a_reference_and_round_trip(source):
    index = LineIndex(source)
    for offset in range(len(source) + 1):
        if 0 < offset < len(source) and source[offset - 1] == "\r" and source[offset] == "\n":
            continue  # between \r and \n: not a position an editor can hold
        pos = index.position(offset)
        assert pos == _reference_position(source, offset)
        assert index.offset(pos) == offset


# --- prose extraction -----------------------------------------------------------------------

def test_placeholders_accents_and_specials(strict):
    source = (r"We have $x^2$ and \[y\] done; see \citet{k} in Sec.~\ref{s} at \url{http://a.b/%20c}. "
              r"Vuli\'{c} said 5~\% is ``fine'' --- mostly, \eg, in \LaTeX{} \verb|\code| "
              r"on \href{http://x.org/%7E}{\emph{our} site}.")
    (c,) = parse_document(source, "file:///p.tex")
    assert c.text == ('We have [math] and [math] done; see [cite] in Sec. [ref] at [url]. '
                      'Vulić said 5 % is "fine" \u2014 mostly, e.g., in LaTeX [code] on our site.')
    assert c.cites == ("k",)
    i = c.text.index("ć")
    assert source[c.offsets[i]:c.offsets[i + 1]] == "\\'{c}"
    check_invariants(source, [c])


def test_title_abstract_command_and_preamble(strict):
    source = ("\\documentclass{article}\n\\usepackage{x}\n\\title{Deep Things}\n\\abstract{We study things.}\n"
              "\\author{Nobody}\nPreamble junk.\n\\begin{document}\n\\maketitle\n\\section{Related Work}\n"
              "Prior work exists.\n\\end{document}\nAfter the end.\n")
    chunks = parse_document(source, "file:///t.tex")
    assert [(c.kind, c.section, c.text) for c in chunks] == [
        ("title", "", "Deep Things"),
        ("abstract", "Abstract", "We study things."),
        ("section-title", "Related Work", "Related Work"),
        ("paragraph", "Related Work", "Prior work exists."),
    ]
    assert parse_document("Only preamble text.", "file:///x.tex", in_preamble=True) == []
    # no \begin{document}: an \input-ed file, all of it is body
    assert texts(parse_document("\\documentclass{article}\nBody text.", "file:///x.tex")) == ["Body text."]


def test_section_is_the_enclosing_top_level_heading(strict):
    source = r"""\section{Related Work}
\paragraph{Peer review.} Reviews were studied before.
\subsection{Retrieval}
Dense retrievers exist.
\section*{Method}
We retrieve.
"""
    rows = [(c.kind, c.section, c.text) for c in parse_document(source, "file:///s.tex")]
    assert rows == [
        ("section-title", "Related Work", "Related Work"),
        ("section-title", "Related Work", "Peer review."),
        ("paragraph", "Related Work", "Reviews were studied before."),
        ("section-title", "Related Work", "Retrieval"),
        ("paragraph", "Related Work", "Dense retrievers exist."),
        ("section-title", "Method", "Method"),
        ("paragraph", "Method", "We retrieve."),
    ]
    # without \section, the shallowest heading level in use names the section
    only_sub = parse_document("\\subsection{A}\nText a.\n\\paragraph{x} Text x.\n\\subsection{B}\nText b.", "file:///s.tex")
    assert [c.section for c in only_sub if c.kind == "paragraph"] == ["A", "A", "B"]


def test_lists_footnotes_captions_and_floats(strict):
    source = r"""\section{Method}
We make three contributions:
\begin{itemize}
  \item a parser;
  \item[(b)] a server.
\end{itemize}
It works.\footnote{See the appendix.} Really.

\begin{figure}[t]
  \centering \includegraphics[width=\linewidth]{plot.pdf}
  \caption{Accuracy over time \cite{fig}.}\label{fig:a}
\end{figure}
\begin{verbatim}
\section{Not a section} $ { %
\end{verbatim}
\iffalse Hidden draft text. \fi
\begin{comment}
Also hidden.
\end{comment}
"""
    chunks = parse_document(source, "file:///l.tex")
    assert [(c.kind, c.text) for c in chunks] == [
        ("section-title", "Method"),
        ("paragraph", "We make three contributions: a parser; (b) a server. It works. Really."),
        ("footnote", "See the appendix."),
        ("caption", "Accuracy over time [cite]."),
    ]
    assert all(c.section == "Method" for c in chunks)
    assert chunks[3].cites == ("fig",)
    check_invariants(source, chunks)


def test_long_paragraphs_split_at_sentences(strict):
    source = " ".join(f"This is sentence number {i} about language models and tokens." for i in range(80))
    chunks = parse_document(source, "file:///long.tex")
    assert len(chunks) >= 3
    for c in chunks:
        assert estimate_tokens(c.text) <= 200
        assert c.text.startswith("This is sentence") and c.text.endswith("tokens.")
    assert " ".join(texts(chunks)) == source
    words = ParseOptions(max_tokens=12, count_tokens=lambda s: len(s.split()))
    small = parse_document(source, "file:///long.tex", words)
    assert len(small) == 80 and all(len(c.text.split()) <= 12 for c in small)
    # one sentence longer than the limit is cut at word boundaries
    huge = "word " * 500 + "end."
    pieces = parse_document(huge, "file:///h.tex", words)
    assert all(len(c.text.split()) <= 12 for c in pieces)
    assert " ".join(texts(pieces)) == huge.strip()
    check_invariants(huge, pieces)


def test_a_run_without_sentence_ends_is_counted_about_once():
    """A 200k-word line took minutes: every cut counted the tokens from there to the end of the run.
    Now each cut counts a window around it: the characters counted stay a small multiple of the text's."""
    text = "word " * 200_000
    counted = []

    def count(s: str) -> int:
        counted.append(len(s))
        return len(s.split())

    pieces = L.split_paragraph(text, [], count, 200)
    assert len(pieces) >= 1000 and all(len(text[a:b].split()) <= 200 for a, b in pieces)
    assert " ".join(text[a:b] for a, b in pieces) == text.strip()
    assert sum(counted) < 10 * len(text), sum(counted) / len(text)  # it was ~560 times


# --- user tables, learned macros, magic comments --------------------------------------------

def test_custom_command_and_environment_tables(strict):
    source = r"""We use \mycmd{secret words} and \foo[x]{a}{b} and \keep{gone}{kept} and \unknown{shown} \noarg here.
\begin{myenv}hidden env text\end{myenv}
\begin{mybox}{2cm} boxed text \end{mybox}
"""
    options = ParseOptions(
        commands={"\\mycmd{}": "ignore", "\\foo[]{}{}": "dummy", "\\keep{}{}": "default"},
        environments={"myenv": "ignore"},
    )
    (c, boxed) = parse_document(source, "file:///c.tex", options)
    assert c.text == "We use and [dummy] and kept and shown here."
    assert boxed.text == "boxed text"
    plain = parse_document(source, "file:///c.tex")
    assert "secret words" in plain[0].text and "hidden env text" in " ".join(texts(plain))
    with pytest.raises(ValueError, match="mycommand"):
        ParseOptions(commands={"mycommand": "ignore"})
    with pytest.raises(ValueError, match="ignore"):
        ParseOptions(commands={"\\x{}": "drop"})


def test_text_macros_are_learned_from_definitions(strict):
    source = ("\\newcommand{\\method}{FooNet\\xspace}\n\\def\\ours{\\textsc{Ours}}\n"
              "\\newcommand{\\R}{\\mathbb{R}}\n\\begin{document}\n\\method beats \\ours{} in \\R.\n\\end{document}")
    (c,) = parse_document(source, "file:///m.tex")
    assert c.text == "FooNet beats Ours in R."  # every macro expands now, \mathbb keeps its argument
    assert parse_document("\\method works.", "file:///m.tex", ParseOptions(macros={"method": "Bar"}))[0].text == "Bar works."


def test_magic_comments(strict):
    source = """Before the region.

% peerlint: disable=HEDGE,PASSIVE
Silenced paragraph.

% peerlint: enable=HEDGE
Only passive silenced.

Line one % peerlint: disable-line=X1
line two.

% peerlint: disable-next-line
Everything off here.

% peerlint: enable
Free again.
"""
    got = {c.text: c.disabled for c in parse_document(source, "file:///m.tex")}
    assert got == {
        "Before the region.": frozenset(),
        "Silenced paragraph.": {"HEDGE", "PASSIVE"},
        "Only passive silenced.": {"PASSIVE"},
        "Line one line two.": {"PASSIVE", "X1"},
        "Everything off here.": {"*", "PASSIVE"},
        "Free again.": frozenset(),
    }
    assert parse_document("\\% peerlint: disable=X\nText.", "file:///m.tex")[0].disabled == frozenset()


# --- projects -------------------------------------------------------------------------------

def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_multi_file_project(tmp_path, strict):
    _write(tmp_path, {
        "main.tex": "\\documentclass{article}\n\\input{macros}\n\\newcommand{\\method}{FooNet}\n"
                    "\\title{A Project}\n\\addbibresource{extra.bib}\n\\begin{document}\n\\section{Method}\n"
                    "\\input{sections/method}\n\\import{chapters/}{results}\n\\include{missing}\n"
                    "\\bibliography{refs,nothere}\n\\end{document}\n",
        "macros.tex": "\\newcommand{\\R}{\\mathbb{R}}\nNot prose: this file is read in the preamble.\n",
        "sections/method.tex": "% !TeX root = ../main.tex\nOur \\method works \\cite{k1}.\n\n"
                               "\\subsection{Details}\nMore details here.\n",
        "chapters/results.tex": "\\section{Results}\nIt \\emph{works}.\n",
        "chapters/orphan.tex": "No root mentions me.\n",
        "refs.bib": "", "extra.bib": "",
    })
    method = tmp_path / "sections" / "method.tex"
    main = tmp_path / "main.tex"
    assert find_root(method) == main  # magic comment
    assert find_root(tmp_path / "chapters" / "results.tex", workspace=tmp_path) == main  # found by search
    assert find_root(tmp_path / "chapters" / "orphan.tex", workspace=tmp_path) == tmp_path / "chapters" / "orphan.tex"
    assert find_root(main) == main

    project = parse_project(main)
    assert project.files == [main, tmp_path / "macros.tex", method, tmp_path / "chapters" / "results.tex"]
    assert project.bib_files == [tmp_path / "extra.bib", tmp_path / "refs.bib"]
    assert any("missing" in w for w in project.warnings) and any("nothere" in w for w in project.warnings)
    rows = [(Path(c.uri[7:]).name, c.kind, c.section, c.text, c.index) for c in project.chunks]
    assert rows == [
        ("main.tex", "title", "", "A Project", 0),
        ("main.tex", "section-title", "Method", "Method", 1),
        ("method.tex", "paragraph", "Method", "Our FooNet works [cite].", 0),
        ("method.tex", "section-title", "Method", "Details", 1),  # a \subsection stays in its \section
        ("method.tex", "paragraph", "Method", "More details here.", 2),
        ("results.tex", "section-title", "Results", "Results", 0),
        ("results.tex", "paragraph", "Results", "It works.", 1),
    ]
    text = method.read_text()
    works = project.chunks[2]
    assert works.uri == method.as_uri()
    assert text[works.offsets[0]:works.offsets[-1]] == "Our \\method works \\cite{k1}."
    assert works.range.start == Position(1, 0)


def test_project_uses_unsaved_buffers_and_subfiles(tmp_path, strict):
    _write(tmp_path, {"main.tex": "\\documentclass{article}\n\\begin{document}\n\\subfile{ch/one}\n\\end{document}\n",
                      "ch/one.tex": "\\documentclass[../main.tex]{subfiles}\n\\begin{document}\nOn disk.\n\\end{document}\n"})
    buffers = {tmp_path / "ch" / "one.tex": "\\documentclass[../main.tex]{subfiles}\n\\begin{document}\nIn the editor.\n\\end{document}\n"}

    def read(path: Path) -> str:
        return buffers[path] if path in buffers else path.read_text()

    assert find_root(tmp_path / "ch" / "one.tex", tmp_path, read) == tmp_path / "main.tex"
    project = parse_project(tmp_path / "main.tex", ParseOptions(), read)
    assert texts(project.chunks) == ["In the editor."]


def test_input_cycles_terminate(tmp_path, strict):
    _write(tmp_path, {"a.tex": "\\documentclass{article}\n\\begin{document}\nA text.\n\\input{b}\n\\end{document}\n",
                      "b.tex": "B text.\n\\input{c}\n\\input{b}\n", "c.tex": "C text.\n\\input{a.tex}\n"})
    project = parse_project(tmp_path / "a.tex")
    assert texts(project.chunks) == ["A text.", "B text.", "C text."]
    assert sum("cycle" in w for w in project.warnings) == 2
    assert find_root(tmp_path / "c.tex", tmp_path) == tmp_path / "a.tex"
    assert parse_project(tmp_path / "nope.tex").warnings


# --- broken input ---------------------------------------------------------------------------

BROKEN = [
    r"\begin{document} text {unclosed \textbf{bold", r"stray } brace } here \end{itemize} more",
    r"\begin{itemize} \item unclosed \begin{abstract} abs", r"no begin document \section{A} text",
    "\\", "\\verb", "\\verb|open", "$", "$$ x", "\\(", "\\[", "%", "{", "}", "\\begin{", "\\end{",
    "\\section{", "\\cite{", "\\'", "\\item[", "\\footnote{", "\\caption", "\\iffalse", "\\begin{verbatim}",
    "\\def", "\\def\\x", "\\let", "\\url{", "\\href{a}", "\\input{", "\\title{", "\\abstract",
    "\x00\x01\x02 \ufffd text", "\\begin{document}\\end{document}\\begin{document}",
    "\\" * 1000, "{" * 3000 + "deep", "}" * 3000, "\\begin{a}" * 500, "$" * 1001, "\\section{" * 300,
]


@pytest.mark.parametrize("source", BROKEN, ids=range(len(BROKEN)))
def test_broken_latex_never_raises(source):
    chunks = parse_document(source, "file:///broken.tex")
    check_invariants(source, chunks)


def test_binary_garbage_and_a_5mb_file():
    rng = random.Random(7)
    garbage = bytes(rng.randrange(256) for _ in range(200_000)).decode("latin-1")
    check_invariants(garbage, parse_document(garbage, "file:///g.tex"))
    big = ("Some prose with $math$ and \\cite{k} in it. " * 40 + "\n\n") * 3000 + garbage[:50_000]
    assert len(big) > 5_000_000
    start = time.perf_counter()
    chunks = parse_document(big, "file:///big.tex")
    assert time.perf_counter() - start < 20
    assert len(chunks) > 2000 and chunks[0].text.startswith("Some prose with [math] and [cite] in it.")


@needs_data
def test_forty_pages_parse_and_reparse(strict):
    """A guard against losing the block cache, not a benchmark (see the report for timings)."""
    iclr, acl = ICLR.read_text(), ACL.read_text()

    def body(s: str) -> str:
        return s[s.index("\\begin{document}") + 16: s.index("\\end{document}")]

    parts, n = [], 0
    while sum(map(len, parts)) < 160_000:
        for b in (body(iclr), body(acl)):
            parts.append(b.replace("\n\n", f"\n\nPart{n} "))
            n += 1
    doc = iclr[: iclr.index("\\begin{document}") + 16] + "".join(parts) + "\\end{document}\n"
    start = time.perf_counter()
    first = parse_document(doc, "file:///forty.tex")
    cold = time.perf_counter() - start
    j = doc.index(" ", len(doc) // 2)
    edited = doc[:j] + " edited" + doc[j:]
    start = time.perf_counter()
    second = parse_document(edited, "file:///forty.tex")
    warm = time.perf_counter() - start
    assert len(first) == len(second) > 800
    assert warm < max(0.5, cold / 3)


def _fields(chunks):
    return [(c.text, c.uri, c.section, c.offsets, c.range, c.kind, c.index, c.cites, c.disabled) for c in chunks]


@needs_data
def test_reparse_after_edits_equals_a_fresh_parse(strict):
    """The block and chunk caches must never leak stale offsets, ranges, sections or indexes."""
    source = ICLR.read_text()
    parse_document(source, ICLR.as_uri())
    mid = source.index("\\subsection{Style}")
    edits = [
        source[:mid] + "\n" + source[mid:],  # every later line moves
        source[:mid] + "\U0001F600" + source[mid:],  # later columns on that line move by 2
        source.replace("\n\n\\subsection{Style}", "\n\\subsection{Style}", 1),  # two blocks merge
        source[:mid] + "% peerlint: disable=X\n" + source[mid:],
        source.replace("\\section{Default Notation}", "\\section{Notation}"),  # later sections change
    ]
    for edited in edits:
        cached = parse_document(edited, ICLR.as_uri())
        L._BLOCKS.clear()
        L._PIECES.clear()
        assert _fields(cached) == _fields(parse_document(edited, ICLR.as_uri()))


# --- properties -----------------------------------------------------------------------------

LATEX_CHARS = list("abc xyz.\\{}$%&~^_#[]\n\r\t*'`-!?\u00e9\U0001F600")
TOKENS = ["\\section{", "\\begin{itemize}", "\\end{itemize}", "\\item", "\\begin{figure}", "\\end{figure}",
          "\\caption{", "\\cite{a,b}", "\\footnote{", "\\begin{abstract}", "\\end{abstract}",
          "\\begin{document}", "\\end{document}", "\\title{", "\\verb|x|", "\\verb", "\\url{", "\\emph{", "\\'",
          "\\LaTeX", "\\\\", "\\%", "%", "% peerlint: disable=X\n", "$", "$$", "\\(", "\\)", "\\[", "\\]", "{", "}",
          "[", "]", "~", "``", "--", "&", "\n", "\n\n", "\r\n", "\r", " ", "word", "Sentence. ", "\U0001F600",
          "\\iffalse", "\\fi", "\\begin{verbatim}", "\\end{verbatim}", "\\input{x}", "\\par", "\\def\\x{y}",
          "\\newcommand{\\m}{Mm}", "\\m", "\\begin{equation}", "\\end{equation}", "\\ref{l}", "\\foo",
          "\\begin{tabular}{ll}", "\\end{tabular}", "\\href{u}{t}"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(), st.text(alphabet=st.sampled_from(LATEX_CHARS))))
def test_any_text_parses_within_bounds(source):
    check_invariants(source, parse_document(source, "file:///h.tex"))


@settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(TOKENS), max_size=50).map("".join))
def test_token_soup_parses_without_internal_errors(source):
    old = L._STRICT
    L._STRICT = True  # the walker itself must cope; only pylatexenc's recursion limit may fall back
    try:
        chunks = parse_document(source, "file:///s.tex")
    finally:
        L._STRICT = old
    check_invariants(source, chunks)
    for c in chunks:
        assert estimate_tokens(c.text) <= 200


def test_a_paragraph_that_only_moved_keeps_its_offsets_map():
    """Typing in the first paragraph moves every later one: their chunks get a new base over the
    same relative offsets (no per-character rebuild), and still point at the right source letters."""
    body = "\n\n".join(f"Paragraph {i} talks about retrieval models and their evaluation." for i in range(30))
    before = f"\\documentclass{{article}}\n\\begin{{document}}\n{body}\n\\end{{document}}\n"
    after = before.replace("Paragraph 0 talks", "Paragraph 0 now talks", 1)
    old, new = parse_document(before, "file:///m.tex"), parse_document(after, "file:///m.tex")
    assert [c.text for c in old][1:] == [c.text for c in new][1:]
    last_old, last_new = old[-1], new[-1]
    assert last_new.offsets.rel is last_old.offsets.rel and last_new.offsets.base == last_old.offsets.base + 4
    assert after[last_new.offsets[0]:last_new.offsets[-1]] == last_new.text
    assert last_new.offsets == tuple(o + 4 for o in last_old.offsets) and last_new.offsets[1:3] == tuple(last_new.offsets)[1:3]
    assert last_new.offsets != last_old.offsets and hash(last_new.offsets) == hash(tuple(last_new.offsets))
