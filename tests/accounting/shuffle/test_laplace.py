"""The Laplace randomizer over {0, 1}: its dominating (upper) and binned (lower) finite randomizers
against exact references of the continuous mechanism.

References, independent of :mod:`darrm.accounting.shuffle.laplace`: at n = 1 the closed form
δ(ε) = 1 − e^{−(ε0 − ε)/2} of the Laplace mechanism with sensitivity 1 and scale 1/ε0; at n = 2 the
hockey-stick divergence of the shuffled pair's densities integrated by scipy's ``dblquad`` on the
nine rectangles where the densities are smooth, maximised over the other user's input and both
directions (absolute accuracy about 1e-9 per rectangle, agreeing with a 1e-11 run to 1e-10).
The finite randomizers are enumerated exactly (:func:`exact.worst_case_delta`).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from references.shuffle_exact import worst_case_delta
from scipy import integrate

from darrm.accounting.shuffle.laplace import laplace_binned, laplace_dominating
from darrm.errors import ParameterError


def _density(x: int, y: float, eps0: float) -> float:
    return 0.5 * eps0 * math.exp(-eps0 * abs(y - x))


def _shuffled_pair_delta(eps0: float, eps: float) -> float:
    """max over z ∈ {0,1} and both directions of ∫∫ (f_{(a,z)} − e^ε f_{(b,z)})_+ (symmetrised)."""
    ee, top = math.exp(eps), 25.0 / eps0 + 1.0  # mass beyond: < e^{-25}
    edges = (-top, 0.0, 1.0, top)
    best = 0.0
    for z in (0, 1):
        for a, b in ((1, 0), (0, 1)):
            def f(y2, y1, a=a, b=b, z=z):
                da1, da2, db1, db2 = (_density(u, y, eps0) for u, y in ((a, y1), (a, y2), (b, y1), (b, y2)))
                z1, z2 = _density(z, y1, eps0), _density(z, y2, eps0)
                p = 0.5 * (da1 * z2 + z1 * da2)
                q = 0.5 * (db1 * z2 + z1 * db2)
                return max(p - ee * q, 0.0)

            total = 0.0
            for i in range(3):
                for j in range(3):
                    total += integrate.dblquad(f, edges[i], edges[i + 1], edges[j], edges[j + 1],
                                               epsabs=1e-9, epsrel=1e-8)[0]
            best = max(best, total)
    return best


@pytest.mark.parametrize("eps0", [0.5, 1.0, 3.0])
def test_one_user_matches_the_closed_form(eps0):
    for eps in (0.0, 0.3 * eps0, 0.8 * eps0):
        truth = 1.0 - math.exp(-(eps0 - eps) / 2)
        up = worst_case_delta(laplace_dominating(eps0, 16), 1, eps).delta[0]
        lo = worst_case_delta(laplace_binned(eps0, 16), 1, eps).delta[0]
        assert lo - 1e-14 <= truth <= up + 1e-14


@pytest.mark.parametrize("eps0,eps", [(0.7, 0.14), (1.5, 0.6)])
def test_two_users_are_bracketed_and_the_bracket_narrows_with_the_bins(eps0, eps):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        truth = _shuffled_pair_delta(eps0, eps)
    ups = [worst_case_delta(laplace_dominating(eps0, J), 2, eps).delta[0] for J in (2, 8)]
    lows = [worst_case_delta(laplace_binned(eps0, J), 2, eps).delta[0] for J in (2, 8)]
    for up, lo in zip(ups, lows, strict=True):
        assert lo - 1e-7 <= truth <= up + 1e-7  # the quadrature's accuracy (1e-9 per rectangle, ×36)
    assert ups[1] - lows[1] < 0.3 * (ups[0] - lows[0])  # bins 4x narrower: the bracket about 4x
    # a randomizer that is not dominating (the ratios of a smaller ε0) falls below the truth
    assert worst_case_delta(laplace_dominating(0.8 * eps0, 8), 2, eps).delta[0] < truth - 1e-3


def test_rows_are_distributions_with_the_local_epsilon():
    for J in (1, 7, 64):
        for R in (laplace_dominating(2.0, J), laplace_binned(2.0, J)):
            np.testing.assert_allclose(R.array.sum(axis=1), 1.0, rtol=0, atol=1e-15)
            assert R.eps0 == pytest.approx(2.0, rel=1e-12)
    assert laplace_dominating(1.0, 8).array.shape == (2, 9)
    assert laplace_binned(1.0, 8).array.shape == (2, 10)


def test_bad_parameters_are_named():
    with pytest.raises(ParameterError, match="bins"):
        laplace_dominating(1.0, 0)
    with pytest.raises(ParameterError, match="eps0"):
        laplace_binned(-1.0)
