"""Pick the LLM backend: Ollama when it is up and holds the model, else the embedded model.

`make_llm` is what analyzers and the server call; `describe_backends` is what `peerlint doctor`
prints, one line per backend with the fix when it is not usable; `prompt_destination` says where
prompts (paragraphs of the draft, retrieved abstracts) would go and whether that is this machine.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import ipaddress
import logging
import os
import urllib.parse
from dataclasses import dataclass

from .base import LLM, LLMError, LLMUnavailable
from .cache import CachedLLM
from .embedded import EmbeddedLLM, choose_gguf
from .models import MODELS
from .ollama_backend import DEFAULT_MODEL, OllamaLLM, probe, resolve_host

BACKENDS = ("auto", "ollama", "embedded")
logger = logging.getLogger("peerlint")


@dataclass(frozen=True)
class BackendStatus:
    name: str  # "ollama" | "embedded"
    available: bool
    version: str | None = None
    model: str | None = None
    model_path: str | None = None
    detail: str = ""  # what was found, or the fix when unavailable


def _ollama_model(model: str | None) -> str:
    return model if model and not model.endswith(".gguf") else DEFAULT_MODEL


def _gguf(model: str | None) -> str | None:
    """A `model` ending in .gguf names the embedded model's file, a packaged model's name
    (`models.MODELS`) the embedded model to verify and load; any other name is Ollama's."""
    return model if model and (model.endswith(".gguf") or model in MODELS) else None


def make_llm(backend: str = "auto", model: str | None = None, host: str | None = None, cache_dir=None,
             timeout: float = 60.0, cache: bool = True, probe_timeout: float = 1.0) -> LLM:
    """The backend to use, wrapped in the persistent answer cache unless `cache=False`.

    "auto": Ollama when GET /api/tags answers within `probe_timeout` and lists `model`
    (default "smollm2:135m"), else the embedded model.  "ollama" / "embedded" force one;
    forcing Ollama does not probe, so its first call reports an unreachable server.
    """
    llm: LLM
    if prompt_destination(backend, model, host, probe_timeout).host is not None:
        llm = OllamaLLM(model=_ollama_model(model), host=host, timeout=timeout)
    else:
        embedded = EmbeddedLLM(model_path=_gguf(model))
        if backend == "auto" and model and not _gguf(model):  # an Ollama model that Ollama does not serve
            missed = (f"the Ollama model {model!r} is not available at {resolve_host(host)}: run `ollama pull {model}` "
                      f"(and `ollama serve`); the judge is the embedded {embedded.judge} instead")
            embedded.choice_note = "; ".join(n for n in (missed, embedded.choice_note) if n)
        llm = embedded
    note = getattr(llm, "note", "")
    if note:
        logger.warning("%s", note)
    return CachedLLM(llm, cache_dir=cache_dir) if cache else llm


@dataclass(frozen=True)
class Destination:
    """Where `make_llm` with the same arguments would send prompts."""

    backend: str  # "embedded" | "ollama"
    host: str | None  # the Ollama address; None for the embedded model (no network at all)
    local: bool  # True: nothing leaves this machine

    def describe(self) -> str:
        if self.host is None:
            return "the embedded model in this process: nothing leaves this machine"
        where = "this machine (loopback)" if self.local else "possibly another machine (not a loopback address)"
        return (f"Ollama at {self.host}, {where}: paragraphs of the draft and retrieved abstracts are sent there"
                + ("" if self.local else '; set backend "embedded" to keep everything on this machine'))


def is_loopback(host: str) -> bool:
    """Is the Ollama address `host` this machine by its name alone (localhost or a loopback IP)?"""
    name = urllib.parse.urlsplit(resolve_host(host)).hostname or ""
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def prompt_destination(backend: str = "auto", model: str | None = None, host: str | None = None,
                       probe_timeout: float = 1.0) -> Destination:
    """The choice `make_llm` makes, without making it: "embedded" never touches the network."""
    if backend not in BACKENDS:
        raise LLMError(f"unknown LLM backend {backend!r}: use one of {', '.join(BACKENDS)}")
    if backend == "ollama" or (
        backend == "auto" and not _gguf(model) and probe(host, probe_timeout).has(_ollama_model(model))
    ):
        address = resolve_host(host)
        return Destination("ollama", address, is_loopback(address))
    return Destination("embedded", None, True)


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def describe_backends(model: str | None = None, host: str | None = None, probe_timeout: float = 1.0) -> list[BackendStatus]:
    """What `peerlint doctor` shows; probes Ollama but never loads the embedded model."""
    statuses = []
    name = _ollama_model(model)
    found = probe(host, probe_timeout)
    if not found.reachable:
        statuses.append(BackendStatus(
            "ollama", False, None, name, None,
            f"not reachable at {found.host} ({found.error}): start it with `ollama serve` or set OLLAMA_HOST",
        ))
    elif not found.has(name):
        held = ", ".join(found.models) or "none"
        statuses.append(BackendStatus(
            "ollama", False, found.version, name, None,
            f"model '{name}' not found on {found.host} (it holds: {held}): run `ollama pull {name}`",
        ))
    else:
        statuses.append(BackendStatus("ollama", True, found.version, name, None, f"serving {name} at {found.host}"))

    llama_version = _version("llama-cpp-python")
    if llama_version is None or importlib.util.find_spec("llama_cpp") is None:
        statuses.append(BackendStatus("embedded", False, None, None, None,
                                      "llama-cpp-python is not installed: pip install llama-cpp-python"))
        return statuses
    try:
        choice = choose_gguf(_gguf(model), fallback=False)
        path = choice.path
    except LLMUnavailable as exc:
        statuses.append(BackendStatus("embedded", False, llama_version, None, None, str(exc)))
        return statuses
    size = os.path.getsize(path) / 2**20
    origin = f"the packaged {choice.packaged}, SHA-256 verified" if choice.packaged else "from PEERLINT_GGUF / config"
    statuses.append(BackendStatus("embedded", True, llama_version, path.stem, str(path),
                                  f"{path.name} ({size:.0f} MiB, {origin}), llama-cpp-python {llama_version}"))
    return statuses
