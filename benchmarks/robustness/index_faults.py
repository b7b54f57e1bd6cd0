"""Index crashes and damage: `peerlint index build` killed with SIGKILL at random points, damaged
files, a missing or hostile CURRENT, two builds at once.  After each, the index must answer
correctly (the previous build or the new one, whole) or a command must fail with one clear
`peerlint: error:` line naming the rebuild, never a traceback, a signal or a wrong answer.

Answers are checked by searching the abstracts of three indexed papers: each must come back first.
Damaged indexes are queried through `peerlint search` in a subprocess, so a crash in native code
(USearch, SQLite) is seen as a crash of peerlint, not of the harness."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .cases import CaseResult, run_case
from ...index.embedding.embedder import Embedder
from ...index.store import open_index


def _peerlint(*args: str, timeout: float = 300.0) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "peerlint", *args], capture_output=True, text=True, env=env, timeout=timeout)


def build_args(index: Path, limit: int) -> list[str]:
    return [sys.executable, "-m", "peerlint", "index", "build", "--limit", str(limit), "--index", str(index), "--quiet"]


@dataclass
class Probe:
    """Three indexed papers whose abstracts must find themselves first."""

    ids: list[str]
    abstracts: list[str]

    @classmethod
    def of(cls, index_dir: Path) -> "Probe":
        index = open_index(index_dir)
        try:
            picks = [index.paper(i) for i in (0, len(index) // 3, len(index) // 2)]
        finally:
            index.close()
        return cls([p.id for p in picks], [p.abstract for p in picks])

    def check(self, index_dir: Path, embedder, papers: set[int]) -> str:
        """Open the index in this process and ask; AssertionError when it is not whole or answers wrong."""

        index = open_index(index_dir, embedder)
        try:
            assert len(index) == index.manifest.papers and len(index) in papers, \
                f"{len(index)} papers (manifest {index.manifest.papers}), expected one of {sorted(papers)}"
            for pid, abstract in zip(self.ids, self.abstracts):
                top = index.search(abstract, k=1)
                assert top and top[0].paper.id == pid, f"searching {pid}'s abstract found {top[0].paper.id if top else None}"
            return f"{len(index)} papers, build {index.manifest.build_id}"
        finally:
            index.close()

    def check_cli(self, index_dir: Path) -> tuple[bool, str]:
        """The same question through `peerlint search` in a subprocess: (answered correctly, what happened)."""
        out = _peerlint("search", self.abstracts[0], "-k", "1", "--json", "--index", str(index_dir))
        if out.returncode == 0:
            rows = json.loads(out.stdout or "[]")
            got = rows[0].get("id") if rows else None
            return got == self.ids[0], f"answered {got!r} (expected {self.ids[0]!r})"
        return False, f"status {out.returncode}: {(out.stderr.strip().splitlines() or [''])[-1][:300]}"


def kill_builds(workdir: Path, kills: int = 20, limits: tuple[int, int] = (4000, 4500), seed: int = 18,
                progress: Callable[[str], None] = lambda m: None) -> list[CaseResult]:
    """Build once, then start builds of alternating sizes and SIGKILL each at a random point of its run
    (a complete build is timed first); after every kill the index must answer. Ends with a build that
    completes (the recovery)."""

    rng = random.Random(seed)
    index = workdir / "killed-index"
    shutil.rmtree(index, ignore_errors=True)
    first = subprocess.run(build_args(index, limits[0]), capture_output=True, text=True, timeout=600)
    if first.returncode:
        raise RuntimeError(f"the first build failed: {first.stderr[-500:]}")
    probe = Probe.of(index)
    embedder = Embedder()
    started = time.monotonic()
    timed = subprocess.run(build_args(index, limits[1]), capture_output=True, text=True, timeout=600)
    full = time.monotonic() - started
    if timed.returncode:
        raise RuntimeError(f"the timed build failed: {timed.stderr[-500:]}")
    results = []
    for i in range(kills):
        limit = limits[i % 2]
        at = rng.uniform(0.25, 1.05) * full

        def one() -> CaseResult:
            proc = subprocess.Popen(build_args(index, limit), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                finished = proc.wait(at) == 0
            except subprocess.TimeoutExpired:
                finished = False
                proc.send_signal(signal.SIGKILL)
                proc.wait(30)
            detail = probe.check(index, embedder, set(limits))
            return CaseResult("index", f"SIGKILL build {i + 1} at {at:.1f} s of {full:.1f} s", True, recovered=True,
                              detail=("finished before the kill; " if finished else "killed; ") + f"the index answers: {detail}")
        result = run_case("index", f"SIGKILL build {i + 1}", one)
        result.recovered = result.ok
        results.append(result)
        progress(f"{result.name}: {'ok' if result.ok else 'FAILED'} ({result.detail})")

    def complete() -> str:
        done = subprocess.run(build_args(index, limits[1]), capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-500:]
        return "a build after the kills completes and answers: " + probe.check(index, embedder, {limits[1]})
    results.append(run_case("index", "build after the kills", complete))
    return results


# -- damage ----------------------------------------------------------------------------------------

def _truncate(path: Path, keep: float) -> None:
    os.truncate(path, int(path.stat().st_size * keep))


def _garbage(path: Path) -> None:
    path.write_bytes(random.Random(7).randbytes(max(4096, path.stat().st_size // 4)))


def _overwrite_middle(path: Path) -> None:
    data = bytearray(path.read_bytes())
    mid = len(data) // 2
    data[mid: mid + 4096] = b"\xff" * len(data[mid: mid + 4096])
    path.write_bytes(bytes(data))


DAMAGE: list[tuple[str, Callable[[Path, Path], None]]] = [
    ("truncated vectors.usearch (half)", lambda root, b: _truncate(b / "vectors.usearch", 0.5)),
    ("truncated vectors.usearch (last 100 bytes)", lambda root, b: os.truncate(b / "vectors.usearch", (b / "vectors.usearch").stat().st_size - 100)),
    ("empty vectors.usearch", lambda root, b: os.truncate(b / "vectors.usearch", 0)),
    ("truncated vectors.npy", lambda root, b: _truncate(b / "vectors.npy", 0.9)),
    ("garbage meta.sqlite", lambda root, b: _garbage(b / "meta.sqlite")),
    ("meta.sqlite overwritten in the middle", lambda root, b: _overwrite_middle(b / "meta.sqlite")),
    ("missing meta.sqlite", lambda root, b: (b / "meta.sqlite").unlink()),
    ("garbage manifest.json", lambda root, b: (b / "manifest.json").write_text("{not json")),
    ("missing CURRENT", lambda root, b: (root / "CURRENT").unlink()),
    ("empty CURRENT", lambda root, b: (root / "CURRENT").write_text("")),
    ("CURRENT naming a missing build", lambda root, b: (root / "CURRENT").write_text("20200101T000000-abcdef")),
    ("CURRENT naming a path out of the index", lambda root, b: (root / "CURRENT").write_text("../../../../etc")),
    ("garbage embeddings.sqlite (cache)", lambda root, b: _garbage(root / "embeddings.sqlite")),
    ("leftover partial build and CURRENT.tmp", lambda root, b: (
        (root / "builds" / "20990101T000000-dead00").mkdir(), (root / "builds" / "20990101T000000-dead00" / "vectors.npy").write_bytes(b"x"),
        (root / "CURRENT.tmp999").write_text("20990101T000000-dead00"))),
]


def damaged_indexes(workdir: Path, good: Path, probe: Probe, limit: int, rebuild: set[str] | None = None) -> list[CaseResult]:
    """Each damage on a fresh copy of `good`: a clear error or a correct answer, from a subprocess; for
    the damages in `rebuild` (all when None), the rebuild the message names must then answer again."""
    results = []
    for name, damage in DAMAGE:
        def one(damage=damage) -> CaseResult:
            root = workdir / "damaged"
            shutil.rmtree(root, ignore_errors=True)
            shutil.copytree(good, root)
            damage(root, root / "builds" / (good / "CURRENT").read_text().strip())
            out = _peerlint("search", probe.abstracts[0], "-k", "1", "--json", "--index", str(root))
            crashed = out.returncode < 0 or "Traceback" in out.stderr
            clear = out.returncode == 2 and out.stderr.startswith("peerlint: error:") and "peerlint index build" in out.stderr
            rows = json.loads(out.stdout) if out.returncode == 0 and out.stdout.strip().startswith("[") else []
            right = bool(rows) and rows[0].get("id") == probe.ids[0]
            what = (f"answered correctly" if right else f"status {out.returncode}: "
                    + (out.stderr.strip().splitlines() or [""])[-1][:240])
            recovered = None
            if clear and (rebuild is None or name in rebuild):
                done = subprocess.run(build_args(root, limit), capture_output=True, text=True, timeout=600)
                recovered = done.returncode == 0 and probe.check_cli(root)[0]
                what += "; after the rebuild it names: " + ("answers" if recovered else f"still broken ({done.stderr[-200:]})")
            return CaseResult("index", name, (clear or right) and not crashed and recovered is not False, crashed=crashed,
                              recovered=recovered, detail=what)
        results.append(run_case("index", name, one))
    return results


def concurrent_builds(workdir: Path, good: Path, probe: Probe, limits: tuple[int, int]) -> CaseResult:
    """Two builds of different sizes into one index at once: both finish (or one says why) and the
    index is whole and answers."""
    def one() -> str:
        root = workdir / "concurrent"
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(good, root)
        procs = [subprocess.Popen(build_args(root, n), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                 for n in limits]
        codes = []
        for p in procs:
            _, err = p.communicate(timeout=600)
            assert p.returncode == 0 or err.startswith("peerlint: error:"), f"status {p.returncode}: {err[-400:]}"
            codes.append(p.returncode)
        ok, what = probe.check_cli(root)
        assert ok, what
        return f"statuses {codes}; the index answers: {what}"
    return run_case("index", "two builds at once", one)
