"""``darrm shuffle``: a table (or JSON) of every shuffle bound, and an ε-vs-n plot.

    darrm shuffle --n 1e6 --eps0 1,2,4 --delta 1e-6 [--k 10] [--json] [--plot PNG]

Without ``--k`` the randomizer is a generic ε0-LDP one; with ``--k K`` it is K-ary
randomized response (K = 2: binary RR) and every bound, upper and lower, is for
that randomizer.  JSON output: a list of records ``{"method", "bound", "valid",
"eps", "delta", "eps0", "n", "note"}``, one per method and ε0; records with
``"valid": false`` are published results whose proof is known to be broken, shown
for comparison only.
"""

from __future__ import annotations

import argparse
import json
import math
import sys

from darrm.errors import ParameterError

from .best import all_bounds
from .randomizers import GenericLDP, RandomizedResponse


def _parse_n(text: str) -> int:
    try:
        v = float(text)
    except ValueError:
        raise ParameterError("n", f"not a number: {text!r}") from None
    if not math.isfinite(v) or v != int(v) or v < 1:
        raise ParameterError("n", f"must be an integer >= 1, got {text}")
    return int(v)


def _parse_eps0(text: str) -> list[float]:
    try:
        vals = [float(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise ParameterError("eps0", f"not a comma-separated list of numbers: {text!r}") from None
    if not vals or any(not math.isfinite(v) or v <= 0 for v in vals):
        raise ParameterError("eps0", f"must be numbers > 0, got {text!r}")
    return vals


def _randomizer(eps0: float, k: int | None):
    if k is None:
        return GenericLDP(eps0)
    return RandomizedResponse(eps0, k)


def _records(n: int, eps0s: list[float], delta: float, k: int | None) -> list[dict]:
    recs = []
    for e0 in eps0s:
        for b in all_bounds(_randomizer(e0, k), n, delta=delta, include_invalid=True):
            r = b.as_record()
            r.update(eps0=e0, n=n)
            recs.append(r)
    return recs


def _plot(path: str, n: int, eps0s: list[float], delta: float, k: int | None) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # optional dependency
        raise ParameterError("plot", "matplotlib is not installed (pip install darrm[plot])") from None
    import numpy as np

    ns = np.unique(np.logspace(2, math.log10(max(n, 200)), 7).astype(int))
    fig, axes = plt.subplots(1, len(eps0s), figsize=(5 * len(eps0s), 4), squeeze=False)
    for ax, e0 in zip(axes[0], eps0s):
        series: dict[tuple[str, str], list[tuple[int, float]]] = {}
        for m in ns:
            for b in all_bounds(_randomizer(e0, k), int(m), delta=delta):
                series.setdefault((b.method, b.kind), []).append((int(m), b.eps))
        for (meth, kind), pts in sorted(series.items()):
            xs, ys = zip(*pts)
            ax.plot(xs, ys, "-o" if kind == "upper" else "--x", label=f"{meth} ({kind})", ms=3)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("n")
        ax.set_ylabel(f"eps at delta={delta:g}")
        ax.set_title(("generic" if k is None else f"{k}-RR") + f", eps0={e0:g}")
        ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def run(args: argparse.Namespace) -> int:
    n = _parse_n(args.n)
    eps0s = _parse_eps0(args.eps0)
    delta = float(args.delta)
    if not 0 < delta < 1:
        raise ParameterError("delta", f"must lie in (0, 1), got {args.delta}")
    if args.k is not None and args.k < 2:
        raise ParameterError("k", f"must be an integer >= 2, got {args.k}")
    recs = _records(n, eps0s, delta, args.k)
    if args.json:
        json.dump(recs, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        what = "generic eps0-LDP" if args.k is None else f"{args.k}-ary randomized response"
        print(f"shuffle amplification, n={n}, delta={delta:g}, {what}")
        print(f"{'eps0':>6} {'method':<26} {'bound':<6} {'valid':<6} {'eps':>12}")
        for r in recs:
            print(f"{r['eps0']:>6g} {r['method']:<26} {r['bound']:<6} {str(r['valid']):<6} {r['eps']:>12.6g}")
    if args.plot:
        _plot(args.plot, n, eps0s, delta, args.k)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``shuffle`` subcommand to the ``darrm`` CLI."""
    p = subparsers.add_parser("shuffle", help="privacy amplification by shuffling: every bound")
    p.add_argument("--n", required=True, help="number of users (e.g. 1e6)")
    p.add_argument("--eps0", required=True, help="local budget(s), comma-separated (e.g. 1,2,4)")
    p.add_argument("--delta", required=True, type=float, help="target delta of the shuffled protocol")
    p.add_argument("--k", type=int, default=None, help="k-ary randomized response (default: generic eps0-LDP)")
    p.add_argument("--json", action="store_true", help="print JSON records instead of a table")
    p.add_argument("--plot", metavar="PNG", default=None, help="also plot eps vs n per method")
    p.set_defaults(func=run)
