"""Thin command lines of darrm.accounting (argument parsing and printing only).

Registered as subcommands of ``darrm`` through the ``darrm.commands`` entry points:
``account`` (:mod:`.account`), ``shuffle`` (:mod:`.shuffle`), ``account-votes`` (:mod:`.votes`).
Everything they print is computed by a library function of :mod:`darrm.accounting`, imported
when the subcommand runs (building the parser loads no numerical library); ``--json`` output goes
through :func:`darrm.cli_conventions.print_json` (keys: :mod:`darrm.json_vocabulary`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from darrm.cli_conventions import print_json as print_json


def number(x: Any) -> str:
    """How the accounting commands write a number: 6 significant digits, small ones in e-notation."""
    if isinstance(x, float):
        return f"{x:.6g}" if abs(x) >= 1e-3 or x == 0 else f"{x:.4e}"
    return str(x)


def print_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None = None) -> None:
    """A table through :func:`darrm.report.format_table` (string columns left-aligned)."""
    from darrm.report import format_table

    sys.stdout.write(format_table(headers, rows, number_format=number, left_strings=True, title=title) + "\n")


def parse_count(name: str, text: str) -> int:
    """A count given on the command line (``1e6``, ``1_000``), as :func:`darrm.validation.count_arg`
    reads it, refused with a :class:`~darrm.errors.ParameterError` naming ``name``."""
    import argparse

    from darrm import validation as v
    from darrm.errors import ParameterError

    try:
        return v.count(name, v.count_arg(text))
    except argparse.ArgumentTypeError as exc:
        raise ParameterError(name, str(exc)) from None
