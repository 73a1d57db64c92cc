"""The privacy numbers of the DaRRM paper's experiments (Tables 2–5, 7, 9; Appendix D.1.1 and D.2.1).

Pure functions returning frozen dataclass rows; :func:`tables` gathers them for
``darrm account paper-tables`` (:mod:`darrm.accounting.cli.account`).

Per query (DaRRM with allowance m on K teachers, each (ε, Δ)-DP): (mε, mΔ).
The paper prints δ_query = 0.0001·m, which is both mΔ and 1 − (1−Δ)^m at four
decimals; we use the larger, mΔ, the value the paper states for GNMax ("δ = mΔ",
Appendix D.2.1), so the per-query budget is never understated.

Over Q queries (Table 2 for m = 3, Tables 5, 7, 9 for m = 1, 5, 7): Kairouz
general composition (:func:`darrm.accounting.composition.kairouz_general`) with
δ′ = 1e-4 — the paper's main text says "advanced composition … Table 9", but its
numbers are general composition (Theorem 2.3).  Each row also reports
what the exact optimal composition gives at the same δ_total.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from darrm import validation as v
from darrm.errors import ParameterError

from . import composition, dpsgd, gnmax

#: Teacher budgets the paper reports (DP-SGD σ=12, 5 epochs, δ=Δ=1e-4).
TEACHER_EPS: dict[str, float] = {"mnist": 0.0892, "fashion-mnist": 0.0852}
TEACHER_DELTA = dpsgd.PAPER_TEACHERS.delta
QUERIES: tuple[int, ...] = (20, 50, 100)
DELTA_PRIME = 1e-4


@dataclass(frozen=True)
class TotalBudgetRow:
    dataset: str
    m: int
    queries: int
    eps_query: float
    delta_query: float
    eps_total: float  # Kairouz general composition (the paper's number)
    delta_total: float
    eps_total_optimal: float  # exact optimal composition at the same delta_total
    eps_total_optimal_grid: float  # Kairouz Thm 3.3 grid value (= dp_accounting)


def per_query(eps_teacher: float, delta_teacher: float, m: int) -> tuple[float, float]:
    """(mε, mΔ): the per-query budget DaRRM is run at (paper §6.2)."""
    composition.simple(eps_teacher, delta_teacher, m)  # validates
    return m * eps_teacher, m * delta_teacher


def total_budget_rows(
    m: int, queries: tuple[int, ...] = QUERIES, delta_prime: float = DELTA_PRIME
) -> list[TotalBudgetRow]:
    """Rows of Table 2 (m=3) / 5 (m=1) / 7 (m=5) / 9 (m=7)."""
    rows = []
    for name, eps_t in TEACHER_EPS.items():
        eq, dq = per_query(eps_t, TEACHER_DELTA, m)
        for q in queries:
            et, dt = composition.kairouz_general(eq, dq, q, delta_prime)
            rows.append(TotalBudgetRow(
                name, m, q, eq, dq, et, dt,
                composition.optimal_homogeneous_epsilon(eq, dq, q, dt),
                composition.kairouz_optimal_discrete(eq, dq, q, dt),
            ))
    return rows


@dataclass(frozen=True)
class AllowanceRow:
    """One column of Table 3 (Appendix D.1.1, K = 35, ε = 0.1, Δ = 1e-5, δ′ = 0.1)."""

    subsampled: int  # M
    m: float  # ε_opt/ε
    tau: float
    lam: float
    eps_total: float  # mε
    delta: float


def table3_rows(
    subsampled: tuple[int, ...] = (10, 13, 15, 20), k: int = 35, eps: float = 0.1,
    delta: float = 1e-5, delta_prime: float = 0.1,
) -> list[AllowanceRow]:
    """m = ε_opt/ε and δ of the majority of M subsampled mechanisms, and the RR
    parameters τ = (general composition over K)/ε, λ = 1 − (1−Δ)^K(1−δ′) (Appendix D.1.1)."""
    tau_eps, lam = composition.kairouz_general(eps, delta, k, delta_prime)
    rows = []
    for mm in subsampled:
        e_opt, d_opt = composition.kairouz_general(eps, delta, mm, delta_prime)
        rows.append(AllowanceRow(mm, e_opt / eps, tau_eps / eps, lam, e_opt, d_opt))
    return rows


@dataclass(frozen=True)
class GNMaxRow:
    """Table 4 plus the tighter calibrations, for (mε, mΔ) per query."""

    dataset: str
    m: int
    eps_query: float
    delta_query: float
    sigma_paper: float  # "paper-rdp": 21.46 / 22.46 for m = 3
    order_paper: float  # minimising λ on the paper's grid
    order_table4: float  # λ_min + 3, what Table 4's λ column shows (errata 12)
    sigma_rdp: float
    sigma_pld: float


def gnmax_rows(ms: tuple[int, ...] = (3,)) -> list[GNMaxRow]:
    rows = []
    for name, eps_t in TEACHER_EPS.items():
        for m in ms:
            eq, dq = per_query(eps_t, TEACHER_DELTA, m)
            grid = gnmax.paper_grid(eq, dq)
            rows.append(GNMaxRow(
                name, m, eq, dq, grid.sigma, grid.order, grid.order_min + 3.0,
                gnmax.calibrate_sigma(eq, dq, "rdp"), gnmax.calibrate_sigma(eq, dq, "pld"),
            ))
    return rows


#: the tables :func:`tables` knows, in print order
TABLES: tuple[str, ...] = ("teachers", "totals", "table3", "gnmax")

#: what each table shows
TABLE_TITLES: dict[str, str] = {
    "teachers": "Teacher DP-SGD budgets (sigma=12, batch 32, 5 epochs, delta=1e-4; paper: 0.0892 / 0.0852 with PRV)",
    "totals": "Per-query and total budgets, Kairouz general composition, delta'=1e-4 (Tables 2, 5, 7, 9)",
    "table3": "Table 3: allowance m for M subsampled mechanisms (K=35, eps=0.1, member_delta=1e-5, delta'=0.1)",
    "gnmax": "GNMax sigma per query (Table 4 and tighter calibrations)",
}


def teacher_rows() -> list[dict]:
    """The paper's teachers (:func:`darrm.accounting.dpsgd.teacher_runs`) under every accountant."""
    return [
        {"dataset": n, "sample_rate": r.sample_rate, "steps": r.steps, "delta": r.delta,
         **{f"eps_{a}": r.epsilon(a) for a in dpsgd.ACCOUNTANTS}}
        for n, r in dpsgd.teacher_runs().items()
    ]


