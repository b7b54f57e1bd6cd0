"""The `peerlint` command line: serve, index, search, check, doctor, bench, ideas.

Every command a script might parse takes `--json`. Errors a user can cause print one line
starting with `peerlint: error:` and the fix, and exit with status 2; no tracebacks.
Each command lives in `server/commands/<name>.py` and registers its own parser there; only the
module of the command being run is imported (the others are listed by their help line).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import Sequence

from .. import __version__
from ..errors import UserError
from .commands import HELP, chosen_command, load

EXIT_USAGE = 2


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser for `argv`: the full parser of the command it names, the others listed by name and help
    only (so `peerlint --help` imports no command). Without `argv`, every command's full parser (the
    docs and tests walk it)."""
    parser = argparse.ArgumentParser(
        prog="peerlint",
        description="A LaTeX writing assistant for researchers: compares a draft with published proceedings.")
    parser.add_argument("--version", action="version", version=f"peerlint {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages to stderr")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    chosen = chosen_command(argv) if argv is not None else None
    for name, help in HELP.items():
        if argv is None or name == chosen:
            load(name).register(sub, argv)
        else:
            sub.add_parser(name, help=help)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                        format="peerlint: %(levelname)s: %(message)s")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        return args.handler(args)
    except UserError as exc:
        print(f"peerlint: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("peerlint: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return _reader_gone()


def _reader_gone() -> int:
    """The reader of stdout went away (`peerlint search … | head`): exit quietly, as shell tools do.

    stdout is pointed at /dev/null so that Python's final flush cannot raise a second time.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 128 + 13  # SIGPIPE's status, like the tools in the same pipeline
