"""Published numbers reproduced within the tolerance their specs state."""

import math

import pytest

from darrm.accounting import GenericLDP, RandomizedResponse
from darrm.accounting.shuffle import blanket, clones, erlingsson, krr
from darrm.accounting.shuffle import variation_ratio as vr

# spec-shuffle-variation-ratio §4.1: canonical Thm 4.8 values (exact T=10 grid)
TABLE5_T10 = {(1, 1e4): 0.0439453125, (1, 1e6): 0.005859375, (1, 1e8): 0.0009765625,
              (3, 1e4): 0.228515625, (3, 1e6): 0.0263671875, (3, 1e8): 0.0029296875,
              (5, 1e4): 0.7421875, (5, 1e6): 0.078125, (5, 1e8): 0.009765625,
              (7, 1e4): 6.9931640625, (7, 1e6): 0.2255859375, (7, 1e8): 0.02734375}
# the paper's printed T=20 column (000:464-475)
TABLE5_T20 = {(1, 1e4): 0.0433, (1, 1e6): 0.00503, (3, 1e4): 0.227, (3, 1e6): 0.0255,
              (5, 1e4): 0.743, (5, 1e6): 0.0778, (7, 1e4): 6.99, (7, 1e6): 0.224}


@pytest.mark.parametrize("key", [k for k in TABLE5_T10 if k[1] <= 1e6] + [(1, 1e8)])
def test_variation_ratio_table5_T10_grid_exact(key):
    e0, n = key
    assert vr.vr_eps(0.01 / n, int(n), vr.general_params(e0), T=10) == TABLE5_T10[key]


@pytest.mark.parametrize("key", sorted(TABLE5_T20))
def test_variation_ratio_table5_T20_within_one_percent(key):
    e0, n = key
    got = vr.vr_eps(0.01 / n, int(n), vr.general_params(e0), T=20)
    assert abs(got / TABLE5_T20[key] - 1) <= 0.01


@pytest.mark.parametrize("params,eps,ref", [
    ((2.25, 0.2, 1.5), 0.05, 0.011508198378728), ((2.25, 0.2, 1.5), 0.5, 1.6421147895557e-14),
    ((math.e, (math.e - 1) / (math.e + 15), math.e), 0.2, 7.6246441226691e-05),
    ((math.e ** 2, math.tanh(1), math.e ** 2), 0.5, 0.029020417183773),
    ((4, 0.3, 9), 0.5, 0.0024115280893761)])
def test_variation_ratio_delta_brackets_bruteforce_reference(params, eps, ref):
    """The lower and upper δ bracket the brute-force value (rounded to 14 digits, inside the bracket's
    error charges); the bracket is as narrow as those charges: 1e-7 relative, or 1e-16 absolute for
    the tiny δ where scipy's assumed relative accuracy (RHO = 1e-9) of P(S) ~ 1e-8 dominates."""
    pr = vr.VRParams(*params)
    lo, up = vr.vr_delta(eps, 60, pr, kind="lower"), vr.vr_delta(eps, 60, pr)
    assert lo <= ref <= up
    assert up - lo <= 1e-7 * ref + 1e-16


def test_variation_ratio_p_infinity_limit():
    # spec §4.4(g): exact p = inf limit, n-1 = 20000 blanket messages, q = 100/8
    pr = vr.VRParams(math.inf, 1.0, 100 / 8)
    assert vr.vr_delta(0.05, 20001, pr) == pytest.approx(0.0012893144, rel=1e-6)
    assert vr.vr_delta(0.1, 20001, pr) == pytest.approx(2.5948121e-05, rel=1e-6)
    balcer = vr.VRParams(math.inf, 1.0, 2.0)  # 2r = 1
    assert vr.vr_delta(0.05, 10001, balcer) == pytest.approx(4.1148901e-05, rel=1e-6)


@pytest.mark.parametrize("e0,ref", [(0.5, 0.0204015), (1, 0.0530053), (2, 0.155045), (3, 0.32072)])
def test_clone_numeric_matches_reference(e0, ref):
    assert clones.eps_bound(GenericLDP(e0), 10**4, 1e-6).eps == pytest.approx(ref, rel=2e-5)


