"""A plain (not editable) install ships every package and the data the code reads at run time."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TOPS = ("server", "analyzers", "latex", "llm", "retrieval", "index", "benchmarks")  # setup.py's TOP_LEVEL
DATA = ("peerlint/analyzers/prompts/schnovel_zero_shot.txt", "peerlint/analyzers/drafts/data/drafts_heads.npz",
        "peerlint/index/data/proceedings.jsonl.xz", "peerlint/index/data/proceedings-vectors.npz",
        "peerlint/index/data/provenance.json", "peerlint/index/data/journals.jsonl.xz",
        "peerlint/index/data/journals-vectors.npz", "peerlint/index/data/journals-provenance.json",
        "peerlint/benchmarks/rinobench/data/rinobench_sample.json")


def test_wheel_holds_every_module_and_data_file(tmp_path):
    source = tmp_path / "source"  # a copy: setuptools leaves build/ and *.egg-info beside the sources
    source.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy2(REPO / name, source / name)
    for top in ("peerlint", *TOPS):
        shutil.copytree(REPO / top, source / top, ignore=shutil.ignore_patterns("__pycache__"))
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                            "-w", str(tmp_path), str(source)], capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr
    wheel = next(tmp_path.glob("peerlint-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {"peerlint/" + str(p.relative_to(REPO)) for top in TOPS
                for p in (REPO / top).rglob("*.py")} | {str(p.relative_to(REPO)) for p in (REPO / "peerlint").glob("*.py")}
    assert sorted(expected - names) == []
    assert sorted(set(DATA) - names) == []
    prompts = {p.name for p in (REPO / "analyzers" / "prompts").glob("*.txt")}
    assert {n.rsplit("/", 1)[1] for n in names if n.startswith("peerlint/analyzers/prompts/")} == prompts


def test_the_listed_folders_are_the_ones_setup_installs():
    import ast

    tree = ast.parse((REPO / "setup.py").read_text(encoding="utf-8"))
    top_level = next(ast.literal_eval(n.value) for n in ast.walk(tree) if isinstance(n, ast.Assign)
                     and any(getattr(t, "id", "") == "TOP_LEVEL" for t in n.targets))
    assert sorted(top_level) == sorted(TOPS)
