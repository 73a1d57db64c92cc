"""Orderings that hold between methods, and monotonicity in n, ε0 and δ."""

import itertools

import pytest

from darrm.accounting import (
    GenericLDP,
    RandomizedResponse,
    all_bounds,
    best_upper_bound,
)
from darrm.accounting.shuffle import (
    blanket,
    clones,
    decomposition,
    joint,
    krr,
    parallel,
)
from darrm.accounting.shuffle import variation_ratio as vr


@pytest.mark.parametrize("k,e0,n", [(2, 1.0, 2000), (10, 1.0, 2000), (10, 4.0, 2000), (4, 2.0, 500)])
def test_optimal_below_blanket_clone_and_variation_ratio_and_above_lower(k, e0, n):
    r = RandomizedResponse(e0, k)
    for e in (0.05, 0.2, 0.5 * e0):
        opt = decomposition.capped_optimal_delta(r, n, e)
        # exact count sums carry a rigorous allowance (~1e-8 relative): for binary RR
        # the blanket pair *is* the clone / variation-ratio pair, so they tie to it
        assert opt <= clones.clone_delta(e, n, e0) * (1 + 1e-7) + 1e-15
        assert opt <= vr.delta_bound(r, n, e).delta * (1 + 1e-7) + 1e-15
        assert opt <= blanket.hoeffding_delta(r, n, e) + 1e-12
        assert opt <= blanket.bennett_delta(r, n, e) + 1e-12
        assert decomposition.lower_delta(r, n, e) <= opt
        assert krr.lower_delta(r, n, e) <= opt


@pytest.mark.parametrize("k,e0,n,e", [(10, 1.0, 10**6, 0.003), (3, 0.5, 10**6, 0.002), (2, 4.0, 10**5, 0.04)])
def test_count_sum_bounds_are_ordered_and_informative_at_large_n(k, e0, n, e):
    # the FFT grid cannot resolve these sums; the exact count sums must
    r = RandomizedResponse(e0, k)
    up = decomposition.capped_optimal_delta(r, n, e)
    lo = decomposition.lower_delta(r, n, e)
    vrd = vr.delta_bound(r, n, e).delta
    assert 0 < lo <= up <= vrd * (1 + 1e-7)
    if k > 2:
        assert up < 0.5 * vrd  # strictly better than the general-clone pairs
    assert lo > 1e-3 * up  # the lower bound is not degenerate


def test_optimal_count_sum_decreasing_in_eps_and_n():
    r = RandomizedResponse(1.0, 10)
    ds = [decomposition.optimal_delta(r, 10**5, e) for e in (0.005, 0.01, 0.02, 0.04)]
    assert all(a > b for a, b in itertools.pairwise(ds))
    dn = [decomposition.optimal_delta(r, n, 0.01) for n in (10**4, 10**5, 10**6)]
    assert all(a > b for a, b in itertools.pairwise(dn))


def test_every_lower_bound_below_every_valid_upper_bound():
    for r in (RandomizedResponse(1.0, 3), RandomizedResponse(3.0, 2), GenericLDP(1.0)):
        bs = all_bounds(r, 800, delta=1e-4)
        ups = [b.eps for b in bs if b.kind == "upper" and b.valid]
        lows = [b.eps for b in bs if b.kind == "lower"]
        assert lows and ups and max(lows) <= min(ups)


def test_valid_variation_ratio_dominates_flawed_paper_pair():
    # the paper's pair is a post-processing of the separated (general-clone) pair
    p = vr.grr_paper_params(1.0, 16)
    for e in (0.01, 0.05, 0.1):
        assert vr.vr_delta(e, 10**4, p, separate_leftover=True) >= vr.vr_delta(e, 10**4, p) - 1e-15


@pytest.mark.parametrize("method", ["clones", "variation-ratio", "optimal-decomposition", "blanket-bennett"])
def test_upper_bounds_monotone_in_n_eps0_and_delta(method):
    def eps(e0, n, d):
        return all_bounds(RandomizedResponse(e0, 3), n, delta=d, methods=[method])[0].eps

    assert eps(1.0, 250, 1e-5) >= eps(1.0, 1000, 1e-5) >= eps(1.0, 4000, 1e-5)
    assert eps(0.5, 1000, 1e-5) <= eps(1.0, 1000, 1e-5) <= eps(2.0, 1000, 1e-5)
    assert eps(1.0, 1000, 1e-7) >= eps(1.0, 1000, 1e-5) >= eps(1.0, 1000, 1e-3)


def test_best_upper_bound_is_minimum_of_valid_upper_bounds():
    r = RandomizedResponse(1.0, 10)
    best = best_upper_bound(r, 1000, delta=1e-5)
    others = [b for b in all_bounds(r, 1000, delta=1e-5) if b.kind == "upper"]
    assert best.valid and best.eps == min(b.eps for b in others)
    assert best_upper_bound(GenericLDP(1.0), 1000, delta=1e-5).method == "clones"


def test_generic_variation_ratio_is_flagged_invalid_and_never_best():
    b = vr.eps_bound(GenericLDP(1.0), 10**4, 1e-6)
    assert not b.valid
    ups = ["erlingsson", "blanket-hoeffding", "blanket-bennett", "clones", "variation-ratio"]
    assert min(x.eps for x in all_bounds(GenericLDP(1.0), 10**4, delta=1e-6, methods=ups)) > b.eps
    assert all(x.valid for x in all_bounds(GenericLDP(1.0), 10**4, delta=1e-6, methods=ups))


def test_joint_and_parallel_composition_bounds_are_consistent():
    rr = RandomizedResponse(0.5, 2).to_finite()
    j = joint(rr, rr)  # 1.0-LDP overall (Su et al. Thm 8)
    assert j.eps0 == pytest.approx(1.0)
    n, e = 2000, 0.1
    opt_joint = decomposition.capped_optimal_delta(j, n, e)
    assert opt_joint <= clones.clone_delta(e, n, j.eps0)
    assert decomposition.lower_delta(j, n, e) <= opt_joint
    # parallel composition lies between its parts (Su et al. Fig. 4)
    a, b = RandomizedResponse(1.0, 4).to_finite(), RandomizedResponse(2.0, 4).to_finite()
    par = parallel([a, b], [0.5, 0.5])
    da, db, dp = (decomposition.optimal_delta(x, n, e) for x in (a, b, par))  # raw FFT, same grid rule
    assert min(da, db) - 1e-12 <= dp <= max(da, db) + 1e-12
