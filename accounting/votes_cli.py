"""``darrm account-votes``: central privacy of an aggregation round of shuffled RR votes.

K members report through ε0-RR (binary, or k-ary with ``--k``); a shuffler hides who
sent what.  Prints the per-query (ε, δ) (exact for binary RR, best valid shuffle bound
for k-RR), the total over ``--Q`` queries (binary: the composed privacy-loss distribution
of the count, :mod:`darrm.accounting.shuffled_votes_pld`; k-ary: optimal composition), and with
``--target-eps`` the largest ε0 that meets (target ε, δ) over the Q queries.
"""

from __future__ import annotations

import argparse
import json
import math
import sys

from darrm.accounting import shuffled_votes as sv
from darrm.errors import ParameterError


def account_votes(K: int, eps0: float | None, delta: float, k: int = 2, queries: int = 1,
                  target_eps: float | None = None, target_delta: float | None = None) -> dict:
    """The record printed by the CLI (also its ``--json`` output).

    The target's total δ defaults to the forward total: δ for Q = 1, else
    1 − (1−δ)^Q·(1−δ′) with δ′ = δ.
    """
    if eps0 is None and target_eps is None:
        raise ParameterError("eps0", "give --eps0, --target-eps, or both")
    out: dict = {"K": K, "k": k, "Q": queries, "delta_query": delta}
    if eps0 is not None:
        eq, method = sv.per_query_epsilon(K, eps0, delta, k)
        eg, dt = sv.compose_queries(eq, delta, queries, delta)
        et, how = eg, "optimal composition of the per-query (eps, delta)"
        if k == 2 and queries > 1:
            et, how = min(eg, sv.tight_total_epsilon(K, eps0, queries, dt)), "composed privacy-loss distribution"
        out.update(eps0=eps0, method=method, eps_query=eq, eps_total=et, delta_total=dt,
                   eps_total_generic=eg, composition=how)
    if target_eps is not None:
        dt = target_delta
        if dt is None:
            dt = delta if queries == 1 else -math.expm1((queries + 1) * math.log1p(-delta))
        out.update(target_eps=target_eps, target_delta=dt,
                   largest_eps0=sv.largest_eps0(K, target_eps, dt, queries, k=k))
    return out


def run(args: argparse.Namespace) -> int:
    rec = account_votes(args.K, args.eps0, args.delta, args.k, args.Q, args.target_eps, args.target_delta)
    if args.json:
        json.dump(rec, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    w = sys.stdout.write
    w(f"shuffled {rec['k']}-RR votes from K={rec['K']} members, {rec['Q']} quer{'y' if rec['Q'] == 1 else 'ies'}\n")
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
    p = subparsers.add_parser("account-votes", help="central (ε, δ) of shuffled randomised-response votes")
    p.add_argument("--K", type=int, required=True, help="number of members (voters)")
    p.add_argument("--eps0", type=float, default=None, help="local RR budget ε0")
    p.add_argument("--k", type=int, default=2, help="number of classes (k-RR); default 2")
    p.add_argument("--Q", type=int, default=1, help="number of queries (rounds); default 1")
    p.add_argument("--delta", type=float, default=1e-6, help="per-query δ; default 1e-6")
    p.add_argument("--target-eps", type=float, default=None,
                   help="also report the largest ε0 meeting this total ε over Q queries")
    p.add_argument("--target-delta", type=float, default=None,
                   help="total δ of the target; default: δ for Q=1, else 1-(1-δ)^(Q+1)")
    p.add_argument("--json", action="store_true", help="print a JSON record")
    p.set_defaults(func=run)
