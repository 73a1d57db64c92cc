"""Table 3 (Appendix D.1.1): the parameters of Figure 6, computed, next to the printed values.

m = ε_opt/ε with ε_opt from Kairouz et al. general composition (Theorem 2.3) over the M
subsampled mechanisms, δ = 1 − (1−Δ)^M(1−δ′); τ and λ the same over all K (Appendix D.1.1),
via :func:`darrm.accounting.paper.table3_rows`.  We add which Kairouz term is active and the
resulting p_const of γ_const (Lemma A.1).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from darrm import PrivacyParams
from darrm.accounting.composition import kairouz_terms
from darrm.accounting.paper import table3_rows
from darrm.gamma import p_const

#: Table 3 as printed in the paper (L1429–1435), for the side-by-side comparison only.
PAPER_TABLE3 = {
    10: {"m": 6.4521, "tau": 14.0328, "lam": 0.1003, "eps_total": 0.6452, "delta": 0.1001},
    13: {"m": 7.5742, "tau": 14.0328, "lam": 0.1003, "eps_total": 0.7574, "delta": 0.1001},
    15: {"m": 8.2708, "tau": 14.0328, "lam": 0.1003, "eps_total": 0.8271, "delta": 0.1001},
    20: {"m": 9.8823, "tau": 14.0328, "lam": 0.1003, "eps_total": 0.9882, "delta": 0.1002},
}


@dataclass(frozen=True)
class Table3Row:
    M: int
    m: float
    tau: float
    lam: float
    eps_total: float
    delta: float
    active_term: int  # 1, 2 or 3: which Kairouz term is the minimum for m
    p_const: float
    paper: dict | None


def table3(K: int = 35, eps: float = 0.1, Delta: float = 1e-5, delta_prime: float = 0.1,
           subsampled: tuple[int, ...] = (10, 13, 15, 20)) -> list[Table3Row]:
    out = []
    for r in table3_rows(subsampled, K, eps, Delta, delta_prime):
        terms = kairouz_terms(eps, Delta, r.subsampled, delta_prime)
        params = PrivacyParams(K, r.m, eps, Delta, delta=r.delta)
        out.append(Table3Row(r.subsampled, r.m, r.tau, r.lam, r.eps_total, r.delta,
                             1 + min(range(3), key=terms.__getitem__), p_const(params, r.tau, r.lam),
                             PAPER_TABLE3.get(r.subsampled)))
    return out


def table3_dicts(rows: list[Table3Row]) -> list[dict]:
    return [asdict(r) for r in rows]


def table3_markdown(rows: list[Table3Row]) -> str:
    """Markdown table, computed value (printed value in parentheses when it differs at 4 dp)."""
    def cell(r: Table3Row, k: str) -> str:
        v = f"{getattr(r, k):.4f}"
        if r.paper is not None and f"{r.paper[k]:.4f}" != v:
            v += f" (paper {r.paper[k]:.4f})"
        return v

    lines = ["| M | " + " | ".join(str(r.M) for r in rows) + " |", "|---" * (len(rows) + 1) + "|"]
    for k, title in (("m", "allowance m"), ("tau", "τ"), ("lam", "λ"), ("eps_total", "mε"), ("delta", "δ")):
        lines.append(f"| {title} | " + " | ".join(cell(r, k) for r in rows) + " |")
    lines.append("| active Kairouz term | " + " | ".join(str(r.active_term) for r in rows) + " |")
    lines.append("| p_const | " + " | ".join(f"{r.p_const:.4f}" for r in rows) + " |")
    return "\n".join(lines)
