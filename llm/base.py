"""The one interface every LLM backend implements, so analyzers never know which one runs."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence


class LLMError(RuntimeError):
    """A backend failure a user can act on; the message names the fix."""


class LLMUnavailable(LLMError):
    """The backend cannot be reached (server down, model missing)."""


class LLMBadOutput(LLMError):
    """The model answered, but not in the form asked for (e.g. not JSON for a JSON request)."""


@dataclass(frozen=True)
class GenerateParams:
    system: str | None = None
    json_schema: dict[str, Any] | None = None
    max_tokens: int = 256
    temperature: float = 0.0
    seed: int = 42


@dataclass(frozen=True)
class ChoiceScores:
    """Probability per choice, renormalised over the choices, read from token log-probabilities."""

    choices: tuple[str, ...]
    probs: tuple[float, ...]
    logprobs: tuple[float, ...] = field(default=())

    @property
    def best(self) -> str:
        return self.choices[max(range(len(self.probs)), key=self.probs.__getitem__)]

    def expected(self) -> float:
        """Expected value when the choices are numbers ("1".."10"): the paper-style score."""
        return sum(float(c) * p for c, p in zip(self.choices, self.probs))

    @property
    def confidence(self) -> float:
        return max(self.probs) if self.probs else 0.0


@dataclass(frozen=True)
class LogLik:
    """How likely the model finds a text after a prompt: the summed token log-probability and its token count."""

    total: float
    n_tokens: int

    def per_token(self, power: float = 1.0) -> float:
        """`total / n_tokens**power`: 1 is the mean (fluency regardless of length), 0 the sum, 0.5 in between."""
        return self.total / self.n_tokens ** power if self.n_tokens else 0.0


def check_json(text: str, schema: dict[str, Any] | None, source: str) -> str:
    """Raise `LLMBadOutput` unless `text` is a JSON object holding the schema's required keys.

    Only the top-level `required` list is checked: the backends already constrain decoding to
    the schema, so this catches servers that ignore `format`, not subtle schema drift.
    """
    try:
        value = json.loads(text)
    except ValueError:
        snippet = text.strip().replace("\n", " ")[:80]
        raise LLMBadOutput(
            f"{source} returned text that is not JSON for a JSON request ({snippet!r}); "
            "use a model that supports structured output, or lower the temperature"
        ) from None
    required = (schema or {}).get("required") or []
    if required and not isinstance(value, dict):
        raise LLMBadOutput(f"{source} returned JSON that is not an object; the schema asks for {required}")
    missing = [key for key in required if key not in value]
    if missing:
        raise LLMBadOutput(f"{source} returned JSON without the required keys {missing}")
    return text


def one_hot(choices: Sequence[str], text: str) -> ChoiceScores:
    """The fallback when a backend gives no log-probabilities: the choice the text starts with.

    The longest matching choice wins, so "10" beats "1"; no match gives a uniform answer.
    """
    answer = text.strip()
    matches = [c for c in choices if answer.startswith(c.strip())]
    if not matches:
        return normalise_logprobs(choices, [-math.inf] * len(choices))
    best = max(matches, key=len)
    return normalise_logprobs(choices, [0.0 if c == best else -math.inf for c in choices])


def normalise_logprobs(choices: Sequence[str], logprobs: Sequence[float]) -> ChoiceScores:
    """Softmax over the choices' log-probabilities; -inf everywhere gives a uniform answer."""
    finite = [lp for lp in logprobs if lp != -math.inf]
    if not finite:
        n = len(choices)
        return ChoiceScores(tuple(choices), tuple(1.0 / n for _ in choices), tuple(logprobs))
    top = max(finite)
    weights = [math.exp(lp - top) if lp != -math.inf else 0.0 for lp in logprobs]
    total = sum(weights)
    return ChoiceScores(tuple(choices), tuple(w / total for w in weights), tuple(logprobs))


class LLM(Protocol):
    """`generate` for text (optionally JSON-constrained); `score` for "pick one of these"."""

    name: str  # backend name: "embedded" | "ollama"
    model: str

    def generate(self, prompt: str, params: GenerateParams = GenerateParams()) -> str: ...

    def score(self, prompt: str, choices: Sequence[str], system: str | None = None) -> ChoiceScores: ...


class LLMWrapper:
    """An LLM around another (`inner`): the same name and model, so the same caches, and the inner
    backend's extras (`host`, ...) as it has them."""

    def __init__(self, inner: LLM):
        self.inner = inner

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def model(self) -> str:
        return self.inner.model

    def __getattr__(self, attr: str) -> Any:
        if attr == "inner":  # not set yet (a copy being made): no recursion
            raise AttributeError(attr)
        return getattr(self.inner, attr)
