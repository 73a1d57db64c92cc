"""The demo's γ_opt is not monotone in l, and that is the LP's unique optimum, not a tie.

docs/solving.md states three facts about `darrm demo` (K = 11, m = 3, ε = 0.1, Δ = 1e-5, i.i.d. 0.75
prior): γ_opt is not monotone; the LP optimum is unique (minimising and maximising each γ(l) over
the optimal face gives one value); and the best monotone table is strictly worse (0.04143 against
0.04127).  Each is re-derived here with scipy's own LP interface (HiGHS through scipy, not the
cvxpy model the solver uses) on the full set of possibly-binding rows.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog

from darrm.gamma import symmetric_from_upper
from darrm.params import PrivacyParams
from darrm.prior import IIDPrior
from darrm.privacy.certify import certify
from darrm.solver.full_lp import build_rows
from darrm.solver.gamma_opt import solve_gamma_opt
from darrm.solver.objective import expected_signed_error, objective_coefficients

PARAMS = PrivacyParams(11, 3, 0.1, 1e-5)
PRIOR = IIDPrior(0.75)
FACE = 1e-9      # objective slack that defines the optimal face (HiGHS's default tolerances are ~1e-7 on x)


@pytest.fixture(scope="module")
def lp():
    rows = build_rows(PARAMS)
    c, const = objective_coefficients(PARAMS.K, PRIOR)
    return rows, np.full(len(rows), PARAMS.rhs), c, const


def _solve(c, A, b):
    r = linprog(c, A_ub=A, b_ub=b, bounds=[(0.0, 1.0)] * len(c), method="highs")
    assert r.status == 0, r.message
    return r


def test_demo_gamma_opt_is_not_monotone():
    g = solve_gamma_opt(PARAMS, PRIOR).gamma
    upper = g[(PARAMS.K + 1) // 2:]
    assert np.any(np.diff(upper) < -0.1)   # γ(7) ≈ 0.54 < γ(6) ≈ 0.94


def test_demo_lp_optimum_is_unique(lp):
    rows, b, c, _ = lp
    best = _solve(c, rows, b)
    A = np.vstack([rows, c[None, :]])
    bb = np.append(b, best.fun + FACE)
    for i in range(len(c)):
        e = np.zeros(len(c))
        e[i] = 1.0
        lo, hi = _solve(e, A, bb).fun, -_solve(-e, A, bb).fun
        assert hi - lo < 1e-5, (i, lo, hi)
    np.testing.assert_allclose(symmetric_from_upper(best.x, PARAMS.K), solve_gamma_opt(PARAMS, PRIOR).gamma,
                               atol=1e-5)


def test_best_monotone_table_is_strictly_worse(lp):
    rows, b, c, const = lp
    n = len(c)
    mono = np.eye(n, k=0)[:-1] - np.eye(n, k=1)[:-1]          # γ(l) − γ(l+1) ≤ 0
    best = _solve(c, rows, b)
    m = _solve(c, np.vstack([rows, mono]), np.append(b, np.zeros(n - 1)))
    # shrunk toward γ ≡ 0 (strictly feasible: every row is linear in γ with rhs > 0) by 1e-9, so that
    # HiGHS's ~1e-14 row slack cannot fail the rigorous certificate; the error moves by < 1e-9
    g_mono = symmetric_from_upper(np.clip(m.x, 0.0, 1.0) * (1.0 - 1e-9), PARAMS.K)
    assert np.all(np.diff(g_mono[(PARAMS.K + 1) // 2:]) >= -1e-9)
    assert certify(g_mono, PARAMS).certified                 # a private competitor, independently checked
    e_opt, e_mono = best.fun + const, expected_signed_error(g_mono, PRIOR)
    assert e_opt == pytest.approx(0.04127, abs=5e-6) and e_mono == pytest.approx(0.04143, abs=5e-6)
    assert e_mono > e_opt + 1e-4
