"""Placeholder until the module lands: registers its arguments, refuses to run."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of this command (called while the CLI parser is built: keep imports light)."""


def run(args: argparse.Namespace) -> int:
    from .cli import UserError

    raise UserError("not implemented yet")