#: the paper's ensemble: K = 11 teachers (§6.2), so an allowance m lies in [1, 11]
TEACHERS = 11


def _names(name: str, values: object, options: tuple[str, ...] | None) -> tuple:
    """A non-empty tuple/list (of ``options`` when given)."""
    if not isinstance(values, (tuple, list)) or len(values) == 0:
        raise ParameterError(name, f"must be a non-empty tuple, got {values!r}")
    return tuple(values) if options is None else tuple(v.choice(name, x, options) for x in values)


def tables(which: tuple[str, ...] = TABLES, ms: tuple[int, ...] = (3,)) -> dict[str, list[dict]]:
    """The requested tables (names in :data:`TABLES`) as lists of records, for allowances ``ms``
    (integers in [1, :data:`TEACHERS`]).

    Args:
        which: the tables' names (from :data:`TABLES`).
        ms: the allowances m, integers in [1, :data:`TEACHERS`].

    Returns:
        Each requested table's name with its records.

    Raises:
        ParameterError: an unknown table name or an m out of range.
    """
    which = _names("which", which, TABLES)
    ms = tuple(v.count("ms", m, 1, TEACHERS) for m in _names("ms", ms, None))
    out: dict[str, list[dict]] = {}
    if "teachers" in which:
        out["teachers"] = teacher_rows()
    if "totals" in which:
        out["totals"] = [asdict(row) for m in ms for row in total_budget_rows(m)]
    if "table3" in which:
        out["table3"] = [asdict(r) for r in table3_rows()]
    if "gnmax" in which:
        out["gnmax"] = [asdict(r) for r in gnmax_rows(tuple(ms))]
    return out
