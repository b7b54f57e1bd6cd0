"""The `peerlint` command line as a user runs it: real subprocesses, real index, real draft."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

from conftest import EXAMPLES, REPO

ENV = {**os.environ, "HF_HUB_OFFLINE": "1"}


def peerlint(*args: str, cwd=REPO) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "peerlint", *args], capture_output=True, text=True, cwd=cwd,
                          env=ENV, timeout=300)


def test_check_prints_file_line_col_severity_code_message(index_path, tmp_path):
    result = peerlint("check", "examples/draft.tex", "--index", str(index_path))
    assert result.returncode == 0, result.stderr
    lines = [l for l in result.stdout.strip().splitlines() if " summary " not in l]
    assert lines, result.stderr
    pattern = re.compile(r"^examples/draft\.tex:(\d+):(\d+): (error|warning|information|hint) ([a-z-]+): .+$")
    for line in lines:
        assert pattern.match(line), line
    summaries = [l for l in result.stdout.strip().splitlines() if " summary " in l]
    assert re.match(r"^examples/draft\.tex:\d+: summary Abstract: quality \d+\.\d/10 \(published abstracts score "
                    r"\d+\.\d–\d+\.\d, median 7; clearer than \d+% of the \d+ compared\)", summaries[0]), summaries
    assert any(" summary Introduction: quality " in s and "published introductions score" in s for s in summaries)
    draft = (EXAMPLES / "draft.tex").read_text().splitlines()
    close = [l for l in lines if " close-prior-work: " in l]
    assert close and draft[int(close[0].split(":")[1]) - 1].startswith("Predicting the rating of a textual review")
    files = {l.split(":")[0] for l in lines}
    assert re.search(rf"^{len(lines)} findings in {len(files)} of 2 files; \d+ chunks checked against [\d,]+ papers$",
                     result.stderr, re.MULTILINE), result.stderr  # draft.tex and the appendix it inputs


def test_check_tally_counts_in_words():
    from peerlint.server.commands.check import tally

    assert tally(0, 0, 1, 96, 171_277) == "no findings in 1 file; 96 chunks checked against 171,277 papers"
    assert tally(1, 1, 1, 1, 1) == "1 finding in 1 file; 1 chunk checked against 1 paper"
    assert tally(5, 1, 2, 47, 20) == "5 findings in 1 of 2 files; 47 chunks checked against 20 papers"
    assert tally(3, 2, 2, 30, 20).startswith("3 findings in 2 files;")


def test_check_json_matches_text_output(index_path, tmp_path):
    text = peerlint("check", "examples/draft.tex", "--index", str(index_path)).stdout.strip().splitlines()
    rows = json.loads(peerlint("check", "examples/draft.tex", "--index", str(index_path), "--json").stdout)
    findings = [r for r in rows if r["kind"] == "finding"]
    summaries = [r for r in rows if r["kind"] == "summary"]
    assert [f"{r['file']}:{r['line']}:{r['col']}: {r['severity']} {r['code']}: {r['message']}" for r in findings] \
        == [line for line in text if " summary " not in line]
    assert [f"{r['file']}:{r['line']}: summary {r['section']}:" for r in summaries] \
        == [":".join(line.split(":", 3)[:3]) + ":" for line in text if " summary " in line]
    assert {"section", "quality", "venue_style", "reads_like"} <= set(summaries[0])
    compared = summaries[0]["quality_compared_with"]  # the summary says what its quality was compared with
    assert compared["kind"] == "abstract" and compared["sections"] >= 100 and 0.0 <= compared["percentile"] <= 1.0
    # the example draft is an `article`: no target venue, so no venue-style percentile; an ACL target gives one
    assert summaries[0]["venue"] == "" and summaries[0]["venue_style"] is None and summaries[0]["reads_like"]
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"targetVenue": "ACL"}))
    acl = json.loads(peerlint("check", "examples/draft.tex", "--index", str(index_path), "--json", "--settings",
                              str(settings)).stdout)
    styled = [r for r in acl if r["kind"] == "summary"]
    assert styled[0]["venue"] == "ACL" and all(0.0 <= r["venue_style"] <= 1.0 for r in styled)
    # each placed among the ACL papers nearest the section, and the line says so
    assert all(r["venue_style_compared"] == 100 for r in styled)
    lines = peerlint("check", "examples/draft.tex", "--index", str(index_path), "--settings", str(settings)).stdout
    assert "ACL style: " in lines and "percentile of the 100 of its papers nearest in topic" in lines
    assert all(r["venue_style_upto"] is None for r in styled) and "judged on papers up to" not in lines
    # COLING ends in 2020 in the test index, ACL and NAACL in 2021: its style is judged on papers up to 2020
    settings.write_text(json.dumps({"targetVenue": "COLING"}))
    coling = [r for r in json.loads(peerlint("check", "examples/draft.tex", "--index", str(index_path), "--json",
                                             "--settings", str(settings)).stdout) if r["kind"] == "summary"]
    assert coling and all(r["venue"] == "COLING" and r["venue_style_upto"] == 2020 for r in coling)
    lines = peerlint("check", "examples/draft.tex", "--index", str(index_path), "--settings", str(settings)).stdout
    assert "(judged on papers up to 2020, its newest indexed year)" in lines


def test_search_with_filters(index_path):
    rows = json.loads(peerlint("search", "citation recommendation with attention", "-k", "5", "--venue", "coling",
                               "--json", "--index", str(index_path)).stdout)
    assert len(rows) == 5 and all(r["venue"] == "COLING" for r in rows)
    assert rows == sorted(rows, key=lambda r: -r["score"])  # hybrid by default: ranked by the fused score
    dense = json.loads(peerlint("search", "citation recommendation with attention", "-k", "5", "--venue", "coling",
                                "--mode", "dense", "--json", "--index", str(index_path)).stdout)
    assert dense == sorted(dense, key=lambda r: -r["similarity"]) and all(r["score"] == r["similarity"] for r in dense)
    older = json.loads(peerlint("search", "neural networks", "--before", "2018", "--json", "--index", str(index_path)).stdout)
    assert older and all(r["year"] < 2018 for r in older)


def test_search_shows_titles_without_bibtex_braces(tmp_path):
    """Titles as the shipped corpus holds a few of them (JMLR 2018, COLT 2021): `peerlint search` prints
    and writes them as a finding shows them."""
    from peerlint.index.build import build_index
    from peerlint.index.papers import Paper

    papers = [Paper("jmlr-lehericy18a", "State-by-state Minimax Adaptive Estimation for Nonparametric Hidden {M}arkov Models",
                    "We introduce a new estimator for the emission densities of a nonparametric hidden Markov model, "
                    "adaptive and minimax for each state.", venue="JMLR", year=2018),
              Paper("colt-2021-asi", "(Nearly) Dimension Independent Private ERM with AdaGrad Rates\\{via Publicly Estimated Subspaces",
                    "We revisit differentially private empirical risk minimization with public data to estimate the "
                    "gradient subspace.", venue="COLT", year=2021)]
    build_index(papers, tmp_path / "index", show_progress=False)
    rows = json.loads(peerlint("search", "hidden Markov model emission densities", "--json", "--index",
                               str(tmp_path / "index")).stdout)
    titles = {r["id"]: r["title"] for r in rows}
    assert titles["jmlr-lehericy18a"] == "State-by-state Minimax Adaptive Estimation for Nonparametric Hidden Markov Models"
    assert titles["colt-2021-asi"] == "(Nearly) Dimension Independent Private ERM with AdaGrad Rates via Publicly Estimated Subspaces"
    text = peerlint("search", "private ERM public subspaces", "--index", str(tmp_path / "index")).stdout
    assert "AdaGrad Rates via Publicly" in text and "{" not in text


def test_user_errors_are_one_line_and_exit_2(tmp_path):
    missing = peerlint("check", "no-such.tex", "--index", str(tmp_path / "idx"))
    assert missing.returncode == 2 and missing.stderr.startswith("peerlint: error:") and "Traceback" not in missing.stderr
    no_index = peerlint("search", "x", "--index", str(tmp_path / "idx"))
    assert no_index.returncode == 2 and "peerlint index build" in no_index.stderr
    for args, said in ((["  "], "the query is empty"), (["x", "-k", "0"], "-k must be at least 1")):
        bad = peerlint("search", *args, "--index", str(tmp_path / "idx"))  # before the index is even opened
        assert bad.returncode == 2 and bad.stderr.startswith(f"peerlint: error: {said}") and not bad.stdout, bad.stderr
    bad_date = peerlint("check", "examples/draft.tex", "--index", str(tmp_path / "idx"))
    assert bad_date.returncode == 2 and "Traceback" not in bad_date.stderr


def test_doctor_reports_every_component(index_path):
    result = peerlint("doctor", "--json", "--index", str(index_path))
    report = json.loads(result.stdout)
    names = {c["name"] for c in report["components"]}
    assert {"torch", "sentence-transformers", "embedding model", "usearch", "llm: embedded", "llm: ollama", "index"} <= names
    by = {c["name"]: c for c in report["components"]}
    assert by["index"]["ok"] and by["llm: embedded"]["ok"]
    assert not by["llm: ollama"]["ok"] and ("ollama serve" in by["llm: ollama"]["detail"] or "ollama pull" in by["llm: ollama"]["detail"])
    assert report["backend"] == "embedded" and result.returncode == 0
    assert by["corpus: proceedings"]["ok"] and "158,183 papers" in by["corpus: proceedings"]["detail"]
    assert by["corpus: journals"]["ok"] and "13,094 papers" in by["corpus: journals"]["detail"]


def test_doctor_says_what_a_corpus_without_its_vectors_costs(tmp_path, monkeypatch):
    """A supplement whose vectors file is missing (a damaged install): one line naming the missing file,
    what a build does without it and the fix."""
    import shutil

    from peerlint.index.ingest import load
    from peerlint.server import doctor

    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(load.default_corpus_path().with_name("journals-provenance.json"), data)
    (data / "journals.jsonl.xz").write_bytes(b"")
    monkeypatch.setattr(doctor, "default_corpus_paths", lambda: [data / "journals.jsonl.xz"])
    [row] = doctor.corpus_components()
    assert not row.ok and "13,094 papers" in row.detail and "journals-vectors.npz" in row.detail
    assert "embeds" in row.detail and "reinstall" in row.detail


def test_unwritable_index_is_a_user_error(tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"id": "a", "title": "T", "abstract": "Some abstract text about things."}\n')
    result = peerlint("index", "build", "--corpus", str(corpus), "--index", "/proc/peerlint-nope", "--quiet")
    assert result.returncode == 2 and "choose another --index" in result.stderr and "Traceback" not in result.stderr


def test_a_reader_that_goes_away_ends_the_command_quietly(index_path):
    """`peerlint index info --json | head -c 0`: no BrokenPipeError traceback, the status a pipe's writer gets."""
    proc = subprocess.Popen([sys.executable, "-m", "peerlint", "index", "info", "--json", "--index", str(index_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader is gone before the first write
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141
    assert "Traceback" not in err and "BrokenPipe" not in err


HEAVY = ('torch', 'sentence_transformers', 'transformers', 'lsprotocol', 'pygls', 'sklearn', 'llama_cpp', 'usearch',
         'matplotlib', 'scipy', 'numpy')


def _loaded_by(argv: list[str]) -> tuple[list[str], list[str]]:
    """The heavy libraries and the command modules that building the parser for `argv` imports."""
    code = (f"import sys; from peerlint.server.cli import build_parser; build_parser({argv!r}); "
            f"print(sorted(m for m in {HEAVY!r} if m in sys.modules)); "
            "print(sorted(m.rsplit('.', 1)[1] for m in sys.modules if m.startswith('peerlint.server.commands.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    heavy, commands = out.stdout.strip().splitlines()
    return eval(heavy), eval(commands)


def test_peerlint_help_imports_no_command_and_a_command_only_its_own():
    """`peerlint --help` lists every command from one table and imports none of them (nor numpy);
    a command imports its own module, which loads what it needs, and no other command's."""
    heavy, commands = _loaded_by(["--help"])
    assert heavy == [] and commands == []
    heavy, commands = _loaded_by(["-v", "search", "some words"])
    assert commands == ["common", "search"]
    assert not set(heavy) & {"torch", "sentence_transformers", "lsprotocol", "pygls", "llama_cpp", "matplotlib"}
    heavy, commands = _loaded_by(["bench", "--help"])  # every benchmark's parser, none of their machinery
    assert commands == ["bench"] and not set(heavy) & {"torch", "lsprotocol", "sklearn", "llama_cpp", "scipy"}
    from peerlint.server.cli import build_parser
    from peerlint.server.commands import HELP

    every = build_parser()  # the docs walk every command's options
    sub = next(a for a in every._actions if a.dest == "command")
    assert list(sub.choices) == list(HELP) and all(p._actions[1:] for p in sub.choices.values())


def test_search_table_fits_venue_names_up_to_a_width():
    from peerlint.index.papers import Hit, Paper
    from peerlint.server.commands.search import VENUE_WIDTH, table

    def hit(venue):
        return Hit(Paper("p", "A Title", "An abstract.", venue=venue, year=2004), 0.5, 0, 1, 0.6)

    lines = table([hit("Neural Computation"), hit("JEP/TALN/RECITAL"), hit("ICML")])
    assert "Neural Computation 2004" in lines[1] and "JEP/TALN/RECITAL   2004" in lines[2]
    assert len({line.index("2004") for line in lines[1:]}) == 1  # one column
    assert table([hit("ICML")])[1].split() == ["0.500", "0.600", "ICML", "2004", "A", "Title"]
    long = table([hit("Proceedings of the Workshop on Something Long")])[1]
    assert "Proceedings of th…" in long and len("Proceedings of th…") == VENUE_WIDTH
