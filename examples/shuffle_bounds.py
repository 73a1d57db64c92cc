"""Privacy amplification by shuffling: the central ε of n users' shuffled binary randomized
response against n, the tightest valid upper bound and the best lower bound.

Each user answers by binary randomized response with local ε0 = 1; a shuffler hides who sent
what.  ``best_upper_bound`` is the smallest *valid* upper bound over every method
(``darrm.accounting.shuffle.best.METHODS``); the true ε lies between it and the best lower bound.
The script saves a figure of both against n.

    .venv/bin/python examples/shuffle_bounds.py --out example-output
"""

from __future__ import annotations

import argparse
from pathlib import Path

from darrm.accounting import RandomizedResponse, all_bounds, best_upper_bound

EPS0, DELTA = 1.0, 1e-6
NS = (1_000, 3_000, 10_000, 30_000)


def main(out: Path) -> None:
    rr = RandomizedResponse(EPS0, k=2)
    upper, lower = [], []
    print(f"binary RR, eps0={EPS0:g}, delta={DELTA:g}")
    print(f"{'n':>7s}  {'upper':>8s}  {'lower':>8s}  method")
    for n in NS:
        best = best_upper_bound(rr, n, delta=DELTA)
        lows = [b.eps for b in all_bounds(rr, n, delta=DELTA, kinds=("lower",)) if b.valid]
        upper.append(best.eps)
        lower.append(max(lows))
        print(f"{n:7d}  {best.eps:8.4f}  {lower[-1]:8.4f}  {best.method}")
        assert lower[-1] <= best.eps <= EPS0  # a valid lower bound never exceeds a valid upper bound
    assert upper == sorted(upper, reverse=True)  # more users, more amplification

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4), layout="constrained")
    ax.plot(NS, upper, marker="o", label="best valid upper bound")
    ax.plot(NS, lower, marker="s", linestyle="--", label="best lower bound")
    ax.fill_between(NS, lower, upper, alpha=0.2, label="the true ε lies here")
    ax.set(xscale="log", yscale="log", xlabel="users n", ylabel=f"central ε (δ = {DELTA:g})",
           title=f"shuffled binary randomized response, ε0 = {EPS0:g}")
    ax.legend()
    out.mkdir(parents=True, exist_ok=True)
    fig.savefig(out / "shuffle_bounds.png", dpi=100)
    print("wrote", out / "shuffle_bounds.png")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("example-output"),
                    help="folder for the figure (default: example-output)")
    main(ap.parse_args().out)
