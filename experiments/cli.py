"""``darrm-experiments``: reproduce the DaRRM paper's experiments.

Subcommands come from a registry of modules, each exposing
``register(subparsers: argparse._SubParsersAction) -> None`` that adds its parsers with
``set_defaults(func=callable(args) -> int)`` (the same pattern as ``darrm``'s CLI).
Add a module's import path to :data:`REGISTRY` to add its subcommands.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from darrm.cli import OneLineErrorParser, run_main

__all__ = ["REGISTRY", "build_parser", "main"]

#: Modules whose ``register(subparsers)`` adds subcommands, in help order.
REGISTRY: list[str] = [
    "darrm.experiments.pate.cli",
    "darrm.experiments.simulations.cli",
    "darrm.experiments.disjoint.cli",
]


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineErrorParser(prog="darrm-experiments", description=__doc__.splitlines()[0])
    parser.add_argument("--debug", action="store_true", help="show the traceback of an unexpected error")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in REGISTRY:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    return run_main("darrm-experiments", args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
