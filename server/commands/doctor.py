"""`peerlint doctor`: check every component and say how to fix what is missing."""

from __future__ import annotations

from typing import Sequence

import argparse

from pathlib import Path

from .common import index_arg, index_path, load_settings
from ..doctor import run_doctor
from . import HELP


def register(sub, argv: Sequence[str] | None = None) -> None:
    p = sub.add_parser("doctor", help=HELP["doctor"])
    index_arg(p)
    p.add_argument("--settings", type=Path, help="JSON file of settings (backend, model, ollamaHost), as the editor would send them")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    settings = load_settings(args.settings)
    index = args.index or (Path(settings.index_path) if settings.index_path else None)
    return run_doctor(index_path(index), as_json=args.json, backend=settings.backend,
                      model=settings.model or None, host=settings.ollama_host or None)
