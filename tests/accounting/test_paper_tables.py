"""Every privacy number of the paper's Tables 2–5, 7, 9 to its printed digits (spec §3.3–3.5)."""

from __future__ import annotations

import pytest

from darrm.accounting import paper

# (dataset, m, Q) -> (eps_query, delta_query, eps_total, delta_total) as printed
PRINTED = {
    # Table 5 (m = 1)
    ("mnist", 1, 20): (0.0892, 0.0001, 1.704, 0.002),
    ("mnist", 1, 50): (0.0892, 0.0001, 2.837, 0.005),
    ("mnist", 1, 100): (0.0892, 0.0001, 4.202, 0.010),
    ("fashion-mnist", 1, 20): (0.0852, 0.0001, 1.620, 0.002),
    ("fashion-mnist", 1, 50): (0.0852, 0.0001, 2.695, 0.005),
    ("fashion-mnist", 1, 100): (0.0852, 0.0001, 3.988, 0.010),
    # Table 2 (m = 3)
    ("mnist", 3, 20): (0.2676, 0.0003, 5.352, 0.006),
    ("mnist", 3, 50): (0.2676, 0.0003, 9.901, 0.015),
    ("mnist", 3, 100): (0.2676, 0.0003, 15.044, 0.030),
    ("fashion-mnist", 3, 20): (0.2556, 0.0003, 5.112, 0.006),
    ("fashion-mnist", 3, 50): (0.2556, 0.0003, 9.382, 0.015),
    ("fashion-mnist", 3, 100): (0.2556, 0.0003, 14.219, 0.030),
    # Table 7 (m = 5)
    ("mnist", 5, 20): (0.4460, 0.0005, 8.920, 0.010),
    ("mnist", 5, 50): (0.4460, 0.0005, 18.428, 0.025),
    ("mnist", 5, 100): (0.4460, 0.0005, 28.926, 0.049),
    ("fashion-mnist", 5, 20): (0.4260, 0.0005, 8.520, 0.010),
    ("fashion-mnist", 5, 50): (0.4260, 0.0005, 17.398, 0.025),
    ("fashion-mnist", 5, 100): (0.4260, 0.0005, 27.223, 0.049),
    # Table 9 (m = 7)
    ("mnist", 7, 20): (0.6244, 0.0007, 12.488, 0.014),
    ("mnist", 7, 50): (0.6244, 0.0007, 28.392, 0.035),
    ("mnist", 7, 100): (0.6244, 0.0007, 45.683, 0.068),
    ("fashion-mnist", 7, 20): (0.5964, 0.0007, 11.928, 0.014),
    ("fashion-mnist", 7, 50): (0.5964, 0.0007, 26.738, 0.035),
    ("fashion-mnist", 7, 100): (0.5964, 0.0007, 42.873, 0.068),
}


@pytest.mark.parametrize("m", [1, 3, 5, 7])
def test_total_budgets_match_printed_tables(m):
    rows = paper.total_budget_rows(m)
    assert len(rows) == 6
    for r in rows:
        eq, dq, et, dt = PRINTED[(r.dataset, r.m, r.queries)]
        assert (round(r.eps_query, 4), round(r.delta_query, 4)) == (eq, dq)
        assert (round(r.eps_total, 3), round(r.delta_total, 3)) == (et, dt)


@pytest.mark.parametrize("m", [1, 3, 5, 7])
def test_optimal_composition_never_exceeds_the_papers_totals(m):
    for r in paper.total_budget_rows(m):
        assert r.eps_total_optimal <= r.eps_total_optimal_grid <= r.eps_total + 1e-12


def test_optimal_composition_for_table2_runs():
    got = {(r.dataset, r.queries): round(r.eps_total_optimal, 3) for r in paper.total_budget_rows(3)}
    assert got == {("mnist", 20): 4.268, ("mnist", 50): 7.946, ("mnist", 100): 12.597,
                   ("fashion-mnist", 20): 4.067, ("fashion-mnist", 50): 7.534, ("fashion-mnist", 100): 11.826}


def test_table3_allowances():
    rows = paper.table3_rows()
    assert [round(r.m, 4) for r in rows] == [6.4521, 7.5742, 8.2708, 9.8823]
    assert {round(r.tau, 4) for r in rows} == {14.0328}
    assert {round(r.lam, 4) for r in rows} == {0.1003}
    assert [round(r.eps_total, 4) for r in rows] == [0.6452, 0.7574, 0.8271, 0.9882]
    assert [round(r.delta, 4) for r in rows] == [0.1001, 0.1001, 0.1001, 0.1002]


def test_table4_gnmax_rows():
    rows = {r.dataset: r for r in paper.gnmax_rows((3,))}
    mnist, fashion = rows["mnist"], rows["fashion-mnist"]
    assert round(mnist.sigma_paper, 2) == 21.46 and round(mnist.order_table4, 2) == 34.31
    assert round(fashion.sigma_paper, 2) == 22.46 and round(fashion.order_table4, 2) == 35.74
    for r in rows.values():
        assert r.sigma_paper > r.sigma_rdp > r.sigma_pld
    assert round(rows["mnist"].sigma_pld, 2) == 12.90 and round(rows["fashion-mnist"].sigma_pld, 2) == 13.43
    assert round(rows["mnist"].sigma_rdp, 2) == 14.63 and round(rows["fashion-mnist"].sigma_rdp, 2) == 15.23
