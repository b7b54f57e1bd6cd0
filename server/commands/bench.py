"""`peerlint bench NAME`: the benchmarks of `benchmarks/registry.py`, one sub-command each."""

from __future__ import annotations

import argparse
from typing import Sequence

from ...benchmarks.registry import BENCHMARKS
from ...errors import UserError
from . import HELP, chosen_command


def register(sub, argv: Sequence[str] | None = None) -> None:
    """`bench` and a sub-command per benchmark: the full parser of the one `argv` names (of every one
    when `argv` is None), the others by name and help only, so no other benchmark's module is imported."""
    bench = sub.add_parser("bench", help=HELP["bench"])
    bench.set_defaults(handler=_no_benchmark)
    bsub = bench.add_subparsers(dest="bench_command", metavar="BENCH")
    chosen = chosen_command(argv[argv.index("bench") + 1:]) if argv is not None and "bench" in argv else None
    for b in BENCHMARKS:
        p = bsub.add_parser(b.name, help=b.help, description=b.description)
        if argv is None or b.name == chosen:
            module = b.module()
            module.add_arguments(p)
            p.set_defaults(handler=module.run)


def _no_benchmark(args: argparse.Namespace) -> int:
    names = ", ".join(f"`{b.name}`" for b in BENCHMARKS)
    raise UserError(f"choose a benchmark: `peerlint bench NAME` with NAME one of {names} (see --help)")
