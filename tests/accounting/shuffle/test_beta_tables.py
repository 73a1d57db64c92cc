"""Reuse of incomplete-beta / pmf values across an ε(δ) search (darrm.accounting.shuffle.beta_tables).

The claim is bit-for-bit equality with the path that computes every value afresh
(``beta_tables.no_reuse``), checked on count sums at several ε in a row (so the tables are warm
and shifted thresholds hit and miss them), on the ε(δ) searches themselves, and on the memo alone
against ``scipy.special.betainc``; the searched upper ε is checked against the existing lower
bound (still valid).
"""

import numpy as np
import pytest
from scipy import special, stats

from darrm.accounting import GenericLDP, RandomizedResponse
from darrm.accounting.shuffle import beta_tables as BT
from darrm.accounting.shuffle import count_sums as CS
from darrm.accounting.shuffle import decomposition
from darrm.accounting.shuffle.decomposition import blanket_atoms, dataset_atoms, mixture_atoms


def _atoms(k):
    m = RandomizedResponse(1.0, k).to_finite().array
    return [blanket_atoms(m, 0, 1), dataset_atoms(m, 0, 1, 1), mixture_atoms(m, 0, 1)]


@pytest.mark.parametrize("k", [2, 3, 10])
@pytest.mark.parametrize("n", [60, 2000, 200_000])
def test_count_sums_with_reused_tables_are_bit_identical(k, n):
    eps_grid = [0.9, 0.3, 0.1, 0.05, 0.051, 0.0505, 0.02]
    for at in _atoms(k):
        for kind in ("upper", "lower"):
            with BT.no_reuse():
                old = [CS.expected_positive_part(at.values(e), at.w, n, kind) for e in eps_grid]
            with BT.reuse_tables() as tables:
                new = [CS.expected_positive_part(at.values(e), at.w, n, kind) for e in eps_grid]
            assert new == old  # exact float equality, exactness flags too
            if n >= 2000:  # the tables were used and did save work
                assert tables and sum(t.computed for t in tables.values()) < sum(t.asked for t in tables.values())


@pytest.mark.parametrize("randomizer", [RandomizedResponse(1.0, 10), RandomizedResponse(1.0, 2)],
                         ids=lambda r: r.name)
def test_eps_searches_are_bit_identical_and_upper_stays_above_lower(randomizer):
    n, delta = 20_000, 1e-6
    with BT.no_reuse():
        up_old = decomposition.eps_bound(randomizer, n, delta).eps
        lo_old = decomposition.lower_eps_bound(randomizer, n, delta).eps
    up = decomposition.eps_bound(randomizer, n, delta).eps
    lo = decomposition.lower_eps_bound(randomizer, n, delta).eps
    assert (up, lo) == (up_old, lo_old)
    assert 0 < lo <= up
    # the upper ε is certified: the optimal δ at it is <= δ, recomputed outside any table
    assert decomposition.capped_optimal_delta(randomizer, n, up) <= delta


def test_generic_lower_search_is_bit_identical():
    r = GenericLDP(1.0)
    with BT.no_reuse():
        old = decomposition.lower_eps_bound(r, 50_000, 1e-7).eps
    assert decomposition.lower_eps_bound(r, 50_000, 1e-7).eps == old


def test_memo_returns_exactly_what_scipy_returns():
    rng = np.random.default_rng(3)
    b = rng.integers(1, 10**7, 3000).astype(float)
    a = np.floor(b * rng.uniform(0.01, 1.0, 3000)) + 1
    p = 0.3
    with BT.reuse_tables() as tables:
        first = BT.betainc(a, b, p)
        again = BT.betainc(a[::-1], b[::-1], p)  # every value from the table
        pm = BT.binom_pmf(a - 1, b, p)
        pm_again = BT.binom_pmf(a - 1, b, p)
    ref = special.betainc(a, b, p)
    assert np.array_equal(first, ref) and np.array_equal(again, ref[::-1])
    assert np.array_equal(pm, stats.binom.pmf(a - 1, b, p)) and np.array_equal(pm_again, pm)
    t = tables["betainc", p]
    assert t.asked == 6000 and t.computed == len(np.unique(a * 2**31 + b))


def test_non_integer_arguments_bypass_the_table():
    a, b = np.array([2.5, 3.0]), np.array([7.0, 4.25])
    with BT.reuse_tables() as tables:
        out = BT.betainc(a, b, 0.4)
    assert np.array_equal(out, special.betainc(a, b, 0.4)) and not tables


def test_tables_live_only_inside_their_block():
    x = np.array([3.0, 4.0])
    with BT.reuse_tables() as tables:
        BT.betainc(x, x, 0.2)
        with BT.reuse_tables() as inner:  # nested blocks share the outer tables
            assert inner is tables
    BT.betainc(x, x, 0.2)  # outside: nothing stored anywhere
    assert tables["betainc", 0.2].asked == 2
    with BT.no_reuse(), BT.reuse_tables() as off:
        BT.betainc(x, x, 0.2)
    assert not off
