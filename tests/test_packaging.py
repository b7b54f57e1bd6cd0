"""A plain (not editable) install ships every package and the data the code reads at run time."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = ("peerlint/analyzers/prompts/schnovel_zero_shot.txt", "peerlint/analyzers/drafts/data/drafts_heads.npz",
        "peerlint/index/data/proceedings.jsonl.xz", "peerlint/index/data/proceedings-vectors.npz",
        "peerlint/benchmarks/rinobench/data/rinobench_sample.json")


def test_wheel_holds_every_module_and_data_file(tmp_path):
    source = tmp_path / "source"  # a copy: setuptools leaves build/ and *.egg-info beside the sources
    source.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy2(REPO / name, source / name)
    for top in ("peerlint", "server", "analyzers", "index", "benchmarks"):
        shutil.copytree(REPO / top, source / top, ignore=shutil.ignore_patterns("__pycache__"))
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                            "-w", str(tmp_path), str(source)], capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr
    wheel = next(tmp_path.glob("peerlint-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {"peerlint/" + str(p.relative_to(REPO)) for top in ("server", "analyzers", "index", "benchmarks")
                for p in (REPO / top).rglob("*.py")} | {"peerlint/__init__.py", "peerlint/errors.py"}
    assert sorted(expected - names) == []
    assert sorted(set(DATA) - names) == []
    prompts = {p.name for p in (REPO / "analyzers" / "prompts").glob("*.txt")}
    assert {n.rsplit("/", 1)[1] for n in names if n.startswith("peerlint/analyzers/prompts/")} == prompts
