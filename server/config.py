"""Settings from an editor or a settings file, validated one key at a time (`updated`).

Editors send settings as `initializationOptions`, `workspace/configuration` answers or
`didChangeConfiguration` payloads, in camelCase (`indexPath`) or snake_case (`index_path`),
sometimes nested under `peerlint`. Unknown keys are reported, bad values rejected with a reason,
and in both cases the previous value is kept: one typo never disables the server.
"""

from __future__ import annotations

import re
from dataclasses import fields, replace
from typing import Any, Callable

from ..analyzers.registry import CODES
from ..analyzers.registry import NAMES as ANALYZERS
from ..retrieval.hybrid import MODES
from ..index.embedding.embedder import QUERY_EMBEDDINGS
from ..index.store import parse_before
from ..settings import Settings

SEVERITIES = ("error", "warning", "information", "hint", "off")
BACKENDS = ("auto", "embedded", "ollama")
DRAFTS_SCORERS = ("auto", "llm", "embedding", "ensemble")


def updated(settings: Settings, raw: Any, warn: Callable[[str], None]) -> Settings:
    """A copy with every valid key of `raw` applied; problems go to `warn`, old values stay."""
    if raw is None:
        return settings
    if not isinstance(raw, dict):
        warn(f"peerlint settings must be an object, got {type(raw).__name__}; keeping the current ones")
        return settings
    if isinstance(raw.get("peerlint"), dict):
        raw = {**{k: v for k, v in raw.items() if k != "peerlint"}, **raw["peerlint"]}
    known = {f.name: f for f in fields(settings)}
    changes: dict[str, Any] = {}
    for key, value in raw.items():
        name = _snake(str(key))
        if name not in known:
            warn(f"unknown peerlint setting {key!r} ignored (known: {', '.join(sorted(_camel(n) for n in known))})")
            continue
        try:
            changes[name] = _VALIDATORS.get(name, _coerce_like(getattr(settings, name)))(value)
        except (TypeError, ValueError) as exc:
            warn(f"peerlint setting {key!r}: {exc}; keeping {getattr(settings, name)!r}")
    if "severity" in changes:
        changes["severity"] = {**settings.severity, **changes["severity"]}
    return replace(settings, **changes)


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
