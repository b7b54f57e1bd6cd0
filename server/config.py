"""Settings shared by the CLI and the server, validated one key at a time.

Editors send settings as `initializationOptions`, `workspace/configuration` answers or
`didChangeConfiguration` payloads, in camelCase (`indexPath`) or snake_case (`index_path`),
sometimes nested under `peerlint`. Unknown keys are reported, bad values rejected with a reason,
and in both cases the previous value is kept: one typo never disables the server.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields, replace
from typing import Any, Callable

from ..analyzers.registry import CODES
from ..analyzers.registry import NAMES as ANALYZERS
from ..retrieval.hybrid import DEFAULT_MODE, MODES
from ..index.embedding.embedder import QUERY_EMBEDDINGS
from ..index.store import parse_before

SEVERITIES = ("error", "warning", "information", "hint", "off")
BACKENDS = ("auto", "embedded", "ollama")
DRAFTS_SCORERS = ("auto", "llm", "embedding", "ensemble")


@dataclass(frozen=True)
class Settings:
    index_path: str = ""  # empty: the default per-user index
    backend: str = "auto"
    model: str = ""  # empty: the backend's default; a packaged model's name (`peerlint models list`), a .gguf, or an Ollama model
    ollama_host: str = ""  # empty: $OLLAMA_HOST or http://127.0.0.1:11434
    target_venue: str = ""  # empty: guessed from \documentclass / \usepackage
    analyzers: tuple[str, ...] = ("prior-work",)
    close_prior_work_threshold: float = 0.90  # calibrated: docs/usage/diagnostics.md
    related_work_min_similarity: float = 0.65  # with related_work_k: chosen for precision (`bench related --precision`)
    related_work_k: int = 2
    hover_k: int = 5
    severity: dict[str, str] = field(default_factory=lambda: {
        "close-prior-work": "warning", "missing-related-work": "information", "weak-chunk": "information",
        "off-venue-style": "information", "novelty": "information"})
    debounce_ms: int = 300
    latex_commands: dict[str, str] = field(default_factory=dict)
    latex_environments: dict[str, str] = field(default_factory=dict)
    max_tokens: int = 200
    log_file: str = ""
    drafts_scorer: str = "auto"  # quality/venue-style: llm | embedding | ensemble; auto: what `bench drafts` chose
    weak_chunk_percentile: float = 0.10  # weak-chunk: below this percentile of the venue's reference texts
    weak_chunk_drop: float = 0.50  # ... or this share of the 1-10 scale below the draft's own median
    off_venue_percentile: float = 0.10  # off-venue-style: below this percentile of the venue's own papers
    suggestion_tokens: int = 80  # length limit of the LLM's one suggestion per flagged chunk
    max_suggestions: int = 2  # flagged chunks per analysis run that get an LLM suggestion (lowest rated first)
    search_mode: str = DEFAULT_MODE  # how every finding finds papers: dense | lexical | hybrid (docs/usage/index.md)
    query_embedding: str = "int8"  # the draft's paragraphs on int8 (~2x less CPU, no measured loss) or exact (docs/benchmarks/latency.md)
    published_before: str = "auto"  # ISO date or year: only papers published strictly before it are evidence;
    # "auto": the deadline of the past venue whose style the draft uses (`draft_date`); empty: all
    llm_timeout_s: int = 60  # the longest one LLM request may take before the LLM checks report it (once)
    extra_roots: tuple[str, ...] = ()  # folders outside the project that \input, .bib etc. may read (docs/usage/privacy.md)
    section_summaries: bool = True  # per-section quality / venue-style / reads-like lines (code lens, `check`)
    root_file: str = ""  # the root .tex to use where several roots include the edited file (absolute or workspace-relative)
    revision_base: str = "HEAD"  # revision-weaker: the git revision a draft is compared with (outside git: the text at open)

    def updated(self, raw: Any, warn: Callable[[str], None]) -> "Settings":
        """A copy with every valid key of `raw` applied; problems go to `warn`, old values stay."""
        if raw is None:
            return self
        if not isinstance(raw, dict):
            warn(f"peerlint settings must be an object, got {type(raw).__name__}; keeping the current ones")
            return self
        if isinstance(raw.get("peerlint"), dict):
            raw = {**{k: v for k, v in raw.items() if k != "peerlint"}, **raw["peerlint"]}
        known = {f.name: f for f in fields(self)}
        changes: dict[str, Any] = {}
        for key, value in raw.items():
            name = _snake(str(key))
            if name not in known:
                warn(f"unknown peerlint setting {key!r} ignored (known: {', '.join(sorted(_camel(n) for n in known))})")
                continue
            try:
                changes[name] = _VALIDATORS.get(name, _coerce_like(getattr(self, name)))(value)
            except (TypeError, ValueError) as exc:
                warn(f"peerlint setting {key!r}: {exc}; keeping {getattr(self, name)!r}")
        if "severity" in changes:
            changes["severity"] = {**self.severity, **changes["severity"]}
        return replace(self, **changes)

    def severity_of(self, code: str) -> str:
        return self.severity.get(code, "information")


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower().replace("-", "_")


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)


def _coerce_like(default: Any) -> Callable[[Any], Any]:
    def coerce(value: Any) -> Any:
        if isinstance(default, bool):
            if not isinstance(value, bool):
                raise TypeError(f"expected true or false, got {value!r}")
            return value
        if isinstance(default, int):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise TypeError(f"expected a non-negative integer, got {value!r}")
            return value
        if isinstance(default, float):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
                raise TypeError(f"expected a number between 0 and 1, got {value!r}")
            return float(value)
        if isinstance(default, str):
            if not isinstance(value, str):
                raise TypeError(f"expected a string, got {value!r}")
            return value
        raise TypeError(f"cannot set this from {value!r}")
    return coerce


def _choice(options: tuple[str, ...]) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if value not in options:
            raise ValueError(f"expected one of {', '.join(options)}, got {value!r}")
        return value
    return check


def _before(value: Any) -> str:
    if not isinstance(value, (str, int)) or isinstance(value, bool):
        raise TypeError(f"expected a year, an ISO date such as 2019 or 2019-06-01, or \"auto\", got {value!r}")
    text = str(value).strip()
    if text and text != "auto":
        parse_before(text)
    return text


def _analyzers(value: Any) -> tuple[str, ...]:
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise TypeError(f"expected a list of analyzer names, got {value!r}")
    unknown = [v for v in value if v not in ANALYZERS]
    if unknown:
        raise ValueError(f"unknown analyzers {unknown} (available: {', '.join(ANALYZERS)})")
    return tuple(value)


def _folders(value: Any) -> tuple[str, ...]:
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) and v.strip() for v in value):
        raise TypeError(f"expected a list of folder paths, got {value!r}")
    return tuple(value)


def _severity(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        raise TypeError(f"expected an object of code -> severity, got {value!r}")
    for code, sev in value.items():
        if code not in CODES:
            raise ValueError(f"unknown diagnostic code {code!r} (codes: {', '.join(CODES)})")
        if sev not in SEVERITIES:
            raise ValueError(f"severity of {code!r} must be one of {', '.join(SEVERITIES)}, got {sev!r}")
    return dict(value)


def _table(actions: tuple[str, ...]) -> Callable[[Any], dict[str, str]]:
    def check(value: Any) -> dict[str, str]:
        if not isinstance(value, dict) or not all(isinstance(k, str) and v in actions for k, v in value.items()):
            raise ValueError(f"expected an object mapping names to one of {', '.join(actions)}, got {value!r}")
        return dict(value)
    return check


def _revision(value: Any) -> str:
    """A git revision name; one that git would read as an option is refused here, not at its first use."""
    if not isinstance(value, str) or not value.strip():
        raise TypeError(f"expected a git revision such as HEAD, HEAD~1, main or a commit id, got {value!r}")
    if value.strip().startswith("-"):
        raise ValueError(f"{value!r} reads as a git option, not a revision")
    return value.strip()


_VALIDATORS: dict[str, Callable[[Any], Any]] = {
    "revision_base": _revision,
    "backend": _choice(BACKENDS),
    "drafts_scorer": _choice(DRAFTS_SCORERS),
    "search_mode": _choice(MODES),
    "query_embedding": _choice(QUERY_EMBEDDINGS),
    "published_before": _before,
    "analyzers": _analyzers,
    "extra_roots": _folders,
    "severity": _severity,
    "latex_commands": _table(("ignore", "dummy", "default")),
    "latex_environments": _table(("ignore", "default")),
}
