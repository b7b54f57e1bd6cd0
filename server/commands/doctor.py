"""`peerlint doctor`: check every component and say how to fix what is missing."""

from __future__ import annotations

import argparse

from .common import index_arg, index_path


def register(sub) -> None:
    p = sub.add_parser("doctor", help="check every component and say how to fix what is missing")
    index_arg(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ..doctor import run_doctor

    return run_doctor(index_path(args.index), as_json=args.json)
