"""The real server over stdio (pytest-lsp), on the example draft, real templates and real abstracts."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from conftest import EXAMPLES, LATEX
from lsp_support import CACHE, CONFIG, diagnostics_for, line_of, open_file, start

# The COLING 2020 abstract that examples/draft.tex paraphrases (shipped corpus).
PARAPHRASED = "Hierarchical Bi-Directional Self-Attention Networks for Paper Review Rating Recommendation"
PARAPHRASE_START = "Predicting the rating of a textual review is a fast-growing application"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A private copy of the example project: code actions edit it."""
    dest = tmp_path / "paper"
    shutil.copytree(EXAMPLES, dest)
    return dest


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient, index_path, project):
    lsp_client.index_path = index_path
    lsp_client.project = project
    await start(lsp_client, project, {"indexPath": str(index_path), "debounceMs": 50})
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=CONFIG)
async def lensless(lsp_client: LanguageClient, index_path, project):
    """A client that shows inlay hints but no code lenses."""
    lsp_client.project = project
    await start(lsp_client, project, {"indexPath": str(index_path), "debounceMs": 50}, code_lenses=False)
    yield
    await lsp_client.shutdown_session()


async def status(client: LanguageClient) -> dict:
    return await answered(client, client.workspace_execute_command_async(lsp.ExecuteCommandParams("peerlint.status", [])))


def server_log_tail(chars: int) -> str:
    """The end of the test servers' shared log, for a failure message."""
    log = Path(CACHE) / "server.log"
    return log.read_text(errors="replace")[-chars:] if log.exists() else "(no server log)"


async def answered(client: LanguageClient, request, seconds: float = 60.0):
    """The answer to `request`, or a failure after `seconds` that shows what every thread of the server
    was doing then (SIGUSR1 makes it write them to its log) and whether an answer came later (a slow
    server) or never (a lost request), not a silent wait for pytest's timeout."""
    task = asyncio.ensure_future(request)
    try:
        return await asyncio.wait_for(asyncio.shield(task), seconds)
    except asyncio.TimeoutError:
        os.kill(client._server.pid, signal.SIGUSR1)
        loop = asyncio.get_running_loop()
        start = loop.time()
        try:
            await asyncio.wait_for(task, seconds)
            later = f"it answered {seconds + loop.time() - start:.0f} s after the request"
        except asyncio.TimeoutError:
            later = f"no answer after {2 * seconds:.0f} s either"
        tail = server_log_tail(6000)
        pytest.fail(f"the server did not answer within {seconds:.0f} s ({later}); its threads then:\n{tail}")


def by_code(diags, code):
    return [d for d in diags if d.code == code]


async def test_example_draft_diagnostics_have_exact_ranges(client: LanguageClient):
    draft = client.project / "draft.tex"
    text = draft.read_text()
    uri = open_file(client, draft)
    diags = await diagnostics_for(client, uri)
    close = by_code(diags, "close-prior-work")
    assert close, [d.message for d in diags]
    d = close[0]
    assert PARAPHRASED in d.message and d.source == "peerlint"
    assert d.range.start == lsp.Position(line_of(text, PARAPHRASE_START), 0)
    assert d.data["evidence"]["hits"][0]["title"] == PARAPHRASED
    assert d.data["evidence"]["hits"][0]["similarity"] >= 0.8
    # every diagnostic lies inside the document and carries its payload
    n_lines = text.count("\n") + 1
    for diag in diags:
        assert 0 <= diag.range.start.line <= diag.range.end.line < n_lines
        assert diag.data["code"] == diag.code and diag.code_description is not None


async def test_hover_lists_retrieved_papers(client: LanguageClient):
    draft = client.project / "draft.tex"
    text = draft.read_text()
    uri = open_file(client, draft)
    await diagnostics_for(client, uri)
    line = line_of(text, PARAPHRASE_START) + 1
    hover = await client.text_document_hover_async(lsp.HoverParams(lsp.TextDocumentIdentifier(uri), lsp.Position(line, 5)))
    assert hover is not None
    assert "close-prior-work" in hover.contents.value and PARAPHRASED in hover.contents.value
    assert "| sim | venue | year | title |" in hover.contents.value


