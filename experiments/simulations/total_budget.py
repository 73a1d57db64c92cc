"""Simulations at equal TOTAL budget: per-query γ_opt, γ_Sub and γ_const at
their best m vs the γ designed for the total budget (:func:`darrm.design_for_budget`).

Setting: Figure 2's members (K = 11, ε = 0.1, Δ = 1e-5), the i.i.d. prior μ = 0.75, Q queries
answered with fresh member randomness, every candidate's Q-fold composition computed from its own
exact privacy profile (darrm's one accountant, :mod:`darrm.accounting.queries`).  Two total δ: 1e-5,
and the paper's, i.e.
what Q queries of Figure 2's γ_opt at m = 3 spend, δ_total = 1 − (1 − δ_q)^Q with
δ_q = 1 − (1 − Δ)^3.  A family none of whose members meets the budget is reported as such
(``None``): with δ_total = 1e-5 < Q·Δ every γ whose infinite-loss mass is Δ-sized (γ_Sub, γ_opt
at the default δ) is out.

Files in ``out_dir``: ``total_budget.json`` (every row), ``total_budget.csv``, ``total_budget.md``
(the tables) and ``total_budget_error.png`` (error against total ε at Q = 100).
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from darrm.accounting.budget import design_for_budget
from darrm.atomic import atomic_write_bytes
from darrm.budget.design import BASELINE_FAMILIES
from darrm.budget.spec import TotalBudget
from darrm.numerics.delta import composed_delta
from darrm.params import PrivacyParams
from darrm.prior import IIDPrior

from ..png import pyplot, save_png
from .expected_error import iid_uniform_error

#: Figure 2's members
K, EPS, MEMBER_DELTA = 11, 0.1, 1e-5
QUERIES = (20, 50, 100, 500)
#: the table's total ε, and the plot's (at Q = 100)
TABLE_EPSILON = 2.0
PLOT_EPSILONS = (1.0, 2.0, 4.0)
PLOT_QUERIES = 100
COLUMNS = ("opt", "sub", "const", "budget")
#: one colour and marker per column, in every panel
STYLE = {"opt": ("o-", "tab:blue"), "sub": ("s--", "tab:orange"), "const": ("^:", "tab:green"),
         "budget": ("D-", "tab:red")}


def paper_delta_total(queries: int) -> float:
    """What Q queries of Figure 2's γ_opt at m = 3 spend in δ: 1 − (1 − δ_q)^Q, δ_q = 1 − (1 − Δ)^3."""
    return composed_delta(composed_delta(MEMBER_DELTA, 3.0), float(queries))


@dataclass(frozen=True)
class Row:
    """One total budget: the best feasible member of each family (None: none meets it)."""

    queries: int
    delta_label: str
    delta_total: float
    epsilon_total: float
    errors: dict  # family → (expected signed error under μ = 0.75, exact iid U[0,1] error, m or θ, composed ε)
    winner: str
    target: str

    def to_dict(self) -> dict:
        return {"queries": self.queries, "delta_label": self.delta_label, "delta_total": self.delta_total,
                "epsilon_total": self.epsilon_total, "winner": self.winner, "target": self.target,
                "families": {f: (None if v is None else dict(zip(("error_prior", "error_iid", "parameter",
                                                                   "epsilon_composed"), v, strict=True)))
                             for f, v in self.errors.items()}}


def compute_row(queries: int, delta_label: str, delta_total: float, epsilon_total: float, *, k: int = K,
                log: Callable[[str], None] | None = None) -> Row:
    """Design for one total budget and record every family's best (module docstring)."""
    d = design_for_budget(PrivacyParams(k, 1, EPS, MEMBER_DELTA), TotalBudget(epsilon_total, delta_total, queries),
                          IIDPrior())
    errors: dict = {}
    for f in BASELINE_FAMILIES:
        c = d.best.get(f)
        errors[f] = None if c is None else (c.error, iid_uniform_error(c.gamma), c.parameter, c.epsilon_total)
    w = d.winner
    errors["budget"] = (w.error, iid_uniform_error(w.gamma), w.parameter, w.epsilon_total)
    if log:
        log(f"Q={queries} δ={delta_total:.3g} ε={epsilon_total:g}: winner {w.family} error {w.error:.4f}")
    return Row(queries, delta_label, delta_total, epsilon_total, errors, w.family, w.family)


