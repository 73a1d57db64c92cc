"""What Q labelled queries cost in total: each γ table's exact privacy profile composed by PLD.

Members with fresh randomness per query make every label an independent run of Algorithm 1, so
the total of Q queries is the Q-fold composition of one query's exact privacy profile
(``darrm.accounting.composed_epsilon``, dp_accounting's PLD of the table's dominating pair).  The
generic optimal composition of Q (mε, δ)-DP queries (Kairouz, Oh & Viswanath, Theorem 3.3) is
printed beside it.  The script saves a figure of ε_total against Q.

    .venv/bin/python examples/total_budget.py --out example-output
"""

from __future__ import annotations

import argparse
from pathlib import Path

import darrm
from darrm.accounting import composed_epsilon
from darrm.accounting.queries import generic_epsilon

QUERIES = (10, 30, 100)
DELTA_TOTAL = 1e-3


def main(out: Path) -> None:
    params = darrm.PrivacyParams(K=11, m=3, eps=0.1, member_delta=1e-5)
    tables = {name: darrm.solve(params, family=name, progress=False) for name in ("opt", "sub")}
    curves: dict[str, list[float]] = {}
    for name, table in tables.items():
        curves[f"γ_{name} (PLD)"] = [composed_epsilon(table, q, delta_total=DELTA_TOTAL,
                                                      member_randomness="fresh").epsilon for q in QUERIES]
    curves["generic (KOV)"] = [generic_epsilon(tables["opt"], q, DELTA_TOTAL) for q in QUERIES]
    print(f"total epsilon at delta_total={DELTA_TOTAL:g}, one query ({params.m * params.eps:g}, {params.delta:.3g})-DP")
    print("Q      " + "  ".join(f"{k:>14s}" for k in curves))
    for i, q in enumerate(QUERIES):
        print(f"{q:<6d} " + "  ".join(f"{v[i]:14.3f}" for v in curves.values()))
    for name in tables:  # a table's own profile never costs more than the generic bound
        assert all(a <= b for a, b in zip(curves[f"γ_{name} (PLD)"], curves["generic (KOV)"], strict=True))

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4), layout="constrained")
    for label, ys in curves.items():
        ax.plot(QUERIES, ys, marker="o", label=label)
    ax.set(xscale="log", xlabel="queries Q", ylabel=f"ε_total (δ_total = {DELTA_TOTAL:g})",
           title="K = 11 members, (0.1, 1e-5) each, m = 3")
    ax.legend()
    out.mkdir(parents=True, exist_ok=True)
    fig.savefig(out / "total_budget.png", dpi=100)
    print("wrote", out / "total_budget.png")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("example-output"),
                    help="folder for the figure (default: example-output)")
    main(ap.parse_args().out)
