"""A pytest-lsp client that behaves like an editor: applies workspace edits and keeps messages."""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path
from urllib.parse import unquote, urlparse

from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

CACHE = tempfile.mkdtemp(prefix="peerlint-lsp-cache-")


class ByteSource:
    """An async byte source over a fixed buffer (what pygls's stdin reader offers), for the frame reader."""

    def __init__(self, data: bytes):
        self.data = data

    async def readline(self) -> bytes:
        at = self.data.find(b"\n")
        line, self.data = (self.data[: at + 1], self.data[at + 1:]) if at >= 0 else (self.data, b"")
        return line

    async def readexactly(self, n: int) -> bytes:
        out, self.data = self.data[:n], self.data[n:]
        return out


def path_of(uri: str) -> Path:
    return Path(unquote(urlparse(uri).path))


def offset_of(text: str, pos: lsp.Position) -> int:
    """UTF-16 position -> str index (for applying edits the way an editor does)."""
    lines = text.splitlines(keepends=True)
    base = sum(len(l) for l in lines[: pos.line])
    line = lines[pos.line] if pos.line < len(lines) else ""
    units = 0
    for i, ch in enumerate(line):
        if units >= pos.character:
            return base + i
        units += 2 if ord(ch) > 0xFFFF else 1
    return base + len(line.rstrip("\r\n")) if pos.line < len(lines) else len(text)


def apply_text_edits(text: str, edits: list[lsp.TextEdit]) -> str:
    spans = sorted(((offset_of(text, e.range.start), offset_of(text, e.range.end), e.new_text) for e in edits), reverse=True)
    for a, b, new in spans:
        text = text[:a] + new + text[b:]
    return text


def make_client() -> LanguageClient:
    from pygls.protocol import default_converter
    from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

    client = LanguageClient(converter_factory=default_converter)
    client.applied_edits = []
    client.diagnostic_versions = {}
    client.published_versions = []  # (uri, version) of every publication, in order
    client.publications = []  # (uri, diagnostics) of every publication, in order

    def publish(ls: LanguageClient, params: lsp.PublishDiagnosticsParams):
        ls.diagnostics[params.uri] = params.diagnostics
        ls.diagnostic_versions[params.uri] = params.version
        ls.published_versions.append((params.uri, params.version))
        ls.publications.append((params.uri, params.diagnostics))

    register_lsp_features(client, {**DEFAULT_CLIENT_FEATURES, lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: publish})

    @client.feature(lsp.WORKSPACE_APPLY_EDIT)
    def apply_edit(ls: LanguageClient, params: lsp.ApplyWorkspaceEditParams):
        for change in params.edit.document_changes or []:
            if isinstance(change, lsp.CreateFile):
                p = path_of(change.uri)
                if not p.exists():
                    p.write_text("")
                continue
            p = path_of(change.text_document.uri)
            p.write_text(apply_text_edits(p.read_text(encoding="utf-8") if p.exists() else "", change.edits), encoding="utf-8")
        ls.applied_edits.append(params.edit)
        return lsp.ApplyWorkspaceEditResult(applied=True)

    return client


CONFIG = ClientServerConfig(
    server_command=[sys.executable, "-m", "peerlint", "serve"],
    client_factory=make_client,
    server_env={**os.environ, "PEERLINT_CACHE_DIR": CACHE, "HF_HUB_OFFLINE": "1"},
)


async def start(client: LanguageClient, root: Path, options: dict | None = None, code_lenses: bool = True) -> None:
    """Initialise as VS Code does (`code_lenses=False`: as a client that shows none, Helix for one)."""
    caps = client_capabilities("visual-studio-code")
    if not code_lenses:
        caps.text_document.code_lens = None
    await client.initialize_session(lsp.InitializeParams(
        capabilities=caps, root_uri=root.as_uri(), initialization_options=options or {},
        workspace_folders=[lsp.WorkspaceFolder(uri=root.as_uri(), name=root.name)]))


def open_file(client: LanguageClient, path: Path, text: str | None = None, version: int = 1) -> str:
    uri = path.as_uri()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
        uri=uri, language_id="latex", version=version, text=path.read_text(encoding="utf-8") if text is None else text)))
    return uri


async def diagnostics_for(client: LanguageClient, uri: str, timeout: float = 120.0, version: int | None = None):
    """Wait until diagnostics for `uri` (and `version`, when given) have been published."""
    async def wait():
        while True:
            await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
            if uri in client.diagnostics and (version is None or client.diagnostic_versions.get(uri) == version):
                return client.diagnostics[uri]
    if uri in client.diagnostics and version is None:
        return client.diagnostics[uri]
    return await asyncio.wait_for(wait(), timeout)


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n")
