"""The README and the docs site agree with the CLI, with each other and with the results files.

- `mkdocs build --strict` passes: no link to a missing page or heading (when mkdocs is installed:
  the `dev` extra brings it, so CI runs it).
- The README stays a user's page (<= 15 KB), its links resolve, and the site's home is the README.
- The command table names every command the CLI has, and only options those commands take.
- Results are data: every number an expected-results file (`results/expected/*.yaml`, in the manner
  of Pyserini's 2CR) lists is the value in its run file under `results/latest/` and is what the docs
  page shows in that table cell. Timestamped runs live in `results/archive/`, which nothing cites.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
RESULTS = REPO / "results"
RUN_FILE = re.compile(r"results/(?:archive/)?[\w.-]+-\d{8}T\d{6}Z\.json|results/archive/[\w.-]+\.json")


# -- the site -------------------------------------------------------------------------------
@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None,
                    reason="mkdocs-material is not installed (pip install -e '.[dev]')")
def test_site_builds_strict_with_no_broken_link(tmp_path):
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(REPO / "mkdocs.yml"),
                          "--site-dir", str(tmp_path / "site")], cwd=REPO, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert run.returncode == 0, run.stdout + run.stderr
    assert (tmp_path / "site" / "benchmarks" / "schnovel" / "index.html").is_file()


def test_strict_mode_fails_on_a_broken_link(tmp_path):
    """The configuration the build test relies on: strict, and links and anchors checked."""
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    assert config["strict"] is True
    assert config["validation"]["anchors"] == "warn"  # a link to a missing heading is a warning, so fails
    assert config["validation"]["unrecognized_links"] == "warn"


def _slug(heading: str) -> str:
    text = re.sub(r"[`*_]", "", heading).strip().lower()
    text = re.sub(r"[^\w\s-]", "", text)
    return re.sub(r"[\s]+", "-", text)


def _anchors(page: Path) -> set[str]:
    fence = False
    found = set()
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fence = not fence
        elif not fence and (m := re.match(r"^#{1,6} (.+)$", line)):
            found.add(_slug(m.group(1)))
    return found


def test_readme_is_short_and_its_links_resolve():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(text.encode("utf-8")) <= 15_000, "the README is a user's page: move details to docs/"
    assert text.startswith("# peerlint\n\n```sh\nmake demo    #"), "the two commands stay at the very top"
    assert "\nmake test    # run the whole test suite" in text
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if target.startswith(("http://", "https://", "#")):
            continue
        path, _, anchor = target.partition("#")
        if not (REPO / path).exists():
            broken.append(target)
        elif anchor and anchor not in _anchors(REPO / path):
            broken.append(target)
    assert broken == []
    assert "## Diagnostics" in text, "server/diagnostics.py links each code to the README's #diagnostics"


def test_site_home_is_the_readme():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    expected = readme.replace("](docs/", "](").replace("(docs/index.md)", "(index.md)")
    assert (DOCS / "index.md").read_text(encoding="utf-8") == expected, \
        "docs/index.md is README.md with `docs/` dropped from its links: copy it again"


# -- the command table and --help ----------------------------------------------------------
def _commands() -> dict[str, argparse.ArgumentParser]:
    from peerlint.server.cli import build_parser

    found: dict[str, argparse.ArgumentParser] = {}

    def walk(parser: argparse.ArgumentParser, path: str) -> None:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            found[path] = parser
        for action in subs:
            for name, child in action.choices.items():
                walk(child, f"{path} {name}".strip())

    walk(build_parser(), "")
    return found


def _table_rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("| `peerlint ")]


@pytest.mark.parametrize("page", ["docs/usage/cli.md", "README.md"])
def test_command_table_agrees_with_help(page):
    commands = _commands()
    rows = _table_rows((REPO / page).read_text(encoding="utf-8"))
    first_cells = " ".join(row.split(" | ")[0] for row in rows).replace("\\|", "|")
    missing = []
    for path in commands:
        top, _, rest = path.partition(" ")
        listed = re.search(rf"`peerlint {re.escape(path)}[` \[]", first_cells)
        in_bench_list = top == "bench" and re.search(rf"`peerlint bench [\w|]*\b{rest}\b", first_cells)
        if not (listed or in_bench_list):
            missing.append(path)
    assert missing == [], f"{page}: commands without a row"
    unknown = []
    for row in rows:
        cell = row.split(" | ")[0].replace("\\|", "|")
        for usage in re.findall(r"`peerlint ([^`]+)`", cell):
            words = usage.split()
            if len(words) > 1 and f"{words[0]} {words[1].split('|')[0]}" in commands:  # `bench a|b|c`: one row, several
                assert all(f"{words[0]} {w}" in commands for w in words[1].split("|")), f"{page}: {usage}"
                continue
            path = next((p for p in sorted(commands, key=len, reverse=True)
                         if words[:len(p.split())] == p.split()), None)
            assert path is not None, f"{page}: `peerlint {usage}` is no command"
            options = {o for a in commands[path]._actions for o in a.option_strings}
            unknown += [f"{path} {o}" for o in re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", usage) if o not in options]
    assert unknown == [], f"{page}: options the CLI does not take"


def test_settings_page_lists_every_setting():
    from dataclasses import fields

    from peerlint.settings import Settings

    text = (DOCS / "usage" / "settings.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"`(\w+)`", "\n".join(l.split(" | ")[0] for l in text.splitlines() if l.startswith("| `"))))
    camel = {re.sub(r"_(\w)", lambda m: m.group(1).upper(), f.name) for f in fields(Settings)}
    assert sorted(camel - listed) == [], "settings without a row in docs/usage/settings.md"
    assert sorted(listed - camel) == [], "rows for settings the server does not have"


# -- results as data ---------------------------------------------------------------------------
def _table_cells(line: str) -> list[str]:
    cells = re.split(r"(?<!\\)\|", line.strip())[1:-1]
    return [c.strip().replace("**", "") for c in cells]


def _tables(page: Path) -> dict[str, tuple[list[str], list[list[str]]]]:
    tables: dict[str, tuple[list[str], list[list[str]]]] = {}
    lines = page.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and re.match(r"^\|[-| :]+\|$", lines[i + 1]):
            header = _table_cells(lines[i])
            rows = []
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(_table_cells(lines[i]))
                i += 1
            assert header[0] not in tables, f"{page}: two tables start with the column {header[0]!r}"
            tables[header[0]] = (header, rows)
        else:
            i += 1
    return tables


def _matches(item, field: str, op: str, value: str) -> bool:
    got = str(item[int(field)] if field.isdigit() else item[field])
    return got == value or (op == "^=" and got.startswith(value))


def _resolve(data, path: str):
    """`rows[row=dense].recall.10`, `rows[0^=fluency][2]`, `dev[k=2&threshold=0.65].precision`, `a["b.c"]`."""
    for key, bracket in re.findall(r"\.?([^.\[\]]+)|\[([^\]]+)\]", path):
        if key:
            data = data[key]
        elif bracket.startswith('"'):
            data = data[bracket.strip('"')]
        elif bracket.isdigit():
            data = data[int(bracket)]
        else:  # [field=value], [field^=prefix], several joined by &; a field of a list row is its index
            conditions = [re.match(r"^([^=^]+)(\^?=)(.*)$", c).groups() for c in bracket.split("&")]
            hits = [item for item in data if all(_matches(item, *c) for c in conditions)]
            assert len(hits) == 1, f"{path}: {len(hits)} items match [{bracket}]"
            data = hits[0]
    return data


def _expand(name: str) -> list[str]:
    """`a-{b,c}-{d,e}.json` -> the four names it stands for."""
    m = re.search(r"\{([^{}]*)\}", name)
    if m is None:
        return [name]
    return [n for part in m.group(1).split(",") for n in _expand(name[:m.start()] + part + name[m.end():])]


def _cited(text: str) -> set[str]:
    """The results/latest/ files a page names (brace lists expanded)."""
    return {n for token in re.findall(r"results/latest/([^\s`)]+)", text) for n in _expand(token.rstrip(".,;"))}


def _agrees(value: float, expect: str, scale: float) -> bool:
    number = expect.replace(",", "")
    decimals = len(number.split(".")[1]) if "." in number else 0
    return abs(value * scale - float(number)) <= 0.5 * 10 ** -decimals + 1e-9


def _shows(text: str, expect: str) -> bool:
    return re.search(rf"(?<![\d.]){re.escape(expect)}(?![\d])", text) is not None


EXPECTED = sorted((RESULTS / "expected").glob("*.yaml"))


def test_every_benchmark_page_has_expected_results():
    pages = {yaml.safe_load(p.read_text(encoding="utf-8"))["page"] for p in EXPECTED}
    benchmark_pages = {str(p.relative_to(REPO)) for p in (DOCS / "benchmarks").glob("*.md")} - {"docs/benchmarks/results.md"}
    assert sorted(benchmark_pages - pages) == []


@pytest.mark.parametrize("spec", EXPECTED, ids=[p.stem for p in EXPECTED])
def test_docs_show_the_expected_results_of_the_latest_runs(spec):
    expected = yaml.safe_load(spec.read_text(encoding="utf-8"))
    page = REPO / expected["page"]
    text = page.read_text(encoding="utf-8")
    tables = _tables(page)
    wrong = []
    for check in expected["checks"]:
        run_file = RESULTS / "latest" / check["results"]
        assert run_file.is_file(), f"{spec.name}: {run_file} is missing"
        assert check["results"] in _cited(text), f"{page.name} does not name results/latest/{check['results']}"
        data = json.loads(run_file.read_text(encoding="utf-8"))
        if "table" in check:
            assert check["table"] in tables, f"{page.name}: no table whose first column is {check['table']!r}"
            header, rows = tables[check["table"]]
            hits = [r for r in rows if r[0].startswith(check["row"])]
            assert len(hits) == 1, f"{page.name}: {len(hits)} rows of {check['table']!r} start with {check['row']!r}"
        for cell in check["values"]:
            expect = str(cell["expect"])
            value = _resolve(data, cell["path"])
            if not _agrees(float(value), expect, cell.get("scale", 1)):
                wrong.append(f"{check['results']} {cell['path']} = {value}, expected {expect}")
            if "table" in check:
                shown = hits[0][header.index(cell["column"])]
            else:  # prose: the number is shown within 500 characters after the check's `near` words
                assert check["near"] in text, f"{page.name}: {check['near']!r} is not on the page"
                at = text.index(check["near"])
                shown = text[at:at + 500]
            if not _shows(shown, expect):
                wrong.append(f"{page.name}: {check.get('row', 'the page')} / {cell.get('column', '')} shows "
                             f"{shown[:80]!r}, expected {expect}")
    assert wrong == []


def _tracked(folder: Path) -> list[Path]:
    """The files git tracks under `folder` (a fresh run there is ignored until it is moved); all files without git."""
    run = subprocess.run(["git", "ls-files", "-z", str(folder)], cwd=REPO, capture_output=True, text=True)
    if run.returncode != 0:
        return [p for p in folder.rglob("*") if p.is_file()]
    return [REPO / name for name in run.stdout.split("\0") if name]


@pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None, reason="matplotlib is not installed")
def test_plots_are_drawn_from_the_latest_runs(tmp_path):
    """docs/plots.py draws every plot from results/latest/ alone, and the pages show each one."""
    run = subprocess.run([sys.executable, str(DOCS / "plots.py"), "--out", str(tmp_path)], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    drawn = sorted(p.name for p in tmp_path.glob("*.png"))
    assert drawn and drawn == sorted(p.name for p in (DOCS / "images" / "plots").glob("*.png"))
    pages = "\n".join(p.read_text(encoding="utf-8") for p in (DOCS / "benchmarks").glob("*.md"))
    assert [n for n in drawn if f"(../images/plots/{n})" not in pages] == []


def test_results_hold_latest_expected_archive_only():
    files = _tracked(RESULTS)
    loose = sorted(p.name for p in files if p.parent == RESULTS and p.name != "README.md")
    assert loose == [], "a run file belongs in results/archive/ (and its copy in results/latest/ if the docs show it)"
    assert {p.relative_to(RESULTS).parts[0] for p in files if p.parent != RESULTS} <= {"latest", "expected", "archive", "e2e"}
    assert not [p for p in (RESULTS / "latest").iterdir() if re.search(r"\d{8}T\d{6}Z", p.name)]


def test_nothing_cites_a_run_file():
    citing = []
    code = ("peerlint", "analyzers", "latex", "llm", "retrieval", "index", "server", "benchmarks")
    for path in [REPO / "README.md", *DOCS.rglob("*.md"), *(p for top in code for p in (REPO / top).rglob("*.py"))]:
        text = path.read_text(encoding="utf-8")
        if RUN_FILE.search(text):
            citing.append(str(path.relative_to(REPO)))
    assert citing == [], "cite results/latest/NAME.json (or state the rule) instead of a timestamped run"
