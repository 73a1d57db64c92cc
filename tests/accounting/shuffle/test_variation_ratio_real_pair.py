"""The variation-ratio bounds cover the REAL randomizer's pair, not only the pair of the floats
(p, β, q): the parameters' box (:class:`vr.RealPair`) holds the real values (checked in 60-digit
mpmath), and the upper/lower δ bracket the real pair's divergence computed independently from the
definition of the pair at 40 digits, with e^{ε0} evaluated in mpmath, at an ε0 whose float exp(ε0)
rounds DOWN.  Without the box (the floats alone) the upper δ is 0 at an ε where the real δ is > 0, so
the checks can fail.  The charge κ and the rate interval themselves are not shown necessary here: away
from that edge the parameters' move changes δ by about u × the P- and e^ε Q-masses, below the 10u of
them the coefficients' roundings already charge, so removing them fails none of these points; their
correctness is checked instead through the boxes (which must hold the real parameters)."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import pytest

from darrm.accounting.shuffle import clones
from darrm.accounting.shuffle import variation_ratio as vr
from darrm.accounting.shuffle.randomizers import FiniteRandomizer, RandomizedResponse

#: float exp(0.301) < e^{0.301}, and e^{EDGE_EPS} lies in [exp(0.301), e^{0.301}) with
#: EDGE_EPS >= log(exp(0.301)) (found by comparing mpmath's exp with the float's)
DOWN_EPS0 = 0.301
EDGE_EPS = 0.30099999999999993


def _real_exp(x: float) -> mpmath.mpf:
    mpmath.mp.dps = 60
    return mpmath.exp(mpmath.mpf(x))


def _in(v: mpmath.mpf, box: tuple[Fraction, Fraction]) -> bool:
    mpmath.mp.dps = 60
    lo, hi = (mpmath.mpf(b.numerator) / b.denominator for b in box)
    return lo <= v <= hi


def _real_delta(n: int, a1, a2, g, x, eps: float) -> mpmath.mpf:
    """D_{e^ε}(P ‖ Q) of the pair with masses (a1, a2, g) and C ~ Bin(n − 1, x), from its definition
    on every output (a, b), at 40 digits."""
    mpmath.mp.dps = 40
    N = n - 1
    pi = [mpmath.binomial(N, c) * x**c * (1 - x) ** (N - c) for c in range(N + 1)] + [mpmath.mpf(0)]

    def bt(t: int, a: int):
        return mpmath.binomial(t, a) * mpmath.mpf(2) ** -t if 0 <= a <= t else mpmath.mpf(0)

    ee = mpmath.exp(mpmath.mpf(eps))
    out = []
    for t in range(n + 1):
        pc = pi[t - 1] if t >= 1 else mpmath.mpf(0)
        for a in range(t + 1):
            x1, x0 = pc * bt(t - 1, a - 1), pc * bt(t - 1, a)
            xg = pi[t] * bt(t, a)
            P, Q = a1 * x1 + a2 * x0 + g * xg, a2 * x1 + a1 * x0 + g * xg
            out.append(max(P - ee * Q, 0))
    return mpmath.fsum(out)


def test_float_exp_rounds_down_at_the_chosen_eps0_and_the_edge_eps_lies_between():
    """The premises of the other tests: exp(0.301) in floats is below e^{0.301}, and e^{EDGE_EPS} is
    between the two while EDGE_EPS >= log(float p) (so the floats' pair has δ(EDGE_EPS) = 0)."""
    real, pf = _real_exp(DOWN_EPS0), math.exp(DOWN_EPS0)
    assert mpmath.mpf(pf) < real
    assert mpmath.mpf(pf) <= _real_exp(EDGE_EPS) < real and EDGE_EPS >= math.log(pf)


@pytest.mark.parametrize("eps0", [DOWN_EPS0, 1.0, 2.5, 1e-6, 30.0])
def test_exp_enclosure_contains_the_real_exponential(eps0):
    lo, hi = vr.exp_enclosure(eps0)
    assert _in(_real_exp(eps0), (lo, hi)) and (hi - lo) / lo < Fraction(1, 10**44)


@pytest.mark.parametrize("eps0", [DOWN_EPS0, 1.0, 2.5])
def test_real_pair_box_holds_the_real_parameters_of_each_builder(eps0):
    """a1, a2, g, 2r of the real pair (e^{ε0} in 60-digit mpmath) lie in the box of the general,
    GRR (k = 3, 5), clone and k-RR-matrix parameters; a box from the float p alone misses a1 where
    exp(ε0) rounds down."""
    p = _real_exp(eps0)
    cases = [(vr.general_params(eps0), p / (p + 1), 1 / (p + 1), 0, 2 / (p + 1)),
             (clones.clone_params(eps0), p / (p + 1), 1 / (p + 1), 0, 1 / p)]
    for k in (3, 5):
        m = p + k - 1
        cases.append((vr.grr_paper_params(eps0, k), p / m, 1 / m, (k - 2) / m, 2 / m))
    for k in (2, 4):
        glob, _ = vr._randomizer_params(RandomizedResponse(eps0, k))
        cases.append((glob, p / (p + 1), 1 / (p + 1), 0, 2 / (p + 1)))
    for pr, a1, a2, g, x in cases:
        box = pr.real
        assert box is not None
        assert _in(a1, box.a1) and _in(a2, box.a2) and _in(mpmath.mpf(g), box.g) and _in(x, box.x)
    pf = Fraction(math.exp(eps0))
    broken = vr.RealPair.no_leftover((pf, pf), (2 / (pf + 1), 2 / (pf + 1)))
    assert _in(p / (p + 1), broken.a1) == (mpmath.mpf(math.exp(eps0)) == p)


def test_finite_matrix_box_holds_its_exact_ratio_and_clone_probability():
    """For a randomizer given by its float matrix, the box holds the exact largest column ratio and
    the exact r* of that matrix (rationals), which the computed floats need not equal."""
    rows = [[0.5, 0.3, 0.2], [0.2, 0.5, 0.3], [0.3, 0.2, 0.5]]
    fin = FiniteRandomizer.from_array(rows)
    m = [[Fraction(v) for v in row] for row in fin.matrix]
    cols = list(zip(*m, strict=True))
    R = max(max(col) / min(col) for col in cols)
    r = min([Fraction(1, 2)] + [min(col) / (col[a] + col[b]) for col in cols
                                 for a in range(3) for b in range(a + 1, 3)])
    glob, _ = vr._randomizer_params(fin)
    box = glob.real
    assert box is not None
    assert box.a1[0] <= R / (R + 1) <= box.a1[1] and box.a2[0] <= 1 / (R + 1) <= box.a2[1]
    assert box.x[0] <= 2 * r <= box.x[1] and box.g == (0, 0)


@pytest.mark.parametrize("n", [20, 60])
@pytest.mark.parametrize("eps0", [DOWN_EPS0, 1.0])
def test_upper_and_lower_bracket_the_real_general_pair(n, eps0):
    """general_params (g = 0, 2r = 2/(p + 1)), p = e^{ε0} real: lower <= exact <= upper at ε below,
    near and at the floats' ln p (EDGE_EPS for ε0 = 0.301, where the real δ is > 0 and the floats'
    pair's is 0)."""
    p = _real_exp(eps0)
    pr = vr.general_params(eps0)
    eps_list = [0.05, eps0 / 2, math.log(pr.p)] + ([EDGE_EPS] if eps0 == DOWN_EPS0 else [])
    for eps in eps_list:
        exact = _real_delta(n, p / (p + 1), 1 / (p + 1), 0, 2 / (p + 1), eps)
        s = vr.vr_sum(eps, n, pr)
        assert s.lower() <= exact <= s.upper(), (eps, float(exact), s)


def test_without_the_real_box_the_upper_bound_misses_the_real_pair():
    """The broken variant (the floats alone, no :class:`vr.RealPair`): at EDGE_EPS the floats' pair
    has δ = 0 but the real pair's is > 0, so its upper bound fails the check above."""
    n, p = 20, _real_exp(DOWN_EPS0)
    pr = vr.general_params(DOWN_EPS0)
    exact = _real_delta(n, p / (p + 1), 1 / (p + 1), 0, 2 / (p + 1), EDGE_EPS)
    floats_only = vr.VRParams(pr.p, pr.beta, pr.q)
    assert exact > 0 and vr.vr_delta(EDGE_EPS, n, floats_only) < exact <= vr.vr_delta(EDGE_EPS, n, pr)


@pytest.mark.parametrize("eps0", [DOWN_EPS0, 1.0])
def test_krr_count_lower_delta_is_below_the_real_krr_counts_pair(eps0):
    """k = 3: the counts pair of real k-RR (a1 = p/(p + 2), a2 = g = 1/(p + 2), 2r = 2/(p + 2)) has
    divergence >= krr_count_lower_delta at several ε, n = 30."""
    n, p = 30, _real_exp(eps0)
    m = p + 2
    for eps in (0.05, eps0 / 2, eps0 * 0.9):
        exact = _real_delta(n, p / m, 1 / m, 1 / m, 2 / m, eps)
        assert vr.krr_count_lower_delta(eps, n, eps0, 3) <= exact


@pytest.mark.parametrize("eps0", [DOWN_EPS0, 1.0])
def test_clone_bound_is_above_the_real_clone_pair(eps0):
    """The clone pair (g = 0, 2r = e^{-ε0}) with e^{ε0} real: clone_delta >= its divergence."""
    n, p = 40, _real_exp(eps0)
    for eps in (0.05, eps0 / 2, math.log(math.exp(eps0))):
        exact = _real_delta(n, p / (p + 1), 1 / (p + 1), 0, 1 / p, eps)
        assert clones.clone_delta(eps, n, eps0) >= exact
