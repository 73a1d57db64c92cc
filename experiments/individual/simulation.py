"""The shared-data simulation: members with their own budgets (:mod:`darrm.models.groups`) at several splits.

K = 11 members on shared data, k of them (0.1, 1e-5)-DP and 11 − k (0.3, 1e-5)-DP, per-query target
(0.5, 1e-4), objective prior i.i.d. 0.75.  For each split: γ_opt(L) certified for the groups, and
the same target with every member at the worst budget (0.3) and at the best (0.1), a lower bound.
"""

from __future__ import annotations

import darrm

__all__ = ["simulate_splits"]

K, BETTER, WORSE, DELTA, TARGET, PRIOR_MEAN = 11, 0.1, 0.3, 1e-5, (0.5, 1e-4), 0.75


def _error(groups: list[tuple[int, float, float]]) -> float:
    table = darrm.solve(darrm.GroupParams(groups, *TARGET), darrm.IIDPrior(PRIOR_MEAN))
    assert darrm.certify(table.gamma, table.params).certified and table.objective is not None
    return float(table.objective)


def simulate_splits(splits: tuple[int, ...]) -> list[dict]:
    """One row per split k (members at the better budget): the expected errors of γ_opt for the groups,
    for every member at the worst budget, and for every member at the best."""
    worst = _error([(K, WORSE, DELTA)])
    best = _error([(K, BETTER, DELTA)])
    return [{"better": k, "worse": K - k, "groups": _error([(k, BETTER, DELTA), (K - k, WORSE, DELTA)]),
             "all_at_worst": worst, "all_at_best": best} for k in splits]
