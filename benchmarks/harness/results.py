"""What every bench shares: a results JSON that says how it was made, and a plain-text table."""

from __future__ import annotations

import json
import os
import platform
import re
import resource
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

from ...tables import format_table
from ...locations import cache_root

REPO = Path(__file__).resolve().parents[2]


def git_commit() -> str:
    """HEAD of the checkout the bench runs from, with '+dirty' when files differ; 'unknown' outside git."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True,
                              timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head + ("+dirty" if dirty else "") if head else "unknown"


def machine() -> dict[str, Any]:
    info: dict[str, Any] = {"cpu_count": os.cpu_count(), "platform": platform.platform(),
                            "python": platform.python_version(), "processor": platform.processor()}
    try:
        info["cpu_affinity"] = len(os.sched_getaffinity(0))
        info["load_average"] = [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        pass
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu_model"] = line.split(":", 1)[1].strip()
                break
        info["memory_gb"] = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (OSError, ValueError):
        pass
    return info


def status_kib(*fields: str) -> dict[str, int]:
    """The kB figures `fields` of /proc/self/status (Linux); those it lacks are left out."""
    out: dict[str, int] = {}
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in fields:
                out[key] = int(value.split()[0])
    except (OSError, ValueError, IndexError):
        pass
    return out


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far: Linux's VmHWM, else ru_maxrss (KiB on Linux). A
    process started by `spawn` inherits its parent's ru_maxrss from before `exec` (a bench worker of a
    500 MB parent reads 500 MB however little it uses); VmHWM counts only its own memory."""
    peak = status_kib("VmHWM").get("VmHWM")
    return round((peak if peak is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) / 1024, 1)


def rss_mb() -> float | None:
    try:
        import psutil

        return round(psutil.Process().memory_info().rss / 2**20, 1)
    except ImportError:  # pragma: no cover - psutil is a dependency
        return None


RESULTS_HELP = ("directory for the JSON results (default: results/ of the peerlint checkout when run from it, "
                "else results/ in peerlint's cache folder)")


def default_results_dir(cwd: Path | None = None) -> Path:
    """Where a bench writes without `--out`: the project's `results/` when run from the peerlint checkout
    (the benchmarks' record), else the user's cache (`$PEERLINT_CACHE_DIR/results`), never a paper's folder."""
    cwd = cwd or Path.cwd()
    try:
        if re.search(r'(?m)^name\s*=\s*"peerlint"', (cwd / "pyproject.toml").read_text()):
            return cwd / "results"
    except OSError:
        pass

    return cache_root() / "results"


def write_result(out_dir: Path | str | None, name: str, payload: dict[str, Any]) -> Path:
    """Write `payload` as <out_dir>/<name>-<UTC timestamp>.json, with the command, commit and machine
    (`out_dir` None: `default_results_dir()`)."""
    out = Path(out_dir) if out_dir is not None else default_results_dir()
    out.mkdir(parents=True, exist_ok=True)
    now = datetime.now(timezone.utc)
    record = {"bench": name, "created_at": now.isoformat(timespec="seconds"), "command": list(sys.argv),
              "commit": git_commit(), "machine": machine(), **payload}
    path = out / f"{name}-{now.strftime('%Y%m%dT%H%M%SZ')}.json"
    n = 1
    while path.exists():  # two runs within a second keep both results
        path = out / f"{name}-{now.strftime('%Y%m%dT%H%M%SZ')}-{n}.json"
        n += 1
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(record, indent=1, default=str) + "\n")
    os.replace(tmp, path)
    return path


def print_table(rows: Sequence[Sequence[Any]], headers: Sequence[str], title: str | None = None) -> None:
    if title:
        print(f"\n{title}")
    print(format_table(rows, headers), flush=True)