async def test_the_editor_and_peerlint_check_find_the_same(client: LanguageClient):
    """Same file, index and settings: the same findings on the same lines (the CLI once cut paragraphs
    by an estimated token count and the server by the model's tokenizer, and they disagreed)."""
    from peerlint.analyzers.engine import Engine
    from peerlint.analyzers.project_check import check_file
    from peerlint.retrieval.retriever import Retriever
    from peerlint.index.store import open_index
    from peerlint.settings import Settings

    draft = client.project / "draft.tex"
    uri = open_file(client, draft)
    diags = await diagnostics_for(client, uri)
    engine = Engine(Settings(), retriever=Retriever(open_index(client.index_path)))
    cli = check_file(draft, engine)
    assert sorted((d.code, d.range.start.line, d.message) for d in diags) == \
        sorted((j.code, (j.range or j.chunk.range).start.line, j.message) for j in cli.judgments if j.chunk.uri == uri)


async def test_code_lenses_summarise_each_section(client: LanguageClient):
    """Quality and venue style on by default, as one lens a section rather than a diagnostic a paragraph."""
    draft = client.project / "draft.tex"
    text = draft.read_text()
    uri = open_file(client, draft)
    await diagnostics_for(client, uri)
    lenses = await client.text_document_code_lens_async(lsp.CodeLensParams(lsp.TextDocumentIdentifier(uri)))
    sections = [lens.data["section"] for lens in lenses]
    assert sections[:4] == ["Abstract", "Introduction", "Related Work", "Method"], sections
    intro = lenses[1]
    assert intro.range.start.line == line_of(text, "Writing a research paper is a long")  # its first paragraph
    assert intro.command.title.startswith("peerlint: Introduction: quality ") and "reads most like" in intro.command.title
    assert 1.0 <= intro.data["quality"] <= 10.0 and intro.data["kind"] == "summary" and intro.data["reads_like"]
    assert all(lens.data["uri"] == uri for lens in lenses)  # the appendix's sections are lenses of its own file


async def test_one_word_edit_reanalyses_one_chunk(client: LanguageClient):
    draft = client.project / "draft.tex"
    text = draft.read_text()
    uri = open_file(client, draft)
    await diagnostics_for(client, uri, version=1)
    before = (await status(client))["analyzed"].get("prior-work", 0)
    line = line_of(text, PARAPHRASE_START)
    col = len("Predicting the rating of a ")
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(uri=uri, version=2),
        [lsp.TextDocumentContentChangePartial(range=lsp.Range(lsp.Position(line, col), lsp.Position(line, col + len("textual"))),
                                              text="written")]))
    diags = await diagnostics_for(client, uri, version=2)
    after = (await status(client))["analyzed"]["prior-work"]
    assert after - before == 1
    assert by_code(diags, "close-prior-work")  # still a paraphrase after one word


async def test_fast_typing_is_debounced(client: LanguageClient):
    draft = client.project / "draft.tex"
    text = draft.read_text()
    uri = open_file(client, draft)
    await diagnostics_for(client, uri, version=1)
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings={"debounceMs": 1000}))
    before = (await status(client))["analyzed"].get("prior-work", 0)
    line = line_of(text, "Mean reviewer ratings are noisy targets")  # a short paragraph: one chunk
    for v in range(2, 32):  # 30 keystrokes in one paragraph, sent well inside the 1 s debounce
        client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(uri=uri, version=v),
            [lsp.TextDocumentContentChangePartial(range=lsp.Range(lsp.Position(line, 0), lsp.Position(line, 0)), text="x")]))
    await diagnostics_for(client, uri, version=31)
    st = await status(client)
    assert st["analyzed"].get("prior-work", 0) - before == 1  # only the final text of that paragraph
    assert 1 not in client.diagnostic_versions.values() or client.diagnostic_versions[uri] == 31