def budgets(quick: bool) -> list[tuple[int, str, float, float]]:
    """(Q, δ label, δ_total, ε_total) of the table (ε = :data:`TABLE_EPSILON`, every Q) and the plot
    (Q = 100, every ε of :data:`PLOT_EPSILONS`), both δ; ``quick``: Q = 20, ε ∈ {1, 2}, δ = 1e-5."""
    if quick:
        return [(20, "1e-5", 1e-5, e) for e in (1.0, 2.0)]
    out = []
    for label, fn in (("1e-5", lambda q: 1e-5), ("paper", paper_delta_total)):
        for q in QUERIES:
            out.append((q, label, fn(q), TABLE_EPSILON))
        for e in PLOT_EPSILONS:
            if e != TABLE_EPSILON:
                out.append((PLOT_QUERIES, label, fn(PLOT_QUERIES), e))
    return out


def _cell(v: tuple | None) -> str:
    return "—" if v is None else f"{v[0]:.4f} / {v[1]:.4f} (m={v[2]:.3g})" if v[2] >= 1 else \
        f"{v[0]:.4f} / {v[1]:.4f} (θ={v[2]:.3g})"


def markdown(rows: list[Row]) -> str:
    """One table per δ label: error under μ = 0.75 / exact i.i.d. U[0,1] error of each family's best."""
    lines = []
    for label in dict.fromkeys(r.delta_label for r in rows):
        lines += [f"### δ_total = {label}", "",
                  "| Q | ε_total | δ_total | γ_opt best m | γ_Sub best m | γ_const best m | total-budget γ | winner |",
                  "|---|---|---|---|---|---|---|---|"]
        for r in sorted((r for r in rows if r.delta_label == label), key=lambda r: (r.queries, r.epsilon_total)):
            cells = " | ".join(_cell(r.errors[f]) for f in COLUMNS)
            lines.append(f"| {r.queries} | {r.epsilon_total:g} | {r.delta_total:.3g} | {cells} | {r.winner} |")
        lines.append("")
    return "\n".join(lines)


def plot(rows: list[Row], path: Path) -> None:
    """Error (μ = 0.75) against total ε at Q = 100, one panel per δ label."""
    plt = pyplot("the total-budget plot")
    labels = list(dict.fromkeys(r.delta_label for r in rows))
    fig, axes = plt.subplots(1, len(labels), figsize=(4.6 * len(labels), 3.6), squeeze=False, layout="constrained")
    for ax, label in zip(axes[0], labels, strict=True):
        sel = sorted((r for r in rows if r.delta_label == label and r.queries == max(
            (x.queries for x in rows if x.delta_label == label and x.queries <= PLOT_QUERIES), default=0)),
            key=lambda r: r.epsilon_total)
        for f in COLUMNS:
            pts = [(r.epsilon_total, r.errors[f][0]) for r in sel if r.errors[f] is not None]
            if pts:
                ax.plot(*zip(*pts, strict=True), STYLE[f][0], color=STYLE[f][1], mfc="none" if f == "budget" else None,
                        label="total-budget γ" if f == "budget" else f"γ_{f} (best m)")
        q = sel[0].queries if sel else PLOT_QUERIES
        ax.set_title(f"K={K}, Q={q}, δ_total={label}")
        ax.set_xlabel("total ε")
        ax.set_ylabel("expected error (i.i.d. μ = 0.75)")
        ax.legend(fontsize=8)
    save_png(fig, path, dpi=110)


def run(out_dir: str | Path, quick: bool = False, log: Callable[[str], None] | None = None) -> list[Path]:
    """Compute every budget (:func:`budgets`) and write the files (module docstring)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    k = 5 if quick else K
    rows = [compute_row(q, lab, dt, e, k=k, log=log) for q, lab, dt, e in budgets(quick)]
    data = {"K": k, "epsilon": EPS, "member_delta": MEMBER_DELTA, "prior": IIDPrior().to_dict(),
            "rows": [r.to_dict() for r in rows]}
    paths = [out / f"total_budget{suffix}" for suffix in (".json", ".csv", ".md", "_error.png")]
    atomic_write_bytes(paths[0], json.dumps(data, indent=1, allow_nan=False).encode() + b"\n")
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["queries", "delta_total", "epsilon_total", "family", "error_prior", "error_iid", "parameter",
                "epsilon_composed"])
    for r in rows:
        for f in COLUMNS:
            v = r.errors[f]
            w.writerow([r.queries, repr(r.delta_total), repr(r.epsilon_total), f,
                        *(("", "", "", "") if v is None else (repr(float(x)) if math.isfinite(x) else "" for x in v))])
    atomic_write_bytes(paths[1], buf.getvalue().encode())
    atomic_write_bytes(paths[2], (markdown(rows) + "\n").encode())
    plot(rows, paths[3])
    return paths
