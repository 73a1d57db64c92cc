"""Monte-Carlo privacy audit: run the real mechanism on sampled votes from the adversarial
corner configuration and bound its privacy loss from the samples alone."""

import math

import numpy as np
import pytest
from scipy import stats

from darrm.mechanism import aggregate
from darrm.params import PrivacyParams
from darrm.privacy.certify import certify
from darrm.privacy.corners import corners, expand
from darrm.solver.gamma_opt import solve_gamma_opt

N = 400_000


def audited_epsilon_lower_bound(gamma, params, counts, output, direction, rng, n=N, alpha=1e-6):
    """A (1 − 2α)-confidence lower bound on ε from n runs on D and n runs on D′:
    ε ≥ log((p̂_lo − δ)/p̂′_hi) with Clopper–Pearson bounds on Pr[A(D)=o], Pr[A(D′)=o]."""
    cs = corners(params.eps, params.member_delta)
    p = expand(np.array([counts]), cs[:, 0])[0]
    pp = expand(np.array([counts]), cs[:, 1])[0]
    if direction == "D',D":
        p, pp = pp, p

    def run(probs):
        votes = (rng.random((n, params.K)) < probs).astype(np.int8)
        return int((aggregate(votes, gamma, rng) == output).sum())

    k, kp = run(p), run(pp)
    lo = stats.beta.ppf(alpha, k, n - k + 1) if k > 0 else 0.0
    hi = stats.beta.ppf(1 - alpha, kp + 1, n - kp) if kp < n else 1.0
    if lo - params.delta <= 0:
        return 0.0
    return math.log((lo - params.delta) / hi)


@pytest.fixture(scope="module")
def setting():
    P = PrivacyParams(11, 3, 0.1, 1e-5)
    return P, solve_gamma_opt(P).gamma


def test_audit_of_gamma_opt_stays_within_the_claim(setting):
    P, g = setting
    c = certify(g, P)
    eps_lb = audited_epsilon_lower_bound(g, P, c.worst_counts, c.worst_output, c.worst_direction,
                                          np.random.default_rng(7))
    assert eps_lb <= P.m * P.eps


def test_audit_catches_an_overscaled_gamma(setting):
    P, g = setting
    broken = np.minimum(1.0, 1.6 * g)  # deliberately over-scaled: no longer (mε, δ)-DP
    c = certify(broken, P)
    eps_lb = audited_epsilon_lower_bound(broken, P, c.worst_counts, c.worst_output, c.worst_direction,
                                          np.random.default_rng(8))
    assert eps_lb > P.m * P.eps


def test_audit_catches_the_unnoised_majority(setting):
    P, _ = setting
    g = np.ones(P.K + 1)
    c = certify(g, P)
    eps_lb = audited_epsilon_lower_bound(g, P, c.worst_counts, c.worst_output, c.worst_direction,
                                          np.random.default_rng(9))
    assert eps_lb > P.m * P.eps
