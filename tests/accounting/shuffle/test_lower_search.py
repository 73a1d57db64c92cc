"""fft-lower's ε(δ) searches on the binding candidate only: it must agree with the search over
the maximum of every candidate (to its relative resolution), and stay right when the candidate
chosen first is not the binding one (the check at ε(1 + ρ) falls back to the full search)."""

import pytest

from darrm.accounting import GenericLDP, RandomizedResponse
from darrm.accounting.shuffle import decomposition as D
from darrm.accounting.shuffle.bound import eps_for_delta


def _full_search(r, n, delta):
    f = lambda x: D.lower_delta(r, n, x, delta)  # noqa: E731
    return eps_for_delta(f, delta, D._bracket(f, r, n, delta), "lower", rtol=D.LOWER_EPS_RTOL)


@pytest.mark.parametrize("r,n", [(RandomizedResponse(1.0, 10), 20_000), (RandomizedResponse(4.0, 2), 5_000),
                                 (GenericLDP(0.5), 10_000), (RandomizedResponse(2.0, 3), 50_000)])
def test_binding_candidate_search_agrees_with_the_full_search(r, n):
    delta = 0.01 / n
    full = _full_search(r, n, delta)
    got = D.lower_eps_bound(r, n, delta).eps
    assert got == pytest.approx(full, rel=3 * D.LOWER_EPS_RTOL)
    assert D.lower_delta(r, n, got, delta) > delta  # a lower bound: δ(ε_L) is still above the target


def test_a_wrong_first_candidate_falls_back_to_the_full_search(monkeypatch):
    """Force the weakest candidate first: without the check the answer would be too small."""
    r, n = RandomizedResponse(1.0, 10), 20_000
    delta = 0.01 / n
    full = _full_search(r, n, delta)
    orig = D._lower_candidates
    probe = 0.5 * D._bracket(lambda x: D.lower_delta(r, n, x, delta), r, n, delta)

    weakest = min(orig(r, n), key=lambda f: f(probe, delta))

    def weakest_first(rr, nn):
        # the shortcut picks the largest at the probe: make the weakest look largest there
        return [lambda e, t: 1.0 if e == probe else weakest(e, t)] + orig(rr, nn)

    monkeypatch.setattr(D, "_lower_candidates", weakest_first)
    weak_only = eps_for_delta(lambda x: weakest(x, delta), delta, 2 * probe, "lower", rtol=D.LOWER_EPS_RTOL)
    assert weak_only < full * (1 - 30 * D.LOWER_EPS_RTOL)  # the weakest candidate alone falls short ...
    assert D.lower_eps_bound(r, n, delta).eps == pytest.approx(full, rel=3 * D.LOWER_EPS_RTOL)  # ... yet
