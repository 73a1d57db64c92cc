"""Markdown summary of a computed figure (one table per actual distribution)."""

from __future__ import annotations

from .compute import FigureResult


def _fmt(v: float, se: float = 0.0) -> str:
    return f"{v:.4f} ± {se:.4f}" if se else f"{v:.4f}"


def figure_markdown(res: FigureResult) -> str:
    cfg = res.config
    lines = [f"### {cfg.title}", ""]
    names = [c.name for c in res.panels[0].curves]
    mu = cfg.objective_means
    head = ["panel", "γ", "certified (max violation)"] + [f"LP objective μ={m}" for m in mu]
    for a in cfg.actuals:
        methods = sorted({e.method for pr in res.panels for e in pr.expected if e.actual == a.name})
        head += [f"E {a.name} [{m}]" for m in methods]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for pr in res.panels:
        for n in names:
            c = pr.curve(n)
            row = [pr.label, f"γ_{n}", f"{'yes' if c.certified else 'NO'} ({c.violation:.1e})"]
            row += [f"{c.objectives[m]:.6f}" for m in mu]
            for a in cfg.actuals:
                expected = (e for e in pr.expected if e.curve == n and e.actual == a.name)
                for e in sorted(expected, key=lambda e: e.method):
                    row.append(_fmt(e.value, e.se))
            lines.append("| " + " | ".join(row) + " |")
    lines += ["", "Methods: `exact` = p_i i.i.d. from the actual law, exact (point mass or interval on one side of ½); "
              "`iid-exact` = p_1 = … = p_K = p with p from the actual law, exact quadrature; "
              f"`product-mc` = p_i i.i.d., Monte Carlo, {cfg.mc_samples} draws, seed {cfg.seed} "
              "(± one standard error).", ""]
    return "\n".join(lines)
