"""An independent re-check of a recorded total budget, shared by the total-budget designers' tests
(tests/accounting/budget) and the experiments that use their tables (tests/experiments/individual).

The caller enumerates one query's worst points (x, y) = (Pr[A(D′)=o], Pr[A(D)=o]) itself (both outputs,
both directions); :func:`check_record` composes the upper concave envelope's pair Q times with
dp_accounting (its optimistic PLD, a lower bound on the exact composition, must meet the budget; a PLD
charge must not lie below it), re-checks a GDP charge point by point in mpmath and composes it
analytically, and a generic per-query charge point by point at (ε_q, δ_q), composed by dp_accounting's
(ε, δ) PLD.  It shares no code with the designers but the budget's dataclass and the hull.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np

from darrm.budget.spec import TotalBudget


def composed_pair(pts: np.ndarray, queries: int, delta: float, pessimistic: bool) -> float:
    from dp_accounting.pld import privacy_loss_distribution as pld

    from darrm.privacy.profile import upper_hull

    hx, hy = upper_hull(np.concatenate([pts[:, 0], [0.0, 1.0]]), np.concatenate([pts[:, 1], [0.0, 1.0]]))
    P, Qm = np.diff(np.concatenate([[0.0], hy])), np.diff(np.concatenate([[0.0], hx]))
    P[0] += hy[0]
    upper = {i: math.log(v) for i, v in enumerate(P) if v > 0}
    lower = {i: math.log(v) for i, v in enumerate(Qm) if v > 0}
    one = pld.from_two_probability_mass_functions(lower, upper, pessimistic_estimate=pessimistic,
                                                  value_discretization_interval=1e-5)
    return one.self_compose(queries).get_epsilon_for_delta(delta)


def check_record(pts: np.ndarray, record: dict) -> None:
    """Re-check one recorded total (module docstring) on the enumerated points ``pts`` (n, 2)."""
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    b = TotalBudget.from_dict(record)
    lower_bound = composed_pair(pts, b.queries, b.delta, pessimistic=False)
    assert lower_bound <= b.epsilon
    acc = record["accountant"]
    if acc == "dominating-pair-pld":
        # below dp_accounting's rounded-down total of the same pairs the charge would be invalid (above
        # its rounded-up one it is only loose: the accountant's grid is coarser)
        assert lower_bound <= record["composed_epsilon"] <= b.epsilon
        return
    if acc == "generic-per-query":
        eq, dq = record["per_query"]
        # float64 evaluation of the enumerated points: 1e-13 covers its rounding (the recorded δ_q is
        # the outward-rounded profile's or the certificate's)
        assert np.all(pts[:, 1] - math.exp(eq) * pts[:, 0] <= dq + 1e-13)
        one = pld.from_privacy_parameters(common.DifferentialPrivacyParameters(eq, dq),
                                          value_discretization_interval=1e-5)
        assert one.self_compose(b.queries).get_epsilon_for_delta(b.delta) <= b.epsilon * (1 + 1e-3)
        return
    assert acc == "gdp-vertex-certificate"
    check_gdp_total(pts, record["target"]["mu"], b)


def check_gdp_total(pts, mu: float, b: TotalBudget) -> None:
    """In 40-digit mpmath: every enumerated point (x, y) lies under the μ-GDP trade-off curve's
    mirror, y ≤ Φ(Φ⁻¹(x) + μ), and μ√Q-GDP meets (ε_total, δ_total) (Dong–Roth–Su's δ(ε))."""
    mpmath.mp.dps = 40
    m = mpmath.mpf(mu)
    for x, y in pts:
        if y <= x:
            continue
        assert x > 0, "an infinite-loss pair cannot be μ-GDP"
        assert mpmath.ncdf(mpmath.sqrt(2) * mpmath.erfinv(2 * mpmath.mpf(x) - 1) + m) >= y
    mt = m * mpmath.sqrt(b.queries)
    e = mpmath.mpf(b.epsilon)
    assert mpmath.ncdf(-e / mt + mt / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mt - mt / 2) <= b.delta
