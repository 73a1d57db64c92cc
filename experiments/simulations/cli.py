"""``darrm-experiments simulations``: regenerate the DaRRM paper's simulation figures.

    darrm-experiments simulations --out DIR [--figures 2,6,7,8,9] [--quick]

Progress (one line per figure) is logged to the ``darrm`` logger (stderr; ``--quiet`` hides it);
the written files are listed on stdout.
"""

from __future__ import annotations

import argparse

from darrm.logs import get_logger
from darrm.paths import check_output_dirs


def _run(args: argparse.Namespace) -> int:
    check_output_dirs({"out": args.out})
    from .runner import parse_figures, run_all

    parse_figures(args.figures)  # a bad --figures is refused before anything is computed
    written = run_all(args.out, args.figures, args.quick, log=get_logger("experiments.simulations").info)
    for key, paths in written.items():
        print(f"{key}: " + " ".join(paths))
    return 0


def _subcommand(subparsers: argparse._SubParsersAction, name: str, help: str, description: str, quick: str,
                func) -> argparse.ArgumentParser:
    p = subparsers.add_parser(name, help=help, description=description)
    p.add_argument("--out", required=True, help="output directory (created if missing)")
    p.add_argument("--quick", action="store_true", help=quick)
    p.set_defaults(func=func)
    return p


def register(subparsers: argparse._SubParsersAction) -> None:
    p = _subcommand(
        subparsers, "simulations",
        "regenerate the paper's simulation figures (Figs 2, 6-9, Table 3) as PNG/CSV/JSON",
        "Regenerate Figures 2, 6, 7, 8, 9 and Table 3 of the DaRRM paper. Errors are exact "
        "(i.i.d. mechanisms, and product laws on one side of 1/2); the U[0,1]^K panel is a seeded Monte-Carlo "
        "estimate shown with its standard error.",
        "fewer panels and Monte-Carlo draws (for CI)", _run)
    p.add_argument("--figures", default=None, help="comma-separated subset of 2,6,7,8,9 (default: all)")
    _subcommand(
        subparsers, "simulations-total-budget",
        "compare γ_opt, γ_Sub, γ_const (best m) and the total-budget γ at equal TOTAL (ε, δ) over Q queries",
        "Figure 2's members (K = 11, ε = 0.1, Δ = 1e-5) at equal total budget: δ_total ∈ {1e-5, the "
        "paper's}, Q ∈ {20, 50, 100, 500} at ε_total = 2, and ε_total ∈ {1, 2, 4} at Q = 100; every candidate "
        "certified by the Q-fold composition of its own privacy profile (several minutes).",
        "K = 5, Q = 20, δ_total = 1e-5 only (for CI)", _run_total_budget)


def _run_total_budget(args: argparse.Namespace) -> int:
    check_output_dirs({"out": args.out})
    from .total_budget import run

    for path in run(args.out, args.quick, log=get_logger("experiments.simulations").info):
        print(path)
    return 0
