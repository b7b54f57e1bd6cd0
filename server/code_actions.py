"""Code actions as plain WorkspaceEdits, so they work in any editor through `workspace/applyEdit`.

Every edit is checked against the project's wall (`edit_inside`) before it is offered or applied:
a document cannot make peerlint write outside its project (a `.bib` named `../../.bashrc`).
"""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types as lsp

from ..latex.bibliography import Bibliography, bibtex_entry, make_key, parse_bib
from ..latex.parse import LineIndex
from ..latex.wall import ProjectWall
from ..types import Chunk
from ..index.papers import Paper

CITE_CODES = ("close-prior-work", "missing-related-work")
MAX_CITE_ACTIONS = 3


def _pos(p) -> lsp.Position:
    return lsp.Position(p.line, p.character)


def _insert(uri: str, version: int | None, at: lsp.Position, text: str) -> lsp.TextDocumentEdit:
    return lsp.TextDocumentEdit(
        text_document=lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
        edits=[lsp.TextEdit(range=lsp.Range(at, at), new_text=text)],
    )


def disable_actions(uri: str, version: int | None, diagnostic: lsp.Diagnostic) -> list[lsp.CodeAction]:
    code = str(diagnostic.code)
    line = diagnostic.range.start.line
    here = lsp.Position(line, 0)
    top = lsp.Position(0, 0)
    return [
        lsp.CodeAction(
            title=f"peerlint: disable {code} on this line", kind=lsp.CodeActionKind.QuickFix,
            diagnostics=[diagnostic],
            edit=lsp.WorkspaceEdit(document_changes=[_insert(uri, version, here, f"% peerlint: disable-next-line={code}\n")])),
        lsp.CodeAction(
            title=f"peerlint: disable {code} in this file", kind=lsp.CodeActionKind.QuickFix,
            diagnostics=[diagnostic],
            edit=lsp.WorkspaceEdit(document_changes=[_insert(uri, version, top, f"% peerlint: disable={code}\n")])),
    ]


def paper_from_hit(hit: dict) -> Paper:
    return Paper(id=hit["id"], title=hit["title"], abstract="", venue=hit.get("venue") or "", year=hit.get("year"),
                 authors=tuple(hit.get("authors") or ()), url=hit.get("url") or "")


def cite_edit(doc_uri: str, doc_version: int | None, doc_text: str, chunk_end: int, paper: Paper,
              bib_path: Path, bib_text: str | None) -> tuple[lsp.WorkspaceEdit, str]:
    """Insert `\\cite{key}` at the end of the paragraph and add the entry to the .bib.

    The key is reused when the .bib already has the paper in any version (DOI, arXiv id, title,
    first author + year with a close title), made unique otherwise; the .bib is created when missing. Returns the edit and the key.
    """
    entries = parse_bib(bib_text or "")
    key = Bibliography(entries).key_for(paper.title, paper.id, paper.authors, paper.year, paper.url)
    changes: list = []
    if key is None:
        key = make_key(paper, {e.key for e in entries})
        entry = bibtex_entry(paper, key)
        if bib_text is None:
            changes.append(lsp.CreateFile(uri=bib_path.as_uri(), options=lsp.CreateFileOptions(ignore_if_exists=True)))
            changes.append(_insert(bib_path.as_uri(), None, lsp.Position(0, 0), entry))
        else:
            end = LineIndex(bib_text).position(len(bib_text))
            sep = "" if not bib_text or bib_text.endswith("\n\n") else ("\n" if bib_text.endswith("\n") else "\n\n")
            changes.append(_insert(bib_path.as_uri(), None, _pos(end), sep + entry))
    at = chunk_end
    while at > 0 and doc_text[at - 1] in " \t\r\n":
        at -= 1
    if at > 0 and doc_text[at - 1] in ".;:":
        at -= 1
    position = LineIndex(doc_text).position(at)
    changes.insert(0, _insert(doc_uri, doc_version, _pos(position), f"~\\cite{{{key}}}"))
    return lsp.WorkspaceEdit(document_changes=changes), key


def edit_paths(edit: lsp.WorkspaceEdit) -> list[str]:
    """Every URI an edit creates, changes, renames or deletes."""
    uris = list((edit.changes or {}).keys())
    for change in edit.document_changes or []:
        if isinstance(change, lsp.TextDocumentEdit):
            uris.append(change.text_document.uri)
        elif isinstance(change, lsp.RenameFile):
            uris += [change.old_uri, change.new_uri]
        else:
            uris.append(change.uri)
    return uris


def edit_inside(edit: lsp.WorkspaceEdit | None, wall: ProjectWall | None) -> bool:
    """True when every file `edit` touches is a local file inside `wall` (no wall: no edit)."""
    if edit is None:
        return True
    if wall is None:
        return False
    from urllib.parse import unquote, urlparse

    uris = edit_paths(edit)
    return all(u.startswith("file:") and wall.allows(Path(unquote(urlparse(u).path))) for u in uris)


def cite_targets(diagnostic: lsp.Diagnostic) -> list[dict]:
    """The papers a diagnostic suggests citing, straight from its payload (never recomputed)."""
    if str(diagnostic.code) not in CITE_CODES:
        return []
    evidence = (diagnostic.data or {}).get("evidence") or {}
    return (evidence.get("uncited") or evidence.get("hits") or [])[:MAX_CITE_ACTIONS]


def cite_action(hit: dict, edit: lsp.WorkspaceEdit, diagnostic: lsp.Diagnostic) -> lsp.CodeAction:
    where = " ".join(str(x) for x in (hit.get("venue"), hit.get("year")) if x)
    return lsp.CodeAction(title=f'peerlint: cite "{hit["title"][:70]}"' + (f" ({where})" if where else ""),
                          kind=lsp.CodeActionKind.QuickFix, diagnostics=[diagnostic], edit=edit)
