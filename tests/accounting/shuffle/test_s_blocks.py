"""Blocks of S in the count sums (darrm.accounting.shuffle.s_blocks): the coupling lemma by
enumeration, the blocked bounds against multinomial enumeration, and tightness against the
unblocked sum."""

import numpy as np
import pytest
from scipy.stats import binom

from darrm.accounting import RandomizedResponse
from darrm.accounting.shuffle import count_sums as CS
from darrm.accounting.shuffle import s_blocks as SB
from darrm.accounting.shuffle.decomposition import blanket_atoms, dataset_atoms, mixture_atoms

from .test_count_sums import brute_positive_part


def _h(a, b, d, p, q, n, s, c):
    """H(s, c) = E[(A·N_A + B·(s − N_A) + D·N_D + c)_+] by enumerating N_A ~ Bin(s, p) and
    N_D ~ Bin(n − s, q)."""
    na = np.arange(s + 1)
    nd = np.arange(n - s + 1)
    pa = binom.pmf(na, s, p)
    pd = binom.pmf(nd, n - s, q)
    x = (a * na + b * (s - na))[:, None] + d * nd[None, :] + c
    return float(np.sum(pa[:, None] * pd[None, :] * np.maximum(x, 0.0)))


_ATOMS = [  # (A, B, D, p, q): D < 0 (k-RR's blanket), D > 0, no drift, strong drift
    (1.7, -1.8, -0.05, 0.5, 0.8),
    (2.0, -1.5, 0.3, 0.4, 0.5),
    (0.5, -0.5, 0.0, 0.5, 0.3),
    (1.0, -3.0, -0.4, 0.6, 0.2),
]


@pytest.mark.parametrize("a,b,d,p,q", _ATOMS)
def test_coupling_lemma_h_of_s_shifted_by_kappa_is_non_decreasing(a, b, d, p, q):
    n = 30
    kappa = SB.drift(a, b, d, p)
    for c in (-6.0, -1.0, 0.0, 2.5):
        for s in range(0, n, 3):
            h0 = _h(a, b, d, p, q, n, s, c)
            for t in (1, 2, 5):
                if s + t <= n:
                    h1 = _h(a, b, d, p, q, n, s + t, c + t * kappa)
                    assert h0 <= h1 * (1 + 1e-12) + 1e-15, (s, t, c, h0, h1)


def test_a_smaller_drift_breaks_the_lemma():
    # the deliberately wrong κ/2 (and 0) must be refuted somewhere: the lemma's κ is needed
    a, b, d, p, q = _ATOMS[3]
    n, kappa = 30, SB.drift(a, b, d, p)
    assert kappa > 0
    for wrong in (0.0, 0.5 * kappa):
        bad = [(s, c) for c in (-6.0, -1.0, 0.0) for s in range(n)
               if _h(a, b, d, p, q, n, s, c) > _h(a, b, d, p, q, n, s + 1, c + wrong) * (1 + 1e-9)]
        assert bad, wrong


def _cases():
    out = []
    for k, eps0 in ((2, 1.0), (3, 1.2), (10, 0.7)):
        m = RandomizedResponse(eps0, k).to_finite().array
        out += [blanket_atoms(m, 0, 1), dataset_atoms(m, 0, 1, 1), mixture_atoms(m, 0, 1)]
    return out


@pytest.mark.parametrize("atoms", _cases())
@pytest.mark.parametrize("g", [2, 5, 40])
def test_blocked_count_sums_sandwich_multinomial_enumeration(atoms, g):
    n = 25
    for eps in (0.05, 0.3, 0.9):
        v = atoms.values(eps)
        ex = brute_positive_part(v, atoms.w, n)
        up = CS.expected_positive_part(v, atoms.w, n, "upper", s_block=g)[0]
        lo = CS.expected_positive_part(v, atoms.w, n, "lower", s_block=g)[0]
        assert lo <= ex * (1 + 1e-12) + 1e-300 and up >= ex * (1 - 1e-12), (g, eps, lo, ex, up)


def test_blocks_without_the_shift_would_not_be_an_upper_bound():
    # the same blocks with the representative's h unshifted (κ = 0) fall below the exact value
    m = RandomizedResponse(1.0, 3).to_finite().array
    at = blanket_atoms(m, 0, 1)
    n, eps = 25, 0.9
    v = at.values(eps)
    ex = brute_positive_part(v, at.w, n)
    real = SB.drift
    try:
        SB.drift = lambda *args: 0.0  # noqa: E731 - deliberately wrong
        wrong = CS.expected_positive_part(v, at.w, n, "upper", s_block=8)[0]
    finally:
        SB.drift = real
    assert wrong < ex < CS.expected_positive_part(v, at.w, n, "upper", s_block=8)[0]


def test_blocks_bracket_the_unblocked_sum_and_lose_little_at_large_n():
    n = 1_000_000
    m = RandomizedResponse(1.0, 10).to_finite().array
    at = blanket_atoms(m, 0, 1)
    v = at.values(0.00185)
    up1 = CS.expected_positive_part(v, at.w, n, "upper", s_block=1)[0]
    lo1 = CS.expected_positive_part(v, at.w, n, "lower", s_block=1)[0]
    for g in (4, 16):
        up = CS.expected_positive_part(v, at.w, n, "upper", s_block=g)[0]
        lo = CS.expected_positive_part(v, at.w, n, "lower", s_block=g)[0]
        assert lo <= lo1 * (1 + 1e-9) and up >= up1 * (1 - 1e-9)  # both are valid: truth in between
        assert up <= up1 * (1 + 1e-4 * g) and lo >= lo1 * (1 - 1e-4 * g)


def test_block_width_grows_with_n_and_is_one_where_blocks_would_cost_tightness():
    m = RandomizedResponse(1.0, 10).to_finite().array
    at = blanket_atoms(m, 0, 1)
    widths = []
    for n, eps in ((1_000, 0.08), (10_000_000, 0.0005), (100_000_000, 0.000128)):
        v, w, _ = CS.coarsen(at.values(eps), at.w, "upper")
        a, b, d = v[-1], v[0], v[1]
        p = w[-1] / (w[-1] + w[0])
        widths.append(SB.block_width(v, w, n, p, a - b, SB.drift(a, b, d, p)))
    assert widths[0] == 1 and widths[0] < widths[1] < widths[2] <= SB.MAX_WIDTH


def test_blocks_partition_the_window():
    for kind in ("upper", "lower"):
        reps, first, last, shift = SB.blocks(10, 30, 4, 0.25, kind)
        assert list(first) == [10, 14, 18, 22, 26, 30] and list(last) == [13, 17, 21, 25, 29, 30]
        assert list(reps) == list(last if kind == "upper" else first)
        assert shift == (0.75 if kind == "upper" else -0.75)
    reps, first, last, shift = SB.blocks(10, 30, 1, 0.25, "upper")
    assert list(reps) == list(range(10, 31)) and shift == 0.0


def test_block_masses_match_pmf_sums_within_their_error_bound():
    n, w = 10_000, 0.17
    s_lo, s_hi = 1500, 1900
    first = np.arange(s_lo, s_hi + 1, 37)
    last = np.minimum(first + 36, s_hi)
    val, err = CS._interval_masses(first, last, n, w)
    ref = np.array([binom.pmf(np.arange(a, b + 1), n, w).sum() for a, b in zip(first, last, strict=True)])
    assert np.all(np.abs(val - ref) <= err + 1e-15 * ref) and np.all(err <= 1e-7 * ref + 1e-15)
