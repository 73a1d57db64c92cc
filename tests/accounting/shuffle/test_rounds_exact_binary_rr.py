"""Shuffled binary-RR rounds compose the exact count law: within 5 % of an independent composition.

The reference is built here from scipy's binomial pmf alone: the shuffled count of n users, n − 1
of them with j ones, the victim's bit 1 (P) or 0 (Q); the T-fold composition of that one pair
(j = ⌊(n−1)/2⌋, one adversary's choice) is computed by dp_accounting from the two pmfs, rounded
down (a lower bound on what that adversary achieves).  The reported total must be at least that
(it covers every adversary) and at most 5 % above it."""

from __future__ import annotations

import math

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as pldm
from scipy.stats import binom

from darrm.accounting.shuffle.calibration import central_epsilon
from darrm.accounting.shuffle.composition import PROFILE_BINARY_RR_EXACT, round_profile_name
from darrm.accounting.shuffle.randomizers import RandomizedResponse


def middle_pair_epsilon(n: int, eps0: float, rounds: int, delta: float) -> float:
    p = math.exp(eps0) / (1.0 + math.exp(eps0))
    j = (n - 1) // 2
    y = np.convolve(binom.pmf(np.arange(j + 1), j, p), binom.pmf(np.arange(n - j), n - 1 - j, 1.0 - p))
    P = np.convolve(y, [1.0 - p, p])
    Q = np.convolve(y, [p, 1.0 - p])
    keep = (P > 1e-300) & (Q > 1e-300)
    upper = {i: math.log(P[i]) for i in np.nonzero(keep)[0].tolist()}
    lower = {i: math.log(Q[i]) for i in np.nonzero(keep)[0].tolist()}
    one = pldm.from_two_probability_mass_functions(lower, upper, pessimistic_estimate=False,
                                                   value_discretization_interval=1e-5)
    return float(one.self_compose(rounds).get_epsilon_for_delta(delta))


@pytest.mark.parametrize(("n", "eps0", "rounds"), [(1000, 1.0, 50), (500, 0.5, 20), (2000, 1.5, 10)])
def test_binary_rr_rounds_are_within_five_percent_of_the_exact_composition(n, eps0, rounds):
    assert round_profile_name(RandomizedResponse(eps0, 2)) == PROFILE_BINARY_RR_EXACT
    ours = central_epsilon(eps0, n, 1e-6, classes=2, rounds=rounds)
    reference = middle_pair_epsilon(n, eps0, rounds, 1e-6)
    assert reference <= ours <= 1.05 * reference, (ours, reference)


def test_the_rounds_say_which_profile_they_composed(cli):
    import json

    rc, out, _ = cli("shuffle", "--n", "1000", "--eps0", "1", "--delta", "1e-6", "--classes", "2", "--rounds", "3",
                     "--json")
    assert rc == 0 and json.loads(out)[0]["composition"] == PROFILE_BINARY_RR_EXACT
    rc, out, err = cli("shuffle", "--n", "1000", "--eps0", "1", "--delta", "1e-6", "--rounds", "1e12")
    assert rc == 2 and out == "" and "rounds" in err and len(err.strip().splitlines()) == 1
