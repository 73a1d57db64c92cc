"""``darrm-experiments``: reproduce the DaRRM paper's experiments.

Subcommands come from a registry of modules, each exposing
``register(subparsers: argparse._SubParsersAction) -> None`` that adds its parsers with
``set_defaults(func=callable(args) -> int)`` (the same pattern as ``darrm``'s CLI).
Add a module's import path to :data:`REGISTRY` to add its subcommands.

The conventions of every darrm command line apply (:mod:`darrm.cli_conventions`): defaults shown
in the help, ``--progress/--no-progress``, ``-q/--quiet``, ``-v/--verbose`` and ``--debug``
before or after the subcommand, output folders checked before any computation, one-line errors.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from darrm._version import __version__
from darrm.cli_conventions import OneLineErrorParser, finish_parser, run_main, single_threaded_under_limits

__all__ = ["REGISTRY", "build_parser", "main"]

#: Modules whose ``register(subparsers)`` adds subcommands, in help order.
REGISTRY: list[str] = [
    "darrm.experiments.pate.cli",
    "darrm.experiments.simulations.cli",
    "darrm.experiments.disjoint.cli",
    "darrm.experiments.individual.cli",
]


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineErrorParser(prog="darrm-experiments", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"darrm-experiments {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in REGISTRY:
        importlib.import_module(name).register(sub)
    return finish_parser(parser)


def main(argv: list[str] | None = None) -> int:
    single_threaded_under_limits()  # before anything loads numpy
    parser = build_parser()
    args = parser.parse_args(argv)
    return run_main("darrm-experiments", args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
