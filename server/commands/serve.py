"""`peerlint serve`: the language server, on stdio or TCP."""

from __future__ import annotations

from typing import Sequence
from ..lsp import serve
from . import HELP

import argparse
from pathlib import Path


def register(sub, argv: Sequence[str] | None = None) -> None:
    p = sub.add_parser("serve", help=HELP["serve"])
    p.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio, e.g. 127.0.0.1:2087")
    p.add_argument("--log-file", type=Path, help="also write the server log to this file")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    return serve(tcp=args.tcp, log_file=args.log_file)
