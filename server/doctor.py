"""`peerlint doctor`: every component, present or not, its version and path, the exact fix, and
where prompts would go (the LLM host, and whether it is this machine)."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import platform
from dataclasses import asdict, dataclass
from pathlib import Path
from ..index.embedding.embedder import EmbeddingError, model_dir
from ..index.embedding.prebuilt import vectors_for
from ..index.ingest.load import default_corpus_paths
from ..index.store import IndexError_, open_index
from ..llm import models
from ..llm.select import describe_backends, prompt_destination


@dataclass(frozen=True)
class Component:
    name: str
    ok: bool
    version: str | None
    detail: str  # what was found, or the fix
    optional: bool = False  # absent is fine (Ollama, packaged models other than the default): `--`, not FAIL


def _dist(name: str, module: str, fix: str) -> Component:
    try:
        version = importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        version = None
    ok = version is not None and importlib.util.find_spec(module) is not None
    return Component(name, ok, version, "installed" if ok else fix)


def components(index_path: Path) -> list[Component]:
    out = [Component("python", True, platform.python_version(), platform.platform())]
    out.append(_dist("torch", "torch", "pip install torch==2.13.0 (the CPU build; a bare `torch` pulls CUDA)"))
    out.append(_dist("sentence-transformers", "sentence_transformers", "pip install sentence-transformers"))

    try:
        out.append(Component("embedding model", True, "all-MiniLM-L6-v2", str(model_dir())))
    except EmbeddingError as exc:
        out.append(Component("embedding model", False, None, str(exc)))
    for dist, module, fix in (("usearch", "usearch", "pip install usearch"),
                              ("pygls", "pygls", "pip install 'pygls>=2,<3'"),
                              ("pylatexenc", "pylatexenc", "pip install pylatexenc"),
                              ("ollama", "ollama", "pip install ollama")):
        out.append(_dist(dist, module, fix))

    for b in describe_backends():
        out.append(Component(f"llm: {b.name}", b.available, b.version, b.detail, optional=b.name == "ollama"))
    out.extend(model_components())
    out.extend(corpus_components())

    try:
        stats = open_index(index_path, read_ahead=False).stats()
        out.append(Component("index", True, stats["model"],
                             f"{stats['path']}: {stats['papers']:,} papers, {stats['chunks']:,} chunks, "
                             f"{stats['bytes_on_disk'] / 1e6:.1f} MB, built {stats['built_at']}"))
    except IndexError_ as exc:
        out.append(Component("index", False, None, str(exc)))
    return out


def corpus_components() -> list[Component]:
    """One line per shipped corpus file (the conference corpus, the journals supplement): its papers, as its
    provenance file counts them, its size and its vectors' (without them a build embeds its chunks)."""
    out = []
    for path in default_corpus_paths():
        stem = path.name.removesuffix(".jsonl.xz")
        provenance = path.with_name("provenance.json" if stem == "proceedings" else f"{stem}-provenance.json")
        vectors = vectors_for(path)
        try:
            papers = f"{int(json.loads(provenance.read_text(encoding='utf-8'))['total']):,} papers, "
        except (OSError, ValueError, KeyError, TypeError):
            papers = ""
        if vectors.is_file():
            out.append(Component(f"corpus: {stem}", True, None, f"{path}: {papers}{path.stat().st_size / 1e6:.1f} MB, "
                                 f"vectors {vectors.stat().st_size / 1e6:.1f} MB"))
        else:
            out.append(Component(f"corpus: {stem}", False, None, f"{path}: {papers}no {vectors.name} beside it, so "
                                 "`peerlint index build` embeds its chunks (minutes): reinstall peerlint"))
    return out


def model_components() -> list[Component]:
    """One line per packaged LLM: its packages, size, hash, licence, and installed or the command that installs it."""

    out = []
    for name in models.MODELS:
        state = models.state(name)
        out.append(Component(f"model: {name}", state.installed, state.model.version, state.describe(),
                             optional=not state.model.default))
    return out


def run_doctor(index_path: Path, as_json: bool = False, backend: str = "auto", model: str | None = None,
               host: str | None = None) -> int:
    """`backend`, `model`, `host`: the user's settings, so the destination shown is the one prompts take."""

    parts = components(index_path)
    dest = prompt_destination(backend, model, host)
    if as_json:
        print(json.dumps({"components": [asdict(c) for c in parts], "backend": dest.backend,
                          "prompts": {**asdict(dest), "configured": backend, "detail": dest.describe()},
                          "ok": all(c.ok for c in parts if not c.optional)}))
    else:
        for c in parts:
            mark = "ok  " if c.ok else ("--  " if c.optional else "FAIL")
            print(f"[{mark}] {c.name:<26} {c.version or '':<14} {c.detail}")
        print(f"backend in use ({backend}): {dest.backend}")
        print(f"prompts go to: {dest.describe()}")
    needed = [c for c in parts if not c.ok and not c.optional]
    return 1 if needed else 0
