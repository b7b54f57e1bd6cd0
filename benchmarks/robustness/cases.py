"""What every robustness case reports, and the runner that times it and never lets one escape."""

from __future__ import annotations

import time
import traceback
from dataclasses import asdict, dataclass
from typing import Any, Callable


@dataclass
class CaseResult:
    """One fault or abuse case: did peerlint give the defined result, and did it survive?"""

    group: str  # protocol | fuzz | index | llm | injection | load
    name: str
    ok: bool  # the defined result (an answer per the spec, a clear message, the previous index ...)
    crashed: bool = False  # the process died, raised, or stopped answering
    recovered: bool | None = None  # for a crash or a kill: the next start served correctly
    seconds: float = 0.0
    detail: str = ""
    figures: dict[str, Any] | None = None  # measurements of the case (latencies, RSS, counts)

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


class Crash(Exception):
    """The system under test died or stopped answering (not merely a wrong answer)."""


def run_case(group: str, name: str, fn: Callable[[], Any]) -> CaseResult:
    """Run `fn` (which bounds its own waits); an AssertionError is a wrong result, `Crash` or any
    other exception a crash.  `fn` may return a detail string or a CaseResult to pass on as is."""
    started = time.monotonic()
    try:
        out = fn()
    except AssertionError as exc:
        return CaseResult(group, name, False, seconds=time.monotonic() - started, detail=f"wrong result: {exc}")
    except Crash as exc:
        return CaseResult(group, name, False, crashed=True, seconds=time.monotonic() - started, detail=str(exc))
    except Exception as exc:  # the harness's own view of a crash: anything unexpected
        tail = traceback.format_exc(limit=3).strip().splitlines()[-1]
        return CaseResult(group, name, False, crashed=True, seconds=time.monotonic() - started,
                          detail=f"{type(exc).__name__}: {exc} ({tail})")
    if isinstance(out, CaseResult):
        out.seconds = out.seconds or time.monotonic() - started
        return out
    return CaseResult(group, name, True, seconds=time.monotonic() - started, detail=str(out or ""))


def percentile(values: list[float], q: float) -> float | None:
    """The q-quantile (0..1) by nearest rank; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(q * len(ordered) + 0.5)) - 1))]
