"""The Ollama backend: any model an Ollama server holds, through the official `ollama` client.

`score` reads the choices' probabilities from the log-probabilities Ollama returns
(`logprobs=True, top_logprobs=20`, Ollama >= 0.12.11).  Choices that share a first token
("1" and "10") are told apart by asking what follows the shared prefix (an assistant-prefill
request), exactly as the embedded backend does with its own logits; without logprobs the
generated text is parsed into a one-hot answer.
"""

from __future__ import annotations

import logging
import math
import os
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence, TypeVar

from .base import ChoiceScores, GenerateParams, LLMError, LLMUnavailable, check_json, normalise_logprobs, one_hot

log = logging.getLogger(__name__)

DEFAULT_MODEL = "smollm2:135m"


def _libs():
    """httpx and the ollama client, imported on first use (~0.2 s): a process that picks the embedded
    judge, or never asks a judge at all, does not pay for them."""
    import httpx
    import ollama

    return httpx, ollama

DEFAULT_PORT = 11434
T = TypeVar("T")


def resolve_host(host: str | None = None) -> str:
    """`host`, else `$OLLAMA_HOST`, else localhost; always "scheme://host:port" (Ollama's own rules)."""
    raw = (host or os.environ.get("OLLAMA_HOST") or "127.0.0.1").strip().rstrip("/")
    had_scheme = "://" in raw
    split = urllib.parse.urlsplit(raw if had_scheme else "http://" + raw)
    hostname = split.hostname or "127.0.0.1"
    if hostname in ("0.0.0.0", "::"):  # a bind address, as `ollama serve` accepts; connect locally
        hostname = "127.0.0.1"
    if ":" in hostname:
        hostname = f"[{hostname}]"
    port = split.port or (DEFAULT_PORT if not had_scheme else 443 if split.scheme == "https" else 80)
    return urllib.parse.urlunsplit((split.scheme, f"{hostname}:{port}", split.path, "", ""))


def full_model_name(name: str) -> str:
    """Ollama's own rule: a name without a tag means ":latest"."""
    return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"


@dataclass
class Probe:
    """What one quick look at an Ollama server found."""

    host: str
    reachable: bool
    version: str | None = None
    models: list[str] = field(default_factory=list)
    error: str | None = None

    def has(self, model: str) -> bool:
        return full_model_name(model) in {full_model_name(m) for m in self.models}


def probe(host: str | None = None, timeout: float = 1.0) -> Probe:
    """GET /api/version and /api/tags within `timeout` seconds each; never raises."""
    base = resolve_host(host)
    httpx, _ = _libs()
    try:
        with httpx.Client(base_url=base, timeout=timeout) as http:
            tags = http.get("/api/tags")
            tags.raise_for_status()
            models = [m.get("model") or m.get("name") for m in tags.json().get("models", [])]
            version = None
            with_version = http.get("/api/version")
            if with_version.is_success:
                version = with_version.json().get("version")
            return Probe(base, True, version, [m for m in models if m])
    except (httpx.HTTPError, ValueError, AttributeError) as exc:
        return Probe(base, False, error=f"{type(exc).__name__}: {exc}")


def _logsumexp(values: Sequence[float]) -> float:
    finite = [v for v in values if v != -math.inf]
    if not finite:
        return -math.inf
    top = max(finite)
    return top + math.log(sum(math.exp(v - top) for v in finite))


