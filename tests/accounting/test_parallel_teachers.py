"""Parallel composition of teachers on disjoint shards (darrm.accounting.disjoint)."""

from __future__ import annotations

import pytest

from darrm.accounting import composition
from darrm.accounting.disjoint import paper_parallel_rows, teacher_majority_budget
from darrm.errors import ParameterError


def test_unnoised_majority_costs_the_teachers_epsilon_once_for_any_number_of_queries():
    budgets = [(0.0892, 1e-4)] * 11
    for q in (1, 100, 10**6):
        assert teacher_majority_budget(budgets, q) == composition.parallel(budgets) == (0.0892, 1e-4)


def test_mnist_row_beside_the_papers_table_2():
    rows = {(r.dataset, r.queries): r for r in paper_parallel_rows()}
    r = rows[("mnist", 100)]
    assert (r.eps_parallel, r.delta_parallel) == (0.0892, 1e-4)
    assert r.eps_paper == pytest.approx(15.044, abs=5e-4) and r.delta_paper == pytest.approx(0.030, abs=5e-4)
    f = rows[("fashion-mnist", 100)]
    assert (f.eps_parallel, f.delta_parallel) == (0.0852, 1e-4) and f.eps_paper == pytest.approx(14.219, abs=5e-4)


def test_heterogeneous_teachers_take_the_worst_budget():
    assert teacher_majority_budget([(0.1, 1e-5), (0.3, 1e-6)], 7) == (0.3, 1e-5)


def test_bad_input_names_the_parameter():
    with pytest.raises(ParameterError, match="queries"):
        teacher_majority_budget([(0.1, 1e-5)], 0)
    with pytest.raises(ParameterError, match="budgets"):
        teacher_majority_budget([], 3)