@pytest.mark.parametrize("e0,refs", [(0.5, (0.0539956, 0.0906532, 0.0245023, 0.0082338)),
                                     (1, (0.166634, 0.166166, 0.0666658, 0.0225845)),
                                     (2, (1.01708, 0.517501, 0.237145, 0.0807518))])
def test_blanket_matches_shuffleddp_reference(e0, refs):
    got = [blanket.eps_bound(r, 10**4, 1e-6, w).eps for r in (GenericLDP(e0), RandomizedResponse(e0, 16))
           for w in ("hoeffding", "bennett")]
    for g, r in zip(got, refs, strict=True):
        assert g == pytest.approx(r, rel=2e-5)


def test_erlingsson_closed_form():
    assert erlingsson.eps_bound(GenericLDP(0.5), 10**4, 1e-6).eps == pytest.approx(0.223015, rel=1e-5)
    assert erlingsson.eps_bound(GenericLDP(1.0), 10**4, 1e-6).eps == 1.0  # conditions fail


def test_grr_paper_parameters_reproduce_reference_but_are_invalid():
    # spec §4.4(d): VR with GRR d=16, n=1e4, δ=1e-6
    b = vr.paper_specific_eps_bound(RandomizedResponse(1.0, 16), 10**4, 1e-6)
    assert b.eps == pytest.approx(0.0185893, rel=1e-4) and not b.valid
    assert vr.paper_specific_eps_bound(RandomizedResponse(1.0, 2), 10**4, 1e-6).valid  # g = 0


# spec-shuffle-krr §5.1/5.2: Biswas et al. Table 1 (k=10, n_x0=80, eps0=0.5) and Table 3
KRR_TABLE = [
    (100, 80, 10, 0.5, 0.1, 2.38e-28), (100, 80, 10, 0.5, 0.2, 1.61e-42), (100, 80, 10, 0.5, 0.3, 5.22e-57),
    (100, 80, 10, 0.5, 0.4, 5.14e-72), (100, 80, 10, 1, 0.1, 2.08e-20), (100, 80, 10, 1, 0.5, 3.42e-43),
    (100, 80, 10, 2, 0.1, 2.49e-15), (100, 80, 10, 2, 1.0, 2.20e-30), (100, 80, 10, 3, 2.0, 1.09e-25),
    (150, 120, 10, 2, 0.5, 7.83e-32), (50, 40, 10, 2, 0.5, 5.02e-12), (100, 80, 5, 2, 1.5, 2.02e-27),
    (100, 80, 15, 2, 1.0, 1.49e-38),
]


@pytest.mark.parametrize("n,nx0,k,e0,eps,printed", KRR_TABLE)
def test_krr_paper_variant_reproduces_printed_tables(n, nx0, k, e0, eps, printed):
    assert krr.krr_delta(eps, n, nx0, k, e0, "paper") == pytest.approx(printed, rel=0.005)


def test_krr_exact_variant_reference_values_and_zero_beyond_eps0():
    assert krr.krr_delta(0.1, 100, 80, 10, 0.5, "exact") == pytest.approx(2.435996e-9, rel=1e-6)
    assert krr.krr_delta(1.0, 100, 80, 10, 2, "exact") == pytest.approx(2.698075e-18, rel=1e-6)
    assert krr.krr_delta(1.0, 100, 80, 10, 1, "exact") == 0.0
    assert krr.krr_delta(math.log(1.1), 3, 1, 3, math.log(2), "exact") == pytest.approx(0.1, abs=1e-15)
    assert krr.krr_delta(math.log(1.1), 3, 1, 3, math.log(2), "paper") == pytest.approx(0.03984375, abs=1e-15)


def test_krr_paper_variant_is_never_valid():
    b = krr.paper_eps_bound(RandomizedResponse(2.0, 10), 100, 1e-20)
    assert not b.valid and b.kind == "upper"
    assert b.eps == pytest.approx(0.422060144642, rel=1e-6)  # spec §5.5.3 (n_x0 = 80)