class OllamaLLM:
    """`LLM` over an Ollama server; failures become `LLMUnavailable` / `LLMError` naming the fix.

    After the server was found unavailable (closed, hanging past `timeout`, not Ollama), calls fail at
    once with the same message for `cooldown` seconds: a draft of N paragraphs costs one timeout, not
    N, and `failure` holds the message for whoever reports it (once)."""

    name = "ollama"

    def __init__(
        self,
        model: str | None = None,
        host: str | None = None,
        timeout: float = 60.0,
        retries: int = 3,
        backoff: float = 0.5,
        top_logprobs: int = 20,
        explore_budget: int = 6,
        cooldown: float = 30.0,
    ):
        self.model = model or DEFAULT_MODEL
        self.host = resolve_host(host)
        self.timeout = timeout
        self.retries = max(1, retries)
        self.backoff = backoff
        self.top_logprobs = top_logprobs
        self.explore_budget = explore_budget
        self.cooldown = cooldown
        self.failure: str | None = None  # why the server was last found unavailable; None once it answers
        self._down_until = 0.0
        self._httpx, self._ollama = httpx, ollama = _libs()
        self.client = ollama.Client(host=self.host, timeout=httpx.Timeout(timeout, connect=min(5.0, timeout)))

    # -- transport -----------------------------------------------------------------------------

    def _unreachable(self, exc: BaseException) -> LLMUnavailable:
        return LLMUnavailable(
            f"Ollama is not reachable at {self.host} ({type(exc).__name__}) after {self.retries} tries: "
            "start it with `ollama serve`, set OLLAMA_HOST, or use the embedded backend"
        )

    def _missing_model(self) -> LLMUnavailable:
        return LLMUnavailable(f"model '{self.model}' not found on {self.host}: run `ollama pull {self.model}`")

    def _not_ollama(self, exc: BaseException) -> LLMUnavailable:
        return LLMUnavailable(
            f"the server at {self.host} does not answer like Ollama ({type(exc).__name__}): check OLLAMA_HOST"
        )

    def close(self) -> None:
        self.client.close()

    def _call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """`_attempts`, behind the cool-off after the server was found unavailable."""
        if self.failure is not None and time.monotonic() < self._down_until:
            raise LLMUnavailable(self.failure)
        try:
            result = self._attempts(fn, *args, **kwargs)
        except LLMUnavailable as exc:
            self._went_down(exc)
            raise
        self.failure = None
        return result

    def _went_down(self, exc: LLMUnavailable) -> None:
        self.failure = str(exc)
        self._down_until = time.monotonic() + self.cooldown

    def _attempts(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run one request with bounded retries (back-off 0.5 s, 1 s, 2 s ...) on connection errors and 5xx."""
        httpx, ollama = self._httpx, self._ollama
        last: BaseException | None = None
        for attempt in range(self.retries):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            try:
                return fn(*args, **kwargs)
            except ollama.ResponseError as exc:
                if exc.status_code == 404:
                    if "model" in str(exc.error).lower():
                        raise self._missing_model() from None
                    raise self._not_ollama(exc) from None
                if exc.status_code < 500:
                    raise LLMError(f"Ollama at {self.host} refused the request: {exc.error}") from None
                last = exc
                log.info("Ollama %s answered %s (try %d/%d)", self.host, exc.status_code, attempt + 1, self.retries)
            except httpx.TimeoutException as exc:
                if not isinstance(exc, httpx.ConnectTimeout):
                    raise LLMUnavailable(
                        f"Ollama at {self.host} did not answer within {self.timeout:g} s: "
                        "raise the LLM timeout or use a smaller model"
                    ) from None
                last = exc
            except (ConnectionError, httpx.TransportError) as exc:  # refused, reset, closed mid-response
                last = exc
                log.info("Ollama %s unreachable: %s (try %d/%d)", self.host, exc, attempt + 1, self.retries)
            except ValueError as exc:  # not JSON, or JSON of another shape: some other server
                raise self._not_ollama(exc) from None
        if isinstance(last, ollama.ResponseError):
            raise LLMUnavailable(f"Ollama at {self.host} failed {self.retries} times: {last.error}") from None
        raise self._unreachable(last or RuntimeError("no attempt"))

    def _messages(self, prompt: str, system: str | None) -> list[dict[str, str]]:
        return ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]

    def _options(self, params: GenerateParams) -> dict[str, Any]:
        return {"temperature": params.temperature, "seed": params.seed, "num_predict": params.max_tokens}

    # -- the LLM protocol ----------------------------------------------------------------------

    def generate(self, prompt: str, params: GenerateParams = GenerateParams()) -> str:
        fmt = params.json_schema if params.json_schema else ("json" if params.json_schema == {} else None)
        response = self._call(
            self.client.chat,
            model=self.model,
            messages=self._messages(prompt, params.system),
            format=fmt,
            options=self._options(params),
            stream=False,
        )
        text = response.message.content or ""
        if params.json_schema is not None:
            check_json(text, params.json_schema, f"Ollama model '{self.model}'")
        return text

    def stream_generate(self, prompt: str, params: GenerateParams = GenerateParams()) -> Iterator[str]:
        """Text pieces as the server streams them; a connection lost midway raises `LLMUnavailable`."""
        fmt = params.json_schema if params.json_schema else ("json" if params.json_schema == {} else None)

        def first() -> tuple[Iterator[Any], Any]:
            stream = self.client.chat(
                model=self.model,
                messages=self._messages(prompt, params.system),
                format=fmt,
                options=self._options(params),
                stream=True,
            )
            return stream, next(stream, None)  # the request happens here, so it can be retried

        stream, part = self._call(first)
        httpx, ollama = self._httpx, self._ollama
        try:
            while part is not None:
                if part.message.content:
                    yield part.message.content
                part = next(stream, None)
        except ollama.ResponseError as exc:
            raise LLMError(f"Ollama at {self.host} stopped mid-response: {exc.error}") from None
        except ValueError as exc:
            raise self._not_ollama(exc) from None
        except (ConnectionError, httpx.TransportError) as exc:
            lost = LLMUnavailable(
                f"lost the connection to Ollama at {self.host} mid-response ({type(exc).__name__}): "
                "check that the server is still running, then retry"
            )
            self._went_down(lost)
            raise lost from None

    def score(self, prompt: str, choices: Sequence[str], system: str | None = None) -> ChoiceScores:
        if not choices:
            raise ValueError("score() needs at least one choice")
        return _ChoiceExplorer(self, self._messages(prompt, system), list(choices)).scores()

    def _next_token_dists(self, messages: list[dict[str, str]], prefill: str, num_predict: int) -> tuple[list[Any], str]:
        """One greedy request continuing the assistant turn from `prefill`: its logprobs and its text."""
        if prefill:
            messages = messages + [{"role": "assistant", "content": prefill}]
        response = self._call(
            self.client.chat,
            model=self.model,
            messages=messages,
            logprobs=True,
            top_logprobs=self.top_logprobs,
            options={"temperature": 0.0, "seed": 42, "num_predict": num_predict},
            stream=False,
        )
        return list(response.logprobs or []), response.message.content or ""


class _ChoiceExplorer:
    """Walks the choices as strings over the token distributions Ollama reports.

    P(choice) = sum over token paths spelling the choice of the product of their probabilities,
    times the probability of *not* going on into a longer choice ("1" but not "10").  A
    distribution not on the greedy path is fetched with an assistant-prefill request, at most
    `explore_budget` of them; beyond that an unexplored branch counts as impossible.
    """

    def __init__(self, backend: OllamaLLM, messages: list[dict[str, str]], choices: list[str]):
        self.backend, self.messages, self.choices = backend, messages, choices
        self.dists: dict[str, dict[str, float]] = {}
        self.budget = backend.explore_budget
        self.first_text = ""

    def _record(self, prefill: str, logprobs: list[Any]) -> None:
        said = prefill
        for entry in logprobs:
            dist: dict[str, float] = {}
            for alt in list(entry.get("top_logprobs") or []) + [entry]:
                token, lp = alt["token"], float(alt["logprob"])
                dist[token] = lp if token not in dist else max(dist[token], lp)
            self.dists.setdefault(said, dist)
            said += entry["token"]

    def _dist(self, said: str, remaining: int) -> dict[str, float] | None:
        if said not in self.dists and said and self.budget > 0:
            self.budget -= 1
            logprobs, _ = self.backend._next_token_dists(self.messages, said, max(1, min(8, remaining + 1)))
            self._record(said, logprobs)
            self.dists.setdefault(said, {})
        return self.dists.get(said)

    def _stop_lp(self, choice: str, said: str) -> float:
        """log P(the answer does not continue from `choice` into a longer choice)."""
        rests = [d[len(choice):] for d in self.choices if d != choice and d.startswith(choice)]
        if not rests:
            return 0.0
        dist = self._dist(said, max(map(len, rests)))
        if not dist:
            return 0.0
        extend = sum(math.exp(lp) for t, lp in dist.items() if t and any(r.startswith(t) or t.startswith(r) for r in rests))
        return math.log(max(1.0 - extend, 1e-12))

    def _lp(self, choice: str, said: str, matched: int) -> float:
        rest = choice[matched:]
        dist = self._dist(said, len(rest))
        if not dist:
            return -math.inf
        terms = []
        for token, lp in dist.items():
            text = token if matched else token.lstrip()  # leading whitespace before the answer is harmless
            if not text:
                continue
            if text == rest:
                terms.append(lp + self._stop_lp(choice, said + token))
            elif rest.startswith(text):
                terms.append(lp + self._lp(choice, said + token, matched + len(text)))
        return _logsumexp(terms)

    def scores(self) -> ChoiceScores:
        longest = max((len(c) for c in self.choices), default=1)
        logprobs, self.first_text = self.backend._next_token_dists(self.messages, "", max(1, min(8, longest + 1)))
        if not logprobs:  # a server without logprobs support: parse what it said
            log.info("Ollama at %s returned no logprobs; scoring from the generated text", self.backend.host)
            return one_hot(self.choices, self.first_text)
        self._record("", logprobs)
        lps = [self._lp(c, "", 0) for c in self.choices]
        if all(lp == -math.inf for lp in lps):
            return one_hot(self.choices, self.first_text)
        return normalise_logprobs(self.choices, lps)