async def test_disable_code_action_silences_the_line(client: LanguageClient):
    draft = client.project / "draft.tex"
    uri = open_file(client, draft)
    diags = await diagnostics_for(client, uri)
    target = by_code(diags, "close-prior-work")[0]
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        lsp.TextDocumentIdentifier(uri), target.range, lsp.CodeActionContext(diagnostics=[target])))
    titles = [a.title for a in actions]
    assert "peerlint: disable close-prior-work on this line" in titles
    action = next(a for a in actions if a.title == "peerlint: disable close-prior-work on this line")
    edit = action.edit.document_changes[0]
    assert edit.edits[0].new_text == "% peerlint: disable-next-line=close-prior-work\n"
    assert edit.edits[0].range.start == lsp.Position(target.range.start.line, 0)
    from lsp_support import apply_text_edits

    new_text = apply_text_edits(draft.read_text(), edit.edits)
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(uri=uri, version=2), [lsp.TextDocumentContentChangeWholeDocument(text=new_text)]))
    diags = await diagnostics_for(client, uri, version=2)
    assert not by_code(diags, "close-prior-work")


async def test_cite_action_inserts_cite_and_bib_entry(client: LanguageClient):
    draft = client.project / "draft.tex"
    bib = client.project / "refs.bib"
    bib_before = bib.read_text()
    uri = open_file(client, draft)
    diags = await diagnostics_for(client, uri)
    target = by_code(diags, "close-prior-work")[0]
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        lsp.TextDocumentIdentifier(uri), target.range, lsp.CodeActionContext(diagnostics=[target])))
    cite = next(a for a in actions if a.title.startswith("peerlint: cite") and PARAPHRASED[:40] in a.title)
    changes = cite.edit.document_changes
    assert [c.text_document.uri for c in changes] == [uri, bib.as_uri()]
    # the same edit through the command, as editors without code-action edits use it
    where = {"uri": uri, "line": target.range.start.line, "character": target.range.start.character,
             "paper": target.data["evidence"]["hits"][0]}
    result = await client.workspace_execute_command_async(lsp.ExecuteCommandParams("peerlint.cite", [where]))
    assert result["applied"] is True
    key = result["key"]
    assert changes[0].edits[0].new_text == f"~\\cite{{{key}}}"
    assert f"~\\cite{{{key}}}." in draft.read_text()
    bib_after = bib.read_text()
    assert bib_after.startswith(bib_before) and bib_after.count(PARAPHRASED) == 1
    assert f"@inproceedings{{{key}," in bib_after and "year = {2020}" in bib_after
    # once the .bib holds the paper, citing again reuses its key and adds no second entry
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(uri=uri, version=2),
        [lsp.TextDocumentContentChangeWholeDocument(text=draft.read_text())]))
    await diagnostics_for(client, uri, version=2)
    again = await client.workspace_execute_command_async(lsp.ExecuteCommandParams("peerlint.cite", [where]))
    assert again["key"] == key and bib.read_text().count(PARAPHRASED) == 1


async def test_configuration_changes_take_effect_and_bad_values_are_rejected(client: LanguageClient):
    uri = open_file(client, client.project / "draft.tex")
    assert by_code(await diagnostics_for(client, uri), "close-prior-work")
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(
        settings={"peerlint": {"severity": {"close-prior-work": "off"}, "debounceMs": "fast", "noSuchKey": 1}}))
    # the re-published diagnostics may arrive before any wait for them could start: poll what was published
    for _ in range(600):
        if not by_code(client.diagnostics[uri], "close-prior-work"):
            break
        await asyncio.sleep(0.2)
    assert not by_code(client.diagnostics[uri], "close-prior-work")
    messages = " ".join(m.message for m in client.messages)
    assert "debounceMs" in messages and "noSuchKey" in messages


async def test_multi_file_project_reports_on_the_included_file(client: LanguageClient):
    appendix = client.project / "sections" / "appendix.tex"
    para = ("Predicting the rating of a textual review is a fast-growing application of natural language processing. "
            "Most existing approaches either rely on hand-crafted features or learn features with deep networks from "
            "flat text, ignoring the hierarchy in the data. We use a hierarchical bi-directional self-attention network "
            "for predicting and recommending paper review ratings, exploiting the hierarchical structure of reviews "
            "with sentence, intra-review and inter-review encoders.\n")
    appendix.write_text(appendix.read_text() + "\n" + para)
    uri = open_file(client, appendix)
    diags = await diagnostics_for(client, uri)
    close = by_code(diags, "close-prior-work")
    assert close and close[0].range.start.line == appendix.read_text().count("\n") - 1


