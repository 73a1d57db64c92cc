"""Item 5 of issue 22: the equal-total-budget comparison rows (small K, fast)."""

from __future__ import annotations

import math

import mpmath

from darrm.experiments.simulations.total_budget import budgets, compute_row, markdown, paper_delta_total


def test_paper_delta_total_is_what_q_queries_of_figure_2_spend():
    mpmath.mp.dps = 50
    dq = 1 - (1 - mpmath.mpf(1e-5)) ** 3
    assert math.isclose(paper_delta_total(100), float(1 - (1 - dq) ** 100), rel_tol=1e-12)


def test_row_ranks_the_total_budget_gamma_no_worse_than_every_feasible_family():
    row = compute_row(3, "test", 1e-3, 1.5, k=5)
    budget = row.errors["budget"]
    assert budget[3] <= 1.5
    for f in ("opt", "sub", "const"):
        v = row.errors[f]
        if v is not None:
            assert v[3] <= 1.5 and budget[0] <= v[0] + 1e-15
    assert "| 3 | 1.5 |" in markdown([row])


def test_full_grid_has_every_q_and_both_deltas():
    b = budgets(quick=False)
    assert {q for q, *_ in b} == {20, 50, 100, 500} and {lab for _, lab, *_ in b} == {"1e-5", "paper"}
