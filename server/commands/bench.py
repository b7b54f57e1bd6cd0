"""`peerlint bench NAME`: the benchmarks of `benchmarks/registry.py`, one sub-command each."""

from __future__ import annotations

import argparse

from ...benchmarks.registry import BENCHMARKS
from ...errors import UserError
from . import HELP


def register(sub) -> None:
    bench = sub.add_parser("bench", help=HELP["bench"])
    bench.set_defaults(handler=_no_benchmark)
    bsub = bench.add_subparsers(dest="bench_command", metavar="BENCH")
    for b in BENCHMARKS:
        module = b.module()
        p = bsub.add_parser(b.name, help=b.help, description=b.description)
        module.add_arguments(p)
        p.set_defaults(handler=module.run)


def _no_benchmark(args: argparse.Namespace) -> int:
    names = ", ".join(f"`{b.name}`" for b in BENCHMARKS)
    raise UserError(f"choose a benchmark: `peerlint bench NAME` with NAME one of {names} (see --help)")
