"""Clone reduction (Feldman, McMillan, Talwar, FOCS 2021 — "FMT22" in Wang et al.).

Every ε0-LDP randomizer decomposes as R(x^0) = e^{ε0}/(e^{ε0}+1) Q^0 + 1/(e^{ε0}+1) Q^1,
R(x^1) = the mirror, R(x_i) = (e^{-ε0}/2)(Q^0 + Q^1) + (1-e^{-ε0}) LO(x_i) (KOV17
Lemma), with no left-over for the victim — a valid general-clone pair (Su et al.
Thm 1/4).  Its hockey-stick divergence is the variation-ratio core with g = 0 and
clone probability 2r = e^{-ε0}, i.e. p = e^{ε0}, β = (e^{ε0}-1)/(e^{ε0}+1),
q = 2e^{2ε0}/(e^{ε0}+1) (Feldman, McMillan, Talwar; matches Apple's exact
sum).  Valid for every ε0-LDP randomizer, hence also for k-RR and finite ones.
"""

from __future__ import annotations

import math

from darrm import validation as v

from .bound import Bound, eps_for_delta
from .randomizers import Randomizer
from .variation_ratio import RealPair, VRParams, exp_enclosure, vr_delta

#: the method's name in :data:`~darrm.accounting.shuffle.best.METHODS` and in every Bound
NAME = "clones"
NOTE = "FMT21 clone reduction, exact numerical evaluation; valid for every eps0-LDP randomizer"


def clone_params(eps0: float) -> VRParams:
    """The clone pair's (p, β, q) in floats, with the real pair of the real e^{ε0} attached
    (g = 0, 2r = e^{-ε0}; :class:`~.variation_ratio.RealPair`)."""
    p = math.exp(eps0)
    lo, hi = exp_enclosure(eps0)
    return VRParams(p, (p - 1) / (p + 1), 2 * p * p / (p + 1), RealPair.no_leftover((lo, hi), (1 / hi, 1 / lo)))


def clone_delta(eps: float, n: int, eps0: float) -> float:
    return vr_delta(eps, n, clone_params(eps0))


def delta_bound(randomizer: Randomizer, n: int, eps: float) -> Bound:
    eps, n = v.epsilon("eps", eps, allow_zero=True), v.count("n", n)
    return Bound(NAME, "upper", True, eps, clone_delta(eps, n, randomizer.eps0), NOTE)


def eps_bound(randomizer: Randomizer, n: int, delta: float) -> Bound:
    delta, n = v.open_unit("delta", delta), v.count("n", n)
    e0 = randomizer.eps0
    e = eps_for_delta(lambda x: clone_delta(x, n, e0), delta, e0, "upper")
    return Bound(NAME, "upper", True, e, delta, NOTE)
