"""The real LaTeX papers of `tests/data/real/` and which of them lie outside the shipped corpus's fields."""

from __future__ import annotations

import re
from pathlib import Path

REAL = Path(__file__).resolve().parents[2] / "tests" / "data" / "real"
# the papers of tests/data/real from fields no proceedings corpus of peerlint holds (systems, PL, astrophysics)
REAL_OUT_OF_FIELD = ("acmart2025-megatron", "cug2025-ebpf", "pldi2025-parallel-abstractions", "sosp2023-approximate-lsm",
                     "thesis2024-xray-spectroscopy", "usenix2023-logpedia", "usenix2024-networked-enclaves")


def real_papers(root: Path = REAL) -> list[tuple[str, Path]]:
    """(folder, root file) of every paper of tests/data/real, read from its README's table."""
    table = (root / "README.md").read_text(encoding="utf-8") if (root / "README.md").is_file() else ""
    found = re.findall(r"^\| `([\w.-]+)` \|[^|\n]*\|[^|\n]*\| `([^`]+)` \|", table, re.M)
    return [(folder, root / folder / file) for folder, file in found if (root / folder / file).is_file()]
