"""The O(K) reduction of darrm.models.disjoint, checked by brute force on small K."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from darrm.errors import ParameterError
from darrm.mechanism import output_weights
from darrm.models.disjoint import (
    ApproxDP,
    DisjointParams,
    LocalRR,
    NonPrivate,
    certify_disjoint,
    constraint_row,
    member_from_dict,
    parse_member,
    violations,
)
from darrm.numerics.poisson_binomial import pmf
from darrm.privacy.corners import in_region

MODELS = [NonPrivate(), ApproxDP(0.7, 1e-3), ApproxDP(0.4, 0.0), LocalRR(0.8)]


def _random_gamma(K: int, rng: np.random.Generator) -> np.ndarray:
    up = rng.random((K + 1) // 2)
    return np.concatenate([up[::-1], up])


def _direct_violation(g, params, p_changed, pp_changed, others) -> float:
    """Max over outputs and directions, from the Poisson-binomial pmf of all K members."""
    w1 = output_weights(g)
    a = pmf(np.concatenate([[p_changed], others]))
    ap = pmf(np.concatenate([[pp_changed], others]))
    e, d = params.exp_eps, params.target_delta
    P1, Pp1 = a @ w1, ap @ w1
    P0, Pp0 = a @ (1 - w1), ap @ (1 - w1)
    return max(P1 - e * Pp1, Pp1 - e * P1, P0 - e * Pp0, Pp0 - e * P0) - d


def _sample_changed(member, rng, n):
    if isinstance(member, ApproxDP):
        out = []
        while len(out) < n:
            p, pp = rng.random(2)
            if in_region(p, pp, member.eps, member.delta, tol=0.0):
                out.append((p, pp))
        return np.array(out)
    lo, hi = member.unchanged_ends() if isinstance(member, LocalRR) else (0.0, 1.0)
    return lo + (hi - lo) * rng.random((n, 2))


@pytest.mark.parametrize("member", MODELS, ids=lambda m: m.describe())
@pytest.mark.parametrize("K", [3, 5, 7])
def test_vertex_count_maximum_equals_full_vertex_enumeration(member, K):
    """The (vertex, n_high) maximum is the maximum over every vertex configuration of all K members."""
    rng = np.random.default_rng(K)
    params = DisjointParams(K, member, 0.3, 1e-3)
    g = _random_gamma(K, rng)
    lo, hi = member.unchanged_ends()
    best = -np.inf
    for p, pp in member.changed_vertices():
        for ends in itertools.product((lo, hi), repeat=K - 1):
            best = max(best, _direct_violation(g, params, p, pp, np.array(ends)))
    assert certify_disjoint(g, params).violation == pytest.approx(best, abs=1e-13)


@pytest.mark.parametrize("member", MODELS, ids=lambda m: m.describe())
@pytest.mark.parametrize("K", [3, 5, 9])
def test_random_interior_points_never_beat_the_vertices(member, K):
    rng = np.random.default_rng(100 + K)
    params = DisjointParams(K, member, 0.3, 1e-3)
    lo, hi = member.unchanged_ends()
    for _ in range(5):
        g = _random_gamma(K, rng)
        bound = certify_disjoint(g, params).violation
        for p, pp in _sample_changed(member, rng, 60):
            others = lo + (hi - lo) * rng.random(K - 1)
            assert _direct_violation(g, params, p, pp, others) <= bound + 1e-13


@pytest.mark.parametrize("member", MODELS[::3], ids=lambda m: m.describe())
def test_lp_rows_encode_the_violations(member):
    """(r·x − rhs)/2 of every LP row equals the certificate's violation at that index."""
    K = 7
    params = DisjointParams(K, member, 0.5, 1e-4)
    g = _random_gamma(K, np.random.default_rng(3))
    V = violations(g, params) - params.others.dropped[None, :, None, None]
    x = g[(K + 1) // 2 :]
    for idx in itertools.product(range(V.shape[0]), range(K), range(2), range(2)):
        r = constraint_row(params, *idx)
        # V is the certificate's rigorous bound: e and δ shrunk by O(ρ), so it sits above the
        # exact-constant row value by at most ~3ρ·e^ε
        assert (r @ x - params.rhs) / 2 == pytest.approx(V[idx], abs=4 * params.check.rho * params.exp_eps + 1e-14)


def test_certificate_rejects_the_plain_majority_of_nonprivate_members():
    params = DisjointParams(11, NonPrivate(), 1.0, 1e-6)
    cert = certify_disjoint(np.ones(12), params)
    assert not cert.certified and cert.violation == pytest.approx(1.0 - 1e-6)


def test_models_round_trip_and_parse():
    for m in MODELS:
        assert member_from_dict(m.to_dict()) == m
    assert parse_member("nonprivate") == NonPrivate()
    assert parse_member("0.5,1e-5") == ApproxDP(0.5, 1e-5)
    assert parse_member("rr:2") == LocalRR(2.0)


@pytest.mark.parametrize(
    "make,name",
    [
        (lambda: DisjointParams(10, NonPrivate(), 1.0), "K"),
        (lambda: DisjointParams(11, NonPrivate(), 0.0), "target_eps"),
        (lambda: DisjointParams(11, NonPrivate(), float("nan")), "target_eps"),
        (lambda: DisjointParams(11, NonPrivate(), 1.0, 1.0), "target_delta"),
        (lambda: DisjointParams(11, "rr", 1.0), "member"),
        (lambda: ApproxDP(-1.0), "member.eps"),
        (lambda: ApproxDP(1.0, 1.5), "member.delta"),
        (lambda: LocalRR(0.0), "member.eps0"),
        (lambda: parse_member("rr:x"), "member-privacy"),
        (lambda: member_from_dict({"kind": "approx-dp"}), "model"),
        (lambda: member_from_dict({"kind": "rr"}), "model"),
    ],
)
def test_bad_parameters_name_the_parameter(make, name):
    with pytest.raises(ParameterError) as exc:
        make()
    assert exc.value.parameter == name


def test_approx_dp_normalises_its_delta_and_adds_no_other_field():
    m = ApproxDP(1, 0)  # ints in, floats out (the validated value used to land in a stray "Delta" field)
    assert type(m.eps) is float and type(m.delta) is float
    assert not hasattr(m, "Delta")
