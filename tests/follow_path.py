"""Follow one document from didOpen to its first published diagnostic, call by call.

`python tests/follow_path.py examples/draft.tex INDEX` runs the real `PeerlintServer` in this process
with a cold judgment cache, opens the index first (as `initialized` does), opens the document with
`did_open` and records, with `sys.setprofile` and `threading.setprofile`, every call of a function
in the package's own files until the first `textDocument/publishDiagnostics`. Each function counts
at its first call, at its depth (the package's frames above it). The files of those calls, in
order, make a walk: a *stay* is a run of calls in one file; re-entries = stays - files.
docs/architecture.md ("Following the path") gives the numbers this prints.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import threading
from pathlib import Path

from lsprotocol import types as lsp
from pygls.workspace import Workspace

import peerlint.server.lsp as L
from peerlint.server.service import Service

REPO = Path(__file__).resolve().parents[1]
TOPS = ("server", "analyzers", "latex", "llm", "retrieval", "index", "peerlint")


def _own(code) -> str | None:
    try:
        rel = Path(code.co_filename).resolve().relative_to(REPO)
    except ValueError:
        return None
    return str(rel) if rel.parts[0] in TOPS else None


def follow(doc: Path, index: str) -> list[tuple[str, str, int]]:
    """(file, function, depth) of every call from didOpen to the first published diagnostic."""
    events: list[tuple[str, str, int]] = []
    done = threading.Event()

    def profile(frame, event, arg):
        if event == "call" and not done.is_set():
            own = _own(frame.f_code)
            if own:
                depth, back = 0, frame.f_back
                while back is not None:
                    depth += _own(back.f_code) is not None
                    back = back.f_back
                events.append((own, frame.f_code.co_name, depth))

    async def run() -> None:
        ls = L.server
        ls.protocol._workspace = Workspace(doc.parent.as_uri(), lsp.TextDocumentSyncKind.Incremental)
        ls.service = Service(cache_dir=Path(tempfile.mkdtemp()))  # cold: no cached judgments
        ls.apply_settings({"indexPath": index})
        ls.service.retriever().index.embed(["warm-up"])
        ls.text_document_publish_diagnostics = lambda params: done.set()
        item = lsp.TextDocumentItem(uri=doc.as_uri(), language_id="latex", version=1, text=doc.read_text())
        ls.workspace.put_text_document(item)
        sys.setprofile(profile)
        threading.setprofile(profile)
        L.did_open(ls, lsp.DidOpenTextDocumentParams(text_document=item))
        while not done.is_set():
            await asyncio.sleep(0.01)
        sys.setprofile(None)
        threading.setprofile(None)

    asyncio.run(run())
    return events


def walk(events, max_depth: int | None = None) -> list[str]:
    seen, files = set(), []
    for file, function, depth in events:
        if (max_depth is None or depth <= max_depth) and (file, function) not in seen:
            seen.add((file, function))
            if not files or files[-1] != file:
                files.append(file)
    return files


def main() -> None:
    events = follow(Path(sys.argv[1]).resolve(), sys.argv[2])
    for limit in (2, 3, None):
        stays = walk(events, limit)
        print(f"depth <= {limit if limit is not None else 'any'}: {len(stays)} stays in {len(set(stays))} files, "
              f"{len(stays) - len(set(stays))} re-entries")
        print("  " + " -> ".join(stays))


if __name__ == "__main__":
    main()