async def test_the_opened_file_is_published_before_the_rest_of_its_project(client: LanguageClient):
    """Opening sections/appendix.tex (9 of the project's 50 chunks) publishes its findings first, from
    its own chunks alone; the whole project's run after it finds the same there and adds draft.tex."""
    appendix = client.project / "sections" / "appendix.tex"
    uri = open_file(client, appendix)
    root_uri = (client.project / "draft.tex").as_uri()
    await diagnostics_for(client, uri)
    while uri in (await status(client))["analysing"]:
        await asyncio.sleep(0.05)
    uris = [u for u, _ in client.publications]
    assert uris[0] == uri and uris.index(root_uri) > 0 and uris.count(uri) == 2
    early, full = [sorted((d.code, d.range.start.line, d.message) for d in diags)
                   for u, diags in client.publications if u == uri]
    assert early == full
    assert client.diagnostics[root_uri]  # the rest of the project: draft.tex has findings of its own


async def test_a_long_file_has_its_first_screen_judged_first(client: LanguageClient):
    """A long single-file draft (70 indexed abstracts as its paragraphs, each close to its paper): the
    first publication holds only findings of its first screen; `peerlint.status` lists the file as
    analysing until the whole is published, and the whole has the same findings on the first screen."""
    from peerlint.latex.parse import parse_document
    from peerlint.server.service import LONG_FILE, first_screen

    from conftest import sample_papers

    path = client.project / "long.tex"
    # abstracts cut to 60 words: one chunk each, however the server counts tokens
    body = "\n\n".join(" ".join(p.abstract.split()[:60]) for p in sample_papers()[::20][:70])
    path.write_text(f"\\documentclass{{article}}\n\\begin{{document}}\n{body}\n\\end{{document}}\n")
    chunks = parse_document(path.read_text(), path.as_uri())
    assert len(chunks) > LONG_FILE
    screen = first_screen(chunks)
    assert 1 < len(screen) < len(chunks) // 4
    uri = open_file(client, path)
    await diagnostics_for(client, uri)
    while uri in (await status(client))["analysing"]:
        await asyncio.sleep(0.05)
    first, whole = [diags for u, diags in client.publications if u == uri]
    screen_end = screen[-1].range.end.line
    assert all(d.range.start.line <= screen_end for d in first)
    assert any(d.range.start.line > screen_end for d in whole)
    key = lambda diags: sorted((d.code, d.range.start.line, d.message) for d in diags if d.range.start.line <= screen_end)
    assert key(first) == key(whole)
    assert uri not in (await status(client))["analysing"]


async def test_templates_open_without_errors(client: LanguageClient):
    for tex in [LATEX / "acl-org" / "acl_latex.tex", *sorted((LATEX / "ICLR").rglob("*.tex"))[:1]]:
        uri = open_file(client, tex)
        diags = await diagnostics_for(client, uri)
        assert all(d.source == "peerlint" for d in diags)
    assert not [m for m in client.messages if m.type == lsp.MessageType.Error]


@pytest_lsp.fixture(config=CONFIG)
async def client_without_index(lsp_client: LanguageClient, tmp_path):
    await start(lsp_client, tmp_path, {"indexPath": str(tmp_path / "nothing-here")})
    yield
    await lsp_client.shutdown_session()


async def test_missing_index_gives_one_message_and_keeps_running(client_without_index: LanguageClient, tmp_path):
    client = client_without_index
    tex = tmp_path / "a.tex"
    tex.write_text("\\documentclass{article}\\begin{document}Some words about neural networks and text.\\end{document}\n")
    uri = open_file(client, tex)
    assert list(await diagnostics_for(client, uri)) == []
    open_file(client, tex.with_name("b.tex"), text="\\documentclass{article}\\begin{document}More.\\end{document}")
    await diagnostics_for(client, tex.with_name("b.tex").as_uri())
    about_index = [m for m in client.messages if "peerlint index build" in m.message]
    assert len(about_index) == 1
    st = await client.workspace_execute_command_async(lsp.ExecuteCommandParams("peerlint.status", []))
    assert st["index"]["ok"] is False and "peerlint index build" in st["index"]["error"]


