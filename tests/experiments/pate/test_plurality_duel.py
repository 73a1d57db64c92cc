"""The noisy top-two + DaRRM duel family for C classes: its stage-2 pairs are every real move's, its
certificate is checked by an independent 40-digit brute force over every histogram and move, a broken
table is caught, GNMax is its member h ≡ 1, and the total-budget design is never worse than GNMax."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from references.plurality_reference import histograms, moves

from darrm.budget.spec import TotalBudget
from darrm.errors import ParameterError
from darrm.experiments.pate import plurality_duel
from darrm.experiments.pate.multiclass_aggregators import gnmax_release, gnmax_sigma, histograms_of
from darrm.experiments.pate.plurality_duel import (
    H_FLOOR,
    DuelCandidate,
    certified_duel_mu,
    design_duel,
    duel_pairs,
    release_duel,
    solve_duel,
)


def _real_margin_pairs(K, C):
    """Every (m, m′) of stage 2 realised by a histogram, a move and an ordered pair (c1, c2)."""
    out = set()
    for n in histograms(K, C):
        for n2 in moves(n):
            for c1, c2 in itertools.permutations(range(C), 2):
                out.add((n[c1] - n[c2], n2[c1] - n2[c2]))
    return out


@pytest.mark.parametrize("K, C", [(4, 3), (5, 3), (4, 4)])
def test_stage_two_pairs_are_exactly_the_margin_pairs_of_every_move(K, C):
    real = {(min(a, b), max(a, b)) for a, b in _real_margin_pairs(K, C) if a != b}
    listed = {(int(i) - K, int(j) - K) for i, j in duel_pairs(K)}
    assert real <= listed  # sound: every real move is a listed pair
    assert listed <= real  # exact for C ≥ 3: every listed pair is realised


def _phi_inv(x):
    return mpmath.sqrt(2) * mpmath.erfinv(2 * x - 1)


def _independent_check(h, K, C, mu):
    """Every real pair of output laws (every histogram, move, ordered (c1, c2), both outputs; the
    reverse direction is the reverse move) satisfies y ≤ Φ(Φ⁻¹(x) + μ), in 40 digits from the exact
    rationals of h: the per-line form of μ-GDP (Dong, Roth & Su 2022, Eq. 2.3)."""
    hq = [Fraction(float(v)) for v in h]
    with mpmath.workdps(40):
        m = mpmath.mpf(mu)
        for a, b in _real_margin_pairs(K, C):
            p, q = hq[a + K], hq[b + K]
            for y, x in ((p, q), (1 - p, 1 - q)):
                if y <= x:
                    continue
                if x == 0:
                    return False
                xm, ym = mpmath.mpf(x.numerator) / x.denominator, mpmath.mpf(y.numerator) / y.denominator
                if ym > mpmath.ncdf(_phi_inv(xm) + m):
                    return False
    return True


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_certified_mu_bounds_every_real_pair_by_an_independent_brute_force(seed):
    K, C = 5, 3
    rng = np.random.default_rng(seed)
    h = np.sort(rng.uniform(0.05, 0.95, 2 * K + 1))
    mu = certified_duel_mu(h, K)
    assert 0.0 < mu < math.inf
    assert _independent_check(h, K, C, mu)
    assert not _independent_check(h, K, C, mu * (1.0 - 1e-6))  # and it is tight: some pair binds


def test_an_lp_designed_duel_is_certified_by_the_brute_force_and_a_broken_one_is_caught():
    K, C = 5, 3
    w = np.linspace(-1.0, 1.0, 2 * K + 1)  # reward c1 at positive margins, c2 at negative ones
    h = solve_duel(K, 0.5, w)
    mu = certified_duel_mu(h, K)
    assert mu < 0.5 * 1.05  # the LP's rows are tangents of the 0.5-GDP curve: close to the target
    assert _independent_check(h, K, C, mu)
    broken = h.copy()
    broken[K] = min(1.0, broken[K] + 0.3)  # a jump at m = 0
    assert not _independent_check(broken, K, C, mu)
    assert certified_duel_mu(broken, K) > mu


def test_lp_duels_keep_h_off_zero_and_one_so_their_certified_mu2_is_finite_and_near_the_target(monkeypatch):
    """At K = 60, μ2 = 0.2 the unbounded LP puts h = 0 and 1 at the ends of the margin range next to
    values off them: an infinite loss (certified μ2 = ∞, the candidate dropped).  Bounded to
    [H_FLOOR, 1 − H_FLOOR], its certified μ2 is finite and within 5 % of the target."""
    K, mu2 = 60, 0.2
    w = np.linspace(-1.0, 1.0, 2 * K + 1)
    h = solve_duel(K, mu2, w)
    assert H_FLOOR <= h.min() and h.max() <= 1.0 - H_FLOOR
    assert certified_duel_mu(h, K) < mu2 * 1.05
    monkeypatch.setattr(plurality_duel, "H_FLOOR", 0.0)  # the LP as it was: the same w reaches 0 and 1
    unbounded = solve_duel(K, mu2, w)
    assert unbounded.min() == 0.0 and certified_duel_mu(unbounded, K) == math.inf


def test_gnmax_is_the_member_h_one_costs_nothing_in_stage_two_and_releases_the_same_labels():
    K, C = 25, 10
    assert certified_duel_mu(np.ones(2 * K + 1), K) == 0.0
    votes = np.random.default_rng(3).integers(0, C, size=(200, K))
    cand = DuelCandidate("gnmax", 1.0, 7.5, 0.0, np.ones(2 * K + 1), 0.0, 0.0)
    ours = release_duel(votes, K, C, cand, np.random.default_rng(9))
    theirs = gnmax_release(histograms_of(votes, C), 7.5, np.random.default_rng(9))
    assert np.array_equal(ours, theirs)


def _gaussian_delta(mu_total, eps):
    with mpmath.workdps(40):
        m, e = mpmath.mpf(mu_total), mpmath.mpf(eps)
        return mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)


@pytest.mark.parametrize("K, C, Q, eps, p", [
    (25, 10, 20, 0.5, 0.6), (25, 10, 100, 2.0, 0.75), (41, 4, 50, 1.0, 0.5), (41, 5, 500, 4.0, 0.6),
    (15, 3, 10, 1.0, 0.7), (31, 10, 200, 2.0, 0.9),
])
def test_design_is_never_worse_than_gnmax_at_equal_total_and_its_total_is_met(K, C, Q, eps, p):
    budget = TotalBudget(eps, 1e-5, Q)
    d = design_duel(K, C, budget, p, splits=(0.9, 0.6), samples=20_000)
    assert d.gnmax.name == "gnmax" and d.gnmax.mu2 == 0.0
    assert d.best.agreement >= d.gnmax.agreement
    # GNMax's σ from the project's exact Gaussian composition (PLD calibration) is no smaller than the
    # candidate's: the design's GNMax is at least as accurate as the experiments' GNMax
    assert d.gnmax.sigma1 <= gnmax_sigma(eps, 1e-5, Q) * (1.0 + 1e-4)
    for c in d.candidates:  # every candidate's total, checked by the Gaussian trade-off in 40 digits
        mu_total = math.sqrt(Q) * math.hypot(math.sqrt(2.0) / c.sigma1, c.mu2)
        assert _gaussian_delta(mu_total, eps) <= 1e-5
        assert c.epsilon <= eps
    # an independent Monte Carlo on fresh draws: the design's release is not below GNMax's beyond noise
    rng = np.random.default_rng([K, C, Q])
    probs = np.full(C, (1 - p) / (C - 1))
    probs[0] = p
    hist = rng.multinomial(K, probs, size=20_000)
    votes = np.stack([np.repeat(np.arange(C), row) for row in hist])
    del hist
    ours = np.mean(release_duel(votes, K, C, d.best, rng) == 0)
    theirs = np.mean(gnmax_release(histograms_of(votes, C), gnmax_sigma(eps, 1e-5, Q), rng) == 0)
    assert ours >= theirs - 4.0 * math.sqrt(0.25 / len(votes)) * math.sqrt(2.0)


def test_bad_inputs_are_refused_naming_the_parameter():
    K, C = 5, 3
    with pytest.raises(ParameterError) as e:
        certified_duel_mu(np.ones(3), K)
    assert e.value.parameter == "h"
    with pytest.raises(ParameterError) as e:
        design_duel(K, C, (1.0, 1e-5, 10))  # type: ignore[arg-type]
    assert e.value.parameter == "budget"
    cand = DuelCandidate("gnmax", 1.0, 1.0, 0.0, np.ones(2 * K + 1), 0.0, 0.0)
    with pytest.raises(ParameterError) as e:
        release_duel(np.full((2, K), C), K, C, cand, 0)
    assert e.value.parameter == "votes"
    with pytest.raises(ParameterError) as e:
        release_duel(np.zeros((2, K), dtype=int), K, C, "gnmax", 0)  # type: ignore[arg-type]
    assert e.value.parameter == "candidate"
