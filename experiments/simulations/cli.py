"""``darrm-experiments simulations``: regenerate the DaRRM paper's simulation figures.

    darrm-experiments simulations --out DIR [--figures 2,6,7,8,9] [--quick]
"""

from __future__ import annotations

import argparse
import sys

from .runner import run_all


def _run(args: argparse.Namespace) -> int:
    def log(msg: str) -> None:
        print(msg, file=sys.stderr)

    written = run_all(args.out, args.figures, args.quick, log=log)
    for key, paths in written.items():
        print(f"{key}: " + " ".join(paths))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "simulations",
        help="regenerate the paper's simulation figures (Figs 2, 6-9, Table 3) as PNG/CSV/JSON",
        description="Regenerate Figures 2, 6, 7, 8, 9 and Table 3 of the DaRRM paper. Errors are exact "
        "(i.i.d. mechanisms, and product laws on one side of 1/2); the U[0,1]^K panel is a seeded Monte-Carlo "
        "estimate shown with its standard error.",
    )
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--figures", default=None, help="comma-separated subset of 2,6,7,8,9 (default: all)")
    p.add_argument("--quick", action="store_true", help="fewer panels and Monte-Carlo draws (for CI)")
    p.set_defaults(func=_run)
