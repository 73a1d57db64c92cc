"""``darrm account-votes``: central privacy of an aggregation round of shuffled RR votes.

K members report through ε0-RR (binary, or k-ary with ``--classes``); a shuffler hides who
sent what.  Prints the record of :func:`darrm.accounting.votes.account_votes`: the per-query
(ε, δ) (exact for binary RR, best valid shuffle bound for k-RR), the total over ``--Q``
queries (binary: the composed privacy-loss distribution of the count; k-ary: optimal
composition), and with ``--target-eps`` the largest ε0 that meets (target ε, δ) over the Q queries.
``--json`` keys follow :mod:`darrm.json_vocabulary` (``epsilon0``, ``epsilon_query``, ``queries`` …).
"""

from __future__ import annotations

import argparse
import sys

from darrm.validation import count_arg

from . import print_json


def run(args: argparse.Namespace) -> int:
    from ..votes import account_votes

    rec = account_votes(args.K, args.eps0, args.delta, args.classes, args.Q, args.target_eps, args.target_delta)
    if args.json:
        print_json(rec)
        return 0
    w = sys.stdout.write
    queries = f"{rec['Q']} quer{'y' if rec['Q'] == 1 else 'ies'}"
    w(f"shuffled {rec['classes']}-RR votes from K={rec['K']} members, {queries}\n")
    if "eps_query" in rec:
        how = "exact hockey-stick divergence" if rec["method"] == "exact" else f"best valid bound: {rec['method']}"
        w(f"  eps0={rec['eps0']:g}: per query ({rec['eps_query']:.6g}, {rec['delta_query']:.3g})-DP [{how}]\n")
        if rec["Q"] > 1:
            w(f"  over Q={rec['Q']} ({rec['composition']}): ({rec['eps_total']:.6g}, {rec['delta_total']:.3g})-DP\n")
    if "largest_eps0" in rec:
        w(f"  largest eps0 for ({rec['target_eps']:g}, {rec['target_delta']:.3g})-DP over Q={rec['Q']}: "
          f"{rec['largest_eps0']:.6g}\n")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``account-votes`` subcommand to the ``darrm`` CLI."""
    p = subparsers.add_parser(
        "account-votes", help="central (ε, δ) of shuffled randomised-response votes",
        description="Central (ε, δ) of K members voting through ε0-randomised response behind a shuffler "
                    "(exact for binary RR), composed over Q queries; with --target-eps, the largest ε0 "
                    "that meets the target (docs/disjoint.md).")
    p.add_argument("--K", type=count_arg, required=True, help="number of members (voters)")
    p.add_argument("--eps0", type=float, default=None,
                   help="local RR budget ε0 (default: none; then --target-eps is required)")
    p.add_argument("--classes", type=count_arg, default=2, help="number of classes (k-RR)")
    p.add_argument("--Q", type=count_arg, default=1, help="number of queries (rounds)")
    p.add_argument("--delta", type=float, default=1e-6, help="per-query δ")
    p.add_argument("--target-eps", type=float, default=None,
                   help="also report the largest ε0 meeting this total ε over Q queries (default: none)")
    p.add_argument("--target-delta", type=float, default=None,
                   help="total δ of the target (default: δ for Q=1, else 1-(1-δ)^(Q+1))")
    p.add_argument("--json", action="store_true", help="print a JSON record")
    p.set_defaults(func=run)
