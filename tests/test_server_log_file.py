"""The `logFile` setting is where the server's log goes (it was documented and ignored)."""

from __future__ import annotations

import asyncio

import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from peerlint import __version__
from lsp_support import CONFIG, diagnostics_for, open_file, start


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient, index_path, tmp_path):
    lsp_client.log_file = tmp_path / "logs" / "server.log"
    lsp_client.bad_log = tmp_path / "a-file"
    lsp_client.bad_log.write_text("")
    await start(lsp_client, tmp_path, {"indexPath": str(index_path), "logFile": str(lsp_client.log_file)})
    yield
    await lsp_client.shutdown_session()


async def test_the_log_goes_to_log_file_and_a_bad_one_is_reported_once(client: LanguageClient, tmp_path):
    draft = tmp_path / "draft.tex"
    draft.write_text("\\documentclass{article}\n\\begin{document}\nA paragraph about review rating prediction.\n"
                     "\\end{document}\n")
    await diagnostics_for(client, open_file(client, draft))
    assert f"INFO peerlint.server: peerlint {__version__} (pid " in client.log_file.read_text()
    bad = str(client.bad_log / "server.log")  # its folder is a file
    for _ in range(2):
        client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings={"logFile": bad}))
    await asyncio.sleep(1)
    await client.workspace_execute_command_async(lsp.ExecuteCommandParams("peerlint.status", []))
    about = [m.message for m in client.messages if "logFile" in m.message]
    assert len(about) == 1 and bad in about[0], client.messages
