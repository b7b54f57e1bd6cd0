"""The tree shows the data flow: no import cycles, lower layers never import higher ones,
and docs/architecture.md's layers name folders that exist.

Imports are read with `ast` (also those inside functions: a lazy import is still a dependency).
A module imports the package's modules at its top; the few imported inside a function are named in
`LAZY_IMPORTS`, each with why.
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


def function_level_imports() -> dict[str, set[str]]:
    """File (relative to the repository) -> the package modules it imports inside a function."""
    modules = _modules()
    found: dict[str, set[str]] = {}

    def visit(node: ast.AST, name: str, path: Path, inside: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if inside:
                targets = _targets(child, _package(name, path), modules)
                if targets:
                    found.setdefault(str(path.relative_to(REPO)), set()).update(targets)
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
# top. What remains is named here, file by file, with why; a new one fails, and so does an entry no
# longer needed (the list only shrinks). Where a module is lazy only because a third-party package
# it imports at its top is heavy, make that package lazy inside it instead, and move the import up.
COMMAND = ("a benchmark's machinery, loaded when it runs: `peerlint bench` (and `bench --help`) builds every "
           "benchmark's parser first, and these bring the index, the LaTeX front end or the analyzers (~1-2 s)")
OLLAMA = "llm/ollama_backend.py imports httpx and ollama at its top; lazy there, this import moves up"
BENCH_TOP = "imported at the top of bench.py modules, so `--help` would load the index and embedding modules"
LAZY_IMPORTS: dict[str, tuple[str, set[str]]] = {
    "analyzers/checker.py": (OLLAMA, {"llm.select"}),
    "benchmarks/coverage/bench.py": (COMMAND, {
        "index.build", "index.ingest.latex_sources", "index.ingest.load", "index.store", "latex.project"}),
    "benchmarks/drafts/bench.py": (COMMAND, {
        "benchmarks.drafts.context", "benchmarks.drafts.suites", "index.ingest.load"}),
    "benchmarks/embedders/bench.py": (COMMAND, {
        "benchmarks.embedders.adapter", "benchmarks.embedders.candidates", "benchmarks.embedders.full_corpus",
        "benchmarks.index.acm_recall", "index.ingest.load"}),
    "benchmarks/harness/corpus_index.py": (BENCH_TOP, {"index.build", "index.store"}),
    "benchmarks/index/bench.py": (COMMAND, {
        "benchmarks.index.acm_recall", "benchmarks.index.query_route", "benchmarks.index.scale", "index.build",
        "index.embedding.embedder", "index.ingest.load", "index.store"}),
    "benchmarks/index/synthetic.py": (BENCH_TOP, {"index.embedding.prebuilt"}),
    "benchmarks/ingest/bench.py": (COMMAND, {"index.ingest.load"}),
    "benchmarks/llm/bench.py": (COMMAND, {"analyzers.drafts.scoring", "latex.project"}),
    "benchmarks/lsp/bench.py": (COMMAND, {"benchmarks.lsp.session", "index.build", "latex.roots"}),
    "benchmarks/related/bench.py": (COMMAND, {
        "benchmarks.related.cite_recovery", "benchmarks.related.placeholder", "benchmarks.related.precision",
        "index.build", "index.ingest.load", "index.store", "latex.bibliography",
        "retrieval.related_work"}),
    "benchmarks/rinobench/bench.py": (COMMAND, {
        "benchmarks.rinobench.judge", "benchmarks.rinobench.metrics", "llm.select"}),
    "benchmarks/robustness/bench.py": (COMMAND, {
        "benchmarks.robustness.fuzz", "benchmarks.robustness.index_faults", "benchmarks.robustness.injection",
        "benchmarks.robustness.llm_faults", "benchmarks.robustness.load", "benchmarks.robustness.protocol",
        "benchmarks.robustness.sessions", "index.build"}),
    "benchmarks/schnovel/bench.py": (COMMAND, {"index.ingest.load", "llm.select"}),
    "benchmarks/tournament/bench.py": (COMMAND, {
        "analyzers.ideas.comparators", "analyzers.ideas.idea_file", "analyzers.ideas.nova_check",
        "analyzers.ideas.tournament", "index.ingest.load", "index.store", "llm.select"}),
}


def test_project_modules_are_imported_at_the_top():
    found = {f: {m.removeprefix("peerlint.") for m in mods} for f, mods in function_level_imports().items()}
    allowed = {f: mods for f, (_, mods) in LAZY_IMPORTS.items()}
    new = {f: sorted(mods - allowed.get(f, set())) for f, mods in found.items() if mods - allowed.get(f, set())}
    assert new == {}, "import these at the module's top, or name them in LAZY_IMPORTS with why"
    gone = {f: sorted(mods - found.get(f, set())) for f, mods in allowed.items() if mods - found.get(f, set())}
    assert gone == {}, "no longer imported inside a function: drop them from LAZY_IMPORTS"
    assert sum(len(mods) for mods in found.values()) <= 58


def test_the_lazy_import_finder_sees_an_import_inside_a_function():
    assert "peerlint.benchmarks.lsp.session" in function_level_imports()["benchmarks/lsp/bench.py"]
    assert "peerlint.server.lsp" not in function_level_imports().get("server/commands/serve.py", set())
