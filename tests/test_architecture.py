"""The tree shows the data flow: no import cycles, lower layers never import higher ones,
and docs/architecture.md's layers name folders that exist.

Imports are read with `ast` (also those inside functions: a lazy import is still a dependency).
A module imports the package's modules at its top, never inside a function.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FOLDERS = {"peerlint": "peerlint", "server": "peerlint.server", "analyzers": "peerlint.analyzers",
           "latex": "peerlint.latex", "llm": "peerlint.llm", "retrieval": "peerlint.retrieval",
           "index": "peerlint.index", "benchmarks": "peerlint.benchmarks"}
# the layers, lowest first (docs/architecture.md): a module imports its own layer and lower ones only;
# the folders of one layer are peers and do not import each other. `peerlint/` itself is the bottom.
LAYERS = (("peerlint",), ("index",), ("latex", "llm", "retrieval"), ("analyzers",), ("server", "benchmarks"))
TOPS = {top: rank for rank, layer in enumerate(LAYERS) for top in layer}
PEERS_MAY_IMPORT = {("server", "benchmarks"), ("benchmarks", "server")}  # `peerlint bench`; benches drive the server


def _modules() -> dict[str, Path]:
    found = {}
    for folder, package in FOLDERS.items():
        for path in (REPO / folder).rglob("*.py"):
            parts = path.relative_to(REPO / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((package, *parts))] = path
    return found


def _targets(node: ast.AST, package: str, modules: dict[str, Path]) -> set[str]:
    """The package modules an import statement names (a `from p import m` of a sub-module counts as m)."""
    if isinstance(node, ast.Import):
        return {a.name for a in node.names if a.name in modules}
    if not isinstance(node, ast.ImportFrom):
        return set()
    if node.level:
        base = package.split(".")[: len(package.split(".")) - node.level + 1]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    subs = {f"{target}.{a.name}" for a in node.names} & modules.keys()
    if len(subs) < len(node.names) and target in modules:
        subs.add(target)
    return subs


def _package(name: str, path: Path) -> str:
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def import_graph() -> dict[str, set[str]]:
    """module -> the package modules it imports (a `from p import m` of a sub-module counts as m)."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            deps |= _targets(node, _package(name, path), modules)
        graph[name] = deps - {name}
    return graph


def function_level_imports(modules: dict[str, Path] | None = None) -> dict[str, set[str]]:
    """File (relative to the repository) -> the package modules it imports inside a function."""
    modules = modules or _modules()
    found: dict[str, set[str]] = {}

    def visit(node: ast.AST, name: str, path: Path, inside: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if inside:
                targets = _targets(child, _package(name, path), modules)
                if targets:
                    where = str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)
                    found.setdefault(where, set()).update(targets)
            visit(child, name, path, inside or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)))

    for name, path in modules.items():
        visit(ast.parse(path.read_text(encoding="utf-8")), name, path, False)
    return found


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_graph_sees_real_imports():
    graph = import_graph()
    assert "peerlint.latex.parse" in graph["peerlint.latex.project"]
    assert "peerlint.latex.tables" in graph["peerlint.latex.parse"]  # `from . import tables as T`
    assert "peerlint.server.commands" in graph["peerlint.server.cli"]
    assert "peerlint.server.commands.common" in graph["peerlint.server.commands.search"]


def test_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycles():
    assert _cycles(import_graph()) == []


def folder_of(module: str) -> str:
    """The top-level folder a module lives in ("peerlint" for the package root's own modules)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in TOPS else "peerlint"


def layer_violations(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    bad = []
    for module, deps in graph.items():
        if module == "peerlint.__main__":  # `python -m peerlint` starts the CLI: the one way down from the top
            continue
        mine = folder_of(module)
        for dep in deps:
            theirs = folder_of(dep)
            if TOPS[theirs] > TOPS[mine] or (TOPS[theirs] == TOPS[mine] and theirs != mine
                                              and (mine, theirs) not in PEERS_MAY_IMPORT):
                bad.append((module, dep))
    return sorted(bad)


def test_layer_rule_catches_an_upward_import():
    assert layer_violations({"peerlint.types": {"peerlint.latex.parse"}}) == [("peerlint.types", "peerlint.latex.parse")]
    assert layer_violations({"peerlint.latex.parse": {"peerlint.llm.base"}}) != []  # peers stay apart
    assert layer_violations({"peerlint.analyzers.engine": {"peerlint.latex.parse", "peerlint.types"}}) == []


def test_lower_layers_never_import_higher_ones():
    assert layer_violations(import_graph()) == []


def test_every_module_imports_on_its_own():
    """Any module imported first (by a plugin, a tool) loads: no hidden order dependency."""
    import importlib
    import subprocess
    import sys

    names = sorted(m for m in _modules() if not m.endswith("__main__"))
    code = ("import importlib, sys\nfailed = []\nfor n in sys.argv[1:]:\n"
            "    for m in [k for k in sys.modules if k.startswith('peerlint')]:\n        del sys.modules[m]\n"
            "    try:\n        importlib.import_module(n)\n    except Exception as e:\n"
            "        failed.append(f'{n}: {e!r}')\nprint('\\n'.join(failed))\nsys.exit(1 if failed else 0)\n")
    run = subprocess.run([sys.executable, "-c", code, *names], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert importlib.import_module("peerlint.latex.project")


def test_architecture_page_names_real_folders():
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## The layers", 1)[1].split("\n## ", 1)[0]
    folders = set(re.findall(r"`((?:server|analyzers|latex|llm|retrieval|index|benchmarks|clients|tests|peerlint)(?:/[\w.-]+)*/)`", section))
    assert len(folders) >= 15, folders
    missing = sorted(f for f in folders if not (REPO / f).is_dir())
    assert missing == []
    packages = {str(p.parent.relative_to(REPO)) + "/" for top in set(FOLDERS) - {"peerlint"}
                for p in (REPO / top).rglob("__init__.py")}
    assert sorted(packages - folders) == [], "every package folder has its line in docs/architecture.md"


# -- imports inside functions ----------------------------------------------------------------
# A project module imported inside a function hides a dependency from the reader of the module's
# top, so there are none. Where a module would be lazy only because a third-party package it imports
# is heavy (torch, llama_cpp, onnxruntime, ray, the Ollama client), that package is imported inside
# the module that uses it; the CLI imports only the module of the command being run
# (`server/commands/__init__.py`), so a command's module imports its machinery at its top.
def test_project_modules_are_imported_at_the_top():
    assert function_level_imports() == {}, "import these project modules at the module's top"


def test_the_lazy_import_finder_sees_an_import_inside_a_function(tmp_path):
    lazy = tmp_path / "lazy.py"
    lazy.write_text("from .types import Chunk\n\n\ndef f():\n    from .index.store import open_index\n    return open_index\n")
    found = function_level_imports({**_modules(), "peerlint.lazy": lazy})
    assert found == {str(lazy): {"peerlint.index.store"}}
