"""HTTP GET for the scholarly APIs with the manners they ask for, on the standard library alone.

One `ApiClient` per pull: it spaces requests (`min_interval`, 3 s for arXiv), honours a short 429
with `Retry-After`, backs off exponentially on 5xx, truncated bodies and HTML error pages, and spends
a bounded budget of requests (every attempt counts), so an API that answers 429 forever ends the pull
within the budget instead of never. A 429 that asks for a longer wait than `MAX_WAIT_S`, or whose
body says a daily budget is spent (OpenAlex: `Retry-After` = seconds to midnight UTC), stops at once
with the server's message and when to come back. Failures are `FetchError`s whose message names the
fix; no message carries a URL's query, so a key sent as a parameter never reaches a log.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import http.client
import json
import re
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ... import __version__

MAX_WAIT_S = 120.0  # a 429 asking for a longer wait stops the pull (it says when to resume) instead of sleeping
BACKOFF_S = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0)
MAX_429_IN_A_ROW = 10  # then the API is asked to rest: the pull stops, keeps its works and can resume


class FetchError(Exception):
    """A request that cannot succeed now; the message names the fix."""


class BudgetExhausted(FetchError):
    """The `--max-requests` budget is spent; what was fetched so far is kept."""


class QueryRejected(FetchError):
    """The API refused the request itself (HTTP 4xx other than 401/403 and a wait-and-see 429): asking
    again will not help. `status`, `detail` (the server's own message) and `body` say why."""

    def __init__(self, message: str, status: int = 400, detail: str = "", body: bytes = b"") -> None:
        super().__init__(message)
        self.status, self.detail, self.body = status, detail, body


class KeyRefused(FetchError):
    """HTTP 401 or 403: the API wants a (different) key; nothing this run asks will succeed."""

    def __init__(self, message: str, status: int, detail: str) -> None:
        super().__init__(message)
        self.status, self.detail = status, detail


class RateLimited(FetchError):
    """The API kept answering 429; what was fetched so far is kept."""


class QuotaSpent(RateLimited):
    """A 429 that will not clear within MAX_WAIT_S (a spent daily budget): stop now, resume at `resume_at`."""

    def __init__(self, message: str, detail: str, resume_at: dt.datetime | None, url: str = "") -> None:
        super().__init__(message)
        self.detail, self.resume_at, self.url = detail, resume_at, url  # url: without its query


@dataclass
class RequestStats:
    requests: int = 0
    rate_limited: int = 0  # 429 answers
    retried: int = 0  # 5xx, truncated or non-JSON answers tried again
    waited_s: float = 0.0
    by_host: dict[str, int] = field(default_factory=dict)
    budget_left: str = ""  # the last X-RateLimit-Remaining (OpenAlex: credits left today), as sent


class ApiClient:
    def __init__(self, max_requests: int, *, user_agent: str = "", retries: int = 5,
                 timeout_s: float = 60.0, sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic,
                 now: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.timezone.utc)) -> None:
        self.max_requests, self.retries, self.timeout_s = max_requests, retries, timeout_s
        self.user_agent = user_agent or f"peerlint/{__version__} (corpus pull)"
        self._sleep, self._clock, self._now = sleep, clock, now
        self._last: dict[str, float] = {}
        self.stats = RequestStats()

    @property
    def left(self) -> int:
        return max(0, self.max_requests - self.stats.requests)

    def get_json(self, url: str, params: Mapping[str, object] | None = None, *, min_interval: float = 0.0) -> Any:
        def parse(body: bytes, content_type: str) -> Any:
            if "html" in content_type.lower() or body.lstrip()[:1] == b"<":
                raise _Transient("answered with an HTML page instead of JSON")
            try:
                return json.loads(body)
            except (UnicodeDecodeError, json.JSONDecodeError) as err:
                raise _Transient(f"answered with JSON that does not parse ({err}), probably a truncated body")

        return self._get(url, params, min_interval, parse)

    def get_text(self, url: str, params: Mapping[str, object] | None = None, *, min_interval: float = 0.0) -> str:
        def decode(body: bytes, content_type: str) -> str:
            return body.decode("utf-8", errors="replace")

        return self._get(url, params, min_interval, decode)

    # --- internals -----------------------------------------------------------------------------------

    def _get(self, url: str, params: Mapping[str, object] | None, min_interval: float,
             parse: Callable[[bytes, str], Any]) -> Any:
        if params:
            url += ("&" if "?" in url else "?") + urllib.parse.urlencode(
                {k: v for k, v in params.items() if v not in (None, "")}, safe=":,|*/")
        host = urllib.parse.urlsplit(url).netloc
        failures = limited = 0
        while True:
            if self.stats.requests >= self.max_requests:
                raise BudgetExhausted(f"the request budget of {self.max_requests} is used up")
            self._space(host, min_interval)
            self.stats.requests += 1
            self.stats.by_host[host] = self.stats.by_host.get(host, 0) + 1
            try:
                status, headers, body = self._fetch(url)
            except _Transient as err:
                failures = self._retry_or_fail(failures, url, str(err))
                continue
            if remaining := headers.get("X-RateLimit-Remaining"):
                self.stats.budget_left = str(remaining).strip()[:20]
            if status == 429:
                self.stats.rate_limited += 1
                limited += 1
                wait = self._too_many(url, headers, body)
                if limited >= MAX_429_IN_A_ROW:
                    raise RateLimited(f"{_short(url)} answered 429 Too Many Requests {limited} times in a row")
                self._wait(wait if wait is not None else BACKOFF_S[min(limited - 1, len(BACKOFF_S) - 1)])
                continue
            if status >= 500:
                failures = self._retry_or_fail(failures, url, f"answered HTTP {status}")
                continue
            if status in (401, 403):
                detail = _error_message(body)
                raise KeyRefused(f"{_short(url)} answered HTTP {status}: {detail}", status, detail)
            if status >= 400:
                detail = _error_message(body)
                raise QueryRejected(f"{_short(url)} answered HTTP {status}: {detail}; "
                                    "check the query (filter names, dates) or the API base URL", status, detail, body)
            try:
                return parse(body, headers.get("Content-Type", ""))
            except _Transient as err:
                failures = self._retry_or_fail(failures, url, str(err))

    def _too_many(self, url: str, headers: Mapping[str, str], body: bytes) -> float | None:
        """The seconds to wait before asking again after this 429 (None: back off); raises when waiting
        will not do: a spent budget, a wait over MAX_WAIT_S, or a 429 that is a refusal (a paid-plan filter)."""
        detail = _error_message(body) if body.strip() else "Too Many Requests"
        if _PLAN_REFUSAL.search(detail):  # OpenAlex answers a Premium-only filter with 429 and no Retry-After
            raise QueryRejected(f"{_short(url)} answered HTTP 429: {detail}", 429, detail, body)
        wait = _retry_after(headers.get("Retry-After"), self._now())
        if (wait is not None and wait > MAX_WAIT_S) or _BUDGET_SPENT.search(detail):
            resume_at = self._now() + dt.timedelta(seconds=wait) if wait is not None else None
            when = (f"; it accepts requests again from {resume_at:%Y-%m-%d %H:%M} UTC "
                    f"(in {_duration(wait)})") if resume_at else ""
            raise QuotaSpent(f"{_short(url)} answered 429: {detail}{when}", detail, resume_at, _short(url))
        return wait

    def _fetch(self, url: str) -> tuple[int, Mapping[str, str], bytes]:
        try:
            headers = {"User-Agent": self.user_agent, "Accept-Encoding": "identity"}
            request = urllib.request.Request(url, headers=headers)
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                return response.status, response.headers, response.read()
        except urllib.error.HTTPError as err:
            try:
                body = err.read()
            except (OSError, http.client.HTTPException):
                body = b""
            return err.code, err.headers or {}, body
        except http.client.IncompleteRead as err:
            raise _Transient(f"closed the connection after {len(err.partial)} bytes (truncated body)") from None
        except (urllib.error.URLError, http.client.HTTPException, socket.timeout, OSError) as err:
            reason = str(getattr(err, "reason", err))
            query = urllib.parse.urlsplit(url).query
            raise _Transient(f"cannot be reached ({reason.replace(query, '…') if query else reason})") from None
        except ValueError:  # its message holds the whole URL, parameters (a key) included: never shown
            raise FetchError(f"{_short(url)} is not an http(s) URL: check the API base URL") from None

    def _retry_or_fail(self, failures: int, url: str, why: str) -> int:
        if failures >= self.retries:
            raise FetchError(f"{_short(url)} {why}, {failures + 1} times in a row; check the network or the "
                             "API base URL and run the same command again to resume")
        self.stats.retried += 1
        self._wait(BACKOFF_S[min(failures, len(BACKOFF_S) - 1)])
        return failures + 1

    def _space(self, host: str, min_interval: float) -> None:
        last = self._last.get(host)
        if last is not None and min_interval > 0:
            gap = min_interval - (self._clock() - last)
            if gap > 0:
                self._wait(gap)
        self._last[host] = self._clock()

    def _wait(self, seconds: float) -> None:
        seconds = max(0.0, min(seconds, MAX_WAIT_S))
        self.stats.waited_s += seconds
        self._sleep(seconds)


class _Transient(Exception):
    """An answer worth asking again: a dropped connection, a truncated body, an HTML error page."""


_BUDGET_SPENT = re.compile(r"insufficient (?:budget|credits)|daily (?:budget|limit|credits)|midnight UTC|"
                           r"resets at", re.IGNORECASE)
_PLAN_REFUSAL = re.compile(r"plan upgrade required|requires an? .{0,40}plan", re.IGNORECASE)


def _retry_after(value: str | None, now: dt.datetime) -> float | None:
    """Seconds from a Retry-After header (a number of seconds or an HTTP date); None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    return max(0.0, (when - now).total_seconds())


def _duration(seconds: float) -> str:
    minutes = int(seconds + 59) // 60
    return f"{minutes // 60} h {minutes % 60} min" if minutes >= 60 else f"{minutes} min"


def _error_message(body: bytes) -> str:
    """The message of an API's JSON error ({"error", "message"}), else the start of the body."""
    text = body.decode("utf-8", errors="replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        parts = [str(data[k]) for k in ("error", "message") if data.get(k)]
        if parts:
            return ": ".join(parts)[:300]
    return " ".join(text.split())[:200] or "(empty body)"


def _short(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}"
