"""The project root is a wall (issue 18, item 1): a document never makes peerlint read, embed,
show or write a file outside its project or the user's `extraRoots`.

The issue's own example runs through the parser functions, `peerlint chunks`/`check` and the
language server; a recording reader proves that nothing outside was even opened.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from peerlint.latex.project import parse_project
from peerlint.latex.roots import find_root, pick_root, read_file
from peerlint.latex.wall import SETTING, ProjectWall
from peerlint.analyzers.project_check import read_project
from peerlint.server.config import updated
from peerlint.settings import Settings

from lsp_support import CACHE, CONFIG, diagnostics_for, open_file, path_of, start

REPO = Path(__file__).resolve().parents[1]
ISSUE_EXAMPLE = "\\section{Introduction}\nWe study things.\n\\input{/etc/passwd}\n\\input{../../../../etc/hostname}\n"
PASSWD = "root:x:0:0"


def _project(tmp_path: Path) -> Path:
    """tmp/outside/secret.tex, tmp/outside.bib and tmp/a/b/c/d/a.tex that reaches for them every way it can."""
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.tex").write_text("The secret paragraph must never be read.\n")
    (tmp_path / "outside.bib").write_text("@article{leak, title={Leaked}, author={Out, Side}, year={2020}}\n")
    proj = tmp_path / "a" / "b" / "c" / "d"
    proj.mkdir(parents=True)
    (proj / "link.tex").symlink_to(tmp_path / "outside" / "secret.tex")
    (proj / "linked").symlink_to(tmp_path / "outside", target_is_directory=True)
    (proj / "refs.bib").symlink_to(tmp_path / "outside.bib")
    (proj / "inside.tex").write_text("An included paragraph inside the project.\n")
    (proj / "a.tex").write_text(ISSUE_EXAMPLE + "\\input{link}\n\\input{linked/secret}\n\\import{../../../../outside/}{secret}\n"
                                "\\input{inside}\n\\bibliography{refs}\n\\addbibresource{/etc/passwd}\n"
                                "\\includegraphics{/etc/passwd}\n")
    return proj / "a.tex"


def _recording_reader(seen: list[Path]):
    def read(path: Path) -> str:
        seen.append(path)
        return read_file(path)
    return read


def test_the_issue_example_reads_nothing_outside_the_project(tmp_path):
    main = _project(tmp_path)
    seen: list[Path] = []
    project = parse_project(main, read=_recording_reader(seen))
    wall = ProjectWall.around(main)
    assert [c.text for c in project.chunks] == ["Introduction", "We study things.", "An included paragraph inside the project."]
    assert all(wall.allows(p) for p in seen), seen
    assert all(PASSWD not in c.text and "secret" not in c.text for c in project.chunks)
    assert project.bib_files == [] and project.files == [main, main.parent / "inside.tex"]
    refusals = [w for w in project.warnings if SETTING in w]
    for named in ("\\input{/etc/passwd}", "\\input{../../../../etc/hostname}", "\\input{link}", "\\input{linked/secret}",
                  "\\import{../../../../outside/}{secret}", "\\bibliography{refs}", "\\addbibresource{/etc/passwd}"):
        assert sum(named + " " in w for w in refusals) == 1, (named, refusals)  # exactly one warning each
    assert len(refusals) == 7
    assert any(str(tmp_path / "outside" / "secret.tex") in w for w in refusals)  # the link is named by its target


def test_a_package_outside_is_not_read(tmp_path):
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "leak.sty").write_text("\\newcommand{\\leak}{LEAKED}\n")
    (tmp_path / "p").mkdir()
    main = tmp_path / "p" / "main.tex"
    main.write_text("\\documentclass{article}\n\\usepackage{../outside/leak}\n\\begin{document}\nWe \\leak{} here.\n\\end{document}\n")
    project = parse_project(main)
    assert project.packages == [] and "LEAKED" not in " ".join(c.text for c in project.chunks)
    assert sum("\\usepackage{../outside/leak}" in w and SETTING in w for w in project.warnings) == 1


def test_extra_roots_let_the_user_allow_a_folder(tmp_path):
    main = _project(tmp_path)
    wall = ProjectWall.around(main, extra_roots=[str(tmp_path / "outside")])
    project = parse_project(main, wall=wall)
    assert "The secret paragraph must never be read." in [c.text for c in project.chunks]
    assert not any("/etc" in str(p) for p in project.files)
    found = read_project(main, Settings(extra_roots=("../../../../outside",)))  # relative: from the project folder
    assert found.wall.roots[1] == (tmp_path / "outside").resolve()


def test_a_workspace_holding_the_root_is_the_wall(tmp_path):
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "common.tex").write_text("Shared prose of the workspace.\n")
    (tmp_path / "paper").mkdir()
    main = tmp_path / "paper" / "main.tex"
    main.write_text("\\documentclass{article}\n\\begin{document}\n\\input{../shared/common}\n\\end{document}\n")
    alone = parse_project(main)
    assert alone.chunks == [] and any(SETTING in w for w in alone.warnings)
    found = read_project(main, Settings(), workspace=tmp_path)
    assert [c.text for c in found.project.chunks] == ["Shared prose of the workspace."]


def test_a_root_named_outside_the_project_is_not_used(tmp_path):
    (tmp_path / "ch").mkdir()
    main = tmp_path / "main.tex"
    main.write_text("\\documentclass{article}\n\\begin{document}\n\\input{ch/intro}\n\\end{document}\n")
    intro = tmp_path / "ch" / "intro.tex"
    intro.write_text("% !TeX root = ../main.tex\nIntro text.\n")
    assert find_root(intro) == main  # a root above the file is its project: allowed
    hostile = tmp_path / "ch" / "hostile.tex"
    hostile.write_text("% !TeX root = /etc/passwd\nHostile text.\n")
    choice = pick_root(hostile)
    assert choice.root == hostile and SETTING in choice.note and "/etc/passwd" in choice.note
    sub = tmp_path / "ch" / "sub.tex"
    sub.write_text("\\documentclass[../../../../../../../etc/passwd]{subfiles}\n\\begin{document}\nSub text.\n\\end{document}\n")
    assert pick_root(sub).root == sub


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PEERLINT_CACHE_DIR": CACHE, "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "peerlint", *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=300)


def test_the_cli_reads_nothing_outside(tmp_path, index_path):
    main = _project(tmp_path)
    chunks = _cli("chunks", "a.tex", "--json", cwd=main.parent)
    assert chunks.returncode == 0, chunks.stderr
    rows = json.loads(chunks.stdout)
    assert {r["uri"] for r in rows} <= {main.as_uri(), (main.parent / "inside.tex").as_uri()}
    assert PASSWD not in chunks.stdout and "secret paragraph" not in chunks.stdout
    check = _cli("check", "a.tex", "--index", str(index_path), cwd=main.parent)
    assert check.returncode == 0, check.stderr
    assert "3 chunks checked" in check.stderr  # the issue saw "7 chunks checked"
    assert check.stderr.count("\\input{/etc/passwd} leads to /etc/passwd, outside the project") == 1
    assert PASSWD not in check.stdout + check.stderr


def test_the_cli_allows_extra_roots_from_a_settings_file(tmp_path):
    main = _project(tmp_path)
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"extraRoots": [str(tmp_path / "outside")]}))
    out = _cli("chunks", "a.tex", "--settings", str(settings), cwd=main.parent)
    assert "The secret paragraph must never be read." in out.stdout and PASSWD not in out.stdout


def test_settings_reject_a_bad_extra_roots():
    warned: list[str] = []
    assert updated(Settings(), {"extraRoots": "/"}, warned.append).extra_roots == ()
    assert warned and "extraRoots" in warned[0]
    assert updated(Settings(), {"peerlint": {"extraRoots": ["/data/shared"]}}, warned.append).extra_roots == ("/data/shared",)


# -- through the language server ----------------------------------------------------------------

PARAPHRASE = ("Predicting the rating of a textual review is a fast-growing application of natural language processing. "
              "Most existing approaches either rely on hand-crafted features or learn features with deep networks from flat "
              "text, ignoring the hierarchy in the data. We use a hierarchical bi-directional self-attention network for "
              "predicting and recommending paper review ratings, exploiting the hierarchical structure of paper reviews "
              "with sentence, intra-review and inter-review encoders at three levels.")


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient, index_path, tmp_path):
    project = _project(tmp_path).parent
    lsp_client.root = project
    await start(lsp_client, project, {"indexPath": str(index_path), "debounceMs": 50})
    yield
    await lsp_client.shutdown_session()


async def test_the_server_publishes_and_edits_nothing_outside(client: LanguageClient):
    proj = client.root
    main = proj / "a.tex"
    text = "\\documentclass{article}\n\\begin{document}\n\\section{Introduction}\n" + PARAPHRASE + "\n\n" + \
        main.read_text() + "\\end{document}\n"
    main.write_text(text)
    uri = open_file(client, main)
    diags = await diagnostics_for(client, uri)
    published = {u for u, _ in client.published_versions}
    assert all(ProjectWall.around(main).allows(path_of(u)) for u in published), published
    assert not any(PASSWD in d.message or "secret" in d.message for d in diags)
    for _ in range(100):  # the warnings follow the diagnostics
        shown = " ".join(m.message for m in client.messages)
        if SETTING in shown:
            break
        await asyncio.sleep(0.1)
    assert SETTING in shown and PASSWD not in shown
    hover = await client.text_document_hover_async(lsp.HoverParams(lsp.TextDocumentIdentifier(uri), lsp.Position(3, 5)))
    assert hover is None or PASSWD not in hover.contents.value
    # *Cite this paper*: refs.bib links out of the project, so the entry goes to a new references.bib inside it
    cite = [d for d in diags if d.code == "close-prior-work"]
    assert cite, "the paraphrase should be flagged"
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        lsp.TextDocumentIdentifier(uri), cite[0].range, lsp.CodeActionContext(diagnostics=cite)))
    edits = [a.edit for a in actions if getattr(a, "edit", None) is not None]
    assert edits
    for edit in edits:
        for change in edit.document_changes:
            target = change.uri if isinstance(change, lsp.CreateFile) else change.text_document.uri
            assert ProjectWall.around(main).allows(path_of(target)), target
    bib_edits = [e for e in edits if any(getattr(c, "uri", "").endswith("references.bib") for c in e.document_changes)]
    assert bib_edits
    # a request naming a file outside any project reads nothing from it
    status = await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command="peerlint.rankContributions", arguments=[{"uri": "file:///etc/passwd", "line": 0, "character": 0}]))
    assert status["ok"] is False and PASSWD not in json.dumps(status)
