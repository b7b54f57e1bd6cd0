"""Fixed-width text tables, as the CLI (`peerlint diff`, `peerlint ideas`) and the benchmarks print them,
and counts in words."""

from __future__ import annotations

from typing import Any, Sequence


def counted(n: int, word: str) -> str:
    """"1 paper", "171,277 papers": a count with its noun, plural unless one."""
    return f"{n:,} {word}{'s' * (n != 1)}"


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        if value == 0:
            return "0"
        if abs(value) >= 100:
            return f"{value:,.0f}"
        if abs(value) >= 1:
            return f"{value:.2f}"
        return f"{value:.3f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def format_table(rows: Sequence[Sequence[Any]], headers: Sequence[str]) -> str:
    """A fixed-width table: text left-aligned, numbers right-aligned."""
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    numeric = [all(isinstance(row[i], (int, float)) or row[i] is None for row in rows) and rows for i in range(len(headers))]

    def line(values: Sequence[str]) -> str:
        return "  ".join(v.rjust(w) if numeric[i] else v.ljust(w) for i, (v, w) in enumerate(zip(values, widths))).rstrip()

    return "\n".join([line(list(headers)), line(["-" * w for w in widths]), *(line(r) for r in cells)])
