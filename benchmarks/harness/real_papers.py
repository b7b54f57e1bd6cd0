"""The real LaTeX papers of `tests/data/real/` and which of them lie outside the shipped corpus's fields."""

from __future__ import annotations

from pathlib import Path

REAL = Path(__file__).resolve().parents[2] / "tests" / "data" / "real"
# the papers of tests/data/real from fields no proceedings corpus of peerlint holds (systems, PL, astrophysics)
REAL_OUT_OF_FIELD = ("acmart2025-megatron", "cug2025-ebpf", "pldi2025-parallel-abstractions", "sosp2023-approximate-lsm",
                     "thesis2024-xray-spectroscopy", "usenix2023-logpedia", "usenix2024-networked-enclaves")
