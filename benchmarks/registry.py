"""Every `peerlint bench` benchmark, named once: the CLI builds its sub-commands from this list.

Each entry's module (`benchmarks/<name>/bench.py`) offers `add_arguments(parser)` and
`run(args) -> int`, and imports what it needs at its top: `peerlint bench NAME` imports only NAME's
module, and `peerlint bench --help` lists them all from this table without importing any.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType


@dataclass(frozen=True)
class Benchmark:
    name: str  # the sub-command: `peerlint bench NAME`
    help: str
    description: str | None = None

    def module(self) -> ModuleType:
        return importlib.import_module(f"{__package__}.{self.name}.bench")


BENCHMARKS = (
    Benchmark("index", "build speed, index size, search latency and recall vs exact"),
    Benchmark("embedders", "embedders that packages ship with weights vs MiniLM: title->abstract, ACM-CR R@50, CPU-s"),
    Benchmark("lsp", "language-server latency: first diagnostics, re-diagnose, sustained typing, RSS"),
    Benchmark("llm", "the embedded LLM: peerlint's prompt and generation tokens/s beside raw llama.cpp's, same model"),
    Benchmark("schnovel", "SchNovel: which of two papers of a field is more novel (Lin et al., 2024)",
              "Sample SchNovel pairs from a corpus (--sample N --out F), or evaluate methods on pairs "
              "(--pairs F --method M), both orders, with a table, JSON and a plot."),
    Benchmark("drafts", "Between the Drafts: quality and venue-style ratings (Chen et al., 2025)"),
    Benchmark("related", "SciPIP related-work retrieval: citation Recall@10..50 per retrieval stage"),
    Benchmark("tournament", "NOVA Swiss tournament on ICLR abstracts: accepted vs rejected (NOVA, Hu et al.)"),
    Benchmark("rinobench", "RINoBench: 1-5 novelty judgments of research ideas, nine metrics (Schopf & Färber)"),
    Benchmark("coverage", "how many of a LaTeX project's cited works the index holds (DOI, arXiv id, title, author+year)"),
    Benchmark("ingest", "streaming ingest of a generated 1M-record arXiv-snapshot file: papers/s and peak RSS"),
    Benchmark("robustness", "fault and abuse harness: protocol abuse, fuzzing, killed index builds, failing LLM hosts, prompt injection, load"),
)