async def test_every_edited_paragraph_gets_its_revision_verdict_as_a_code_lens(client: LanguageClient):
    """With `revisions` on, outside git: the text at open is the previous version, and an edited
    paragraph gets a lens with the revisions model's verdict (the real embedded LM) once the background
    tier has judged it."""
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(
        settings={"analyzers": ["prior-work", "revisions"]}))
    await status(client)  # the configuration is applied before the file opens
    draft = client.project / "draft.tex"
    text = draft.read_text()
    uri = open_file(client, draft)
    await diagnostics_for(client, uri, version=1)
    new = text.replace("We argue that retrieval is the natural basis for such a tool.",
                       "We argue that retrieval is a natural basis for such a tool, because reviewers compare too.")
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(uri=uri, version=2), [lsp.TextDocumentContentChangeWholeDocument(text=new)]))
    lenses: list = []
    for _ in range(240):
        found = await answered(client, client.text_document_code_lens_async(lsp.CodeLensParams(lsp.TextDocumentIdentifier(uri))))
        lenses = [lens for lens in found if lens.data["kind"] == "revision"]
        if lenses:
            break
        await asyncio.sleep(0.5)
    if not lenses:
        pytest.fail(f"no revision lens within 120 s; the server log then:\n{server_log_tail(4000)}")
    assert len(lenses) == 1, lenses
    lens = lenses[0]
    assert lens.command.title.startswith("peerlint: revision reads ") and "than the text at open (p = " in lens.command.title
    assert lens.data["verdict"] in ("better", "worse") and 0.5 <= lens.data["probability"] <= 1
    assert lens.range.start.line <= line_of(new, "We argue that retrieval is a natural basis")


def _inlay_hints(client: LanguageClient, uri: str, lines: int):
    return client.text_document_inlay_hint_async(lsp.InlayHintParams(
        lsp.TextDocumentIdentifier(uri), lsp.Range(lsp.Position(0, 0), lsp.Position(lines, 0))))


async def test_a_client_without_code_lenses_gets_the_summaries_as_inlay_hints(lensless: LanguageClient):
    draft = lensless.project / "draft.tex"
    text = draft.read_text()
    uri = open_file(lensless, draft)
    await diagnostics_for(lensless, uri)
    hints = await _inlay_hints(lensless, uri, text.count("\n") + 1)
    line = line_of(text, "Writing a research paper is a long")
    intro = next(h for h in hints if h.data["section"] == "Introduction")
    assert intro.position == lsp.Position(line, len(text.splitlines()[line]))  # at the end of the first paragraph line
    assert intro.label.startswith("peerlint: Introduction: quality ") and intro.padding_left
    assert [h.data["section"] for h in hints][:4] == ["Abstract", "Introduction", "Related Work", "Method"]
    assert list(await _inlay_hints(lensless, uri, line)) == [h for h in hints if h.position.line <= line]  # the range only


async def test_a_client_showing_code_lenses_gets_no_duplicate_inlay_hints(client: LanguageClient):
    draft = client.project / "draft.tex"
    uri = open_file(client, draft)
    await diagnostics_for(client, uri)
    assert not await _inlay_hints(client, uri, 300)


async def test_sigusr1_writes_every_thread_of_the_server_to_its_log(client: LanguageClient):
    """What a server that stopped answering is doing: `kill -USR1` appends its threads' stacks to the log."""
    await status(client)
    log = Path(CACHE) / "server.log"
    before = log.stat().st_size if log.exists() else 0
    os.kill(client._server.pid, signal.SIGUSR1)
    for _ in range(50):
        await asyncio.sleep(0.1)
        written = log.read_text(errors="replace")[before:] if log.exists() else ""
        if "most recent call first" in written and "server/lsp.py" in written:
            break  # the whole dump is in (it is written in pieces: reading too early sees half)
    assert "most recent call first" in written and "server/lsp.py" in written
    assert (await status(client)) is not None  # and it goes on answering
